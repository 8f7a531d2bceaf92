//! Per-operator views: `ops::Op<k>` with shared slices of op *k*'s inputs and mutable
//! slices of its outputs and scratch, and the `op<k>()` method that builds it.

use planner_planfile::naming;
use proc_macro2::{Ident, TokenStream};
use quote::quote;

use super::{Ctx, code, ident};
use crate::analyze::OpKind;

pub(crate) fn ops(cx: &Ctx<'_>) -> TokenStream {
    let ready = super::ready_impl(cx);
    let rt = &cx.rt;
    let pv = &cx.pv;
    let f = &cx.l.file;
    let mut structs = Vec::new();
    let mut methods = Vec::new();
    let mut wrapped = Vec::new();
    for (k, op) in f.ops.iter().enumerate() {
        let (method, name) = naming::op_view(k);
        let (method, name) = (ident(&method), ident(&name));
        let (reads, writes) = (&cx.ops[k].reads, &cx.ops[k].writes);
        let in_place = cx.ops[k].in_place;
        let opcode = &op.opcode;
        let mut fields = Vec::new();
        let mut infos = Vec::new();
        let mut inits = Vec::new();
        for (mutable, list) in [(false, reads), (true, writes)] {
            for (field, t) in list {
                let t = *t;
                let fid = ident(field);
                let elem = cx.elem(t);
                let doc = format!("{field}: tensor {}.", cx.describe(t));
                let (arena, offset, mut len) = cx.slot_exprs(t);
                if let Some(ip) = in_place.filter(|ip| ip.output == t) {
                    // The output of an in-place op: one buffer over its input's bytes and
                    // its own, as long as the longer of the two (the check bounds it).
                    let (si, so) = (cx.slot[ip.input], cx.slot[ip.output]);
                    len = quote!((#rt::__export::check::in_place_elements(&PLAN.slots[#si], &PLAN.slots[#so]) as usize));
                }
                if mutable {
                    fields.push(quote!(#[doc = #doc] pub #fid: &'a mut [#elem],));
                    inits.push(quote!(#fid: b[#arena].slice_mut::<#elem>(#offset, #len),));
                } else {
                    fields.push(quote!(#[doc = #doc] pub #fid: &'a [#elem],));
                    inits.push(quote!(#fid: b[#arena].slice::<#elem>(#offset, #len),));
                }
                let c = ident(&field.to_ascii_uppercase());
                let tc = ident(&cx.idents[t].to_ascii_uppercase());
                let cdoc = format!("What `{field}` is: shape, element count, quantisation.");
                infos.push(quote!(#[doc = #cdoc] pub const #c: #rt::TensorInfo<#elem> = super::tensors::#tc;));
            }
        }
        let skipped: Vec<String> = op
            .inputs
            .iter()
            .enumerate()
            .filter_map(|(j, t)| t.map(|t| (j, t as usize)))
            .filter(|(_, t)| !reads.iter().any(|(_, r)| r == t))
            .filter(|&(j, _)| in_place.is_none_or(|ip| ip.input_pos != j))
            .map(|(j, _)| format!("input{j}"))
            .collect();
        let mut doc = format!(
            "Op {k}: {}, its inputs shared and its outputs and scratch mutable.",
            code(opcode)
        );
        if !skipped.is_empty() {
            doc.push_str(&format!(
                " {} share bytes with an output and appear only as that output.",
                skipped.join(", ")
            ));
        }
        match in_place {
            Some(ip) if ip.rows.is_some() => doc.push_str(&format!(
                " The op runs with row overlap: `output{}` is written over the rows of \
                 `input{}` it has read, whose bytes start further into it when the op starts; \
                 it spans both tensors.",
                ip.output_pos, ip.input_pos
            )),
            Some(ip) => doc.push_str(&format!(
                " The op runs in place: `output{}` is written over `input{}`, whose bytes are at \
                 its start when the op starts; it spans the longer of the two tensors.",
                ip.output_pos, ip.input_pos
            )),
            None => {}
        }
        let options = options_const(cx, k, &name, &mut wrapped);
        structs.push(quote! {
            #[doc = #doc]
            pub struct #name<'a> {
                #(#fields)*
                pub(super) _handle: #pv::PhantomData<&'a mut ()>,
            }
            impl #name<'_> {
                /// The operator's name.
                pub const OPCODE: &'static str = #opcode;
                #options
                #(#infos)*
            }
        });
        let mdoc = format!("The view of op {k} ({}).", code(opcode));
        methods.push(quote! {
            #[doc = #mdoc]
            pub fn #method(&mut self) -> ops::#name<'_> {
                let b = &self.bases;
                // SAFETY: every tensor of op #k is live at op #k (the plan check proves each
                // lifetime covers it), and the check proves that tensors live at the same op
                // in one writable arena share no byte unless one is the other's alias; the
                // view holds each alias group once, and never a shared and a mutable view of
                // one group. Tensors in different arenas are in different statics or
                // distinct `&'static mut` buffers. So the mutable slices are disjoint from
                // each other and from the shared ones. An op that runs in place does not hold
                // the input its output takes over: the check proves the output starts at that
                // input's offset (with row overlap, before it, the input inside the output's
                // slot), that the input's bytes die at this op and the output's start here,
                // that the op uses them through the output only, and that the output's slice
                // (`in_place_elements`) stays inside the arena and the two slots, which no
                // other tensor live at this op touches. Constant tensors are only viewed
                // shared, and mutable views are only of writable arenas (checked too).
                // Every slot is inside its arena and aligned (checked). `&mut self` borrows
                // the only handle for the view's lifetime, so nothing else reads or writes
                // these bytes meanwhile.
                unsafe {
                    ops::#name { #(#inits)* _handle: #pv::PhantomData }
                }
            }
        });
    }
    let opcodes = f.ops.iter().map(|o| o.opcode.as_str());
    let n = f.ops.len();
    quote! {
        /// The operators' names, in execution order.
        pub const OPCODES: [&str; #n] = [#(#opcodes),*];
        /// The operators' typed options, in execution order (each is also its op's
        /// `ops::Op<k>::OPTIONS`).
        pub const OPTIONS: [#rt::options::OpOptions; #n] = [#(#wrapped),*];
        /// One view struct per operator.
        pub mod ops {
            #(#structs)*
        }
        #ready {
            #(#methods)*
        }
    }
}

/// The `OPTIONS` const of op `k`'s view struct `name` (nothing for an op without typed
/// options), and its entry of the model's `OPTIONS` array, pushed to `wrapped`.
fn options_const(
    cx: &Ctx<'_>,
    k: usize,
    name: &Ident,
    wrapped: &mut Vec<TokenStream>,
) -> TokenStream {
    let rt = &cx.rt;
    match &cx.ops[k].kind {
        Some(OpKind {
            kind, ty, value, ..
        }) => {
            wrapped.push(quote!(#rt::options::OpOptions::#kind(ops::#name::OPTIONS)));
            quote! {
                /// The operator's typed options (strides, padding, activation, ...).
                pub const OPTIONS: #rt::options::#ty = #value;
            }
        }
        None => {
            wrapped.push(quote!(#rt::options::OpOptions::None));
            TokenStream::new()
        }
    }
}

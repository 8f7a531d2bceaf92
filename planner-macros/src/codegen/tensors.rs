//! Per-tensor items: `TensorInfo` constants in `tensors`, `inputs` and `outputs`, and the
//! `tensor_*`, `input_*` and `output_*` accessors of a ready handle.

use planner_planfile::naming;
use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::{Ctx, code, ident};

/// The `TensorInfo` constant expression of tensor `t`.
fn info(cx: &Ctx<'_>, t: usize) -> TokenStream {
    let rt = &cx.rt;
    let pv = &cx.pv;
    let e = &cx.l.file.tensors[t];
    let (id, name, dtype) = (&e.id, &e.name, e.dtype.name());
    let elem = cx.elem(t);
    let shape = e
        .shape
        .iter()
        .map(|&d| Literal::usize_unsuffixed(d as usize));
    let elements = Literal::usize_unsuffixed(cx.l.elements[t] as usize);
    let size = Literal::usize_unsuffixed(e.size as usize);
    let quant = match &e.quantization {
        Some(q) => {
            // `load` rejected non-finite scales.
            let scale = q.scale.iter().map(|&s| Literal::f32_suffixed(s));
            let zero = q.zero_point.iter().map(|&z| Literal::i64_suffixed(z));
            let axis = q.axis;
            quote!(#pv::Some(#rt::Quant { scale: &[#(#scale),*], zero_point: &[#(#zero),*], axis: #axis }))
        }
        None => quote!(#pv::None),
    };
    quote! {
        #rt::TensorInfo::<#elem> {
            id: #id, name: #name, dtype: #dtype, shape: &[#(#shape),*],
            elements: #elements, size: #size, quant: #quant, element: #pv::PhantomData,
        }
    }
}

/// A shared and, for writable arenas, a mutable accessor named `name` for tensor `t`.
fn accessors(cx: &Ctx<'_>, t: usize, name: &str, doc: &str) -> TokenStream {
    let elem = cx.elem(t);
    let (arena, offset, len) = cx.slot_exprs(t);
    let get = ident(name);
    let get_mut = ident(&format!("{name}_mut"));
    let writable = cx.writable(cx.l.file.tensors[t].arena as usize);
    let shared = quote! {
        #[doc = #doc]
        pub fn #get(&self) -> &[#elem] {
            // SAFETY: the plan check proves the slot lies inside its arena and is aligned
            // for the element type; `&self` borrows the only handle to the arena, so for
            // the slice's lifetime no `&mut` into it can exist.
            unsafe { self.bases[#arena].slice::<#elem>(#offset, #len) }
        }
    };
    if !writable {
        return shared;
    }
    quote! {
        #shared
        #[doc = #doc]
        pub fn #get_mut(&mut self) -> &mut [#elem] {
            // SAFETY: as for the shared view, and `&mut self` borrows the only handle, so
            // no other view into any arena exists for the slice's lifetime; the arena is
            // writable (not a constant blob).
            unsafe { self.bases[#arena].slice_mut::<#elem>(#offset, #len) }
        }
    }
}

/// For a step-scope slab that the manifest reserves (`memory.slabs`, tensor id `slab/<name>`):
/// `with_slab_<name>(|slab| ...)`, a [`planner::rt::Slab`] over its bytes for the closure.
fn slab_scope(cx: &Ctx<'_>, t: usize) -> TokenStream {
    let e = &cx.l.file.tensors[t];
    let writable = cx.writable(e.arena as usize);
    if !e.id.starts_with("slab/") || e.dtype != planner_planfile::DType::U8 || !writable {
        return TokenStream::new();
    }
    let rt = &cx.rt;
    let name = ident(&format!("with_slab_{}", cx.idents[t]));
    let get_mut = ident(&format!("tensor_{}_mut", cx.idents[t]));
    let doc = format!(
        "Runs `f` with a step-scope slab over the {} bytes reserved for slab {}; the bytes are \
         zeroed again when `f` returns. Borrowing the model mutably, it cannot run while any \
         tensor view is alive, so a scratch slab never meets a live tensor.",
        e.size,
        code(&e.name)
    );
    quote! {
        #[doc = #doc]
        pub fn #name<R>(&mut self, f: impl FnOnce(&mut #rt::Slab<'_>) -> R) -> R {
            #rt::slab::with_bytes(self.#get_mut(), f)
        }
    }
}

pub(crate) fn tensors(cx: &Ctx<'_>) -> TokenStream {
    let ready = super::ready_impl(cx);
    let rt = &cx.rt;
    let f = &cx.l.file;
    let mut consts = Vec::new();
    let mut methods = Vec::new();
    for t in 0..f.tensors.len() {
        let c = ident(&cx.idents[t].to_ascii_uppercase());
        let elem = cx.elem(t);
        let value = info(cx, t);
        let doc = format!("Tensor {}.", cx.describe(t));
        consts.push(quote!(#[doc = #doc] pub const #c: #rt::TensorInfo<#elem> = #value;));
        methods.push(accessors(cx, t, &format!("tensor_{}", cx.idents[t]), &doc));
        methods.push(slab_scope(cx, t));
    }
    let mut io_mods = Vec::new();
    for (kind, list) in [("input", &f.inputs), ("output", &f.outputs)] {
        let names = naming::unique_idents(list.iter().map(|io| io.name.as_str()));
        let mut io_consts = Vec::new();
        for (io, name) in list.iter().zip(&names) {
            let t = io.tensor as usize;
            let doc = format!(
                "Model {kind} {}: tensor {}.",
                code(&io.name),
                cx.describe(t)
            );
            let c = ident(&name.to_ascii_uppercase());
            let tc = ident(&cx.idents[t].to_ascii_uppercase());
            let elem = cx.elem(t);
            io_consts.push(
                quote!(#[doc = #doc] pub const #c: #rt::TensorInfo<#elem> = super::tensors::#tc;),
            );
            // A streamed input is never whole: `run_streamed` fills it one region at a time.
            if kind == "output" || super::patches::streamed(cx) != Some(t) {
                methods.push(accessors(cx, t, &format!("{kind}_{name}"), &doc));
            }
        }
        let m = ident(&format!("{kind}s"));
        let doc = format!("The model's {kind}s by signature name.");
        io_mods.push(quote! {
            #[doc = #doc]
            pub mod #m {
                #(#io_consts)*
            }
        });
    }
    quote! {
        /// What each tensor is: shape, element count, dtype, quantisation.
        pub mod tensors {
            #(#consts)*
        }
        #(#io_mods)*
        #ready {
            #(#methods)*
        }
    }
}

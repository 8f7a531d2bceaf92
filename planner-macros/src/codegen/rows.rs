//! The statement that runs an op with row overlap (`planner_rt::rows`): its kind's usual
//! kernel, called once per band of output rows with the band and the input rows it reads
//! as regions, both inside the output's buffer.

use planner_planfile::naming;
use planner_rt::rows::Rows;
use proc_macro2::TokenStream;
use quote::quote;

use super::call::{kernel_call, op_view};
use super::table::rows_expr;
use super::{Ctx, ident};
use crate::analyze::InPlace;

/// Runs op `k`, which writes output `ip.output` over the rows of input `ip.input`
/// (`rows`): `rt::rows::run` over the output's buffer (which holds the input from the
/// input's offset on), the kernel seeing the input and output bands as regions, the op's
/// other inputs and scratch as usual; then the hooks, the tap showing the input as the
/// output's bytes (as for an op in place) and the output without the input's tail.
pub(super) fn run_rows(cx: &Ctx<'_>, k: usize, ip: InPlace, rows: &Rows) -> TokenStream {
    let rt = &cx.rt;
    let pv = &cx.pv;
    let op = &cx.l.file.ops[k];
    let (method, name) = naming::op_view(k);
    let (method, name) = (ident(&method), ident(&name));
    let writes = &cx.ops[k].writes;
    let out = ident(&format!("output{}", ip.output_pos));
    let out_c = ident(&format!("OUTPUT{}", ip.output_pos));
    let tc = ident(&cx.idents[ip.input].to_ascii_uppercase());
    let (si, so) = (cx.slot[ip.input], cx.slot[ip.output]);
    // The op's inputs, for the kernel (the taken input as its band) and for the tap.
    let mut band_inputs = Vec::new();
    let mut tap_inputs = Vec::new();
    for (j, t) in op.inputs.iter().enumerate() {
        if t.is_none() {
            band_inputs.push(quote!(#pv::None));
            tap_inputs.push(quote!(#pv::None));
            continue;
        }
        if j == ip.input_pos {
            band_inputs
                .push(quote!(#pv::Some(#rt::kernel::In::new(x, &tensors::#tc).with_region(xr))));
            tap_inputs.push(quote!(#pv::Some(#rt::kernel::In::in_place(0, &tensors::#tc))));
            continue;
        }
        let f = ident(&format!("input{j}"));
        let c = ident(&format!("INPUT{j}"));
        let x = quote!(#pv::Some(#rt::kernel::In::new(view.#f, &ops::#name::#c)));
        band_inputs.push(x.clone());
        tap_inputs.push(x);
    }
    let scratch: Vec<TokenStream> = writes
        .iter()
        .filter(|(f, _)| f.starts_with("scratch"))
        .map(|(f, _)| {
            let (f, c) = (ident(f), ident(&f.to_ascii_uppercase()));
            quote!(#rt::kernel::Out::new(&mut *view.#f, &ops::#name::#c))
        })
        .collect();
    let (ni, ns) = (band_inputs.len(), scratch.len());
    let rows = rows_expr(rt, rows);
    let opcode = &op.opcode;
    let call = kernel_call(cx, k, &name);
    let op_view = op_view(cx, k, quote!(&mut []));
    quote! {
        {
            let view = self.#method();
            hooks.before_op(#k, #opcode);
            // Elements from the output's start to the input's (the check proves the input
            // starts at least `Rows::min_shift` of them after it, inside the output's slot).
            let shift = (PLAN.slots[#si].offset.saturating_sub(PLAN.slots[#so].offset))
                .checked_div(PLAN.slots[#so].elem_size)
                .unwrap_or(0) as usize;
            let ran = #rt::rows::run(&mut *view.#out, shift, &#rows, |x, xr, y, yr| {
                let inputs: [#pv::Option<#rt::kernel::In<'_>>; #ni] = [#(#band_inputs),*];
                let mut outputs = [#rt::kernel::Out::new(y, &ops::#name::#out_c).with_region(yr)];
                let mut scratch: [#rt::kernel::Out<'_>; #ns] = [#(#scratch),*];
                #op_view
                #call
            });
            if let #pv::Err(error) = ran {
                return #pv::Err(#rt::kernel::RunError { op: #k, opcode: #opcode, error });
            }
            hooks.after_op(#k, #opcode);
            let inputs: [#pv::Option<#rt::kernel::In<'_>>; #ni] = [#(#tap_inputs),*];
            let mut outputs = [#rt::kernel::Out::new(view.#out, &ops::#name::#out_c)];
            outputs[0].truncate(PLAN.slots[#so].elements as usize);
            hooks.tap(&#rt::kernel::Tap::new(#k, #opcode, &inputs, &outputs, &[]));
        }
    }
}

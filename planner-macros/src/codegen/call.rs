//! The call of an op's kernel: its kind's trait method, or `Builtin`/`Custom` by name.

use proc_macro2::{Ident, TokenStream};
use quote::quote;

use super::Ctx;
use crate::analyze::OpKind;

/// The call of op `k`'s kernel (view struct `name`) on `op_view` with `kernels`: its kind's
/// trait (the in-place one when it runs in place), or `Builtin`/`Custom` by its name.
pub(super) fn kernel_call(cx: &Ctx<'_>, k: usize, name: &Ident) -> TokenStream {
    let rt = &cx.rt;
    match (&cx.ops[k].kind, &cx.ops[k].in_place_kind) {
        (Some(_), Some((kind, method))) | (Some(OpKind { kind, method, .. }), None) => {
            quote!(#rt::kernel::#kind::#method(kernels, op_view, &ops::#name::OPTIONS))
        }
        (None, _) => match untyped(&cx.l.file.ops[k].opcode) {
            Untyped::Builtin(name) => {
                quote!(#rt::kernel::Builtin::<{ #rt::kernel::op_key(#name) }>::builtin(kernels, op_view))
            }
            Untyped::Custom(code) => {
                quote!(#rt::kernel::Custom::<{ #rt::kernel::op_key(#code) }>::custom(kernels, op_view))
            }
        },
    }
}

/// An op kind without typed options: a builtin op by its TFLite name, or a custom op by
/// its custom code.
pub(super) enum Untyped<'a> {
    Builtin(&'a str),
    Custom(&'a str),
}

pub(super) fn untyped(opcode: &str) -> Untyped<'_> {
    match opcode.strip_prefix("CUSTOM:") {
        Some(code) => Untyped::Custom(code),
        None => Untyped::Builtin(opcode),
    }
}

/// `let op_view = OpView { .. }` for op `k` over the `inputs`, `outputs` and `scratch`
/// arrays in scope, and `variables`.
pub(super) fn op_view(cx: &Ctx<'_>, k: usize, variables: TokenStream) -> TokenStream {
    let rt = &cx.rt;
    let opcode = &cx.l.file.ops[k].opcode;
    quote! {
        let op_view = #rt::kernel::OpView {
            index: #k,
            opcode: #opcode,
            inputs: &inputs,
            outputs: &mut outputs,
            scratch: &mut scratch,
            variables: #variables,
        };
    }
}

//! One `static` per arena: writable arenas zero-filled in a `.bss.` section, constant blobs
//! from `include_bytes!` in the section of the memory they are read from.

use planner::planfile::naming;
use proc_macro2::TokenStream;
use quote::quote;

use super::{Ctx, ident};

pub(crate) fn statics(cx: &Ctx<'_>) -> TokenStream {
    let rt = &cx.rt;
    let pv = &cx.pv;
    let mut out = TokenStream::new();
    for (a, arena) in cx.l.file.arenas.iter().enumerate() {
        let ty_args = quote! {
            { PLAN.arenas[#a].size as usize }, #rt::__export::Align<{ PLAN.arenas[#a].align as usize }>
        };
        if let Some(section) = &arena.section {
            let name = ident(&naming::arena_static(arena.role, &arena.memory));
            let doc = format!(
                "Arena {} of model `{}`: {} bytes, aligned to {}, zero-filled in section `{section}`.",
                arena.name,
                cx.model(),
                arena.size,
                arena.alignment
            );
            out.extend(quote! {
                #[doc = #doc]
                #[cfg_attr(
                    not(any(target_vendor = "apple", target_os = "windows")),
                    unsafe(link_section = #section)
                )]
                static #name: #rt::__export::Arena<#ty_args> = #rt::__export::Arena::new();
            });
        }
        if let (Some(blob), Some(path)) = (&arena.blob, &cx.l.blobs[a]) {
            let name = ident(&naming::blob_static(&arena.memory));
            let bytes = ident(&format!("{}_BYTES", naming::blob_static(&arena.memory)));
            let path = path.display().to_string();
            let section = &blob.section;
            let doc = format!(
                "Weights of arena {} of model `{}`: {} bytes, aligned to {}, in section `{section}`{}.",
                arena.name,
                cx.model(),
                arena.size,
                arena.alignment,
                if arena.is_staged() {
                    format!(", copied to {} by `init()`", arena.memory)
                } else {
                    String::from(", read in place")
                }
            );
            out.extend(quote! {
                const #bytes: &[u8] = #pv::include_bytes!(#path);
                #[doc = #doc]
                #[cfg_attr(
                    not(any(target_vendor = "apple", target_os = "windows")),
                    unsafe(link_section = #section)
                )]
                static #name: #rt::__export::Blob<#ty_args> = #rt::__export::Blob::new(#rt::__export::copy_blob(#bytes));
            });
        }
    }
    out
}

/// For a model of a group: the group's statics this model's arenas are, from `super`.
pub(crate) fn uses(cx: &Ctx<'_>) -> TokenStream {
    let mut names = Vec::new();
    for arena in &cx.l.file.arenas {
        if arena.section.is_some() {
            names.push(ident(&naming::arena_static(arena.role, &arena.memory)));
        }
        if arena.blob.is_some() {
            names.push(ident(&naming::blob_static(&arena.memory)));
            names.push(ident(&format!(
                "{}_BYTES",
                naming::blob_static(&arena.memory)
            )));
        }
    }
    quote!(#[allow(unused_imports)] use super::{#(#names),*};)
}

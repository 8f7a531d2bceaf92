//! One `static` per arena: writable arenas zero-filled in a `.bss.` section, constant blobs
//! from `include_bytes!` in the section of the memory they are read from.

use std::path::PathBuf;

use planner_planfile::{ArenaEntry, naming};
use proc_macro2::TokenStream;
use quote::quote;

use super::{Ctx, ident};
use crate::load::Unit;

/// The unit's statics: one per arena of a model alone (its module's, checked by `PLAN`) or
/// of a group (shared by its models, checked by `GROUP_PLAN`), with the owner's docs.
pub(crate) fn statics(u: &Unit, rt: &TokenStream, pv: &TokenStream) -> TokenStream {
    let (owner, table) = match (&u.group, u.models.first()) {
        (Some(g), _) => (&g.group, quote!(GROUP_PLAN)),
        (None, Some(l)) => (&l.file.model, quote!(PLAN)),
        (None, None) => return TokenStream::new(),
    };
    let kind = if u.group.is_some() { "group" } else { "model" };
    let docs = |a: &ArenaEntry, section: &str, blob: bool| match (blob, u.group.is_some()) {
        (false, _) => format!(
            "Arena {} of {kind} `{owner}`: {} bytes, aligned to {}, zero-filled in section `{section}`.",
            a.name, a.size, a.alignment
        ),
        (true, true) => format!(
            "Weights of every model of group `{owner}` in arena {}: {} bytes, in section `{section}`.",
            a.name, a.size
        ),
        (true, false) => format!(
            "Weights of arena {} of model `{owner}`: {} bytes, aligned to {}, in section `{section}`{}.",
            a.name,
            a.size,
            a.alignment,
            if a.is_staged() {
                format!(", copied to {} by `init()`", a.memory)
            } else {
                String::from(", read in place")
            }
        ),
    };
    let arenas: Vec<&ArenaEntry> = u.arenas.iter().collect();
    arena_statics(&arenas, &u.blobs, &table, rt, pv, &docs)
}

/// One `static` per arena with a section (zero-filled) and per blob (`include_bytes!`), for
/// a model's arenas or a group's: each typed from the checked table `table` (`PLAN`,
/// `GROUP_PLAN`), so the statics are what the check proved; `docs(arena, section, blob)`
/// is the doc comment of an arena's static or its blob's.
fn arena_statics(
    arenas: &[&ArenaEntry],
    blobs: &[Option<PathBuf>],
    table: &TokenStream,
    rt: &TokenStream,
    pv: &TokenStream,
    docs: &dyn Fn(&ArenaEntry, &str, bool) -> String,
) -> TokenStream {
    let mut out = TokenStream::new();
    for (a, (arena, path)) in arenas.iter().zip(blobs).enumerate() {
        let ty_args = quote! {
            { #table.arenas[#a].size as usize }, #rt::__export::Align<{ #table.arenas[#a].align as usize }>
        };
        if let Some(section) = &arena.section {
            let name = ident(&naming::arena_static(arena.role, &arena.memory));
            let doc = docs(arena, section, false);
            out.extend(quote! {
                #[doc = #doc]
                #[cfg_attr(
                    not(any(target_vendor = "apple", target_os = "windows")),
                    unsafe(link_section = #section)
                )]
                static #name: #rt::__export::Arena<#ty_args> = #rt::__export::Arena::new();
            });
        }
        if let (Some(blob), Some(path)) = (&arena.blob, path) {
            let name = ident(&naming::blob_static(&arena.memory));
            let bytes = ident(&format!("{}_BYTES", naming::blob_static(&arena.memory)));
            let path = path.display().to_string();
            let section = &blob.section;
            let doc = docs(arena, section, true);
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

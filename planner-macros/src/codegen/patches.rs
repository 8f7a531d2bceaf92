//! The patch stage of a model planned with `patches`: `PATCHES`, the region tables
//! (`patch_regions`, one `[[u32; 4]; PATCHES]` per stage tensor), the `const` check that
//! proves them, and the pieces `run()` uses to view a stage tensor over a patch's region.

use planner_planfile::patch::{PatchInput, PatchPlan};
use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::{Ctx, ident};
use crate::load::StageView;

/// The region table's name of tensor `t`, in module `patch_regions`.
pub(crate) fn table_name(cx: &Ctx<'_>, t: usize) -> proc_macro2::Ident {
    ident(&cx.idents[t].to_ascii_uppercase())
}

/// The plan's patch stage, when it has one.
pub(crate) fn plan<'c>(cx: &Ctx<'c>) -> Option<&'c PatchPlan> {
    cx.l.file.patches.as_ref()
}

/// How the stage views tensor `t`, when it is a stage tensor.
pub(crate) fn view(cx: &Ctx<'_>, t: usize) -> Option<StageView> {
    cx.l.stage.get(t).copied().flatten()
}

/// The streamed model input, when the stage streams it.
pub(crate) fn streamed(cx: &Ctx<'_>) -> Option<usize> {
    let p = plan(cx)?;
    if p.input != PatchInput::Streamed {
        return None;
    }
    (0..cx.l.file.tensors.len()).find(|&t| view(cx, t).is_some_and(|v| v.streamed))
}

/// The expression of tensor `t`'s region in patch `p` (a `Region`).
pub(crate) fn region(cx: &Ctx<'_>, t: usize) -> TokenStream {
    let name = table_name(cx, t);
    quote!(patch_regions::region(patch_regions::#name[p]))
}

/// The expression of the elements of tensor `t`'s dense region in patch `p`.
pub(crate) fn dense_len(cx: &Ctx<'_>, t: usize) -> TokenStream {
    let name = table_name(cx, t);
    let c = Literal::usize_unsuffixed(cx.l.file.tensors[t].shape[3] as usize);
    quote!(patch_regions::dense_len(patch_regions::#name[p], #c))
}

/// `PATCHES`, the `patch_regions` module and the `const` check of the stage; nothing for a
/// plan without patches.
pub(crate) fn items(cx: &Ctx<'_>) -> TokenStream {
    let Some(p) = plan(cx) else {
        return TokenStream::new();
    };
    let rt = &cx.rt;
    let n = p.patches();
    let [rows, cols] = p.grid;
    let split = p.split;
    let mut tables = Vec::new();
    let mut check_rows = Vec::new();
    for entry in &p.tensors {
        let t = entry.tensor as usize;
        let Some(v) = view(cx, t) else { continue };
        let name = table_name(cx, t);
        let e = &cx.l.file.tensors[t];
        let regions = entry.regions.iter().map(|r| {
            let [a, b, c, d] = r.map(Literal::u32_unsuffixed);
            quote!([#a, #b, #c, #d])
        });
        let layout = if v.whole {
            "viewed whole: each patch reads or writes only this region of it"
        } else {
            "viewed dense: its slot holds one region at a time, row after row"
        };
        let doc = format!(
            "Regions `[top, left, height, width]` of tensor {} in each patch (row-major over \
             the {rows}x{cols} grid); {layout}.",
            super::code(&e.id)
        );
        tables.push(quote! {
            #[doc = #doc]
            pub const #name: [[u32; 4]; PATCHES] = [#(#regions),*];
        });
        let slot = cx.slot[t] as u32;
        let shape = e.shape.iter().map(|&d| super::lit_u64(d));
        let (whole, is_split, streamed) = (v.whole, v.split, v.streamed);
        check_rows.push(quote! {
            #rt::__export::check::PatchRow {
                slot: #slot, shape: [#(#shape),*], whole: #whole, split: #is_split,
                streamed: #streamed, regions: &patch_regions::#name,
            }
        });
    }
    let check = if cfg!(feature = "skip-plan-check") {
        quote!()
    } else {
        let doc = format!(
            "Makes rustc check the patch stage of model `{}`: every region inside its tensor \
             and within its placed size, the tensors every patch reads or writes live over the \
             whole stage, the split tensor's tiles a partition.",
            cx.model()
        );
        quote! {
            #[doc = #doc]
            const _: () = #rt::__export::check::check_patches(&PLAN, &PATCH_TABLE);
        }
    };
    let input = match p.input {
        PatchInput::Resident => "resident (whole in the arena)",
        PatchInput::Streamed => "streamed (filled one region at a time by `run_streamed`)",
    };
    let doc = format!(
        "Number of patches: the model's first stage (ops 0..={split}) runs once per patch of a \
         {rows}x{cols} grid over the split tensor; its input is {input}."
    );
    let n = Literal::usize_unsuffixed(n);
    quote! {
        #[doc = #doc]
        pub const PATCHES: usize = #n;
        /// The patch stage as the check reads it.
        #[doc(hidden)]
        pub const PATCH_TABLE: #rt::__export::check::PatchTable<'static> = #rt::__export::check::PatchTable {
            split: #split,
            patches: PATCHES as u32,
            tensors: &[#(#check_rows),*],
        };
        #check
        /// The region of each stage tensor in each patch, as the generated `run()` uses them.
        pub mod patch_regions {
            use super::PATCHES;
            #(#tables)*

            /// The `Region` of a table entry.
            pub const fn region(r: [u32; 4]) -> #rt::kernel::Region {
                #rt::kernel::Region::new(r[0] as usize, r[1] as usize, r[2] as usize, r[3] as usize)
            }

            /// Elements of a dense view of region `r` of a tensor with `c` channels.
            pub const fn dense_len(r: [u32; 4], c: usize) -> usize {
                r[2] as usize * r[3] as usize * c
            }

            /// The first `len` elements of `s` (all of them when there are fewer; the check
            /// proves there never are).
            pub fn prefix<T>(s: &[T], len: usize) -> &[T] {
                match s.split_at_checked(len) {
                    ::core::option::Option::Some((head, _)) => head,
                    ::core::option::Option::None => s,
                }
            }

            /// The first `len` elements of `s`, mutable (all of them when there are fewer).
            pub fn prefix_mut<T>(s: &mut [T], len: usize) -> &mut [T] {
                let all = s.len();
                let (head, _) = s.split_at_mut(if len < all { len } else { all });
                head
            }
        }
    }
}

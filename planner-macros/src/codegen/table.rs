//! The `PLAN` table and the `const` item that checks it.

use planner_planfile::naming;
use planner_rt::check::InPlaceRow;
use planner_rt::rows::Rows;
use proc_macro2::TokenStream;
use quote::quote;

use super::{Ctx, ident, lit_u64};

/// Op `k`'s row of the check table as slot positions: what it reads (the view's inputs, and
/// the input an in-place output takes over), what it writes, and its in-place row (input
/// and output slots, and the rows of an op with row overlap).
pub(crate) fn op_rows(cx: &Ctx<'_>, k: usize) -> (Vec<u32>, Vec<u32>, Option<InPlaceRow>) {
    let (reads, writes) = (&cx.ops[k].reads, &cx.ops[k].writes);
    let mut reads: Vec<u32> = reads.iter().map(|(_, t)| cx.slot[*t] as u32).collect();
    let writes = writes.iter().map(|(_, t)| cx.slot[*t] as u32).collect();
    let in_place = cx.in_place(k).map(|ip| {
        let (input, output) = (cx.slot[ip.input] as u32, cx.slot[ip.output] as u32);
        reads.push(input);
        InPlaceRow {
            input,
            output,
            rows: ip.rows,
        }
    });
    (reads, writes, in_place)
}

/// `rows` as a `planner_rt::rows::Rows` expression.
pub(crate) fn rows_expr(rt: &TokenStream, rows: &Rows) -> TokenStream {
    let Rows {
        in_rows,
        in_width,
        in_row,
        out_rows,
        out_width,
        out_row,
        stride,
        pad_top,
        extent,
    } = *rows;
    quote!(#rt::rows::Rows { in_rows: #in_rows, in_width: #in_width, in_row: #in_row, out_rows: #out_rows, out_width: #out_width, out_row: #out_row, stride: #stride, pad_top: #pad_top, extent: #extent })
}

pub(crate) fn table(cx: &Ctx<'_>) -> TokenStream {
    let rt = &cx.rt;
    let pv = &cx.pv;
    let f = &cx.l.file;
    let model = cx.model();
    let none = quote!(#rt::__export::check::NONE);
    let opt = |v: Option<u64>| v.map_or(none.clone(), |v| lit_u64(v).into_token_stream());
    let memories = f.memories.iter().map(|m| {
        let name = &m.name;
        let budget = opt(m.budget);
        quote!(#rt::__export::check::MemoryRow { name: #name, budget: #budget })
    });
    let arenas = f.arenas.iter().enumerate().map(|(a, arena)| {
        let name = &arena.name;
        // `load` checked the memory is listed.
        let index = |name: &str| f.memories.iter().position(|m| m.name == name).unwrap_or(0) as u32;
        let memory = index(&arena.memory);
        let source = index(&arena.source_memory);
        let size = lit_u64(arena.size);
        let budget = opt(arena.budget);
        let align = lit_u64(arena.alignment);
        let writable = cx.writable(a);
        let blob_len = match &arena.blob {
            Some(_) => {
                let bytes = ident(&format!("{}_BYTES", naming::blob_static(&arena.memory)));
                quote!(#bytes.len() as u64)
            }
            None => none.clone(),
        };
        quote! {
            #rt::__export::check::ArenaRow {
                name: #name, memory: #memory, source: #source, size: #size, budget: #budget, align: #align,
                writable: #writable, blob_len: #blob_len,
            }
        }
    });
    let slots = cx.order.iter().map(|&t| {
        let e = &f.tensors[t];
        let id = &e.id;
        let arena = e.arena;
        let offset = lit_u64(e.offset);
        let size = lit_u64(e.size);
        let align = lit_u64(e.alignment);
        let elem = cx.elem(t);
        let elements = lit_u64(cx.l.elements[t]);
        let start = e.lifetime.start_op;
        let end = e.lifetime.end_op;
        let root = cx.slot[cx.l.roots[t]] as u32;
        quote! {
            #rt::__export::check::SlotRow {
                id: #id, arena: #arena, offset: #offset, size: #size, align: #align,
                elem_size: #pv::size_of::<#elem>() as u64,
                elem_align: #pv::align_of::<#elem>() as u64,
                elements: #elements, start: #start, end: #end, root: #root,
            }
        }
    });
    // One small `const` per row, and the tables list them: rustc type- and borrow-checks one
    // body's expressions in time that grows faster than their number, and a single table
    // literal of a few thousand rows dominated the compile.
    let slot_names: Vec<_> = (0..cx.order.len())
        .map(|i| ident(&format!("S{i}")))
        .collect();
    let op_names: Vec<_> = (0..f.ops.len()).map(|k| ident(&format!("O{k}"))).collect();
    let ops = (0..f.ops.len()).map(|k| {
        let opcode = &f.ops[k].opcode;
        let (reads, writes, in_place) = op_rows(cx, k);
        let in_place = match in_place {
            Some(InPlaceRow { input, output, rows }) => {
                let rows = match rows {
                    Some(r) => {
                        let r = rows_expr(rt, &r);
                        quote!(#pv::Some(#r))
                    }
                    None => quote!(#pv::None),
                };
                quote!(#pv::Some(#rt::__export::check::InPlaceRow { input: #input, output: #output, rows: #rows }))
            }
            None => quote!(#pv::None),
        };
        quote!(#rt::__export::check::OpRow { opcode: #opcode, reads: &[#(#reads),*], writes: &[#(#writes),*], in_place: #in_place })
    });
    let slot_rows = slot_names
        .iter()
        .zip(slots)
        .map(|(name, row)| quote!(pub const #name: #rt::__export::check::SlotRow<'static> = #row;));
    let op_rows = op_names
        .iter()
        .zip(ops)
        .map(|(name, row)| quote!(pub const #name: #rt::__export::check::OpRow<'static> = #row;));
    // Slot positions sorted by first and by last live op (ties by position), as the checker
    // wants them; it verifies both orders.
    let time = |t: usize| &f.tensors[cx.order[t]].lifetime;
    let mut by_start: Vec<u32> = (0..cx.order.len() as u32).collect();
    let mut by_end = by_start.clone();
    by_start.sort_by_key(|&s| (time(s as usize).start_op, s));
    by_end.sort_by_key(|&s| (time(s as usize).end_op, s));
    let n_slots = cx.order.len();
    let check_doc = format!(
        "Makes rustc check the plan of model `{model}`: slots inside their arenas and aligned, live tensors disjoint, budgets kept, blobs as long as their arenas."
    );
    let plan = checked_table(
        rt,
        (quote!(PLAN), quote!(PlanTable)),
        " The plan as `const` data: what the check below proves, and what every view uses.",
        quote! {
            model: #model,
            memories: &[#(#memories),*],
            arenas: &[#(#arenas),*],
            slots: &[#(plan_rows::#slot_names),*],
            ops: &[#(plan_rows::#op_names),*],
            by_start: &[#(#by_start),*],
            by_end: &[#(#by_end),*],
        },
        (
            &check_doc,
            quote!({
                let mut scratch = [0u64; #rt::__export::check::scratch_len(#n_slots)];
                #rt::__export::check::check(&PLAN, &mut scratch)
            }),
        ),
    );
    quote! {
        #plan
        /// The rows of [`PLAN`]'s slot and op tables.
        #[doc(hidden)]
        pub mod plan_rows {
            #(#slot_rows)*
            #(#op_rows)*
        }
    }
}

use quote::ToTokens;

/// `pub const <name>: <ty>` (a table type of `rt::__export::check`) with `fields`, hidden
/// from the docs and documented by `doc`, and the `const` item that makes rustc evaluate
/// `check` (an expression of type `()`, which panics on an unsound plan), documented by
/// `check_doc`; the `skip-plan-check` feature (test-only) leaves the check out.
pub(crate) fn checked_table(
    rt: &TokenStream,
    (name, ty): (TokenStream, TokenStream),
    doc: &str,
    fields: TokenStream,
    (check_doc, check): (&str, TokenStream),
) -> TokenStream {
    let check = if cfg!(feature = "skip-plan-check") {
        quote!()
    } else {
        quote!(#[doc = #check_doc] const _: () = #check;)
    };
    quote! {
        #[doc = #doc]
        #[doc(hidden)]
        pub const #name: #rt::__export::check::#ty<'static> = #rt::__export::check::#ty { #fields };
        #check
    }
}

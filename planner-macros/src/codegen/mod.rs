//! Code generation: one file per group of generated items, assembled here into the model's
//! module. Every name comes from `planner_planfile::naming`.

mod arenas;
mod call;
mod control;
mod group;
mod handle;
mod info;
pub(crate) mod ops;
mod patches;
mod rows;
mod run;
mod stub;
pub(crate) mod table;
mod tensors;

use planner_planfile::ArenaRole;
use planner_planfile::DType;
use planner_planfile::naming;
use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::quote;

use crate::analyze::{Analysis, InPlace, OpFacts, analyze};
use crate::load::{self, Loaded, Unit};
use crate::parse::Args;

/// Parses, loads and generates; on error, a `compile_error!` at the literal plus stub items
/// so the error is not followed by one "cannot find" error per use of the model.
pub(crate) fn expand(input: TokenStream) -> TokenStream {
    let args: Args = match syn::parse2(input) {
        Ok(a) => a,
        Err(e) => return e.to_compile_error(),
    };
    match load::load(&args.target) {
        Ok(unit) => match &unit.group {
            Some(f) => group::group(&unit, f, &args),
            None => match unit.models.first() {
                Some(l) => {
                    let mut cx = Ctx::new(l, &args);
                    cx.unit = Some(&unit);
                    generate(&cx)
                }
                None => quote!(),
            },
        },
        Err(e) => {
            let error = e.to_compile_error();
            let stub = stub::stub(&load::stub_name(&args.target.value()), &args);
            quote!(#error #stub)
        }
    }
}

/// What every codegen file needs: the plan, the paths to `planner`, and the tables that
/// map tensors to slots and identifiers.
pub(crate) struct Ctx<'a> {
    pub(crate) l: &'a Loaded,
    /// `::planner::rt`.
    pub(crate) rt: TokenStream,
    /// `::planner::rt::__export`.
    pub(crate) pv: TokenStream,
    /// Tensor indices in slot order: sorted by (arena, offset, index), as the checker
    /// wants them.
    pub(crate) order: Vec<usize>,
    /// Slot position of each tensor.
    pub(crate) slot: Vec<usize>,
    /// Unique identifier of each tensor.
    pub(crate) idents: Vec<String>,
    /// Each op's view tensors, in-place declaration and kind ([`analyze`]).
    pub(crate) ops: Vec<OpFacts>,
    /// True for a model of a group: its arenas are the group's statics (`super::`), and
    /// its handles come only from the group's handle.
    pub(crate) member: bool,
    /// For a model of a group: where its block starts in each of its arenas (the group
    /// arena's `users[..].base`), in the model's arena order; empty otherwise.
    pub(crate) member_bases: Vec<u64>,
    /// For a model alone: the unit of one it was loaded as, whose statics its module holds.
    pub(crate) unit: Option<&'a Unit>,
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(l: &'a Loaded, args: &Args) -> Ctx<'a> {
        let krate = &args.krate;
        let rt = quote!(#krate::rt);
        let Analysis {
            order,
            slot,
            idents,
            ops,
        } = analyze(l, &rt.to_string().replace(' ', ""));
        Ctx {
            l,
            rt,
            pv: quote!(#krate::rt::__export),
            order,
            slot,
            idents,
            ops,
            member: false,
            member_bases: Vec::new(),
            unit: None,
        }
    }

    pub(crate) fn model(&self) -> &str {
        &self.l.file.model
    }

    /// True when views into arena `a` may be mutable.
    pub(crate) fn writable(&self, a: usize) -> bool {
        self.l.file.arenas[a].role != ArenaRole::Constant
    }

    /// The element type of tensor `t`'s views.
    pub(crate) fn elem(&self, t: usize) -> TokenStream {
        elem_type(self.l.file.tensors[t].dtype)
    }

    /// `PLAN.slots[s]` expression pieces for tensor `t`: (arena, offset, len), read from the
    /// checked table. Plain reads of the `const`, not `const { .. }` blocks: each inline
    /// `const` is one more body for rustc to check and evaluate, and with three per view
    /// they took about 80 % of a long model's compile time (500 ops: 13.2 s CPU against 2.9 s).
    pub(crate) fn slot_exprs(&self, t: usize) -> (TokenStream, TokenStream, TokenStream) {
        let s = self.slot[t];
        (
            quote!((PLAN.slots[#s].arena as usize)),
            quote!((PLAN.slots[#s].offset as usize)),
            quote!((PLAN.slots[#s].elements as usize)),
        )
    }

    /// Op `k`'s in-place declaration as tensors: `None` for an op that runs out of place.
    pub(crate) fn in_place(&self, k: usize) -> Option<InPlace> {
        self.ops.get(k).and_then(|o| o.in_place)
    }

    /// One-line description of tensor `t` for docs.
    pub(crate) fn describe(&self, t: usize) -> String {
        let e = &self.l.file.tensors[t];
        let arena = &self.l.file.arenas[e.arena as usize];
        format!(
            "{} (id {}): {} {:?}, bytes {}..{} of arena {}, live at ops {}..={}",
            code(&e.name),
            code(&e.id),
            e.dtype.name(),
            e.shape,
            e.offset,
            e.offset.saturating_add(e.size),
            arena.name,
            e.lifetime.start_op,
            e.lifetime.end_op
        )
    }
}

/// Rust element type for a dtype: numbers as themselves, half floats as `u16` bits,
/// complex numbers as pairs, everything else as raw bytes.
pub(crate) fn elem_type(d: DType) -> TokenStream {
    match d {
        DType::F32 => quote!(f32),
        DType::F64 => quote!(f64),
        DType::I8 => quote!(i8),
        DType::U8 | DType::Bool => quote!(u8),
        DType::I16 => quote!(i16),
        DType::U16 | DType::F16 | DType::Bf16 => quote!(u16),
        DType::I32 => quote!(i32),
        DType::U32 => quote!(u32),
        DType::I64 => quote!(i64),
        DType::U64 => quote!(u64),
        DType::Complex64 => quote!([f32; 2]),
        DType::Complex128 => quote!([f64; 2]),
        DType::I4 | DType::String | DType::Resource | DType::Variant => quote!(u8),
    }
}

/// `text` as a Markdown code span for a doc string: its characters as they are, control
/// characters escaped (`\n`), fenced by more backticks than it holds in a row. A name from
/// the model or the manifest is shown this way and only this way, so it can start no code
/// block (rustdoc would run it as a doctest), raw HTML, link or heading.
pub(crate) fn code(text: &str) -> String {
    let mut body = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            body.extend(c.escape_debug());
        } else {
            body.push(c);
        }
    }
    let (mut run, mut longest) = (0, 0);
    for c in body.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    // A space each side keeps a backtick at either end out of the fence, and a code span
    // of spaces only keeps them; CommonMark strips one space each side otherwise.
    if body.starts_with('`') || body.ends_with('`') || body.trim().is_empty() {
        format!("{fence} {body} {fence}")
    } else {
        format!("{fence}{body}{fence}")
    }
}

pub(crate) fn ident(name: &str) -> Ident {
    Ident::new(name, Span::call_site())
}

pub(crate) fn lit_u64(v: u64) -> Literal {
    Literal::u64_suffixed(v)
}

/// `impl<'a> Handle<'a, Ready>`: the block header of every method on a ready handle.
pub(crate) fn ready_impl(cx: &Ctx<'_>) -> TokenStream {
    let rt = &cx.rt;
    quote!(impl<'a> Handle<'a, #rt::Ready>)
}

pub(crate) fn generate(cx: &Ctx<'_>) -> TokenStream {
    let module = ident(&naming::model_module(cx.model()));
    let model = cx.model();
    let hash = cx.l.file.hash_value().unwrap_or_else(|| cx.l.file.hash());
    let plan_path = cx.l.path.display().to_string();
    let pv = &cx.pv;
    let table = table::table(cx);
    let arenas = match cx.unit {
        Some(u) if !cx.member => arenas::statics(u, &cx.rt, &cx.pv),
        _ => arenas::uses(cx),
    };
    let handle = handle::handle(cx);
    let tensors = tensors::tensors(cx);
    let ops = ops::ops(cx);
    let run = run::run(cx);
    let patches = patches::items(cx);
    let info = info::info(cx);
    let doc = format!(
        "Model {}, from the plan {} ({} arenas, {} tensors, {} ops). Generated by `include_model!`.",
        code(model),
        code(&plan_path),
        cx.l.file.arenas.len(),
        cx.l.file.tensors.len(),
        cx.l.file.ops.len()
    );
    quote! {
        #[doc = #doc]
        #[allow(dead_code, non_upper_case_globals, clippy::all)]
        pub mod #module {
            /// The model's name.
            pub const MODEL: &str = #model;
            /// The plan hash (FNV-1a 64), also in the C header: code built against another
            /// plan has another hash.
            pub const PLAN_HASH: u64 = #hash;
            /// The plan file's bytes. Including them makes rustc rebuild when the plan changes.
            pub const PLAN_FILE: &[u8] = #pv::include_bytes!(#plan_path);
            #table
            #arenas
            #handle
            #tensors
            #ops
            #patches
            #run
            #info
        }
    }
}

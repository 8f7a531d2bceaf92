//! The body of `run()` for a plan with control flow (`PlanFile::control`): the op steps in
//! blocks, an `if` for each `IF`, a `loop` for each `WHILE`, a guarded block for each
//! `CALL_ONCE`, nested as the entries are (`PlanFile::parse` checked they nest).

use planner_planfile::Control;
use proc_macro2::TokenStream;
use quote::quote;

use super::{Ctx, ident};

/// The statements that run `steps` (one per op, in plan order) under the plan's control
/// entries.
pub(crate) fn body(cx: &Ctx<'_>, steps: &[TokenStream]) -> TokenStream {
    let mut cursor = 0;
    let end = steps.len();
    block(cx, steps, 0, end, &mut cursor)
}

/// The statements of ops `start..end`, with the entries from `cursor` on that lie in them.
fn block(
    cx: &Ctx<'_>,
    steps: &[TokenStream],
    start: usize,
    end: usize,
    cursor: &mut usize,
) -> TokenStream {
    let entries = &cx.l.file.control;
    let mut out = Vec::new();
    let mut k = start;
    loop {
        while let Some(c) = entries.get(*cursor) {
            let span = c.span();
            if span.start as usize != k || span.end as usize > end {
                break;
            }
            *cursor += 1;
            out.push(entry(cx, steps, *c, cursor));
            k = span.end as usize;
        }
        if k >= end {
            break;
        }
        out.push(steps[k].clone());
        k += 1;
    }
    quote!(#(#out)*)
}

/// Element 0 of bool tensor `t` (a `u8` view), as a `bool`.
fn read(cx: &Ctx<'_>, t: u32) -> TokenStream {
    let get = ident(&format!("tensor_{}", cx.idents[t as usize]));
    quote!((self.#get()[0] != 0))
}

/// The statement of one entry, its ranges' blocks inside.
fn entry(cx: &Ctx<'_>, steps: &[TokenStream], c: Control, cursor: &mut usize) -> TokenStream {
    let part = |r: planner_planfile::OpRange, cursor: &mut usize| {
        block(cx, steps, r.start as usize, r.end as usize, cursor)
    };
    match c {
        Control::If {
            cond,
            then_ops,
            else_ops,
        } => {
            let cond = read(cx, cond);
            let then = part(then_ops, cursor);
            let otherwise = part(else_ops, cursor);
            quote! {
                // IF: one branch, by the condition's first element.
                if #cond {
                    #then
                } else {
                    #otherwise
                }
            }
        }
        Control::While {
            cond,
            cond_ops,
            body_ops,
        } => {
            let cond = read(cx, cond);
            let test = part(cond_ops, cursor);
            let body = part(body_ops, cursor);
            quote! {
                // WHILE: the condition's ops, then the body while the condition holds.
                loop {
                    #test
                    if !#cond {
                        break;
                    }
                    #body
                }
            }
        }
        Control::Once { flag, ops } => {
            let done = read(cx, flag);
            let set = ident(&format!("tensor_{}_mut", cx.idents[flag as usize]));
            let init = part(ops, cursor);
            quote! {
                // CALL_ONCE: the initialisation ops, on the first run after a reset.
                if !#done {
                    #init
                    self.#set()[0] = 1;
                }
            }
        }
    }
}

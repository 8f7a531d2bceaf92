//! The dispatch: `Model::run(&mut kernels)` and `Model::run_with(&mut kernels, &mut hooks)`,
//! which run every op in plan order through the kernel trait of its kind, and the typed
//! `OPTIONS` of each op.

use std::collections::BTreeSet;

use planner_planfile::naming;
use proc_macro2::{Ident, TokenStream};
use quote::quote;

use super::call::{Untyped, kernel_call, op_view, untyped};
use super::{Ctx, elem_type, ident, patches};
use crate::analyze::OpKind;

/// The statement that runs op `k`: its view, its tensors as kernel inputs and outputs, the
/// hooks around the kernel call.
fn run_op(cx: &Ctx<'_>, k: usize) -> TokenStream {
    let rt = &cx.rt;
    let pv = &cx.pv;
    let op = &cx.l.file.ops[k];
    let (method, name) = naming::op_view(k);
    let (method, name) = (ident(&method), ident(&name));
    let (reads, writes) = (&cx.ops[k].reads, &cx.ops[k].writes);
    let root = |t: usize| cx.l.roots[t];
    let in_place = cx.in_place(k);
    if let Some((ip, rows)) = in_place.and_then(|ip| Some((ip, ip.rows?))) {
        return super::rows::run_rows(cx, k, ip, &rows);
    }
    // In a patch stage, a stage tensor's view is over its region in patch `p`: the whole
    // slot (the split tensor, a resident input) or its first region-many elements (dense).
    let in_stage = patches::plan(cx).is_some_and(|p| k <= p.split as usize);
    let stage_view = |t: usize| {
        let v = patches::view(cx, t).filter(|_| in_stage)?;
        let len = (!v.whole).then(|| patches::dense_len(cx, t));
        Some((patches::region(cx, t), len))
    };
    // Field `f` (descriptor `c`) of the view as a kernel input or output (`kind` `In` or
    // `Out`), in a patch stage over its region (`prefix`: how to cut a dense one's elements).
    let kernel_view = |kind: TokenStream, prefix: TokenStream, t: usize, f: &Ident, c: &Ident| {
        let x = quote!(#rt::kernel::#kind::new);
        match stage_view(t) {
            Some((region, None)) => quote!(#x(view.#f, &ops::#name::#c).with_region(#region)),
            Some((region, Some(len))) => quote!(
                #x(patch_regions::#prefix(view.#f, #len), &ops::#name::#c).with_region(#region)
            ),
            None => quote!(#x(view.#f, &ops::#name::#c)),
        }
    };
    // Position in `outputs` of the output field `name`.
    let out_index = |name: &str| {
        writes
            .iter()
            .filter(|(f, _)| f.starts_with("output"))
            .position(|(f, _)| f == name)
    };
    let mut inputs = Vec::new();
    let mut variables = Vec::new();
    for (j, t) in op.inputs.iter().enumerate() {
        let Some(t) = t.map(|t| t as usize) else {
            inputs.push(quote!(#pv::None));
            continue;
        };
        let field = format!("input{j}");
        let (f, c) = (ident(&field), ident(&field.to_ascii_uppercase()));
        if let Some(ip) = in_place.filter(|ip| ip.input_pos == j) {
            // The output written over this input holds its bytes when the op starts.
            let out = out_index(&format!("output{}", ip.output_pos)).unwrap_or(0);
            let tc = ident(&cx.idents[t].to_ascii_uppercase());
            let x = quote!(#rt::kernel::In::in_place(#out, &tensors::#tc));
            let x = match stage_view(t) {
                Some((region, _)) => quote!(#x.with_region(#region)),
                None => x,
            };
            inputs.push(quote!(#pv::Some(#x)));
        } else if reads.iter().any(|(r, _)| *r == field) {
            let x = kernel_view(quote!(In), quote!(prefix), t, &f, &c);
            inputs.push(quote!(#pv::Some(#x)));
        } else if writes.iter().any(|(w, _)| *w == field) {
            // A variable input: the kernel updates it through `variables`.
            let at = variables.len();
            variables.push(quote!(#rt::kernel::Out::new(view.#f, &ops::#name::#c)));
            inputs.push(quote!(#pv::Some(#rt::kernel::In::variable(#at, &ops::#name::#c))));
        } else {
            // The input's bytes are an output's: the kernel reads them there.
            let out = writes
                .iter()
                .filter(|(f, _)| f.starts_with("output"))
                .position(|&(_, w)| root(w) == root(t))
                .unwrap_or(0);
            let tc = ident(&cx.idents[t].to_ascii_uppercase());
            inputs.push(quote!(#pv::Some(#rt::kernel::In::in_place(#out, &tensors::#tc))));
        }
    }
    let mut outputs = Vec::new();
    let mut scratch = Vec::new();
    for &(ref field, t) in writes {
        let (f, c) = (ident(field), ident(&field.to_ascii_uppercase()));
        let out = kernel_view(quote!(Out), quote!(prefix_mut), t, &f, &c);
        if field.starts_with("output") {
            outputs.push(out);
        } else if field.starts_with("scratch") {
            scratch.push(out);
        }
    }
    let (ni, no, ns, nv) = (inputs.len(), outputs.len(), scratch.len(), variables.len());
    // The tap shows an in-place output with its own elements, not the input's tail.
    let truncate = match in_place.and_then(|ip| {
        let at = out_index(&format!("output{}", ip.output_pos))?;
        Some((at, cx.slot[ip.output]))
    }) {
        Some((at, s)) => quote!(outputs[#at].truncate(PLAN.slots[#s].elements as usize);),
        None => TokenStream::new(),
    };
    let opcode = &op.opcode;
    let call = kernel_call(cx, k, &name);
    let op_view = op_view(cx, k, quote!(&mut variables));
    quote! {
        {
            let view = self.#method();
            let inputs: [#pv::Option<#rt::kernel::In<'_>>; #ni] = [#(#inputs),*];
            let mut outputs: [#rt::kernel::Out<'_>; #no] = [#(#outputs),*];
            let mut scratch: [#rt::kernel::Out<'_>; #ns] = [#(#scratch),*];
            let mut variables: [#rt::kernel::Out<'_>; #nv] = [#(#variables),*];
            hooks.before_op(#k, #opcode);
            #op_view
            if let #pv::Err(error) = #call {
                return #pv::Err(#rt::kernel::RunError { op: #k, opcode: #opcode, error });
            }
            hooks.after_op(#k, #opcode);
            #truncate
            hooks.tap(&#rt::kernel::Tap::new(#k, #opcode, &inputs, &outputs, &variables));
        }
    }
}

/// `text` inside a `#[diagnostic::on_unimplemented]` string, where braces are format
/// syntax.
fn literal_braces(text: &str) -> String {
    text.replace('{', "{{").replace('}', "}}")
}

/// The model's `op_kinds` module: one trait per kind without typed options, whose only
/// implementations are the kernel sets that implement [`Builtin`] or [`Custom`] for it,
/// and whose compile error names the op (the generic traits' error could only show a
/// number).
///
/// [`Builtin`]: planner::rt::kernel::Builtin
/// [`Custom`]: planner::rt::kernel::Custom
fn op_kinds(cx: &Ctx<'_>, opcodes: &[&str]) -> (TokenStream, Vec<TokenStream>) {
    let rt = &cx.rt;
    let path = cx.rt.to_string().replace(' ', "");
    let path = path.trim_start_matches("::");
    let module = ident(naming::OP_KINDS_MODULE);
    let names = naming::op_kind_traits(opcodes.iter().copied());
    let mut traits = Vec::new();
    let mut bounds = Vec::new();
    for (opcode, name) in opcodes.iter().zip(&names) {
        let name = ident(name);
        let (generic, key, message, doc) = match untyped(opcode) {
            Untyped::Builtin(op) => (
                quote!(#rt::kernel::Builtin<{ #rt::kernel::op_key(#op) }>),
                op,
                format!(
                    "the kernel set `{{Self}}` has no {op} kernel, and the model runs {op}",
                    op = literal_braces(op)
                ),
                format!(
                    "Runs `{op}` ops: implemented by every kernel set that implements `Builtin<{{ op_key(\"{op}\") }}>`."
                ),
            ),
            Untyped::Custom(code) => (
                quote!(#rt::kernel::Custom<{ #rt::kernel::op_key(#code) }>),
                code,
                format!(
                    "the kernel set `{{Self}}` has no kernel for the custom op `{}`, and the model runs it",
                    literal_braces(code)
                ),
                format!(
                    "Runs custom ops `{code}`: implemented by every kernel set that implements `Custom<{{ op_key(\"{code}\") }}>`."
                ),
            ),
        };
        let generic_text = match untyped(opcode) {
            Untyped::Builtin(_) => "Builtin",
            Untyped::Custom(_) => "Custom",
        };
        let note = literal_braces(&format!(
            "implement `{path}::kernel::{generic_text}<{{ {path}::kernel::op_key({key:?}) }}>` for `"
        )) + "{Self}`, or run the model with a kernel set that has it";
        traits.push(quote! {
            #[doc = #doc]
            #[diagnostic::on_unimplemented(
                message = #message,
                label = "the model runs an op this kernel set has no kernel for",
                note = #note
            )]
            pub trait #name: #generic {}
            impl<K: #generic + ?::core::marker::Sized> #name for K {}
        });
        bounds.push(quote!(#module::#name));
    }
    let doc = "The kernel traits of this model's op kinds without typed options (builtin ops \
               by their TFLite name, custom ops by their custom code), for `run()`'s bounds.";
    let items = if traits.is_empty() {
        TokenStream::new()
    } else {
        quote! {
            #[doc = #doc]
            #[allow(non_camel_case_types)]
            pub mod #module {
                #(#traits)*
            }
        }
    };
    (items, bounds)
}

/// The `op_kinds` items, the kernel-trait bounds of the kinds the model uses (an op that
/// runs in place asks for its kind's in-place trait only) and each op's call, in plan order.
fn kinds_and_steps(cx: &Ctx<'_>) -> (TokenStream, Vec<TokenStream>, Vec<TokenStream>) {
    let rt = &cx.rt;
    let n = cx.l.file.ops.len();
    let mut kinds = BTreeSet::new();
    let mut bounds = Vec::new();
    let mut steps = Vec::new();
    let mut untyped = Vec::new();
    for k in 0..n {
        // An op that runs in place asks for its kind's in-place trait only.
        let kind = cx.ops[k].in_place_kind.as_ref().map(|(kind, _)| kind);
        match &cx.ops[k].kind {
            Some(OpKind {
                kind: out_of_place, ..
            }) => {
                let kind = kind.unwrap_or(out_of_place);
                let kind = quote!(#rt::kernel::#kind);
                if kinds.insert(kind.to_string()) {
                    bounds.push(kind);
                }
            }
            None => {
                let opcode = cx.l.file.ops[k].opcode.as_str();
                if !untyped.contains(&opcode) {
                    untyped.push(opcode);
                }
            }
        }
        steps.push(run_op(cx, k));
    }
    let (op_kinds, more) = op_kinds(cx, &untyped);
    bounds.extend(more);
    (op_kinds, bounds, steps)
}

/// The marker traits of the prepared layouts the model's ops read (`load` checked each
/// prepared input): a kernel set that does not declare it reads them does not compile.
fn layout_bounds(cx: &Ctx<'_>) -> Vec<TokenStream> {
    use planner_planfile::PreparedLayout;
    let rt = &cx.rt;
    let layouts: BTreeSet<PreparedLayout> =
        cx.l.file
            .ops
            .iter()
            .filter_map(|op| op.prepared.map(|p| p.layout))
            .collect();
    layouts
        .into_iter()
        .map(|layout| match layout {
            PreparedLayout::RequantV1 => quote!(#rt::kernel::RequantV1),
        })
        .collect()
}

/// `run` and `run_with`, bounded by the kernel traits of the kinds the model uses.
pub(crate) fn run(cx: &Ctx<'_>) -> TokenStream {
    let ready = super::ready_impl(cx);
    let rt = &cx.rt;
    let pv = &cx.pv;
    let n = cx.l.file.ops.len();
    let (op_kinds, mut bounds, steps) = kinds_and_steps(cx);
    let split = patches::plan(cx).map(|p| p.split as usize);
    if split.is_some() {
        bounds.push(quote!(#rt::kernel::Patches));
    }
    bounds.extend(layout_bounds(cx));
    let (stage, rest) = steps.split_at(split.map_or(0, |s| s + 1));
    let streamed = patches::streamed(cx);
    let fill = match streamed {
        Some(t) => {
            let get = ident(&format!("tensor_{}_mut", cx.idents[t]));
            let region = patches::region(cx, t);
            let len = patches::dense_len(cx, t);
            quote!(fill(#region, patch_regions::prefix_mut(self.#get(), #len));)
        }
        None => TokenStream::new(),
    };
    let body = match split {
        Some(_) => quote! {
            // The stage once per patch, row-major over the grid, each
            // stage tensor viewed over its region in patch `p`.
            for p in 0..PATCHES {
                #fill
                #(#stage)*
            }
            #(#rest)*
        },
        None if !cx.l.file.control.is_empty() => super::control::body(cx, rest),
        None => quote!(#(#rest)*),
    };
    let (stage_doc, hooks_doc) = run_docs(cx, split);
    let methods = match streamed {
        None => {
            let doc = format!(
                "Runs the model's {n} ops in plan order, each through the kernel trait of its kind \
                 in `kernels` (the bounds list the kinds this model uses: a kernel set without one \
                 does not compile). Fill the inputs first (`input_*_mut`), read the outputs after. \
                 Stops at the first kernel error, naming the op.{stage_doc}"
            );
            let with_doc = format!(
                "[`Handle::run`], with `hooks` called before and after every op (timing, \
                 tracing, canaries), and given each op's tensors read-only after it ran \
                 (`Hooks::tap`).{hooks_doc}"
            );
            quote! {
                #[doc = #doc]
                pub fn run<K>(&mut self, kernels: &mut K) -> #pv::Result<(), #rt::kernel::RunError<K::Error>>
                where
                    K: #rt::kernel::Kernel #(+ #bounds)*,
                {
                    self.run_with(kernels, &mut ())
                }

                #[doc = #with_doc]
                pub fn run_with<K, H: #rt::kernel::Hooks + ?Sized>(
                    &mut self,
                    kernels: &mut K,
                    hooks: &mut H,
                ) -> #pv::Result<(), #rt::kernel::RunError<K::Error>>
                where
                    K: #rt::kernel::Kernel #(+ #bounds)*,
                {
                    #body
                    #pv::Ok(())
                }
            }
        }
        Some(t) => {
            let elem = elem_type(cx.l.file.tensors[t].dtype);
            let input = super::code(&cx.l.file.tensors[t].id);
            let doc = format!(
                "Runs the model's {n} ops in plan order, each through the kernel trait of its kind \
                 in `kernels`, with the model input {input} streamed: it never sits whole in \
                 RAM. Before each patch's stage ops, `fill(region, buffer)` writes that patch's \
                 region of the input (`[top, left, height, width]` in the whole image) into \
                 `buffer`, densely: `height · width · channels` elements, row after row, pixel \
                 `(y, x)` at `((y - top) · width + (x - left)) · channels`. It is called once per \
                 patch, in patch order (`patch_regions`), every run. Read the outputs after. \
                 Stops at the first kernel error, naming the op.{stage_doc} There is no `run()`: \
                 the input has no whole buffer to fill beforehand."
            );
            let with_doc = format!(
                "[`Handle::run_streamed`], with `hooks` called before and after every op \
                 (timing, tracing, canaries), and given each op's tensors read-only after it ran \
                 (`Hooks::tap`).{hooks_doc}"
            );
            quote! {
                #[doc = #doc]
                pub fn run_streamed<K, F>(
                    &mut self,
                    kernels: &mut K,
                    fill: F,
                ) -> #pv::Result<(), #rt::kernel::RunError<K::Error>>
                where
                    K: #rt::kernel::Kernel #(+ #bounds)*,
                    F: FnMut(#rt::kernel::Region, &mut [#elem]),
                {
                    self.run_streamed_with(kernels, &mut (), fill)
                }

                #[doc = #with_doc]
                pub fn run_streamed_with<K, H: #rt::kernel::Hooks + ?Sized, F>(
                    &mut self,
                    kernels: &mut K,
                    hooks: &mut H,
                    mut fill: F,
                ) -> #pv::Result<(), #rt::kernel::RunError<K::Error>>
                where
                    K: #rt::kernel::Kernel #(+ #bounds)*,
                    F: FnMut(#rt::kernel::Region, &mut [#elem]),
                {
                    #body
                    #pv::Ok(())
                }
            }
        }
    };
    quote! {
        #op_kinds
        #ready {
            #methods
        }
    }
}

/// The doc sentences `run` (or `run_streamed`) and its `_with` variant add for a patch stage
/// (`split`) and for prepared constants: the run's and the hooks'.
fn run_docs(cx: &Ctx<'_>, split: Option<usize>) -> (String, &'static str) {
    let stage_doc = match split {
        Some(split) => format!(
            " The first stage (ops 0..={split}) runs once per patch (`PATCHES`, row-major over \
             the grid), each of its ops over its tensors' regions in that patch \
             (`patch_regions`), so `K` must also implement `Patches`; the ops after it run once \
             over whole tensors."
        ),
        None => String::new(),
    };
    let prepared =
        cx.l.file
            .ops
            .iter()
            .filter(|o| o.prepared.is_some())
            .count();
    let stage_doc = if prepared > 0 {
        format!(
            "{stage_doc} {prepared} of its ops read constants the planner prepared for the kernel \
             set (`[kernels] set = \"{}\"`, input 3 of each), so `K` must also declare that it \
             reads their layout (`RequantV1`).",
            cx.l.file.kernels.name()
        )
    } else {
        stage_doc
    };
    let stage_doc = if cx.l.file.control.is_empty() {
        stage_doc
    } else {
        format!(
            "{stage_doc} The op list holds the ops of the subgraphs the model's IF, WHILE and \
             CALL_ONCE run ({} control entries in `PLAN_FILE`): an IF runs one branch by its \
             bool condition, a WHILE its condition's ops and then its body while the condition \
             holds, a CALL_ONCE its ops on the first run after `init()` only; an op in a loop \
             is seen by the hooks once per pass.",
            cx.l.file.control.len()
        )
    };
    let hooks_doc = if split.is_some() {
        " A stage op is seen once per patch: `before_op`, `after_op` and `tap` with the same \
         op index each time, the tap's views over that patch's regions (`In::region`; a dense \
         view holds only the region's elements)."
    } else {
        ""
    };
    (stage_doc, hooks_doc)
}

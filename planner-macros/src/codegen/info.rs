//! `ARENA_INFO` and `TENSOR_LIST`: the layout as documented public constants (the `PLAN`
//! table the check reads is an implementation detail).

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::Ctx;

pub(crate) fn info(cx: &Ctx<'_>) -> TokenStream {
    let rt = &cx.rt;
    let pv = &cx.pv;
    let f = &cx.l.file;
    let opt = |s: Option<&str>| match s {
        Some(s) => quote!(#pv::Some(#s)),
        None => quote!(#pv::None),
    };
    let arenas = f.arenas.iter().map(|a| {
        let (name, role, memory, source) = (&a.name, a.role.name(), &a.memory, &a.source_memory);
        let size = Literal::usize_unsuffixed(a.size as usize);
        let align = Literal::usize_unsuffixed(a.alignment as usize);
        let section = opt(a.section.as_deref());
        let blob = opt(a.blob.as_ref().map(|b| b.section.as_str()));
        quote! {
            #rt::ArenaInfo {
                name: #name, role: #role, memory: #memory, source_memory: #source,
                size: #size, align: #align, section: #section, blob_section: #blob,
            }
        }
    });
    let tensors = f.tensors.iter().enumerate().map(|(t, e)| {
        let (id, name) = (&e.id, &e.name);
        let accessor = format!("tensor_{}", cx.idents[t]);
        let arena = Literal::usize_unsuffixed(e.arena as usize);
        let offset = Literal::usize_unsuffixed(e.offset as usize);
        let size = Literal::usize_unsuffixed(e.size as usize);
        quote! {
            #rt::TensorSlot {
                id: #id, name: #name, accessor: #accessor, arena: #arena, offset: #offset, size: #size,
            }
        }
    });
    let (na, nt) = (f.arenas.len(), f.tensors.len());
    let model = cx.model();
    let arena_doc = format!(
        "Every arena of model `{model}` in plan order (the order of `ARENAS`, of `Model::arena_ptrs()` and of the C header's regions): name, role, memory, size, alignment and link sections. The run-time start address of arena `i` is `model.arena_ptrs()[i]`."
    );
    let tensor_doc = format!(
        "Every tensor of model `{model}` in plan order: id, name, the `Model` method that returns its view, its arena (an index into `ARENA_INFO`), offset and size. `planner plan` prints the same accessor names."
    );
    quote! {
        #[doc = #arena_doc]
        pub const ARENA_INFO: [#rt::ArenaInfo; #na] = [#(#arenas),*];
        #[doc = #tensor_doc]
        pub const TENSOR_LIST: [#rt::TensorSlot; #nt] = [#(#tensors),*];
    }
}

//! The handle: `Handle<'a, S>` (`Model<S>` is `Handle<'static, S>`), its singleton
//! `take()`, `Buffers<'a>` and `bind_*` for arenas the application allocates (any lifetime),
//! and `init()`. A model of a group has no `take()`: the group's handle lends it.

use planner_planfile::{ArenaEntry, ArenaRole, DType, PlanFile, TensorKind, naming};
use proc_macro2::TokenStream;
use quote::quote;

use super::{Ctx, ident};

/// What differs between the handles of a model alone, a model of a group and a group; the
/// rest of [`handle`] is written once for all three.
pub(crate) struct Spec<'a> {
    pub(crate) rt: &'a TokenStream,
    pub(crate) pv: &'a TokenStream,
    /// The handle's arenas, in the order of its `bases`.
    pub(crate) arenas: Vec<&'a ArenaEntry>,
    /// The checked table the sizes are read from: `PLAN`, `GROUP_PLAN`.
    pub(crate) table: TokenStream,
    /// The name a bind error gives: `MODEL`, `GROUP`.
    pub(crate) name: TokenStream,
    /// `init()`'s fills of arena `i` after zeroing it.
    pub(crate) fills: Vec<Vec<TokenStream>>,
    /// True when `take()` exists (not for a model of a group, nor with an app-bound arena).
    pub(crate) take: bool,
    /// `pub type Model<..> = ..` (only beside `take()`), `pub type Group<..> = ..`.
    pub(crate) alias: TokenStream,
    /// Methods of a ready handle before `arena_ptrs`: `in_group`, the lenders.
    pub(crate) ready: TokenStream,
    /// `arena_ptrs(&self)`.
    pub(crate) arena_ptrs: TokenStream,
    pub(crate) docs: Docs,
}

/// The doc comments of the handle's items (`///` lines, or `#[doc = ..]`).
pub(crate) struct Docs {
    pub(crate) arenas: TokenStream,
    pub(crate) handle: TokenStream,
    pub(crate) take: TokenStream,
    pub(crate) buffers: TokenStream,
    pub(crate) from_buffers: TokenStream,
    pub(crate) init: TokenStream,
}

/// The handle of a model alone or of a model of a group.
pub(crate) fn handle(cx: &Ctx<'_>) -> TokenStream {
    let rt = &cx.rt;
    let pv = &cx.pv;
    let arenas: Vec<&ArenaEntry> = cx.l.file.arenas.iter().collect();
    let n = arenas.len();
    let model = cx.model();
    let doc = format!(
        "The handle to model `{model}`'s arenas, borrowing them for `'a`: `'static` for the statics (`Model`, from `Model::take()`), the buffers' lifetime from [`Handle::from_buffers`], or the group's borrow for a model of a group. `Handle<'a, Uninit>` has no tensor access; [`Handle::init`] makes the `Handle<'a, Ready>` that has."
    );
    // An arena the application binds has no static, so only `from_buffers` makes a handle.
    let take = !cx.member && !arenas.iter().any(|a| a.app_bound);
    let alias = if take {
        quote! {
            /// The handle to the model's `static` arenas (`Handle<'static>`), as
            /// `Model::take()` gives it.
            pub type Model<S = #rt::Ready> = Handle<'static, S>;
        }
    } else {
        quote!()
    };
    let ready = if cx.member {
        quote! {
            /// A handle to the group's arenas, lent by the group's handle (which zeroed the
            /// state and copied the weights already).
            pub(super) fn in_group(bases: [#rt::__export::Base; #n]) -> Handle<'a, #rt::Ready> {
                Handle { bases, state: #pv::PhantomData, borrow: #pv::PhantomData }
            }
        }
    } else {
        quote!()
    };
    let spec = Spec {
        rt,
        pv,
        fills: (0..n).map(|i| zero_point_fills(&cx.l.file, i, i)).collect(),
        arenas,
        table: quote!(PLAN),
        name: quote!(MODEL),
        take,
        alias,
        ready,
        arena_ptrs: arena_ptrs(cx),
        docs: Docs {
            arenas: quote! {
                /// Arena names in plan order (the C header's region order).
            },
            handle: quote!(#[doc = #doc]),
            take: quote! {
                /// The one handle to the model's `static` arenas: `Some` the first time it is
                /// called in the program, `None` after.
            },
            buffers: quote! {
                /// Buffers for [`Handle::from_buffers`]: one per writable arena, borrowed for `'a`.
            },
            from_buffers: quote! {
                /// A handle over buffers the application allocated instead of the statics
                /// (constant blobs are still read from their statics), borrowing them for `'a`:
                /// one buffer can serve several models in turn. Errors name the arena whose
                /// buffer is too small or misaligned.
            },
            init: quote! {
                /// Zeroes the persistent arenas and copies staged constants into their runtime
                /// arenas (one copy per staged arena), and gives the handle tensor access.
            },
        },
    };
    items(&spec)
}

/// The handle's items: `ARENAS`, `Handle<'a, S>` with `Send`/`Sync`, `take()` over the
/// statics, `Buffers<'a>`, `from_buffers`, `bind_*`, `init()`, and the ready handle's
/// methods.
pub(crate) fn items(spec: &Spec<'_>) -> TokenStream {
    let (rt, pv, d) = (spec.rt, spec.pv, &spec.docs);
    let arenas = &spec.arenas;
    let n = arenas.len();
    let names = arenas.iter().map(|a| a.name.as_str());

    let (fields, bound_bases, binds) = buffers(spec);
    let init = init_steps(arenas, &spec.table, &spec.fills);
    let alias = &spec.alias;
    let statics = if spec.take {
        // The base of each arena in a handle from `take()`: the writable static, or the
        // blob for a cold constant arena.
        let static_bases = static_bases(arenas);
        let take_doc = &d.take;
        quote! {
            static TAKEN: #rt::__export::Once = #rt::__export::Once::new();

            #alias

            impl Handle<'static, #rt::Uninit> {
                #take_doc
                pub fn take() -> #pv::Option<Self> {
                    if !TAKEN.take() {
                        return #pv::None;
                    }
                    #pv::Some(Handle {
                        bases: [#(#static_bases),*],
                        state: #pv::PhantomData,
                        borrow: #pv::PhantomData,
                    })
                }
            }
        }
    } else {
        quote!(#alias)
    };
    let buffers_lifetime = if fields.is_empty() {
        quote!(#[doc(hidden)] pub _borrow: #pv::PhantomData<&'a mut [u8]>,)
    } else {
        quote!()
    };
    let (arenas_doc, doc, buffers_doc) = (&d.arenas, &d.handle, &d.buffers);
    let (from_buffers_doc, init_doc) = (&d.from_buffers, &d.init);
    let (ready, arena_ptrs) = (&spec.ready, &spec.arena_ptrs);
    quote! {
        #arenas_doc
        pub const ARENAS: [&str; #n] = [#(#names),*];

        #doc
        pub struct Handle<'a, S = #rt::Ready> {
            bases: [#rt::__export::Base; #n],
            state: #pv::PhantomData<S>,
            borrow: #pv::PhantomData<&'a mut [u8]>,
        }

        // SAFETY: a handle holds its writable arenas exclusively for 'a (the statics, which
        // `take()` hands out once; buffers it borrows `mut`; or the group's arenas, which the
        // group lends one handle at a time) and only reads constant blobs, so moving it to
        // another thread moves that exclusive access with it.
        unsafe impl<'a, S> Send for Handle<'a, S> {}
        // SAFETY: through `&Handle` only shared views exist (a group's handle gives none:
        // lending takes `&mut`), and constant blobs never change.
        unsafe impl<'a, S> Sync for Handle<'a, S> {}

        #statics

        #buffers_doc
        pub struct Buffers<'a> {
            #(#fields)*
            #buffers_lifetime
        }

        impl<'a> Handle<'a, #rt::Uninit> {
            #from_buffers_doc
            pub fn from_buffers(buffers: Buffers<'a>) -> #pv::Result<Self, #rt::BindError> {
                #pv::Ok(Handle {
                    bases: [#(#bound_bases),*],
                    state: #pv::PhantomData,
                    borrow: #pv::PhantomData,
                })
            }

            #(#binds)*

            #init_doc
            pub fn init(self) -> Handle<'a, #rt::Ready> {
                #(#init)*
                Handle { bases: self.bases, state: #pv::PhantomData, borrow: #pv::PhantomData }
            }
        }

        impl<'a> Handle<'a, #rt::Ready> {
            #ready

            #arena_ptrs
        }
    }
}

/// `arena_ptrs(&self)`: each arena's start, or for a model of a group the start of its own
/// block in each group arena (models that may run at the same time have blocks at different
/// bases of one arena; their tensor offsets count from the group arena's start).
fn arena_ptrs(cx: &Ctx<'_>) -> TokenStream {
    let n = cx.l.file.arenas.len();
    if cx.member {
        let ptrs = (0..n).map(|i| {
            let base = cx.member_bases.get(i).copied().unwrap_or(0) as usize;
            quote!(self.bases[#i].as_ptr().wrapping_add(#base))
        });
        return quote! {
            /// Where this model's block starts in each of its group arenas, in [`ARENAS`]
            /// order: the group arena's start plus the model's base in it (models that may
            /// run at the same time get different addresses). Tensor offsets in [`PLAN`]
            /// and the C header count from the group arena's start, not from these. Never
            /// write through the address of a constant arena.
            pub fn arena_ptrs(&self) -> [*mut u8; #n] {
                [#(#ptrs),*]
            }
        };
    }
    quote! {
        /// The start address of each arena, in [`ARENAS`] order, for C kernels that
        /// address tensors by the header's region and offset. Never write through the
        /// address of a constant arena.
        pub fn arena_ptrs(&self) -> [*mut u8; #n] {
            self.bases.map(|b| b.as_ptr())
        }
    }
}

/// The base of each arena in a handle from `take()`, for a model's arenas or a group's: the
/// writable static, or the blob for a cold constant arena.
pub(crate) fn static_bases(arenas: &[&ArenaEntry]) -> Vec<TokenStream> {
    arenas
        .iter()
        .map(|a| {
            let name = match &a.section {
                Some(_) => naming::arena_static(a.role, &a.memory),
                None => naming::blob_static(&a.memory),
            };
            let name = ident(&name);
            quote!(#name.base())
        })
        .collect()
}

/// What `init()` does per arena of a model or a group (sizes from the checked table
/// `table`: `PLAN`, `GROUP_PLAN`): zero a persistent arena and add `fills[i]` (the models'
/// variables that start at their zero point), copy a staged constant arena's blob.
fn init_steps(
    arenas: &[&ArenaEntry],
    table: &TokenStream,
    fills: &[Vec<TokenStream>],
) -> Vec<TokenStream> {
    let mut init = Vec::new();
    for (i, a) in arenas.iter().enumerate() {
        if a.role == ArenaRole::Persistent {
            init.push(quote! {
                // SAFETY: `self` is the only handle to arena #i (from `take()`, which succeeds
                // once, or from a buffer it borrows `mut` for 'a; a group's `Uninit` handle
                // lends no model handle), so no reference into the arena is alive; the arena
                // is writable and `#table.arenas[#i].size` bytes long (the static's length,
                // or checked by `bind`).
                unsafe { self.bases[#i].zero(const { #table.arenas[#i].size as usize }) };
            });
            init.extend(fills.get(i).into_iter().flatten().cloned());
        } else if a.is_staged() {
            let blob = ident(&naming::blob_static(&a.memory));
            init.push(quote! {
                // SAFETY: as for zeroing: no reference into runtime arena #i is alive and it
                // is writable; the blob is exactly `#table.arenas[#i].size` bytes (its type
                // says so) and the arena at least that long; the blob is a separate static,
                // so they do not overlap.
                unsafe { self.bases[#i].copy_from(#blob.bytes()) };
            });
        }
    }
    init
}

/// The int8 variables of `file`'s persistent arena `arena` whose zero point is not 0: each
/// starts at its zero point (the real value 0), as TFLite Micro resets a variable tensor,
/// rather than at the zeroed arena's 0. Written through `self.bases[i]`: the model's own
/// arena (`i == arena`), or the group arena it is (a model's tensor offsets in a group plan
/// count from the group arena's start).
pub(crate) fn zero_point_fills(file: &PlanFile, arena: usize, i: usize) -> Vec<TokenStream> {
    let mut fills = Vec::new();
    for t in &file.tensors {
        let zero = t.quantization.as_ref().and_then(|q| q.zero_point.first());
        let byte = match zero {
            Some(&z) if z != 0 => i8::try_from(z).ok().map(|z| z as u8),
            _ => None,
        };
        let Some(byte) = byte.filter(|_| {
            t.kind == TensorKind::Variable
                && t.dtype == DType::I8
                && t.arena as usize == arena
                && t.alias_of.is_none()
        }) else {
            continue;
        };
        let (offset, size) = (t.offset as usize, t.size as usize);
        fills.push(quote! {
            // SAFETY: as for zeroing: no reference into arena #i is alive and it is
            // writable; the tensor's `#size` bytes from `#offset` lie inside the arena (the
            // plan's const check holds every tensor inside its arena).
            unsafe { self.bases[#i].fill(#offset, #size, #byte) };
        });
    }
    fills
}

/// `Buffers` fields, the base of each arena in a handle from `from_buffers`, and the
/// `bind_*` methods.
fn buffers(spec: &Spec<'_>) -> (Vec<TokenStream>, Vec<TokenStream>, Vec<TokenStream>) {
    let (rt, pv, table, owner) = (spec.rt, spec.pv, &spec.table, &spec.name);
    let mut fields = Vec::new();
    let mut bound_bases = Vec::new();
    let mut binds = Vec::new();
    for (i, a) in spec.arenas.iter().enumerate() {
        let name = &a.name;
        if a.section.is_none() && !a.app_bound {
            let blob = ident(&naming::blob_static(&a.memory));
            bound_bases.push(quote!(#blob.base()));
            continue;
        }
        let field = ident(&naming::arena_field(a.role, &a.memory));
        let bind_fn = ident(&format!("bind_{}", naming::arena_field(a.role, &a.memory)));
        let doc = format!(
            "Buffer for arena {name}: at least {} bytes, aligned to {}.",
            a.size, a.alignment
        );
        fields.push(quote!(#[doc = #doc] pub #field: &'a mut [u8],));
        let bind = quote! {
            #rt::__export::bind(
                #owner, #name, buffers_field,
                const { #table.arenas[#i].size as usize },
                const { #table.arenas[#i].align as usize },
            )?
        };
        bound_bases.push(quote!({ let buffers_field = buffers.#field; #bind }));
        let bind_doc = format!(
            "Uses `buf` for arena {name} instead of its `static`: an error naming the arena when `buf` is shorter than {} bytes or not aligned to {}.",
            a.size, a.alignment
        );
        binds.push(quote! {
            #[doc = #bind_doc]
            pub fn #bind_fn(&mut self, buf: &'a mut [u8]) -> #pv::Result<(), #rt::BindError> {
                let buffers_field = buf;
                self.bases[#i] = #bind;
                #pv::Ok(())
            }
        });
    }
    (fields, bound_bases, binds)
}

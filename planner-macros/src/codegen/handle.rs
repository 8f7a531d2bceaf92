//! The handle: `Model<S>`, its singleton `take()`, `Buffers` and `bind_*` for arenas the
//! application allocates, and `init()`.

use planner::plan::ArenaRole;
use planner::planfile::naming;
use proc_macro2::TokenStream;
use quote::quote;

use super::{Ctx, ident};

pub(crate) fn handle(cx: &Ctx<'_>) -> TokenStream {
    let rt = &cx.rt;
    let pv = &cx.pv;
    let arenas = &cx.l.file.arenas;
    let n = arenas.len();
    let names = arenas.iter().map(|a| a.name.as_str());

    // The base of each arena in a handle from `take()`: the writable static, or the blob
    // for a cold constant arena.
    let static_bases = arenas.iter().map(|a| {
        let name = match &a.section {
            Some(_) => naming::arena_static(a.role, &a.memory),
            None => naming::blob_static(&a.memory),
        };
        let name = ident(&name);
        quote!(#name.base())
    });

    let mut fields = Vec::new();
    let mut bound_bases = Vec::new();
    let mut binds = Vec::new();
    for (i, a) in arenas.iter().enumerate() {
        let name = &a.name;
        if a.section.is_none() {
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
        fields.push(quote!(#[doc = #doc] pub #field: &'static mut [u8],));
        let bind = quote! {
            #rt::bind(
                MODEL, #name, buffers_field,
                const { PLAN.arenas[#i].size as usize },
                const { PLAN.arenas[#i].align as usize },
            )?
        };
        bound_bases.push(quote!({ let buffers_field = buffers.#field; #bind }));
        let bind_doc = format!(
            "Uses `buf` for arena {name} instead of its `static`: an error naming the arena when `buf` is shorter than {} bytes or not aligned to {}.",
            a.size, a.alignment
        );
        binds.push(quote! {
            #[doc = #bind_doc]
            pub fn #bind_fn(&mut self, buf: &'static mut [u8]) -> #pv::Result<(), #rt::BindError> {
                let buffers_field = buf;
                self.bases[#i] = #bind;
                #pv::Ok(())
            }
        });
    }

    let mut init = Vec::new();
    for (i, a) in arenas.iter().enumerate() {
        if a.role == ArenaRole::Persistent {
            init.push(quote! {
                // SAFETY: `self` is the only handle to arena #i (from `take()`, which succeeds
                // once, or from a `&'static mut` buffer it owns), an `Uninit` handle has
                // handed out no view, so no reference into the arena is alive; the arena is
                // writable and `PLAN.arenas[#i].size` bytes long (the static's length, or
                // checked by `bind`).
                unsafe { self.bases[#i].zero(const { PLAN.arenas[#i].size as usize }) };
            });
        } else if a.is_staged() {
            let blob = ident(&naming::blob_static(&a.memory));
            init.push(quote! {
                // SAFETY: as for zeroing: no reference into runtime arena #i is alive and it
                // is writable; the blob is exactly `PLAN.arenas[#i].size` bytes (its type
                // says so) and the arena at least that long; the blob is a separate static,
                // so they do not overlap.
                unsafe { self.bases[#i].copy_from(#blob.bytes()) };
            });
        }
    }

    let model = cx.model();
    let doc = format!(
        "The handle to model `{model}`'s arenas. `Model<Uninit>` (from [`Model::take`] or [`Model::from_buffers`]) has no tensor access; [`Model::init`] makes the `Model<Ready>` (written `Model`) that has."
    );
    quote! {
        static TAKEN: #rt::Once = #rt::Once::new();

        /// Arena names in plan order (the C header's region order).
        pub const ARENAS: [&str; #n] = [#(#names),*];

        #[doc = #doc]
        pub struct Model<S = #rt::Ready> {
            bases: [#rt::Base; #n],
            state: #pv::PhantomData<S>,
        }

        // SAFETY: a handle owns its writable arenas outright (the statics, which `take()`
        // hands out once, or `&'static mut` buffers) and only reads constant blobs, so
        // moving it to another thread moves that ownership with it.
        unsafe impl<S> Send for Model<S> {}
        // SAFETY: through `&Model` only shared views exist, and constant blobs never change.
        unsafe impl<S> Sync for Model<S> {}

        /// Buffers for [`Model::from_buffers`]: one per writable arena.
        pub struct Buffers {
            #(#fields)*
        }

        impl Model<#rt::Uninit> {
            /// The one handle to the model's `static` arenas: `Some` the first time it is
            /// called in the program, `None` after.
            pub fn take() -> #pv::Option<Self> {
                if !TAKEN.take() {
                    return #pv::None;
                }
                #pv::Some(Model { bases: [#(#static_bases),*], state: #pv::PhantomData })
            }

            /// A handle over buffers the application allocated instead of the statics
            /// (constant blobs are still read from their statics). Errors name the arena
            /// whose buffer is too small or misaligned.
            pub fn from_buffers(buffers: Buffers) -> #pv::Result<Self, #rt::BindError> {
                #pv::Ok(Model { bases: [#(#bound_bases),*], state: #pv::PhantomData })
            }

            #(#binds)*

            /// Zeroes the persistent arenas and copies staged constants into their runtime
            /// arenas (one copy per staged arena), and gives the handle tensor access.
            pub fn init(self) -> Model<#rt::Ready> {
                #(#init)*
                Model { bases: self.bases, state: #pv::PhantomData }
            }
        }

        impl Model<#rt::Ready> {
            /// The start address of each arena, in [`ARENAS`] order, for C kernels that
            /// address tensors by the header's region and offset. Never write through the
            /// address of a constant arena.
            pub fn arena_ptrs(&mut self) -> [*mut u8; #n] {
                self.bases.map(|b| b.as_ptr())
            }
        }
    }
}

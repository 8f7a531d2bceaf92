//! Stub items emitted next to a `compile_error!`, so the one real error is not followed by
//! an error at every use of the model's module.

use proc_macro2::TokenStream;
use quote::quote;

use super::ident;
use crate::parse::Args;

pub(crate) fn stub(module: &str, args: &Args) -> TokenStream {
    let module = ident(module);
    let rt = {
        let k = &args.krate;
        quote!(#k::rt)
    };
    quote! {
        /// Stub: the plan could not be loaded (see the error above).
        #[allow(dead_code, missing_docs)]
        pub mod #module {
            pub const MODEL: &str = "";
            pub const PLAN_HASH: u64 = 0;
            pub struct Model<S = #rt::Ready>(::core::marker::PhantomData<S>);
            impl Model<#rt::Uninit> {
                pub fn take() -> ::core::option::Option<Self> {
                    ::core::option::Option::None
                }
                pub fn init(self) -> Model<#rt::Ready> {
                    Model(::core::marker::PhantomData)
                }
            }
            impl Model<#rt::Ready> {
                pub fn run<K: #rt::kernel::Kernel>(
                    &mut self,
                    _kernels: &mut K,
                ) -> ::core::result::Result<(), #rt::kernel::RunError<K::Error>> {
                    ::core::result::Result::Ok(())
                }
            }
        }
    }
}

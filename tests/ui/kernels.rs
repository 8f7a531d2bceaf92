// Kernel sets for the `run` fixtures under `tests/ui/fail`: not a fixture itself (trybuild
// globs `fail/*.rs` only) but `include!`d by them, so each fixture says only which op kinds
// its set has. The fixture keeps its own `struct`, so the errors still point into it.

/// Implements `Kernel` for `$set`, each marker trait after `+`, and each op-kind trait
/// `$kind` (method `$method`, options `$options` from `planner::rt::options`) with a kernel
/// that does nothing.
macro_rules! kernels {
    ($set:ident { $($kind:ident::$method:ident($options:ident)),* $(,)? } $(+ $marker:ident)*) => {
        impl planner::rt::kernel::Kernel for $set {
            type Error = ();
        }
        $(impl planner::rt::kernel::$marker for $set {})*
        $(
            impl planner::rt::kernel::$kind for $set {
                fn $method(
                    &mut self,
                    _: planner::rt::kernel::OpView<'_, '_>,
                    _: &planner::rt::options::$options,
                ) -> Result<(), ()> {
                    Ok(())
                }
            }
        )*
    };
}

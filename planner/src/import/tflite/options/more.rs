//! Reading the options of the op kinds added for issue 39: `ARG_MIN`, `BATCH_MATMUL`,
//! `CUMSUM`, `DEPTH_TO_SPACE`, `SPACE_TO_DEPTH`, `L2_NORMALIZATION`, `L2_POOL_2D`,
//! `MIRROR_PAD`, `REDUCE_MIN` and `REDUCE_ALL`. The other kinds of that issue have no
//! options table, or an empty one, and keep [`OpOptions::None`].

use super::ctx::{Ctx, pool, reduce};
use super::*;
use crate::rt::options::{
    BatchMatMulOptions, BlockSizeOptions, CumsumOptions, L2NormOptions, MirrorPadMode,
    MirrorPadOptions,
};

/// The options of a kind whose every field is the field of the same name of its options
/// table `$table`, the schema's default (0, false) when left out:
/// `plain!(cx, CumsumT => Cumsum(CumsumOptions { exclusive, reverse }))`.
macro_rules! plain {
    ($cx:expr, $table:ident => $variant:ident($options:ident { $($field:ident),+ })) => {{
        let t = $cx.table::<$table>()?;
        OpOptions::$variant($options {
            $($field: t.and_then(|t| t.$field()).unwrap_or_default(),)+
        })
    }};
}
pub(super) use plain;

/// The typed options of `cx`'s op when it is of one of these kinds; `None` for another kind.
pub(super) fn options(cx: &Ctx<'_, '_, '_>) -> Result<Option<OpOptions>> {
    Ok(Some(match cx.op.opcode.as_str() {
        "ARG_MIN" => {
            let t = cx.table::<ArgMinT>()?;
            cx.output_type(t.and_then(|t| t.output_type()))?;
            OpOptions::ArgMin(ArgMaxOptions {
                axis: cx.scalar(1, "axis")?,
            })
        }
        "BATCH_MATMUL" => plain!(cx, BatchMatMulT => BatchMatMul(
            BatchMatMulOptions { adj_x, adj_y, asymmetric_quantize_inputs }
        )),
        "CUMSUM" => plain!(cx, CumsumT => Cumsum(CumsumOptions { exclusive, reverse })),
        "DEPTH_TO_SPACE" => OpOptions::DepthToSpace(block_size(cx, DepthToSpaceT::block_size)?),
        "SPACE_TO_DEPTH" => OpOptions::SpaceToDepth(block_size(cx, SpaceToDepthT::block_size)?),
        "L2_NORMALIZATION" => {
            let t = cx.table::<L2NormT>()?;
            OpOptions::L2Normalization(L2NormOptions {
                activation: cx.activation(t.and_then(|t| t.activation()))?,
            })
        }
        "L2_POOL_2D" => OpOptions::L2Pool2d(pool(cx)?),
        "MIRROR_PAD" => {
            let t = cx.table::<MirrorPadT>()?;
            let mode = match t.and_then(|t| t.mode()).unwrap_or(0) {
                0 => MirrorPadMode::Reflect,
                1 => MirrorPadMode::Symmetric,
                x => return Err(cx.bad_enum("mode", x, "0 REFLECT, 1 SYMMETRIC")),
            };
            OpOptions::MirrorPad(MirrorPadOptions { mode })
        }
        "REDUCE_MIN" => OpOptions::ReduceMin(reduce(cx)?),
        "REDUCE_ALL" => OpOptions::ReduceAll(reduce(cx)?),
        _ => return Ok(None),
    }))
}

/// `DEPTH_TO_SPACE`'s or `SPACE_TO_DEPTH`'s options: the `block_size` of table `T` that
/// `get` reads, at least 1.
fn block_size<'b, T: UnionMember<'b>>(
    cx: &Ctx<'_, '_, 'b>,
    get: fn(&T) -> Option<i32>,
) -> Result<BlockSizeOptions> {
    let t = cx.table::<T>()?;
    Ok(BlockSizeOptions {
        block_size: cx.positive("block_size", t.and_then(|t| get(&t)), 0)?,
    })
}

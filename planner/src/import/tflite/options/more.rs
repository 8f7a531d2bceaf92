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
        "BATCH_MATMUL" => {
            let t = cx.table::<BatchMatMulT>()?;
            let flag = |v: Option<bool>| v.unwrap_or(false);
            OpOptions::BatchMatMul(BatchMatMulOptions {
                adj_x: flag(t.and_then(|t| t.adj_x())),
                adj_y: flag(t.and_then(|t| t.adj_y())),
                asymmetric_quantize_inputs: flag(t.and_then(|t| t.asymmetric_quantize_inputs())),
            })
        }
        "CUMSUM" => {
            let t = cx.table::<CumsumT>()?;
            OpOptions::Cumsum(CumsumOptions {
                exclusive: t.and_then(|t| t.exclusive()).unwrap_or(false),
                reverse: t.and_then(|t| t.reverse()).unwrap_or(false),
            })
        }
        "DEPTH_TO_SPACE" => {
            let t = cx.table::<DepthToSpaceT>()?;
            OpOptions::DepthToSpace(BlockSizeOptions {
                block_size: cx.positive("block_size", t.and_then(|t| t.block_size()), 0)?,
            })
        }
        "SPACE_TO_DEPTH" => {
            let t = cx.table::<SpaceToDepthT>()?;
            OpOptions::SpaceToDepth(BlockSizeOptions {
                block_size: cx.positive("block_size", t.and_then(|t| t.block_size()), 0)?,
            })
        }
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

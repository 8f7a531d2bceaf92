//! Reductions: `MEAN` (`mean`); `SUM`, `REDUCE_MAX`, `REDUCE_MIN`, `REDUCE_ALL`,
//! `ARG_MAX` and `ARG_MIN` (`axes`); `ADD_N`, `CUMSUM`, `L2_NORMALIZATION` and `L2_POOL_2D`
//! (`accumulate`).

pub(crate) mod accumulate;
pub(crate) mod axes;
pub(crate) mod mean;

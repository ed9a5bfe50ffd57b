//! Reductions: `mx.sum/prod/max/min` over the dims (i1: `mx.any` / `mx.all`; no dims: the
//! operand), and `argmax`/`argmin` (`mx.argmax`: first index of the extreme, NaN extreme),
//! converted to the index dtype.
use quabla_dialect::{ArgOp, DType, Func, Op, ReduceOp, Reducer};

use super::{dtype, name, tuple, Emitter};
use crate::LowerError;

/// Lowers one op of this family (exhaustive over the family).
pub fn lower(_e: &mut Emitter, f: &Func, o: &Op, op: &ReduceOp) -> Result<String, LowerError> {
    let a = name(o.operands[0]);
    let d = f.ty(o.operands[0]).dtype;
    Ok(match op {
        ReduceOp::Reduce { op, dims } => {
            if dims.is_empty() {
                return Ok(a);
            }
            let n = match (op, d) {
                (Reducer::Max, DType::I1) => "any",
                (Reducer::Min, DType::I1) => "all",
                (Reducer::Sum, _) => "sum",
                (Reducer::Prod, _) => "prod",
                (Reducer::Max, _) => "max",
                (Reducer::Min, _) => "min",
            };
            // MLX keeps the dtype of integer sums and products (wrapping), as quabla does.
            format!("mx.{n}({a}, axis={})", tuple(dims))
        }
        ReduceOp::ArgReduce { op, dim, index } => {
            let n = match op {
                ArgOp::Max => "argmax",
                ArgOp::Min => "argmin",
            };
            format!("mx.{n}({a}, axis={dim}).astype({})", dtype(*index))
        }
    })
}

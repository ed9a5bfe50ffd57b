//! Windowed reductions and the select-and-scatter/gather pair on MLX: MLX has no windowed
//! reduction op, so the family is not mapped yet: `Unsupported` (an
//! `UnsupportedOperationError(op, device="mlx")` at compile time).
use quabla_dialect::{Func, Op, ReduceWindowOp};

use super::{unsupported, Emitter};
use crate::LowerError;

/// Lowers one op of this family (exhaustive over the family).
pub fn lower(_e: &mut Emitter, _f: &Func, o: &Op, op: &ReduceWindowOp) -> Result<String, LowerError> {
    match op {
        ReduceWindowOp::ReduceWindow { .. } | ReduceWindowOp::SelectAndScatterAdd { .. } | ReduceWindowOp::SelectAndGatherAdd { .. } => Err(unsupported(o.kind.name())),
    }
}

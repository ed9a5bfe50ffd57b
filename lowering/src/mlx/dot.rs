//! `dot_general`: both operands transposed to `[batch, free, contract]` / `[batch, contract,
//! free]`, flattened to three dims, multiplied and reshaped to `[batch..., lhs free..., rhs
//! free...]` (`q.dot_general`). Float products are `mx.matmul`; integer and i1 products
//! multiply and sum (wrapping, exact), since MLX's matmul takes floats only.
use quabla_dialect::{DotOp, Func, Op};

use super::{name, tuple, Emitter};
use crate::LowerError;

/// Lowers one op of this family (exhaustive over the family).
pub fn lower(_e: &mut Emitter, _f: &Func, o: &Op, op: &DotOp) -> Result<String, LowerError> {
    match op {
        DotOp::DotGeneral { dims } => Ok(format!(
            "q.dot_general({}, {}, {}, {}, {}, {})",
            name(o.operands[0]),
            name(o.operands[1]),
            tuple(&dims.lhs_batching_dimensions),
            tuple(&dims.rhs_batching_dimensions),
            tuple(&dims.lhs_contracting_dimensions),
            tuple(&dims.rhs_contracting_dimensions)
        )),
    }
}

//! Scatter in the take-along-axis form the Python front and the gather VJP emit
//! (`ScatterDims::take_axis`): `q.scatter(operand, indices, updates, axis, combiner)` moves the
//! axis first, flattens the index array, sends out-of-bounds indices to one extra slot that is
//! cut off afterwards (quabla skips such windows) and combines with MLX's `.at[]` updates;
//! `scatter` (set) keeps, for each target, the last update in row-major order (found by
//! scattering update ids with `maximum`), as the interpreter does. Other dimension numbers,
//! and float `scatter_min`/`scatter_max` (MLX's `.at[].minimum/maximum` do not propagate NaN),
//! are `Unsupported`.
use quabla_dialect::{Combiner, Func, Op, ScatterOp};

use super::{name, unsupported, Emitter};
use crate::LowerError;

/// Lowers one op of this family (exhaustive over the family).
pub fn lower(_e: &mut Emitter, f: &Func, o: &Op, op: &ScatterOp) -> Result<String, LowerError> {
    match op {
        ScatterOp::Scatter { op: comb, .. } => {
            let (x, i, u) = (f.ty(o.operands[0]), f.ty(o.operands[1]), f.ty(o.operands[2]));
            let axis = op.dims().take_axis(x, i, u).ok_or_else(|| unsupported(o.kind.name()))?;
            let c = match comb {
                Combiner::Set => "set",
                Combiner::Add => "add",
                Combiner::Mul => "multiply",
                Combiner::Min | Combiner::Max if x.dtype.is_float() => return Err(unsupported(o.kind.name())),
                Combiner::Min => "minimum",
                Combiner::Max => "maximum",
            };
            Ok(format!("q.scatter({}, {}, {}, {axis}, \"{c}\")", name(o.operands[0]), name(o.operands[1]), name(o.operands[2])))
        }
    }
}

//! Export of layout ops: `broadcast_in_dim` (`broadcast_dimensions` = quabla's `dims`),
//! `reshape` (row-major in both) and `transpose` (`permutation` = quabla's `perm`: result dim
//! i is operand dim perm[i] in both). A reshape to the same type only renames.
use quabla_dialect::{Func, LayoutOp, Op};

use super::{array, Emitter, Tv};
use crate::LowerError;

/// `quabla.broadcast_in_dim`.
pub fn lower_broadcast_in_dim(e: &mut Emitter, f: &Func, o: &Op, dims: &[i64]) -> Result<Tv, LowerError> {
    let x = e.get(f, o.operands[0]);
    Ok(e.op("stablehlo.broadcast_in_dim", &[&x], &[("broadcast_dimensions", array(dims))], f.ty(o.results[0])))
}

/// `quabla.reshape`.
pub fn lower_reshape(e: &mut Emitter, f: &Func, o: &Op) -> Result<Tv, LowerError> {
    let x = e.get(f, o.operands[0]);
    let out = f.ty(o.results[0]);
    if &x.ty == out {
        return Ok(x);
    }
    Ok(e.op("stablehlo.reshape", &[&x], &[], out))
}

/// `quabla.transpose`.
pub fn lower_transpose(e: &mut Emitter, f: &Func, o: &Op, perm: &[i64]) -> Result<Tv, LowerError> {
    let x = e.get(f, o.operands[0]);
    Ok(e.op("stablehlo.transpose", &[&x], &[("permutation", array(perm))], f.ty(o.results[0])))
}

/// Exports one op of this family (exhaustive over the family).
pub fn lower(e: &mut Emitter, f: &Func, o: &Op, op: &LayoutOp) -> Result<Tv, LowerError> {
    match op {
        LayoutOp::BroadcastInDim { dims, .. } => lower_broadcast_in_dim(e, f, o, dims),
        LayoutOp::Reshape { .. } => lower_reshape(e, f, o),
        LayoutOp::Transpose { perm } => lower_transpose(e, f, o, perm),
        // The operand itself (only derivatives see the op).
        LayoutOp::StopGradient {} => Ok(e.get(f, o.operands[0])),
    }
}

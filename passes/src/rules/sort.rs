//! Derivative and batching rules of the sort family. `sort` permutes its operand, so its JVP
//! permutes the tangent with the same stable permutation (an `argsort` of the operand) and its
//! VJP applies the inverse permutation to the cotangent (the inverse of a permutation along a
//! dimension is its ascending `argsort`); both are gathers along the dimension, written as a
//! flat `gather` of `lane * n + index`. `argsort` has an integer result and no tangent.
//! Batching sorts along the dimension shifted past the leading batch dim.
use quabla_dialect::{CmpDir, ConstantOp, DType, Op, OpKind, SlicingOp, SortOp, TensorType, Value};

use super::{RuleError, Tangents, B};

/// `v` permuted along `dim` by `idx` (same shape as `v`, i64): `out[.., k, ..] = v[.., idx[.., k, ..], ..]`.
fn take_along(b: &mut B, v: Value, idx: Value, dim: usize) -> Value {
    let t = b.ty(v);
    let r = t.rank();
    let n = t.shape[dim];
    let mut perm: Vec<i64> = (0..r as i64).filter(|&d| d != dim as i64).collect();
    perm.push(dim as i64);
    let vt = b.transpose(v, perm.clone());
    let it = b.transpose(idx, perm.clone());
    let moved = b.ty(vt).shape;
    let lanes = quabla_dialect::size::saturating_product(moved[..r - 1].iter().copied());
    let total = lanes.saturating_mul(n);
    let lane_ty = TensorType::new(DType::I64, vec![lanes, n]);
    let lane = b.op(OpKind::Constant(ConstantOp::Iota { dim: 0, ty: lane_ty }), &[]);
    let nn = b.splat(&TensorType::new(DType::I64, vec![lanes, n]), n as f64);
    let base = b.mul(lane, nn);
    let i2 = b.reshape(it, vec![lanes, n]);
    let flat_idx = b.add(base, i2);
    let fi = b.reshape(flat_idx, vec![total]);
    let fv = b.reshape(vt, vec![total]);
    let g = b.op(OpKind::Slicing(SlicingOp::Gather { axis: 0 }), &[fv, fi]);
    let back = b.reshape(g, moved);
    let mut inv = vec![0i64; r];
    for (i, &p) in perm.iter().enumerate() {
        inv[p as usize] = i as i64;
    }
    b.transpose(back, inv)
}

fn argsort(b: &mut B, x: Value, dim: i64, direction: CmpDir) -> Value {
    b.op(OpKind::Sort(SortOp::Argsort { dimension: dim, direction, index: DType::I64 }), &[x])
}

pub fn jvp(b: &mut B, op: &Op, t: &[Option<Value>]) -> Result<Tangents, RuleError> {
    Ok(vec![match (&op.kind, t[0]) {
        (OpKind::Sort(SortOp::Sort { dimension, direction }), Some(tx)) => {
            let p = argsort(b, op.operands[0], *dimension, *direction);
            Some(take_along(b, tx, p, *dimension as usize))
        }
        (OpKind::Sort(SortOp::Sort { .. }), None) | (OpKind::Sort(SortOp::Argsort { .. }), _) => None,
        (other, _) => return Err(RuleError::Internal(format!("sort::jvp got {}", other.name()))),
    }])
}

pub fn vjp(b: &mut B, op: &Op, ct: Value) -> Result<Tangents, RuleError> {
    Ok(vec![match &op.kind {
        OpKind::Sort(SortOp::Sort { dimension, direction }) => {
            let p = argsort(b, op.operands[0], *dimension, *direction);
            let inv = argsort(b, p, *dimension, CmpDir::Lt);
            Some(take_along(b, ct, inv, *dimension as usize))
        }
        OpKind::Sort(SortOp::Argsort { .. }) => None,
        other => return Err(RuleError::Internal(format!("sort::vjp got {}", other.name()))),
    }])
}

pub fn batch(b: &mut B, op: &Op, xs: &[Value], _batched: &[bool], _size: i64) -> Result<Vec<(Value, bool)>, RuleError> {
    let kind = match &op.kind {
        OpKind::Sort(SortOp::Sort { dimension, direction }) => SortOp::Sort { dimension: dimension + 1, direction: *direction },
        OpKind::Sort(SortOp::Argsort { dimension, direction, index }) => SortOp::Argsort { dimension: dimension + 1, direction: *direction, index: *index },
        other => return Err(RuleError::Internal(format!("sort::batch got {}", other.name()))),
    };
    Ok(vec![(b.op(OpKind::Sort(kind), &[xs[0]]), true)])
}

//! Derivative rules of layout ops. All are linear: the JVP applies the op to the tangent;
//! the VJP applies the transpose: a sum over broadcast dims (then a reshape to the operand),
//! the inverse reshape, the inverse permutation. `stop_gradient` is the exception: its
//! tangent and cotangent are symbolic zeros.
use quabla_dialect::{LayoutOp, Op, OpKind, Value};

use super::{RuleError, Tangents, B};

pub fn jvp(b: &mut B, op: &Op, t: &[Option<Value>]) -> Result<Tangents, RuleError> {
    if let OpKind::Layout(LayoutOp::StopGradient {}) = &op.kind {
        return Ok(vec![None]);
    }
    Ok(vec![t[0].map(|t| b.op(op.kind.clone(), &[t]))])
}

pub fn vjp(b: &mut B, op: &Op, ct: Value) -> Result<Tangents, RuleError> {
    if let OpKind::Layout(LayoutOp::StopGradient {}) = &op.kind {
        return Ok(vec![None]);
    }
    let xt = b.ty(op.operands[0]);
    Ok(vec![Some(match &op.kind {
        OpKind::Layout(LayoutOp::BroadcastInDim { dims, shape }) => {
            // Sum over result dims not mapped from the operand, and over mapped dims where the
            // operand had extent 1 but the result does not.
            let mut sum_dims: Vec<i64> = (0..shape.len() as i64).filter(|d| !dims.contains(d)).collect();
            for (i, &d) in dims.iter().enumerate() {
                if xt.shape[i] == 1 && shape[d as usize] != 1 {
                    sum_dims.push(d);
                }
            }
            sum_dims.sort();
            let s = b.reduce_sum(ct, sum_dims);
            b.reshape(s, xt.shape.clone())
        }
        OpKind::Layout(LayoutOp::Reshape { .. }) => b.reshape(ct, xt.shape.clone()),
        OpKind::Layout(LayoutOp::Transpose { perm }) => {
            let mut inv = vec![0i64; perm.len()];
            for (i, &p) in perm.iter().enumerate() {
                inv[p as usize] = i as i64;
            }
            b.transpose(ct, inv)
        }
        other => return Err(RuleError::Internal(format!("layout vjp got {}", other.name()))),
    })])
}

/// Batching: the op gains the leading batch dim (dims/perm shifted by one).
pub fn batch(b: &mut B, op: &Op, xs: &[Value], _batched: &[bool], size: i64) -> Result<Vec<(Value, bool)>, RuleError> {
    let kind = match &op.kind {
        OpKind::Layout(LayoutOp::BroadcastInDim { dims, shape }) => OpKind::Layout(LayoutOp::BroadcastInDim { dims: super::shift(dims, 0), shape: std::iter::once(size).chain(shape.iter().copied()).collect() }),
        OpKind::Layout(LayoutOp::Reshape { shape }) => OpKind::Layout(LayoutOp::Reshape { shape: std::iter::once(size).chain(shape.iter().copied()).collect() }),
        OpKind::Layout(LayoutOp::Transpose { perm }) => OpKind::Layout(LayoutOp::Transpose { perm: super::shift(perm, 0) }),
        OpKind::Layout(LayoutOp::StopGradient {}) => op.kind.clone(),
        other => return Err(RuleError::Internal(format!("layout batch got {}", other.name()))),
    };
    Ok(vec![(b.op(kind, &[xs[0]]), true)])
}

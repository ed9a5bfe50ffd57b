//! Derivative rules of `dot_general` (bilinear). JVP: dot(ta, b) + dot(a, tb). VJP: the
//! cotangent contracted with the other operand over the other operand's free dims (batch
//! dims stay batch dims), then transposed back to the operand's dim order.
use quabla_dialect::{DotDims, DotOp, Op, OpKind, Value};

use super::{RuleError, Tangents, B};

pub fn jvp(b: &mut B, op: &Op, t: &[Option<Value>]) -> Result<Tangents, RuleError> {
    let (a, c) = (op.operands[0], op.operands[1]);
    let l = t[0].map(|ta| b.op(op.kind.clone(), &[ta, c]));
    let r = t[1].map(|tc| b.op(op.kind.clone(), &[a, tc]));
    Ok(vec![b.add_opt(l, r)])
}

#[allow(clippy::too_many_arguments)]
/// Cotangent of one side. `this`/`other` describe the operands as (batch, contract, free).
fn side(b: &mut B, ct: Value, other: Value, this_rank: usize, this_batch: &[i64], this_contract: &[i64], other_batch: &[i64], other_contract: &[i64], this_is_lhs: bool) -> Value {
    let ot = b.ty(other);
    let nb = this_batch.len();
    let this_free = DotDims::free(this_rank, this_batch, this_contract);
    let other_free = DotDims::free(ot.rank(), other_batch, other_contract);
    let (nf_this, nf_other) = (this_free.len(), other_free.len());
    // ct dims: [batch, lhs free, rhs free].
    let ct_other_free: Vec<i64> = if this_is_lhs { (nb + nf_this..nb + nf_this + nf_other).map(|d| d as i64).collect() } else { (nb..nb + nf_other).map(|d| d as i64).collect() };
    let dims = DotDims { lhs_batching_dimensions: (0..nb as i64).collect(), rhs_batching_dimensions: other_batch.to_vec(), lhs_contracting_dimensions: ct_other_free, rhs_contracting_dimensions: other_free };
    let g = b.op(OpKind::Dot(DotOp::DotGeneral { dims }), &[ct, other]);
    // g dims: [batch, this free (in ct order), other's contracting dims in increasing order].
    let mut sorted_oc = other_contract.to_vec();
    sorted_oc.sort();
    let mut perm = vec![0i64; this_rank];
    for (d, slot) in perm.iter_mut().enumerate() {
        let d = d as i64;
        *slot = if let Some(i) = this_batch.iter().position(|&x| x == d) {
            i as i64
        } else if let Some(j) = this_free.iter().position(|&x| x == d) {
            (nb + j) as i64
        } else {
            let k = this_contract.iter().position(|&x| x == d).expect("every dim is batch, free or contracting");
            let r = sorted_oc.iter().position(|&x| x == other_contract[k]).unwrap();
            (nb + nf_this + r) as i64
        };
    }
    b.transpose(g, perm)
}

pub fn vjp(b: &mut B, op: &Op, ct: Value) -> Result<Tangents, RuleError> {
    let OpKind::Dot(DotOp::DotGeneral { dims }) = &op.kind else { return Err(RuleError::Internal("dot vjp got another op".into())) };
    let (a, c) = (op.operands[0], op.operands[1]);
    let (ar, cr) = (b.ty(a).rank(), b.ty(c).rank());
    let ca = side(b, ct, c, ar, &dims.lhs_batching_dimensions, &dims.lhs_contracting_dimensions, &dims.rhs_batching_dimensions, &dims.rhs_contracting_dimensions, true);
    let cc = side(b, ct, a, cr, &dims.rhs_batching_dimensions, &dims.rhs_contracting_dimensions, &dims.lhs_batching_dimensions, &dims.lhs_contracting_dimensions, false);
    Ok(vec![Some(ca), Some(cc)])
}

/// Batching: with both operands batched the batch dim becomes a new leading batch dim of
/// the contraction; with one batched it is a free dim of that side, moved to the front.
pub fn batch(b: &mut B, op: &Op, xs: &[Value], batched: &[bool], _size: i64) -> Result<Vec<(Value, bool)>, RuleError> {
    let OpKind::Dot(DotOp::DotGeneral { dims }) = &op.kind else { return Err(RuleError::Internal("dot batch got another op".into())) };
    let inc = |v: &[i64]| v.iter().map(|d| d + 1).collect::<Vec<_>>();
    let (lb, rb) = (batched[0], batched[1]);
    let nb = dims.lhs_batching_dimensions.len();
    let d = DotDims {
        lhs_batching_dimensions: if lb && rb { super::shift(&dims.lhs_batching_dimensions, 0) } else if lb { inc(&dims.lhs_batching_dimensions) } else { dims.lhs_batching_dimensions.clone() },
        rhs_batching_dimensions: if lb && rb { super::shift(&dims.rhs_batching_dimensions, 0) } else if rb { inc(&dims.rhs_batching_dimensions) } else { dims.rhs_batching_dimensions.clone() },
        lhs_contracting_dimensions: if lb { inc(&dims.lhs_contracting_dimensions) } else { dims.lhs_contracting_dimensions.clone() },
        rhs_contracting_dimensions: if rb { inc(&dims.rhs_contracting_dimensions) } else { dims.rhs_contracting_dimensions.clone() },
    };
    let y = b.op(OpKind::Dot(DotOp::DotGeneral { dims: d }), xs);
    let y = if lb && rb {
        y
    } else if lb {
        // The batch dim is lhs free dim 0: result position nb.
        super::move_axis(b, y, nb, 0)
    } else {
        let lfree = DotDims::free(b.ty(xs[0]).rank(), &dims.lhs_batching_dimensions, &dims.lhs_contracting_dimensions).len();
        super::move_axis(b, y, nb + lfree, 0)
    };
    Ok(vec![(y, true)])
}

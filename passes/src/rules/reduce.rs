//! Derivative rules of reductions. reduce_sum is linear (VJP: broadcast back). reduce_max/min
//! pass the tangent of the chosen elements, splitting ties evenly (as JAX). reduce_prod uses
//! the product of the other elements, computed without division (so zeros are exact) by a
//! masked product over an [n, n, m] broadcast of the reduced elements. argmax/argmin have
//! integer results and no tangent.
use quabla_dialect::{CmpDir, ConstantOp, Op, OpKind, ReduceOp, Reducer, TensorType, Value};

use super::{RuleError, Tangents, B};

/// Dims of the operand kept by a reduction over `dims`.
fn kept(rank: usize, dims: &[i64]) -> Vec<i64> {
    (0..rank as i64).filter(|d| !dims.contains(d)).collect()
}

/// The positions where x equals the (broadcast) result, as 0/1 of x's dtype, and their count.
fn chooser(b: &mut B, x: Value, y: Value, dims: &[i64]) -> (Value, Value) {
    let xt = b.ty(x);
    let yb = b.broadcast(y, kept(xt.rank(), dims), xt.shape.clone());
    let eq = b.cmp(CmpDir::Eq, x, yb);
    let m = b.convert(eq, xt.dtype);
    let cnt = b.reduce_sum(m, dims.to_vec());
    (m, cnt)
}

/// For reduce_prod: the operand with reduced dims moved to the front and flattened to [n, m],
/// and the product of the other elements per position, also [n, m].
fn prod_others(b: &mut B, x: Value, dims: &[i64]) -> (Vec<i64>, Value) {
    let xt = b.ty(x);
    let keep = kept(xt.rank(), dims);
    let perm: Vec<i64> = dims.iter().copied().chain(keep.iter().copied()).collect();
    let n = quabla_dialect::size::saturating_product(dims.iter().map(|&d| xt.shape[d as usize]));
    let m = quabla_dialect::size::saturating_product(keep.iter().map(|&d| xt.shape[d as usize]));
    let xtp = b.transpose(x, perm.clone());
    let x2 = b.reshape(xtp, vec![n, m]);
    let big = vec![n, n, m];
    let xb = b.broadcast(x2, vec![1, 2], big.clone());
    let it = TensorType::new(quabla_dialect::DType::I64, big.clone());
    let i0 = b.op(OpKind::Constant(ConstantOp::Iota { dim: 0, ty: it.clone() }), &[]);
    let i1 = b.op(OpKind::Constant(ConstantOp::Iota { dim: 1, ty: it }), &[]);
    let eye = b.cmp(CmpDir::Eq, i0, i1);
    let ones = b.splat(&TensorType::new(xt.dtype, big), 1.0);
    let sel = b.select(eye, ones, xb);
    (perm, b.op(OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Prod, dims: vec![1] }), &[sel]))
}

pub fn jvp(b: &mut B, op: &Op, t: &[Option<Value>]) -> Result<Tangents, RuleError> {
    let Some(tx) = t[0] else { return Ok(vec![None]) };
    let x = op.operands[0];
    let y = op.results[0];
    Ok(vec![match &op.kind {
        OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Sum, dims }) => Some(b.reduce_sum(tx, dims.clone())),
        OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Max | Reducer::Min, dims }) => {
            let (m, cnt) = chooser(b, x, y, dims);
            let tm = b.mul(tx, m);
            let s = b.reduce_sum(tm, dims.clone());
            Some(b.div(s, cnt))
        }
        OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Prod, dims }) => {
            let (perm, others) = prod_others(b, x, dims);
            let ot = b.ty(others);
            let ttp = b.transpose(tx, perm);
            let t2 = b.reshape(ttp, ot.shape.clone());
            let p = b.mul(t2, others);
            let s = b.reduce_sum(p, vec![0]);
            let yt = b.ty(y);
            Some(b.reshape(s, yt.shape))
        }
        OpKind::Reduce(ReduceOp::ArgReduce { .. }) => None,
        other => return Err(RuleError::Internal(format!("reduce jvp got {}", other.name()))),
    }])
}

pub fn vjp(b: &mut B, op: &Op, ct: Value) -> Result<Tangents, RuleError> {
    let x = op.operands[0];
    let y = op.results[0];
    let xt = b.ty(x);
    Ok(vec![match &op.kind {
        OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Sum, dims }) => Some(b.broadcast(ct, kept(xt.rank(), dims), xt.shape.clone())),
        OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Max | Reducer::Min, dims }) => {
            let (m, cnt) = chooser(b, x, y, dims);
            let q = b.div(ct, cnt);
            let qb = b.broadcast(q, kept(xt.rank(), dims), xt.shape.clone());
            Some(b.mul(qb, m))
        }
        OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Prod, dims }) => {
            let (perm, others) = prod_others(b, x, dims);
            let ot = b.ty(others);
            let m = ot.shape[1];
            let c1 = b.reshape(ct, vec![m]);
            let cb = b.broadcast(c1, vec![1], ot.shape.clone());
            let g = b.mul(cb, others);
            let tshape: Vec<i64> = perm.iter().map(|&p| xt.shape[p as usize]).collect();
            let g2 = b.reshape(g, tshape);
            let mut inv = vec![0i64; perm.len()];
            for (i, &p) in perm.iter().enumerate() {
                inv[p as usize] = i as i64;
            }
            Some(b.transpose(g2, inv))
        }
        OpKind::Reduce(ReduceOp::ArgReduce { .. }) => None,
        other => return Err(RuleError::Internal(format!("reduce vjp got {}", other.name()))),
    }])
}

/// Batching: reduced dims shift by one (the operand is batched: it is the only operand).
pub fn batch(b: &mut B, op: &Op, xs: &[Value], _batched: &[bool], _size: i64) -> Result<Vec<(Value, bool)>, RuleError> {
    let kind = match &op.kind {
        OpKind::Reduce(ReduceOp::Reduce { op, dims }) => OpKind::Reduce(ReduceOp::Reduce { op: *op, dims: dims.iter().map(|d| d + 1).collect() }),
        OpKind::Reduce(ReduceOp::ArgReduce { op, dim, index }) => OpKind::Reduce(ReduceOp::ArgReduce { op: *op, dim: dim + 1, index: *index }),
        other => return Err(RuleError::Internal(format!("reduce batch got {}", other.name()))),
    };
    Ok(vec![(b.op(kind, &[xs[0]]), true)])
}

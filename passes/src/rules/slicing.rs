//! Derivative rules of slicing ops. JVPs apply the op to the tangents (all are linear in
//! their data operands; index operands get no tangent). VJPs are the transposes written with
//! existing ops: slice -> pad with zeros; pad -> strided slice (and the padding value gets the
//! sum of the cotangent outside the operand); concatenate -> slices; dynamic_slice -> a
//! masked gather per dim (the clamped start is recomputed from the start operands);
//! gather -> a one-hot contraction (`dot_general` with `compare(iota, clamp(indices))`),
//! which adds the cotangents of repeated indices.
use quabla_dialect::{BinaryOp, CmpDir, DType, DotDims, Literal, Op, OpKind, TensorType, Value};

use super::{RuleError, Tangents, B};

pub fn jvp(b: &mut B, op: &Op, t: &[Option<Value>]) -> Result<Tangents, RuleError> {
    Ok(vec![match &op.kind {
        OpKind::Slice { .. } => t[0].map(|t| b.op(op.kind.clone(), &[t])),
        OpKind::Pad { .. } | OpKind::Concatenate { .. } => {
            if t[0].is_none() && t[1].is_none() {
                None
            } else {
                let a = b.or_zero(t[0], op.operands[0]);
                let c = b.or_zero(t[1], op.operands[1]);
                Some(b.op(op.kind.clone(), &[a, c]))
            }
        }
        OpKind::DynamicSlice { .. } | OpKind::Gather { .. } => t[0].map(|t| {
            let mut xs = op.operands.clone();
            xs[0] = t;
            b.op(op.kind.clone(), &xs)
        }),
        other => return Err(RuleError::Internal(format!("slicing jvp got {}", other.name()))),
    }])
}

fn int_scalar(b: &mut B, d: DType, v: i64) -> Value {
    b.op(OpKind::Constant { value: Literal::from_i64s(TensorType::scalar(d), &[v]) }, &[])
}

fn sum_all(b: &mut B, x: Value) -> Value {
    let r = b.ty(x).rank() as i64;
    b.reduce_sum(x, (0..r).collect())
}

pub fn vjp(b: &mut B, op: &Op, ct: Value) -> Result<Tangents, RuleError> {
    let xt = b.ty(op.operands[0]);
    let ctt = b.ty(ct);
    Ok(match &op.kind {
        OpKind::Slice { start, strides, .. } => {
            let z = b.zeros(&TensorType::scalar(xt.dtype));
            let high: Vec<i64> = (0..xt.rank()).map(|i| xt.shape[i] - start[i] - (ctt.shape[i] - 1) * strides[i] - 1).collect();
            let interior: Vec<i64> = strides.iter().map(|s| s - 1).collect();
            vec![Some(b.op(OpKind::Pad { low: start.clone(), high, interior }, &[ct, z]))]
        }
        OpKind::Pad { low, interior, .. } => {
            let limit: Vec<i64> = (0..xt.rank()).map(|i| low[i] + (xt.shape[i] - 1) * (interior[i] + 1) + 1).collect();
            let strides: Vec<i64> = interior.iter().map(|i| i + 1).collect();
            let cx = b.op(OpKind::Slice { start: low.clone(), limit, strides }, &[ct]);
            let total = sum_all(b, ct);
            let inner = sum_all(b, cx);
            let cp = b.sub(total, inner);
            vec![Some(cx), Some(cp)]
        }
        OpKind::Concatenate { dim } => {
            let d = *dim as usize;
            let bt = b.ty(op.operands[1]);
            let mut outs = Vec::new();
            for (lo, ext) in [(0, xt.shape[d]), (xt.shape[d], bt.shape[d])] {
                let mut start = vec![0i64; xt.rank()];
                let mut limit = ctt.shape.clone();
                start[d] = lo;
                limit[d] = lo + ext;
                outs.push(Some(b.op(OpKind::Slice { start, limit, strides: vec![1; xt.rank()] }, &[ct])));
            }
            outs
        }
        OpKind::DynamicSlice { sizes } => {
            let mut cur = ct;
            for k in 0..xt.rank() {
                let (n, s) = (xt.shape[k], sizes[k]);
                if n == s {
                    continue;
                }
                let start = op.operands[1 + k];
                let it = b.ty(start).dtype;
                let zero = int_scalar(b, it, 0);
                let hi = int_scalar(b, it, n - s);
                let c0 = b.bin(BinaryOp::Max, start, zero);
                let c = b.bin(BinaryOp::Min, c0, hi);
                let iota = b.op(OpKind::Iota { dim: 0, ty: TensorType::new(it, [n]) }, &[]);
                let cb = b.broadcast(c, vec![], vec![n]);
                let idx = b.sub(iota, cb);
                let z = b.broadcast(zero, vec![], vec![n]);
                let sz = b.op(OpKind::Constant { value: Literal::from_i64s(TensorType::new(it, [n]), &vec![s; n as usize]) }, &[]);
                let ge = b.cmp(CmpDir::Ge, idx, z);
                let lt = b.cmp(CmpDir::Lt, idx, sz);
                let valid = b.bin(BinaryOp::And, ge, lt);
                let g = b.op(OpKind::Gather { axis: k as i64 }, &[cur, idx]);
                let gt = b.ty(g);
                let mask = b.broadcast(valid, vec![k as i64], gt.shape.clone());
                let zeros = b.zeros(&gt);
                cur = b.select(mask, g, zeros);
            }
            let mut v = vec![Some(cur)];
            v.extend(std::iter::repeat_n(None, op.operands.len() - 1));
            v
        }
        OpKind::Gather { axis } => {
            let a = *axis as usize;
            let idx = op.operands[1];
            let it = b.ty(idx);
            let (n, q, r) = (xt.shape[a], it.rank(), xt.rank());
            let zero = int_scalar(b, it.dtype, 0);
            let hi = int_scalar(b, it.dtype, n - 1);
            let zb = b.broadcast(zero, vec![], it.shape.clone());
            let hb = b.broadcast(hi, vec![], it.shape.clone());
            let c0 = b.bin(BinaryOp::Max, idx, zb);
            let ic = b.bin(BinaryOp::Min, c0, hb);
            let mut oh_shape = it.shape.clone();
            oh_shape.push(n);
            let iota = b.op(OpKind::Iota { dim: q as i64, ty: TensorType::new(it.dtype, oh_shape.clone()) }, &[]);
            let icb = b.broadcast(ic, (0..q as i64).collect(), oh_shape);
            let eq = b.cmp(CmpDir::Eq, icb, iota);
            let oh = b.convert(eq, xt.dtype);
            let dims = DotDims { lhs_batch: vec![], rhs_batch: vec![], lhs_contract: (a as i64..(a + q) as i64).collect(), rhs_contract: (0..q as i64).collect() };
            let d = b.op(OpKind::DotGeneral { dims }, &[ct, oh]);
            // d has dims x[:a] ++ x[a+1:] ++ [n]; move the last dim to position a.
            let perm: Vec<i64> = (0..r).map(|k| if k < a { k as i64 } else if k == a { (r - 1) as i64 } else { (k - 1) as i64 }).collect();
            vec![Some(b.transpose(d, perm)), None]
        }
        other => return Err(RuleError::Internal(format!("slicing vjp got {}", other.name()))),
    })
}

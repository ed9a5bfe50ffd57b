//! Derivative rules of slicing ops. JVPs apply the op to the tangents (all are linear in
//! their data operands; index operands get no tangent). VJPs are the transposes written with
//! existing ops: slice -> pad with zeros; pad -> strided slice (and the padding value gets the
//! sum of the cotangent outside the operand); concatenate -> slices; dynamic_slice -> a
//! dynamic_update_slice of the cotangent into zeros (the same clamped window);
//! gather -> a `scatter_add` of the cotangent at the clamped indices, which adds the
//! cotangents of repeated indices; dynamic_update_slice -> the cotangent with
//! the window zeroed (a dynamic_update_slice of zeros) for the operand and the window
//! (a dynamic_slice) for the update.
use quabla_dialect::{BinaryOp, CmpDir, Combiner, ConstantOp, DType, Literal, Op, OpKind, ScatterOp, SlicingOp, TensorType, Value};

use super::{RuleError, Tangents, B};

pub fn jvp(b: &mut B, op: &Op, t: &[Option<Value>]) -> Result<Tangents, RuleError> {
    Ok(vec![match &op.kind {
        OpKind::Slicing(SlicingOp::Slice { .. }) => t[0].map(|t| b.op(op.kind.clone(), &[t])),
        OpKind::Slicing(SlicingOp::Pad { .. }) | OpKind::Slicing(SlicingOp::Concatenate { .. }) => {
            if t[0].is_none() && t[1].is_none() {
                None
            } else {
                let a = b.or_zero(t[0], op.operands[0]);
                let c = b.or_zero(t[1], op.operands[1]);
                Some(b.op(op.kind.clone(), &[a, c]))
            }
        }
        OpKind::Slicing(SlicingOp::DynamicSlice { .. }) | OpKind::Slicing(SlicingOp::Gather { .. }) => t[0].map(|t| {
            let mut xs = op.operands.clone();
            xs[0] = t;
            b.op(op.kind.clone(), &xs)
        }),
        OpKind::Slicing(SlicingOp::DynamicUpdateSlice {}) => {
            if t[0].is_none() && t[1].is_none() {
                None
            } else {
                let mut xs = op.operands.clone();
                xs[0] = b.or_zero(t[0], op.operands[0]);
                xs[1] = b.or_zero(t[1], op.operands[1]);
                Some(b.op(op.kind.clone(), &xs))
            }
        }
        other => return Err(RuleError::Internal(format!("slicing jvp got {}", other.name()))),
    }])
}

fn int_scalar(b: &mut B, d: DType, v: i64) -> Value {
    b.op(OpKind::Constant(ConstantOp::Constant { value: Literal::from_i64s(TensorType::scalar(d), &[v]) }), &[])
}

/// The inverse of the permutation of `0..n` that the constant `idx` of `f` holds (a vector
/// of `n` distinct indices in range), if it is one.
fn inverse_permutation(f: &quabla_dialect::Func, idx: Value, n: i64) -> Option<Vec<i64>> {
    let lit = super::constant_of(&f.ops, idx)?;
    if lit.ty.rank() != 1 || lit.len() as i64 != n || n > PERMUTATION_MAX {
        return None;
    }
    let mut inv = vec![-1i64; n as usize];
    for j in 0..lit.len() {
        let i = lit.get_i64(j);
        if !(0..n).contains(&i) || inv[i as usize] >= 0 {
            return None;
        }
        inv[i as usize] = j as i64;
    }
    Some(inv)
}

/// The longest constant index vector [`inverse_permutation`] inverts.
const PERMUTATION_MAX: i64 = 1 << 20;

/// Integer indices clamped to [0, hi] elementwise (as `gather` clamps them).
fn clamp_indices(b: &mut B, idx: Value, hi: i64) -> Value {
    let it = b.ty(idx);
    let zero = int_scalar(b, it.dtype, 0);
    let top = int_scalar(b, it.dtype, hi);
    let zb = b.broadcast(zero, vec![], it.shape.clone());
    let hb = b.broadcast(top, vec![], it.shape.clone());
    let c0 = b.bin(BinaryOp::Max, idx, zb);
    b.bin(BinaryOp::Min, c0, hb)
}

fn sum_all(b: &mut B, x: Value) -> Value {
    let r = b.ty(x).rank() as i64;
    b.reduce_sum(x, (0..r).collect())
}

pub fn vjp(b: &mut B, op: &Op, ct: Value) -> Result<Tangents, RuleError> {
    let xt = b.ty(op.operands[0]);
    let ctt = b.ty(ct);
    Ok(match &op.kind {
        OpKind::Slicing(SlicingOp::Slice { start_indices: start, strides, .. }) => {
            let z = b.zeros(&TensorType::scalar(xt.dtype));
            let high: Vec<i64> = (0..xt.rank()).map(|i| xt.shape[i] - start[i] - (ctt.shape[i] - 1) * strides[i] - 1).collect();
            let interior: Vec<i64> = strides.iter().map(|s| s - 1).collect();
            vec![Some(b.op(OpKind::Slicing(SlicingOp::Pad { edge_padding_low: start.clone(), edge_padding_high: high, interior_padding: interior}), &[ct, z]))]
        }
        OpKind::Slicing(SlicingOp::Pad { edge_padding_low: low, interior_padding: interior, .. }) => {
            let limit: Vec<i64> = (0..xt.rank()).map(|i| low[i] + (xt.shape[i] - 1) * (interior[i] + 1) + 1).collect();
            let strides: Vec<i64> = interior.iter().map(|i| i + 1).collect();
            let cx = b.op(OpKind::Slicing(SlicingOp::Slice { start_indices: low.clone(), limit_indices: limit, strides }), &[ct]);
            let total = sum_all(b, ct);
            let inner = sum_all(b, cx);
            let cp = b.sub(total, inner);
            vec![Some(cx), Some(cp)]
        }
        OpKind::Slicing(SlicingOp::Concatenate { dim }) => {
            let d = *dim as usize;
            let bt = b.ty(op.operands[1]);
            let mut outs = Vec::new();
            for (lo, ext) in [(0, xt.shape[d]), (xt.shape[d], bt.shape[d])] {
                let mut start = vec![0i64; xt.rank()];
                let mut limit = ctt.shape.clone();
                start[d] = lo;
                limit[d] = lo + ext;
                outs.push(Some(b.op(OpKind::Slicing(SlicingOp::Slice { start_indices: start, limit_indices: limit, strides: vec![1; xt.rank()] }), &[ct])));
            }
            outs
        }
        OpKind::Slicing(SlicingOp::DynamicSlice { .. }) => {
            // The cotangent placed in the (clamped) window of a zero operand: the transpose
            // of dynamic_slice is dynamic_update_slice (same clamping).
            let z = b.zeros(&xt);
            let mut xs = vec![z, ct];
            xs.extend(&op.operands[1..]);
            let mut v = vec![Some(b.op(OpKind::Slicing(SlicingOp::DynamicUpdateSlice {}), &xs))];
            v.extend(std::iter::repeat_n(None, op.operands.len() - 1));
            v
        }
        OpKind::Slicing(SlicingOp::Gather { axis }) => {
            let a = *axis as usize;
            let idx = op.operands[1];
            let it = b.ty(idx);
            // Constant indices that permute the axis (`flip`, a reversed slice): the gather of
            // the cotangent by the inverse permutation, no accumulation (the scatter-add took
            // 4.3x JAX's time for the gradient of `sum(flip(x, 1) * x)` on 4096 x 1024).
            if let Some(inv) = inverse_permutation(b.f, idx, xt.shape[a]) {
                let c = b.op(OpKind::Constant(ConstantOp::Constant { value: Literal::from_i64s(it.clone(), &inv) }), &[]);
                return Ok(vec![Some(b.op(op.kind.clone(), &[ct, c])), None]);
            }
            // A scatter-add of the cotangent at the clamped indices (the indices the gather
            // read): one pass over the cotangent, no one-hot.
            let ic = clamp_indices(b, idx, xt.shape[a] - 1);
            let z = b.zeros(&xt);
            let add = OpKind::Scatter(ScatterOp::along_axis(Combiner::Add, xt.rank(), it.rank(), a));
            vec![Some(b.op(add, &[z, ic, ct])), None]
        }
        OpKind::Slicing(SlicingOp::DynamicUpdateSlice {}) => {
            // The window's read first, then the zeroing update: the update then writes into
            // the cotangent's buffer in place (the lowering copies an operand read after its
            // update; in a backward loop that is a copy of the whole stack per iteration).
            let ut = b.ty(op.operands[1]);
            let cu = if ut.shape.contains(&0) {
                b.zeros(&ut)
            } else {
                let mut ys = vec![ct];
                ys.extend(&op.operands[2..]);
                b.op(OpKind::Slicing(SlicingOp::DynamicSlice { slice_sizes: ut.shape.clone() }), &ys)
            };
            let zu = b.zeros(&ut);
            let mut xs = vec![ct, zu];
            xs.extend(&op.operands[2..]);
            let cx = b.op(OpKind::Slicing(SlicingOp::DynamicUpdateSlice {}), &xs);
            let mut v = vec![Some(cx), Some(cu)];
            v.extend(std::iter::repeat_n(None, op.operands.len() - 2));
            v
        }
        other => return Err(RuleError::Internal(format!("slicing vjp got {}", other.name()))),
    })
}

/// Takes along `axis` (>= 1) of a batched `x` ([B, ...]) with per-example indices
/// `idx` ([B, I...], int): result [B, x[1..axis] ++ I ++ x[axis+1..]]. The batch is folded
/// into the taken axis (index + b * n) so one `gather` serves every example; indices are
/// clamped per example first, as `gather` clamps.
pub fn batched_take(b: &mut B, x: Value, axis: usize, idx: Value) -> Value {
    let xt = b.ty(x);
    let it = b.ty(idx);
    let (bsz, n, r) = (xt.shape[0], xt.shape[axis], xt.rank());
    let q = it.rank() - 1;
    // x -> [B, n, rest...] -> [B*n, rest...]
    let mut order: Vec<i64> = vec![0, axis as i64];
    order.extend((1..r as i64).filter(|&d| d != axis as i64));
    let xp = b.transpose(x, order.clone());
    let rest: Vec<i64> = order[2..].iter().map(|&d| xt.shape[d as usize]).collect();
    let mut flat = vec![bsz * n];
    flat.extend(&rest);
    let xf = b.reshape(xp, flat);
    let ic = clamp_indices(b, idx, n - 1);
    let bi = b.op(OpKind::Constant(ConstantOp::Iota { dim: 0, ty: it.clone() }), &[]);
    let nn = int_scalar(b, it.dtype, n);
    let nb = b.broadcast(nn, vec![], it.shape.clone());
    let off = b.mul(bi, nb);
    let gi = b.add(ic, off);
    // gather axis 0: [B, I..., rest...]
    let g = b.op(OpKind::Slicing(SlicingOp::Gather { axis: 0 }), &[xf, gi]);
    // Move rest dims back around I: target [B, x[1..axis], I, x[axis+1..]].
    let before = axis - 1;
    let mut perm: Vec<i64> = vec![0];
    perm.extend((0..before).map(|k| (1 + q + k) as i64));
    perm.extend((1..=q).map(|k| k as i64));
    perm.extend((before..rest.len()).map(|k| (1 + q + k) as i64));
    b.transpose(g, perm)
}

/// Batching rules of slicing ops (batch dims first).
pub fn batch(b: &mut B, op: &Op, xs: &[Value], batched: &[bool], size: i64) -> Result<Vec<(Value, bool)>, RuleError> {
    let y = match &op.kind {
        OpKind::Slicing(SlicingOp::Slice { start_indices: start, limit_indices: limit, strides }) => {
            b.op(OpKind::Slicing(SlicingOp::Slice { start_indices: super::shift(start, 0).iter().enumerate().map(|(i, v)| if i == 0 { 0 } else { v - 1 }).collect(), limit_indices: std::iter::once(size).chain(limit.iter().copied()).collect(), strides: std::iter::once(1).chain(strides.iter().copied()).collect() }), &[xs[0]])
        }
        OpKind::Slicing(SlicingOp::Pad { edge_padding_low: low, edge_padding_high: high, interior_padding: interior}) => {
            let z = |v: &[i64]| std::iter::once(0).chain(v.iter().copied()).collect::<Vec<_>>();
            let kind = OpKind::Slicing(SlicingOp::Pad { edge_padding_low: z(low), edge_padding_high: z(high), interior_padding: z(interior)});
            let x = if batched[0] { xs[0] } else { super::lift(b, xs[0], size) };
            if !batched[1] {
                b.op(kind, &[x, xs[1]])
            } else {
                // Per-example padding value: pad with zero, then select the value outside.
                let xt = b.ty(x);
                let zero = b.zeros(&TensorType::scalar(xt.dtype));
                let padded = b.op(kind.clone(), &[x, zero]);
                let pt = b.ty(padded);
                let ones = b.splat(&TensorType::new(DType::I1, xt.shape.clone()), 1.0);
                let f = b.splat(&TensorType::scalar(DType::I1), 0.0);
                let mask = b.op(kind, &[ones, f]);
                let pv = b.broadcast(xs[1], vec![0], pt.shape.clone());
                b.select(mask, padded, pv)
            }
        }
        OpKind::Slicing(SlicingOp::Concatenate { dim }) => {
            let ys = super::lift_all(b, xs, batched, size);
            b.op(OpKind::Slicing(SlicingOp::Concatenate { dim: dim + 1 }), &ys)
        }
        OpKind::Slicing(SlicingOp::DynamicSlice { slice_sizes: sizes}) => {
            let x = if batched[0] { xs[0] } else { super::lift(b, xs[0], size) };
            if !batched[1..].iter().any(|&v| v) {
                let st = b.ty(xs[1]).dtype;
                let z = int_scalar(b, st, 0);
                let mut ops = vec![x, z];
                ops.extend(&xs[1..]);
                b.op(OpKind::Slicing(SlicingOp::DynamicSlice { slice_sizes: std::iter::once(size).chain(sizes.iter().copied()).collect()}), &ops)
            } else {
                // Per-example starts: one batched take per dim with indices start_b + iota(size_k).
                let xt = b.ty(x);
                let mut cur = x;
                for (k, &sk) in sizes.iter().enumerate() {
                    let s = xs[1 + k];
                    let it = b.ty(s).dtype;
                    let n = xt.shape[k + 1];
                    let zero = int_scalar(b, it, 0);
                    let hi = int_scalar(b, it, n - sk);
                    let (zero, hi) = if batched[1 + k] { (b.broadcast(zero, vec![], vec![size]), b.broadcast(hi, vec![], vec![size])) } else { (zero, hi) };
                    let c0 = b.bin(BinaryOp::Max, s, zero);
                    let c = b.bin(BinaryOp::Min, c0, hi);
                    let cb = if batched[1 + k] { b.broadcast(c, vec![0], vec![size, sk]) } else { b.broadcast(c, vec![], vec![size, sk]) };
                    let io = b.op(OpKind::Constant(ConstantOp::Iota { dim: 1, ty: TensorType::new(it, [size, sk]) }), &[]);
                    let idx = b.add(cb, io);
                    cur = batched_take(b, cur, k + 1, idx);
                }
                cur
            }
        }
        OpKind::Slicing(SlicingOp::Gather { axis }) => {
            let a = *axis as usize;
            match (batched[0], batched[1]) {
                (true, false) => b.op(OpKind::Slicing(SlicingOp::Gather { axis: axis + 1 }), &[xs[0], xs[1]]),
                (false, true) => {
                    let g = b.op(OpKind::Slicing(SlicingOp::Gather { axis: *axis }), &[xs[0], xs[1]]);
                    super::move_axis(b, g, a, 0)
                }
                _ => batched_take(b, xs[0], a + 1, xs[1]),
            }
        }
        OpKind::Slicing(SlicingOp::DynamicUpdateSlice {}) => batch_dynamic_update_slice(b, xs, batched, size),
        other => return Err(RuleError::Internal(format!("slicing batch got {}", other.name()))),
    };
    Ok(vec![(y, true)])
}

/// Batching of `dynamic_update_slice` (operand, update, starts...). Unbatched starts: one
/// `dynamic_update_slice` of the batched operand and update at `(0, starts...)`. Per-example
/// starts: the update is moved to each example's clamped window one dim at a time (a batched
/// take of `r - start_b` over the operand's positions `r`), and the result selects it inside
/// the window and the operand outside.
fn batch_dynamic_update_slice(b: &mut B, xs: &[Value], batched: &[bool], size: i64) -> Value {
    let x = if batched[0] { xs[0] } else { super::lift(b, xs[0], size) };
    let u = if batched[1] { xs[1] } else { super::lift(b, xs[1], size) };
    let starts = &xs[2..];
    if !batched[2..].iter().any(|&v| v) {
        let st = b.ty(starts[0]).dtype;
        let z = int_scalar(b, st, 0);
        let mut ops = vec![x, u, z];
        ops.extend(starts);
        return b.op(OpKind::Slicing(SlicingOp::DynamicUpdateSlice {}), &ops);
    }
    let (xt, ut) = (b.ty(x), b.ty(u));
    let mut cur = u;
    let mut mask: Option<Value> = None;
    for (k, &s) in starts.iter().enumerate() {
        let (n, sk) = (xt.shape[k + 1], ut.shape[k + 1]);
        if n == sk {
            continue;
        }
        let it = b.ty(s).dtype;
        let zero = int_scalar(b, it, 0);
        let hi = int_scalar(b, it, n - sk);
        let (zero, hi) = if batched[2 + k] { (b.broadcast(zero, vec![], vec![size]), b.broadcast(hi, vec![], vec![size])) } else { (zero, hi) };
        let c0 = b.bin(BinaryOp::Max, s, zero);
        let c = b.bin(BinaryOp::Min, c0, hi);
        let cb = if batched[2 + k] { b.broadcast(c, vec![0], vec![size, n]) } else { b.broadcast(c, vec![], vec![size, n]) };
        let io = b.op(OpKind::Constant(ConstantOp::Iota { dim: 1, ty: TensorType::new(it, [size, n]) }), &[]);
        let idx = b.sub(io, cb);
        let z2 = int_scalar(b, it, 0);
        let zb = b.broadcast(z2, vec![], vec![size, n]);
        let skc = int_scalar(b, it, sk);
        let sb = b.broadcast(skc, vec![], vec![size, n]);
        let ge = b.cmp(CmpDir::Ge, idx, zb);
        let lt = b.cmp(CmpDir::Lt, idx, sb);
        let valid = b.bin(BinaryOp::And, ge, lt);
        let vb = b.broadcast(valid, vec![0, k as i64 + 1], xt.shape.clone());
        mask = Some(match mask {
            Some(m) => b.bin(BinaryOp::And, m, vb),
            None => vb,
        });
        cur = batched_take(b, cur, k + 1, idx);
    }
    match mask {
        Some(m) => b.select(m, cur, x),
        None => cur,
    }
}

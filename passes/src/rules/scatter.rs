//! Derivative and batching rules of scatter ops.
//!
//! JVP: `scatter` and `scatter_add` are linear in (operand, updates), so their JVP is the same
//! scatter of the tangents (the same updates win); `scatter_mul` scatters the operand tangent
//! with the primal updates plus `x * scatter_add(others * tu)` (`others`: the product of the
//! other updates on the same element); `scatter_min`/`scatter_max` split the tangent of each result element
//! evenly among the operand element and the updates equal to it (JAX's tie rule).
//! VJP: `scatter_add` -> the cotangent, and a gather of it for the updates; `scatter` -> the
//! cotangent with the overwritten elements zeroed, and for the updates a gather masked to the
//! winning (last) update of each element, found by scattering update ids; `scatter_mul` ->
//! `scatter_mul(ct, indices, updates)` for the operand and `ct * x * (product of the other
//! updates on the same element)` for the updates, duplicates and zeros included (JAX has
//! this only for unique indices); min/max -> the tie-split transpose. Dropped
//! (out-of-bounds) updates get zero. Rules that gather need the take-along-axis form of the
//! dimension numbers ([`quabla_dialect::ScatterDims::take_axis`], the form frontends and the
//! gather VJP emit); other dimension numbers are explicit `Unsupported` gaps.
//! Batching (take form): unbatched indices scatter along `axis + 1` of the batched operand;
//! batched indices fold the batch into the scattered axis (`index + b * n`, out-of-bounds
//! indices kept out of bounds) so one scatter serves every example.
use quabla_dialect::{BinaryOp, CmpDir, Combiner, ConstantOp, DType, Literal, Op, OpKind, ScatterOp, SlicingOp, TensorType, Value};

use super::{RuleError, Tangents, B};

fn int_splat(b: &mut B, d: DType, shape: &[i64], v: i64) -> Value {
    let n = quabla_dialect::size::saturating_product(shape.iter().copied()) as usize;
    b.op(OpKind::Constant(ConstantOp::Constant { value: Literal::from_i64s(TensorType::new(d, shape.to_vec()), &vec![v; n]) }), &[])
}

/// The take axis of `op`'s dimension numbers, or an `Unsupported` gap for `rule`.
fn take_axis(b: &B, op: &Op, s: &ScatterOp, rule: &'static str) -> Result<usize, RuleError> {
    let (x, i, u) = (b.ty(op.operands[0]), b.ty(op.operands[1]), b.ty(op.operands[2]));
    s.dims().take_axis(&x, &i, &u).ok_or(RuleError::Unsupported { op: s.name(), rule })
}

/// `0 <= idx < n` (i1, the shape of the indices).
fn in_bounds(b: &mut B, idx: Value, n: i64) -> Value {
    let it = b.ty(idx);
    let z = int_splat(b, it.dtype, &it.shape, 0);
    let hi = int_splat(b, it.dtype, &it.shape, n);
    let ge = b.cmp(CmpDir::Ge, idx, z);
    let lt = b.cmp(CmpDir::Lt, idx, hi);
    b.bin(BinaryOp::And, ge, lt)
}

/// A per-index mask (shape of the indices) broadcast over the updates of a take-form scatter.
fn over_updates(b: &mut B, mask: Value, axis: usize, upd: &TensorType) -> Value {
    let q = b.ty(mask).rank();
    b.broadcast(mask, (axis as i64..(axis + q) as i64).collect(), upd.shape.clone())
}

/// `gather {axis}` of `v` at `idx`, zero where `valid` (updates-shaped) is false.
fn masked_gather(b: &mut B, v: Value, idx: Value, axis: usize, valid: Value) -> Value {
    let g = b.op(OpKind::Slicing(SlicingOp::Gather { axis: axis as i64 }), &[v, idx]);
    let gt = b.ty(g);
    let z = b.zeros(&gt);
    b.select(valid, g, z)
}

/// Whether each update of a take-form min/max scatter reached its result element
/// (`successful`, updates-shaped), whether each operand element survived (`retained`), and
/// how many of the two each result element has (`refs`, at least 1, operand dtype).
fn extremal_parts(b: &mut B, op: &Op, axis: usize) -> (Value, Value, Value) {
    let (x, idx, u, y) = (op.operands[0], op.operands[1], op.operands[2], op.results[0]);
    let (xt, ut) = (b.ty(x), b.ty(u));
    let valid = in_bounds(b, idx, xt.shape[axis]);
    let valid = over_updates(b, valid, axis, &ut);
    let g = b.op(OpKind::Slicing(SlicingOp::Gather { axis: axis as i64 }), &[y, idx]);
    let eq = b.cmp(CmpDir::Eq, u, g);
    let successful = b.bin(BinaryOp::And, eq, valid);
    let retained = b.cmp(CmpDir::Eq, x, y);
    let su = b.convert(successful, xt.dtype);
    let zx = b.zeros(&xt);
    let counts = b.op(OpKind::Scatter(ScatterOp::along_axis(Combiner::Add, xt.rank(), b.ty(idx).rank(), axis)), &[zx, idx, su]);
    let rx = b.convert(retained, xt.dtype);
    let refs = b.add(counts, rx);
    let one = b.splat(&xt, 1.0);
    let refs = b.bin(BinaryOp::Max, refs, one);
    (successful, retained, refs)
}

pub fn jvp(b: &mut B, op: &Op, t: &[Option<Value>]) -> Result<Tangents, RuleError> {
    let OpKind::Scatter(s) = &op.kind else { return Err(RuleError::Internal(format!("scatter jvp got {}", op.kind.name()))) };
    let (tx, tu) = (t[0], t[2]);
    if tx.is_none() && tu.is_none() {
        return Ok(vec![None]);
    }
    let idx = op.operands[1];
    Ok(vec![Some(match s.combiner() {
        Combiner::Set | Combiner::Add => {
            let a = b.or_zero(tx, op.operands[0]);
            let c = b.or_zero(tu, op.operands[2]);
            b.op(op.kind.clone(), &[a, idx, c])
        }
        Combiner::Mul => {
            let x = op.operands[0];
            let from_x = tx.map(|tx| b.op(op.kind.clone(), &[tx, idx, op.operands[2]]));
            let from_u = match tu {
                Some(tu) => {
                    let a = take_axis(b, op, s, "jvp")?;
                    let others = mul_others(b, op, a);
                    let w = b.mul(others, tu);
                    let xt = b.ty(x);
                    let zx = b.zeros(&xt);
                    let add = OpKind::Scatter(ScatterOp::along_axis(Combiner::Add, xt.rank(), b.ty(idx).rank(), a));
                    let sum = b.op(add, &[zx, idx, w]);
                    Some(b.mul(x, sum))
                }
                None => None,
            };
            b.add_opt(from_x, from_u).expect("a tangent")
        }
        Combiner::Min | Combiner::Max => {
            let axis = take_axis(b, op, s, "jvp")?;
            let (successful, retained, refs) = extremal_parts(b, op, axis);
            let xt = b.ty(op.operands[0]);
            let zx = b.zeros(&xt);
            let from_x = match tx {
                Some(tx) => b.select(retained, tx, zx),
                None => zx,
            };
            let sum = match tu {
                Some(tu) => {
                    let zu = b.like(tu, 0.0);
                    let tu = b.select(successful, tu, zu);
                    let add = OpKind::Scatter(ScatterOp::along_axis(Combiner::Add, xt.rank(), b.ty(idx).rank(), axis));
                    b.op(add, &[from_x, idx, tu])
                }
                None => from_x,
            };
            b.div(sum, refs)
        }
    })])
}

pub fn vjp(b: &mut B, op: &Op, ct: Value) -> Result<Tangents, RuleError> {
    let OpKind::Scatter(s) = &op.kind else { return Err(RuleError::Internal(format!("scatter vjp got {}", op.kind.name()))) };
    let (x, idx, u) = (op.operands[0], op.operands[1], op.operands[2]);
    let (xt, it, ut) = (b.ty(x), b.ty(idx), b.ty(u));
    Ok(match s.combiner() {
        Combiner::Add => {
            let a = take_axis(b, op, s, "vjp")?;
            let valid = in_bounds(b, idx, xt.shape[a]);
            let valid = over_updates(b, valid, a, &ut);
            let cu = masked_gather(b, ct, idx, a, valid);
            vec![Some(ct), None, Some(cu)]
        }
        Combiner::Set => {
            let a = take_axis(b, op, s, "vjp")?;
            let n = xt.shape[a];
            // The winner of each element: scatter update ids (row-major over the indices) on
            // [n], gather them back, compare.
            let count = it.num_elements() as i64;
            let ids = b.op(OpKind::Constant(ConstantOp::Iota { dim: 0, ty: TensorType::new(DType::I64, [count]) }), &[]);
            let ids = b.reshape(ids, it.shape.clone());
            let none = int_splat(b, DType::I64, &[n], -1);
            let won = b.op(OpKind::Scatter(ScatterOp::along_axis(Combiner::Set, 1, it.rank(), 0)), &[none, idx, ids]);
            let back = b.op(OpKind::Slicing(SlicingOp::Gather { axis: 0 }), &[won, idx]);
            let winner = b.cmp(CmpDir::Eq, back, ids);
            let valid = in_bounds(b, idx, n);
            let winner = b.bin(BinaryOp::And, winner, valid);
            let winner = over_updates(b, winner, a, &ut);
            let cu = masked_gather(b, ct, idx, a, winner);
            let zu = b.zeros(&ut);
            let cx = b.op(op.kind.clone(), &[ct, idx, zu]);
            vec![Some(cx), None, Some(cu)]
        }
        Combiner::Mul => {
            let cx = b.op(op.kind.clone(), &[ct, idx, u]);
            if !super::differentiable(&ut) {
                vec![Some(cx), None, None]
            } else {
                let a = take_axis(b, op, s, "vjp")?;
                let others = mul_others(b, op, a);
                let cxx = b.mul(ct, x);
                let valid = in_bounds(b, idx, xt.shape[a]);
                let valid = over_updates(b, valid, a, &ut);
                let g = masked_gather(b, cxx, idx, a, valid);
                let cu = b.mul(g, others);
                vec![Some(cx), None, Some(cu)]
            }
        }
        Combiner::Min | Combiner::Max => {
            let a = take_axis(b, op, s, "vjp")?;
            let (successful, retained, refs) = extremal_parts(b, op, a);
            let share = b.div(ct, refs);
            let zx = b.zeros(&xt);
            let cx = b.select(retained, share, zx);
            let cu = masked_gather(b, share, idx, a, successful);
            vec![Some(cx), None, Some(cu)]
        }
    })
}

/// For each update of a take-form `scatter_mul`, the product of the other updates landing
/// on the same element (`d out / d u_j = x * others_j`), without dividing by zero: with
/// `zeros` the number of zero updates per element and `nz` the product of the nonzero ones,
/// `others_j = nz / u_j` when no update there is zero, `nz` for the one zero update when
/// there is exactly one, and 0 otherwise.
fn mul_others(b: &mut B, op: &Op, axis: usize) -> Value {
    let (x, idx, u) = (op.operands[0], op.operands[1], op.operands[2]);
    let (xt, ut) = (b.ty(x), b.ty(u));
    let q = b.ty(idx).rank();
    let zu = b.zeros(&ut);
    let ou = b.splat(&ut, 1.0);
    let is0 = b.cmp(CmpDir::Eq, u, zu);
    let z1 = b.convert(is0, xt.dtype);
    let safe = b.select(is0, ou, u);
    let zx = b.zeros(&xt);
    let ox = b.splat(&xt, 1.0);
    let add = OpKind::Scatter(ScatterOp::along_axis(Combiner::Add, xt.rank(), q, axis));
    let mul = OpKind::Scatter(ScatterOp::along_axis(Combiner::Mul, xt.rank(), q, axis));
    let zeros = b.op(add, &[zx, idx, z1]);
    let nz = b.op(mul, &[ox, idx, safe]);
    let zg = b.op(OpKind::Slicing(SlicingOp::Gather { axis: axis as i64 }), &[zeros, idx]);
    let ng = b.op(OpKind::Slicing(SlicingOp::Gather { axis: axis as i64 }), &[nz, idx]);
    let none = b.cmp(CmpDir::Eq, zg, zu);
    let one = b.cmp(CmpDir::Eq, zg, ou);
    let ratio = b.div(ng, safe);
    let if_zero = b.select(one, ng, zu);
    let if_nonzero = b.select(none, ratio, zu);
    b.select(is0, if_zero, if_nonzero)
}

/// Batching rules (batch dims first).
pub fn batch(b: &mut B, op: &Op, xs: &[Value], batched: &[bool], size: i64) -> Result<Vec<(Value, bool)>, RuleError> {
    let OpKind::Scatter(s) = &op.kind else { return Err(RuleError::Internal(format!("scatter batch got {}", op.kind.name()))) };
    let (x0, i0, u0) = (b.ty(op.operands[0]), b.ty(op.operands[1]), b.ty(op.operands[2]));
    let a = s.dims().take_axis(&x0, &i0, &u0).ok_or(RuleError::Unsupported { op: s.name(), rule: "batch" })?;
    let x = if batched[0] { xs[0] } else { super::lift(b, xs[0], size) };
    let u = if batched[2] { xs[2] } else { super::lift(b, xs[2], size) };
    let (r, q) = (x0.rank(), i0.rank());
    if !batched[1] {
        let k = OpKind::Scatter(ScatterOp::along_axis(s.combiner(), r + 1, q, a + 1));
        return Ok(vec![(b.op(k, &[x, xs[1], u]), true)]);
    }
    // Fold the batch into the scattered axis: x -> [B, n, rest] -> [B*n, rest].
    let idx = xs[1];
    let it = b.ty(idx);
    let n = x0.shape[a];
    let mut order: Vec<i64> = vec![0, (a + 1) as i64];
    order.extend((1..=r as i64).filter(|&d| d != (a + 1) as i64));
    let xp = b.transpose(x, order.clone());
    let rest: Vec<i64> = order[2..].iter().map(|&d| b.ty(x).shape[d as usize]).collect();
    let mut flat = vec![size * n];
    flat.extend(&rest);
    let xf = b.reshape(xp, flat);
    let valid = in_bounds(b, idx, n);
    let bi = b.op(OpKind::Constant(ConstantOp::Iota { dim: 0, ty: it.clone() }), &[]);
    let nn = int_splat(b, it.dtype, &it.shape, n);
    let off = b.mul(bi, nn);
    let moved = b.add(idx, off);
    let out = int_splat(b, it.dtype, &it.shape, -1);
    let fi = b.select(valid, moved, out);
    // u: [B, x[..a], I, x[a+1..]] -> [B, I, x[..a], x[a+1..]].
    let mut perm: Vec<i64> = vec![0];
    perm.extend((1 + a..1 + a + q).map(|k| k as i64));
    perm.extend((1..1 + a).map(|k| k as i64));
    perm.extend((1 + a + q..r + q).map(|k| k as i64));
    let up = b.transpose(u, perm);
    let k = OpKind::Scatter(ScatterOp::along_axis(s.combiner(), r, q + 1, 0));
    let y = b.op(k, &[xf, fi, up]);
    let mut unflat = vec![size, n];
    unflat.extend(&rest);
    let y = b.reshape(y, unflat);
    // Back from [B, n, rest] to x's order.
    let mut inv = vec![0i64; order.len()];
    for (p, &d) in order.iter().enumerate() {
        inv[d as usize] = p as i64;
    }
    Ok(vec![(b.transpose(y, inv), true)])
}

//! `quabla-fold`: constant folding and algebraic identities.
//!
//! Algorithm: one forward sweep per function. An op whose operands are all constants (and
//! whose result is at most `MAX_FOLD_ELEMENTS` elements) is evaluated with the reference
//! interpreter and becomes a `quabla.constant` (an iota of at most 64 elements counts as a
//! constant operand, itself left in place: keys split from a constant key fold). Otherwise identities replace the op by one
//! of its operands or by a cheaper op: x+0, 0+x, x-0, x*1, 1*x, x/1, neg(neg x), not(not x),
//! powi(x, 1), convert/reshape/transpose/broadcast/slice that change nothing,
//! reshape(reshape x), transpose(transpose x) (perms composed), the transpose of a
//! dot_general's only use that swaps its lhs and rhs free dims (the product with its operands
//! swapped: autodiff writes weight gradients as `(dz^T h)^T`), a dot_general of a transposed
//! operand (the transpose's only use) as a product of the untransposed one, broadcast of a splat
//! constant (a splat of the result shape), select with a splat predicate, reductions over
//! no dims, and over dims of one element (a reshape); slices sink towards their data
//! (`sunk_slice`: into a concatenation's operand, through a cheap or single-use elementwise op, onto a
//! broadcast's operand, into a pad's operand or onto a smaller pad, into a slice's operand);
//! an elementwise tree over pads of computed arrays is the concatenation of the tree over the
//! boxes between the pads' edges (`split_pads`, interior pads first in the view that splits
//! their dim, `unfolded_interior`); a sum over a short last dim of an elementwise value is the
//! sum of its columns (`summed_columns`); a reshape of an elementwise op over splats and
//! reshapes is the op in the reshape's shape (`sunk_reshape`); a broadcast of a broadcast is
//! one broadcast, and so is a chain of reshapes and broadcasts, between two reshapes
//! (`chains::broadcast_chain`); an elementwise op of broadcasts of one shape (and splats) is
//! the op on their sources, broadcast (`chains::elementwise_of_broadcasts`); and a chain of reshapes and reductions of one kind one
//! reduction between two reshapes (`chains::reduction_chain`); sums move towards theirs (`pulled_sum`: through
//! a single-use negation, onto the operand of a zero padding along the summed dims, onto a
//! broadcast's operand over dims it has whole); a sum of a splat is the splat of `n` times it
//! where every order of the sum gives that (`summed_splat`). Float `x + 0.0 -> x`
//! (and a sum over one element) treats -0.0 + 0.0 as -0.0 (the sign of a zero may differ
//! from IEEE), as XLA's simplifier does; `chains::reduction_chain` (two sums one) and
//! `accumulate::stacked_products` (a loop's sum of products one product) reassociate sums,
//! as a reduction's lowering does; every other rule is exact.
use std::collections::HashMap;

use quabla_dialect::{BinaryOp, CallOp, ConstantOp, ControlOp, DType, DotDims, DotOp, ElementwiseOp, Func, LayoutOp, Literal, Module, Op, OpKind, ReduceOp, SlicingOp, TensorType, UnaryOp, Value};
use quabla_interp as interp;
use quabla_interp::Buffer;

use crate::rewrite::{constants, Subst};

/// Largest result (in elements) that constant folding materialises.
pub const MAX_FOLD_ELEMENTS: usize = 1 << 16;
/// Largest splat constant that folding a broadcast of a splat materialises. Larger ones stay
/// broadcasts of the scalar (a `linalg.fill` after lowering); the identities below see through
/// them (`splat_of`), so `x * broadcast(1)` still folds without a dense constant in the IR.
pub const MAX_SPLAT_ELEMENTS: usize = MAX_FOLD_ELEMENTS;

enum Fold {
    /// Keep this (possibly rewritten) op.
    Keep(Op),
    /// The op's single result equals this existing value.
    Alias(Value),
}

/// Runs folding on every function; returns true when something changed.
pub fn fold(m: &mut Module) -> bool {
    let mut changed = false;
    for f in &mut m.funcs {
        changed |= fold_func(f);
    }
    changed
}

fn fold_func(f: &mut Func) -> bool {
    let mut changed = false;
    let mut subst = Subst::new(f);
    let ops = std::mem::take(&mut f.ops);
    let outputs = f.outputs.clone();
    f.ops = fold_block(f, &mut subst, ops, &outputs, &mut changed);
    subst.apply_outputs(f);
    changed
}

/// Folds one block in a forward sweep. Region bodies are folded as blocks of their own (they
/// are isolated from above, so they start with no known constants); a `quabla.if` whose
/// predicate is a constant (a `quabla.case` whose index is) is replaced by the ops of the
/// branch it takes.
fn fold_block(f: &mut Func, subst: &mut Subst, ops: Vec<Op>, outputs: &[Value], changed: &mut bool) -> Vec<Op> {
    let mut consts: HashMap<Value, Literal> = constants(&ops);
    // Uses of each value in this block (regions are isolated: their captures are operands of
    // the region op), for rewrites that must not duplicate an op with other users.
    let mut uses: HashMap<Value, usize> = HashMap::new();
    for v in ops.iter().flat_map(|o| o.operands.iter()).chain(outputs) {
        *uses.entry(*v).or_default() += 1;
    }
    // Values whose one use is an elementwise op of their shape (split_pads splits the tree
    // they feed at its root).
    let mut chained: std::collections::HashSet<Value> = std::collections::HashSet::new();
    for o in &ops {
        if matches!(o.kind, OpKind::Elementwise(_)) && o.results.len() == 1 {
            chained.extend(o.operands.iter().filter(|v| uses.get(v) == Some(&1) && f.ty(**v).shape == f.ty(o.results[0]).shape));
        }
    }
    // Elements read per element of each value (recomputed): a slice reads its part.
    let mut reads: HashMap<Value, f64> = HashMap::new();
    for o in &ops {
        add_reads(f, &mut reads, o, 1.0);
    }
    for v in outputs {
        *reads.entry(*v).or_default() += 1.0;
    }
    let mut defs: HashMap<Value, Op> = HashMap::new();
    let mut out = Vec::with_capacity(ops.len());
    let mut queue: std::collections::VecDeque<Op> = ops.into();
    while let Some(mut op) = queue.pop_front() {
        subst.apply(&mut op);
        let const_pred = if matches!(op.kind, OpKind::Control(ControlOp::If { .. }) | OpKind::Control(ControlOp::Case { .. })) { consts.get(&op.operands[0]) } else { None };
        if let Some(p) = const_pred {
            let taken = match op.kind {
                // A `case` with a constant index: that branch, or the last when out of range.
                OpKind::Control(ControlOp::Case { .. }) => {
                    let mut le = [0u8; 8];
                    let w = p.bytes.len().min(8);
                    le[..w].copy_from_slice(&p.bytes[..w]);
                    let i = if w == 4 { i32::from_le_bytes([le[0], le[1], le[2], le[3]]) as i64 } else { i64::from_le_bytes(le) };
                    let n = op.regions.len();
                    if i >= 0 && (i as u64) < n as u64 { i as usize } else { n - 1 }
                }
                _ if p.bytes.first().is_some_and(|&b| b != 0) => 0,
                _ => 1,
            };
            let body = op.regions.swap_remove(taken);
            for (bp, x) in body.params.iter().zip(&op.operands[1..]) {
                subst.set(*bp, *x);
            }
            for (r, y) in op.results.iter().zip(&body.outputs) {
                subst.set(*r, *y);
            }
            for b in body.ops.into_iter().rev() {
                queue.push_front(b);
            }
            *changed = true;
            continue;
        }
        for r in &mut op.regions {
            let body_ops = std::mem::take(&mut r.ops);
            let body_outputs = r.outputs.clone();
            r.ops = fold_block(f, subst, body_ops, &body_outputs, changed);
            r.outputs = r.outputs.iter().map(|v| subst.get(*v)).collect();
        }
        if let Some(ops) = sunk_slice(f, &op, &defs, &uses, &reads).or_else(|| split_pads(f, &op, &consts, &defs, &uses, &reads, &chained)).or_else(|| sunk_reshape(f, &op, &consts, &defs, &uses)).or_else(|| summed_columns(f, &op, &defs, &uses)).or_else(|| pulled_sum(f, &op, &consts, &defs, &uses)).or_else(|| summed_splat(f, &op, &consts, &defs)).or_else(|| free_dot(f, &op)).or_else(|| outer_dot(f, &op)).or_else(|| super::chains::elementwise_of_broadcasts(f, &op, &consts, &defs)).or_else(|| super::chains::broadcast_chain(f, &op, &defs)).or_else(|| super::chains::reduction_chain(f, &op, &defs)).or_else(|| super::accumulate::stacked_products(f, &op, &defs)) {
            // The new ops fold in turn (a slice of a slice of a concatenation, ...). Their
            // operands' uses replace the op's.
            count(f, &mut uses, &mut reads, &op, -1);
            for n in &ops {
                count(f, &mut uses, &mut reads, n, 1);
            }
            for n in ops.into_iter().rev() {
                queue.push_front(n);
            }
            *changed = true;
            continue;
        }
        let before = op.clone();
        match fold_op(f, op, &consts, &defs, &uses) {
            Fold::Keep(op) => {
                *changed |= op != before;
                if op.operands != before.operands {
                    count(f, &mut uses, &mut reads, &before, -1);
                    count(f, &mut uses, &mut reads, &op, 1);
                }
                if let OpKind::Constant(ConstantOp::Constant { value }) = &op.kind {
                    consts.insert(op.results[0], value.clone());
                } else if let Some(value) = small_nullary(f, &op) {
                    // Known to its consumers, which fold; the op itself stays (DCE drops it
                    // when nothing reads it any more).
                    consts.insert(op.results[0], value);
                }
                for r in &op.results {
                    defs.insert(*r, op.clone());
                }
                out.push(op);
            }
            Fold::Alias(v) => {
                // v takes the result's uses (its users are substituted as they come).
                let n = uses.get(&before.results[0]).copied().unwrap_or(0);
                *uses.entry(v).or_default() += n;
                let r = reads.get(&before.results[0]).copied().unwrap_or(0.0);
                *reads.entry(v).or_default() += r;
                count(f, &mut uses, &mut reads, &before, -1);
                subst.set(before.results[0], v);
                *changed = true;
            }
        }
    }
    out
}

/// A reshape of a tree of elementwise ops whose leaves are splats or reshapes from the
/// reshape's shape, as the tree in that shape (on the splats reshaped, the reshapes'
/// operands): the reshapes between a computation and its consumer go. The tree's inner values
/// feed only the op above them (an op may read one twice: `add(m, m)`). With
/// [`summed_columns`], the gradient of `sum(repeat(x, 2, 1) ** 2)`
/// (`reshape(2 * reshape(broadcast(x)))` summed over the repeats) is one loop over `x`, and
/// so is a 2-D upsampling's (`reshape(add(m, m))` with `m = 2 * reshape(..)`, summed over a
/// middle dim).
fn sunk_reshape(f: &mut Func, op: &Op, consts: &HashMap<Value, Literal>, defs: &HashMap<Value, Op>, uses: &HashMap<Value, usize>) -> Option<Vec<Op>> {
    let OpKind::Layout(LayoutOp::Reshape { shape }) = &op.kind else { return None };
    let root = defs.get(&op.operands[0]).filter(|d| uses.get(&d.results[0]) == Some(&1))?;
    let inner = |d: &Op| matches!(d.kind, OpKind::Elementwise(_)) && d.results.len() == 1 && d.regions.is_empty();
    if !inner(root) {
        return None;
    }
    // The tree, operands first, and its leaves with the source of those that are reshapes
    // from `shape` (the others are splats).
    let mut leaves: Vec<(Value, Option<Value>)> = Vec::new();
    let tree = post_order(root, |d, v| {
        let twice = d.operands.iter().filter(|&&w| w == v).count();
        match defs.get(&v) {
            Some(o) if inner(o) && uses.get(&v) == Some(&twice) => Some(Some(o)),
            Some(o) if matches!(o.kind, OpKind::Layout(LayoutOp::Reshape { .. })) && f.ty(o.operands[0]).shape == *shape => {
                leaves.push((v, Some(o.operands[0])));
                Some(None)
            }
            _ if splat_of(consts, defs, v).is_some() => {
                leaves.push((v, None));
                Some(None)
            }
            _ => None,
        }
    })?;
    if leaves.iter().all(|(_, src)| src.is_none()) {
        return None;
    }
    let mut ops = Vec::new();
    let mut vals: HashMap<Value, Value> = HashMap::new();
    for (v, src) in leaves {
        if vals.contains_key(&v) {
            continue;
        }
        let x = match (src, defs.get(&v).and_then(|o| Some((&o.kind, *o.operands.first()?)))) {
            (Some(y), _) => y,
            // A splat: the broadcast of its scalar in `shape`, or its reshape.
            (None, Some((OpKind::Layout(LayoutOp::BroadcastInDim { .. }), y))) if f.ty(y).rank() == 0 => {
                let r = f.new_value(TensorType::new(f.ty(v).dtype, shape.clone()));
                ops.push(Op::new(OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![], shape: shape.clone() }), vec![y], vec![r], op.loc.clone()));
                r
            }
            _ => {
                let r = f.new_value(TensorType::new(f.ty(v).dtype, shape.clone()));
                ops.push(Op::new(op.kind.clone(), vec![v], vec![r], op.loc.clone()));
                r
            }
        };
        vals.insert(v, x);
    }
    let (root, below) = tree.split_last()?;
    clone_tree(f, below, &mut vals, shape, &mut ops);
    let xs: Vec<Value> = root.operands.iter().map(|v| vals.get(v).copied()).collect::<Option<_>>()?;
    ops.push(Op::new(root.kind.clone(), xs, op.results.clone(), root.loc.clone()));
    Some(ops)
}

/// The sum over dims of 2 to 8 elements together of a single-use elementwise value (of at least
/// [`SPLIT_MIN_ELEMENTS`] elements) as the sum of its columns, in the reduction's order (the
/// first column is the sum of 0 and it: exact but for the sign of a zero, as with `x + 0`).
/// The columns' slices sink into the value ([`sunk_slice`]), so the sum is one loop over its
/// data: the lowering reads a short row through one operand per element (`reduce.rs`
/// `short_rows`), which a producer cannot fuse into, so the value was written and read back
/// (the gradient of `sum(repeat(x, 2, 1) ** 2)` over 2048 x 512: 441 us, JAX 270). Up to 8
/// (the lowering's whole rows, `reduce.rs` `WHOLE_ROW_MAX`): k-means' squared distances of
/// 10^5 points of 8 dims to 16 centres wrote and read back a [10^5, 16, 8] value, 15 ms -> 1.9
/// (JAX 4.3); a row sum of `x * x` over 65536 x 8 146 -> 62 us (JAX 190). Several summed dims
/// (a 2-D upsampling's gradient sums over both repeats, [`super::chains::reduction_chain`])
/// give a column per element of theirs, in row-major order. A broadcast's columns are its
/// operand's (the slices sink onto it): elementwise ops move above broadcasts
/// ([`super::chains::elementwise_of_broadcasts`]), so a repeat's gradient sums a broadcast.
fn summed_columns(f: &mut Func, op: &Op, defs: &HashMap<Value, Op>, uses: &HashMap<Value, usize>) -> Option<Vec<Op>> {
    let OpKind::Reduce(ReduceOp::Reduce { op: quabla_dialect::Reducer::Sum, dims }) = &op.kind else { return None };
    let (x, out) = (op.operands[0], f.ty(op.results[0]).clone());
    let xt = f.ty(x).clone();
    let r = xt.rank();
    let d = defs.get(&x)?;
    let summed: Vec<usize> = dims.iter().map(|&s| usize::try_from(s).ok().filter(|&s| s < r)).collect::<Option<_>>()?;
    let n = quabla_dialect::size::saturating_product(summed.iter().map(|&s| xt.shape[s]));
    if r < 2 || summed.is_empty() || summed.len() >= r || !(2..=8).contains(&n) || xt.num_elements() < SPLIT_MIN_ELEMENTS || !matches!(d.kind, OpKind::Elementwise(_) | OpKind::Layout(LayoutOp::BroadcastInDim { .. })) || uses.get(&x) != Some(&1) {
        return None;
    }
    let mut ops = Vec::new();
    let mut acc: Option<Value> = None;
    for k in 0..n {
        // The k-th element of the summed dims in row-major order (the reduction's).
        let (mut start, mut limit) = (vec![0; r], xt.shape.clone());
        let mut rest = k;
        for &s in summed.iter().rev() {
            (start[s], limit[s]) = (rest % xt.shape[s], rest % xt.shape[s] + 1);
            rest /= xt.shape[s];
        }
        let c = sliced(f, x, &start, &limit, &mut ops, &op.loc);
        let col = f.new_value(out.clone());
        ops.push(Op::new(OpKind::Layout(LayoutOp::Reshape { shape: out.shape.clone() }), vec![c], vec![col], op.loc.clone()));
        acc = Some(match acc {
            None => col,
            Some(a) => {
                let s = if k + 1 == n { op.results[0] } else { f.new_value(out.clone()) };
                ops.push(Op::new(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add }), vec![a, col], vec![s], op.loc.clone()));
                s
            }
        });
    }
    Some(ops)
}

/// A `dot_general` whose operands have no free dims (batch and contracting dims only, in the
/// same places on both sides, batch dims in order: `einsum("ij,ij->i")`, `vmap(jnp.dot)`) is the
/// sum over the contracting dims of the operands' product: a reduction with its producer fused,
/// where the product's lowering ran one dot per batch element (4096 rows of 256 f32: 478 us
/// against 151 for the sum, JAX 264). Not for `i1` (a dot of bools is an `or` of `and`s), nor
/// without batch dims (a dot of vectors keeps the product's lowering: split along K).
fn free_dot(f: &mut Func, op: &Op) -> Option<Vec<Op>> {
    let OpKind::Dot(DotOp::DotGeneral { dims }) = &op.kind else { return None };
    let (a, b) = (op.operands[0], op.operands[1]);
    let (at, bt, out) = (f.ty(a).clone(), f.ty(b).clone(), f.ty(op.results[0]).clone());
    let r = at.rank();
    let same = dims.lhs_batching_dimensions == dims.rhs_batching_dimensions && dims.lhs_contracting_dimensions == dims.rhs_contracting_dimensions;
    let sorted = dims.lhs_batching_dimensions.windows(2).all(|w| w[0] < w[1]);
    if !same || !sorted || at != bt || at.dtype == DType::I1 || dims.lhs_batching_dimensions.len() + dims.lhs_contracting_dimensions.len() != r || dims.lhs_contracting_dimensions.is_empty() || dims.lhs_batching_dimensions.is_empty() || out.dtype != at.dtype {
        return None;
    }
    let prod = f.new_value(at.clone());
    let mul = Op::new(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), vec![a, b], vec![prod], op.loc.clone());
    let mut summed = dims.lhs_contracting_dimensions.clone();
    summed.sort_unstable();
    let sum = Op::new(OpKind::Reduce(ReduceOp::Reduce { op: quabla_dialect::Reducer::Sum, dims: summed }), vec![prod], op.results.clone(), op.loc.clone());
    Some(vec![mul, sum])
}

/// A `dot_general` that contracts nothing is the product of its operands broadcast to the
/// result (`[batch, lhs free, rhs free]`): the gradient of `einsum("bij,bij->b")` is the ones
/// of the cotangent times the other operand, which then folds to the operand (64 x 128^2 f32:
/// a product 305 us, JAX 256). Not for `i1`.
fn outer_dot(f: &mut Func, op: &Op) -> Option<Vec<Op>> {
    let OpKind::Dot(DotOp::DotGeneral { dims }) = &op.kind else { return None };
    let out = f.ty(op.results[0]).clone();
    if !dims.lhs_contracting_dimensions.is_empty() || out.dtype == DType::I1 {
        return None;
    }
    let nb = dims.lhs_batching_dimensions.len();
    let (at, bt) = (f.ty(op.operands[0]).clone(), f.ty(op.operands[1]).clone());
    if at.dtype != out.dtype || bt.dtype != out.dtype {
        return None;
    }
    // Each operand's dims in the result: a batch dim at its position in the batch list, a free
    // one after the batch dims (the rhs's after the lhs's).
    let place = |rank: usize, batch: &[i64], first_free: usize| -> Vec<i64> {
        let mut free = first_free as i64;
        (0..rank as i64)
            .map(|d| match batch.iter().position(|&b| b == d) {
                Some(i) => i as i64,
                None => {
                    free += 1;
                    free - 1
                }
            })
            .collect()
    };
    let la = place(at.rank(), &dims.lhs_batching_dimensions, nb);
    let lb = place(bt.rank(), &dims.rhs_batching_dimensions, at.rank());
    let mut ops = Vec::new();
    // Broadcast dims are increasing: an operand whose dims land out of order is transposed first.
    let mut spread = |x: Value, d: Vec<i64>| {
        let mut perm: Vec<usize> = (0..d.len()).collect();
        perm.sort_by_key(|&i| d[i]);
        let x = if perm.iter().enumerate().all(|(i, &p)| i == p) {
            x
        } else {
            let xt = f.ty(x).clone();
            let t = f.new_value(TensorType::new(xt.dtype, perm.iter().map(|&p| xt.shape[p]).collect::<Vec<_>>()));
            ops.push(Op::new(OpKind::Layout(LayoutOp::Transpose { perm: perm.iter().map(|&p| p as i64).collect() }), vec![x], vec![t], op.loc.clone()));
            t
        };
        let v = f.new_value(out.clone());
        ops.push(Op::new(OpKind::Layout(LayoutOp::BroadcastInDim { dims: perm.iter().map(|&p| d[p]).collect(), shape: out.shape.clone() }), vec![x], vec![v], op.loc.clone()));
        v
    };
    let (a, b) = (spread(op.operands[0], la), spread(op.operands[1], lb));
    ops.push(Op::new(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), vec![a, b], op.results.clone(), op.loc.clone()));
    Some(ops)
}

/// Counts `op`'s operands in (`sign` 1) or out (-1) of `uses` and `reads` ([`add_reads`]) as ops
/// are replaced: the rules that must not duplicate work ([`recomputed`], `uses == 1`) see the
/// program as it is now (a `1 * g` folded to `g` gives `g` the product's uses).
fn count(f: &Func, uses: &mut HashMap<Value, usize>, reads: &mut HashMap<Value, f64>, op: &Op, sign: i8) {
    for v in &op.operands {
        let n = uses.entry(*v).or_default();
        *n = if sign > 0 { *n + 1 } else { n.saturating_sub(1) };
    }
    add_reads(f, reads, op, f64::from(sign));
}

/// Adds `sign` times what `op` reads of each operand, per element of the operand, to `reads`:
/// a slice its share of the elements, any other op all of them.
fn add_reads(f: &Func, reads: &mut HashMap<Value, f64>, op: &Op, sign: f64) {
    let share = match (&op.kind, op.operands.first(), op.results.first()) {
        (OpKind::Slicing(SlicingOp::Slice { .. }), Some(x), Some(r)) => {
            let n = f.ty(*x).num_elements();
            if n == 0 { 1.0 } else { f.ty(*r).num_elements() as f64 / n as f64 }
        }
        _ => 1.0,
    };
    for v in &op.operands {
        *reads.entry(*v).or_default() += sign * share;
    }
}

/// A slice moved towards its data, as the ops that replace it (the last computes its
/// result): a slice of a concatenation within one operand is a slice of that operand (across
/// the join of two, the concatenation of their slices); a slice of an elementwise op read by
/// nothing else, or cheap to recompute for each use ([`recomputed`]), is the op on slices of its operands; a
/// slice of a broadcast is the broadcast of the operand's slice (of a scalar: to the slice). The gradient of
/// `sum(concatenate([x, y], 1) ** 2)` in x is `2 * x` instead of a product over the whole
/// concatenation sliced back (100000 x 3 and x 1 f32: 848 -> ~60 us, JAX 60-70).
fn sunk_slice(f: &mut Func, op: &Op, defs: &HashMap<Value, Op>, uses: &HashMap<Value, usize>, reads: &HashMap<Value, f64>) -> Option<Vec<Op>> {
    let OpKind::Slicing(SlicingOp::Slice { start_indices, limit_indices, strides }) = &op.kind else { return None };
    let d = defs.get(&op.operands[0])?;
    let out = f.ty(op.results[0]).clone();
    // The slice of `x` from `start` to `limit` (this slice's strides) into `r`.
    let slice_of = |x: Value, start: Vec<i64>, limit: Vec<i64>, r: Value| Op::new(OpKind::Slicing(SlicingOp::Slice { start_indices: start, limit_indices: limit, strides: strides.clone() }), vec![x], vec![r], op.loc.clone());
    match &d.kind {
        OpKind::Slicing(SlicingOp::Concatenate { dim }) => {
            let c = usize::try_from(*dim).ok()?;
            if strides.get(c) != Some(&1) {
                return None;
            }
            let mut off = 0i64;
            for &x in &d.operands {
                let w = *f.ty(x).shape.get(c)?;
                if start_indices[c] >= off && limit_indices[c] <= off + w {
                    let (mut start, mut limit) = (start_indices.clone(), limit_indices.clone());
                    start[c] -= off;
                    limit[c] -= off;
                    return Some(vec![slice_of(x, start, limit, op.results[0])]);
                }
                off += w;
            }
            // Across the join of two parts: the concatenation of the slices of each.
            let [a, b] = d.operands[..] else { return None };
            let wa = f.ty(a).shape[c];
            if d.operands.len() != 2 || start_indices[c] >= wa || limit_indices[c] <= wa {
                return None;
            }
            let (mut la, mut sb, mut lb) = (limit_indices.clone(), start_indices.clone(), limit_indices.clone());
            la[c] = wa;
            sb[c] = 0;
            lb[c] -= wa;
            let (mut sa_shape, mut sb_shape) = (out.shape.clone(), out.shape.clone());
            sa_shape[c] = wa - start_indices[c];
            sb_shape[c] = lb[c];
            let (ra, rb) = (f.new_value(TensorType::new(out.dtype, sa_shape)), f.new_value(TensorType::new(out.dtype, sb_shape)));
            let join = Op::new(OpKind::Slicing(SlicingOp::Concatenate { dim: *dim }), vec![ra, rb], op.results.clone(), op.loc.clone());
            Some(vec![slice_of(a, start_indices.clone(), la, ra), slice_of(b, sb, lb, rb), join])
        }
        OpKind::Elementwise(_) if d.results.len() == 1 && d.regions.is_empty() && recomputed(f, defs, uses, reads, d.results[0]) => {
            let mut ops = Vec::with_capacity(d.operands.len() + 1);
            let mut xs = Vec::with_capacity(d.operands.len());
            for &x in &d.operands {
                let r = f.new_value(quabla_dialect::TensorType::new(f.ty(x).dtype, out.shape.clone()));
                ops.push(slice_of(x, start_indices.clone(), limit_indices.clone(), r));
                xs.push(r);
            }
            ops.push(Op::new(d.kind.clone(), xs, op.results.clone(), d.loc.clone()));
            Some(ops)
        }
        // A gather by a 1-D index read by nothing else: the gather of the operand's slice
        // (along the other dims) by the index's slice (`flip(x, 2)[:, 4:60, 4:60]`: the flip
        // of the whole image batch was computed and then copied out strided, 308 us, JAX 127).
        OpKind::Slicing(SlicingOp::Gather { axis }) if uses.get(&d.results[0]) == Some(&1) && f.ty(d.operands[1]).rank() == 1 => {
            let a = usize::try_from(*axis).ok()?;
            let (x, idx) = (d.operands[0], d.operands[1]);
            let (xt, it) = (f.ty(x).clone(), f.ty(idx).clone());
            let mut ops = Vec::with_capacity(3);
            let (mut xs, mut xl) = (start_indices.clone(), limit_indices.clone());
            (xs[a], xl[a]) = (0, xt.shape[a]);
            let mut xshape = out.shape.clone();
            xshape[a] = xt.shape[a];
            let mut xstep = strides.clone();
            xstep[a] = 1;
            let xv = if xshape == xt.shape { x } else {
                let v = f.new_value(TensorType::new(xt.dtype, xshape));
                ops.push(Op::new(OpKind::Slicing(SlicingOp::Slice { start_indices: xs, limit_indices: xl, strides: xstep }), vec![x], vec![v], op.loc.clone()));
                v
            };
            let iv = if out.shape[a] == it.shape[0] && strides[a] == 1 { idx } else {
                let v = f.new_value(TensorType::new(it.dtype, [out.shape[a]]));
                ops.push(Op::new(OpKind::Slicing(SlicingOp::Slice { start_indices: vec![start_indices[a]], limit_indices: vec![limit_indices[a]], strides: vec![strides[a]] }), vec![idx], vec![v], op.loc.clone()));
                v
            };
            ops.push(Op::new(d.kind.clone(), vec![xv, iv], op.results.clone(), d.loc.clone()));
            Some(ops)
        }
        // The broadcast of the operand's slice along the dims it maps to (all of a dim it
        // expands).
        OpKind::Layout(LayoutOp::BroadcastInDim { dims, .. }) => {
            let (x, dt) = (d.operands[0], f.ty(d.results[0]).clone());
            let xt = f.ty(x).clone();
            if dims.len() != xt.rank() || dims.iter().any(|&m| usize::try_from(m).map_or(true, |m| m >= out.rank())) {
                return None;
            }
            let bcast = |y: Value| Op::new(OpKind::Layout(LayoutOp::BroadcastInDim { dims: dims.clone(), shape: out.shape.clone() }), vec![y], op.results.clone(), op.loc.clone());
            if xt.rank() == 0 {
                return Some(vec![bcast(x)]);
            }
            let (mut start, mut limit, mut step, mut shape) = (vec![0; xt.rank()], xt.shape.clone(), vec![1; xt.rank()], xt.shape.clone());
            for (i, &m) in dims.iter().enumerate() {
                let m = m as usize;
                if xt.shape[i] == dt.shape[m] {
                    (start[i], limit[i], step[i], shape[i]) = (start_indices[m], limit_indices[m], strides[m], out.shape[m]);
                }
            }
            let y = f.new_value(TensorType::new(xt.dtype, shape));
            let cut = Op::new(OpKind::Slicing(SlicingOp::Slice { start_indices: start, limit_indices: limit, strides: step }), vec![x], vec![y], op.loc.clone());
            Some(vec![cut, bcast(y)])
        }
        // A slice of a slice: one slice of the first's operand, strides multiplied.
        OpKind::Slicing(SlicingOp::Slice { start_indices: s0, strides: st0, .. }) if [s0.len(), st0.len(), strides.len(), start_indices.len()].iter().all(|&r| r == out.rank()) => {
            let mut start = Vec::with_capacity(out.rank());
            let (mut limit, mut step) = (start.clone(), start.clone());
            for k in 0..out.rank() {
                let (a, st) = (s0[k].checked_add(start_indices[k].checked_mul(st0[k])?)?, st0[k].checked_mul(strides[k])?);
                start.push(a);
                step.push(st);
                limit.push(if out.shape[k] == 0 { a } else { a.checked_add((out.shape[k] - 1).checked_mul(st)?)? + 1 });
            }
            Some(vec![Op::new(OpKind::Slicing(SlicingOp::Slice { start_indices: start, limit_indices: limit, strides: step }), vec![d.operands[0]], op.results.clone(), op.loc.clone())])
        }
        // Of a pad without interior padding: within the operand, a slice of the operand (the
        // gradient of `sum(pad(x, 1) ** 2)` is `2 * pad(x, 1)` sliced back: 3.8x JAX's time
        // as a fill, a copy and a slice of 4096 x 1024); reaching into the padding (unit
        // strides, edges of 0 or more), the pad of the operand's slice, or the padding
        // value's broadcast where no operand element is in the slice (split_pads' thin bands).
        OpKind::Slicing(SlicingOp::Pad { edge_padding_low: lo, edge_padding_high: hi, interior_padding: mid }) => {
            let (x, pv) = (d.operands[0], d.operands[1]);
            let xt = f.ty(x).clone();
            let ranks = [mid.len(), hi.len(), start_indices.len(), limit_indices.len(), strides.len(), xt.rank()].iter().all(|&r| r == lo.len());
            if !ranks || mid.iter().any(|&m| m != 0) {
                return None;
            }
            if (0..lo.len()).all(|k| start_indices[k] >= lo[k] && limit_indices[k] <= lo[k] + xt.shape[k]) {
                let start = start_indices.iter().zip(lo).map(|(s, l)| s - l).collect();
                let limit = limit_indices.iter().zip(lo).map(|(s, l)| s - l).collect();
                return Some(vec![slice_of(x, start, limit, op.results[0])]);
            }
            if strides.iter().any(|&st| st != 1) || lo.iter().chain(hi).any(|&e| e < 0) {
                return None;
            }
            // The operand's part of the slice along each dim, and the padding around it.
            let (mut s, mut l, mut nlo, mut nhi) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            for k in 0..lo.len() {
                let a = (start_indices[k] - lo[k]).clamp(0, xt.shape[k]);
                let b = (limit_indices[k] - lo[k]).clamp(a, xt.shape[k]);
                if a == b {
                    return Some(vec![Op::new(OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![], shape: out.shape.clone() }), vec![pv], op.results.clone(), op.loc.clone())]);
                }
                let before = (lo[k] - start_indices[k]).max(0);
                s.push(a);
                l.push(b);
                nlo.push(before);
                nhi.push(out.shape[k] - before - (b - a));
            }
            let shape: Vec<i64> = s.iter().zip(&l).map(|(a, b)| b - a).collect();
            let y = f.new_value(TensorType::new(xt.dtype, shape));
            let pad = Op::new(OpKind::Slicing(SlicingOp::Pad { edge_padding_low: nlo, edge_padding_high: nhi, interior_padding: vec![0; lo.len()] }), vec![y, pv], op.results.clone(), op.loc.clone());
            Some(vec![slice_of(x, s, l, y), pad])
        }
        _ => None,
    }
}

/// The least elements of an elementwise op's result that [`split_pads`] splits.
const SPLIT_MIN_ELEMENTS: usize = 4096;
/// The most pieces [`split_pads`] splits an op into.
const SPLIT_MAX_PIECES: usize = 25;

/// The least elements per box of a `split_pads` split: a box is a generic and a copy into the
/// concatenation to compile (bufferization, LLVM), worth it for 64 KB of f32 and more.
const SPLIT_MIN_BOX_ELEMENTS: usize = 16384;

/// An elementwise op that reads pads of computed arrays, with the tree of elementwise ops of
/// its shape that feed only it (`chained`), as the concatenation of that tree over the boxes
/// of its result between consecutive pad edges (and joins of concatenated leaves) along each
/// dim: in a box, each pad is all padding (a broadcast of its padding value) or all inside (a
/// slice of its operand), and the other leaves are sliced. The slices sink towards the data
/// in turn ([`sunk_slice`], which recomputes chains of cheap elementwise ops), so every box
/// is one loop over the arrays the pads were computed from, writing its part of the result in
/// place. The gradient of `sum(diff(x, axis=1) ** 2)` is the sum of two zero-padded copies of
/// `2 * diff(x)`: two fills, two copies and an add of 4096 x 1024 f32 (8.6 ms, JAX 1.4)
/// become three loops reading `x` (~0.7 ms); a 5-point stencil's gradient sums five pads of
/// its cotangent (5 x 5 boxes, one tree).
///
/// Only at the root of a tree (an op whose result is not `chained`): splitting each op of a
/// chain of sums on its own nested the boxes of one in those of the next. Not split: pads with
/// interior padding or cropping edges, pads the lowering computes from the loop indices
/// (`linalg::elementwise::padded_reads`: the operand is a splat or has one element along every
/// padded dim), a pad of an array that is dear to recompute when the pad has other uses (each
/// use would compute its part again), results of more than [`SPLIT_MAX_PIECES`] boxes or of
/// fewer than [`SPLIT_MIN_BOX_ELEMENTS`] per box. (A thin band's box, split again when the pass
/// ran next: a 3-D stencil's boundary planes of 128^2 in 9 boxes each, their rows in 3, 50
/// concatenations of pieces of a few elements; its first call took 250 ms, 140 in bufferization.)
fn split_pads(f: &mut Func, op: &Op, consts: &HashMap<Value, Literal>, defs: &HashMap<Value, Op>, uses: &HashMap<Value, usize>, reads: &HashMap<Value, f64>, chained: &std::collections::HashSet<Value>) -> Option<Vec<Op>> {
    let same = |o: &Op, f: &Func| matches!(o.kind, OpKind::Elementwise(_)) && o.results.len() == 1 && o.regions.is_empty() && o.operands.iter().all(|v| f.ty(*v).shape == f.ty(o.results[0]).shape);
    if !same(op, f) || chained.contains(&op.results[0]) {
        return None;
    }
    let out = f.ty(op.results[0]).clone();
    if out.rank() == 0 || out.num_elements() < SPLIT_MIN_ELEMENTS {
        return None;
    }
    // The tree, operands before their users (the root last), and its leaves.
    let mut leaves: Vec<Value> = Vec::new();
    let tree = post_order(op, |_, v| {
        let d = defs.get(&v).filter(|d| chained.contains(&v) && same(d, f));
        if d.is_none() && !leaves.contains(&v) {
            leaves.push(v);
        }
        Some(d)
    })?;
    if let Some(ops) = unfolded_interior(f, op, &tree, &leaves, consts, defs) {
        return Some(ops);
    }
    // The pads among the leaves: (leaf, operand, padding value, low edges).
    let mut pads: Vec<(Value, Value, Value, Vec<i64>)> = Vec::new();
    let mut computed = false;
    for v in &leaves {
        let Some(d) = defs.get(v) else { continue };
        let OpKind::Slicing(SlicingOp::Pad { edge_padding_low: lo, edge_padding_high: hi, interior_padding: mid }) = &d.kind else { continue };
        let (x, pv) = (d.operands[0], d.operands[1]);
        let xt = f.ty(x);
        if xt.rank() != out.rank() || [lo.len(), hi.len(), mid.len()].iter().any(|&n| n != out.rank()) || lo.iter().chain(hi).chain(mid).any(|&e| e < 0) || mid.iter().any(|&e| e != 0) || xt.num_elements() == 0 {
            return None;
        }
        let padded = (0..out.rank()).filter(|&k| lo[k] != 0 || hi[k] != 0);
        let selected = splat_of(consts, defs, x).is_some() || padded.clone().all(|k| xt.shape[k] == 1);
        if !selected {
            computed = true;
            if uses.get(v) != Some(&1) && !recomputed(f, defs, uses, reads, x) {
                return None;
            }
        }
        pads.push((*v, x, pv, lo.clone()));
    }
    if !computed {
        return None;
    }
    // The boxes: between consecutive edges of the pads along each dim.
    let mut cuts: Vec<Vec<i64>> = Vec::with_capacity(out.rank());
    for k in 0..out.rank() {
        let mut c = vec![0, out.shape[k]];
        for (_, x, _, lo) in &pads {
            c.extend([lo[k], lo[k] + f.ty(*x).shape[k]]);
        }
        cuts.push(c);
    }
    // Concatenated leaves: their joins too, so that a box reads within one part.
    for d in leaves.iter().filter_map(|v| defs.get(v)) {
        let OpKind::Slicing(SlicingOp::Concatenate { dim }) = d.kind else { continue };
        let c = usize::try_from(dim).ok().filter(|&c| c < out.rank())?;
        let mut at = 0;
        for x in &d.operands[..d.operands.len() - 1] {
            at += f.ty(*x).shape[c];
            cuts[c].push(at);
        }
    }
    for c in &mut cuts {
        c.sort_unstable();
        c.dedup();
    }
    let pieces = box_count(&out.shape, &cuts, 0);
    if !(2..=SPLIT_MAX_PIECES).contains(&pieces) || out.num_elements() / pieces < SPLIT_MIN_BOX_ELEMENTS {
        return None;
    }
    let mut ops = Vec::new();
    let root = split_box(f, &tree, &leaves, &pads, &cuts, 0, &mut vec![], &mut ops);
    // The outermost concatenation computes the op's result.
    let last = ops.last_mut().filter(|l| l.results == [root])?;
    last.results[0] = op.results[0];
    Some(ops)
}

/// The tree of [`split_pads`] (root `op`, operands first) when some leaves are pads with
/// interior padding `s` along one dim `k` (the same for all, edges of 0 or more; the result's
/// extent there a multiple of `s + 1`), computed in the view that splits dim `k` into `[M, s +
/// 1]`: there each such pad is an edge pad of its operand with a unit dim inserted (low
/// `r = lo % (s + 1)` along the new dim, `lo / (s + 1)` along `k`), the other leaves are
/// reshaped, and the tree's result is reshaped back (when some such pad's operand is
/// computed and not one element along `k`). The gradient of
/// `sum((x[:, ::2] + x[:, 1::2]) ** 2)` sums two interleaving pads of one cotangent: in the
/// view, two edge pads of its columns that the lowering selects between
/// (`linalg::elementwise::padded_reads`), one pass writing the result (15 ms -> ~1 for 4096 x
/// 1024 f32, JAX 0.7).
fn unfolded_interior(f: &mut Func, op: &Op, tree: &[&Op], leaves: &[Value], consts: &HashMap<Value, Literal>, defs: &HashMap<Value, Op>) -> Option<Vec<Op>> {
    let out = f.ty(op.results[0]).clone();
    let mut dim: Option<(usize, i64)> = None;
    let mut computed = false;
    for v in leaves {
        let Some(OpKind::Slicing(SlicingOp::Pad { edge_padding_low: lo, edge_padding_high: hi, interior_padding: mid })) = defs.get(v).map(|d| &d.kind) else { continue };
        let Some(k) = mid.iter().position(|&m| m != 0) else { continue };
        if mid.len() != out.rank() || lo.len() != out.rank() || hi.len() != out.rank() || mid.iter().filter(|&&m| m != 0).count() != 1 || mid[k] < 0 || lo.iter().chain(hi).any(|&e| e < 0) || dim.is_some_and(|d| d != (k, mid[k])) {
            return None;
        }
        dim = Some((k, mid[k]));
        let x = defs.get(v)?.operands[0];
        computed |= splat_of(consts, defs, x).is_none() && f.ty(x).shape[k] > 1;
    }
    // (Pads of splats and of single columns the lowering selects from the loop indices.)
    let (k, s) = dim.filter(|_| computed)?;
    let p = s.checked_add(1)?;
    if out.shape[k] % p != 0 {
        return None;
    }
    let m = out.shape[k] / p;
    let mut view = out.shape.clone();
    view[k] = m;
    view.insert(k + 1, p);
    let loc = op.loc.clone();
    let reshape = |f: &mut Func, ops: &mut Vec<Op>, x: Value, shape: Vec<i64>| {
        let r = f.new_value(TensorType::new(f.ty(x).dtype, shape.clone()));
        ops.push(Op::new(OpKind::Layout(LayoutOp::Reshape { shape }), vec![x], vec![r], loc.clone()));
        r
    };
    let mut ops = Vec::new();
    let mut vals: HashMap<Value, Value> = HashMap::new();
    for &v in leaves {
        let d = defs.get(&v);
        let x = match d.map(|d| (&d.kind, d)) {
            Some((OpKind::Slicing(SlicingOp::Pad { edge_padding_low: lo, edge_padding_high: hi, interior_padding: mid }), d)) if mid[k] == s => {
                let (x, pv) = (d.operands[0], d.operands[1]);
                let xt = f.ty(x).clone();
                let (r, q) = (lo[k] % p, lo[k] / p);
                let q_hi = m - q - xt.shape[k];
                if q_hi < 0 {
                    return None;
                }
                let mut ys = xt.shape.clone();
                ys.insert(k + 1, 1);
                let y = reshape(f, &mut ops, x, ys);
                let (mut nlo, mut nhi) = (lo.clone(), hi.clone());
                (nlo[k], nhi[k]) = (q, q_hi);
                nlo.insert(k + 1, r);
                nhi.insert(k + 1, s - r);
                let z = f.new_value(TensorType::new(xt.dtype, view.clone()));
                ops.push(Op::new(OpKind::Slicing(SlicingOp::Pad { edge_padding_low: nlo, edge_padding_high: nhi, interior_padding: vec![0; view.len()] }), vec![y, pv], vec![z], loc.clone()));
                z
            }
            _ => reshape(f, &mut ops, v, view.clone()),
        };
        vals.insert(v, x);
    }
    let last = clone_tree(f, tree, &mut vals, &view, &mut ops)?;
    ops.push(Op::new(OpKind::Layout(LayoutOp::Reshape { shape: out.shape.clone() }), vec![last], op.results.clone(), loc));
    Some(ops)
}

/// The ops of the tree rooted at `root`, operands before their users (the root last): for each
/// distinct operand `v` of a tree op `o` (last first, once), `step(o, v)` gives the op defining `v`
/// to descend into, `Some(None)` for a leaf (which the closure records), or None to give up.
/// Shared by [`split_pads`] and [`sunk_reshape`].
fn post_order<'a>(root: &'a Op, mut step: impl FnMut(&'a Op, Value) -> Option<Option<&'a Op>>) -> Option<Vec<&'a Op>> {
    let mut tree = Vec::new();
    let mut stack = vec![(root, false)];
    while let Some((o, expanded)) = stack.pop() {
        if expanded {
            tree.push(o);
            continue;
        }
        stack.push((o, true));
        for (i, &v) in o.operands.iter().enumerate().rev() {
            if o.operands[i + 1..].contains(&v) {
                continue;
            }
            if let Some(d) = step(o, v)? {
                stack.push((d, false));
            }
        }
    }
    Some(tree)
}

/// Appends copies of `tree` (operands first) with results of `shape`, operands through `vals`
/// (the leaves' values, then each copy's); returns the last copy's result.
fn clone_tree(f: &mut Func, tree: &[&Op], vals: &mut HashMap<Value, Value>, shape: &[i64], ops: &mut Vec<Op>) -> Option<Value> {
    let mut last = None;
    for o in tree {
        let xs: Vec<Value> = o.operands.iter().map(|v| vals.get(v).copied()).collect::<Option<_>>()?;
        let r = f.new_value(TensorType::new(f.ty(o.results[0]).dtype, shape.to_vec()));
        ops.push(Op::new(o.kind.clone(), xs, vec![r], o.loc.clone()));
        vals.insert(o.results[0], r);
        last = Some(r);
    }
    last
}


/// Whether the band of `split_pads` between `w0` and `w1` along dim `k` of `shape` is too thin
/// to be split along the later dims: at most a 32nd of the dim, or (before the last dim)
/// fewer than [`SPLIT_MIN_ELEMENTS`] elements across. It is one box, reading its pads as small
/// pads (a 2-D stencil's first rows: one box instead of five; a 3-D one's first planes).
fn thin_band(shape: &[i64], k: usize, w0: i64, w1: i64) -> bool {
    let across = quabla_dialect::size::saturating_product(std::iter::once(w1 - w0).chain(shape[k + 1..].iter().copied()));
    (w1 - w0).saturating_mul(32) <= shape[k] || k + 1 < shape.len() && across < SPLIT_MIN_ELEMENTS as i64
}

/// The bands of `split_pads` along dim `k` (start, limit, thin): between consecutive cuts,
/// consecutive [`thin_band`]s joined into one (a stencil's two first rows or planes, or
/// columns along the last dim: one box, not two). A thin band is one box over the later dims.
fn bands(shape: &[i64], cuts: &[Vec<i64>], k: usize) -> Vec<(i64, i64, bool)> {
    let mut out: Vec<(i64, i64, bool)> = Vec::new();
    for w in cuts[k].windows(2) {
        let thin = thin_band(shape, k, w[0], w[1]);
        match out.last_mut() {
            Some(last) if thin && last.2 => last.1 = w[1],
            _ => out.push((w[0], w[1], thin)),
        }
    }
    out
}

/// How many boxes [`split_box`] makes from dim `k` on.
fn box_count(shape: &[i64], cuts: &[Vec<i64>], k: usize) -> usize {
    if k == cuts.len() {
        return 1;
    }
    bands(shape, cuts, k).into_iter().map(|(_, _, thin)| if thin { 1 } else { box_count(shape, cuts, k + 1) }).fold(0usize, |a, b| a.saturating_add(b))
}

/// The tree of [`split_pads`] (operands first, its root last) over the boxes whose intervals
/// along dims before `k` are `bx` (start, limit), concatenated along dim `k` and the later
/// ones (a thin band, [`bands`], is one box over all the later dims); returns the value.
#[allow(clippy::too_many_arguments)]
fn split_box(f: &mut Func, tree: &[&Op], leaves: &[Value], pads: &[(Value, Value, Value, Vec<i64>)], cuts: &[Vec<i64>], k: usize, bx: &mut Vec<(i64, i64)>, ops: &mut Vec<Op>) -> Value {
    let root = &tree[tree.len() - 1];
    let out = f.ty(root.results[0]).shape.clone();
    if k == cuts.len() {
        return tree_box(f, tree, leaves, pads, bx, ops);
    }
    let mut acc: Option<Value> = None;
    for (w0, w1, thin) in bands(&out, cuts, k) {
        bx.push((w0, w1));
        let v = if thin {
            let n = bx.len();
            bx.extend(out[k + 1..].iter().map(|&e| (0, e)));
            let v = tree_box(f, tree, leaves, pads, bx, ops);
            bx.truncate(n);
            v
        } else {
            split_box(f, tree, leaves, pads, cuts, k + 1, bx, ops)
        };
        bx.pop();
        acc = Some(match acc {
            None => v,
            Some(a) => {
                let (at, vt) = (f.ty(a).clone(), f.ty(v));
                let mut shape = at.shape.clone();
                shape[k] += vt.shape[k];
                let r = f.new_value(TensorType::new(at.dtype, shape));
                ops.push(Op::new(OpKind::Slicing(SlicingOp::Concatenate { dim: k as i64 }), vec![a, v], vec![r], root.loc.clone()));
                r
            }
        });
    }
    // (At least one interval per dim: cuts hold 0 and the extent.)
    acc.unwrap_or(Value(u32::MAX))
}

/// The tree of [`split_pads`] over box `bx` (start, limit per dim), its leaves sliced: a pad
/// whose operand holds the box is the operand's slice, one whose operand misses it the
/// padding value's broadcast, another one its own slice (a smaller pad, [`sunk_slice`]).
fn tree_box(f: &mut Func, tree: &[&Op], leaves: &[Value], pads: &[(Value, Value, Value, Vec<i64>)], bx: &[(i64, i64)], ops: &mut Vec<Op>) -> Value {
    let loc = tree[tree.len() - 1].loc.clone();
    let start: Vec<i64> = bx.iter().map(|b| b.0).collect();
    let limit: Vec<i64> = bx.iter().map(|b| b.1).collect();
    let shape: Vec<i64> = bx.iter().map(|b| b.1 - b.0).collect();
    let mut vals: HashMap<Value, Value> = HashMap::new();
    for &v in leaves {
        let x = match pads.iter().find(|p| p.0 == v) {
            Some((_, x, pv, lo)) => {
                let xt = f.ty(*x).clone();
                let inside = (0..shape.len()).all(|d| start[d] >= lo[d] && limit[d] <= lo[d] + xt.shape[d]);
                let outside = (0..shape.len()).any(|d| limit[d] <= lo[d] || start[d] >= lo[d] + xt.shape[d]);
                if inside {
                    let s: Vec<i64> = start.iter().zip(lo).map(|(a, l)| a - l).collect();
                    let l: Vec<i64> = limit.iter().zip(lo).map(|(a, l)| a - l).collect();
                    sliced(f, *x, &s, &l, ops, &loc)
                } else if outside {
                    let r = f.new_value(TensorType::new(xt.dtype, shape.clone()));
                    ops.push(Op::new(OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![], shape: shape.clone() }), vec![*pv], vec![r], loc.clone()));
                    r
                } else {
                    sliced(f, v, &start, &limit, ops, &loc)
                }
            }
            None => sliced(f, v, &start, &limit, ops, &loc),
        };
        vals.insert(v, x);
    }
    clone_tree(f, tree, &mut vals, &shape, ops).unwrap_or(Value(u32::MAX))
}

/// Work units per element ([`ElementwiseOp::scalar_cost`]) of recomputing `v` from the values
/// its chain of elementwise ops (of its shape) starts from, when at most
/// [`quabla_dialect::RECOMPUTE_COST`]; None when dearer or not an elementwise value. An operand
/// that is not itself [`recomputed`] is read (it costs nothing here); a shared one counts each
/// time (an upper bound).
fn recompute_cost(f: &Func, defs: &HashMap<Value, Op>, uses: &HashMap<Value, usize>, reads: &HashMap<Value, f64>, v: Value, depth: usize) -> Option<i64> {
    let d = defs.get(&v)?;
    let OpKind::Elementwise(k) = &d.kind else { return None };
    if depth > 16 || d.results.len() != 1 || !d.regions.is_empty() {
        return None;
    }
    let shape = &f.ty(v).shape;
    let mut c = k.scalar_cost();
    for x in &d.operands {
        if f.ty(*x).shape != *shape {
            return None;
        }
        if let Some(n) = recompute_cost(f, defs, uses, reads, *x, depth + 1).filter(|&n| recomputes(uses, reads, *x, n)) {
            c += n;
        }
        if c > quabla_dialect::RECOMPUTE_COST {
            return None;
        }
    }
    Some(c)
}

/// Whether slices of elementwise value `v` are computed from slices of its operands: when it
/// has one use (the slices then partition it, as [`split_pads`] makes them), or when it is
/// cheap enough to compute for every read of it ([`recomputes`]). `2 * diff(x)` read by two
/// pads is recomputed in each box; the cotangent of a 5-point stencil read by five pads is not
/// (computed once, its slices read in place: 6 units times 5 reads).
fn recomputed(f: &Func, defs: &HashMap<Value, Op>, uses: &HashMap<Value, usize>, reads: &HashMap<Value, f64>, v: Value) -> bool {
    uses.get(&v).is_none_or(|&n| n <= 1) || recompute_cost(f, defs, uses, reads, v, 0).is_some_and(|c| recomputes(uses, reads, v, c))
}

/// The most work units per element of a value that recomputing it for every read of it may
/// cost ([`recomputes`]: its chain's cost times the elements read per element). Twice the
/// lowering's per-use bound: its reads are shifted windows of one array, in cache when the
/// next window reads them. A second difference's cotangent (5 units) read by three pads is
/// recomputed (4096 x 1024 f32: 1480 -> ~1000 us, JAX 1020); a 5-point stencil's (6 units)
/// read by five is not (recomputed: 3.7 -> 1.4 ms as read, JAX 2.8).
const RECOMPUTE_WORK: f64 = 2.0 * quabla_dialect::RECOMPUTE_COST as f64;

/// Whether `v`, costing `c` per element, is cheap enough to compute for every read of it
/// ([`recomputed`]).
fn recomputes(uses: &HashMap<Value, usize>, reads: &HashMap<Value, f64>, v: Value, c: i64) -> bool {
    let r = reads.get(&v).copied().unwrap_or(1.0).max(1.0);
    uses.get(&v).is_none_or(|&n| n <= 1) || c as f64 * r <= RECOMPUTE_WORK + 1e-9
}

/// `v[start:limit]` (unit strides) as a value: `v` itself when the box is all of it, else a
/// slice op appended to `ops` (which [`sunk_slice`] moves on towards the data).
fn sliced(f: &mut Func, v: Value, start: &[i64], limit: &[i64], ops: &mut Vec<Op>, loc: &quabla_dialect::Loc) -> Value {
    let vt = f.ty(v).clone();
    if start.iter().all(|&s| s == 0) && limit == vt.shape.as_slice() {
        return v;
    }
    let shape: Vec<i64> = start.iter().zip(limit).map(|(s, l)| l - s).collect();
    let r = f.new_value(TensorType::new(vt.dtype, shape));
    ops.push(Op::new(OpKind::Slicing(SlicingOp::Slice { start_indices: start.to_vec(), limit_indices: limit.to_vec(), strides: vec![1; start.len()] }), vec![v], vec![r], loc.clone()));
    r
}

/// A sum moved towards its data, as the ops that replace it: the sum of a negation read by
/// nothing else is the negation of the sum; the sum of a zero-padded array over every padded
/// dim is the sum of the array. The cross-entropy gradient's `sum(neg(pad(-1, 0)))` over the
/// classes (the cotangent of `log_softmax(x)[:, 0]`) becomes the negated column, folded
/// further to a constant (a fill, a negation and a row sum of the whole 65536 x 10 array
/// before). Both exact: negation commutes with rounding, zeros add nothing (but -0.0 sums).
fn pulled_sum(f: &mut Func, op: &Op, consts: &HashMap<Value, Literal>, defs: &HashMap<Value, Op>, uses: &HashMap<Value, usize>) -> Option<Vec<Op>> {
    let OpKind::Reduce(ReduceOp::Reduce { op: quabla_dialect::Reducer::Sum, dims }) = &op.kind else { return None };
    let d = defs.get(&op.operands[0])?;
    let sum_of = |x: Value, r: Value| Op::new(op.kind.clone(), vec![x], vec![r], op.loc.clone());
    match &d.kind {
        OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Neg }) if uses.get(&d.results[0]) == Some(&1) => {
            let r = f.new_value(f.ty(op.results[0]).clone());
            Some(vec![sum_of(d.operands[0], r), Op::new(d.kind.clone(), vec![r], op.results.clone(), d.loc.clone())])
        }
        // Over dims the broadcast's operand has at full extent: the broadcast of the operand's
        // sum (the gradient of `sum(a[:, None] * c[None, :])` in `a` summed `c` once per row of
        // the 4096 x 1024 broadcast: 42 us against JAX's 26). The same sums of the same values.
        OpKind::Layout(LayoutOp::BroadcastInDim { dims: bd, .. }) => {
            if dims.is_empty() {
                return None;
            }
            let (st, bt) = (f.ty(d.operands[0]).clone(), f.ty(d.results[0]).clone());
            let mut src = Vec::with_capacity(dims.len());
            for &k in dims {
                let j = bd.iter().position(|&x| x == k)?;
                if st.shape[j] != *bt.shape.get(k as usize)? {
                    return None;
                }
                src.push(j as i64);
            }
            src.sort_unstable();
            let kept: Vec<usize> = (0..st.rank()).filter(|j| !src.contains(&(*j as i64))).collect();
            let out_pos = |k: i64| k - dims.iter().filter(|&&s| s < k).count() as i64;
            let nd: Vec<i64> = kept.iter().map(|&j| out_pos(bd[j])).collect();
            let r = f.new_value(TensorType::new(st.dtype, kept.iter().map(|&j| st.shape[j]).collect::<Vec<_>>()));
            let out = f.ty(op.results[0]).shape.clone();
            Some(vec![
                Op::new(OpKind::Reduce(ReduceOp::Reduce { op: quabla_dialect::Reducer::Sum, dims: src }), vec![d.operands[0]], vec![r], op.loc.clone()),
                Op::new(OpKind::Layout(LayoutOp::BroadcastInDim { dims: nd, shape: out }), vec![r], op.results.clone(), op.loc.clone()),
            ])
        }
        OpKind::Slicing(SlicingOp::Pad { edge_padding_low: lo, edge_padding_high: hi, interior_padding: mid }) => {
            let padded_only_summed = (0..lo.len()).all(|k| lo[k] >= 0 && hi[k] >= 0 && mid[k] >= 0 && (dims.contains(&(k as i64)) || lo[k] == 0 && hi[k] == 0 && mid[k] == 0));
            let zero = splat_of(consts, defs, d.operands[1]).is_some_and(|l| l.get_f64(0) == 0.0);
            (padded_only_summed && zero).then(|| vec![sum_of(d.operands[0], op.results[0])])
        }
        _ => None,
    }
}

/// The sum of a splat `c` over `n` elements per result element as the splat `n * c` (a
/// constant when small, else the broadcast of a scalar constant), where that is what the sum
/// gives in any order: integers wrap alike; for floats every partial sum `k * c` is exact when
/// `c`'s odd integer significand times `n` fits the significand (`-1` summed over the
/// classes a strided slice keeps, in the gradient of `log_softmax(x)[:, 3::2].sum()`), and
/// infinities and NaN stay themselves. Zeros sum to +0.0.
fn summed_splat(f: &mut Func, op: &Op, consts: &HashMap<Value, Literal>, defs: &HashMap<Value, Op>) -> Option<Vec<Op>> {
    let OpKind::Reduce(ReduceOp::Reduce { op: quabla_dialect::Reducer::Sum, dims }) = &op.kind else { return None };
    let (xt, out) = (f.ty(op.operands[0]).clone(), f.ty(*op.results.first()?).clone());
    let c = splat_of(consts, defs, op.operands[0])?;
    if c.is_empty() || consts.contains_key(&op.operands[0]) && xt.num_elements() <= MAX_FOLD_ELEMENTS {
        return None; // (constant folding evaluates it)
    }
    let n = quabla_dialect::size::saturating_product(dims.iter().map(|&k| xt.shape.get(k as usize).copied().unwrap_or(0)));
    let scalar = TensorType::scalar(xt.dtype);
    let value = match xt.dtype {
        DType::F32 | DType::F64 => {
            let (v, bits) = (c.get_f64(0), if xt.dtype == DType::F32 { 24 } else { 53 });
            if v.is_finite() && v != 0.0 {
                let mut m = v.abs();
                while m.fract() != 0.0 {
                    m *= 2.0;
                }
                while m >= 2.0 && (m / 2.0).fract() == 0.0 {
                    m /= 2.0;
                }
                if m * n as f64 > (1u64 << bits) as f64 {
                    return None;
                }
            }
            Literal::from_f64s(scalar.clone(), &[v * n as f64 + 0.0])
        }
        DType::I32 | DType::I64 | DType::U32 => Literal::from_i64s(scalar.clone(), &[c.get_i64(0).wrapping_mul(n)]),
        DType::I1 | DType::U8 => return None,
    };
    if out.num_elements() <= MAX_SPLAT_ELEMENTS {
        return Some(vec![constant_op(op, value.splat_like(out))]);
    }
    let s = f.new_value(scalar);
    let bcast = Op::new(OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![], shape: out.shape.clone() }), vec![s], op.results.clone(), op.loc.clone());
    Some(vec![Op::new(OpKind::Constant(ConstantOp::Constant { value }), vec![], vec![s], op.loc.clone()), bcast])
}

/// Operand-free ops (iota) of at most this many elements are known values to constant
/// folding: a key derived from a constant key (`split(PRNGKey(0))`: threefry on a 2-element
/// iota) folds to a constant instead of ~150 ops of the program (its own chunks of the
/// outlined program, compiled and run every call). Larger ones are not materialised.
const KNOWN_NULLARY_ELEMENTS: usize = 64;

/// The value of `op` when it takes no operands, has no effect or regions and its one result
/// has at most [`KNOWN_NULLARY_ELEMENTS`] elements.
fn small_nullary(f: &Func, op: &Op) -> Option<Literal> {
    let small = op.operands.is_empty() && op.regions.is_empty() && !op.kind.has_effect() && op.results.len() == 1 && f.ty(op.results[0]).num_elements() <= KNOWN_NULLARY_ELEMENTS;
    if !small || matches!(op.kind, OpKind::Call(CallOp::Call { .. })) {
        return None;
    }
    interp::run_op(&op.kind, &[]).ok().map(|mut out| out.remove(0).to_literal())
}

/// `transpose(dot_general(a, b))` as `dot_general(b, a)` when the transpose is the product's
/// only use and its `perm` keeps the batch dims first and swaps the lhs free dims with the rhs
/// free dims (`[batch..., rhs free..., lhs free...]`): the same values in the same order, and
/// no transposed copy of the result. Autodiff writes `dW = (dz^T h)^T` this way.
fn swapped_dot(op: &Op, perm: &[i64], d: Option<&Op>, f: &Func, uses: &HashMap<Value, usize>) -> Option<Op> {
    let d = d?;
    let OpKind::Dot(DotOp::DotGeneral { dims }) = &d.kind else { return None };
    if uses.get(&d.results[0]).copied() != Some(1) {
        return None;
    }
    let nb = dims.lhs_batching_dimensions.len();
    let nl = f.ty(d.operands[0]).rank() - nb - dims.lhs_contracting_dimensions.len();
    let nr = f.ty(d.operands[1]).rank() - nb - dims.rhs_contracting_dimensions.len();
    let want: Vec<i64> = (0..nb).chain(nb + nl..nb + nl + nr).chain(nb..nb + nl).map(|i| i as i64).collect();
    if perm != want.as_slice() {
        return None;
    }
    let swapped = DotDims {
        lhs_batching_dimensions: dims.rhs_batching_dimensions.clone(),
        rhs_batching_dimensions: dims.lhs_batching_dimensions.clone(),
        lhs_contracting_dimensions: dims.rhs_contracting_dimensions.clone(),
        rhs_contracting_dimensions: dims.lhs_contracting_dimensions.clone(),
    };
    let mut n = op.clone();
    n.kind = OpKind::Dot(DotOp::DotGeneral { dims: swapped });
    n.operands = vec![d.operands[1], d.operands[0]];
    Some(n)
}

/// `dot_general(transpose(x), y)` (or of a transposed `y`) as a `dot_general` of `x` itself,
/// its batch and contracting dims mapped through the perm, when the transpose is that
/// operand's only use and keeps the operand's free dims in their order (so the product's
/// result is the same array): `x @ W.T`, `a.T @ b`, attention's `q @ swapaxes(k, -1, -2)`. The
/// lowering reads `[n, k]` right and `[k, m]` left operands in place, so the transposed copy
/// goes away (it cost more than the product for `64 x 1024 @ (256 x 1024).T`).
fn dot_of_transposed(op: &Op, dims: &DotDims, defs: &HashMap<Value, Op>, uses: &HashMap<Value, usize>) -> Option<Op> {
    // The transpose of `v` (single use) and its perm.
    let transposed = |v: Value| -> Option<(Value, &Vec<i64>)> {
        let d = defs.get(&v)?;
        match &d.kind {
            OpKind::Layout(LayoutOp::Transpose { perm }) if uses.get(&v).copied() == Some(1) => Some((d.operands[0], perm)),
            _ => None,
        }
    };
    // `batch` and `contract` (dims of the transposed operand) as dims of its source, when the
    // perm keeps the free dims in order.
    let through = |perm: &[i64], batch: &[i64], contract: &[i64]| -> Option<(Vec<i64>, Vec<i64>)> {
        let free: Vec<i64> = DotDims::free(perm.len(), batch, contract).iter().map(|&i| perm[i as usize]).collect();
        if free.windows(2).any(|w| w[0] > w[1]) {
            return None;
        }
        let map = |ds: &[i64]| ds.iter().map(|&i| perm[i as usize]).collect();
        Some((map(batch), map(contract)))
    };
    let mut n = op.clone();
    let mut nd = dims.clone();
    let mut changed = false;
    if let Some((src, perm)) = transposed(op.operands[0]) {
        if let Some((b, c)) = through(perm, &dims.lhs_batching_dimensions, &dims.lhs_contracting_dimensions) {
            (nd.lhs_batching_dimensions, nd.lhs_contracting_dimensions) = (b, c);
            n.operands[0] = src;
            changed = true;
        }
    }
    if let Some((src, perm)) = transposed(op.operands[1]) {
        if let Some((b, c)) = through(perm, &dims.rhs_batching_dimensions, &dims.rhs_contracting_dimensions) {
            (nd.rhs_batching_dimensions, nd.rhs_contracting_dimensions) = (b, c);
            n.operands[1] = src;
            changed = true;
        }
    }
    if !changed {
        return None;
    }
    n.kind = OpKind::Dot(DotOp::DotGeneral { dims: nd });
    Some(n)
}

/// The splat constant `v` holds: a splat `quabla.constant`, or a layout op (broadcast,
/// reshape, transpose) of one.
fn splat_of<'a>(consts: &'a HashMap<Value, Literal>, defs: &'a HashMap<Value, Op>, v: Value) -> Option<&'a Literal> {
    if let Some(l) = consts.get(&v) {
        return l.is_splat().then_some(l);
    }
    let d = defs.get(&v)?;
    match d.kind {
        OpKind::Layout(_) => consts.get(d.operands.first()?).filter(|l| l.is_splat()),
        _ => None,
    }
}

fn is_splat(consts: &HashMap<Value, Literal>, defs: &HashMap<Value, Op>, v: Value, x: f64) -> bool {
    splat_of(consts, defs, v).is_some_and(|l| l.is_splat_of(x))
}

fn constant_op(op: &Op, value: Literal) -> Op {
    Op::new(OpKind::Constant(ConstantOp::Constant { value }), vec![], op.results.clone(), op.loc.clone())
}

fn fold_op(f: &Func, op: Op, consts: &HashMap<Value, Literal>, defs: &HashMap<Value, Op>, uses: &HashMap<Value, usize>) -> Fold {
    let out_ty = op.results.first().map(|r| f.ty(*r).clone());
    // Constant folding through the reference interpreter.
    // Ops without operands (iota) are not materialised: a dense constant is larger IR.
    // Effects (host callbacks) run when the program runs, never at compile time.
    let foldable = !op.operands.is_empty()
        && !op.kind.has_effect()
        && op.regions.is_empty()
        && !matches!(op.kind, OpKind::Constant(ConstantOp::Constant { .. }) | OpKind::Call(CallOp::Call { .. }))
        && op.results.len() == 1
        && out_ty.as_ref().is_some_and(|t| t.num_elements() <= MAX_FOLD_ELEMENTS)
        && op.operands.iter().all(|v| consts.contains_key(v));
    if foldable {
        let bufs: Vec<Buffer> = op.operands.iter().map(|v| Buffer::from_literal(&consts[v])).collect();
        let refs: Vec<&Buffer> = bufs.iter().collect();
        if let Ok(mut out) = interp::run_op(&op.kind, &refs) {
            let lit = out.remove(0).to_literal();
            return Fold::Keep(constant_op(&op, lit));
        }
    }
    let x = op.operands.first().copied();
    let same_type = |v: Value| out_ty.as_ref() == Some(f.ty(v));
    let def = |v: Value| defs.get(&v);
    match &op.kind {
        OpKind::Elementwise(ElementwiseOp::Binary { op: b }) => {
            let (a, c) = (op.operands[0], op.operands[1]);
            match b {
                BinaryOp::Add if is_splat(consts, defs, c, 0.0) || is_splat(consts, defs, c, -0.0) => return Fold::Alias(a),
                BinaryOp::Add if is_splat(consts, defs, a, 0.0) || is_splat(consts, defs, a, -0.0) => return Fold::Alias(c),
                BinaryOp::Sub if is_splat(consts, defs, c, 0.0) => return Fold::Alias(a),
                BinaryOp::Mul if is_splat(consts, defs, c, 1.0) => return Fold::Alias(a),
                BinaryOp::Mul if is_splat(consts, defs, a, 1.0) => return Fold::Alias(c),
                BinaryOp::Div if is_splat(consts, defs, c, 1.0) => return Fold::Alias(a),
                _ => {}
            }
        }
        OpKind::Elementwise(ElementwiseOp::Unary { op: u @ (UnaryOp::Neg | UnaryOp::Not) }) => {
            if let Some(d) = def(op.operands[0]) {
                if d.kind == OpKind::Elementwise(ElementwiseOp::Unary { op: *u }) {
                    return Fold::Alias(d.operands[0]);
                }
            }
        }
        OpKind::Elementwise(ElementwiseOp::Powi { exponent: 1 }) => return Fold::Alias(op.operands[0]),
        OpKind::Elementwise(ElementwiseOp::Convert { .. }) | OpKind::Layout(LayoutOp::Reshape { .. }) | OpKind::Layout(LayoutOp::BroadcastInDim { .. }) if same_type(op.operands[0]) => {
            // Same type: a no-op (broadcast_in_dim with equal shapes has increasing dims, so identity).
            return Fold::Alias(op.operands[0]);
        }
        OpKind::Layout(LayoutOp::Transpose { perm }) => {
            if perm.iter().enumerate().all(|(i, &p)| p == i as i64) {
                return Fold::Alias(op.operands[0]);
            }
            if let Some(OpKind::Layout(LayoutOp::Transpose { perm: inner })) = def(op.operands[0]).map(|d| &d.kind) {
                let composed: Vec<i64> = perm.iter().map(|&p| inner[p as usize]).collect();
                let src = def(op.operands[0]).unwrap().operands[0];
                let mut n = op.clone();
                n.kind = OpKind::Layout(LayoutOp::Transpose { perm: composed.clone() });
                n.operands = vec![src];
                if composed.iter().enumerate().all(|(i, &p)| p == i as i64) {
                    return Fold::Alias(src);
                }
                return Fold::Keep(n);
            }
            if let Some(n) = swapped_dot(&op, perm, def(op.operands[0]), f, uses) {
                return Fold::Keep(n);
            }
        }
        OpKind::Dot(DotOp::DotGeneral { dims }) => {
            if let Some(n) = dot_of_transposed(&op, dims, defs, uses) {
                return Fold::Keep(n);
            }
        }
        OpKind::Slicing(SlicingOp::Slice { start_indices: start, strides, .. }) if same_type(op.operands[0]) && start.iter().all(|&s| s == 0) && strides.iter().all(|&s| s == 1) => {
            return Fold::Alias(op.operands[0]);
        }
        OpKind::Reduce(ReduceOp::Reduce { dims, .. }) if dims.is_empty() => return Fold::Alias(op.operands[0]),
        // Over dims of one element: the array itself, reshaped (a sum's 0 + -0.0 gives +0.0:
        // the sign of a zero may differ, as with x + 0).
        OpKind::Reduce(ReduceOp::Reduce { dims, .. }) if dims.iter().all(|&k| f.ty(op.operands[0]).shape.get(k as usize) == Some(&1)) => {
            let shape = out_ty.clone().map(|t| t.shape).unwrap_or_default();
            return Fold::Keep(Op::new(OpKind::Layout(LayoutOp::Reshape { shape }), op.operands.clone(), op.results.clone(), op.loc.clone()));
        }
        OpKind::Elementwise(ElementwiseOp::Select {}) => {
            if let Some(p) = splat_of(consts, defs, op.operands[0]) {
                return Fold::Alias(if p.get_i64(0) != 0 { op.operands[1] } else { op.operands[2] });
            }
            if op.operands[1] == op.operands[2] {
                return Fold::Alias(op.operands[1]);
            }
        }
        _ => {}
    }
    // Chains and splats of layout ops. A broadcast of a broadcast: one broadcast, the inner
    // dims mapped through the outer ones.
    if let (OpKind::Layout(LayoutOp::BroadcastInDim { dims, shape }), Some(d)) = (&op.kind, x.and_then(def)) {
        if let OpKind::Layout(LayoutOp::BroadcastInDim { dims: inner, .. }) = &d.kind {
            if let Some(nd) = inner.iter().map(|&i| usize::try_from(i).ok().and_then(|i| dims.get(i).copied())).collect::<Option<Vec<i64>>>() {
                return Fold::Keep(Op::new(OpKind::Layout(LayoutOp::BroadcastInDim { dims: nd, shape: shape.clone() }), vec![d.operands[0]], op.results.clone(), op.loc.clone()));
            }
        }
    }
    if let (OpKind::Layout(LayoutOp::Reshape { .. }), Some(d)) = (&op.kind, x.and_then(def)) {
        if matches!(d.kind, OpKind::Layout(LayoutOp::Reshape { .. })) {
            let mut n = op.clone();
            n.operands = vec![d.operands[0]];
            if same_type(d.operands[0]) {
                return Fold::Alias(d.operands[0]);
            }
            return Fold::Keep(n);
        }
    }
    if let (OpKind::Layout(LayoutOp::BroadcastInDim { .. }) | OpKind::Layout(LayoutOp::Reshape { .. }) | OpKind::Layout(LayoutOp::Transpose { .. }), Some(l)) = (&op.kind, x.and_then(|v| consts.get(&v))) {
        if l.is_splat() && out_ty.as_ref().is_some_and(|t| t.num_elements() <= MAX_SPLAT_ELEMENTS) {
            return Fold::Keep(constant_op(&op, l.splat_like(out_ty.clone().unwrap())));
        }
    }
    Fold::Keep(op)
}

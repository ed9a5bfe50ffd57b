//! Row blocks: a run of row-local ops (each row of its results computed from the same row of
//! its operands: elementwise ops, reductions over later dims, reshapes and broadcasts that
//! keep the leading dim, splat constants, pads, slices and concatenations along later dims) with a reduction among them, on arrays larger than
//! a core's caches, is lowered as one `scf.forall` over blocks of rows: each iteration slices
//! its rows of the run's inputs and lowers the run's ops on `[block, ...]` tensors (the run
//! copied into a function of block shapes, lowered by the same code as any block), inserting
//! its rows of the run's outputs. The intermediate arrays of a block stay in the core's L1
//! and L2; op by op, each was written to memory and read back by the next op: the softmax
//! of 65536 rows of 64 f32 (max, exp, sum, divide: four passes over 16 MB, three of them
//! reading what the last wrote) ran at memory speed, 1.8 ms against JAX's 1.5 (three fused
//! passes).
use std::collections::HashMap;

use quabla_dialect::{Body, ConstantOp, ControlOp, Func, LayoutOp, Literal, Op, OpKind, ReduceOp, SlicingOp, TensorType, Value};

use super::{list, lower_block, memref, Ctx, Emitter};
use crate::LowerError;

/// The least bytes of the arrays a run slices for it to take the row-block form (twice a
/// core's L2 on the Xeon and the Zen 4 of 2026-12: smaller arrays stay in the caches op by op).
pub const ROW_BLOCK_MIN_BYTES: u64 = 4 << 20;

/// The least bytes of the arrays a run with a loop slices ([`loop_reads`]): its carries are
/// read and written at every iteration, so smaller ones than [`ROW_BLOCK_MIN_BYTES`] already
/// gain from staying in a core's caches (Mandelbrot's 512^2 f32 carries).
pub const LOOP_BLOCK_MIN_BYTES: u64 = 1 << 20;

/// The most bytes of one block of a sliced input (the block's intermediates, a few of that
/// size, stay in L1 and L2).
const BLOCK_BYTES: i64 = 32 << 10;

/// The least bytes of a row (of the widest value of a run) for the row-block form: short rows
/// lose in blocks (Xeon, 2026-12-06, softmax of f32 rows, op by op / in blocks, us: 262144 x
/// 10 1574 / 2338, 131072 x 16 1032 / 1205; 65536 x 32 1020 / 899, 65536 x 64 1866 / 1539).
const MIN_ROW_BYTES: i64 = 128;

/// The unit attribute of a row-block loop: the CPU executor tags the loops inside it as it
/// does those of the function (flattened, vector loops, short inner loops written out) but
/// splits none between threads (the blocks are; quabla_runtime's `parallel::tag_loops`).
pub const BLOCKS_ATTR: &str = "quabla.blocks";

/// The least bytes of a block: a row count without a divisor that gives such blocks keeps
/// the op-by-op form.
const MIN_BLOCK_BYTES: i64 = 4 << 10;

/// A run of row-local ops: `ops[start..end]` of the block, on `rows` rows, lowered in blocks
/// of `block` rows as the ops of `g` (params: the run's inputs, `sliced[k]` a block of rows
/// of input k, else the whole input; outputs: the run's values used after it).
pub struct Run {
    pub start: usize,
    pub end: usize,
    /// The leading dims the rows span (`[rows]`, or `[a, b, ...]`: rows of 3-D and larger
    /// arrays whose first dim alone holds rows too long for a block).
    lead: Vec<i64>,
    /// Rows of a block along the last leading dim (one along the others).
    block: i64,
    inputs: Vec<(Value, bool)>,
    outputs: Vec<Value>,
    /// Ops of the run the block lowers again after it (cheap ops whose results it reads).
    pub again: Vec<usize>,
    g: Func,
}

impl Run {
    /// The values the run reads from outside it (the block must materialise them).
    pub fn inputs(&self) -> impl Iterator<Item = Value> + '_ {
        self.inputs.iter().map(|(v, _)| *v)
    }
}

/// How an op of a run reads operand `i`: `Some(true)` its rows (its leading dims are `lead`),
/// `Some(false)` whole (in every block), None when the op is not row-local over the rows
/// `lead` spans.
fn reads(f: &Func, op: &Op, lead: &[i64]) -> Option<Vec<bool>> {
    let k = lead.len();
    if matches!(op.kind, OpKind::Control(ControlOp::While {})) {
        return loop_reads(f, op, lead);
    }
    // A splat constant of any shape (a 0-d one included: a scalar the gradient broadcasts)
    // is made in every block.
    if let OpKind::Constant(ConstantOp::Constant { value }) = &op.kind {
        return (k > 0 && value.is_splat()).then(Vec::new);
    }
    let out = f.ty(*op.results.first()?);
    if op.results.len() != 1 || !op.regions.is_empty() || k == 0 || !out.shape.starts_with(lead) {
        return None;
    }
    let leads = |v: &Value| f.ty(*v).shape.starts_with(lead);
    let before = |d: i64| usize::try_from(d).map_or(true, |d| d < k);
    match &op.kind {
        OpKind::Elementwise(_) => op.operands.iter().all(|v| f.ty(*v).shape == out.shape).then(|| vec![true; op.operands.len()]),
        OpKind::Reduce(ReduceOp::Reduce { dims, .. }) => (!dims.iter().any(|&d| before(d)) && leads(&op.operands[0])).then(|| vec![true]),
        OpKind::Layout(LayoutOp::Reshape { .. } | LayoutOp::StopGradient {}) => leads(&op.operands[0]).then(|| vec![true]),
        OpKind::Layout(LayoutOp::BroadcastInDim { dims, .. }) => {
            // Sliced: the operand's first dims are the leading ones, in place; whole: no
            // operand dim of more than one element lands on a leading dim.
            let xt = f.ty(op.operands[0]);
            let sliced = dims.len() >= k && (0..k).all(|j| dims[j] == j as i64) && leads(&op.operands[0]);
            let whole = dims.iter().zip(&xt.shape).all(|(&d, &n)| !before(d) || n == 1);
            if sliced {
                Some(vec![true])
            } else {
                whole.then(|| vec![false])
            }
        }
        // Padding, slices and concatenations along later dims (a gradient's one-hot column).
        OpKind::Slicing(SlicingOp::Pad { edge_padding_low: lo, edge_padding_high: hi, interior_padding: mid }) => ((0..k).all(|j| lo.get(j) == Some(&0) && hi.get(j) == Some(&0) && mid.get(j) == Some(&0)) && leads(&op.operands[0])).then(|| vec![true, false]),
        OpKind::Slicing(SlicingOp::Slice { start_indices, strides, .. }) => ((0..k).all(|j| start_indices.get(j) == Some(&0) && strides.get(j) == Some(&1)) && leads(&op.operands[0])).then(|| vec![true]),
        OpKind::Slicing(SlicingOp::Concatenate { dim }) => (!before(*dim) && op.operands.iter().all(leads)).then(|| vec![true; op.operands.len()]),
        _ => None,
    }
}

/// How a `while` loop reads its operands when it is row-local over `lead` (see [`reads`]):
/// each carry either has rows (its leading dims are `lead`: a block of rows in, the same
/// block out) or is 0-d (a counter, a scalar: whole), the cond reads only 0-d carries, and
/// every op of its body is row-local on the body's values in the same way or a computation on
/// 0-d values (the counter's). Elementwise iterations (Newton's method on every element, the
/// escape-time loop of a fractal) then run block by block, each block's carries staying in
/// the core's caches over all the iterations, instead of every iteration streaming every
/// carry through memory.
fn loop_reads(f: &Func, op: &Op, lead: &[i64]) -> Option<Vec<bool>> {
    let [cond, body] = op.regions.as_slice() else { return None };
    if op.results.len() != op.operands.len() {
        return None;
    }
    let scalar = |v: &Value| f.ty(*v).rank() == 0;
    let rows = |v: &Value| f.ty(*v).shape.starts_with(lead);
    // Sliced (true) or whole (false), None for a carry neither 0-d nor of rows.
    let sliced: Vec<bool> = op.operands.iter().map(|v| if scalar(v) { Some(false) } else { rows(v).then_some(true) }).collect::<Option<_>>()?;
    let row_local = |b: &quabla_dialect::Body| {
        b.ops.iter().all(|o| {
            let all_scalar = o.regions.is_empty() && o.operands.iter().chain(&o.results).all(scalar);
            all_scalar || (o.results.len() == 1 && reads(f, o, lead).is_some_and(|r| o.operands.iter().zip(&r).all(|(v, &s)| s || scalar(v))))
        })
    };
    let cond_reads_rows = cond.params.iter().zip(&sliced).any(|(p, &s)| s && cond.ops.iter().any(|o| o.operands.contains(p)));
    (!cond_reads_rows && row_local(cond) && row_local(body)).then_some(sliced)
}

/// `ops` with each elementwise op, broadcast and reshape moved to just before its first user
/// (after the last op when only the block's outputs read it), the other ops in their order:
/// the gradient of `sum(sin(X) * cos(Y))` over a meshgrid sums one outer product along its
/// rows and another along its columns; between the first product and its row sum, the second
/// product joined the run, which wrote it out for the column sum after it (a 4 MB array, and
/// its factor recomputed in every block) instead of the column sum reading it fused. None
/// when `ops` are in that order already or the target has no row blocks ([`runs`]).
pub fn sunk(e: &Emitter, ops: &[Op]) -> Option<Vec<Op>> {
    if !has_runs(e) {
        return None;
    }
    let sinks = |op: &Op| op.regions.is_empty() && op.results.len() == 1 && matches!(op.kind, OpKind::Elementwise(_) | OpKind::Layout(LayoutOp::BroadcastInDim { .. } | LayoutOp::Reshape { .. }));
    let producer: HashMap<Value, usize> = ops.iter().enumerate().filter(|(_, op)| sinks(op)).flat_map(|(k, op)| op.results.iter().map(move |v| (*v, k))).collect();
    let mut placed = vec![false; ops.len()];
    let mut order = Vec::with_capacity(ops.len());
    // Places op k after the pending producers of its operands (operands first, in order).
    let mut place = |k: usize, order: &mut Vec<usize>| {
        let mut stack = vec![(k, false)];
        while let Some((k, ready)) = stack.pop() {
            if placed[k] {
                continue;
            }
            if ready {
                placed[k] = true;
                order.push(k);
                continue;
            }
            stack.push((k, true));
            stack.extend(ops[k].operands.iter().rev().filter_map(|v| producer.get(v)).filter(|&&p| !placed[p]).map(|&p| (p, false)));
        }
    };
    for (k, op) in ops.iter().enumerate() {
        if !sinks(op) {
            place(k, &mut order);
        }
    }
    for k in 0..ops.len() {
        place(k, &mut order);
    }
    (!order.iter().enumerate().all(|(i, &k)| i == k)).then(|| order.into_iter().map(|k| ops[k].clone()).collect())
}

/// Whether the target lowers row blocks at all.
fn has_runs(e: &Emitter) -> bool {
    !e.cg.target.parallel_outer() && e.cg.tile_matmuls
}

/// The runs of `ops` (a block of `f` yielding `outputs`) that take the row-block form. Rows
/// are along the first dim, or (when no run over it takes the form: rows too long for a
/// block) the first two or more dims of 3-D and larger arrays: a layernorm over the features
/// of [batch, sequence, features] activations, a softmax over the keys of [batch, heads,
/// queries, keys] scores.
pub fn runs(e: &Emitter, f: &Func, ops: &[Op], outputs: &[Value]) -> Vec<Run> {
    if !has_runs(e) {
        return Vec::new();
    }
    let mut found = Vec::new();
    let mut i = 0;
    while i < ops.len() {
        let Some(shape) = ops[i].results.iter().map(|v| f.ty(*v)).find(|t| t.rank() > 0).map(|t| t.shape.clone()) else {
            i += 1;
            continue;
        };
        let mut next = i + 1;
        let mut run = None;
        for k in 1..=shape.len() {
            let lead = &shape[..k];
            // The longest run from op i: each op row-local over `lead`, reading the run's
            // own values by their rows.
            let mut inner: Vec<Value> = Vec::new();
            let mut end = i;
            while end < ops.len() {
                let op = &ops[end];
                let ok = reads(f, op, lead).is_some_and(|r| op.operands.iter().zip(&r).all(|(v, &sliced)| sliced || !inner.contains(v)));
                if !ok {
                    break;
                }
                // A splat constant is made in every block: ops may read it whole.
                if !matches!(op.kind, OpKind::Constant(_)) {
                    inner.extend(&op.results);
                }
                end += 1;
            }
            if k == 1 {
                next = end.max(i + 1);
            }
            run = (end > i + 1 || (end == i + 1 && is_loop(&ops[i]))).then(|| plan(e, f, ops, outputs, i, end, lead)).flatten();
            if run.is_some() {
                break;
            }
        }
        match run {
            Some(run) => {
                i = run.end;
                found.push(run);
            }
            None => i = next,
        }
    }
    found
}

/// The run `ops[start..end]` on the rows `lead` spans, if it takes the row-block form: a
/// reduction in it, its sliced inputs [`ROW_BLOCK_MIN_BYTES`] or more, a block size that
/// divides the last leading dim (blocks of [`MIN_BLOCK_BYTES`] to [`BLOCK_BYTES`] of a sliced input's rows, at least one
/// block per thread, rows of [`MIN_ROW_BYTES`] or more),
/// values used after it, and the copy in block shapes passes every op's shape rule.
fn plan(e: &Emitter, f: &Func, ops: &[Op], outputs: &[Value], start: usize, end: usize, lead: &[i64]) -> Option<Run> {
    let k = lead.len();
    let looped = ops[start..end].iter().any(is_loop);
    if !looped && !ops[start..end].iter().any(|op| matches!(op.kind, OpKind::Reduce(ReduceOp::Reduce { .. }))) {
        return None;
    }
    // The run's ops, after copies of the broadcasts, reshapes and splats of the block that
    // make its sliced inputs (computed again in each block rather than materialised for it:
    // the block lowers them in place, read by their consumers).
    let mut taken: Vec<usize> = (start..end).collect();
    let (defined, inputs) = loop {
        let run: Vec<&Op> = taken.iter().map(|&k| &ops[k]).collect();
        let defined: Vec<Value> = run.iter().flat_map(|op| op.results.iter().copied()).collect();
        let mut inputs: Vec<(Value, bool)> = Vec::new();
        for op in &run {
            for (v, sliced) in op.operands.iter().zip(reads(f, op, lead)?) {
                if defined.contains(v) {
                    continue;
                }
                match inputs.iter().find(|(w, _)| w == v) {
                    Some((_, s)) if *s != sliced => return None,
                    Some(_) => {}
                    None => inputs.push((*v, sliced)),
                }
            }
        }
        let cheap = |k: &usize| {
            let op = &ops[*k];
            let kind = matches!(op.kind, OpKind::Layout(LayoutOp::BroadcastInDim { .. } | LayoutOp::Reshape { .. } | LayoutOp::StopGradient {}) | OpKind::Constant(_));
            kind && inputs.iter().any(|(v, s)| *s && op.results.contains(v)) && reads(f, op, lead).is_some()
        };
        match (0..start).rev().find(cheap) {
            Some(k) => {
                taken.push(k);
                taken.sort_unstable();
            }
            None => break (defined, inputs),
        }
    };
    let run: Vec<&Op> = taken.iter().map(|&k| &ops[k]).collect();
    let bytes: u64 = inputs.iter().filter(|(_, s)| *s).map(|(v, _)| f.ty(*v).checked_byte_size().map_or(u64::MAX, |b| b as u64)).fold(0, u64::saturating_add);
    if bytes < if looped { LOOP_BLOCK_MIN_BYTES } else { ROW_BLOCK_MIN_BYTES } {
        return None;
    }
    let later = |v: &Value| outputs.contains(v) || ops[end..].iter().any(|op| uses(op, *v));
    let own: Vec<Value> = ops[start..end].iter().flat_map(|op| op.results.iter().copied()).collect();
    let mut outs: Vec<Value> = own.iter().copied().filter(later).collect();
    // A broadcast, reshape or splat of the run used after it is lowered again after the run
    // (`again`), from the run's outputs: later lowerings read through such ops to their
    // sources, which must be values of the block.
    let mut again: Vec<usize> = Vec::new();
    while let Some(k) = (start..end).find(|&k| !matches!(ops[k].kind, OpKind::Elementwise(_) | OpKind::Reduce(_) | OpKind::Control(_)) && ops[k].results.iter().any(|v| outs.contains(v))) {
        outs.retain(|v| !ops[k].results.contains(v));
        again.push(k);
        for v in &ops[k].operands {
            if own.contains(v) && !outs.contains(v) {
                outs.push(*v);
            }
        }
    }
    again.sort_unstable();
    // (A loop's 0-d results, its counter, are no rows to insert.)
    if outs.is_empty() || outs.iter().any(|v| !f.ty(*v).shape.starts_with(lead)) {
        return None;
    }
    // (A loop's 0-d values, its counter, have no rows.)
    let row_bytes = defined.iter().chain(inputs.iter().filter(|(_, s)| *s).map(|(v, _)| v)).filter(|v| f.ty(**v).rank() > 0).map(|v| {
        let t = f.ty(*v);
        quabla_dialect::size::saturating_product(t.shape.get(k..).unwrap_or(&[]).iter().copied()).saturating_mul(t.dtype.size() as i64)
    });
    let row_bytes = row_bytes.max()?.max(1);
    // (Short rows cost loops of a few elements per reduction; a loop's iterations are
    // elementwise.)
    if row_bytes < MIN_ROW_BYTES && !looped {
        return None;
    }
    let threads = e.threads().max(1);
    // The largest divisor of the last leading dim within BLOCK_BYTES (at most BLOCK_BYTES /
    // MIN_ROW_BYTES candidates, whatever the row count), with a block per thread.
    let (rows, outer) = (lead[k - 1], quabla_dialect::size::saturating_product(lead[..k - 1].iter().copied()));
    let block = (1..=rows.min(BLOCK_BYTES / row_bytes)).rev().find(|&b| rows % b == 0 && (rows / b).saturating_mul(outer) >= threads)?;
    // Blocks of a few short rows (a prime row count) would cost more in loop overhead than
    // they save: op by op then.
    if block.saturating_mul(row_bytes) < MIN_BLOCK_BYTES {
        return None;
    }
    let g = block_func(f, &run, &inputs, &outs, k, block)?;
    Some(Run { start, end, lead: lead.to_vec(), block, inputs, outputs: outs, again, g })
}

/// Whether `op` (or an op of its regions) reads `v`.
fn uses(op: &Op, v: Value) -> bool {
    let mut hit = false;
    quabla_dialect::walk_ops(std::slice::from_ref(op), &mut |o| hit |= o.operands.contains(&v));
    hit
}

/// `shape` (whose first `k` dims are the leading ones) in a block of `block` rows: one along
/// the leading dims before the last.
fn block_shape(shape: &[i64], k: usize, block: i64) -> Vec<i64> {
    let mut s = shape.to_vec();
    for (j, n) in s.iter_mut().enumerate().take(k) {
        *n = if j + 1 == k { block } else { 1 };
    }
    s
}

/// `t` in a block of `block` rows ([`block_shape`]).
fn block_type(t: &TensorType, k: usize, block: i64) -> TensorType {
    TensorType::new(t.dtype, block_shape(&t.shape, k, block))
}

/// The run's ops on blocks of `block` rows, as a function of the run's inputs (sliced ones
/// of `block` rows) yielding its outputs; None if an op's shape rule rejects its block form.
fn block_func(f: &Func, run: &[&Op], inputs: &[(Value, bool)], outs: &[Value], k: usize, block: i64) -> Option<Func> {
    let types: Vec<TensorType> = inputs.iter().map(|(v, s)| if *s { block_type(f.ty(*v), k, block) } else { f.ty(*v).clone() }).collect();
    let mut g = Func::new("row_block", &types);
    let mut map: HashMap<Value, Value> = inputs.iter().map(|(v, _)| *v).zip(g.params.iter().copied()).collect();
    for op in run.iter().copied() {
        let operands: Vec<Value> = op.operands.iter().map(|v| map.get(v).copied()).collect::<Option<_>>()?;
        let bodies: Vec<Body> = op.regions.iter().map(|r| block_body(&mut g, f, r, k, block)).collect::<Option<_>>()?;
        let rs = g.push_with_regions(block_kind(&op.kind, k, block), &operands, bodies, op.loc.clone()).ok()?;
        map.extend(op.results.iter().copied().zip(rs));
    }
    g.outputs = outs.iter().map(|v| map[v]).collect();
    Some(g)
}

/// `kind` on blocks of `block` rows: shapes in reshapes, broadcasts, slices and constants.
fn block_kind(kind: &OpKind, k: usize, block: i64) -> OpKind {
    match kind {
        OpKind::Layout(LayoutOp::Reshape { shape }) => OpKind::Layout(LayoutOp::Reshape { shape: block_shape(shape, k, block) }),
        OpKind::Layout(LayoutOp::BroadcastInDim { dims, shape }) => OpKind::Layout(LayoutOp::BroadcastInDim { dims: dims.clone(), shape: block_shape(shape, k, block) }),
        OpKind::Slicing(SlicingOp::Slice { start_indices, limit_indices, strides }) => OpKind::Slicing(SlicingOp::Slice { start_indices: start_indices.clone(), limit_indices: block_shape(limit_indices, k, block), strides: strides.clone() }),
        OpKind::Constant(ConstantOp::Constant { value }) => {
            let t = block_type(&value.ty, k, block);
            let n = t.num_elements();
            let bytes = value.elem_bytes(0).repeat(n);
            OpKind::Constant(ConstantOp::Constant { value: Literal::from_bytes(t, bytes) })
        }
        k => k.clone(),
    }
}

/// A region body of a loop ([`loop_reads`]) on blocks of `block` rows, in `g`: its values of
/// rows in block shapes, its 0-d values as they are.
fn block_body(g: &mut Func, f: &Func, body: &Body, k: usize, block: i64) -> Option<Body> {
    let types: Vec<TensorType> = body.params.iter().map(|p| f.ty(*p)).map(|t| if t.rank() == 0 { t.clone() } else { block_type(t, k, block) }).collect();
    let mut nb = g.new_body(&types);
    let mut map: HashMap<Value, Value> = body.params.iter().copied().zip(nb.params.iter().copied()).collect();
    for op in &body.ops {
        if !op.regions.is_empty() {
            return None;
        }
        let operands: Vec<Value> = op.operands.iter().map(|v| map.get(v).copied()).collect::<Option<_>>()?;
        let rs = g.push_into(&mut nb, block_kind(&op.kind, k, block), &operands, vec![], op.loc.clone()).ok()?;
        map.extend(op.results.iter().copied().zip(rs));
    }
    nb.outputs = body.outputs.iter().map(|v| map.get(v).copied()).collect::<Option<_>>()?;
    Some(nb)
}

/// Whether `op` is a `while` loop (a run may hold one: [`loop_reads`]).
fn is_loop(op: &Op) -> bool {
    matches!(op.kind, OpKind::Control(ControlOp::While {}))
}

/// Writes `run` (of the block being lowered by `e`, in `f`) as its `scf.forall` over blocks
/// of rows and binds its outputs. An output that is a destination-passing output of the
/// function is inserted into the output's buffer.
pub fn lower_run(e: &mut Emitter, cx: &Ctx, f: &Func, run: &Run) -> Result<(), LowerError> {
    let (b, k) = (run.block, run.lead.len());
    // Blocks in row-major order over the leading dims, the last one counted in blocks.
    let mut counts = run.lead.clone();
    counts[k - 1] /= b;
    let n = quabla_dialect::size::saturating_product(counts.iter().copied());
    let inits: Vec<String> = run
        .outputs
        .iter()
        .map(|v| {
            let t = f.ty(*v);
            match e.out_buffer(*v) {
                Some(out) => e.op(format!("bufferization.to_tensor {out} restrict writable : {} to {t}", memref(t))),
                None => e.empty(t),
            }
        })
        .collect();
    let (iv, res) = (e.fresh(), e.fresh());
    let shared: Vec<String> = run.outputs.iter().map(|_| e.fresh()).collect();
    let types: Vec<String> = run.outputs.iter().map(|v| f.ty(*v).to_string()).collect();
    let pairs: Vec<String> = shared.iter().zip(&inits).map(|(s, i)| format!("{s} = {i}")).collect();
    let nout = run.outputs.len();
    let head = if nout == 1 { res.clone() } else { format!("{res}:{nout}") };
    e.raw_line(format!("{head} = scf.forall ({iv}) in ({n}) shared_outs({}) -> ({}) {{", pairs.join(", "), types.join(", ")));
    e.depth += 1;
    // The block's offsets along the leading dims: iv's digits in `counts`, the last times b.
    let mut lead_offs = vec![String::new(); k];
    let mut rest = iv.clone();
    for j in (0..k).rev() {
        let digit = if j == 0 {
            rest.clone()
        } else {
            let c = e.index(counts[j]);
            let d = e.op(format!("arith.remui {rest}, {c} : index"));
            rest = e.op(format!("arith.divui {rest}, {c} : index"));
            d
        };
        lead_offs[j] = if j + 1 == k {
            let cb = e.index(b);
            e.op(format!("arith.muli {digit}, {cb} : index"))
        } else {
            digit
        };
    }
    let slice = |t: &TensorType| {
        let offs: Vec<String> = lead_offs.iter().cloned().chain(std::iter::repeat_n("0".to_string(), t.rank() - k)).collect();
        format!("[{}] [{}] [{}]", offs.join(", "), list(&block_type(t, k, b).shape), vec!["1"; t.rank()].join(", "))
    };
    let mut names = Vec::new();
    for (v, sliced) in &run.inputs {
        let (x, t) = (e.name(*v), f.ty(*v));
        names.push(if *sliced { e.op(format!("tensor.extract_slice {x}{} : {t} to {}", slice(t), block_type(t, k, b))) } else { x });
    }
    // The run's ops, lowered on block shapes by an emitter of their own (one thread: the
    // blocks are split between the threads) that continues this one's names.
    let mut cg = e.cg;
    cg.threads = 1;
    let mut inner = Emitter::new(&run.g, cg, (std::mem::take(&mut e.tiles), false, std::mem::take(&mut e.gemms)));
    inner.next = e.next;
    inner.blocks = true;
    inner.depth = e.depth;
    for (p, name) in run.g.params.iter().zip(names) {
        inner.alias(*p, name);
    }
    lower_block(&mut inner, cx, &run.g, &run.g.ops, &run.g.outputs)?;
    let results: Vec<String> = run.g.outputs.iter().map(|w| inner.name(*w)).collect();
    e.out.push_str(&inner.out);
    e.next = inner.next;
    e.tiles = inner.tiles;
    e.gemms = inner.gemms;
    let inserts: Vec<String> = run.outputs.iter().zip(&results).zip(&shared).map(|((v, r), s)| {
        let t = f.ty(*v);
        format!("{r} into {s}{} : {} into {t}", slice(t), block_type(t, k, b))
    }).collect();
    super::dot::close_forall(e, &inserts, &format!("}} {{{BLOCKS_ATTR}}}"));
    for (i, v) in run.outputs.iter().enumerate() {
        e.alias(*v, if nout == 1 { res.clone() } else { format!("{res}#{i}") });
    }
    e.par |= e.threads() > 1;
    Ok(())
}

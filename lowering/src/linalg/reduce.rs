//! Lowering of reductions: a `linalg.generic` with reduction iterators over the reduced dims
//! into an init filled with the identity (sum 0, prod 1, max -inf/MIN/false, min
//! +inf/MAX/true), combining with the elementwise max/min (NaN-propagating for floats,
//! or/and for i1); float sums and products carry `fastmath<reassoc>` (their order is
//! unspecified), so LLVM vectorizes them. `argmax`/`argmin` carry (value, index) outputs: a candidate replaces the
//! best when it is strictly better, or NaN while the best is not; so the first extremal index
//! wins and NaN counts as maximal for argmax and minimal for argmin (the first NaN wins).
//!
//! On a GPU target (`Target::parallel_outer`) the nest puts the kept dims' loops first, one
//! thread per output element; a reduction with few outputs over many elements (at most
//! `SPLIT_MAX_KEPT` outputs of at least `SPLIT_MIN_REDUCED` elements) is split instead: stage
//! one computes `P` partials per output (`[P, kept dims...]`, about `SPLIT_THREADS` threads,
//! `P <= SPLIT_MAX_PARTIALS`), partial `p` reducing elements `p, p + P, p + 2P, ...` of the
//! flattened reduced dims (interleaved, so the threads of a warp read consecutive elements:
//! coalesced loads; read through an affine map, so a fused producer stays fused; the
//! identity past the end); stage two is the nest over the partials' first dim.
//! argmax/argmin partials are (value, index) pairs, each the first extremal element of its
//! subset; stage two breaks ties between equal values (or two NaNs) by the smaller index, so
//! the first index still wins. No shared memory: stage two reduces each output's `P` partials
//! on one thread.
//!
//! On the CPU with several threads a large reduction whose kept loops give the threads
//! nothing to share, or only short runs of memory (column sums), is split along a reduced dim
//! instead ([`thread_split`]): contiguous parts, each reduced by one thread into partials,
//! then a nest over the partials.
use quabla_dialect::{ArgOp, BinaryOp, DType, Func, Op, ReduceOp, Reducer, TensorType};

use super::reduce_window::row_strides;
use super::elementwise::{binary, text_body_cost};
use super::{float_lit, generic, identity, int_max, int_min, layout, list, map, parallel_candidate, unfused_generic, Emitter, Iter, Operand};
use crate::LowerError;

/// The identity of `op` on dtype `d`, as MLIR text.
fn identity_value(op: Reducer, d: DType) -> String {
    match (op, d.is_float()) {
        (Reducer::Sum, true) => "0.0".into(),
        (Reducer::Sum, false) => "0".into(),
        (Reducer::Prod, true) => "1.0".into(),
        (Reducer::Prod, false) => "1".into(),
        (Reducer::Max, true) => float_lit(d, f64::NEG_INFINITY),
        (Reducer::Max, false) => int_min(d).into(),
        (Reducer::Min, true) => float_lit(d, f64::INFINITY),
        (Reducer::Min, false) => int_max(d).into(),
    }
}

fn combine(op: Reducer) -> BinaryOp {
    match op {
        Reducer::Sum => BinaryOp::Add,
        Reducer::Prod => BinaryOp::Mul,
        Reducer::Max => BinaryOp::Max,
        Reducer::Min => BinaryOp::Min,
    }
}

/// The loop nest reducing some dims of an operand: its input and output maps, the iterator
/// kinds, the loop of each operand dim, and whether the output is computed as `[1]` (a unit
/// parallel loop around a full reduction, for targets that need a parallel loop outermost).
struct Nest {
    imap: String,
    omap: String,
    iters: Vec<Iter>,
    loop_of: Vec<usize>,
    unit: bool,
}

/// The nest reducing `dims` of a rank-`r` operand. In operand order (one loop per operand
/// dim, the CPU's choice: contiguous inner loops), or with `parallel_outer` the kept dims'
/// loops first, then the reduced ones (a GPU target maps the parallel loops to threads, each
/// thread reducing one output element), with a unit parallel loop when nothing is kept.
fn reduction_nest(r: usize, dims: &[i64], parallel_outer: bool) -> Nest {
    let reduced = |i: usize| dims.contains(&(i as i64));
    if !parallel_outer {
        let kept: Vec<String> = (0..r).filter(|&i| !reduced(i)).map(|i| format!("d{i}")).collect();
        let iters = (0..r).map(|i| if reduced(i) { Iter::Reduction } else { Iter::Parallel }).collect();
        return Nest { imap: identity(r), omap: map(r, &kept), iters, loop_of: (0..r).collect(), unit: false };
    }
    let kept: Vec<usize> = (0..r).filter(|&i| !reduced(i)).collect();
    let red: Vec<usize> = (0..r).filter(|&i| reduced(i)).collect();
    let unit = kept.is_empty();
    let off = unit as usize;
    let n = r + off;
    let mut loop_of = vec![0; r];
    for (j, &i) in kept.iter().chain(&red).enumerate() {
        loop_of[i] = j + off;
    }
    let ins: Vec<String> = (0..r).map(|i| format!("d{}", loop_of[i])).collect();
    let outs: Vec<String> = if unit { vec!["d0".into()] } else { (0..kept.len()).map(|j| format!("d{j}")).collect() };
    let iters = std::iter::repeat_n(Iter::Parallel, off + kept.len()).chain(std::iter::repeat_n(Iter::Reduction, red.len())).collect();
    Nest { imap: map(n, &ins), omap: map(n, &outs), iters, loop_of, unit }
}

impl Nest {
    /// The type an output of type `out` is computed as (`[1]` for a unit nest).
    fn out_type(&self, out: &TensorType) -> TensorType {
        if self.unit {
            TensorType::new(out.dtype, [1])
        } else {
            out.clone()
        }
    }

    /// Result `r` (computed as [`Nest::out_type`]) as the op's 0-d result `out`.
    fn result(&self, e: &mut Emitter, r: String, out: &TensorType) -> String {
        if self.unit {
            let one = self.out_type(out);
            e.op(format!("tensor.collapse_shape {r} [] : {one} into {out}"))
        } else {
            r
        }
    }
}

/// Split reductions (targets with [`crate::target::Target::parallel_outer`], the GPU; never
/// the CPU): a reduction with at most `SPLIT_MAX_KEPT` outputs over at least
/// `SPLIT_MIN_REDUCED` elements each would leave most of a GPU idle with one thread per
/// output, so it runs as two kernels: partials, then the per-output nest over them.
const SPLIT_MIN_REDUCED: i64 = 256;
const SPLIT_MAX_KEPT: i64 = 2048;
/// The threads (outputs x partials) stage one aims for: enough to fill a GPU.
const SPLIT_THREADS: i64 = 65536;
/// At most this many partials per output (stage two reduces them on one thread each).
const SPLIT_MAX_PARTIALS: i64 = 1024;
/// Each partial reduces at least this many elements.
const SPLIT_MIN_CHUNK: i64 = 16;

/// How a reduction is split: `parts` partials per output, partial `p` over elements
/// `p + c * parts` (`c < chunk`) of the flattened reduced dims, `(parts - 1) * chunk < R <=
/// parts * chunk` (every partial has an element; the last round of `c` may run past `R`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Split {
    parts: i64,
    chunk: i64,
}

/// The split of a reduction with `kept` outputs of `reduced` elements each, or `None` to
/// reduce each output on one thread.
fn split_sizes(kept: i64, reduced: i64) -> Option<Split> {
    if !(1..=SPLIT_MAX_KEPT).contains(&kept) || reduced < SPLIT_MIN_REDUCED {
        return None;
    }
    let parts = (SPLIT_THREADS / kept).min(SPLIT_MAX_PARTIALS).min(reduced / SPLIT_MIN_CHUNK);
    if parts < 2 {
        return None;
    }
    // Both positive (`i64::div_ceil` is unstable).
    let chunk = (reduced + parts - 1) / parts;
    Some(Split { parts: (reduced + chunk - 1) / chunk, chunk })
}

/// The split of the reduction of `dims` of `xt` on this target ([`split_sizes`]; `None` on
/// the CPU).
fn split(e: &Emitter, xt: &TensorType, dims: &[i64]) -> Option<Split> {
    if !e.cg.target.parallel_outer() {
        return None;
    }
    let (mut kept, mut reduced) = (1i64, 1i64);
    for (i, &n) in xt.shape.iter().enumerate() {
        if dims.contains(&(i as i64)) {
            reduced = reduced.saturating_mul(n);
        } else {
            kept = kept.saturating_mul(n);
        }
    }
    split_sizes(kept, reduced)
}

/// The shape of split `s`'s partials: `s.parts`, then the kept dims of `xt`. Partials
/// first: the GPU's 32 x 8 tiles put 32 threads along them (few idle threads when few dims
/// are kept), and stage two's threads (one per output) read consecutive partials.
fn partial_shape(xt: &TensorType, dims: &[i64], s: Split) -> Vec<i64> {
    std::iter::once(s.parts).chain((0..xt.rank()).filter(|i| !dims.contains(&(*i as i64))).map(|i| xt.shape[i])).collect()
}

/// The map of `x` (type `xt`) over stage one's loops (partial, kept dims, chunk element) of
/// split `s` of `dims`: element `j = c * parts + p` of the flattened (row-major) reduced dims,
/// taken modulo their size `R` so that the last round stays in bounds (its elements past the
/// end wrap around to the start and are replaced by the identity). Affine, so
/// upstream elementwise fusion still fuses a producer into stage one, and the divisions by
/// constants are strength-reduced in the kernel.
fn partial_map(xt: &TensorType, dims: &[i64], s: Split) -> String {
    let r = xt.rank();
    let red: Vec<usize> = (0..r).filter(|i| dims.contains(&(*i as i64))).collect();
    let red_shape: Vec<i64> = red.iter().map(|&i| xt.shape[i]).collect();
    let strides = row_strides(&red_shape);
    let total = quabla_dialect::size::saturating_product(red_shape.iter().copied());
    let n = r - red.len() + 2;
    let j = if s.parts * s.chunk == total { format!("d{} * {} + d0", n - 1, s.parts) } else { format!("(d{} * {} + d0) mod {total}", n - 1, s.parts) };
    let mut kept = 0;
    let exprs: Vec<String> = (0..r)
        .map(|i| match red.iter().position(|&k| k == i) {
            None => {
                kept += 1;
                format!("d{kept}")
            }
            Some(q) => {
                let e = if strides[q] > 1 { format!("({j}) floordiv {}", strides[q]) } else { j.clone() };
                if q > 0 {
                    format!("({e}) mod {}", red_shape[q])
                } else {
                    e
                }
            }
        })
        .collect();
    map(n, &exprs)
}

/// Stage one of split `s` of the reduction of `dims` of `x`: one generic over (partial, kept
/// dims, chunk element), parallel but for the last loop, into `outs` (of
/// [`partial_shape`], filled with the identity), reading `x` through [`partial_map`], with a
/// chunk-shaped `tensor.empty` operand giving the chunk loop its extent. Partial `p` visits
/// elements `j = c * parts + p` of the flattened reduced dims in order; `body` gets the
/// element (`ident` when `j` is past the end), `j` (`index`) and the accumulators, and
/// returns their new values.
#[allow(clippy::too_many_arguments)]
fn split_partials(e: &mut Emitter, x: &str, xt: &TensorType, dims: &[i64], s: Split, ident: &str, outs: &[(String, TensorType)], body: impl FnOnce(&mut Emitter, &str, &str, &[String]) -> Vec<String>) -> Vec<String> {
    let d = xt.dtype;
    let total = quabla_dialect::size::saturating_product(dims.iter().map(|&i| xt.shape[i as usize]));
    let nk = xt.rank() - dims.len();
    let n = nk + 2;
    let ct = TensorType::new(d, [s.chunk]);
    let chunk = e.empty(&ct);
    let ins = [Operand::new(x, xt, partial_map(xt, dims, s)), Operand::new(chunk, &ct, map(n, &[format!("d{}", nk + 1)]))];
    let omap = map(n, &(0..=nk).map(|i| format!("d{i}")).collect::<Vec<_>>());
    let outs: Vec<Operand> = outs.iter().map(|(name, t)| Operand::new(name.clone(), t, omap.clone())).collect();
    let iters: Vec<Iter> = std::iter::repeat_n(Iter::Parallel, nk + 1).chain([Iter::Reduction]).collect();
    generic(e, &iters, &ins, &outs, |e, a| {
        let p = e.op("linalg.index 0 : index");
        let c = e.op(format!("linalg.index {} : index", nk + 1));
        let w = e.index(s.parts);
        let cw = e.op(format!("arith.muli {c}, {w} : index"));
        let j = e.op(format!("arith.addi {cw}, {p} : index"));
        let size = e.index(total);
        let inb = e.op(format!("arith.cmpi ult, {j}, {size} : index"));
        let v = e.op(format!("arith.select {inb}, {}, {ident} : {d}", a[0]));
        body(e, &v, &j, &a[2..])
    })
}

/// `acc` combined with `x` by `op` (on dtype `d`).
fn combine_step(e: &mut Emitter, op: Reducer, d: DType, acc: &str, x: &str) -> String {
    match op {
        // Float sums and products may be reassociated (their order is unspecified), which
        // lets LLVM's loop vectorizer split them into vector lanes.
        Reducer::Sum if d.is_float() => e.op(format!("arith.addf {acc}, {x} fastmath<reassoc> : {d}")),
        Reducer::Prod if d.is_float() => e.op(format!("arith.mulf {acc}, {x} fastmath<reassoc> : {d}")),
        _ => binary(e, combine(op), d, acc, x),
    }
}

/// Reduces `dims` of `x` (of type `xt`) with `op` into `out` ([`reduction_nest`]: on a GPU
/// target one thread per output element); `c` is the identity scalar.
fn reduce_nest(e: &mut Emitter, op: Reducer, x: &str, xt: &TensorType, dims: &[i64], out: &TensorType, c: &str) -> String {
    let d = xt.dtype;
    let nest = reduction_nest(xt.rank(), dims, e.cg.target.parallel_outer());
    let ot = nest.out_type(out);
    let ins = [Operand::new(x, xt, nest.imap.clone())];
    if d == DType::I1 && matches!(op, Reducer::Max | Reducer::Min) && !e.cg.target.parallel_outer() {
        // `any`/`all` on the CPU: an i8 accumulator (the byte of an i1 in memory), so the
        // loop is the integer or-reduction LLVM vectorizes (an i1 one is loaded, truncated
        // and extended every element; an i8 and-reduction is not vectorized either): all(x)
        // as not any(not x). 1e6 elements: any 1033 -> 141 us, all 648 -> 130-142 us.
        let all = op == Reducer::Min;
        let wt = ot.with_dtype(DType::U8);
        let z = e.scalar(DType::U8, "0");
        let init = e.filled(&wt, &z);
        let r = generic(e, &nest.iters, &ins, &[Operand::new(init, &wt, nest.omap.clone())], |e, a| {
            let x = if all {
                let t = e.scalar(DType::I1, "true");
                e.op(format!("arith.xori {}, {t} : i1", a[0]))
            } else {
                a[0].clone()
            };
            let b = e.op(format!("arith.extui {x} : i1 to i8"));
            vec![e.op(format!("arith.ori {}, {b} : i8", a[1]))]
        })
        .remove(0);
        let bt = e.empty(&ot);
        let id_map = identity(ot.rank());
        let t = generic(e, &vec![Iter::Parallel; ot.rank()], &[Operand::new(r, &wt, id_map.clone())], &[Operand::new(bt, &ot, id_map)], |e, a| {
            let t = e.op(format!("arith.trunci {} : i8 to i1", a[0]));
            vec![if all {
                let one = e.scalar(DType::I1, "true");
                e.op(format!("arith.xori {t}, {one} : i1"))
            } else {
                t
            }]
        })
        .remove(0);
        return nest.result(e, t, out);
    }
    let init = e.filled(&ot, c);
    let r = generic(e, &nest.iters, &ins, &[Operand::new(init, &ot, nest.omap.clone())], |e, a| vec![combine_step(e, op, d, &a[1], &a[0])]).remove(0);
    nest.result(e, r, out)
}

/// The most contiguous parts a CPU reduction is split into ([`thread_split`]).
const THREAD_SPLIT_MAX_PARTS: i64 = 64;

/// Contiguous bytes per row below which threads that split a reduction's kept loop read
/// too little at a time ([`thread_split`]). Measured (f32 sums over dim 0, two threads, Zen
/// 4, 2026-12-05): [4096, 4096] with the columns split (8 KB per row and thread) 2460 us,
/// with the rows split 1347; [100000, 64] (128 bytes) 581 -> 271 us; [64, 100000] (200 KB)
/// 436 us against 802 with the rows split (its partials are as large as the operand).
const THREAD_SPLIT_RUN_BYTES: i64 = 64 << 10;

/// The CPU's split of a reduction between the threads along a reduced dim: `s` of extent
/// `n` into `parts` contiguous parts of `n / parts` (`parts` a divisor of `n`; loops as if
/// the operand were `[.., parts, n / parts, ..]`: [`thread_partials`]); the parts' loop is
/// parallel, so the executor's tagging splits it between the threads, each part reducing a
/// contiguous block into its own partials. Taken when the work would run on several threads
/// ([`crate::target::Target::parallel_loop`]) and the kept loops give them nothing to share
/// (a full reduction, or fewer outputs than threads along every kept loop), or when the kept
/// loop they would share is inside a reduced dim and leaves each thread runs of fewer than
/// [`THREAD_SPLIT_RUN_BYTES`] (a column sum: the rows are split instead). The partials
/// (`parts` times the kept elements) stay within a sixteenth of the operand. Among the
/// candidate dims (outside that kept loop) and divisors from 2 to
/// [`THREAD_SPLIT_MAX_PARTS`], those that balance the threads best, then the divisor nearest
/// 16, then the outermost dim. None on one thread and on GPU targets.
fn thread_split(e: &Emitter, xt: &TensorType, dims: &[i64]) -> Option<(usize, i64)> {
    use quabla_dialect::size::saturating_product;
    let threads = e.threads();
    if threads <= 1 || e.cg.target.parallel_outer() || xt.dtype == DType::I1 {
        return None;
    }
    // One arith op per element whatever the reducer, and the element's read.
    let cost = super::elementwise::op_cost("arith.addf") + super::elementwise::MEMORY_COST;
    let parallel: Vec<bool> = (0..xt.rank()).map(|i| !dims.contains(&(i as i64))).collect();
    let outside = match e.cg.target.parallel_loop(&parallel, &xt.shape, threads, cost) {
        None => xt.rank(),
        Some(k) => {
            let run = saturating_product(xt.shape[k + 1..].iter().copied()).saturating_mul(xt.shape[k] / threads).saturating_mul(xt.dtype.size() as i64);
            if run >= THREAD_SPLIT_RUN_BYTES {
                return None;
            }
            k
        }
    };
    let total = saturating_product(xt.shape.iter().copied());
    let kept = saturating_product((0..xt.rank()).filter(|&i| parallel[i]).map(|i| xt.shape[i]));
    let candidates = dims.iter().filter(|&&d| (d as usize) < outside).flat_map(|&d| {
        let (s, n) = (d as usize, xt.shape[d as usize]);
        (2..=THREAD_SPLIT_MAX_PARTS.min(n / 2)).filter(move |&parts| n % parts == 0 && parts.saturating_mul(kept).saturating_mul(16) <= total).map(move |parts| (s, parts))
    });
    // Per mille of the threads' time the parts keep busy, inverted (lower is better), then
    // the distance to 16 parts, then the dim; the first of equals.
    // Parts within 8 of 16 whose chunks give [`LANES_MAX`] lanes ([`unroll`]) come first:
    // 20 parts of 100000 rows (8 lanes) rather than 16 (2 lanes).
    let lanes = |s: usize, parts: i64| (parts - 16).abs() <= 8 && (xt.shape[s] / parts) % LANES_MAX == 0;
    let (s, parts) = candidates.min_by_key(|&(s, parts)| (1000 * ((parts + threads - 1) / threads * threads) / parts, !lanes(s, parts), (parts - 16).abs(), s))?;
    let (shape, parallel) = split_dim(&xt.shape, &parallel, s, parts);
    e.cg.target.parallel_loop(&parallel, &shape, threads, cost)?;
    Some((s, parts))
}

/// `shape` (and which of its dims are `parallel`) with dim `s` split into `parts` (parallel)
/// and `shape[s] / parts` (as dim `s` was).
fn split_dim(shape: &[i64], parallel: &[bool], s: usize, parts: i64) -> (Vec<i64>, Vec<bool>) {
    let mut sh = shape.to_vec();
    sh.splice(s..=s, [parts, shape[s] / parts]);
    let mut par = parallel.to_vec();
    par.insert(s, true);
    (sh, par)
}

/// Elements of the split dim `s` (parts of `chunk`) each step of [`thread_partials`] reads
/// (1, 2 or 4, each through an operand of its own, combined pairwise before the partial):
/// more than one when a short run of at most [`UNROLL_MAX_RUN_BYTES`] of kept elements
/// follows it. In a column reduction of few columns the partials' row is a few vectors, loaded
/// and stored every row, and each row's combine waits for the previous row's store. Measured
/// (Zen 4, two threads, 2026-12-05, [100000, 64] f32 over dim 0, JAX alongside): max 388-404
/// -> 233-259 us (JAX 290-356), sum 278-285 -> 157-195 (288-352), min 401-405 -> 231-233.
/// Only for an operand read in place ([`read_in_place`]): upstream fusion puts a producer
/// into a consumer only where it is the producer's one use, so the `u` operands would
/// materialize it (sum(x * y, 0) 508 -> 1438 us).
fn unroll(xt: &TensorType, dims: &[i64], s: usize, chunk: i64, most: i64) -> i64 {
    use quabla_dialect::size::saturating_product;
    let inner = &xt.shape[s + 1..];
    let kept_inner = (s + 1..xt.rank()).all(|i| !dims.contains(&(i as i64)));
    let run = saturating_product(inner.iter().copied()).saturating_mul(xt.dtype.size() as i64);
    if inner.is_empty() || !kept_inner || run > UNROLL_MAX_RUN_BYTES {
        return 1;
    }
    [8, 4, 2].into_iter().find(|&u| u <= most && chunk % u == 0).unwrap_or(1)
}

/// The most elements of the split dim one step of [`thread_partials`] reads through operands
/// of their own (an operand read in place, [`unroll`]).
const UNROLL_MAX: i64 = 4;

/// The most lanes [`thread_partials`] gives a computed operand's partials: each lane's row of
/// partials is a chain of vector adds through memory, one step per row of its lane, so more
/// lanes keep more adds in flight. Measured (Zen 4, two threads, 2026-12-07, JAX alongside):
/// the sum of `x * x` over 100000 x 16 f32 with 4 lanes 67 us, with 8 50 (JAX 80).
const LANES_MAX: i64 = 8;

/// The longest run of kept elements (16 AVX-512 vectors) [`unroll`] reads several rows of.
const UNROLL_MAX_RUN_BYTES: i64 = 1024;

/// Whether `v` reaches its reduction as a buffer: a block argument (of the function or a
/// region), or the result of an op whose lowering upstream fusion never merges into its
/// consumers (a reduction, product, sort, call or control op). Elementwise, layout, slicing
/// and other families may end in a parallel generic that it merges.
pub(super) fn read_in_place(f: &Func, v: quabla_dialect::Value) -> bool {
    use quabla_dialect::OpKind;
    match super::defining(f, v).map(|op| &op.kind) {
        None => true,
        Some(OpKind::Reduce(_) | OpKind::Dot(_) | OpKind::Sort(_) | OpKind::Call(_) | OpKind::Control(_)) => true,
        Some(_) => false,
    }
}

/// Stage one of [`thread_split`] `(s, parts)` of the reduction of `dims` of `x`: a generic
/// whose loops are the operand's with dim `s` replaced by (part, element of the part), the
/// part's loop parallel, reading `x` through `part * chunk + element` (affine, so upstream
/// fusion still puts an elementwise producer into it, whatever its maps), with a chunk-shaped
/// `tensor.empty` operand giving the element loop its extent; with [`unroll`] `u` > 1 the
/// element loop steps over groups of `u` elements, read by `u` operands; a computed operand
/// (read once) whose partials' rows are one vector ([`LANES_MAX_RUN_BYTES`]) instead gives
/// each of `u` consecutive elements a partial of its own (a parallel lane loop), so a row's
/// combine no longer waits for the previous row's store. With `keys` (a float maximum or
/// minimum) each element read is its key ([`key_of`]) and the partials are keys. Returns
/// the partials (the kept dims with the parts' dim among them), their type and the dims of
/// them that stage two reduces: the parts' position, the lanes' and a short reduced last dim
/// (from [`KEPT_LAST_MIN_BYTES`] to [`SHORT_LAST_BYTES`], not the split one), which the
/// partials keep as vector columns: as an inner loop of its own it ended in a horizontal
/// step every row (the sum of `x * x` over a [100000, 16] f32 array 375 us, JAX 78-80;
/// with lanes 112).
fn thread_partials(e: &mut Emitter, op: Reducer, (x, xt, in_place): (&str, &TensorType, bool), dims: &[i64], (s, parts): (usize, i64), c: &str, keys: bool) -> (String, TensorType, Vec<i64>) {
    let d = xt.dtype;
    let pd = if keys { key_constants(d, op).0 } else { d };
    let r = xt.rank();
    let chunk = xt.shape[s] / parts;
    let last = r as i64 - 1;
    let row = xt.shape[r - 1].saturating_mul(d.size() as i64);
    let keep_last = dims.len() > 1 && s as i64 != last && dims.contains(&last) && (KEPT_LAST_MIN_BYTES..=SHORT_LAST_BYTES).contains(&row);
    let dims: Vec<i64> = dims.iter().copied().filter(|&i| !(keep_last && i == last)).collect();
    let dims = &dims[..];
    let kept = |i: usize| !dims.contains(&(i as i64));
    // `u` operands read a group of elements (in place), or `lanes` elements go to partials
    // of their own (a computed operand: one read, so upstream fusion still merges it).
    let run = quabla_dialect::size::saturating_product(xt.shape[s + 1..].iter().copied()).saturating_mul(d.size() as i64);
    let (u, lanes) = if in_place { (unroll(xt, dims, s, chunk, UNROLL_MAX), 1) } else if run <= LANES_MAX_RUN_BYTES { (1, unroll(xt, dims, s, chunk, LANES_MAX)) } else { (1, 1) };
    // The loops: the operand's dims, dim s replaced by the part, the element (group) and,
    // with lanes, the lane.
    #[derive(Clone, Copy, PartialEq)]
    enum L {
        Dim(usize),
        Part,
        Element,
        Lane,
    }
    let mut loops: Vec<L> = (0..s).map(L::Dim).collect();
    loops.extend([L::Part, L::Element]);
    if lanes > 1 {
        loops.push(L::Lane);
    }
    loops.extend((s + 1..r).map(L::Dim));
    let n = loops.len();
    let at_loop = |k: L| loops.iter().position(|&l| l == k).unwrap();
    let (pl, el) = (at_loop(L::Part), at_loop(L::Element));
    let exprs = |k: i64| -> Vec<String> {
        let mut element = if u > 1 { format!("d{el} * {u} + {k}") } else { format!("d{el}") };
        if lanes > 1 {
            element = format!("d{el} * {lanes} + d{}", at_loop(L::Lane));
        }
        (0..r).map(|i| if i == s { format!("d{pl} * {chunk} + {element}") } else { format!("d{}", at_loop(L::Dim(i))) }).collect()
    };
    let iters: Vec<Iter> = loops.iter().map(|l| if matches!(l, L::Part | L::Lane) || matches!(l, L::Dim(i) if kept(*i)) { Iter::Parallel } else { Iter::Reduction }).collect();
    let out_loops: Vec<String> = (0..n).filter(|&l| iters[l] == Iter::Parallel).map(|l| format!("d{l}")).collect();
    let extent = |l: &L| match l {
        L::Dim(i) => xt.shape[*i],
        L::Part => parts,
        L::Element => chunk / u / lanes,
        L::Lane => lanes,
    };
    let pshape: Vec<i64> = loops.iter().zip(&iters).filter(|(_, it)| **it == Iter::Parallel).map(|(l, _)| extent(l)).collect();
    let pt = TensorType::new(pd, pshape);
    let ct = TensorType::new(d, [chunk / u / lanes]);
    let ce = e.empty(&ct);
    let init = e.filled(&pt, c);
    let mut ins: Vec<Operand> = (0..u).map(|k| Operand::new(x, xt, map(n, &exprs(k)))).collect();
    ins.push(Operand::new(ce, &ct, map(n, &[format!("d{el}")])));
    let u = u as usize;
    let partials = generic(e, &iters, &ins, &[Operand::new(init, &pt, map(n, &out_loops))], |e, a| {
        // The group's elements combined pairwise, then into the partial.
        let mut level: Vec<String> = a[..u].iter().map(|v| if keys { key_of(e, v, d, op) } else { v.clone() }).collect();
        while level.len() > 1 {
            level = level.chunks(2).map(|p| if p.len() == 2 { combine_step(e, op, pd, &p[0], &p[1]) } else { p[0].clone() }).collect();
        }
        vec![combine_step(e, op, pd, &a[u + 1], &level[0])]
    })
    .remove(0);
    // thread_split checked that the part loop is split between the threads.
    e.par = true;
    let at = (0..s).filter(|&i| kept(i)).count() as i64;
    let mut stage_two = vec![at];
    if lanes > 1 {
        stage_two.push(at + 1);
    }
    if keep_last {
        stage_two.push(pt.rank() as i64 - 1);
    }
    (partials, pt, stage_two)
}

/// The longest run of kept elements (two AVX-512 vectors) whose partials [`thread_partials`]
/// gives lanes (computed operands): longer rows of partials are several vectors that LLVM
/// updates independently, and the lanes' larger partials cost more than they save. Two
/// vectors since 2026-12-07: the sum of `x * x` over 100000 x 32 f32 216 -> 86 us (JAX 139).
const LANES_MAX_RUN_BYTES: i64 = 128;

/// The narrowest reduced last dim (bytes) [`thread_partials`] keeps as vector columns: a row of
/// 3 f32 kept was a scalar loop (the max of a [1000000, 3] array 134 -> 1805 us).
const KEPT_LAST_MIN_BYTES: i64 = 64;

/// `quabla.reduce_{sum,max,min,prod}`: one nest, on the CPU a [`thread_split`] (partials from
/// [`thread_partials`], reduced over the parts' dim by the nest), or on a
/// GPU target a [`split`] (partials from [`split_partials`], reduced over their first dim by
/// the nest).
pub fn lower_reduce(e: &mut Emitter, f: &Func, o: &Op, op: Reducer, dims: &[i64]) -> Result<String, LowerError> {
    let (x, xt, out) = (e.name(o.operands[0]), f.ty(o.operands[0]), f.ty(o.results[0]));
    if dims.is_empty() {
        return Ok(x);
    }
    if !e.blocks {
        if let Some((mn, columns)) = runtime_sum(e.cg.target, f, o) {
            return Ok(call_sum(e, o, (&x, xt), out, mn, columns));
        }
    }
    let in_place = read_in_place(f, o.operands[0]);
    // A reduction of a tree of elementwise ops over buffers ([`super::elementwise::tree`])
    // reads the tree computed over a view with the reduced and the kept dims collapsed
    // ([`super::elementwise::tree_view`]): all of them into one row for a full reduction (two
    // dims, the leading ones and the rest, when the tree reads rows broadcast along the
    // leading dims), each run of reduced or kept dims into one otherwise. A collapse of the
    // computed tensor (`reduce_collapsed`) is undone by upstream fusion, which then
    // materializes the tree. Not in row blocks, whose operands are slices. Measured (Intel
    // Xeon model 106, two threads, 2026-12-08, both variants in one process, JAX alongside),
    // f32, us: the sum of `x * x` over 100000 x 10 686 -> 86 (JAX 131), 100 x 1000 x 32 2995
    // -> 284 (353), 64 x 64 x 256 814 -> 98 (141); the max of `|x|` over 50 x 50 x 64 x 8
    // 1667 -> 123 (321); `mean((x - mean(x))**2)` over 100000 x 10 779 -> 184 (434); `sum(x *
    // w)` over 100 x 1000 x 32 3247 -> 282 (498), its max 6029 -> 268 (687), 64 x 64 x 256
    // 453 -> 81 (177); `sum(x * x, (0, 1))` over 100 x 1000 x 32 1109 -> 254 (317), over
    // (0, 2, 3) of 64 x 16 x 32 x 32 274 -> 92 (140); a batch norm's variance over (0, 1, 2)
    // of 64 x 32 x 32 x 16 371 -> 235 (335). (The thread split had cut the last dim of [100,
    // 1000, 32] into 16 parts of 2.)
    if !in_place && !e.blocks && xt.rank() >= 2 && !e.cg.target.parallel_outer() {
        if let Some(tree) = super::elementwise::tree(f, o.operands[0]) {
            let groups = view_groups(xt, dims, tree.row_rank(f));
            if groups.len() < xt.rank() {
                if let Some(view) = super::elementwise::tree_view(e, f, &tree, &groups) {
                    let (vx, vt) = view?;
                    let vdims: Vec<i64> = (0..groups.len()).filter(|&g| dims.contains(&(groups[g][0] as i64))).map(|g| g as i64).collect();
                    let kt = TensorType::new(out.dtype, (0..groups.len()).filter(|g| !vdims.contains(&(*g as i64))).map(|g| vt.shape[g]).collect::<Vec<_>>());
                    let res = reduce_of(e, op, (vx, &vt, false), &vdims, &kt);
                    return Ok(layout::reshape(e, &res, &kt, out));
                }
            }
        }
    }
    Ok(reduce_of(e, op, (x, xt, in_place), dims, out))
}

/// The groups of adjacent dims of `xt` that a reduction of `dims` reads a tree's view with
/// ([`lower_reduce`]): all dims in one for a full reduction (the leading ones and the last
/// `rows` when the tree reads rows of that rank), each run of reduced or kept dims otherwise.
fn view_groups(xt: &TensorType, dims: &[i64], rows: Option<usize>) -> Vec<Vec<usize>> {
    let r = xt.rank();
    if dims.len() == r {
        return match rows {
            None => vec![(0..r).collect()],
            Some(j) => vec![(0..r - j).collect(), (r - j..r).collect()],
        };
    }
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for i in 0..r {
        let reduced = dims.contains(&(i as i64));
        match groups.last_mut() {
            Some(g) if dims.contains(&(g[0] as i64)) == reduced => g.push(i),
            _ => groups.push(vec![i]),
        }
    }
    groups
}

/// [`lower_reduce`] of `x` (`xt`, read in place or not) over `dims` into `out`, once the
/// operand is settled.
fn reduce_of(e: &mut Emitter, op: Reducer, (x, xt, in_place): (String, &TensorType, bool), dims: &[i64], out: &TensorType) -> String {
    // A full reduction of an operand read in place reads it as one row (a free reshape): the
    // thread split and the peel then cut the row, and the vector steps run along it. Kept as
    // a nest of several dims, a short last dim (16 f32) was an inner loop of its own ending in
    // a horizontal step each row: the sum of a [100000, 16] f32 array 370 -> 40 us (JAX
    // 74-95). Float maxima and minima read keys in the split's body ([`keyed_row`]); a row
    // too short to split keeps the keys' path below (without keys its steps were not
    // vectorized: the max of 1000 f32 2.5 -> 8.5 us).
    let keys = matches!(op, Reducer::Max | Reducer::Min) && xt.dtype.is_float();
    if in_place && dims.len() == xt.rank() && !e.cg.target.parallel_outer() {
        if !keys {
            let (fx, flat) = flattened(e, &x, xt);
            return reduce_dims(e, op, (&fx, &flat, true), &[0], out);
        }
        if let Some(r) = keyed_row(e, op, (&x, xt), out) {
            return r;
        }
    }
    // Keys where the last dim is reduced (each row ends in horizontal steps); a column
    // reduction's vector steps read the operand in place, several rows at a time (`unroll`),
    // which a transformed operand would not allow (max over dims 0, 1 of [256, 256, 64] f32
    // 146 -> 407 us with keys).
    let last_reduced = dims.contains(&(xt.rank() as i64 - 1));
    match row_path(e, op, xt, dims, in_place) {
        Some(RowPath::Whole) => return short_rows(e, op, (&x, xt), out),
        Some(RowPath::Loop) => return row_loop(e, op, (&x, xt), out),
        None => {}
    }
    if keys && last_reduced && !e.cg.target.parallel_outer() {
        let kout = TensorType::new(key_constants(xt.dtype, op).0, out.shape.clone());
        let keyed = |e: &mut Emitter, x: &str, xt: &TensorType| {
            let (k, kt) = ordered_keys(e, x, xt, op);
            reduce_dims(e, op, (&k, &kt, false), dims, &kout)
        };
        // The keys are computed: a peeled split (a prime count) slices the operand first.
        let r = match peel(e, xt, dims).filter(|_| in_place && !even(e, thread_split(e, xt, dims))) {
            Some((s, m, _)) => {
                let (main, mt) = slice_along(e, (&x, xt), s, 0, m);
                let (rest, rt) = slice_along(e, (&x, xt), s, m, xt.shape[s] - m);
                let a = keyed(e, &main, &mt);
                let b = keyed(e, &rest, &rt);
                combined(e, op, &a, &b, &kout)
            }
            None => keyed(e, &x, xt),
        };
        return from_keys(e, &r, &kout, out, op);
    }
    reduce_dims(e, op, (&x, xt, in_place), dims, out)
}

/// The shortest rows a row sum takes the runtime's sums for: shorter rows are faster in the
/// generated paths (Xeon, 2026-12-06, jitted `x.sum(1)` f32, generated / runtime, us: 65536 x
/// 16 65 / 991, 65536 x 64 311 / 1083, 32768 x 128 308 / 586, 8192 x 512 309 / 327; 1024^2
/// 42 / 44, 4096^2 1189 / 1199, 64 x 100000 461 / 471).
const RUNTIME_SUM_MIN_ROW: i64 = 1024;

/// The fewest kept columns a column sum takes the runtime's sums for (`x.sum(0)`, as above:
/// 1024^2 45 / 72, 100000 x 128 1011 / 1224; 4096^2 1221 / 1117, 8 x 100000 65 / 27).
const RUNTIME_SUM_MIN_COLUMNS: i64 = 4096;

/// Elements from which the runtime's sums split the rows or columns between the threads (the
/// loops' policy: every loop of 2^17 iterations is split).
const RUNTIME_SUM_PAR_ELEMENTS: i64 = 1 << 17;

/// `[m, n]` and whether the columns are summed, when the sum of `o` (a reduction of `f`) runs as
/// the runtime's sums (`quabla_sum_<dtype>`, quabla_runtime's reduce_kernels, precompiled:
/// quabla_kernels::reduce): an f32/f64 parameter (no producer to fuse) summed over its
/// trailing dims (rows of [`RUNTIME_SUM_MIN_ROW`] or more: `[m, n]` its view, `m` outputs)
/// or its leading dims ([`RUNTIME_SUM_MIN_COLUMNS`] or more kept: `n` outputs), on a target
/// with runtime kernels. The program then has no reduction loop to generate: the first call
/// of a row sum of 1024 x 1024 f32 was 12-15 ms (JAX 10-13), 10 of it LLVM's.
pub fn runtime_sum(target: &dyn crate::target::Target, f: &Func, o: &Op) -> Option<([i64; 2], bool)> {
    let quabla_dialect::OpKind::Reduce(quabla_dialect::ReduceOp::Reduce { op: Reducer::Sum, dims }) = &o.kind else { return None };
    let xt = f.ty(o.operands[0]);
    let (r, k) = (xt.rank(), dims.len());
    if !matches!(xt.dtype, DType::F32 | DType::F64) || !target.runtime_kernels() || target.parallel_outer() || !f.params.contains(&o.operands[0]) || k == 0 || k >= r {
        return None;
    }
    let mut sorted = dims.clone();
    sorted.sort_unstable();
    let prod = |d: &[i64]| quabla_dialect::size::saturating_product(d.iter().copied());
    if sorted.iter().copied().eq((r - k) as i64..r as i64) {
        let n = prod(&xt.shape[r - k..]);
        (n >= RUNTIME_SUM_MIN_ROW).then_some(([prod(&xt.shape[..r - k]), n], false))
    } else if sorted.iter().copied().eq(0..k as i64) {
        let n = prod(&xt.shape[k..]);
        (n >= RUNTIME_SUM_MIN_COLUMNS).then_some(([prod(&xt.shape[..k]), n], true))
    } else {
        None
    }
}

/// The call of [`runtime_sum`]'s kernel on `x` (`xt`, viewed as `[m, n]` in place), its result
/// written into the function's output buffer when `o`'s result is one, else a fresh buffer;
/// returns the result as `out`.
fn call_sum(e: &mut Emitter, o: &Op, (x, xt): (&str, &TensorType), out: &TensorType, [m, n]: [i64; 2], columns: bool) -> String {
    let d = xt.dtype;
    let st = TensorType::new(d, [m, n]);
    let x2 = super::layout::reshape(e, x, xt, &st);
    let xu = super::kernel_operand(e, &x2, &st);
    let ct = TensorType::new(d, [if columns { n } else { m }]);
    let dest = e.out_buffer(o.results[0]).map(|name| (name, out.clone()));
    let c = super::layout::result_buffer(e, dest, &ct);
    let (cm, unranked) = (super::memref(&ct), format!("memref<*x{d}>"));
    let cu = e.op(format!("memref.cast {c} : {cm} to {unranked}"));
    let threads = if m.saturating_mul(n) >= RUNTIME_SUM_PAR_ELEMENTS { e.threads() } else { 1 };
    let flags = [columns as i64, threads].map(|v| e.op(format!("arith.constant {v} : i64")));
    e.line(format!("func.call @quabla_sum_{d}({xu}, {cu}, {}, {}) : ({unranked}, {unranked}, i64, i64) -> ()", flags[0], flags[1]));
    let res = e.op(format!("bufferization.to_tensor {c} restrict writable : {cm} to {ct}"));
    super::layout::reshape(e, &res, &ct, out)
}

/// The declarations of the runtime sums the module's reductions call (C interface).
pub fn declarations(m: &quabla_dialect::Module, target: &dyn crate::target::Target) -> String {
    super::linalg::declare(m, |f, o| {
        runtime_sum(target, f, o)?;
        let d = f.ty(o.operands[0]).dtype;
        Some((format!("quabla_sum_{d}"), vec![format!("memref<*x{d}>"), format!("memref<*x{d}>"), "i64".to_string(), "i64".to_string()]))
    })
}

/// The bits of `d`'s floats as signed integers ordered as IEEE 754's maximum / minimum order
/// the floats (-0 below +0): a positive float's bits, a negative one's with all but the sign
/// flipped; NaNs first become the canonical NaN that wins the reduction (positive for a
/// maximum, negative for a minimum). The key transform is its own inverse.
fn key_constants(d: DType, op: Reducer) -> (DType, usize, i64, i64, i64) {
    // (key dtype, its sign bit's shift, the mask of all but the sign, the NaN's bits, the key
    // of the identity)
    let key = |b: i64, sign_shift: u32, mask: i64| b ^ ((b >> sign_shift) & mask);
    match d {
        DType::F32 => {
            let nan = if op == Reducer::Max { f32::NAN.to_bits() as i32 } else { (-f32::NAN).to_bits() as i32 } as i64;
            let inf = if op == Reducer::Max { f32::NEG_INFINITY } else { f32::INFINITY };
            (DType::I32, 31, i32::MAX as i64, nan, key(inf.to_bits() as i32 as i64, 31, i32::MAX as i64))
        }
        _ => {
            let nan = if op == Reducer::Max { f64::NAN.to_bits() as i64 } else { (-f64::NAN).to_bits() as i64 };
            let inf = if op == Reducer::Max { f64::NEG_INFINITY } else { f64::INFINITY };
            (DType::I64, 63, i64::MAX, nan, key(inf.to_bits() as i64, 63, i64::MAX))
        }
    }
}

/// `x`'s floats as ordered integer keys ([`key_constants`]): a float maximum or minimum
/// reduced as a signed integer one. LLVM's vector `maximum` is six instructions, on the
/// accumulator's dependency chain (a blend, a mask, a compare, a blend, the max, a blend),
/// and its horizontal steps as many per level; the keys' transform is off the chain and the
/// integer max one instruction: 65536 rows of 64 f32 597 -> 194 us (JAX 161-181), softmax
/// of rows of 64 2305 -> 1558 (JAX 1506-1956). Exact: the same element wins, NaN propagates (canonical).
fn ordered_keys(e: &mut Emitter, x: &str, xt: &TensorType, op: Reducer) -> (String, TensorType) {
    let d = xt.dtype;
    let kd = key_constants(d, op).0;
    let kt = TensorType::new(kd, xt.shape.clone());
    let init = e.empty(&kt);
    let r = xt.rank();
    let k = generic(e, &vec![Iter::Parallel; r], &[Operand::new(x, xt, identity(r))], &[Operand::new(init, &kt, identity(r))], |e, a| vec![key_of(e, &a[0], d, op)]).remove(0);
    (k, kt)
}

/// The ordered key ([`key_constants`]) of float `v` of dtype `d`.
fn key_of(e: &mut Emitter, v: &str, d: DType, op: Reducer) -> String {
    let (kd, shift, mask, nan, _) = key_constants(d, op);
    let un = e.op(format!("arith.cmpf uno, {v}, {v} : {d}"));
    let b = e.op(format!("arith.bitcast {v} : {d} to {kd}"));
    let c = e.op(format!("arith.constant {nan} : {kd}"));
    let b = e.op(format!("arith.select {un}, {c}, {b} : {kd}"));
    flip(e, &b, kd, shift, mask)
}

/// `b ^ ((b >> shift) & mask)` on `kd` (the key transform, its own inverse).
fn flip(e: &mut Emitter, b: &str, kd: DType, shift: usize, mask: i64) -> String {
    let sh = e.op(format!("arith.constant {shift} : {kd}"));
    let mk = e.op(format!("arith.constant {mask} : {kd}"));
    let s = e.op(format!("arith.shrsi {b}, {sh} : {kd}"));
    let m = e.op(format!("arith.andi {s}, {mk} : {kd}"));
    e.op(format!("arith.xori {b}, {m} : {kd}"))
}

/// The floats (`out`) of reduced keys `k` ([`ordered_keys`]), the key of the float identity
/// (-inf / +inf) where nothing was reduced (the integer identity is past it).
fn from_keys(e: &mut Emitter, k: &str, kt: &TensorType, out: &TensorType, op: Reducer) -> String {
    let d = out.dtype;
    let init = e.empty(out);
    let r = out.rank();
    generic(e, &vec![Iter::Parallel; r], &[Operand::new(k, kt, identity(r))], &[Operand::new(init, out, identity(r))], |e, a| vec![float_of_key(e, &a[0], d, op)]).remove(0)
}

/// The float of dtype `d` whose key ([`key_of`]) is the reduced key `k`, the float identity
/// (-inf / +inf) where nothing was reduced (the integer identity is past it).
fn float_of_key(e: &mut Emitter, k: &str, d: DType, op: Reducer) -> String {
    let (kd, shift, mask, _, ident) = key_constants(d, op);
    let c = e.op(format!("arith.constant {ident} : {kd}"));
    let bound = if op == Reducer::Max { "arith.maxsi" } else { "arith.minsi" };
    let b = e.op(format!("{bound} {k}, {c} : {kd}"));
    let b = flip(e, &b, kd, shift, mask);
    let v = e.op(format!("arith.bitcast {b} : {kd} to {d}"));
    if op == Reducer::Max {
        return v;
    }
    // A minimum's NaN is the negative canonical one (the smallest key): the positive one.
    let pos = key_constants(d, Reducer::Max).3;
    let pc = e.op(format!("arith.constant {pos} : {kd}"));
    let pn = e.op(format!("arith.bitcast {pc} : {kd} to {d}"));
    let un = e.op(format!("arith.cmpf uno, {v}, {v} : {d}"));
    e.op(format!("arith.select {un}, {pn}, {v} : {d}"))
}

/// The reduction of the last dim of `x` by `op` into `out`, a loop over each row ([`rows`],
/// [`reduce_row`]). The loop carries its accumulator in a register, so LLVM vectorizes it
/// whatever its length, without overlap checks (a row of 10 f32 is one masked 16-lane load,
/// the keys, and the horizontal steps): the max over 65536 rows of 8 f32 266 -> 48-53 us, of
/// 10 345 -> 93 (JAX 93-105), of 64 197 -> 176 (164-173); softmax of rows of 10 855 -> 565
/// (447). Integer sums and products combine in the row's order.
fn row_loop(e: &mut Emitter, op: Reducer, (x, xt): (&str, &TensorType), out: &TensorType) -> String {
    let n = xt.shape[xt.rank() - 1];
    rows(e, (x, xt), out, |e, read| reduce_row(e, read, n, xt.dtype, op, matches!(op, Reducer::Max | Reducer::Min)))
}

/// The reduction by `op` of one row of `n` elements of dtype `d` (`read`, [`rows`]): float
/// maxima and minima reduce keys ([`key_of`]) and return the float; with `windows` through
/// [`overlapping_for`], else [`row_for`]. Returns the value and the loop's cost.
fn reduce_row(e: &mut Emitter, read: &dyn Fn(&mut Emitter, &str) -> String, n: i64, d: DType, op: Reducer, windows: bool) -> (String, i64) {
    let keys = matches!(op, Reducer::Max | Reducer::Min) && d.is_float();
    let (ad, ident) = if keys { (key_constants(d, op).0, key_constants(d, op).4.to_string()) } else { (d, identity_value(op, d)) };
    let acc0 = e.scalar(ad, &ident);
    let step = |e: &mut Emitter, k: &str, acc: &str| {
        let v = read(e, k);
        let v = if keys { key_of(e, &v, d, op) } else { v };
        combine_step(e, op, ad, acc, &v)
    };
    let (res, cost) = if windows { overlapping_for(e, n, (&acc0, ad), step) } else { row_for(e, n, (&acc0, ad), step) };
    (if keys { float_of_key(e, &res, d, op) } else { res }, cost)
}

/// argmax / argmin of the last dim of `x` into `out` (indices of dtype `index`), loops over
/// each row ([`rows`]). Elements of at most 32 bits: one loop reducing (key, position) pairs
/// packed in an i64 ([`packed_arg`]). Wider ones: two loops, the row's extremum `m` (NaN
/// when it holds one; [`row_loop`]'s keys for floats), then the smallest index whose element
/// is `m` or NaN ([`arg_by_reductions`]'s second pass). 65536 rows of 10 f32: 1046-1100 -> 110 us
/// (JAX 151-166).
fn arg_row_loop(e: &mut Emitter, op: ArgOp, (x, xt): (&str, &TensorType), out: &TensorType, index: DType) -> String {
    let d = xt.dtype;
    let n = xt.shape[xt.rank() - 1];
    let rop = if op == ArgOp::Max { Reducer::Max } else { Reducer::Min };
    if d.bits() <= 32 {
        return rows(e, (x, xt), out, |e, read| {
            let i64t = DType::I64;
            let init = e.scalar(i64t, &identity_value(rop, i64t));
            let (p, cost) = overlapping_for(e, n, (&init, i64t), |e, k, acc| {
                let v = read(e, k);
                let pk = packed_arg(e, op, d, &v, k, n);
                combine_step(e, rop, i64t, acc, &pk)
            });
            let mask = e.scalar(i64t, &u32::MAX.to_string());
            let lo = e.op(format!("arith.andi {p}, {mask} : i64"));
            let i = if op == ArgOp::Max {
                let last = e.scalar(i64t, &(n - 1).to_string());
                e.op(format!("arith.subi {last}, {lo} : i64"))
            } else {
                lo
            };
            let i = if index.bits() < 64 { e.op(format!("arith.trunci {i} : i64 to {index}")) } else { i };
            (i, cost)
        });
    }
    rows(e, (x, xt), out, |e, read| {
        let (m, c1) = reduce_row(e, read, n, d, rop, false);
        let none = e.scalar(index, &n.to_string());
        let (i, c2) = row_for(e, n, (&none, index), |e, k, acc| {
            let v = read(e, k);
            // Not `acc` where it misses: a min reduction reads its accumulator once, or LLVM
            // does not vectorize it.
            let cand = candidate_index(e, (&v, &m, d), k, &none, index);
            let min = if index.is_unsigned() { "arith.minui" } else { "arith.minsi" };
            e.op(format!("{min} {acc}, {cand} : {index}"))
        });
        (i, c1.saturating_add(c2))
    })
}

/// Element `v` (of dtype `d`, at most 32 bits) at position `k` (an index value) of a row of
/// `n` as one i64 whose signed order is argmax's (`op` Max) or argmin's preference: the
/// element's ordered 32-bit key ([`key_of`] for floats, NaN the extreme, -0 as +0; unsigned values
/// shifted into signed order) above, below it the position, for argmax reversed (`n - 1 - k`),
/// so that equal keys prefer the first position under the max or min.
fn packed_arg(e: &mut Emitter, op: ArgOp, d: DType, v: &str, k: &str, n: i64) -> String {
    let key = match d {
        DType::F32 => {
            // -0 + 0 is +0: the two zeros compare equal (the first wins), as in the select chain.
            let z = e.scalar(d, "0.0");
            let v = e.op(format!("arith.addf {v}, {z} : {d}"));
            key_of(e, &v, d, if op == ArgOp::Max { Reducer::Max } else { Reducer::Min })
        }
        DType::U32 => {
            let sign = e.scalar(DType::I32, &i32::MIN.to_string());
            e.op(format!("arith.xori {v}, {sign} : i32"))
        }
        DType::U8 => e.op(format!("arith.extui {v} : i8 to i32")),
        _ => v.to_string(),
    };
    let hi = e.op(format!("arith.extsi {key} : i32 to i64"));
    let c32 = e.scalar(DType::I64, "32");
    let hi = e.op(format!("arith.shli {hi}, {c32} : i64"));
    let ki = e.op(format!("arith.index_cast {k} : index to i64"));
    let lo = if op == ArgOp::Max {
        let last = e.scalar(DType::I64, &(n - 1).to_string());
        e.op(format!("arith.subi {last}, {ki} : i64"))
    } else {
        ki
    };
    e.op(format!("arith.ori {hi}, {lo} : i64"))
}

/// A generic over the rows of `xt` (all but its last dim) into `out` whose body is
/// `body(e, read)`: it returns the row's result and the cost of its loops (their body's
/// ops times their trips, [`row_for`]); `read(e, k)` emits the read of the row's element `k`
/// (an index value) from `x`, which the generic takes from above (not an operand: upstream
/// fusion leaves it alone). The generic is [`unfused_generic`]: fused into its consumers,
/// which read each row's result once per element of the row (softmax's `x - max`), it would
/// run the loops over the row again for each.
fn rows(e: &mut Emitter, (x, xt): (&str, &TensorType), out: &TensorType, body: impl FnOnce(&mut Emitter, &dyn Fn(&mut Emitter, &str) -> String) -> (String, i64)) -> String {
    let r = xt.rank();
    let mut cost = 0;
    let res = unfused_generic(e, &[], out, |e, _| {
        let idx: Vec<String> = (0..r - 1).map(|i| e.op(format!("linalg.index {i} : index"))).collect();
        let read = |e: &mut Emitter, k: &str| e.op(format!("tensor.extract {x}[{}] : {xt}", idx.iter().map(String::as_str).chain([k]).collect::<Vec<_>>().join(", ")));
        let (v, c) = body(e, &read);
        cost = c;
        v
    });
    // The generic's own cost counted each loop's body once.
    parallel_candidate(e, &vec![Iter::Parallel; r - 1], &[], &[Operand::new(res.clone(), out, identity(r - 1))], cost);
    res
}

/// [`row_for`] of a step that may see an element twice (a maximum, a minimum, argmax's
/// (key, position) pairs): for a row of `n` elements, `n` no power of two, a loop over the
/// `w` positions of two overlapping windows `[0, w)` and `[n - w, n)` (`w` the largest power
/// of two below `n`), each iteration reading one element of each, so that every vector step
/// is whole (a row of 10 f32 was one masked 16-lane step, of 10 f64 two masked 8-lane
/// ones), for rows shorter than [`TINY_ROW`]: max over 65536 rows of 10 f32 93 -> 62 us (JAX
/// 93), of 10 f64 162 -> 106 (97-100), argmax of rows of 10 f32 178 -> 110 (151), of 5 86 ->
/// 78.
fn overlapping_for(e: &mut Emitter, n: i64, (init, ty): (&str, DType), mut step: impl FnMut(&mut Emitter, &str, &str) -> String) -> (String, i64) {
    let w = 1i64 << (63 - n.max(1).leading_zeros());
    // Longer rows took as long or longer (24 f32 91 -> 111 us, 100 f32 292 -> 326).
    if w == n || n <= ROW_UNROLL_MAX || n >= TINY_ROW {
        return row_for(e, n, (init, ty), step);
    }
    let off = n - w;
    row_for(e, w, (init, ty), |e, k, acc| {
        let a = step(e, k, acc);
        let c = e.index(off);
        let k2 = e.op(format!("arith.addi {k}, {c} : index"));
        step(e, &k2, &a)
    })
}

/// The longest row whose loop [`row_for`] writes out step by step: max over 65536 rows of 2
/// f32 36 -> 14 us, of 3 46 -> 24, argmax over rows of 3 53 -> 43; from 4 on it was as often
/// slower (f64 rows of 4 50 -> 62 us, of 8 75 -> 140; f32 rows of 10 93 -> 137).
const ROW_UNROLL_MAX: i64 = 3;

/// `scf.for k = 0 to n` carrying `init` (of type `ty`) through `step(e, k, acc)`, or for at
/// most [`ROW_UNROLL_MAX`] elements the steps one after another; returns the result and the
/// cost (the step's ops, at least `PAR_LOOP_MIN_COST` as the executor counts them, times
/// `n`).
fn row_for(e: &mut Emitter, n: i64, (init, ty): (&str, DType), mut step: impl FnMut(&mut Emitter, &str, &str) -> String) -> (String, i64) {
    if n <= ROW_UNROLL_MAX {
        let start = e.out.len();
        let mut acc = init.to_string();
        for k in 0..n {
            let kc = e.index(k);
            acc = step(e, &kc, &acc);
        }
        let cost = text_body_cost(&e.out[start..]).max(crate::tiling::PAR_LOOP_MIN_COST * n);
        return (acc, cost);
    }
    let (c0, cn, c1) = (e.index(0), e.index(n), e.index(1));
    let (res, k, acc) = (e.fresh(), e.fresh(), e.fresh());
    e.raw_line(format!("{res} = scf.for {k} = {c0} to {cn} step {c1} iter_args({acc} = {init}) -> ({ty}) {{"));
    e.depth += 1;
    let start = e.out.len();
    let next = step(e, &k, &acc);
    let cost = text_body_cost(&e.out[start..]).max(crate::tiling::PAR_LOOP_MIN_COST).saturating_mul(n);
    e.line(format!("scf.yield {next} : {ty}"));
    e.depth -= 1;
    e.line(format!("}} {{llvm.loop_annotation = {ROW_LOOP_ANNOTATION}}}"));
    (res, cost)
}

/// The row loops of [`row_for`] stay loops: LLVM's full unrolling of short constant loops
/// (quabla_runtime's level-2 pipeline) wrote a row of 10 out, and the loop over the rows
/// around it, now innermost, was vectorized across rows with stride-10 interleaved loads:
/// sum over 65536 rows of 10 f32 60 -> 126 us, softmax 348 -> 627. (The executor moves the
/// annotation onto the loop's back edge.)
pub const ROW_LOOP_ANNOTATION: &str = "#llvm.loop_annotation<unroll = <disable = true>>";

/// [`lower_reduce`] of `x` (`xt`, `in_place`) over `dims` into `out`: a trailing run of reduced
/// dims with a short last dim in two steps, adjacent dims collapsed.
fn reduce_dims(e: &mut Emitter, op: Reducer, (x, xt, in_place): (&str, &TensorType, bool), dims: &[i64], out: &TensorType) -> String {
    let r = xt.rank();
    let last = r as i64 - 1;
    let short_last = xt.shape[r - 1].saturating_mul(xt.dtype.size() as i64) <= SHORT_LAST_BYTES;
    // Only a trailing run of reduced dims (rows of a few vectors each), with kept dims before it.
    let trailing = (1..=dims.len() as i64).all(|j| dims.contains(&(r as i64 - j)));
    if dims.len() >= 2 && dims.len() < r && trailing && short_last && !e.cg.target.parallel_outer() {
        // The other reduced dims first, the short last dim kept (vector columns), then it.
        let first: Vec<i64> = dims.iter().copied().filter(|&i| i != last).collect();
        let pt = TensorType::new(xt.dtype, (0..r).filter(|i| !first.contains(&(*i as i64))).map(|i| xt.shape[i]).collect::<Vec<_>>());
        let partial = reduce_collapsed(e, op, (x, xt, in_place), &first, &pt);
        return reduce_collapsed(e, op, (&partial, &pt, true), &[pt.rank() as i64 - 1], out);
    }
    reduce_collapsed(e, op, (x, xt, in_place), dims, out)
}

/// How a reduction of the last dim alone reads its rows on the CPU ([`row_path`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RowPath {
    /// [`short_rows`]: each row's elements read by one operand each.
    Whole,
    /// [`row_loop`]: a loop over each row in the body of a generic over the rows.
    Loop,
}

/// The longest rows a sum or product reads whole ([`short_rows`]): LLVM vectorizes the loop
/// over the rows with interleaved loads of up to 8 members; past 8 it gathers (65536 rows of
/// 10 f32 243 us, of 16 405; JAX 178).
const WHOLE_ROW_MAX: i64 = 8;

/// The fewest rows [`short_rows`] reads whole (fewer: the generic reduction).
const WHOLE_ROW_MIN_ROWS: usize = 1024;

/// Rows shorter than this are reduced by [`row_loop`] even when that materializes an
/// elementwise producer: LLVM's vectorizer leaves a reduction loop of fewer iterations
/// (`TinyTripCountVectorThreshold`) scalar when it needs runtime overlap checks, which a
/// generic's reduction (its accumulator stored to the output every iteration) does: the max
/// over 65536 rows of 8 f32 was 266 us, of 10 345, of 12 421 (JAX 94-110).
const TINY_ROW: i64 = 16;

/// The longest rows [`row_loop`] reduces when the operand is read in place (past it the
/// generic's vector loop is as fast: 1024 f32 5.2-5.7 ms either way).
const ROW_LOOP_MAX: i64 = 256;

/// The path of a reduction of `dims` of `xt` by `op` on the CPU ([`RowPath`]), None for the
/// generic reductions: sums and products of rows of at most [`WHOLE_ROW_MAX`] elements are
/// read whole; shorter rows than [`TINY_ROW`] and, read in place, rows of at most
/// [`ROW_LOOP_MAX`] elements are reduced by [`row_loop`].
fn row_path(e: &Emitter, op: Reducer, xt: &TensorType, dims: &[i64], in_place: bool) -> Option<RowPath> {
    let r = xt.rank();
    if r < 2 || dims != [r as i64 - 1] || xt.dtype == DType::I1 || e.cg.target.parallel_outer() {
        return None;
    }
    let n = xt.shape[r - 1];
    match op {
        // A producer that the `n` reads would otherwise fuse into is materialized: not worth
        // it for few rows.
        Reducer::Sum | Reducer::Prod if (2..=WHOLE_ROW_MAX).contains(&n) => (xt.num_elements() / n as usize >= WHOLE_ROW_MIN_ROWS).then_some(RowPath::Whole),
        _ if (2..TINY_ROW).contains(&n) || (in_place && (2..=ROW_LOOP_MAX).contains(&n)) => Some(RowPath::Loop),
        _ => None,
    }
}

/// The reduction of the last dim of `x` (`n` <= [`WHOLE_ROW_MAX`] elements) as one
/// all-parallel generic over the rows, each row's `n` elements read by `n` operands and
/// combined in order from the identity (the loop's order): a reduction loop of 10 (10-class
/// logits) was a vector loop with a remainder and a horizontal step per row.
fn short_rows(e: &mut Emitter, op: Reducer, (x, xt): (&str, &TensorType), out: &TensorType) -> String {
    let r = xt.rank();
    let n = xt.shape[r - 1];
    let d = xt.dtype;
    let lead: Vec<String> = (0..r - 1).map(|i| format!("d{i}")).collect();
    let ins: Vec<Operand> = (0..n).map(|k| Operand::new(x, xt, map(r - 1, &lead.iter().cloned().chain([k.to_string()]).collect::<Vec<_>>()))).collect();
    let init = e.empty(out);
    generic(e, &vec![Iter::Parallel; r - 1], &ins, &[Operand::new(init, out, identity(r - 1))], |e, a| {
        let mut acc = e.op(format!("arith.constant {} : {d}", identity_value(op, d)));
        for v in &a[..n as usize] {
            acc = combine_step(e, op, d, &acc, v);
        }
        vec![acc]
    })
    .remove(0)
}

/// A last dim of at most this many bytes that is reduced with others is reduced last, on its
/// own ([`lower_reduce`]): with the others it was the inner loop of a nest that ended every
/// few vectors in a horizontal reduction (and upstream fusion expands a collapsed operand
/// back into that nest): the maximum over dims 1 and 2 of a [256, 256, 64] f32 array 1183
/// us (JAX 158), sum 326 (156).
const SHORT_LAST_BYTES: i64 = 512;

/// [`reduce_value`] of `x` with its runs of adjacent reduced or kept dims collapsed
/// ([`collapsed`]), the result reshaped to `out`.
fn reduce_collapsed(e: &mut Emitter, op: Reducer, (x, xt, in_place): (&str, &TensorType, bool), dims: &[i64], out: &TensorType) -> String {
    // Full reductions keep their dims (the thread split picks among them); GPU targets
    // their nests.
    let collapse = if dims.len() < xt.rank() && !e.cg.target.parallel_outer() { collapsed(xt, dims) } else { None };
    match collapse {
        Some((ct, cdims, kt)) => {
            let cx = layout::reshape(e, x, xt, &ct);
            let r = reduce_value(e, op, (&cx, &ct, in_place), &cdims, &kt);
            layout::reshape(e, &r, &kt, out)
        }
        None => reduce_value(e, op, (x, xt, in_place), dims, out),
    }
}

/// `xt` with each run of adjacent reduced dims and each run of adjacent kept dims collapsed
/// into one (a reshape of a row-major array), the reduced dims of that shape and the
/// collapsed result type; None when no run has two dims. The maximum over the last two dims
/// of a [256, 256, 64] f32 array was a nest over three loops whose inner one, 64 elements,
/// ended every 256 bytes in a horizontal reduction: 1183 us (JAX 158); as 256 rows of 16384,
/// 169.
fn collapsed(xt: &TensorType, dims: &[i64]) -> Option<(TensorType, Vec<i64>, TensorType)> {
    let mut shape: Vec<i64> = Vec::new();
    let mut reduced: Vec<bool> = Vec::new();
    for (i, &n) in xt.shape.iter().enumerate() {
        let r = dims.contains(&(i as i64));
        match (reduced.last(), shape.last_mut()) {
            (Some(&last), Some(s)) if last == r => *s = s.saturating_mul(n),
            _ => {
                shape.push(n);
                reduced.push(r);
            }
        }
    }
    if shape.len() == xt.rank() {
        return None;
    }
    let cdims = (0..shape.len() as i64).filter(|&i| reduced[i as usize]).collect();
    let kept: Vec<i64> = shape.iter().zip(&reduced).filter(|(_, r)| !**r).map(|(n, _)| *n).collect();
    Some((TensorType::new(xt.dtype, shape), cdims, TensorType::new(xt.dtype, kept)))
}

/// The reduction of `dims` of `x` (type `xt`; `in_place`: [`read_in_place`]) by `op` into a
/// value of type `out`.
fn reduce_value(e: &mut Emitter, op: Reducer, (x, xt, in_place): (&str, &TensorType, bool), dims: &[i64], out: &TensorType) -> String {
    let x = x.to_string();
    let d = xt.dtype;
    let c = e.scalar(d, &identity_value(op, d));
    if let Some(s) = split(e, xt, dims) {
        let pt = TensorType::new(d, partial_shape(xt, dims, s));
        let init = e.filled(&pt, &c);
        let parts = split_partials(e, &x, xt, dims, s, &c, &[(init, pt.clone())], |e, v, _, acc| vec![combine_step(e, op, d, &acc[0], v)]).remove(0);
        return reduce_nest(e, op, &parts, &pt, &[0], out, &c);
    }
    if let Some(r) = short_columns(e, op, (&x, xt), dims, out, &c) {
        return r;
    }
    let ts = thread_split(e, xt, dims);
    // A split the threads share unevenly (3 parts of a [3000009] row) gives way to a peel.
    if in_place && !even(e, ts) {
        if let Some(r) = peeled_split(e, op, (&x, xt), dims, out, &c) {
            return r;
        }
    }
    if let Some((s, parts)) = ts {
        let (partials, pt, two) = thread_partials(e, op, (&x, xt, in_place), dims, (s, parts), &c, false);
        return reduce_nest(e, op, &partials, &pt, &two, out, &c);
    }
    reduce_nest(e, op, &x, xt, dims, out, &c)
}

/// The fewest parts a [`thread_split`] that the threads do not share evenly may have before
/// a [`peeled_split`] is taken instead (from 16 parts the imbalance is at most 1/16): 3
/// parts of the flat max of a [1000003, 3] f32 array ran 156 us, the peel 16 parts.
const THREAD_SPLIT_EVEN_PARTS: i64 = 16;

/// Whether `split` ([`thread_split`]) is one the threads share evenly enough
/// ([`THREAD_SPLIT_EVEN_PARTS`]).
fn even(e: &Emitter, split: Option<(usize, i64)>) -> bool {
    split.is_some_and(|(_, parts)| parts % e.threads() == 0 || parts >= THREAD_SPLIT_EVEN_PARTS)
}

/// The float maximum or minimum of all of `x` (read in place, as one row: [`flattened`]) into
/// `out` by the thread split of the row, or its peel, reading each element's key in the
/// split's body ([`thread_partials`] with keys); None when the row is not split. Keys computed by a generic
/// of their own would take the reshape that flattened `x` (upstream fusion moves it below
/// the generic) and be computed into a buffer; without keys the row's steps are LLVM's
/// vector `maximum` ([`ordered_keys`]). Zen 4, two threads, 2026-12-07, f32, us (JAX):
/// [100000, 16] 324 -> 49 (82), [1000003, 3] 252 -> 88 (123), [256, 256, 64] 315 -> 124
/// (190), [1000, 1000] 41 -> 33 (63).
fn keyed_row(e: &mut Emitter, op: Reducer, (x, xt): (&str, &TensorType), out: &TensorType) -> Option<String> {
    let flat = flat_type(xt);
    let ts = thread_split(e, &flat, &[0]);
    let peeled = if even(e, ts) { None } else { Some(peel(e, &flat, &[0])?) };
    let (x, xt) = flattened(e, x, xt);
    let (x, xt) = (&x[..], &xt);
    let kd = key_constants(xt.dtype, op).0;
    let kout = TensorType::new(kd, out.shape.clone());
    let c = e.scalar(kd, &identity_value(op, kd));
    let r = match peeled {
        None => {
            let (partials, pt, two) = thread_partials(e, op, (x, xt, true), &[0], ts?, &c, true);
            reduce_nest(e, op, &partials, &pt, &two, &kout, &c)
        }
        Some((s, m, split)) => {
            let (main, mt) = slice_along(e, (x, xt), s, 0, m);
            let (rest, rt) = slice_along(e, (x, xt), s, m, xt.shape[s] - m);
            let (partials, pt, two) = thread_partials(e, op, (&main, &mt, true), &[0], split, &c, true);
            let a = reduce_nest(e, op, &partials, &pt, &two, &kout, &c);
            let (k, kt) = ordered_keys(e, &rest, &rt, op);
            let b = reduce_nest(e, op, &k, &kt, &[0], &kout, &c);
            combined(e, op, &a, &b, &kout)
        }
    };
    Some(from_keys(e, &r, &kout, out, op))
}

/// `xt` as one row.
fn flat_type(xt: &TensorType) -> TensorType {
    TensorType::new(xt.dtype, [quabla_dialect::size::saturating_product(xt.shape.iter().copied())])
}

/// `x` (type `xt`) as one row, and its type (a reshape unless it is one already).
fn flattened(e: &mut Emitter, x: &str, xt: &TensorType) -> (String, TensorType) {
    let flat = flat_type(xt);
    let fx = if xt.rank() == 1 { x.to_string() } else { layout::reshape(e, x, xt, &flat) };
    (fx, flat)
}

/// Rows of a short-column reduction ([`short_columns`]) laid side by side.
const SHORT_COLUMN_GROUP: i64 = 16;

/// The widest rows (bytes) [`short_columns`] takes.
const SHORT_COLUMN_BYTES: i64 = 32;

/// The fewest rows [`short_columns`] takes.
const SHORT_COLUMN_MIN_ROWS: i64 = 4096;

/// A column reduction of a `[R, C]` (or `[B, R, C]`) operand whose rows are a few elements
/// ([`SHORT_COLUMN_BYTES`]): its loop over the rows carried `C` scalar accumulators through
/// memory, one row at a time (a max over the 1000003 rows of a [1000003, 3] f32 array 1.29
/// ms, JAX 1.29; the sum, whose chain is shorter, 0.21). As `[R / G, G * C]` (G =
/// [`SHORT_COLUMN_GROUP`] rows side by side, the first `R - R % G` rows), its column
/// reduction is vector-wide; its `G * C` results are then reduced as `[G, C]`, and the last
/// `R % G` rows combined with them. Measured (Zen 4, two threads, 2026-12-07, JAX in
/// parentheses): max over dim 0 of [1000003, 3] f32 1290 -> 235 us (1296), over dims 1, 2 of
/// [32, 224, 224, 3] 4004 -> 380 (3404). An elementwise producer is computed into a buffer of
/// its own first (the reshape keeps it out of the reduction), which costs less than the row
/// loop saved: `sum(x * y, 0)` of [1000003, 3] 10.4 -> 0.75 ms (2.5), `max` 17.5 -> 0.83
/// (2.2), softmax over dim 0 11.8 -> 1.6 (4.4), `max(x * y, 0)` of [65536, 8] 272 -> 68 us (163-178).
fn short_columns(e: &mut Emitter, op: Reducer, (x, xt): (&str, &TensorType), dims: &[i64], out: &TensorType, c: &str) -> Option<String> {
    let d = xt.dtype;
    let g = SHORT_COLUMN_GROUP;
    // `[R, C]` over dim 0, or `[B, R, C]` over dim 1.
    let r = xt.rank();
    if !(r == 2 || r == 3) || dims != [r as i64 - 2] || e.cg.target.parallel_outer() || d == DType::I1 {
        return None;
    }
    let lead = &xt.shape[..r - 2];
    let (rows, cols) = (xt.shape[r - 2], xt.shape[r - 1]);
    if cols.saturating_mul(d.size() as i64) > SHORT_COLUMN_BYTES || rows < SHORT_COLUMN_MIN_ROWS {
        return None;
    }
    let ty = |s: &[i64]| TensorType::new(d, lead.iter().copied().chain(s.iter().copied()).collect::<Vec<_>>());
    let m = rows - rows % g;
    let (main, mt) = if m == rows { (x.to_string(), xt.clone()) } else { slice_along(e, (x, xt), r - 2, 0, m) };
    let wide = ty(&[m / g, g * cols]);
    let w = layout::reshape(e, &main, &mt, &wide);
    let gt = ty(&[g * cols]);
    let partial = reduce_value(e, op, (&w, &wide, true), &[r as i64 - 2], &gt);
    let st = ty(&[g, cols]);
    let sq = layout::reshape(e, &partial, &gt, &st);
    let a = reduce_nest(e, op, &sq, &st, &[r as i64 - 2], out, c);
    if m == rows {
        return Some(a);
    }
    let (rest, rt) = slice_along(e, (x, xt), r - 2, m, rows - m);
    let b = reduce_nest(e, op, &rest, &rt, &[r as i64 - 2], out, c);
    Some(combined(e, op, &a, &b, out))
}

/// Elements `start..start + len` of `x` (type `xt`) along dim `s`, and their type.
fn slice_along(e: &mut Emitter, (x, xt): (&str, &TensorType), s: usize, start: i64, len: i64) -> (String, TensorType) {
    let mut shape = xt.shape.clone();
    shape[s] = len;
    let t = TensorType::new(xt.dtype, shape);
    let mut offs = vec![0; xt.rank()];
    offs[s] = start;
    let v = e.op(format!("tensor.extract_slice {x}[{}] [{}] [{}] : {xt} to {t}", list(&offs), list(&t.shape), list(&vec![1; xt.rank()])));
    (v, t)
}

/// `a` and `b` (both of type `out`) combined elementwise by `op`.
fn combined(e: &mut Emitter, op: Reducer, a: &str, b: &str, out: &TensorType) -> String {
    let r = out.rank();
    let init = e.empty(out);
    let ins = [Operand::new(a, out, identity(r)), Operand::new(b, out, identity(r))];
    generic(e, &vec![Iter::Parallel; r], &ins, &[Operand::new(init, out, identity(r))], |e, v| vec![combine_step(e, op, out.dtype, &v[0], &v[1])]).remove(0)
}

/// [`peeled_split`] cuts a reduced dim to a multiple of this many elements (16 parts of a
/// multiple of 4: [`unroll`]).
const PEEL_MULTIPLE: i64 = 64;

/// A [`thread_split`] that no divisor of the reduced dims allows (a prime number of rows), of
/// an operand read in place: the first `n - n % PEEL_MULTIPLE` elements of a reduced dim
/// split between the threads ([`thread_partials`]), the rest (fewer than `PEEL_MULTIPLE`)
/// reduced on their own and combined with that result. The nest alone ran a column sum of a
/// [1000003, 3] f32 array one row at a time, its partial stored and reloaded every row, with
/// the three columns split between two threads: 9.8 ms, JAX 1.4; max 17.3 ms, JAX 1.3.
fn peeled_split(e: &mut Emitter, op: Reducer, (x, xt): (&str, &TensorType), dims: &[i64], out: &TensorType, c: &str) -> Option<String> {
    let (s, m, split) = peel(e, xt, dims)?;
    let (main, mt) = slice_along(e, (x, xt), s, 0, m);
    let (rest, rt) = slice_along(e, (x, xt), s, m, xt.shape[s] - m);
    let (partials, pt, two) = thread_partials(e, op, (&main, &mt, true), dims, split, c, false);
    let a = reduce_nest(e, op, &partials, &pt, &two, out, c);
    let b = reduce_nest(e, op, &rest, &rt, dims, out, c);
    Some(combined(e, op, &a, &b, out))
}

/// Where [`peeled_split`] cuts the reduction of `dims` of `xt`: the reduced dim `s`, the
/// length `m` of its split part (the first `n - n % PEEL_MULTIPLE` elements) and that part's
/// [`thread_split`]; None when no reduced dim has one.
fn peel(e: &Emitter, xt: &TensorType, dims: &[i64]) -> Option<(usize, i64, (usize, i64))> {
    dims.iter().find_map(|&k| {
        let s = k as usize;
        let n = xt.shape[s];
        let m = n - n % PEEL_MULTIPLE;
        if n % PEEL_MULTIPLE == 0 || m < 2 * PEEL_MULTIPLE {
            return None;
        }
        let mut mshape = xt.shape.clone();
        mshape[s] = m;
        Some((s, m, thread_split(e, &TensorType::new(xt.dtype, mshape), dims)?))
    })
}

/// The identity scalar of an argmax/argmin of dtype `d` and its two inits of index shape
/// `it`: the values filled with the identity, the indices with 0.
fn arg_inits(e: &mut Emitter, op: ArgOp, d: DType, index: DType, it: &TensorType) -> (String, [(String, TensorType); 2]) {
    let vt = TensorType::new(d, it.shape.clone());
    let rop = if op == ArgOp::Max { Reducer::Max } else { Reducer::Min };
    let c = e.scalar(d, &identity_value(rop, d));
    let vinit = e.filled(&vt, &c);
    let z = e.scalar(index, "0");
    let iinit = e.filled(it, &z);
    (c, [(vinit, vt), (iinit, it.clone())])
}

/// One argmax/argmin step: candidate `v` replaces the best (`best`, `bi`) when it is
/// strictly better, or NaN while the best is not, or with `ties` (candidates not visited in
/// index order: a split's partials) when both are equal (or both NaN) and its index is
/// smaller; its index is `ki`'s result. Returns the new (value, index).
#[allow(clippy::too_many_arguments)]
fn arg_step(e: &mut Emitter, op: ArgOp, d: DType, v: &str, best: &str, bi: &str, index: DType, ties: bool, ki: impl FnOnce(&mut Emitter) -> String) -> Vec<String> {
    let ki = ki(e);
    let (better, tie) = if d.is_float() {
        let pred = if op == ArgOp::Max { "ogt" } else { "olt" };
        let strict = e.op(format!("arith.cmpf {pred}, {v}, {best} : {d}"));
        let vnan = e.op(format!("arith.cmpf uno, {v}, {v} : {d}"));
        let bnum = e.op(format!("arith.cmpf ord, {best}, {best} : {d}"));
        let nan_wins = e.op(format!("arith.andi {vnan}, {bnum} : i1"));
        let better = e.op(format!("arith.ori {strict}, {nan_wins} : i1"));
        // Equal, or both NaN: the tie of two NaNs goes to the smaller index as well.
        let tie = ties.then(|| {
            let eq = e.op(format!("arith.cmpf oeq, {v}, {best} : {d}"));
            let bnan = e.op(format!("arith.cmpf uno, {best}, {best} : {d}"));
            let both_nan = e.op(format!("arith.andi {vnan}, {bnan} : i1"));
            e.op(format!("arith.ori {eq}, {both_nan} : i1"))
        });
        (better, tie)
    } else {
        let pred = match (op == ArgOp::Max, d.is_unsigned()) {
            (true, false) => "sgt",
            (false, false) => "slt",
            (true, true) => "ugt",
            (false, true) => "ult",
        };
        let better = e.op(format!("arith.cmpi {pred}, {v}, {best} : {d}"));
        (better, ties.then(|| e.op(format!("arith.cmpi eq, {v}, {best} : {d}"))))
    };
    let better = match tie {
        Some(tie) => {
            let first = e.op(format!("arith.cmpi slt, {ki}, {bi} : {index}"));
            let wins = e.op(format!("arith.andi {tie}, {first} : i1"));
            e.op(format!("arith.ori {better}, {wins} : i1"))
        }
        None => better,
    };
    let nv = e.op(format!("arith.select {better}, {v}, {best} : {d}"));
    let ni = e.op(format!("arith.select {better}, {ki}, {bi} : {index}"));
    vec![nv, ni]
}

/// argmax/argmin over `dim` of `vals` into `out` ([`reduction_nest`]: on a GPU target one
/// thread per output). A candidate's index is its position along `dim`, or with `idx` (stage
/// two of a split: the partials' indices) read from there.
fn arg_nest(e: &mut Emitter, op: ArgOp, vals: (&str, &TensorType), idx: Option<(&str, &TensorType)>, dim: i64, out: &TensorType, index: DType) -> String {
    let d = vals.1.dtype;
    let nest = reduction_nest(vals.1.rank(), &[dim], e.cg.target.parallel_outer());
    let it = nest.out_type(out);
    let (_, inits) = arg_inits(e, op, d, index, &it);
    let ins: Vec<Operand> = [Some(vals), idx].into_iter().flatten().map(|(n, t)| Operand::new(n, t, nest.imap.clone())).collect();
    let outs = inits.map(|(n, t)| Operand::new(n, &t, nest.omap.clone()));
    let k_loop = nest.loop_of[dim as usize];
    let res = generic(e, &nest.iters, &ins, &outs, |e, a| {
        let m = a.len() - 2;
        // Stage two of a split (indices read from the partials) breaks ties by index.
        arg_step(e, op, d, &a[0], &a[m], &a[m + 1], index, m == 2, |e| {
            if m == 2 {
                a[1].clone()
            } else {
                let k = e.op(format!("linalg.index {k_loop} : index"));
                e.op(format!("arith.index_cast {k} : index to {index}"))
            }
        })
    });
    nest.result(e, res[1].clone(), out)
}

/// `quabla.argmax` / `quabla.argmin`: one nest, or on a GPU target a [`split`]: partial
/// (value, index) pairs, each the first extremal element of its interleaved subset (visited
/// in index order), then the nest over them reading the indices, which breaks ties of equal
/// values (or of NaNs) by the smaller index, so the first extremal index (and the first NaN)
/// still wins. A partial whose elements all equal the identity keeps index 0; it can only
/// win when every element does, where 0 is the answer.
pub fn lower_argreduce(e: &mut Emitter, f: &Func, o: &Op, op: ArgOp, dim: i64, index: DType) -> Result<String, LowerError> {
    let (x, xt, out) = (e.name(o.operands[0]), f.ty(o.operands[0]), f.ty(o.results[0]));
    let d = xt.dtype;
    if let Some(s) = split(e, xt, &[dim]) {
        let it = TensorType::new(index, partial_shape(xt, &[dim], s));
        let (c, inits) = arg_inits(e, op, d, index, &it);
        let res = split_partials(e, &x, xt, &[dim], s, &c, &inits, |e, v, j, acc| arg_step(e, op, d, v, &acc[0], &acc[1], index, false, |e| e.op(format!("arith.index_cast {j} : index to {index}"))));
        return Ok(arg_nest(e, op, (&res[0], &inits[0].1), Some((&res[1], &it)), 0, out, index));
    }
    if row_path(e, Reducer::Max, xt, &[dim], read_in_place(f, o.operands[0])) == Some(RowPath::Loop) {
        return Ok(arg_row_loop(e, op, (&x, xt), out, index));
    }
    if !e.cg.target.parallel_outer() {
        return Ok(arg_by_reductions(e, op, (&x, xt, read_in_place(f, o.operands[0])), dim, out, index));
    }
    Ok(arg_nest(e, op, (&x, xt), None, dim, out, index))
}

/// argmax/argmin on the CPU (rows of fewer than [`TINY_ROW`] elements aside: [`arg_row_loop`])
/// in two vectorizable passes, each a reduction that takes the reductions' paths (thread
/// splits, peeled splits, [`short_columns`]): the extremum `m` of each lane (the
/// NaN-propagating max/min, [`reduce_dims`]), then the minimum over `dim` of each element's
/// candidate index: its index where it is `m` or NaN, else the dim's extent (a lane with a
/// NaN has `m` NaN and no element equal to it: its first NaN wins, as in the one-pass select
/// chain, which LLVM does not vectorize). The candidates are an elementwise generic, fused
/// into the second reduction or, where a path reshapes them, computed into a buffer first.
/// Before (two nests of their own, one thread), Zen 4, two threads, 2026-12-07, f32, us, JAX
/// in parentheses: dim 0 of [1000003, 3] 23500 -> 1120 (9100), dim 1 of [1024, 1024] 818 ->
/// 108 (2370), of [3, 1000003] 3330 -> 410 (9260), i32 [1024, 1024] rows 504 -> 64 (483),
/// the full argmax of 1e6 1450 -> 96 (4470).
fn arg_by_reductions(e: &mut Emitter, op: ArgOp, (x, xt, in_place): (&str, &TensorType, bool), dim: i64, out: &TensorType, index: DType) -> String {
    let d = xt.dtype;
    let r = xt.rank();
    let rop = if op == ArgOp::Max { Reducer::Max } else { Reducer::Min };
    let vt = TensorType::new(d, out.shape.clone());
    let m = reduce_dims(e, rop, (x, xt, in_place), &[dim], &vt);
    let ct = TensorType::new(index, xt.shape.clone());
    let kept: Vec<String> = (0..r as i64).filter(|&i| i != dim).map(|i| format!("d{i}")).collect();
    let ins = [Operand::new(x, xt, identity(r)), Operand::new(m, &vt, map(r, &kept))];
    let init = e.empty(&ct);
    let outs = [Operand::new(init, &ct, identity(r))];
    let extent = xt.shape[dim as usize];
    let cand = generic(e, &vec![Iter::Parallel; r], &ins, &outs, |e, a| {
        let k = e.op(format!("linalg.index {dim} : index"));
        let n = e.op(format!("arith.constant {extent} : {index}"));
        vec![candidate_index(e, (&a[0], &a[1], d), &k, &n, index)]
    })
    .remove(0);
    reduce_dims(e, Reducer::Min, (&cand, &ct, false), &[dim], out)
}

/// The candidate index (of dtype `index`) of element `v` (of dtype `d`) at position `k` (an
/// index) of a lane whose extremum is `m`: `k` where `v` is `m` or NaN, else `none` (the
/// second pass of [`arg_by_reductions`] and of [`arg_row_loop`]'s wide elements).
fn candidate_index(e: &mut Emitter, (v, m, d): (&str, &str, DType), k: &str, none: &str, index: DType) -> String {
    let hit = if d.is_float() {
        let eq = e.op(format!("arith.cmpf oeq, {v}, {m} : {d}"));
        let nan = e.op(format!("arith.cmpf uno, {v}, {v} : {d}"));
        e.op(format!("arith.ori {eq}, {nan} : i1"))
    } else {
        e.op(format!("arith.cmpi eq, {v}, {m} : {d}"))
    };
    let ki = e.op(format!("arith.index_cast {k} : index to {index}"));
    e.op(format!("arith.select {hit}, {ki}, {none} : {index}"))
}

/// Lowers one op of this family, returning its result's name (exhaustive over the family).
pub fn lower(e: &mut Emitter, f: &Func, o: &Op, op: &ReduceOp) -> Result<String, LowerError> {
    match op {
        ReduceOp::Reduce { op, dims } => lower_reduce(e, f, o, *op, dims),
        ReduceOp::ArgReduce { op, dim, index } => lower_argreduce(e, f, o, *op, *dim, *index),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_sizes_fill_the_gpu_and_cover_the_reduction() {
        // A full reduction of 1e6: 1024 partials of 977 (the last 7 short).
        assert_eq!(split_sizes(1, 1_000_000), Some(Split { parts: 1024, chunk: 977 }));
        // 1000 elements: at least 16 per partial; no empty chunk.
        assert_eq!(split_sizes(1, 1000), Some(Split { parts: 59, chunk: 17 }));
        assert_eq!(split_sizes(3, 5000), Some(Split { parts: 295, chunk: 17 }));
        // Many outputs or short reductions keep one thread per output.
        assert_eq!(split_sizes(4096, 1_000_000), None);
        assert_eq!(split_sizes(1, 255), None);
        assert_eq!(split_sizes(0, 1000), None);
        for (k, r) in [(1, 256), (7, 4099), (2048, 100_000), (1, 1 << 40)] {
            let s = split_sizes(k, r).unwrap();
            assert!((s.parts - 1) * s.chunk < r && r <= s.parts * s.chunk && s.parts <= SPLIT_MAX_PARTIALS && s.chunk >= SPLIT_MIN_CHUNK, "{k} {r} {s:?}");
        }
    }
}

//! Lowering of the windowed ops. The operand is padded and base-dilated with the reduction's
//! init value (`convolution::pad_dilate`); each op is then a `linalg.generic` over
//! (output dims, window dims) reading the padded operand at `o * stride + k * dilation`, with
//! a window-shaped `tensor.empty` operand that gives the window loops their extents.
//! * `reduce_window_*`: a reduction over the window loops (addf/maximumf/minimumf; integer
//!   addi/maxsi/minsi); on the CPU the output's last dim is the innermost loop, inside the
//!   window loops, so the loop that vectorizes is contiguous.
//!   A window that spans a whole axis with the padding of a cumulative reduction (window
//!   `n` along one axis padded `(n - 1, 0)`, or `(0, n - 1)` from the end; every other axis
//!   window 1, no padding, no stride or dilation: what `cumsum`/`cummax`/`cummin` trace) is a
//!   prefix scan instead ([`Window::scan_axis`](quabla_dialect::Window::scan_axis), CPU targets): O(n) loops, not the generic's O(n^2)
//!   window (1024x1024 cumsum: 605 ms -> a few ms).
//! * `select_and_gather_add`: a reduction carrying (value, tangent, found) with the select
//!   rule of the interpreter; a padded i1 mask excludes padding and holes.
//! * `select_and_scatter_add`: the same reduction yields each window's selected padded
//!   position; then a generic over (operand dims, window dims) sums, for each operand element,
//!   the source values of the windows that contain it and selected it (index arithmetic on
//!   `linalg.index`, `tensor.extract` of the source and the positions), so no scatter loop.
use quabla_dialect::{CmpDir, DType, Func, Op, ReduceWindowOp, TensorType, Window, WindowReducer};

use super::convolution::pad_dilate;
use super::layout::reshape;
use super::{float_lit, generic, int_max, int_min, list, map, zero_lit, Emitter, Iter, Operand};
use crate::LowerError;

fn init_text(op: WindowReducer, d: DType) -> String {
    match (op, d.is_float()) {
        (WindowReducer::Sum, _) => zero_lit(d).to_string(),
        (WindowReducer::Max, true) => float_lit(d, f64::NEG_INFINITY),
        (WindowReducer::Min, true) => float_lit(d, f64::INFINITY),
        (WindowReducer::Max, false) => int_min(d).to_string(),
        (WindowReducer::Min, false) => int_max(d).to_string(),
        (WindowReducer::Prod, true) => float_lit(d, 1.0),
        (WindowReducer::Prod, false) => "1".to_string(),
    }
}

/// Pads `x` for window `w` with `fill`.
fn padded(e: &mut Emitter, x: &str, xt: &TensorType, w: &Window, fill: &str) -> (String, TensorType) {
    let r = xt.rank();
    let lo: Vec<i64> = (0..r).map(|i| w.padding[2 * i]).collect();
    let hi: Vec<i64> = (0..r).map(|i| w.padding[2 * i + 1]).collect();
    pad_dilate(e, x, xt, &lo, &hi, &w.base_dilations, fill)
}

/// The loop order of a window generic over `r` output (or operand) dims and `r` window
/// dims: (o..., k...), or on the CPU (o_0 .. o_{r-2}, k..., o_{r-1}), the last output dim
/// innermost so the loop that vectorizes is contiguous.
#[derive(Clone, Copy)]
struct Loops {
    r: usize,
    inner_out: bool,
}

impl Loops {
    /// The target's order for `r` dims (`Target::parallel_outer` keeps (o..., k...)).
    fn of(e: &Emitter, r: usize) -> Loops {
        Loops { r, inner_out: !e.cg.target.parallel_outer() }
    }

    /// The loop of output dim `i`.
    fn o(self, i: usize) -> usize {
        if self.inner_out && i + 1 == self.r {
            2 * self.r - 1
        } else {
            i
        }
    }

    /// The loop of window dim `j`.
    fn k(self, j: usize) -> usize {
        if self.inner_out {
            self.r - 1 + j
        } else {
            self.r + j
        }
    }

    /// The map of the padded operand: `o * stride + k * dilation` along each dim.
    fn window_map(self, w: &Window) -> String {
        let ex: Vec<String> = (0..self.r).map(|i| format!("d{} * {} + d{} * {}", self.o(i), w.window_strides[i], self.k(i), w.window_dilations[i])).collect();
        map(2 * self.r, &ex)
    }

    /// The window-shaped operand (its loops' extents) and its map.
    fn window_operand(self, e: &mut Emitter, d: DType, w: &Window) -> Operand {
        let wt = TensorType::new(d, w.window_dimensions.clone());
        let we = e.empty(&wt);
        let ex: Vec<String> = (0..self.r).map(|j| format!("d{}", self.k(j))).collect();
        Operand::new(we, &wt, map(2 * self.r, &ex))
    }

    /// The map of an output-shaped operand.
    fn out_map(self) -> String {
        let ex: Vec<String> = (0..self.r).map(|i| format!("d{}", self.o(i))).collect();
        map(2 * self.r, &ex)
    }

    fn iters(self) -> Vec<Iter> {
        (0..2 * self.r).map(|l| if (0..self.r).any(|i| self.o(i) == l) { Iter::Parallel } else { Iter::Reduction }).collect()
    }
}

/// Row-major strides of `shape`.
pub(super) fn row_strides(shape: &[i64]) -> Vec<i64> {
    let mut s = vec![1i64; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

/// The combining op of reducer `op` on elements of `d` (unsigned integers compare
/// unsigned: `minsi` took 255 as -1, so cummin of uint8 was 255 everywhere).
fn combiner(op: WindowReducer, d: DType) -> &'static str {
    let unsigned = d.is_unsigned() || d == DType::I1;
    match (op, d.is_float()) {
        (WindowReducer::Max, false) if unsigned => "arith.maxui",
        (WindowReducer::Min, false) if unsigned => "arith.minui",
        (WindowReducer::Sum, true) => "arith.addf",
        (WindowReducer::Max, true) => "arith.maximumf",
        (WindowReducer::Min, true) => "arith.minimumf",
        (WindowReducer::Sum, false) => "arith.addi",
        (WindowReducer::Max, false) => "arith.maxsi",
        (WindowReducer::Min, false) => "arith.minsi",
        (WindowReducer::Prod, true) => "arith.mulf",
        (WindowReducer::Prod, false) => "arith.muli",
    }
}

/// The scan of `x` (type `xt`) along `axis` with `comb` from `init` (reverse: from the end).
/// The operand is viewed as `[outer, n, inner]`; each outer slice is scanned on its own (an
/// `scf.forall` over them when the target splits the work across threads). With `inner`
/// 1 the running value is carried in a register along the contiguous axis; otherwise each
/// row `j` of the slice is the previous row combined with the operand's row `j` (contiguous
/// inner loops). The order of the combinations is the window's (`init`, then the elements
/// in order) for a forward scan; a reverse scan combines from the end. `dst`: the output's
/// buffer as a tensor when the scan's result is an output.
fn lower_scan(e: &mut Emitter, x: &str, xt: &TensorType, (axis, reverse): (usize, bool), init: &str, comb: &str, dst: Option<String>) -> String {
    let d = xt.dtype;
    let sh = &xt.shape;
    // Sub-products of a program type's extents (checked when the program was built).
    let prod = |v: &[i64]| quabla_dialect::size::saturating_product(v.iter().copied());
    let (outer, n, inner) = (prod(&sh[..axis]), sh[axis], prod(&sh[axis + 1..]));
    let t3 = TensorType::new(d, [outer, n, inner]);
    let threads = e.threads();
    let par = threads > 1 && e.cg.target.parallel_loop(&[true, false], &[outer, n * inner], threads, 1) == Some(0);
    // One slice (outer 1: a scan over the leading dim of a matrix) whose columns the threads
    // share: each thread scans its block of columns (the slice's rows strided). cumsum over
    // dim 0 of a [3, 1000003] f32 array ran on one thread: 1228 us, JAX 804.
    let columns = !par && outer == 1 && threads > 1 && inner % threads == 0 && e.cg.target.parallel_loop(&[false, true], &[n, inner], threads, 1) == Some(1);
    let run = if columns { inner / threads } else { inner };
    let t2 = TensorType::new(d, [n, run]);
    let x3 = reshape(e, x, xt, &t3);
    // Into the output's buffer viewed as `[outer, n, inner]` when the result is an output:
    // through the reshapes, empty-tensor elimination left a buffer of its own and a copy
    // (cumsum over dim 0 of [3, 1000000] f32 1020 -> 720 us, JAX 790).
    let init3 = match dst {
        Some(t) => reshape(e, &t, xt, &t3),
        None => e.empty(&t3),
    };
    let c0 = e.index(0);
    let c1 = e.index(1);
    // On threads, one contiguous part of the slices per thread, each part a loop over its
    // slices (one `scf.forall` iteration per slice of a row was as slow on two threads as
    // on one, or 2.5x slower: cumsum over 65536 rows of 10 f32 229-780 us, 258-272 on one).
    let parts = threads.max(1);
    let chunked = par && outer % parts == 0 && outer / parts > 1;
    let chunk = outer / parts;
    let tc = TensorType::new(d, [chunk, n, inner]);
    let (iv, acc, res) = (e.fresh(), e.fresh(), e.fresh());
    let (whole, part_loop) = (e.fresh(), e.fresh());
    let mut pslice = String::new();
    let at = if chunked { &tc } else { &t3 };
    let o = if chunked {
        let pv = e.fresh();
        e.raw_line(format!("{res} = scf.forall ({pv}) in ({parts}) shared_outs({whole} = {init3}) -> ({t3}) {{"));
        e.depth += 1;
        let cch = e.index(chunk);
        let base = e.op(format!("arith.muli {pv}, {cch} : index"));
        pslice = format!("[{base}, 0, 0] [{chunk}, {n}, {inner}] [1, 1, 1]");
        let part = e.op(format!("tensor.extract_slice {whole}{pslice} : {t3} to {tc}"));
        e.raw_line(format!("{part_loop} = scf.for {iv} = {c0} to {cch} step {c1} iter_args({acc} = {part}) -> ({tc}) {{"));
        e.depth += 1;
        e.op(format!("arith.addi {base}, {iv} : index"))
    } else if columns {
        e.raw_line(format!("{res} = scf.forall ({iv}) in ({threads}) shared_outs({acc} = {init3}) -> ({t3}) {{"));
        e.depth += 1;
        let cr = e.index(run);
        e.op(format!("arith.muli {iv}, {cr} : index"))
    } else {
        if par {
            e.raw_line(format!("{res} = scf.forall ({iv}) in ({outer}) shared_outs({acc} = {init3}) -> ({t3}) {{"));
        } else {
            let co = e.index(outer);
            e.raw_line(format!("{res} = scf.for {iv} = {c0} to {co} step {c1} iter_args({acc} = {init3}) -> ({t3}) {{"));
        }
        e.depth += 1;
        iv.clone()
    };
    // The slice of the operand (global row `o`, or with `columns` the thread's first column
    // `o`) and of the accumulator (the part's row).
    let slice = if columns { format!("[0, 0, {o}] [1, {n}, {run}] [1, 1, 1]") } else { format!("[{o}, 0, 0] [1, {n}, {inner}] [1, 1, 1]") };
    let aslice = if chunked { format!("[{iv}, 0, 0] [1, {n}, {inner}] [1, 1, 1]") } else { slice.clone() };
    let xs = e.op(format!("tensor.extract_slice {x3}{slice} : {t3} to {t2}"));
    let os = e.op(format!("tensor.extract_slice {acc}{aslice} : {at} to {t2}"));
    let cn = e.index(n);
    let last = e.index(n - 1);
    // Row `j` of the scan order: j, or n - 1 - j from the end.
    let row = |e: &mut Emitter, j: &str| if reverse { e.op(format!("arith.subi {last}, {j} : index")) } else { j.to_string() };
    let j0 = if reverse { last.clone() } else { c0.clone() };
    // One element: `prev comb x[at]` inserted into `u` at `at`; returns (value, tensor).
    let step = |e: &mut Emitter, prev: &str, u: &str, at: &str| {
        let xv = e.op(format!("tensor.extract {xs}[{at}] : {t2}"));
        let s = e.op(format!("{comb} {prev}, {xv} : {d}"));
        let u2 = e.op(format!("tensor.insert {s} into {u}[{at}] : {t2}"));
        (s, u2)
    };
    let ys = if inner == 1 {
        let (s0, u0) = step(e, init, &os, &format!("{j0}, {c0}"));
        let (j, c, u, r) = (e.fresh(), e.fresh(), e.fresh(), e.fresh());
        e.raw_line(format!("{r}:2 = scf.for {j} = {c1} to {cn} step {c1} iter_args({c} = {s0}, {u} = {u0}) -> ({d}, {t2}) {{"));
        e.depth += 1;
        let jj = row(e, &j);
        let (s, u2) = step(e, &c, &u, &format!("{jj}, {c0}"));
        e.line(format!("scf.yield {s}, {u2} : {d}, {t2}"));
        e.depth -= 1;
        e.line("}");
        format!("{r}#1")
    } else {
        let ci = e.index(run);
        // One row: element i is `prev(i) comb x[jj, i]`.
        let row_loop = |e: &mut Emitter, t: &str, jj: &str, prev: &dyn Fn(&mut Emitter, &str, &str) -> String| {
            let (i, u, r) = (e.fresh(), e.fresh(), e.fresh());
            e.raw_line(format!("{r} = scf.for {i} = {c0} to {ci} step {c1} iter_args({u} = {t}) -> ({t2}) {{"));
            e.depth += 1;
            let pv = prev(e, &u, &i);
            let (_, u2) = step(e, &pv, &u, &format!("{jj}, {i}"));
            e.line(format!("scf.yield {u2} : {t2}"));
            e.depth -= 1;
            e.line("}");
            r
        };
        let first = row_loop(e, &os, &j0, &|_, _, _| init.to_string());
        let (j, t, r) = (e.fresh(), e.fresh(), e.fresh());
        e.raw_line(format!("{r} = scf.for {j} = {c1} to {cn} step {c1} iter_args({t} = {first}) -> ({t2}) {{"));
        e.depth += 1;
        let jj = row(e, &j);
        let jp = if reverse { e.op(format!("arith.addi {jj}, {c1} : index")) } else { e.op(format!("arith.subi {jj}, {c1} : index")) };
        let next = row_loop(e, &t, &jj, &|e, u, i| e.op(format!("tensor.extract {u}[{jp}, {i}] : {t2}")));
        e.line(format!("scf.yield {next} : {t2}"));
        e.depth -= 1;
        e.line("}");
        r
    };
    if chunked {
        let y = e.op(format!("tensor.insert_slice {ys} into {acc}{aslice} : {t2} into {tc}"));
        e.line(format!("scf.yield {y} : {tc}"));
        e.depth -= 1;
        e.line("}");
        super::dot::end_forall(e, &format!("{part_loop} into {whole}{pslice} : {tc} into {t3}"));
    } else if par || columns {
        super::dot::end_forall(e, &format!("{ys} into {acc}{slice} : {t2} into {t3}"));
    } else {
        let y3 = e.op(format!("tensor.insert_slice {ys} into {acc}{slice} : {t2} into {t3}"));
        e.line(format!("scf.yield {y3} : {t3}"));
        e.depth -= 1;
        e.line("}");
    }
    reshape(e, &res, &t3, xt)
}

/// `quabla.reduce_window_*`.
pub fn lower_reduce_window(e: &mut Emitter, f: &Func, o: &Op, op: WindowReducer, w: &Window) -> Result<String, LowerError> {
    let x = e.name(o.operands[0]);
    let (xt, out) = (f.ty(o.operands[0]).clone(), f.ty(o.results[0]).clone());
    let (d, r) = (xt.dtype, xt.rank());
    let init = e.scalar(d, &init_text(op, d));
    let comb = combiner(op, d);
    if let Some(scan) = w.scan_axis(&xt.shape).filter(|_| !e.cg.target.parallel_outer() && out.shape == xt.shape) {
        let dst = e.output_tensor(o.results[0], &out);
        return Ok(lower_scan(e, &x, &xt, scan, &init, comb, dst));
    }
    let (p, pt) = padded(e, &x, &xt, w, &init);
    // The output's last dim innermost on the CPU (2x2 max pooling of 8x64x64x32 f32:
    // 1784 -> 233 us).
    let l = Loops::of(e, r);
    let wop = l.window_operand(e, d, w);
    let acc = e.filled(&out, &init);
    let res = generic(e, &l.iters(), &[Operand::new(p, &pt, l.window_map(w)), wop], &[Operand::new(acc, &out, l.out_map())], |e, a| vec![e.op(format!("{comb} {}, {} : {d}", a[2], a[0]))]);
    Ok(res[0].clone())
}

/// The select reduction over windows of the padded operand: per output element the
/// (value, payload, found) of the selected element, where the payload is read from `payload`
/// (padded like the operand) or, with `None`, is the flat padded position (i64).
#[allow(clippy::needless_range_loop)]
fn select_reduce(e: &mut Emitter, x: &str, xt: &TensorType, w: &Window, select: CmpDir, out: &[i64], payload: Option<&str>) -> (String, String) {
    let (d, r) = (xt.dtype, xt.rank());
    let ext = if select == CmpDir::Ge { f64::NEG_INFINITY } else { f64::INFINITY };
    let fill = e.scalar(d, &float_lit(d, ext));
    let (p, pt) = padded(e, x, xt, w, &fill);
    let mask_t = xt.with_dtype(DType::I1);
    let t = e.scalar(DType::I1, "true");
    let ff = e.scalar(DType::I1, "false");
    let ones = e.filled(&mask_t, &t);
    let (mk, mkt) = padded(e, &ones, &mask_t, w, &ff);
    let l = Loops::of(e, r);
    let wm = l.window_map(w);
    let mut ins = vec![Operand::new(p, &pt, wm.clone()), Operand::new(mk, &mkt, wm.clone())];
    let pd = match payload {
        Some(tn) => {
            let z = e.scalar(d, zero_lit(d));
            let (tp, tpt) = padded(e, tn, xt, w, &z);
            ins.push(Operand::new(tp, &tpt, wm));
            d
        }
        None => DType::I64,
    };
    ins.push(l.window_operand(e, d, w));
    let vt = TensorType::new(d, out.to_vec());
    let pt_out = TensorType::new(pd, out.to_vec());
    let ft = TensorType::new(DType::I1, out.to_vec());
    let v0 = e.filled(&vt, &fill);
    let pz = e.scalar(pd, zero_lit(pd));
    let p0 = e.filled(&pt_out, &pz);
    let f0 = e.filled(&ft, &ff);
    let om = l.out_map();
    let pstrides = row_strides(&pt.shape);
    let win = w.clone();
    let pred = if select == CmpDir::Ge { "oge" } else { "ole" };
    let res = generic(e, &l.iters(), &ins, &[Operand::new(v0, &vt, om.clone()), Operand::new(p0, &pt_out, om.clone()), Operand::new(f0, &ft, om)], |e, a| {
        let n_in = a.len() - 3;
        let (xv, mv) = (a[0].clone(), a[1].clone());
        let (cv, cp, cf) = (a[n_in].clone(), a[n_in + 1].clone(), a[n_in + 2].clone());
        let pv = match payload {
            Some(_) => a[2].clone(),
            None => {
                // Flat padded position of (o * stride + k * dilation).
                let mut flat = e.op("arith.constant 0 : index");
                for i in 0..r {
                    let oi = e.op(format!("linalg.index {} : index", l.o(i)));
                    let ki = e.op(format!("linalg.index {} : index", l.k(i)));
                    let s = e.op(format!("arith.constant {} : index", win.window_strides[i]));
                    let wd = e.op(format!("arith.constant {} : index", win.window_dilations[i]));
                    let ps = e.op(format!("arith.constant {} : index", pstrides[i]));
                    let a1 = e.op(format!("arith.muli {oi}, {s} : index"));
                    let a2 = e.op(format!("arith.muli {ki}, {wd} : index"));
                    let pos = e.op(format!("arith.addi {a1}, {a2} : index"));
                    let c = e.op(format!("arith.muli {pos}, {ps} : index"));
                    flat = e.op(format!("arith.addi {flat}, {c} : index"));
                }
                e.op(format!("arith.index_cast {flat} : index to i64"))
            }
        };
        let cmp = e.op(format!("arith.cmpf {pred}, {cv}, {xv} : {d}"));
        let keep = e.op(format!("arith.andi {cf}, {cmp} : i1"));
        let tr = e.op("arith.constant true");
        let nkeep = e.op(format!("arith.xori {keep}, {tr} : i1"));
        let take = e.op(format!("arith.andi {mv}, {nkeep} : i1"));
        let nv = e.op(format!("arith.select {take}, {xv}, {cv} : {d}"));
        let np = e.op(format!("arith.select {take}, {pv}, {cp} : {pd}"));
        let nf = e.op(format!("arith.ori {cf}, {mv} : i1"));
        vec![nv, np, nf]
    });
    (res[1].clone(), res[2].clone())
}

/// `quabla.select_and_gather_add`.
pub fn lower_gather(e: &mut Emitter, f: &Func, o: &Op, select: CmpDir, w: &Window) -> Result<String, LowerError> {
    let (t, x) = (e.name(o.operands[0]), e.name(o.operands[1]));
    let (xt, out) = (f.ty(o.operands[1]).clone(), f.ty(o.results[0]).clone());
    Ok(select_reduce(e, &x, &xt, w, select, &out.shape, Some(&t)).0)
}

/// `select_and_scatter_add` on the CPU: one sequential loop over the windows adds each
/// window's source value at its selected position (`pos`, flat in the padded and dilated
/// operand of shape `pshape`; none where `found` is false) of a zeroed padded buffer, in
/// window order as the interpreter does, then the operand's elements are the buffer's
/// interior (offsets the low padding, strides the base dilation; padding `>= 0`). O(windows
/// + operand), where the gather form visits every (element, window offset) pair with its
/// index arithmetic (2x2 max pooling's gradient on 8x64x64x32: 26.5 ms there).
fn scatter_selected(e: &mut Emitter, (src, st): (&str, &TensorType), xt: &TensorType, w: &Window, (pos, found): (&str, &str), pshape: &[i64]) -> String {
    let (d, r) = (xt.dtype, xt.rank());
    // Sizes of program types (checked when the program was built).
    let nw = quabla_dialect::size::saturating_product(st.shape.iter().copied());
    let np = quabla_dialect::size::saturating_product(pshape.iter().copied());
    let flat = TensorType::new(d, [np]);
    let z = e.scalar(d, zero_lit(d));
    let acc = e.filled(&flat, &z);
    let w1 = |dt: DType| TensorType::new(dt, [nw]);
    let src1 = reshape(e, src, st, &w1(d));
    let pos1 = reshape(e, pos, &st.with_dtype(DType::I64), &w1(DType::I64));
    let found1 = reshape(e, found, &st.with_dtype(DType::I1), &w1(DType::I1));
    let (c0, c1, cn) = (e.index(0), e.index(1), e.index(nw));
    let (i, a, res) = (e.fresh(), e.fresh(), e.fresh());
    e.raw_line(format!("{res} = scf.for {i} = {c0} to {cn} step {c1} iter_args({a} = {acc}) -> ({flat}) {{"));
    e.depth += 1;
    let fv = e.op(format!("tensor.extract {found1}[{i}] : {}", w1(DType::I1)));
    let next = e.if_else_keep(&fv, &flat, &a, |e| {
        let p = e.op(format!("tensor.extract {pos1}[{i}] : {}", w1(DType::I64)));
        let pi = e.op(format!("arith.index_cast {p} : i64 to index"));
        let sv = e.op(format!("tensor.extract {src1}[{i}] : {}", w1(d)));
        let cur = e.op(format!("tensor.extract {a}[{pi}] : {flat}"));
        let add = if d.is_float() { "arith.addf" } else { "arith.addi" };
        let sum = e.op(format!("{add} {cur}, {sv} : {d}"));
        e.op(format!("tensor.insert {sum} into {a}[{pi}] : {flat}"))
    });
    e.line(format!("scf.yield {next} : {flat}"));
    e.depth -= 1;
    e.line("}");
    let pt = TensorType::new(d, pshape.to_vec());
    let padded = reshape(e, &res, &flat, &pt);
    let lo: Vec<i64> = (0..r).map(|i| w.padding[2 * i]).collect();
    if lo.iter().all(|&x| x == 0) && w.base_dilations.iter().all(|&b| b == 1) && pshape == xt.shape.as_slice() {
        return padded;
    }
    e.op(format!("tensor.extract_slice {padded}[{}] [{}] [{}] : {pt} to {xt}", list(&lo), list(&xt.shape), list(&w.base_dilations)))
}

/// `quabla.select_and_scatter_add`.
#[allow(clippy::needless_range_loop)]
pub fn lower_scatter(e: &mut Emitter, f: &Func, o: &Op, select: CmpDir, w: &Window) -> Result<String, LowerError> {
    let (src, x) = (e.name(o.operands[0]), e.name(o.operands[1]));
    let (st, xt) = (f.ty(o.operands[0]).clone(), f.ty(o.operands[1]).clone());
    let (d, r) = (xt.dtype, xt.rank());
    let (pos, found) = select_reduce(e, &x, &xt, w, select, &st.shape, None);
    let pshape: Vec<i64> = (0..r).map(|i| (xt.shape[i] - 1) * w.base_dilations[i] + 1 + w.padding[2 * i] + w.padding[2 * i + 1]).collect();
    if !e.cg.target.parallel_outer() && w.padding.iter().all(|&p| p >= 0) {
        return Ok(scatter_selected(e, (&src, &st), &xt, w, (&pos, &found), &pshape));
    }
    let pstrides = row_strides(&pshape);
    let l = Loops { r, inner_out: false };
    let wop = l.window_operand(e, d, w);
    let z = e.scalar(d, zero_lit(d));
    let acc = e.filled(&xt, &z);
    let pt_i = st.with_dtype(DType::I64);
    let ft = st.with_dtype(DType::I1);
    let win = w.clone();
    let res = generic(e, &l.iters(), &[wop], &[Operand::new(acc, &xt, l.out_map())], |e, a| {
        let c0 = e.op("arith.constant 0 : index");
        let mut valid = e.op("arith.constant true");
        let mut flat = c0.clone();
        let mut idx = Vec::with_capacity(r);
        for i in 0..r {
            let pi = e.op(format!("linalg.index {i} : index"));
            let ki = e.op(format!("linalg.index {} : index", r + i));
            let bd = e.op(format!("arith.constant {} : index", win.base_dilations[i]));
            let lo = e.op(format!("arith.constant {} : index", win.padding[2 * i]));
            let wd = e.op(format!("arith.constant {} : index", win.window_dilations[i]));
            let s = e.op(format!("arith.constant {} : index", win.window_strides[i]));
            let n_out = e.op(format!("arith.constant {} : index", st.shape[i]));
            let ps = e.op(format!("arith.constant {} : index", pstrides[i]));
            // pp = lo + p * bd (padded position of this element); q = pp - k * wd.
            let pb = e.op(format!("arith.muli {pi}, {bd} : index"));
            let pp = e.op(format!("arith.addi {pb}, {lo} : index"));
            let kw = e.op(format!("arith.muli {ki}, {wd} : index"));
            let q = e.op(format!("arith.subi {pp}, {kw} : index"));
            let nonneg = e.op(format!("arith.cmpi sge, {q}, {c0} : index"));
            let rem = e.op(format!("arith.remsi {q}, {s} : index"));
            let exact = e.op(format!("arith.cmpi eq, {rem}, {c0} : index"));
            let oi = e.op(format!("arith.divsi {q}, {s} : index"));
            let inr = e.op(format!("arith.cmpi slt, {oi}, {n_out} : index"));
            let v1 = e.op(format!("arith.andi {nonneg}, {exact} : i1"));
            let v2 = e.op(format!("arith.andi {v1}, {inr} : i1"));
            valid = e.op(format!("arith.andi {valid}, {v2} : i1"));
            idx.push(oi);
            let c = e.op(format!("arith.muli {pp}, {ps} : index"));
            flat = e.op(format!("arith.addi {flat}, {c} : index"));
        }
        // Clamp the window index so the reads stay in bounds (their value is unused when invalid).
        let safe: Vec<String> = idx.iter().map(|oi| e.op(format!("arith.select {valid}, {oi}, {c0} : index"))).collect();
        let ix = safe.join(", ");
        let sv = e.op(format!("tensor.extract {src}[{ix}] : {st}"));
        let sp = e.op(format!("tensor.extract {pos}[{ix}] : {pt_i}"));
        let sf = e.op(format!("tensor.extract {found}[{ix}] : {ft}"));
        let fl = e.op(format!("arith.index_cast {flat} : index to i64"));
        let same = e.op(format!("arith.cmpi eq, {sp}, {fl} : i64"));
        let m1 = e.op(format!("arith.andi {valid}, {sf} : i1"));
        let m2 = e.op(format!("arith.andi {m1}, {same} : i1"));
        let zz = e.op(format!("arith.constant {} : {d}", zero_lit(d)));
        let add = e.op(format!("arith.select {m2}, {sv}, {zz} : {d}"));
        vec![e.op(format!("arith.addf {}, {add} : {d}", a[1]))]
    });
    Ok(res[0].clone())
}

/// Lowers one op of this family, returning its result's name (exhaustive over the family).
pub fn lower(e: &mut Emitter, f: &Func, o: &Op, op: &ReduceWindowOp) -> Result<String, LowerError> {
    match op {
        ReduceWindowOp::ReduceWindow { op, window } => lower_reduce_window(e, f, o, *op, window),
        ReduceWindowOp::SelectAndScatterAdd { select, window } => lower_scatter(e, f, o, *select, window),
        ReduceWindowOp::SelectAndGatherAdd { select, window } => lower_gather(e, f, o, *select, window),
    }
}

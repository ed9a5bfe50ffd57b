//! Lowering of reductions: a `linalg.generic` with reduction iterators over the reduced dims
//! into an init filled with the identity (sum 0, prod 1, max -inf/MIN/false, min
//! +inf/MAX/true), combining with the elementwise max/min (NaN-propagating for floats,
//! or/and for i1); float sums and products carry `fastmath<reassoc>` (their order is
//! unspecified), so LLVM vectorizes them. `argmax`/`argmin` carry (value, index) outputs: a candidate replaces the
//! best when it is strictly better, or NaN while the best is not; so the first extremal index
//! wins and NaN counts as maximal for argmax and minimal for argmin (the first NaN wins).
use quabla_dialect::{ArgOp, BinaryOp, DType, Func, Op, ReduceOp, Reducer, TensorType};

use super::{elementwise::binary, float_lit, generic, identity, int_max, int_min, map, Emitter, Iter, Operand};
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

/// `quabla.reduce_{sum,max,min,prod}`.
pub fn lower_reduce(e: &mut Emitter, f: &Func, o: &Op, op: Reducer, dims: &[i64]) -> Result<String, LowerError> {
    let (x, xt, out) = (e.name(o.operands[0]), f.ty(o.operands[0]), f.ty(o.results[0]));
    if dims.is_empty() {
        return Ok(x);
    }
    let d = xt.dtype;
    let c = e.scalar(d, &identity_value(op, d));
    let nest = reduction_nest(xt.rank(), dims, e.cg.target.parallel_outer());
    let ot = nest.out_type(out);
    let init = e.filled(&ot, &c);
    let ins = [Operand::new(x, xt, nest.imap.clone())];
    let r = generic(e, &nest.iters, &ins, &[Operand::new(init, &ot, nest.omap.clone())], |e, a| {
        let (acc, x) = (&a[1], &a[0]);
        vec![match op {
            // Float sums and products may be reassociated (their order is unspecified), which
            // lets LLVM's loop vectorizer split them into vector lanes.
            Reducer::Sum if d.is_float() => e.op(format!("arith.addf {acc}, {x} fastmath<reassoc> : {d}")),
            Reducer::Prod if d.is_float() => e.op(format!("arith.mulf {acc}, {x} fastmath<reassoc> : {d}")),
            _ => binary(e, combine(op), d, acc, x),
        }]
    })
    .remove(0);
    Ok(nest.result(e, r, out))
}

/// `quabla.argmax` / `quabla.argmin`.
pub fn lower_argreduce(e: &mut Emitter, f: &Func, o: &Op, op: ArgOp, dim: i64, index: DType) -> Result<String, LowerError> {
    let (x, xt, out) = (e.name(o.operands[0]), f.ty(o.operands[0]), f.ty(o.results[0]));
    let d = xt.dtype;
    let nest = reduction_nest(xt.rank(), &[dim], e.cg.target.parallel_outer());
    let it = nest.out_type(out);
    let vt = TensorType::new(d, it.shape.clone());
    let rop = if op == ArgOp::Max { Reducer::Max } else { Reducer::Min };
    let c = e.scalar(d, &identity_value(rop, d));
    let vinit = e.filled(&vt, &c);
    let z = e.scalar(index, "0");
    let iinit = e.filled(&it, &z);
    let ins = [Operand::new(x, xt, nest.imap.clone())];
    let outs = [Operand::new(vinit, &vt, nest.omap.clone()), Operand::new(iinit, &it, nest.omap.clone())];
    let k_loop = nest.loop_of[dim as usize];
    let res = generic(e, &nest.iters, &ins, &outs, |e, a| {
        let (v, best, bi) = (&a[0], &a[1], &a[2]);
        let better = if d.is_float() {
            let pred = if op == ArgOp::Max { "ogt" } else { "olt" };
            let strict = e.op(format!("arith.cmpf {pred}, {v}, {best} : {d}"));
            let vnan = e.op(format!("arith.cmpf uno, {v}, {v} : {d}"));
            let bnum = e.op(format!("arith.cmpf ord, {best}, {best} : {d}"));
            let nan_wins = e.op(format!("arith.andi {vnan}, {bnum} : i1"));
            e.op(format!("arith.ori {strict}, {nan_wins} : i1"))
        } else {
            let pred = match (op == ArgOp::Max, d.is_unsigned()) {
                (true, false) => "sgt",
                (false, false) => "slt",
                (true, true) => "ugt",
                (false, true) => "ult",
            };
            e.op(format!("arith.cmpi {pred}, {v}, {best} : {d}"))
        };
        let k = e.op(format!("linalg.index {k_loop} : index"));
        let ki = e.op(format!("arith.index_cast {k} : index to {index}"));
        let nv = e.op(format!("arith.select {better}, {v}, {best} : {d}"));
        let ni = e.op(format!("arith.select {better}, {ki}, {bi} : {index}"));
        vec![nv, ni]
    });
    Ok(nest.result(e, res[1].clone(), out))
}

/// Lowers one op of this family, returning its result's name (exhaustive over the family).
pub fn lower(e: &mut Emitter, f: &Func, o: &Op, op: &ReduceOp) -> Result<String, LowerError> {
    match op {
        ReduceOp::Reduce { op, dims } => lower_reduce(e, f, o, *op, dims),
        ReduceOp::ArgReduce { op, dim, index } => lower_argreduce(e, f, o, *op, *dim, *index),
    }
}

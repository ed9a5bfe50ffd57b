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

/// The output map and the iterator kinds for reducing `dims` of a rank-`r` operand.
fn reduction_shape(r: usize, dims: &[i64]) -> (String, Vec<Iter>) {
    let reduced = |i: usize| dims.contains(&(i as i64));
    let kept: Vec<String> = (0..r).filter(|&i| !reduced(i)).map(|i| format!("d{i}")).collect();
    let iters = (0..r).map(|i| if reduced(i) { Iter::Reduction } else { Iter::Parallel }).collect();
    (map(r, &kept), iters)
}

/// `quabla.reduce_{sum,max,min,prod}`.
pub fn lower_reduce(e: &mut Emitter, f: &Func, o: &Op, op: Reducer, dims: &[i64]) -> Result<String, LowerError> {
    let (x, xt, out) = (e.name(o.operands[0]), f.ty(o.operands[0]), f.ty(o.results[0]));
    if dims.is_empty() {
        return Ok(x);
    }
    let d = xt.dtype;
    let c = e.scalar(d, &identity_value(op, d));
    let init = e.filled(out, &c);
    let (omap, iters) = reduction_shape(xt.rank(), dims);
    let ins = [Operand::new(x, xt, identity(xt.rank()))];
    Ok(generic(e, &iters, &ins, &[Operand::new(init, out, omap)], |e, a| {
        let (acc, x) = (&a[1], &a[0]);
        vec![match op {
            // Float sums and products may be reassociated (their order is unspecified), which
            // lets LLVM's loop vectorizer split them into vector lanes.
            Reducer::Sum if d.is_float() => e.op(format!("arith.addf {acc}, {x} fastmath<reassoc> : {d}")),
            Reducer::Prod if d.is_float() => e.op(format!("arith.mulf {acc}, {x} fastmath<reassoc> : {d}")),
            _ => binary(e, combine(op), d, acc, x),
        }]
    })
    .remove(0))
}

/// `quabla.argmax` / `quabla.argmin`.
pub fn lower_argreduce(e: &mut Emitter, f: &Func, o: &Op, op: ArgOp, dim: i64, index: DType) -> Result<String, LowerError> {
    let (x, xt, out) = (e.name(o.operands[0]), f.ty(o.operands[0]), f.ty(o.results[0]));
    let d = xt.dtype;
    let vt = TensorType::new(d, out.shape.clone());
    let rop = if op == ArgOp::Max { Reducer::Max } else { Reducer::Min };
    let c = e.scalar(d, &identity_value(rop, d));
    let vinit = e.filled(&vt, &c);
    let z = e.scalar(index, "0");
    let iinit = e.filled(out, &z);
    let (omap, iters) = reduction_shape(xt.rank(), &[dim]);
    let ins = [Operand::new(x, xt, identity(xt.rank()))];
    let outs = [Operand::new(vinit, &vt, omap.clone()), Operand::new(iinit, out, omap)];
    let res = generic(e, &iters, &ins, &outs, |e, a| {
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
        let k = e.op(format!("linalg.index {dim} : index"));
        let ki = e.op(format!("arith.index_cast {k} : index to {index}"));
        let nv = e.op(format!("arith.select {better}, {v}, {best} : {d}"));
        let ni = e.op(format!("arith.select {better}, {ki}, {bi} : {index}"));
        vec![nv, ni]
    });
    Ok(res[1].clone())
}

/// Lowers one op of this family, returning its result's name (exhaustive over the family).
pub fn lower(e: &mut Emitter, f: &Func, o: &Op, op: &ReduceOp) -> Result<String, LowerError> {
    match op {
        ReduceOp::Reduce { op, dims } => lower_reduce(e, f, o, *op, dims),
        ReduceOp::ArgReduce { op, dim, index } => lower_argreduce(e, f, o, *op, *dim, *index),
    }
}

//! Export of the sort family: a `stablehlo.sort` of (x, iota along `dimension`) whose
//! comparator is NumPy's total order on x (`a < b`, or a is a number and b NaN; swapped for
//! `gt`, descending) with ties broken by the iota, so the result is the stable order whether
//! or not a backend honours `is_stable` (which is still set). `sort` returns the sorted x,
//! `argsort` the sorted iota. (IREE's llvm-cpu merges several sorts of the same operands with
//! different comparators in one program: tests/stablehlo/test_ops.py runs one per program.)
use quabla_dialect::{CmpDir, DType, Func, Op, SortOp, TensorType};

use super::elementwise::{bin, compare};
use super::{int_attr, Emitter, Tv};
use crate::LowerError;

/// `a` before `b` ascending, on 0-d block arguments.
fn less(e: &mut Emitter, a: &Tv, b: &Tv) -> Tv {
    let lt = compare(e, CmpDir::Lt, a, b);
    if !a.ty.dtype.is_float() {
        return lt;
    }
    let anan = compare(e, CmpDir::Ne, a, a);
    let bnan = compare(e, CmpDir::Ne, b, b);
    let anum = e.op("stablehlo.not", &[&anan], &[], &anan.ty);
    let nan_after = bin(e, "stablehlo.and", &anum, &bnan);
    bin(e, "stablehlo.or", &lt, &nan_after)
}

/// The comparator on block arguments (x lhs, x rhs, iota lhs, iota rhs): lhs's key first, or
/// equal keys and lhs's index smaller.
fn comparator(e: &mut Emitter, a: &[Tv], desc: bool) -> Tv {
    let (xa, xb, ia, ib) = (&a[0], &a[1], &a[2], &a[3]);
    let (before, after) = if desc { (less(e, xb, xa), less(e, xa, xb)) } else { (less(e, xa, xb), less(e, xb, xa)) };
    let nb = e.op("stablehlo.not", &[&before], &[], &before.ty);
    let na = e.op("stablehlo.not", &[&after], &[], &after.ty);
    let tie = bin(e, "stablehlo.and", &nb, &na);
    let first = compare(e, CmpDir::Lt, ia, ib);
    let tie_first = bin(e, "stablehlo.and", &tie, &first);
    bin(e, "stablehlo.or", &before, &tie_first)
}

fn export(e: &mut Emitter, f: &Func, o: &Op, dim: i64, desc: bool, index: Option<DType>) -> Result<Tv, LowerError> {
    let x = e.get(f, o.operands[0]);
    Ok(export_last(e, x, dim, desc, index))
}

fn export_last(e: &mut Emitter, x: Tv, dim: i64, desc: bool, index: Option<DType>) -> Tv {
    let it = index.unwrap_or(DType::I64);
    let attrs = [("dimension", int_attr(dim)), ("is_stable", "true".to_string())];
    let sv = TensorType::scalar(x.ty.dtype);
    let si = TensorType::scalar(it);
    let iota = e.op("stablehlo.iota", &[], &[("iota_dimension", int_attr(dim))], &x.ty.with_dtype(it));
    let results = [x.ty.clone(), x.ty.with_dtype(it)];
    let r = e.region_op("stablehlo.sort", &[&x, &iota], &attrs, &[sv.clone(), sv, si.clone(), si], &results, |e, a| vec![comparator(e, a, desc)]);
    r[if index.is_some() { 1 } else { 0 }].clone()
}

/// Exports one op of this family (exhaustive over the family).
pub fn lower(e: &mut Emitter, f: &Func, o: &Op, op: &SortOp) -> Result<Tv, LowerError> {
    match op {
        SortOp::Sort { dimension, direction } => export(e, f, o, *dimension, *direction == CmpDir::Gt, None),
        SortOp::Argsort { dimension, direction, index } => export(e, f, o, *dimension, *direction == CmpDir::Gt, Some(*index)),
    }
}

//! Export of reductions. `reduce_{sum,prod,max,min}` are a `stablehlo.reduce` over the same
//! dims from the op's identity (sum 0, prod 1, max -inf/MIN/false, min +inf/MAX/true) with a
//! region combining by add, multiply, maximum/minimum (NaN-propagating for floats) or
//! or/and (i1). A reduction over no dims is the operand itself.
//!
//! `argmax`/`argmin` are a variadic `stablehlo.reduce` over (value, iota index along the dim)
//! from (identity, 0). StableHLO reduces in an unspecified order, so the combiner is the
//! maximum of a total order, independent of order: a wins over b when a's value is strictly
//! better, or a is NaN and b is not (NaN is maximal for argmax and minimal for argmin), or
//! both values tie (equal, or both NaN) and a's index is smaller. So the first extremal
//! index wins and the first NaN wins, as quabla (and NumPy) define it. The (identity, 0)
//! start only wins when every element equals the identity, where 0 is the right index.
use quabla_dialect::{ArgOp, CmpDir, DType, Func, Op, ReduceOp, Reducer, TensorType};

use super::elementwise::{bin, compare, select};
use super::{array, int_max_text, int_min_text, scalar_text, Emitter, Tv};
use crate::LowerError;

/// The identity of `op` on dtype `d`, as element text.
fn identity_text(op: Reducer, d: DType) -> String {
    match (op, d) {
        (Reducer::Sum, _) => scalar_text(d, 0.0),
        (Reducer::Prod, _) => scalar_text(d, 1.0),
        (Reducer::Max, DType::I32 | DType::I64 | DType::U8 | DType::U32) => int_min_text(d),
        (Reducer::Max, DType::I1) => scalar_text(d, 0.0),
        (Reducer::Max, _) => scalar_text(d, f64::NEG_INFINITY),
        (Reducer::Min, DType::I32 | DType::I64 | DType::U8 | DType::U32) => int_max_text(d),
        (Reducer::Min, DType::I1) => scalar_text(d, 1.0),
        (Reducer::Min, _) => scalar_text(d, f64::INFINITY),
    }
}

/// The StableHLO op combining two partial results of `op` on dtype `d`.
fn combiner(op: Reducer, d: DType) -> &'static str {
    match (op, d == DType::I1) {
        (Reducer::Sum, _) => "stablehlo.add",
        (Reducer::Prod, _) => "stablehlo.multiply",
        (Reducer::Max, true) => "stablehlo.or",
        (Reducer::Max, false) => "stablehlo.maximum",
        (Reducer::Min, true) => "stablehlo.and",
        (Reducer::Min, false) => "stablehlo.minimum",
    }
}

/// `quabla.reduce_{sum,max,min,prod}`.
pub fn lower_reduce(e: &mut Emitter, f: &Func, o: &Op, op: Reducer, dims: &[i64]) -> Result<Tv, LowerError> {
    let x = e.get(f, o.operands[0]);
    if dims.is_empty() {
        return Ok(x);
    }
    let d = x.ty.dtype;
    let s = TensorType::scalar(d);
    let init = e.splat(&s, &identity_text(op, d));
    let mut sorted = dims.to_vec();
    sorted.sort_unstable();
    let out = f.ty(o.results[0]).clone();
    let name = combiner(op, d);
    let r = e.region_op("stablehlo.reduce", &[&x, &init], &[("dimensions", array(&sorted))], &[s.clone(), s], &[out], |e, a| vec![bin(e, name, &a[0], &a[1])]);
    Ok(r.into_iter().next().expect("one result"))
}

/// The argmax/argmin combiner on block arguments (a value, a index, b value, b index).
fn arg_combine(e: &mut Emitter, op: ArgOp, a: &[Tv]) -> Vec<Tv> {
    let (av, ai, bv, bi) = (&a[0], &a[1], &a[2], &a[3]);
    let dir = if op == ArgOp::Max { CmpDir::Gt } else { CmpDir::Lt };
    let better = compare(e, dir, av, bv);
    let eq = compare(e, CmpDir::Eq, av, bv);
    let first = compare(e, CmpDir::Lt, ai, bi);
    let pick = if av.ty.dtype.is_float() {
        let anan = compare(e, CmpDir::Ne, av, av);
        let bnan = compare(e, CmpDir::Ne, bv, bv);
        let bnum = e.op("stablehlo.not", &[&bnan], &[], &bnan.ty);
        let nan_wins = bin(e, "stablehlo.and", &anan, &bnum);
        let wins = bin(e, "stablehlo.or", &better, &nan_wins);
        let both_nan = bin(e, "stablehlo.and", &anan, &bnan);
        let tie = bin(e, "stablehlo.or", &eq, &both_nan);
        let tie_first = bin(e, "stablehlo.and", &tie, &first);
        bin(e, "stablehlo.or", &wins, &tie_first)
    } else {
        let tie_first = bin(e, "stablehlo.and", &eq, &first);
        bin(e, "stablehlo.or", &better, &tie_first)
    };
    let v = select(e, &pick, av, bv);
    let i = select(e, &pick, ai, bi);
    vec![v, i]
}

/// `quabla.argmax` / `quabla.argmin`.
pub fn lower_argreduce(e: &mut Emitter, f: &Func, o: &Op, op: ArgOp, dim: i64, index: DType) -> Result<Tv, LowerError> {
    let x = e.get(f, o.operands[0]);
    let d = x.ty.dtype;
    let out = f.ty(o.results[0]).clone();
    let iota = e.op("stablehlo.iota", &[], &[("iota_dimension", super::int_attr(dim))], &x.ty.with_dtype(index));
    let (sv, si) = (TensorType::scalar(d), TensorType::scalar(index));
    let rop = if op == ArgOp::Max { Reducer::Max } else { Reducer::Min };
    let vinit = e.splat(&sv, &identity_text(rop, d));
    let iinit = e.splat(&si, "0");
    let results = [out.with_dtype(d), out];
    let blocks = [sv.clone(), si.clone(), sv, si];
    let r = e.region_op("stablehlo.reduce", &[&x, &iota, &vinit, &iinit], &[("dimensions", array(&[dim]))], &blocks, &results, |e, a| arg_combine(e, op, a));
    Ok(r[1].clone())
}

/// Exports one op of this family (exhaustive over the family).
pub fn lower(e: &mut Emitter, f: &Func, o: &Op, op: &ReduceOp) -> Result<Tv, LowerError> {
    match op {
        ReduceOp::Reduce { op, dims } => lower_reduce(e, f, o, *op, dims),
        ReduceOp::ArgReduce { op, dim, index } => lower_argreduce(e, f, o, *op, *dim, *index),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quabla_dialect::{Module, OpKind, ReduceOp, Reducer};

    fn export(kind: OpKind, t: TensorType) -> String {
        let mut f = Func::new("main", &[t]);
        let p = f.params[0];
        let r = f.push1(kind, &[p], None).unwrap();
        f.outputs = vec![r];
        super::super::export_module(&Module { funcs: vec![f] }).unwrap()
    }

    #[test]
    fn reduce_region() {
        let s = export(OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Max, dims: vec![1, 0] }), TensorType::new(DType::F32, [2, 3]));
        assert!(s.contains("dense<0xFF800000> : tensor<f32>"), "{s}");
        assert!(s.contains("\"stablehlo.maximum\""), "{s}");
        assert!(s.contains("{dimensions = array<i64: 0, 1>} : (tensor<2x3xf32>, tensor<f32>) -> (tensor<f32>)"), "{s}");
        let s = export(OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Min, dims: vec![0] }), TensorType::new(DType::I1, [4]));
        assert!(s.contains("dense<true> : tensor<i1>") && s.contains("\"stablehlo.and\""), "{s}");
        let s = export(OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Max, dims: vec![0] }), TensorType::new(DType::I1, [4]));
        assert!(s.contains("dense<false> : tensor<i1>") && s.contains("\"stablehlo.or\""), "{s}");
        let s = export(OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Sum, dims: vec![] }), TensorType::new(DType::I32, [4]));
        assert!(!s.contains("stablehlo.reduce"), "{s}");
    }

    #[test]
    fn argmax_is_variadic() {
        let s = export(OpKind::Reduce(ReduceOp::ArgReduce { op: ArgOp::Max, dim: 1, index: DType::I32 }), TensorType::new(DType::F64, [2, 3]));
        assert!(s.contains("\"stablehlo.iota\"() {iota_dimension = 1 : i64} : () -> tensor<2x3xi32>"), "{s}");
        assert!(s.contains("%t4:2 = \"stablehlo.reduce\""), "{s}");
        assert!(s.contains("-> (tensor<2xf64>, tensor<2xi32>)"), "{s}");
        assert!(s.contains("\"func.return\"(%t4#1)"), "{s}");
    }
}

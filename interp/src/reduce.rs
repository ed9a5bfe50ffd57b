//! Reductions: `reduce_sum/max/min/prod` over a set of dims and `argmax`/`argmin` over one.
//! Elements are combined in row-major order of the operand, starting from the identity
//! (sum 0, prod 1, max -inf / MIN, min +inf / MAX; i1: max is `any`, min is `all`). Float
//! max/min propagate NaN. Arg reductions return the first extremal index; NaN counts as
//! maximal for argmax and minimal for argmin, so the first NaN wins.
use quabla_dialect::{ArgOp, DType, ReduceOp, Reducer, TensorType};

use super::{for_each_index, max_real, min_real, strides, to_buffer, try_vec, vals, InterpError, Real, Result, Vals};
use crate::buffer::Buffer;

/// Folds every operand element into the result element it reduces to.
fn fold<T: Copy>(name: &'static str, ty: &TensorType, xs: &[T], shape: &[i64], dims: &[i64], init: T, f: impl Fn(T, T) -> T) -> Result<Vec<T>> {
    let kept: Vec<usize> = (0..shape.len()).filter(|d| !dims.contains(&(*d as i64))).collect();
    let kept_shape: Vec<i64> = kept.iter().map(|&d| shape[d]).collect();
    let os = strides(&kept_shape);
    let mut out = try_vec(name, ty, ty.num_elements(), init)?;
    let mut k = 0;
    for_each_index(shape, |idx| {
        let o: usize = kept.iter().zip(&os).map(|(&d, s)| idx[d] * s).sum();
        out[o] = f(out[o], xs[k]);
        k += 1;
    });
    Ok(out)
}

fn reduce_real<T: Real>(op: Reducer, xs: &[T], shape: &[i64], dims: &[i64], ty: &TensorType) -> Result<Vec<T>> {
    match op {
        Reducer::Sum => fold(op.name(), ty, xs, shape, dims, T::ZERO, |a, b| a + b),
        Reducer::Prod => fold(op.name(), ty, xs, shape, dims, T::ONE, |a, b| a * b),
        Reducer::Max => fold(op.name(), ty, xs, shape, dims, -T::INFINITY, max_real),
        Reducer::Min => fold(op.name(), ty, xs, shape, dims, T::INFINITY, min_real),
    }
}

pub(super) fn reduce(op: Reducer, x: &Buffer, dims: &[i64], ty: &TensorType) -> Result<Buffer> {
    let shape = x.shape();
    let out = match vals(op.name(), x)? {
        Vals::F32(v) => Vals::F32(reduce_real(op, &v, shape, dims, ty)?),
        Vals::F64(v) => Vals::F64(reduce_real(op, &v, shape, dims, ty)?),
        Vals::Int(v) => {
            let (lo, hi) = match x.dtype() {
                DType::I32 => (i32::MIN as i64, i32::MAX as i64),
                DType::U8 => (0, u8::MAX as i64),
                DType::U32 => (0, u32::MAX as i64),
                _ => (i64::MIN, i64::MAX),
            };
            let r = match op {
                Reducer::Sum => fold(op.name(), ty, &v, shape, dims, 0, i64::wrapping_add),
                Reducer::Prod => fold(op.name(), ty, &v, shape, dims, 1, i64::wrapping_mul),
                Reducer::Max => fold(op.name(), ty, &v, shape, dims, lo, i64::max),
                Reducer::Min => fold(op.name(), ty, &v, shape, dims, hi, i64::min),
            };
            Vals::Int(r?)
        }
        Vals::I1(v) => Vals::I1(match op {
            Reducer::Max => fold(op.name(), ty, &v, shape, dims, false, |a, b| a | b)?,
            Reducer::Min => fold(op.name(), ty, &v, shape, dims, true, |a, b| a & b)?,
            Reducer::Sum | Reducer::Prod => return Err(InterpError::Unsupported { op: op.name(), dtype: DType::I1 }),
        }),
    };
    to_buffer(op.name(), ty, out)
}

/// For every lane along `dim`, the index of the element that `better(candidate, best)` keeps.
fn arg<T: Copy>(xs: &[T], shape: &[i64], dim: usize, better: impl Fn(T, T) -> bool) -> Vec<i64> {
    let s = strides(shape);
    let mut lanes = shape.to_vec();
    lanes[dim] = 1;
    let mut out = Vec::new();
    for_each_index(&lanes, |idx| {
        let base: usize = idx.iter().zip(&s).map(|(i, st)| i * st).sum();
        let mut best = 0usize;
        for k in 1..shape[dim] as usize {
            if better(xs[base + k * s[dim]], xs[base + best * s[dim]]) {
                best = k;
            }
        }
        out.push(best as i64);
    });
    out
}

/// argmax keeps a candidate that is NaN or greater (unless the best is already NaN); argmin
/// the same with less.
fn better_real<T: Real>(op: ArgOp) -> impl Fn(T, T) -> bool {
    move |c: T, b: T| !b.is_nan() && (c.is_nan() || if op == ArgOp::Max { c > b } else { c < b })
}

pub(super) fn arg_reduce(op: ArgOp, x: &Buffer, dim: i64, ty: &TensorType) -> Result<Buffer> {
    let (shape, d) = (x.shape(), dim as usize);
    let idx = match vals(op.name(), x)? {
        Vals::F32(v) => arg(&v, shape, d, better_real(op)),
        Vals::F64(v) => arg(&v, shape, d, better_real(op)),
        Vals::Int(v) => arg(&v, shape, d, |c, b| if op == ArgOp::Max { c > b } else { c < b }),
        Vals::I1(_) => return Err(InterpError::Unsupported { op: op.name(), dtype: DType::I1 }),
    };
    to_buffer(op.name(), ty, Vals::Int(idx))
}

/// Evaluates one op of this family (exhaustive over the family).
pub(super) fn eval(operands: &[&Buffer], ty: &TensorType, op: &ReduceOp) -> super::Result<Vec<Buffer>> {
    let one = |b: super::Result<Buffer>| b.map(|b| vec![b]);
    match op {
        ReduceOp::Reduce { op, dims } => one(reduce(*op, operands[0], dims, ty)),
        ReduceOp::ArgReduce { op, dim, .. } => one(arg_reduce(*op, operands[0], *dim, ty)),
    }
}

#[cfg(test)]
mod tests {
    use super::super::run_op;
    use super::super::test_util::*;
    use quabla_dialect::{ArgOp, DType, OpKind, ReduceOp, Reducer};

    fn red(op: Reducer, dims: &[i64]) -> OpKind {
        OpKind::Reduce(ReduceOp::Reduce { op, dims: dims.to_vec() })
    }

    #[test]
    fn reduce_over_several_dims() {
        // x[i, j, k] = 100 i + 10 j + k, shape [2, 3, 2].
        let v: Vec<i64> = (0..2).flat_map(|i| (0..3).flat_map(move |j| (0..2).map(move |k| 100 * i + 10 * j + k))).collect();
        let x = i64s(&[2, 3, 2], &v);
        let y = run1(red(Reducer::Sum, &[0, 2]), &[&x]);
        assert_eq!(y.shape(), &[3]);
        // sum over i, k of 100 i + 10 j + k = 4 * 10 j + 2 * 100 + 2 * 1 = 40 j + 202.
        assert_eq!(y.as_slice::<i64>().unwrap(), &[202, 242, 282]);
        let y = run1(red(Reducer::Max, &[2, 1]), &[&x]);
        assert_eq!(y.as_slice::<i64>().unwrap(), &[21, 121]);
        let y = run1(red(Reducer::Min, &[0, 1, 2]), &[&x]);
        assert_eq!(y.shape(), &[] as &[i64]);
        assert_eq!(y.as_slice::<i64>().unwrap(), &[0]);
        let y = run1(red(Reducer::Prod, &[]), &[&x]);
        assert_eq!(y.as_slice::<i64>().unwrap(), v.as_slice());
        let e = run_op(&red(Reducer::Sum, &[0, 0]), &[&x]).unwrap_err();
        assert!(e.to_string().contains("reduce_c1"), "{e}");
    }

    #[test]
    fn reduce_floats_nan_and_bools() {
        let x = f32s(&[2, 3], &[1.0, f32::NAN, 3.0, -1.0, -2.0, -3.0]);
        let mx = run1(red(Reducer::Max, &[1]), &[&x]);
        let mx = mx.as_slice::<f32>().unwrap();
        assert!(mx[0].is_nan());
        assert_eq!(mx[1], -1.0);
        let mn = run1(red(Reducer::Min, &[1]), &[&x]);
        assert_eq!(mn.as_slice::<f32>().unwrap()[1], -3.0);
        let p = run1(red(Reducer::Prod, &[0]), &[&x]);
        assert_eq!(p.as_slice::<f32>().unwrap()[2], -9.0);
        let b = bools(&[2, 2], &[true, false, false, false]);
        assert_eq!(run1(red(Reducer::Max, &[1]), &[&b]).as_slice::<bool>().unwrap(), &[true, false]);
        assert_eq!(run1(red(Reducer::Min, &[0]), &[&b]).as_slice::<bool>().unwrap(), &[false, false]);
        let i = i32s(&[2], &[i32::MAX, 1]);
        assert_eq!(run1(red(Reducer::Sum, &[0]), &[&i]).as_slice::<i32>().unwrap(), &[i32::MIN]);
        let e = run_op(&red(Reducer::Sum, &[0]), &[&b]).unwrap_err();
        assert!(e.to_string().contains("reduce_c2"), "{e}");
    }

    #[test]
    fn argmax_ties_and_nan() {
        let am = |op, dim, x: &crate::Buffer| run1(OpKind::Reduce(ReduceOp::ArgReduce { op, dim, index: DType::I32 }), &[x]).as_slice::<i32>().unwrap().to_vec();
        // ties: the first index wins.
        let x = f64s(&[5], &[1.0, 3.0, 3.0, -2.0, -2.0]);
        assert_eq!(am(ArgOp::Max, 0, &x), [1]);
        assert_eq!(am(ArgOp::Min, 0, &x), [3]);
        // NaN counts as maximal for argmax and minimal for argmin; the first NaN wins.
        let x = f64s(&[5], &[1.0, f64::NAN, 7.0, f64::NAN, -9.0]);
        assert_eq!(am(ArgOp::Max, 0, &x), [1]);
        assert_eq!(am(ArgOp::Min, 0, &x), [1]);
        // along dim 0 of a [3, 2] i64 tensor, i64 index.
        let x = i64s(&[3, 2], &[4, 9, 4, 1, 5, 1]);
        let y = run1(OpKind::Reduce(ReduceOp::ArgReduce { op: ArgOp::Max, dim: 0, index: DType::I64 }), &[&x]);
        assert_eq!(y.as_slice::<i64>().unwrap(), &[2, 0]);
        let y = run1(OpKind::Reduce(ReduceOp::ArgReduce { op: ArgOp::Min, dim: 0, index: DType::I64 }), &[&x]);
        assert_eq!(y.as_slice::<i64>().unwrap(), &[0, 1]);
        // along the last dim of a [1, 3] tensor.
        let y = run1(OpKind::Reduce(ReduceOp::ArgReduce { op: ArgOp::Min, dim: 1, index: DType::I32 }), &[&f32s(&[1, 3], &[2.0, -0.5, 1.0])]);
        assert_eq!(y.shape(), &[1]);
        assert_eq!(y.as_slice::<i32>().unwrap(), &[1]);
    }
}

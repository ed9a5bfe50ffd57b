//! `dot_general`: result index = (batch..., lhs free..., rhs free...); each element is the sum,
//! over the contracting index space in row-major order, of lhs * rhs. Floats accumulate at
//! their own width (an f32 product and each partial sum round to f32); integers wrap.
use quabla_dialect::{DotDims, DotOp, TensorType};

use super::{for_each_index, strides, to_buffer, try_capacity, vals, InterpError, Real, Result, Vals};
use crate::buffer::Buffer;

/// The naive loop nest, generic over the element type (`acc(sum, l, r)` adds one product).
fn dot<T: Copy>(l: &[T], ls: &[i64], r: &[T], rs: &[i64], d: &DotDims, ty: &TensorType, zero: T, acc: impl Fn(T, T, T) -> T) -> Result<Vec<T>> {
    let (lst, rst) = (strides(ls), strides(rs));
    let lfree = DotDims::free(ls.len(), &d.lhs_batching_dimensions, &d.lhs_contracting_dimensions);
    let rfree = DotDims::free(rs.len(), &d.rhs_batching_dimensions, &d.rhs_contracting_dimensions);
    let (nb, nl) = (d.lhs_batching_dimensions.len(), lfree.len());
    let mut out_shape: Vec<i64> = d.lhs_batching_dimensions.iter().map(|&k| ls[k as usize]).collect();
    out_shape.extend(lfree.iter().map(|&k| ls[k as usize]));
    out_shape.extend(rfree.iter().map(|&k| rs[k as usize]));
    let contract_shape: Vec<i64> = d.lhs_contracting_dimensions.iter().map(|&k| ls[k as usize]).collect();
    let mut out = try_capacity("dot_general", ty, ty.num_elements())?;
    for_each_index(&out_shape, |o| {
        let (b, rest) = o.split_at(nb);
        let (lf, rf) = rest.split_at(nl);
        let mut li: usize = d.lhs_batching_dimensions.iter().zip(b).map(|(&k, i)| i * lst[k as usize]).sum();
        li += lfree.iter().zip(lf).map(|(&k, i)| i * lst[k as usize]).sum::<usize>();
        let mut ri: usize = d.rhs_batching_dimensions.iter().zip(b).map(|(&k, i)| i * rst[k as usize]).sum();
        ri += rfree.iter().zip(rf).map(|(&k, i)| i * rst[k as usize]).sum::<usize>();
        let mut sum = zero;
        for_each_index(&contract_shape, |c| {
            let lc: usize = d.lhs_contracting_dimensions.iter().zip(c).map(|(&k, i)| i * lst[k as usize]).sum();
            let rc: usize = d.rhs_contracting_dimensions.iter().zip(c).map(|(&k, i)| i * rst[k as usize]).sum();
            sum = acc(sum, l[li + lc], r[ri + rc]);
        });
        out.push(sum);
    });
    Ok(out)
}

fn dot_real<T: Real>(l: &[T], ls: &[i64], r: &[T], rs: &[i64], d: &DotDims, ty: &TensorType) -> Result<Vec<T>> {
    dot(l, ls, r, rs, d, ty, T::ZERO, |s, a, b| s + a * b)
}

pub(super) fn dot_general(l: &Buffer, r: &Buffer, d: &DotDims, ty: &TensorType) -> Result<Buffer> {
    let (ls, rs) = (l.shape(), r.shape());
    let out = match (vals("dot_general", l)?, vals("dot_general", r)?) {
        (Vals::F32(a), Vals::F32(b)) => Vals::F32(dot_real(&a, ls, &b, rs, d, ty)?),
        (Vals::F64(a), Vals::F64(b)) => Vals::F64(dot_real(&a, ls, &b, rs, d, ty)?),
        (Vals::Int(a), Vals::Int(b)) => Vals::Int(dot(&a, ls, &b, rs, d, ty, 0i64, |s, x, y| s.wrapping_add(x.wrapping_mul(y)))?),
        _ => return Err(InterpError::Unsupported { op: "dot_general", dtype: l.dtype() }),
    };
    to_buffer("dot_general", ty, out)
}

/// Evaluates one op of this family (exhaustive over the family).
pub(super) fn eval(operands: &[&Buffer], ty: &TensorType, op: &DotOp) -> super::Result<Vec<Buffer>> {
    let one = |b: super::Result<Buffer>| b.map(|b| vec![b]);
    match op {
        DotOp::DotGeneral { dims } => one(dot_general(operands[0], operands[1], dims, ty)),
    }
}

#[cfg(test)]
mod tests {
    use super::super::run_op;
    use super::super::test_util::*;
    use quabla_dialect::{DotDims, DotOp, OpKind};

    #[test]
    fn matmul() {
        let a = f64s(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let b = f64s(&[3, 2], &[7.0, 8.0, 9.0, 10.0, 11.0, 12.0]);
        let y = run1(OpKind::Dot(DotOp::DotGeneral { dims: DotDims::matmul() }), &[&a, &b]);
        assert_eq!(y.shape(), &[2, 2]);
        assert_eq!(y.to_f64_vec(), vec![58.0, 64.0, 139.0, 154.0]);
    }

    #[test]
    fn batch_dims_and_odd_positions() {
        // lhs [k=2, b=2, m=1], rhs [b=2, k=2, n=2]; batch lhs 1 / rhs 0, contract lhs 0 / rhs 1.
        // lhs[k, b, 0] = 1 + k + 2b; rhs[b, k, n] = 10 b + 2 k + n + 1.
        let l = i32s(&[2, 2, 1], &[1, 3, 2, 4]);
        let r = i32s(&[2, 2, 2], &[1, 2, 3, 4, 11, 12, 13, 14]);
        let d = DotDims { lhs_batching_dimensions: vec![1], rhs_batching_dimensions: vec![0], lhs_contracting_dimensions: vec![0], rhs_contracting_dimensions: vec![1] };
        let y = run1(OpKind::Dot(DotOp::DotGeneral { dims: d }), &[&l, &r]);
        assert_eq!(y.shape(), &[2, 1, 2]);
        // b=0: lhs (1, 2) . rhs cols (1, 3), (2, 4) = 7, 10; b=1: lhs (3, 4) . (11, 13), (12, 14) = 85, 92.
        assert_eq!(y.as_slice::<i32>().unwrap(), &[7, 10, 85, 92]);
    }

    #[test]
    fn vector_dot_is_0d_and_int_wraps() {
        let a = i32s(&[2], &[65536, 3]);
        let b = i32s(&[2], &[65536, 4]);
        let d = DotDims { lhs_contracting_dimensions: vec![0], rhs_contracting_dimensions: vec![0], ..DotDims::default() };
        let y = run1(OpKind::Dot(DotOp::DotGeneral { dims: d.clone() }), &[&a, &b]);
        assert_eq!(y.shape(), &[] as &[i64]);
        assert_eq!(y.as_slice::<i32>().unwrap(), &[12]);
        // outer product: no contracting dims.
        let y = run1(OpKind::Dot(DotOp::DotGeneral { dims: DotDims::default() }), &[&f32s(&[2], &[1.0, 2.0]), &f32s(&[3], &[1.0, 10.0, 100.0])]);
        assert_eq!(y.shape(), &[2, 3]);
        assert_eq!(y.as_slice::<f32>().unwrap(), &[1.0, 10.0, 100.0, 2.0, 20.0, 200.0]);
        let e = run_op(&OpKind::Dot(DotOp::DotGeneral { dims: d }), &[&a, &i32s(&[3], &[1, 2, 3])]).unwrap_err();
        assert!(e.to_string().contains("dot_general_c5"), "{e}");
    }
}

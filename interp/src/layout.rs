//! Layout ops: `broadcast_in_dim`, `reshape`, `transpose`. Each result element is copied from
//! one operand element (no arithmetic, any dtype): the functions only compute source indices.
use quabla_dialect::{LayoutOp, TensorType};

use super::{flat, move_elems, strides};
use crate::buffer::Buffer;

/// Result dim `dims[i]` indexes operand dim `i`; an operand extent of 1 always reads index 0.
pub(super) fn broadcast_in_dim(x: &Buffer, dims: &[i64], ty: &TensorType) -> super::Result<Buffer> {
    let xs = strides(x.shape());
    move_elems("broadcast_in_dim", ty, &[x], |idx| {
        let j = dims.iter().enumerate().map(|(i, &d)| if x.shape()[i] == 1 { 0 } else { idx[d as usize] * xs[i] }).sum();
        (0, j)
    })
}

/// Row-major order is unchanged: element `k` of the result is element `k` of the operand.
pub(super) fn reshape(x: &Buffer, ty: &TensorType) -> super::Result<Buffer> {
    let mut k = 0;
    move_elems("reshape", ty, &[x], |_| {
        k += 1;
        (0, k - 1)
    })
}

/// Result dim `i` is operand dim `perm[i]`.
pub(super) fn transpose(x: &Buffer, perm: &[i64], ty: &TensorType) -> super::Result<Buffer> {
    let xs = strides(x.shape());
    let src_strides: Vec<usize> = perm.iter().map(|&p| xs[p as usize]).collect();
    move_elems("transpose", ty, &[x], |idx| (0, flat(idx, &src_strides)))
}

/// Evaluates one op of this family (exhaustive over the family).
pub(super) fn eval(operands: &[&Buffer], ty: &TensorType, op: &LayoutOp) -> super::Result<Vec<Buffer>> {
    let one = |b: super::Result<Buffer>| b.map(|b| vec![b]);
    match op {
        LayoutOp::BroadcastInDim { dims, .. } => one(broadcast_in_dim(operands[0], dims, ty)),
        LayoutOp::Reshape { .. } => one(reshape(operands[0], ty)),
        LayoutOp::Transpose { perm } => one(transpose(operands[0], perm, ty)),
        LayoutOp::StopGradient {} => one(Ok(operands[0].clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::super::run_op;
    use super::super::test_util::*;
    use quabla_dialect::{LayoutOp, OpKind};

    #[test]
    fn broadcast_in_dim_cases() {
        // [3] -> [2, 3] along dim 1.
        let x = i32s(&[3], &[1, 2, 3]);
        let y = run1(OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![1], shape: vec![2, 3] }), &[&x]);
        assert_eq!(y.as_slice::<i32>().unwrap(), &[1, 2, 3, 1, 2, 3]);
        // [2, 1] -> [2, 3, 2]: dim 0 -> 0, extent-1 dim 1 -> 2.
        let x = f64s(&[2, 1], &[5.0, 6.0]);
        let y = run1(OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![0, 2], shape: vec![2, 3, 2] }), &[&x]);
        assert_eq!(y.to_f64_vec(), vec![5.0; 6].into_iter().chain(vec![6.0; 6]).collect::<Vec<_>>());
        // 0-d -> [2, 2].
        let s = bools(&[], &[true]);
        let y = run1(OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![], shape: vec![2, 2] }), &[&s]);
        assert_eq!(y.as_slice::<bool>().unwrap(), &[true; 4]);
        let e = run_op(&OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![0], shape: vec![4] }), &[&i32s(&[3], &[1, 2, 3])]).unwrap_err();
        assert!(e.to_string().contains("broadcast_in_dim_c3"), "{e}");
    }

    #[test]
    fn reshape_and_transpose() {
        let x = i64s(&[2, 3], &[0, 1, 2, 3, 4, 5]);
        let r = run1(OpKind::Layout(LayoutOp::Reshape { shape: vec![3, 2] }), &[&x]);
        assert_eq!(r.shape(), &[3, 2]);
        assert_eq!(r.as_slice::<i64>().unwrap(), &[0, 1, 2, 3, 4, 5]);
        let s = run1(OpKind::Layout(LayoutOp::Reshape { shape: vec![] }), &[&i64s(&[1, 1], &[7])]);
        assert_eq!(s.as_slice::<i64>().unwrap(), &[7]);
        let t = run1(OpKind::Layout(LayoutOp::Transpose { perm: vec![1, 0] }), &[&x]);
        assert_eq!(t.shape(), &[3, 2]);
        assert_eq!(t.as_slice::<i64>().unwrap(), &[0, 3, 1, 4, 2, 5]);
        // [2, 3, 4] with perm [2, 0, 1]: result[k, i, j] = x[i, j, k].
        let v: Vec<f32> = (0..24).map(|i| i as f32).collect();
        let x = f32s(&[2, 3, 4], &v);
        let t = run1(OpKind::Layout(LayoutOp::Transpose { perm: vec![2, 0, 1] }), &[&x]);
        assert_eq!(t.shape(), &[4, 2, 3]);
        let t = t.as_slice::<f32>().unwrap();
        for k in 0..4 {
            for i in 0..2 {
                for j in 0..3 {
                    assert_eq!(t[k * 6 + i * 3 + j], v[i * 12 + j * 4 + k]);
                }
            }
        }
    }
}

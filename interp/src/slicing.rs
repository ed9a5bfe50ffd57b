//! Slicing ops: `slice`, `pad`, `concatenate`, `dynamic_slice`, `gather` (take along one
//! axis), `dynamic_update_slice`. Elements are copied, never computed. Dynamic starts are clamped to
//! `[0, extent - size]` and gather indices to `[0, n - 1]`, so nothing reads out of bounds.
use quabla_dialect::{SlicingOp, TensorType};

use super::{flat, move_elems, strides};
use crate::buffer::Buffer;

/// `result[i] = x[start + i * strides]`.
pub(super) fn slice(x: &Buffer, start: &[i64], step: &[i64], ty: &TensorType) -> super::Result<Buffer> {
    let xs = strides(x.shape());
    move_elems("slice", ty, &[x], |idx| {
        let j = (0..idx.len()).map(|d| (start[d] as usize + idx[d] * step[d] as usize) * xs[d]).sum();
        (0, j)
    })
}

/// Operand element `i` lands at `low + i * (interior + 1)`; everything else is the 0-d
/// padding value.
pub(super) fn pad(x: &Buffer, value: &Buffer, low: &[i64], interior: &[i64], ty: &TensorType) -> super::Result<Buffer> {
    let xs = strides(x.shape());
    move_elems("pad", ty, &[x, value], |idx| {
        let mut j = 0;
        for d in 0..idx.len() {
            let p = idx[d] as i64 - low[d];
            let step = interior[d] + 1;
            if p < 0 || p % step != 0 || p / step >= x.shape()[d] {
                return (1, 0);
            }
            j += (p / step) as usize * xs[d];
        }
        (0, j)
    })
}

/// Operands follow each other along `dim`.
pub(super) fn concatenate(xs: &[&Buffer], dim: i64, ty: &TensorType) -> super::Result<Buffer> {
    let d = dim as usize;
    let all_strides: Vec<Vec<usize>> = xs.iter().map(|x| strides(x.shape())).collect();
    move_elems("concatenate", ty, xs, |idx| {
        let mut pos = idx[d];
        let mut k = 0;
        while pos >= xs[k].shape()[d] as usize {
            pos -= xs[k].shape()[d] as usize;
            k += 1;
        }
        let s = &all_strides[k];
        let j = (0..idx.len()).map(|i| if i == d { pos } else { idx[i] } * s[i]).sum();
        (k, j)
    })
}

/// A window of `ty.shape` at the 0-d integer `starts`, each clamped to `[0, extent - size]`.
pub(super) fn dynamic_slice(x: &Buffer, starts: &[&Buffer], ty: &TensorType) -> super::Result<Buffer> {
    let start: Vec<usize> = starts
        .iter()
        .zip(x.shape().iter().zip(&ty.shape))
        .map(|(s, (&extent, &size))| s.get_i64(0).clamp(0, extent - size) as usize)
        .collect();
    let xs = strides(x.shape());
    move_elems("dynamic_slice", ty, &[x], |idx| (0, idx.iter().zip(&start).zip(&xs).map(|((i, s), st)| (i + s) * st).sum()))
}

/// The operand with the window at the 0-d integer `starts` (each clamped to
/// `[0, extent - update extent]`) replaced by `update`.
pub(super) fn dynamic_update_slice(x: &Buffer, update: &Buffer, starts: &[&Buffer], ty: &TensorType) -> super::Result<Buffer> {
    let start: Vec<usize> = starts
        .iter()
        .zip(x.shape().iter().zip(update.shape()))
        .map(|(s, (&extent, &size))| s.get_i64(0).clamp(0, extent - size) as usize)
        .collect();
    let (xs, us) = (strides(x.shape()), strides(update.shape()));
    move_elems("dynamic_update_slice", ty, &[x, update], |idx| {
        let inside = idx.iter().zip(&start).zip(update.shape()).all(|((&i, &s), &n)| i >= s && i < s + n as usize);
        if inside {
            (1, idx.iter().zip(&start).zip(&us).map(|((i, s), st)| (i - s) * st).sum())
        } else {
            (0, flat(idx, &xs))
        }
    })
}

/// `result[a..., i..., b...] = x[a..., clamp(indices[i...], 0, n - 1), b...]` where `a` are
/// the dims before `axis` and `n` is the extent of `axis`.
pub(super) fn gather(x: &Buffer, indices: &Buffer, axis: i64, ty: &TensorType) -> super::Result<Buffer> {
    let a = axis as usize;
    let n = x.shape()[a];
    let xs = strides(x.shape());
    let is = strides(indices.shape());
    let r = indices.shape().len();
    move_elems("gather", ty, &[x], |idx| {
        let which = flat(&idx[a..a + r], &is);
        let taken = indices.get_i64(which).clamp(0, n - 1) as usize;
        let mut j = flat(&idx[..a], &xs[..a]) + taken * xs[a];
        j += flat(&idx[a + r..], &xs[a + 1..]);
        (0, j)
    })
}

/// Evaluates one op of this family (exhaustive over the family).
pub(super) fn eval(operands: &[&Buffer], ty: &TensorType, op: &SlicingOp) -> super::Result<Vec<Buffer>> {
    let one = |b: super::Result<Buffer>| b.map(|b| vec![b]);
    match op {
        SlicingOp::Concatenate { dim } => one(concatenate(operands, *dim, ty)),
        SlicingOp::Slice { start_indices: start, strides, .. } => one(slice(operands[0], start, strides, ty)),
        SlicingOp::Pad { edge_padding_low: low, interior_padding: interior, .. } => one(pad(operands[0], operands[1], low, interior, ty)),
        SlicingOp::DynamicSlice { .. } => one(dynamic_slice(operands[0], &operands[1..], ty)),
        SlicingOp::Gather { axis } => one(gather(operands[0], operands[1], *axis, ty)),
        SlicingOp::DynamicUpdateSlice {} => one(dynamic_update_slice(operands[0], operands[1], &operands[2..], ty)),
    }
}

#[cfg(test)]
mod tests {
    use super::super::run_op;
    use super::super::test_util::*;
    use quabla_dialect::{OpKind, SlicingOp};

    #[test]
    fn slice_with_strides() {
        let x = i32s(&[3, 5], &(0..15).collect::<Vec<_>>());
        let y = run1(OpKind::Slicing(SlicingOp::Slice { start_indices: vec![0, 1], limit_indices: vec![3, 5], strides: vec![2, 3] }), &[&x]);
        assert_eq!(y.shape(), &[2, 2]);
        assert_eq!(y.as_slice::<i32>().unwrap(), &[1, 4, 11, 14]);
    }

    #[test]
    fn pad_with_interior() {
        // [1, 2, 3] with low 1, high 2, interior 1, value 0: [0, 1, 0, 2, 0, 3, 0, 0].
        let x = f64s(&[3], &[1.0, 2.0, 3.0]);
        let v = f64s(&[], &[0.0]);
        let y = run1(OpKind::Slicing(SlicingOp::Pad { edge_padding_low: vec![1], edge_padding_high: vec![2], interior_padding: vec![1]}), &[&x, &v]);
        assert_eq!(y.to_f64_vec(), vec![0.0, 1.0, 0.0, 2.0, 0.0, 3.0, 0.0, 0.0]);
        // 2-d: [[1, 2], [3, 4]], low [0, 1], high [1, 0], interior [1, 0], value 9.
        let x = i64s(&[2, 2], &[1, 2, 3, 4]);
        let v = i64s(&[], &[9]);
        let y = run1(OpKind::Slicing(SlicingOp::Pad { edge_padding_low: vec![0, 1], edge_padding_high: vec![1, 0], interior_padding: vec![1, 0]}), &[&x, &v]);
        assert_eq!(y.shape(), &[4, 3]);
        assert_eq!(y.as_slice::<i64>().unwrap(), &[9, 1, 2, 9, 9, 9, 9, 3, 4, 9, 9, 9]);
        let e = run_op(&OpKind::Slicing(SlicingOp::Pad { edge_padding_low: vec![0], edge_padding_high: vec![0], interior_padding: vec![0]}), &[&i64s(&[1], &[1]), &i32s(&[], &[0])]).unwrap_err();
        assert!(e.to_string().contains("pad_c1"), "{e}");
    }

    #[test]
    fn concatenate_along_dims() {
        let a = i32s(&[2, 1], &[1, 2]);
        let b = i32s(&[2, 2], &[3, 4, 5, 6]);
        let y = run1(OpKind::Slicing(SlicingOp::Concatenate { dim: 1 }), &[&a, &b]);
        assert_eq!(y.as_slice::<i32>().unwrap(), &[1, 3, 4, 2, 5, 6]);
        let c = i32s(&[1, 2], &[7, 8]);
        let y = run1(OpKind::Slicing(SlicingOp::Concatenate { dim: 0 }), &[&b, &c]);
        assert_eq!(y.as_slice::<i32>().unwrap(), &[3, 4, 5, 6, 7, 8]);
    }

    #[test]
    fn dynamic_slice_clamps() {
        let x = i32s(&[3, 4], &(0..12).collect::<Vec<_>>());
        let ds = |r: i64, c: i64| {
            let (r, c) = (i64s(&[], &[r]), i64s(&[], &[c]));
            run1(OpKind::Slicing(SlicingOp::DynamicSlice { slice_sizes: vec![2, 2]}), &[&x, &r, &c]).as_slice::<i32>().unwrap().to_vec()
        };
        assert_eq!(ds(1, 1), [5, 6, 9, 10]);
        assert_eq!(ds(5, 3), [6, 7, 10, 11]); // clamped to (1, 2)
        assert_eq!(ds(-4, -1), [0, 1, 4, 5]); // clamped to (0, 0)
    }

    #[test]
    fn dynamic_update_slice_clamps() {
        let x = i32s(&[3, 4], &(0..12).collect::<Vec<_>>());
        let u = i32s(&[2, 2], &[-1, -2, -3, -4]);
        let dus = |r: i64, c: i64| {
            let (r, c) = (i64s(&[], &[r]), i64s(&[], &[c]));
            run1(OpKind::Slicing(SlicingOp::DynamicUpdateSlice {}), &[&x, &u, &r, &c]).as_slice::<i32>().unwrap().to_vec()
        };
        assert_eq!(dus(1, 1), [0, 1, 2, 3, 4, -1, -2, 7, 8, -3, -4, 11]);
        assert_eq!(dus(5, 9), [0, 1, 2, 3, 4, 5, -1, -2, 8, 9, -3, -4]); // clamped to (1, 2)
        assert_eq!(dus(-2, -7), [-1, -2, 2, 3, -3, -4, 6, 7, 8, 9, 10, 11]); // clamped to (0, 0)
    }

    #[test]
    fn gather_clamps_indices() {
        let x = f32s(&[2, 3], &[0.0, 1.0, 2.0, 10.0, 11.0, 12.0]);
        // take along axis 1 with indices of shape [2, 2]: result shape [2, 2, 2].
        let idx = i64s(&[2, 2], &[2, -5, 99, 1]);
        let y = run1(OpKind::Slicing(SlicingOp::Gather { axis: 1 }), &[&x, &idx]);
        assert_eq!(y.shape(), &[2, 2, 2]);
        assert_eq!(y.as_slice::<f32>().unwrap(), &[2.0, 0.0, 2.0, 1.0, 12.0, 10.0, 12.0, 11.0]);
        // along axis 0 with 0-d indices: result shape [3].
        let y = run1(OpKind::Slicing(SlicingOp::Gather { axis: 0 }), &[&x, &i32s(&[], &[7])]);
        assert_eq!(y.as_slice::<f32>().unwrap(), &[10.0, 11.0, 12.0]);
    }
}

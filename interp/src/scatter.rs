//! Scatter ops (`scatter`, `scatter_add`, `scatter_mul`, `scatter_min`, `scatter_max`): the
//! result starts as a copy of the operand; every update element, in row-major order of the
//! updates, is combined into the element its window lands on (so duplicates accumulate, and
//! with `scatter` the last one wins). Windows that do not fit in the operand are skipped.
//! Float min/max propagate NaN (as `maximum`/`minimum`); integers wrap to their width.
use quabla_dialect::{Combiner, ScatterOp, TensorType};

use super::{for_each_index, max_real, min_real, strides, to_buffer, vals, wrap, Real, Vals};
use crate::buffer::Buffer;

fn combine_real<T: Real>(c: Combiner, a: T, b: T) -> T {
    match c {
        Combiner::Set => b,
        Combiner::Add => a + b,
        Combiner::Mul => a * b,
        Combiner::Min => min_real(a, b),
        Combiner::Max => max_real(a, b),
    }
}

fn combine_int(c: Combiner, a: i64, b: i64) -> i64 {
    match c {
        Combiner::Set => b,
        Combiner::Add => a.wrapping_add(b),
        Combiner::Mul => a.wrapping_mul(b),
        Combiner::Min => a.min(b),
        Combiner::Max => a.max(b),
    }
}

fn combine_bool(c: Combiner, a: bool, b: bool) -> bool {
    match c {
        Combiner::Set => b,
        Combiner::Add | Combiner::Max => a | b,
        Combiner::Mul | Combiner::Min => a & b,
    }
}

/// The flat operand position of each update element (`None`: dropped), in update order.
fn targets(op: &ScatterOp, x: &Buffer, indices: &Buffer, updates: &Buffer) -> super::Result<Vec<Option<usize>>> {
    let d = op.dims();
    let (xs, is) = (strides(x.shape()), strides(indices.shape()));
    let (xshape, ushape) = (x.shape().to_vec(), updates.shape().to_vec());
    let sdims = d.update_scatter_dims(ushape.len());
    let q = indices.shape().len();
    let mut out = super::try_capacity(op.name(), updates.ty(), updates.len())?;
    for_each_index(&ushape, |u| {
        let mut start = vec![0i64; xshape.len()];
        for (k, &od) in d.scatter_dims_to_operand_dims.iter().enumerate() {
            let p = d.index_position(u, &sdims, q, k);
            let flat: usize = p.iter().zip(&is).map(|(a, s)| a * s).sum();
            start[od as usize] = indices.get_i64(flat);
        }
        out.push(d.target(u, &start, &xshape, &ushape).map(|t| t.iter().zip(&xs).map(|(a, s)| a * s).sum()));
    });
    Ok(out)
}

/// `scatter*`.
pub(super) fn scatter(op: &ScatterOp, x: &Buffer, indices: &Buffer, updates: &Buffer, ty: &TensorType) -> super::Result<Buffer> {
    let c = op.combiner();
    let t = targets(op, x, indices, updates)?;
    let v = match (vals(op.name(), x)?, vals(op.name(), updates)?) {
        (Vals::F32(mut a), Vals::F32(u)) => {
            for (j, p) in t.iter().enumerate() {
                if let Some(p) = *p {
                    a[p] = combine_real(c, a[p], u[j]);
                }
            }
            Vals::F32(a)
        }
        (Vals::F64(mut a), Vals::F64(u)) => {
            for (j, p) in t.iter().enumerate() {
                if let Some(p) = *p {
                    a[p] = combine_real(c, a[p], u[j]);
                }
            }
            Vals::F64(a)
        }
        (Vals::Int(mut a), Vals::Int(u)) => {
            for (j, p) in t.iter().enumerate() {
                if let Some(p) = *p {
                    a[p] = wrap(ty.dtype, combine_int(c, a[p], u[j]));
                }
            }
            Vals::Int(a)
        }
        (Vals::I1(mut a), Vals::I1(u)) => {
            for (j, p) in t.iter().enumerate() {
                if let Some(p) = *p {
                    a[p] = combine_bool(c, a[p], u[j]);
                }
            }
            Vals::I1(a)
        }
        _ => return Err(super::InterpError::Unsupported { op: op.name(), dtype: ty.dtype }),
    };
    to_buffer(op.name(), ty, v)
}

/// Evaluates one op of this family (exhaustive over the family).
pub(super) fn eval(operands: &[&Buffer], ty: &TensorType, op: &ScatterOp) -> super::Result<Vec<Buffer>> {
    match op {
        ScatterOp::Scatter { .. } => Ok(vec![scatter(op, operands[0], operands[1], operands[2], ty)?]),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use quabla_dialect::{Combiner, OpKind, ScatterOp};

    #[test]
    fn scatter_add_accumulates_duplicates_and_drops_out_of_bounds() {
        let x = f64s(&[4], &[1.0, 2.0, 3.0, 4.0]);
        let i = i64s(&[4], &[1, 1, 7, -1]);
        let u = f64s(&[4], &[10.0, 20.0, 30.0, 40.0]);
        let y = run1(OpKind::Scatter(ScatterOp::along_axis(Combiner::Add, 1, 1, 0)), &[&x, &i, &u]);
        assert_eq!(y.to_f64_vec(), vec![1.0, 32.0, 3.0, 4.0]);
        let y = run1(OpKind::Scatter(ScatterOp::along_axis(Combiner::Set, 1, 1, 0)), &[&x, &i, &u]);
        assert_eq!(y.to_f64_vec(), vec![1.0, 20.0, 3.0, 4.0]);
        let y = run1(OpKind::Scatter(ScatterOp::along_axis(Combiner::Max, 1, 1, 0)), &[&x, &i, &u]);
        assert_eq!(y.to_f64_vec(), vec![1.0, 20.0, 3.0, 4.0]);
        let y = run1(OpKind::Scatter(ScatterOp::along_axis(Combiner::Mul, 1, 1, 0)), &[&x, &i, &u]);
        assert_eq!(y.to_f64_vec(), vec![1.0, 400.0, 3.0, 4.0]);
    }

    #[test]
    fn scatter_windows_with_an_index_vector() {
        // Rows of a 3x4 operand get 1x2 windows at (row, col) starts.
        let x = i32s(&[3, 4], &[0; 12]);
        let i = i32s(&[2, 2], &[0, 1, 2, 2]);
        let u = i32s(&[2, 2], &[1, 2, 3, 4]);
        let op = ScatterOp::Scatter { op: Combiner::Add, update_window_dims: vec![1], inserted_window_dims: vec![0], scatter_dims_to_operand_dims: vec![0, 1], index_vector_dim: 1 };
        let y = run1(OpKind::Scatter(op), &[&x, &i, &u]);
        assert_eq!(y.as_slice::<i32>().unwrap(), &[0, 1, 2, 0, 0, 0, 0, 0, 0, 0, 3, 4]);
    }
}

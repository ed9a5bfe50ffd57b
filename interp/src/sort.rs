//! The sort family: `sort` and `argsort` along one dimension, stable, in NumPy's total order
//! (NaN after every number; -0.0 ties 0.0); `gt` (descending) reverses the order of unequal
//! keys and keeps ties in their original order (docs/spec.md, sort).
use std::cmp::Ordering;

use quabla_dialect::{CmpDir, SortOp, TensorType};

use super::{for_each_index, move_elems, strides, to_buffer, try_collect, try_vec, vals, Result, Vals};
use crate::buffer::Buffer;

/// Ascending total order of floats: NaN last, NaNs tie, -0.0 == 0.0.
fn cmp_float(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

/// The sorting permutation of every lane along `dim`: `perm[flat position]` = index along
/// `dim` of the source element.
fn permutation(op: &'static str, ty: &TensorType, dim: usize, desc: bool, cmp: impl Fn(usize, usize) -> Ordering) -> Result<Vec<usize>> {
    let shape = &ty.shape[..];
    let s = strides(shape);
    let n = shape[dim] as usize;
    let mut out = try_vec(op, ty, ty.num_elements(), 0usize)?;
    let mut lanes = shape.to_vec();
    lanes[dim] = 1;
    for_each_index(&lanes, |idx| {
        let base: usize = idx.iter().zip(&s).map(|(i, st)| i * st).sum();
        let mut order: Vec<usize> = (0..n).collect();
        // sort_by is stable: ties keep their original order in both directions.
        order.sort_by(|&i, &j| {
            let o = cmp(base + i * s[dim], base + j * s[dim]);
            if desc {
                o.reverse()
            } else {
                o
            }
        });
        for (k, &i) in order.iter().enumerate() {
            out[base + k * s[dim]] = i;
        }
    });
    Ok(out)
}

fn perm_of(op: &'static str, x: &Buffer, dim: usize, desc: bool) -> Result<Vec<usize>> {
    let ty = x.ty();
    match vals(op, x)? {
        Vals::F32(v) => permutation(op, ty, dim, desc, |i, j| cmp_float(v[i] as f64, v[j] as f64)),
        Vals::F64(v) => permutation(op, ty, dim, desc, |i, j| cmp_float(v[i], v[j])),
        Vals::I1(v) => permutation(op, ty, dim, desc, |i, j| v[i].cmp(&v[j])),
        Vals::Int(v) => permutation(op, ty, dim, desc, |i, j| v[i].cmp(&v[j])),
    }
}

/// Evaluates one op of this family (exhaustive over the family).
pub(super) fn eval(operands: &[&Buffer], ty: &TensorType, op: &SortOp) -> Result<Vec<Buffer>> {
    let x = operands[0];
    match op {
        SortOp::Sort { dimension, direction } => {
            let d = *dimension as usize;
            let perm = perm_of("sort", x, d, *direction == CmpDir::Gt)?;
            let st = strides(x.shape())[d];
            let mut o = 0;
            let out = move_elems("sort", ty, &[x], |idx| {
                // Source: the same position with the index along `dim` replaced by perm.
                let flat = o;
                o += 1;
                (0, flat - idx[d] * st + perm[flat] * st)
            })?;
            Ok(vec![out])
        }
        SortOp::Argsort { dimension, direction, .. } => {
            let perm = perm_of("argsort", x, *dimension as usize, *direction == CmpDir::Gt)?;
            to_buffer("argsort", ty, Vals::Int(try_collect("argsort", ty, perm.len(), perm.iter().map(|&p| p as i64))?)).map(|b| vec![b])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use quabla_dialect::{CmpDir, DType, OpKind, SortOp};

    #[test]
    fn stable_nan_last_descending_keeps_ties() {
        let x = f64s(&[2, 4], &[3.0, f64::NAN, 1.0, 3.0, 0.0, -0.0, 2.0, -1.0]);
        let s = run1(OpKind::Sort(SortOp::Sort { dimension: 1, direction: CmpDir::Lt }), &[&x]).to_f64_vec();
        assert_eq!(s[..3], [1.0, 3.0, 3.0]);
        assert!(s[3].is_nan());
        assert_eq!(s[4..], [-1.0, 0.0, -0.0, 2.0]);
        assert!(s[5].is_sign_positive() && s[6].is_sign_negative());
        let a = run1(OpKind::Sort(SortOp::Argsort { dimension: 1, direction: CmpDir::Gt, index: DType::I64 }), &[&x]);
        assert_eq!(a.as_slice::<i64>().unwrap(), &[1, 0, 3, 2, 2, 0, 1, 3]);
        let a = run1(OpKind::Sort(SortOp::Argsort { dimension: 0, direction: CmpDir::Lt, index: DType::I32 }), &[&x]);
        assert_eq!(a.as_slice::<i32>().unwrap(), &[1, 1, 0, 1, 0, 0, 1, 0]);
        let i = i32s(&[5], &[4, -2, 4, 0, -2]);
        let s = run1(OpKind::Sort(SortOp::Sort { dimension: 0, direction: CmpDir::Gt }), &[&i]);
        assert_eq!(s.as_slice::<i32>().unwrap(), &[4, 4, 0, -2, -2]);
    }
}

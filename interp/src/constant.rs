//! `constant` (the literal's bytes become a buffer) and `iota` (the index along `dim`,
//! converted to the result dtype; i1 is `index != 0`).
use quabla_dialect::{ConstantOp, DType, Literal, TensorType};

use super::{for_each_index, to_buffer, try_capacity, InterpError, Result, Vals};
use crate::buffer::Buffer;

pub(super) fn constant(value: &Literal) -> Result<Buffer> {
    Buffer::try_from_literal(value).map_err(|source| InterpError::Buffer { op: "constant", source })
}

pub(super) fn iota(dim: i64, ty: &TensorType) -> Result<Buffer> {
    let mut idx = try_capacity("iota", ty, ty.num_elements())?;
    for_each_index(&ty.shape, |i| idx.push(i[dim as usize] as i64));
    let v = match ty.dtype {
        DType::F32 => Vals::F32(idx.iter().map(|&i| i as f32).collect()),
        DType::F64 => Vals::F64(idx.iter().map(|&i| i as f64).collect()),
        DType::I1 => Vals::I1(idx.iter().map(|&i| i != 0).collect()),
        DType::I32 | DType::I64 | DType::U8 | DType::U32 => Vals::Int(idx),
    };
    to_buffer("iota", ty, v)
}

/// Evaluates one op of this family (exhaustive over the family).
pub(super) fn eval(ty: &TensorType, op: &ConstantOp) -> super::Result<Vec<Buffer>> {
    let one = |b: super::Result<Buffer>| b.map(|b| vec![b]);
    match op {
        ConstantOp::Constant { value } => one(constant(value)),
        ConstantOp::Iota { dim, .. } => one(iota(*dim, ty)),
    }
}

#[cfg(test)]
mod tests {
    use super::super::run_op;
    use super::super::test_util::*;
    use quabla_dialect::{ConstantOp, DType, Literal, OpKind, TensorType};

    #[test]
    fn iota_along_each_dim() {
        let ty = TensorType::new(DType::I32, [2, 3]);
        let a = run1(OpKind::Constant(ConstantOp::Iota { dim: 0, ty: ty.clone() }), &[]);
        assert_eq!(a.as_slice::<i32>().unwrap(), &[0, 0, 0, 1, 1, 1]);
        let b = run1(OpKind::Constant(ConstantOp::Iota { dim: 1, ty }), &[]);
        assert_eq!(b.as_slice::<i32>().unwrap(), &[0, 1, 2, 0, 1, 2]);
        let c = run1(OpKind::Constant(ConstantOp::Iota { dim: 0, ty: TensorType::new(DType::I1, [3]) }), &[]);
        assert_eq!(c.as_slice::<bool>().unwrap(), &[false, true, true]);
        let d = run1(OpKind::Constant(ConstantOp::Iota { dim: 0, ty: TensorType::new(DType::F64, [3]) }), &[]);
        assert_eq!(d.to_f64_vec(), vec![0.0, 1.0, 2.0]);
        let e = run_op(&OpKind::Constant(ConstantOp::Iota { dim: 0, ty: TensorType::scalar(DType::F32) }), &[]).unwrap_err();
        assert!(e.to_string().contains("iota_c2"), "{e}");
    }

    #[test]
    fn constant_is_its_literal() {
        let l = Literal::from_f64s(TensorType::scalar(DType::F32), &[2.5]);
        let b = run1(OpKind::Constant(ConstantOp::Constant { value: l.clone() }), &[]);
        assert_eq!(b.shape(), &[] as &[i64]);
        assert_eq!(b.to_literal(), l);
    }
}

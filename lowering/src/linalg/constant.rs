//! Lowering of `constant` (an `arith.constant` with the dense literal) and `iota` (a
//! `linalg.generic` without inputs writing `linalg.index` converted to the element type).
use quabla_dialect::{ConstantOp, DType, Literal, TensorType};

use super::{elementwise::convert, generic, identity, Emitter, Iter, Operand};
use crate::LowerError;

/// `quabla.constant`.
pub fn lower_constant(e: &mut Emitter, value: &Literal) -> Result<String, LowerError> {
    Ok(e.op(format!("arith.constant {}", value.to_mlir_compact())))
}

/// `quabla.iota`: result[i...] = i[dim] in the result dtype (i1: index != 0).
pub fn lower_iota(e: &mut Emitter, dim: i64, ty: &TensorType) -> Result<String, LowerError> {
    let r = ty.rank();
    let init = e.empty(ty);
    let d = ty.dtype;
    let res = generic(e, &vec![Iter::Parallel; r], &[], &[Operand::new(init, ty, identity(r))], |e, _| {
        let k = e.op(format!("linalg.index {dim} : index"));
        let i = e.op(format!("arith.index_cast {k} : index to i64"));
        vec![convert(e, DType::I64, d, &i)]
    });
    Ok(res[0].clone())
}

/// Lowers one op of this family, returning its result's name (exhaustive over the family).
pub fn lower(e: &mut Emitter, op: &ConstantOp) -> Result<String, LowerError> {
    match op {
        ConstantOp::Constant { value } => lower_constant(e, value),
        ConstantOp::Iota { dim, ty } => lower_iota(e, *dim, ty),
    }
}

//! Export of `constant` (a `stablehlo.constant` with the same dense literal) and `iota` (a
//! `stablehlo.iota`; StableHLO's iota has no i1 form, so an i1 iota is an i32 iota converted
//! to i1, which is index != 0 as quabla defines it).
use quabla_dialect::{ConstantOp, DType, Literal, TensorType};

use super::elementwise::convert;
use super::{int_attr, Emitter, Tv};
use crate::LowerError;

/// `quabla.constant`.
pub fn lower_constant(e: &mut Emitter, value: &Literal) -> Result<Tv, LowerError> {
    Ok(e.op("stablehlo.constant", &[], &[("value", value.to_mlir())], &value.ty))
}

/// `quabla.iota`.
pub fn lower_iota(e: &mut Emitter, dim: i64, ty: &TensorType) -> Result<Tv, LowerError> {
    let attrs = [("iota_dimension", int_attr(dim))];
    if ty.dtype == DType::I1 {
        let i = e.op("stablehlo.iota", &[], &attrs, &ty.with_dtype(DType::I32));
        return Ok(convert(e, &i, DType::I1));
    }
    Ok(e.op("stablehlo.iota", &[], &attrs, ty))
}

/// Exports one op of this family (exhaustive over the family).
pub fn lower(e: &mut Emitter, op: &ConstantOp) -> Result<Tv, LowerError> {
    match op {
        ConstantOp::Constant { value } => lower_constant(e, value),
        ConstantOp::Iota { dim, ty } => lower_iota(e, *dim, ty),
    }
}

//! `constant` (a module-level `C{k}` built once from the literal's little-endian bytes by
//! `q.const`, or `q.splat` of one element for a splat) and `iota` (`q.iota`: an `mx.arange` along `dim`, broadcast to the shape,
//! i1 as index != 0).
use quabla_dialect::{ConstantOp, Literal, TensorType};

use super::{dtype, tuple, Emitter};
use crate::LowerError;

/// `quabla.constant`: the name of its module-level constant.
pub fn lower_constant(e: &mut Emitter, value: &Literal) -> Result<String, LowerError> {
    let size = value.ty.dtype.size();
    let hex = |b: &[u8]| b.iter().map(|b| format!("{b:02x}")).collect::<String>();
    let first = &value.bytes[..size.min(value.bytes.len())];
    if value.bytes.len() > size && value.bytes.chunks_exact(size).all(|c| c == first) {
        // A splat: one element broadcast to the shape.
        return Ok(e.constant(format!("q.splat(\"{}\", {}, {})", hex(first), dtype(value.ty.dtype), tuple(&value.ty.shape))));
    }
    Ok(e.constant(format!("q.const(\"{}\", {}, {})", hex(&value.bytes), dtype(value.ty.dtype), tuple(&value.ty.shape))))
}

/// `quabla.iota`.
pub fn lower_iota(dim: i64, ty: &TensorType) -> Result<String, LowerError> {
    Ok(format!("q.iota({}, {dim}, {})", tuple(&ty.shape), dtype(ty.dtype)))
}

/// Lowers one op of this family (exhaustive over the family).
pub fn lower(e: &mut Emitter, op: &ConstantOp) -> Result<String, LowerError> {
    match op {
        ConstantOp::Constant { value } => lower_constant(e, value),
        ConstantOp::Iota { dim, ty } => lower_iota(*dim, ty),
    }
}

//! `convolution` on MLX: `mx.conv_general` has no batch groups and no single call for every
//! dimension-number layout with padding of both signs, so the family is not mapped yet:
//! `Unsupported` (an `UnsupportedOperationError(op, device="mlx")` at compile time).
use quabla_dialect::{Func, Op, ConvolutionOp};

use super::{unsupported, Emitter};
use crate::LowerError;

/// Lowers one op of this family (exhaustive over the family).
pub fn lower(_e: &mut Emitter, _f: &Func, o: &Op, op: &ConvolutionOp) -> Result<String, LowerError> {
    match op {
        ConvolutionOp::Convolution { .. } => Err(unsupported(o.kind.name())),
    }
}

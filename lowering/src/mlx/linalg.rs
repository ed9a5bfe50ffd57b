//! Linear algebra on MLX: `mx.linalg` runs its kernels on the CPU stream only and follows
//! LAPACK's conventions where quabla fixes its own (sign choices, pivot layout), so the family
//! is not mapped yet: `Unsupported` (an `UnsupportedOperationError(op, device="mlx")` at
//! compile time).
use quabla_dialect::{Func, Op, LinalgOp};

use super::{unsupported, Emitter};
use crate::LowerError;

/// Lowers one op of this family (exhaustive over the family).
pub fn lower(_e: &mut Emitter, _f: &Func, o: &Op, op: &LinalgOp) -> Result<String, LowerError> {
    match op {
        LinalgOp::Cholesky { .. } | LinalgOp::TriangularSolve { .. } | LinalgOp::Lu { .. } | LinalgOp::Qr { .. } | LinalgOp::Eigh { .. } | LinalgOp::Svd { .. } => Err(unsupported(o.kind.name())),
    }
}

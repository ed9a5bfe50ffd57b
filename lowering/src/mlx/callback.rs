//! `host_callback` and `callback_result` on MLX: a host callback cannot run inside `mx.compile` (the traced
//! function runs once), so it is `Unsupported` (an `UnsupportedOperationError(op,
//! device="mlx")` at compile time).
use quabla_dialect::{Func, Op, CallbackOp};

use super::{unsupported, Emitter};
use crate::LowerError;

/// Lowers one op of this family (exhaustive over the family).
pub fn lower(_e: &mut Emitter, _f: &Func, o: &Op, op: &CallbackOp) -> Result<String, LowerError> {
    match op {
        CallbackOp::HostCallback { .. } | CallbackOp::CallbackResult { .. } => Err(unsupported(o.kind.name())),
    }
}

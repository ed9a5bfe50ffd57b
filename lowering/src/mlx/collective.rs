//! The collective family on MLX: resolved by the vmap expansion before the emitter runs; one
//! left names an axis no enclosing vmap binds ([`LowerError::UnboundAxis`]).
use quabla_dialect::{CollectiveOp, Func, Op};

use super::Emitter;
use crate::LowerError;

/// Lowers one op of this family (exhaustive over the family): always the unbound-axis error.
pub fn lower(_e: &mut Emitter, _f: &Func, o: &Op, op: &CollectiveOp) -> Result<String, LowerError> {
    match op {
        CollectiveOp::Psum { .. } | CollectiveOp::Pmax { .. } | CollectiveOp::Pmin { .. } | CollectiveOp::AllGather { .. } | CollectiveOp::AxisIndex { .. } => Err(LowerError::unbound_axis(o.kind.name(), op)),
    }
}

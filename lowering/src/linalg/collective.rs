//! The collective family has no loop form: the `quabla-vmap` expansion of the vmap naming an
//! op's axis replaces the op by ordinary ops, so one that reaches the lowering names an axis no
//! enclosing vmap binds ([`LowerError::UnboundAxis`]).
use quabla_dialect::{CollectiveOp, Func, Op};

use crate::LowerError;

/// Lowers one op of this family (exhaustive over the family): always the unbound-axis error.
pub fn lower(_e: &mut super::Emitter, _f: &Func, o: &Op, op: &CollectiveOp) -> Result<String, LowerError> {
    match op {
        CollectiveOp::Psum { .. } | CollectiveOp::Pmax { .. } | CollectiveOp::Pmin { .. } | CollectiveOp::AllGather { .. } | CollectiveOp::AxisIndex { .. } => Err(LowerError::unbound_axis(o.kind.name(), op)),
    }
}

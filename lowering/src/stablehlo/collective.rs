//! Export of the collective family: none. A `quabla.psum` (and the rest) exists only inside the
//! vmap naming its axis, whose expansion (run before the export) replaces it by ordinary ops;
//! one left names an axis no enclosing vmap binds ([`LowerError::UnboundAxis`]). (StableHLO's
//! `all_reduce` and friends reduce across devices, which a vmap axis is not.)
use quabla_dialect::{CollectiveOp, Func, Op};

use super::{Emitter, Tv};
use crate::LowerError;

/// Exports one op of this family (exhaustive over the family): always the unbound-axis error.
pub fn lower(_e: &mut Emitter, _f: &Func, o: &Op, op: &CollectiveOp) -> Result<Tv, LowerError> {
    match op {
        CollectiveOp::Psum { .. } | CollectiveOp::Pmax { .. } | CollectiveOp::Pmin { .. } | CollectiveOp::AllGather { .. } | CollectiveOp::AxisIndex { .. } => Err(LowerError::unbound_axis(o.kind.name(), op)),
    }
}

//! The collective family has no value outside the vmap naming its axis: the `quabla-vmap`
//! expansion replaces every op of it by ordinary ops, so one that reaches the interpreter
//! names an axis no enclosing vmap binds ([`InterpError::UnboundAxis`]).
use quabla_dialect::{CollectiveOp, TensorType};

use super::{InterpError, Result};
use crate::buffer::Buffer;

/// Evaluates one op of this family (exhaustive over the family): always the unbound-axis error.
pub fn eval(_xs: &[&Buffer], _ty: &TensorType, op: &CollectiveOp) -> Result<Vec<Buffer>> {
    let name = match op {
        CollectiveOp::Psum { .. } => "psum",
        CollectiveOp::Pmax { .. } => "pmax",
        CollectiveOp::Pmin { .. } => "pmin",
        CollectiveOp::AllGather { .. } => "all_gather",
        CollectiveOp::AxisIndex { .. } => "axis_index",
    };
    Err(InterpError::UnboundAxis { op: name, axis: op.axis_name().to_string() })
}

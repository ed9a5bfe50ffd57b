//! Calls: a call of a function without control flow is a call of its emitted `def` inside
//! the caller's compiled segment (MLX traces through it); a call of a function with control
//! flow is emitted by `Emitter::control_op`. Custom-derivative calls are emitted inline by
//! `Emitter::straight` (their primal body), so they never reach `lower`.
use quabla_dialect::{CallOp, Func, Op};

use super::{names, Emitter};
use crate::LowerError;

/// Lowers one op of this family (exhaustive over the family): a tuple-valued call.
pub fn lower(e: &mut Emitter, _f: &Func, o: &Op, op: &CallOp) -> Result<String, LowerError> {
    match op {
        CallOp::Call { callee, .. } => {
            let target = e.func(callee)?;
            let call = format!("{target}({})", names(&o.operands));
            Ok(if o.results.len() == 1 { format!("{call}[0]") } else { call })
        }
        CallOp::CustomJvp { .. } | CallOp::CustomVjp { .. } => unreachable!("custom calls are emitted inline"),
    }
}

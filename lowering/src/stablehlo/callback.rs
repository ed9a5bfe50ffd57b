//! Export of the host-callback family (`callback_result`: a `stablehlo.custom_call
//! @quabla.callback_result` with the result's type, its `backend_config` naming the callback
//! and the result). `host_callback` becomes a side-effecting
//! `stablehlo.custom_call @quabla.host_callback` with no results whose `backend_config`
//! names the callback (`callback=<id> index=<i> count=<n> batched=[..]`); its result is the
//! operand. The custom call is host-only: the id names a function of the process that traced
//! the program, so the exported program keeps it for a consumer that registers the target
//! (XLA and IREE reject an unregistered target when they compile it). docs/stablehlo.md.
use quabla_dialect::{CallbackOp, Func, Op};

use super::{Emitter, Tv};
use crate::LowerError;

/// The custom call's target name.
pub const TARGET: &str = "quabla.host_callback";

/// The target of `callback_result` (a pure callback's result, host-only as `TARGET`).
pub const RESULT_TARGET: &str = "quabla.callback_result";

/// Exports one op of this family (exhaustive over the family).
pub fn lower(e: &mut Emitter, f: &Func, o: &Op, op: &CallbackOp) -> Result<Tv, LowerError> {
    let (callback, index, count, batched) = match op {
        CallbackOp::HostCallback { callback, index, count, batched } => (callback, index, count, batched),
        CallbackOp::CallbackResult { callback, index, batched, ty } => {
            let config = format!("callback={callback} index={index} batched={batched:?}");
            let attrs = [("call_target_name", format!("\"{RESULT_TARGET}\"")), ("has_side_effect", "true".to_string()), ("backend_config", format!("\"{config}\""))];
            return Ok(e.op("stablehlo.custom_call", &[], &attrs, ty));
        }
    };
    let x = e.get(f, o.operands[0]);
    let config = format!("callback={callback} index={index} count={count} batched={batched:?}");
    let attrs = [("call_target_name", format!("\"{TARGET}\"")), ("has_side_effect", "true".to_string()), ("backend_config", format!("\"{config}\""))];
    e.op_n("stablehlo.custom_call", &[&x], &attrs, &[]);
    Ok(x)
}

//! Export of the host-callback family. `host_callback` becomes a side-effecting
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

/// Exports one op of this family (exhaustive over the family).
pub fn lower(e: &mut Emitter, f: &Func, o: &Op, op: &CallbackOp) -> Result<Tv, LowerError> {
    let CallbackOp::HostCallback { callback, index, count, batched } = op;
    let x = e.get(f, o.operands[0]);
    let config = format!("callback={callback} index={index} count={count} batched={batched:?}");
    let attrs = [("call_target_name", format!("\"{TARGET}\"")), ("has_side_effect", "true".to_string()), ("backend_config", format!("\"{config}\""))];
    e.op_n("stablehlo.custom_call", &[&x], &attrs, &[]);
    Ok(x)
}

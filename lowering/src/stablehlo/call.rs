//! Export of calls: `func.call` of the callee under its exported name (the entry point is
//! renamed `@main`; see `export_module`). Functions keep their tensor signatures. A
//! custom-derivative call exports its primal body (region 0) in place.
use std::collections::HashMap;

use quabla_dialect::{Func, Op, TensorType};

use super::{export_op, Emitter, Tv};
use crate::linalg::sym;
use crate::LowerError;

/// `func.call @callee`: returns the results.
pub fn lower_call(e: &mut Emitter, names: &HashMap<String, String>, f: &Func, o: &Op, callee: &str, results: &[TensorType]) -> Result<Vec<Tv>, LowerError> {
    let target = names.get(callee).ok_or_else(|| LowerError::UnknownCallee { callee: callee.to_string() })?;
    let args: Vec<Tv> = o.operands.iter().map(|v| e.get(f, *v)).collect();
    let refs: Vec<&Tv> = args.iter().collect();
    Ok(e.op_n("func.call", &refs, &[("callee", sym(target))], results))
}

/// `custom_jvp_call` / `custom_vjp_call`: the primal body exported in place; returns its outputs.
pub fn lower_custom(e: &mut Emitter, names: &HashMap<String, String>, f: &Func, o: &Op) -> Result<Vec<Tv>, LowerError> {
    let loc = e.loc.clone();
    let body = &o.regions[0];
    for (bp, outer) in body.params.iter().zip(&o.operands) {
        let name = e.name(*outer);
        e.alias(*bp, name);
    }
    for op in &body.ops {
        export_op(e, names, f, op)?;
    }
    e.loc = loc;
    Ok(body.outputs.iter().map(|v| e.get(f, *v)).collect())
}

//! Export of calls: `func.call` of the callee under its exported name (the entry point is
//! renamed `@main`; see `export_module`). Functions keep their tensor signatures.
use std::collections::HashMap;

use quabla_dialect::{Func, Op, TensorType};

use super::{Emitter, Tv};
use crate::linalg::sym;
use crate::LowerError;

/// `func.call @callee`: returns the results.
pub fn lower_call(e: &mut Emitter, names: &HashMap<String, String>, f: &Func, o: &Op, callee: &str, results: &[TensorType]) -> Result<Vec<Tv>, LowerError> {
    let target = names.get(callee).ok_or_else(|| LowerError::UnknownCallee { callee: callee.to_string() })?;
    let args: Vec<Tv> = o.operands.iter().map(|v| e.get(f, *v)).collect();
    let refs: Vec<&Tv> = args.iter().collect();
    Ok(e.op_n("func.call", &refs, &[("callee", sym(target))], results))
}

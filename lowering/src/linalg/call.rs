//! Lowering of `quabla.call @f` to `func.call` of the callee's tensor form: the callee itself,
//! or, under `Abi::Dps` when the callee is public (and so has a memref signature), its private
//! tensor twin emitted by `lower_module`.
use quabla_dialect::{Func, Op, TensorType};

use super::{sym, Ctx, Emitter};
use crate::LowerError;

/// `quabla.call`: returns the names of the results.
pub fn lower_call(e: &mut Emitter, cx: &Ctx, f: &Func, o: &Op, callee: &str, results: &[TensorType]) -> Result<Vec<String>, LowerError> {
    let target = cx.callee.get(callee).ok_or_else(|| LowerError::UnknownCallee { callee: callee.to_string() })?;
    let args: Vec<String> = o.operands.iter().map(|v| e.name(*v)).collect();
    let at: Vec<String> = o.operands.iter().map(|v| f.ty(*v).to_string()).collect();
    let rt: Vec<String> = results.iter().map(|t| t.to_string()).collect();
    let call = format!("func.call {}({}) : ({}) -> ({})", sym(target), args.join(", "), at.join(", "), rt.join(", "));
    if results.is_empty() {
        e.line(call);
        return Ok(vec![]);
    }
    let n = e.fresh();
    let lhs = if results.len() == 1 { n.clone() } else { format!("{n}:{}", results.len()) };
    e.line(format!("{lhs} = {call}"));
    Ok(if results.len() == 1 { vec![n] } else { (0..results.len()).map(|i| format!("{n}#{i}")).collect() })
}

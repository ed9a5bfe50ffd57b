//! Lowering of `quabla.call @f` to `func.call` of the callee's tensor form: the callee itself,
//! or, under `Abi::Dps` when the callee is public (and so has a memref signature), its private
//! tensor twin emitted by `lower_module`. A custom-derivative call (`custom_jvp_call`,
//! `custom_vjp_call`; its rules are used by autodiff only) lowers to its primal body in place.
use quabla_dialect::{Func, Op, TensorType};

use super::{lower_block, sym, Ctx, Emitter};
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

/// `custom_jvp_call` / `custom_vjp_call`: the primal body (region 0) lowered in place, its
/// parameters bound to the operands; returns the names of its outputs.
pub fn lower_custom(e: &mut Emitter, cx: &Ctx, f: &Func, o: &Op) -> Result<Vec<String>, LowerError> {
    let loc = e.loc.clone();
    let body = &o.regions[0];
    for (bp, outer) in body.params.iter().zip(&o.operands) {
        let name = e.name(*outer);
        e.alias(*bp, name);
    }
    lower_block(e, cx, f, &body.ops, &body.outputs)?;
    e.loc = loc;
    Ok(body.outputs.iter().map(|v| e.name(*v)).collect())
}

//! Lowering of `quabla.call @f` to `func.call` of the callee's tensor form: the callee itself,
//! or, under `Abi::Dps` when the callee is public (and so has a memref signature), its private
//! tensor twin emitted by `lower_module`. A private callee of a target whose private functions
//! pass destinations (`Target::private_dps`) is called with a buffer per result: the caller's
//! own output buffer where the result is one of its outputs, else a new allocation, read back
//! as a tensor after the call. A custom-derivative call (`custom_jvp_call`,
//! `custom_vjp_call`; its rules are used by autodiff only) lowers to its primal body in place.
use quabla_dialect::{Func, Op, TensorType};

use super::{lower_block, memref, sym, Ctx, Emitter};
use crate::{Abi, LowerError};

/// `quabla.call`: returns the names of the results.
pub fn lower_call(e: &mut Emitter, cx: &Ctx, f: &Func, o: &Op, callee: &str, results: &[TensorType]) -> Result<Vec<String>, LowerError> {
    let target = cx.callee.get(callee).ok_or_else(|| LowerError::UnknownCallee { callee: callee.to_string() })?;
    let args: Vec<String> = o.operands.iter().map(|v| e.name(*v)).collect();
    let at: Vec<String> = o.operands.iter().map(|v| f.ty(*v).to_string()).collect();
    let rt: Vec<String> = results.iter().map(|t| t.to_string()).collect();
    if cx.abi == Abi::Dps && cx.cg.target.private_dps() && cx.module.func(target).is_some_and(|g| !g.public) {
        return Ok(destination_call(e, o, target, (&args, &at), results));
    }
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

/// A call of the destination-passing private function `target` (see the module docs):
/// returns the names of the results.
fn destination_call(e: &mut Emitter, o: &Op, target: &str, (args, at): (&[String], &[String]), results: &[TensorType]) -> Vec<String> {
    let outs = e.distinct_out_buffers(&o.results.iter().copied().map(Some).collect::<Vec<_>>());
    let dests: Vec<String> = outs.into_iter().zip(results).map(|(b, t)| b.unwrap_or_else(|| e.op(format!("memref.alloc() {{alignment = 64 : i64}} : {}", memref(t))))).collect();
    let types: Vec<String> = at.iter().cloned().chain(results.iter().map(memref)).collect();
    let operands: Vec<String> = args.iter().chain(&dests).cloned().collect();
    e.line(format!("func.call {}({}) : ({}) -> ()", sym(target), operands.join(", "), types.join(", ")));
    dests.iter().zip(results).map(|(d, t)| e.op(format!("bufferization.to_tensor {d} restrict writable : {} to {t}", memref(t)))).collect()
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

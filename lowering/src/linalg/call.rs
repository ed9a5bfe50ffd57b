//! Lowering of `quabla.call @f` to `func.call @f` (the callee is lowered as a tensor function).
use quabla_dialect::{Func, Module, Op, OpKind};

use super::Emitter;
use crate::LowerError;

pub fn lower(e: &mut Emitter, m: &Module, f: &Func, o: &Op) -> Result<(), LowerError> {
    let OpKind::Call { callee, results } = &o.kind else { return Err(LowerError::Internal(format!("call lowering got {}", o.kind.name()))) };
    let g = m.func(callee).ok_or_else(|| LowerError::Invalid(format!("call to unknown function @{callee}")))?;
    if g.public && e.dps {
        return Err(LowerError::Unsupported { op: "call".into(), reason: format!("calls to public functions (@{callee}) are not lowered; make the callee private or inline it") });
    }
    let args: Vec<String> = o.operands.iter().map(|v| e.name(*v)).collect();
    let at: Vec<String> = o.operands.iter().map(|v| f.ty(*v).to_string()).collect();
    let rt: Vec<String> = results.iter().map(|t| t.to_string()).collect();
    let n = e.fresh();
    let lhs = if results.len() == 1 { n.clone() } else { format!("{n}:{}", results.len()) };
    if results.is_empty() {
        e.line(format!("func.call @{callee}({}) : ({}) -> ()", args.join(", "), at.join(", ")));
    } else {
        e.line(format!("{lhs} = func.call @{callee}({}) : ({}) -> ({})", args.join(", "), at.join(", "), rt.join(", ")));
    }
    for (i, r) in o.results.iter().enumerate() {
        e.alias(*r, if results.len() == 1 { n.clone() } else { format!("{n}#{i}") });
    }
    Ok(())
}

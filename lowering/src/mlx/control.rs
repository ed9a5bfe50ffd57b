//! Control flow as Python control flow: each region body is its own emitted function (itself
//! split into compiled segments), and the op becomes a call of a `quabla._mlx` helper that
//! reads the predicate or index with `.item()`: `q.cond(pred, then, else, *captures)`,
//! `q.case(index, (branches...), *captures)` (an out-of-range index takes the last branch)
//! and `q.while_loop(cond, body, *carries)`. Each returns the tuple of results.
use quabla_dialect::{ControlOp, Func, Op};

use super::{names, Emitter};
use crate::LowerError;

fn region(e: &mut Emitter, f: &Func, base: &str, o: &Op, k: usize) -> Result<String, LowerError> {
    let py = e.fresh(base);
    let body = &o.regions[k];
    e.block(f, &py, &body.params, &body.ops, &body.outputs)?;
    Ok(py)
}

fn args(vs: &[quabla_dialect::Value]) -> String {
    if vs.is_empty() {
        String::new()
    } else {
        format!(", {}", names(vs))
    }
}

/// Lowers one op of this family (exhaustive over the family) to a tuple-valued call.
pub fn lower(e: &mut Emitter, f: &Func, py: &str, o: &Op, op: &ControlOp) -> Result<String, LowerError> {
    match op {
        ControlOp::If { .. } => {
            let t = region(e, f, &format!("{py}_then"), o, 0)?;
            let el = region(e, f, &format!("{py}_else"), o, 1)?;
            Ok(format!("q.cond({}, {t}, {el}{})", names(&o.operands[..1]), args(&o.operands[1..])))
        }
        ControlOp::Case { .. } => {
            let bs = (0..o.regions.len()).map(|k| region(e, f, &format!("{py}_case{k}"), o, k)).collect::<Result<Vec<_>, _>>()?;
            Ok(format!("q.case({}, ({},){})", names(&o.operands[..1]), bs.join(", "), args(&o.operands[1..])))
        }
        ControlOp::While {} => {
            let c = region(e, f, &format!("{py}_cond"), o, 0)?;
            let b = region(e, f, &format!("{py}_body"), o, 1)?;
            Ok(format!("q.while_loop({c}, {b}{})", args(&o.operands)))
        }
    }
}

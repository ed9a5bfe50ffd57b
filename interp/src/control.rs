//! Control flow: `quabla.if` evaluates its predicate and runs the chosen body on the captured
//! operands; `quabla.case` runs the body its index selects (the last one when the index is
//! out of range, as StableHLO); `quabla.while` runs its body while its cond region yields true. Bodies run in the
//! function's environment (they share the function's value numbering).
use quabla_dialect::{Func, Module, Op};

use super::call::eval_block;
use super::Result;
use crate::buffer::Buffer;

/// `quabla.if (pred, x...)`: the then body when `pred` is true, else the else body.
pub(super) fn eval_if<'m>(m: &'m Module, f: &'m Func, op: &'m Op, args: Vec<Buffer>, env: &mut Vec<Option<Buffer>>, stack: &mut Vec<&'m str>) -> Result<Vec<Buffer>> {
    let taken = args[0].bytes().first().is_some_and(|&b| b != 0);
    let body = &op.regions[if taken { 0 } else { 1 }];
    eval_block(m, f, &body.params, &body.ops, &body.outputs, args[1..].to_vec(), env, stack)
}

/// `quabla.while (x...)`: `x = body(x)` while `cond(x)`; the results are the final carries.
pub(super) fn eval_while<'m>(m: &'m Module, f: &'m Func, op: &'m Op, args: Vec<Buffer>, env: &mut Vec<Option<Buffer>>, stack: &mut Vec<&'m str>) -> Result<Vec<Buffer>> {
    let (cond, body) = (&op.regions[0], &op.regions[1]);
    let mut carries = args;
    loop {
        let c = eval_block(m, f, &cond.params, &cond.ops, &cond.outputs, carries.clone(), env, stack)?;
        if !c[0].bytes().first().is_some_and(|&b| b != 0) {
            return Ok(carries);
        }
        carries = eval_block(m, f, &body.params, &body.ops, &body.outputs, carries, env, stack)?;
    }
}

/// `quabla.case (index, x...)`: body `index`, or the last body when `index` is outside
/// `[0, N)`.
pub(super) fn eval_case<'m>(m: &'m Module, f: &'m Func, op: &'m Op, args: Vec<Buffer>, env: &mut Vec<Option<Buffer>>, stack: &mut Vec<&'m str>) -> Result<Vec<Buffer>> {
    let i = match crate::vals("case", &args[0])? {
        crate::Vals::Int(v) => v.first().copied().unwrap_or(-1),
        _ => -1,
    };
    let n = op.regions.len();
    let k = if i >= 0 && (i as u64) < n as u64 { i as usize } else { n - 1 };
    let body = &op.regions[k];
    eval_block(m, f, &body.params, &body.ops, &body.outputs, args[1..].to_vec(), env, stack)
}

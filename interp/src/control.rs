//! Control flow: `quabla.if` evaluates its predicate and runs the chosen body on the captured
//! operands, in the function's environment (bodies share the function's value numbering).
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

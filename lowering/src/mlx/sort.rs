//! `sort` and `argsort` along one dimension in NumPy's total order (NaN last ascending,
//! first descending), stable (`q.sort` / `q.argsort`: `mx.sort`/`mx.argsort`, with
//! descending order written as the ascending order of the reversed lane, reversed back so
//! that ties keep their original order).
use quabla_dialect::{CmpDir, Func, Op, SortOp};

use super::{dtype, name, unsupported, Emitter};
use crate::LowerError;

fn descending(o: &Op, d: CmpDir) -> Result<bool, LowerError> {
    match d {
        CmpDir::Lt => Ok(false),
        CmpDir::Gt => Ok(true),
        _ => Err(unsupported(o.kind.name())),
    }
}

/// Lowers one op of this family (exhaustive over the family).
pub fn lower(_e: &mut Emitter, _f: &Func, o: &Op, op: &SortOp) -> Result<String, LowerError> {
    let a = name(o.operands[0]);
    let py = |b: bool| if b { "True" } else { "False" };
    match op {
        SortOp::Sort { dimension, direction } => Ok(format!("q.sort({a}, {dimension}, {})", py(descending(o, *direction)?))),
        SortOp::Argsort { dimension, direction, index } => Ok(format!("q.argsort({a}, {dimension}, {}, {})", py(descending(o, *direction)?), dtype(*index))),
    }
}

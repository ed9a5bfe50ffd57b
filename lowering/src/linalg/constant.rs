//! Lowering of `constant` (an `arith.constant` with the dense literal) and `iota`
//! (a `linalg.generic` writing `linalg.index` converted to the element type).
use quabla_dialect::{DType, Func, Op, OpKind};

use super::{elementwise::convert, generic, identity, Emitter};
use crate::LowerError;

pub fn lower(e: &mut Emitter, f: &Func, o: &Op) -> Result<(), LowerError> {
    let out = f.ty(o.results[0]).clone();
    match &o.kind {
        OpKind::Constant { value } => {
            let n = e.fresh();
            e.line(format!("{n} = arith.constant {}", value.to_mlir()));
            e.alias(o.results[0], n);
        }
        OpKind::Iota { dim, .. } => {
            let r = out.rank();
            let init = e.empty(&out);
            let iters = vec!["parallel"; r];
            let d = out.dtype;
            let dim = *dim;
            let res = generic(e, r, &iters, &[], &[(init, out.clone(), identity(r))], |e, _| {
                let k = e.fresh();
                e.line(format!("{k} = linalg.index {dim} : index"));
                let i = e.fresh();
                e.line(format!("{i} = arith.index_cast {k} : index to i64"));
                vec![convert(e, DType::I64, d, &i)]
            });
            e.alias(o.results[0], res[0].clone());
        }
        other => return Err(LowerError::Internal(format!("constant lowering got {}", other.name()))),
    }
    Ok(())
}

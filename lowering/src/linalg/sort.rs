//! Lowering of the sort family (`sort`, `argsort`): one call of a runtime kernel
//! `quabla_sort_<dtype>` / `quabla_argsort_<dtype>_<index dtype>` (dtypes spelled as MLIR
//! does, `ui32` apart from `i32`) on unranked memrefs (operand, result, then the dimension and
//! `1` for descending as `i64`s), declared with `llvm.emit_c_interface` like the linear-algebra
//! kernels (crate::linalg::linalg, whose call emission this shares). The kernels
//! (runtime/src/sort_kernels.rs) sort each lane in O(n log n): a stable order that is NumPy's
//! total order (NaN last ascending, first descending; -0.0 ties 0.0).
use quabla_dialect::{CmpDir, DType, Func, Module, Op, OpKind, SortOp};

use super::linalg::{call_kernel, declare, unranked};
use super::Emitter;
use crate::LowerError;

/// The kernel's symbol and its argument types for `op` on an operand of dtype `d`.
pub fn kernel(op: &SortOp, d: DType) -> (String, Vec<String>) {
    let (name, out) = match op {
        SortOp::Sort { .. } => (format!("quabla_sort_{}", d.mlir()), d),
        SortOp::Argsort { index, .. } => (format!("quabla_argsort_{}_{}", d.mlir(), index.mlir()), *index),
    };
    (name, vec![unranked(d), unranked(out), "i64".to_string(), "i64".to_string()])
}

/// The declarations of every sort kernel the module calls.
pub fn declarations(m: &Module) -> String {
    declare(m, |f, o| match &o.kind {
        OpKind::Sort(op) => Some(kernel(op, f.ty(o.operands[0]).dtype)),
        _ => None,
    })
}

/// Lowers one op of this family, returning its result's name (exhaustive over the family).
pub fn lower(e: &mut Emitter, f: &Func, o: &Op, op: &SortOp) -> Result<String, LowerError> {
    let (dimension, direction) = match op {
        SortOp::Sort { dimension, direction } | SortOp::Argsort { dimension, direction, .. } => (*dimension, *direction),
    };
    let (name, args) = kernel(op, f.ty(o.operands[0]).dtype);
    let flags = [dimension, i64::from(direction == CmpDir::Gt)];
    Ok(call_kernel(e, f, o, &name, &args, &flags).remove(0))
}

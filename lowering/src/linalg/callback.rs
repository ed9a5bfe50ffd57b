//! The host-callback family: `host_callback` becomes a call of the runtime's
//! `quabla_host_callback_<dtype>(memref<*xT> value, i64 callback, i64 index, i64 count,
//! i64 levels, i64 mask)` (declared once per module with `llvm.emit_c_interface`; the CPU
//! runtime registers `_mlir_ciface_quabla_host_callback_*`, which hand the value to
//! `quabla_interp::callback::deliver`). `levels` is the length of the op's `batched` flags
//! and bit `l` of `mask` is flag `l`. The value is a private copy (as the linear-algebra
//! kernels' operands: a read bufferization sees, freed by the ownership-based deallocation); the op's result is its operand. The call
//! is an external `func.call`, so upstream passes neither remove nor reorder it.
use std::collections::BTreeSet;

use quabla_dialect::{CallbackOp, DType, Func, Module, Op, OpKind};

use super::{memref, Emitter};
use crate::LowerError;

/// The runtime symbol (without the C-interface prefix) for values of dtype `d`.
pub fn symbol(d: DType) -> String {
    format!("quabla_host_callback_{}", d.mlir())
}

/// `memref<*xT>` in the lowering's (signless) spelling.
fn unranked(d: DType) -> String {
    format!("memref<*x{d}>")
}

/// The declarations of the runtime functions the module's callbacks call.
pub fn declarations(m: &Module) -> String {
    let mut decls = BTreeSet::new();
    for f in &m.funcs {
        f.walk(&mut |o| {
            if let OpKind::Callback(_) = &o.kind {
                let d = f.ty(o.operands[0]).dtype;
                decls.insert(format!("  func.func private @{}({}, i64, i64, i64, i64, i64) attributes {{llvm.emit_c_interface}}\n", symbol(d), unranked(d)));
            }
        });
    }
    decls.into_iter().collect()
}

/// Lowers one op of this family, returning its result's name (the operand).
pub fn lower(e: &mut Emitter, f: &Func, o: &Op, op: &CallbackOp) -> Result<String, LowerError> {
    let CallbackOp::HostCallback { callback, index, count, batched } = op;
    let v = o.operands[0];
    let t = f.ty(v);
    let m = e.op(format!("memref.alloc() {{alignment = 64 : i64}} : {}", memref(t)));
    e.line(format!("bufferization.materialize_in_destination {} in restrict writable {m} : ({t}, {}) -> ()", e.name(v), memref(t)));
    let u = e.op(format!("memref.cast {m} : {} to {}", memref(t), unranked(t.dtype)));
    let mask = batched.iter().enumerate().fold(0i64, |acc, (l, &b)| acc | (b << l));
    let ints: Vec<String> = [*callback, *index, *count, batched.len() as i64, mask].iter().map(|x| e.op(format!("arith.constant {x} : i64"))).collect();
    e.line(format!("func.call @{}({u}, {}) : ({}, i64, i64, i64, i64, i64) -> ()", symbol(t.dtype), ints.join(", "), unranked(t.dtype)));
    Ok(e.name(v))
}

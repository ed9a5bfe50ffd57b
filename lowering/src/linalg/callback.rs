//! The host-callback family: `host_callback` becomes a call of the runtime's
//! `quabla_host_callback_<dtype>(memref<*xT> value, i64 callback, i64 index, i64 count,
//! i64 levels, i64 mask)` (declared once per module with `llvm.emit_c_interface`; the CPU
//! runtime registers `_mlir_ciface_quabla_host_callback_*`, which hand the value to
//! `quabla_interp::callback::deliver`). `levels` is the length of the op's `batched` flags
//! and bit `l` of `mask` is flag `l`. The value is a private copy (as the linear-algebra
//! kernels' operands: a read bufferization sees, freed by the ownership-based deallocation); the op's result is its operand. The call
//! is an external `func.call`, so upstream passes neither remove nor reorder it.
//! `callback_result` allocates its result and calls `quabla_callback_result_<dtype>(memref<*xT>
//! out, i64 callback, i64 index, i64 levels, i64 mask)`, which writes the pure callback's result into it
//! (`quabla_interp::callback::fetch`; on a failure the runtime records it and the caller
//! raises it after the call).
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

/// The runtime symbol of `callback_result` for dtype `d`.
pub fn result_symbol(d: DType) -> String {
    format!("quabla_callback_result_{}", d.mlir())
}

/// The declarations of the runtime functions the module's callbacks call.
pub fn declarations(m: &Module) -> String {
    let mut decls = BTreeSet::new();
    for f in &m.funcs {
        f.walk(&mut |o| match &o.kind {
            OpKind::Callback(CallbackOp::HostCallback { .. }) => {
                let d = f.ty(o.operands[0]).dtype;
                decls.insert(format!("  func.func private @{}({}, i64, i64, i64, i64, i64) attributes {{llvm.emit_c_interface}}\n", symbol(d), unranked(d)));
            }
            OpKind::Callback(CallbackOp::CallbackResult { ty, .. }) => {
                decls.insert(format!("  func.func private @{}({}, i64, i64, i64, i64) attributes {{llvm.emit_c_interface}}\n", result_symbol(ty.dtype), unranked(ty.dtype)));
            }
            _ => {}
        });
    }
    decls.into_iter().collect()
}

/// Lowers one op of this family, returning its result's name (the operand).
pub fn lower(e: &mut Emitter, f: &Func, o: &Op, op: &CallbackOp) -> Result<String, LowerError> {
    let (callback, index, count, batched) = match op {
        CallbackOp::HostCallback { callback, index, count, batched } => (callback, index, count, batched),
        CallbackOp::CallbackResult { callback, index, batched, ty } => {
            let m = e.op(format!("memref.alloc() {{alignment = 64 : i64}} : {}", memref(ty)));
            let u = e.op(format!("memref.cast {m} : {} to {}", memref(ty), unranked(ty.dtype)));
            let mask = batched.iter().enumerate().fold(0i64, |acc, (l, &b)| acc | (b << l));
            let ints: Vec<String> = [*callback, *index, batched.len() as i64, mask].iter().map(|x| e.op(format!("arith.constant {x} : i64"))).collect();
            e.line(format!("func.call @{}({u}, {}) : ({}, i64, i64, i64, i64) -> ()", result_symbol(ty.dtype), ints.join(", "), unranked(ty.dtype)));
            return Ok(e.op(format!("bufferization.to_tensor {m} restrict writable : {} to {ty}", memref(ty))));
        }
    };
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

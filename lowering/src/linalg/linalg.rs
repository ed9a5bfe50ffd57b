//! Linear-algebra ops (`cholesky`, `triangular_solve`, `lu`, `qr`, `eigh`, `svd`): each
//! becomes a call to a runtime kernel `quabla_linalg_<op>_<dtype>` on unranked memrefs
//! (operands, then results, then the op's flags as `i64`s), declared once per module with
//! `llvm.emit_c_interface` (the CPU runtime registers `_mlir_ciface_quabla_linalg_*`, the
//! kernels of `quabla_interp::linalg::kernels`). Operands are copied into fresh buffers
//! (`bufferization.materialize_in_destination`: a read of the tensor that bufferization
//! sees, so no later op overwrites it in place before the call); results are fresh 64-byte
//! aligned allocations handed back with `bufferization.to_tensor restrict writable`.
use std::collections::BTreeSet;

use quabla_dialect::{DType, Func, LinalgOp, Module, Op, OpKind, TensorType};

use super::{memref, Emitter};
use crate::LowerError;

/// The `i64` flag arguments of `op`'s kernel.
fn flags(op: &LinalgOp) -> Vec<bool> {
    match op {
        LinalgOp::Cholesky { lower } | LinalgOp::Eigh { lower } => vec![*lower],
        LinalgOp::TriangularSolve { left_side, lower, transpose_a, unit_diagonal } => vec![*left_side, *lower, *transpose_a, *unit_diagonal],
        LinalgOp::Lu {} => vec![],
        LinalgOp::Qr { full_matrices } | LinalgOp::Svd { full_matrices } => vec![*full_matrices],
    }
}

/// The results of `op` that hold vectors (`q`; the eigenvectors; `u`, `vt`), which its kernel
/// skips when none is read (its last `i64` argument, after the flags).
fn vector_results(op: &LinalgOp) -> Option<&'static [usize]> {
    match op {
        LinalgOp::Qr { .. } | LinalgOp::Eigh { .. } => Some(&[0]),
        LinalgOp::Svd { .. } => Some(&[0, 2]),
        LinalgOp::Cholesky { .. } | LinalgOp::TriangularSolve { .. } | LinalgOp::Lu {} => None,
    }
}

/// Whether `v` is read anywhere in `f` (an operand, a body's or the function's output).
fn used(f: &Func, v: quabla_dialect::Value) -> bool {
    let mut hit = f.outputs.contains(&v);
    quabla_dialect::walk_ops(&f.ops, &mut |op| hit |= op.operands.contains(&v) || op.regions.iter().any(|r| r.outputs.contains(&v)));
    hit
}

/// `memref<*xT>`.
pub(super) fn unranked(d: DType) -> String {
    format!("memref<*x{d}>")
}

/// The kernel's symbol and its argument types for `op` on operands of float type `d`.
pub fn kernel(op: &LinalgOp, d: DType) -> (String, Vec<String>) {
    let name = format!("quabla_linalg_{}_{d}", op.name());
    let (ins, outs): (usize, Vec<DType>) = match op {
        LinalgOp::Cholesky { .. } => (1, vec![d]),
        LinalgOp::TriangularSolve { .. } => (2, vec![d]),
        LinalgOp::Lu {} => (1, vec![d, DType::I32, DType::I32]),
        LinalgOp::Qr { .. } | LinalgOp::Eigh { .. } => (1, vec![d, d]),
        LinalgOp::Svd { .. } => (1, vec![d, d, d]),
    };
    let mut args: Vec<String> = (0..ins).map(|_| unranked(d)).collect();
    args.extend(outs.into_iter().map(unranked));
    args.extend(flags(op).iter().map(|_| "i64".to_string()));
    if vector_results(op).is_some() {
        args.push("i64".to_string());
    }
    (name, args)
}

/// The declarations of every kernel the module's linear-algebra ops call.
pub fn declarations(m: &Module) -> String {
    declare(m, |f, o| match &o.kind {
        OpKind::Linalg(op) => Some(kernel(op, f.ty(o.operands[0]).dtype)),
        _ => None,
    })
}

/// `func.func private` declarations (C interface) of the kernels `kernel_of` names for ops of
/// `m` (given the op and its function), each once. Shared with the sort family.
pub(super) fn declare(m: &Module, kernel_of: impl Fn(&Func, &Op) -> Option<(String, Vec<String>)>) -> String {
    let mut decls = BTreeSet::new();
    for f in &m.funcs {
        f.walk(&mut |o| {
            if let Some((name, args)) = kernel_of(f, o) {
                decls.insert(format!("  func.func private @{name}({}) attributes {{llvm.emit_c_interface}}\n", args.join(", ")));
            }
        });
    }
    decls.into_iter().collect()
}

/// Lowers one op of this family, returning its results' names (exhaustive over the family:
/// every op is one kernel call, or on a kernels-only target its loop form).
pub fn lower(e: &mut Emitter, f: &Func, o: &Op, op: &LinalgOp) -> Result<Vec<String>, LowerError> {
    if e.cg.target.parallel_outer() {
        // A kernels-only target has no runtime kernels: the loop forms (crate::linalg::linalg_loops).
        return Ok(super::linalg_loops::lower(e, f, o, op));
    }
    let d = f.ty(o.operands[0]).dtype;
    let (name, args) = kernel(op, d);
    let mut flags: Vec<i64> = flags(op).into_iter().map(i64::from).collect();
    if let Some(vs) = vector_results(op) {
        // Whether the program reads the vectors (else the kernel computes only the values).
        flags.push(i64::from(vs.iter().any(|&k| used(f, o.results[k]))));
    }
    Ok(call_kernel(e, f, o, &name, &args, &flags, false))
}

/// One `func.call @name` of a runtime kernel on `o`'s operands (private copies, or with
/// `read_only` the operands' buffers read in place, [`super::kernel_operand`]: the kernel
/// never writes them), fresh result buffers and the `i64` flags; returns the results as
/// tensors. Shared with the sort family.
pub(super) fn call_kernel(e: &mut Emitter, f: &Func, o: &Op, name: &str, args: &[String], flags: &[i64], read_only: bool) -> Vec<String> {
    let mut vals = Vec::new();
    for v in &o.operands {
        let t = f.ty(*v);
        if read_only {
            let x = e.name(*v);
            vals.push(super::kernel_operand(e, &x, t));
            continue;
        }
        // A private copy: the call reads it behind bufferization's back, so the operand's
        // buffer must not be one that later ops may reuse in place (a read-only
        // `to_buffer` of it is CSE'd and its later reads are invisible to the analysis).
        let m = e.op(format!("memref.alloc() {{alignment = 64 : i64}} : {}", memref(t)));
        e.line(format!("bufferization.materialize_in_destination {} in restrict writable {m} : ({t}, {}) -> ()", e.name(*v), memref(t)));
        vals.push(e.op(format!("memref.cast {m} : {} to {}", memref(t), unranked(t.dtype))));
    }
    let mut results: Vec<(String, TensorType)> = Vec::new();
    for v in &o.results {
        let t = f.ty(*v).clone();
        let m = e.op(format!("memref.alloc() {{alignment = 64 : i64}} : {}", memref(&t)));
        vals.push(e.op(format!("memref.cast {m} : {} to {}", memref(&t), unranked(t.dtype))));
        results.push((m, t));
    }
    for b in flags {
        vals.push(e.op(format!("arith.constant {b} : i64")));
    }
    e.line(format!("func.call @{name}({}) : ({}) -> ()", vals.join(", "), args.join(", ")));
    results.into_iter().map(|(m, t)| e.op(format!("bufferization.to_tensor {m} restrict writable : {} to {t}", memref(&t)))).collect()
}

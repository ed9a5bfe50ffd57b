//! Bool loads and stores of the LLVM-dialect module as byte accesses. A bool tensor is a
//! buffer of 0/1 bytes, and `finalize-memref-to-llvm` accesses it as `i1` (`llvm.load ... ->
//! i1`, `llvm.store` of an `i1`). LLVM's loop vectorizer cannot load `<N x i1>` from such
//! memory (a vector of `i1` is bit-packed), so every vector loop that reads a bool
//! (`where(mask, a, b)`, a mask's gradient) loaded and inserted it lane by lane: on the GPT
//! step of bench/cpu_table.py (a broadcast causal mask of 8x4x64x64 bools) those
//! per-lane mask inserts were 18% of the program's samples. Read as `i8` and truncated
//! (stored zero-extended), the same bytes load as one `<N x i8>` vector and a compare.
use melior::ir::operation::{OperationLike, OperationMutLike, WalkOrder, WalkResult};
use melior::ir::Module as MlirModule;
use melior::Context;
use mlir_sys::{MlirOperation, MlirType, MlirValue};

/// Rewrites every scalar `i1` `llvm.load` into an `i8` load and an `llvm.trunc`, and every
/// `llvm.store` of an `i1` into an `llvm.zext` and an `i8` store (same addresses: an `i1`
/// element occupies one byte).
pub fn widen_bool_accesses(ctx: &Context, module: &mut MlirModule) {
    let (mut loads, mut stores) = (Vec::new(), Vec::new());
    module.as_operation_mut().walk_mut(WalkOrder::PreOrder, |op| {
        let name = op.name();
        match name.as_string_ref().as_str() {
            // SAFETY: a live operation with one result (the load's value).
            Ok("llvm.load") if op.result_count() == 1 && unsafe { is_i1(mlir_sys::mlirValueGetType(mlir_sys::mlirOperationGetResult(op.to_raw(), 0))) } => loads.push(op.to_raw()),
            // SAFETY: a live operation whose operand 0 is the stored value.
            Ok("llvm.store") if op.operand_count() == 2 && unsafe { is_i1(mlir_sys::mlirValueGetType(mlir_sys::mlirOperationGetOperand(op.to_raw(), 0))) } => stores.push(op.to_raw()),
            _ => {}
        }
        WalkResult::Advance
    });
    // SAFETY: the collected operations are live ops of `module` (the walk above only read
    // them); each rewrite inserts a cast next to its op in the op's own block.
    unsafe {
        let (i1, i8) = (mlir_sys::mlirIntegerTypeGet(ctx.to_raw(), 1), mlir_sys::mlirIntegerTypeGet(ctx.to_raw(), 8));
        for l in loads {
            let v = mlir_sys::mlirOperationGetResult(l, 0);
            mlir_sys::mlirValueSetType(v, i8);
            let t = cast(l, "llvm.trunc", v, i1);
            mlir_sys::mlirBlockInsertOwnedOperationAfter(mlir_sys::mlirOperationGetBlock(l), l, t);
            let mut except = [t];
            mlir_sys::mlirValueReplaceAllUsesExcept(v, mlir_sys::mlirOperationGetResult(t, 0), 1, except.as_mut_ptr());
        }
        for s in stores {
            let z = cast(s, "llvm.zext", mlir_sys::mlirOperationGetOperand(s, 0), i8);
            mlir_sys::mlirBlockInsertOwnedOperationBefore(mlir_sys::mlirOperationGetBlock(s), s, z);
            mlir_sys::mlirOperationSetOperand(s, 0, mlir_sys::mlirOperationGetResult(z, 0));
        }
    }
}

/// Whether `t` is the `i1` type.
unsafe fn is_i1(t: MlirType) -> bool {
    // SAFETY: a valid type handle.
    unsafe { mlir_sys::mlirTypeIsAInteger(t) && mlir_sys::mlirIntegerTypeGetWidth(t) == 1 }
}

/// A detached cast op `name` of `v` to `to`, at the location of `at`.
unsafe fn cast(at: MlirOperation, name: &str, v: MlirValue, to: MlirType) -> MlirOperation {
    let name = melior::StringRef::new(name);
    // SAFETY: valid handles; the state's operand and result arrays outlive the create call.
    unsafe {
        let mut state = mlir_sys::mlirOperationStateGet(name.to_raw(), mlir_sys::mlirOperationGetLocation(at));
        let (ops, tys) = ([v], [to]);
        mlir_sys::mlirOperationStateAddOperands(&mut state, 1, ops.as_ptr());
        mlir_sys::mlirOperationStateAddResults(&mut state, 1, tys.as_ptr());
        mlir_sys::mlirOperationCreate(&mut state)
    }
}

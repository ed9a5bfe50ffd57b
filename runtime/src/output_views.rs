//! Outputs written through reshapes. A lowering that computes a result in another shape (a
//! scan as `[outer, n, inner]`, a convolution's `[images, pixels, features]`) into a
//! `tensor.empty` and reshapes it back leaves `materialize_in_destination(reshape(y), out)`:
//! empty-tensor elimination does not follow the reshape, so `y` got a buffer of its own and
//! the end of the program copied it into the output (a 3x3 SAME convolution of 8 x 32 x 32 x
//! 16 into 32 features: a 1 MB buffer and its copy a call). [`outputs_through_reshapes`]
//! materializes `y` itself into the output's memref reshaped the other way (a view, made at
//! the top of the function so that it dominates the empty tensor), where empty-tensor
//! elimination then places it.
use melior::ir::operation::{OperationLike, OperationMutLike, OperationRef, WalkOrder, WalkResult};
use melior::ir::Module as MlirModule;
use melior::Context;
use mlir_sys::{MlirOperation, MlirValue};

use crate::flat_loops::{attr, create, users};

/// Rewrites each `materialize_in_destination` of a `tensor.expand_shape` or
/// `tensor.collapse_shape` (used only there) into a memref block argument as the
/// materialization of the reshape's source into the argument reshaped back (see the module
/// doc), through chains of reshapes. Returns how many it rewrote (empty-tensor elimination
/// should run again when any).
pub(crate) fn outputs_through_reshapes(ctx: &Context, module: &mut MlirModule) -> usize {
    let mut found: Vec<MlirOperation> = Vec::new();
    module.as_operation_mut().walk_mut(WalkOrder::PreOrder, |op| {
        if op.name().as_string_ref().as_str() == Ok("bufferization.materialize_in_destination") && op.operand_count() == 2 && op.result_count() == 0 {
            found.push(op.to_raw());
        }
        WalkResult::Advance
    });
    let mut rewritten = 0;
    for mut op in found {
        // SAFETY: each collected op is a live materialization of the module; each rewrite
        // replaces it (and the reshape it consumed) by a new one, which a chain of reshapes
        // rewrites again.
        while let Some(next) = unsafe { through_reshape(ctx.to_raw(), OperationRef::from_raw(op)) } {
            rewritten += 1;
            op = next;
        }
    }
    rewritten
}

/// The reshape that defines `v` when it is a `tensor.expand_shape` or `tensor.collapse_shape`
/// of static shapes whose only use is the materialization.
fn sole_reshape(v: MlirValue) -> Option<MlirOperation> {
    // SAFETY: queries of a live value and its defining op.
    unsafe {
        if !mlir_sys::mlirValueIsAOpResult(v) {
            return None;
        }
        let def = mlir_sys::mlirOpResultGetOwner(v);
        let name = OperationRef::from_raw(def).name();
        let reshape = matches!(name.as_string_ref().as_str(), Ok("tensor.expand_shape" | "tensor.collapse_shape"));
        let one_use = users(v).count() == 1;
        let src = mlir_sys::mlirOperationGetOperand(def, 0);
        let statics = |x: MlirValue| {
            let t = mlir_sys::mlirValueGetType(x);
            mlir_sys::mlirTypeIsARankedTensor(t) && mlir_sys::mlirShapedTypeHasStaticShape(t)
        };
        (reshape && one_use && mlir_sys::mlirOperationGetNumOperands(def) == 1 && statics(v) && statics(src)).then_some(def)
    }
}

/// Whether tensor `v` is written into a `tensor.empty` that only it derives from: followed to
/// the tensor each op writes its result into (a reshape's or slice's source, an insert's
/// destination, a destination-passing op's init, an `scf.forall`'s shared output or an
/// `scf.for`'s carry), each of those used once, at most 64 steps. A fill shared by two loops'
/// carries (the two outputs of a max pool's second-order gradient) would have become one
/// output's buffer, which the other loop then started from.
fn from_empty(mut v: MlirValue) -> bool {
    for step in 0..64 {
        // SAFETY: queries of live values and their defining ops.
        unsafe {
            if !mlir_sys::mlirValueIsAOpResult(v) {
                return false;
            }
            if step > 0 && users(v).count() != 1 {
                return false;
            }
            let def = mlir_sys::mlirOpResultGetOwner(v);
            let r = mlir_sys::mlirOpResultGetResultNumber(v) as isize;
            let (n, outs) = (mlir_sys::mlirOperationGetNumOperands(def), mlir_sys::mlirOperationGetNumResults(def));
            let name = OperationRef::from_raw(def).name();
            let next = match name.as_string_ref().as_str() {
                Ok("tensor.empty") => return true,
                Ok("tensor.expand_shape" | "tensor.collapse_shape" | "tensor.extract_slice") => 0,
                Ok("tensor.insert_slice") => 1,
                Ok("scf.for") => 3 + r,
                Ok(name) if (name.starts_with("linalg.") || name == "scf.forall") && outs <= n => n - outs + r,
                _ => return false,
            };
            if next >= n {
                return false;
            }
            v = mlir_sys::mlirOperationGetOperand(def, next);
        }
    }
    false
}

/// Rewrites materialization `op` of a reshape (see [`outputs_through_reshapes`]) whose
/// destination is a memref block argument; returns the new materialization, or None (nothing
/// done).
///
/// # Safety
/// `op` is a live `materialize_in_destination` of the module with two operands.
unsafe fn through_reshape(ctx: mlir_sys::MlirContext, op: OperationRef) -> Option<MlirOperation> {
    // SAFETY (whole function): live handles of one module; created ops are inserted before
    // use, and the old ones destroyed after their uses are gone.
    unsafe {
        let raw = op.to_raw();
        let (src, dest) = (mlir_sys::mlirOperationGetOperand(raw, 0), mlir_sys::mlirOperationGetOperand(raw, 1));
        if !mlir_sys::mlirValueIsABlockArgument(dest) || !mlir_sys::mlirTypeIsAMemRef(mlir_sys::mlirValueGetType(dest)) {
            return None;
        }
        let reshape = sole_reshape(src)?;
        // Only a value written into a new tensor: one already written into an output's buffer
        // (a generic into the output's reshaped view) would be copied into the view.
        if !from_empty(src) {
            return None;
        }
        let inner = mlir_sys::mlirOperationGetOperand(reshape, 0);
        let it = mlir_sys::mlirValueGetType(inner);
        let rank = mlir_sys::mlirShapedTypeGetRank(it) as isize;
        let shape: Vec<i64> = (0..rank).map(|d| mlir_sys::mlirShapedTypeGetDimSize(it, d)).collect();
        let mt = mlir_sys::mlirMemRefTypeContiguousGet(mlir_sys::mlirShapedTypeGetElementType(it), rank, shape.as_ptr(), mlir_sys::mlirAttributeGetNull());
        let loc = mlir_sys::mlirOperationGetLocation(raw);
        let reassociation = mlir_sys::mlirOperationGetAttributeByName(reshape, mlir_sys::MlirStringRef { data: "reassociation".as_ptr() as *const _, length: "reassociation".len() });
        if reassociation.ptr.is_null() {
            return None;
        }
        let expanded = OperationRef::from_raw(reshape).name().as_string_ref().as_str() == Ok("tensor.expand_shape");
        // The inverse view of the output: an expand's source is the output collapsed, a
        // collapse's source the output expanded.
        let view = if expanded {
            create(ctx, "memref.collapse_shape", loc, &[dest], &[mt], &[("reassociation", reassociation)], 0)
        } else {
            let list = shape.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ");
            create(ctx, "memref.expand_shape", loc, &[dest], &[mt], &[("reassociation", reassociation), ("static_output_shape", attr(ctx, &format!("array<i64: {list}>")))], 0)
        };
        // At the top of the entry block: it dominates every empty tensor of the body.
        let block = mlir_sys::mlirBlockArgumentGetOwner(dest);
        mlir_sys::mlirBlockInsertOwnedOperation(block, 0, view);
        let attrs: Vec<(&str, mlir_sys::MlirAttribute)> = ["restrict", "writable"]
            .into_iter()
            .filter_map(|n| {
                let a = mlir_sys::mlirOperationGetAttributeByName(raw, mlir_sys::MlirStringRef { data: n.as_ptr() as *const _, length: n.len() });
                (!a.ptr.is_null()).then_some((n, a))
            })
            .collect();
        let new = create(ctx, "bufferization.materialize_in_destination", loc, &[inner, mlir_sys::mlirOperationGetResult(view, 0)], &[], &attrs, 0);
        mlir_sys::mlirBlockInsertOwnedOperationBefore(mlir_sys::mlirOperationGetBlock(raw), raw, new);
        mlir_sys::mlirOperationDestroy(raw);
        mlir_sys::mlirOperationDestroy(reshape);
        Some(new)
    }
}

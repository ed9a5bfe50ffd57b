//! The entry point's signature inside the compiled code: one pointer per memref.
//!
//! `convert-func-to-llvm` gives a function of the default calling convention seven scalars
//! per rank-2 memref argument (allocated and aligned pointers, offset, sizes, strides) and
//! writes its C-interface wrapper `_mlir_ciface_<f>` as loads of every descriptor and one
//! call of `<f>` with all of them. A program over a pytree of many leaves (a training step
//! over 100 parameters: 200 inputs and 100 outputs) had a 2100-parameter `@main`, and LLVM's
//! instruction selection of that signature and of the 2100-argument call was most of the
//! first call (238 ms of code generation; JAX compiled the whole program in 86 ms).
//!
//! Every argument of the entry is a statically shaped memref of the identity layout (the
//! lowering's `Abi::Dps` and `function-boundary-type-conversion=identity-layout-map`), so
//! its offset is 0 and its sizes and strides are constants of the type: the aligned pointer
//! is all the function needs. [`bare_entries`] marks such entries `llvm.bareptr` (MLIR's
//! bare-pointer convention, one `!llvm.ptr` per memref) before the pipeline, and
//! [`add_descriptor_wrappers`] writes their `_mlir_ciface_<f>` after it: one descriptor
//! pointer per argument, as MLIR's wrapper takes them, so the executor's calls and the packed
//! wrapper `_mlir__mlir_ciface_<f>` (csrc/llvm_compile.c) are unchanged.
use melior::ir::operation::{OperationLike, OperationMutLike};
use melior::ir::r#type::TypeLike;
use melior::ir::{Attribute, BlockLike, Module as MlirModule, RegionLike, ValueLike};
use melior::Context;
use quabla_lowering::linalg::sym;

/// The public, defined `func.func`s of `module` marked `llvm.emit_c_interface` whose
/// arguments are all statically shaped tensors or identity-layout memrefs and which return
/// nothing: each is marked `llvm.bareptr` instead. Returns their names (for
/// [`add_descriptor_wrappers`]).
pub(crate) fn bare_entries(ctx: &Context, module: &mut MlirModule) -> Vec<String> {
    let mut names = Vec::new();
    let body = module.body();
    let mut op = body.first_operation_mut();
    while let Some(mut o) = op {
        if o.name().as_string_ref().as_str() == Ok("func.func") && o.attribute("llvm.emit_c_interface").is_ok() && o.attribute("sym_visibility").is_err() {
            if let Some(name) = bare_eligible(&o) {
                let _ = o.remove_attribute("llvm.emit_c_interface");
                o.set_attribute("llvm.bareptr", Attribute::unit(ctx));
                names.push(name);
            }
        }
        op = o.next_in_block_mut();
    }
    names
}

/// The name of `f` when its body's arguments all have a bare-pointer form and it returns
/// nothing.
fn bare_eligible<'c: 'a, 'a>(f: &impl OperationLike<'c, 'a>) -> Option<String> {
    let name = f.attribute("sym_name").ok().and_then(|a| melior::ir::attribute::StringAttribute::try_from(a).ok())?.value().to_string();
    let fty = melior::ir::attribute::TypeAttribute::try_from(f.attribute("function_type").ok()?).ok()?.value();
    let fty = melior::ir::r#type::FunctionType::try_from(fty).ok()?;
    if fty.result_count() != 0 {
        return None;
    }
    let block = f.region(0).ok()?.first_block()?;
    for k in 0..block.argument_count() {
        let t = block.argument(k).ok()?.r#type().to_raw();
        // SAFETY: plain queries of a live type.
        let ok = unsafe {
            let shaped = mlir_sys::mlirTypeIsARankedTensor(t) || mlir_sys::mlirTypeIsAMemRef(t);
            shaped && mlir_sys::mlirShapedTypeHasStaticShape(t) && (!mlir_sys::mlirTypeIsAMemRef(t) || (mlir_sys::mlirAffineMapIsIdentity(mlir_sys::mlirMemRefTypeGetAffineMap(t)) && mlir_sys::mlirMemRefTypeGetMemorySpace(t).ptr.is_null()))
        };
        if !ok {
            return None;
        }
    }
    Some(name)
}

/// Adds `_mlir_ciface_<f>` for each converted bare-pointer function `f` of `names`: it
/// takes a pointer to each argument's descriptor and calls `f` with the descriptor's aligned
/// pointer (its second word). Fails when `f` is missing or takes anything but pointers.
pub(crate) fn add_descriptor_wrappers(ctx: &Context, module: &mut MlirModule, names: &[String]) -> Result<(), String> {
    for name in names {
        let n = llvm_pointer_params(module, name).ok_or_else(|| format!("the bare-pointer entry @{name} is missing after the pipeline or takes more than pointers"))?;
        let ptrs = vec!["!llvm.ptr"; n].join(", ");
        let params: Vec<String> = (0..n).map(|k| format!("%d{k}: !llvm.ptr")).collect();
        let mut text = format!("module {{\n  llvm.func {}({ptrs})\n  llvm.func {}({}) {{\n", sym(name), sym(&format!("_mlir_ciface_{name}")), params.join(", "));
        for k in 0..n {
            text.push_str(&format!("    %f{k} = llvm.getelementptr %d{k}[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr\n    %p{k} = llvm.load %f{k} : !llvm.ptr -> !llvm.ptr\n"));
        }
        let args: Vec<String> = (0..n).map(|k| format!("%p{k}")).collect();
        text.push_str(&format!("    llvm.call {}({}) : ({ptrs}) -> ()\n    llvm.return\n  }}\n}}\n", sym(name), args.join(", ")));
        let parsed = MlirModule::parse(ctx, &text).ok_or_else(|| format!("the descriptor wrapper of @{name} did not parse"))?;
        let wrapper = parsed.body().first_operation().and_then(|d| d.next_in_block()).ok_or("the descriptor wrapper is empty")?;
        // SAFETY: a live operation of `parsed`; the clone is owned and moved into `module`.
        let owned = unsafe { melior::ir::Operation::from_raw(mlir_sys::mlirOperationClone(wrapper.to_raw())) };
        module.body().append_operation(owned);
    }
    Ok(())
}

/// The parameter count of the defined `llvm.func` `name` of `module` when every parameter
/// is a pointer.
fn llvm_pointer_params(module: &MlirModule, name: &str) -> Option<usize> {
    let body = module.body();
    let mut op = body.first_operation();
    while let Some(o) = op {
        let named = o.attribute("sym_name").ok().and_then(|a| melior::ir::attribute::StringAttribute::try_from(a).ok()).is_some_and(|s| s.value() == name);
        if named && o.name().as_string_ref().as_str() == Ok("llvm.func") {
            let block = o.region(0).ok()?.first_block()?;
            // SAFETY: plain queries of live types.
            let all_ptrs = (0..block.argument_count()).all(|k| block.argument(k).is_ok_and(|a| unsafe { mlir_sys::mlirTypeIsALLVMPointerType(a.r#type().to_raw()) }));
            return all_ptrs.then(|| block.argument_count());
        }
        op = o.next_in_block();
    }
    None
}

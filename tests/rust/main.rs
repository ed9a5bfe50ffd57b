//! Cross-crate tests: JIT vs the reference interpreter for every op, stock mlir-opt accepts
//! what Quabla prints, quabla-opt rejects bad input cleanly, and executables do not leak.
#![allow(clippy::cloned_ref_to_slice_refs)]

mod autodiff;
mod bad_ir;
mod case_custom;
mod control;
mod convolution;
mod cpu_codegen;
mod cuda_ptx;
mod differential;
mod leak;
mod loops;
mod op_status;
mod outline;
mod pinn;
mod regions;
mod sort;
mod stock_mlir_opt;
mod uint;
mod vmap;
mod scatter;

use std::sync::OnceLock;

use quabla_runtime::CpuExecutor;

/// One executor for the whole test binary (contexts are costly to create).
pub fn executor() -> &'static CpuExecutor {
    static E: OnceLock<CpuExecutor> = OnceLock::new();
    E.get_or_init(CpuExecutor::new)
}

/// The workspace root.
pub fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

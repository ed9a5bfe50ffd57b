//! Lowerings of the quabla dialect: to linalg/tensor/arith/math (`convert-quabla-to-linalg`,
//! [`lower_module`]) and the upstream CPU pipeline from there to the LLVM dialect
//! ([`cpu_pipeline`]; [`lower_for_cpu`] adds the CPU executor's code generation: polynomial
//! kernels for transcendental functions ([`approx`]) and tiled, vectorized matmuls through
//! embedded transform sequences ([`tiling`]): the CPU target's choices, under [`target`]);
//! and the StableHLO export
//! (`convert-quabla-to-stablehlo`, [`export_module`]).
pub mod linalg;
pub mod stablehlo;
pub mod target;

pub use target::cpu;
pub use target::cpu::{approx, tiling};
pub use cpu::{cpu_pipeline, lower_for_cpu, CpuModule, CpuOptions};
pub use linalg::{lower_module, lower_module_with, Codegen};
pub use stablehlo::export_module;
use thiserror::Error;

/// How public functions receive their results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Abi {
    /// Functions keep their tensor signatures (for reading and further passes).
    Tensor,
    /// Public functions take one memref argument per result, after the inputs, and write it
    /// (destination-passing: the JIT'ed code never returns a buffer).
    Dps,
}

/// Errors of the lowerings.
#[derive(Debug, Error)]
pub enum LowerError {
    /// An op (or a form of it) that this lowering does not handle.
    #[error("'quabla.{op}' op cannot be lowered: {reason}")]
    Unsupported { op: String, reason: String },
    /// The module does not verify (shape rules, structure, calls).
    #[error("invalid module: {0}")]
    Invalid(#[from] quabla_dialect::DialectError),
}

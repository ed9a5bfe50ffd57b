//! Lowerings of the quabla dialect: to linalg/tensor/arith/math (`convert-quabla-to-linalg`)
//! and the upstream CPU pipeline from there to the LLVM dialect.
pub mod cpu;
pub mod linalg;

pub use cpu::{cpu_pipeline, CpuOptions};
pub use linalg::lower_module;
use thiserror::Error;

/// How public functions receive their results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Abi {
    /// Functions keep their tensor signatures (for reading and further passes).
    Tensor,
    /// Public functions take one memref argument per result and write it
    /// (destination-passing: the JIT'ed code never returns a buffer).
    Dps,
}

#[derive(Debug, Error)]
pub enum LowerError {
    #[error("'quabla.{op}' op cannot be lowered: {reason}")]
    Unsupported { op: String, reason: String },
    #[error("invalid module: {0}")]
    Invalid(String),
    #[error("internal lowering error: {0}")]
    Internal(String),
}

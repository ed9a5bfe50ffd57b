//! The one compile pipeline: `Module -> optimized Module -> Executable` for a named device.
//! `qb.jit`, eager ops and `quabla-opt` all go through this crate, with the same
//! process-wide [`default_pipeline`] object:
//!
//! * [`optimize`] runs a [`Pipeline`]'s quabla passes directly on the in-memory IR (the same
//!   actions the pass registry runs inside MLIR pass managers, no import/print per pass);
//! * [`compile`] optimizes, then compiles for a device of the executor registry
//!   (`quabla_runtime::registry`), recording which pipeline object each caller used
//!   ([`pipeline_used`]), so a test can check that every entry point shares one;
//! * [`emit`] holds the emitters of `quabla-opt --emit` (quabla, linalg, llvm, stablehlo, mlx),
//!   and [`opt_plan`] assembles `quabla-opt`'s pass pipeline around them.
pub mod emit;
pub mod error;
pub mod pipeline;

pub use emit::{emitter, emitters, opt_plan, EmitKind, Emitter, OptPlan};
pub use error::CompileError;
pub use pipeline::{compile, default_pipeline, optimize, pipeline_used, Caller, CompileOptions, Pipeline};

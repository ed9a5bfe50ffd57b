//! The upstream pipeline that takes `convert-quabla-to-linalg{abi=dps}` output to the LLVM
//! dialect: elementwise fusion first (LLVM compile time grows with the number of loops),
//! one-shot bufferization across function boundaries with identity layouts, ownership-based
//! deallocation, loops, and LLVM conversion. Math ops become libm calls before
//! `convert-math-to-llvm` so that expm1/log1p/erf/tan/atan2/pow keep libm's accuracy.

/// Options of the CPU pipeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuOptions {
    /// Reserved for the vectorised path (currently the scalar loop path is used).
    pub vectorize: bool,
}

impl Default for CpuOptions {
    fn default() -> Self {
        CpuOptions { vectorize: true }
    }
}

/// The pass pipeline, as a `builtin.module(...)` string for MLIR's parser.
pub fn cpu_pipeline(_opts: &CpuOptions) -> String {
    [
        "func.func(linalg-fuse-elementwise-ops)",
        "eliminate-empty-tensors",
        "one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}",
        "buffer-deallocation-pipeline",
        "convert-bufferization-to-memref",
        "convert-linalg-to-loops",
        "expand-strided-metadata",
        "lower-affine",
        "convert-scf-to-cf",
        "convert-math-to-libm",
        "finalize-memref-to-llvm",
        "convert-math-to-llvm",
        "convert-arith-to-llvm",
        "convert-index-to-llvm",
        "convert-ub-to-llvm",
        "convert-func-to-llvm",
        "convert-cf-to-llvm",
        "reconcile-unrealized-casts",
    ]
    .iter()
    .fold(String::from("builtin.module("), |mut s, p| {
        if !s.ends_with('(') {
            s.push(',');
        }
        s.push_str(p);
        s
    }) + ")"
}

//! The CPU target: its code-generation choices for the linalg lowering ([`CpuTarget`]: the
//! tiled matmul path of [`tiling`], the polynomial kernels of [`approx`]) and the upstream
//! pipeline that takes `convert-quabla-to-linalg` output (either ABI) to the
//! LLVM dialect: elementwise fusion first (LLVM compile time grows with the number of loops),
//! empty-tensor elimination (so DPS results are computed in the output buffers; before CSE),
//! canonicalization, one-shot bufferization across function boundaries with identity
//! layouts, ownership-based deallocation, loops, and the LLVM conversions. [`lower_for_cpu`]
//! is what the CPU executor uses: with `vectorize` it lowers transcendental functions to the
//! polynomial kernels of crate::approx and tags large matmuls for crate::tiling, whose
//! embedded transform sequences the pipeline then runs (`CpuOptions::transform`).
//!
//! Math (what remains as math ops): `convert-math-to-llvm` (with `approximate-log1p=false`) turns math ops into LLVM
//! intrinsics, which LLVM emits as instructions (sqrt, floor, fabs, ...) or libm calls (exp,
//! tan, atan2, pow, ...); `convert-math-to-libm` afterwards turns what is left (erf, log1p)
//! into libm calls. The linalg lowering never emits `math.expm1`, which `convert-math-to-llvm`
//! would expand to the inaccurate exp(x) - 1.
//!
//! Vectorization of elementwise and reduction loops is LLVM's: the loops this pipeline
//! produces are vectorized by LLVM's loop vectorizer at -O2/-O3 (the CPU executor marks
//! functions with the host CPU so that it uses the widest vectors; float sum/prod reductions
//! carry `fastmath<reassoc>` so that they vectorize too); the polynomial kernels of
//! crate::approx keep transcendental functions inside those loops. Matmuls whose shapes suit
//! it are tiled and vectorized at the MLIR level instead (crate::tiling, `transform`).
//! Measured earlier on this pipeline (1M-element f32 mul/add/maximum chain, 200 calls):
//! 0.060 s through LLVM's vectorizer against 0.063-0.065 s with the tile-and-vectorize
//! transform script of notes/mlir-cpu/td_ew.mlir.
//! Row sums of a 1024x1024 f32 matrix: 0.106 s per 200 calls with an ordered `addf`, 0.031 s
//! with `fastmath<reassoc>`; row maxima (NaN-propagating `maximumf`) vectorize as they are.
pub mod approx;
pub mod tiling;

use quabla_dialect::{BinaryOp, DType, Module, UnaryOp};

use crate::linalg::elementwise::Text;
use crate::linalg::lower_module_tagged;
use crate::target::{Codegen, MatmulTile, Plan, Target};
use crate::{Abi, LowerError};

/// The host CPU's choices: matmuls whose shapes suit it take the tiled, vectorized path of
/// [`tiling`]; transcendental functions with a kernel in [`approx`] are written as its
/// polynomial code (which LLVM's loop vectorizer keeps inside vector loops).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuTarget {
    /// Large float products call the runtime's packed product ([`tiling::runtime_gemm`]).
    pub runtime_products: bool,
}

/// The CPU target.
pub static CPU: CpuTarget = CpuTarget { runtime_products: true };

/// The CPU target generating every product's code (`CpuOptions::runtime_gemm` off: the tests
/// of the tiled path on any shape, comparisons).
pub static CPU_GENERATED: CpuTarget = CpuTarget { runtime_products: false };

impl Target for CpuTarget {
    fn private_dps(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        if self.runtime_products {
            "cpu"
        } else {
            "cpu-generated"
        }
    }

    fn matmul_plan(&self, d: DType, m: i64, n: i64, k: i64) -> Option<Plan> {
        // Products of fewer rows than the tiled path takes that are runtime calls (the short
        // path, tiling::short_gemm; long dot products): the plan of MIN_ROWS rows only marks
        // them as products off the loop path (a runtime product's code does not use it).
        if m < tiling::MIN_ROWS && self.runtime_gemm(d, [1, m, n, k]) {
            return tiling::plan_for(d, tiling::MIN_ROWS, n, k, tiling::host_caches(), tiling::host_regs());
        }
        tiling::choose(d, m, n, k)
    }

    fn batched_plan(&self, d: DType, [b, m, n, k]: [i64; 4]) -> Option<Plan> {
        let work = b.saturating_mul(m).saturating_mul(n).saturating_mul(k);
        if b < 2 || work < tiling::BATCHED_SMALL_WORK || !self.runtime_gemm(d, [b, m, n, k]) {
            return None;
        }
        tiling::plan_for(d, tiling::MIN_ROWS, n, k, tiling::host_caches(), tiling::host_regs())
    }

    fn matmul_script(&self, tiles: &[MatmulTile], threads: i64) -> String {
        tiling::script(tiles, threads)
    }

    fn parallel_matmul(&self, m: i64, n: i64, k: i64, threads: i64) -> bool {
        tiling::parallel_matmul(m, n, k, threads)
    }

    fn parallel_runtime_gemm(&self, d: DType, bmnk: [i64; 4], threads: i64) -> bool {
        tiling::parallel_runtime_gemm(d, bmnk, threads, tiling::host_regs())
    }

    fn parallel_loop(&self, parallel: &[bool], extents: &[i64], threads: i64, cost: i64) -> Option<usize> {
        tiling::parallel_loop(parallel, extents, threads, cost)
    }

    fn runtime_gemm(&self, d: DType, bmnk: [i64; 4]) -> bool {
        self.runtime_products && tiling::runtime_gemm(d, bmnk, tiling::host_regs())
    }

    fn runtime_kernels(&self) -> bool {
        self.runtime_products
    }

    fn unary_kernel(&self, b: &mut Text<'_>, u: UnaryOp, d: DType, x: &(String, DType)) -> Option<(String, DType)> {
        if approx::supported(u, d) {
            b.ldexp = host_scalef();
            approx::unary(b, u, d, x)
        } else {
            None
        }
    }

    fn binary_kernel(&self, b: &mut Text<'_>, op: BinaryOp, d: DType, x: &(String, DType), y: &(String, DType)) -> Option<(String, DType)> {
        if approx::binary_supported(op, d) {
            b.ldexp = host_scalef();
            approx::binary(b, op, d, x, y)
        } else {
            None
        }
    }
}

/// Whether the host has AVX-512F, whose `vscalefps`/`vscalefpd` LLVM emits for a vector
/// `llvm.ldexp` (x 2^k in one instruction, rounded once): the kernels of [`approx`] then
/// scale exp's result by it instead of two integer-built powers of two and two products
/// (3 instructions instead of 9 per vector). Without AVX-512 LLVM calls `ldexpf` per
/// element, so the kernels keep the products (also under `QUABLA_NO_HOST_TARGET`). The choice changes the lowered text, which
/// the compile cache's key contains.
pub fn host_scalef() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        // QUABLA_NO_HOST_TARGET (runtime/src/cpu.rs) compiles for generic x86-64.
        *HAS.get_or_init(|| std::arch::is_x86_feature_detected!("avx512f") && std::env::var_os("QUABLA_NO_HOST_TARGET").is_none())
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Options of the CPU pipeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuOptions {
    /// Vectorize: [`lower_for_cpu`] emits polynomial kernels for transcendental functions
    /// (crate::approx), so that LLVM's loop vectorizer vectorizes elementwise loops that use
    /// them, and tags large float matmuls for the tiled path (crate::tiling).
    pub vectorize: bool,
    /// The module embeds the transform sequences of crate::tiling: run them
    /// (`transform-interpreter`), drop them (`symbol-dce`) and lower the vector ops.
    pub transform: bool,
    /// Threads the code may use. With more than one (and `vectorize`), large matmuls and
    /// loops become `scf.forall`s (crate::tiling::parallel_matmul, parallel_tiles) that the
    /// pipeline lowers to OpenMP (`convert-scf-to-openmp`, `num_threads` of this count):
    /// the process must have the OpenMP runtime (libomp) loaded when it links the code.
    pub threads: i64,
    /// Large float products call the runtime's packed product (crate::tiling::runtime_gemm);
    /// off, the lowering generates their code like every other product's.
    pub runtime_gemm: bool,
}

impl Default for CpuOptions {
    fn default() -> Self {
        CpuOptions { vectorize: true, transform: false, threads: 1, runtime_gemm: true }
    }
}

/// A module lowered for the CPU: linalg text and the pipeline that takes it to LLVM.
#[derive(Clone, Debug)]
pub struct CpuModule {
    pub text: String,
    pub pipeline: String,
    /// How many matmuls take the tiled path.
    pub tiled_matmuls: usize,
    /// The code has parallel loops (OpenMP): it calls the OpenMP runtime.
    pub parallel: bool,
    /// Set when some generic may run on several threads: run this pipeline first (fusion,
    /// empty-tensor elimination, canonicalization, CSE), then tag the large generics left
    /// with `quabla.par = par_code(dim)` (crate::tiling::parallel_loop; quabla_runtime
    /// does it on the MLIR module), then `pipeline`, whose transform script tiles them.
    pub tag_pipeline: Option<String>,
    /// Threads the parallel loops use (1 when there are none).
    pub threads: i64,
    /// The passes of `pipeline` (module-level entries), for [`CpuModule::pipeline_without`].
    pub passes: Vec<String>,
}

impl CpuModule {
    /// `pipeline` without the run of the script's `@__quabla_loops` sequence
    /// (tiling::LOOPS_SCRIPT) when `loops` is false (the executor tagged no generic
    /// `quabla.vec`), and without the run of `@__quabla_tile` when `tile` is false (it tagged
    /// no generic `quabla.par` and no matmul is tiled): each interpreter run costs 0.5-0.7 ms
    /// of a compile even when it matches nothing (a 1024 x 1024 row sum's compile, 2026-12-05).
    /// `symbol-dce` still drops the sequences.
    pub fn pipeline_without(&self, loops: bool, tile: bool) -> String {
        let keep = |p: &&String| (loops || p.as_str() != LOOPS_PASS) && (tile || self.tiled_matmuls > 0 || p.as_str() != TILE_PASS);
        format!("builtin.module({})", self.passes.iter().filter(keep).cloned().collect::<Vec<_>>().join(","))
    }
}

/// Lowers `m` with the destination-passing ABI for the CPU executor, with the code
/// generation `opts` selects, and returns it with its pipeline.
pub fn lower_for_cpu(m: &Module, opts: &CpuOptions) -> Result<CpuModule, LowerError> {
    let target = if opts.runtime_gemm { &CPU } else { &CPU_GENERATED };
    let cg = Codegen { approx_math: opts.vectorize, tile_matmuls: opts.vectorize, target, threads: opts.threads };
    let (text, (tiles, loops, _)) = lower_module_tagged(m, Abi::Dps, cg)?;
    // Parallel matmuls are emitted as scf.forall; parallel loops become one in the script.
    let loops = loops && opts.threads > 1;
    let parallel = opts.threads > 1 && (loops || text.contains("scf.forall"));
    let threads = if parallel { opts.threads } else { 1 };
    // Vectorised code: the executor tags the generics whose iterations are independent in
    // memory (quabla_runtime's parallel_accesses) and the script's `@__quabla_loops` makes
    // them loops LLVM vectorises without overlap checks.
    let vec_loops = opts.vectorize;
    let text = if vec_loops { tiling::with_loops_script(text) } else { text };
    let (pre, rest) = cpu_passes(&CpuOptions { vectorize: opts.vectorize, transform: !tiles.is_empty() || loops, threads, runtime_gemm: opts.runtime_gemm }, !tiles.is_empty(), vec_loops);
    let module = |p: &[String]| format!("builtin.module({})", p.join(","));
    let (passes, tag_pipeline) = if loops || vec_loops { (rest, Some(module(&pre))) } else { ([pre, rest].concat(), None) };
    Ok(CpuModule { text, pipeline: module(&passes), tiled_matmuls: tiles.len(), parallel, tag_pipeline, threads, passes })
}

/// The pass that runs the `@__quabla_loops` sequence (tiling::LOOPS_SCRIPT).
const LOOPS_PASS: &str = "transform-interpreter{entry-point=__quabla_loops}";

/// The pass that runs the `@__quabla_tile` sequence (tiling::script).
const TILE_PASS: &str = "transform-interpreter{entry-point=__quabla_tile}";

/// The pass pipeline, as a `builtin.module(...)` string for MLIR's pass-pipeline parser.
pub fn cpu_pipeline(opts: &CpuOptions) -> String {
    let (pre, rest) = cpu_passes(opts, opts.transform, false);
    format!("builtin.module({})", [pre, rest].concat().join(","))
}

/// The passes of [`cpu_pipeline`], split where the CPU executor tags parallel loops
/// (`CpuModule::tag_pipeline`): after fusion and CSE, before the transform script. `vectors`:
/// the script tiles matmuls into vector ops (its `@__quabla_lower_vectors` then lowers them);
/// a script that only splits loops for threads has neither. `loops`: the module has the
/// `@__quabla_loops` sequence (tiling::LOOPS_SCRIPT), run after bufferization.
fn cpu_passes(opts: &CpuOptions, vectors: bool, loops: bool) -> (Vec<String>, Vec<String>) {
    let t = opts.transform;
    let v = t && vectors;
    let par = opts.threads > 1;
    let omp = format!("convert-scf-to-openmp{{num-threads={}}}", opts.threads);
    let passes: Vec<String> = [
        (true, "func.func(linalg-fuse-elementwise-ops)"),
        // Outputs first: folding unit dims puts a reshape between a generic and the output
        // it writes (an output with a unit dim, or written in the shape of a value that
        // reshapes to it), which empty-tensor elimination does not see through: a buffer of
        // its own and a copy (`tile(x, (4, 1)).reshape(-1)` of 512^2 f32 389 -> 95 us, JAX
        // 212; `x[:, None, :] * y` of 4096 x 1 x 1024 2047 -> 897, JAX 1066). Placed before
        // the fold, the generic writes the output buffer through the reshapes.
        (true, "eliminate-empty-tensors"),
        // Unit dims out of the loops (a keepdims [rows, 1] operand's loop nest ended in a
        // loop of one iteration, which LLVM's vectorizer took for the inner loop: the log of
        // a [65536, 1] f32 array 311 -> 33 us). After fusion: generics with a unit reduction
        // loop (kept apart from their consumers) lose it only here.
        (true, "func.func(linalg-fold-unit-extent-dims)"),
        // Before CSE: otherwise identical inits (fill of an empty) of two results merge and
        // one-shot bufferization with eliminated empties copies a result buffer after it was
        // overwritten (tests/rust/differential.rs, several_outputs_of_one_type).
        (true, "eliminate-empty-tensors"),
        (true, "canonicalize"),
        (true, "cse"),
        (t, TILE_PASS),
        // Loops (scf.while of quabla.while) may yield values that are not their iteration
        // arguments (a body result computed out of place): bufferization then allocates them.
        (true, "one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map allow-return-allocs-from-loops}"),
        // Before deallocations exist: temporaries whose lifetime is one iteration of a loop
        // leave the loop (one allocation for all iterations), and small ones of a static
        // shape live on the stack: a loop over a small state allocated every value of
        // every iteration with malloc (RK4 of a 3-vector, 1000 steps of fori_loop: 89 -> 66 us, JAX
        // 29; an EMA scan of 1000 x 64: 40 -> 28, JAX 98).
        (true, "func.func(buffer-loop-hoisting,promote-buffers-to-stack{max-alloc-size-in-bytes=1024})"),
        (true, "buffer-deallocation-pipeline"),
        (true, "convert-bufferization-to-memref"),
        (loops, LOOPS_PASS),
        (v, "transform-interpreter{entry-point=__quabla_lower_vectors}"),
        (t || loops, "symbol-dce"),
        (true, "convert-linalg-to-loops"),
        (v, "convert-vector-to-scf"),
        // scf.forall (parallel matmul blocks, tiled loops) -> scf.parallel -> omp.parallel +
        // omp.wsloop (static schedule: one contiguous range of tiles per thread).
        (par, "scf-forall-to-parallel"),
        (par, omp.as_str()),
        (true, "expand-strided-metadata"),
        (true, "lower-affine"),
        // Before the control flow is lowered: convert-scf-to-openmp puts each loop body in a
        // `memref.alloca_scope`, whose region must stay one block (scf-to-cf would make it
        // several: invalid IR until this pass inlined the scope, QUABLA_VERIFY_EACH failed).
        (true, "finalize-memref-to-llvm"),
        (true, "convert-scf-to-cf"),
        (v, "convert-vector-to-llvm{reassociate-fp-reductions}"),
        (true, "convert-math-to-llvm{approximate-log1p=false}"),
        (true, "convert-math-to-libm"),
        (true, "convert-arith-to-llvm"),
        (true, "convert-index-to-llvm"),
        (true, "convert-ub-to-llvm"),
        (par, "convert-openmp-to-llvm"),
        (true, "convert-func-to-llvm"),
        (true, "convert-cf-to-llvm"),
        (true, "reconcile-unrealized-casts"),
    ]
    .into_iter()
    .filter_map(|(on, p)| on.then(|| p.to_string()))
    .collect();
    let split = passes.iter().position(|p| p.starts_with("transform-interpreter") || p.starts_with("one-shot-bufferize")).unwrap_or(passes.len());
    (passes[..split].to_vec(), nest_function_passes(&passes[split..]))
}

/// The passes of the pipeline that rewrite one function at a time (upstream: anchored on
/// function ops or on any op), by name.
const FUNCTION_PASSES: [&str; 11] = [
    "convert-linalg-to-loops",
    "convert-vector-to-scf",
    "scf-forall-to-parallel",
    "expand-strided-metadata",
    "lower-affine",
    "convert-scf-to-cf",
    "convert-vector-to-llvm",
    "convert-math-to-llvm",
    "convert-arith-to-llvm",
    "convert-index-to-llvm",
    "convert-ub-to-llvm",
];

/// `passes` with each run of consecutive [`FUNCTION_PASSES`] nested in one `func.func(...)`:
/// MLIR's pass manager then runs the run on every function of the module in parallel (its
/// context's threads), where at module level each pass walks the whole module on one
/// thread. An outlined program is several functions (runtime/src/cpu.rs `outline_long`):
/// the GPT step's upstream pipeline went 215 -> 176 ms (one process each, 2 cores). Passes that declare or convert
/// module-level symbols (bufferization, the memref, libm, OpenMP, func and cf conversions)
/// stay at module level, and so does everything after `convert-func-to-llvm` (no `func.func`
/// is left then: a nested pass would run on nothing).
fn nest_function_passes(passes: &[String]) -> Vec<String> {
    let mut funcs_left = true;
    let mut out: Vec<String> = Vec::new();
    let mut run: Vec<String> = Vec::new();
    for p in passes {
        let name = p.split('{').next().unwrap_or(p);
        funcs_left &= name != "convert-func-to-llvm";
        if funcs_left && FUNCTION_PASSES.contains(&name) {
            run.push(p.clone());
            continue;
        }
        if !run.is_empty() {
            out.push(format!("func.func({})", run.join(",")));
            run.clear();
        }
        out.push(p.clone());
    }
    if !run.is_empty() {
        out.push(format!("func.func({})", run.join(",")));
    }
    out
}

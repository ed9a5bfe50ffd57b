//! Targets: the code-generation choices that the generic linalg lowering (crate::linalg)
//! leaves to the machine it compiles for. The lowering asks its [`Codegen`]'s target whether
//! and how a matmul takes a tiled path (a [`Plan`], and the transform script that tiles the
//! tagged ops) and which unary functions are written as polynomial kernels instead of `math.*`
//! ops; everything else it emits is target-independent.
//!
//! The CPU target ([`cpu::CpuTarget`], with its pipeline, tiling and polynomial kernels) and
//! the CUDA target ([`cuda::CudaTarget`]: its gpu -> NVVM -> PTX pipeline and host plan).
//!
//! Invariant: with both [`Codegen`] flags off the lowering consults the target only for
//! [`Target::parallel_outer`] (false for the CPU), so the plain `convert-quabla-to-linalg`
//! output is the same for every CPU-like target.
pub mod cpu;
pub mod cuda;

use quabla_dialect::{BinaryOp, DType, UnaryOp};

pub use cpu::approx::{Builder, Cast, FBin, FCmp, FUn, IBin, ICmp};

use crate::linalg::elementwise::Text;

/// Runs `f` collecting the context's error diagnostics: its value, or the diagnostics (one per
/// line, with their locations) when it gives `None`. Shared by the CPU executor and the CUDA
/// target's pass pipelines.
pub fn with_diagnostics<T>(ctx: &melior::Context, f: impl FnOnce() -> Option<T>) -> Result<T, String> {
    let msgs = std::rc::Rc::new(std::cell::RefCell::new(Vec::<String>::new()));
    let sink = msgs.clone();
    let id = ctx.attach_diagnostic_handler(move |d| {
        sink.borrow_mut().push(format!("{}: {}", d.location(), d));
        true
    });
    let r = f();
    ctx.detach_diagnostic_handler(id);
    let m = msgs.borrow().join("\n");
    r.ok_or(if m.is_empty() { "no diagnostic".to_string() } else { m })
}

/// The choices a target makes for the linalg lowering.
pub trait Target: Send + Sync + std::fmt::Debug {
    /// The target's name (`cpu`).
    fn name(&self) -> &'static str;

    /// How an `m x k` by `k x n` product of element type `d` takes the tiled path, or `None`
    /// to keep the plain `linalg.matmul` / `linalg.batch_matmul`.
    fn matmul_plan(&self, d: DType, m: i64, n: i64, k: i64) -> Option<Plan>;

    /// The (marker) plan of a batch of small products (`[b, m, n, k]`: matrix-vector products,
    /// or products of fewer multiply-adds each than [`Self::matmul_plan`] takes) that is a
    /// runtime product; None keeps the loop path.
    fn batched_plan(&self, _d: DType, _bmnk: [i64; 4]) -> Option<Plan> {
        None
    }

    /// The transform sequences, embedded in the lowered module, that tile the matmuls
    /// tagged with `tiles` and, with `threads` > 1, split the generics tagged
    /// `quabla.par = <PAR_CODE>` into `threads` tiles (only asked when there is work for it).
    fn matmul_script(&self, tiles: &[MatmulTile], threads: i64) -> String;

    /// Whether the tiled `m x n x k` product runs its blocks on `threads` threads (an
    /// `scf.forall`, OpenMP after bufferization). Never asked with one thread.
    fn parallel_matmul(&self, _m: i64, _n: i64, _k: i64, _threads: i64) -> bool {
        false
    }

    /// Whether a runtime product (`runtime_gemm`) of `b` batch elements of `m x n x k` of `d`
    /// runs on `threads` threads. Never asked with one thread.
    fn parallel_runtime_gemm(&self, _d: DType, _bmnk: [i64; 4], _threads: i64) -> bool {
        false
    }

    /// Whether `b` products of `m x k` by `k x n` of `d` (`[b, m, n, k]`) are a call of the
    /// runtime's packed product (`quabla_gemm_<d>`, crate::linalg::dot) instead of code the
    /// lowering generates. Asked only for products that have a tiled [`Self::matmul_plan`].
    fn runtime_gemm(&self, _d: DType, _bmnk: [i64; 4]) -> bool {
        false
    }

    /// The loop along which a `linalg.generic` over `extents` (its loop extents; `parallel`
    /// tells its parallel loops; `cost` the work units of one iteration,
    /// crate::linalg::elementwise::op_cost) is split into one `scf.forall` tile per thread,
    /// or `None` to keep it on one thread. Never asked with one thread.
    fn parallel_loop(&self, _parallel: &[bool], _extents: &[i64], _threads: i64, _cost: i64) -> Option<usize> {
        None
    }

    /// Writes `u` applied to `x` (of element type `d`) as the target's kernel through `b` and
    /// returns its result, or `None` when the target has no kernel for it (the lowering then
    /// emits the `math.*` op).
    fn unary_kernel(&self, b: &mut Text<'_>, u: UnaryOp, d: DType, x: &(String, DType)) -> Option<(String, DType)>;

    /// Writes binary `op` applied to `x` and `y` as the target's kernel (f32 `pow` on the
    /// CPU), or `None` (the lowering then emits the `math.*` / `arith.*` op).
    fn binary_kernel(&self, _b: &mut Text<'_>, _op: BinaryOp, _d: DType, _x: &(String, DType), _y: &(String, DType)) -> Option<(String, DType)> {
        None
    }

    /// Whether every computation must be a loop nest whose outermost loop is parallel (a GPU
    /// target maps each nest to one kernel and its parallel loops to threads): reductions
    /// order their loops kept dims first, and full reductions and 0-d elementwise ops get a
    /// unit parallel loop (their result is computed as `[1]` and collapsed). The CPU keeps
    /// the operand's loop order (contiguous inner loops) and 0-d chains in registers.
    fn parallel_outer(&self) -> bool {
        false
    }

    /// Whether private functions take their results as memref arguments, as public ones do
    /// under `Abi::Dps` (their callers pass the buffers: an output of the caller's own where
    /// the result is one), and their memrefs as bare pointers (`llvm.bareptr`: one pointer
    /// per static, identity-layout memref instead of a descriptor of 3 + 2 x rank words).
    /// The CPU's outlined chunks (quabla_passes::outline) pass every value that crosses a
    /// chunk boundary: a step over 100 parameters called its chunks with 900 scalars and
    /// returned 32 descriptors from each, and LLVM's instruction selection of those calls
    /// was most of the first call. Only asked under `Abi::Dps`.
    fn private_dps(&self) -> bool {
        false
    }

    /// Whether large transposes call the runtime's transposing copy
    /// (crate::linalg::layout::runtime_transpose) instead of a generic.
    fn runtime_kernels(&self) -> bool {
        false
    }
}

/// How one `m x k` by `k x n` product takes the tiled path: the lowering packs B into
/// contiguous panels of `nr` columns (`[n/nr, k, nr]`) and loops over blocks of `mb` rows of
/// A and over the panels; the tagged op is one `mb x nr x k` `linalg.matmul` whose K the
/// script blocks by `kb` (0: not blocked) before the register blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// M and N padded to whole register blocks and panels (equal to M and N when they divide):
    /// ragged products run on zero-padded copies and the result is the leading `m x n` block.
    pub mp: i64,
    pub np: i64,
    /// Rows of the register block (of A's micro-panels on the micro-panel path): `mp` and the
    /// row blocks are multiples of it.
    pub mr: i64,
    /// Rows of A per block.
    pub mb: i64,
    /// K block (0: one block).
    pub kb: i64,
    /// Columns of a packed B panel.
    pub nr: i64,
    /// K block of the micro-panel path (0: the path above). When set, the lowering also packs
    /// A, into `[mp / mr, k, mr]` micro-panels, and blocks K itself: per block of `kc` it loops
    /// over blocks of `mc` rows, the panels, then the row block's micro-panels, and each
    /// tagged op is one `mr x nr x kc` product of a contiguous A micro-panel (read through a
    /// transposed lhs map) and a panel slice (`mb` and `kb` are unused then).
    pub kc: i64,
    /// Rows per block of the micro-panel path (a multiple of `mr` dividing `mp`).
    pub mc: i64,
    /// Whether the micro-panel path is taken (`kc > 0` given) with A laid out `[m, k]`
    /// (`alias[0]`) and `[k, m]` (`alias[1]`): where A's rows in place would fall into few
    /// cache sets (the target's judgement), else A is read in place.
    pub alias: [bool; 2],
}

impl Plan {
    /// Whether the product takes the micro-panel path with A given as `[k, m]` (`a_km`) or
    /// `[m, k]`.
    pub fn micro(&self, a_km: bool) -> bool {
        self.kc > 0 && self.alias[usize::from(a_km)]
    }
}

/// One tagged matmul (an `MB x NR x K` product over a packed B panel) and its tiling.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatmulTile {
    /// The `quabla.tile` tag.
    pub tag: usize,
    /// K block (0: one block).
    pub kb: i64,
    /// Register block rows (MR) and columns (NR).
    pub mr: i64,
    pub nr: i64,
}

/// The `quabla.par` tag of a generic split along loop `dim` (of at most [`PAR_MAX_RANK`]
/// loops); the transform script has one `tile_using_forall` per code, whose `num_threads`
/// list ends at `dim` (the loops after it stay whole), so one split serves every rank. The
/// generics left after upstream fusion may have more loops than any the lowering wrote (a
/// reduction fused through an `expand_shape` gains the reshape's unit dims).
pub fn par_code(dim: usize) -> i64 {
    dim as i64 + 1
}

/// Generics with more loops stay on one thread.
pub const PAR_MAX_RANK: usize = 6;

/// Code-generation choices of the linalg lowering beyond the ABI (both flags off for the
/// plain `convert-quabla-to-linalg`, both on for the CPU executor's vectorizing path), and
/// the target that makes them.
#[derive(Clone, Copy, Debug)]
pub struct Codegen {
    /// Emit the target's polynomial kernels (for the CPU crate::approx) instead of
    /// `math.exp`, `math.tanh`, ... where a kernel exists, so the elementwise loops vectorize.
    pub approx_math: bool,
    /// Tag float matmuls whose shapes suit the target's tiled path and embed the transform
    /// script that tiles them (for the CPU crate::tiling).
    pub tile_matmuls: bool,
    /// The target asked for kernels and matmul plans.
    pub target: &'static dyn Target,
    /// Threads the compiled code may use (1: single-threaded code). With more, the target
    /// chooses which large matmuls and loops become `scf.forall`s ([`Target::parallel_matmul`],
    /// [`Target::parallel_tiles`]).
    pub threads: i64,
}

impl Default for Codegen {
    /// Both flags off, for the CPU target.
    fn default() -> Self {
        Codegen { approx_math: false, tile_matmuls: false, target: &cpu::CPU, threads: 1 }
    }
}

impl PartialEq for Codegen {
    fn eq(&self, other: &Self) -> bool {
        self.approx_math == other.approx_math && self.tile_matmuls == other.tile_matmuls && self.target.name() == other.target.name() && self.threads == other.threads
    }
}

impl Eq for Codegen {}

#[cfg(test)]
mod tests {
    use quabla_dialect::{DotDims, DotOp, ElementwiseOp, Func, Module, OpKind, TensorType};

    use super::*;
    use crate::linalg::lower_module_tiles;
    use crate::Abi;

    /// A target without kernels or a tiled path (exercises the seam).
    #[derive(Debug)]
    struct Plain;

    impl Target for Plain {
        fn name(&self) -> &'static str {
            "plain"
        }
        fn matmul_plan(&self, _: DType, _: i64, _: i64, _: i64) -> Option<Plan> {
            None
        }
        fn matmul_script(&self, _: &[MatmulTile], _: i64) -> String {
            unreachable!("no matmul is tagged without a plan")
        }
        fn unary_kernel(&self, _: &mut Text<'_>, _: UnaryOp, _: DType, _: &(String, DType)) -> Option<(String, DType)> {
            None
        }
    }
    static PLAIN: Plain = Plain;

    /// tanh(x) and x . x on a 96 x 96 f32 matrix (a product the CPU generates code for).
    fn module() -> Module {
        module_of(96)
    }

    fn module_of(n: i64) -> Module {
        let t = TensorType::new(DType::F32, [n, n]);
        let mut f = Func::new("main", std::slice::from_ref(&t));
        let x = f.params[0];
        let y = f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Tanh }), &[x], None).unwrap();
        let z = f.push1(OpKind::Dot(DotOp::DotGeneral { dims: DotDims::matmul() }), &[y, x], None).unwrap();
        f.outputs = vec![z];
        Module { funcs: vec![f] }
    }

    #[test]
    fn the_lowering_asks_the_target() {
        let on = |target| Codegen { approx_math: true, tile_matmuls: true, target, threads: 1 };
        // (The generated products' target: on AVX2/AVX-512 hosts cpu::CPU calls the runtime
        // for every single product.)
        let (cpu, tiles) = lower_module_tiles(&module(), Abi::Dps, on(&cpu::CPU_GENERATED)).unwrap();
        assert_eq!(tiles.len(), 1);
        assert!(cpu.contains("quabla.tile = 0") && cpu.contains("transform.with_named_sequence"), "{cpu}");
        assert!(!cpu.contains("math.tanh"), "the CPU target has a tanh kernel:\n{cpu}");
        // A large product calls the runtime's where the host has its micro-kernels.
        let (big, tiles) = lower_module_tiles(&module_of(256), Abi::Dps, on(&cpu::CPU)).unwrap();
        let runtime = cpu::tiling::runtime_gemm(DType::F32, [1, 256, 256, 256], cpu::tiling::host_regs());
        assert_eq!(tiles.is_empty(), runtime);
        assert_eq!(big.contains("func.call @quabla_gemm_f32") && big.contains("func.func private @quabla_gemm_f32"), runtime, "{big}");
        // The executor's work estimate counts only the copies around such a call: none for
        // operands read in place ([m, k] x [k, n], [k, m] x [n, k]), the lhs for a [k, b, m]
        // lhs of a batched product (transposed to [b, m, k] first).
        use crate::linalg::dot::runtime_product_work;
        let t = |s: &[i64]| TensorType::new(DType::F32, s.to_vec());
        let tr = DotDims { lhs_batching_dimensions: vec![], rhs_batching_dimensions: vec![], lhs_contracting_dimensions: vec![0], rhs_contracting_dimensions: vec![1] };
        let odd = DotDims { lhs_batching_dimensions: vec![1], rhs_batching_dimensions: vec![0], lhs_contracting_dimensions: vec![0], rhs_contracting_dimensions: vec![1] };
        let expect = |w: i64| if runtime { Some(w) } else { None };
        assert_eq!(runtime_product_work(&cpu::CPU, &t(&[256, 256]), &t(&[256, 256]), &DotDims::matmul()), expect(0));
        assert_eq!(runtime_product_work(&cpu::CPU, &t(&[256, 256]), &t(&[256, 256]), &tr), expect(0));
        assert_eq!(runtime_product_work(&cpu::CPU, &t(&[256, 2, 300]), &t(&[2, 256, 300]), &odd), expect(256 * 2 * 300));
        assert_eq!(runtime_product_work(&cpu::CPU, &t(&[96, 96]), &t(&[96, 96]), &DotDims::matmul()), expect(0));
        assert_eq!(runtime_product_work(&cpu::CPU, &t(&[4, 96, 96]), &t(&[4, 96, 96]), &DotDims { lhs_batching_dimensions: vec![0], rhs_batching_dimensions: vec![0], lhs_contracting_dimensions: vec![2], rhs_contracting_dimensions: vec![1] }), expect(0));
        assert_eq!(runtime_product_work(&cpu::CPU_GENERATED, &t(&[256, 256]), &t(&[256, 256]), &DotDims::matmul()), None);
        let (plain, tiles) = lower_module_tiles(&module(), Abi::Dps, on(&PLAIN)).unwrap();
        assert!(tiles.is_empty());
        assert!(plain.contains("math.tanh") && plain.contains("linalg.matmul"), "{plain}");
        assert!(!plain.contains("quabla.tile") && !plain.contains("transform."), "{plain}");
        // With both flags off no target is asked: the output is the same for every target.
        let off = |target| Codegen { approx_math: false, tile_matmuls: false, target, threads: 1 };
        assert_eq!(lower_module_tiles(&module(), Abi::Dps, off(&PLAIN)).unwrap().0, lower_module_tiles(&module(), Abi::Dps, off(&cpu::CPU)).unwrap().0);
    }

    #[test]
    fn codegen_compares_targets_by_name() {
        assert_eq!(Codegen::default(), Codegen { approx_math: false, tile_matmuls: false, target: &cpu::CPU, threads: 1 });
        assert_ne!(Codegen::default(), Codegen { target: &PLAIN, ..Codegen::default() });
        assert_eq!(Codegen::default().target.name(), "cpu");
    }
}

//! The CUDA target: linalg on tensors -> bufferized memrefs -> `scf.parallel` (tiled 32 x 8,
//! no min/max bounds) -> `gpu.launch` -> outlined `gpu.module`s -> NVVM -> PTX text
//! (`gpu-module-to-binary{format=isa}`), with no CUDA toolkit beyond libdevice. The input is
//! the destination-passing `convert-quabla-to-linalg` output the CPU executor also starts
//! from, written for this target ([`CudaTarget`]: no tiled matmuls, no polynomial kernels,
//! every loop nest parallel outermost so each becomes one kernel); [`compile`] runs the two
//! pipeline stages through melior's pass manager and returns every kernel's PTX and the
//! host side as a [`plan::HostPlan`]: a small program ([`host`]) of ordered launches
//! (grid/block from the lowering, arguments under the bare-pointer kernel ABI), cuBLAS
//! products, allocations, constant buffers, and the host's share of control flow (`while`
//! loops, branches holding loops or callbacks, callbacks) reading single elements of device
//! memory.
//!
//! Invariants: every computation on tensor data is a kernel (or a cuBLAS product). An op
//! family without a GPU form would be rejected before lowering as
//! `LowerError::Unsupported { rule: "cuda" }` ([`gap`], exhaustive; none today); whatever
//! stage one leaves outside a kernel that the plan's steps cannot express is a
//! `LowerError::HostCode` naming the MLIR op, so no loop over tensor data can silently run
//! on the CPU against device memory.
//!
//! libdevice (math functions as `__nv_*` calls) and `ptxas` come from the PyPI wheel
//! `nvidia-cuda-nvcc-cu12` ([`Toolkit::locate`]): `$QUABLA_CUDA_NVCC`, else
//! `nvidia/cuda_nvcc` in the site-packages of `$VIRTUAL_ENV`, of the loaded extension, or of
//! the workspace's `.venv`, else an installed CUDA toolkit; missing, it is `LowerError::Toolkit`.
pub mod host;
pub mod plan;

use std::path::{Path, PathBuf};

use quabla_dialect::{DType, Module, OpKind, UnaryOp};

use crate::linalg::elementwise::Text;
use crate::linalg::lower_module_tagged;
use crate::target::{Codegen, MatmulTile, Plan, Target};
use crate::{Abi, LowerError};

pub use host::{Arm, ConstBuffer, Gemm, HostOp, HostPlan, Launch, Operand, Scalar, ScalarTy, Slot, Step};
pub use plan::{compile, compile_with, CudaProgram, Kernel};

/// The CUDA target's choices: no tiled matmul path, no polynomial kernels (libdevice has the
/// math functions), and loop nests parallel outermost ([`Target::parallel_outer`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CudaTarget;

/// The CUDA target.
pub static CUDA: CudaTarget = CudaTarget;

impl Target for CudaTarget {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn matmul_plan(&self, _: DType, _: i64, _: i64, _: i64) -> Option<Plan> {
        None
    }

    fn matmul_script(&self, _: &[MatmulTile], _: i64) -> String {
        String::new()
    }

    fn unary_kernel(&self, _: &mut Text<'_>, _: UnaryOp, _: DType, _: &(String, DType)) -> Option<(String, DType)> {
        None
    }

    fn parallel_outer(&self) -> bool {
        true
    }
}

/// The default GPU architecture of `quabla-opt --emit=ptx` (Hopper).
pub const DEFAULT_ARCH: &str = "sm_90";

/// Options of the CUDA pipeline.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CudaOptions {
    /// The `sm_XY` architecture the PTX targets.
    pub arch: String,
    /// Matmuls on contiguous f32/f64 buffers run through cuBLAS (`plan::Gemm` steps) instead
    /// of loop kernels.
    pub cublas: bool,
}

impl Default for CudaOptions {
    fn default() -> Self {
        CudaOptions { arch: DEFAULT_ARCH.to_string(), cublas: true }
    }
}

impl CudaOptions {
    /// Options for `arch`, with cuBLAS products unless `QUABLA_CUDA_CUBLAS=0` (loop kernels).
    pub fn for_arch(arch: impl Into<String>) -> Self {
        CudaOptions { arch: arch.into(), cublas: std::env::var("QUABLA_CUDA_CUBLAS").map_or(true, |v| v != "0") }
    }

    /// Checks the architecture name (`sm_` followed by digits, at least sm_50).
    pub fn check(&self) -> Result<(), LowerError> {
        let ok = self.arch.strip_prefix("sm_").and_then(|n| n.trim_end_matches('a').parse::<u32>().ok()).is_some_and(|n| n >= 50);
        if ok {
            Ok(())
        } else {
            Err(LowerError::Pipeline { target: "cuda", stage: "options", message: format!("unknown CUDA architecture `{}` (expected sm_XY, e.g. sm_80 or sm_90)", self.arch) })
        }
    }
}

/// The parts of the `nvidia-cuda-nvcc-cu12` wheel the target uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Toolkit {
    /// The wheel's `nvidia/cuda_nvcc` folder.
    pub root: PathBuf,
}

impl Toolkit {
    /// `nvvm/libdevice/libdevice.10.bc`.
    pub fn libdevice(&self) -> PathBuf {
        self.root.join("nvvm/libdevice/libdevice.10.bc")
    }

    /// `bin/ptxas` (assembles PTX for a GPU architecture; no GPU needed).
    pub fn ptxas(&self) -> PathBuf {
        self.root.join("bin/ptxas")
    }

    /// Finds the wheel: `$QUABLA_CUDA_NVCC`, else `nvidia/cuda_nvcc` under the site-packages
    /// of `$VIRTUAL_ENV`, of the library this code was loaded from (the Python extension sits
    /// in site-packages), or of the workspace's `.venv`, else a CUDA toolkit (`$CUDA_HOME`,
    /// `$CUDA_PATH`, `/usr/local/cuda`: same layout). A folder without libdevice is skipped;
    /// none found is [`LowerError::Toolkit`] listing where it looked.
    pub fn locate() -> Result<Toolkit, LowerError> {
        let mut tried: Vec<PathBuf> = Vec::new();
        if let Some(p) = std::env::var_os("QUABLA_CUDA_NVCC") {
            let root = PathBuf::from(p);
            let tk = Toolkit { root: root.clone() };
            if tk.libdevice().is_file() {
                return Ok(tk);
            }
            return Err(LowerError::Toolkit { looked: vec![format!("$QUABLA_CUDA_NVCC={}", root.display())] });
        }
        // A CUDA toolkit has the same layout (nvvm/libdevice, bin/ptxas).
        let mut toolkits: Vec<PathBuf> = ["CUDA_HOME", "CUDA_PATH"].iter().filter_map(std::env::var_os).map(PathBuf::from).collect();
        toolkits.push(PathBuf::from("/usr/local/cuda"));
        let mut sites: Vec<PathBuf> = Vec::new();
        if let Some(v) = std::env::var_os("VIRTUAL_ENV") {
            sites.extend(site_packages(Path::new(&v)));
        }
        if let Some(dir) = own_library_dir() {
            // <site-packages>/quabla/_quabla*.so
            if let Some(site) = dir.parent() {
                sites.push(site.to_path_buf());
            }
        }
        sites.extend(site_packages(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv")));
        for root in sites.iter().map(|s| s.join("nvidia/cuda_nvcc")).chain(toolkits) {
            let tk = Toolkit { root: root.clone() };
            if tk.libdevice().is_file() {
                return Ok(tk);
            }
            tried.push(root);
        }
        Err(LowerError::Toolkit { looked: tried.iter().map(|p| p.display().to_string()).collect() })
    }
}

/// `<prefix>/lib/python3*/site-packages`.
fn site_packages(prefix: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(prefix.join("lib")) else { return vec![] };
    let mut v: Vec<PathBuf> = rd.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("python3"))).map(|p| p.join("site-packages")).collect();
    v.sort();
    v
}

/// The folder of the shared object (or executable) holding this function.
fn own_library_dir() -> Option<PathBuf> {
    #[repr(C)]
    struct DlInfo {
        fname: *const std::ffi::c_char,
        fbase: *mut std::ffi::c_void,
        sname: *const std::ffi::c_char,
        saddr: *mut std::ffi::c_void,
    }
    unsafe extern "C" {
        fn dladdr(addr: *const std::ffi::c_void, info: *mut DlInfo) -> i32;
    }
    let mut info = DlInfo { fname: std::ptr::null(), fbase: std::ptr::null_mut(), sname: std::ptr::null(), saddr: std::ptr::null_mut() };
    // SAFETY: dladdr only reads the address and fills `info`; fname points into the loader's tables.
    let ok = unsafe { dladdr(own_library_dir as *const std::ffi::c_void, &mut info) };
    if ok == 0 || info.fname.is_null() {
        return None;
    }
    let name = unsafe { std::ffi::CStr::from_ptr(info.fname) }.to_str().ok()?;
    Path::new(name).canonicalize().ok()?.parent().map(Path::to_path_buf)
}

/// Why op `kind` has no CUDA lowering yet, or `None` when it lowers (to kernels, or to host
/// steps of the plan: loops, branches holding loops or callbacks, callbacks). Exhaustive over
/// the families.
pub fn gap(kind: &OpKind) -> Option<&'static str> {
    match kind {
        OpKind::Elementwise(_) | OpKind::Constant(_) | OpKind::Layout(_) | OpKind::Reduce(_) | OpKind::Dot(_) | OpKind::Convolution(_) | OpKind::ReduceWindow(_) => None,
        OpKind::Slicing(_) | OpKind::Scatter(_) | OpKind::Sort(_) | OpKind::Linalg(_) | OpKind::Call(_) | OpKind::Control(_) | OpKind::Callback(quabla_dialect::CallbackOp::HostCallback { .. }) => None,
        // Resolved by the vmap expansion; one left is an unbound axis, which the lowering reports.
        OpKind::Collective(_) => None,
        // Its fetch writes a host buffer the GPU plan does not stage yet.
        OpKind::Callback(quabla_dialect::CallbackOp::CallbackResult { .. }) => Some("a pure callback's result (callback_result) is fetched on the host; the CUDA plan has no step for it yet"),
    }
}

/// The first op of `m` (nested ops included) without a CUDA lowering, as a typed error.
pub fn check_gaps(m: &Module) -> Result<(), LowerError> {
    for f in &m.funcs {
        let mut found: Option<&'static str> = None;
        f.walk(&mut |op| {
            if found.is_none() && gap(&op.kind).is_some() {
                found = Some(op.kind.name());
            }
        });
        if let Some(op) = found {
            return Err(LowerError::Unsupported { op, rule: "cuda" });
        }
    }
    Ok(())
}

/// A module lowered for CUDA, before MLIR: the linalg text and the two pipeline stages.
#[derive(Clone, Debug)]
pub struct CudaModule {
    /// `convert-quabla-to-linalg{abi=dps}` output written for [`CUDA`].
    pub text: String,
    /// Stage one, part one: fusion, empty-tensor elimination, one-shot bufferization (no
    /// deallocation: the executor owns temporaries for one call).
    pub bufferize: String,
    /// Stage one, part two: parallel loops, tiling, the mapping to blocks and threads.
    pub to_loops: String,
    /// Stage one, part three (after [`plan::coalesce`]): `gpu.launch`, kernel outlining.
    pub to_gpu: String,
    /// Stage two: NVVM and PTX.
    pub to_ptx: String,
}

/// Lowers `m` with the destination-passing ABI for CUDA and returns its text and pipelines.
pub fn lower_for_cuda(m: &Module, tk: &Toolkit, opts: &CudaOptions) -> Result<CudaModule, LowerError> {
    opts.check()?;
    let text = lower_text(m)?;
    let (bufferize, to_loops, to_gpu, to_ptx) = pipelines(tk, opts);
    Ok(CudaModule { text, bufferize, to_loops, to_gpu, to_ptx })
}

/// The gap check and the `convert-quabla-to-linalg{abi=dps}` text written for [`CUDA`] (no
/// MLIR, no toolkit: what docs/op_status.md probes).
pub fn lower_text(m: &Module) -> Result<String, LowerError> {
    check_gaps(m)?;
    let cg = Codegen { approx_math: false, tile_matmuls: false, target: &CUDA, threads: 1 };
    Ok(lower_module_tagged(m, Abi::Dps, cg)?.0)
}

/// The pipeline stages (see [`CudaModule`]); notes/executors/cuda/stage1.pipe, stage2.pipe.
pub fn pipelines(tk: &Toolkit, opts: &CudaOptions) -> (String, String, String, String) {
    // The canonicalize after bufferization folds loop-carried buffers a loop yields back
    // unchanged (scatter's nest in its one-thread kernel), and with them the copy of the
    // loop's result onto its own buffer that would otherwise become a kernel inside it; CSE
    // then merges the equal subviews of a forall's in-place slice, whose self-copy the last
    // canonicalize erases (cholesky's loop form).
    let bufferize = "builtin.module(inline,func.func(linalg-fuse-elementwise-ops),eliminate-empty-tensors,canonicalize,cse,\
         one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map allow-return-allocs-from-loops},convert-bufferization-to-memref,canonicalize,cse,canonicalize)"
        .to_string();
    // Without no-min-max-bounds, loops the tile does not divide stay on the host. Tiles of
    // 32 x 8: a 1-D loop gets a warp per block; a 2-D one 256 threads, whose x runs along
    // the second (contiguous) dim once plan::coalesce has swapped the mapping.
    let to_loops = "builtin.module(func.func(scf-forall-to-parallel,convert-linalg-to-parallel-loops,scf-parallel-loop-tiling{parallel-loop-tile-sizes=32,8 no-min-max-bounds=true},\
         gpu-map-parallel-loops))"
        .to_string();
    let to_gpu = "builtin.module(func.func(convert-parallel-loops-to-gpu),canonicalize,cse,gpu-kernel-outlining,canonicalize)".to_string();
    // convert-gpu-to-nvvm runs once before the generic arith/func lowerings, so that math and
    // arith ops with a libdevice or NVVM form (`arith.remf` as `__nv_fmod`, ...) get it
    // before convert-arith-to-llvm turns them into LLVM ops NVPTX cannot select (`llvm.frem`
    // on f64), and again after them for what they produced.
    let to_ptx = format!(
        "builtin.module(nvvm-attach-target{{chip={arch} features=+ptx80 O=3 l={lib}}},gpu.module(convert-gpu-to-nvvm{{use-bare-ptr-memref-call-conv=true}}),convert-nvgpu-to-nvvm,convert-vector-to-scf,convert-scf-to-cf,\
         convert-nvvm-to-llvm,convert-func-to-llvm,expand-strided-metadata,lower-affine,convert-arith-to-llvm,convert-index-to-llvm,canonicalize,cse,\
         gpu.module(convert-gpu-to-nvvm{{use-bare-ptr-memref-call-conv=true}},canonicalize,cse,reconcile-unrealized-casts),\
         gpu-to-llvm{{use-bare-pointers-for-kernels=true}},finalize-memref-to-llvm,reconcile-unrealized-casts,gpu-module-to-binary{{format=isa toolkit={root}}})",
        arch = opts.arch,
        lib = tk.libdevice().display(),
        root = tk.root.display()
    );
    (bufferize, to_loops, to_gpu, to_ptx)
}

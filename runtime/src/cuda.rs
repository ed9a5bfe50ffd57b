//! The CUDA executor (cargo feature `cuda`, on by default): compiles a module with the CUDA
//! target (`quabla_lowering::cuda::compile`: every kernel's PTX and the host plan), loads the
//! PTX once per executable through cudarc (driver API, dynamically loaded), uploads the
//! plan's constants once, and per call allocates the outputs and temporaries, copies host
//! inputs to the device (inputs already on this device are used in place), launches the
//! kernels in program order on the device's one stream, and returns the outputs as device
//! buffers ([`CudaStorage`] behind `DeviceStorage`): they stay on the GPU until
//! `Buffer::to_host`.
//!
//! Invariants: no cudarc call happens before [`driver_present`] said libcuda loads (cudarc
//! panics, rather than returning an error, when it is missing); a machine without a driver or
//! a GPU gets `RuntimeError::UnavailableDevice` from the registry, never a panic. The MLIR
//! context is used only under its lock. Temporaries live for one call (no caching allocator
//! yet: cudarc's stream-ordered `cuMemAllocAsync` pool serves repeated sizes).
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{CudaContext, CudaFunction, CudaSlice, CudaStream, DevicePtr, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;
use melior::Context;
use quabla_dialect::mlir::new_context;
use quabla_dialect::{Module, TensorType};
use quabla_lowering::cuda::{self as target, Arg, CudaOptions, CudaProgram, Gemm, HostBuffer, Step};

use crate::buffer::{Buffer, DeviceStorage, Storage};
use crate::executor::{check_inputs, CompileOptions, Executable, Executor, RuntimeError};

/// The registry name of the first GPU.
pub const DEVICE: &str = "cuda:0";

/// True when the CUDA driver library (libcuda) can be loaded. Checked before any other
/// cudarc call.
pub fn driver_present() -> bool {
    // SAFETY: only tries to dlopen the driver library.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

/// Whether this machine can run the executor: a driver and at least one GPU (the reason
/// otherwise, for `RuntimeError::UnavailableDevice`).
pub fn probe() -> Result<(), &'static str> {
    static PROBE: OnceLock<Result<(), &'static str>> = OnceLock::new();
    *PROBE.get_or_init(|| {
        if !driver_present() {
            return Err("no CUDA driver (libcuda.so) on this machine");
        }
        match CudaContext::device_count() {
            Ok(n) if n > 0 => Ok(()),
            Ok(_) => Err("the CUDA driver sees no GPU"),
            Err(_) => Err("the CUDA driver failed to initialise (no usable GPU)"),
        }
    })
}

/// The GPU the executor runs on.
struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    /// `sm_XY` of the device.
    arch: String,
}

/// Owns the MLIR context used for compilation.
struct Ctx(Context);
// SAFETY: only touched while `CudaExecutor::mlir`'s mutex is held; MLIR contexts have no
// thread affinity.
unsafe impl Send for Ctx {}

/// Compiles for and runs on the first CUDA GPU.
pub struct CudaExecutor {
    mlir: Mutex<Ctx>,
    gpu: OnceLock<Result<Gpu, String>>,
}

impl Default for CudaExecutor {
    fn default() -> Self {
        CudaExecutor::new()
    }
}

fn device_error(e: impl std::fmt::Display) -> RuntimeError {
    RuntimeError::Device { device: DEVICE.to_string(), message: e.to_string() }
}

impl CudaExecutor {
    /// A new executor (the GPU is opened on first compile, after [`probe`]).
    pub fn new() -> Self {
        CudaExecutor { mlir: Mutex::new(Ctx(new_context())), gpu: OnceLock::new() }
    }

    fn gpu(&self) -> Result<&Gpu, RuntimeError> {
        probe().map_err(|reason| RuntimeError::UnavailableDevice { name: "cuda".into(), reason })?;
        self.gpu
            .get_or_init(|| {
                let ctx = CudaContext::new(0).map_err(|e| e.to_string())?;
                let (major, minor) = ctx.compute_capability().map_err(|e| e.to_string())?;
                let stream = ctx.default_stream();
                Ok(Gpu { ctx, stream, arch: format!("sm_{major}{minor}") })
            })
            .as_ref()
            .map_err(device_error)
    }
}

impl Executor for CudaExecutor {
    fn name(&self) -> &str {
        "cuda"
    }

    fn compile(&self, m: &Module, entry: &str, opts: &CompileOptions) -> Result<Arc<dyn Executable>, RuntimeError> {
        let f = m.func(entry).filter(|f| f.public).ok_or_else(|| RuntimeError::NoEntry(entry.to_string()))?;
        let gpu = self.gpu()?;
        let arch = opts.cuda_arch.clone().unwrap_or_else(|| gpu.arch.clone());
        let mut copts = CudaOptions::for_arch(arch);
        // Products go to cuBLAS only where libcublas loads (else loop kernels).
        // SAFETY: only tries to dlopen libcublas.
        copts.cublas &= unsafe { cudarc::cublas::sys::is_culib_present() };
        let program = {
            let guard = self.mlir.lock().unwrap_or_else(|e| e.into_inner());
            target::compile(&guard.0, m, entry, &copts)?
        };
        CudaExecutable::load(gpu, program, f.param_types(), f.result_types()).map(|e| Arc::new(e) as Arc<dyn Executable>)
    }
}

/// A compiled program loaded on the GPU.
struct CudaExecutable {
    stream: Arc<CudaStream>,
    /// cuBLAS on `stream`, when the plan has products (TF32 off: cuBLAS's default math mode).
    blas: Option<Mutex<cudarc::cublas::CudaBlas>>,
    plan: CudaProgram,
    functions: Vec<CudaFunction>,
    /// Device copies of the plan's constant buffers (by buffer index).
    consts: Vec<Option<Arc<CudaSlice<u8>>>>,
    inputs: Vec<TensorType>,
    outputs: Vec<TensorType>,
}

impl CudaExecutable {
    fn load(gpu: &Gpu, plan: CudaProgram, inputs: Vec<TensorType>, outputs: Vec<TensorType>) -> Result<Self, RuntimeError> {
        let mut functions = Vec::with_capacity(plan.kernels.len());
        for k in &plan.kernels {
            let module = gpu.ctx.load_module(Ptx::from_src(k.ptx.clone())).map_err(|e| device_error(format!("loading the PTX of @{}: {e}", k.module)))?;
            functions.push(module.load_function(&k.func).map_err(device_error)?);
        }
        let mut consts = Vec::with_capacity(plan.plan.buffers.len());
        for b in &plan.plan.buffers {
            consts.push(match b {
                HostBuffer::Const { bytes, .. } => Some(Arc::new(gpu.stream.clone_htod(bytes).map_err(device_error)?)),
                _ => None,
            });
        }
        if plan.plan.params != inputs.len() + outputs.len() {
            return Err(RuntimeError::Compile(format!("the CUDA host plan takes {} buffers, the function {} inputs and {} outputs", plan.plan.params, inputs.len(), outputs.len())));
        }
        let blas = match plan.plan.gemms().next() {
            Some(_) => Some(Mutex::new(cudarc::cublas::CudaBlas::new(gpu.stream.clone()).map_err(device_error)?)),
            None => None,
        };
        Ok(CudaExecutable { stream: gpu.stream.clone(), blas, plan, functions, consts, inputs, outputs })
    }
}

/// A device buffer of the CUDA executor.
pub struct CudaStorage {
    /// At least one byte (a zero-size tensor still gets an allocation).
    slice: Arc<CudaSlice<u8>>,
    /// The tensor's byte size.
    len: usize,
    stream: Arc<CudaStream>,
}

impl DeviceStorage for CudaStorage {
    fn device(&self) -> &str {
        DEVICE
    }
    fn byte_len(&self) -> usize {
        self.len
    }
    fn copy_to_host(&self, dst: &mut [u8]) -> Result<(), String> {
        if self.len == 0 {
            return Ok(());
        }
        self.stream.memcpy_dtoh(&self.slice.slice(..self.len), dst).map_err(|e| e.to_string())?;
        self.stream.synchronize().map_err(|e| e.to_string())
    }
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

/// A kernel argument by value.
enum Val {
    B1(u8),
    B4(u32),
    B8(u64),
}

fn scalar(bytes: &[u8]) -> Result<Val, RuntimeError> {
    Ok(match bytes.len() {
        1 => Val::B1(bytes[0]),
        4 => Val::B4(u32::from_le_bytes(bytes.try_into().expect("4 bytes"))),
        8 => Val::B8(u64::from_le_bytes(bytes.try_into().expect("8 bytes"))),
        n => return Err(RuntimeError::Compile(format!("a kernel scalar of {n} bytes"))),
    })
}

impl CudaExecutable {
    /// `c += a @ b` for row-major operands: in cuBLAS's column-major terms `c^T = b^T a^T`,
    /// i.e. gemm(N, N, n, m, k, b, ldb = n, a, lda = k, beta = 1, c, ldc = n).
    fn gemm(&self, g: &Gemm, ptrs: &[u64]) -> Result<(), RuntimeError> {
        use cudarc::cublas::{result, sys};
        let blas = self.blas.as_ref().expect("a plan with products has a cuBLAS handle").lock().unwrap_or_else(|e| e.into_inner());
        let h = *blas.handle();
        let int = |x: usize| i32::try_from(x).map_err(|_| RuntimeError::Compile(format!("a cuBLAS extent {x} over i32")));
        let (m, n, k, batch) = (int(g.m)?, int(g.n)?, int(g.k)?, int(g.batch)?);
        let (sa, sb, sc) = ((g.m * g.k) as i64, (g.k * g.n) as i64, (g.m * g.n) as i64);
        let nn = sys::cublasOperation_t::CUBLAS_OP_N;
        // SAFETY: the pointers are live device buffers of this call holding the plan's shapes;
        // the handle runs on the executable's stream, ordered with the kernels.
        let r = unsafe {
            if g.f64 {
                let (one, beta) = (1.0f64, 1.0f64);
                result::dgemm_strided_batched(h, nn, nn, n, m, k, &one, ptrs[g.b] as *const f64, n, sb, ptrs[g.a] as *const f64, k, sa, &beta, ptrs[g.c] as *mut f64, n, sc, batch)
            } else {
                let (one, beta) = (1.0f32, 1.0f32);
                result::sgemm_strided_batched(h, nn, nn, n, m, k, &one, ptrs[g.b] as *const f32, n, sb, ptrs[g.a] as *const f32, k, sa, &beta, ptrs[g.c] as *mut f32, n, sc, batch)
            }
        };
        r.map_err(|e| device_error(format!("cuBLAS gemm: {e:?}")))
    }
}

impl Executable for CudaExecutable {
    fn input_types(&self) -> &[TensorType] {
        &self.inputs
    }
    fn output_types(&self) -> &[TensorType] {
        &self.outputs
    }

    fn run(&self, inputs: &[&Buffer]) -> Result<Vec<Buffer>, RuntimeError> {
        check_inputs("cuda", &self.inputs, inputs)?;
        let stream = &self.stream;
        let n_in = self.inputs.len();
        // Every buffer of the plan on the device.
        let mut slices: Vec<Arc<CudaSlice<u8>>> = Vec::with_capacity(self.plan.plan.buffers.len());
        for (i, b) in self.plan.plan.buffers.iter().enumerate() {
            let s = match b {
                HostBuffer::Param(k) if *k < n_in => {
                    let buf = inputs[*k];
                    let own = match buf.storage() {
                        Storage::Device(d) => d.as_any().and_then(|a| a.downcast_ref::<CudaStorage>()),
                        Storage::Host(_) => None,
                    };
                    match own {
                        Some(c) => c.slice.clone(),
                        None => {
                            let host = buf.to_host().map_err(|source| RuntimeError::Buffer { entry: "cuda".into(), source })?;
                            let bytes = host.host_bytes().map_err(|source| RuntimeError::Buffer { entry: "cuda".into(), source })?;
                            Arc::new(if bytes.is_empty() { stream.alloc_zeros::<u8>(1) } else { stream.clone_htod(bytes) }.map_err(device_error)?)
                        }
                    }
                }
                HostBuffer::Param(k) => {
                    let ty = &self.outputs[*k - n_in];
                    Arc::new(stream.alloc_zeros::<u8>(quabla_dialect::size::byte_len(&ty.shape, ty.dtype.size()).map_err(device_error)?.max(1)).map_err(device_error)?)
                }
                HostBuffer::Temp { bytes } => Arc::new(stream.alloc_zeros::<u8>((*bytes).max(1)).map_err(device_error)?),
                HostBuffer::Const { .. } => self.consts[i].clone().expect("constants are uploaded at load"),
            };
            slices.push(s);
        }
        let ptrs: Vec<u64> = slices.iter().map(|s| s.device_ptr(stream).0).collect();
        for step in &self.plan.plan.steps {
            let l = match step {
                Step::Launch(l) => l,
                Step::Gemm(g) => {
                    self.gemm(g, &ptrs)?;
                    continue;
                }
            };
            let vals: Vec<Val> = l.args.iter().map(|a| match a {
                Arg::Buffer(b) => Ok(Val::B8(ptrs[*b])),
                Arg::Scalar(bytes) => scalar(bytes),
            }).collect::<Result<_, _>>()?;
            let mut b = stream.launch_builder(&self.functions[l.kernel]);
            for v in &vals {
                match v {
                    Val::B1(x) => b.arg(x),
                    Val::B4(x) => b.arg(x),
                    Val::B8(x) => b.arg(x),
                };
            }
            let cfg = LaunchConfig { grid_dim: (l.grid[0], l.grid[1], l.grid[2]), block_dim: (l.block[0], l.block[1], l.block[2]), shared_mem_bytes: 0 };
            // SAFETY: the arguments follow the kernel's bare-pointer signature as the host
            // plan read it from the launch; every pointer is a live buffer of this call.
            unsafe { b.launch(cfg) }.map_err(device_error)?;
        }
        let mut outs = Vec::with_capacity(self.outputs.len());
        for (j, ty) in self.outputs.iter().enumerate() {
            let s = slices[n_in + j].clone();
            let len = quabla_dialect::size::byte_len(&ty.shape, ty.dtype.size()).map_err(device_error)?;
            let storage = Arc::new(CudaStorage { slice: s, len, stream: stream.clone() });
            outs.push(Buffer::from_device(ty.clone(), storage).map_err(|source| RuntimeError::Buffer { entry: "cuda".into(), source })?);
        }
        Ok(outs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without libcuda (this machine, CI) the probe says so and compiling is a typed error,
    /// never a panic; with a driver and a GPU it succeeds.
    #[test]
    fn probe_and_compile_without_a_driver() {
        let m = quabla_dialect::mlir::parse_and_import(&new_context(), "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n %0 = \"quabla.neg\"(%a) : (tensor<4xf32>) -> tensor<4xf32>\n return %0 : tensor<4xf32>\n}").unwrap();
        let e = CudaExecutor::new();
        // tests/gpu/run.sh sets QUABLA_REQUIRE_GPU: there a missing GPU is a failure.
        assert!(std::env::var_os("QUABLA_REQUIRE_GPU").is_none() || probe().is_ok(), "QUABLA_REQUIRE_GPU: {:?}", probe());
        match probe() {
            Err(reason) => {
                assert!(!driver_present() || reason.contains("GPU"), "{reason}");
                match e.compile(&m, "main", &CompileOptions::default()) {
                    Err(RuntimeError::UnavailableDevice { name, reason: r }) => assert_eq!((name.as_str(), r), ("cuda", reason)),
                    Err(other) => panic!("wrong error: {other}"),
                    Ok(_) => panic!("compiled without a GPU"),
                }
            }
            Ok(()) => {
                if target::Toolkit::locate().is_ok() {
                    let exe = e.compile(&m, "main", &CompileOptions::default()).unwrap();
                    let x = Buffer::from_f64s(TensorType::new(quabla_dialect::DType::F32, [4]), &[1.0, -2.0, 3.5, 0.0]).unwrap();
                    let out = exe.run(&[&x]).unwrap().remove(0);
                    assert_eq!(out.device(), DEVICE);
                    assert_eq!(out.to_host().unwrap().to_f64_vec(), vec![-1.0, 2.0, -3.5, -0.0]);
                }
            }
        }
    }

    #[test]
    fn scalars_by_size() {
        assert!(matches!(scalar(&[1]), Ok(Val::B1(1))));
        assert!(matches!(scalar(&1.5f32.to_le_bytes()), Ok(Val::B4(x)) if f32::from_bits(x) == 1.5));
        assert!(matches!(scalar(&7i64.to_le_bytes()), Ok(Val::B8(7))));
        assert!(scalar(&[0, 0]).is_err());
    }
}

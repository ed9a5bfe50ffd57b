//! The CUDA executor (cargo feature `cuda`, on by default): compiles a module with the CUDA
//! target (`quabla_lowering::cuda::compile`: every kernel's PTX and the host plan), loads the
//! PTX once per executable through cudarc (driver API, dynamically loaded), uploads the
//! plan's constants once, and per call allocates the outputs, copies host inputs to the
//! device (inputs already on this device are used in place), interprets the host plan's steps
//! (kernel launches and cuBLAS products in program order on the device's one stream;
//! temporaries allocated as the steps run; loops, branches and callbacks on the host, reading
//! single elements of device memory), and returns the outputs as device buffers
//! ([`CudaStorage`] behind `DeviceStorage`): they stay on the GPU until `Buffer::to_host`.
//!
//! Invariants: no cudarc call happens before [`driver_present`] said libcuda loads (cudarc
//! panics, rather than returning an error, when it is missing); a machine without a driver or
//! a GPU gets `RuntimeError::UnavailableDevice` from the registry, never a panic. The MLIR
//! context is used only under its lock. Every buffer of a GPU (outputs, temporaries,
//! uploads) comes from its caching pool ([`Place`], `crate::pool`) and goes back to it when
//! the last reference drops; all of a GPU's work is on its one stream, so a reused block is
//! ordered after its earlier readers.
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{CudaContext, CudaFunction, CudaSlice, CudaStream, DevicePtr, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;
use melior::Context;
use quabla_dialect::mlir::new_context;
use quabla_dialect::{Module, TensorType};
use quabla_lowering::cuda::{self as target, CudaOptions, CudaProgram, Gemm, Operand, Scalar, Step};

use crate::buffer::{Buffer, DeviceStorage, Storage};
use crate::executor::{check_inputs, CompileOptions, Executable, Executor, RuntimeError};
use crate::pool::{limit_from_env, Pool};

/// The most GPUs the executor addresses (`cuda:0` .. `cuda:63`).
pub const MAX_DEVICES: usize = 64;

/// The registry names of the GPUs, `cuda:N`.
pub fn device_name(ordinal: usize) -> &'static str {
    static NAMES: OnceLock<Vec<String>> = OnceLock::new();
    NAMES.get_or_init(|| (0..MAX_DEVICES).map(|n| format!("cuda:{n}")).collect())[ordinal.min(MAX_DEVICES - 1)].as_str()
}

/// How many GPUs this machine has (0 without a driver; at most [`MAX_DEVICES`]).
pub fn device_count() -> usize {
    static COUNT: OnceLock<usize> = OnceLock::new();
    *COUNT.get_or_init(|| if probe().is_ok() { CudaContext::device_count().map_or(0, |n| (n.max(0) as usize).min(MAX_DEVICES)) } else { 0 })
}

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
    /// `sm_XY` of the device.
    arch: String,
    place: Place,
}

/// One GPU as its buffers see it: its stream, the caching pool of every buffer on it, and
/// its index (`cuda:N`).
#[derive(Clone)]
pub(crate) struct Place {
    pub stream: Arc<CudaStream>,
    pub pool: Arc<Pool<CudaSlice<u8>>>,
    pub ordinal: usize,
}

/// The caching pool's byte bound: `QUABLA_CUDA_CACHE` (bytes, or with a K/M/G suffix), by
/// default half the GPU's memory.
fn cache_limit(total: usize) -> usize {
    limit_from_env("QUABLA_CUDA_CACHE", total / 2)
}

/// Device memory of the executor, from its caching pool ([`crate::pool`]): at least the
/// requested bytes (a whole size class), back in the pool when the last reference drops.
/// Constants of an executable are not pooled (they live as long as it).
pub struct Mem {
    /// `Some` until dropped.
    slice: Option<CudaSlice<u8>>,
    class: usize,
    pool: Option<Arc<Pool<CudaSlice<u8>>>>,
}

impl std::ops::Deref for Mem {
    type Target = CudaSlice<u8>;
    fn deref(&self) -> &CudaSlice<u8> {
        self.slice.as_ref().expect("a Mem holds its slice until dropped")
    }
}

impl Drop for Mem {
    fn drop(&mut self) {
        if let (Some(s), Some(pool)) = (self.slice.take(), &self.pool) {
            // Freed here (outside the pool's lock) when the cache is full.
            drop(pool.give(self.class, s));
        }
    }
}

impl Place {
    /// `cuda:N`.
    pub fn name(&self) -> &'static str {
        device_name(self.ordinal)
    }

    /// A block of at least `bytes` (a cached one of its class, else a fresh allocation; when
    /// that fails, the cache is emptied and the allocation tried once more), its contents
    /// unspecified, and its class.
    pub fn block(&self, bytes: usize) -> Result<(CudaSlice<u8>, usize), RuntimeError> {
        let class = Pool::<CudaSlice<u8>>::class(bytes);
        if let Some(s) = self.pool.take(class) {
            return Ok((s, class));
        }
        // SAFETY: the block is written (a host copy or zeros) or filled by a kernel before it
        // is read: its bytes are never observed uninitialised.
        let fresh = |n| unsafe { self.stream.alloc::<u8>(n) };
        let s = match fresh(class) {
            Ok(s) => s,
            Err(_) => {
                drop(self.pool.clear());
                fresh(class).map_err(|e| RuntimeError::OutOfMemory { entry: format!("cuda ({e})"), bytes: class as u64 })?
            }
        };
        Ok((s, class))
    }

    /// A block of [`Place::block`] as pooled memory.
    pub fn mem(&self, slice: CudaSlice<u8>, class: usize) -> Arc<Mem> {
        Arc::new(Mem { slice: Some(slice), class, pool: Some(self.pool.clone()) })
    }

    /// `bytes` of zeroed memory.
    fn zeroed(&self, bytes: usize) -> Result<Arc<Mem>, RuntimeError> {
        let (mut s, class) = self.block(bytes)?;
        self.stream.memset_zeros(&mut s).map_err(device_error)?;
        Ok(self.mem(s, class))
    }

    /// A copy of `buf`'s bytes (through the host for another device's buffer).
    fn upload(&self, buf: &Buffer) -> Result<Arc<Mem>, RuntimeError> {
        let host = buf.to_host().map_err(|source| RuntimeError::Buffer { entry: "cuda".into(), source })?;
        let bytes = host.host_bytes().map_err(|source| RuntimeError::Buffer { entry: "cuda".into(), source })?;
        let (mut s, class) = self.block(bytes.len())?;
        if !bytes.is_empty() {
            self.stream.memcpy_htod(bytes, &mut s).map_err(device_error)?;
        }
        Ok(self.mem(s, class))
    }

    /// `buf`'s memory when it already lives on this GPU.
    fn resident(&self, buf: &Buffer) -> Option<Arc<Mem>> {
        located(buf).filter(|(p, _)| p.ordinal == self.ordinal).map(|(_, m)| m)
    }

    /// `mem` as a buffer of type `ty` on this GPU.
    pub fn buffer(&self, mem: Arc<Mem>, ty: &TensorType) -> Result<Buffer, RuntimeError> {
        let len = quabla_dialect::size::byte_len(&ty.shape, ty.dtype.size()).map_err(device_error)?;
        let storage = Arc::new(CudaStorage { slice: mem, len, place: self.clone() });
        Buffer::from_device(ty.clone(), storage).map_err(|source| RuntimeError::Buffer { entry: "cuda".into(), source })
    }
}

/// A CUDA device buffer's GPU and memory (`None` for host buffers and other devices').
pub(crate) fn located(buf: &Buffer) -> Option<(Place, Arc<Mem>)> {
    let Storage::Device(d) = buf.storage() else { return None };
    let c = d.as_any()?.downcast_ref::<CudaStorage>()?;
    Some((c.place.clone(), c.slice.clone()))
}

/// Owns the MLIR context used for compilation.
struct Ctx(Context);
// SAFETY: only touched while `CudaExecutor::mlir`'s mutex is held; MLIR contexts have no
// thread affinity.
unsafe impl Send for Ctx {}

/// Compiles for and runs on one CUDA GPU (`cuda:N`).
pub struct CudaExecutor {
    ordinal: usize,
    mlir: Mutex<Ctx>,
    gpu: OnceLock<Result<Gpu, String>>,
}

impl Default for CudaExecutor {
    fn default() -> Self {
        CudaExecutor::new()
    }
}

fn device_error(e: impl std::fmt::Display) -> RuntimeError {
    RuntimeError::Device { device: "cuda".to_string(), message: e.to_string() }
}

impl CudaExecutor {
    /// An executor for the first GPU (opened on first compile, after [`probe`]).
    pub fn new() -> Self {
        CudaExecutor::on(0)
    }

    /// An executor for GPU `ordinal`.
    pub fn on(ordinal: usize) -> Self {
        CudaExecutor { ordinal, mlir: Mutex::new(Ctx(new_context())), gpu: OnceLock::new() }
    }

    fn gpu(&self) -> Result<&Gpu, RuntimeError> {
        probe().map_err(|reason| RuntimeError::UnavailableDevice { name: "cuda".into(), reason })?;
        if self.ordinal >= device_count() {
            return Err(RuntimeError::UnavailableDevice { name: device_name(self.ordinal).into(), reason: "this machine has fewer GPUs" });
        }
        self.gpu
            .get_or_init(|| {
                let ctx = CudaContext::new(self.ordinal).map_err(|e| e.to_string())?;
                let (major, minor) = ctx.compute_capability().map_err(|e| e.to_string())?;
                let total = ctx.total_mem().map_err(|e| e.to_string())?;
                let place = Place { stream: ctx.default_stream(), pool: Arc::new(Pool::new(cache_limit(total))), ordinal: self.ordinal };
                Ok(Gpu { ctx, arch: format!("sm_{major}{minor}"), place })
            })
            .as_ref()
            .map_err(device_error)
    }

    /// Frees the cached blocks of this GPU's pool (`qb.release_memory`); nothing when the GPU
    /// was never opened.
    pub fn release_memory(&self) {
        if let Some(Ok(gpu)) = self.gpu.get() {
            drop(gpu.place.pool.clear());
        }
    }
}

impl Executor for CudaExecutor {
    fn name(&self) -> &str {
        "cuda"
    }

    /// A device copy of `buf` (the buffer itself when it already lives on this GPU).
    fn put(&self, buf: &Buffer) -> Result<Buffer, RuntimeError> {
        let place = &self.gpu()?.place;
        if place.resident(buf).is_some() {
            return Ok(buf.clone());
        }
        place.buffer(place.upload(buf)?, buf.ty())
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
    /// The GPU it runs on (its stream, its buffers' pool).
    place: Place,
    /// cuBLAS on the GPU's stream, when the plan has products (TF32 off: cuBLAS's default math mode).
    blas: Option<Mutex<cudarc::cublas::CudaBlas>>,
    plan: CudaProgram,
    functions: Vec<CudaFunction>,
    /// Device copies of the plan's constant buffers, with their slots.
    consts: Vec<(usize, Arc<Mem>)>,
    inputs: Vec<TensorType>,
    outputs: Vec<TensorType>,
}

impl CudaExecutable {
    fn load(gpu: &Gpu, plan: CudaProgram, inputs: Vec<TensorType>, outputs: Vec<TensorType>) -> Result<Self, RuntimeError> {
        // One module per program (the kernels share it): each module's PTX loaded once.
        let mut modules: Vec<(&str, Arc<cudarc::driver::CudaModule>)> = Vec::new();
        let mut functions = Vec::with_capacity(plan.kernels.len());
        for k in &plan.kernels {
            let module = match modules.iter().find(|(name, _)| *name == k.module) {
                Some((_, m)) => m.clone(),
                None => {
                    let m = gpu.ctx.load_module(Ptx::from_src(k.ptx.to_string())).map_err(|e| device_error(format!("loading the PTX of @{}: {e}", k.module)))?;
                    modules.push((&k.module, m.clone()));
                    m
                }
            };
            functions.push(module.load_function(&k.func).map_err(device_error)?);
        }
        let mut consts = Vec::with_capacity(plan.plan.consts.len());
        for c in &plan.plan.consts {
            let slice = gpu.place.stream.clone_htod(&c.bytes).map_err(device_error)?;
            consts.push((c.slot, Arc::new(Mem { slice: Some(slice), class: 0, pool: None })));
        }
        if plan.plan.params != inputs.len() + outputs.len() {
            return Err(RuntimeError::Compile(format!("the CUDA host plan takes {} buffers, the function {} inputs and {} outputs", plan.plan.params, inputs.len(), outputs.len())));
        }
        let blas = match plan.plan.gemms().next() {
            Some(_) => Some(Mutex::new(cudarc::cublas::CudaBlas::new(gpu.place.stream.clone()).map_err(device_error)?)),
            None => None,
        };
        Ok(CudaExecutable { place: gpu.place.clone(), blas, plan, functions, consts, inputs, outputs })
    }
}

/// A device buffer of the CUDA executor.
pub struct CudaStorage {
    /// At least one byte (a zero-size tensor still gets an allocation).
    slice: Arc<Mem>,
    /// The tensor's byte size.
    len: usize,
    place: Place,
}

impl DeviceStorage for CudaStorage {
    fn device(&self) -> &str {
        self.place.name()
    }
    fn byte_len(&self) -> usize {
        self.len
    }
    fn copy_to_host(&self, dst: &mut [u8]) -> Result<(), String> {
        if self.len == 0 {
            return Ok(());
        }
        let stream = &self.place.stream;
        stream.memcpy_dtoh(&self.slice.slice(..self.len), dst).map_err(|e| e.to_string())?;
        stream.synchronize().map_err(|e| e.to_string())
    }
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

/// A kernel argument by value.
enum Val {
    B1(u8),
    B2(u16),
    B4(u32),
    B8(u64),
}

fn scalar(bytes: &[u8]) -> Result<Val, RuntimeError> {
    Ok(match bytes.len() {
        1 => Val::B1(bytes[0]),
        2 => Val::B2(u16::from_le_bytes(bytes.try_into().expect("2 bytes"))),
        4 => Val::B4(u32::from_le_bytes(bytes.try_into().expect("4 bytes"))),
        8 => Val::B8(u64::from_le_bytes(bytes.try_into().expect("8 bytes"))),
        n => return Err(RuntimeError::Compile(format!("a kernel scalar of {n} bytes"))),
    })
}

/// The value of a host-plan slot during a call.
#[derive(Clone)]
enum Slot {
    Buffer(Arc<Mem>),
    Scalar(Scalar),
}

/// The slots of one call of a host plan.
struct Frame {
    slots: Vec<Option<Slot>>,
}

fn plan_error(message: String) -> RuntimeError {
    RuntimeError::Device { device: "cuda".to_string(), message }
}

impl Frame {
    fn get(&self, s: usize) -> Result<&Slot, RuntimeError> {
        self.slots.get(s).and_then(|v| v.as_ref()).ok_or_else(|| plan_error(format!("host plan: slot b{s} read before it was set")))
    }

    fn set(&mut self, s: usize, v: Slot) -> Result<(), RuntimeError> {
        let slot = self.slots.get_mut(s).ok_or_else(|| plan_error(format!("host plan: no slot b{s}")))?;
        *slot = Some(v);
        Ok(())
    }

    fn value(&self, o: &Operand) -> Result<Slot, RuntimeError> {
        match o {
            Operand::Const(c) => Ok(Slot::Scalar(*c)),
            Operand::Slot(s) => self.get(*s).cloned(),
        }
    }

    fn scalar(&self, o: &Operand) -> Result<Scalar, RuntimeError> {
        match self.value(o)? {
            Slot::Scalar(c) => Ok(c),
            Slot::Buffer(_) => Err(plan_error("host plan: a buffer where a scalar was expected".into())),
        }
    }

    fn buffer(&self, s: usize) -> Result<&Arc<Mem>, RuntimeError> {
        match self.get(s)? {
            Slot::Buffer(b) => Ok(b),
            Slot::Scalar(_) => Err(plan_error(format!("host plan: slot b{s} is a scalar where a buffer was expected"))),
        }
    }

    /// Binds `dst` to the values of `src`, all read before any is written.
    fn bind(&mut self, dst: &[usize], src: &[Operand]) -> Result<(), RuntimeError> {
        if dst.len() != src.len() {
            return Err(plan_error(format!("host plan: {} values bound to {} slots", src.len(), dst.len())));
        }
        let vals = src.iter().map(|o| self.value(o)).collect::<Result<Vec<_>, _>>()?;
        for (d, v) in dst.iter().zip(vals) {
            self.set(*d, v)?;
        }
        Ok(())
    }
}

impl CudaExecutable {
    /// `c += a @ b` for row-major operands: in cuBLAS's column-major terms `c^T = b^T a^T`,
    /// i.e. gemm(N, N, n, m, k, b, ldb = n, a, lda = k, beta = 1, c, ldc = n).
    fn gemm(&self, g: &Gemm, frame: &Frame) -> Result<(), RuntimeError> {
        use cudarc::cublas::{result, sys};
        let ptr = |s: usize| frame.buffer(s).map(|b| b.device_ptr(&self.place.stream).0);
        let (pa, pb, pc) = (ptr(g.a)?, ptr(g.b)?, ptr(g.c)?);
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
                result::dgemm_strided_batched(h, nn, nn, n, m, k, &one, pb as *const f64, n, sb, pa as *const f64, k, sa, &beta, pc as *mut f64, n, sc, batch)
            } else {
                let (one, beta) = (1.0f32, 1.0f32);
                result::sgemm_strided_batched(h, nn, nn, n, m, k, &one, pb as *const f32, n, sb, pa as *const f32, k, sa, &beta, pc as *mut f32, n, sc, batch)
            }
        };
        r.map_err(|e| device_error(format!("cuBLAS gemm: {e:?}")))
    }

    /// Runs `steps` of the host plan (see `quabla_lowering::cuda::host` for their semantics).
    fn exec(&self, steps: &[Step], frame: &mut Frame) -> Result<(), RuntimeError> {
        let stream = &self.place.stream;
        for step in steps {
            match step {
                Step::Launch(l) => {
                    let mut vals = Vec::with_capacity(l.args.len());
                    for a in &l.args {
                        vals.push(match frame.value(a)? {
                            Slot::Buffer(b) => Val::B8(b.device_ptr(stream).0),
                            Slot::Scalar(c) => scalar(&c.to_bytes())?,
                        });
                    }
                    let mut b = stream.launch_builder(&self.functions[l.kernel]);
                    for v in &vals {
                        match v {
                            Val::B1(x) => b.arg(x),
                            Val::B2(x) => b.arg(x),
                            Val::B4(x) => b.arg(x),
                            Val::B8(x) => b.arg(x),
                        };
                    }
                    let cfg = LaunchConfig { grid_dim: (l.grid[0], l.grid[1], l.grid[2]), block_dim: (l.block[0], l.block[1], l.block[2]), shared_mem_bytes: 0 };
                    // SAFETY: the arguments follow the kernel's bare-pointer signature as the host
                    // plan read it from the launch; every pointer is a live buffer of this call.
                    unsafe { b.launch(cfg) }.map_err(device_error)?;
                }
                Step::Gemm(g) => self.gemm(g, frame)?,
                Step::Alloc { dst, bytes } => frame.set(*dst, Slot::Buffer(self.place.zeroed(*bytes)?))?,
                Step::Load { dst, buf, offset, ty } => {
                    let b = frame.buffer(*buf)?;
                    let mut bytes = vec![0u8; ty.bytes()];
                    if offset + bytes.len() > b.len() {
                        return Err(plan_error(format!("host plan: a load of {} bytes at {offset} from a buffer of {}", bytes.len(), b.len())));
                    }
                    let src = b.device_ptr(stream).0 + *offset as u64;
                    // SAFETY: `src` lies inside the live buffer `b` (checked above); the copy is
                    // ordered after the stream's work and awaited before `bytes` is read.
                    unsafe { cudarc::driver::result::memcpy_dtoh_async(&mut bytes, src, stream.cu_stream()) }.map_err(device_error)?;
                    stream.synchronize().map_err(device_error)?;
                    frame.set(*dst, Slot::Scalar(Scalar::from_bytes(*ty, &bytes)))?;
                }
                Step::Store { buf, offset, value } => {
                    let bytes = frame.scalar(value)?.to_bytes();
                    let b = frame.buffer(*buf)?;
                    if offset + bytes.len() > b.len() {
                        return Err(plan_error(format!("host plan: a store of {} bytes at {offset} into a buffer of {}", bytes.len(), b.len())));
                    }
                    let dst = b.device_ptr(stream).0 + *offset as u64;
                    // SAFETY: `dst` lies inside the live buffer `b`; the host bytes stay alive
                    // until the stream has copied them (synchronised below).
                    unsafe { cudarc::driver::result::memcpy_htod_async(dst, &bytes, stream.cu_stream()) }.map_err(device_error)?;
                    stream.synchronize().map_err(device_error)?;
                }
                Step::Arith { dst, op, ty, args } => {
                    let vals = args.iter().map(|a| frame.scalar(a)).collect::<Result<Vec<_>, _>>()?;
                    let v = target::host::eval(*op, *ty, &vals).map_err(plan_error)?;
                    frame.set(*dst, Slot::Scalar(v))?;
                }
                Step::For { lb, ub, step: st, iv, inits, args, body, yields, results } => {
                    let (lb, ub, st) = (frame.scalar(lb)?, frame.scalar(ub)?, frame.scalar(st)?);
                    if st.signed() <= 0 {
                        return Err(plan_error(format!("host plan: a loop step of {}", st.signed())));
                    }
                    frame.bind(args, inits)?;
                    let mut i = lb.signed();
                    while i < ub.signed() {
                        frame.set(*iv, Slot::Scalar(Scalar::int(lb.ty, i)))?;
                        self.exec(body, frame)?;
                        frame.bind(args, yields)?;
                        i = match i.checked_add(st.signed()) {
                            Some(n) => n,
                            None => break,
                        };
                    }
                    let finals: Vec<Operand> = args.iter().map(|a| Operand::Slot(*a)).collect();
                    frame.bind(results, &finals)?;
                }
                Step::While { inits, before_args, before, cond, forward, after_args, after, yields, results } => {
                    frame.bind(before_args, inits)?;
                    loop {
                        self.exec(before, frame)?;
                        if !frame.scalar(cond)?.truth() {
                            frame.bind(results, forward)?;
                            break;
                        }
                        frame.bind(after_args, forward)?;
                        self.exec(after, frame)?;
                        frame.bind(before_args, yields)?;
                    }
                }
                Step::Branch { on, cases, arms, results } => {
                    let v = frame.scalar(on)?.signed();
                    let k = cases.iter().position(|c| *c == v).unwrap_or(cases.len());
                    let arm = arms.get(k).ok_or_else(|| plan_error(format!("host plan: branch arm {k} of {}", arms.len())))?;
                    self.exec(&arm.steps, frame)?;
                    frame.bind(results, &arm.yields)?;
                }
                Step::Callback { buf, ty, callback, index, count, batched } => {
                    let b = frame.buffer(*buf)?;
                    let len = quabla_dialect::size::byte_len(&ty.shape, ty.dtype.size()).map_err(device_error)?;
                    let mut bytes = vec![0u8; len];
                    if len > 0 {
                        stream.memcpy_dtoh(&b.slice(..len), &mut bytes).map_err(device_error)?;
                        stream.synchronize().map_err(device_error)?;
                    }
                    let value = Buffer::from_bytes(ty.clone(), &bytes).map_err(plan_error)?;
                    quabla_interp::callback::deliver(*callback, *index, *count, quabla_interp::callback::Arg { value, batched: batched.clone() });
                }
            }
        }
        Ok(())
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
        let n_in = self.inputs.len();
        let mut frame = Frame { slots: vec![None; self.plan.plan.slots] };
        for (k, buf) in inputs.iter().enumerate() {
            let mem = match self.place.resident(buf) {
                Some(m) => m,
                None => self.place.upload(buf)?,
            };
            frame.set(k, Slot::Buffer(mem))?;
        }
        for (j, ty) in self.outputs.iter().enumerate() {
            let bytes = quabla_dialect::size::byte_len(&ty.shape, ty.dtype.size()).map_err(device_error)?;
            frame.set(n_in + j, Slot::Buffer(self.place.zeroed(bytes)?))?;
        }
        for (slot, c) in &self.consts {
            frame.set(*slot, Slot::Buffer(c.clone()))?;
        }
        self.exec(&self.plan.plan.steps, &mut frame)?;
        let slices = (0..self.outputs.len()).map(|j| frame.buffer(n_in + j).cloned()).collect::<Result<Vec<_>, _>>()?;
        let mut outs = Vec::with_capacity(self.outputs.len());
        for (j, ty) in self.outputs.iter().enumerate() {
            outs.push(self.place.buffer(slices[j].clone(), ty)?);
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
                    assert_eq!(out.device(), "cuda:0");
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
        assert!(matches!(scalar(&0x1234u16.to_le_bytes()), Ok(Val::B2(0x1234))));
        assert!(scalar(&[0, 0, 0]).is_err());
        assert!(scalar(&[]).is_err());
    }
}

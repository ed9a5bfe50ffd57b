//! The CPU executor: lowers the module with the destination-passing ABI
//! (`convert-quabla-to-linalg{abi=dps}`), runs the upstream pipeline to the LLVM dialect and
//! JIT-compiles it with MLIR's ExecutionEngine. A call fills one memref descriptor per input
//! and output and calls the packed C interface `_mlir__mlir_ciface_<entry>` directly through
//! its function pointer: no symbol lookup, no MLIR on the per-call path.
//!
//! Invariants: the MLIR context is created once per executor and used only under its lock;
//! the JIT'ed code keeps no mutable global state, so the function pointer is called from any
//! thread without locking.
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use melior::ir::operation::{OperationLike, OperationMutLike};
use melior::ir::{BlockLike, Module as MlirModule};
use melior::pass::PassManager;
use melior::utility::parse_pass_pipeline;
use melior::Context;
use quabla_dialect::mlir::new_context;
use quabla_dialect::{DotOp, Module, TensorType};
use quabla_lowering::{lower_for_cpu, CpuOptions};

use crate::buffer::Buffer;
use crate::executor::{check_inputs, CompileOptions, Executable, Executor, RuntimeError};

/// Owns the MLIR context used for compilation.
struct Ctx(Context);
// SAFETY: the context is only touched while `CpuExecutor::ctx`'s mutex is held, so it is never
// used from two threads at once; MLIR contexts have no thread affinity.
unsafe impl Send for Ctx {}

/// Compiles for the host CPU.
pub struct CpuExecutor {
    ctx: Mutex<Ctx>,
}

impl Default for CpuExecutor {
    fn default() -> Self {
        CpuExecutor::new()
    }
}

impl CpuExecutor {
    pub fn new() -> Self {
        CpuExecutor { ctx: Mutex::new(Ctx(new_context())) }
    }

    /// The LLVM-dialect module text the executor would JIT (for `--emit=llvm` and debugging).
    pub fn lower_to_llvm(&self, m: &Module, opts: &CompileOptions) -> Result<String, RuntimeError> {
        let guard = self.ctx.lock().unwrap_or_else(|e| e.into_inner());
        let module = lower_in(&guard.0, m, opts)?;
        Ok(module.as_operation().to_string())
    }
}

/// Runs a closure collecting the context's error diagnostics.
fn with_diagnostics<T>(ctx: &Context, f: impl FnOnce() -> Option<T>) -> Result<T, String> {
    let msgs = std::rc::Rc::new(std::cell::RefCell::new(Vec::<String>::new()));
    let sink = msgs.clone();
    let id = ctx.attach_diagnostic_handler(move |d| {
        sink.borrow_mut().push(format!("{}: {}", d.location(), d));
        true
    });
    let r = f();
    ctx.detach_diagnostic_handler(id);
    let m = msgs.borrow().join("\n");
    r.ok_or(m)
}

/// True when `QUABLA_LOG_COMPILES` is set: each compile prints its phase times to stderr.
fn log_compiles() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("QUABLA_LOG_COMPILES").is_some())
}

/// True when `QUABLA_VERIFY_EACH` is set: the pipeline verifies the IR after every pass.
fn verify_each() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("QUABLA_VERIFY_EACH").is_some())
}

/// `QUABLA_DUMP_IR`: the directory that receives every stage of a compile.
fn dump_dir() -> Option<std::ffi::OsString> {
    std::env::var_os("QUABLA_DUMP_IR")
}

fn lower_in<'c>(ctx: &'c Context, m: &Module, opts: &CompileOptions) -> Result<MlirModule<'c>, RuntimeError> {
    let t0 = std::time::Instant::now();
    let cm = lower_for_cpu(m, &CpuOptions { vectorize: opts.vectorize, transform: false })?;
    let text = &cm.text;
    if let Some(dir) = dump_dir() {
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::fs::write(std::path::Path::new(&dir).join("quabla.mlir"), m.to_mlir());
        let _ = std::fs::write(std::path::Path::new(&dir).join("linalg.mlir"), text);
        let _ = std::fs::write(std::path::Path::new(&dir).join("pipeline.txt"), &cm.pipeline);
    }
    let t1 = std::time::Instant::now();
    let mut t2 = t1;
    let r = with_diagnostics(ctx, || {
        let mut module = MlirModule::parse(ctx, text)?;
        t2 = std::time::Instant::now();
        let pm = PassManager::new(ctx);
        // The input was verified by the parser; upstream passes are not re-verified after
        // each step unless asked (QUABLA_VERIFY_EACH).
        pm.enable_verifier(verify_each());
        if std::env::var("QUABLA_LOG_COMPILES").is_ok_and(|v| v == "passes") {
            unsafe { mlir_sys::mlirPassManagerEnableTiming(pm.to_raw()) };
        }
        parse_pass_pipeline(pm.as_operation_pass_manager(), &cm.pipeline).ok()?;
        if log_compiles() {
            eprintln!("[quabla] pipeline parsed in {:.2} ms", t2.elapsed().as_secs_f64() * 1e3);
        }
        pm.run(&mut module).ok()?;
        Some(module)
    })
    .map_err(RuntimeError::Compile);
    if log_compiles() {
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        eprintln!("[quabla] lower to linalg text {:.2} ms, parse {:.2} ms, upstream pipeline {:.2} ms", ms(t1 - t0), ms(t2 - t1), ms(t2.elapsed()));
    }
    r
}

impl Executor for CpuExecutor {
    fn name(&self) -> &str {
        "cpu"
    }

    fn compile(&self, m: &Module, entry: &str, opts: &CompileOptions) -> Result<Arc<dyn Executable>, RuntimeError> {
        let f = m.func(entry).filter(|f| f.public).ok_or_else(|| RuntimeError::NoEntry(entry.to_string()))?;
        let (inputs, outputs) = (f.param_types(), f.result_types());
        let guard = self.ctx.lock().unwrap_or_else(|e| e.into_inner());
        let ctx = &guard.0;
        let module = lower_in(ctx, m, opts)?;
        let t_jit = std::time::Instant::now();
        let level = effective_opt_level(m, opts.opt_level.min(3));
        let mut module = module;
        if level > 0 && std::env::var_os("QUABLA_NO_HOST_TARGET").is_none() {
            set_host_target(ctx, &mut module);
        }
        if let Some(dir) = dump_dir() {
            let _ = std::fs::write(std::path::Path::new(&dir).join("llvm.mlir"), module.as_operation().to_string());
        }
        // The runner utilities are only loaded when the code calls into them.
        let needs_utils = calls_runtime(&module);
        let engine = with_diagnostics(ctx, || {
            let utils = if needs_utils { runner_utils() } else { &[] };
            let libs: Vec<mlir_sys::MlirStringRef> = utils.iter().map(|p| melior::StringRef::new(&p[..p.len() - 1]).to_raw()).collect();
            let raw = unsafe { mlir_sys::mlirExecutionEngineCreate(module.to_raw(), level as i32, libs.len() as i32, libs.as_ptr(), dump_dir().is_some(), false) };
            (!raw.ptr.is_null()).then_some(raw)
        })
        .map_err(|e| RuntimeError::Compile(format!("the JIT rejected the module: {e}")))?;
        let t_created = std::time::Instant::now();
        let name = format!("_mlir__mlir_ciface_{entry}");
        let sym = unsafe { mlir_sys::mlirExecutionEngineLookup(engine, melior::StringRef::new(&name).to_raw()) };
        if sym.is_null() {
            unsafe { mlir_sys::mlirExecutionEngineDestroy(engine) };
            return Err(RuntimeError::Compile(format!("symbol {name} not found after JIT compilation")));
        }
        if let Some(dir) = dump_dir() {
            // The object code the JIT produced (`objdump -d`), next to the IR stages.
            let path = std::path::Path::new(&dir).join(format!("{entry}.o"));
            let path = path.to_string_lossy();
            unsafe { mlir_sys::mlirExecutionEngineDumpToObjectFile(engine, melior::StringRef::new(&path).to_raw()) };
        }
        if log_compiles() {
            let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
            eprintln!(
                "[quabla] LLVM JIT (O{level}) {:.2} ms for @{entry} (translate + optimize {:.2} ms, codegen + link {:.2} ms{})",
                ms(t_jit.elapsed()),
                ms(t_created - t_jit),
                ms(t_created.elapsed()),
                if needs_utils { ", with runner utils" } else { "" }
            );
        }
        // SAFETY: the packed interface has signature void(void**).
        let func: PackedFn = unsafe { std::mem::transmute::<*mut c_void, PackedFn>(sym) };
        let template = DescTemplate::new(&inputs, &outputs);
        Ok(Arc::new(CpuExecutable { entry: entry.to_string(), inputs, outputs, func, template, engine: Engine(engine) }))
    }
}

/// Programs whose estimated work per call is at most this many element operations are
/// compiled at -O0: their calls take about a microsecond either way, and LLVM's optimizer
/// is most of the compile time. Measured on the README PINN step (f64, 8 points, ~300
/// element operations): first call 25 ms at -O0 against 40 ms at -O2, per call 0.55 us
/// against 0.51 us. The hand-written MLP (examples/mlp.mlir, ~20k element operations) stays
/// at the requested level: -O0 would make each call 16 us instead of 2.1 us.
const SMALL_WORK: i64 = 4096;

/// The LLVM level for `m`: `requested`, or 0 for programs below [`SMALL_WORK`].
fn effective_opt_level(m: &Module, requested: usize) -> usize {
    let mut work = 0i64;
    for f in &m.funcs {
        for o in &f.ops {
            let out: i64 = o.results.iter().map(|r| f.ty(*r).num_elements() as i64).sum();
            // A contraction does K multiply-adds per result element.
            let k = match &o.kind {
                quabla_dialect::OpKind::Dot(DotOp::DotGeneral { dims }) => dims.lhs_contracting_dimensions.iter().map(|&d| f.ty(o.operands[0]).shape[d as usize]).product(),
                _ => 1,
            };
            work = work.saturating_add(out.saturating_mul(k));
        }
    }
    if work <= SMALL_WORK {
        0
    } else {
        requested
    }
}

unsafe extern "C" {
    fn LLVMGetHostCPUName() -> *mut std::ffi::c_char;
    fn LLVMGetHostCPUFeatures() -> *mut std::ffi::c_char;
    fn LLVMDisposeMessage(message: *mut std::ffi::c_char);
}

/// The host CPU and its features as the `target_cpu` and `target_features` attributes of
/// `llvm.func` (MLIR syntax).
fn host_target() -> &'static (String, String) {
    static HOST: std::sync::OnceLock<(String, String)> = std::sync::OnceLock::new();
    HOST.get_or_init(|| {
        // SAFETY: LLVM returns owned C strings, released with LLVMDisposeMessage.
        let take = |p: *mut std::ffi::c_char| {
            let s = unsafe { std::ffi::CStr::from_ptr(p) }.to_string_lossy().into_owned();
            unsafe { LLVMDisposeMessage(p) };
            s
        };
        let cpu = take(unsafe { LLVMGetHostCPUName() });
        let features = take(unsafe { LLVMGetHostCPUFeatures() });
        let mut list: Vec<String> = features.split(',').filter(|f| !f.is_empty()).map(|f| format!("\"{f}\"")).collect();
        // Intel client/server tunings prefer 256-bit vectors; the kernels here are compute
        // bound and run at about twice the speed with 512-bit ones (measured below).
        if features.split(',').any(|f| f == "+avx512f") {
            list.push("\"-prefer-256-bit\"".into());
        }
        (format!("\"{cpu}\""), format!("#llvm.target_features<[{}]>", list.join(", ")))
    })
}

/// Marks every function with the host CPU and its features, without the `prefer-256-bit`
/// tuning that LLVM gives this host (detected as an Intel client core): LLVM's loop
/// vectorizer then uses 512-bit instead of 256-bit vectors. Measured on tanh(2x+1) * exp(-x)
/// over 1e6 f32 (polynomial kernels): 0.97-1.07 ms per call against 1.14-1.23 ms.
/// `QUABLA_NO_HOST_TARGET` skips it (for comparisons).
fn set_host_target(ctx: &Context, module: &mut MlirModule) {
    let (cpu, features) = host_target();
    let (Ok(cpu), Ok(features)) = (melior::ir::Attribute::parse(ctx, cpu).ok_or(()), melior::ir::Attribute::parse(ctx, features).ok_or(())) else {
        if log_compiles() {
            eprintln!("[quabla] cannot parse the host target attributes {cpu} / {features}");
        }
        return;
    };
    let body = module.body();
    let mut op = body.first_operation_mut();
    while let Some(mut o) = op {
        if o.name().as_string_ref().as_str() == Ok("llvm.func") {
            o.set_attribute("target_cpu", cpu);
            o.set_attribute("target_features", features);
        }
        op = o.next_in_block_mut();
    }
}

/// Whether the LLVM-dialect module declares a function of the C runner utilities
/// (`memrefCopy`, emitted for copies between non-contiguous memrefs).
fn calls_runtime(module: &MlirModule) -> bool {
    let mut op = module.body().first_operation();
    while let Some(o) = op {
        if let Ok(name) = o.attribute("sym_name") {
            if let Ok(s) = melior::ir::attribute::StringAttribute::try_from(name) {
                if s.value().starts_with("memref") {
                    return true;
                }
            }
        }
        op = o.next_in_block();
    }
    false
}

/// MLIR's C runner utilities (`memrefCopy` for strided copies), loaded into the JIT.
fn runner_utils() -> &'static [String] {
    static LIBS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    LIBS.get_or_init(|| {
        let prefix = std::env::var("QUABLA_LLVM_PREFIX").unwrap_or_else(|_| option_env!("MLIR_SYS_220_PREFIX").unwrap_or("/usr/lib/llvm-22").to_string());
        let p = format!("{prefix}/lib/libmlir_c_runner_utils.so");
        if std::path::Path::new(&p).exists() {
            // The C API reads each path's `data` as a C string: keep a NUL after it.
            vec![p + "\0"]
        } else {
            vec![]
        }
    })
}

type PackedFn = unsafe extern "C" fn(*mut *mut c_void);

struct Engine(mlir_sys::MlirExecutionEngine);
// SAFETY: the engine is only destroyed (in Drop); its compiled code is immutable and reentrant.
unsafe impl Send for Engine {}
unsafe impl Sync for Engine {}
impl Drop for Engine {
    fn drop(&mut self) {
        unsafe { mlir_sys::mlirExecutionEngineDestroy(self.0) }
    }
}

/// The i64 words of every memref descriptor ({alloc, aligned, offset, sizes[r], strides[r]}),
/// with pointer slots left zero: a call copies it and patches the pointers.
struct DescTemplate {
    words: Vec<i64>,
    /// Offset of each descriptor in `words`.
    starts: Vec<usize>,
}

impl DescTemplate {
    fn new(inputs: &[TensorType], outputs: &[TensorType]) -> Self {
        let (mut words, mut starts) = (Vec::new(), Vec::new());
        for t in inputs.iter().chain(outputs) {
            starts.push(words.len());
            words.extend([0, 0, 0]);
            words.extend(&t.shape);
            words.extend(t.strides());
        }
        DescTemplate { words, starts }
    }
}

struct CpuExecutable {
    entry: String,
    inputs: Vec<TensorType>,
    outputs: Vec<TensorType>,
    func: PackedFn,
    template: DescTemplate,
    // Keeps the JIT'ed code alive; dropped after `func` is last usable.
    #[allow(dead_code)]
    engine: Engine,
}

impl CpuExecutable {
    /// [`Executable::run`] with device-resident inputs: the JIT'ed code reads host memory, so
    /// they are copied to the host first (off the per-call path of host inputs).
    #[cold]
    #[inline(never)]
    fn run_staged(&self, inputs: &[&Buffer]) -> Result<Vec<Buffer>, RuntimeError> {
        let staged = inputs.iter().map(|b| b.to_host()).collect::<Result<Vec<Buffer>, _>>().map_err(|source| RuntimeError::Buffer { entry: self.entry.clone(), source })?;
        self.run(&staged.iter().collect::<Vec<_>>())
    }
}

impl Executable for CpuExecutable {
    fn input_types(&self) -> &[TensorType] {
        &self.inputs
    }

    fn output_types(&self) -> &[TensorType] {
        &self.outputs
    }

    fn run(&self, inputs: &[&Buffer]) -> Result<Vec<Buffer>, RuntimeError> {
        check_inputs(&self.entry, &self.inputs, inputs)?;
        let mut outs: Vec<Buffer> = self.outputs.iter().map(|t| Buffer::zeros(t.clone())).collect();
        let mut words = self.template.words.clone();
        let n_in = inputs.len();
        for (k, &start) in self.template.starts.iter().enumerate() {
            let p = if k < n_in { inputs[k].as_ptr() as i64 } else { outs[k - n_in].bytes_mut().expect("fresh output").as_mut_ptr() as i64 };
            if p == 0 {
                // Only a device-resident input has no host pointer.
                return self.run_staged(inputs);
            }
            words[start] = p;
            words[start + 1] = p;
        }
        let base = words.as_mut_ptr();
        let mut desc_ptrs: Vec<*mut c_void> = self.template.starts.iter().map(|&s| unsafe { base.add(s) } as *mut c_void).collect();
        let mut args: Vec<*mut c_void> = desc_ptrs.iter_mut().map(|p| p as *mut *mut c_void as *mut c_void).collect();
        // SAFETY: each argument points at a pointer to a descriptor matching the compiled
        // signature (types checked above); inputs are only read (bufferization.writable =
        // false) and outputs are unique, correctly sized buffers.
        unsafe { (self.func)(args.as_mut_ptr()) };
        drop(desc_ptrs);
        Ok(outs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::DeviceStorage;
    use quabla_dialect::{BinaryOp, DType, ElementwiseOp, Func, OpKind};

    /// Device bytes kept in a `Vec` (exercises the storage seam, not an executor); with
    /// `fail`, copies to the host fail.
    struct TestDevice(Vec<u8>, bool);

    impl DeviceStorage for TestDevice {
        fn device(&self) -> &str {
            "test:0"
        }
        fn byte_len(&self) -> usize {
            self.0.len()
        }
        fn copy_to_host(&self, dst: &mut [u8]) -> Result<(), String> {
            if self.1 {
                return Err("device lost".into());
            }
            dst.copy_from_slice(&self.0);
            Ok(())
        }
    }

    #[test]
    fn device_inputs_are_copied_to_the_host() {
        let t = TensorType::new(DType::F32, [3]);
        let mut f = Func::new("main", &[t.clone(), t.clone()]);
        let (x, y) = (f.params[0], f.params[1]);
        f.outputs = vec![f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), &[x, y], None).unwrap()];
        let exe = CpuExecutor::new().compile(&Module { funcs: vec![f] }, "main", &CompileOptions::default()).unwrap();
        let h = Buffer::from_slice(&[3], &[1.0f32, 2.0, 3.0]).unwrap();
        let bytes = [2.0f32, -1.0, 0.5].iter().flat_map(|v| v.to_le_bytes()).collect();
        let d = Buffer::from_device(t.clone(), Arc::new(TestDevice(bytes, false))).unwrap();
        let out = exe.run(&[&h, &d]).unwrap();
        assert!(out[0].is_host());
        assert_eq!(out[0].as_slice::<f32>().unwrap(), &[2.0, -2.0, 1.5]);
        let lost = Buffer::from_device(t, Arc::new(TestDevice(vec![0; 12], true))).unwrap();
        let e = exe.run(&[&lost, &h]).unwrap_err().to_string();
        assert!(e.contains("main") && e.contains("test:0") && e.contains("device lost"), "{e}");
    }
}

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

use melior::ir::Module as MlirModule;
use melior::pass::PassManager;
use melior::utility::parse_pass_pipeline;
use melior::Context;
use quabla_dialect::mlir::new_context;
use quabla_dialect::{Module, TensorType};
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

fn lower_in<'c>(ctx: &'c Context, m: &Module, opts: &CompileOptions) -> Result<MlirModule<'c>, RuntimeError> {
    let t0 = std::time::Instant::now();
    let cm = lower_for_cpu(m, &CpuOptions { vectorize: opts.vectorize, transform: false }).map_err(|e| RuntimeError::Lower(e.to_string()))?;
    let text = &cm.text;
    if let Some(dir) = std::env::var_os("QUABLA_DUMP_IR") {
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::fs::write(std::path::Path::new(&dir).join("quabla.mlir"), m.to_mlir());
        let _ = std::fs::write(std::path::Path::new(&dir).join("linalg.mlir"), text);
        let _ = std::fs::write(std::path::Path::new(&dir).join("pipeline.txt"), &cm.pipeline);
    }
    let t1 = std::time::Instant::now();
    let r = with_diagnostics(ctx, || {
        let mut module = MlirModule::parse(ctx, text)?;
        let pm = PassManager::new(ctx);
        parse_pass_pipeline(pm.as_operation_pass_manager(), &cm.pipeline).ok()?;
        pm.run(&mut module).ok()?;
        Some(module)
    })
    .map_err(RuntimeError::Compile);
    if log_compiles() {
        eprintln!("[quabla] lower to linalg text {:.2} ms, parse + upstream pipeline {:.2} ms", (t1 - t0).as_secs_f64() * 1e3, t1.elapsed().as_secs_f64() * 1e3);
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
        let engine = with_diagnostics(ctx, || {
            let libs: Vec<mlir_sys::MlirStringRef> = runner_utils().iter().map(|p| melior::StringRef::new(&p[..p.len() - 1]).to_raw()).collect();
            let raw = unsafe { mlir_sys::mlirExecutionEngineCreate(module.to_raw(), opts.opt_level.min(3) as i32, libs.len() as i32, libs.as_ptr(), false, false) };
            (!raw.ptr.is_null()).then_some(raw)
        })
        .map_err(|e| RuntimeError::Compile(format!("the JIT rejected the module: {e}")))?;
        let name = format!("_mlir__mlir_ciface_{entry}");
        let sym = unsafe { mlir_sys::mlirExecutionEngineLookup(engine, melior::StringRef::new(&name).to_raw()) };
        if sym.is_null() {
            unsafe { mlir_sys::mlirExecutionEngineDestroy(engine) };
            return Err(RuntimeError::Compile(format!("symbol {name} not found after JIT compilation")));
        }
        if log_compiles() {
            eprintln!("[quabla] LLVM JIT (O{}) {:.2} ms for @{entry}", opts.opt_level.min(3), t_jit.elapsed().as_secs_f64() * 1e3);
        }
        // SAFETY: the packed interface has signature void(void**).
        let func: PackedFn = unsafe { std::mem::transmute::<*mut c_void, PackedFn>(sym) };
        let template = DescTemplate::new(&inputs, &outputs);
        Ok(Arc::new(CpuExecutable { entry: entry.to_string(), inputs, outputs, func, template, engine: Engine(engine) }))
    }
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

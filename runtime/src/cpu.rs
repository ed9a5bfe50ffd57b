//! The CPU executor: lowers the module with the destination-passing ABI
//! (`convert-quabla-to-linalg{abi=dps}`), runs the upstream pipeline to the LLVM dialect and
//! compiles it to an object (`crate::llvm_compile`; MLIR's ExecutionEngine only behind
//! `QUABLA_LLVM_ENGINE=1`), linked in an ORC JIT (csrc/objload.c). A call fills one memref descriptor per input
//! and output and calls the packed C interface `_mlir__mlir_ciface_<entry>` directly through
//! its function pointer: no symbol lookup, no MLIR on the per-call path.
//!
//! Invariants: the MLIR context is created once per executor and used only under its lock;
//! the JIT'ed code keeps no mutable global state, so the function pointer is called from any
//! thread without locking.
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use melior::ir::operation::{OperationLike, OperationMutLike};
use melior::ir::{BlockLike, Module as MlirModule, RegionLike};
use melior::pass::PassManager;
use melior::utility::parse_pass_pipeline;
use melior::Context;
use quabla_dialect::mlir::new_context;
use quabla_dialect::{DotOp, Module, TensorType};
use quabla_lowering::target::with_diagnostics;
use quabla_lowering::{lower_for_cpu, CpuModule, CpuOptions};

use crate::llvm_compile::{Levels, Work};
use crate::objcache;
use crate::parallel::{tag_loops, threads_for};

use crate::buffer::Buffer;
use crate::executor::{check_inputs, CompileOptions, Executable, Executor, RuntimeError};

/// Owns the MLIR context used for compilation and the pass managers parsed in it.
struct Ctx(Context, PassManagers);
// SAFETY: the context (and its pass managers) is only touched while `CpuExecutor::ctx`'s mutex
// is held, so it is never used from two threads at once; MLIR contexts have no thread affinity.
unsafe impl Send for Ctx {}

impl Drop for Ctx {
    fn drop(&mut self) {
        // The pass managers before the context they were created in.
        self.1 .0.borrow_mut().clear();
    }
}

/// The pass managers of the pipelines compiled so far, by pipeline text: a compile reuses the
/// one parsed for its text, so its passes are built once and MLIR initializes them once (the
/// canonicalizers' pattern sets over all loaded dialects, the conversions' option parsing):
/// `PassManager::run` re-initializes only when the pipeline or the context's dialects
/// changed. Bounded: past [`PassManagers::MAX`] texts the oldest goes. Not used while
/// `QUABLA_LOG_COMPILES=passes` times the passes (timing is set up per manager) nor with
/// `QUABLA_NO_PASS_CACHE` set (every compile parses and initializes its pipeline afresh).
#[derive(Default)]
struct PassManagers(std::cell::RefCell<std::collections::VecDeque<(String, PassManager<'static>)>>);

impl PassManagers {
    const MAX: usize = 16;

    /// Runs `pipeline` on `module`, with the cached manager of that text or a new one (cached
    /// once it ran: a failed run leaves no manager behind).
    fn run(&self, ctx: &Context, pipeline: &str, module: &mut MlirModule) -> Option<()> {
        let timed = std::env::var("QUABLA_LOG_COMPILES").is_ok_and(|v| v == "passes");
        let keep = !timed && std::env::var_os("QUABLA_NO_PASS_CACHE").is_none();
        let cached = if keep { self.0.borrow().iter().position(|(t, _)| t == pipeline) } else { None };
        let pm = match cached {
            Some(k) => self.0.borrow_mut().remove(k).map(|(_, pm)| pm)?,
            None => {
                let (t, pm) = (std::time::Instant::now(), PassManager::new(ctx));
                // The input was verified by the parser; upstream passes are not re-verified
                // after each step unless asked (QUABLA_VERIFY_EACH).
                pm.enable_verifier(verify_each());
                if timed {
                    unsafe { mlir_sys::mlirPassManagerEnableTiming(pm.to_raw()) };
                }
                parse_pass_pipeline(pm.as_operation_pass_manager(), pipeline).ok()?;
                if log_compiles() {
                    eprintln!("[quabla] pipeline parsed in {:.2} ms ({} bytes of text)", t.elapsed().as_secs_f64() * 1e3, pipeline.len());
                }
                // SAFETY: only the lifetime changes; the manager is dropped before the context
                // (`Drop for Ctx`) and only used with it.
                unsafe { std::mem::transmute::<PassManager<'_>, PassManager<'static>>(pm) }
            }
        };
        pm.run(module).ok()?;
        if keep {
            let mut q = self.0.borrow_mut();
            if q.len() >= Self::MAX {
                q.pop_front();
            }
            q.push_back((pipeline.to_string(), pm));
        }
        Some(())
    }
}

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
        static LIMIT: std::sync::Once = std::sync::Once::new();
        // Compiled code allocates only temporaries of program types (each within the tensor
        // byte limit); 64 KiB of slack covers the memref lowering's alignment padding.
        // SAFETY: sets a plain global read by quabla_rt_malloc.
        LIMIT.call_once(|| unsafe { quabla_rt_set_limit(quabla_dialect::size::max_bytes().saturating_add(1 << 16)) });
        tune_malloc();
        CpuExecutor { ctx: Mutex::new(Ctx(new_context(), PassManagers::default())) }
    }

    /// The LLVM-dialect module text the executor would JIT (for `--emit=llvm` and debugging).
    pub fn lower_to_llvm(&self, m: &Module, opts: &CompileOptions) -> Result<String, RuntimeError> {
        let guard = self.ctx.lock().unwrap_or_else(|e| e.into_inner());
        let module = lower_in(&guard, m, opts)?;
        Ok(module.as_operation().to_string())
    }

    /// The text of `m` lowered to linalg, fused and tagged for the transform script (loops
    /// flattened, split, marked): the stage `QUABLA_DUMP_IR` writes as tagged.mlir. For tests.
    pub fn lower_tagged(&self, m: &Module, opts: &CompileOptions) -> Result<String, RuntimeError> {
        let guard = self.ctx.lock().unwrap_or_else(|e| e.into_inner());
        let (cm, _) = lower_text(m, opts)?;
        let module = to_llvm_until(&guard, &cm, true)?;
        Ok(module.as_operation().to_string())
    }
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

/// The CPU time of the process so far, in ms (all threads: MLIR may run passes on a pool), for
/// the phase log of `QUABLA_LOG_COMPILES` (wall times mislead on a loaded machine).
pub fn cpu_ms() -> f64 {
    #[repr(C)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }
    unsafe extern "C" {
        fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
    }
    const CLOCK_PROCESS_CPUTIME_ID: i32 = 2;
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: a plain out-parameter.
    unsafe { clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.sec as f64 * 1e3 + ts.nsec as f64 * 1e-6
}

/// `QUABLA_DUMP_IR`: the directory that receives every stage of a compile.
fn dump_dir() -> Option<std::ffi::OsString> {
    std::env::var_os("QUABLA_DUMP_IR")
}

/// The chunk size of long functions: functions of more than this many quabla ops (nested
/// ops included) are outlined into private functions of at most this many ops, called in
/// sequence (`quabla_passes::outline`), before the linalg lowering. Empty-tensor
/// elimination, one-shot bufferization and LLVM's optimizer and code generator grow faster
/// than linearly in the size of one function; bounded functions keep the compile time of
/// long programs linear in their length (bench/compile_time.py). `QUABLA_OUTLINE_OPS=N`
/// sets the size (0: never outline).
fn outline_ops() -> usize {
    static N: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *N.get_or_init(|| std::env::var("QUABLA_OUTLINE_OPS").ok().and_then(|v| v.parse().ok()).unwrap_or(quabla_passes::outline::DEFAULT_MAX_OPS))
}

/// `m` with its long functions outlined into chunks (see [`outline_ops`]), and the chunks' names.
fn outline_long(m: &Module) -> (std::borrow::Cow<'_, Module>, Vec<String>) {
    let n = outline_ops();
    if n == 0 || m.funcs.iter().all(|f| quabla_passes::outline::func_weight(f) <= n) {
        return (std::borrow::Cow::Borrowed(m), vec![]);
    }
    let mut o = m.clone();
    let names = quabla_passes::outline::outline(&mut o, n);
    (std::borrow::Cow::Owned(o), names)
}

/// Marks the outlined chunks `noinline`: LLVM's inliner would otherwise put each single-call
/// chunk back into its caller and rebuild the long function.
fn keep_outlined(ctx: &Context, module: &mut MlirModule, chunks: &[String]) {
    if chunks.is_empty() {
        return;
    }
    let names: std::collections::HashSet<&str> = chunks.iter().map(String::as_str).collect();
    let Some(noinline) = melior::ir::Attribute::parse(ctx, "[\"noinline\"]") else {
        return;
    };
    let body = module.body();
    let mut op = body.first_operation_mut();
    while let Some(mut o) = op {
        let named = o.attribute("sym_name").ok().and_then(|a| melior::ir::attribute::StringAttribute::try_from(a).ok()).is_some_and(|s| names.contains(s.value()));
        if named && o.name().as_string_ref().as_str() == Ok("llvm.func") {
            o.set_attribute("passthrough", noinline);
        }
        op = o.next_in_block_mut();
    }
}

/// The linalg-level text and upstream pipeline of `m` (Quabla's own lowering; no MLIR yet),
/// and the names of the chunks long functions were outlined into.
fn lower_text(m: &Module, opts: &CompileOptions) -> Result<(CpuModule, Vec<String>), RuntimeError> {
    let (t0, c0) = (std::time::Instant::now(), cpu_ms());
    let (m, chunks) = outline_long(m);
    let m = m.as_ref();
    let cm = lower_for_cpu(m, &CpuOptions { vectorize: opts.vectorize, transform: false, threads: threads_for(opts) as i64, runtime_gemm: opts.runtime_gemm })?;
    if let Some(dir) = dump_dir() {
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::fs::write(std::path::Path::new(&dir).join("quabla.mlir"), m.to_mlir());
        let _ = std::fs::write(std::path::Path::new(&dir).join("linalg.mlir"), &cm.text);
        let _ = std::fs::write(std::path::Path::new(&dir).join("pipeline.txt"), &cm.pipeline);
    }
    if log_compiles() {
        eprintln!("[quabla] lower to linalg text {:.2} ms, cpu {:.2} ms ({} chunk functions)", t0.elapsed().as_secs_f64() * 1e3, cpu_ms() - c0, chunks.len());
    }
    Ok((cm, chunks))
}

fn lower_in<'c>(ctx: &'c Ctx, m: &Module, opts: &CompileOptions) -> Result<MlirModule<'c>, RuntimeError> {
    let (cm, chunks) = lower_text(m, opts)?;
    let mut module = to_llvm(ctx, &cm)?;
    keep_outlined(&ctx.0, &mut module, &chunks);
    Ok(module)
}

/// Parses the linalg text and runs the upstream pipeline to the LLVM dialect, with the pass
/// managers `c` keeps for its pipeline texts.
fn to_llvm<'c>(c: &'c Ctx, cm: &CpuModule) -> Result<MlirModule<'c>, RuntimeError> {
    to_llvm_until(c, cm, false)
}

/// [`to_llvm`], or with `tagged_only` the module after fusion and tagging (what
/// `QUABLA_DUMP_IR` writes as tagged.mlir), before the rest of the pipeline.
fn to_llvm_until<'c>(c: &'c Ctx, cm: &CpuModule, tagged_only: bool) -> Result<MlirModule<'c>, RuntimeError> {
    let ctx = &c.0;
    let (t1, c1) = (std::time::Instant::now(), cpu_ms());
    let (mut t2, mut c2) = (t1, c1);
    let mut bare = Vec::new();
    let r = with_diagnostics(ctx, || {
        let mut module = MlirModule::parse(ctx, &cm.text)?;
        (t2, c2) = (std::time::Instant::now(), cpu_ms());
        let mut pipeline = std::borrow::Cow::Borrowed(&cm.pipeline);
        if let Some(pre) = &cm.tag_pipeline {
            // Fusion first, then the large generics it left are tagged for the script, whose
            // runs are left out where they would match nothing.
            c.1.run(ctx, pre, &mut module)?;
            let tagged = tag_loops(ctx, &mut module, cm.threads);
            let viewed = crate::output_views::outputs_through_reshapes(ctx, &mut module);
            if tagged.rejoined > 0 || viewed > 0 {
                c.1.run(ctx, "builtin.module(eliminate-empty-tensors)", &mut module)?;
            }
            crate::parallel_accesses::read_outputs_in_place(&mut module);
            if tagged.vec == 0 || tagged.par == 0 {
                pipeline = std::borrow::Cow::Owned(cm.pipeline_without(tagged.vec > 0, tagged.par > 0));
            }
            if let Some(dir) = dump_dir() {
                let _ = std::fs::write(std::path::Path::new(&dir).join("tagged.mlir"), module.as_operation().to_string());
            }
        }
        if tagged_only {
            return Some(module);
        }
        bare = crate::entry_abi::bare_entries(ctx, &mut module);
        c.1.run(ctx, &pipeline, &mut module)?;
        crate::bool_memory::widen_bool_accesses(ctx, &mut module);
        // Also moves the lowering's own loop annotations (row loops) onto their back edges.
        crate::parallel_accesses::mark_parallel_loops(ctx, &mut module);
        Some(module)
    })
    .map_err(RuntimeError::Compile)
    .and_then(|mut module| {
        crate::entry_abi::add_descriptor_wrappers(ctx, &mut module, &bare).map_err(RuntimeError::Compile)?;
        Ok(module)
    });
    if log_compiles() {
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        eprintln!("[quabla] parse {:.2} ms (cpu {:.2}), upstream pipeline {:.2} ms (cpu {:.2})", ms(t2 - t1), c2 - c1, ms(t2.elapsed()), cpu_ms() - c2);
    }
    r
}

/// A hash of this crate's sources (build.rs): the object code of the same lowered text,
/// pipeline and LLVM options changes with the executor's rewrites of the lowered module
/// (tagging, flattening, output views) and with csrc/llvm_compile.c, so the compile cache's
/// key holds it and a rebuilt runtime never reads objects of an earlier one.
const RUNTIME_SOURCES: &str = env!("QUABLA_RUNTIME_SOURCES");

/// The persistent cache's key of a compile: everything the object code depends on (see
/// `objcache`).
fn cache_key(cm: &CpuModule, entry: &str, level: usize, levels: Levels, host: bool) -> String {
    let (mut major, mut minor, mut patch) = (0u32, 0u32, 0u32);
    // SAFETY: plain out-parameters.
    unsafe { LLVMGetVersion(&mut major, &mut minor, &mut patch) };
    let llvm = format!("{major}.{minor}.{patch}");
    let (cpu, features) = if host { host_target().clone() } else { (String::new(), String::new()) };
    // How LLVM compiles: levels, pipeline and options (crate::llvm_compile).
    let level = level.to_string();
    // The loops tag_loops splits follow the thread policy, which the text does not show.
    let par = crate::parallel::policy_key(cm);
    let tuned = if engine_path() { "engine".to_string() } else { format!("{}/{}/{}/{}", levels.opt, levels.codegen, levels.pipeline(), crate::llvm_compile::llvm_args()) };
    objcache::key(&[cm.text.as_bytes(), cm.pipeline.as_bytes(), entry.as_bytes(), level.as_bytes(), cpu.as_bytes(), features.as_bytes(), llvm.as_bytes(), env!("CARGO_PKG_VERSION").as_bytes(), RUNTIME_SOURCES.as_bytes(), par.as_bytes(), tuned.as_bytes()])
}

impl Executor for CpuExecutor {
    fn name(&self) -> &str {
        "cpu"
    }

    fn compile(&self, m: &Module, entry: &str, opts: &CompileOptions) -> Result<Arc<dyn Executable>, RuntimeError> {
        let f = m.func(entry).filter(|f| f.public).ok_or_else(|| RuntimeError::NoEntry(entry.to_string()))?;
        let (inputs, outputs) = (f.param_types(), f.result_types());
        let template = DescTemplate::new(&inputs, &outputs);
        let (cm, chunks) = lower_text(m, opts)?;
        let work = program_work(m, opts);
        let level = effective_opt_level(work.total, opts.opt_level.min(3));
        let levels = Levels::of(level, work);
        let host = level > 0 && std::env::var_os("QUABLA_NO_HOST_TARGET").is_none();
        let name = format!("_mlir__mlir_ciface_{entry}");
        // The persistent cache: a hit loads the object without MLIR or LLVM code generation.
        // QUABLA_DUMP_IR wants every stage of a real compile: no cache then.
        let cache = objcache::dir().filter(|_| dump_dir().is_none()).map(|d| {
            let key = cache_key(&cm, entry, level, levels, host);
            (d, key)
        });
        if let Some((dir, key)) = &cache {
            if let Some((flags, objs)) = objcache::load(dir, key) {
                let t = std::time::Instant::now();
                match load_objects(&objs, &name) {
                    Ok((jit, sym)) => {
                        if log_compiles() {
                            eprintln!("[quabla] compile cache hit for @{entry}: object loaded in {:.2} ms ({})", t.elapsed().as_secs_f64() * 1e3, dir.display());
                        }
                        let func: PackedFn = unsafe { std::mem::transmute::<*mut c_void, PackedFn>(sym) };
                        return Ok(Arc::new(CpuExecutable { entry: entry.to_string(), inputs, outputs, func, template, guarded: flags.guarded, flush: opts.flush_denormals, engine: Engine::Orc(jit).counted() }));
                    }
                    Err(e) => {
                        objcache::warn(&format!("the loader rejected an entry ({e}); it is rebuilt"));
                        objcache::remove(dir, key);
                    }
                }
            } else if log_compiles() {
                eprintln!("[quabla] compile cache miss for @{entry} ({})", dir.display());
            }
        }
        // OpenMP workers left spinning by the last parallel call sleep now: spinning, they
        // slowed this compile (csrc/openmp.c `quabla_omp_quiesce`).
        // SAFETY: a plain count; a no-op without libomp.
        unsafe { quabla_omp_quiesce(crate::parallel::default_threads() as i32) };
        // LLVM's one-time costs overlap this compile (not a cache hit, which needs no LLVM).
        let _warm = crate::llvm_compile::warm();
        let guard = self.ctx.lock().unwrap_or_else(|e| e.into_inner());
        let ctx = &guard.0;
        let mut module = to_llvm(&guard, &cm)?;
        keep_outlined(ctx, &mut module, &chunks);
        let guarded = guard_allocations(ctx, &mut module);
        let (t_jit, c_jit) = (std::time::Instant::now(), cpu_ms());
        if host {
            set_host_target(ctx, &mut module);
        }
        if let Some(dir) = dump_dir() {
            let _ = std::fs::write(std::path::Path::new(&dir).join("llvm.mlir"), module.as_operation().to_string());
        }
        // The runner utilities are only loaded when the code calls into them.
        let needs_utils = calls_runtime(&module);
        let flags = objcache::Flags { guarded, needs_utils };
        let threads = compile_threads().min(chunks.len());
        if threads >= 2 || !engine_path() {
            // Objects (one, or one per partition with the entry's first), linked like cached ones.
            let (objs, how) = if threads >= 2 {
                (compile_partitioned(ctx, &module, &chunks, threads, levels, entry)?, format!(" on {threads} threads"))
            } else {
                let ciface = format!("_mlir_ciface_{entry}");
                let (objs, ph) = crate::llvm_compile::compile_object(module.as_operation().to_raw(), levels, Some(&ciface), compile_threads()).map_err(|e| RuntimeError::Compile(format!("LLVM rejected the module: {e}")))?;
                let parts = if objs.len() > 1 { format!(" in {} parts", objs.len()) } else { String::new() };
                let how = format!(" (translate {:.2}, optimize {:.2}, codegen {:.2} ms{parts}; object {} bytes)", ph.translate, ph.optimize, ph.codegen, objs.iter().map(Vec::len).sum::<usize>());
                (objs, how)
            };
            let t_link = std::time::Instant::now();
            let (jit, sym) = load_objects(&objs, &name).map_err(|e| RuntimeError::Compile(format!("linking the compiled program: {e}")))?;
            if let Some(dir) = dump_dir() {
                for (k, o) in objs.iter().enumerate() {
                    let file = if k == 0 { format!("{entry}.o") } else { format!("{entry}.part{k}.o") };
                    let _ = std::fs::write(std::path::Path::new(&dir).join(file), o);
                }
            }
            if let Some((dir, key)) = &cache {
                objcache::store(dir, key, flags, &objs);
            }
            if log_compiles() {
                let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
                eprintln!("[quabla] LLVM JIT (O{}, codegen O{}) {:.2} ms for @{entry}{how}, cpu {:.2} ms (link {:.2} ms{})", levels.opt, levels.codegen, ms(t_jit.elapsed()), cpu_ms() - c_jit, ms(t_link.elapsed()), if needs_utils { ", with memrefCopy" } else { "" });
            }
            // SAFETY: the packed interface has signature void(void**).
            let func: PackedFn = unsafe { std::mem::transmute::<*mut c_void, PackedFn>(sym) };
            return Ok(Arc::new(CpuExecutable { entry: entry.to_string(), inputs, outputs, func, template, guarded, flush: opts.flush_denormals, engine: Engine::Orc(jit).counted() }));
        }
        // The object is kept (for the cache or a dump) only when asked; cached objects are
        // position-independent so any later process can link them anywhere.
        let keep_object = cache.is_some() || dump_dir().is_some();
        let engine = with_diagnostics(ctx, || {
            let raw = unsafe { mlir_sys::mlirExecutionEngineCreate(module.to_raw(), level as i32, 0, std::ptr::null(), keep_object, cache.is_some()) };
            (!raw.ptr.is_null()).then_some(raw)
        })
        .map_err(|e| RuntimeError::Compile(format!("the JIT rejected the module: {e}")))?;
        let (t_created, c_created) = (std::time::Instant::now(), cpu_ms());
        // SAFETY: the engine is alive and not yet looked up.
        unsafe { register_runtime(engine, flags) };
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
        if let Some((dir, key)) = &cache {
            if let Some(obj) = engine_object(engine) {
                objcache::store(dir, key, flags, &[obj]);
            }
        }
        if log_compiles() {
            let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
            eprintln!(
                "[quabla] LLVM JIT (O{level}) {:.2} ms for @{entry} (translate + optimize {:.2} ms, cpu {:.2}; codegen + link {:.2} ms, cpu {:.2}{})",
                ms(t_jit.elapsed()),
                ms(t_created - t_jit),
                c_created - c_jit,
                ms(t_created.elapsed()),
                cpu_ms() - c_created,
                if needs_utils { ", with memrefCopy" } else { "" }
            );
        }
        // SAFETY: the packed interface has signature void(void**).
        let func: PackedFn = unsafe { std::mem::transmute::<*mut c_void, PackedFn>(sym) };
        Ok(Arc::new(CpuExecutable { entry: entry.to_string(), inputs, outputs, func, template, guarded, flush: opts.flush_denormals, engine: Engine::Mlir(engine).counted() }))
    }
}

/// Defines the runtime's symbols in `engine` before its first lookup links the code: the
/// linear-algebra kernels and host callbacks the lowering calls, the guarded `malloc` and
/// `memrefCopy` when the code uses them.
///
/// # Safety
/// `engine` is alive and not yet looked up.
unsafe fn register_runtime(engine: mlir_sys::MlirExecutionEngine, flags: objcache::Flags) {
    unsafe {
        crate::linalg_kernels::register(engine);
        crate::callback::register(engine);
        // The symbols are C functions of the signatures the module declares
        // (`(i64) -> !llvm.ptr`; `(i64, ptr, ptr) -> ()`).
        if flags.guarded {
            mlir_sys::mlirExecutionEngineRegisterSymbol(engine, melior::StringRef::new(GUARDED_MALLOC).to_raw(), quabla_rt_malloc as *mut c_void);
        }
        if flags.needs_utils {
            mlir_sys::mlirExecutionEngineRegisterSymbol(engine, melior::StringRef::new("memrefCopy").to_raw(), memrefCopy as *mut c_void);
        }
    }
}

/// The object code of an engine created with object dumping enabled and already looked up
/// (so compiled), or None (reported once) when it cannot be had.
fn engine_object(engine: mlir_sys::MlirExecutionEngine) -> Option<Vec<u8>> {
    let tmp = objcache::temp_path(&std::env::temp_dir(), "o");
    let path = tmp.to_string_lossy();
    // SAFETY: the engine is alive and was created with object dumping enabled.
    unsafe { mlir_sys::mlirExecutionEngineDumpToObjectFile(engine, melior::StringRef::new(&path).to_raw()) };
    let r = std::fs::read(&tmp);
    let _ = std::fs::remove_file(&tmp);
    match r {
        Ok(obj) if !obj.is_empty() => Some(obj),
        Ok(_) => {
            objcache::warn("the JIT produced no object to cache");
            None
        }
        Err(e) => {
            objcache::warn(&format!("cannot read the object the JIT wrote to {}: {e}", tmp.display()));
            None
        }
    }
}

/// `QUABLA_LLVM_ENGINE=1`: compile through MLIR's ExecutionEngine (the former path, kept for
/// comparisons) instead of [`crate::llvm_compile`].
fn engine_path() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("QUABLA_LLVM_ENGINE").is_some_and(|v| v != "0"))
}

/// Threads that compile one program's partitions (`QUABLA_COMPILE_THREADS`; default: the
/// cores this process may use, at most 4). 1 compiles every program as one LLVM module.
fn compile_threads() -> usize {
    static N: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *N.get_or_init(|| std::env::var("QUABLA_COMPILE_THREADS").ok().and_then(|v| v.trim().parse().ok()).unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get().min(4))).max(1))
}

/// The `llvm.func`s of a module: (name, has a body, private visibility, operation count).
fn llvm_funcs(module: &MlirModule) -> Vec<(String, bool, bool, usize)> {
    let mut out = Vec::new();
    let mut op = module.body().first_operation();
    while let Some(o) = op {
        if o.name().as_string_ref().as_str() == Ok("llvm.func") {
            let name = o.attribute("sym_name").ok().and_then(|a| melior::ir::attribute::StringAttribute::try_from(a).ok()).map(|s| s.value().to_string()).unwrap_or_default();
            let private = o.attribute("sym_visibility").ok().and_then(|a| melior::ir::attribute::StringAttribute::try_from(a).ok()).is_some_and(|s| s.value() == "private");
            let (mut body, mut n) = (false, 0usize);
            if let Ok(r) = o.region(0) {
                let mut b = r.first_block();
                while let Some(block) = b {
                    body = true;
                    let mut i = block.first_operation();
                    while let Some(x) = i {
                        n += 1;
                        i = x.next_in_block();
                    }
                    b = block.next_in_region();
                }
            }
            out.push((name, body, private, n));
        }
        op = o.next_in_block();
    }
    out
}

/// Splits the LLVM-dialect `module` into `parts` modules that compile independently: the
/// outlined `chunks` are dealt out by size (largest first, to the lightest part; part 0 also
/// holds every other function, the entry point's included); in each part the chunks of other
/// parts are declarations, and in parts 1.. the private helpers part 0 defines (deallocation
/// helpers) are local copies (internal linkage) and the public functions declarations, so that
/// the parts' objects link together without a duplicate symbol. Returns each part with the
/// chunks it declares but does not define.
fn split_module<'c>(ctx: &'c Context, module: &MlirModule<'c>, chunks: &[String], parts: usize) -> Result<Vec<(MlirModule<'c>, Vec<String>)>, RuntimeError> {
    let funcs = llvm_funcs(module);
    let is_chunk: std::collections::HashSet<&str> = chunks.iter().map(String::as_str).collect();
    let mut load = vec![0usize; parts];
    load[0] = funcs.iter().filter(|f| !is_chunk.contains(f.0.as_str())).map(|f| f.3).sum();
    let mut sized: Vec<(&str, usize)> = funcs.iter().filter(|f| f.1 && is_chunk.contains(f.0.as_str())).map(|f| (f.0.as_str(), f.3)).collect();
    sized.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let mut owner: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (name, n) in sized {
        let p = (0..parts).min_by_key(|&p| (load[p], p)).expect("at least one part");
        load[p] += n;
        owner.insert(name, p);
    }
    let internal = melior::ir::Attribute::parse(ctx, "#llvm.linkage<internal>").ok_or_else(|| RuntimeError::Compile("cannot build the internal linkage attribute".into()))?;
    let mut out = Vec::with_capacity(parts);
    for p in 0..parts {
        // SAFETY: a clone of a live module operation, owned by the new module.
        let op = unsafe { melior::ir::Operation::from_raw(mlir_sys::mlirOperationClone(module.as_operation().to_raw())) };
        let mut m = MlirModule::from_operation(op).ok_or_else(|| RuntimeError::Compile("cloning the module failed".into()))?;
        let mut declared = Vec::new();
        let body = m.body();
        let mut op = body.first_operation_mut();
        while let Some(mut o) = op {
            if o.name().as_string_ref().as_str() == Ok("llvm.func") {
                let name = o.attribute("sym_name").ok().and_then(|a| melior::ir::attribute::StringAttribute::try_from(a).ok()).map(|s| s.value().to_string()).unwrap_or_default();
                let f = funcs.iter().find(|f| f.0 == name);
                let (has_body, private) = f.map_or((false, false), |f| (f.1, f.2));
                let strip = match owner.get(name.as_str()) {
                    Some(&q) => q != p,
                    None => p != 0 && has_body && !private,
                };
                if strip && has_body {
                    let region = o.region(0).map_err(|e| RuntimeError::Compile(e.to_string()))?;
                    let dropped = melior::ir::Region::new();
                    // SAFETY: moves the function's blocks into a fresh region, destroyed at
                    // once (dropping the blocks' references first): the function becomes a
                    // declaration.
                    unsafe { mlir_sys::mlirRegionTakeBody(dropped.to_raw(), region.to_raw()) };
                    drop(dropped);
                    if owner.contains_key(name.as_str()) {
                        declared.push(name.clone());
                    }
                } else if owner.get(name.as_str()) == Some(&p) {
                    // Defined here for the other parts: public, so that symbol-dce keeps it.
                    let _ = o.remove_attribute("sym_visibility");
                } else if p != 0 && has_body && private {
                    o.set_attribute("linkage", internal);
                }
            }
            op = o.next_in_block_mut();
        }
        // Unused copies (constants, helpers, declarations) go before translation.
        let pm = PassManager::new(ctx);
        pm.enable_verifier(verify_each());
        parse_pass_pipeline(pm.as_operation_pass_manager(), "builtin.module(symbol-dce)").map_err(|e| RuntimeError::Compile(e.to_string()))?;
        pm.run(&mut m).map_err(|e| RuntimeError::Compile(format!("splitting the module: {e}")))?;
        out.push((m, declared));
    }
    Ok(out)
}

/// A raw module handle sent to a compile thread (see [`compile_partitioned`]).
struct SendModule(mlir_sys::MlirModule);
// SAFETY: each handle is used by one thread only, and the threads only translate their own
// module (MLIR's context uniques attributes and types under its own locks).
unsafe impl Send for SendModule {}

/// Compiles one part of [`split_module`] to object code: an ExecutionEngine with object
/// dumping, its runtime symbols and placeholders for the chunks of other parts (resolved when
/// the objects are linked together), looked up once so that LLVM generates the code.
fn compile_part(m: SendModule, levels: Levels, lookup: &str, declared: &[String], k: usize, entry: &str) -> Result<Vec<u8>, String> {
    extern "C" fn unresolved() {}
    if !engine_path() {
        // SAFETY: the module is alive and used by this thread only (see SendModule).
        let op = unsafe { mlir_sys::mlirModuleGetOperation(m.0) };
        let wrap = (k == 0).then(|| format!("_mlir_ciface_{entry}"));
        // One object: the parts already run on threads of their own.
        let (objs, ph) = crate::llvm_compile::compile_object(op, levels, wrap.as_deref(), 1).map_err(|e| format!("part {k}: {e}"))?;
        let obj = objs.into_iter().next().ok_or_else(|| format!("part {k}: no object"))?;
        if log_compiles() {
            eprintln!("[quabla] part {k}: translate {:.2}, optimize {:.2}, codegen {:.2} ms; object {} bytes", ph.translate, ph.optimize, ph.codegen, obj.len());
        }
        return Ok(obj);
    }
    // SAFETY: the module is alive and used by this thread only (see SendModule).
    let engine = unsafe { mlir_sys::mlirExecutionEngineCreate(m.0, levels.opt as i32, 0, std::ptr::null(), true, true) };
    if engine.ptr.is_null() {
        return Err(format!("the JIT rejected part {k}"));
    }
    let flags = objcache::Flags { guarded: true, needs_utils: true };
    // SAFETY: the engine is alive and not yet looked up.
    unsafe { register_runtime(engine, flags) };
    for d in declared {
        unsafe { mlir_sys::mlirExecutionEngineRegisterSymbol(engine, melior::StringRef::new(d).to_raw(), unresolved as *mut c_void) };
    }
    let sym = unsafe { mlir_sys::mlirExecutionEngineLookup(engine, melior::StringRef::new(lookup).to_raw()) };
    let obj = if sym.is_null() { Err(format!("symbol {lookup} not found in part {k}")) } else { engine_object(engine).ok_or_else(|| format!("no object for part {k}")) };
    unsafe { mlir_sys::mlirExecutionEngineDestroy(engine) };
    obj
}

/// Compiles `module`, whose long functions were outlined into `chunks`, on `threads` threads:
/// split into as many parts ([`split_module`]), each translated, optimised and compiled on its
/// own thread ([`compile_part`]: LLVM contexts are independent), returning the parts' objects
/// (part 0, with the entry point, first) for [`load_objects`] to link into one program.
fn compile_partitioned<'c>(ctx: &'c Context, module: &MlirModule<'c>, chunks: &[String], threads: usize, levels: Levels, entry: &str) -> Result<Vec<Vec<u8>>, RuntimeError> {
    let t = std::time::Instant::now();
    let parts = split_module(ctx, module, chunks, threads)?;
    if log_compiles() {
        eprintln!("[quabla] split into {threads} LLVM modules in {:.2} ms", t.elapsed().as_secs_f64() * 1e3);
    }
    let lookups: Vec<String> = parts.iter().map(|(m, _)| llvm_funcs(m).into_iter().find(|f| f.1 && !f.0.starts_with("_mlir_")).map(|f| f.0).unwrap_or_default()).collect();
    // A part left without a function (more parts than chunks) is not compiled.
    let (parts, lookups): (Vec<_>, Vec<_>) = parts.into_iter().zip(lookups).enumerate().filter(|(k, (_, l))| *k == 0 || !l.is_empty()).map(|(_, p)| p).unzip();
    let results: Vec<Result<Vec<u8>, String>> = std::thread::scope(|s| {
        let handles: Vec<_> = parts
            .iter()
            .enumerate()
            .skip(1)
            .map(|(k, (m, declared))| {
                let (handle, lookup) = (SendModule(m.to_raw()), lookups[k].as_str());
                s.spawn(move || compile_part(handle, levels, lookup, declared, k, entry))
            })
            .collect();
        let first = compile_part(SendModule(parts[0].0.to_raw()), levels, &lookups[0], &parts[0].1, 0, entry);
        std::iter::once(first).chain(handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("a compile thread panicked".into())))).collect()
    });
    drop(parts);
    results.into_iter().collect::<Result<Vec<_>, _>>().map_err(RuntimeError::Compile)
}

/// Links objects (a cached program, or the parts of a partitioned compile) in a fresh ORC JIT
/// (csrc/objload.c): the JIT and the entry's address.
fn load_objects(objs: &[Vec<u8>], name: &str) -> Result<(*mut c_void, *mut c_void), String> {
    let entry = std::ffi::CString::new(name).map_err(|e| e.to_string())?;
    // The linear-algebra kernels, defined in the JIT like the MLIR engine's registered symbols.
    let mut extra = crate::linalg_kernels::symbols();
    extra.extend(crate::callback::symbols());
    let names: Vec<std::ffi::CString> = extra.iter().map(|(n, _)| std::ffi::CString::new(*n).expect("no NUL in a symbol")).collect();
    let name_ptrs: Vec<*const std::ffi::c_char> = names.iter().map(|n| n.as_ptr()).collect();
    let addrs: Vec<*mut c_void> = extra.iter().map(|(_, p)| *p as *mut c_void).collect();
    let obj_ptrs: Vec<*const std::ffi::c_char> = objs.iter().map(|o| o.as_ptr() as *const std::ffi::c_char).collect();
    let lens: Vec<usize> = objs.iter().map(Vec::len).collect();
    let (mut func, mut err): (*mut c_void, *mut std::ffi::c_char) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: the buffers outlive the call (the loader copies the objects and the names);
    // out-parameters.
    let jit = unsafe { quabla_orc_load(obj_ptrs.as_ptr(), lens.as_ptr(), objs.len(), entry.as_ptr(), name_ptrs.as_ptr(), addrs.as_ptr(), addrs.len(), &mut func, &mut err) };
    if jit.is_null() || func.is_null() {
        let msg = if err.is_null() { "unknown error".to_string() } else { unsafe { std::ffi::CStr::from_ptr(err) }.to_string_lossy().into_owned() };
        if !err.is_null() {
            unsafe { quabla_orc_free(err) };
        }
        if !jit.is_null() {
            unsafe { quabla_orc_dispose(jit) };
        }
        return Err(msg);
    }
    Ok((jit, func))
}

/// Programs whose estimated work per call is at most this many element operations are
/// compiled at -O0: their calls take about a microsecond either way, and LLVM's optimizer
/// is most of the compile time. Measured on the README PINN step (f64, 8 points, ~300
/// element operations): first call 25 ms at -O0 against 40 ms at -O2, per call 0.55 us
/// against 0.51 us. The hand-written MLP (examples/mlp.mlir, ~20k element operations) stays
/// at the requested level: -O0 would make each call 16 us instead of 2.1 us.
const SMALL_WORK: i64 = 4096;

/// The LLVM level for a program of `work` element operations: `requested`, or 0 below
/// [`SMALL_WORK`].
fn effective_opt_level(work: i64, requested: usize) -> usize {
    if work <= SMALL_WORK {
        0
    } else {
        requested
    }
}

/// The estimated element operations of one call of `m` (see [`ops_work`]).
fn program_work(m: &Module, opts: &CompileOptions) -> Work {
    // The lowering's threads (it splits loops only when it vectorises: lower_for_cpu).
    let threads = if opts.vectorize { threads_for(opts) as i64 } else { 1 };
    let target: Option<&dyn quabla_lowering::target::Target> = (opts.vectorize && opts.runtime_gemm).then_some(&quabla_lowering::cpu::CPU);
    m.funcs.iter().fold(Work::default(), |w, f| {
        // A large output that is a parameter is copied into its buffer by a loop
        // (quabla_lowering's `copied_parameters`); a program of little else was compiled at
        // -O0 and the loop left scalar (a returned 4096 x 1024 f32 argument 2.2 ms, JAX 0.7).
        let copied = quabla_lowering::linalg::copied_parameters(f, threads).iter().map(|(_, t)| t.num_elements() as i64).fold(0i64, i64::saturating_add);
        w.plus(ops_work(f, &f.ops, target)).plus(Work { total: copied, dot: 0 })
    })
}

/// The element operations of `ops` (of function `f`), for [`effective_opt_level`]: per op
/// the larger of its result elements (times K for a contraction) and its operand elements (a
/// reduction of a large input has a small result), plus the work of its regions; a loop counts
/// as large work (its trip count multiplies its body, and is not known in general). A product
/// that `target` makes a runtime call counts only the copies generated around it
/// (quabla_lowering::linalg::dot::runtime_product_work), and a sum that it makes a runtime
/// call (`reduce::runtime_sum`) nothing: a program that is little more than such calls
/// compiles like a small one.
fn ops_work(f: &quabla_dialect::Func, ops: &[quabla_dialect::Op], target: Option<&dyn quabla_lowering::target::Target>) -> Work {
    let mut work = Work::default();
    for o in ops {
        if matches!(o.kind, quabla_dialect::OpKind::Control(quabla_dialect::ControlOp::While {})) {
            return Work { total: i64::MAX, dot: work.dot };
        }
        let elems = |vs: &[quabla_dialect::Value]| vs.iter().map(|v| f.ty(*v).num_elements() as i64).fold(0i64, i64::saturating_add);
        if let (quabla_dialect::OpKind::Dot(DotOp::DotGeneral { dims }), Some(t)) = (&o.kind, target) {
            if let Some(w) = quabla_lowering::linalg::dot::runtime_product_work(t, f.ty(o.operands[0]), f.ty(o.operands[1]), dims) {
                work = work.plus(Work { total: w, dot: 0 });
                continue;
            }
        }
        // A sum the runtime's kernel computes generates no loop (a call, results in place).
        if target.is_some_and(|t| quabla_lowering::linalg::reduce::runtime_sum(t, f, o).is_some()) {
            continue;
        }
        // A contraction does K multiply-adds per result element.
        let k = match &o.kind {
            quabla_dialect::OpKind::Dot(DotOp::DotGeneral { dims }) => Some(quabla_dialect::size::saturating_product(dims.lhs_contracting_dimensions.iter().map(|&d| f.ty(o.operands[0]).shape[d as usize]))),
            _ => None,
        };
        let w = elems(&o.results).saturating_mul(k.unwrap_or(1)).max(elems(&o.operands));
        work = work.plus(Work { total: w, dot: if k.is_some() { w } else { 0 } });
        for r in &o.regions {
            work = work.plus(ops_work(f, &r.ops, target));
        }
    }
    work
}

unsafe extern "C" {
    fn LLVMGetVersion(major: *mut u32, minor: *mut u32, patch: *mut u32);
    /// csrc/openmp.c: the calling thread's libomp workers to sleep (an empty region with a
    /// block time of 0).
    fn quabla_omp_quiesce(threads: i32);
    /// csrc/objload.c: links objects in a fresh ORC LLJIT.
    fn quabla_orc_load(
        objs: *const *const std::ffi::c_char,
        lens: *const usize,
        n_objs: usize,
        entry: *const std::ffi::c_char,
        names: *const *const std::ffi::c_char,
        addrs: *const *mut c_void,
        n_extra: usize,
        func: *mut *mut c_void,
        err: *mut *mut std::ffi::c_char,
    ) -> *mut c_void;
    fn quabla_orc_dispose(jit: *mut c_void);
    fn quabla_orc_free(msg: *mut std::ffi::c_char);
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

type PackedFn = unsafe extern "C" fn(*mut *mut c_void);

/// Once per process, unless `QUABLA_MALLOC_TUNE=0`: blocks up to 32 MiB from the heap and
/// its free top kept, so that compiled code's large temporaries are not page-faulted and
/// zero-filled again on every call (csrc/alloc_guard.c, `quabla_rt_tune_malloc`).
fn tune_malloc() {
    static DONE: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    DONE.get_or_init(|| {
        if std::env::var("QUABLA_MALLOC_TUNE").map_or(true, |v| v != "0") {
            // SAFETY: mallopt on the process allocator, before or between allocations.
            unsafe { quabla_rt_tune_malloc() };
        }
    });
}

/// The name compiled code calls instead of `malloc` (see [`guard_allocations`]).
const GUARDED_MALLOC: &str = "quabla_rt_malloc";

unsafe extern "C" {
    /// `malloc` that, on failure inside [`quabla_rt_call`], unwinds to it (csrc/alloc_guard.c).
    fn quabla_rt_malloc(bytes: u64) -> *mut c_void;
    /// Sets the largest allocation compiled code may make (csrc/alloc_guard.c).
    fn quabla_rt_set_limit(bytes: u64);
    /// Calls `f(args)` under the allocation guard: 0, or the byte count of the allocation
    /// that failed (the call was abandoned; its earlier temporaries are leaked).
    fn quabla_rt_call(f: PackedFn, args: *mut *mut c_void) -> u64;
    /// Keeps large freed temporaries in the heap (csrc/alloc_guard.c).
    fn quabla_rt_tune_malloc();
    /// csrc/memref_copy.c: the strided copy MLIR's memref lowering calls.
    fn memrefCopy(elem_size: i64, src: *mut c_void, dst: *mut c_void);
}

/// Points the module's heap allocations at [`quabla_rt_malloc`]: renames the `llvm.func
/// @malloc` declaration that the memref lowering emits, and every call of it. Returns whether
/// calls must run under the allocation guard: the module allocates, or calls a runtime kernel
/// (`linalg`, `sort`: their fallible allocations fail through `quabla_rt_fail`). Programs
/// whose temporaries all fused away and that call no kernel skip the guard on the per-call
/// path.
fn guard_allocations(ctx: &Context, module: &mut MlirModule) -> bool {
    let body = module.body();
    let mut guarded = false;
    let mut malloc = None;
    let mut op = body.first_operation_mut();
    while let Some(o) = op {
        let name = (o.name().as_string_ref().as_str() == Ok("llvm.func"))
            .then(|| o.attribute("sym_name").ok().and_then(|a| melior::ir::attribute::StringAttribute::try_from(a).ok()).map(|s| s.value().to_string()))
            .flatten();
        match name.as_deref() {
            Some("malloc") => malloc = Some(o),
            Some(n) if n.starts_with("_mlir_ciface_quabla_") => guarded = true,
            _ => {}
        }
        op = o.next_in_block_mut();
    }
    if let Some(mut o) = malloc {
        // SAFETY: the module operation outlives the call; both names are valid symbols.
        let r = unsafe { mlir_sys::mlirSymbolTableReplaceAllSymbolUses(melior::StringRef::new("malloc").to_raw(), melior::StringRef::new(GUARDED_MALLOC).to_raw(), module.as_operation().to_raw()) };
        debug_assert!(r.value != 0, "renaming malloc's uses failed");
        o.set_attribute("sym_name", melior::ir::attribute::StringAttribute::new(ctx, GUARDED_MALLOC).into());
        guarded = true;
    }
    guarded
}

/// Engines alive in this process (one per compiled CPU program): [`live_programs`].
static LIVE_ENGINES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The number of compiled CPU programs whose code is still loaded in this process: every
/// executable [`CpuExecutor::compile`] returned and that is not yet dropped. Caches that evict
/// (the eager op cache, jitted functions' trace caches) are tested against it.
pub fn live_programs() -> usize {
    LIVE_ENGINES.load(std::sync::atomic::Ordering::Relaxed)
}

/// Returns the heap's free pages to the OS (glibc `malloc_trim(0)`) and frees the large host
/// blocks kept for reuse (`buffer::large`): called after a cache drops compiled programs,
/// whose code and temporaries otherwise stay in malloc's arenas.
pub fn release_memory() {
    unsafe extern "C" {
        fn malloc_trim(pad: usize) -> i32;
    }
    crate::buffer::large::release();
    // SAFETY: malloc_trim only releases free pages.
    unsafe { malloc_trim(0) };
}

/// What keeps a program's code alive: the MLIR ExecutionEngine that compiled it, or the ORC
/// JIT that linked its cached object. Counted in [`live_programs`].
enum Engine {
    Mlir(mlir_sys::MlirExecutionEngine),
    Orc(*mut c_void),
}

impl Engine {
    fn counted(self) -> Self {
        LIVE_ENGINES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self
    }
}
// SAFETY: the engine is only destroyed (in Drop); its compiled code is immutable and reentrant.
unsafe impl Send for Engine {}
unsafe impl Sync for Engine {}
impl Drop for Engine {
    fn drop(&mut self) {
        match *self {
            Engine::Mlir(e) => unsafe { mlir_sys::mlirExecutionEngineDestroy(e) },
            Engine::Orc(j) => unsafe { quabla_orc_dispose(j) },
        }
        LIVE_ENGINES.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
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
    /// The code allocates temporaries: calls go through the allocation guard.
    guarded: bool,
    /// Calls run with denormals flushed to zero (CompileOptions::flush_denormals).
    flush: bool,
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
        // SAFETY: the compiled function defines each output completely (every result tensor is
        // written into its destination) before the buffers are returned.
        let mut outs: Vec<Buffer> = self.outputs.iter().map(|t| unsafe { Buffer::try_uninit(t.clone()) }).collect::<Result<_, _>>().map_err(|source| RuntimeError::Buffer { entry: self.entry.clone(), source })?;
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
        // Denormals flushed to zero while the program runs, as XLA's CPU programs run
        // (crate::fpmode); the caller's mode is back when the guard drops.
        let _mode = self.flush.then(crate::fpmode::Flushed::enter);
        // SAFETY: each argument points at a pointer to a descriptor matching the compiled
        // signature (types checked above); inputs are only read (bufferization.writable =
        // false) and outputs are unique, correctly sized buffers.
        if self.guarded {
            // SAFETY: as above; the guard only adds a setjmp around the call.
            let failed = unsafe { quabla_rt_call(self.func, args.as_mut_ptr()) };
            if failed != 0 {
                return Err(RuntimeError::OutOfMemory { entry: self.entry.clone(), bytes: failed });
            }
        } else {
            unsafe { (self.func)(args.as_mut_ptr()) };
        }
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

    /// A chain long enough to be outlined (sin, x * y, x + 0.25 repeated, then cos): the
    /// reference interpreter's result.
    fn long_chain() -> Module {
        let t = TensorType::new(DType::F64, [5]);
        let mut f = Func::new("main", &[t.clone(), t.clone()]);
        let (mut x, y) = (f.params[0], f.params[1]);
        let c = f.push1(OpKind::Constant(quabla_dialect::ConstantOp::Constant { value: quabla_dialect::Literal::splat(t, 0.25) }), &[], None).unwrap();
        for i in 0..240 {
            x = match i % 3 {
                0 => f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: quabla_dialect::UnaryOp::Sin }), &[x], None).unwrap(),
                1 => f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), &[x, y], None).unwrap(),
                _ => f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add }), &[x, c], None).unwrap(),
            };
        }
        for _ in 0..20 {
            x = f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: quabla_dialect::UnaryOp::Cos }), &[x], None).unwrap();
        }
        f.outputs = vec![x, y];
        Module { funcs: vec![f] }
    }

    #[test]
    fn programs_compiled_in_parts_match_the_interpreter() {
        let m = long_chain();
        let t = TensorType::new(DType::F64, [5]);
        let x = Buffer::from_f64s(t.clone(), &[0.5, -1.0, 2.0, 0.0, 3.5]).unwrap();
        let y = Buffer::from_f64s(t.clone(), &[1.5, 0.25, -3.0, 1.0, -0.5]).unwrap();
        let want = quabla_interp::run_func(&m, "main", &[x.clone(), y.clone()]).unwrap();
        let close = |got: &[Buffer]| {
            for (g, w) in got.iter().zip(&want) {
                for (a, b) in g.to_f64_vec().iter().zip(w.to_f64_vec()) {
                    assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "{a} vs {b}");
                }
            }
        };
        // Through the executor (parts when this machine has several cores).
        let exe = CpuExecutor::new().compile(&m, "main", &CompileOptions::default()).unwrap();
        close(&exe.run(&[&x, &y]).unwrap());
        // Split into three parts whatever the machine, linked from their objects.
        let opts = CompileOptions::default();
        let (cm, chunks) = lower_text(&m, &opts).unwrap();
        assert!(chunks.len() >= 2, "{chunks:?}");
        let c = Ctx(new_context(), PassManagers::default());
        let ctx = &c.0;
        let mut module = to_llvm(&c, &cm).unwrap();
        keep_outlined(&ctx, &mut module, &chunks);
        let guarded = guard_allocations(&ctx, &mut module);
        let objs = compile_partitioned(&ctx, &module, &chunks, 3, Levels::of(2, Work { total: i64::MAX, dot: 0 }), "main").unwrap();
        assert!(objs.len() >= 2);
        let (jit, sym) = load_objects(&objs, "_mlir__mlir_ciface_main").unwrap();
        let (inputs, outputs) = (vec![t.clone(), t.clone()], vec![t.clone(), t.clone()]);
        let template = DescTemplate::new(&inputs, &outputs);
        let func: PackedFn = unsafe { std::mem::transmute::<*mut c_void, PackedFn>(sym) };
        let parts = CpuExecutable { entry: "main".into(), inputs, outputs, func, template, guarded, flush: true, engine: Engine::Orc(jit).counted() };
        close(&parts.run(&[&x, &y]).unwrap());
    }

    /// The LLVM compile path on its own: the packed wrapper passes `*args[i]` as argument i and
    /// stores a result through the last slot, at every level; a missing function to wrap is an
    /// error, not a crash.
    #[test]
    fn packed_wrappers_of_compiled_objects() {
        let ctx = new_context();
        let text = "module { llvm.func @f(%a: i64, %b: f64) -> f64 { %c = llvm.sitofp %a : i64 to f64\n %d = llvm.fmul %c, %b : f64\n llvm.return %d : f64 } }";
        let module = MlirModule::parse(&ctx, text).expect("parses");
        for level in 0..=3 {
            let (objs, _) = crate::llvm_compile::compile_object(module.as_operation().to_raw(), crate::llvm_compile::Levels { opt: level, codegen: level }, Some("f"), 1).unwrap();
            let (jit, sym) = load_objects(&objs, "_mlir_f").unwrap();
            let (mut a, mut b, mut r) = (-3i64, 2.5f64, 0f64);
            let mut args: [*mut c_void; 3] = [&mut a as *mut i64 as *mut c_void, &mut b as *mut f64 as *mut c_void, &mut r as *mut f64 as *mut c_void];
            let func: PackedFn = unsafe { std::mem::transmute::<*mut c_void, PackedFn>(sym) };
            unsafe { func(args.as_mut_ptr()) };
            assert_eq!(r, -7.5, "level {level}");
            drop(Engine::Orc(jit).counted());
        }
        let e = crate::llvm_compile::compile_object(module.as_operation().to_raw(), crate::llvm_compile::Levels { opt: 2, codegen: 2 }, Some("g"), 2).unwrap_err();
        assert!(e.contains("no function g"), "{e}");
    }

    /// Split code generation (csrc/llvm_compile.c): a module of several large functions is
    /// compiled in two parts (internal functions called across parts made external) that link
    /// into one program computing what one object computes; a module with a mutable local
    /// global or a defined external one, or whose second part would be small, stays one
    /// object.
    #[test]
    fn functions_split_into_parts_link_into_one_program() {
        // @g<i>(x) = ((x * c + c) * c + c ...) over 60 multiply-adds: 120 instructions each.
        let chain = |name: &str, c: f64| {
            let mut body = String::new();
            let mut prev = "%x".to_string();
            for i in 0..60 {
                body.push_str(&format!("  %m{i} = llvm.fmul {prev}, %c : f64\n  %a{i} = llvm.fadd %m{i}, %c : f64\n"));
                prev = format!("%a{i}");
            }
            format!("llvm.func internal @{name}(%x: f64) -> f64 {{\n  %c = llvm.mlir.constant({c:?} : f64) : f64\n{body}  llvm.return {prev} : f64\n}}\n")
        };
        let reference = |x: f64, c: f64| (0..60).fold(x, |v, _| v * c + c);
        let module_text = |extra: &str, calls: usize| {
            let calls_text: String = (0..calls).map(|i| format!("  %r{i} = llvm.call @g{i}(%x) : (f64) -> f64\n")).collect();
            let adds: String = (1..calls).map(|i| format!("  %s{i} = llvm.fadd {}, %r{i} : f64\n", if i == 1 { "%r0".to_string() } else { format!("%s{}", i - 1) })).collect();
            let last = if calls == 1 { "%r0".to_string() } else { format!("%s{}", calls - 1) };
            let funcs: String = (0..calls).map(|i| chain(&format!("g{i}"), 0.5 + 0.25 * i as f64)).collect();
            format!("module {{\n{extra}{funcs}llvm.func @f(%x: f64) -> f64 {{\n{calls_text}{adds}  llvm.return {last} : f64\n}}\n}}")
        };
        let ctx = new_context();
        let run = |text: &str, parts: usize| -> (usize, f64) {
            let module = MlirModule::parse(&ctx, text).expect("parses");
            let (objs, _) = crate::llvm_compile::compile_object(module.as_operation().to_raw(), crate::llvm_compile::Levels { opt: 2, codegen: 1 }, Some("f"), parts).unwrap();
            let (jit, sym) = load_objects(&objs, "_mlir_f").unwrap();
            let (mut x, mut r) = (0.75f64, 0f64);
            let mut args: [*mut c_void; 2] = [&mut x as *mut f64 as *mut c_void, &mut r as *mut f64 as *mut c_void];
            let func: PackedFn = unsafe { std::mem::transmute::<*mut c_void, PackedFn>(sym) };
            unsafe { func(args.as_mut_ptr()) };
            drop(Engine::Orc(jit).counted());
            (objs.len(), r)
        };
        let want = reference(0.75, 0.5) + reference(0.75, 0.75);
        let two = module_text("", 2);
        assert_eq!(run(&two, 1), (1, want));
        assert_eq!(run(&two, 2), (2, want), "two large functions: two parts, the same result");
        assert_eq!(run(&two, 4).0, 2, "as many parts as keep each at the minimum");
        let three = module_text("", 3);
        assert_eq!(run(&three, 2), (2, want + reference(0.75, 1.0)));
        let mutable = module_text("llvm.mlir.global internal @state(0.0 : f64) : f64\n", 2);
        assert_eq!(run(&mutable, 2), (1, want), "a mutable local global: one object");
        let public = module_text("llvm.mlir.global external constant @table(1.0 : f64) : f64\n", 2);
        assert_eq!(run(&public, 2), (1, want), "a defined external global: one object");
        let private = module_text("llvm.mlir.global private constant @table(1.0 : f64) : f64\n", 2);
        assert_eq!(run(&private, 2), (2, want), "a private constant: a copy in each part");
        let small = module_text("", 1);
        assert_eq!(run(&small, 2), (1, reference(0.75, 0.5)), "the entry part alone: one object");
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

    /// `main(x, y) = x op y` on f64 of `n` elements.
    fn binary(op: BinaryOp, n: i64) -> Module {
        let t = TensorType::new(DType::F64, [n]);
        let mut f = Func::new("main", &[t.clone(), t]);
        let (x, y) = (f.params[0], f.params[1]);
        f.outputs = vec![f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op }), &[x, y], None).unwrap()];
        Module { funcs: vec![f] }
    }

    #[test]
    fn cached_pass_managers_lower_like_fresh_ones() {
        // Two programs of one pipeline: the second runs on the managers the first left.
        let opts = CompileOptions::default();
        let (a, _) = lower_text(&binary(BinaryOp::Mul, 5), &opts).unwrap();
        let (b, _) = lower_text(&binary(BinaryOp::Add, 7), &opts).unwrap();
        assert_eq!(a.pipeline, b.pipeline);
        let c = Ctx(new_context(), PassManagers::default());
        let first = to_llvm(&c, &a).unwrap().as_operation().to_string();
        let cached = to_llvm(&c, &b).unwrap().as_operation().to_string();
        if std::env::var_os("QUABLA_NO_PASS_CACHE").is_none() && std::env::var_os("QUABLA_LOG_COMPILES").is_none() {
            // Fusion (before the executor tags loops), then the rest.
            assert_eq!(c.1 .0.borrow().len(), 2, "one manager kept per pipeline text");
        }
        let fresh = |cm: &CpuModule| {
            let c = Ctx(new_context(), PassManagers::default());
            let text = to_llvm(&c, cm).unwrap().as_operation().to_string();
            text
        };
        assert_eq!(cached, fresh(&b));
        assert_eq!(first, fresh(&a));
        assert!(cached.contains("llvm.fadd") && first.contains("llvm.fmul"), "{cached}\n{first}");
    }
}

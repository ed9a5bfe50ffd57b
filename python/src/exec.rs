//! Execution: programs compiled through the one compile pipeline (`quabla_compiler::compile`)
//! for a device of the executor registry, eager per-op execution with executables cached by
//! (op, operand types), and the per-call hot path of jitted functions (`JitFunction.__call__`:
//! all-Tensor positional arguments are looked up in a Rust-side cache and run without
//! entering Python; everything else goes to the Python slow path, which traces, compiles and
//! registers the signature here).
//!
//! Invariants: executables are immutable and callable from any thread; caches only ever
//! grow; the GIL is released while large programs run. Python exception classes are chosen
//! by error variant.
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use quabla_compiler::{Caller, CompileError, CompileOptions};
use quabla_dialect::{Func, Module, OpKind, TensorType};
use quabla_passes::rules::RuleError;
use quabla_passes::{AutodiffError, PassError};
use quabla_runtime::{Buffer, Device, DeviceKind, Executable, ExecutableCache, RuntimeError};

use crate::callkey;
use crate::errors;
use crate::ops::Op;
use crate::tensor::{py_dtype, shape_tuple, wrap, Tensor};

/// Programs with at least this many input elements run with the GIL released.
const DETACH_ELEMENTS: usize = 1 << 14;

/// The Python exception for a failed run.
fn run_error(py: Python<'_>, e: &RuntimeError) -> PyErr {
    let class = match e {
        RuntimeError::InputCount { .. }
        | RuntimeError::InputType { .. }
        | RuntimeError::NoEntry(_)
        | RuntimeError::Lower(_)
        | RuntimeError::Compile(_)
        | RuntimeError::UnknownDevice { .. }
        | RuntimeError::UnavailableDevice { .. }
        | RuntimeError::Device { .. } => "QuablaError",
        RuntimeError::Buffer { source, .. } => errors::buffer_class_of(source),
        // The interpreter's own allocations: ArraySizeError / OutOfMemoryError as the host's.
        RuntimeError::Interp(quabla_runtime::interp::InterpError::Buffer { source, .. }) => errors::buffer_class_of(source),
        RuntimeError::Interp(_) => "QuablaError",
        RuntimeError::OutOfMemory { .. } => "OutOfMemoryError",
    };
    errors::new(py, class, format!("execution failed: {e}"))
}

/// Runs an executable on input buffers, releasing the GIL when the inputs are large.
pub fn run_py(py: Python<'_>, exe: &dyn Executable, inputs: &[&Buffer]) -> PyResult<Vec<Buffer>> {
    let n: usize = inputs.iter().map(|b| b.len()).sum();
    let r = if n >= DETACH_ELEMENTS { py.detach(|| exe.run(inputs)) } else { exe.run(inputs) };
    // A pure callback that failed inside the program (its function raised, or returned other
    // types than declared) is raised now: the program ran on with zeros in its place.
    let failed = quabla_runtime::interp::callback::take_error();
    if let Some(e) = crate::callback::take_raised() {
        return Err(e);
    }
    if let Some(msg) = failed {
        return Err(errors::new(py, "InvalidArgumentError", format!("pure_callback: {msg}")));
    }
    // Device results (MLX arrays, CUDA buffers) stay on their device: Tensors over them read
    // through a host copy made once (`Tensor::host`), and passed back to their executor they
    // go in without a copy.
    r.map_err(|e| run_error(py, &e))
}

/// The Python exception for a failed compile (optimization, export or code generation).
pub fn compile_error(py: Python<'_>, e: &CompileError) -> PyErr {
    let (class, msg) = match e {
        CompileError::Pass { source: PassError::Autodiff(AutodiffError::Rule { source: RuleError::Unsupported { .. } | RuleError::DynamicTripCount(_), .. }), .. } => ("UnsupportedOperationError", e.to_string()),
        CompileError::Pass { .. } => ("QuablaError", e.to_string()),
        CompileError::Runtime(RuntimeError::UnknownDevice { .. } | RuntimeError::UnavailableDevice { .. }) => ("UnsupportedOperationError", e.to_string()),
        CompileError::Runtime(RuntimeError::Lower(quabla_lowering::LowerError::Unsupported { .. } | quabla_lowering::LowerError::UnexpandedTransform { .. } | quabla_lowering::LowerError::HostCode { .. })) => ("UnsupportedOperationError", format!("compilation failed: {e}")),
        CompileError::Runtime(_) => ("QuablaError", format!("compilation failed: {e}")),
        CompileError::Emit { source, emitter } => {
            let class = match source {
                quabla_lowering::LowerError::Unsupported { .. } | quabla_lowering::LowerError::HostCode { .. } => "UnsupportedOperationError",
                _ => "QuablaError",
            };
            // "StableHLO export: ...", named by what the emitter produces.
            let what = quabla_compiler::emitter(emitter).map_or(*emitter, |x| x.output);
            (class, format!("{what} export: {e}"))
        }
        CompileError::Pipeline(_) | CompileError::NotATransform(_) | CompileError::Terminal { .. } | CompileError::UnknownEmitter { .. } => ("QuablaError", e.to_string()),
    };
    let err = errors::new(py, class, msg);
    // An explicit gap names its op, and the device for an executor's own lowering.
    let gap = match e {
        CompileError::Runtime(RuntimeError::Lower(quabla_lowering::LowerError::Unsupported { op, rule })) => Some((*op, *rule)),
        CompileError::Emit { source: quabla_lowering::LowerError::Unsupported { op, rule }, .. } => Some((*op, *rule)),
        _ => None,
    };
    if let Some((op, rule)) = gap {
        let _ = err.value(py).setattr("op", op);
        if rule == crate::mlx::DEVICE {
            let _ = err.value(py).setattr("device", rule);
        }
    }
    err
}

/// The device eager ops run on: `cpu` (per-op JIT programs, default) or `interp` (the
/// reference interpreter), from `QUABLA_EAGER`.
fn eager_device() -> &'static str {
    static DEVICE: OnceLock<&'static str> = OnceLock::new();
    DEVICE.get_or_init(|| if std::env::var("QUABLA_EAGER").is_ok_and(|v| v == "interp") { "interp" } else { quabla_runtime::DEFAULT_DEVICE })
}

/// Compiles a module's `@main` through the default pipeline for device `device`, as `caller`.
pub fn compile_module(py: Python<'_>, m: &Module, device: &str, caller: Caller) -> PyResult<(Arc<dyn Executable>, Device)> {
    let dev = quabla_runtime::device(device).map_err(|e| compile_error(py, &CompileError::Runtime(e)))?;
    let opts = CompileOptions::for_caller(caller);
    let r = py.detach(|| quabla_compiler::compile(m, "main", device, &opts));
    r.map(|e| (e, dev)).map_err(|e| compile_error(py, &e))
}

/// Global eager cache for ops whose `Op` object is rebuilt per call (attribute-carrying ops).
type EagerKey = (OpKind, Vec<TensorType>);
fn global_eager() -> &'static ExecutableCache<EagerKey> {
    static G: OnceLock<ExecutableCache<EagerKey>> = OnceLock::new();
    G.get_or_init(|| ExecutableCache::with_capacity(eager_cache_capacity()))
}

/// The eager cache's bound: `QUABLA_EAGER_CACHE_SIZE` executables (default 256; each compiled
/// op program holds its JIT'ed code, ~0.1-1 MB), read once per process.
#[pyfunction]
pub fn eager_cache_capacity() -> usize {
    std::env::var("QUABLA_EAGER_CACHE_SIZE").ok().and_then(|v| v.parse().ok()).unwrap_or(256)
}

/// The eager executable of `op` on operands of types `tys`.
fn eager_exec(py: Python<'_>, op: &Op, tys: &[TensorType]) -> PyResult<Arc<dyn Executable>> {
    if let Some(e) = op.cache.get(tys) {
        return Ok(e);
    }
    let key = (op.kind.clone(), tys.to_vec());
    let exe = match global_eager().get(&key) {
        Some(e) => e,
        None => {
            let mut f = Func::new("main", tys);
            let params = f.params.clone();
            let outs = f.push(op.kind.clone(), &params, None).map_err(|e| errors::dialect(py, &e, None))?;
            f.outputs = outs;
            let m = Module { funcs: vec![f] };
            let (e, _) = compile_module(py, &m, eager_device(), Caller::Eager)?;
            global_eager().insert(key, e.clone());
            e
        }
    };
    op.cache.insert(tys.to_vec(), exe.clone());
    Ok(exe)
}

/// Runs one op eagerly on concrete tensors; returns a Tensor (or a list for multi-result
/// ops). Shape/dtype rule violations raise ShapeError/DTypeError naming the op and types.
#[pyfunction]
#[pyo3(signature = (op, *operands))]
pub fn apply(py: Python<'_>, op: &Op, operands: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
    errors::guard(|| {
        let mut refs: Vec<Bound<'_, Tensor>> = Vec::with_capacity(operands.len());
        for o in operands.iter() {
            refs.push(o.cast_into::<Tensor>().map_err(|e| PyTypeError::new_err(format!("{}: operands must be Tensors ({})", op.kind.name(), PyErr::from(e))))?);
        }
        // Eager ops run on the host: a device-resident operand is read through its host copy.
        let bufs: Vec<&Buffer> = refs.iter().map(|t| t.get().host(py)).collect::<PyResult<_>>()?;
        let tys: Vec<TensorType> = bufs.iter().map(|b| b.ty().clone()).collect();
        let exe = eager_exec(py, op, &tys)?;
        let mut outs = run_py(py, &*exe, &bufs)?;
        if outs.len() == 1 {
            return Ok(wrap(py, outs.pop().expect("one output"))?.into_any());
        }
        let items = outs.into_iter().map(|b| wrap(py, b)).collect::<PyResult<Vec<_>>>()?;
        Ok(PyList::new(py, items)?.into_any().unbind())
    })
}

/// The registry name of the device eager ops run on (`cpu`, or `interp` with
/// `QUABLA_EAGER=interp`).
#[pyfunction]
pub fn eager_device_name() -> &'static str {
    eager_device()
}

/// Number of entries in the global eager cache (for tests and benchmarks).
#[pyfunction]
pub fn eager_cache_size() -> usize {
    global_eager().len()
}

/// Number of compiled CPU programs whose code is loaded in this process (every cache's
/// entries and every live `Compiled`): evicting or dropping compiled code lowers it.
#[pyfunction]
pub fn live_programs() -> usize {
    quabla_runtime::cpu::live_programs()
}

/// The exception for a device name that names no device, or one this machine cannot run:
/// UnsupportedOperationError with `.device` (and `.op` = `op`).
fn device_error(py: Python<'_>, e: &RuntimeError, op: &str, device: &str) -> PyErr {
    let class = match e {
        RuntimeError::UnknownDevice { .. } | RuntimeError::UnavailableDevice { .. } => "UnsupportedOperationError",
        _ => return run_error(py, e),
    };
    let err = errors::new(py, class, format!("{op}: {e}"));
    let _ = err.value(py).setattr("device", device);
    let _ = err.value(py).setattr("op", op);
    err
}

/// The canonical name of device `name` (`cuda` is `cuda:0` where the machine has GPUs);
/// UnsupportedOperationError for a name that is no device.
/// `op` names the caller in the message (`jit`, `device_put`).
#[pyfunction]
#[pyo3(signature = (name, op = "device"))]
pub fn canonical_device(py: Python<'_>, name: &str, op: &str) -> PyResult<String> {
    errors::guard(|| quabla_runtime::canonical_name(name).map_err(|e| device_error(py, &e, op, name)))
}

/// `t`'s value resident on device `name` (`qb.device_put`): the tensor itself when it is
/// already there, else a copy made by the device's executor (host memory for `cpu`).
#[pyfunction]
pub fn device_put(py: Python<'_>, t: &Bound<'_, Tensor>, name: &str) -> PyResult<Py<Tensor>> {
    errors::guard(|| {
        let canonical = quabla_runtime::canonical_name(name).map_err(|e| device_error(py, &e, "device_put", name))?;
        let tensor = t.get();
        if tensor.device_name() == canonical {
            return Ok(t.clone().unbind());
        }
        let exe = quabla_runtime::executor(&canonical).map_err(|e| device_error(py, &e, "device_put", name))?;
        let buf = py.detach(|| exe.put(&tensor.buf)).map_err(|e| run_error(py, &e))?;
        wrap(py, buf)
    })
}

/// The `op` all-reduce of one CUDA tensor per GPU through NCCL (`qb.distributed.all_reduce`
/// checks the arguments and handles host tensors): result `r` on tensor `r`'s GPU.
#[pyfunction]
pub fn nccl_all_reduce(py: Python<'_>, tensors: Vec<Bound<'_, Tensor>>, op: &str) -> PyResult<Vec<Py<Tensor>>> {
    errors::guard(|| {
        let op = quabla_runtime::nccl::Collective::parse(op).ok_or_else(|| errors::new(py, "InvalidArgumentError", format!("all_reduce: op must be sum, mean, max, min or prod, got {op:?}")))?;
        let bufs: Vec<&Buffer> = tensors.iter().map(|t| &t.get().buf).collect();
        let outs = py.detach(|| quabla_runtime::nccl::all_reduce(&bufs, op)).map_err(|e| device_error(py, &e, "all_reduce", "cuda"))?;
        outs.into_iter().map(|b| wrap(py, b)).collect()
    })
}

/// Returns free heap pages to the OS (`malloc_trim(0)`) and frees the GPUs' cached device
/// memory: the trace caches call it after evicting compiled programs.
#[pyfunction]
pub fn release_memory() -> PyResult<()> {
    errors::guard(|| {
        quabla_runtime::cpu::release_memory();
        quabla_runtime::registry::release_device_memory();
        Ok(())
    })
}

/// A compiled program: input and output types, its executable and the device it runs on.
#[pyclass(module = "quabla._quabla", frozen)]
pub struct Compiled {
    pub exe: Arc<dyn Executable>,
    pub device: Device,
    pub inputs: Vec<TensorType>,
    pub outputs: Vec<TensorType>,
}

#[pymethods]
impl Compiled {
    /// Runs on a sequence of Tensors; returns a list of Tensors.
    fn __call__(&self, py: Python<'_>, args: &Bound<'_, PyAny>) -> PyResult<Py<PyList>> {
        errors::guard(|| {
            let items: Vec<Bound<'_, Tensor>> = args.try_iter()?.map(|a| a.and_then(|a| a.cast_into::<Tensor>().map_err(PyErr::from))).collect::<PyResult<_>>()?;
            if items.len() != self.inputs.len() {
                return Err(PyTypeError::new_err(format!("compiled program expects {} inputs, got {}", self.inputs.len(), items.len())));
            }
            let bufs: Vec<&Buffer> = items.iter().map(|t| &t.get().buf).collect();
            for (i, (b, t)) in bufs.iter().zip(&self.inputs).enumerate() {
                if b.ty() != t {
                    return Err(errors::new(py, "ShapeError", format!("compiled program: input {i} has type {}, expected {t}", b.ty())));
                }
            }
            let outs = run_py(py, &*self.exe, &bufs)?;
            let items = outs.into_iter().map(|b| wrap(py, b)).collect::<PyResult<Vec<_>>>()?;
            Ok(PyList::new(py, items)?.unbind())
        })
    }

    /// Input (shape, dtype) pairs.
    #[getter]
    fn in_avals<'py>(&self, py: Python<'py>) -> PyResult<Vec<(Bound<'py, PyTuple>, Py<PyAny>)>> {
        errors::guard(|| {
            self.inputs.iter().map(|t| Ok((shape_tuple(py, &t.shape)?, py_dtype(py, t.dtype)))).collect()
        })
    }

    /// Output (shape, dtype) pairs.
    #[getter]
    fn out_avals<'py>(&self, py: Python<'py>) -> PyResult<Vec<(Bound<'py, PyTuple>, Py<PyAny>)>> {
        errors::guard(|| {
            self.outputs.iter().map(|t| Ok((shape_tuple(py, &t.shape)?, py_dtype(py, t.dtype)))).collect()
        })
    }

    /// The engine: the device name (`cpu`), or "interpreter" for the reference interpreter.
    #[getter]
    fn engine(&self) -> &'static str {
        match self.device.kind {
            DeviceKind::Reference => "interpreter",
            DeviceKind::Cpu | DeviceKind::Gpu => self.device.name,
        }
    }

    /// The registry name of the device the program was compiled for.
    #[getter]
    fn device(&self) -> &'static str {
        self.device.name
    }
}

/// How the outputs of a compiled signature become the function's result.
enum Rebuild {
    /// Exactly one array leaf.
    Single,
    /// A flat tuple of array leaves (built in Rust: `value_and_grad` and the like).
    Tuple,
    /// Anything else: `unflatten(leaves)`.
    Call(Py<PyAny>),
}

/// One compiled signature of a jitted function.
struct FastEntry {
    exe: Arc<dyn Executable>,
    rebuild: Rebuild,
    /// Calls served (read by the Python LRU when it chooses what to evict).
    hits: std::sync::atomic::AtomicU64,
}

/// Set while `qb.disable_jit()` is in effect: every jitted call then goes to `slow`, which
/// runs the function op by op.
static JIT_DISABLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Sets whether jitted calls bypass their compiled programs (`qb.disable_jit`); returns the
/// previous setting.
#[pyfunction]
pub fn set_jit_disabled(disabled: bool) -> PyResult<bool> {
    errors::guard(|| Ok(JIT_DISABLED.swap(disabled, std::sync::atomic::Ordering::Relaxed)))
}

/// The object `qb.jit` returns (subclassed in Python by `quabla.jit.Jitted`). Calls whose
/// positional arguments are pytrees (tuples, lists, string-keyed dicts, None) of Tensors and
/// static values are served from the Rust cache under their [`callkey`]; all other calls and
/// cache misses go to `slow(self, args, kwargs)` (a plain function, so that no reference
/// cycle runs through the Rust object).
#[pyclass(module = "quabla._quabla", subclass, frozen)]
pub struct JitFunction {
    fast: RwLock<HashMap<Vec<u8>, FastEntry>>,
    slow: Py<PyAny>,
}

#[pymethods]
impl JitFunction {
    #[new]
    #[pyo3(signature = (slow, *_args, **_kwargs))]
    fn py_new(slow: Py<PyAny>, _args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        errors::guard(|| Ok({
            JitFunction { fast: RwLock::new(HashMap::new()), slow }
        }))
    }

    #[pyo3(signature = (*args, **kwargs))]
    fn __call__(slf: &Bound<'_, Self>, args: &Bound<'_, PyTuple>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Py<PyAny>> {
        errors::guard(|| {
            let py = slf.py();
            let this = slf.get();
            if kwargs.is_none_or(|k| k.is_empty()) && !JIT_DISABLED.load(std::sync::atomic::Ordering::Relaxed) {
                let mut key: Vec<u8> = Vec::with_capacity(8 + 24 * args.len());
                let mut refs: Vec<callkey::Leaf<'_>> = Vec::with_capacity(args.len());
                if callkey::call(args, &mut key, &mut refs) {
                    let found = {
                        let map = this.fast.read().unwrap_or_else(|e| e.into_inner());
                        map.get(&key).map(|e| {
                            e.hits.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let r = match &e.rebuild {
                                Rebuild::Single => Rebuild::Single,
                                Rebuild::Tuple => Rebuild::Tuple,
                                Rebuild::Call(r) => Rebuild::Call(r.clone_ref(py)),
                            };
                            (e.exe.clone(), r)
                        })
                    };
                    if let Some((exe, rebuild)) = found {
                        callkey::import_arrays(py, &mut refs)?;
                        let bufs: Vec<&Buffer> = refs
                            .iter()
                            .filter_map(|l| match l {
                                callkey::Leaf::Tensor(t) => Some(&t.get().buf),
                                callkey::Leaf::Array(..) => None,
                            })
                            .collect();
                        let mut outs = run_py(py, &*exe, &bufs)?;
                        return match rebuild {
                            Rebuild::Single => Ok(wrap(py, outs.pop().ok_or_else(|| PyRuntimeError::new_err("program has no output"))?)?.into_any()),
                            Rebuild::Tuple => {
                                let items = outs.into_iter().map(|b| wrap(py, b)).collect::<PyResult<Vec<_>>>()?;
                                Ok(PyTuple::new(py, items)?.into_any().unbind())
                            }
                            Rebuild::Call(r) => {
                                let items = outs.into_iter().map(|b| wrap(py, b)).collect::<PyResult<Vec<_>>>()?;
                                r.call1(py, (PyList::new(py, items)?,))
                            }
                        };
                    }
                }
            }
            this.slow.call1(py, (slf, args, kwargs))
        })
    }

    /// Serves calls like `args` (positional; `statics` the static positions among them) with
    /// `compiled`: the result is the single output (`rebuild` None), a tuple of the outputs
    /// (`as_tuple`), or `rebuild(outputs)`. Returns the call key ([`callkey`]), or None when
    /// such calls cannot be keyed (a dynamic leaf that is not a Tensor, a static value other
    /// than None, bool, int, float, str and their tuples, lists and dicts).
    #[pyo3(signature = (args, statics, compiled, rebuild=None, as_tuple=false))]
    fn _register<'py>(&self, py: Python<'py>, args: &Bound<'py, PyTuple>, statics: Vec<usize>, compiled: &Compiled, rebuild: Option<Py<PyAny>>, as_tuple: bool) -> PyResult<Option<Bound<'py, PyBytes>>> {
        errors::guard(|| {
            let Some((key, leaves)) = callkey::registration(args, &statics) else { return Ok(None) };
            if leaves.len() != compiled.inputs.len() || leaves.iter().zip(&compiled.inputs).any(|(l, ty)| l.ty() != *ty) {
                return Err(PyValueError::new_err("fast-path arguments differ from the program's input types"));
            }
            let rebuild = match (rebuild, as_tuple) {
                (_, true) => Rebuild::Tuple,
                (Some(r), false) => Rebuild::Call(r),
                (None, false) if compiled.outputs.len() == 1 => Rebuild::Single,
                (None, false) => return Err(PyValueError::new_err("a program without a rebuild function must have exactly one output")),
            };
            let out = PyBytes::new(py, &key);
            self.fast.write().unwrap_or_else(|e| e.into_inner()).insert(key, FastEntry { exe: compiled.exe.clone(), rebuild, hits: 0.into() });
            Ok(Some(out))
        })
    }

    /// Drops every fast-path signature (their executables are freed once no call runs them).
    fn _fast_clear(&self) -> PyResult<()> {
        errors::guard(|| {
            self.fast.write().unwrap_or_else(|e| e.into_inner()).clear();
            Ok(())
        })
    }

    /// Drops the fast-path entry of call key `key` (an LRU eviction of the Python trace
    /// cache); true when it was registered.
    fn _fast_remove(&self, key: &[u8]) -> PyResult<bool> {
        errors::guard(|| {
            let removed = self.fast.write().unwrap_or_else(|e| e.into_inner()).remove(key);
            // The executable is freed here unless a running call still holds it.
            Ok(removed.is_some())
        })
    }

    /// Calls the fast path served under call key `key` (None when not registered): the
    /// Python trace cache folds them into its LRU order.
    fn _fast_hits(&self, key: &[u8]) -> PyResult<Option<u64>> {
        errors::guard(|| Ok(self.fast.read().unwrap_or_else(|e| e.into_inner()).get(key).map(|e| e.hits.load(std::sync::atomic::Ordering::Relaxed))))
    }

    /// Number of signatures in the fast-path cache.
    fn _fast_size(&self) -> usize {
        self.fast.read().unwrap_or_else(|e| e.into_inner()).len()
    }

    fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        visit.call(&self.slow)?;
        for e in self.fast.read().unwrap_or_else(|e| e.into_inner()).values() {
            if let Rebuild::Call(r) = &e.rebuild {
                visit.call(r)?;
            }
        }
        Ok(())
    }
}

/// The pipeline `kind` ("jit", "eager", "opt", "api") compiled with last in this process, as
/// (description, address), or None when it compiled nothing yet. The address identifies the
/// pipeline object: equal addresses mean the same object.
#[pyfunction]
pub fn pipeline_used(kind: &str) -> PyResult<Option<(String, usize)>> {
    errors::guard(|| {
        let caller = quabla_compiler::Caller::from_name(kind).ok_or_else(|| PyValueError::new_err(format!("pipeline_used: unknown kind {kind:?} (expected jit, eager, opt or api)")))?;
        Ok(quabla_compiler::pipeline_used(caller).map(|p| (p.text(), p as *const quabla_compiler::Pipeline as usize)))
    })
}

/// The process-wide default compile pipeline as (description, address).
#[pyfunction]
pub fn default_pipeline() -> PyResult<(String, usize)> {
    errors::guard(|| Ok({
        let p = quabla_compiler::default_pipeline();
        (p.text(), p as *const quabla_compiler::Pipeline as usize)
    }))
}

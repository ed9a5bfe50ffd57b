//! The `mlx` executor: programs run by MLX through its Python API. The runtime crate cannot
//! link Python, so this crate registers the executor with the registry's `mlx` row
//! ([`register`], at module import). Compiling emits the optimized module (the same one every
//! executor gets: transforms already expanded by Quabla's passes) as Python source
//! (`quabla_lowering::mlx`) and hands it to `quabla._mlx.build`, which wraps the straight-line
//! functions with `mx.compile` and returns the program's callable (cached per source text);
//! every unsupported op is a `LowerError` here, at compile time.
//!
//! A run takes the GIL, passes inputs that are already MLX arrays (outputs of an earlier mlx
//! run) as they are and copies host inputs into MLX (`mx.array` of a NumPy view over the
//! buffer copies), evaluates the outputs and keeps them as `mx.array`s behind [`MlxStorage`]:
//! results stay resident in MLX until read (`copy_to_host` through the buffer protocol).
use std::any::Any;
use std::ffi::c_char;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use quabla_dialect::{Module, TensorType};
use quabla_runtime::executor::check_inputs;
use quabla_runtime::{Buffer, CompileOptions, DeviceStorage, Executable, Executor, RuntimeError, Storage};

/// The registry name.
pub const DEVICE: &str = "mlx";

/// Registers the executor with the runtime registry (idempotent).
pub fn register() {
    let _ = quabla_runtime::registry::register_executor(DEVICE, get);
}

/// The executor when `mlx.core` imports (checked once per process, without blocking other
/// threads: a race checks twice).
fn get() -> Option<&'static dyn Executor> {
    static STATE: AtomicU8 = AtomicU8::new(0);
    static MLX: MlxExecutor = MlxExecutor;
    let s = match STATE.load(Ordering::Acquire) {
        0 => {
            let ok = Python::attach(|py| py.import("quabla._mlx").and_then(|m| m.call_method0("available")).and_then(|v| v.extract::<bool>()).unwrap_or(false));
            let s = if ok { 1 } else { 2 };
            STATE.store(s, Ordering::Release);
            s
        }
        s => s,
    };
    (s == 1).then_some(&MLX as &dyn Executor)
}

fn py_error(py: Python<'_>, what: &str, e: PyErr) -> RuntimeError {
    RuntimeError::Compile(format!("mlx: {what}: {}", e.value(py)))
}

/// The `mlx` executor.
pub struct MlxExecutor;

impl Executor for MlxExecutor {
    fn name(&self) -> &str {
        DEVICE
    }

    fn compile(&self, m: &Module, entry: &str, _opts: &CompileOptions) -> Result<Arc<dyn Executable>, RuntimeError> {
        let f = m.func(entry).ok_or_else(|| RuntimeError::NoEntry(entry.to_string()))?;
        let inputs: Vec<TensorType> = f.params.iter().map(|v| f.ty(*v).clone()).collect();
        let outputs = f.result_types();
        let prog = quabla_lowering::mlx::emit_module(m, entry)?;
        Python::attach(|py| {
            let module = py.import("quabla._mlx").map_err(|e| py_error(py, "import quabla._mlx", e))?;
            let func = module.call_method1("build", (prog.source.as_str(), prog.entry.as_str())).map_err(|e| py_error(py, "building the program", e))?;
            let run = module.getattr("run").map_err(|e| py_error(py, "quabla._mlx.run", e))?;
            let to_mx = module.getattr("to_mx").map_err(|e| py_error(py, "quabla._mlx.to_mx", e))?;
            let host = module.getattr("host_bytes").map_err(|e| py_error(py, "quabla._mlx.host_bytes", e))?;
            Ok(Arc::new(MlxExecutable {
                entry: entry.to_string(),
                inputs,
                outputs,
                func: func.unbind(),
                run: run.unbind(),
                to_mx: to_mx.unbind(),
                host: Arc::new(host.unbind()),
            }) as Arc<dyn Executable>)
        })
    }

    /// `buf` as an MLX array (the buffer itself when it already is one).
    fn put(&self, buf: &Buffer) -> Result<Buffer, RuntimeError> {
        if let Storage::Device(d) = buf.storage() {
            if d.as_any().is_some_and(|a| a.is::<MlxStorage>()) {
                return Ok(buf.clone());
            }
        }
        Python::attach(|py| {
            let module = py.import("quabla._mlx").map_err(|e| py_error(py, "import quabla._mlx", e))?;
            let to_mx = module.getattr("to_mx").map_err(|e| py_error(py, "quabla._mlx.to_mx", e))?;
            let host = module.getattr("host_bytes").map_err(|e| py_error(py, "quabla._mlx.host_bytes", e))?;
            let array = mlx_array(py, &to_mx, buf, "device_put")?;
            let storage = MlxStorage { array: array.unbind(), bytes: buf.ty().checked_byte_size().unwrap_or(0), host: Arc::new(host.unbind()) };
            Buffer::from_device(buf.ty().clone(), Arc::new(storage)).map_err(|source| RuntimeError::Buffer { entry: "device_put".into(), source })
        })
    }
}

/// A compiled program: the callable `quabla._mlx.build` returned and the helpers of a call.
pub struct MlxExecutable {
    entry: String,
    inputs: Vec<TensorType>,
    outputs: Vec<TensorType>,
    func: Py<PyAny>,
    run: Py<PyAny>,
    to_mx: Py<PyAny>,
    host: Arc<Py<PyAny>>,
}

/// The dtype's MLIR spelling (`f32`, `ui8`, ...), as `quabla._mlx.to_mx` reads it.
fn dtype_mlir(t: &TensorType) -> &'static str {
    t.dtype.mlir()
}

/// An MLX array holding `b`: the array itself for an MLX-resident buffer, else a copy of the
/// host bytes through `to_mx` (`quabla._mlx.to_mx`; device buffers of other executors go
/// through the host). `entry` names the program (or `device_put`) in errors.
fn mlx_array<'py>(py: Python<'py>, to_mx: &Bound<'py, PyAny>, b: &Buffer, entry: &str) -> Result<Bound<'py, PyAny>, RuntimeError> {
    if let Storage::Device(d) = b.storage() {
        if let Some(s) = d.as_any().and_then(|a| a.downcast_ref::<MlxStorage>()) {
            return Ok(s.array.bind(py).clone());
        }
    }
    let host = b.to_host().map_err(|source| RuntimeError::Buffer { entry: entry.to_string(), source })?;
    let bytes = host.host_bytes().map_err(|source| RuntimeError::Buffer { entry: entry.to_string(), source })?;
    // SAFETY: a read-only memoryview over `bytes`, which outlive it: `to_mx` copies the
    // data into MLX before returning and the view is dropped right after.
    let view = unsafe {
        let p = ffi::PyMemoryView_FromMemory(bytes.as_ptr() as *mut c_char, bytes.len() as ffi::Py_ssize_t, ffi::PyBUF_READ);
        Bound::from_owned_ptr_or_err(py, p)
    }
    .map_err(|e| py_error(py, "input view", e))?;
    let shape = PyTuple::new(py, b.shape()).map_err(|e| py_error(py, "input shape", e))?;
    let arr = to_mx.call1((view.clone(), dtype_mlir(b.ty()), shape)).map_err(|e| py_error(py, "input conversion", e))?;
    let _ = view.call_method0("release");
    Ok(arr)
}

impl Executable for MlxExecutable {
    fn input_types(&self) -> &[TensorType] {
        &self.inputs
    }

    fn output_types(&self) -> &[TensorType] {
        &self.outputs
    }

    fn run(&self, inputs: &[&Buffer]) -> Result<Vec<Buffer>, RuntimeError> {
        check_inputs(&self.entry, &self.inputs, inputs)?;
        Python::attach(|py| {
            let args = inputs.iter().map(|b| mlx_array(py, self.to_mx.bind(py), b, &self.entry)).collect::<Result<Vec<_>, _>>()?;
            let outs = self.run.bind(py).call1((self.func.bind(py), args)).map_err(|e| RuntimeError::Compile(format!("mlx: running @{}: {}", self.entry, e.value(py))))?;
            let outs: Vec<Bound<'_, PyAny>> = outs.extract().map_err(|e: PyErr| py_error(py, "outputs", e))?;
            if outs.len() != self.outputs.len() {
                return Err(RuntimeError::Compile(format!("mlx: @{} returned {} outputs, expected {}", self.entry, outs.len(), self.outputs.len())));
            }
            outs.into_iter()
                .zip(&self.outputs)
                .map(|(a, t)| {
                    let storage = MlxStorage { array: a.unbind(), bytes: t.checked_byte_size().unwrap_or(0), host: self.host.clone() };
                    Buffer::from_device(t.clone(), Arc::new(storage)).map_err(|source| RuntimeError::Buffer { entry: self.entry.clone(), source })
                })
                .collect()
        })
    }
}

/// A buffer's bytes held by MLX: an evaluated `mx.array` of the buffer's type.
pub struct MlxStorage {
    array: Py<PyAny>,
    bytes: usize,
    /// `quabla._mlx.host_bytes`: the array as a C-contiguous NumPy array.
    host: Arc<Py<PyAny>>,
}

impl DeviceStorage for MlxStorage {
    fn device(&self) -> &str {
        DEVICE
    }

    fn byte_len(&self) -> usize {
        self.bytes
    }

    fn copy_to_host(&self, dst: &mut [u8]) -> Result<(), String> {
        Python::attach(|py| {
            let a = self.host.bind(py).call1((self.array.bind(py),)).map_err(|e| e.value(py).to_string())?;
            // SAFETY: `view` is filled by PyObject_GetBuffer and released below; the exporter
            // (a C-contiguous NumPy array) keeps the memory alive while the view is held.
            unsafe {
                let mut view: ffi::Py_buffer = std::mem::zeroed();
                if ffi::PyObject_GetBuffer(a.as_ptr(), &mut view, ffi::PyBUF_C_CONTIGUOUS) != 0 {
                    return Err(PyErr::fetch(py).value(py).to_string());
                }
                let n = view.len as usize;
                let r = if n == dst.len() {
                    std::ptr::copy_nonoverlapping(view.buf as *const u8, dst.as_mut_ptr(), n);
                    Ok(())
                } else {
                    Err(format!("the MLX array holds {n} bytes, the buffer {}", dst.len()))
                };
                ffi::PyBuffer_Release(&mut view);
                r
            }
        })
    }

    fn as_any(&self) -> Option<&dyn Any> {
        Some(self)
    }
}

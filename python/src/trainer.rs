//! Device-resident training (`qb.optim.Trainer`, python/quabla/_trainer.py): a compiled step
//! program `(state..., fixed data..., batch...) -> (loss, aux..., new state...)` whose state buffers
//! (parameters, optimizer state, step counter) and data buffers stay here between steps.
//!
//! `step()` with no arguments is one call: run the executable on the held buffers and move
//! its state outputs into the state slots (the buffers themselves, no copy; on an executor
//! whose buffers live on a device they stay there). `step(*batch)` first replaces the batch
//! buffers: directly when every batch position is one Tensor, else through the Python
//! function given at bind time that flattens the batch pytrees. Readback (`_state`, `_loss`, `_aux`)
//! wraps the held buffers as host Tensors (`Buffer::to_host`: the same buffer on the host, a
//! copy from a device).
//!
//! Invariants: after `_bind`, `state` has the types of outputs `1 + n_aux..` and `batch` the types of
//! the last inputs; a failed step (bad batch, failed run) leaves every slot as it was.
use std::sync::Arc;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use quabla_dialect::TensorType;
use quabla_runtime::{Buffer, Executable};

use crate::errors;
use crate::exec::{run_py, Compiled};
use crate::tensor::{wrap, Tensor};

/// The compiled step and the buffers it runs on.
struct Resident {
    exe: Arc<dyn Executable>,
    state: Vec<Buffer>,
    fixed: Vec<Buffer>,
    batch: Vec<Buffer>,
    /// The batch leaves' names for error messages (`data[1]['x']`).
    batch_names: Vec<String>,
    /// `flatten(self, args) -> list[Tensor]` for batches that are not one Tensor per position.
    flatten: Option<Py<PyAny>>,
    /// Batch positions: the number of arguments `step` takes when it replaces the batch.
    positions: usize,
    /// Every batch position is one Tensor leaf (no flattening needed).
    direct: bool,
    /// Outputs before the new state: the loss, then `has_aux`'s auxiliary leaves.
    n_head: usize,
    /// The last step's head outputs (empty before the first step).
    head: Vec<Buffer>,
    steps: u64,
}

/// The Rust half of `quabla.optim.Trainer` (subclassed there): holds the step program and
/// its resident buffers.
#[pyclass(module = "quabla._quabla", subclass)]
pub struct ResidentStep {
    inner: Option<Resident>,
}

impl ResidentStep {
    fn inner(&self) -> PyResult<&Resident> {
        self.inner.as_ref().ok_or_else(|| PyTypeError::new_err("Trainer: not initialised (its __init__ did not run)"))
    }
}

fn buffers(items: Vec<PyRef<'_, Tensor>>) -> Vec<Buffer> {
    items.iter().map(|t| t.buf.clone()).collect()
}

/// A held buffer as a host Tensor: a handle for a host buffer, a copy of a device buffer.
fn readback(py: Python<'_>, b: &Buffer) -> PyResult<Py<Tensor>> {
    let h = b.to_host().map_err(|e| errors::new(py, errors::buffer_class_of(&e), format!("Trainer: reading back a {} buffer failed: {e}", b.ty())))?;
    wrap(py, h)
}

/// The error of a step called while another call on the same Trainer runs (another thread,
/// or the batch-flattening callback re-entering).
fn busy(py: Python<'_>) -> PyErr {
    errors::new(py, "InvalidArgumentError", "Trainer.step: another call on this Trainer is running (a Trainer is not shared between threads; build one per thread)")
}

/// Checks that `bufs` have the types `want`, naming the mismatched leaf by `names`.
fn check_types(py: Python<'_>, what: &str, names: &[String], want: &[TensorType], bufs: &[Buffer]) -> PyResult<()> {
    if want.len() != bufs.len() {
        return Err(errors::new(py, "InvalidArgumentError", format!("Trainer.{what}: expected {} array leaves, got {}", want.len(), bufs.len())));
    }
    for (i, (w, b)) in want.iter().zip(bufs).enumerate() {
        let got = b.ty();
        if got == w {
            continue;
        }
        let name = names.get(i).map_or_else(|| format!("leaf {i}"), |s| s.clone());
        let (class, what_differs) = if got.dtype != w.dtype { ("DTypeError", "dtype") } else { ("ShapeError", "shape") };
        return Err(errors::new(py, class, format!("Trainer.{what}: {name} has type {got}, but the step program was compiled for {w} (its {what_differs} differs); build a new Trainer for other shapes or dtypes")));
    }
    Ok(())
}

#[pymethods]
impl ResidentStep {
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn py_new(_args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        errors::guard(|| Ok(ResidentStep { inner: None }))
    }

    /// Sets the step program and its initial buffers. `compiled` takes `state + fixed +
    /// batch` and returns `[loss] + n_aux auxiliary leaves + new state`.
    #[pyo3(signature = (compiled, state, fixed, batch, batch_names, positions, direct, flatten=None, n_aux=0))]
    #[allow(clippy::too_many_arguments)]
    fn _bind(&mut self, py: Python<'_>, compiled: &Compiled, state: Vec<PyRef<'_, Tensor>>, fixed: Vec<PyRef<'_, Tensor>>, batch: Vec<PyRef<'_, Tensor>>, batch_names: Vec<String>, positions: usize, direct: bool, flatten: Option<Py<PyAny>>, n_aux: usize) -> PyResult<()> {
        errors::guard(|| {
            let (state, fixed, batch) = (buffers(state), buffers(fixed), buffers(batch));
            let n_in = state.len() + fixed.len() + batch.len();
            let n_head = 1 + n_aux;
            if compiled.inputs.len() != n_in || compiled.outputs.len() != state.len() + n_head {
                return Err(errors::new(py, "QuablaError", format!("Trainer: the step program has {} inputs and {} outputs, expected {n_in} and {}", compiled.inputs.len(), compiled.outputs.len(), state.len() + n_head)));
            }
            let all: Vec<Buffer> = state.iter().chain(&fixed).chain(&batch).cloned().collect();
            check_types(py, "__init__", &[], &compiled.inputs, &all)?;
            if compiled.outputs[n_head..] != compiled.inputs[..state.len()] {
                return Err(errors::new(py, "QuablaError", "Trainer: the step program's new state has other types than its state inputs"));
            }
            if !compiled.outputs[0].shape.is_empty() {
                return Err(errors::new(py, "ShapeError", format!("Trainer: the loss must be a scalar, got {}", compiled.outputs[0])));
            }
            self.inner = Some(Resident { exe: compiled.exe.clone(), state, fixed, batch, batch_names, flatten, positions, direct, n_head, head: Vec::new(), steps: 0 });
            Ok(())
        })
    }

    /// One training step: replaces the batch leaves when `batch` is given (one argument per
    /// position of `batch_argnums`), runs the step program on the resident buffers and keeps
    /// its outputs as the new state. Returns None; the loss (and aux) stay resident (`loss()`).
    #[pyo3(signature = (*batch))]
    fn step(slf: &Bound<'_, Self>, batch: &Bound<'_, PyTuple>) -> PyResult<()> {
        errors::guard(|| {
            let py = slf.py();
            let new_batch = if batch.is_empty() {
                None
            } else {
                let (direct, positions, flatten) = {
                    let this = slf.try_borrow().map_err(|_| busy(py))?;
                    let inner = this.inner()?;
                    (inner.direct, inner.positions, inner.flatten.as_ref().map(|f| f.clone_ref(py)))
                };
                if batch.len() != positions {
                    return Err(errors::new(py, "InvalidArgumentError", format!("Trainer.step: expected {positions} batch argument(s) (one per batch_argnums position) or none, got {}", batch.len())));
                }
                let mut bufs = Vec::with_capacity(batch.len());
                let mut all_tensors = direct;
                if direct {
                    for a in batch.iter() {
                        match a.cast::<Tensor>() {
                            Ok(t) => bufs.push(t.get().buf.clone()),
                            Err(_) => {
                                all_tensors = false;
                                break;
                            }
                        }
                    }
                }
                if !all_tensors {
                    let f = flatten.ok_or_else(|| errors::new(py, "ArgumentTypeError", "Trainer.step: batch arguments must be Tensors"))?;
                    let leaves = f.call1(py, (slf, batch))?;
                    let leaves = leaves.bind(py).cast::<PyList>().map_err(PyErr::from)?.clone();
                    bufs = leaves.iter().map(|x| x.cast::<Tensor>().map(|t| t.get().buf.clone()).map_err(PyErr::from)).collect::<PyResult<_>>()?;
                }
                Some(bufs)
            };
            let mut this = slf.try_borrow_mut().map_err(|_| busy(py))?;
            let inner = this.inner.as_mut().ok_or_else(|| PyTypeError::new_err("Trainer: not initialised (its __init__ did not run)"))?;
            if let Some(bufs) = &new_batch {
                let n_in = inner.exe.input_types().len();
                let want = &inner.exe.input_types()[n_in - inner.batch.len()..];
                check_types(py, "step", &inner.batch_names, want, bufs)?;
            }
            let outs = {
                let batch = new_batch.as_ref().unwrap_or(&inner.batch);
                let inputs: Vec<&Buffer> = inner.state.iter().chain(&inner.fixed).chain(batch).collect();
                run_py(py, &*inner.exe, &inputs)?
            };
            // The run succeeded: only now does anything change.
            if let Some(bufs) = new_batch {
                inner.batch = bufs;
            }
            let mut outs = outs.into_iter();
            inner.head = outs.by_ref().take(inner.n_head).collect();
            for (s, o) in inner.state.iter_mut().zip(outs) {
                *s = o;
            }
            inner.steps += 1;
            Ok(())
        })
    }

    /// The loss of the last step, as a host Tensor (read back from the executor), or None
    /// before the first step.
    fn _loss(&self, py: Python<'_>) -> PyResult<Option<Py<Tensor>>> {
        errors::guard(|| self.inner()?.head.first().map(|b| readback(py, b)).transpose())
    }

    /// The last step's auxiliary leaves (`has_aux`) as host Tensors, or None before the first
    /// step.
    fn _aux(&self, py: Python<'_>) -> PyResult<Option<Vec<Py<Tensor>>>> {
        errors::guard(|| {
            let inner = self.inner()?;
            if inner.head.is_empty() {
                return Ok(None);
            }
            inner.head[1..].iter().map(|b| readback(py, b)).collect::<PyResult<Vec<_>>>().map(Some)
        })
    }

    /// The resident state (step counter, parameters, optimizer slots) as host Tensors (the
    /// held buffers themselves when they are host buffers).
    fn _state(&self, py: Python<'_>) -> PyResult<Vec<Py<Tensor>>> {
        errors::guard(|| self.inner()?.state.iter().map(|b| readback(py, b)).collect())
    }

    /// Replaces the resident state (same count, shapes and dtypes; `names` name the leaves in
    /// errors).
    fn _set_state(&mut self, py: Python<'_>, state: Vec<PyRef<'_, Tensor>>, names: Vec<String>) -> PyResult<()> {
        errors::guard(|| {
            let bufs = buffers(state);
            let inner = self.inner.as_mut().ok_or_else(|| PyTypeError::new_err("Trainer: not initialised (its __init__ did not run)"))?;
            let want = &inner.exe.input_types()[..inner.state.len()];
            check_types(py, "state", &names, want, &bufs)?;
            inner.state = bufs;
            Ok(())
        })
    }

    /// Steps run since the Trainer was built.
    #[getter]
    fn steps(&self) -> PyResult<u64> {
        errors::guard(|| Ok(self.inner()?.steps))
    }

    fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        if let Some(f) = self.inner.as_ref().and_then(|i| i.flatten.as_ref()) {
            visit.call(f)?;
        }
        Ok(())
    }
}

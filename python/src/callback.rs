//! Host callbacks from Python: `register_host_callback(fn)` registers `fn` with the process-wide
//! registry of `quabla_interp::callback` and returns the id that a `quabla.host_callback` op
//! names. When the last operand of a callback arrives (from compiled code or the interpreter)
//! `fn` is called, with the GIL, on a list of `(Tensor, batched flags)` pairs. An exception it
//! raises cannot unwind through compiled code: it is reported with `sys.unraisablehook` (as
//! Python reports exceptions in `__del__`) and the program goes on.
use std::cell::RefCell;
use std::sync::Arc;

use pyo3::prelude::*;
use quabla_runtime::interp::callback::{register, register_pure, Arg};
use quabla_runtime::interp::Buffer;

use crate::errors::guard;
use crate::tensor::Tensor;

/// Registers a Python callable as a host callback; returns its id.
#[pyfunction]
pub fn register_host_callback(f: Py<PyAny>) -> PyResult<i64> {
    guard(|| {
        Ok(register(Arc::new(move |args: Vec<Arg>| {
            Python::attach(|py| {
                let items: PyResult<Vec<(Py<Tensor>, Vec<i64>)>> = args.into_iter().map(|a| Ok((Py::new(py, Tensor::new(a.value))?, a.batched))).collect();
                if let Err(e) = items.and_then(|items| f.call1(py, (items,))) {
                    e.write_unraisable(py, Some(f.bind(py)));
                }
            })
        })))
    })
}

thread_local! {
    /// The exception a pure callback's Python function raised during the current program run
    /// (compiled code cannot unwind it): the caller raises it after the run (`take_raised`).
    static RAISED: RefCell<Option<PyErr>> = const { RefCell::new(None) };
}

/// The exception a pure callback raised since the last call, if any.
pub fn take_raised() -> Option<PyErr> {
    RAISED.with(|r| r.borrow_mut().take())
}

/// Registers a Python callable as a pure callback (`qb.pure_callback`); returns its id. When a
/// program fetches its result 0 (`callback_result`), `fn(items, (shape, dtype code), flags)`
/// runs with the delivered operands as `(Tensor, batched flags)` pairs, the type of result 0
/// and its batched flags (its leading dims are the axes of the vmaps flagged 1); it returns
/// every result as a Tensor. An exception it
/// raises is kept for the caller of the program ([`take_raised`]), which raises it.
#[pyfunction]
pub fn register_pure_callback(f: Py<PyAny>) -> PyResult<i64> {
    guard(|| {
        Ok(register_pure(Arc::new(move |args: Vec<Arg>, ty: &quabla_dialect::TensorType, batched: &[i64]| {
            Python::attach(|py| {
                let run = || -> PyResult<Vec<Buffer>> {
                    let items: Vec<(Py<Tensor>, Vec<i64>)> = args.into_iter().map(|a| Ok((Py::new(py, Tensor::new(a.value))?, a.batched))).collect::<PyResult<_>>()?;
                    let out = f.call1(py, (items, (ty.shape.clone(), crate::tensor::code(ty.dtype)), batched.to_vec()))?;
                    let out: Vec<Py<Tensor>> = out.extract(py)?;
                    Ok(out.iter().map(|t| t.borrow(py).buf.clone()).collect())
                };
                run().map_err(|e| {
                    let msg = e.to_string();
                    RAISED.with(|r| {
                        let mut r = r.borrow_mut();
                        if r.is_none() {
                            *r = Some(e);
                        }
                    });
                    msg
                })
            })
        })))
    })
}

//! Host callbacks from Python: `register_host_callback(fn)` registers `fn` with the process-wide
//! registry of `quabla_interp::callback` and returns the id that a `quabla.host_callback` op
//! names. When the last operand of a callback arrives (from compiled code or the interpreter)
//! `fn` is called, with the GIL, on a list of `(Tensor, batched flags)` pairs. An exception it
//! raises cannot unwind through compiled code: it is reported with `sys.unraisablehook` (as
//! Python reports exceptions in `__del__`) and the program goes on.
use std::sync::Arc;

use pyo3::prelude::*;
use quabla_runtime::interp::callback::{register, Arg};

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

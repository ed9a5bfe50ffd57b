//! The extension module `quabla._quabla`: the Rust half of the Python front. It mirrors the
//! Rust crates: `tensor` (runtime buffers as `quabla.Tensor`, NumPy interop), `ops` (dialect
//! op kinds), `trace` (the traced function and its program), `exec` (CPU executor, eager
//! execution, the jit hot path), `errors` (the Python exception hierarchy).
mod errors;
mod exec;
mod ops;
mod tensor;
mod trace;

use pyo3::prelude::*;

/// The device names this build can compile for.
#[pyfunction]
fn devices() -> Vec<&'static str> {
    vec!["cpu"]
}

#[pymodule]
fn _quabla(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<tensor::Tensor>()?;
    m.add_class::<ops::Op>()?;
    m.add_class::<trace::TraceBuilder>()?;
    m.add_class::<trace::Program>()?;
    m.add_class::<exec::Compiled>()?;
    m.add_class::<exec::JitFunction>()?;
    m.add_function(wrap_pyfunction!(tensor::register_dtypes, m)?)?;
    m.add_function(wrap_pyfunction!(tensor::from_buffer, m)?)?;
    m.add_function(wrap_pyfunction!(tensor::full, m)?)?;
    m.add_function(wrap_pyfunction!(tensor::share, m)?)?;
    m.add_function(wrap_pyfunction!(exec::apply, m)?)?;
    m.add_function(wrap_pyfunction!(exec::eager_cache_size, m)?)?;
    m.add_function(wrap_pyfunction!(devices, m)?)?;
    m.add_function(wrap_pyfunction!(errors::error_variants, m)?)?;
    Ok(())
}

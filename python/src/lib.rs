//! The extension module `quabla._quabla`: the Rust half of the Python front. It mirrors the
//! Rust crates: `tensor` (runtime buffers as `quabla.Tensor`, NumPy interop), `ops` (dialect
//! op kinds), `trace` (the traced function and its program), `exec` (compiling through
//! `quabla_compiler` for a registry device, eager execution, the jit hot path), `errors` (the
//! Python exception hierarchy), `callback` (host callbacks of `qb.debug`), `opt` (the
//! `quabla-opt` driver for the console script), `trainer` (the resident step program of
//! `qb.optim.Trainer`), `mlx` (the `mlx` executor over MLX's Python API, registered with the
//! runtime's registry when the module loads).
mod callback;
mod callkey;
mod errors;
mod exec;
mod mlx;
mod ops;
mod opt;
mod tensor;
mod trace;
mod trainer;

use pyo3::prelude::*;

/// The names of the devices programs are compiled for: the registry's available devices,
/// without the reference interpreter (`interp`, an oracle selected with `QUABLA_EAGER=interp`
/// or `Program.compile(interpret=True)`; see `device_table`).
#[pyfunction]
fn devices() -> PyResult<Vec<&'static str>> {
    errors::guard(|| Ok({
        quabla_runtime::devices().into_iter().filter(|d| d.available && d.kind != quabla_runtime::DeviceKind::Reference).map(|d| d.name).collect()
    }))
}

/// Every registered device as (name, kind, description, available), unavailable ones and
/// the reference interpreter included.
#[pyfunction]
fn device_table() -> PyResult<Vec<(&'static str, &'static str, &'static str, bool)>> {
    errors::guard(|| Ok({
        quabla_runtime::devices().into_iter().map(|d| (d.name, d.kind.name(), d.description, d.available)).collect()
    }))
}

#[pymodule]
fn _quabla(m: &Bound<'_, PyModule>) -> PyResult<()> {
    mlx::register();
    m.add_class::<tensor::Tensor>()?;
    m.add_class::<ops::Op>()?;
    m.add_class::<trace::TraceBuilder>()?;
    m.add_class::<trace::Program>()?;
    m.add_class::<exec::Compiled>()?;
    m.add_class::<exec::JitFunction>()?;
    m.add_class::<trainer::ResidentStep>()?;
    m.add_function(wrap_pyfunction!(tensor::register_dtypes, m)?)?;
    m.add_function(wrap_pyfunction!(tensor::from_buffer, m)?)?;
    m.add_function(wrap_pyfunction!(tensor::full, m)?)?;
    m.add_function(wrap_pyfunction!(tensor::check_shape, m)?)?;
    m.add_function(wrap_pyfunction!(tensor::share, m)?)?;
    m.add_function(wrap_pyfunction!(exec::apply, m)?)?;
    m.add_function(wrap_pyfunction!(exec::eager_cache_size, m)?)?;
    m.add_function(wrap_pyfunction!(exec::eager_cache_capacity, m)?)?;
    m.add_function(wrap_pyfunction!(exec::live_programs, m)?)?;
    m.add_function(wrap_pyfunction!(exec::release_memory, m)?)?;
    m.add_function(wrap_pyfunction!(exec::canonical_device, m)?)?;
    m.add_function(wrap_pyfunction!(exec::device_put, m)?)?;
    m.add_function(wrap_pyfunction!(exec::nccl_all_reduce, m)?)?;
    m.add_function(wrap_pyfunction!(exec::eager_device_name, m)?)?;
    m.add_function(wrap_pyfunction!(exec::set_jit_disabled, m)?)?;
    m.add_function(wrap_pyfunction!(devices, m)?)?;
    m.add_function(wrap_pyfunction!(errors::error_variants, m)?)?;
    m.add_function(wrap_pyfunction!(errors::_panic_for_test, m)?)?;
    m.add_function(wrap_pyfunction!(device_table, m)?)?;
    m.add_function(wrap_pyfunction!(exec::pipeline_used, m)?)?;
    m.add_function(wrap_pyfunction!(exec::default_pipeline, m)?)?;
    m.add_function(wrap_pyfunction!(callback::register_host_callback, m)?)?;
    m.add_function(wrap_pyfunction!(callback::register_pure_callback, m)?)?;
    m.add_function(wrap_pyfunction!(opt::opt_main, m)?)?;
    Ok(())
}

//! `opt_main`: the `quabla-opt` driver (the `quabla-opt` crate's library) inside the
//! extension, so the package's `quabla-opt` console script (quabla/_opt.py) runs it in-process
//! and an installed wheel carries one copy of MLIR and LLVM, not a second one in a binary.
use pyo3::prelude::*;

use crate::errors::guard;

/// Runs `quabla-opt` with the command line `argv` (`argv[0]` is the program name, as
/// `sys.argv`) and returns its exit code (0 success, 1 errors, reported on stderr). Output goes
/// to the process's stdout and stderr file descriptors, not to `sys.stdout`.
#[pyfunction]
pub fn opt_main(py: Python<'_>, argv: Vec<String>) -> PyResult<i32> {
    guard(|| Ok(py.detach(|| quabla_opt::opt_main(&argv))))
}

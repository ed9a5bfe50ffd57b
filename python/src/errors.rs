//! Raising the Python exception hierarchy of `quabla/errors.py` from Rust, and the mapping of
//! dialect errors (shape/dtype rule violations with their spec labels) onto it: dtype rule
//! violations become `DTypeError` (a TypeError), everything else `ShapeError` (a ValueError).
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;
use quabla_dialect::DialectError;

static ERRORS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// A new exception of class `quabla.errors.<name>` with message `msg` (a ValueError when the
/// Python package cannot be imported, which only happens when the extension is used alone).
pub fn new(py: Python<'_>, name: &str, msg: impl Into<String>) -> PyErr {
    let msg = msg.into();
    let module = ERRORS.get_or_try_init(py, || py.import("quabla.errors").map(|m| m.into_any().unbind()));
    match module.and_then(|m| m.bind(py).getattr(name)).and_then(|c| c.cast_into::<PyType>().map_err(PyErr::from)) {
        Ok(cls) => PyErr::from_type(cls, msg),
        Err(_) => PyValueError::new_err(msg),
    }
}

/// Constraint labels of docs/spec.md that concern element types rather than shapes.
const DTYPE_RULES: &[&str] = &[
    "unary_c1",
    "binary_c2",
    "powi_c1",
    "select_c1",
    "reduce_c2",
    "argreduce_c2",
    "argreduce_c3",
    "dot_general_c1",
    "gather_c2",
    "pad_c1",
];

/// Converts a dialect error into ShapeError/DTypeError, adding the user's location.
pub fn dialect(py: Python<'_>, e: &DialectError, loc: Option<&str>) -> PyErr {
    let at = loc.map(|l| format!(" (at {l})")).unwrap_or_default();
    let class = match e {
        DialectError::Shape { constraint, message, .. }
            if DTYPE_RULES.contains(constraint) || (matches!(*constraint, "binary_c1" | "compare_c1" | "select_c2") && dtypes_differ(message)) =>
        {
            "DTypeError"
        }
        _ => "ShapeError",
    };
    new(py, class, format!("{e}{at}"))
}

/// True when a "types differ" message names two tensor types with different element types.
fn dtypes_differ(message: &str) -> bool {
    let elems: Vec<&str> = message
        .split("tensor<")
        .skip(1)
        .filter_map(|s| s.split('>').next())
        .map(|s| s.rsplit('x').next().unwrap_or(s))
        .collect();
    elems.len() >= 2 && elems.iter().any(|e| *e != elems[0])
}

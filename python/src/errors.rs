//! Raising the Python exception hierarchy of `quabla/errors.py` from Rust. The class of a Rust
//! error is chosen by its variant, in one exhaustive `match` per error type ([`class_of`],
//! [`lowering_class_of`]); the message is the error's `Display` text. Rule violations also set
//! the exception's `op`, `constraint`, `operand`, `expected` and `actual` attributes.
//! [`error_variants`] lists every variant with its class, from the same matches.
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;
use quabla_dialect::error::Violation;
use quabla_dialect::DialectError;
use quabla_lowering::LowerError;
use quabla_runtime::BufferError;

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

/// The class in `quabla/errors.py` that a dialect error raises.
pub fn class_of(e: &DialectError) -> &'static str {
    match e {
        DialectError::Shape(_) => "ShapeError",
        DialectError::DType(_) => "DTypeError",
        // A tensor too big to exist: NumPy's "array is too big" ValueError, and a MemoryError.
        DialectError::Size(_) => "ArraySizeError",
        // A malformed attribute (dims, permutation, sizes) is a shape misuse.
        DialectError::Attribute { .. } => "ShapeError",
        // Malformed IR: an internal invariant broken, not a misuse of an op.
        DialectError::UnknownOp(_) => "QuablaError",
        DialectError::Structure(_) => "QuablaError",
    }
}

/// The class in `quabla/errors.py` that a lowering error raises.
pub fn lowering_class_of(e: &LowerError) -> &'static str {
    match e {
        LowerError::Unsupported { .. } => "UnsupportedOperationError",
        LowerError::UnexpandedTransform { .. } => "UnsupportedOperationError",
        LowerError::UnknownCallee { .. } => "QuablaError",
        LowerError::NoEntryPoint { .. } => "QuablaError",
        LowerError::Toolkit { .. } => "QuablaError",
        LowerError::HostCode { .. } => "UnsupportedOperationError",
        LowerError::Pipeline { .. } => "QuablaError",
        LowerError::UnboundAxis { .. } => "UnboundAxisNameError",
        LowerError::Invalid(d) => class_of(d),
    }
}

/// Sets the structured fields of a rule violation as attributes of the exception.
pub(crate) fn set_violation(py: Python<'_>, err: &PyErr, v: &Violation) {
    let x = err.value(py);
    let _ = x.setattr("op", v.op);
    let _ = x.setattr("constraint", v.constraint);
    let _ = x.setattr("operand", v.operand);
    let _ = x.setattr("expected", v.expected.as_ref().map(|e| e.to_string()));
    let _ = x.setattr("actual", v.actual.as_ref().map(|t| t.to_string()));
}

/// Converts a dialect error into the exception of its variant's class, adding the user's
/// location `loc` unless the error carries one.
pub fn dialect(py: Python<'_>, e: &DialectError, loc: Option<&str>) -> PyErr {
    let at = match (e.loc(), loc) {
        (None, Some(l)) => format!(" (at {l})"),
        _ => String::new(),
    };
    let err = new(py, class_of(e), format!("{e}{at}"));
    match e {
        DialectError::Shape(v) | DialectError::DType(v) | DialectError::Size(v) => set_violation(py, &err, v),
        DialectError::Attribute { op, .. } => {
            let _ = err.value(py).setattr("op", op.as_str());
        }
        DialectError::UnknownOp(_) | DialectError::Structure(_) => {}
    }
    err
}

/// The class in `quabla/errors.py` that a host buffer error raises.
pub fn buffer_class_of(e: &BufferError) -> &'static str {
    match e {
        BufferError::TooLarge { .. } => "ArraySizeError",
        BufferError::OutOfMemory { .. } => "OutOfMemoryError",
        // Misuse of a device buffer, or a failed device: not a shape or dtype rule.
        BufferError::NotOnHost { .. } | BufferError::DTypeMismatch { .. } | BufferError::StorageSize { .. } | BufferError::Transfer { .. } => "QuablaError",
    }
}

/// Converts a host buffer error into the exception of its variant's class (`op` names the
/// constructor, e.g. `zeros`, and prefixes the message).
pub fn buffer(py: Python<'_>, e: &BufferError, op: &str) -> PyErr {
    let err = new(py, buffer_class_of(e), format!("{op}: {e}"));
    if let BufferError::TooLarge { ty, .. } | BufferError::OutOfMemory { ty, .. } = e {
        let _ = err.value(py).setattr("actual", ty.to_string());
    }
    err
}

/// Converts a dialect error raised for the Python function `op` (a constructor such as
/// `zeros`): the message is `<op>: <explanation>`, without the op-and-label prefix of the
/// rendered rule (the label is still the exception's `constraint`).
pub fn dialect_for(py: Python<'_>, e: &DialectError, op: &str) -> PyErr {
    match e.violation() {
        Some(v) => {
            let err = new(py, class_of(e), format!("{op}: {} ({})", v.message, v.constraint));
            set_violation(py, &err, v);
            let _ = err.value(py).setattr("op", op);
            err
        }
        None => dialect(py, e, None),
    }
}

/// Converts a lowering error into the exception of its variant's class; `context` (e.g.
/// `StableHLO export`) prefixes the message when not empty.
pub fn lowering(py: Python<'_>, e: &LowerError, context: &str) -> PyErr {
    let msg = if context.is_empty() { e.to_string() } else { format!("{context}: {e}") };
    let err = new(py, lowering_class_of(e), msg);
    match e {
        LowerError::Unsupported { op, .. } | LowerError::UnexpandedTransform { kind: op, .. } | LowerError::UnboundAxis { op, .. } => {
            let _ = err.value(py).setattr("op", *op);
        }
        LowerError::UnknownCallee { .. } => {
            let _ = err.value(py).setattr("op", "call");
        }
        LowerError::Invalid(DialectError::Shape(v) | DialectError::DType(v) | DialectError::Size(v)) => set_violation(py, &err, v),
        LowerError::HostCode { op, .. } => {
            let _ = err.value(py).setattr("op", op.as_str());
        }
        LowerError::NoEntryPoint { .. } | LowerError::Toolkit { .. } | LowerError::Pipeline { .. } | LowerError::Invalid(_) => {}
    }
    err
}

/// Every Rust error variant that reaches Python, as `(variant, class, sample exception)`:
/// `("DialectError::Shape", "ShapeError", ShapeError(...))`, ...; `LowerError::Invalid` once
/// per dialect variant. Built from `samples()` of each error type and the same [`class_of`] /
/// [`lowering_class_of`] and raising functions the extension uses, so the list is exhaustive.
#[pyfunction]
pub fn error_variants(py: Python<'_>) -> Vec<(String, &'static str, Py<PyAny>)> {
    let mut out = Vec::new();
    for d in DialectError::samples() {
        let exc = dialect(py, &d, None).into_value(py).into_any();
        out.push((format!("DialectError::{}", d.variant()), class_of(&d), exc));
    }
    for l in LowerError::samples() {
        let name = match &l {
            LowerError::Invalid(d) => format!("LowerError::Invalid(DialectError::{})", d.variant()),
            other => format!("LowerError::{}", other.variant()),
        };
        let exc = lowering(py, &l, "").into_value(py).into_any();
        out.push((name, lowering_class_of(&l), exc));
    }
    out
}

/// Runs the body of a Python entry point (every `#[pyfunction]` and `#[pymethods]` entry
/// that runs Rust code), turning a Rust panic into a `QuablaError` "internal error, please
/// report: <panic message>" instead of pyo3's `PanicException` (which is not even an
/// `Exception`). The last line of defence: panics are bugs, fixed at their cause. Free on
/// the path that does not panic (an unwinding landing pad), so the jit hot path uses it too.
pub fn guard<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => Err(Python::attach(|py| internal(py, &*payload))),
    }
}

/// The `QuablaError` for a caught panic with payload `payload`.
fn internal(py: Python<'_>, payload: &(dyn std::any::Any + Send)) -> PyErr {
    let msg = payload.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| payload.downcast_ref::<String>().cloned()).unwrap_or_else(|| "a panic without a message".to_string());
    new(py, "QuablaError", format!("internal error, please report: {msg}"))
}

/// Panics with `message` inside a guarded entry point: the test hook of [`guard`]
/// (`quabla._quabla._panic_for_test`; tests/python/test_reliability.py checks that the panic
/// arrives as a QuablaError).
#[pyfunction]
pub fn _panic_for_test(message: &str) -> PyResult<()> {
    guard(|| -> PyResult<()> { panic!("{message}") })
}

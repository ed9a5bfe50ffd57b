//! `_quabla.Op`: one dialect op with its attributes (an [`OpKind`]), built from its name and
//! keyword attributes. The Python layer builds each op once (module-level constants for
//! attribute-free ops) and passes it to the tracer or to eager execution; each `Op` keeps a
//! small cache of eager executables keyed by operand types.
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use quabla_dialect::ops::table::attr_err;
use quabla_dialect::{AttrSource, DType, DialectError, OpKind, Result as DResult, TensorType};
use quabla_runtime::ExecutableCache;

use crate::errors;
use crate::tensor::dtype_of;

/// Eager executables one `Op` keeps (by operand types); the process-wide eager cache behind
/// it has its own bound (`QUABLA_EAGER_CACHE_SIZE`).
const OP_CACHE_ENTRIES: usize = 16;

/// A dialect op with its attributes.
#[pyclass(module = "quabla._quabla", frozen)]
pub struct Op {
    pub kind: OpKind,
    /// Eager executables of this op by operand types.
    pub cache: ExecutableCache<Vec<TensorType>>,
}

/// Python keyword attributes of an op, read through the op table (`OpKind::build`).
struct PyAttrs<'a, 'py> {
    attrs: Option<&'a Bound<'py, PyDict>>,
}

impl PyAttrs<'_, '_> {
    fn get<T: for<'x> FromPyObjectOwned<'x>>(&self, op: &str, key: &str) -> DResult<T> {
        let v = self.attrs.and_then(|a| a.get_item(key).ok().flatten()).ok_or_else(|| attr_err(op, key, "missing"))?;
        v.extract::<T>().map_err(|e| attr_err(op, key, format!("{}", Into::<PyErr>::into(e))))
    }
}

impl AttrSource for PyAttrs<'_, '_> {
    fn results(&self) -> Option<&[TensorType]> {
        None
    }
    fn keys(&self) -> Vec<String> {
        self.attrs.map(|a| a.keys().iter().filter_map(|k| k.extract::<String>().ok()).collect()).unwrap_or_default()
    }
    fn int(&self, op: &str, key: &str) -> DResult<i64> {
        self.get(op, key)
    }
    fn ints(&self, op: &str, key: &str) -> DResult<Vec<i64>> {
        self.get(op, key)
    }
    fn string(&self, op: &str, key: &str) -> DResult<String> {
        self.get(op, key)
    }
    fn dtype(&self, op: &str, key: &str) -> DResult<DType> {
        let code: usize = self.get(op, key)?;
        dtype_of(code).map_err(|e| attr_err(op, key, e.to_string()))
    }
    fn tensor_type(&self, op: &str, key: &str) -> DResult<TensorType> {
        let (shape, code): (Vec<i64>, usize) = self.get(op, key)?;
        Ok(TensorType::new(dtype_of(code).map_err(|e| attr_err(op, key, e.to_string()))?, shape))
    }
}

/// Builds the kind of op `name` from keyword attributes, named and typed as in the op table
/// (the MLIR attribute names: `start_indices`, `edge_padding_low`, ...). Constants, calls and
/// control flow are built by the tracer.
pub fn kind_from(name: &str, a: Option<&Bound<'_, PyDict>>) -> PyResult<OpKind> {
    OpKind::build(name, &PyAttrs { attrs: a }).map_err(|e| match e {
        DialectError::UnknownOp(_) => PyValueError::new_err(format!("unknown or unsupported op `{name}` (constants and calls are built by the tracer)")),
        other => PyTypeError::new_err(format!("op {name}: {other}")),
    })
}

#[pymethods]
impl Op {
    #[new]
    #[pyo3(signature = (name, **attrs))]
    fn py_new(name: &str, attrs: Option<&Bound<'_, PyDict>>) -> PyResult<Op> {
        errors::guard(|| {
            Ok(Op { kind: kind_from(name, attrs)?, cache: ExecutableCache::with_capacity(OP_CACHE_ENTRIES) })
        })
    }

    /// The op name without the dialect prefix.
    #[getter]
    fn name(&self) -> &'static str {
        self.kind.name()
    }

    fn __repr__(&self) -> String {
        let attrs: Vec<String> = self.kind.mlir_attrs().into_iter().map(|(k, v)| format!("{k} = {v}")).collect();
        format!("Op(quabla.{} {{{}}})", self.kind.name(), attrs.join(", "))
    }
}

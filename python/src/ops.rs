//! `_quabla.Op`: one dialect op with its attributes (an [`OpKind`]), built from its name and
//! keyword attributes. The Python layer builds each op once (module-level constants for
//! attribute-free ops) and passes it to the tracer or to eager execution; each `Op` keeps a
//! small cache of eager executables keyed by operand types.
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use quabla_dialect::{ArgOp, BinaryOp, CmpDir, DotDims, OpKind, ReduceOp, TensorType, UnaryOp};
use quabla_runtime::ExecutableCache;

use crate::tensor::dtype_of;

/// A dialect op with its attributes.
#[pyclass(module = "quabla._quabla", frozen)]
pub struct Op {
    pub kind: OpKind,
    /// Eager executables of this op by operand types.
    pub cache: ExecutableCache<Vec<TensorType>>,
}

fn get<'py, T: FromPyObjectOwned<'py>>(name: &str, attrs: Option<&Bound<'py, PyDict>>, key: &str) -> PyResult<T> {
    let v = attrs.and_then(|a| a.get_item(key).ok().flatten()).ok_or_else(|| PyTypeError::new_err(format!("op {name}: missing attribute `{key}`")))?;
    v.extract::<T>().map_err(|e| PyTypeError::new_err(format!("op {name}: attribute `{key}`: {}", Into::<PyErr>::into(e))))
}

/// Builds the kind of op `name` from keyword attributes.
pub fn kind_from(name: &str, a: Option<&Bound<'_, PyDict>>) -> PyResult<OpKind> {
    if let Some(u) = UnaryOp::from_name(name) {
        return Ok(OpKind::Unary(u));
    }
    if let Some(b) = BinaryOp::from_name(name) {
        return Ok(OpKind::Binary(b));
    }
    let v = |k: &str| get::<Vec<i64>>(name, a, k);
    let i = |k: &str| get::<i64>(name, a, k);
    Ok(match name {
        "powi" => OpKind::Powi { exponent: i("exponent")? },
        "compare" => {
            let d: String = get(name, a, "direction")?;
            OpKind::Compare { dir: CmpDir::parse(&d).ok_or_else(|| PyValueError::new_err(format!("compare: unknown direction {d:?}")))? }
        }
        "select" => OpKind::Select,
        "convert" => OpKind::Convert { to: dtype_of(get::<usize>(name, a, "to")?)? },
        "iota" => OpKind::Iota { dim: i("dim")?, ty: TensorType::new(dtype_of(get::<usize>(name, a, "dtype")?)?, v("shape")?) },
        "broadcast_in_dim" => OpKind::BroadcastInDim { dims: v("dims")?, shape: v("shape")? },
        "reshape" => OpKind::Reshape { shape: v("shape")? },
        "transpose" => OpKind::Transpose { perm: v("perm")? },
        "concatenate" => OpKind::Concatenate { dim: i("dim")? },
        "slice" => OpKind::Slice { start: v("start")?, limit: v("limit")?, strides: v("strides")? },
        "pad" => OpKind::Pad { low: v("low")?, high: v("high")?, interior: v("interior")? },
        "dynamic_slice" => OpKind::DynamicSlice { sizes: v("sizes")? },
        "gather" => OpKind::Gather { axis: i("axis")? },
        "reduce_sum" => OpKind::Reduce { op: ReduceOp::Sum, dims: v("dims")? },
        "reduce_max" => OpKind::Reduce { op: ReduceOp::Max, dims: v("dims")? },
        "reduce_min" => OpKind::Reduce { op: ReduceOp::Min, dims: v("dims")? },
        "reduce_prod" => OpKind::Reduce { op: ReduceOp::Prod, dims: v("dims")? },
        "argmax" => OpKind::ArgReduce { op: ArgOp::Max, dim: i("dim")?, index: dtype_of(get::<usize>(name, a, "index")?)? },
        "argmin" => OpKind::ArgReduce { op: ArgOp::Min, dim: i("dim")?, index: dtype_of(get::<usize>(name, a, "index")?)? },
        "dot_general" => OpKind::DotGeneral {
            dims: DotDims { lhs_batch: v("lhs_batch")?, rhs_batch: v("rhs_batch")?, lhs_contract: v("lhs_contract")?, rhs_contract: v("rhs_contract")? },
        },
        other => return Err(PyValueError::new_err(format!("unknown or unsupported op `{other}` (constants and calls are built by the tracer)"))),
    })
}

#[pymethods]
impl Op {
    #[new]
    #[pyo3(signature = (name, **attrs))]
    fn py_new(name: &str, attrs: Option<&Bound<'_, PyDict>>) -> PyResult<Op> {
        Ok(Op { kind: kind_from(name, attrs)?, cache: ExecutableCache::new() })
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

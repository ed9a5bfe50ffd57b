//! The tracer's Rust half: a `TraceBuilder` owns the `quabla_dialect::Func` being traced.
//! Each op pushed runs the dialect's shape rule at once, so a mismatch raises at the user's
//! line (the location the Python layer passes, also kept as the op's MLIR location).
//! `finish` closes the trace and returns a `Program` (the traced module); `Program.compile`
//! inlines and canonicalizes a copy of it and compiles it for the CPU.
//!
//! Invariants: value ids handed to Python index `Func::types`; a closed builder rejects
//! every further op (a leaked tracer raises TracerError when used).
use std::sync::{Arc, Mutex};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use quabla_dialect::{Func, Literal, Module, OpKind, TensorType, Value};
use quabla_passes::simplify::inline::inline;

use crate::errors;
use crate::exec::{compile_module, Compiled};
use crate::ops::Op;
use crate::tensor::{code, dtype_of, Tensor};

struct State {
    func: Func,
    closed: bool,
}

/// A function under construction.
#[pyclass(module = "quabla._quabla", frozen)]
pub struct TraceBuilder {
    state: Mutex<State>,
}

/// (value id, shape, dtype code) of a traced value.
type Aval = (u32, Vec<i64>, usize);

fn aval(f: &Func, v: Value) -> Aval {
    let t = f.ty(v);
    (v.0, t.shape.clone(), code(t.dtype))
}

fn leaked(py: Python<'_>) -> PyErr {
    errors::new(
        py,
        "TracerError",
        "a tracer escaped its trace: it was used after the jitted function that created it returned (return it as an output instead of storing it)",
    )
}

impl TraceBuilder {
    fn with<T>(&self, py: Python<'_>, f: impl FnOnce(&mut Func) -> PyResult<T>) -> PyResult<T> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if st.closed {
            return Err(leaked(py));
        }
        f(&mut st.func)
    }
}

fn check_ids(f: &Func, ids: &[u32]) -> PyResult<Vec<Value>> {
    ids.iter()
        .map(|&i| if (i as usize) < f.types.len() { Ok(Value(i)) } else { Err(PyValueError::new_err(format!("unknown traced value %{i}"))) })
        .collect()
}

#[pymethods]
impl TraceBuilder {
    /// A builder for a function `name` with parameters given as (shape, dtype code).
    #[new]
    fn py_new(params: Vec<(Vec<i64>, usize)>) -> PyResult<Self> {
        let tys: Vec<TensorType> = params.into_iter().map(|(s, c)| Ok(TensorType::new(dtype_of(c)?, s))).collect::<PyResult<_>>()?;
        Ok(TraceBuilder { state: Mutex::new(State { func: Func::new("main", &tys), closed: false }) })
    }

    /// The parameters as avals.
    fn params(&self, py: Python<'_>) -> PyResult<Vec<Aval>> {
        self.with(py, |f| Ok(f.params.iter().map(|&v| aval(f, v)).collect()))
    }

    /// Appends `op` on traced values; returns the results' avals. Raises ShapeError or
    /// DTypeError (with `loc`) when the op's shape rule rejects the operands.
    #[pyo3(signature = (op, operands, loc=None))]
    fn push(&self, py: Python<'_>, op: &Op, operands: Vec<u32>, loc: Option<String>) -> PyResult<Vec<Aval>> {
        self.with(py, |f| {
            let vs = check_ids(f, &operands)?;
            let l = loc.as_deref().map(Arc::<str>::from);
            let res = f.push(op.kind.clone(), &vs, l).map_err(|e| errors::dialect(py, &e, loc.as_deref()))?;
            Ok(res.into_iter().map(|v| aval(f, v)).collect())
        })
    }

    /// Appends a `constant` holding a concrete tensor's value.
    #[pyo3(signature = (tensor, loc=None))]
    fn constant(&self, py: Python<'_>, tensor: &Tensor, loc: Option<String>) -> PyResult<Aval> {
        self.with(py, |f| {
            let lit: Literal = tensor.buf.to_literal();
            let v = f.push1(OpKind::Constant { value: lit }, &[], loc.as_deref().map(Arc::<str>::from)).map_err(|e| errors::dialect(py, &e, loc.as_deref()))?;
            Ok(aval(f, v))
        })
    }

    /// True once `finish` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).closed
    }

    /// Sets the outputs, closes the trace and returns the traced program.
    fn finish(&self, py: Python<'_>, outputs: Vec<u32>) -> PyResult<Program> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if st.closed {
            return Err(leaked(py));
        }
        let outs = check_ids(&st.func, &outputs)?;
        st.func.outputs = outs;
        st.closed = true;
        let m = Module { funcs: vec![st.func.clone()] };
        m.verify().map_err(|e| errors::dialect(py, &e, None))?;
        Ok(Program { module: m })
    }

    /// Closes the trace without a program (the traced function raised).
    fn abandon(&self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).closed = true;
    }
}

/// A traced quabla module whose public function is `@main`.
#[pyclass(module = "quabla._quabla", frozen)]
pub struct Program {
    pub module: Module,
}

#[pymethods]
impl Program {
    /// The traced module as MLIR (quabla dialect, generic form, with the user's locations).
    fn as_text(&self) -> String {
        self.module.to_mlir()
    }

    /// The module after quabla-inline and quabla-canonicalize (what is compiled).
    fn optimized_text(&self) -> String {
        optimize(&self.module).to_mlir()
    }

    /// Number of ops in `@main` before optimization.
    #[getter]
    fn num_ops(&self) -> usize {
        self.module.funcs[0].ops.len()
    }

    /// Compiles for the CPU (or for the reference interpreter with `interpret=True`).
    #[pyo3(signature = (interpret=false))]
    fn compile(&self, py: Python<'_>, interpret: bool) -> PyResult<Compiled> {
        let m = optimize(&self.module);
        let f = &m.funcs[0];
        let (inputs, outputs) = (f.param_types(), f.result_types());
        let exe = compile_module(py, &m, interpret)?;
        Ok(Compiled { exe, inputs, outputs })
    }
}

/// Inlining and canonicalization, the same Rust code the MLIR passes run.
fn optimize(m: &Module) -> Module {
    let mut m = m.clone();
    inline(&mut m);
    quabla_passes::canonicalize(&mut m);
    m
}

//! The tracer's Rust half. A traced program is a multi-function quabla module: a top-level
//! `TraceBuilder` builds the public `@main`; a transform applied inside a trace opens a child
//! builder (`TraceBuilder.child`) that traces the transformed Python function into its own
//! private `func.func` of the same module, and the parent refers to it through a transform
//! declaration (`declare`, a bodiless `func.func` with `quabla.transform = "jvp"|"vjp"|"vmap"`)
//! called with `call`. Each op pushed runs the dialect's shape rule at once, so a mismatch
//! raises at the user's line (the location the Python layer passes, kept as the op's MLIR
//! location). `finish` on the top-level builder returns a `Program` (the module);
//! `Program.compile` runs the compiler's default pipeline (`quabla_compiler::default_pipeline`:
//! expand the transforms, inline, canonicalize, drop dead functions) on a copy, then compiles
//! `@main` for a device of the executor registry (the CPU by default).
//!
//! Invariants: value ids handed to Python index the builder's `Func::types`; a closed builder
//! rejects every further op (a leaked tracer raises TracerError when used); a child's function
//! enters the shared module only when it finishes, so a trace that raised leaves nothing.
use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use quabla_compiler::{default_pipeline, Caller, EmitKind};
use quabla_dialect::{CallOp, ConstantOp, ControlOp, Func, Literal, Module, OpKind, TensorType, Transform, TransformKind, Value};

use crate::errors;
use crate::exec::{compile_error, compile_module, Compiled};
use crate::ops::Op;
use crate::tensor::{code, dtype_of, Tensor};

/// The module shared by a top-level trace and its children: finished functions and
/// declarations, and every name handed out (including those of functions still traced).
#[derive(Default)]
struct Shared {
    funcs: Vec<Func>,
    names: HashSet<String>,
}

impl Shared {
    fn func(&self, name: &str) -> Option<&Func> {
        self.funcs.iter().find(|f| f.name == name)
    }

    /// A fresh function name derived from `hint` (made a valid MLIR symbol).
    fn fresh(&mut self, hint: &str) -> String {
        let mut base: String = hint.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
        base = base.trim_matches('_').to_string();
        if base.is_empty() || base.starts_with(|c: char| c.is_ascii_digit()) {
            base = format!("f_{base}");
        }
        let name = if self.names.contains(&base) { (1..).map(|i| format!("{base}_{i}")).find(|n| !self.names.contains(n)).unwrap() } else { base };
        self.names.insert(name.clone());
        name
    }
}

struct State {
    func: Func,
    closed: bool,
}

/// A function under construction (the top-level `@main` or a private child function).
#[pyclass(module = "quabla._quabla", frozen)]
pub struct TraceBuilder {
    shared: Arc<Mutex<Shared>>,
    state: Mutex<State>,
    top: bool,
    /// A branch of a region op under construction (`region`): its function never enters the
    /// module; the parent adopts it as a body (`push_if`).
    region: bool,
}

/// (value id, shape, dtype code) of a traced value.
type Aval = (u32, Vec<i64>, usize);
/// (shape, dtype code) of a type.
type Spec = (Vec<i64>, usize);

fn aval(f: &Func, v: Value) -> Aval {
    let t = f.ty(v);
    (v.0, t.shape.clone(), code(t.dtype))
}

fn spec(t: &TensorType) -> Spec {
    (t.shape.clone(), code(t.dtype))
}

fn types(specs: Vec<Spec>) -> PyResult<Vec<TensorType>> {
    specs.into_iter().map(|(s, c)| Ok(TensorType::new(dtype_of(c)?, s))).collect()
}

fn leaked(py: Python<'_>) -> PyErr {
    errors::new(
        py,
        "UnexpectedTracerError",
        "a tracer escaped its trace: it was used after the function traced for it returned (return it as an output instead of storing it)",
    )
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl TraceBuilder {
    fn with<T>(&self, py: Python<'_>, f: impl FnOnce(&mut Func) -> PyResult<T>) -> PyResult<T> {
        let mut st = lock(&self.state);
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

fn axes(v: Vec<i64>) -> Vec<Option<i64>> {
    v.into_iter().map(|a| if a < 0 { None } else { Some(a) }).collect()
}

#[pymethods]
impl TraceBuilder {
    /// A top-level builder for the public function `@main` with parameters given as
    /// (shape, dtype code).
    #[new]
    fn py_new(params: Vec<Spec>) -> PyResult<Self> {
        errors::guard(|| {
            let tys = types(params)?;
            let mut shared = Shared::default();
            shared.names.insert("main".into());
            Ok(TraceBuilder { shared: Arc::new(Mutex::new(shared)), state: Mutex::new(State { func: Func::new("main", &tys), closed: false }), top: true, region: false })
        })
    }

    /// A builder for a new private function of the same module (named after `name`), with
    /// parameters given as (shape, dtype code).
    fn child(&self, params: Vec<Spec>, name: &str) -> PyResult<TraceBuilder> {
        errors::guard(|| {
            let tys = types(params)?;
            let fname = lock(&self.shared).fresh(name);
            let mut func = Func::new(fname, &tys);
            func.public = false;
            Ok(TraceBuilder { shared: self.shared.clone(), state: Mutex::new(State { func, closed: false }), top: false, region: false })
        })
    }

    /// A builder for one branch of a region op of this function (`quabla.if`), with
    /// parameters given as (shape, dtype code). It traces like a child (captures enter as
    /// `add_param`, transforms inside it open children of the module) but `finish` keeps its
    /// function out of the module: `push_if` on this builder adopts it as a body.
    fn region(&self, params: Vec<Spec>, name: &str) -> PyResult<TraceBuilder> {
        errors::guard(|| {
            let tys = types(params)?;
            let mut func = Func::new(format!("{name}_region"), &tys);
            func.public = false;
            Ok(TraceBuilder { shared: self.shared.clone(), state: Mutex::new(State { func, closed: false }), top: false, region: true })
        })
    }

    /// Appends `quabla.if` on `pred` (a 0-d bool value) and `operands` (its captures), with
    /// the finished region builders `then_b`/`else_b` as bodies: parameter k of a branch is
    /// bound to `operands[*_map[k]]`. Returns the results' avals; raises ShapeError/DTypeError
    /// (with `loc`) when the branches' results differ or the predicate is not a 0-d bool.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (pred, operands, then_b, then_map, else_b, else_map, loc=None))]
    fn push_if(&self, py: Python<'_>, pred: u32, operands: Vec<u32>, then_b: &TraceBuilder, then_map: Vec<usize>, else_b: &TraceBuilder, else_map: Vec<usize>, loc: Option<String>) -> PyResult<Vec<Aval>> {
        errors::guard(|| {
            let branch = |b: &TraceBuilder| -> PyResult<Func> {
                let st = lock(&b.state);
                if !b.region || !st.closed {
                    return Err(PyValueError::new_err("push_if: branches must be finished region builders"));
                }
                Ok(st.func.clone())
            };
            let (tf, ef) = (branch(then_b)?, branch(else_b)?);
            self.with(py, |f| {
                let mut ids = vec![pred];
                ids.extend(&operands);
                let vs = check_ids(f, &ids)?;
                let ptys: Vec<TensorType> = vs[1..].iter().map(|v| f.ty(*v).clone()).collect();
                let adopt = |f: &mut Func, g: &Func, map: &[usize]| quabla_passes::rules::control::adopt_body(g, f, &ptys, map).map_err(|e| PyValueError::new_err(format!("push_if: {e}")));
                let tb = adopt(f, &tf, &then_map)?;
                let eb = adopt(f, &ef, &else_map)?;
                let results = tf.result_types();
                let l = loc.as_deref().map(Arc::<str>::from);
                let res = f.push_with_regions(OpKind::Control(ControlOp::If { results }), &vs, vec![tb, eb], l).map_err(|e| errors::dialect(py, &e, loc.as_deref()))?;
                Ok(res.into_iter().map(|v| aval(f, v)).collect())
            })
        })
    }

    /// Appends `quabla.while` over the carries `operands` (the loop's values, then the values
    /// the regions captured, passed through unchanged): `cond_b`/`body_b` are finished region
    /// builders whose parameter k is carry `*_map[k]`; the body yields the first `n` carries.
    /// Returns the avals of every carry's final value; raises ShapeError/DTypeError (with `loc`)
    /// when cond does not yield a 0-d bool or the body does not yield the carries' types.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (operands, cond_b, cond_map, body_b, body_map, n, loc=None))]
    fn push_while(&self, py: Python<'_>, operands: Vec<u32>, cond_b: &TraceBuilder, cond_map: Vec<usize>, body_b: &TraceBuilder, body_map: Vec<usize>, n: usize, loc: Option<String>) -> PyResult<Vec<Aval>> {
        errors::guard(|| {
            let region = |b: &TraceBuilder| -> PyResult<Func> {
                let st = lock(&b.state);
                if !b.region || !st.closed {
                    return Err(PyValueError::new_err("push_while: cond and body must be finished region builders"));
                }
                Ok(st.func.clone())
            };
            let (cf, bf) = (region(cond_b)?, region(body_b)?);
            self.with(py, |f| {
                let vs = check_ids(f, &operands)?;
                if n > vs.len() || bf.outputs.len() != n {
                    return Err(PyValueError::new_err(format!("push_while: the body yields {} values for {n} loop carries", bf.outputs.len())));
                }
                let ptys: Vec<TensorType> = vs.iter().map(|v| f.ty(*v).clone()).collect();
                let adopt = |f: &mut Func, g: &Func, map: &[usize]| quabla_passes::rules::control::adopt_body(g, f, &ptys, map).map_err(|e| PyValueError::new_err(format!("push_while: {e}")));
                let cb = adopt(f, &cf, &cond_map)?;
                let mut bb = adopt(f, &bf, &body_map)?;
                // Captured values are carried through unchanged.
                let pass: Vec<Value> = bb.params[n..].to_vec();
                bb.outputs.extend(pass);
                let l = loc.as_deref().map(Arc::<str>::from);
                let res = f.push_with_regions(OpKind::Control(ControlOp::While {}), &vs, vec![cb, bb], l).map_err(|e| errors::dialect(py, &e, loc.as_deref()))?;
                Ok(res.into_iter().map(|v| aval(f, v)).collect())
            })
        })
    }

    /// Appends `quabla.case` on `index` (a 0-d int32/int64 value) and `operands` (its
    /// captures), with the finished region builders `branches` as bodies: parameter k of
    /// branch j is bound to `operands[maps[j][k]]`. Returns the results' avals; raises
    /// ShapeError/DTypeError (with `loc`) when the branches' results differ.
    #[pyo3(signature = (index, operands, branches, maps, loc=None))]
    fn push_case(&self, py: Python<'_>, index: u32, operands: Vec<u32>, branches: Vec<PyRef<'_, TraceBuilder>>, maps: Vec<Vec<usize>>, loc: Option<String>) -> PyResult<Vec<Aval>> {
        errors::guard(|| {
            if branches.is_empty() || branches.len() != maps.len() {
                return Err(PyValueError::new_err(format!("push_case: {} branches with {} parameter maps", branches.len(), maps.len())));
            }
            let mut gs = Vec::with_capacity(branches.len());
            for b in &branches {
                let st = lock(&b.state);
                if !b.region || !st.closed {
                    return Err(PyValueError::new_err("push_case: branches must be finished region builders"));
                }
                gs.push(st.func.clone());
            }
            self.with(py, |f| {
                let mut ids = vec![index];
                ids.extend(&operands);
                let vs = check_ids(f, &ids)?;
                let ptys: Vec<TensorType> = vs[1..].iter().map(|v| f.ty(*v).clone()).collect();
                let mut bodies = Vec::with_capacity(gs.len());
                for (g, map) in gs.iter().zip(&maps) {
                    bodies.push(quabla_passes::rules::control::adopt_body(g, f, &ptys, map).map_err(|e| PyValueError::new_err(format!("push_case: {e}")))?);
                }
                let results = gs[0].result_types();
                let l = loc.as_deref().map(Arc::<str>::from);
                let res = f.push_with_regions(OpKind::Control(ControlOp::Case { results }), &vs, bodies, l).map_err(|e| errors::dialect(py, &e, loc.as_deref()))?;
                Ok(res.into_iter().map(|v| aval(f, v)).collect())
            })
        })
    }

    /// Appends a custom-derivative call (`kind` "custom_jvp_call" or "custom_vjp_call") on
    /// `operands` with finished region builders as its bodies: `bodies[0]` the primal (its
    /// parameters are operands), then for custom_jvp the jvp rule (parameters: operands, then
    /// one tangent per operand; yields results then their tangents), for custom_vjp fwd
    /// (parameters: operands; yields results then residuals) and bwd (parameters: residuals,
    /// then the values of `fwd_extra` (operand positions fwd forwards as extra residuals),
    /// then one cotangent per result; yields the cotangents of the first `n_ct` operands, the
    /// other operands getting zeros). Parameter k of body j is body parameter `maps[j][k]`.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (kind, operands, bodies, maps, fwd_extra=Vec::new(), n_ct=0, loc=None))]
    fn push_custom(&self, py: Python<'_>, kind: &str, operands: Vec<u32>, bodies: Vec<PyRef<'_, TraceBuilder>>, maps: Vec<Vec<usize>>, fwd_extra: Vec<usize>, n_ct: usize, loc: Option<String>) -> PyResult<Vec<Aval>> {
        errors::guard(|| {
            let want = match kind {
                "custom_jvp_call" => 2,
                "custom_vjp_call" => 3,
                _ => return Err(PyValueError::new_err(format!("push_custom: unknown kind {kind}"))),
            };
            if bodies.len() != want || maps.len() != want {
                return Err(PyValueError::new_err(format!("push_custom: {kind} takes {want} bodies and maps")));
            }
            let mut gs = Vec::with_capacity(want);
            for b in &bodies {
                let st = lock(&b.state);
                if !b.region || !st.closed {
                    return Err(PyValueError::new_err("push_custom: bodies must be finished region builders"));
                }
                gs.push(st.func.clone());
            }
            self.with(py, |f| {
                let vs = check_ids(f, &operands)?;
                let ptys: Vec<TensorType> = vs.iter().map(|v| f.ty(*v).clone()).collect();
                let err = |e: quabla_passes::rules::RuleError| PyValueError::new_err(format!("push_custom: {e}"));
                let adopt = quabla_passes::rules::control::adopt_body;
                let results = gs[0].result_types();
                let primal = adopt(&gs[0], f, &ptys, &maps[0]).map_err(err)?;
                let l = loc.as_deref().map(Arc::<str>::from);
                let (op, regions) = if want == 2 {
                    let twice: Vec<TensorType> = ptys.iter().chain(&ptys).cloned().collect();
                    let jvp = adopt(&gs[1], f, &twice, &maps[1]).map_err(err)?;
                    (CallOp::CustomJvp { results }, vec![primal, jvp])
                } else {
                    let mut fwd = adopt(&gs[1], f, &ptys, &maps[1]).map_err(err)?;
                    let extra = fwd_extra.iter().map(|&k| fwd.params.get(k).copied().ok_or_else(|| PyValueError::new_err("push_custom: fwd_extra out of range"))).collect::<PyResult<Vec<_>>>()?;
                    fwd.outputs.extend(extra);
                    let mut btys: Vec<TensorType> = fwd.outputs.iter().skip(results.len()).map(|v| f.ty(*v).clone()).collect();
                    btys.extend(results.iter().cloned());
                    let mut bwd = adopt(&gs[2], f, &btys, &maps[2]).map_err(err)?;
                    if bwd.outputs.len() != n_ct {
                        return Err(PyValueError::new_err(format!("push_custom: bwd yields {} cotangents, expected {n_ct}", bwd.outputs.len())));
                    }
                    for t in &ptys[n_ct.min(ptys.len())..] {
                        let z = f.push_into(&mut bwd, OpKind::Constant(ConstantOp::Constant { value: Literal::splat(t.clone(), 0.0) }), &[], vec![], None).map_err(|e| errors::dialect(py, &e, loc.as_deref()))?;
                        bwd.outputs.push(z[0]);
                    }
                    (CallOp::CustomVjp { results }, vec![primal, fwd, bwd])
                };
                let res = f.push_with_regions(OpKind::Call(op), &vs, regions, l).map_err(|e| errors::dialect(py, &e, loc.as_deref()))?;
                Ok(res.into_iter().map(|v| aval(f, v)).collect())
            })
        })
    }

    /// The function's name in the module.
    #[getter]
    fn name(&self) -> String {
        lock(&self.state).func.name.clone()
    }

    /// The parameters as avals.
    fn params(&self, py: Python<'_>) -> PyResult<Vec<Aval>> {
        errors::guard(|| {
            self.with(py, |f| Ok(f.params.iter().map(|&v| aval(f, v)).collect()))
        })
    }

    /// Appends a parameter (a value captured from an enclosing trace); returns its aval.
    fn add_param(&self, py: Python<'_>, shape: Vec<i64>, dtype: usize) -> PyResult<Aval> {
        errors::guard(|| {
            let ty = TensorType::new(dtype_of(dtype)?, shape);
            self.with(py, |f| {
                let v = f.new_value(ty);
                f.params.push(v);
                Ok(aval(f, v))
            })
        })
    }

    /// Appends `op` on traced values; returns the results' avals. Raises ShapeError or
    /// DTypeError (with `loc`) when the op's shape rule rejects the operands.
    #[pyo3(signature = (op, operands, loc=None))]
    fn push(&self, py: Python<'_>, op: &Op, operands: Vec<u32>, loc: Option<String>) -> PyResult<Vec<Aval>> {
        errors::guard(|| {
            self.with(py, |f| {
                let vs = check_ids(f, &operands)?;
                let l = loc.as_deref().map(Arc::<str>::from);
                let res = f.push(op.kind.clone(), &vs, l).map_err(|e| errors::dialect(py, &e, loc.as_deref()))?;
                Ok(res.into_iter().map(|v| aval(f, v)).collect())
            })
        })
    }

    /// Appends a `constant` holding a concrete tensor's value.
    #[pyo3(signature = (tensor, loc=None))]
    fn constant(&self, py: Python<'_>, tensor: &Tensor, loc: Option<String>) -> PyResult<Aval> {
        errors::guard(|| {
            self.with(py, |f| {
                let lit: Literal = tensor.host(py)?.to_literal();
                let v = f.push1(OpKind::Constant(ConstantOp::Constant { value: lit }), &[], loc.as_deref().map(Arc::<str>::from)).map_err(|e| errors::dialect(py, &e, loc.as_deref()))?;
                Ok(aval(f, v))
            })
        })
    }

    /// Appends `iota {dim}` of the given shape and dtype code.
    fn iota(&self, py: Python<'_>, shape: Vec<i64>, dtype: usize, dim: i64) -> PyResult<Aval> {
        errors::guard(|| {
            let ty = TensorType::new(dtype_of(dtype)?, shape);
            self.with(py, |f| {
                let v = f.push1(OpKind::Constant(ConstantOp::Iota { dim, ty }), &[], None).map_err(|e| errors::dialect(py, &e, None))?;
                Ok(aval(f, v))
            })
        })
    }

    /// Appends a call of function (or transform declaration) `callee` of the module.
    #[pyo3(signature = (callee, operands, loc=None))]
    fn call(&self, py: Python<'_>, callee: &str, operands: Vec<u32>, loc: Option<String>) -> PyResult<Vec<Aval>> {
        errors::guard(|| {
            let (params, results) = {
                let sh = lock(&self.shared);
                let g = sh.func(callee).ok_or_else(|| PyValueError::new_err(format!("call: unknown function @{callee}")))?;
                (g.param_types(), g.result_types())
            };
            self.with(py, |f| {
                let vs = check_ids(f, &operands)?;
                let tys: Vec<&TensorType> = vs.iter().map(|v| f.ty(*v)).collect();
                quabla_dialect::ops::call::check_call(callee, &tys, &results, &params, &results).map_err(|e| errors::dialect(py, &e, loc.as_deref()))?;
                let l = loc.as_deref().map(Arc::<str>::from);
                let res = f.push(OpKind::Call(CallOp::Call { callee: callee.to_string(), results }), &vs, l).map_err(|e| errors::dialect(py, &e, loc.as_deref()))?;
                Ok(res.into_iter().map(|v| aval(f, v)).collect())
            })
        })
    }

    /// Adds a transform declaration of the finished function `of`: `kind` is "jvp", "vjp" or
    /// "vmap" (then with `in_axes`/`out_axes`, -1 for unmapped, `size`, and the `axis_name` its
    /// collectives name, if any). Returns its name and its (parameter, result) types.
    #[pyo3(signature = (kind, of, in_axes=None, out_axes=None, size=0, axis_name=None))]
    fn declare(&self, kind: &str, of: &str, in_axes: Option<Vec<i64>>, out_axes: Option<Vec<i64>>, size: i64, axis_name: Option<String>) -> PyResult<(String, Vec<Spec>, Vec<Spec>)> {
        errors::guard(|| {
            let kind = match kind {
                "jvp" => TransformKind::Jvp,
                "vjp" => TransformKind::Vjp,
                "vmap" => {
                    let axis_name = match axis_name {
                        None => None,
                        Some(n) => Some(quabla_dialect::AxisName::parse(&n).ok_or_else(|| PyValueError::new_err(format!("declare: axis name {n:?} is not 1 to 64 letters, digits or '_.-#'")))?),
                    };
                    TransformKind::Vmap { in_axes: axes(in_axes.unwrap_or_default()), out_axes: axes(out_axes.unwrap_or_default()), size, axis_name }
                }
                other => return Err(PyValueError::new_err(format!("declare: unknown transform {other:?}"))),
            };
            let mut sh = lock(&self.shared);
            let g = sh.func(of).ok_or_else(|| PyValueError::new_err(format!("declare: unknown function @{of}")))?;
            let (gp, gr) = (g.param_types(), g.result_types());
            if let TransformKind::Vmap { in_axes, out_axes, size, .. } = &kind {
                let bad = in_axes.len() != gp.len() || out_axes.len() != gr.len() || *size < 1 || in_axes.iter().zip(&gp).chain(out_axes.iter().zip(&gr)).any(|(a, t)| a.is_some_and(|a| a as usize > t.rank()));
                if bad {
                    return Err(PyValueError::new_err(format!("declare: vmap axes {in_axes:?} / {out_axes:?} (size {size}) do not fit @{of}")));
                }
            }
            let name = sh.fresh(&format!("{of}_{}", kind.name()));
            let t = Transform { kind, of: of.to_string() };
            let (p, r) = t.signature(&gp, &gr);
            sh.funcs.push(Func::declaration(name.clone(), &p, &r, t));
            Ok((name, p.iter().map(spec).collect(), r.iter().map(spec).collect()))
        })
    }

    /// Expands the transform declaration `name` (and what it depends on) on a copy of the
    /// module; returns the error message when the expansion fails (e.g. a mapped result
    /// with out_axes None), else None.
    fn check_transform(&self, name: &str) -> PyResult<Option<String>> {
        errors::guard(|| Ok({
            let sh = lock(&self.shared);
            let all = Module { funcs: sh.funcs.clone() };
            let keep = all.reachable([name]);
            let mut m = Module { funcs: all.funcs.into_iter().filter(|f| keep.contains(&f.name)).collect() };
            quabla_passes::autodiff::autodiff(&mut m).err().map(|e| e.to_string())
        }))
    }

    /// True once `finish` or `abandon` was called.
    #[getter]
    fn closed(&self) -> bool {
        lock(&self.state).closed
    }

    /// Sets the outputs and closes the trace. The top-level builder returns the traced
    /// program; a child adds its function to the module and returns its name and result avals.
    fn finish(&self, py: Python<'_>, outputs: Vec<u32>) -> PyResult<Py<PyAny>> {
        errors::guard(|| {
            let mut st = lock(&self.state);
            if st.closed {
                return Err(leaked(py));
            }
            let outs = check_ids(&st.func, &outputs)?;
            st.func.outputs = outs;
            st.closed = true;
            let func = st.func.clone();
            drop(st);
            if self.top {
                let mut funcs = vec![func];
                funcs.extend(lock(&self.shared).funcs.iter().cloned());
                let m = Module { funcs };
                m.verify().map_err(|e| errors::dialect(py, &e, None))?;
                return Ok(Py::new(py, Program { module: m })?.into_any());
            }
            let results: Vec<Aval> = func.outputs.iter().map(|&v| aval(&func, v)).collect();
            let name = func.name.clone();
            if self.region {
                return Ok((name, results).into_pyobject(py)?.into_any().unbind());
            }
            lock(&self.shared).funcs.push(func);
            Ok((name, results).into_pyobject(py)?.into_any().unbind())
        })
    }

    /// Closes the trace without a program (the traced function raised).
    fn abandon(&self) -> PyResult<()> {
        errors::guard(|| Ok({
            lock(&self.state).closed = true;
        }))
    }
}

/// A traced quabla module whose public function is `@main`.
#[pyclass(module = "quabla._quabla", frozen)]
pub struct Program {
    pub module: Module,
}

fn main_of(m: &Module) -> &Func {
    m.func("main").unwrap_or(&m.funcs[0])
}

#[pymethods]
impl Program {
    /// The traced module as MLIR (quabla dialect, generic form, with the user's locations):
    /// `@main` and, for programs with transforms, the traced private functions and the
    /// transform declarations.
    fn as_text(&self) -> PyResult<String> {
        errors::guard(|| Ok({
            self.module.to_mlir()
        }))
    }

    /// The module after quabla-autodiff, quabla-inline, quabla-canonicalize and
    /// quabla-symbol-dce (what is compiled).
    fn optimized_text(&self, py: Python<'_>) -> PyResult<String> {
        errors::guard(|| {
            Ok(optimize(py, &self.module)?.to_mlir())
        })
    }

    /// The optimized module exported to StableHLO (generic form, public `@main`), for XLA,
    /// IREE and other StableHLO consumers (docs/stablehlo.md).
    fn stablehlo_text(&self, py: Python<'_>) -> PyResult<String> {
        errors::guard(|| {
            let m = optimize(py, &self.module)?;
            let emitter = quabla_compiler::emitter("stablehlo").map_err(|e| compile_error(py, &e))?;
            match emitter.kind {
                EmitKind::Text(export) => export(&m, &Default::default()).map_err(|e| compile_error(py, &e)),
                EmitKind::Mlir { .. } => Err(errors::new(py, "QuablaError", "internal error: the stablehlo emitter is not a text emitter")),
            }
        })
    }

    /// Number of ops in `@main` before optimization.
    #[getter]
    fn num_ops(&self) -> usize {
        main_of(&self.module).ops.len()
    }

    /// Number of ops in `@main` after optimization (the compiled graph).
    fn optimized_num_ops(&self, py: Python<'_>) -> PyResult<usize> {
        errors::guard(|| {
            Ok(main_of(&optimize(py, &self.module)?).ops.len())
        })
    }

    /// Number of functions of the traced module (declarations included).
    #[getter]
    fn num_funcs(&self) -> usize {
        self.module.funcs.len()
    }

    /// Compiles through the default pipeline for `device` (a registry name, default the CPU),
    /// or for the reference interpreter with `interpret=True`.
    #[pyo3(signature = (interpret=false, device=None))]
    fn compile(&self, py: Python<'_>, interpret: bool, device: Option<&str>) -> PyResult<Compiled> {
        errors::guard(|| {
            let device = if interpret { "interp" } else { device.unwrap_or(quabla_runtime::DEFAULT_DEVICE) };
            let (exe, device) = compile_module(py, &self.module, device, Caller::Jit)?;
            let (inputs, outputs) = (exe.input_types().to_vec(), exe.output_types().to_vec());
            Ok(Compiled { exe, device, inputs, outputs })
        })
    }
}

/// The module after the compiler's default pipeline (what `compile` compiles).
fn optimize(py: Python<'_>, m: &Module) -> PyResult<Module> {
    quabla_compiler::optimize(m, default_pipeline()).map_err(|e| compile_error(py, &e))
}

//! Differentiation and batching rules of control flow (`quabla.if`; for `quabla.while` the JVP,
//! a while over the carries and the tangents of the active carries, and batching, both with
//! activity / batchedness closed over the body to a fixed point; the VJP of a counted while,
//! see `vjp_while`: a forward loop that stacks the carries and a reversed loop of the body's
//! VJP; a while without a static trip count is `RuleError::DynamicTripCount`).
//! Each rule turns a
//! branch body into a standalone function (`body_func`), runs the expander's own sweep on it
//! (`autodiff::jvp_core`, `vjp_core`, `vmap::vmap_core`, so nested region ops recurse
//! through this file), and turns the result back into a body of the function being built
//! (`func_body`, fresh values):
//! * JVP: an `if` over `(pred, captures, tangents of the captures that have one)` whose
//!   branches are the JVPs of the branches and yield only the result tangents that are
//!   nonzero in at least one branch (the other branch yields a materialised zero); results
//!   whose tangent is zero in both branches stay symbolic zeros.
//! * VJP: an `if` over `(pred, captures, cotangents of the results that have one)` whose
//!   branches are the VJPs of the branches: each recomputes its branch's forward values and
//!   yields the cotangents of the float captures that are nonzero in either branch. Only the
//!   taken branch runs, so reverse mode follows the branch the primal took.
//! * Batching: with an unbatched predicate, an `if` of the batched branches (a result batched
//!   in one branch is lifted in the other); with a batched predicate, both batched branches
//!   inlined and each result chosen with `select` on the predicate broadcast to its shape.
//!
//! `quabla.case` (N branches on an integer index) has the same three rules over all its
//! branches: JVP and VJP are `case`s of the branches' JVPs / VJPs on the same index;
//! batching with an unbatched index is a `case` of the batched branches, with a batched index
//! every branch runs and each result is a chain of `select`s on `index == k` (an index that
//! equals no k < N-1 takes the last branch, StableHLO's clamping).
//!
//! Because the derivative programs are again `if`s of ordinary bodies, they differentiate
//! again (second order).
use std::collections::HashMap;

use quabla_dialect::{BinaryOp, Body, CmpDir, ConstantOp, ControlOp, ElementwiseOp, Func, Literal, Op, OpKind, SlicingOp, TensorType, Value};

use super::{differentiable, lift, RuleError, Tangents, B};
use crate::autodiff::{jvp_core, vjp_core, vmap::vmap_core};

fn internal(e: impl std::fmt::Display) -> RuleError {
    RuleError::Internal(e.to_string())
}

/// Copies `ops` (regions included) into `dst` with fresh values for everything they define;
/// `map` sends source values to `dst` values and must already hold the values `ops` use.
pub(crate) fn copy_ops(ops: &[Op], src: &[TensorType], dst: &mut Func, map: &mut HashMap<Value, Value>) -> Result<Vec<Op>, RuleError> {
    let mut out = Vec::with_capacity(ops.len());
    for op in ops {
        let operands = op.operands.iter().map(|v| map.get(v).copied().ok_or_else(|| internal(format!("body value %{} used before its definition", v.0)))).collect::<Result<Vec<_>, _>>()?;
        let mut regions = Vec::with_capacity(op.regions.len());
        for r in &op.regions {
            regions.push(copy_body(r, src, dst, map)?);
        }
        let results = op.results.iter().map(|r| {
            let v = dst.new_value(src[r.0 as usize].clone());
            map.insert(*r, v);
            v
        });
        let results = results.collect();
        out.push(Op { kind: op.kind.clone(), operands, results, regions, loc: op.loc.clone() });
    }
    Ok(out)
}

/// A copy of `body` (values of a function with value table `src`) with fresh values of `dst`.
fn copy_body(body: &Body, src: &[TensorType], dst: &mut Func, map: &mut HashMap<Value, Value>) -> Result<Body, RuleError> {
    let params = body.params.iter().map(|p| {
        let v = dst.new_value(src[p.0 as usize].clone());
        map.insert(*p, v);
        v
    });
    let params = params.collect();
    let ops = copy_ops(&body.ops, src, dst, map)?;
    let outputs = body.outputs.iter().map(|v| map.get(v).copied().ok_or_else(|| internal(format!("body yields undefined value %{}", v.0)))).collect::<Result<Vec<_>, _>>()?;
    Ok(Body { params, ops, outputs })
}

/// A branch body as a standalone private function (its own value numbering).
pub(crate) fn body_func(body: &Body, types: &[TensorType], name: &str) -> Result<Func, RuleError> {
    let ptys: Vec<TensorType> = body.params.iter().map(|p| types[p.0 as usize].clone()).collect();
    let mut g = Func::new(name, &ptys);
    g.public = false;
    let mut map: HashMap<Value, Value> = body.params.iter().copied().zip(g.params.clone()).collect();
    g.ops = copy_ops(&body.ops, types, &mut g, &mut map)?;
    g.outputs = body.outputs.iter().map(|v| map.get(v).copied().ok_or_else(|| internal(format!("body yields undefined value %{}", v.0)))).collect::<Result<Vec<_>, _>>()?;
    Ok(g)
}

/// The function `g` as a region body of `dst` (its parameters become the body's).
pub(crate) fn func_body(g: &Func, dst: &mut Func) -> Result<Body, RuleError> {
    let body = Body { params: g.params.clone(), ops: g.ops.clone(), outputs: g.outputs.clone() };
    copy_body(&body, &g.types, dst, &mut HashMap::new())
}

/// The function `g` (a branch traced on its own, e.g. by the Python tracer) as a region body
/// of `dst` with parameters of types `params`: parameter k of `g` is body parameter
/// `param_of[k]`; body parameters no parameter of `g` maps to are unused (a capture of the
/// other branch). Errors when `param_of` does not fit or a type differs.
pub fn adopt_body(g: &Func, dst: &mut Func, params: &[TensorType], param_of: &[usize]) -> Result<Body, RuleError> {
    if param_of.len() != g.params.len() {
        return Err(internal(format!("@{}: {} parameters, {} parameter positions", g.name, g.params.len(), param_of.len())));
    }
    let body_params: Vec<Value> = params.iter().map(|t| dst.new_value(t.clone())).collect();
    let mut map = HashMap::new();
    for (p, &k) in g.params.iter().zip(param_of) {
        match params.get(k) {
            Some(t) if t == g.ty(*p) => {
                map.insert(*p, body_params[k]);
            }
            _ => return Err(internal(format!("@{}: parameter %{} does not fit body parameter {k}", g.name, p.0))),
        }
    }
    let ops = copy_ops(&g.ops, &g.types, dst, &mut map)?;
    let outputs = g.outputs.iter().map(|v| map.get(v).copied().ok_or_else(|| internal(format!("@{} returns undefined value %{}", g.name, v.0)))).collect::<Result<Vec<_>, _>>()?;
    Ok(Body { params: body_params, ops, outputs })
}

/// The two branch bodies of an `if` as functions.
fn branches(b: &B, op: &Op) -> Result<[Func; 2], RuleError> {
    let [t, e] = op.regions.as_slice() else {
        return Err(internal(format!("'quabla.{}' op has {} regions, expected 2", op.kind.name(), op.regions.len())));
    };
    Ok([body_func(t, &b.f.types, "then")?, body_func(e, &b.f.types, "else")?])
}

fn result_types(op: &Op) -> &[TensorType] {
    match &op.kind {
        OpKind::Control(ControlOp::If { results }) => results,
        _ => &[],
    }
}

/// JVP of a control-flow op.
pub fn jvp(b: &mut B, op: &Op, tangents: &[Option<Value>]) -> Result<Tangents, RuleError> {
    match &op.kind {
        OpKind::Control(ControlOp::If { .. }) => jvp_if(b, op, tangents),
        OpKind::Control(ControlOp::While {}) => jvp_while(b, op, tangents),
        OpKind::Control(ControlOp::Case { .. }) => jvp_case(b, op, tangents),
        _ => Err(RuleError::Unsupported { op: op.kind.name(), rule: "jvp" }),
    }
}

/// JVP of `quabla.while`: a while over `(carries, tangents of the active carries)` whose cond
/// is the primal cond (tangents unused) and whose body is the body's JVP. A carry is active
/// when its tangent can be nonzero in some iteration: the initial tangents, closed under the
/// body's dependences (a fixed point, at most one round per carry); active carries without an
/// initial tangent start from zero.
fn jvp_while(b: &mut B, op: &Op, tangents: &[Option<Value>]) -> Result<Tangents, RuleError> {
    let [cond, body] = op.regions.as_slice() else {
        return Err(internal(format!("'quabla.while' op has {} regions, expected 2", op.regions.len())));
    };
    let n = op.operands.len();
    let (cond, body) = (body_func(cond, &b.f.types, "cond")?, body_func(body, &b.f.types, "body")?);
    let mut active: Vec<bool> = (0..n).map(|i| tangents[i].is_some() && differentiable(b.f.ty(op.operands[i]))).collect();
    loop {
        let (_, ts) = jvp_core(&body, "body", &active)?;
        let next: Vec<bool> = (0..n).map(|i| active[i] || (ts[i].is_some() && differentiable(b.f.ty(op.operands[i])))).collect();
        if next == active {
            break;
        }
        active = next;
    }
    if !active.iter().any(|&a| a) {
        return Ok(vec![None; n]);
    }
    let (mut fb, ts) = jvp_core(&body, "body_jvp", &active)?;
    super::callback::strip_effects(&mut fb);
    let prim = fb.outputs.clone();
    for i in (0..n).filter(|&i| active[i]) {
        let mut bb = B { f: &mut fb, loc: b.loc.clone() };
        let t = bb.or_zero(ts[i], prim[i]);
        fb.outputs.push(t);
    }
    let mut fc = cond;
    for i in (0..n).filter(|&i| active[i]) {
        let t = fc.new_value(b.f.ty(op.operands[i]).clone());
        fc.params.push(t);
    }
    let bodies = vec![func_body(&fc, b.f)?, func_body(&fb, b.f)?];
    let mut operands = op.operands.clone();
    for i in (0..n).filter(|&i| active[i]) {
        let t = b.or_zero(tangents[i], op.operands[i]);
        operands.push(t);
    }
    let res = b.f.push_with_regions(OpKind::Control(ControlOp::While {}), &operands, bodies, b.loc.clone()).map_err(internal)?;
    let mut it = res.into_iter().skip(n);
    Ok(active.iter().map(|&a| if a { it.next() } else { None }).collect())
}

/// JVP of `quabla.if`: an `if` of the branches' JVPs over the captures and their tangents.
fn jvp_if(b: &mut B, op: &Op, tangents: &[Option<Value>]) -> Result<Tangents, RuleError> {
    let gs = branches(b, op)?.into();
    jvp_branches(b, op, tangents, gs)
}

/// VJP of `quabla.if`: an `if` of the branches' VJPs over the captures and the result
/// cotangents; returns the captures' cotangents (the predicate gets none).
pub fn vjp(b: &mut B, op: &Op, cts: &[Option<Value>]) -> Result<Tangents, RuleError> {
    match &op.kind {
        OpKind::Control(ControlOp::If { .. }) => {
            let gs = branches(b, op)?.into();
            vjp_branches(b, op, cts, gs)
        }
        OpKind::Control(ControlOp::While {}) => vjp_while(b, op, cts),
        OpKind::Control(ControlOp::Case { .. }) => vjp_case(b, op, cts),
        _ => Err(RuleError::Unsupported { op: op.kind.name(), rule: "vjp" }),
    }
}

/// Batching rule of `quabla.if`; batched operands have their batch dim first.
pub fn batch(b: &mut B, op: &Op, xs: &[Value], batched: &[bool], size: i64) -> Result<Vec<(Value, bool)>, RuleError> {
    match &op.kind {
        OpKind::Control(ControlOp::If { .. }) => batch_if(b, op, xs, batched, size),
        OpKind::Control(ControlOp::While {}) => batch_while(b, op, xs, batched, size),
        OpKind::Control(ControlOp::Case { .. }) => batch_case(b, op, xs, batched, size),
        _ => Err(RuleError::Unsupported { op: op.kind.name(), rule: "batch" }),
    }
}

/// Batching of `quabla.while`. A carry is batched when it starts batched or the batched body
/// makes it so (a fixed point). With an unbatched predicate the loop is a while of the batched
/// bodies. With a batched predicate every carry is batched, the loop runs while any example's
/// predicate holds, and each iteration keeps the carries of finished examples (`select` on the
/// per-example predicate, recomputed from the carries at the start of the iteration).
fn batch_while(b: &mut B, op: &Op, xs: &[Value], batched: &[bool], size: i64) -> Result<Vec<(Value, bool)>, RuleError> {
    let [cond_r, body_r] = op.regions.as_slice() else {
        return Err(internal(format!("'quabla.while' op has {} regions, expected 2", op.regions.len())));
    };
    let n = xs.len();
    let (cond, body) = (body_func(cond_r, &b.f.types, "cond")?, body_func(body_r, &b.f.types, "body")?);
    let axes = |bs: &[bool]| bs.iter().map(|&x| if x { Some(0) } else { None }).collect::<Vec<_>>();
    let mut bs = batched.to_vec();
    loop {
        let (_, outs) = vmap_core(&body, "body", &axes(&bs), size)?;
        let next: Vec<bool> = (0..n).map(|i| bs[i] || outs[i].1).collect();
        if next == bs {
            break;
        }
        bs = next;
    }
    let pred_batched = vmap_core(&cond, "cond", &axes(&bs), size)?.1[0].1;
    if pred_batched {
        bs = vec![true; n];
    }
    let mut carries = Vec::with_capacity(n);
    for i in 0..n {
        carries.push(if bs[i] && !batched[i] { lift(b, xs[i], size) } else { xs[i] });
    }
    let (mut fc, cout) = vmap_core(&cond, "cond_b", &axes(&bs), size)?;
    let fb = if !pred_batched {
        fc.outputs = vec![cout[0].0];
        let (mut fb, bouts) = vmap_core(&body, "body_b", &axes(&bs), size)?;
        fb.outputs = vec![];
        for (i, (v, bt)) in bouts.into_iter().enumerate() {
            let mut bb = B { f: &mut fb, loc: b.loc.clone() };
            let v = if bs[i] && !bt { lift(&mut bb, v, size) } else { v };
            fb.outputs.push(v);
        }
        fb
    } else {
        // Any example still running.
        let mut bb = B { f: &mut fc, loc: b.loc.clone() };
        let any = bb.op(OpKind::Reduce(quabla_dialect::ReduceOp::Reduce { op: quabla_dialect::Reducer::Max, dims: vec![0] }), &[cout[0].0]);
        fc.outputs = vec![any];
        // g(c) = (cond(c), body(c)...), batched, then a masked update.
        let mut g = Func::new("cond_body", &cond.param_types());
        g.public = false;
        let mut map: HashMap<Value, Value> = cond.params.iter().copied().zip(g.params.clone()).collect();
        let cops = copy_ops(&cond.ops, &cond.types, &mut g, &mut map)?;
        let p = map[&cond.outputs[0]];
        let mut map2: HashMap<Value, Value> = body.params.iter().copied().zip(g.params.clone()).collect();
        let bops = copy_ops(&body.ops, &body.types, &mut g, &mut map2)?;
        g.ops = cops.into_iter().chain(bops).collect();
        g.outputs = std::iter::once(p).chain(body.outputs.iter().map(|v| map2[v])).collect();
        let (mut fb, gouts) = vmap_core(&g, "body_b", &vec![Some(0); n], size)?;
        let params = fb.params.clone();
        let (pv, pbt) = gouts[0];
        let mut outs = vec![];
        for (i, (v, bt)) in gouts.into_iter().skip(1).enumerate() {
            let mut bb = B { f: &mut fb, loc: b.loc.clone() };
            let v = if bt { v } else { lift(&mut bb, v, size) };
            let t = bb.ty(v);
            let pb = if pbt { pv } else { lift(&mut bb, pv, size) };
            let mask = bb.op(OpKind::Layout(quabla_dialect::LayoutOp::BroadcastInDim { dims: vec![0], shape: t.shape.clone() }), &[pb]);
            outs.push(bb.select(mask, v, params[i]));
        }
        fb.outputs = outs;
        fb
    };
    let bodies = vec![func_body(&fc, b.f)?, func_body(&fb, b.f)?];
    let res = b.f.push_with_regions(OpKind::Control(ControlOp::While {}), &carries, bodies, b.loc.clone()).map_err(internal)?;
    Ok(res.into_iter().zip(bs).collect())
}

/// Batching of `quabla.if`.
fn batch_if(b: &mut B, op: &Op, xs: &[Value], batched: &[bool], size: i64) -> Result<Vec<(Value, bool)>, RuleError> {
    let outs_by_branch = match batch_branches(b, xs, batched, size, result_types(op), branches(b, op)?.into(), |results| OpKind::Control(ControlOp::If { results }))? {
        Swept::Op(res) => return Ok(res),
        Swept::Inlined(outs) => outs,
    };
    // Batched predicate: results selected per example.
    let pred = xs[0];
    let mut res = Vec::new();
    let [then_outs, else_outs] = outs_by_branch.as_slice() else {
        return Err(internal("an if has two branches"));
    };
    for (&(t, tb), &(e, eb)) in then_outs.iter().zip(else_outs) {
        let t = if tb { t } else { lift(b, t, size) };
        let e = if eb { e } else { lift(b, e, size) };
        let shape = b.ty(t).shape;
        let p = b.broadcast(pred, vec![0], shape);
        res.push((b.select(p, t, e), true));
    }
    Ok(res)
}

/// How [`batch_branches`] batched a region op with branches.
enum Swept {
    /// Unbatched selector: one op of the same kind over the batched branches; its results.
    Op(Vec<(Value, bool)>),
    /// Batched selector: every branch inlined; per branch its results, for the caller to
    /// select per example.
    Inlined(Vec<Vec<(Value, bool)>>),
}

/// Batching shared by `quabla.if` and `quabla.case` (`xs[0]` the selector, `xs[1..]` the
/// branches' operands): each branch is swept over the batch; with an unbatched selector the
/// branches become the regions of one op (`kind` of its result types; results batched in any
/// branch are batched in all), else every branch is inlined.
fn batch_branches(b: &mut B, xs: &[Value], batched: &[bool], size: i64, rtys: &[TensorType], branches: Vec<Func>, kind: impl FnOnce(Vec<TensorType>) -> OpKind) -> Result<Swept, RuleError> {
    let in_axes: Vec<Option<i64>> = batched[1..].iter().map(|&x| if x { Some(0) } else { None }).collect();
    let mut swept = Vec::new();
    for g in branches {
        swept.push(vmap_core(&g, &g.name, &in_axes, size)?);
    }
    if !batched[0] {
        let out_b: Vec<bool> = (0..rtys.len()).map(|j| swept.iter().any(|(_, o)| o[j].1)).collect();
        let mut bodies = Vec::new();
        for (mut f, outs) in swept {
            f.outputs = vec![];
            for (j, (v, bt)) in outs.into_iter().enumerate() {
                let mut bb = B { f: &mut f, loc: b.loc.clone() };
                let v = if out_b[j] && !bt { lift(&mut bb, v, size) } else { v };
                f.outputs.push(v);
            }
            bodies.push(func_body(&f, b.f)?);
        }
        let tys: Vec<TensorType> = rtys.iter().zip(&out_b).map(|(t, bt)| if *bt { quabla_dialect::insert_axis(t, Some(0), size) } else { t.clone() }).collect();
        let res = b.f.push_with_regions(kind(tys), xs, bodies, b.loc.clone()).map_err(internal)?;
        return Ok(Swept::Op(res.into_iter().zip(out_b).collect()));
    }
    let mut outs_by_branch = Vec::new();
    for (f, outs) in swept {
        let mut map: HashMap<Value, Value> = f.params.iter().copied().zip(xs[1..].iter().copied()).collect();
        let ops = copy_ops(&f.ops, &f.types, b.f, &mut map)?;
        b.f.ops.extend(ops);
        let vals = outs.into_iter().map(|(v, bt)| map.get(&v).map(|&v| (v, bt)).ok_or_else(|| internal(format!("batched branch yields undefined value %{}", v.0))));
        outs_by_branch.push(vals.collect::<Result<Vec<(Value, bool)>, _>>()?);
    }
    Ok(Swept::Inlined(outs_by_branch))
}

/// A counted `quabla.while`: carry `counter` starts at `start`, the body adds `step` (> 0) to
/// it, and the predicate compares it against a constant bound, so the loop runs `trips` times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counted {
    pub counter: usize,
    pub start: i64,
    pub step: i64,
    pub trips: i64,
}

/// The value of `v` when an op of `ops` defines it as a 0-d integer constant.
fn const_int(ops: &[Op], v: Value) -> Option<i64> {
    super::constant_of(ops, v).filter(|value| value.ty.rank() == 0 && value.ty.dtype.is_int()).map(|value| value.get_i64(0))
}

/// Recognises a counted loop: the cond region yields `compare(counter, bound)` (or the mirrored
/// comparison) with direction `lt`, `le` or `ne`; the body yields `counter + step` with a
/// constant `step > 0`; the counter's initial value is a constant of `outer` (the enclosing
/// function's top-level ops); the bound is a constant of the cond region or a loop-invariant
/// carry whose initial value is a constant of `outer`. Errors say what is dynamic.
pub fn counted_loop(outer: &[Op], operands: &[Value], cond: &Func, body: &Func) -> Result<Counted, String> {
    let out = *cond.outputs.first().ok_or("the cond region yields nothing")?;
    let cmp = cond.ops.iter().find(|o| o.results.contains(&out)).ok_or("the predicate is a carry, not a comparison of a counter")?;
    let OpKind::Elementwise(ElementwiseOp::Compare { direction }) = &cmp.kind else {
        return Err(format!("the predicate is a '{}', not a comparison of a counter with a constant", cmp.kind.name()));
    };
    let step_of = |k: usize| -> Option<i64> {
        let bo = body.outputs[k];
        let add = body.ops.iter().find(|o| o.results.contains(&bo))?;
        match (&add.kind, add.operands.as_slice()) {
            (OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add }), [x, y]) if *x == body.params[k] => const_int(&body.ops, *y),
            (OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add }), [x, y]) if *y == body.params[k] => const_int(&body.ops, *x),
            _ => None,
        }
        .filter(|&s| s > 0)
    };
    let param = |v: Value| cond.params.iter().position(|p| *p == v);
    let mirrored = |d: &CmpDir| match d {
        CmpDir::Lt => CmpDir::Gt,
        CmpDir::Le => CmpDir::Ge,
        CmpDir::Gt => CmpDir::Lt,
        CmpDir::Ge => CmpDir::Le,
        CmpDir::Eq => CmpDir::Eq,
        CmpDir::Ne => CmpDir::Ne,
    };
    let (a, c) = (cmp.operands[0], cmp.operands[1]);
    let (k, step, bound, dir) = match (param(a).and_then(|k| step_of(k).map(|s| (k, s))), param(c).and_then(|k| step_of(k).map(|s| (k, s)))) {
        (Some((k, s)), _) => (k, s, c, *direction),
        (None, Some((k, s))) => (k, s, a, mirrored(direction)),
        (None, None) => return Err("no carry compared by the predicate is stepped by a positive constant".into()),
    };
    let start = const_int(outer, operands[k]).ok_or("the counter's initial value is not a constant")?;
    let n = match const_int(&cond.ops, bound) {
        Some(n) => n,
        None => match param(bound) {
            Some(j) if body.outputs[j] == body.params[j] => const_int(outer, operands[j]).ok_or("the loop bound is a runtime value")?,
            _ => return Err("the loop bound is not a constant".into()),
        },
    };
    let (start128, n128, step128) = (start as i128, n as i128, step as i128);
    let trips = match dir {
        CmpDir::Lt if n128 <= start128 => 0,
        CmpDir::Lt => (n128 - start128 + step128 - 1) / step128,
        CmpDir::Le if n128 < start128 => 0,
        CmpDir::Le => (n128 - start128) / step128 + 1,
        CmpDir::Ne if n128 >= start128 && (n128 - start128) % step128 == 0 => (n128 - start128) / step128,
        _ => return Err(format!("the predicate '{}' of a counter stepping up does not bound the loop", dir.name())),
    };
    let trips = i64::try_from(trips).map_err(|_| "the trip count overflows".to_string())?;
    Ok(Counted { counter: k, start, step, trips })
}

/// True when the body needs the value of carry `i` at the start of an iteration: anything but
/// the one pattern of a stacked output (`dynamic_update_slice(carry, ...)` yielded as the next
/// value of that carry and used nowhere else), whose cotangent never reads the carry.
fn carry_value_needed(body: &Func, i: usize) -> bool {
    let p = body.params[i];
    let uses: Vec<(usize, usize)> = body.ops.iter().enumerate().flat_map(|(j, o)| o.operands.iter().enumerate().filter(|(_, v)| **v == p).map(move |(pos, _)| (j, pos))).collect();
    let in_outputs = body.outputs.contains(&p);
    if in_outputs {
        return true;
    }
    match uses.as_slice() {
        [] => false,
        [(j, 0)] => {
            let o = &body.ops[*j];
            let r = o.results[0];
            let used_by_ops = body.ops.iter().any(|x| x.operands.contains(&r));
            let out_uses = body.outputs.iter().filter(|v| **v == r).count();
            !(matches!(o.kind, OpKind::Slicing(SlicingOp::DynamicUpdateSlice {})) && !used_by_ops && out_uses == 1 && body.outputs[i] == r)
        }
        _ => true,
    }
}

fn int_const(b: &mut B, ty: &TensorType, v: i64) -> Value {
    b.op(OpKind::Constant(ConstantOp::Constant { value: Literal::from_i64s(ty.clone(), &[v]) }), &[])
}

/// VJP of a counted `quabla.while` (JAX's scan transpose with the carries and what the body's
/// products feed as residuals, [`loop_residuals`]).
///
/// Forward: the primal loop is replaced in place by a loop that also stacks, at iteration `t`,
/// the value at the start of the iteration of every carry the body's VJP needs (not the
/// counter, which is `start + step * t`, nor loop-invariant carries, whose value is their
/// initial one, nor stacked outputs; see `carry_value_needed`) into a `[trips, ...]` buffer with
/// `dynamic_update_slice`, first in the body (read before it overwrites them, so they are
/// updated in place), and the residuals last. Backward: a loop over `j = 0..trips` that
/// rebuilds the carries of iteration `t = trips - 1 - j` (a `dynamic_slice` of each stack),
/// reads the residuals likewise and runs the rest of the body's VJP on them, carrying the cotangents of the active carries (the result cotangents closed over the
/// body to a fixed point). Both loops are counted loops again (constant start, step 1,
/// constant bound), so the derivative differentiates again (second order).
fn vjp_while(b: &mut B, op: &Op, cts: &[Option<Value>]) -> Result<Tangents, RuleError> {
    let [cond_r, body_r] = op.regions.as_slice() else {
        return Err(internal(format!("'quabla.while' op has {} regions, expected 2", op.regions.len())));
    };
    let n = op.operands.len();
    let (cond, body) = (body_func(cond_r, &b.f.types, "cond")?, body_func(body_r, &b.f.types, "body")?);
    let diff: Vec<bool> = (0..n).map(|i| differentiable(b.f.ty(op.operands[i]))).collect();
    let mut active: Vec<bool> = (0..n).map(|i| cts[i].is_some() && diff[i]).collect();
    if !active.iter().any(|&a| a) {
        return Ok(vec![None; n]);
    }
    let cl = counted_loop(&b.f.ops, &op.operands, &cond, &body).map_err(RuleError::DynamicTripCount)?;
    loop {
        let (_, cs) = vjp_core(&body, "body", &active)?;
        let next: Vec<bool> = (0..n).map(|i| active[i] || (cs[i].is_some() && diff[i])).collect();
        if next == active {
            break;
        }
        active = next;
    }
    if cl.trips == 0 {
        return Ok((0..n).map(|i| if diff[i] { cts[i] } else { None }).collect());
    }
    let k = cl.counter;
    let ctr_ty = b.f.ty(op.operands[k]).clone();
    let tys: Vec<TensorType> = op.operands.iter().map(|v| b.f.ty(*v).clone()).collect();
    let invariant: Vec<bool> = (0..n).map(|i| body.outputs[i] == body.params[i]).collect();
    let stacked: Vec<usize> = (0..n).filter(|&i| i != k && !invariant[i] && carry_value_needed(&body, i)).collect();
    let stack_ty = |i: usize| TensorType::new(tys[i].dtype, std::iter::once(cl.trips).chain(tys[i].shape.iter().copied()).collect::<Vec<_>>());
    for &i in &stacked {
        stack_ty(i).check_size("while").map_err(|e| internal(format!("the stack of carry {i} of a loop of {} iterations: {e}", cl.trips)))?;
    }
    let (mut vf, vcs) = vjp_core(&body, "body_vjp", &active)?;
    super::callback::strip_effects(&mut vf);
    let residuals = loop_residuals(&body, &vf, &vcs, &invariant);
    let res_ty = |v: Value| {
        let t = body.ty(v);
        TensorType::new(t.dtype, std::iter::once(cl.trips).chain(t.shape.iter().copied()).collect::<Vec<_>>())
    };
    for &v in &residuals {
        res_ty(v).check_size("while").map_err(|e| internal(format!("the stack of a residual of a loop of {} iterations: {e}", cl.trips)))?;
    }

    // Forward: the loop with its stacks, in place of the primal loop.
    let mut fc = cond.clone();
    let mut fb = body.clone();
    for ty in stacked.iter().map(|&i| stack_ty(i)).chain(residuals.iter().map(|&v| res_ty(v))) {
        let v = fc.new_value(ty);
        fc.params.push(v);
    }
    let sp: Vec<Value> = stacked.iter().map(|&i| {
        let v = fb.new_value(stack_ty(i));
        fb.params.push(v);
        v
    }).collect();
    let rp: Vec<Value> = residuals.iter().map(|&r| {
        let v = fb.new_value(res_ty(r));
        fb.params.push(v);
        v
    }).collect();
    // The pushes go first in the body: the carries are read (stacked) before the body
    // overwrites them, so the lowering updates them in place.
    let body_ops = std::mem::take(&mut fb.ops);
    let t_fwd = {
        let mut bb = B { f: &mut fb, loc: b.loc.clone() };
        let pk = bb.f.params[k];
        let t = if cl.start == 0 && cl.step == 1 {
            pk
        } else {
            let s0 = int_const(&mut bb, &ctr_ty, cl.start);
            let st = int_const(&mut bb, &ctr_ty, cl.step);
            let d = bb.sub(pk, s0);
            bb.div(d, st)
        };
        let z = int_const(&mut bb, &ctr_ty, 0);
        for (j, &i) in stacked.iter().enumerate() {
            let x = bb.f.params[i];
            let upd = bb.reshape(x, stack_ty(i).shape.iter().enumerate().map(|(d, &e)| if d == 0 { 1 } else { e }).collect());
            let mut xs = vec![sp[j], upd, t];
            xs.extend(std::iter::repeat_n(z, tys[i].rank()));
            let y = bb.op(OpKind::Slicing(SlicingOp::DynamicUpdateSlice {}), &xs);
            bb.f.outputs.push(y);
        }
        t
    };
    fb.ops.extend(body_ops);
    // The residuals are pushed last, once the body has computed them.
    {
        let mut bb = B { f: &mut fb, loc: b.loc.clone() };
        let z = int_const(&mut bb, &ctr_ty, 0);
        for (&r, &stack) in residuals.iter().zip(&rp) {
            let rt = bb.f.ty(r).clone();
            let upd = bb.reshape(r, std::iter::once(1).chain(rt.shape.iter().copied()).collect());
            let mut xs = vec![stack, upd, t_fwd];
            xs.extend(std::iter::repeat_n(z, rt.rank()));
            let y = bb.op(OpKind::Slicing(SlicingOp::DynamicUpdateSlice {}), &xs);
            bb.f.outputs.push(y);
        }
    }
    let len0 = b.f.ops.len();
    let ztys: Vec<TensorType> = stacked.iter().map(|&i| stack_ty(i)).chain(residuals.iter().map(|&v| res_ty(v))).collect();
    let zs: Vec<Value> = ztys.iter().map(|t| b.zeros(t)).collect();
    let mut operands = op.operands.clone();
    operands.extend(&zs);
    let bodies = vec![func_body(&fc, b.f)?, func_body(&fb, b.f)?];
    let res = b.f.push_with_regions(OpKind::Control(ControlOp::While {}), &operands, bodies, b.loc.clone()).map_err(internal)?;
    let stacks: Vec<Value> = res[n..n + stacked.len()].to_vec();
    let rstacks: Vec<Value> = res[n + stacked.len()..].to_vec();
    if let Some(p) = b.f.ops[..len0].iter().position(|o| o.results == op.results) {
        let mut moved: Vec<Op> = b.f.ops.drain(len0..).collect();
        if let Some(w) = moved.last_mut() {
            w.results[..n].copy_from_slice(&op.results);
        }
        b.f.ops.splice(p..p + 1, moved);
    }

    // Backward: j = 0..trips over (j, cotangents of the active carries, stacks, invariant carries).
    let act: Vec<usize> = (0..n).filter(|&i| active[i]).collect();
    let inv: Vec<usize> = (0..n).filter(|&i| invariant[i]).collect();
    let mut ptys = vec![ctr_ty.clone()];
    ptys.extend(act.iter().map(|&i| tys[i].clone()));
    ptys.extend(stacked.iter().map(|&i| stack_ty(i)));
    ptys.extend(residuals.iter().map(|&v| res_ty(v)));
    ptys.extend(inv.iter().map(|&i| tys[i].clone()));
    let mut g = Func::new("while_vjp", &ptys);
    g.public = false;
    let gp = g.params.clone();
    let (jj, rest) = (gp[0], &gp[1..]);
    let (ct_p, rest) = rest.split_at(act.len());
    let (st_p, rest) = rest.split_at(stacked.len());
    let (rs_p, inv_p) = rest.split_at(residuals.len());
    let mut map: HashMap<Value, Value> = HashMap::new();
    {
        let mut bb = B { f: &mut g, loc: b.loc.clone() };
        let last = int_const(&mut bb, &ctr_ty, cl.trips - 1);
        let t = bb.sub(last, jj);
        let xk = if cl.start == 0 && cl.step == 1 {
            t
        } else {
            let st = int_const(&mut bb, &ctr_ty, cl.step);
            let s0 = int_const(&mut bb, &ctr_ty, cl.start);
            let m = bb.mul(t, st);
            bb.add(m, s0)
        };
        let z = int_const(&mut bb, &ctr_ty, 0);
        #[allow(clippy::needless_range_loop)]
        for i in 0..n {
            let x = if i == k {
                xk
            } else if let Some(q) = inv.iter().position(|&v| v == i) {
                inv_p[q]
            } else if let Some(q) = stacked.iter().position(|&v| v == i) {
                let mut xs = vec![st_p[q], t];
                xs.extend(std::iter::repeat_n(z, tys[i].rank()));
                let sizes: Vec<i64> = std::iter::once(1).chain(tys[i].shape.iter().copied()).collect();
                let w = bb.op(OpKind::Slicing(SlicingOp::DynamicSlice { slice_sizes: sizes }), &xs);
                bb.reshape(w, tys[i].shape.clone())
            } else {
                // Not read by the body's VJP (a stacked output): any value of its type.
                bb.zeros(&tys[i])
            };
            map.insert(vf.params[i], x);
        }
        for (a, &c) in ct_p.iter().enumerate() {
            map.insert(vf.params[n + a], c);
        }
        for (&r, &stack) in residuals.iter().zip(rs_p) {
            let rt = body.ty(r).clone();
            let mut xs = vec![stack, t];
            xs.extend(std::iter::repeat_n(z, rt.rank()));
            let sizes: Vec<i64> = std::iter::once(1).chain(rt.shape.iter().copied()).collect();
            let w = bb.op(OpKind::Slicing(SlicingOp::DynamicSlice { slice_sizes: sizes }), &xs);
            let x = bb.reshape(w, rt.shape.clone());
            map.insert(r, x);
        }
    }
    // The ops computing the residuals are not run again (what only they read is dead code).
    let kept: Vec<Op> = vf.ops.iter().filter(|o| !o.results.iter().all(|r| residuals.contains(r)) || o.results.is_empty()).cloned().collect();
    let ops = copy_ops(&kept, &vf.types, &mut g, &mut map)?;
    g.ops.extend(ops);
    accumulate_windows(&mut g, &b.loc);
    let mut outs = Vec::new();
    {
        let mut bb = B { f: &mut g, loc: b.loc.clone() };
        let one = int_const(&mut bb, &ctr_ty, 1);
        outs.push(bb.add(jj, one));
        for &i in &act {
            let c = match vcs[i] {
                Some(c) => *map.get(&c).ok_or_else(|| internal("a loop body cotangent was not copied"))?,
                None => bb.zeros(&tys[i]),
            };
            outs.push(c);
        }
    }
    outs.extend(st_p);
    outs.extend(rs_p);
    outs.extend(inv_p);
    g.outputs = outs;
    let mut gc = Func::new("while_vjp_cond", &ptys);
    gc.public = false;
    {
        let mut bb = B { f: &mut gc, loc: b.loc.clone() };
        let p0 = bb.f.params[0];
        let nt = int_const(&mut bb, &ctr_ty, cl.trips);
        let c = bb.cmp(CmpDir::Lt, p0, nt);
        gc.outputs = vec![c];
    }
    let mut operands = vec![int_const(b, &ctr_ty, 0)];
    for &i in &act {
        let c = b.or_zero(cts[i], op.results[i]);
        operands.push(c);
    }
    operands.extend(&stacks);
    operands.extend(&rstacks);
    operands.extend(inv.iter().map(|&i| op.operands[i]));
    let bodies = vec![func_body(&gc, b.f)?, func_body(&g, b.f)?];
    let res = b.f.push_with_regions(OpKind::Control(ControlOp::While {}), &operands, bodies, b.loc.clone()).map_err(internal)?;
    let mut out = vec![None; n];
    for (q, &i) in act.iter().enumerate() {
        out[i] = Some(res[1 + q]);
    }
    Ok(out)
}

/// The residuals of a loop body's VJP `vf` (`vjp_core` of `body`: the body's ops, same values,
/// then the VJP's) that the forward loop stacks: values of single-result body ops that the
/// VJP's own ops (or its cotangents `vcs`) read, that change per iteration (they depend on a
/// carry that is not `invariant`) and that a product or a convolution computes, directly or
/// through cheaper ops. The backward loop reads them from their stacks instead of running the
/// body's products again (JAX's scan saves every residual): a scan RNN's gradient, 100 steps
/// of 16x128, 3117 -> 2570 us (JAX 2770). What no product feeds (slices of `xs`, the
/// counter's arithmetic) is recomputed: cheaper than a stack's write and read.
fn loop_residuals(body: &Func, vf: &Func, vcs: &[Option<Value>], invariant: &[bool]) -> Vec<Value> {
    use std::collections::HashSet;
    let mut varying: HashSet<Value> = body.params.iter().zip(invariant).filter(|(_, inv)| !**inv).map(|(p, _)| *p).collect();
    let mut dear: HashSet<Value> = HashSet::new();
    for op in &body.ops {
        if !op.operands.iter().any(|v| varying.contains(v)) {
            continue;
        }
        let d = matches!(op.kind, OpKind::Dot(_) | OpKind::Convolution(_)) || op.operands.iter().any(|v| dear.contains(v));
        for r in &op.results {
            varying.insert(*r);
            if d {
                dear.insert(*r);
            }
        }
    }
    let body_values: HashSet<Value> = body.ops.iter().flat_map(|o| o.results.iter().copied()).collect();
    let mut read: HashSet<Value> = vf.ops.iter().filter(|o| !o.results.iter().any(|r| body_values.contains(r))).flat_map(|o| o.operands.iter().copied()).collect();
    read.extend(vcs.iter().flatten().copied());
    body.ops.iter().filter(|o| o.results.len() == 1 && o.regions.is_empty()).map(|o| o.results[0]).filter(|v| dear.contains(v) && read.contains(v)).collect()
}

/// In a backward loop body, rewrites `add(acc, dynamic_update_slice(zeros, u, s...))` (either
/// order; the update used only there), a window's cotangent added into a carried cotangent
/// (the VJP of `dynamic_slice` of a loop-invariant carry such as a scan's `xs`), into
/// `dynamic_update_slice(acc, dynamic_slice(acc, s...) + u, s...)`: the same value (both
/// clamp the window alike) at the cost of the window instead of the whole buffer, which the
/// linalg lowering updates in place.
fn accumulate_windows(g: &mut Func, loc: &quabla_dialect::Loc) {
    let is_zero = |g: &Func, v: Value| g.ops.iter().any(|o| o.results.first() == Some(&v) && matches!(&o.kind, OpKind::Constant(ConstantOp::Constant { value }) if value.is_splat_of(0.0)));
    let uses = |g: &Func, v: Value| {
        let mut n = g.outputs.iter().filter(|w| **w == v).count();
        quabla_dialect::walk_ops(&g.ops, &mut |o: &Op| {
            n += o.operands.iter().filter(|w| **w == v).count() + o.regions.iter().map(|b| b.outputs.iter().filter(|w| **w == v).count()).sum::<usize>();
        });
        n
    };
    let mut k = 0;
    while k < g.ops.len() {
        let op = g.ops[k].clone();
        k += 1;
        if !matches!(op.kind, OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add })) {
            continue;
        }
        for (acc, d) in [(op.operands[0], op.operands[1]), (op.operands[1], op.operands[0])] {
            let Some(dus) = g.ops[..k - 1].iter().find(|o| o.results.first() == Some(&d) && matches!(o.kind, OpKind::Slicing(SlicingOp::DynamicUpdateSlice {}))).cloned() else { continue };
            if !is_zero(g, dus.operands[0]) || uses(g, d) != 1 {
                continue;
            }
            let (u, starts) = (dus.operands[1], dus.operands[2..].to_vec());
            let len0 = g.ops.len();
            let mut bb = B { f: g, loc: loc.clone() };
            let sizes = bb.ty(u).shape;
            let mut xs = vec![acc];
            xs.extend(&starts);
            let w = bb.op(OpKind::Slicing(SlicingOp::DynamicSlice { slice_sizes: sizes }), &xs);
            let sum = bb.add(w, u);
            let mut ys = vec![acc, sum];
            ys.extend(&starts);
            bb.op(OpKind::Slicing(SlicingOp::DynamicUpdateSlice {}), &ys);
            let mut new_ops: Vec<Op> = g.ops.drain(len0..).collect();
            if let Some(last) = new_ops.last_mut() {
                last.results[0] = op.results[0];
            }
            let n_new = new_ops.len();
            g.ops.splice(k - 1..k, new_ops);
            k += n_new - 1;
            break;
        }
    }
}

/// The branch bodies of a `case` as functions.
fn case_branches(b: &B, op: &Op) -> Result<Vec<Func>, RuleError> {
    op.regions.iter().enumerate().map(|(k, r)| body_func(r, &b.f.types, &format!("branch{k}"))).collect()
}

fn case_results(op: &Op) -> Vec<TensorType> {
    match &op.kind {
        OpKind::Control(ControlOp::Case { results }) => results.clone(),
        _ => vec![],
    }
}

/// The result types of an `if` or a `case`.
fn branch_results(op: &Op) -> Vec<TensorType> {
    match &op.kind {
        OpKind::Control(ControlOp::Case { .. }) => case_results(op),
        _ => result_types(op).to_vec(),
    }
}

/// An op of `op`'s kind (`if` or `case`) with results `results`.
fn branch_kind(op: &Op, results: Vec<TensorType>) -> Result<OpKind, RuleError> {
    match &op.kind {
        OpKind::Control(ControlOp::If { .. }) => Ok(OpKind::Control(ControlOp::If { results })),
        OpKind::Control(ControlOp::Case { .. }) => Ok(OpKind::Control(ControlOp::Case { results })),
        k => Err(internal(format!("'quabla.{}' has no branches", k.name()))),
    }
}

/// JVP of `quabla.case`: a `case` on the same index of the branches' JVPs over the captures
/// and their tangents, yielding the result tangents nonzero in some branch.
fn jvp_case(b: &mut B, op: &Op, tangents: &[Option<Value>]) -> Result<Tangents, RuleError> {
    let gs = case_branches(b, op)?;
    jvp_branches(b, op, tangents, gs)
}

/// JVP of an op with branches (`if`, `case`; `gs` its regions as functions): an op of the same
/// kind on the same selector whose branches return the active results' tangents.
fn jvp_branches(b: &mut B, op: &Op, tangents: &[Option<Value>], gs: Vec<Func>) -> Result<Tangents, RuleError> {
    let rtys = branch_results(op);
    let caps = &op.operands[1..];
    let active: Vec<bool> = caps.iter().zip(&tangents[1..]).map(|(c, t)| t.is_some() && differentiable(b.f.ty(*c))).collect();
    let mut swept = Vec::new();
    for g in gs {
        swept.push(jvp_core(&g, &g.name, &active)?);
        super::callback::strip_effects(&mut swept.last_mut().unwrap().0);
    }
    let out_active: Vec<bool> = (0..rtys.len()).map(|j| differentiable(&rtys[j]) && swept.iter().any(|(_, ts)| ts[j].is_some())).collect();
    if !out_active.iter().any(|&a| a) {
        return Ok(vec![None; rtys.len()]);
    }
    let mut bodies = Vec::new();
    for (mut f, ts) in swept {
        let prim = f.outputs.clone();
        f.outputs = vec![];
        for j in (0..rtys.len()).filter(|&j| out_active[j]) {
            let mut bb = B { f: &mut f, loc: b.loc.clone() };
            let t = bb.or_zero(ts[j], prim[j]);
            f.outputs.push(t);
        }
        bodies.push(func_body(&f, b.f)?);
    }
    let mut operands = op.operands.clone();
    operands.extend(tangents[1..].iter().zip(&active).filter(|(_, a)| **a).map(|(t, _)| t.unwrap()));
    let tys: Vec<TensorType> = rtys.iter().zip(&out_active).filter(|(_, a)| **a).map(|(t, _)| t.clone()).collect();
    let res = b.f.push_with_regions(branch_kind(op, tys)?, &operands, bodies, b.loc.clone()).map_err(internal)?;
    let mut it = res.into_iter();
    Ok(out_active.iter().map(|&a| if a { it.next() } else { None }).collect())
}

/// VJP of `quabla.case`: a `case` on the same index of the branches' VJPs over the captures
/// and the result cotangents (the taken branch recomputes its forward values); returns the
/// captures' cotangents (the index gets none).
fn vjp_case(b: &mut B, op: &Op, cts: &[Option<Value>]) -> Result<Tangents, RuleError> {
    let gs = case_branches(b, op)?;
    vjp_branches(b, op, cts, gs)
}

/// VJP of an op with branches (`if`, `case`; `gs` its regions as functions): an op of the same
/// kind on the same selector whose branches return the captures' cotangents.
fn vjp_branches(b: &mut B, op: &Op, cts: &[Option<Value>], gs: Vec<Func>) -> Result<Tangents, RuleError> {
    let rtys = branch_results(op);
    let caps = op.operands[1..].to_vec();
    let active: Vec<bool> = rtys.iter().zip(cts).map(|(t, c)| c.is_some() && differentiable(t)).collect();
    let mut swept = Vec::new();
    for g in gs {
        swept.push(vjp_core(&g, &g.name, &active)?);
        super::callback::strip_effects(&mut swept.last_mut().unwrap().0);
    }
    let cap_active: Vec<bool> = (0..caps.len()).map(|i| differentiable(b.f.ty(caps[i])) && swept.iter().any(|(_, cs)| cs[i].is_some())).collect();
    let mut out = vec![None; op.operands.len()];
    if !cap_active.iter().any(|&a| a) {
        return Ok(out);
    }
    let mut bodies = Vec::new();
    for (mut f, cs) in swept {
        f.outputs = vec![];
        for i in (0..caps.len()).filter(|&i| cap_active[i]) {
            let p = f.params[i];
            let mut bb = B { f: &mut f, loc: b.loc.clone() };
            let c = bb.or_zero(cs[i], p);
            f.outputs.push(c);
        }
        bodies.push(func_body(&f, b.f)?);
    }
    let mut operands = op.operands.clone();
    operands.extend(cts.iter().zip(&active).filter(|(_, a)| **a).map(|(c, _)| c.unwrap()));
    let tys: Vec<TensorType> = caps.iter().zip(&cap_active).filter(|(_, a)| **a).map(|(c, _)| b.f.ty(*c).clone()).collect();
    let res = b.f.push_with_regions(branch_kind(op, tys)?, &operands, bodies, b.loc.clone()).map_err(internal)?;
    let mut it = res.into_iter();
    for (i, a) in cap_active.iter().enumerate() {
        if *a {
            out[i + 1] = it.next();
        }
    }
    Ok(out)
}

/// Batching of `quabla.case`: with an unbatched index a `case` of the batched branches (a
/// result batched in one branch is lifted in the others); with a batched index every batched
/// branch inlined and each result `select(index == 0, r0, select(index == 1, r1, ... rN-1))`
/// per example.
fn batch_case(b: &mut B, op: &Op, xs: &[Value], batched: &[bool], size: i64) -> Result<Vec<(Value, bool)>, RuleError> {
    let outs_by_branch = match batch_branches(b, xs, batched, size, &case_results(op), case_branches(b, op)?, |results| OpKind::Control(ControlOp::Case { results }))? {
        Swept::Op(res) => return Ok(res),
        Swept::Inlined(outs) => outs,
    };
    let index = xs[0];
    let ity = b.ty(index);
    let n = outs_by_branch.len();
    let mut eqs = Vec::with_capacity(n.saturating_sub(1));
    for k in 0..n.saturating_sub(1) {
        let kc = b.splat(&ity, k as f64);
        eqs.push(b.cmp(quabla_dialect::CmpDir::Eq, index, kc));
    }
    let mut res = Vec::new();
    for (j, &(v, bt)) in outs_by_branch[n - 1].iter().enumerate() {
        let mut acc = if bt { v } else { lift(b, v, size) };
        for k in (0..n - 1).rev() {
            let (v, bt) = outs_by_branch[k][j];
            let v = if bt { v } else { lift(b, v, size) };
            let shape = b.ty(v).shape;
            let p = b.broadcast(eqs[k], vec![0], shape);
            acc = b.select(p, v, acc);
        }
        res.push((acc, true));
    }
    Ok(res)
}

//! Differentiation and batching rules of control flow (`quabla.if`; for `quabla.while` the JVP,
//! a while over the carries and the tangents of the active carries, and batching, both with
//! activity / batchedness closed over the body to a fixed point; its VJP is an explicit gap).
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
//! Because the derivative programs are again `if`s of ordinary bodies, they differentiate
//! again (second order).
use std::collections::HashMap;

use quabla_dialect::{Body, ControlOp, Func, Op, OpKind, TensorType, Value};

use super::{differentiable, lift, RuleError, Tangents, B};
use crate::autodiff::{jvp_core, vjp_core, vmap::vmap_core};

fn internal(e: impl std::fmt::Display) -> RuleError {
    RuleError::Internal(e.to_string())
}

/// Copies `ops` (regions included) into `dst` with fresh values for everything they define;
/// `map` sends source values to `dst` values and must already hold the values `ops` use.
fn copy_ops(ops: &[Op], src: &[TensorType], dst: &mut Func, map: &mut HashMap<Value, Value>) -> Result<Vec<Op>, RuleError> {
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
fn body_func(body: &Body, types: &[TensorType], name: &str) -> Result<Func, RuleError> {
    let ptys: Vec<TensorType> = body.params.iter().map(|p| types[p.0 as usize].clone()).collect();
    let mut g = Func::new(name, &ptys);
    g.public = false;
    let mut map: HashMap<Value, Value> = body.params.iter().copied().zip(g.params.clone()).collect();
    g.ops = copy_ops(&body.ops, types, &mut g, &mut map)?;
    g.outputs = body.outputs.iter().map(|v| map.get(v).copied().ok_or_else(|| internal(format!("body yields undefined value %{}", v.0)))).collect::<Result<Vec<_>, _>>()?;
    Ok(g)
}

/// The function `g` as a region body of `dst` (its parameters become the body's).
fn func_body(g: &Func, dst: &mut Func) -> Result<Body, RuleError> {
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
    let rtys = result_types(op).to_vec();
    let caps = &op.operands[1..];
    let active: Vec<bool> = caps.iter().zip(&tangents[1..]).map(|(c, t)| t.is_some() && differentiable(b.f.ty(*c))).collect();
    let mut swept = Vec::new();
    for g in branches(b, op)? {
        swept.push(jvp_core(&g, &g.name, &active)?);
    }
    let out_active: Vec<bool> = (0..rtys.len()).map(|j| differentiable(&rtys[j]) && swept.iter().any(|(_, ts)| ts[j].is_some())).collect();
    if !out_active.iter().any(|&a| a) {
        return Ok(vec![None; rtys.len()]);
    }
    let mut bodies = Vec::new();
    for (mut f, ts) in swept {
        let prim = f.outputs.clone();
        f.outputs = vec![];
        for j in 0..rtys.len() {
            if out_active[j] {
                let mut bb = B { f: &mut f, loc: b.loc.clone() };
                let t = bb.or_zero(ts[j], prim[j]);
                f.outputs.push(t);
            }
        }
        bodies.push(func_body(&f, b.f)?);
    }
    let mut operands = op.operands.clone();
    operands.extend(tangents[1..].iter().zip(&active).filter(|(_, a)| **a).map(|(t, _)| t.unwrap()));
    let tys: Vec<TensorType> = rtys.iter().zip(&out_active).filter(|(_, a)| **a).map(|(t, _)| t.clone()).collect();
    let res = b.f.push_with_regions(OpKind::Control(ControlOp::If { results: tys }), &operands, bodies, b.loc.clone()).map_err(internal)?;
    let mut it = res.into_iter();
    Ok(out_active.iter().map(|&a| if a { it.next() } else { None }).collect())
}

/// VJP of `quabla.if`: an `if` of the branches' VJPs over the captures and the result
/// cotangents; returns the captures' cotangents (the predicate gets none).
pub fn vjp(b: &mut B, op: &Op, cts: &[Option<Value>]) -> Result<Tangents, RuleError> {
    match &op.kind {
        OpKind::Control(ControlOp::If { .. }) => {}
        _ => return Err(RuleError::Unsupported { op: op.kind.name(), rule: "vjp" }),
    }
    let rtys = result_types(op).to_vec();
    let caps = op.operands[1..].to_vec();
    let active: Vec<bool> = rtys.iter().zip(cts).map(|(t, c)| c.is_some() && differentiable(t)).collect();
    let mut swept = Vec::new();
    for g in branches(b, op)? {
        swept.push(vjp_core(&g, &g.name, &active)?);
    }
    let cap_active: Vec<bool> = (0..caps.len()).map(|i| differentiable(b.f.ty(caps[i])) && swept.iter().any(|(_, cs)| cs[i].is_some())).collect();
    let mut out = vec![None; op.operands.len()];
    if !cap_active.iter().any(|&a| a) {
        return Ok(out);
    }
    let mut bodies = Vec::new();
    for (mut f, cs) in swept {
        f.outputs = vec![];
        for i in 0..caps.len() {
            if cap_active[i] {
                let p = f.params[i];
                let mut bb = B { f: &mut f, loc: b.loc.clone() };
                let c = bb.or_zero(cs[i], p);
                f.outputs.push(c);
            }
        }
        bodies.push(func_body(&f, b.f)?);
    }
    let mut operands = op.operands.clone();
    operands.extend(cts.iter().zip(&active).filter(|(_, a)| **a).map(|(c, _)| c.unwrap()));
    let tys: Vec<TensorType> = caps.iter().zip(&cap_active).filter(|(_, a)| **a).map(|(c, _)| b.f.ty(*c).clone()).collect();
    let res = b.f.push_with_regions(OpKind::Control(ControlOp::If { results: tys }), &operands, bodies, b.loc.clone()).map_err(internal)?;
    let mut it = res.into_iter();
    for (i, a) in cap_active.iter().enumerate() {
        if *a {
            out[i + 1] = it.next();
        }
    }
    Ok(out)
}

/// Batching rule of `quabla.if`; batched operands have their batch dim first.
pub fn batch(b: &mut B, op: &Op, xs: &[Value], batched: &[bool], size: i64) -> Result<Vec<(Value, bool)>, RuleError> {
    match &op.kind {
        OpKind::Control(ControlOp::If { .. }) => batch_if(b, op, xs, batched, size),
        OpKind::Control(ControlOp::While {}) => batch_while(b, op, xs, batched, size),
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
    let rtys = result_types(op).to_vec();
    let in_axes: Vec<Option<i64>> = batched[1..].iter().map(|&x| if x { Some(0) } else { None }).collect();
    let mut swept = Vec::new();
    for g in branches(b, op)? {
        swept.push(vmap_core(&g, &g.name, &in_axes, size)?);
    }
    if !batched[0] {
        // Unbatched predicate: one `if` of the batched branches.
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
        let res = b.f.push_with_regions(OpKind::Control(ControlOp::If { results: tys }), xs, bodies, b.loc.clone()).map_err(internal)?;
        return Ok(res.into_iter().zip(out_b).collect());
    }
    // Batched predicate: both branches inlined, results selected per example.
    let mut outs_by_branch = Vec::new();
    for (f, outs) in swept {
        let mut map: HashMap<Value, Value> = f.params.iter().copied().zip(xs[1..].iter().copied()).collect();
        let ops = copy_ops(&f.ops, &f.types, b.f, &mut map)?;
        b.f.ops.extend(ops);
        let vals = outs.into_iter().map(|(v, bt)| map.get(&v).map(|&v| (v, bt)).ok_or_else(|| internal(format!("batched branch yields undefined value %{}", v.0))));
        outs_by_branch.push(vals.collect::<Result<Vec<(Value, bool)>, _>>()?);
    }
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

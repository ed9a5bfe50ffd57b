//! `quabla-autodiff` / `quabla-vmap`: give every transform function (`quabla.transform =
//! "jvp"|"vjp"|"vmap"`, `quabla.of = @f`) its body. Both passes expand every kind, because a
//! transform of a function containing another transform needs the inner one first, whatever
//! its kind (grad of vmap, vmap of grad).
//!
//! Algorithm. Transforms are expanded innermost first: a transform is ready when no function
//! reachable from its target (through calls and transform targets) is itself an unexpanded
//! transform; so `vjp(g)` where `g` calls `vjp(f)` expands `vjp(f)` first, and nesting to any
//! depth (grad of grad, jvp of grad) works. The target is copied and fully inlined, then:
//! * JVP: one forward sweep appends, after the primal ops, each op's tangent computed by its
//!   JVP rule from the operands' tangents (symbolic zeros are `None` and cost nothing);
//! * VJP: one backward sweep over the primal ops accumulates cotangents with each op's VJP
//!   rule (sums where a value has several uses);
//! * vmap: one sweep of batching rules (`vmap.rs`).
//!
//! Only float values carry tangents. Expansions are memoised per (kind, target): a second
//! transform of the same function calls the first. The result is left to
//! `quabla-canonicalize`, which removes the zero arithmetic and duplicated primal work.
use std::collections::{HashMap, HashSet};

use quabla_dialect::{CallOp, Func, Module, OpKind, TransformKind, Value};

pub(crate) mod vmap;

/// Why a transform function could not be expanded.
#[derive(Debug, thiserror::Error)]
pub enum AutodiffError {
    /// Transform functions whose targets reach each other.
    #[error("transform functions form a cycle: {0}")]
    Cycle(String),
    /// A transform's target is not a function of the module.
    #[error("quabla-autodiff: unknown function @{0}")]
    UnknownFunction(String),
    /// The target still calls something after inlining.
    #[error("quabla-autodiff: @{0} still has calls after inlining")]
    CallsAfterInlining(String),
    /// A rule failed (or is missing) for an op of the target.
    #[error("{kind} of @{of}: {source}")]
    Rule { kind: &'static str, of: String, source: rules::RuleError },
}

use crate::rules::{self, differentiable, B};
use crate::simplify::inline::inline;

/// Expands every transform function; errors name the function and the op without a rule.
pub fn autodiff(m: &mut Module) -> Result<(), AutodiffError> {
    let mut done: HashMap<(TransformKind, String), String> = HashMap::new();
    loop {
        let pending: Vec<String> = m.funcs.iter().filter(|f| f.transform.is_some()).map(|f| f.name.clone()).collect();
        if pending.is_empty() {
            // No rule is needed any more: custom-derivative calls become their primal bodies.
            rules::call::expand_custom(m);
            return Ok(());
        }
        let pending_set: HashSet<&str> = pending.iter().map(String::as_str).collect();
        let ready = pending.iter().find(|name| {
            let t = m.func(name).unwrap().transform.clone().unwrap();
            !m.reachable([t.of.as_str()]).iter().any(|r| pending_set.contains(r.as_str()))
        });
        let Some(name) = ready.cloned() else {
            return Err(AutodiffError::Cycle(pending.join(", ")));
        };
        let decl = m.func(&name).unwrap().clone();
        let t = decl.transform.clone().unwrap();
        let body = match done.get(&(t.kind.clone(), t.of.clone())) {
            Some(first) => forward_to(&decl, first),
            None => {
                let target = inlined(m, &t.of)?;
                let f = match &t.kind {
                    TransformKind::Jvp => jvp_func(&target, &name),
                    TransformKind::Vjp => vjp_func(&target, &name),
                    TransformKind::Vmap { in_axes, out_axes, size, axis_name } => vmap::vmap_func(&target, &name, in_axes, out_axes, *size, axis_name.as_ref()),
                }
                .map_err(|source| AutodiffError::Rule { kind: t.kind.name(), of: t.of.clone(), source })?;
                done.insert((t.kind.clone(), t.of.clone()), name.clone());
                f
            }
        };
        let slot = m.func_mut(&name).unwrap();
        let mut body = body;
        body.public = false;
        body.loc = decl.loc.clone();
        *slot = body;
    }
}

/// A copy of `name` with every call inlined.
fn inlined(m: &Module, name: &str) -> Result<Func, AutodiffError> {
    let mut copy = m.clone();
    inline(&mut copy);
    let f = copy.func(name).ok_or_else(|| AutodiffError::UnknownFunction(name.to_string()))?.clone();
    if crate::rewrite::has_call(&f.ops) {
        return Err(AutodiffError::CallsAfterInlining(name.to_string()));
    }
    Ok(f)
}

/// A body that forwards to an already expanded transform with the same signature.
fn forward_to(decl: &Func, first: &str) -> Func {
    let mut f = Func::new(decl.name.clone(), &decl.param_types());
    let ps = f.params.clone();
    f.outputs = f.push(OpKind::Call(CallOp::Call { callee: first.to_string(), results: decl.outputs_decl.clone() }), &ps, decl.loc.clone()).expect("signatures match");
    f
}

fn jvp_func(g: &Func, name: &str) -> Result<Func, rules::RuleError> {
    let active: Vec<bool> = g.params.iter().map(|p| differentiable(g.ty(*p))).collect();
    let (mut f, touts) = jvp_core(g, name, &active)?;
    for (o, t) in g.outputs.iter().zip(touts) {
        if differentiable(g.ty(*o)) {
            let mut b = B { f: &mut f, loc: None };
            let t = b.or_zero(t, *o);
            f.outputs.push(t);
        }
    }
    Ok(f)
}

/// The forward sweep: a copy of `g` named `name` with one extra parameter per `active`
/// parameter (its tangent, in order) and the tangent ops appended; outputs stay `g`'s.
/// Returns it with each output's tangent (`None`: a symbolic zero). Region ops (`quabla.if`)
/// reuse this on their bodies (`rules::control`).
pub(crate) fn jvp_core(g: &Func, name: &str, active: &[bool]) -> Result<(Func, Vec<Option<Value>>), rules::RuleError> {
    let mut f = g.clone();
    f.name = name.to_string();
    let mut tan: HashMap<Value, Value> = HashMap::new();
    for (p, on) in g.params.clone().into_iter().zip(active) {
        if *on && differentiable(g.ty(p)) {
            let t = f.new_value(g.ty(p).clone());
            f.params.push(t);
            tan.insert(p, t);
        }
    }
    for op in g.ops.clone() {
        let ts: Vec<Option<Value>> = op.operands.iter().map(|v| tan.get(v).copied()).collect();
        if ts.iter().all(Option::is_none) {
            continue;
        }
        let mut b = B { f: &mut f, loc: op.loc.clone() };
        let outs = rules::jvp(&mut b, &op, &ts)?;
        for (r, t) in op.results.iter().zip(outs) {
            if let Some(t) = t {
                tan.insert(*r, t);
            }
        }
    }
    let touts = g.outputs.iter().map(|o| tan.get(o).copied()).collect();
    Ok((f, touts))
}

fn vjp_func(g: &Func, name: &str) -> Result<Func, rules::RuleError> {
    let active: Vec<bool> = g.outputs.iter().map(|o| differentiable(g.ty(*o))).collect();
    let (mut f, cts) = vjp_core(g, name, &active)?;
    let mut outs = g.outputs.clone();
    for (p, c) in g.params.iter().zip(cts) {
        if differentiable(g.ty(*p)) {
            let mut b = B { f: &mut f, loc: None };
            let c = b.or_zero(c, *p);
            outs.push(c);
        }
    }
    f.outputs = outs;
    Ok(f)
}

/// The backward sweep: a copy of `g` named `name` with one extra parameter per `active`
/// output (its cotangent, in order) and the cotangent ops appended; outputs stay `g`'s.
/// Each op gets the cotangents of all its results (`None`: a symbolic zero) and is skipped
/// when all are zero. Returns it with each parameter's cotangent (`None` when zero).
pub(crate) fn vjp_core(g: &Func, name: &str, active: &[bool]) -> Result<(Func, Vec<Option<Value>>), rules::RuleError> {
    vjp_core_wrt(g, name, active, None)
}

/// [`vjp_core`] with cotangents wanted for the parameters marked in `wrt` only (all when
/// None): ops that depend on none of them are constants of the sweep and are not transposed
/// (the transpose of a custom JVP rule in its tangents, whose primal computations, a
/// data-dependent `while` among them, need no cotangent).
pub(crate) fn vjp_core_wrt(g: &Func, name: &str, active: &[bool], wrt: Option<&[bool]>) -> Result<(Func, Vec<Option<Value>>), rules::RuleError> {
    let live: Option<std::collections::HashSet<Value>> = wrt.map(|w| {
        let mut dep: std::collections::HashSet<Value> = g.params.iter().zip(w).filter(|(_, on)| **on).map(|(p, _)| *p).collect();
        for op in &g.ops {
            if op.operands.iter().any(|v| dep.contains(v)) {
                dep.extend(op.results.iter().copied());
            }
        }
        dep
    });
    let mut f = g.clone();
    f.name = name.to_string();
    let mut ct: HashMap<Value, Value> = HashMap::new();
    for (o, on) in g.outputs.clone().into_iter().zip(active) {
        if *on && differentiable(g.ty(o)) {
            let c = f.new_value(g.ty(o).clone());
            f.params.push(c);
            let mut b = B { f: &mut f, loc: None };
            let acc = b.add_opt(ct.get(&o).copied(), Some(c)).unwrap();
            ct.insert(o, acc);
        }
    }
    for op in g.ops.iter().rev() {
        let rcts: Vec<Option<Value>> = op.results.iter().map(|r| ct.get(r).copied()).collect();
        if rcts.iter().all(Option::is_none) {
            continue;
        }
        if live.as_ref().is_some_and(|l| !op.operands.iter().any(|v| l.contains(v))) {
            continue;
        }
        let mut b = B { f: &mut f, loc: op.loc.clone() };
        let cts = rules::vjp(&mut b, op, &rcts)?;
        for (v, c) in op.operands.iter().zip(cts) {
            let Some(c) = c else { continue };
            if !differentiable(g.ty(*v)) || live.as_ref().is_some_and(|l| !l.contains(v)) {
                continue;
            }
            let acc = b.add_opt(ct.get(v).copied(), Some(c)).unwrap();
            ct.insert(*v, acc);
        }
    }
    let cts = g.params.iter().map(|p| ct.get(p).copied()).collect();
    Ok((f, cts))
}

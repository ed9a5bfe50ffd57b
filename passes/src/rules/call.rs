//! Rules of the custom-derivative calls (`quabla.custom_jvp_call`, `quabla.custom_vjp_call`,
//! JAX's `custom_jvp` / `custom_vjp`): the op carries its rules as region bodies (primal, then
//! jvp; or primal, fwd, bwd), and these rules use them instead of differentiating the primal:
//! * JVP of `custom_jvp_call`: the jvp body inlined on (operands, their tangents or zeros);
//!   its tangent outputs are the result tangents (its recomputed primal outputs are dead and
//!   removed by DCE).
//! * VJP of `custom_jvp_call`: the transpose of the jvp body in its tangent parameters (the
//!   rule is linear in them, as JAX requires): the backward sweep (`autodiff::vjp_core`) of
//!   the jvp body with only its tangent outputs seeded, inlined with zero tangents; the
//!   cotangents of its tangent parameters are the operand cotangents.
//! * VJP of `custom_vjp_call`: the fwd body inlined on the operands (its residuals), then the
//!   bwd body on (residuals, result cotangents or zeros); its outputs are the operand
//!   cotangents. JVP of `custom_vjp_call` is an explicit gap, as in JAX.
//! * Batching: every body batched with the operands' batchedness (tangents, cotangents and
//!   residuals batched like the values they belong to), results lifted to agree across the
//!   bodies; a bwd cotangent batched for an unbatched operand is summed over the batch.
//!
//! Since the inlined rules are ordinary ops, they differentiate again (second order). Once
//! every transform is expanded, `expand_custom` replaces each custom call by its primal body.
use std::collections::HashMap;

use quabla_dialect::{CallOp, Func, Module, Op, OpKind, TensorType, Value, insert_axis};

use super::control::{body_func, copy_ops, func_body};
use super::{differentiable, lift, RuleError, Tangents, B};
use crate::autodiff::{vjp_core_wrt, vmap::vmap_core};

fn internal(e: impl std::fmt::Display) -> RuleError {
    RuleError::Internal(e.to_string())
}

/// Copies body `g`'s ops into `b.f` with its parameters bound to `args`; returns its outputs.
fn inline_func(b: &mut B, g: &Func, args: &[Value]) -> Result<Vec<Value>, RuleError> {
    let mut map: HashMap<Value, Value> = g.params.iter().copied().zip(args.iter().copied()).collect();
    let ops = copy_ops(&g.ops, &g.types, b.f, &mut map)?;
    b.f.ops.extend(ops);
    g.outputs.iter().map(|v| map.get(v).copied().ok_or_else(|| internal(format!("rule body yields undefined value %{}", v.0)))).collect()
}

fn region(b: &B, op: &Op, k: usize, name: &str) -> Result<Func, RuleError> {
    let r = op.regions.get(k).ok_or_else(|| internal(format!("'quabla.{}' op has no region {k}", op.kind.name())))?;
    body_func(r, &b.f.types, name)
}

/// JVP of a custom-derivative call.
pub fn jvp(b: &mut B, op: &Op, tangents: &[Option<Value>]) -> Result<Tangents, RuleError> {
    match &op.kind {
        OpKind::Call(CallOp::CustomJvp { .. }) => {
            let rule = region(b, op, 1, "jvp")?;
            let mut args = op.operands.clone();
            for (i, x) in op.operands.iter().enumerate() {
                let t = b.or_zero(tangents[i], *x);
                args.push(t);
            }
            let outs = inline_func(b, &rule, &args)?;
            let n = op.results.len();
            Ok((0..n).map(|j| if differentiable(b.f.ty(op.results[j])) { Some(outs[n + j]) } else { None }).collect())
        }
        _ => Err(RuleError::Unsupported { op: op.kind.name(), rule: "jvp" }),
    }
}

/// VJP of a custom-derivative call: the cotangents of its operands from those of its results.
pub fn vjp(b: &mut B, op: &Op, cts: &[Option<Value>]) -> Result<Tangents, RuleError> {
    let n = op.operands.len();
    let nres = op.results.len();
    match &op.kind {
        OpKind::Call(CallOp::CustomJvp { .. }) => {
            let rule = region(b, op, 1, "jvp")?;
            let active: Vec<bool> = (0..2 * nres).map(|j| j >= nres && cts[j - nres].is_some() && differentiable(b.f.ty(op.results[j - nres]))).collect();
            // Cotangents of the tangent parameters only: the rule's primal computations are
            // constants of its transpose (as JAX linearizes a rule before transposing it).
            let wrt: Vec<bool> = (0..2 * n).map(|i| i >= n).collect();
            let (t, pcts) = vjp_core_wrt(&rule, "jvp_transpose", &active, Some(&wrt))?;
            let mut args = op.operands.clone();
            for x in &op.operands {
                let z = b.or_zero(None, *x);
                args.push(z);
            }
            args.extend((0..nres).filter(|&j| active[nres + j]).map(|j| cts[j].unwrap()));
            let mut map: HashMap<Value, Value> = t.params.iter().copied().zip(args).collect();
            let ops = copy_ops(&t.ops, &t.types, b.f, &mut map)?;
            b.f.ops.extend(ops);
            Ok((0..n).map(|i| if differentiable(b.f.ty(op.operands[i])) { pcts[n + i].and_then(|c| map.get(&c).copied()) } else { None }).collect())
        }
        OpKind::Call(CallOp::CustomVjp { .. }) => {
            let (fwd, bwd) = (region(b, op, 1, "fwd")?, region(b, op, 2, "bwd")?);
            let fo = inline_func(b, &fwd, &op.operands)?;
            let mut args: Vec<Value> = fo[nres..].to_vec();
            for (c, &r) in cts.iter().zip(&op.results) {
                let c = b.or_zero(c.filter(|_| differentiable(b.f.ty(r))), r);
                args.push(c);
            }
            let outs = inline_func(b, &bwd, &args)?;
            Ok((0..n).map(|i| if differentiable(b.f.ty(op.operands[i])) { Some(outs[i]) } else { None }).collect())
        }
        _ => Err(RuleError::Unsupported { op: op.kind.name(), rule: "vjp" }),
    }
}

/// `v` with the batchedness `want` (lifting an unbatched value; `sum` sums a batched value
/// over the batch for an unbatched slot, else that is an error).
fn agree(b: &mut B, v: Value, is: bool, want: bool, size: i64, sum: bool) -> Result<Value, RuleError> {
    Ok(match (is, want) {
        (true, true) | (false, false) => v,
        (false, true) => lift(b, v, size),
        (true, false) if sum => b.reduce_sum(v, vec![0]),
        (true, false) => return Err(internal("a batched rule output for an unbatched slot")),
    })
}

/// Batching rule of the custom-derivative calls; batched operands have their batch dim first.
pub fn batch(b: &mut B, op: &Op, xs: &[Value], batched: &[bool], size: i64) -> Result<Vec<(Value, bool)>, RuleError> {
    let axes = |bs: &[bool]| bs.iter().map(|&x| if x { Some(0) } else { None }).collect::<Vec<_>>();
    let nres = op.results.len();
    let loc = b.loc.clone();
    let primal = region(b, op, 0, "primal")?;
    let (mut fp, po) = vmap_core(&primal, "primal_b", &axes(batched), size)?;
    let (kind, bodies, out_b) = match &op.kind {
        OpKind::Call(CallOp::CustomJvp { results }) => {
            let rule = region(b, op, 1, "jvp")?;
            let twice: Vec<bool> = batched.iter().chain(batched).copied().collect();
            let (mut fr, ro) = vmap_core(&rule, "jvp_b", &axes(&twice), size)?;
            let out_b: Vec<bool> = (0..nres).map(|j| po[j].1 || ro[j].1 || ro[nres + j].1).collect();
            fr.outputs = vec![];
            for (j, (v, bt)) in ro.into_iter().enumerate() {
                let mut bb = B { f: &mut fr, loc: loc.clone() };
                let v = agree(&mut bb, v, bt, out_b[j % nres], size, false)?;
                fr.outputs.push(v);
            }
            (CallOp::CustomJvp { results: batched_types(results, &out_b, size) }, vec![fr], out_b)
        }
        OpKind::Call(CallOp::CustomVjp { results }) => {
            let (fwd, bwd) = (region(b, op, 1, "fwd")?, region(b, op, 2, "bwd")?);
            let (mut ff, fo) = vmap_core(&fwd, "fwd_b", &axes(batched), size)?;
            let out_b: Vec<bool> = (0..nres).map(|j| po[j].1 || fo[j].1).collect();
            let res_b: Vec<bool> = fo[nres..].iter().map(|(_, bt)| *bt).collect();
            ff.outputs = vec![];
            for (j, (v, bt)) in fo.into_iter().enumerate() {
                let mut bb = B { f: &mut ff, loc: loc.clone() };
                let v = if j < nres { agree(&mut bb, v, bt, out_b[j], size, false)? } else { v };
                ff.outputs.push(v);
            }
            let bin: Vec<bool> = res_b.iter().chain(&out_b).copied().collect();
            let (mut fb, bo) = vmap_core(&bwd, "bwd_b", &axes(&bin), size)?;
            fb.outputs = vec![];
            for (i, (v, bt)) in bo.into_iter().enumerate() {
                let mut bb = B { f: &mut fb, loc: loc.clone() };
                let v = agree(&mut bb, v, bt, batched[i], size, true)?;
                fb.outputs.push(v);
            }
            (CallOp::CustomVjp { results: batched_types(results, &out_b, size) }, vec![ff, fb], out_b)
        }
        _ => return Err(RuleError::Unsupported { op: op.kind.name(), rule: "batch" }),
    };
    fp.outputs = vec![];
    for (j, (v, bt)) in po.into_iter().enumerate() {
        let mut bb = B { f: &mut fp, loc: loc.clone() };
        let v = agree(&mut bb, v, bt, out_b[j], size, false)?;
        fp.outputs.push(v);
    }
    let mut regions = vec![func_body(&fp, b.f)?];
    for g in &bodies {
        regions.push(func_body(g, b.f)?);
    }
    let res = b.f.push_with_regions(OpKind::Call(kind), xs, regions, loc).map_err(internal)?;
    Ok(res.into_iter().zip(out_b).collect())
}

fn batched_types(results: &[TensorType], out_b: &[bool], size: i64) -> Vec<TensorType> {
    results.iter().zip(out_b).map(|(t, bt)| if *bt { insert_axis(t, Some(0), size) } else { t.clone() }).collect()
}

/// Replaces every custom-derivative call of `m` by its primal body (run by the autodiff pass
/// once no transform is left to expand, so later passes optimise across it).
pub fn expand_custom(m: &mut Module) {
    for f in &mut m.funcs {
        let mut subst = HashMap::new();
        let ops = std::mem::take(&mut f.ops);
        f.ops = expand_ops(ops, &mut subst);
        for v in &mut f.outputs {
            *v = subst.get(v).copied().unwrap_or(*v);
        }
    }
}

fn expand_ops(ops: Vec<Op>, subst: &mut HashMap<Value, Value>) -> Vec<Op> {
    let mut out = Vec::with_capacity(ops.len());
    for mut op in ops {
        for v in &mut op.operands {
            *v = subst.get(v).copied().unwrap_or(*v);
        }
        if matches!(op.kind, OpKind::Call(CallOp::CustomJvp { .. }) | OpKind::Call(CallOp::CustomVjp { .. })) {
            let body = op.regions.swap_remove(0);
            for (p, x) in body.params.iter().zip(&op.operands) {
                subst.insert(*p, *x);
            }
            out.extend(expand_ops(body.ops, subst));
            for (r, y) in op.results.iter().zip(&body.outputs) {
                let y = subst.get(y).copied().unwrap_or(*y);
                subst.insert(*r, y);
            }
            continue;
        }
        for r in &mut op.regions {
            let body_ops = std::mem::take(&mut r.ops);
            r.ops = expand_ops(body_ops, subst);
            for v in &mut r.outputs {
                *v = subst.get(v).copied().unwrap_or(*v);
            }
        }
        out.push(op);
    }
    out
}

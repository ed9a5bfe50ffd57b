//! Rules of the host-callback family. A `host_callback` returns its operand, so its JVP
//! passes the tangent through and its VJP the cotangent; the op itself stays in the primal
//! program (the JVP and VJP sweeps start from a copy of it), so under `grad` the callback sees
//! the primal values and has no tangent. Batching keeps one op on the batched operand and
//! records the vmap in `batched` (1: the operand's leading dim is this vmap's axis, 0: the
//! operand is not mapped); the sweep calls this rule for unbatched operands too, so every op
//! of one callback has one flag per vmap and the host splits the examples (`qb.debug.print`
//! formats each one, as JAX's unrolled batching rule does).
use quabla_dialect::{CallbackOp, Func, Op, OpKind, TensorType, Value};

use super::{RuleError, Tangents, B};

/// The error of differentiating through a pure callback.
const NO_DERIVATIVE: RuleError = RuleError::Unsupported { op: "callback_result", rule: "derivative (a pure_callback has none: give the function one with qb.custom_jvp or qb.custom_vjp)" };

/// The ids of the pure callbacks of `ops` (those with `callback_result` ops), at any depth.
fn pure_ids(ops: &[Op]) -> std::collections::HashSet<i64> {
    let mut ids = std::collections::HashSet::new();
    quabla_dialect::walk_ops(ops, &mut |o| {
        if let OpKind::Callback(CallbackOp::CallbackResult { callback, .. }) = &o.kind {
            ids.insert(*callback);
        }
    });
    ids
}

fn is_pure_delivery(f: &Func, op: &Op) -> bool {
    matches!(&op.kind, OpKind::Callback(CallbackOp::HostCallback { callback, .. }) if pure_ids(&f.ops).contains(callback))
}

pub fn jvp(b: &mut B, op: &Op, t: &[Option<Value>]) -> Result<Tangents, RuleError> {
    match &op.kind {
        // A tangent reaching a pure callback's operand would reach its results: no rule.
        OpKind::Callback(CallbackOp::HostCallback { .. }) if t[0].is_some() && is_pure_delivery(b.f, op) => Err(NO_DERIVATIVE),
        OpKind::Callback(CallbackOp::CallbackResult { .. }) => Ok(vec![]),
        _ => Ok(vec![t[0]]),
    }
}

pub fn vjp(_b: &mut B, op: &Op, ct: Value) -> Result<Tangents, RuleError> {
    match &op.kind {
        OpKind::Callback(CallbackOp::CallbackResult { .. }) => Err(NO_DERIVATIVE),
        _ => Ok(vec![Some(ct)]),
    }
}

pub fn batch(b: &mut B, op: &Op, xs: &[Value], batched: &[bool], size: i64) -> Result<Vec<(Value, bool)>, RuleError> {
    if let OpKind::Callback(CallbackOp::CallbackResult { callback, index, batched: levels, ty }) = &op.kind {
        // Mapped when this vmap mapped an operand of the callback (its deliveries, batched
        // before it, carry the flag first): the host then computes it example by example.
        let mut mapped = false;
        quabla_dialect::walk_ops(&b.f.ops, &mut |o| {
            if let OpKind::Callback(CallbackOp::HostCallback { callback: c, batched: l, .. }) = &o.kind {
                mapped |= c == callback && l.first() == Some(&1);
            }
        });
        let mut levels = levels.clone();
        levels.insert(0, i64::from(mapped));
        let mut shape = if mapped { vec![size] } else { vec![] };
        shape.extend(&ty.shape);
        let kind = OpKind::Callback(CallbackOp::CallbackResult { callback: *callback, index: *index, batched: levels, ty: TensorType::new(ty.dtype, shape) });
        let r = b.f.push1(kind, &[], b.loc.clone()).map_err(|e| RuleError::Batch(e.to_string()))?;
        return Ok(vec![(r, mapped)]);
    }
    let OpKind::Callback(CallbackOp::HostCallback { callback, index, count, batched: levels }) = &op.kind else {
        return Err(RuleError::Internal(format!("'quabla.{}' op is not a host callback", op.kind.name())));
    };
    let mut levels = levels.clone();
    levels.insert(0, i64::from(batched[0]));
    let kind = OpKind::Callback(CallbackOp::HostCallback { callback: *callback, index: *index, count: *count, batched: levels });
    let r = b.f.push1(kind, &xs[..1], b.loc.clone()).map_err(|e| RuleError::Batch(e.to_string()))?;
    Ok(vec![(r, batched[0])])
}

/// Removes the host callbacks of `f` (nested bodies included), each result replaced by its
/// operand. The rules of region ops call it on the derivative bodies they build from a copy
/// of the primal body (a JVP `if`/`case`/`while` beside the primal one, the backward body of
/// a VJP that recomputes the forward values): the primal op keeps the callbacks, so they run
/// once per primal evaluation, as under JAX.
pub fn strip_effects(f: &mut quabla_dialect::Func) {
    let mut alias: std::collections::HashMap<Value, Value> = std::collections::HashMap::new();
    // Pure callbacks stay (their results are values the body needs; running them again is
    // what a pure function allows).
    let keep = pure_ids(&f.ops);
    fn strip(ops: &mut Vec<Op>, alias: &mut std::collections::HashMap<Value, Value>, keep: &std::collections::HashSet<i64>) {
        ops.retain(|o| match &o.kind {
            OpKind::Callback(CallbackOp::HostCallback { callback, .. }) if !keep.contains(callback) => {
                alias.insert(o.results[0], o.operands[0]);
                false
            }
            _ => true,
        });
        for o in ops.iter_mut() {
            for r in &mut o.regions {
                strip(&mut r.ops, alias, keep);
            }
        }
    }
    strip(&mut f.ops, &mut alias, &keep);
    if alias.is_empty() {
        return;
    }
    let get = |alias: &std::collections::HashMap<Value, Value>, mut v: Value| {
        while let Some(&w) = alias.get(&v) {
            v = w;
        }
        v
    };
    f.walk_mut(&mut |o| {
        for v in &mut o.operands {
            *v = get(&alias, *v);
        }
        for r in &mut o.regions {
            r.outputs = r.outputs.iter().map(|v| get(&alias, *v)).collect();
        }
    });
    f.outputs = f.outputs.iter().map(|v| get(&alias, *v)).collect();
}

//! Rules of the host-callback family. A `host_callback` returns its operand, so its JVP
//! passes the tangent through and its VJP the cotangent; the op itself stays in the primal
//! program (the JVP and VJP sweeps start from a copy of it), so under `grad` the callback sees
//! the primal values and has no tangent. Batching keeps one op on the batched operand and
//! records the vmap in `batched` (1: the operand's leading dim is this vmap's axis, 0: the
//! operand is not mapped); the sweep calls this rule for unbatched operands too, so every op
//! of one callback has one flag per vmap and the host splits the examples (`qb.debug.print`
//! formats each one, as JAX's unrolled batching rule does).
use quabla_dialect::{CallbackOp, Op, OpKind, Value};

use super::{RuleError, Tangents, B};

pub fn jvp(_b: &mut B, _op: &Op, t: &[Option<Value>]) -> Result<Tangents, RuleError> {
    Ok(vec![t[0]])
}

pub fn vjp(_b: &mut B, _op: &Op, ct: Value) -> Result<Tangents, RuleError> {
    Ok(vec![Some(ct)])
}

pub fn batch(b: &mut B, op: &Op, xs: &[Value], batched: &[bool], _size: i64) -> Result<Vec<(Value, bool)>, RuleError> {
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
    fn strip(ops: &mut Vec<Op>, alias: &mut std::collections::HashMap<Value, Value>) {
        ops.retain(|o| {
            if o.kind.has_effect() {
                alias.insert(o.results[0], o.operands[0]);
                false
            } else {
                true
            }
        });
        for o in ops.iter_mut() {
            for r in &mut o.regions {
                strip(&mut r.ops, alias);
            }
        }
    }
    strip(&mut f.ops, &mut alias);
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

//! `quabla-cse`: common subexpression elimination. Two ops with the same kind (attributes
//! included, constants compared by value), the same operands and the same regions compute the
//! same values; the later one is replaced by the earlier. Calls are pure too and are merged;
//! ops with an effect (`host_callback`) never are.
//! Each region body is a scope of its own (bodies are isolated from above), simplified with
//! the same rule before its op is compared.
use std::collections::HashMap;

use quabla_dialect::{Body, Module, Op, OpKind, Value};

use crate::rewrite::Subst;

/// Runs CSE on every function; returns true when an op was merged.
pub fn cse(m: &mut Module) -> bool {
    let mut changed = false;
    for f in &mut m.funcs {
        let mut subst = Subst::new(f);
        let ops = std::mem::take(&mut f.ops);
        f.ops = cse_block(&mut subst, ops, &mut changed);
        subst.apply_outputs(f);
    }
    changed
}

fn cse_block(subst: &mut Subst, ops: Vec<Op>, changed: &mut bool) -> Vec<Op> {
    let mut seen: HashMap<(OpKind, Vec<Value>, Vec<Body>), Vec<Value>> = HashMap::new();
    let mut out = Vec::with_capacity(ops.len());
    for mut op in ops {
        subst.apply(&mut op);
        for r in &mut op.regions {
            let body_ops = std::mem::take(&mut r.ops);
            r.ops = cse_block(subst, body_ops, changed);
            r.outputs = r.outputs.iter().map(|v| subst.get(*v)).collect();
        }
        // Each host callback runs once per op: two of them are never one.
        if op.kind.has_effect() {
            out.push(op);
            continue;
        }
        let key = (op.kind.clone(), op.operands.clone(), op.regions.clone());
        if let Some(prev) = seen.get(&key) {
            for (r, p) in op.results.iter().zip(prev) {
                subst.set(*r, *p);
            }
            *changed = true;
            continue;
        }
        seen.insert(key, op.results.clone());
        out.push(op);
    }
    out
}

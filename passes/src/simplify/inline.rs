//! `quabla-inline`: replaces every `quabla.call` by the callee's body, callees first, so
//! the result has no calls (calls inside regions included). Callee values are renumbered into
//! the caller (region bodies of the callee too); locations are kept. Unreachable private
//! functions are left for `quabla-dce`.
use std::collections::HashMap;

use quabla_dialect::{CallOp, Func, Module, Op, OpKind, Value};

use crate::rewrite::{clone_ops_into, has_call, Subst};

/// Inlines all calls; returns true when a call was inlined.
pub fn inline(m: &mut Module) -> bool {
    // Module::verify rejects recursion, so repeated passes over the functions terminate:
    // each round inlines the calls whose callee has no calls left.
    let mut changed = false;
    loop {
        let flat: HashMap<String, Func> = m.funcs.iter().filter(|f| f.transform.is_none() && !has_call(&f.ops)).map(|f| (f.name.clone(), f.clone())).collect();
        let mut progress = false;
        for f in &mut m.funcs {
            let mut calls_flat = false;
            f.walk(&mut |o| calls_flat |= matches!(&o.kind, OpKind::Call(CallOp::Call { callee, .. }) if flat.contains_key(callee)));
            if calls_flat {
                let mut subst = Subst::new(f);
                let ops = std::mem::take(&mut f.ops);
                f.ops = inline_block(f, &mut subst, ops, &flat);
                subst.apply_outputs(f);
                progress = true;
            }
        }
        if !progress {
            return changed;
        }
        changed = true;
    }
}

fn inline_block(f: &mut Func, subst: &mut Subst, ops: Vec<Op>, flat: &HashMap<String, Func>) -> Vec<Op> {
    let mut out = Vec::with_capacity(ops.len());
    for mut op in ops {
        subst.apply(&mut op);
        for r in &mut op.regions {
            let body_ops = std::mem::take(&mut r.ops);
            r.ops = inline_block(f, subst, body_ops, flat);
            r.outputs = r.outputs.iter().map(|v| subst.get(*v)).collect();
        }
        let callee = match &op.kind {
            OpKind::Call(CallOp::Call { callee, .. }) => flat.get(callee),
            _ => None,
        };
        let Some(g) = callee else {
            out.push(op);
            continue;
        };
        let mut map: HashMap<Value, Value> = g.params.iter().copied().zip(op.operands.iter().copied()).collect();
        clone_ops_into(f, g, &g.ops, &mut map, &op.loc, &mut out);
        for (r, o) in op.results.iter().zip(&g.outputs) {
            subst.set(*r, map[o]);
        }
    }
    out
}

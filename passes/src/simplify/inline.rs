//! `quabla-inline`: replaces every `quabla.call` by the callee's body, callees first, so
//! the result has no calls. Callee values are renumbered into the caller; locations are
//! kept. Unreachable private functions are left for `quabla-dce`.
use std::collections::HashMap;

use quabla_dialect::{Func, Module, Op, OpKind, Value};

use crate::rewrite::Subst;

/// Inlines all calls; returns true when a call was inlined.
pub fn inline(m: &mut Module) -> bool {
    // Module::verify rejects recursion, so repeated passes over the functions terminate:
    // each round inlines the calls whose callee has no calls left.
    let mut changed = false;
    loop {
        let flat: HashMap<String, Func> = m
            .funcs
            .iter()
            .filter(|f| f.transform.is_none() && !f.ops.iter().any(|o| matches!(o.kind, OpKind::Call { .. })))
            .map(|f| (f.name.clone(), f.clone()))
            .collect();
        let mut progress = false;
        for f in &mut m.funcs {
            if f.ops.iter().any(|o| matches!(&o.kind, OpKind::Call { callee, .. } if flat.contains_key(callee))) {
                inline_into(f, &flat);
                progress = true;
            }
        }
        if !progress {
            return changed;
        }
        changed = true;
    }
}

fn inline_into(f: &mut Func, flat: &HashMap<String, Func>) {
    let mut subst = Subst::new(f);
    let ops = std::mem::take(&mut f.ops);
    for mut op in ops {
        subst.apply(&mut op);
        let callee = match &op.kind {
            OpKind::Call { callee, .. } => flat.get(callee),
            _ => None,
        };
        let Some(g) = callee else {
            f.ops.push(op);
            continue;
        };
        let mut map: HashMap<Value, Value> = g.params.iter().copied().zip(op.operands.iter().copied()).collect();
        for gop in &g.ops {
            let results: Vec<Value> = gop.results.iter().map(|r| f.new_value(g.ty(*r).clone())).collect();
            for (a, b) in gop.results.iter().zip(&results) {
                map.insert(*a, *b);
            }
            f.ops.push(Op { kind: gop.kind.clone(), operands: gop.operands.iter().map(|v| map[v]).collect(), results, loc: gop.loc.clone().or(op.loc.clone()) });
        }
        for (r, o) in op.results.iter().zip(&g.outputs) {
            subst.set(*r, map[o]);
        }
    }
    subst.apply_outputs(f);
}

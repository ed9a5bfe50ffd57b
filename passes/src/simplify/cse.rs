//! `quabla-cse`: common subexpression elimination. Two ops with the same kind (attributes
//! included, constants compared by value) and the same operands compute the same values;
//! the later one is replaced by the earlier. Calls are pure too and are merged.
use std::collections::HashMap;

use quabla_dialect::{Module, OpKind, Value};

use crate::rewrite::Subst;

/// Runs CSE on every function; returns true when an op was merged.
pub fn cse(m: &mut Module) -> bool {
    let mut changed = false;
    for f in &mut m.funcs {
        let mut subst = Subst::new(f);
        let mut seen: HashMap<(OpKind, Vec<Value>), Vec<Value>> = HashMap::new();
        let ops = std::mem::take(&mut f.ops);
        for mut op in ops {
            subst.apply(&mut op);
            let key = (op.kind.clone(), op.operands.clone());
            if let Some(prev) = seen.get(&key) {
                for (r, p) in op.results.iter().zip(prev) {
                    subst.set(*r, *p);
                }
                changed = true;
                continue;
            }
            seen.insert(key, op.results.clone());
            f.ops.push(op);
        }
        subst.apply_outputs(f);
    }
    changed
}

//! `quabla-dce`: removes ops none of whose results are used (quabla ops have no side
//! effects). `quabla-symbol-dce`: removes private functions that no public function reaches
//! through calls or transform targets (as upstream `symbol-dce`).
//!
//! Algorithm: a backward sweep per function keeps an op when one of its results is live,
//! marking its operands live; symbol DCE walks the call graph from the public functions.

use quabla_dialect::{Module, Op, Value};

/// Runs DCE on ops; returns true when something was removed.
pub fn dce(m: &mut Module) -> bool {
    let mut changed = false;
    for f in &mut m.funcs {
        let n = f.types.len();
        let outputs = f.outputs.clone();
        changed |= dce_block(&mut f.ops, &outputs, n);
    }
    changed
}

/// DCE of one block whose `outputs` are live; the bodies of kept ops are swept first (their
/// own outputs live), then the op's operands become live.
fn dce_block(ops: &mut Vec<Op>, outputs: &[Value], n: usize) -> bool {
    let mut changed = false;
    let mut live = vec![false; n];
    for v in outputs {
        live[v.0 as usize] = true;
    }
    let mut keep = vec![false; ops.len()];
    for (i, op) in ops.iter_mut().enumerate().rev() {
        if op.results.iter().any(|r| live[r.0 as usize]) {
            keep[i] = true;
            for r in &mut op.regions {
                let outs = r.outputs.clone();
                changed |= dce_block(&mut r.ops, &outs, n);
            }
            for v in &op.operands {
                live[v.0 as usize] = true;
            }
        }
    }
    let before = ops.len();
    let mut it = keep.iter();
    ops.retain(|_| *it.next().unwrap());
    changed | (ops.len() != before)
}

/// Removes unreachable private functions; returns true when one was removed.
pub fn symbol_dce(m: &mut Module) -> bool {
    let publics: Vec<String> = m.funcs.iter().filter(|f| f.public).map(|f| f.name.clone()).collect();
    let reached = m.reachable(publics.iter().map(String::as_str));
    let before = m.funcs.len();
    m.funcs.retain(|f| reached.contains(&f.name));
    m.funcs.len() != before
}

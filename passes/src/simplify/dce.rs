//! `quabla-dce`: removes ops none of whose results are used (quabla ops have no side
//! effects). `quabla-symbol-dce`: removes private functions that no public function reaches
//! through calls or transform targets (as upstream `symbol-dce`).
//!
//! Algorithm: a backward sweep per function keeps an op when one of its results is live,
//! marking its operands live; symbol DCE walks the call graph from the public functions.

use quabla_dialect::Module;

/// Runs DCE on ops; returns true when something was removed.
pub fn dce(m: &mut Module) -> bool {
    let mut changed = false;
    for f in &mut m.funcs {
        let mut live = vec![false; f.types.len()];
        for v in &f.outputs {
            live[v.0 as usize] = true;
        }
        let mut keep = vec![false; f.ops.len()];
        for (i, op) in f.ops.iter().enumerate().rev() {
            if op.results.iter().any(|r| live[r.0 as usize]) {
                keep[i] = true;
                for v in &op.operands {
                    live[v.0 as usize] = true;
                }
            }
        }
        let before = f.ops.len();
        let mut it = keep.iter();
        f.ops.retain(|_| *it.next().unwrap());
        changed |= f.ops.len() != before;
    }
    changed
}

/// Removes unreachable private functions; returns true when one was removed.
pub fn symbol_dce(m: &mut Module) -> bool {
    let publics: Vec<String> = m.funcs.iter().filter(|f| f.public).map(|f| f.name.clone()).collect();
    let reached = m.reachable(publics.iter().map(String::as_str));
    let before = m.funcs.len();
    m.funcs.retain(|f| reached.contains(&f.name));
    m.funcs.len() != before
}

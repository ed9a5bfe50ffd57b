//! `quabla-dce`: removes ops none of whose results are used (the only quabla ops with an
//! effect, host callbacks, are always kept, and so is an op whose regions hold one), and the
//! dead carries of `quabla.while`. `quabla-symbol-dce`: removes private functions that no
//! public function reaches through calls or transform targets (as upstream `symbol-dce`).
//!
//! Algorithm: a backward sweep per function keeps an op when one of its results is live,
//! marking its operands live; symbol DCE walks the call graph from the public functions.
//!
//! Loops. Before the sweep, uses of a `while` result whose carry the body passes through
//! unchanged (a loop-invariant carry: its result is its initial value) are redirected to the
//! initial value. When the sweep keeps a `while`, its live carries are the closure of: the
//! carries whose result is used, the carries the cond reads, and the carries the body reads
//! to compute a live carry's next value; the others (a residual or cotangent nobody reads, an
//! invariant carry left unread) are removed from the operands, results, both regions'
//! parameters and the body's outputs.

use quabla_dialect::{Body, ControlOp, Module, Op, OpKind, Value};

/// Runs DCE on ops; returns true when something was removed.
pub fn dce(m: &mut Module) -> bool {
    let mut changed = false;
    for f in &mut m.funcs {
        let n = f.types.len();
        changed |= dce_block(&mut f.ops, &mut f.outputs, n);
    }
    changed
}

fn is_while(op: &Op) -> bool {
    matches!(op.kind, OpKind::Control(ControlOp::While {})) && op.regions.len() == 2
}

/// Redirects the uses, by later ops of the block and its outputs, of the results of loop-
/// invariant carries to their initial values; returns true when a use changed.
fn forward_invariant_results(ops: &mut [Op], outputs: &mut [Value]) -> bool {
    let mut changed = false;
    for k in 0..ops.len() {
        if !is_while(&ops[k]) {
            continue;
        }
        let body = &ops[k].regions[1];
        let subst: Vec<(Value, Value)> = (0..ops[k].operands.len())
            .filter(|&i| body.params.get(i).is_some_and(|p| body.outputs.get(i) == Some(p)))
            .map(|i| (ops[k].results[i], ops[k].operands[i]))
            .collect();
        if subst.is_empty() {
            continue;
        }
        let mut replace = |v: &mut Value| {
            if let Some(&(_, to)) = subst.iter().find(|(from, _)| from == v) {
                *v = to;
                changed = true;
            }
        };
        for op in &mut ops[k + 1..] {
            op.operands.iter_mut().for_each(&mut replace);
        }
        outputs.iter_mut().for_each(&mut replace);
    }
    changed
}

/// Which parameters of `b` the ops computing its outputs selected by `want` read.
fn params_read(b: &Body, want: &[bool], n: usize) -> Vec<bool> {
    let mut live = vec![false; n];
    for (v, w) in b.outputs.iter().zip(want) {
        if *w {
            live[v.0 as usize] = true;
        }
    }
    for op in b.ops.iter().rev() {
        // An op with an effect (a host callback, or a region holding one) reads its operands
        // whether or not its results are used.
        if op.kind.has_effect() || has_effect_inside(op) || op.results.iter().any(|r| live[r.0 as usize]) {
            for v in &op.operands {
                live[v.0 as usize] = true;
            }
        }
    }
    b.params.iter().map(|p| live[p.0 as usize]).collect()
}

/// Removes the dead carries of a kept `while` (see the module doc); `live` marks the values
/// used after it. Returns true when a carry was removed.
fn prune_carries(op: &mut Op, live: &[bool], n: usize) -> bool {
    let k = op.operands.len();
    let (cond, body) = (&op.regions[0], &op.regions[1]);
    if cond.params.len() != k || body.params.len() != k || body.outputs.len() != k || op.results.len() != k {
        return false;
    }
    let all = vec![true; cond.outputs.len()];
    let by_cond = params_read(cond, &all, n);
    let mut need: Vec<bool> = (0..k).map(|i| live[op.results[i].0 as usize] || by_cond[i]).collect();
    loop {
        let by_body = params_read(body, &need, n);
        let next: Vec<bool> = need.iter().zip(&by_body).map(|(a, b)| *a || *b).collect();
        if next == need {
            break;
        }
        need = next;
    }
    if need.iter().all(|&x| x) {
        return false;
    }
    let keep = |xs: &mut Vec<Value>| {
        let mut it = need.iter();
        xs.retain(|_| *it.next().unwrap());
    };
    keep(&mut op.operands);
    keep(&mut op.results);
    for r in &mut op.regions {
        keep(&mut r.params);
    }
    keep(&mut op.regions[1].outputs);
    true
}

/// DCE of one block whose `outputs` are live; the bodies of kept ops are swept first (their
/// own outputs live), then the op's operands become live.
fn dce_block(ops: &mut Vec<Op>, outputs: &mut [Value], n: usize) -> bool {
    let mut changed = forward_invariant_results(ops, outputs);
    let mut live = vec![false; n];
    for v in outputs.iter() {
        live[v.0 as usize] = true;
    }
    let mut keep = vec![false; ops.len()];
    for (i, op) in ops.iter_mut().enumerate().rev() {
        if op.kind.has_effect() || op.results.iter().any(|r| live[r.0 as usize]) || has_effect_inside(op) {
            keep[i] = true;
            if is_while(op) {
                changed |= prune_carries(op, &live, n);
            }
            for r in &mut op.regions {
                let mut outs = r.outputs.clone();
                changed |= dce_block(&mut r.ops, &mut outs, n);
                r.outputs = outs;
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

/// True when a region of `op` holds an op with an effect.
fn has_effect_inside(op: &Op) -> bool {
    let mut found = false;
    for r in &op.regions {
        quabla_dialect::walk_ops(&r.ops, &mut |o| found |= o.kind.has_effect());
    }
    found
}

/// Removes unreachable private functions; returns true when one was removed.
pub fn symbol_dce(m: &mut Module) -> bool {
    let publics: Vec<String> = m.funcs.iter().filter(|f| f.public).map(|f| f.name.clone()).collect();
    let reached = m.reachable(publics.iter().map(String::as_str));
    let before = m.funcs.len();
    m.funcs.retain(|f| reached.contains(&f.name));
    m.funcs.len() != before
}

//! `quabla-outline{max-ops=N}`: splits every function longer than `N` ops (nested ops
//! included) into consecutive chunks of at most `N` ops, each outlined as a private function
//! called in sequence. Values that cross a chunk boundary become the chunk's parameters and
//! results. A chunk is cut only between top-level ops (region bodies are isolated from above,
//! so the top-level operands are all a chunk needs from outside); an op heavier than `N` is a
//! chunk of its own.
//!
//! Why: upstream MLIR passes (empty-tensor elimination, one-shot bufferization) and LLVM's
//! optimizer and code generator grow faster than linearly in the size of one function or block;
//! the CPU executor outlines long programs so that compile time stays linear in program length
//! (bench/compile_time.py). The pass is linear: one scan for the cut points, one for the values
//! that cross them, one copy of the ops.
use std::collections::{HashMap, HashSet};

use quabla_dialect::{CallOp, Func, Module, Op, OpKind, Value};

use crate::rewrite::clone_ops_into;

/// The default `max-ops` of `quabla-outline` (the CPU executor's chunk size).
pub const DEFAULT_MAX_OPS: usize = 64;

/// The number of ops of `op`, its nested regions' included.
fn weight(op: &Op) -> usize {
    let mut n = 0;
    quabla_dialect::walk_ops(std::slice::from_ref(op), &mut |_| n += 1);
    n
}

/// The number of ops of `f`, nested regions included (the size [`outline`] bounds).
pub fn func_weight(f: &Func) -> usize {
    f.ops.iter().map(weight).sum()
}

/// Outlines every function of `m` longer than `max_ops` into chunks of at most `max_ops`
/// ops (see the module docs). Returns the names of the new functions, in order.
pub fn outline(m: &mut Module, max_ops: usize) -> Vec<String> {
    let max_ops = max_ops.max(1);
    let mut taken: HashSet<String> = m.funcs.iter().map(|f| f.name.clone()).collect();
    let mut chunks = Vec::new();
    for f in &mut m.funcs {
        if f.transform.is_none() {
            chunks.extend(outline_func(f, max_ops, &mut taken));
        }
    }
    let names = chunks.iter().map(|g: &Func| g.name.clone()).collect();
    m.funcs.extend(chunks);
    names
}

/// The cut points of `ops`: consecutive ranges of at most `max_ops` ops (a heavier op alone).
fn segments(ops: &[Op], max_ops: usize) -> Vec<std::ops::Range<usize>> {
    let (mut segs, mut start, mut acc) = (Vec::new(), 0, 0);
    for (i, op) in ops.iter().enumerate() {
        let w = weight(op);
        if acc > 0 && acc + w > max_ops {
            segs.push(start..i);
            (start, acc) = (i, 0);
        }
        acc += w;
    }
    if start < ops.len() {
        segs.push(start..ops.len());
    }
    segs
}

/// Splits `f` into chunks (returned) when it is longer than `max_ops`; `f` keeps one call
/// per chunk.
fn outline_func(f: &mut Func, max_ops: usize, taken: &mut HashSet<String>) -> Vec<Func> {
    if func_weight(f) <= max_ops {
        return vec![];
    }
    let segs = segments(&f.ops, max_ops);
    if segs.len() < 2 {
        return vec![];
    }
    // The chunk defining each top-level value (parameters: none) and the values used outside it.
    const OUTSIDE: usize = usize::MAX;
    let mut def = vec![OUTSIDE; f.types.len()];
    for (s, r) in segs.iter().enumerate() {
        for op in &f.ops[r.clone()] {
            for v in &op.results {
                def[v.0 as usize] = s;
            }
        }
    }
    let mut live_out = vec![false; f.types.len()];
    for (s, r) in segs.iter().enumerate() {
        for op in &f.ops[r.clone()] {
            for v in &op.operands {
                let d = def[v.0 as usize];
                if d != OUTSIDE && d != s {
                    live_out[v.0 as usize] = true;
                }
            }
        }
    }
    for v in &f.outputs {
        if def[v.0 as usize] != OUTSIDE {
            live_out[v.0 as usize] = true;
        }
    }
    let ops = std::mem::take(&mut f.ops);
    let mut calls = Vec::with_capacity(segs.len());
    let mut chunks = Vec::with_capacity(segs.len());
    for (s, r) in segs.into_iter().enumerate() {
        let seg = &ops[r];
        let mut seen: HashSet<Value> = HashSet::new();
        let inputs: Vec<Value> = seg.iter().flat_map(|o| o.operands.iter().copied()).filter(|v| def[v.0 as usize] != s && seen.insert(*v)).collect();
        let outputs: Vec<Value> = seg.iter().flat_map(|o| o.results.iter().copied()).filter(|v| live_out[v.0 as usize]).collect();
        let base = format!("{}_chunk{s}", f.name);
        let name = (0..).map(|i| if i == 0 { base.clone() } else { format!("{base}_{i}") }).find(|n| !taken.contains(n)).unwrap_or(base);
        taken.insert(name.clone());
        let in_types: Vec<_> = inputs.iter().map(|v| f.ty(*v).clone()).collect();
        let mut g = Func::new(name.clone(), &in_types);
        g.public = false;
        g.loc = f.loc.clone();
        let mut map: HashMap<Value, Value> = inputs.iter().copied().zip(g.params.iter().copied()).collect();
        let mut body = Vec::with_capacity(seg.len());
        clone_ops_into(&mut g, f, seg, &mut map, &None, &mut body);
        g.ops = body;
        g.outputs = outputs.iter().map(|v| map[v]).collect();
        let results = outputs.iter().map(|v| f.ty(*v).clone()).collect();
        calls.push(Op::new(OpKind::Call(CallOp::Call { callee: name, results }), inputs, outputs, seg.first().and_then(|o| o.loc.clone())));
        chunks.push(g);
    }
    f.ops = calls;
    chunks
}

#[cfg(test)]
mod tests {
    use quabla_dialect::{BinaryOp, DType, ElementwiseOp, TensorType, UnaryOp};
    use quabla_interp::Buffer;

    use super::*;

    /// `main(x, y)`: a chain of `n` ops alternating sin(x) and x * y, returning the chain's
    /// end and an early value (so values cross several chunk boundaries).
    fn chain(n: usize) -> Module {
        let t = TensorType::new(DType::F64, [3]);
        let mut f = Func::new("main", &[t.clone(), t]);
        let (mut x, y) = (f.params[0], f.params[1]);
        let mut early = x;
        for i in 0..n {
            x = if i % 2 == 0 {
                f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Sin }), &[x], None).unwrap()
            } else {
                f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), &[x, y], None).unwrap()
            };
            if i == 2 {
                early = x;
            }
        }
        f.outputs = vec![x, early, y];
        Module { funcs: vec![f] }
    }

    #[test]
    fn chunks_are_bounded_and_compute_the_same() {
        let m = chain(25);
        let mut o = m.clone();
        let names = outline(&mut o, 4);
        assert_eq!(names.len(), 7);
        o.verify().unwrap();
        for g in &o.funcs {
            assert!(func_weight(g) <= 7, "{}", o.to_mlir());
        }
        assert_eq!(o.funcs[0].ops.len(), 7);
        let t = TensorType::new(DType::F64, [3]);
        let x = Buffer::from_f64s(t.clone(), &[0.5, -1.0, 2.0]).unwrap();
        let y = Buffer::from_f64s(t, &[1.5, 0.25, -3.0]).unwrap();
        let want = quabla_interp::run_func(&m, "main", &[x.clone(), y.clone()]).unwrap();
        let got = quabla_interp::run_func(&o, "main", &[x, y]).unwrap();
        let bits = |bs: &[Buffer]| bs.iter().map(|b| b.to_f64_vec()).collect::<Vec<_>>();
        assert_eq!(bits(&got), bits(&want));
    }

    #[test]
    fn short_functions_are_left_alone() {
        let m = chain(8);
        let mut o = m.clone();
        assert!(outline(&mut o, 8).is_empty());
        assert_eq!(o, m);
    }
}

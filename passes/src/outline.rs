//! `quabla-outline{max-ops=N}`: splits every function longer than `N` ops (nested ops
//! included) into consecutive chunks of at most `N` ops, each outlined as a private function
//! called in sequence. Values that cross a chunk boundary become the chunk's parameters and
//! results. A chunk is cut only between top-level ops (region bodies are isolated from above,
//! so the top-level operands are all a chunk needs from outside); an op heavier than `N` is a
//! chunk of its own.
//!
//! Repeated stretches (the blocks of a deep network, forward and backward) are cut alike:
//! where the ops from a cut point on (same kinds, attributes and types) occur again later, the
//! chunk is that repeated stretch and a cut is planned at each later occurrence
//! ([`segments`]). Chunks that come out identical (same ops, wiring and types) are one
//! function called several times, so code generation compiles each distinct chunk once.
//!
//! Why: upstream MLIR passes (empty-tensor elimination, one-shot bufferization) and LLVM's
//! optimizer and code generator grow faster than linearly in the size of one function or block;
//! the CPU executor outlines long programs so that compile time stays linear in program length
//! (bench/compile_time.py). The pass is linear: one scan for the cut points, one for the values
//! that cross them, one copy of the ops.
use std::collections::{HashMap, HashSet};

use quabla_dialect::{BinaryOp, CallOp, ConstantOp, Func, Module, Op, OpKind, Value};

use crate::rewrite::clone_ops_into;

/// The default `max-ops` of `quabla-outline` (the CPU executor's chunk size).
pub const DEFAULT_MAX_OPS: usize = 64;

/// Weight units of one op ([`weight`]): a sixteenth of an op's for a cheap elementwise op
/// ([`cheap`]) or a broadcast whose result has at least [`LARGE_ELEMENTS`] elements, and for a
/// slice (a view); a quarter for the other elementwise ops of such results and for a
/// concatenation (its parts written in place: quabla-fold's `split_pads` makes many of both,
/// and a cut among them copied the parts made before it); a whole op's for the rest.
const UNIT: usize = 16;

/// Results of at least this many elements make an elementwise op or a broadcast a quarter of
/// an op's weight or less ([`op_units`]). A chunk boundary inside a chain of such ops splits the loop they fuse
/// into and passes every value that crosses it through memory: threefry's 1e6 counters (119
/// elementwise ops, 22 broadcasts) were 7 chunks of 64 ops, 5.6 ms a call and 200 ms for the
/// first, against 4.7 ms and 150 ms as one function (random.normal, 2026-12-04). The fused
/// loop's code grows linearly in the chain; the superlinear costs the chunks bound are those
/// of many loops and buffers in one function. Small arrays (a transformer's activations)
/// keep whole weights: there a boundary costs little and chunk size was tuned for compile
/// time (bench/gpt_compile.py).
pub const LARGE_ELEMENTS: i64 = 1 << 16;

/// The weight of `op` (of `f`), its nested regions' ops included, in units of
/// [`UNIT`] per op.
fn weight(f: &Func, op: &Op) -> usize {
    let mut n = 0;
    quabla_dialect::walk_ops(std::slice::from_ref(op), &mut |o| n += op_units(f, o));
    n
}

fn op_units(f: &Func, o: &Op) -> usize {
    // A slice is a view (no loop, no buffer); a concatenation writes its parts in place.
    match o.kind {
        OpKind::Slicing(quabla_dialect::SlicingOp::Slice { .. }) => return 1,
        OpKind::Slicing(quabla_dialect::SlicingOp::Concatenate { .. }) => return UNIT / 4,
        _ => {}
    }
    let fusible = matches!(o.kind, OpKind::Elementwise(_) | OpKind::Layout(quabla_dialect::LayoutOp::BroadcastInDim { .. }));
    let large = o.results.first().is_some_and(|v| quabla_dialect::size::saturating_product(f.ty(*v).shape.iter().copied()) >= LARGE_ELEMENTS);
    match (fusible && large, cheap(o)) {
        (true, true) => 1,
        (true, false) => UNIT / 4,
        (false, _) => UNIT,
    }
}

/// An op whose scalar code is one or two instructions (integer and bitwise arithmetic,
/// comparisons, selects, conversions, min / max, negation, a broadcast): a chain of hundreds
/// of them is a short loop body. Threefry's rounds are such a chain: randint of 1e6 int32
/// was two chunks at a quarter's weight, the first computing several multi-output loops
/// through memory for the values the second read, 4.9 ms a call against 1.3 ms as one chunk.
fn cheap(o: &Op) -> bool {
    use quabla_dialect::{ElementwiseOp as E, LayoutOp, UnaryOp as U};
    match &o.kind {
        OpKind::Elementwise(E::Binary { op }) => !matches!(op, BinaryOp::Div | BinaryOp::Rem | BinaryOp::Pow | BinaryOp::Atan2 | BinaryOp::Logaddexp),
        OpKind::Elementwise(E::Unary { op }) => matches!(op, U::Neg | U::Abs | U::Sign | U::Not | U::Floor | U::Ceil | U::Round | U::IsFinite | U::PopulationCount),
        OpKind::Elementwise(E::Compare { .. } | E::Select {} | E::Convert { .. }) => true,
        OpKind::Elementwise(E::Powi { .. }) => false,
        OpKind::Layout(LayoutOp::BroadcastInDim { .. }) => true,
        _ => false,
    }
}

/// The weight of `f` in ops ([`weight`]'s units over [`UNIT`], rounded up): the size
/// [`outline`] bounds.
pub fn func_weight(f: &Func) -> usize {
    f.ops.iter().map(|o| weight(f, o)).sum::<usize>().div_ceil(UNIT)
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
    let chunks = dedupe(m, chunks);
    let names = chunks.iter().map(|g: &Func| g.name.clone()).collect();
    m.funcs.extend(chunks);
    names
}

/// `g` without what does not change its code: its name and source locations.
fn normalized(g: &Func) -> Func {
    let mut n = g.clone();
    n.name.clear();
    n.loc = None;
    quabla_dialect::walk_ops_mut(&mut n.ops, &mut |o| o.loc = None);
    n
}

/// Keeps one of each set of identical chunks (same ops, wiring and types: [`normalized`]) and
/// points the calls of the others at it.
fn dedupe(m: &mut Module, chunks: Vec<Func>) -> Vec<Func> {
    let mut kept: Vec<(Func, Func)> = Vec::new();
    let mut rename: HashMap<String, String> = HashMap::new();
    for g in chunks {
        let n = normalized(&g);
        match kept.iter().find(|(_, k)| k.ops.len() == n.ops.len() && k.types == n.types && *k == n) {
            Some((first, _)) => {
                rename.insert(g.name, first.name.clone());
            }
            None => kept.push((g, n)),
        }
    }
    if !rename.is_empty() {
        for f in &mut m.funcs {
            for op in &mut f.ops {
                if let OpKind::Call(CallOp::Call { callee, .. }) = &mut op.kind {
                    if let Some(to) = rename.get(callee.as_str()) {
                        *callee = to.clone();
                    }
                }
            }
        }
    }
    kept.into_iter().map(|(g, _)| g).collect()
}

/// Constants of at most this many bytes (or splats) are copied into the chunks that use them.
const SMALL_CONSTANT_BYTES: usize = 256;

/// Broadcasts of values of at most this many elements are made again in each chunk that uses
/// them instead of passed between chunks ([`outline_func`]).
const SMALL_BROADCAST_SOURCE: i64 = 16;
/// Shortest repeated stretch worth aligning the cut points for.
const MIN_REPEAT: usize = 8;
/// Earlier occurrences of a 4-op pattern compared against when looking for repeats (bounds
/// the search on very long programs).
const MAX_CANDIDATES: usize = 32;

/// The signatures of up to four consecutive ops (the key of the repeat search).
type Pattern = (u64, Option<u64>, Option<u64>, Option<u64>);

/// A hash of what makes two ops interchangeable in a chunk: kind (with attributes), operand
/// and result types, regions.
fn signature(f: &Func, op: &Op) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    op.kind.hash(&mut h);
    for v in op.operands.iter().chain(&op.results) {
        f.ty(*v).hash(&mut h);
    }
    op.regions.len().hash(&mut h);
    for r in &op.regions {
        r.ops.len().hash(&mut h);
        for o in &r.ops {
            o.kind.hash(&mut h);
        }
    }
    h.finish()
}

/// The cut points of `ops` (of `f`): consecutive ranges of at most `max_ops` ops (a heavier op
/// alone). From each cut point, the longest stretch of at most `max_ops` that occurs again
/// later (by [`signature`], at least [`MIN_REPEAT`] ops, not overlapping) becomes the segment
/// and a cut is planned at its later occurrences, so that repeated blocks give equal chunks;
/// elsewhere segments are filled greedily up to the next planned cut.
fn segments(f: &Func, ops: &[Op], max_ops: usize) -> Vec<std::ops::Range<usize>> {
    let n = ops.len();
    let max_ops = max_ops.saturating_mul(UNIT);
    let w: Vec<usize> = ops.iter().map(|o| weight(f, o)).collect();
    let sig: Vec<u64> = ops.iter().map(|o| signature(f, o)).collect();
    // Start positions of each 4-op pattern, for the repeat search.
    let key = |i: usize| (sig[i], sig.get(i + 1).copied(), sig.get(i + 2).copied(), sig.get(i + 3).copied());
    let mut starts: HashMap<Pattern, Vec<usize>> = HashMap::new();
    for i in 0..n {
        starts.entry(key(i)).or_default().push(i);
    }
    // planned[j]: a segment of that many ops is to start at j.
    let mut planned: HashMap<usize, usize> = HashMap::new();
    let (mut segs, mut i) = (Vec::new(), 0);
    while i < n {
        if let Some(&len) = planned.get(&i) {
            segs.push(i..i + len);
            i += len;
            continue;
        }
        let next_plan = planned.keys().copied().filter(|&j| j > i).min().unwrap_or(n);
        // The longest stretch from i (within the weight bound and before the next planned
        // cut) that repeats later.
        let (mut best, mut at) = (0usize, Vec::new());
        if let Some(cands) = starts.get(&key(i)) {
            for &j in cands.iter().filter(|&&j| j > i).take(MAX_CANDIDATES) {
                let (mut len, mut acc) = (0usize, 0usize);
                while i + len < next_plan.min(j) && j + len < n && sig[i + len] == sig[j + len] && acc + w[i + len] <= max_ops && !planned.contains_key(&(j + len)) {
                    acc += w[i + len];
                    len += 1;
                }
                if len > best {
                    (best, at) = (len, vec![j]);
                } else if len == best && len > 0 {
                    at.push(j);
                }
            }
        }
        if best >= MIN_REPEAT {
            segs.push(i..i + best);
            for j in at {
                // Only where the stretch at j does not overlap one already planned.
                if (j..j + best).all(|k| !planned.contains_key(&k)) && planned.iter().all(|(&p, &l)| p + l <= j || j + best <= p) {
                    planned.insert(j, best);
                }
            }
            i += best;
            continue;
        }
        let (start, mut acc) = (i, 0);
        while i < next_plan && (i == start || acc + w[i] <= max_ops) {
            acc += w[i];
            i += 1;
        }
        segs.push(start..i);
    }
    segs
}

/// Splits `f` into chunks (returned) when it is longer than `max_ops`; `f` keeps one call
/// per chunk.
fn outline_func(f: &mut Func, max_ops: usize, taken: &mut HashSet<String>) -> Vec<Func> {
    if func_weight(f) <= max_ops {
        return vec![];
    }
    // Small constants used across chunks are copied into each chunk that uses them (not
    // passed): the chunks of repeated blocks then do not depend on which block first made a
    // shared constant (CSE merges equal constants program-wide).
    let mut small_const: HashMap<Value, usize> = HashMap::new();
    for (i, op) in f.ops.iter().enumerate() {
        if let OpKind::Constant(ConstantOp::Constant { value }) = &op.kind {
            if value.is_splat() || value.bytes.len() <= SMALL_CONSTANT_BYTES {
                small_const.extend(op.results.iter().map(|v| (*v, i)));
            }
        }
    }
    // Broadcasts of small values used across chunks are computed again in each chunk that
    // uses them, from their (small) operand: passing the broadcast result would make it an
    // operand-sized array in memory between the chunks (threefry's key words broadcast to a
    // million counters: a 4 MB array per word, written and read once per round).
    let mut remat: HashMap<Value, usize> = HashMap::new();
    for (i, op) in f.ops.iter().enumerate() {
        if let OpKind::Layout(quabla_dialect::LayoutOp::BroadcastInDim { .. }) = &op.kind {
            let src = f.ty(op.operands[0]);
            if quabla_dialect::size::saturating_product(src.shape.iter().copied()) <= SMALL_BROADCAST_SOURCE {
                remat.insert(op.results[0], i);
            }
        }
    }
    // Cut points are chosen among the other ops (`core`): where shared constants sit does not
    // change how blocks repeat. A segment of `core` covers the ops up to its last core op.
    let core: Vec<usize> = (0..f.ops.len()).filter(|&i| !f.ops[i].results.first().is_some_and(|v| small_const.contains_key(v))).collect();
    if core.is_empty() {
        return vec![];
    }
    let core_ops: Vec<Op> = core.iter().map(|&i| f.ops[i].clone()).collect();
    let core_segs = segments(f, &core_ops, max_ops);
    let mut segs = Vec::with_capacity(core_segs.len());
    let mut start = 0;
    for (k, r) in core_segs.iter().enumerate() {
        let end = if k + 1 == core_segs.len() { f.ops.len() } else { core[r.end - 1] + 1 };
        segs.push(start..end);
        start = end;
    }
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
                if d == OUTSIDE || d == s || small_const.contains_key(v) {
                    continue;
                }
                match remat.get(v) {
                    // A broadcast made again in this chunk: its operand crosses instead.
                    Some(&b) => {
                        let src = f.ops[b].operands[0];
                        if def[src.0 as usize] != OUTSIDE && !small_const.contains_key(&src) {
                            live_out[src.0 as usize] = true;
                        }
                    }
                    None => live_out[v.0 as usize] = true,
                }
            }
        }
    }
    for v in &f.outputs {
        if def[v.0 as usize] != OUTSIDE {
            live_out[v.0 as usize] = true;
        }
    }
    // Segments with the same ops (signatures) return the same results: a value live after
    // one of them is returned by each, so that repeated blocks give identical chunks.
    let mut groups: HashMap<Vec<u64>, Vec<usize>> = HashMap::new();
    for (k, r) in core_segs.iter().enumerate() {
        groups.entry(r.clone().map(|c| signature(f, &f.ops[core[c]])).collect()).or_default().push(k);
    }
    for members in groups.values().filter(|m| m.len() > 1) {
        let len = core_segs[members[0]].len();
        for off in 0..len {
            let at = |k: usize| core[core_segs[k].start + off];
            let nres = f.ops[at(members[0])].results.len();
            for r in 0..nres {
                if members.iter().any(|&k| live_out[f.ops[at(k)].results[r].0 as usize]) {
                    for &k in members {
                        live_out[f.ops[at(k)].results[r].0 as usize] = true;
                    }
                }
            }
        }
    }
    let ops = std::mem::take(&mut f.ops);
    let mut calls = Vec::with_capacity(segs.len());
    let mut chunks = Vec::with_capacity(segs.len());
    for (s, r) in segs.into_iter().enumerate() {
        let seg = &ops[r];
        let mut seen: HashSet<Value> = HashSet::new();
        // The small constants the chunk uses (its own or another chunk's) come first, in order
        // of first use; the chunk's own small constants that it does not use are left to the
        // chunks that do (unless they are results of `f`).
        // Broadcasts of small values made in other chunks are made again here (their operand,
        // a small constant copied first or an input, then the broadcast).
        // In program order: a broadcast of another one made again comes after it.
        let mut remade: Vec<usize> = seg.iter().flat_map(|o| o.operands.iter().copied()).filter(|v| def[v.0 as usize] != s).filter_map(|v| remat.get(&v).copied()).filter(|&i| seen.insert(ops[i].results[0])).collect();
        remade.sort_unstable();
        let remade_srcs: Vec<Value> = remade.iter().map(|&i| ops[i].operands[0]).collect();
        let mut copied: Vec<usize> = seg.iter().flat_map(|o| o.operands.iter().copied()).chain(remade_srcs.iter().copied()).filter_map(|v| small_const.get(&v).copied()).filter(|&i| seen.insert(ops[i].results[0])).collect();
        let rest: Vec<Op> = seg
            .iter()
            .filter(|o| !(small_const.contains_key(&o.results.first().copied().unwrap_or(Value(u32::MAX))) && (seen.contains(&o.results[0]) || !live_out[o.results[0].0 as usize])))
            .cloned()
            .collect();
        let inputs: Vec<Value> = remade_srcs.iter().copied().chain(seg.iter().flat_map(|o| o.operands.iter().copied())).filter(|v| def[v.0 as usize] != s && seen.insert(*v)).collect();
        copied.extend(remade);
        let outputs: Vec<Value> = seg.iter().flat_map(|o| o.results.iter().copied()).filter(|v| live_out[v.0 as usize]).collect();
        let base = format!("{}_chunk{s}", f.name);
        let name = (0..).map(|i| if i == 0 { base.clone() } else { format!("{base}_{i}") }).find(|n| !taken.contains(n)).unwrap_or(base);
        taken.insert(name.clone());
        let in_types: Vec<_> = inputs.iter().map(|v| f.ty(*v).clone()).collect();
        let mut g = Func::new(name.clone(), &in_types);
        g.public = false;
        g.loc = f.loc.clone();
        let mut map: HashMap<Value, Value> = inputs.iter().copied().zip(g.params.iter().copied()).collect();
        let mut body = Vec::with_capacity(copied.len() + seg.len());
        for &i in &copied {
            clone_ops_into(&mut g, f, std::slice::from_ref(&ops[i]), &mut map, &None, &mut body);
        }
        clone_ops_into(&mut g, f, &rest, &mut map, &None, &mut body);
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
        chain_of(n, 3)
    }

    /// [`chain`] on vectors of `len` elements.
    fn chain_of(n: usize, len: i64) -> Module {
        let t = TensorType::new(DType::F64, [len]);
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
        // Seven chunks of the repeating sin / mul pattern; equal ones are one function.
        assert!(names.len() < 7, "{}", o.to_mlir());
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
    fn elementwise_chains_on_large_arrays_weigh_less() {
        // 100 elementwise ops: cut into chunks of 64 on small vectors, one function (one fused
        // loop, no arrays through memory between chunks) on vectors of LARGE_ELEMENTS, where
        // a sine weighs a quarter of an op and a product a sixteenth.
        let mut small = chain_of(100, 3);
        assert!(!outline(&mut small, 64).is_empty());
        let mut large = chain_of(100, LARGE_ELEMENTS);
        assert_eq!(func_weight(&large.funcs[0]), (50 * 4 + 50_usize).div_ceil(16));
        assert!(outline(&mut large, 64).is_empty(), "{}", large.to_mlir());
        // Past the bound they are cut again, each chunk within it.
        let mut long = chain_of(600, LARGE_ELEMENTS);
        let names = outline(&mut long, 64);
        assert!(!names.is_empty());
        long.verify().unwrap();
        for g in long.funcs.iter().skip(1) {
            assert!(func_weight(g) <= 64, "{}", func_weight(g));
        }
    }

    #[test]
    fn small_broadcasts_are_made_again_not_passed() {
        // A scalar computed from the input (sum of x), broadcast in the first chunk and read
        // by every later one: the chunks take the scalar, not the [1000] broadcast, and the
        // result is the same.
        let t = TensorType::new(DType::F64, [1000]);
        let mut f = Func::new("main", std::slice::from_ref(&t));
        let x0 = f.params[0];
        let s = f.push1(OpKind::Reduce(quabla_dialect::ReduceOp::Reduce { op: quabla_dialect::Reducer::Sum, dims: vec![0] }), &[x0], None).unwrap();
        let b = f.push1(OpKind::Layout(quabla_dialect::LayoutOp::BroadcastInDim { dims: vec![], shape: vec![1000] }), &[s], None).unwrap();
        let mut x = x0;
        for _ in 0..12 {
            x = f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Sin }), &[x], None).unwrap();
            x = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), &[x, b], None).unwrap();
        }
        f.outputs = vec![x];
        let m = Module { funcs: vec![f] };
        let mut o = m.clone();
        outline(&mut o, 4);
        o.verify().unwrap();
        for call in &o.funcs[0].ops {
            let ins: Vec<&TensorType> = call.operands.iter().map(|v| o.funcs[0].ty(*v)).collect();
            assert!(ins.iter().filter(|t| t.shape == vec![1000]).count() <= 1, "only the chain's value is an array:\n{}", o.to_mlir());
        }
        let xb = Buffer::from_f64s(t, &(0..1000).map(|i| (i as f64 * 0.37).sin() * 1e-3).collect::<Vec<_>>()).unwrap();
        let want = quabla_interp::run_func(&m, "main", std::slice::from_ref(&xb)).unwrap();
        let got = quabla_interp::run_func(&o, "main", &[xb]).unwrap();
        assert_eq!(got[0].to_f64_vec(), want[0].to_f64_vec());
    }

    /// `blocks` repetitions of a 12-op block (sin, then x * y + c with one shared constant c,
    /// as CSE leaves it), then a tail of different ops.
    fn blocks(n: usize) -> Module {
        let t = TensorType::new(DType::F64, [3]);
        let mut f = Func::new("main", &[t.clone(), t.clone()]);
        let (mut x, y) = (f.params[0], f.params[1]);
        let c = f.push1(OpKind::Constant(ConstantOp::Constant { value: quabla_dialect::Literal::splat(t, 0.25) }), &[], None).unwrap();
        for _ in 0..n {
            for _ in 0..4 {
                x = f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Sin }), &[x], None).unwrap();
                x = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), &[x, y], None).unwrap();
                x = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add }), &[x, c], None).unwrap();
            }
        }
        for _ in 0..5 {
            x = f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Cos }), &[x], None).unwrap();
        }
        f.outputs = vec![x];
        Module { funcs: vec![f] }
    }

    #[test]
    fn repeated_blocks_become_one_chunk() {
        let m = blocks(6);
        let mut o = m.clone();
        let names = outline(&mut o, 12);
        o.verify().unwrap();
        // Six equal 12-op blocks and the tail: two distinct chunks, the first called six times.
        assert_eq!(names.len(), 2, "{}", o.to_mlir());
        let calls: Vec<&str> = o.funcs[0].ops.iter().filter_map(|op| if let OpKind::Call(CallOp::Call { callee, .. }) = &op.kind { Some(callee.as_str()) } else { None }).collect();
        assert_eq!(calls.len(), 7);
        assert!(calls[..6].iter().all(|c| *c == names[0]) && calls[6] == names[1], "{calls:?}");
        let t = TensorType::new(DType::F64, [3]);
        let x = Buffer::from_f64s(t.clone(), &[0.5, -1.0, 2.0]).unwrap();
        let y = Buffer::from_f64s(t, &[1.5, 0.25, -3.0]).unwrap();
        let want = quabla_interp::run_func(&m, "main", &[x.clone(), y.clone()]).unwrap();
        let got = quabla_interp::run_func(&o, "main", &[x, y]).unwrap();
        assert_eq!(got[0].to_f64_vec(), want[0].to_f64_vec());
    }

    #[test]
    fn short_functions_are_left_alone() {
        let m = chain(8);
        let mut o = m.clone();
        assert!(outline(&mut o, 8).is_empty());
        assert_eq!(o, m);
    }
}

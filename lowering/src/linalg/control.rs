//! Lowering of control flow. `quabla.if` becomes `scf.if` on the `i1` extracted from its 0-d
//! predicate; each body is lowered in place with its parameters bound to the captured operands
//! (scf regions see the enclosing values), and yields with `scf.yield`. One-shot
//! bufferization turns the tensor results into buffers without copies of the untaken branch.
//! `quabla.case` becomes `scf.index_switch` on its index cast to `index`: cases `0..N-1`
//! are the first bodies and `default` the last, which gives StableHLO's clamping.
//!
//! Counted loops. A `quabla.while` whose cond is `counter < bound` (the counter a 0-d
//! integer carry, the bound a constant of the cond region or a carry the body passes through
//! unchanged) and whose body steps the counter by a positive constant (of the body, or an
//! unchanged carry whose initial value is a constant) lowers to `scf.for` on the counter's
//! integer type: loop-invariant carries are not iteration arguments (the body reads their
//! outer values), the counter is rebuilt from the induction variable each iteration, and its
//! final value is `lb + max(0, ceildiv(ub - lb, step)) * step`. Each iteration's carry is
//! yielded through `bufferization.materialize_in_destination` into its iteration argument,
//! so empty-tensor elimination makes the op computing it write into the carry's buffer:
//! one-shot bufferization then keeps the loop state in place (no allocation or copy of a
//! carry per iteration; a copy remains only where the body still reads the old carry after
//! overwriting it, as tensor semantics require). Each carried init is copied once into a
//! fresh buffer before the loop (`bufferization.alloc_tensor() copy(...)`): the loop writes
//! its state in place, which a read-only init (a parameter, a constant) or one still read
//! after the loop would not allow; a carry yielded as or read through a view (reshape,
//! slice), or computed by a nested `scf.while` (which updates its inits in place), is
//! yielded without forcing. Other whiles stay `scf.while`.
use quabla_dialect::{BinaryOp, CmpDir, ConstantOp, ControlOp, DType, ElementwiseOp, Func, Op, OpKind, SlicingOp, TensorType, Value};

use super::{lower_block, Ctx, Emitter};
use crate::LowerError;

/// `scf.yield` of a region body's outputs; an output with a destination (`dests`, see
/// [`output_dests`]) is materialized into it first.
fn scf_yield(e: &mut Emitter, f: &Func, outputs: &[quabla_dialect::Value], dests: &[Option<String>]) {
    let ys: Vec<String> = outputs
        .iter()
        .enumerate()
        .map(|(k, v)| match dests.get(k).and_then(|d| d.as_ref()) {
            Some(d) => {
                let t = f.ty(*v);
                e.op(format!("bufferization.materialize_in_destination {} in {d} : ({t}, {t}) -> {t}", e.name(*v)))
            }
            None => e.name(*v),
        })
        .collect();
    if ys.is_empty() {
        e.line("scf.yield");
    } else {
        let yt: Vec<String> = outputs.iter().map(|v| f.ty(*v).to_string()).collect();
        e.line(format!("scf.yield {} : {}", ys.join(", "), yt.join(", ")));
    }
}

/// Binds a branch's parameters to the op's captured operands (`o.operands[1..]`).
fn bind_params(e: &mut Emitter, o: &Op, body: &quabla_dialect::Body) {
    for (bp, outer) in body.params.iter().zip(&o.operands[1..]) {
        let name = e.name(*outer);
        e.alias(*bp, name);
    }
}

/// One branch of an `if`/`case` (`body`, a region of `o`): its parameters bound to the op's
/// captured operands (`o.operands[1..]`), its ops lowered one level deeper, its `scf.yield`.
fn branch(e: &mut Emitter, cx: &Ctx, f: &Func, o: &Op, body: &quabla_dialect::Body, loc: &Option<String>, dests: &[Option<String>]) -> Result<(), LowerError> {
    bind_params(e, o, body);
    e.depth += 1;
    lower_block(e, cx, f, &body.ops, &body.outputs)?;
    e.loc = loc.clone();
    scf_yield(e, f, &body.outputs, dests);
    e.depth -= 1;
    Ok(())
}

/// For each result of the branch op `o` that is an output of the function, its output buffer
/// as a tensor (`bufferization.to_tensor ... restrict writable`, before the op): every branch
/// materializes that result into it, so empty-tensor elimination lets the branch compute
/// straight into the output where the result was computed into a fresh tensor and copied
/// out after the branch (`cond(x.sum() > 0, f, g, x)` of 1e6 f32: 170 -> see
/// docs/performance.md).
fn output_dests(e: &mut Emitter, o: &Op, results: &[TensorType]) -> Vec<Option<String>> {
    if e.cg.target.parallel_outer() {
        return vec![];
    }
    // A branch whose result is a nested branch op's: empty-tensor elimination put the output
    // into the inner branch that computes its value while another inner branch yields a
    // read-only value (a parameter), and one-shot bufferization then fails ("cannot avoid RaW
    // conflict"). Such a result is copied out after the op. One result per buffer (a value
    // returned twice is one buffer's, the other copied).
    let nested = |k: usize| o.regions.iter().any(|b| b.outputs.get(k).is_some_and(|v| b.ops.iter().any(|i| matches!(i.kind, OpKind::Control(_)) && i.results.contains(v))));
    let asked: Vec<Option<Value>> = o.results.iter().enumerate().map(|(k, r)| (!nested(k)).then_some(*r)).collect();
    let outs = e.distinct_out_buffers(&asked);
    outs.into_iter().zip(results).map(|(out, t)| Some(e.op(format!("bufferization.to_tensor {} restrict writable : {} to {t}", out?, super::memref(t))))).collect()
}

/// `quabla.if`: returns the names of the results.
pub fn lower_if(e: &mut Emitter, cx: &Ctx, f: &Func, o: &Op, results: &[TensorType]) -> Result<Vec<String>, LowerError> {
    if kernels_only(e, o) {
        return every_branch(e, cx, f, o, results);
    }
    let loc = e.loc.clone();
    let dests = output_dests(e, o, results);
    let p = o.operands[0];
    let c = e.op(format!("tensor.extract {}[] : {}", e.name(p), f.ty(p)));
    let n = e.fresh();
    let rt: Vec<String> = results.iter().map(|t| t.to_string()).collect();
    let (lhs, ty) = match results.len() {
        0 => (String::new(), String::new()),
        1 => (format!("{n} = "), format!(" -> ({})", rt[0])),
        k => (format!("{n}:{k} = "), format!(" -> ({})", rt.join(", "))),
    };
    e.raw_line(format!("{lhs}scf.if {c}{ty} {{"));
    for (i, body) in o.regions.iter().enumerate() {
        if i == 1 {
            e.raw_line("} else {");
        }
        branch(e, cx, f, o, body, &loc, &dests)?;
    }
    e.line("}");
    Ok(match results.len() {
        1 => vec![n],
        k => (0..k).map(|i| format!("{n}#{i}")).collect(),
    })
}

/// Where a counted loop's bound comes from.
enum Bound {
    /// A carry the body passes through unchanged.
    Carry(usize),
    /// A constant of the cond region.
    Const(i64),
}

/// A `quabla.while` recognised as a counted loop: carry `k` runs from its initial value
/// while `< bound`, stepping by `step > 0`.
struct Counted {
    k: usize,
    step: i64,
    bound: Bound,
}

/// The value of a 0-d integer constant op among `ops` defining `v`.
fn const_in(ops: &[Op], v: Value) -> Option<i64> {
    ops.iter().find(|op| op.results == [v]).and_then(|op| match &op.kind {
        OpKind::Constant(ConstantOp::Constant { value }) if value.ty.rank() == 0 && matches!(value.ty.dtype, DType::I32 | DType::I64) => Some(value.get_i64(0)),
        _ => None,
    })
}

/// The value of a 0-d integer constant of `f` (at any depth) defining `v`.
fn const_of(f: &Func, v: Value) -> Option<i64> {
    let mut found = None;
    f.walk(&mut |op| {
        if found.is_none() && op.results == [v] {
            found = const_in(std::slice::from_ref(op), v);
        }
    });
    found
}

/// Recognises the counted-loop form of `o` (see the file header).
fn counted(f: &Func, o: &Op) -> Option<Counted> {
    let [cond, body] = o.regions.as_slice() else { return None };
    let invariant = |j: usize| body.outputs.get(j).is_some() && body.outputs.get(j) == body.params.get(j);
    let out = *cond.outputs.first()?;
    let cmp = cond.ops.iter().find(|op| op.results == [out])?;
    if !matches!(cmp.kind, OpKind::Elementwise(ElementwiseOp::Compare { direction: CmpDir::Lt })) {
        return None;
    }
    if cond.ops.iter().any(|op| !std::ptr::eq(op, cmp) && !matches!(op.kind, OpKind::Constant(ConstantOp::Constant { .. }))) {
        return None;
    }
    let k = cond.params.iter().position(|p| *p == cmp.operands[0])?;
    let ty = f.ty(o.operands[k]);
    if ty.rank() != 0 || !matches!(ty.dtype, DType::I32 | DType::I64) || invariant(k) {
        return None;
    }
    let b = cmp.operands[1];
    let bound = match cond.params.iter().position(|p| *p == b) {
        Some(j) if j != k && invariant(j) => Bound::Carry(j),
        Some(_) => return None,
        None => Bound::Const(const_in(&cond.ops, b)?),
    };
    let next = body.outputs[k];
    let add = body.ops.iter().find(|op| op.results == [next])?;
    if !matches!(add.kind, OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add })) {
        return None;
    }
    let pk = body.params[k];
    let other = match (add.operands[0] == pk, add.operands[1] == pk) {
        (true, false) => add.operands[1],
        (false, true) => add.operands[0],
        _ => return None,
    };
    let step = match body.params.iter().position(|p| *p == other) {
        Some(j) if invariant(j) => const_of(f, o.operands[j])?,
        Some(_) => return None,
        None => const_in(&body.ops, other)?,
    };
    (step > 0).then_some(Counted { k, step, bound })
}

/// Whether every read of carry `j` of a loop body through views comes before the op
/// computing its next value (which may read the carry itself): the values that may share its buffer (the parameter, views of
/// it, a `dynamic_update_slice` that replaces a whole view, which lowers to the update
/// itself) are all used by earlier ops only, and none is yielded.
fn read_before_update(f: &Func, body: &quabla_dialect::Body, j: usize) -> bool {
    let Some(def) = body.ops.iter().position(|p| p.results.contains(&body.outputs[j])) else { return false };
    let aliasing = |p: &Op| match p.kind {
        OpKind::Layout(_) | OpKind::Slicing(SlicingOp::Slice { .. }) => true,
        OpKind::Slicing(SlicingOp::DynamicUpdateSlice {}) => f.ty(p.operands[0]) == f.ty(p.operands[1]),
        _ => false,
    };
    let mut alias = vec![body.params[j]];
    for (k, p) in body.ops.iter().enumerate() {
        if p.operands.iter().any(|v| alias.contains(v)) {
            // The op computing the next value may read the parameter itself (an elementwise
            // update in place), not a view of it.
            if k > def || (k == def && p.operands.iter().any(|v| alias[1..].contains(v))) {
                return false;
            }
            if aliasing(p) {
                alias.extend(&p.results);
            }
        }
    }
    !body.outputs.iter().any(|v| alias.contains(v))
}

/// A counted `quabla.while` as `scf.for` with its loop state yielded in place.
fn lower_for(e: &mut Emitter, cx: &Ctx, f: &Func, o: &Op, c: &Counted) -> Result<Vec<String>, LowerError> {
    let loc = e.loc.clone();
    let body = &o.regions[1];
    let n = o.operands.len();
    let ty = f.ty(o.operands[c.k]).clone();
    let it = ty.dtype;
    let lb = e.op(format!("tensor.extract {}[] : {ty}", e.name(o.operands[c.k])));
    let ub = match c.bound {
        Bound::Carry(j) => e.op(format!("tensor.extract {}[] : {}", e.name(o.operands[j]), f.ty(o.operands[j]))),
        Bound::Const(v) => e.op(format!("arith.constant {v} : {it}")),
    };
    let st = e.op(format!("arith.constant {} : {it}", c.step));
    let invariant = |j: usize| body.outputs[j] == body.params[j];
    let carried: Vec<usize> = (0..n).filter(|&j| j != c.k && !invariant(j)).collect();
    let iv = e.fresh();
    let args: Vec<String> = carried.iter().map(|_| e.fresh()).collect();
    // Each carried init is copied once into a fresh buffer before the loop: the loop writes
    // its state in place (materialize_in_destination into the iteration argument), which is
    // not allowed on a read-only buffer (a function argument, a constant) or on a value still
    // read after the loop.
    // A 0-d carry is carried as its scalar (extracted before the loop, a tensor of it in the
    // body, extracted again at the yield): a tensor carry read after its next value was
    // computed (a scan stacking its old state) needed a new buffer every iteration, a
    // malloc and a free (10000 steps of a scalar scan 98 us, JAX 50).
    let scalar = |j: usize| f.ty(o.operands[j]).rank() == 0;
    let fresh_inits: Vec<String> = carried
        .iter()
        .map(|&j| {
            let (x, t) = (e.name(o.operands[j]), f.ty(o.operands[j]));
            e.op(if scalar(j) { format!("tensor.extract {x}[] : {t}") } else { format!("bufferization.alloc_tensor() copy({x}) : {t}") })
        })
        .collect();
    let inits: Vec<String> = args.iter().zip(&fresh_inits).map(|(a, init)| format!("{a} = {init}")).collect();
    let tys: Vec<String> = carried.iter().map(|&j| if scalar(j) { f.ty(o.operands[j]).dtype.to_string() } else { f.ty(o.operands[j]).to_string() }).collect();
    let r = e.fresh();
    let lhs = match carried.len() {
        0 => String::new(),
        1 => format!("{r} = "),
        m => format!("{r}:{m} = "),
    };
    let iter = if carried.is_empty() { String::new() } else { format!(" iter_args({}) -> ({})", inits.join(", "), tys.join(", ")) };
    e.raw_line(format!("{lhs}scf.for {iv} = {lb} to {ub} step {st}{iter} : {it} {{"));
    e.depth += 1;
    let cnt = e.op(format!("tensor.from_elements {iv} : {ty}"));
    e.alias(body.params[c.k], cnt);
    for j in (0..n).filter(|&j| invariant(j)) {
        let name = e.name(o.operands[j]);
        e.alias(body.params[j], name);
    }
    for (a, &j) in args.iter().zip(&carried) {
        let p = if scalar(j) { e.op(format!("tensor.from_elements {a} : {}", f.ty(o.operands[j]))) } else { a.clone() };
        e.alias(body.params[j], p);
    }
    lower_block(e, cx, f, &body.ops, &body.outputs)?;
    e.loc = loc.clone();
    let mut ys = Vec::with_capacity(carried.len());
    for (a, &j) in args.iter().zip(&carried) {
        let v = e.name(body.outputs[j]);
        let t = f.ty(body.outputs[j]);
        if scalar(j) {
            ys.push(e.op(format!("tensor.extract {v}[] : {t}")));
            continue;
        }
        // A carry yielded as a view (reshape, slice) of another value, or read through a view
        // in the body after (or by) the op computing its next value, cannot be forced into its
        // buffer without a read-after-write conflict: it is yielded as is (bufferization
        // copies where it must). A view read and consumed before that op (a reverse-mode
        // forward loop stacks the carry first) leaves the update in place.
        let is_view = |p: &Op| matches!(p.kind, OpKind::Layout(_) | OpKind::Slicing(SlicingOp::Slice { .. }));
        let view = body.ops.iter().any(|p| is_view(p) && (p.results.contains(&body.outputs[j]) || (p.operands.contains(&body.params[j]) && !read_before_update(f, body, j))));
        // Nor can the result of a nested `scf.while` (a while that is not a counted loop):
        // it updates its inits in place, so forcing its result into the carry it started from
        // is a read-after-write conflict one-shot bufferization rejects (a data-dependent
        // while_loop inside a scan or fori_loop).
        let from_while = body.ops.iter().any(|p| matches!(p.kind, OpKind::Control(ControlOp::While {})) && counted(f, p).is_none() && p.results.contains(&body.outputs[j]));
        // Nor when carries swap (`(a, b) -> (b, a + b)`): a carry whose next value is another
        // carry's iteration argument, or whose own argument another carry yields, would have
        // its buffer overwritten while that state is still yielded; as is, bufferization
        // copies where it must.
        let swapped = (0..n).any(|i| i != j && (body.params[i] == body.outputs[j] || body.outputs[i] == body.params[j]));
        let view = view || from_while || swapped;
        ys.push(if v == *a || view { v } else { e.op(format!("bufferization.materialize_in_destination {v} in {a} : ({t}, {t}) -> {t}")) });
    }
    if ys.is_empty() {
        e.line("scf.yield");
    } else {
        e.line(format!("scf.yield {} : {}", ys.join(", "), tys.join(", ")));
    }
    e.depth -= 1;
    e.line("}");
    // The counter's final value: lb + max(0, ceildiv(ub - lb, step)) * step.
    let d = e.op(format!("arith.subi {ub}, {lb} : {it}"));
    let q = e.op(format!("arith.ceildivsi {d}, {st} : {it}"));
    let z = e.op(format!("arith.constant 0 : {it}"));
    let trips = e.op(format!("arith.maxsi {q}, {z} : {it}"));
    let span = e.op(format!("arith.muli {trips}, {st} : {it}"));
    let last = e.op(format!("arith.addi {lb}, {span} : {it}"));
    let fin = e.op(format!("tensor.from_elements {last} : {ty}"));
    let mut out = Vec::with_capacity(n);
    let mut next = 0;
    for j in 0..n {
        out.push(if j == c.k {
            fin.clone()
        } else if invariant(j) {
            e.name(o.operands[j])
        } else {
            next += 1;
            let res = if carried.len() == 1 { r.clone() } else { format!("{r}#{}", next - 1) };
            if scalar(j) { e.op(format!("tensor.from_elements {res} : {}", f.ty(o.operands[j]))) } else { res }
        });
    }
    Ok(out)
}

/// `quabla.while`: `scf.for` when it is a counted loop (see the file header), else
/// `scf.while` over the carries; the cond region's ops run in the before region, whose
/// `scf.condition` forwards the carries to the body (the after region).
pub fn lower_while(e: &mut Emitter, cx: &Ctx, f: &Func, o: &Op) -> Result<Vec<String>, LowerError> {
    if let Some(c) = counted(f, o) {
        return lower_for(e, cx, f, o, &c);
    }
    let loc = e.loc.clone();
    let (cond, body) = (&o.regions[0], &o.regions[1]);
    let ts = o.operands.iter().map(|v| f.ty(*v).to_string()).collect::<Vec<_>>().join(", ");
    let args: Vec<String> = cond.params.iter().map(|_| e.fresh()).collect();
    let inits: Vec<String> = args.iter().zip(&o.operands).map(|(a, x)| format!("{a} = {}", e.name(*x))).collect();
    for (p, a) in cond.params.iter().zip(&args) {
        e.alias(*p, a.clone());
    }
    let n = e.fresh();
    let lhs = match o.results.len() {
        0 => String::new(),
        1 => format!("{n} = "),
        k => format!("{n}:{k} = "),
    };
    e.raw_line(format!("{lhs}scf.while ({}) : ({ts}) -> ({ts}) {{", inits.join(", ")));
    e.depth += 1;
    lower_block(e, cx, f, &cond.ops, &cond.outputs)?;
    e.loc = loc.clone();
    let c = e.op(format!("tensor.extract {}[] : tensor<i1>", e.name(cond.outputs[0])));
    if args.is_empty() {
        e.line(format!("scf.condition({c})"));
    } else {
        e.line(format!("scf.condition({c}) {} : {ts}", args.join(", ")));
    }
    e.depth -= 1;
    e.raw_line("} do {");
    let bargs: Vec<String> = body.params.iter().map(|_| e.fresh()).collect();
    let decl: Vec<String> = bargs.iter().zip(&body.params).map(|(a, p)| format!("{a}: {}", f.ty(*p))).collect();
    for (p, a) in body.params.iter().zip(&bargs) {
        e.alias(*p, a.clone());
    }
    e.raw_line(format!("^bb0({}):", decl.join(", ")));
    e.depth += 1;
    lower_block(e, cx, f, &body.ops, &body.outputs)?;
    e.loc = loc.clone();
    scf_yield(e, f, &body.outputs, &[]);
    e.depth -= 1;
    e.line("}");
    Ok(match o.results.len() {
        1 => vec![n],
        k => (0..k).map(|i| format!("{n}#{i}")).collect(),
    })
}

/// `quabla.case`: `scf.index_switch` over the branches; returns the names of the results.
pub fn lower_case(e: &mut Emitter, cx: &Ctx, f: &Func, o: &Op, results: &[TensorType]) -> Result<Vec<String>, LowerError> {
    if kernels_only(e, o) {
        return every_branch(e, cx, f, o, results);
    }
    let loc = e.loc.clone();
    let dests = output_dests(e, o, results);
    let p = o.operands[0];
    let it = f.ty(p).clone();
    let i = e.op(format!("tensor.extract {}[] : {it}", e.name(p)));
    let ix = e.op(format!("arith.index_cast {i} : {} to index", it.dtype));
    let n = e.fresh();
    let rt: Vec<String> = results.iter().map(|t| t.to_string()).collect();
    let (lhs, ty) = match results.len() {
        0 => (String::new(), String::new()),
        1 => (format!("{n} = "), format!(" -> {}", rt[0])),
        k => (format!("{n}:{k} = "), format!(" -> {}", rt.join(", "))),
    };
    e.raw_line(format!("{lhs}scf.index_switch {ix}{ty}"));
    let last = o.regions.len() - 1;
    for (k, body) in o.regions.iter().enumerate() {
        if k == last {
            e.raw_line("default {");
        } else {
            e.raw_line(format!("case {k} {{"));
        }
        branch(e, cx, f, o, body, &loc, &dests)?;
        e.raw_line("}");
    }
    Ok(match results.len() {
        1 => vec![n],
        k => (0..k).map(|i| format!("{n}#{i}")).collect(),
    })
}

/// Whether a branch op lowers to [`every_branch`]: on a target whose computations are all
/// kernels, unless a branch holds a loop or a host callback, which must not run when the
/// branch is not taken (an untaken loop need not even end): those branch on the host
/// (`scf.if` / `scf.index_switch`, the predicate read from device memory).
fn kernels_only(e: &Emitter, o: &Op) -> bool {
    let mut host = false;
    for body in &o.regions {
        body.walk(&mut |op| host |= matches!(op.kind, OpKind::Control(ControlOp::While {}) | OpKind::Callback(_)));
    }
    e.cg.target.parallel_outer() && !host
}

/// `if` / `case` on a target whose computations are all kernels (`Target::parallel_outer`,
/// the GPU), where no predicate is read on the host: every branch is computed (its ops
/// lowered in line, its parameters bound to the captured operands; the branches are pure)
/// and each result is a kernel that selects the taken branch's value, reading the predicate
/// (`if`: branch 0 when true) or the index (`case`: branch k for 0 <= k < last, the last
/// branch otherwise, as `scf.index_switch`'s default) inside it.
fn every_branch(e: &mut Emitter, cx: &Ctx, f: &Func, o: &Op, results: &[TensorType]) -> Result<Vec<String>, LowerError> {
    let loc = e.loc.clone();
    let mut values: Vec<Vec<String>> = Vec::with_capacity(o.regions.len());
    for body in &o.regions {
        bind_params(e, o, body);
        lower_block(e, cx, f, &body.ops, &body.outputs)?;
        values.push(body.outputs.iter().map(|v| e.name(*v)).collect());
    }
    e.loc = loc;
    let (p, pt) = (e.name(o.operands[0]), f.ty(o.operands[0]).clone());
    let is_if = matches!(o.kind, OpKind::Control(ControlOp::If { .. }));
    let mut out = Vec::with_capacity(results.len());
    for (k, t) in results.iter().enumerate() {
        let r = t.rank();
        // A unit loop for 0-d results, so the select is a kernel too.
        let lt = if r == 0 { TensorType::new(t.dtype, [1]) } else { t.clone() };
        let lr = lt.rank();
        let id = super::identity(lr);
        let vmap = if r == 0 { super::map(1, &[]) } else { id.clone() };
        let mut ins = vec![super::Operand::new(p.clone(), &pt, super::map(lr, &[]))];
        ins.extend(values.iter().map(|vs| super::Operand::new(vs[k].clone(), t, vmap.clone())));
        let init = e.empty(&lt);
        let d = t.dtype;
        let y = super::generic(e, &vec![super::Iter::Parallel; lr], &ins, &[super::Operand::new(init, &lt, id)], |e, a| {
            if is_if {
                return vec![e.op(format!("arith.select {}, {}, {} : {d}", a[0], a[1], a[2]))];
            }
            let last = values.len() - 1;
            let mut v = a[1 + last].clone();
            for b in (0..last).rev() {
                let kb = e.scalar(pt.dtype, &b.to_string());
                let hit = e.op(format!("arith.cmpi eq, {}, {kb} : {}", a[0], pt.dtype));
                v = e.op(format!("arith.select {hit}, {}, {v} : {d}", a[1 + b]));
            }
            vec![v]
        })
        .remove(0);
        out.push(if r == 0 { e.op(format!("tensor.collapse_shape {y} [] : {lt} into {t}")) } else { y });
    }
    Ok(out)
}

/// Lowers one op of this family, returning its results' names (exhaustive over the family).
pub fn lower(e: &mut Emitter, cx: &Ctx, f: &Func, o: &Op, op: &ControlOp) -> Result<Vec<String>, LowerError> {
    match op {
        ControlOp::If { results } => lower_if(e, cx, f, o, results),
        ControlOp::While {} => lower_while(e, cx, f, o),
        ControlOp::Case { results } => lower_case(e, cx, f, o, results),
    }
}

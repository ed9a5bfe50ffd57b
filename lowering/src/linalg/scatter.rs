//! Lowering of scatter ops: a loop nest (`scf.for`, one loop per dim of the updates) over the
//! update elements, carrying the result tensor (initialised with the operand) as the loop's
//! iteration argument. Each step reads the start index of its window from the indices
//! (`tensor.extract` + `arith.index_cast`), checks that the window fits (an `scf.if` skips it
//! otherwise), reads the element it lands on, combines and `tensor.insert`s it back. One-shot
//! bufferization makes the carried tensor one buffer updated in place: no one-hot and no
//! operand-sized temporary per update (at most one copy of the operand, when it is still used
//! elsewhere). On a target whose computations are all kernels (`Target::parallel_outer`, the
//! GPU) the nest is the body of a one-iteration `scf.forall` over the result, so it becomes
//! a one-thread kernel: updates applied in order, any combiner, duplicate indices as on the
//! CPU (no atomics yet: a large scatter is slow there, not wrong).
use quabla_dialect::{Combiner, DType, Func, Op, ScatterOp};

use super::Emitter;
use crate::LowerError;

/// The scalar combine of `c` on dtype `d` (`a` the old element, `b` the update).
fn combine(e: &mut Emitter, c: Combiner, d: DType, a: &str, b: &str) -> String {
    let name = match (c, d.is_float(), d == DType::I1) {
        (Combiner::Set, _, _) => return b.to_string(),
        (Combiner::Add, true, _) => "arith.addf",
        (Combiner::Mul, true, _) => "arith.mulf",
        (Combiner::Min, true, _) => "arith.minimumf",
        (Combiner::Max, true, _) => "arith.maximumf",
        (Combiner::Add | Combiner::Max, false, true) => "arith.ori",
        (Combiner::Mul | Combiner::Min, false, true) => "arith.andi",
        (Combiner::Add, false, false) => "arith.addi",
        (Combiner::Mul, false, false) => "arith.muli",
        (Combiner::Min, false, false) if d.is_unsigned() => "arith.minui",
        (Combiner::Max, false, false) if d.is_unsigned() => "arith.maxui",
        (Combiner::Min, false, false) => "arith.minsi",
        (Combiner::Max, false, false) => "arith.maxsi",
    };
    e.op(format!("{name} {a}, {b} : {d}"))
}

/// `quabla.scatter*`.
pub fn lower_scatter(e: &mut Emitter, f: &Func, o: &Op, op: &ScatterOp) -> Result<String, LowerError> {
    let (xt, it, ut) = (f.ty(o.operands[0]).clone(), f.ty(o.operands[1]).clone(), f.ty(o.operands[2]).clone());
    let (x, idx, upd) = (e.name(o.operands[0]), e.name(o.operands[1]), e.name(o.operands[2]));
    let d = op.dims();
    let (r, q, ur) = (xt.rank(), it.rank(), ut.rank());
    let sdims = d.update_scatter_dims(ur);
    let wdims = d.window_operand_dims(r);
    let zero = e.index(0);
    let one = e.index(1);
    // On a target whose computations are all kernels, the nest runs inside a one-iteration
    // `scf.forall` (one GPU thread, in update order: any combiner, duplicates as on the CPU).
    let kernel = e.cg.target.parallel_outer().then(|| {
        let (res, t, out) = (e.fresh(), e.fresh(), e.fresh());
        e.raw_line(format!("{res} = scf.forall ({t}) in (1) shared_outs({out} = {x}) -> ({xt}) {{"));
        e.depth += 1;
        (res, out)
    });
    // Loop nest over the updates; each level carries the result tensor.
    let mut ivs = Vec::with_capacity(ur);
    let mut accs = vec![kernel.as_ref().map_or(x.clone(), |(_, out)| out.clone())];
    let mut results = Vec::with_capacity(ur);
    for k in 0..ur {
        let ub = e.index(ut.shape[k]);
        let (res, iv, acc) = (e.fresh(), e.fresh(), e.fresh());
        e.raw_line(format!("{res} = scf.for {iv} = {zero} to {ub} step {one} iter_args({acc} = {}) -> ({xt}) {{", accs[k]));
        e.depth += 1;
        ivs.push(iv);
        accs.push(acc);
        results.push(res);
    }
    let acc = accs[ur].clone();
    // Start index per operand dim (0 where the indices do not address it).
    let mut start: Vec<Option<String>> = vec![None; r];
    for (k, &od) in d.scatter_dims_to_operand_dims.iter().enumerate() {
        let mut pos: Vec<String> = sdims.iter().map(|&s| ivs[s].clone()).collect();
        if (d.index_vector_dim as usize) < q {
            let c = e.index(k as i64);
            pos.insert(d.index_vector_dim as usize, c);
        }
        let s = e.op(format!("tensor.extract {idx}[{}] : {it}", pos.join(", ")));
        start[od as usize] = Some(e.op(format!("arith.index_cast {s} : {} to index", it.dtype)));
    }
    // The window fits: 0 <= start and start + window extent <= operand extent.
    let mut ok: Option<String> = None;
    for (od, s) in start.iter().enumerate() {
        let Some(s) = s else { continue };
        let size = match wdims.iter().position(|&w| w == od) {
            Some(j) => ut.shape[d.update_window_dims[j] as usize],
            None => 1,
        };
        let hi = e.index(xt.shape[od] - size);
        let ge = e.op(format!("arith.cmpi sge, {s}, {zero} : index"));
        let le = e.op(format!("arith.cmpi sle, {s}, {hi} : index"));
        let both = e.op(format!("arith.andi {ge}, {le} : i1"));
        ok = Some(match ok {
            Some(prev) => e.op(format!("arith.andi {prev}, {both} : i1")),
            None => both,
        });
    }
    // The target element: start plus the window offset.
    let mut target = Vec::with_capacity(r);
    for (od, st) in start.iter().enumerate() {
        let off = wdims.iter().position(|&w| w == od).map(|j| ivs[d.update_window_dims[j] as usize].clone());
        target.push(match (st, off) {
            (Some(s), Some(o)) => e.op(format!("arith.addi {s}, {o} : index")),
            (Some(s), None) => s.clone(),
            (None, Some(o)) => o,
            (None, None) => zero.clone(),
        });
    }
    let tgt = target.join(", ");
    let write = |e: &mut Emitter| -> String {
        let u = e.op(format!("tensor.extract {upd}[{}] : {ut}", ivs.join(", ")));
        let v = if op.combiner() == Combiner::Set {
            u
        } else {
            let old = e.op(format!("tensor.extract {acc}[{tgt}] : {xt}"));
            combine(e, op.combiner(), xt.dtype, &old, &u)
        };
        e.op(format!("tensor.insert {v} into {acc}[{tgt}] : {xt}"))
    };
    let next = match ok {
        None => write(e),
        Some(ok) => e.if_else_keep(&ok, &xt, &acc, write),
    };
    let mut inner = next;
    for k in (0..ur).rev() {
        e.line(format!("scf.yield {inner} : {xt}"));
        e.depth -= 1;
        e.line("}");
        inner = results[k].clone();
    }
    let done = if ur == 0 { inner } else { results[0].clone() };
    Ok(match kernel {
        None => done,
        Some((res, out)) => {
            let zeros = vec!["0"; r].join(", ");
            let ones = vec!["1"; r].join(", ");
            let shape: Vec<String> = xt.shape.iter().map(|n| n.to_string()).collect();
            super::dot::end_forall_mapped(e, &[format!("{done} into {out}[{zeros}] [{}] [{ones}] : {xt} into {xt}", shape.join(", "))], "#gpu.block<x>");
            res
        }
    })
}

/// Lowers one op of this family, returning its result's name (exhaustive over the family).
pub fn lower(e: &mut Emitter, f: &Func, o: &Op, op: &ScatterOp) -> Result<String, LowerError> {
    match op {
        ScatterOp::Scatter { .. } => lower_scatter(e, f, o, op),
    }
}

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
use quabla_dialect::{Combiner, DType, Func, Op, ScatterOp, TensorType, Value};

use super::{close_nest, open_nest, Emitter, ForNest};
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

/// A tensor of type `xt` filled with the splat constant that defines `v` (a parallel generic
/// broadcasting the scalar, which the executor threads and vectorizes), if it is one of more
/// than [`SPLAT_FILL_MIN`] elements: fresh, or the function's output buffer `out`.
fn splat_fill(e: &mut Emitter, f: &Func, v: Value, xt: &TensorType, out: Option<&str>) -> Option<String> {
    if (xt.num_elements() as u64) <= SPLAT_FILL_MIN {
        return None;
    }
    let (c, st) = super::splat_scalar(e, f, v)?;
    let r = xt.rank();
    let target = match out {
        Some(out) => e.op(format!("bufferization.to_tensor {out} restrict writable : {} to {xt}", super::memref(xt))),
        None => e.empty(xt),
    };
    let res = super::generic(e, &vec![super::Iter::Parallel; r], &[super::Operand::new(c, &st, super::map(r, &[]))], &[super::Operand::new(target, xt, super::identity(r))], |_, a| vec![a[0].clone()]);
    Some(res[0].clone())
}

/// Splat operands of at most this many elements stay constants (small copies are cheap).
const SPLAT_FILL_MIN: u64 = 4096;

/// `quabla.scatter*`.
pub fn lower_scatter(e: &mut Emitter, f: &Func, o: &Op, op: &ScatterOp) -> Result<String, LowerError> {
    let (xt, it, ut) = (f.ty(o.operands[0]).clone(), f.ty(o.operands[1]).clone(), f.ty(o.operands[2]).clone());
    let (x, idx, upd) = (e.name(o.operands[0]), e.name(o.operands[1]), e.name(o.operands[2]));
    // A splat constant operand (the zeros a gather's gradient scatters into) is filled in a
    // fresh tensor: as the loop's init a dense constant is a read-only global that every call
    // copies (an embedding gradient of 50000 x 128: 3.9 ms, of which ~3 the copy).
    // Filled straight into the function's output buffer when the result is one.
    let out_buffer = e.out_buffer(o.results[0]).filter(|_| !e.cg.target.parallel_outer());
    let filled = splat_fill(e, f, o.operands[0], &xt, out_buffer.as_deref());
    let x = filled.clone().unwrap_or(x);
    let d = op.dims();
    let (r, q, ur) = (xt.rank(), it.rank(), ut.rank());
    let sdims = d.update_scatter_dims(ur);
    let wdims = d.window_operand_dims(r);
    let zero = e.index(0);
    // On a target whose computations are all kernels, the nest runs inside a one-iteration
    // `scf.forall` (one GPU thread, in update order: any combiner, duplicates as on the CPU).
    let kernel = e.cg.target.parallel_outer().then(|| {
        let (res, t, out) = (e.fresh(), e.fresh(), e.fresh());
        e.raw_line(format!("{res} = scf.forall ({t}) in (1) shared_outs({out} = {x}) -> ({xt}) {{"));
        e.depth += 1;
        (res, out)
    });
    // A result that is a destination-passing output of the function (or viewed as one) is
    // updated in the output's buffer: the operand is copied there first, so the loop carries
    // the output (one copy of the operand, not one into a new buffer and another into the
    // output). Only for an operand that is a parameter ([`super::reads_parameter`]).
    let dest = e.out_buffer(o.results[0]).filter(|_| kernel.is_none() && super::reads_parameter(f, o.operands[0]));
    // The operand's copy is a `linalg.copy` (split between the threads when large:
    // quabla_runtime's `parallel::tag_loops`), not bufferization's `memcpy` on one thread:
    // `x.at[64 rows].set(0.)` of a 1024^2 f32 matrix 301 us on the Xeon, JAX 252.
    let copy = |e: &mut Emitter, into: String| super::copy_into(e, &x, &xt, &into);
    let init = match dest {
        _ if filled.is_some() => x.clone(),
        Some(out) => {
            let o = e.op(format!("bufferization.to_tensor {out} restrict writable : {} to {xt}", super::memref(&xt)));
            copy(e, o)
        }
        None if kernel.is_none() && super::reads_parameter(f, o.operands[0]) => {
            let fresh = e.empty(&xt);
            copy(e, fresh)
        }
        None => kernel.as_ref().map_or(x.clone(), |(_, out)| out.clone()),
    };
    if kernel.is_none() && xt.rank() >= 2 && d.take_axis(&xt, &it, &ut) == Some(0) {
        return Ok(row_scatter(e, op.combiner(), &init, &xt, &idx, &it, &upd, &ut));
    }
    // Loop nest over the updates; each level carries the result tensor.
    let ForNest { ivs, acc, results } = open_nest(e, &ut.shape, &xt, init);
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
    let done = close_nest(e, &results, next, &xt);
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

/// A set or combine of whole rows (a take-form scatter along the first axis: `x.at[rows].set(v)`,
/// the gather VJP's `scatter_add`, a segment max) on the CPU: one step per index instead of one per element,
/// carrying the result tensor `init` (type `xt`). Each step reads its row index once, skips
/// the update when the row is out of bounds, and inserts the update's row (`tensor.insert_slice`
/// of a slice of the updates: a copy of the row) or combines it with the row's slice (a generic,
/// contiguous and vectorized), in index order as the element loop (the same results to the
/// bit: set's last writer wins, adds and products accumulate in order). Rows of 64 f32 by
/// element, a max over 1e5 rows into 1000 took 7.0 ms (JAX 1.0).
#[allow(clippy::too_many_arguments)]
fn row_scatter(e: &mut Emitter, c: Combiner, init: &str, xt: &TensorType, idx: &str, it: &TensorType, upd: &str, ut: &TensorType) -> String {
    let (q, r) = (it.rank(), xt.rank());
    let row_t = TensorType::new(xt.dtype, xt.shape[1..].to_vec());
    let row_dims: Vec<String> = xt.shape[1..].iter().map(|n| n.to_string()).collect();
    let zero = e.index(0);
    let ForNest { ivs, acc, results } = open_nest(e, &it.shape, xt, init.to_string());
    let s = e.op(format!("tensor.extract {idx}[{}] : {it}", ivs.join(", ")));
    let s = e.op(format!("arith.index_cast {s} : {} to index", it.dtype));
    let hi = e.index(xt.shape[0] - 1);
    let ge = e.op(format!("arith.cmpi sge, {s}, {zero} : index"));
    let le = e.op(format!("arith.cmpi sle, {s}, {hi} : index"));
    let ok = e.op(format!("arith.andi {ge}, {le} : i1"));
    let next = e.if_else_keep(&ok, xt, &acc, |e| {
        let ones = |n: usize| vec!["1"; n].join(", ");
        let u_off: Vec<String> = ivs.iter().cloned().chain(std::iter::repeat_n("0".to_string(), r - 1)).collect();
        let u_sizes: Vec<String> = std::iter::repeat_n("1".to_string(), q).chain(row_dims.iter().cloned()).collect();
        let row = e.op(format!("tensor.extract_slice {upd}[{}] [{}] [{}] : {ut} to {row_t}", u_off.join(", "), u_sizes.join(", "), ones(q + r - 1)));
        let x_off: Vec<String> = std::iter::once(s.clone()).chain(std::iter::repeat_n("0".to_string(), r - 1)).collect();
        let x_sizes: Vec<String> = std::iter::once("1".to_string()).chain(row_dims.iter().cloned()).collect();
        let slice = format!("[{}] [{}] [{}]", x_off.join(", "), x_sizes.join(", "), ones(r));
        let val = match c {
            Combiner::Set => row,
            Combiner::Add | Combiner::Mul | Combiner::Min | Combiner::Max => {
                let cur = e.op(format!("tensor.extract_slice {acc}{slice} : {xt} to {row_t}"));
                let id = super::identity(r - 1);
                super::generic(e, &vec![super::Iter::Parallel; r - 1], &[super::Operand::new(row, &row_t, id.clone())], &[super::Operand::new(cur, &row_t, id)], |e, a| vec![combine(e, c, xt.dtype, &a[1], &a[0])]).remove(0)
            }
        };
        e.op(format!("tensor.insert_slice {val} into {acc}{slice} : {row_t} into {xt}"))
    });
    close_nest(e, &results, next, xt)
}

/// Lowers one op of this family, returning its result's name (exhaustive over the family).
pub fn lower(e: &mut Emitter, f: &Func, o: &Op, op: &ScatterOp) -> Result<String, LowerError> {
    match op {
        ScatterOp::Scatter { .. } => lower_scatter(e, f, o, op),
    }
}

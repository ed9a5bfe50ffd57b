//! Lowering of slicing ops: `slice` (a strided `tensor.extract_slice`), `pad` (a fill with
//! the padding value, then a strided `tensor.insert_slice`: interior padding is the stride),
//! `concatenate` (`tensor.insert_slice`s into an empty tensor), `dynamic_slice` (start indices
//! clamped to [0, extent - size], then a dynamic-offset `tensor.extract_slice`) and `gather`
//! (a generic that `tensor.extract`s with the index clamped to [0, n - 1]) and
//! `dynamic_update_slice` (clamped starts, then a dynamic-offset `tensor.insert_slice` of the
//! update into the operand, which bufferization can do in place).
use quabla_dialect::{Func, Op, SlicingOp, TensorType};

use super::{generic, identity, list, map, Emitter, Iter, Operand};
use crate::LowerError;

/// `quabla.slice`.
pub fn lower_slice(e: &mut Emitter, f: &Func, o: &Op, start: &[i64], strides: &[i64]) -> Result<String, LowerError> {
    let (x, xt, out) = (e.name(o.operands[0]), f.ty(o.operands[0]), f.ty(o.results[0]));
    if xt == out {
        return Ok(x);
    }
    Ok(e.op(format!("tensor.extract_slice {x}[{}] [{}] [{}] : {xt} to {out}", list(start), list(&out.shape), list(strides))))
}

/// `quabla.pad`.
pub fn lower_pad(e: &mut Emitter, f: &Func, o: &Op, low: &[i64], interior: &[i64]) -> Result<String, LowerError> {
    let (x, xt, out) = (e.name(o.operands[0]), f.ty(o.operands[0]), f.ty(o.results[0]));
    if xt == out {
        return Ok(x);
    }
    let (pv, pt) = (e.name(o.operands[1]), f.ty(o.operands[1]));
    let filled = if e.cg.target.parallel_outer() {
        // The padding value broadcast by a kernel (not read on the host).
        let init = e.empty(out);
        generic(e, &vec![Iter::Parallel; out.rank()], &[Operand::new(pv, pt, map(out.rank(), &[]))], &[Operand::new(init, out, identity(out.rank()))], |_, a| vec![a[0].clone()]).remove(0)
    } else {
        let s = e.op(format!("tensor.extract {pv}[] : {pt}"));
        e.filled(out, &s)
    };
    let st: Vec<i64> = interior.iter().map(|i| i + 1).collect();
    Ok(e.op(format!("tensor.insert_slice {x} into {filled}[{}] [{}] [{}] : {xt} into {out}", list(low), list(&xt.shape), list(&st))))
}

/// `quabla.concatenate`.
pub fn lower_concatenate(e: &mut Emitter, f: &Func, o: &Op, dim: i64) -> Result<String, LowerError> {
    let out = f.ty(o.results[0]);
    if o.operands.len() == 1 {
        return Ok(e.name(o.operands[0]));
    }
    let mut acc = e.empty(out);
    let mut off = 0i64;
    let ones = vec![1; out.rank()];
    for v in &o.operands {
        let t = f.ty(*v);
        let mut offs = vec![0i64; out.rank()];
        offs[dim as usize] = off;
        let x = e.name(*v);
        acc = e.op(format!("tensor.insert_slice {x} into {acc}[{}] [{}] [{}] : {t} into {out}", list(&offs), list(&t.shape), list(&ones)));
        off += t.shape[dim as usize];
    }
    Ok(acc)
}

/// Clamps index `i` (an `index` value) to [0, hi].
fn clamp_index(e: &mut Emitter, i: &str, hi: i64) -> String {
    let z = e.index(0);
    let h = e.index(hi);
    let a = e.op(format!("arith.maxsi {i}, {z} : index"));
    e.op(format!("arith.minsi {a}, {h} : index"))
}

/// `quabla.dynamic_slice`.
pub fn lower_dynamic_slice(e: &mut Emitter, f: &Func, o: &Op, sizes: &[i64]) -> Result<String, LowerError> {
    let (x, xt, out) = (e.name(o.operands[0]), f.ty(o.operands[0]), f.ty(o.results[0]));
    if xt == out {
        return Ok(x);
    }
    let mut offs = Vec::new();
    for (k, v) in o.operands[1..].iter().enumerate() {
        let t = f.ty(*v);
        let s = e.op(format!("tensor.extract {}[] : {t}", e.name(*v)));
        let i = e.op(format!("arith.index_cast {s} : {} to index", t.dtype));
        offs.push(clamp_index(e, &i, xt.shape[k] - sizes[k]));
    }
    Ok(e.op(format!("tensor.extract_slice {x}[{}] [{}] [{}] : {xt} to {out}", offs.join(", "), list(sizes), list(&vec![1; sizes.len()]))))
}

/// Whether `v` is used after the op whose first result is `r`: by a later op of the block
/// holding that op (regions included) or by the block's outputs (the function's, or a
/// region body's yield).
fn used_after(f: &Func, r: quabla_dialect::Value, v: quabla_dialect::Value) -> bool {
    fn uses_in(ops: &[Op], v: quabla_dialect::Value) -> bool {
        let mut hit = false;
        quabla_dialect::walk_ops(ops, &mut |op: &Op| {
            hit |= op.operands.contains(&v) || op.regions.iter().any(|b| b.outputs.contains(&v));
        });
        hit
    }
    fn find(ops: &[Op], outputs: &[quabla_dialect::Value], r: quabla_dialect::Value, v: quabla_dialect::Value) -> Option<bool> {
        for (k, op) in ops.iter().enumerate() {
            if op.results.first() == Some(&r) {
                return Some(outputs.contains(&v) || uses_in(&ops[k + 1..], v));
            }
            for b in &op.regions {
                if let Some(x) = find(&b.ops, &b.outputs, r, v) {
                    return Some(x);
                }
            }
        }
        None
    }
    find(&f.ops, &f.outputs, r, v).unwrap_or(true)
}

/// `quabla.dynamic_update_slice`. The insert writes into the operand's buffer unless the
/// operand is still used after the update (later ops of its block, or the block's outputs):
/// then it is copied first. One-shot bufferization would copy it too, but after
/// `eliminate-empty-tensors` has placed the operand in the destination of the result, the
/// operand's own output would be read after the update (an upstream ordering hazard of
/// `materialize_in_destination`). Reads before the update (a loop's stacked outputs, a
/// cotangent accumulated into a window) leave it in place.
pub fn lower_dynamic_update_slice(e: &mut Emitter, f: &Func, o: &Op) -> Result<String, LowerError> {
    let (mut x, xt) = (e.name(o.operands[0]), f.ty(o.operands[0]));
    let (u, ut) = (e.name(o.operands[1]), f.ty(o.operands[1]));
    if xt == ut {
        return Ok(u);
    }
    if used_after(f, o.results[0], o.operands[0]) {
        let init = e.empty(xt);
        x = e.op(format!("linalg.copy ins({x} : {xt}) outs({init} : {xt}) -> {xt}"));
    }
    let mut offs = Vec::new();
    for (k, v) in o.operands[2..].iter().enumerate() {
        let t = f.ty(*v);
        let s = e.op(format!("tensor.extract {}[] : {t}", e.name(*v)));
        let i = e.op(format!("arith.index_cast {s} : {} to index", t.dtype));
        offs.push(clamp_index(e, &i, xt.shape[k] - ut.shape[k]));
    }
    Ok(e.op(format!("tensor.insert_slice {u} into {x}[{}] [{}] [{}] : {ut} into {xt}", offs.join(", "), list(&ut.shape), list(&vec![1; ut.rank()]))))
}

/// `quabla.gather`: result[p..., q..., s...] = x[p..., clamp(idx[q...]), s...].
pub fn lower_gather(e: &mut Emitter, f: &Func, o: &Op, axis: i64) -> Result<String, LowerError> {
    let (x, xt, out): (String, TensorType, &TensorType) = (e.name(o.operands[0]), f.ty(o.operands[0]).clone(), f.ty(o.results[0]));
    let (idx, it) = (e.name(o.operands[1]), f.ty(o.operands[1]));
    let (a, q, r) = (axis as usize, it.rank(), out.rank());
    let exprs: Vec<String> = (a..a + q).map(|i| format!("d{i}")).collect();
    let init = e.empty(out);
    let ins = [Operand::new(idx, it, map(r, &exprs))];
    let id = it.dtype;
    let res = generic(e, &vec![Iter::Parallel; r], &ins, &[Operand::new(init, out, identity(r))], |e, args| {
        let i = e.op(format!("arith.index_cast {} : {id} to index", args[0]));
        let c = clamp_index(e, &i, xt.shape[a] - 1);
        let coords: Vec<String> = (0..xt.rank())
            .map(|k| match k.cmp(&a) {
                std::cmp::Ordering::Equal => c.clone(),
                std::cmp::Ordering::Less => e.op(format!("linalg.index {k} : index")),
                std::cmp::Ordering::Greater => e.op(format!("linalg.index {} : index", k - 1 + q)),
            })
            .collect();
        vec![e.op(format!("tensor.extract {x}[{}] : {xt}", coords.join(", ")))]
    });
    Ok(res[0].clone())
}

/// Lowers one op of this family, returning its result's name (exhaustive over the family).
pub fn lower(e: &mut Emitter, f: &Func, o: &Op, op: &SlicingOp) -> Result<String, LowerError> {
    match op {
        SlicingOp::Concatenate { dim } => lower_concatenate(e, f, o, *dim),
        SlicingOp::Slice { start_indices: start, strides, .. } => lower_slice(e, f, o, start, strides),
        SlicingOp::Pad { edge_padding_low: low, interior_padding: interior, .. } => lower_pad(e, f, o, low, interior),
        SlicingOp::DynamicSlice { slice_sizes: sizes} => lower_dynamic_slice(e, f, o, sizes),
        SlicingOp::Gather { axis } => lower_gather(e, f, o, *axis),
        SlicingOp::DynamicUpdateSlice {} => lower_dynamic_update_slice(e, f, o),
    }
}

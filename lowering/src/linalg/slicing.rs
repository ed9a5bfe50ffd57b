//! Lowering of slicing ops: `slice` (a strided `tensor.extract_slice`), `pad` (a fill with
//! the padding value, of only the padding when the result is an output, then the operand
//! copied, or inserted when computed, into its strided slice: interior padding is the
//! stride; rows of a few elements padded along the last dim as one generic of selects;
//! read in place by elementwise consumers, elementwise::padded_reads),
//! `concatenate` (`tensor.insert_slice`s into an empty tensor), `dynamic_slice` (start indices
//! clamped to [0, extent - size], then a dynamic-offset `tensor.extract_slice`) and `gather`
//! (a generic that `tensor.extract`s with the index clamped to [0, n - 1]) and
//! `dynamic_update_slice` (clamped starts, then a dynamic-offset `tensor.insert_slice` of the
//! update into the operand, which bufferization can do in place). On a target whose
//! computations are all kernels (`Target::parallel_outer`, the GPU) no start is read on the
//! host: `dynamic_slice` is a generic over the result that reads the starts as 0-d inputs and
//! `tensor.extract`s the operand, `dynamic_update_slice` a generic over the operand that
//! selects the update's element inside the window.
use quabla_dialect::{ConstantOp, Func, Op, OpKind, SlicingOp, TensorType};

use quabla_dialect::size::saturating_product;

use super::{close_nest, defining, elementwise, generic, identity, list, map, open_nest, Emitter, ForNest, Iter, Operand};
use crate::LowerError;

/// `quabla.slice`.
pub fn lower_slice(e: &mut Emitter, f: &Func, o: &Op, start: &[i64], strides: &[i64]) -> Result<String, LowerError> {
    let (x, xt, out) = (e.name(o.operands[0]), f.ty(o.operands[0]), f.ty(o.results[0]));
    if xt == out {
        return Ok(x);
    }
    // A stride: a generic reading the operand through the strided map (LLVM vectorises it,
    // as interleaved loads along a strided last dim; the loop splits across threads; an
    // elementwise consumer fuses with it). A strided `extract_slice` that is materialised
    // became a `memrefCopy` on one thread, of one element per `memcpy` with a strided last
    // dim: `x[::2, ::2]` of a 1024^2 f32 matrix 590 -> 24 us on Zen 4 (JAX 28-48); `x[::2]`
    // of 4096 x 1024 270 -> 113 us (JAX 131-166).
    if strides.iter().any(|&s| s != 1) {
        let r = out.rank();
        let exprs: Vec<String> = (0..r).map(|i| format!("d{i} * {} + {}", strides[i], start[i])).collect();
        // A dim read from 0 with step 1 is `d_i` once the map is simplified, which gives its
        // loop the operand's extent: where the slice is shorter, the generic reads a view of
        // that length (`x[:-1, ::2]`).
        let short: Vec<bool> = (0..r).map(|i| strides[i] == 1 && start[i] == 0 && out.shape[i] < xt.shape[i]).collect();
        let (x, xt) = if short.contains(&true) {
            let sizes: Vec<i64> = (0..r).map(|i| if short[i] { out.shape[i] } else { xt.shape[i] }).collect();
            let vt = TensorType::new(xt.dtype, sizes.clone());
            (e.op(format!("tensor.extract_slice {x}[{}] [{}] [{}] : {xt} to {vt}", list(&vec![0; r]), list(&sizes), list(&vec![1; r]))), vt)
        } else {
            (x, xt.clone())
        };
        let init = e.empty(out);
        return Ok(generic(e, &vec![Iter::Parallel; r], &[Operand::new(x, &xt, map(r, &exprs))], &[Operand::new(init, out, identity(r))], |_, a| vec![a[0].clone()]).remove(0));
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
    let st: Vec<i64> = interior.iter().map(|i| i + 1).collect();
    if let Some(y) = short_rows_pad(e, f, o, low, interior) {
        return Ok(y);
    }
    let filled = if e.cg.target.parallel_outer() {
        // The padding value broadcast by a kernel (not read on the host).
        let init = e.empty(out);
        generic(e, &vec![Iter::Parallel; out.rank()], &[Operand::new(pv, pt, map(out.rank(), &[]))], &[Operand::new(init, out, identity(out.rank()))], |_, a| vec![a[0].clone()]).remove(0)
    } else {
        let s = e.op(format!("tensor.extract {pv}[] : {pt}"));
        // A result that is an output of the function (a gradient) fills only its padding in the
        // output's buffer: the operand's slice is written once, by its copy or by its producer
        // (the gradient of `sum(x[:, 1:-1] ** 2)` wrote all 16 MB of a 4096 x 1024 f32 result
        // twice: 910 -> 810 us, JAX 720; of `x[::2]` 670 -> 550, JAX 560-620). Into a new
        // tensor, a fill of its slice would be of a slice of an empty tensor, which
        // canonicalization makes a buffer of its own, copied in. Short rows padded along the
        // last dim are filled whole ([`narrow_rows`]).
        let regions = padding_regions(&xt.shape, &out.shape, low, &st).filter(|_| !narrow_rows(xt, out));
        match regions.and_then(|r| Some((e.output_tensor(o.results[0], out)?, r))) {
            Some((mut acc, regions)) => {
                for (offsets, sizes, strides) in regions {
                    let rt = TensorType::new(out.dtype, sizes);
                    acc = super::write_slice(e, &rt, (&acc, out), &list(&offsets), Some(&strides), |e, slot| super::fill_into(e, &s, &rt, slot));
                }
                acc
            }
            None => {
                let dst = e.output_or_empty(o.results[0], out);
                super::fill_into(e, &s, out, &dst)
            }
        }
    };
    if e.cg.target.parallel_outer() {
        return Ok(e.op(format!("tensor.insert_slice {x} into {filled}[{}] [{}] [{}] : {xt} into {out}", list(low), list(&xt.shape), list(&st))));
    }
    // A splat operand (a gradient's one-hot column: the cotangent of `x[:, 0]`) fills its
    // slice: its copy folded to an insert of the constant, a `memrefCopy` of one `memcpy` per
    // element down the column (the cross-entropy gradient of 65536 x 10: 849 us, JAX 514).
    if let Some((c, ct)) = super::splat_scalar(e, f, o.operands[0]) {
        let c = e.op(format!("tensor.extract {c}[] : {ct}"));
        return Ok(super::write_slice(e, xt, (&filled, out), &list(low), Some(&st), |e, slot| super::fill_into(e, &c, xt, slot)));
    }
    // On the CPU a copy loop (split between the threads when large): the plain insert was a
    // `memrefCopy` on one thread, a `memcpy` per row (per element with interior padding):
    // `pad(x, 8)` of a 1024^2 f32 matrix 447 us on the Xeon, JAX 344. A computed operand is
    // inserted: its producer writes the slice in place (copied, `pad(2 * x, 8)` took 686 us
    // against 219, JAX 280).
    if super::reads_parameter(f, o.operands[0]) {
        return Ok(super::insert_by_copy(e, &x, xt, &filled, out, &list(low), Some(&st)));
    }
    Ok(e.op(format!("tensor.insert_slice {x} into {filled}[{}] [{}] [{}] : {xt} into {out}", list(low), list(&xt.shape), list(&st))))
}

/// The widest rows (bytes of the result's last dim) for which a pad of the last dim fills the
/// whole result before the operand's copy, not its columns of padding: each column was a
/// strided pass over every line of the result, on one thread (Zen 4, two threads, 2026-12-07,
/// f32, regions -> whole fill, us, JAX in parentheses: a column each side of 100000 x 8 162 ->
/// 79 (118), 100000 x 16 by 1 385 -> 225 (434), 17 x 33 x 65 x 9 by 1 107 -> 49 (93), 100000 x
/// 30 1676 -> 891 (511-755)). The whole fill is one flat loop (quabla_runtime's flat_loops):
/// as a nest, LLVM vectorised its loop over rows with a scatter per column. At 512 bytes the
/// regions were as fast.
const NARROW_PAD_ROW_BYTES: i64 = 256;

/// Whether pad `xt -> out` pads the last dim of rows of at most [`NARROW_PAD_ROW_BYTES`].
fn narrow_rows(xt: &TensorType, out: &TensorType) -> bool {
    let r = out.rank();
    r >= 2 && xt.shape[r - 1] != out.shape[r - 1] && out.shape[r - 1].saturating_mul(out.dtype.size() as i64) <= NARROW_PAD_ROW_BYTES
}

/// Most slices a pad fills its padding with ([`padding_regions`]); more (a large interior
/// padding) fill the whole result first.
const MAX_PADDING_REGIONS: usize = 8;

/// The regions of a pad's result that are padding, as (offsets, sizes, strides) of disjoint
/// slices that cover them: along each padded dim k the edges before and after the operand and
/// each offset between its elements (interior padding), over the operand's positions along the
/// dims before k (the rest of those was padding of theirs) and the whole of the dims after it.
/// None when there are more than [`MAX_PADDING_REGIONS`] (or the operand is empty or cropped). Covering
/// the whole of the earlier dims wrote their padding twice: the gradient of `sum(x[::2, ::2]
/// ** 2)` filled the odd rows, then the odd columns of every row (4096 x 1024 f32: 905 us,
/// JAX 841).
fn padding_regions(x: &[i64], out: &[i64], low: &[i64], steps: &[i64]) -> Option<Vec<(Vec<i64>, Vec<i64>, Vec<i64>)>> {
    let inside = |k: usize| x[k] > 0 && low[k] >= 0 && low[k] + (x[k] - 1) * steps[k] < out[k];
    if !(0..out.len()).all(inside) {
        return None;
    }
    let mut regions = Vec::new();
    for k in 0..out.len() {
        let last = low[k] + (x[k] - 1) * steps[k];
        let mut along = |offset: i64, size: i64, stride: i64| {
            if size > 0 {
                let (mut o, mut n, mut st) = (vec![0; out.len()], out.to_vec(), vec![1; out.len()]);
                for j in 0..k {
                    (o[j], n[j], st[j]) = (low[j], x[j], steps[j]);
                }
                (o[k], n[k], st[k]) = (offset, size, stride);
                regions.push((o, n, st));
            }
        };
        along(0, low[k], 1);
        along(last + 1, out[k] - last - 1, 1);
        for t in 1..steps[k] {
            along(low[k] + t, x[k] - 1, steps[k]);
        }
        if regions.len() > MAX_PADDING_REGIONS {
            return None;
        }
    }
    Some(regions)
}

/// `quabla.concatenate`.
pub fn lower_concatenate(e: &mut Emitter, f: &Func, o: &Op, dim: i64) -> Result<String, LowerError> {
    let out = f.ty(o.results[0]);
    if o.operands.len() == 1 {
        return Ok(e.name(o.operands[0]));
    }
    // Into the output's buffer when the result is an output (through the reshapes below,
    // empty-tensor elimination did not place an empty tensor there: a copy).
    let mut acc = e.output_or_empty(o.results[0], out);
    let mut off = 0i64;
    let ones = vec![1; out.rank()];
    // The operands of a chain of concatenations along `dim` (`qb.stack`, `qb.concatenate` of
    // several arrays: pairwise ops), each copied once into this result: copying the growing
    // prefix at every step was quadratic (a stack of 8 256^2 f32 210 -> 45 us on Zen 4, JAX
    // 43-46). The inner results, unused, go; one used elsewhere is still built there.
    let mut leaves = Vec::new();
    let mut todo: Vec<quabla_dialect::Value> = o.operands.iter().rev().copied().collect();
    while let Some(v) = todo.pop() {
        match defining(f, v) {
            Some(inner) if matches!(inner.kind, OpKind::Slicing(SlicingOp::Concatenate { dim: d }) if d == dim) => todo.extend(inner.operands.iter().rev().copied()),
            _ => leaves.push(v),
        }
    }
    if let Some(r) = short_rows_concat(e, f, out, dim, &leaves) {
        return Ok(r);
    }
    for v in &leaves {
        let t = f.ty(*v);
        let mut offs = vec![0i64; out.rank()];
        offs[dim as usize] = off;
        let x = e.name(*v);
        // A large parameter concatenated along a later dim is copied chunk by chunk (each
        // contiguous run of it one memcpy) in an `scf.forall` over the dims before `dim` on the
        // threads: the plain insert became one `memref.copy` on one thread (a memcpy per row:
        // two 1024^2 f32 along axis 1 took 266 us on Zen 4, JAX 92). A computed operand keeps
        // the plain insert: its producer can write the slice itself.
        let d = dim as usize;
        let lead = &t.shape[..d];
        if d > 0 && f.params.contains(v) && !e.cg.target.parallel_outer() && par_copies(e, t, lead) {
            // The dims before `dim` as one (the operand and the result are contiguous): a
            // loop over three of them spent its steps on their indices (two [17, 33, 65, 9]
            // f32 along the last dim 98 us; as [36465, 9] 47, JAX 51-69).
            let steps = saturating_product(lead.iter().copied());
            let (xt2, ot2) = (TensorType::new(t.dtype, [steps].into_iter().chain(t.shape[d..].iter().copied()).collect::<Vec<_>>()), TensorType::new(out.dtype, [steps].into_iter().chain(out.shape[d..].iter().copied()).collect::<Vec<_>>()));
            let (x2, acc2) = (super::layout::reshape(e, &x, t, &xt2), super::layout::reshape(e, &acc, out, &ot2));
            let r2 = xt2.rank();
            let chunk = TensorType::new(t.dtype, t.shape[d..].to_vec());
            let sizes: Vec<String> = std::iter::once("1".to_string()).chain(t.shape[d..].iter().map(|n| n.to_string())).collect();
            let ones2 = vec![1; r2];
            let y = slice_loop(e, &[steps], &ot2, acc2, true, |e, ivs, inner| {
                let zeros = std::iter::repeat_n("0".to_string(), r2 - 1);
                let x_off: Vec<String> = ivs.iter().cloned().chain(zeros.clone()).collect();
                let c = e.op(format!("tensor.extract_slice {x2}[{}] [{}] [{}] : {xt2} to {chunk}", x_off.join(", "), sizes.join(", "), list(&ones2)));
                let mut o_off: Vec<String> = ivs.iter().cloned().chain(zeros).collect();
                o_off[1] = off.to_string();
                format!("{c} into {inner}[{}] [{}] [{}] : {chunk} into {ot2}", o_off.join(", "), sizes.join(", "), list(&ones2))
            });
            acc = super::layout::reshape(e, &y, &ot2, out);
        } else if d == 0 && !e.cg.target.parallel_outer() && super::reads_parameter(f, *v) && out.checked_byte_size().is_none_or(|b| b as i64 >= PAR_ROW_GATHER_BYTES) {
            // A parameter (or its reshape: `qb.stack`) into a large result along the first dim:
            // a copy loop the executor splits between the threads (`insert_by_copy`), not a
            // `memcpy` on one thread (a stack of 8 256^2 f32 148 us, JAX 137-152).
            acc = super::insert_by_copy(e, &x, t, &acc, out, &list(&offs), None);
        } else if !e.cg.target.parallel_outer() && sliced_parameter(f, *v) {
            // A slice of a parameter (the gradient of `sum(x[:, :n] * x[:, n:])` is the halves
            // swapped): a copy loop, not a strided `memref.copy` (the runtime's element-wise
            // `memrefCopy`: 1560 us for 4096 x 1024 f32, JAX 740).
            acc = super::insert_by_copy(e, &x, t, &acc, out, &list(&offs), None);
        } else {
            acc = e.op(format!("tensor.insert_slice {x} into {acc}[{}] [{}] [{}] : {t} into {out}", list(&offs), list(&t.shape), list(&ones)));
        }
        off += t.shape[dim as usize];
    }
    Ok(acc)
}

/// Whether `v` is a slice of a parameter (or of its reshape, [`super::reads_parameter`]): a view
/// of a buffer no op writes, which a concatenation copies.
fn sliced_parameter(f: &Func, v: quabla_dialect::Value) -> bool {
    matches!(defining(f, v), Some(op) if matches!(op.kind, OpKind::Slicing(SlicingOp::Slice { .. })) && super::reads_parameter(f, op.operands[0]))
}

/// The least elements of a result [`short_rows_concat`] writes as one generic (a small one
/// keeps its inserts).
const SHORT_CONCAT_MIN_ELEMENTS: i64 = 4096;

/// A concatenation along the last dim of a result whose rows are short (at most
/// `tiling::UNROLL_INNER`, the rows the loop script writes out; at 16 the generic's selects
/// and gathers ran per element: two 100000 x 8 f32 113 -> 547 us, JAX 85) as one generic over the result: element `j` of a row is read from
/// the operand whose columns hold it (`tensor.extract` at its clamped column, a select by
/// `j`). Inserted operand by operand, each row of each operand was a copy of a few elements
/// (`concatenate([p, ones], 1)` of 100000 x 3 and x 1 f32: 342 us, JAX 49); as one loop per
/// row writing the whole row, its short inner loop written out (a dear body of the loop
/// script: quabla_runtime's `written_out`), LLVM vectorizes it across rows. None when the
/// concatenation is not such.
fn short_rows_concat(e: &mut Emitter, f: &Func, out: &TensorType, dim: i64, leaves: &[quabla_dialect::Value]) -> Option<String> {
    let r = out.rank();
    let width = *out.shape.last()?;
    if r < 2 || dim as usize != r - 1 || width > crate::tiling::UNROLL_INNER || leaves.len() < 2 || (out.num_elements() as i64) < SHORT_CONCAT_MIN_ELEMENTS || e.cg.target.parallel_outer() {
        return None;
    }
    let parts: Vec<(String, TensorType)> = leaves.iter().map(|v| (e.name(*v), f.ty(*v).clone())).collect();
    let init = e.empty(out);
    let d = out.dtype;
    let y = generic(e, &vec![Iter::Parallel; r], &[], &[Operand::new(init, out, identity(r))], |e, _| {
        let idx: Vec<String> = (0..r).map(|k| e.op(format!("linalg.index {k} : index"))).collect();
        let j = &idx[r - 1];
        let mut off = 0i64;
        let mut picks: Vec<(i64, String)> = Vec::new();
        for (x, t) in &parts {
            let w = t.shape[r - 1];
            let o = e.index(off);
            let local = e.op(format!("arith.subi {j}, {o} : index"));
            let col = clamp_index(e, &local, w - 1);
            let at: Vec<String> = idx[..r - 1].iter().cloned().chain(std::iter::once(col)).collect();
            let v = e.op(format!("tensor.extract {x}[{}] : {t}", at.join(", ")));
            picks.push((off, v));
            off += w;
        }
        // From the last operand back: below an operand's first column, the one before it.
        let (mut next, mut v) = picks.pop().expect("two operands or more");
        while let Some((o, x)) = picks.pop() {
            let b = e.index(next);
            let lt = e.op(format!("arith.cmpi ult, {j}, {b} : index"));
            v = e.op(format!("arith.select {lt}, {x}, {v} : {d}"));
            next = o;
        }
        vec![v]
    });
    Some(y.into_iter().next().expect("one result"))
}

/// A pad of the last dim of a result whose rows are short (at most `tiling::UNROLL_INNER`, as
/// [`short_rows_concat`]): the padding of the earlier dims filled ([`padding_regions`] of
/// whole rows), then the operand's rows as one generic over their slice of the result, each
/// element the operand's at its clamped column or, outside the operand's columns, the padding
/// value (a compare and a select; the executor writes the short row out). Filled, then its
/// columns of padding written and the operand copied row by row, each pass was strided or a
/// few elements long: `pad` of a column before 100000 x 3 f32 (homogeneous points) 127 us, JAX
/// 53. None when the pad is not such (interior padding, a cropped dim, a small result).
fn short_rows_pad(e: &mut Emitter, f: &Func, o: &Op, low: &[i64], interior: &[i64]) -> Option<String> {
    let (xt, out) = (f.ty(o.operands[0]), f.ty(o.results[0]));
    let r = out.rank();
    let width = *out.shape.last()?;
    if r < 2 || width > crate::tiling::UNROLL_INNER || width == xt.shape[r - 1] || (out.num_elements() as i64) < SHORT_CONCAT_MIN_ELEMENTS || e.cg.target.parallel_outer() {
        return None;
    }
    if interior.iter().any(|&i| i != 0) || xt.num_elements() == 0 || (0..r).any(|k| low[k] < 0 || low[k] + xt.shape[k] > out.shape[k]) {
        return None;
    }
    let (x, pv, pt) = (e.name(o.operands[0]), e.name(o.operands[1]), f.ty(o.operands[1]));
    let fill = e.op(format!("tensor.extract {pv}[] : {pt}"));
    // The earlier dims' padding: whole rows (the last dim's taken as unpadded).
    let rows: Vec<i64> = xt.shape[..r - 1].iter().copied().chain([width]).collect();
    let row_low: Vec<i64> = low[..r - 1].iter().copied().chain([0]).collect();
    let regions = padding_regions(&rows, &out.shape, &row_low, &vec![1; r])?;
    let mut acc = e.output_or_empty(o.results[0], out);
    for (offsets, sizes, strides) in regions {
        let rt = TensorType::new(out.dtype, sizes);
        acc = super::write_slice(e, &rt, (&acc, out), &list(&offsets), Some(&strides), |e, slot| super::fill_into(e, &fill, &rt, slot));
    }
    let (l, n, w) = (low[r - 1], xt.shape[r - 1], xt.shape[r - 1]);
    let rt = TensorType::new(out.dtype, rows.clone());
    let d = out.dtype;
    let body = |e: &mut Emitter, slot: &str| {
        let y = generic(e, &vec![Iter::Parallel; r], &[], &[Operand::new(slot.to_string(), &rt, identity(r))], |e, _| {
            let mut at: Vec<String> = (0..r).map(|k| e.op(format!("linalg.index {k} : index"))).collect();
            let lo = e.index(l);
            let local = e.op(format!("arith.subi {}, {lo} : index", at[r - 1]));
            let nn = e.index(n);
            // Unsigned: a negative column is outside too.
            let inside = e.op(format!("arith.cmpi ult, {local}, {nn} : index"));
            at[r - 1] = clamp_index(e, &local, w - 1);
            let v = e.op(format!("tensor.extract {x}[{}] : {xt}", at.join(", ")));
            vec![e.op(format!("arith.select {inside}, {v}, {fill} : {d}"))]
        });
        y.into_iter().next().expect("one result")
    };
    if rows == out.shape {
        return Some(body(e, &acc));
    }
    Some(super::write_slice(e, &rt, (&acc, out), &list(&row_low), None, body))
}

/// Clamps index `i` (an `index` value) to [0, hi].
fn clamp_index(e: &mut Emitter, i: &str, hi: i64) -> String {
    let z = e.index(0);
    let h = e.index(hi);
    let a = e.op(format!("arith.maxsi {i}, {z} : index"));
    e.op(format!("arith.minsi {a}, {h} : index"))
}

/// `quabla.dynamic_slice`. On a target whose computations are all kernels
/// ([`super::super::target::Target::parallel_outer`]) the starts are read inside the kernel
/// ([`kernel_dynamic_slice`]).
pub fn lower_dynamic_slice(e: &mut Emitter, f: &Func, o: &Op, sizes: &[i64]) -> Result<String, LowerError> {
    let (x, xt, out) = (e.name(o.operands[0]), f.ty(o.operands[0]), f.ty(o.results[0]));
    if xt == out {
        return Ok(x);
    }
    if e.cg.target.parallel_outer() {
        return Ok(kernel_dynamic_slice(e, f, o, sizes));
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

/// The 0-d start operands `starts` of `o` as generic inputs (their scalars become block
/// arguments, read inside the kernel) for a loop nest of rank `r`.
fn start_operands(e: &Emitter, f: &Func, starts: &[quabla_dialect::Value], r: usize) -> Vec<Operand> {
    starts.iter().map(|v| Operand::new(e.name(*v), f.ty(*v), map(r, &[]))).collect()
}

/// The clamped starts inside a generic body: `args` the start scalars (of `dtypes`), `his`
/// the largest start per dimension.
fn kernel_starts(e: &mut Emitter, args: &[String], dtypes: &[quabla_dialect::DType], his: &[i64]) -> Vec<String> {
    args.iter().zip(dtypes).zip(his).map(|((a, d), hi)| {
        let i = e.op(format!("arith.index_cast {a} : {d} to index"));
        clamp_index(e, &i, *hi)
    }).collect()
}

/// `quabla.dynamic_slice` as one kernel over the result: each element reads its start
/// indices (block arguments), clamps them, and `tensor.extract`s the operand at start + index.
fn kernel_dynamic_slice(e: &mut Emitter, f: &Func, o: &Op, sizes: &[i64]) -> String {
    let (x, xt, out) = (e.name(o.operands[0]), f.ty(o.operands[0]).clone(), f.ty(o.results[0]));
    let r = out.rank();
    let ins = start_operands(e, f, &o.operands[1..], r);
    let dtypes: Vec<_> = o.operands[1..].iter().map(|v| f.ty(*v).dtype).collect();
    let his: Vec<i64> = (0..r).map(|k| xt.shape[k] - sizes[k]).collect();
    let init = e.empty(out);
    generic(e, &vec![Iter::Parallel; r], &ins, &[Operand::new(init, out, identity(r))], |e, args| {
        let offs = kernel_starts(e, &args[..r], &dtypes, &his);
        let coords: Vec<String> = offs.iter().enumerate().map(|(k, off)| {
            let i = e.op(format!("linalg.index {k} : index"));
            e.op(format!("arith.addi {i}, {off} : index"))
        }).collect();
        vec![e.op(format!("tensor.extract {x}[{}] : {xt}", coords.join(", ")))]
    })
    .remove(0)
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
/// operand is a parameter or still used after the update (later ops of its block, or the
/// block's outputs): then it is copied first. One-shot bufferization would copy it too, but after
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
    // A parameter (or its reshape) is not writable: copied here by a loop the threads may
    // split, rather than by bufferization's `memref.copy` on one thread (`x.at[:, 3].set(0)`
    // of 4096 x 1024 f32: 2.4 ms, JAX 0.8). The kernel form reads it and writes a new buffer.
    let param = !e.cg.target.parallel_outer() && super::reads_parameter(f, o.operands[0]);
    if param || used_after(f, o.results[0], o.operands[0]) {
        let init = e.empty(xt);
        x = super::copy_into(e, &x, xt, &init);
    }
    if e.cg.target.parallel_outer() {
        return Ok(kernel_dynamic_update_slice(e, f, o, &x));
    }
    let mut offs = Vec::new();
    for (k, v) in o.operands[2..].iter().enumerate() {
        let t = f.ty(*v);
        let s = e.op(format!("tensor.extract {}[] : {t}", e.name(*v)));
        let i = e.op(format!("arith.index_cast {s} : {} to index", t.dtype));
        offs.push(clamp_index(e, &i, xt.shape[k] - ut.shape[k]));
    }
    if ut.num_elements() == 1 {
        // One element (a scan's stacked scalar output): its value inserted. The extract reads
        // the update where it is computed (a loop's old carry is read before its new value is
        // written, so that value's buffer is the carry's own), where the slice copy read it
        // after: a new carry buffer each iteration (10000 steps of a scalar scan 98 us, JAX 50).
        let zero = e.index(0);
        let zeros = vec![zero; ut.rank()];
        let v = e.op(format!("tensor.extract {u}[{}] : {ut}", zeros.join(", ")));
        return Ok(e.op(format!("tensor.insert {v} into {x}[{}] : {xt}", offs.join(", "))));
    }
    Ok(e.op(format!("tensor.insert_slice {u} into {x}[{}] [{}] [{}] : {ut} into {xt}", offs.join(", "), list(&ut.shape), list(&vec![1; ut.rank()]))))
}

/// `quabla.dynamic_update_slice` as one kernel over the operand `x` (already copied when it
/// is used later): each element reads the start indices (block arguments), clamps them, and
/// takes the update's element when it lies in the window (the update is read at an index
/// clamped into it, so no read is out of bounds), else its own.
fn kernel_dynamic_update_slice(e: &mut Emitter, f: &Func, o: &Op, x: &str) -> String {
    let (xt, u, ut) = (f.ty(o.operands[0]).clone(), e.name(o.operands[1]), f.ty(o.operands[1]).clone());
    let r = xt.rank();
    let mut ins = vec![Operand::new(x.to_string(), &xt, identity(r))];
    ins.extend(start_operands(e, f, &o.operands[2..], r));
    let dtypes: Vec<_> = o.operands[2..].iter().map(|v| f.ty(*v).dtype).collect();
    let his: Vec<i64> = (0..r).map(|k| xt.shape[k] - ut.shape[k]).collect();
    let init = e.empty(&xt);
    let el = xt.dtype;
    generic(e, &vec![Iter::Parallel; r], &ins, &[Operand::new(init, &xt, identity(r))], |e, args| {
        let offs = kernel_starts(e, &args[1..=r], &dtypes, &his);
        let mut inside: Option<String> = None;
        let mut coords = Vec::new();
        for (k, off) in offs.iter().enumerate() {
            let i = e.op(format!("linalg.index {k} : index"));
            let rel = e.op(format!("arith.subi {i}, {off} : index"));
            let n = e.index(ut.shape[k]);
            // Unsigned: a negative offset is a large index, outside too.
            let ok = e.op(format!("arith.cmpi ult, {rel}, {n} : index"));
            inside = Some(match inside {
                None => ok,
                Some(p) => e.op(format!("arith.andi {p}, {ok} : i1")),
            });
            coords.push(clamp_index(e, &rel, ut.shape[k] - 1));
        }
        let v = e.op(format!("tensor.extract {u}[{}] : {ut}", coords.join(", ")));
        let inside = inside.expect("rank >= 1: a 0-d update equals the operand's type");
        vec![e.op(format!("arith.select {inside}, {v}, {} : {el}", args[0]))]
    })
    .remove(0)
}

/// `quabla.gather`: result[p..., q..., s...] = x[p..., clamp(idx[q...]), s...].
pub fn lower_gather(e: &mut Emitter, f: &Func, o: &Op, axis: i64) -> Result<String, LowerError> {
    let (x, xt, out): (String, TensorType, &TensorType) = (e.name(o.operands[0]), f.ty(o.operands[0]).clone(), f.ty(o.results[0]));
    let (idx, it) = (e.name(o.operands[1]), f.ty(o.operands[1]));
    let (a, q, r) = (axis as usize, it.rank(), out.rank());
    // A constant 1-D index that is an arithmetic progression inside the axis (a reversal,
    // `x[:, ::-1]`, `qb.flip`; a negative-step slice): the position computed, no index reads
    // (`x[:, ::-1]` of 1024^2 f32 224 -> 48 us on Zen 4, JAX 54).
    if let Some(p) = stepped(f, o) {
        // The position computed in the body (linalg's maps take no negative coefficients).
        // A chain of such gathers (`x[::-1, ::-1]`: one per axis) reads the first one's
        // operand with the positions composed, in one pass (the inner gathers' generics,
        // unused, go): 1024^2 f32 133 -> 50 us on Zen 4 (JAX 59-63).
        let mut steps = vec![p];
        let mut src = o.operands[0];
        while let Some((inner, p)) = defining(f, src).and_then(|d| stepped(f, d).map(|p| (d.operands[0], p))) {
            steps.push(p);
            src = inner;
        }
        let (x, xt) = (e.name(src), f.ty(src).clone());
        let init = e.empty(out);
        return Ok(generic(e, &vec![Iter::Parallel; r], &[], &[Operand::new(init, out, identity(r))], |e, _| {
            let mut coords: Vec<String> = (0..r).map(|i| e.op(format!("linalg.index {i} : index"))).collect();
            // Outermost gather first: each maps its result's position along its axis to its
            // operand's.
            for &(a, first, step) in &steps {
                let (cs, cf) = (e.index(step), e.index(first));
                let scaled = e.op(format!("arith.muli {}, {cs} : index", coords[a]));
                coords[a] = e.op(format!("arith.addi {scaled}, {cf} : index"));
            }
            vec![e.op(format!("tensor.extract {x}[{}] : {xt}", coords.join(", ")))]
        })
        .remove(0));
    }
    if !e.cg.target.parallel_outer() && saturating_product(xt.shape[a + 1..].iter().copied()) >= ROW_GATHER_ELEMENTS {
        return Ok(row_gather(e, (&x, &xt), (&idx, it), out, a));
    }
    let exprs: Vec<String> = (a..a + q).map(|i| format!("d{i}")).collect();
    // Reads at the indices' positions of a large operand miss the caches: the loop may be
    // split even when the streamed-read cost would keep it on one thread.
    if xt.num_elements() as i64 >= elementwise::GATHER_SOURCE_ELEMENTS {
        super::split_candidate(e, &vec![Iter::Parallel; r], &out.shape, elementwise::GATHER_READ_COST);
    }
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

/// `(axis, first, step)` when `o` is a gather whose index is a constant 1-D arithmetic
/// progression ([`progression`]) inside its axis (a reversal, `x[:, ::-1]`, `qb.flip`; a
/// negative-step slice): its result at position p along the axis is the operand's at
/// `first + step * p`.
fn stepped(f: &Func, o: &Op) -> Option<(usize, i64, i64)> {
    let OpKind::Slicing(SlicingOp::Gather { axis }) = o.kind else {
        return None;
    };
    let (a, xt, it) = (axis as usize, f.ty(o.operands[0]), f.ty(*o.operands.get(1)?));
    if it.rank() != 1 {
        return None;
    }
    let (first, step) = progression(f, o.operands[1])?;
    let last = step.checked_mul(it.shape[0] - 1).and_then(|d| d.checked_add(first))?;
    ((0..xt.shape[a]).contains(&first) && (0..xt.shape[a]).contains(&last)).then_some((a, first, step))
}

/// `(first, step)` when `v` is a constant 1-D integer array of at least two elements
/// `first + step * i` (step nonzero).
fn progression(f: &Func, v: quabla_dialect::Value) -> Option<(i64, i64)> {
    let mut lit = None;
    f.walk(&mut |op| {
        if let (OpKind::Constant(ConstantOp::Constant { value }), Some(&r)) = (&op.kind, op.results.first()) {
            if r == v {
                lit = Some(value);
            }
        }
    });
    let lit = lit?;
    let n = lit.len();
    if lit.ty.rank() != 1 || n < 2 || !lit.ty.dtype.is_int() {
        return None;
    }
    let (first, step) = (lit.get_i64(0), lit.get_i64(1).checked_sub(lit.get_i64(0))?);
    (step != 0 && (2..n).all(|i| Some(lit.get_i64(i)) == step.checked_mul(i as i64).and_then(|d| d.checked_add(first)))).then_some((first, step))
}

/// Contiguous elements per gathered slice (the operand's extents after the gathered axis)
/// from which a gather copies whole slices ([`row_gather`]) instead of one generic over its
/// result. The generic reads the index in its innermost loop, where LLVM cannot hoist it (the
/// output store may alias it): on Zen 4 its loop stays scalar (a gather's cost), taking 4096
/// rows of a 1024^2 f32 matrix in 1166 us against JAX's 303.
pub const ROW_GATHER_ELEMENTS: i64 = 64;

/// Result bytes from which a row gather splits its slices between the threads (one `scf.forall`
/// over them; below, an `scf.for` nest).
pub const PAR_ROW_GATHER_BYTES: i64 = 1 << 20;

/// `quabla.gather` along `a` as one copy per gathered slice: a loop over the result's leading
/// extents (the operand's before `a`, then the index's) reads the index once, clamps it, and
/// copies the operand's slice at it (`tensor.extract_slice`, contiguous: a `memcpy` after
/// bufferization) into the result. An `scf.forall` on several threads for large results.
fn row_gather(e: &mut Emitter, (x, xt): (&str, &TensorType), (idx, it): (&str, &TensorType), out: &TensorType, a: usize) -> String {
    let q = it.rank();
    let lead = &out.shape[..a + q];
    let trailing = &xt.shape[a + 1..];
    let row_t = TensorType::new(xt.dtype, trailing.to_vec());
    let ones = |n: usize| list(&vec![1; n]);
    let init = e.empty(out);
    let par = par_copies(e, out, lead);
    // The copy of one slice, at the loop's induction variables `ivs`; returns the
    // `<row> into <acc>[...]` text of its insert.
    let copy = |e: &mut Emitter, ivs: &[String], acc: &str| -> String {
        let s = e.op(format!("tensor.extract {idx}[{}] : {it}", ivs[a..].join(", ")));
        let s = e.op(format!("arith.index_cast {s} : {} to index", it.dtype));
        let s = clamp_index(e, &s, xt.shape[a] - 1);
        let x_off: Vec<String> = ivs[..a].iter().cloned().chain(std::iter::once(s)).chain(trailing.iter().map(|_| "0".to_string())).collect();
        let x_sizes: Vec<String> = std::iter::repeat_n("1".to_string(), a + 1).chain(trailing.iter().map(|n| n.to_string())).collect();
        let row = e.op(format!("tensor.extract_slice {x}[{}] [{}] [{}] : {xt} to {row_t}", x_off.join(", "), x_sizes.join(", "), ones(xt.rank())));
        let o_off: Vec<String> = ivs.iter().cloned().chain(trailing.iter().map(|_| "0".to_string())).collect();
        let o_sizes: Vec<String> = std::iter::repeat_n("1".to_string(), a + q).chain(trailing.iter().map(|n| n.to_string())).collect();
        format!("{row} into {acc}[{}] [{}] [{}] : {row_t} into {out}", o_off.join(", "), o_sizes.join(", "), ones(out.rank()))
    };
    slice_loop(e, lead, out, init, par, copy)
}

/// Whether slice copies of `t` (bytes) over a loop of `lead` steps split between the threads:
/// from [`PAR_ROW_GATHER_BYTES`] and at least a step per thread.
fn par_copies(e: &Emitter, t: &TensorType, lead: &[i64]) -> bool {
    let threads = e.threads();
    threads > 1 && t.checked_byte_size().is_none_or(|b| b as i64 >= PAR_ROW_GATHER_BYTES) && saturating_product(lead.iter().copied()) >= threads
}

/// A loop over `lead` carrying `init` (type `out`) whose step `step(e, ivs, acc)` returns the
/// `<slice> into <acc>[...]` text of the one slice it inserts: an `scf.forall` (parallel
/// inserts) with `par`, else an `scf.for` nest. Returns the result. Shared by the row gather
/// and the concatenation of large parameters.
fn slice_loop(e: &mut Emitter, lead: &[i64], out: &TensorType, init: String, par: bool, step: impl FnOnce(&mut Emitter, &[String], &str) -> String) -> String {
    if par {
        let ivs: Vec<String> = lead.iter().map(|_| e.fresh()).collect();
        let (acc, res) = (e.fresh(), e.fresh());
        e.raw_line(format!("{res} = scf.forall ({}) in ({}) shared_outs({acc} = {init}) -> ({out}) {{", ivs.join(", "), list(lead)));
        e.depth += 1;
        let into = step(e, &ivs, &acc);
        super::dot::end_forall(e, &into);
        return res;
    }
    let ForNest { ivs, acc, results } = open_nest(e, lead, out, init);
    let into = step(e, &ivs, &acc);
    let next = e.op(format!("tensor.insert_slice {into}"));
    close_nest(e, &results, next, out)
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

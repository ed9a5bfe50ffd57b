//! Lowering of the sort family (`sort`, `argsort`): one call of a runtime kernel
//! `quabla_sort_<dtype>` / `quabla_argsort_<dtype>_<index dtype>` (dtypes spelled as MLIR
//! does, `ui32` apart from `i32`) on unranked memrefs (operand, read in place, and result, then
//! the dimension, `1` for descending, the leading places read and the threads as `i64`s),
//! declared with `llvm.emit_c_interface` like the linear-algebra kernels
//! (crate::linalg::linalg, whose call emission this shares). The kernels
//! (runtime/src/sort_kernels.rs) sort each lane in O(n log n): a stable order that is NumPy's
//! total order (NaN last ascending, first descending; -0.0 ties 0.0).
//!
//! On a target whose computations are all kernels (`Target::parallel_outer`, the GPU) there is
//! no kernel to call: each element's place in its lane is counted, in parallel over every
//! element, as the number of lane elements before it in that order (ties by position, so
//! the order is the same stable one), and a second loop nest, parallel over the result, takes
//! for place k the element (or, for argsort, the position) whose count is k. Both are
//! O(n^2) comparisons per lane of n: right for every length, slow for long lanes (a
//! merge or radix sort is what those need).
use quabla_dialect::{CmpDir, DType, Func, Module, Op, OpKind, SlicingOp, SortOp, TensorType};

use super::linalg::{call_kernel, declare, unranked};
use super::{generic, map, Emitter, Iter, Operand};
use crate::LowerError;

/// The kernel's symbol and its argument types for `op` on an operand of dtype `d`.
pub fn kernel(op: &SortOp, d: DType) -> (String, Vec<String>) {
    let (name, out) = match op {
        SortOp::Sort { .. } => (format!("quabla_sort_{}", d.mlir()), d),
        SortOp::Argsort { index, .. } => (format!("quabla_argsort_{}_{}", d.mlir(), index.mlir()), *index),
    };
    (name, vec![unranked(d), unranked(out), "i64".to_string(), "i64".to_string(), "i64".to_string(), "i64".to_string()])
}

/// Operands of at least this many elements, in at least two lanes, are sorted on every thread
/// of the program (lanes split between them): one lane of 1024 f32 is 5-30 us of work.
pub const SORT_PARALLEL_ELEMENTS: i64 = 1 << 15;

/// How many leading places of each lane of `v` (sorted along `dim`) the program reads: the
/// largest end along `dim` of the slices that are its only users (`top_k` slices an argsort),
/// or the lane's length when anything else reads it (another op, a yield, an output). The
/// kernel then selects those places (O(n + k log k) a lane) and leaves the rest unwritten.
fn places_read(f: &Func, v: quabla_dialect::Value, dim: usize, n: i64) -> i64 {
    let mut end = 0i64;
    let mut whole = f.outputs.contains(&v);
    quabla_dialect::walk_ops(&f.ops, &mut |op| {
        for r in &op.regions {
            whole |= r.outputs.contains(&v);
        }
        if !op.operands.contains(&v) {
            return;
        }
        match &op.kind {
            OpKind::Slicing(SlicingOp::Slice { limit_indices, strides, .. }) if op.operands[0] == v && strides.get(dim).is_some_and(|&s| s >= 1) => {
                end = end.max(limit_indices.get(dim).copied().unwrap_or(n));
            }
            _ => whole = true,
        }
    });
    if whole {
        n
    } else {
        end.clamp(0, n)
    }
}

/// The declarations of every sort kernel the module calls.
pub fn declarations(m: &Module) -> String {
    declare(m, |f, o| match &o.kind {
        OpKind::Sort(op) => Some(kernel(op, f.ty(o.operands[0]).dtype)),
        _ => None,
    })
}

/// Lowers one op of this family, returning its result's name (exhaustive over the family).
pub fn lower(e: &mut Emitter, f: &Func, o: &Op, op: &SortOp) -> Result<String, LowerError> {
    let (dimension, direction) = match op {
        SortOp::Sort { dimension, direction } | SortOp::Argsort { dimension, direction, .. } => (*dimension, *direction),
    };
    if e.cg.target.parallel_outer() {
        return Ok(kernel_sort(e, f, o, op, dimension as usize, direction == CmpDir::Gt));
    }
    let xt = f.ty(o.operands[0]);
    let (name, args) = kernel(op, xt.dtype);
    let n = xt.shape[dimension as usize];
    let elements = quabla_dialect::size::saturating_product(xt.shape.iter().copied());
    let threads = if elements >= SORT_PARALLEL_ELEMENTS && elements / n.max(1) >= 2 { e.threads() } else { 1 };
    let flags = [dimension, i64::from(direction == CmpDir::Gt), places_read(f, o.results[0], dimension as usize, n), threads];
    // The kernels only read their operand: it is read in place.
    Ok(call_kernel(e, f, o, &name, &args, &flags, true).remove(0))
}

/// Whether `a` sorts strictly before `b` in NumPy's total order on dtype `d` (ascending: NaN
/// last, -0.0 equal to 0.0; integers by value), and whether they tie.
fn order(e: &mut Emitter, d: DType, a: &str, b: &str) -> (String, String) {
    if d.is_float() {
        let lt = e.op(format!("arith.cmpf olt, {a}, {b} : {d}"));
        let a_num = e.op(format!("arith.cmpf ord, {a}, {a} : {d}"));
        let b_nan = e.op(format!("arith.cmpf uno, {b}, {b} : {d}"));
        let nan_after = e.op(format!("arith.andi {a_num}, {b_nan} : i1"));
        let before = e.op(format!("arith.ori {lt}, {nan_after} : i1"));
        let eq = e.op(format!("arith.cmpf oeq, {a}, {b} : {d}"));
        let a_nan = e.op(format!("arith.cmpf uno, {a}, {a} : {d}"));
        let both_nan = e.op(format!("arith.andi {a_nan}, {b_nan} : i1"));
        let tie = e.op(format!("arith.ori {eq}, {both_nan} : i1"));
        (before, tie)
    } else {
        let p = if d.is_unsigned() || d == DType::I1 { "ult" } else { "slt" };
        (e.op(format!("arith.cmpi {p}, {a}, {b} : {d}")), e.op(format!("arith.cmpi eq, {a}, {b} : {d}")))
    }
}

/// `acc` plus one when element `j` comes before element `i` in a stable order: it sorts
/// strictly `before`, or it ties and is earlier (an `i64` count; `j`, `i` as `index`).
pub(super) fn count_before(e: &mut Emitter, before: &str, tie: &str, j: &str, i: &str, acc: &str) -> String {
    let earlier = e.op(format!("arith.cmpi ult, {j}, {i} : index"));
    let tie_first = e.op(format!("arith.andi {tie}, {earlier} : i1"));
    let counts = e.op(format!("arith.ori {before}, {tie_first} : i1"));
    let one = e.op(format!("arith.extui {counts} : i1 to i64"));
    e.op(format!("arith.addi {acc}, {one} : i64"))
}

/// `sort` / `argsort` along `dim` without a runtime kernel (see the module docs).
fn kernel_sort(e: &mut Emitter, f: &Func, o: &Op, op: &SortOp, dim: usize, desc: bool) -> String {
    let (x, xt, out) = (e.name(o.operands[0]), f.ty(o.operands[0]).clone(), f.ty(o.results[0]).clone());
    let (d, r) = (xt.dtype, xt.rank());
    let dims: Vec<String> = (0..r).map(|k| format!("d{k}")).collect();
    // `dims` with the lane position replaced by the extra loop d{r}.
    let mut other = dims.clone();
    other[dim] = format!("d{r}");
    let mut iters = vec![Iter::Parallel; r];
    iters.push(Iter::Reduction);
    // Place of each element: the lane elements j that sort before element i.
    let places_t = TensorType::new(DType::I64, xt.shape.clone());
    let zero = e.scalar(DType::I64, "0");
    let places0 = e.filled(&places_t, &zero);
    let ins = [Operand::new(x.clone(), &xt, map(r + 1, &dims)), Operand::new(x.clone(), &xt, map(r + 1, &other))];
    let places = generic(e, &iters, &ins, &[Operand::new(places0, &places_t, map(r + 1, &dims))], |e, a| {
        let (xi, xj) = (&a[0], &a[1]);
        let (before, tie) = if desc { order(e, d, xi, xj) } else { order(e, d, xj, xi) };
        let i = e.op(format!("linalg.index {dim} : index"));
        let j = e.op(format!("linalg.index {r} : index"));
        vec![count_before(e, &before, &tie, &j, &i, &a[2])]
    })
    .remove(0);
    // Place k of the result: the element (argsort: the position) whose place is k.
    let od = out.dtype;
    let z = if od.is_float() { e.scalar(od, "0.0") } else if od == DType::I1 { e.scalar(od, "false") } else { e.scalar(od, "0") };
    let init = e.filled(&out, &z);
    let argsort = matches!(op, SortOp::Argsort { .. });
    let ins = [Operand::new(places, &places_t, map(r + 1, &other)), Operand::new(x, &xt, map(r + 1, &other))];
    generic(e, &iters, &ins, &[Operand::new(init, &out, map(r + 1, &dims))], |e, a| {
        let k = e.op(format!("linalg.index {dim} : index"));
        let k = e.op(format!("arith.index_cast {k} : index to i64"));
        let hit = e.op(format!("arith.cmpi eq, {}, {k} : i64", a[0]));
        let v = if argsort {
            let i = e.op(format!("linalg.index {r} : index"));
            e.op(format!("arith.index_cast {i} : index to {od}"))
        } else {
            a[1].clone()
        };
        vec![e.op(format!("arith.select {hit}, {v}, {} : {od}", a[2]))]
    })
    .remove(0)
}

//! Export of the windowed ops. `reduce_window_*` is a `stablehlo.reduce_window` from the
//! combiner's identity (add / maximum / minimum). `select_and_scatter_add` is a
//! `stablehlo.select_and_scatter` (select region `compare GE` or `LE`, scatter region `add`,
//! init 0); StableHLO's op has no dilations, so dilated windows are an explicit
//! `Unsupported`. `select_and_gather_add` has no StableHLO op: it is a variadic
//! `stablehlo.reduce_window` over (operand, tangent) from (-inf or +inf, 0) whose combiner
//! keeps the pair with the larger (ge) or smaller (le) value.
use quabla_dialect::{CmpDir, DType, Func, Op, ReduceWindowOp, TensorType, Window, WindowReducer};

use super::convolution::padding_attr;
use super::elementwise::{bin, compare, select};
use super::{array, int_max_text, int_min_text, scalar_text, Emitter, Tv};
use crate::LowerError;

fn window_attrs(w: &Window) -> Vec<(&'static str, String)> {
    vec![
        ("base_dilations", array(&w.base_dilations)),
        ("padding", padding_attr(&w.padding)),
        ("window_dilations", array(&w.window_dilations)),
        ("window_dimensions", array(&w.window_dimensions)),
        ("window_strides", array(&w.window_strides)),
    ]
}

fn init_text(op: WindowReducer, d: DType) -> String {
    match (op, d.is_float()) {
        (WindowReducer::Sum, _) => scalar_text(d, 0.0),
        (WindowReducer::Max, true) => scalar_text(d, f64::NEG_INFINITY),
        (WindowReducer::Min, true) => scalar_text(d, f64::INFINITY),
        (WindowReducer::Max, false) => int_min_text(d),
        (WindowReducer::Min, false) => int_max_text(d),
        (WindowReducer::Prod, _) => scalar_text(d, 1.0),
    }
}

/// `quabla.reduce_window_*`.
pub fn lower_reduce_window(e: &mut Emitter, f: &Func, o: &Op, op: WindowReducer, w: &Window) -> Result<Tv, LowerError> {
    let x = e.get(f, o.operands[0]);
    let d = x.ty.dtype;
    let s = TensorType::scalar(d);
    let init = e.splat(&s, &init_text(op, d));
    let name = match op {
        WindowReducer::Sum => "stablehlo.add",
        WindowReducer::Max => "stablehlo.maximum",
        WindowReducer::Min => "stablehlo.minimum",
        WindowReducer::Prod => "stablehlo.multiply",
    };
    let out = f.ty(o.results[0]).clone();
    let r = e.region_op("stablehlo.reduce_window", &[&x, &init], &window_attrs(w), &[s.clone(), s], &[out], |e, a| vec![bin(e, name, &a[0], &a[1])]);
    Ok(r.into_iter().next().expect("one result"))
}

/// The select reduction: a variadic `stablehlo.reduce_window` over (operand, flat operand
/// index[, payload]) from (-inf or +inf, n[, 0]) whose combiner keeps the better value and,
/// on ties, the smaller index, so the result does not depend on StableHLO's reduction order
/// and the first element in window order wins; padding and holes carry the init (index n,
/// never a real element). Returns the results (value, index[, payload]).
fn select_reduce(e: &mut Emitter, x: &Tv, payload: Option<&Tv>, select_dir: CmpDir, w: &Window, out: &[i64]) -> Vec<Tv> {
    let d = x.ty.dtype;
    let n = x.ty.num_elements() as i64;
    let s = TensorType::scalar(d);
    let si = TensorType::scalar(DType::I64);
    let flat = e.op("stablehlo.iota", &[], &[("iota_dimension", super::int_attr(0))], &TensorType::new(DType::I64, [n]));
    let idx = e.op("stablehlo.reshape", &[&flat], &[], &x.ty.with_dtype(DType::I64));
    let ext = if select_dir == CmpDir::Ge { f64::NEG_INFINITY } else { f64::INFINITY };
    let vinit = e.splat(&s, &scalar_text(d, ext));
    let iinit = e.splat(&si, &n.to_string());
    let better_dir = if select_dir == CmpDir::Ge { CmpDir::Gt } else { CmpDir::Lt };
    let (vt, it) = (TensorType::new(d, out.to_vec()), TensorType::new(DType::I64, out.to_vec()));
    let body = |e: &mut Emitter, a: &[Tv], k: usize| -> Vec<Tv> {
        // Block arguments: k accumulators, then k values.
        let (av, ai, bv, bi) = (&a[0], &a[1], &a[k], &a[k + 1]);
        let better = compare(e, better_dir, av, bv);
        let eq = compare(e, CmpDir::Eq, av, bv);
        let first = compare(e, CmpDir::Lt, ai, bi);
        let tie = bin(e, "stablehlo.and", &eq, &first);
        let pick = bin(e, "stablehlo.or", &better, &tie);
        (0..k).map(|j| select(e, &pick, &a[j], &a[k + j])).collect()
    };
    match payload {
        Some(t) => {
            let tinit = e.splat(&s, &scalar_text(d, 0.0));
            e.region_op("stablehlo.reduce_window", &[x, &idx, t, &vinit, &iinit, &tinit], &window_attrs(w), &[s.clone(), si.clone(), s.clone(), s.clone(), si, s], &[vt.clone(), it, vt], |e, a| body(e, a, 3))
        }
        None => e.region_op("stablehlo.reduce_window", &[x, &idx, &vinit, &iinit], &window_attrs(w), &[s.clone(), si.clone(), s, si], &[vt, it], |e, a| body(e, a, 2)),
    }
}

/// `quabla.select_and_gather_add`: the payload of the select reduction.
pub fn lower_gather(e: &mut Emitter, f: &Func, o: &Op, select_dir: CmpDir, w: &Window) -> Result<Tv, LowerError> {
    let (t, x) = (e.get(f, o.operands[0]), e.get(f, o.operands[1]));
    let out = f.ty(o.results[0]).shape.clone();
    Ok(select_reduce(e, &x, Some(&t), select_dir, w, &out)[2].clone())
}

/// `quabla.select_and_scatter_add`: the selected flat indices of the select reduction, then a
/// `stablehlo.scatter` (add) of the source into a zero vector of the operand's size (index n,
/// of windows without elements, is out of bounds and skipped), reshaped to the operand.
pub fn lower_scatter(e: &mut Emitter, f: &Func, o: &Op, select_dir: CmpDir, w: &Window) -> Result<Tv, LowerError> {
    let (src, x) = (e.get(f, o.operands[0]), e.get(f, o.operands[1]));
    let d = x.ty.dtype;
    let n = x.ty.num_elements() as i64;
    let m = src.ty.num_elements() as i64;
    let sel = select_reduce(e, &x, None, select_dir, w, &src.ty.shape.clone());
    let idx = e.op("stablehlo.reshape", &[&sel[1]], &[], &TensorType::new(DType::I64, [m, 1]));
    let upd = e.op("stablehlo.reshape", &[&src], &[], &TensorType::new(d, [m]));
    let zeros = e.splat(&TensorType::new(d, [n]), &scalar_text(d, 0.0));
    let s = TensorType::scalar(d);
    let attrs = [
        ("indices_are_sorted", "false".to_string()),
        ("scatter_dimension_numbers", "#stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>".to_string()),
        ("unique_indices", "false".to_string()),
    ];
    let r = e.region_op("stablehlo.scatter", &[&zeros, &idx, &upd], &attrs, &[s.clone(), s], &[TensorType::new(d, [n])], |e, a| vec![bin(e, "stablehlo.add", &a[0], &a[1])]);
    Ok(e.op("stablehlo.reshape", &[&r[0]], &[], &x.ty))
}

/// Exports one op of this family (exhaustive over the family).
pub fn lower(e: &mut Emitter, f: &Func, o: &Op, op: &ReduceWindowOp) -> Result<Tv, LowerError> {
    match op {
        ReduceWindowOp::ReduceWindow { op, window } => lower_reduce_window(e, f, o, *op, window),
        ReduceWindowOp::SelectAndScatterAdd { select, window } => lower_scatter(e, f, o, *select, window),
        ReduceWindowOp::SelectAndGatherAdd { select, window } => lower_gather(e, f, o, *select, window),
    }
}

//! Derivative and batching rules of the windowed ops (as JAX derives them in
//! `jax/_src/lax/windowed_reductions.py`). `reduce_window_sum` is linear; its transpose is a
//! `reduce_window_sum` of the cotangent spread by the strides (base dilation) and padded by
//! the convolution input-transpose padding. `reduce_window_max/min` pass the tangent of each
//! window's selected element: JVP `select_and_gather_add(t, x)`, VJP
//! `select_and_scatter_add(ct, x)`. The two select ops are linear in their first operand and
//! each other's transpose; the operand (which only selects) gets no tangent. Batching adds a
//! window dim of extent 1 in front.
//!
//! `reduce_window_prod` has rules for cumulative windows (cumprod, [`Window::scan_axis`]),
//! through the recursive doubling that computes it: `Y_0 = x`, `Y_{l+1} = Y_l * S_l(Y_l)` with
//! `S_l` the shift by `2^l` places toward the scan's end (ones shifted in), so `Y_L = y`. Its
//! JVP carries `T_{l+1} = T_l * S_l(Y_l) + Y_l * S_l(T_l)` (zeros shifted in) and its VJP the
//! transpose, `G_l = G_{l+1} * S_l(Y_l) + S_l^T(G_{l+1} * Y_l)`, from `G_L` = the cotangent:
//! exact with zeros in `x` (no division), log2(n) levels. A window that is the identity (all
//! ones, no padding: cumprod along an axis of length 1) passes the tangent through. Other
//! product windows are a gap.
use quabla_dialect::{CmpDir, Op, OpKind, ReduceWindowOp, SlicingOp, TensorType, Value, Window, WindowReducer};

use super::convolution::vjp_lhs_padding;
use super::{RuleError, Tangents, B};

fn rw(kind: ReduceWindowOp) -> OpKind {
    OpKind::ReduceWindow(kind)
}

fn select_of(op: WindowReducer) -> CmpDir {
    if op == WindowReducer::Min {
        CmpDir::Le
    } else {
        CmpDir::Ge
    }
}

/// `v` moved `s` places along `axis` toward the end of a scan (forward scans: toward higher
/// indices; `reverse`: lower), the `s` vacated places `fill`.
fn shifted(b: &mut B, v: Value, axis: usize, s: i64, reverse: bool, fill: f64) -> Value {
    let t = b.ty(v);
    let r = t.rank();
    let (mut start, mut limit) = (vec![0; r], t.shape.clone());
    let (mut lo, mut hi) = (vec![0; r], vec![0; r]);
    if reverse {
        start[axis] = s;
        hi[axis] = s;
    } else {
        limit[axis] = t.shape[axis] - s;
        lo[axis] = s;
    }
    let kept = b.op(OpKind::Slicing(SlicingOp::Slice { start_indices: start, limit_indices: limit, strides: vec![1; r] }), &[v]);
    let f = b.splat(&TensorType::scalar(t.dtype), fill);
    b.op(OpKind::Slicing(SlicingOp::Pad { edge_padding_low: lo, edge_padding_high: hi, interior_padding: vec![0; r] }), &[kept, f])
}

/// The levels of the recursive doubling of a cumulative product of `x` along `axis`: (shift,
/// `Y_l`, `S_l(Y_l)`) for `l = 0..L`.
fn doubling(b: &mut B, x: Value, axis: usize, reverse: bool) -> Vec<(i64, Value, Value)> {
    let n = b.ty(x).shape[axis];
    let (mut levels, mut y, mut s) = (Vec::new(), x, 1);
    while s < n {
        let sy = shifted(b, y, axis, s, reverse, 1.0);
        levels.push((s, y, sy));
        y = b.mul(y, sy);
        s *= 2;
    }
    levels
}

/// The axis and direction of a cumulative product, or the explicit gap for `rule`.
fn cumulative(b: &B, op: &Op, w: &Window, rule: &'static str) -> Result<(usize, bool), RuleError> {
    w.scan_axis(&b.ty(op.operands[0]).shape).ok_or(RuleError::Unsupported { op: "reduce_window_prod", rule })
}

pub fn jvp(b: &mut B, op: &Op, t: &[Option<Value>]) -> Result<Tangents, RuleError> {
    let OpKind::ReduceWindow(k) = &op.kind else { return Err(RuleError::Internal("reduce_window jvp got another op".into())) };
    Ok(match k {
        ReduceWindowOp::ReduceWindow { op: WindowReducer::Sum, .. } => vec![t[0].map(|tx| b.op(op.kind.clone(), &[tx]))],
        ReduceWindowOp::ReduceWindow { op: WindowReducer::Prod, window } if window.is_identity() => vec![t[0]],
        ReduceWindowOp::ReduceWindow { op: WindowReducer::Prod, window } => {
            let (axis, reverse) = cumulative(b, op, window, "jvp (non-cumulative product window)")?;
            let Some(mut tt) = t[0] else { return Ok(vec![None]) };
            for (s, y, sy) in doubling(b, op.operands[0], axis, reverse) {
                let st = shifted(b, tt, axis, s, reverse, 0.0);
                let (a, c) = (b.mul(tt, sy), b.mul(y, st));
                tt = b.add(a, c);
            }
            vec![Some(tt)]
        }
        ReduceWindowOp::ReduceWindow { op: r, window } => vec![t[0].map(|tx| b.op(rw(ReduceWindowOp::SelectAndGatherAdd { select: select_of(*r), window: window.clone() }), &[tx, op.operands[0]]))],
        ReduceWindowOp::SelectAndScatterAdd { .. } | ReduceWindowOp::SelectAndGatherAdd { .. } => vec![t[0].map(|ts| b.op(op.kind.clone(), &[ts, op.operands[1]]))],
    })
}

pub fn vjp(b: &mut B, op: &Op, ct: Value) -> Result<Tangents, RuleError> {
    let OpKind::ReduceWindow(k) = &op.kind else { return Err(RuleError::Internal("reduce_window vjp got another op".into())) };
    let x = op.operands[0];
    Ok(match k {
        ReduceWindowOp::ReduceWindow { op: WindowReducer::Sum, window: w } => {
            let (xt, ctt) = (b.ty(x), b.ty(ct));
            let padding = vjp_lhs_padding(&xt.shape, &w.window_dimensions, &w.window_strides, &ctt.shape, &w.padding, &w.base_dilations, &w.window_dilations);
            let t = Window { window_dimensions: w.window_dimensions.clone(), window_strides: w.base_dilations.clone(), base_dilations: w.window_strides.clone(), window_dilations: w.window_dilations.clone(), padding };
            vec![Some(b.op(rw(ReduceWindowOp::ReduceWindow { op: WindowReducer::Sum, window: Box::new(t) }), &[ct]))]
        }
        ReduceWindowOp::ReduceWindow { op: WindowReducer::Prod, window } if window.is_identity() => vec![Some(ct)],
        ReduceWindowOp::ReduceWindow { op: WindowReducer::Prod, window } => {
            let (axis, reverse) = cumulative(b, op, window, "vjp (non-cumulative product window)")?;
            let mut g = ct;
            for (s, y, sy) in doubling(b, x, axis, reverse).into_iter().rev() {
                let gy = b.mul(g, y);
                let back = shifted(b, gy, axis, s, !reverse, 0.0);
                let kept = b.mul(g, sy);
                g = b.add(kept, back);
            }
            vec![Some(g)]
        }
        ReduceWindowOp::ReduceWindow { op: r, window } => vec![Some(b.op(rw(ReduceWindowOp::SelectAndScatterAdd { select: select_of(*r), window: window.clone() }), &[ct, x]))],
        ReduceWindowOp::SelectAndScatterAdd { select, window } => vec![Some(b.op(rw(ReduceWindowOp::SelectAndGatherAdd { select: *select, window: window.clone() }), &[ct, op.operands[1]])), None],
        ReduceWindowOp::SelectAndGatherAdd { select, window } => vec![Some(b.op(rw(ReduceWindowOp::SelectAndScatterAdd { select: *select, window: window.clone() }), &[ct, op.operands[1]])), None],
    })
}

/// Batching: every operand batched (unbatched ones lifted), the window gets a leading dim 1.
pub fn batch(b: &mut B, op: &Op, xs: &[Value], batched: &[bool], size: i64) -> Result<Vec<(Value, bool)>, RuleError> {
    let OpKind::ReduceWindow(k) = &op.kind else { return Err(RuleError::Internal("reduce_window batch got another op".into())) };
    let xs = super::lift_all(b, xs, batched, size);
    let kind = match k {
        ReduceWindowOp::ReduceWindow { op, window } => ReduceWindowOp::ReduceWindow { op: *op, window: Box::new(window.batched()) },
        ReduceWindowOp::SelectAndScatterAdd { select, window } => ReduceWindowOp::SelectAndScatterAdd { select: *select, window: Box::new(window.batched()) },
        ReduceWindowOp::SelectAndGatherAdd { select, window } => ReduceWindowOp::SelectAndGatherAdd { select: *select, window: Box::new(window.batched()) },
    };
    Ok(vec![(b.op(rw(kind), &xs), true)])
}

//! Derivative and batching rules of the windowed ops (as JAX derives them in
//! `jax/_src/lax/windowed_reductions.py`). `reduce_window_sum` is linear; its transpose is a
//! `reduce_window_sum` of the cotangent spread by the strides (base dilation) and padded by
//! the convolution input-transpose padding. `reduce_window_max/min` pass the tangent of each
//! window's selected element: JVP `select_and_gather_add(t, x)`, VJP
//! `select_and_scatter_add(ct, x)`. The two select ops are linear in their first operand and
//! each other's transpose; the operand (which only selects) gets no tangent. Batching adds a
//! window dim of extent 1 in front.
use quabla_dialect::{CmpDir, Op, OpKind, ReduceWindowOp, Value, Window, WindowReducer};

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

pub fn jvp(b: &mut B, op: &Op, t: &[Option<Value>]) -> Result<Tangents, RuleError> {
    let OpKind::ReduceWindow(k) = &op.kind else { return Err(RuleError::Internal("reduce_window jvp got another op".into())) };
    Ok(match k {
        ReduceWindowOp::ReduceWindow { op: WindowReducer::Sum, .. } => vec![t[0].map(|tx| b.op(op.kind.clone(), &[tx]))],
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

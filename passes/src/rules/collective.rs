//! Rules of the collective family (docs/spec.md, collectives). Batching is where a collective
//! gets its meaning: the expansion of the vmap whose `axis_name` the op names resolves it over
//! the batch dim (the examples of the axis) into ordinary ops, and any other vmap passes it
//! through on its batched operand. The derivative rules keep the axis: under `vmap(grad(f))`
//! the rules run before the vmap that resolves them.
//!
//! Resolved forms, for a vmap of `size` examples: `psum` sums the batch dim (an unmapped
//! operand is the same in every example: `size * x`), `pmax`/`pmin` reduce it, `all_gather`
//! is the batched operand itself (every example gets the stack of all of them), `axis_index`
//! is an iota over the batch; the reductions' and the gather's results are the same in every
//! example, so they leave the vmap unbatched. Derivatives (as JAX's): the JVP of `psum` is the
//! `psum` of the tangent and its transpose the `psum` of the cotangent; `all_gather`'s
//! transpose is the `psum` of the cotangent sliced at the example's own index; `pmax`/`pmin`
//! pass the tangent of the examples that attain the extreme, averaged over ties.
use std::cell::RefCell;

use quabla_dialect::{AxisName, CollectiveOp, CmpDir, ConstantOp, DType, Op, OpKind, ReduceOp, Reducer, SlicingOp, TensorType, Value};

use super::{move_axis, RuleError, Tangents, B};

thread_local! {
    /// The axis name of the vmap being expanded (none outside an expansion or when the vmap
    /// has no name).
    static AXIS: RefCell<Option<AxisName>> = const { RefCell::new(None) };
}

/// Runs `f` as the expansion of a vmap named `name`: the collectives naming it resolve.
pub(crate) fn with_axis<R>(name: Option<AxisName>, f: impl FnOnce() -> R) -> R {
    let before = AXIS.with(|a| a.replace(name));
    let r = f();
    AXIS.with(|a| *a.borrow_mut() = before);
    r
}

/// True when `op` is a collective, or holds one in its regions, that the vmap being expanded
/// resolves: the sweep must call its batching rule even when no operand is batched.
pub(crate) fn resolves(op: &Op) -> bool {
    let Some(name) = AXIS.with(|a| a.borrow().clone()) else { return false };
    let mut found = matches!(&op.kind, OpKind::Collective(c) if *c.axis_name() == name);
    for r in &op.regions {
        quabla_dialect::walk_ops(&r.ops, &mut |o| found |= matches!(&o.kind, OpKind::Collective(c) if *c.axis_name() == name));
    }
    found
}

fn kind(op: &Op) -> Result<&CollectiveOp, RuleError> {
    match &op.kind {
        OpKind::Collective(c) => Ok(c),
        other => Err(RuleError::Internal(format!("'quabla.{}' op is not a collective", other.name()))),
    }
}

fn collective(b: &mut B, c: CollectiveOp, xs: &[Value]) -> Value {
    b.op(OpKind::Collective(c), xs)
}

/// `pmax`/`pmin`'s weights: 1 / (number of examples attaining the extreme) where `x` attains
/// it, else 0.
fn tie_weights(b: &mut B, op: &Op, c: &CollectiveOp) -> Value {
    let (x, m) = (op.operands[0], op.results[0]);
    let hit = b.cmp(CmpDir::Eq, x, m);
    let dtype = b.ty(x).dtype;
    let one = b.convert(hit, dtype);
    let count = collective(b, CollectiveOp::Psum { axis_name: c.axis_name().clone() }, &[one]);
    b.div(one, count)
}

pub fn jvp(b: &mut B, op: &Op, t: &[Option<Value>]) -> Result<Tangents, RuleError> {
    let c = kind(op)?;
    Ok(match c {
        CollectiveOp::Psum { .. } | CollectiveOp::AllGather { .. } => vec![t[0].map(|t| collective(b, c.clone(), &[t]))],
        CollectiveOp::Pmax { axis_name } | CollectiveOp::Pmin { axis_name } => match t[0] {
            None => vec![None],
            Some(t) => {
                let w = tie_weights(b, op, c);
                let wt = b.mul(w, t);
                vec![Some(collective(b, CollectiveOp::Psum { axis_name: axis_name.clone() }, &[wt]))]
            }
        },
        CollectiveOp::AxisIndex { .. } => vec![],
    })
}

pub fn vjp(b: &mut B, op: &Op, ct: Value) -> Result<Tangents, RuleError> {
    let c = kind(op)?;
    let axis_name = c.axis_name().clone();
    let sum = collective(b, CollectiveOp::Psum { axis_name: axis_name.clone() }, &[ct]);
    Ok(match c {
        CollectiveOp::Psum { .. } => vec![Some(sum)],
        CollectiveOp::Pmax { .. } | CollectiveOp::Pmin { .. } => {
            let w = tie_weights(b, op, c);
            vec![Some(b.mul(w, sum))]
        }
        CollectiveOp::AllGather { .. } => {
            // This example's slot of the summed cotangent.
            let x = b.ty(op.operands[0]);
            let i = collective(b, CollectiveOp::AxisIndex { axis_name }, &[]);
            let zero = b.splat(&TensorType::scalar(DType::I32), 0.0);
            let mut starts = vec![sum, i];
            starts.extend(std::iter::repeat_n(zero, x.rank()));
            let mut sizes = vec![1];
            sizes.extend(&x.shape);
            let s = b.op(OpKind::Slicing(SlicingOp::DynamicSlice { slice_sizes: sizes }), &starts);
            vec![Some(b.reshape(s, x.shape.clone()))]
        }
        CollectiveOp::AxisIndex { .. } => vec![],
    })
}

pub fn batch(b: &mut B, op: &Op, xs: &[Value], batched: &[bool], size: i64) -> Result<Vec<(Value, bool)>, RuleError> {
    let c = kind(op)?;
    let here = AXIS.with(|a| a.borrow().as_ref() == Some(c.axis_name()));
    let mapped = batched.first().copied().unwrap_or(false);
    if !here {
        // Another vmap's axis: the op stays, on the batched operand (its batch dim one more
        // dim of the data).
        let r = collective(b, c.clone(), xs);
        return Ok(vec![match c {
            CollectiveOp::AllGather { .. } if mapped => (move_axis(b, r, 1, 0), true),
            CollectiveOp::AxisIndex { .. } => (r, false),
            _ => (r, mapped),
        }]);
    }
    let reduce = |b: &mut B, r: Reducer, x: Value| b.op(OpKind::Reduce(ReduceOp::Reduce { op: r, dims: vec![0] }), &[x]);
    Ok(vec![match c {
        CollectiveOp::Psum { .. } if mapped => (reduce(b, Reducer::Sum, xs[0]), false),
        CollectiveOp::Psum { .. } => {
            let n = b.like(xs[0], size as f64);
            (b.mul(xs[0], n), false)
        }
        CollectiveOp::Pmax { .. } if mapped => (reduce(b, Reducer::Max, xs[0]), false),
        CollectiveOp::Pmin { .. } if mapped => (reduce(b, Reducer::Min, xs[0]), false),
        CollectiveOp::Pmax { .. } | CollectiveOp::Pmin { .. } => (xs[0], false),
        CollectiveOp::AllGather { axis_name, axis_size } => {
            if *axis_size != size {
                return Err(RuleError::Batch(format!("all_gather over axis '{axis_name}' of size {axis_size}, but the vmap naming it maps {size} examples")));
            }
            (if mapped { xs[0] } else { super::lift(b, xs[0], size) }, false)
        }
        CollectiveOp::AxisIndex { .. } => {
            let ty = TensorType::new(DType::I32, vec![size]);
            (b.op(OpKind::Constant(ConstantOp::Iota { dim: 0, ty }), &[]), true)
        }
    }])
}

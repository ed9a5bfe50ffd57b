//! `quabla-fold`'s rules for chains of layout ops: a chain of reshapes and broadcasts is one
//! broadcast between two reshapes ([`broadcast_chain`]), a chain of reshapes and reductions of
//! one kind one reduction between two reshapes ([`reduction_chain`]), and an elementwise op of
//! broadcasts of one shape is the op before the broadcast ([`elementwise_of_broadcasts`]).
//!
//! Both follow the chain from its source in the common refinement of every shape along it: a
//! list of dims ([`Fine`]) whose consecutive groups make each shape, split where a shape's
//! boundary falls inside a dim (none of size 1: unit dims are empty groups). A broadcast adds
//! dims the source does not vary along; a reduction marks its dims' entries reduced (they stay
//! in the list, outside every group); a reshape regroups the entries still in the value. The
//! chain is then the source reshaped to the refinement (its reduced entries included), one
//! broadcast or reduction there, and a reshape to the result. A reshape whose shapes have no
//! common refinement (`[6, 4] -> [4, 6]`) stops the rule.
use std::collections::{HashMap, VecDeque};
use std::ops::Range;

use quabla_dialect::size::saturating_product;
use quabla_dialect::{ConstantOp, Func, LayoutOp, Literal, Op, OpKind, ReduceOp, TensorType, Value};

/// Longest chain the rules walk.
const MAX_CHAIN: usize = 16;

/// What a dim of the refinement is to the value at the current point of the chain.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// A dim the source varies along.
    Source,
    /// A dim a broadcast added.
    Broadcast,
    /// A source dim a reduction summed away (not in the value).
    Reduced,
}

#[derive(Clone, Copy)]
struct FineDim {
    size: i64,
    role: Role,
}

/// The refinement, and each dim of the current value's shape as a range of it (reduced
/// entries lie outside every range).
struct Fine {
    dims: Vec<FineDim>,
    groups: Vec<Range<usize>>,
    shape: Vec<i64>,
}

impl Fine {
    /// The refinement of `shape` (the chain's source).
    fn of(shape: &[i64]) -> Fine {
        let mut dims = Vec::new();
        let mut groups = Vec::new();
        for &d in shape {
            let start = dims.len();
            if d != 1 {
                dims.push(FineDim { size: d, role: Role::Source });
            }
            groups.push(start..dims.len());
        }
        Fine { dims, groups, shape: shape.to_vec() }
    }

    /// After a reshape to `shape`: the entries in the value regrouped, one split where a
    /// boundary of `shape` falls inside one; None when no factor matches.
    fn reshape(self, shape: &[i64]) -> Option<Fine> {
        let (mut dims, mut groups) = (Vec::new(), Vec::new());
        let mut rest: VecDeque<FineDim> = self.dims.into();
        for &s in shape {
            if s <= 0 {
                return None;
            }
            let mut prod = 1i64;
            while rest.front().is_some_and(|d| d.role == Role::Reduced) {
                dims.extend(rest.pop_front());
            }
            let start = dims.len();
            while prod < s {
                let d = rest.pop_front()?;
                if d.role == Role::Reduced {
                    dims.push(d);
                    continue;
                }
                if s % prod != 0 {
                    return None;
                }
                let need = s / prod;
                if d.size <= need && need % d.size == 0 {
                    dims.push(d);
                    prod *= d.size;
                } else if d.size % need == 0 {
                    dims.push(FineDim { size: need, ..d });
                    rest.push_front(FineDim { size: d.size / need, ..d });
                    prod *= need;
                } else {
                    return None;
                }
            }
            groups.push(start..dims.len());
        }
        if rest.iter().any(|d| d.role != Role::Reduced) {
            return None;
        }
        dims.extend(rest);
        Some(Fine { dims, groups, shape: shape.to_vec() })
    }

    /// After a broadcast (`dims` increasing) to `shape`.
    fn broadcast(self, bdims: &[i64], shape: &[i64]) -> Option<Fine> {
        if bdims.windows(2).any(|w| w[0] >= w[1]) || bdims.len() != self.shape.len() || self.dims.iter().any(|d| d.role == Role::Reduced) {
            return None;
        }
        let (mut dims, mut groups) = (Vec::new(), Vec::new());
        for (r, &s) in shape.iter().enumerate() {
            let start = dims.len();
            match bdims.iter().position(|&d| d == r as i64) {
                Some(i) if self.shape[i] == s => dims.extend_from_slice(&self.dims[self.groups[i].clone()]),
                Some(i) if self.shape[i] != 1 => return None,
                _ if s == 1 => {}
                _ => dims.push(FineDim { size: s, role: Role::Broadcast }),
            }
            groups.push(start..dims.len());
        }
        Some(Fine { dims, groups, shape: shape.to_vec() })
    }

    /// After a reduction over `rdims`.
    fn reduce(mut self, rdims: &[i64]) -> Option<Fine> {
        if self.dims.iter().any(|d| d.role == Role::Broadcast) {
            return None;
        }
        let mut groups = Vec::new();
        let mut shape = Vec::new();
        for (i, g) in self.groups.iter().enumerate() {
            if rdims.contains(&(i as i64)) {
                for d in &mut self.dims[g.clone()] {
                    d.role = Role::Reduced;
                }
            } else {
                groups.push(g.clone());
                shape.push(self.shape[i]);
            }
        }
        Some(Fine { dims: self.dims, groups, shape })
    }

    fn sizes(&self, keep: impl Fn(Role) -> bool) -> Vec<i64> {
        self.dims.iter().filter(|d| keep(d.role)).map(|d| d.size).collect()
    }

    fn positions(&self, role: Role) -> Vec<i64> {
        self.dims.iter().enumerate().filter(|(_, d)| d.role == role).map(|(i, _)| i as i64).collect()
    }
}

/// The chain of layout ops (`step` says which, and how they change the refinement) ending in
/// `op`, from its source: the source and the refinement of `op`'s result; None when the chain
/// holds fewer than two ops that `counts`, or a step fails.
fn walk(f: &Func, op: &Op, defs: &HashMap<Value, Op>, links: impl Fn(&Op) -> bool, counts: impl Fn(&Op) -> bool, step: impl Fn(Fine, &Op) -> Option<Fine>) -> Option<(Value, Fine)> {
    let mut chain = vec![op];
    let mut src = op.operands[0];
    while let Some(d) = defs.get(&src).filter(|d| links(d)) {
        if chain.len() == MAX_CHAIN {
            return None;
        }
        chain.push(d);
        src = d.operands[0];
    }
    if chain.iter().filter(|o| counts(o)).count() < 2 {
        return None;
    }
    let st = f.ty(src);
    if st.shape.iter().any(|&d| d <= 0) {
        return None;
    }
    let mut fine = Fine::of(&st.shape);
    for o in chain.iter().rev() {
        fine = step(fine, o)?;
    }
    (fine.shape == f.ty(op.results[0]).shape).then_some((src, fine))
}

/// `x` as `shape` (no op when it has it), appended to `ops`.
fn reshaped(f: &mut Func, ops: &mut Vec<Op>, x: Value, shape: Vec<i64>, op: &Op) -> Value {
    if f.ty(x).shape == shape {
        return x;
    }
    let r = f.new_value(TensorType::new(f.ty(x).dtype, shape.clone()));
    ops.push(Op::new(OpKind::Layout(LayoutOp::Reshape { shape }), vec![x], vec![r], op.loc.clone()));
    r
}

/// `kind` of `x` (of shape `full`) into `op`'s result, through a reshape after it unless the
/// result has its shape `mid`.
fn into_result(f: &mut Func, ops: &mut Vec<Op>, kind: OpKind, x: Value, mid: Vec<i64>, op: &Op) {
    let out = f.ty(op.results[0]).clone();
    if mid == out.shape {
        ops.push(Op::new(kind, vec![x], op.results.clone(), op.loc.clone()));
    } else {
        let m = f.new_value(TensorType::new(out.dtype, mid));
        ops.push(Op::new(kind, vec![x], vec![m], op.loc.clone()));
        ops.push(Op::new(OpKind::Layout(LayoutOp::Reshape { shape: out.shape }), vec![m], op.results.clone(), op.loc.clone()));
    }
}

/// A broadcast at the top of a chain of reshapes and broadcasts (a second broadcast among
/// them) is one broadcast between two reshapes: `reshape(broadcast(reshape(x)))` with the
/// source's dims and the broadcast dims interleaved in the refinement. Nearest 2x upsampling,
/// `repeat(repeat(x, 2, 1), 2, 2)`, was two broadcasts with the first's result materialized
/// (its reshape merges a broadcast dim): 16 x 32^2 x 64 f32 677 us, JAX 453. Not for a
/// broadcast that transposes.
pub(super) fn broadcast_chain(f: &mut Func, op: &Op, defs: &HashMap<Value, Op>) -> Option<Vec<Op>> {
    let is_broadcast = |o: &Op| matches!(o.kind, OpKind::Layout(LayoutOp::BroadcastInDim { .. }));
    if !is_broadcast(op) {
        return None;
    }
    let links = |o: &Op| matches!(o.kind, OpKind::Layout(LayoutOp::Reshape { .. }) | OpKind::Layout(LayoutOp::BroadcastInDim { .. }));
    let (src, fine) = walk(f, op, defs, links, is_broadcast, |fine, o| match &o.kind {
        OpKind::Layout(LayoutOp::BroadcastInDim { dims, shape }) => fine.broadcast(dims, shape),
        OpKind::Layout(LayoutOp::Reshape { shape }) => fine.reshape(shape),
        _ => None,
    })?;
    let src_shape = fine.sizes(|r| r == Role::Source);
    if saturating_product(src_shape.iter().copied()) != saturating_product(f.ty(src).shape.iter().copied()) {
        return None;
    }
    let mut ops = Vec::new();
    let x = reshaped(f, &mut ops, src, src_shape, op);
    let full = fine.sizes(|_| true);
    into_result(f, &mut ops, OpKind::Layout(LayoutOp::BroadcastInDim { dims: fine.positions(Role::Source), shape: full.clone() }), x, full, op);
    Some(ops)
}

/// A reduction at the top of a chain of reshapes and reductions of the same kind (a second
/// reduction among them) is one reduction between two reshapes: `reshape(reduce(reshape(x)))`
/// over the reduced dims of the refinement. The gradient of a 2-D upsampling (`repeat` along
/// two axes) is such a chain of sums over the repeats, which the broadcast it differentiates
/// became ([`broadcast_chain`]): one sum over both repeats of the doubled broadcast, a loop
/// over `x` (512^2 f32 364 us with the two sums, JAX 117). The sums of the two reductions are
/// one sum over their dims together: reassociated as any reduction's lowering does.
pub(super) fn reduction_chain(f: &mut Func, op: &Op, defs: &HashMap<Value, Op>) -> Option<Vec<Op>> {
    let OpKind::Reduce(ReduceOp::Reduce { op: kind, .. }) = op.kind else { return None };
    let same = |o: &Op| matches!(o.kind, OpKind::Reduce(ReduceOp::Reduce { op: k, .. }) if k == kind);
    let links = |o: &Op| same(o) || matches!(o.kind, OpKind::Layout(LayoutOp::Reshape { .. }));
    let (src, fine) = walk(f, op, defs, links, same, |fine, o| match &o.kind {
        OpKind::Reduce(ReduceOp::Reduce { dims, .. }) => fine.reduce(dims),
        OpKind::Layout(LayoutOp::Reshape { shape }) => fine.reshape(shape),
        _ => None,
    })?;
    let full = fine.sizes(|_| true);
    if saturating_product(full.iter().copied()) != saturating_product(f.ty(src).shape.iter().copied()) {
        return None;
    }
    let mut ops = Vec::new();
    let x = reshaped(f, &mut ops, src, full, op);
    let reduced = OpKind::Reduce(ReduceOp::Reduce { op: kind, dims: fine.positions(Role::Reduced) });
    into_result(f, &mut ops, reduced, x, fine.sizes(|r| r != Role::Reduced), op);
    Some(ops)
}

/// An elementwise op whose operands are broadcasts of values of one shape along the same dims
/// and splats (dense splat constants, broadcasts of 0-d values) is the op on those values (the
/// splats in their shape), broadcast: `sin(x[None, :] * ones((n, 1)))`, `meshgrid`'s
/// `sin(X) * cos(Y)` and a positional encoding's transcendentals ran once per element of the
/// broadcast result (1024^2 sines and cosines of a meshgrid of 1024 points: 1.35 ms, JAX 1.13),
/// where once per element of the source gives the same values. Only where the broadcast at
/// least doubles the element count.
pub(super) fn elementwise_of_broadcasts(f: &mut Func, op: &Op, consts: &HashMap<Value, Literal>, defs: &HashMap<Value, Op>) -> Option<Vec<Op>> {
    if !matches!(op.kind, OpKind::Elementwise(_)) || op.results.len() != 1 || !op.regions.is_empty() {
        return None;
    }
    let out = f.ty(op.results[0]).clone();
    // The broadcast of a value of rank >= 1 behind operand `v`: (source, dims).
    let broadcast = |v: &Value| match defs.get(v) {
        Some(Op { kind: OpKind::Layout(LayoutOp::BroadcastInDim { dims, .. }), operands, .. }) => Some((operands[0], dims.clone())),
        _ => None,
    };
    let mut main: Option<(Vec<i64>, Vec<i64>)> = None;
    for v in &op.operands {
        let Some((x, dims)) = broadcast(v) else { continue };
        let shape = &f.ty(x).shape;
        if shape.is_empty() {
            continue;
        }
        match &main {
            None => main = Some((shape.clone(), dims)),
            Some((s, d)) if s == shape && *d == dims => {}
            Some(_) => return None,
        }
    }
    let (src, dims) = main?;
    if saturating_product(src.iter().copied()).saturating_mul(2) > saturating_product(out.shape.iter().copied()) {
        return None;
    }
    let mut ops = Vec::new();
    let mut xs = Vec::with_capacity(op.operands.len());
    for v in &op.operands {
        let t = TensorType::new(f.ty(*v).dtype, src.clone());
        let x = match (broadcast(v), consts.get(v)) {
            (Some((x, _)), _) if !f.ty(x).shape.is_empty() => x,
            (Some((x, _)), _) => {
                let r = f.new_value(t.clone());
                ops.push(Op::new(OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![], shape: src.clone() }), vec![x], vec![r], op.loc.clone()));
                r
            }
            (None, Some(l)) if l.is_splat() && !l.bytes.is_empty() => {
                let r = f.new_value(t.clone());
                ops.push(Op::new(OpKind::Constant(ConstantOp::Constant { value: l.splat_like(t) }), vec![], vec![r], op.loc.clone()));
                r
            }
            _ => return None,
        };
        xs.push(x);
    }
    let small = f.new_value(TensorType::new(out.dtype, src));
    ops.push(Op::new(op.kind.clone(), xs, vec![small], op.loc.clone()));
    ops.push(Op::new(OpKind::Layout(LayoutOp::BroadcastInDim { dims, shape: out.shape }), vec![small], op.results.clone(), op.loc.clone()));
    Some(ops)
}

//! `quabla-fold`: constant folding and algebraic identities.
//!
//! Algorithm: one forward sweep per function. An op whose operands are all constants (and
//! whose result is at most `MAX_FOLD_ELEMENTS` elements) is evaluated with the reference
//! interpreter and becomes a `quabla.constant`. Otherwise identities replace the op by one
//! of its operands or by a cheaper op: x+0, 0+x, x-0, x*1, 1*x, x/1, neg(neg x), not(not x),
//! powi(x, 1), convert/reshape/transpose/broadcast/slice that change nothing,
//! reshape(reshape x), transpose(transpose x) (perms composed), broadcast of a splat
//! constant (a splat of the result shape), select with a splat predicate, and reductions
//! over no dims. Float `x + 0.0 -> x` treats -0.0 + 0.0 as -0.0 (the sign of a zero may
//! differ from IEEE), as XLA's simplifier does; every other rule is exact.
use std::collections::HashMap;

use quabla_dialect::{BinaryOp, Func, Literal, Module, Op, OpKind, UnaryOp, Value};
use quabla_interp as interp;
use quabla_interp::Buffer;

use crate::rewrite::{constants, Subst};

/// Largest result (in elements) that constant folding materialises.
pub const MAX_FOLD_ELEMENTS: usize = 1 << 16;
/// Largest splat constant that folding a broadcast of a splat materialises.
pub const MAX_SPLAT_ELEMENTS: usize = 1 << 22;

enum Fold {
    /// Keep this (possibly rewritten) op.
    Keep(Op),
    /// The op's single result equals this existing value.
    Alias(Value),
}

/// Runs folding on every function; returns true when something changed.
pub fn fold(m: &mut Module) -> bool {
    let mut changed = false;
    for f in &mut m.funcs {
        changed |= fold_func(f);
    }
    changed
}

fn fold_func(f: &mut Func) -> bool {
    let mut changed = false;
    let mut subst = Subst::new(f);
    let mut consts: HashMap<Value, Literal> = constants(&f.ops);
    let mut defs: HashMap<Value, Op> = HashMap::new();
    let ops = std::mem::take(&mut f.ops);
    for mut op in ops {
        subst.apply(&mut op);
        let before = op.clone();
        match fold_op(f, op, &consts, &defs) {
            Fold::Keep(op) => {
                changed |= op != before;
                if let OpKind::Constant { value } = &op.kind {
                    consts.insert(op.results[0], value.clone());
                }
                for r in &op.results {
                    defs.insert(*r, op.clone());
                }
                f.ops.push(op);
            }
            Fold::Alias(v) => {
                subst.set(before.results[0], v);
                changed = true;
            }
        }
    }
    subst.apply_outputs(f);
    changed
}

fn is_splat(consts: &HashMap<Value, Literal>, v: Value, x: f64) -> bool {
    consts.get(&v).is_some_and(|l| l.is_splat_of(x))
}

fn constant_op(op: &Op, value: Literal) -> Op {
    Op { kind: OpKind::Constant { value }, operands: vec![], results: op.results.clone(), loc: op.loc.clone() }
}

fn fold_op(f: &Func, op: Op, consts: &HashMap<Value, Literal>, defs: &HashMap<Value, Op>) -> Fold {
    let out_ty = op.results.first().map(|r| f.ty(*r).clone());
    // Constant folding through the reference interpreter.
    // Ops without operands (iota) are not materialised: a dense constant is larger IR.
    let foldable = !op.operands.is_empty()
        && !matches!(op.kind, OpKind::Constant { .. } | OpKind::Call { .. })
        && op.results.len() == 1
        && out_ty.as_ref().is_some_and(|t| t.num_elements() <= MAX_FOLD_ELEMENTS)
        && op.operands.iter().all(|v| consts.contains_key(v));
    if foldable {
        let bufs: Vec<Buffer> = op.operands.iter().map(|v| Buffer::from_literal(&consts[v])).collect();
        let refs: Vec<&Buffer> = bufs.iter().collect();
        if let Ok(mut out) = interp::run_op(&op.kind, &refs) {
            let lit = out.remove(0).to_literal();
            return Fold::Keep(constant_op(&op, lit));
        }
    }
    let x = op.operands.first().copied();
    let same_type = |v: Value| out_ty.as_ref() == Some(f.ty(v));
    let def = |v: Value| defs.get(&v);
    match &op.kind {
        OpKind::Binary(b) => {
            let (a, c) = (op.operands[0], op.operands[1]);
            match b {
                BinaryOp::Add if is_splat(consts, c, 0.0) || is_splat(consts, c, -0.0) => return Fold::Alias(a),
                BinaryOp::Add if is_splat(consts, a, 0.0) || is_splat(consts, a, -0.0) => return Fold::Alias(c),
                BinaryOp::Sub if is_splat(consts, c, 0.0) => return Fold::Alias(a),
                BinaryOp::Mul if is_splat(consts, c, 1.0) => return Fold::Alias(a),
                BinaryOp::Mul if is_splat(consts, a, 1.0) => return Fold::Alias(c),
                BinaryOp::Div if is_splat(consts, c, 1.0) => return Fold::Alias(a),
                _ => {}
            }
        }
        OpKind::Unary(u @ (UnaryOp::Neg | UnaryOp::Not)) => {
            if let Some(d) = def(op.operands[0]) {
                if d.kind == OpKind::Unary(*u) {
                    return Fold::Alias(d.operands[0]);
                }
            }
        }
        OpKind::Powi { exponent: 1 } => return Fold::Alias(op.operands[0]),
        OpKind::Convert { .. } | OpKind::Reshape { .. } | OpKind::BroadcastInDim { .. } if same_type(op.operands[0]) => {
            // Same type: a no-op (broadcast_in_dim with equal shapes has increasing dims, so identity).
            return Fold::Alias(op.operands[0]);
        }
        OpKind::Transpose { perm } => {
            if perm.iter().enumerate().all(|(i, &p)| p == i as i64) {
                return Fold::Alias(op.operands[0]);
            }
            if let Some(OpKind::Transpose { perm: inner }) = def(op.operands[0]).map(|d| &d.kind) {
                let composed: Vec<i64> = perm.iter().map(|&p| inner[p as usize]).collect();
                let src = def(op.operands[0]).unwrap().operands[0];
                let mut n = op.clone();
                n.kind = OpKind::Transpose { perm: composed.clone() };
                n.operands = vec![src];
                if composed.iter().enumerate().all(|(i, &p)| p == i as i64) {
                    return Fold::Alias(src);
                }
                return Fold::Keep(n);
            }
        }
        OpKind::Slice { start, strides, .. } if same_type(op.operands[0]) && start.iter().all(|&s| s == 0) && strides.iter().all(|&s| s == 1) => {
            return Fold::Alias(op.operands[0]);
        }
        OpKind::Reduce { dims, .. } if dims.is_empty() => return Fold::Alias(op.operands[0]),
        OpKind::Select => {
            if let Some(p) = consts.get(&op.operands[0]) {
                if p.is_splat() {
                    return Fold::Alias(if p.get_i64(0) != 0 { op.operands[1] } else { op.operands[2] });
                }
            }
            if op.operands[1] == op.operands[2] {
                return Fold::Alias(op.operands[1]);
            }
        }
        _ => {}
    }
    // Chains and splats of layout ops.
    if let (OpKind::Reshape { .. }, Some(d)) = (&op.kind, x.and_then(def)) {
        if matches!(d.kind, OpKind::Reshape { .. }) {
            let mut n = op.clone();
            n.operands = vec![d.operands[0]];
            if same_type(d.operands[0]) {
                return Fold::Alias(d.operands[0]);
            }
            return Fold::Keep(n);
        }
    }
    if let (OpKind::BroadcastInDim { .. } | OpKind::Reshape { .. } | OpKind::Transpose { .. }, Some(l)) = (&op.kind, x.and_then(|v| consts.get(&v))) {
        if l.is_splat() && out_ty.as_ref().is_some_and(|t| t.num_elements() <= MAX_SPLAT_ELEMENTS) {
            let ty = out_ty.clone().unwrap();
            let n = ty.num_elements();
            let bytes = l.elem_bytes(0).repeat(n);
            return Fold::Keep(constant_op(&op, Literal { ty, bytes }));
        }
    }
    Fold::Keep(op)
}

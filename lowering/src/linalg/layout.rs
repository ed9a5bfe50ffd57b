//! Lowering of layout ops: `broadcast_in_dim` (a generic reading the operand through a
//! projected map; broadcast extent-1 dims read index 0), `reshape` (one
//! `tensor.collapse_shape` or `tensor.expand_shape` when the shapes nest, else a collapse to
//! 1-D and an expand) and `transpose` (a generic with a permuted input map, so it fuses with
//! elementwise neighbours). Forms that move no data only rename.
use quabla_dialect::{Func, LayoutOp, Op, TensorType};

use super::{generic, identity, list, map, Emitter, Iter, Operand};
use crate::LowerError;

/// Groups of consecutive dims of `big` whose extents multiply to each extent of `small`
/// (the reassociation of a collapse from `big` to `small`), or `None` if the shapes do not
/// nest that way. Trailing extent-1 dims join the last group.
pub fn reassociation(big: &[i64], small: &[i64]) -> Option<Vec<Vec<usize>>> {
    if small.is_empty() {
        return big.iter().all(|&d| d == 1).then(Vec::new);
    }
    let mut groups: Vec<Vec<usize>> = Vec::with_capacity(small.len());
    let mut i = 0;
    for &target in small {
        let mut g = vec![];
        let mut p = 1i64;
        while i < big.len() && (g.is_empty() || p < target) {
            p *= big[i];
            g.push(i);
            i += 1;
        }
        if g.is_empty() || p != target {
            return None;
        }
        groups.push(g);
    }
    while i < big.len() {
        if big[i] != 1 {
            return None;
        }
        groups.last_mut()?.push(i);
        i += 1;
    }
    Some(groups)
}

pub fn assoc_text(groups: &[Vec<usize>]) -> String {
    let g: Vec<String> = groups.iter().map(|g| format!("[{}]", g.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", "))).collect();
    format!("[{}]", g.join(", "))
}

/// Emits a row-major reshape of `x` (type `from`) to the shape of `to`.
pub fn reshape(e: &mut Emitter, x: &str, from: &TensorType, to: &TensorType) -> String {
    if from.shape == to.shape {
        return x.to_string();
    }
    let collapse = |e: &mut Emitter, x: &str, from: &TensorType, to: &TensorType, g: &[Vec<usize>]| e.op(format!("tensor.collapse_shape {x} {} : {from} into {to}", assoc_text(g)));
    let expand = |e: &mut Emitter, x: &str, from: &TensorType, to: &TensorType, g: &[Vec<usize>]| {
        e.op(format!("tensor.expand_shape {x} {} output_shape [{}] : {from} into {to}", assoc_text(g), list(&to.shape)))
    };
    if from.rank() > to.rank() {
        if let Some(g) = reassociation(&from.shape, &to.shape) {
            return collapse(e, x, from, to, &g);
        }
    } else if let Some(g) = reassociation(&to.shape, &from.shape) {
        return expand(e, x, from, to, &g);
    }
    // Through 1-D; both ranks are >= 1 here (a 0-d shape nests in every 1-element shape).
    let flat = TensorType::new(from.dtype, [from.num_elements() as i64]);
    let all = |r: usize| vec![(0..r).collect::<Vec<_>>()];
    let mid = if from.rank() == 1 { x.to_string() } else { collapse(e, x, from, &flat, &all(from.rank())) };
    if to.rank() == 1 {
        mid
    } else {
        expand(e, &mid, &flat, to, &all(to.rank()))
    }
}

/// Emits a transpose of `x` (result dim i = operand dim perm[i]).
pub fn transpose(e: &mut Emitter, x: &str, from: &TensorType, perm: &[i64]) -> String {
    if perm.iter().enumerate().all(|(i, &p)| p == i as i64) {
        return x.to_string();
    }
    let r = perm.len();
    let to = TensorType::new(from.dtype, perm.iter().map(|&p| from.shape[p as usize]).collect::<Vec<_>>());
    // Operand dim perm[i] is indexed by loop dim i.
    let mut exprs = vec![String::new(); r];
    for (i, &p) in perm.iter().enumerate() {
        exprs[p as usize] = format!("d{i}");
    }
    let init = e.empty(&to);
    let ins = [Operand::new(x, from, map(r, &exprs))];
    generic(e, &vec![Iter::Parallel; r], &ins, &[Operand::new(init, &to, identity(r))], |_, a| vec![a[0].clone()]).remove(0)
}

/// Emits `broadcast_in_dim` of `x` (type `from`) to `to`: operand dim i is result dim dims[i].
pub fn broadcast(e: &mut Emitter, x: &str, from: &TensorType, to: &TensorType, dims: &[i64]) -> String {
    if from == to {
        return x.to_string();
    }
    let r = to.rank();
    let exprs: Vec<String> = dims.iter().enumerate().map(|(i, &d)| if from.shape[i] == 1 && to.shape[d as usize] != 1 { "0".to_string() } else { format!("d{d}") }).collect();
    let init = e.empty(to);
    let ins = [Operand::new(x, from, map(r, &exprs))];
    generic(e, &vec![Iter::Parallel; r], &ins, &[Operand::new(init, to, identity(r))], |_, a| vec![a[0].clone()]).remove(0)
}

/// `quabla.broadcast_in_dim`.
pub fn lower_broadcast_in_dim(e: &mut Emitter, f: &Func, o: &Op, dims: &[i64]) -> Result<String, LowerError> {
    let x = e.name(o.operands[0]);
    Ok(broadcast(e, &x, f.ty(o.operands[0]), f.ty(o.results[0]), dims))
}

/// `quabla.reshape`.
pub fn lower_reshape(e: &mut Emitter, f: &Func, o: &Op) -> Result<String, LowerError> {
    let x = e.name(o.operands[0]);
    Ok(reshape(e, &x, f.ty(o.operands[0]), f.ty(o.results[0])))
}

/// `quabla.transpose`.
pub fn lower_transpose(e: &mut Emitter, f: &Func, o: &Op, perm: &[i64]) -> Result<String, LowerError> {
    let x = e.name(o.operands[0]);
    Ok(transpose(e, &x, f.ty(o.operands[0]), perm))
}

/// Lowers one op of this family, returning its result's name (exhaustive over the family).
pub fn lower(e: &mut Emitter, f: &Func, o: &Op, op: &LayoutOp) -> Result<String, LowerError> {
    match op {
        LayoutOp::BroadcastInDim { dims, .. } => lower_broadcast_in_dim(e, f, o, dims),
        LayoutOp::Reshape { .. } => lower_reshape(e, f, o),
        LayoutOp::Transpose { perm } => lower_transpose(e, f, o, perm),
        // The operand itself (only derivatives see the op).
        LayoutOp::StopGradient {} => Ok(e.name(o.operands[0])),
    }
}

#[cfg(test)]
mod tests {
    use super::reassociation;

    #[test]
    fn nesting_shapes() {
        assert_eq!(reassociation(&[2, 3, 4], &[6, 4]), Some(vec![vec![0, 1], vec![2]]));
        assert_eq!(reassociation(&[1, 6, 1], &[6]), Some(vec![vec![0, 1, 2]]));
        assert_eq!(reassociation(&[1, 1], &[]), Some(vec![]));
        assert_eq!(reassociation(&[2, 1, 3], &[2, 3]), Some(vec![vec![0], vec![1, 2]]));
        assert_eq!(reassociation(&[2, 3], &[3, 2]), None);
        assert_eq!(reassociation(&[4, 3], &[2, 6]), None);
        assert_eq!(reassociation(&[1, 2], &[1, 2]), Some(vec![vec![0], vec![1]]));
        assert_eq!(reassociation(&[1, 3], &[3, 1]), None);
    }
}

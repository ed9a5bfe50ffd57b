//! Lowering of layout ops: `broadcast_in_dim` (a generic reading the operand through a
//! projected map, extent-1 dims pinned to 0), `reshape` (collapse to 1-D, expand to the
//! target), `transpose` (`linalg.transpose`). No-op forms only rename.
use quabla_dialect::{Func, Op, OpKind, TensorType};

use super::{generic, identity, map, Emitter, GenericIn};
use crate::LowerError;

/// Emits a row-major reshape of `x` (type `from`) to `to`.
pub fn reshape(e: &mut Emitter, x: &str, from: &TensorType, to: &TensorType) -> String {
    if from.shape == to.shape {
        return x.to_string();
    }
    let flat = TensorType::new(from.dtype, [from.num_elements() as i64]);
    let assoc = |r: usize| format!("[[{}]]", (0..r).map(|i| i.to_string()).collect::<Vec<_>>().join(", "));
    let mut cur = x.to_string();
    if from.rank() == 0 {
        // 0-d -> all-ones shape.
        let n = e.fresh();
        let shape: Vec<String> = to.shape.iter().map(|d| d.to_string()).collect();
        e.line(format!("{n} = tensor.expand_shape {cur} [] output_shape [{}] : {from} into {to}", shape.join(", ")));
        return n;
    }
    if to.rank() == 0 {
        let n = e.fresh();
        e.line(format!("{n} = tensor.collapse_shape {cur} [] : {from} into {to}"));
        return n;
    }
    if from.rank() != 1 {
        let n = e.fresh();
        e.line(format!("{n} = tensor.collapse_shape {cur} {} : {from} into {flat}", assoc(from.rank())));
        cur = n;
    }
    if to.rank() != 1 {
        let n = e.fresh();
        let shape: Vec<String> = to.shape.iter().map(|d| d.to_string()).collect();
        e.line(format!("{n} = tensor.expand_shape {cur} {} output_shape [{}] : {flat} into {to}", assoc(to.rank()), shape.join(", ")));
        cur = n;
    }
    cur
}

/// Emits a transpose (result dim i = operand dim perm[i]).
pub fn transpose(e: &mut Emitter, x: &str, from: &TensorType, perm: &[i64]) -> String {
    if perm.iter().enumerate().all(|(i, &p)| p == i as i64) {
        return x.to_string();
    }
    let to = TensorType::new(from.dtype, perm.iter().map(|&p| from.shape[p as usize]).collect::<Vec<_>>());
    let init = e.empty(&to);
    let n = e.fresh();
    let p: Vec<String> = perm.iter().map(|d| d.to_string()).collect();
    e.line(format!("{n} = linalg.transpose ins({x} : {from}) outs({init} : {to}) permutation = [{}]", p.join(", ")));
    n
}

pub fn lower(e: &mut Emitter, f: &Func, o: &Op) -> Result<(), LowerError> {
    let x = e.name(o.operands[0]);
    let xt = f.ty(o.operands[0]).clone();
    let out = f.ty(o.results[0]).clone();
    let r = match &o.kind {
        OpKind::BroadcastInDim { dims, .. } => {
            if xt == out {
                x
            } else {
                let rank = out.rank();
                let exprs: Vec<String> = dims
                    .iter()
                    .enumerate()
                    .map(|(i, &d)| if xt.shape[i] == 1 && out.shape[d as usize] != 1 { "0".to_string() } else { format!("d{d}") })
                    .collect();
                let init = e.empty(&out);
                let iters = vec!["parallel"; rank];
                let ins = [GenericIn { name: x, ty: xt.clone(), map: map(rank, &exprs) }];
                generic(e, rank, &iters, &ins, &[(init, out.clone(), identity(rank))], |_, a| vec![a[0].clone()]).remove(0)
            }
        }
        OpKind::Reshape { .. } => reshape(e, &x, &xt, &out),
        OpKind::Transpose { perm } => transpose(e, &x, &xt, perm),
        other => return Err(LowerError::Internal(format!("layout lowering got {}", other.name()))),
    };
    e.alias(o.results[0], r);
    Ok(())
}

//! Lowering of `dot_general`: both operands are transposed to [batch, free, contract] /
//! [batch, contract, free] order and reshaped to rank 3 ([B, M, K] x [B, K, N]); the product is
//! a `linalg.batch_matmul` (or `linalg.matmul` when there is no batch dim, which the tiled
//! CPU path matches) into a zero-filled init, then reshaped to the result shape.
use quabla_dialect::{DotDims, Func, Op, OpKind, TensorType};

use super::{layout::reshape, layout::transpose, Emitter};
use crate::LowerError;

fn prod(t: &TensorType, dims: &[i64]) -> i64 {
    dims.iter().map(|&d| t.shape[d as usize]).product()
}

pub fn lower(e: &mut Emitter, f: &Func, o: &Op) -> Result<(), LowerError> {
    let OpKind::DotGeneral { dims } = &o.kind else { return Err(LowerError::Internal(format!("dot lowering got {}", o.kind.name()))) };
    let (l, r) = (e.name(o.operands[0]), e.name(o.operands[1]));
    let (lt, rt) = (f.ty(o.operands[0]).clone(), f.ty(o.operands[1]).clone());
    let out = f.ty(o.results[0]).clone();
    let d = out.dtype;
    let lfree = DotDims::free(lt.rank(), &dims.lhs_batch, &dims.lhs_contract);
    let rfree = DotDims::free(rt.rank(), &dims.rhs_batch, &dims.rhs_contract);
    let (b, m, k, n) = (prod(&lt, &dims.lhs_batch), prod(&lt, &lfree), prod(&lt, &dims.lhs_contract), prod(&rt, &rfree));
    let lperm: Vec<i64> = dims.lhs_batch.iter().chain(&lfree).chain(&dims.lhs_contract).copied().collect();
    let rperm: Vec<i64> = dims.rhs_batch.iter().chain(&dims.rhs_contract).chain(&rfree).copied().collect();
    let lt2 = TensorType::new(d, lperm.iter().map(|&p| lt.shape[p as usize]).collect::<Vec<_>>());
    let rt2 = TensorType::new(d, rperm.iter().map(|&p| rt.shape[p as usize]).collect::<Vec<_>>());
    let l1 = transpose(e, &l, &lt, &lperm);
    let r1 = transpose(e, &r, &rt, &rperm);
    let batched = !dims.lhs_batch.is_empty();
    let (l3t, r3t, o3t) = if batched {
        (TensorType::new(d, [b, m, k]), TensorType::new(d, [b, k, n]), TensorType::new(d, [b, m, n]))
    } else {
        (TensorType::new(d, [m, k]), TensorType::new(d, [k, n]), TensorType::new(d, [m, n]))
    };
    let l3 = reshape(e, &l1, &lt2, &l3t);
    let r3 = reshape(e, &r1, &rt2, &r3t);
    let z = if d.is_float() { e.scalar(d, "0.0") } else { e.scalar(d, "0") };
    let init = e.filled(&o3t, &z);
    let p = e.fresh();
    let name = if batched { "linalg.batch_matmul" } else { "linalg.matmul" };
    e.line(format!("{p} = {name} ins({l3}, {r3} : {l3t}, {r3t}) outs({init} : {o3t}) -> {o3t}"));
    let res = reshape(e, &p, &o3t, &out);
    e.alias(o.results[0], res);
    Ok(())
}

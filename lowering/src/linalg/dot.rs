//! Lowering of `dot_general`: the operands are transposed to [batch, free, contract] and
//! [batch, contract, free] order and reshaped to [B, M, K] and [B, K, N] (grouped dims
//! collapsed); the product is a `linalg.batch_matmul`, or a `linalg.matmul` on [M, K] x [K, N]
//! when there is no batch dim (the form the tiled CPU matmul path matches), into a zero-filled
//! init; the result is reshaped back to [batch..., lhs free..., rhs free...]. Integer products
//! wrap (`arith.muli`/`arith.addi`). With `Codegen::tile_matmuls`, float products whose
//! shapes suit the tiled path carry a `quabla.tile` tag for the transform script
//! (crate::tiling).
use quabla_dialect::{DotDims, Func, Op, TensorType};

use super::{layout::reshape, layout::transpose, zero_lit, Emitter};
use crate::tiling::{self, MatmulTile};
use crate::LowerError;

fn prod(t: &TensorType, dims: &[i64]) -> i64 {
    dims.iter().map(|&d| t.shape[d as usize]).product()
}

fn permuted(t: &TensorType, perm: &[i64]) -> TensorType {
    TensorType::new(t.dtype, perm.iter().map(|&p| t.shape[p as usize]).collect::<Vec<_>>())
}

/// `quabla.dot_general`.
pub fn lower_dot_general(e: &mut Emitter, f: &Func, o: &Op, dims: &DotDims) -> Result<String, LowerError> {
    let (l, r) = (e.name(o.operands[0]), e.name(o.operands[1]));
    let (lt, rt, out) = (f.ty(o.operands[0]), f.ty(o.operands[1]), f.ty(o.results[0]));
    let d = out.dtype;
    let lfree = DotDims::free(lt.rank(), &dims.lhs_batch, &dims.lhs_contract);
    let rfree = DotDims::free(rt.rank(), &dims.rhs_batch, &dims.rhs_contract);
    let (b, m, k, n) = (prod(lt, &dims.lhs_batch), prod(lt, &lfree), prod(lt, &dims.lhs_contract), prod(rt, &rfree));
    let lperm: Vec<i64> = dims.lhs_batch.iter().chain(&lfree).chain(&dims.lhs_contract).copied().collect();
    let rperm: Vec<i64> = dims.rhs_batch.iter().chain(&dims.rhs_contract).chain(&rfree).copied().collect();
    let l1 = transpose(e, &l, lt, &lperm);
    let r1 = transpose(e, &r, rt, &rperm);
    let batched = !dims.lhs_batch.is_empty();
    let (l3t, r3t, o3t) = if batched {
        (TensorType::new(d, [b, m, k]), TensorType::new(d, [b, k, n]), TensorType::new(d, [b, m, n]))
    } else {
        (TensorType::new(d, [m, k]), TensorType::new(d, [k, n]), TensorType::new(d, [m, n]))
    };
    let l3 = reshape(e, &l1, &permuted(lt, &lperm), &l3t);
    let r3 = reshape(e, &r1, &permuted(rt, &rperm), &r3t);
    let z = e.scalar(d, zero_lit(d));
    let init = e.filled(&o3t, &z);
    let name = if batched { "linalg.batch_matmul" } else { "linalg.matmul" };
    let tag = match tiling::choose(d, m, n, k) {
        Some((block, reg)) if e.cg.tile_matmuls => {
            let tag = e.tiles.len();
            e.tiles.push(MatmulTile { tag, batched, block, reg });
            format!(" {{quabla.tile = {tag} : i64}}")
        }
        _ => String::new(),
    };
    let p = e.op(format!("{name}{tag} ins({l3}, {r3} : {l3t}, {r3t}) outs({init} : {o3t}) -> {o3t}"));
    Ok(reshape(e, &p, &o3t, out))
}

//! Lowering of `dot_general`: the operands are transposed to [batch, free, contract] and
//! [batch, contract, free] order and reshaped to [B, M, K] and [B, K, N] (grouped dims
//! collapsed); the product is a `linalg.batch_matmul`, or a `linalg.matmul` on [M, K] x [K, N]
//! when there is no batch dim (the form the tiled CPU matmul path matches), into a zero-filled
//! init; the result is reshaped back to [batch..., lhs free..., rhs free...]. Integer products
//! wrap (`arith.muli`/`arith.addi`). With `Codegen::tile_matmuls`, float products whose
//! shapes suit the tiled path carry a `quabla.tile` tag for the transform script
//! (crate::tiling); they are computed over B packed into column panels (`packed_matmul`),
//! batched ones in a loop over the batch (`batch_loop`).
use quabla_dialect::{DType, DotDims, DotOp, Func, Op, TensorType};

use super::{layout::reshape, layout::transpose, zero_lit, Emitter};
use crate::target::{MatmulTile, Plan};
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
    let lfree = DotDims::free(lt.rank(), &dims.lhs_batching_dimensions, &dims.lhs_contracting_dimensions);
    let rfree = DotDims::free(rt.rank(), &dims.rhs_batching_dimensions, &dims.rhs_contracting_dimensions);
    let (b, m, k, n) = (prod(lt, &dims.lhs_batching_dimensions), prod(lt, &lfree), prod(lt, &dims.lhs_contracting_dimensions), prod(rt, &rfree));
    let lperm: Vec<i64> = dims.lhs_batching_dimensions.iter().chain(&lfree).chain(&dims.lhs_contracting_dimensions).copied().collect();
    let rperm: Vec<i64> = dims.rhs_batching_dimensions.iter().chain(&dims.rhs_contracting_dimensions).chain(&rfree).copied().collect();
    let l1 = transpose(e, &l, lt, &lperm);
    let r1 = transpose(e, &r, rt, &rperm);
    let batched = !dims.lhs_batching_dimensions.is_empty();
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
    // Tiled: packed B panels (per batch element for batched products).
    let plan = if e.cg.tile_matmuls { e.cg.target.matmul_plan(d, m, n, k) } else { None };
    let p = match plan {
        Some(plan) => {
            let tag = e.tiles.len();
            e.tiles.push(MatmulTile { tag, kb: plan.kb, nr: plan.nr });
            if batched {
                batch_loop(e, d, [&l3, &r3, &init], [b, m, n, k], |e, ops| packed_matmul(e, d, ops, [m, n, k], &plan, tag))
            } else {
                packed_matmul(e, d, [&l3, &r3, &init], [m, n, k], &plan, tag)
            }
        }
        None => e.op(format!("{name} ins({l3}, {r3} : {l3t}, {r3t}) outs({init} : {o3t}) -> {o3t}")),
    };
    Ok(reshape(e, &p, &o3t, out))
}

/// `C = A B` (A `m x k`, B `k x n`, C zero-initialized) with B packed into contiguous panels
/// of `nr` columns (`[n/nr, k, nr]`, one `linalg.transpose`), looping over blocks of `mb` rows
/// of A and over the panels; each step is one tagged `mb x nr x k` `linalg.matmul` that the
/// transform script blocks over K and vectorizes. A panel slice stays in L1 while the
/// register blocks of the row block pass over it (crate::tiling::choose). Ragged shapes run
/// on zero-padded copies (`plan.mp x k` for A, `k x plan.np` for B, packed from the padded
/// copy) into a zero `mp x np` product whose leading `m x n` block is the result.
fn packed_matmul(e: &mut Emitter, d: DType, [a, b, init]: [&str; 3], [m, n, k]: [i64; 3], plan: &Plan, tag: usize) -> String {
    let (mp, np, mb, nr) = (plan.mp, plan.np, plan.mb, plan.nr);
    if (mp, np) != (m, n) {
        let z = e.scalar(d, zero_lit(d));
        let pad = |e: &mut Emitter, x: &str, [r, c]: [i64; 2], [rp, cp]: [i64; 2]| -> String {
            if (r, c) == (rp, cp) {
                return x.to_string();
            }
            let big = e.filled(&TensorType::new(d, [rp, cp]), &z);
            e.op(format!("tensor.insert_slice {x} into {big}[0, 0] [{r}, {c}] [1, 1] : {} into {}", TensorType::new(d, [r, c]), TensorType::new(d, [rp, cp])))
        };
        let ap = pad(e, a, [m, k], [mp, k]);
        let bp = pad(e, b, [k, n], [k, np]);
        let cp = e.filled(&TensorType::new(d, [mp, np]), &z);
        let padded = Plan { mp, np, ..*plan };
        let r = packed_matmul(e, d, [&ap, &bp, &cp], [mp, np, k], &padded, tag);
        return e.op(format!("tensor.extract_slice {r}[0, 0] [{m}, {n}] [1, 1] : {} to {}", TensorType::new(d, [mp, np]), TensorType::new(d, [m, n])));
    }
    let no = n / nr;
    let (at, bt, ct) = (TensorType::new(d, [m, k]), TensorType::new(d, [k, n]), TensorType::new(d, [m, n]));
    let (b3t, bpt) = (TensorType::new(d, [k, no, nr]), TensorType::new(d, [no, k, nr]));
    let (abt, pant, cst) = (TensorType::new(d, [mb, k]), TensorType::new(d, [k, nr]), TensorType::new(d, [mb, nr]));
    let b3 = e.op(format!("tensor.expand_shape {b} [[0], [1, 2]] output_shape [{k}, {no}, {nr}] : {bt} into {b3t}"));
    let bpe = e.empty(&bpt);
    let bp = e.op(format!("linalg.transpose ins({b3} : {b3t}) outs({bpe} : {bpt}) permutation = [1, 0, 2]"));
    let (c0, c1, cmb, cm, cno, cnr) = (e.index(0), e.index(1), e.index(mb), e.index(m), e.index(no), e.index(nr));
    let (io, acc1, res) = (e.fresh(), e.fresh(), e.fresh());
    e.raw_line(format!("{res} = scf.for {io} = {c0} to {cm} step {cmb} iter_args({acc1} = {init}) -> ({ct}) {{"));
    e.depth += 1;
    let ablk = e.op(format!("tensor.extract_slice {a}[{io}, 0] [{mb}, {k}] [1, 1] : {at} to {abt}"));
    let (jo, acc2, res2) = (e.fresh(), e.fresh(), e.fresh());
    e.raw_line(format!("{res2} = scf.for {jo} = {c0} to {cno} step {c1} iter_args({acc2} = {acc1}) -> ({ct}) {{"));
    e.depth += 1;
    let pan = e.op(format!("tensor.extract_slice {bp}[{jo}, 0, 0] [1, {k}, {nr}] [1, 1, 1] : {bpt} to {pant}"));
    let j = e.op(format!("arith.muli {jo}, {cnr} : index"));
    let cs = e.op(format!("tensor.extract_slice {acc2}[{io}, {j}] [{mb}, {nr}] [1, 1] : {ct} to {cst}"));
    let p = e.op(format!("linalg.matmul {{quabla.tile = {tag} : i64}} ins({ablk}, {pan} : {abt}, {pant}) outs({cs} : {cst}) -> {cst}"));
    let ins = e.op(format!("tensor.insert_slice {p} into {acc2}[{io}, {j}] [{mb}, {nr}] [1, 1] : {cst} into {ct}"));
    e.line(format!("scf.yield {ins} : {ct}"));
    e.depth -= 1;
    e.line("}");
    e.line(format!("scf.yield {res2} : {ct}"));
    e.depth -= 1;
    e.line("}");
    res
}

/// A loop over the batch of `[b, m, k] x [b, k, n] -> [b, m, n]` (init given) that computes
/// each `m x k` by `k x n` product with `body` on rank-reduced slices.
fn batch_loop(e: &mut Emitter, d: DType, [a, bb, init]: [&str; 3], [b, m, n, k]: [i64; 4], body: impl FnOnce(&mut Emitter, [&str; 3]) -> String) -> String {
    let (at, bt, ct) = (TensorType::new(d, [b, m, k]), TensorType::new(d, [b, k, n]), TensorType::new(d, [b, m, n]));
    let (a2, b2, c2) = (TensorType::new(d, [m, k]), TensorType::new(d, [k, n]), TensorType::new(d, [m, n]));
    let (c0, c1, cb) = (e.index(0), e.index(1), e.index(b));
    let (bi, acc, res) = (e.fresh(), e.fresh(), e.fresh());
    e.raw_line(format!("{res} = scf.for {bi} = {c0} to {cb} step {c1} iter_args({acc} = {init}) -> ({ct}) {{"));
    e.depth += 1;
    let x = e.op(format!("tensor.extract_slice {a}[{bi}, 0, 0] [1, {m}, {k}] [1, 1, 1] : {at} to {a2}"));
    let y = e.op(format!("tensor.extract_slice {bb}[{bi}, 0, 0] [1, {k}, {n}] [1, 1, 1] : {bt} to {b2}"));
    let z = e.op(format!("tensor.extract_slice {acc}[{bi}, 0, 0] [1, {m}, {n}] [1, 1, 1] : {ct} to {c2}"));
    let p = body(e, [&x, &y, &z]);
    let ins = e.op(format!("tensor.insert_slice {p} into {acc}[{bi}, 0, 0] [1, {m}, {n}] [1, 1, 1] : {c2} into {ct}"));
    e.line(format!("scf.yield {ins} : {ct}"));
    e.depth -= 1;
    e.line("}");
    res
}

/// Lowers one op of this family, returning its result's name (exhaustive over the family).
pub fn lower(e: &mut Emitter, f: &Func, o: &Op, op: &DotOp) -> Result<String, LowerError> {
    match op {
        DotOp::DotGeneral { dims } => lower_dot_general(e, f, o, dims),
    }
}

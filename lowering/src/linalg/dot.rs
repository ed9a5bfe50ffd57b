//! Lowering of `dot_general`: the operands are transposed to [batch, free, contract] and
//! [batch, contract, free] order and reshaped to [B, M, K] and [B, K, N] (grouped dims
//! collapsed); the product is a `linalg.batch_matmul`, or a `linalg.matmul` on [M, K] x [K, N]
//! when there is no batch dim (the form the tiled CPU matmul path matches), into a zero-filled
//! init; the result is reshaped back to [batch..., lhs free..., rhs free...]. Integer products
//! wrap (`arith.muli`/`arith.addi`). With `Codegen::tile_matmuls`, products whose
//! shapes suit the tiled path carry a `quabla.tile` tag for the transform script
//! (crate::tiling); they are computed over B packed into column panels (`packed_matmul`),
//! batched ones in a loop over the batch (`batch_loop`). A tiled matrix rhs contracted over
//! its second dim (`x @ W.T`, the VJP's `dz @ W.T`) skips the transpose: its panels are
//! packed from the `[n, k]` layout directly (one copy instead of two); a tiled matrix lhs
//! contracted over its first dim (the weight gradient `x.T @ dz`) is not copied at all: the
//! tagged products read its `[k, mb]` blocks through a transposed lhs map, and the register
//! blocks' broadcasts of A then come from contiguous memory. Ragged N peels the
//! last panel (`pack_b`, `packed_matmul`); the output is never filled whole (each block is
//! zeroed where it is computed).
use quabla_dialect::{DType, DotDims, DotOp, Func, Op, TensorType};

use super::{generic, layout::reshape, layout::transpose, map, zero_lit, Emitter, Iter, Operand};
use crate::target::{MatmulTile, Plan};
use crate::LowerError;

fn prod(t: &TensorType, dims: &[i64]) -> i64 {
    quabla_dialect::size::saturating_product(dims.iter().map(|&d| t.shape[d as usize]))
}

fn permuted(t: &TensorType, perm: &[i64]) -> TensorType {
    TensorType::new(t.dtype, perm.iter().map(|&p| t.shape[p as usize]).collect::<Vec<_>>())
}

/// Whether `batch`, `first` then `second` (the last two non-empty) are the dims `0..rank` in
/// order: an operand laid out `[batch..., first..., second...]`, a reshape away from a
/// (batch of) matrices.
fn in_order(rank: usize, batch: &[i64], first: &[i64], second: &[i64]) -> bool {
    !first.is_empty() && !second.is_empty() && batch.iter().chain(first).chain(second).copied().eq(0..rank as i64)
}

/// A `dot_general`'s sizes and layouts: batch, free and contracted extents (`b`, `m`, `k`,
/// `n`), the permutations to `[batch, free, contract]` / `[batch, contract, free]`, and
/// whether an operand is already in the alternative layout the tiled path reads in place
/// (`a_km`: lhs `[batch, contract, free]`; `b_nk`: rhs `[batch, free, contract]`).
struct DotShape {
    bmkn: [i64; 4],
    lperm: Vec<i64>,
    rperm: Vec<i64>,
    a_km: bool,
    b_nk: bool,
}

fn dot_shape(lt: &TensorType, rt: &TensorType, dims: &DotDims) -> DotShape {
    let lfree = DotDims::free(lt.rank(), &dims.lhs_batching_dimensions, &dims.lhs_contracting_dimensions);
    let rfree = DotDims::free(rt.rank(), &dims.rhs_batching_dimensions, &dims.rhs_contracting_dimensions);
    DotShape {
        bmkn: [prod(lt, &dims.lhs_batching_dimensions), prod(lt, &lfree), prod(lt, &dims.lhs_contracting_dimensions), prod(rt, &rfree)],
        lperm: dims.lhs_batching_dimensions.iter().chain(&lfree).chain(&dims.lhs_contracting_dimensions).copied().collect(),
        rperm: dims.rhs_batching_dimensions.iter().chain(&dims.rhs_contracting_dimensions).chain(&rfree).copied().collect(),
        a_km: in_order(lt.rank(), &dims.lhs_batching_dimensions, &dims.lhs_contracting_dimensions, &lfree),
        b_nk: in_order(rt.rank(), &dims.rhs_batching_dimensions, &rfree, &dims.rhs_contracting_dimensions),
    }
}

/// The element operations of the code generated around a product of `lt` by `rt` (dims
/// `dims`) that `target` makes a runtime call (`quabla_gemm_<d>`, [`runtime_gemm`]): the
/// elements of the operands transposed into a layout the call reads (0 when it reads both in
/// place), or None when the product's code is generated. The CPU executor counts this
/// instead of the multiply-adds when it picks LLVM's level for a program.
pub fn runtime_product_work(target: &dyn crate::target::Target, lt: &TensorType, rt: &TensorType, dims: &DotDims) -> Option<i64> {
    let s = dot_shape(lt, rt, dims);
    let [b, m, k, n] = s.bmkn;
    let d = lt.dtype;
    target.matmul_plan(d, m, n, k)?;
    if !target.runtime_gemm(d, [b, m, n, k]) {
        return None;
    }
    // An operand in its alternative layout is read in place; otherwise it is transposed
    // unless already in order (as lower_dot_general does).
    let copied = |t: &TensorType, perm: &[i64], alt: bool| if alt || perm.iter().enumerate().all(|(i, &p)| p == i as i64) { 0 } else { t.num_elements() as i64 };
    Some(copied(lt, &s.lperm, s.a_km).saturating_add(copied(rt, &s.rperm, s.b_nk)))
}

/// `quabla.dot_general`.
pub fn lower_dot_general(e: &mut Emitter, f: &Func, o: &Op, dims: &DotDims) -> Result<String, LowerError> {
    let (l, r) = (e.name(o.operands[0]), e.name(o.operands[1]));
    let (lt, rt, out) = (f.ty(o.operands[0]), f.ty(o.operands[1]), f.ty(o.results[0]));
    let d = out.dtype;
    // An rhs laid out [batch..., free..., contracted...] (`x @ W.T`, attention's `q k^T`) is
    // packed from its own [n, k] layout: no transposed copy before the packing copy. An lhs
    // laid out [batch..., contracted..., free...] (the weight gradient `x.T @ dz`, also over
    // [batch, seq, features] activations; attention's `dS^T q`) is read as [k, m] by the
    // tagged products themselves: no copy of it at all. Both views are reshapes of the
    // operands.
    let DotShape { bmkn: [b, m, k, n], lperm, rperm, a_km, b_nk } = dot_shape(lt, rt, dims);
    let batched = !dims.lhs_batching_dimensions.is_empty();
    // (A batch of small matrix-vector products is the runtime's row dot products: each row's
    // sum reassociated in vector accumulators, as for one product. Laid out [k, m], it is
    // km_matvec's below.)
    let plan = if e.cg.tile_matmuls { e.cg.target.matmul_plan(d, m, n, k).or_else(|| e.cg.target.batched_plan(d, [b, m, n, k])) } else { None };
    // A runtime product whose result is a destination-passing output of the function writes
    // into the output's buffer (see [`runtime_gemm`]): no copy after the call.
    let dest = e.out_buffer(o.results[0]).map(|name| (name, out.clone()));
    // Whatever the plan: a tiled product of one contracted element per result element packs
    // both operands to multiply them once (the per-example weight gradients of a 784-10
    // softmax regression, 256 examples: 2017 us, JAX 421).
    if k == 1 && !e.cg.target.parallel_outer() && d != DType::I1 {
        return Ok(unit_k_product(e, f, o, dims));
    }
    if transposed_matvec(&e.cg, lt, rt, dims) {
        return Ok(km_matvec(e, (&l, lt), (&r, rt), &rperm, [b, m, k], batched, out));
    }
    if let (Some(plan), true) = (&plan, a_km || b_nk) {
        // [b, x, y] (batched) or [x, y].
        let bs: &[i64] = if batched { &[b] } else { &[] };
        let shape = |x: i64, y: i64| TensorType::new(d, bs.iter().copied().chain([x, y]).collect::<Vec<_>>());
        let l2 = if a_km {
            reshape(e, &l, lt, &shape(k, m))
        } else {
            let l1 = transpose(e, &l, lt, &lperm);
            reshape(e, &l1, &permuted(lt, &lperm), &shape(m, k))
        };
        let r2 = if b_nk {
            reshape(e, &r, rt, &shape(n, k))
        } else {
            let r1 = transpose(e, &r, rt, &rperm);
            reshape(e, &r1, &permuted(rt, &rperm), &shape(k, n))
        };
        let ct = shape(m, n);
        let init = e.empty(&ct);
        let p = tiled(e, d, [&l2, &r2, &init], [b, m, n, k], Layout { batched, b_nk, a_km }, plan, true, dest);
        return Ok(reshape(e, &p, &ct, out));
    }
    let l1 = transpose(e, &l, lt, &lperm);
    let r1 = transpose(e, &r, rt, &rperm);
    let (l3t, r3t, o3t) = if batched {
        (TensorType::new(d, [b, m, k]), TensorType::new(d, [b, k, n]), TensorType::new(d, [b, m, n]))
    } else {
        (TensorType::new(d, [m, k]), TensorType::new(d, [k, n]), TensorType::new(d, [m, n]))
    };
    let l3 = reshape(e, &l1, &permuted(lt, &lperm), &l3t);
    let r3 = reshape(e, &r1, &permuted(rt, &rperm), &r3t);
    // Tiled: packed B panels (per batch element for batched products), each block zeroed
    // where it is computed.
    let p = match plan {
        Some(plan) => {
            let init = e.empty(&o3t);
            tiled(e, d, [&l3, &r3, &init], [b, m, n, k], Layout { batched, ..Layout::PLAIN }, &plan, true, dest)
        }
        None => {
            // Upstream elementwise fusion would compute an elementwise producer inside the
            // product's generic, once per use (n or m times): those keep the named op.
            let fused = o.operands.iter().any(|&v| elementwise_result(f, v));
            plain_matmul(e, [&l3, &r3], [&l3t, &r3t, &o3t], batched, !fused, read_once(f, o.results[0]))
        }
    };
    Ok(reshape(e, &p, &o3t, out))
}

/// Whether the product of `lt` by `rt` is a matrix-vector product whose matrix is laid out
/// `[batch, contract, free]` (`x.T @ g`, the gradient of `x @ w` with respect to `w`) on the
/// loop path: one column (N = 1), at least two rows and two contracted elements, no plan (on
/// the tiled path the transposed layout is read in place). [`km_matvec`] lowers it; its
/// vector, read once per row, is kept apart from its elementwise producer
/// (elementwise::kept_apart).
pub(crate) fn transposed_matvec(cg: &crate::target::Codegen, lt: &TensorType, rt: &TensorType, dims: &DotDims) -> bool {
    let DotShape { bmkn: [_, m, k, n], a_km, .. } = dot_shape(lt, rt, dims);
    a_km && n == 1 && m >= 2 && k >= 2 && !cg.target.parallel_outer() && lt.dtype != DType::I1
}

/// [`transposed_matvec`]: `out[b?, m] = sum_k l[b?, k, m] r[b?, k]` as one generic over (b?, K
/// in groups of [`k_group`], m) that reads the matrix in place, row after row (the loop path
/// transposed it first, a copy of the matrix on every call, then summed along its rows: a
/// logistic regression's gradient step in a `fori_loop`, `x.T @ g` of [1000, 10], ~3x JAX's
/// time). Each output element still sums over K in order from zero (the named op's bits); a
/// whole K of at most [`K_GROUP_MAX`] is one all-parallel step.
fn km_matvec(e: &mut Emitter, (l, lt): (&str, &TensorType), (r, rt): (&str, &TensorType), rperm: &[i64], [b, m, k]: [i64; 3], batched: bool, out: &TensorType) -> String {
    let d = out.dtype;
    let bs: Vec<i64> = if batched { vec![b] } else { vec![] };
    let at = TensorType::new(d, bs.iter().copied().chain([k, m]).collect::<Vec<_>>());
    let vt = TensorType::new(d, bs.iter().copied().chain([k]).collect::<Vec<_>>());
    let ct = TensorType::new(d, bs.iter().copied().chain([m]).collect::<Vec<_>>());
    let a = reshape(e, l, lt, &at);
    let r1 = transpose(e, r, rt, rperm);
    let v = reshape(e, &r1, &permuted(rt, rperm), &vt);
    let z = e.scalar(d, zero_lit(d));
    let u = k_group(k).unwrap_or(1);
    let whole = u == k;
    // Loops: the batch's, the groups' (not for a whole K), m.
    let rank = batched as usize + (!whole) as usize + 1;
    let bd: Vec<String> = if batched { vec!["d0".to_string()] } else { vec![] };
    let dg = format!("d{}", batched as usize);
    let dm = format!("d{}", rank - 1);
    let with_b = |x: &[String]| bd.iter().cloned().chain(x.iter().cloned()).collect::<Vec<String>>();
    let pos: Vec<String> = (0..u).map(|i| if whole { i.to_string() } else { format!("{dg} * {u} + {i}") }).collect();
    let mut ins: Vec<Operand> = pos.iter().flat_map(|i| [Operand::new(a.clone(), &at, map(rank, &with_b(&[i.clone(), dm.clone()]))), Operand::new(v.clone(), &vt, map(rank, &with_b(std::slice::from_ref(i))))]).collect();
    let mut its = vec![Iter::Parallel; rank];
    let init = if whole {
        e.empty(&ct)
    } else {
        its[rank - 2] = Iter::Reduction;
        let gt = TensorType::new(d, [k / u]);
        let g = e.empty(&gt);
        ins.push(Operand::new(g, &gt, map(rank, std::slice::from_ref(&dg))));
        e.filled(&ct, &z)
    };
    let c = generic(e, &its, &ins, &[Operand::new(init, &ct, map(rank, &with_b(std::slice::from_ref(&dm))))], |e, x| vec![group_step(e, d, x, u as usize, whole.then_some(z.as_str()))]).remove(0);
    // No operand has the identity map of all the loops (mod.rs parallel_candidate): the rows
    // (inner, with the K groups outer) are split between the threads here; a [4096, 1024] f32
    // matrix 324-350 -> 214 us on two threads (JAX 298).
    let extents: Vec<i64> = bs.iter().copied().chain((!whole).then_some(k / u)).chain([m]).collect();
    super::split_candidate(e, &its, &extents, 2 * u + 2 * super::elementwise::MEMORY_COST);
    reshape(e, &c, &ct, out)
}

/// A product with nothing to sum (no contracted dims, or unit ones: an outer product per batch
/// element, the per-example weight gradient `vmap(grad(...))` writes) as one generic over the
/// result's dims reading both operands where they are: `out = l * r`, no transposed copies
/// and no product loop (as a `linalg.batch_matmul` on the loop path, 128 x (32x1 @ 1x64)
/// f32 took ~150 us, the vmapped per-example gradient of a 32-64-4 MLP 2.3x JAX's time). An
/// operand computed by a dear elementwise op is kept apart from it (elementwise::kept_apart:
/// fused, it would be recomputed for every element of the other operand).
fn unit_k_product(e: &mut Emitter, f: &Func, o: &Op, dims: &DotDims) -> String {
    let (l, r) = (e.name(o.operands[0]), e.name(o.operands[1]));
    let (lt, rt, out) = (f.ty(o.operands[0]), f.ty(o.operands[1]), f.ty(o.results[0]));
    let d = out.dtype;
    let (lb, rb) = (&dims.lhs_batching_dimensions, &dims.rhs_batching_dimensions);
    let lfree = DotDims::free(lt.rank(), lb, &dims.lhs_contracting_dimensions);
    let rfree = DotDims::free(rt.rank(), rb, &dims.rhs_contracting_dimensions);
    let (nb, nl) = (lb.len(), lfree.len());
    let loops = out.rank();
    let exprs = |rank: usize, batch: &[i64], free: &[i64], first: usize| -> Vec<String> {
        (0..rank as i64)
            .map(|i| match (batch.iter().position(|&x| x == i), free.iter().position(|&x| x == i)) {
                (Some(p), _) => format!("d{p}"),
                (None, Some(p)) => format!("d{}", first + p),
                (None, None) => "0".to_string(),
            })
            .collect()
    };
    let ins = [Operand::new(&l, lt, map(loops, &exprs(lt.rank(), lb, &lfree, nb))), Operand::new(&r, rt, map(loops, &exprs(rt.rank(), rb, &rfree, nb + nl)))];
    let init = e.empty(out);
    let outs = [Operand::new(init, out, super::identity(loops))];
    let mul = if d.is_float() { "arith.mulf" } else { "arith.muli" };
    generic(e, &vec![Iter::Parallel; loops], &ins, &outs, |e, a| vec![e.op(format!("{mul} {}, {} : {d}", a[0], a[1]))]).remove(0)
}

/// The operand layouts of a tiled product.
#[derive(Clone, Copy)]
pub(super) struct Layout {
    /// `[b, m, k] x [b, k, n]` in a loop over the batch (else `[m, k] x [k, n]`).
    pub batched: bool,
    /// B is given as `[n, k]` (`[b, n, k]` when batched).
    pub b_nk: bool,
    /// A is given as `[k, m]` (`[b, k, m]` when batched): the tagged products read it
    /// transposed.
    pub a_km: bool,
}

impl Layout {
    /// `[m, k] x [k, n]`, or batched `[b, m, k] x [b, k, n]`.
    const PLAIN: Layout = Layout { batched: false, b_nk: false, a_km: false };
}

/// The tiled product of `plan` (tagged for the transform script): packed panels, in a loop
/// over the batch when batched. On several threads (Target::parallel_matmul) the batch
/// loop is an `scf.forall` when there are at least as many batch elements as threads, else
/// the blocks of each product are. Where the target says so ([`runtime_gemm`]) it is one
/// call of the runtime's product instead, writing into `dest` (the function's output
/// buffer and its type) when given.
#[allow(clippy::too_many_arguments)]
fn tiled(e: &mut Emitter, d: DType, ops: [&str; 3], [b, m, n, k]: [i64; 4], lay: Layout, plan: &Plan, zero: bool, dest: Option<(String, TensorType)>) -> String {
    if e.cg.target.runtime_gemm(d, [b, m, n, k]) {
        return runtime_gemm(e, d, ops, [b, m, n, k], lay, zero, dest);
    }
    let tag = e.tiles.len();
    e.tiles.push(MatmulTile { tag, kb: if plan.micro(lay.a_km) { 0 } else { plan.kb }, mr: plan.mr, nr: plan.nr });
    let threads = e.threads();
    let par = threads > 1 && e.cg.target.parallel_matmul(plan.mp, plan.np, k.saturating_mul(b), threads);
    if lay.batched {
        let outer = par && b >= threads;
        batch_loop(e, d, ops, [b, m, n, k], outer, lay, |e, ops| packed_matmul(e, d, ops, [m, n, k], plan, tag, par && !outer, Layout { batched: false, ..lay }, zero))
    } else {
        packed_matmul(e, d, ops, [m, n, k], plan, tag, par, lay, zero)
    }
}

/// The product as one call of the runtime's packed product `quabla_gemm_<d>` (runtime
/// crate `gemm`: precompiled micro-kernels, its own blocking and threads): A and B are read
/// in place in the layouts `lay` gives (`bufferization.to_buffer ... read_only` right before
/// the call, each with its own `quabla.gemm_operand` attribute so that CSE never merges it
/// with an earlier read of the same tensor, which would let bufferization reuse the buffer in
/// between), C is a fresh buffer or the function's output buffer `dest` (holding `init`
/// first when accumulating, `!zero`): as it is when it has C's shape, else viewed as C by a
/// collapse of its contiguous groups (an output of several batch or free dims, attention's
/// [b, h, q, k] as [b * h, q, k]).
#[allow(clippy::too_many_arguments)]
fn runtime_gemm(e: &mut Emitter, d: DType, [a, bb, init]: [&str; 3], [b, m, n, k]: [i64; 4], lay: Layout, zero: bool, dest: Option<(String, TensorType)>) -> String {
    let bs: &[i64] = if lay.batched { &[b] } else { &[] };
    let ty = |x: i64, y: i64| TensorType::new(d, bs.iter().copied().chain([x, y]).collect::<Vec<_>>());
    let (at, bt, ct) = (if lay.a_km { ty(k, m) } else { ty(m, k) }, if lay.b_nk { ty(n, k) } else { ty(k, n) }, ty(m, n));
    let (au, bu) = (super::kernel_operand(e, a, &at), super::kernel_operand(e, bb, &bt));
    gemm_call(e, d, [&au, &bu, init], &ct, [b, m, n, k], lay, zero, dest)
}

/// The call of the runtime's product on unranked memrefs `au` and `bu` (A and B as [`Layout`]
/// says; a rank-3 A or B is batched, a rank-2 B shared by the batch) into C of type `ct`
/// (rank 3: batched), a fresh buffer or the function's output `dest` ([`runtime_gemm`]).
/// Returns C as a tensor.
#[allow(clippy::too_many_arguments)]
pub(super) fn gemm_call(e: &mut Emitter, d: DType, [au, bu, init]: [&str; 3], ct: &TensorType, [b, m, n, k]: [i64; 4], lay: Layout, zero: bool, dest: Option<(String, TensorType)>) -> String {
    let unranked = format!("memref<*x{d}>");
    let cm = super::memref(ct);
    let c = super::layout::result_buffer(e, dest, ct);
    if !zero {
        e.line(format!("bufferization.materialize_in_destination {init} in restrict writable {c} : ({ct}, {cm}) -> ()"));
    }
    let cu = e.op(format!("memref.cast {c} : {cm} to {unranked}"));
    gemm_into(e, d, [au, bu, &cu], [b, m, n, k], lay, !zero);
    e.op(format!("bufferization.to_tensor {c} restrict writable : {cm} to {ct}"))
}

/// The call of the runtime's product on unranked memrefs A, B and C (any strides; rank 3:
/// batched), adding into C when `accumulate`; threaded when the product is worth it.
pub(super) fn gemm_into(e: &mut Emitter, d: DType, [au, bu, cu]: [&str; 3], [b, m, n, k]: [i64; 4], lay: Layout, accumulate: bool) {
    if !e.gemms.contains(&d) {
        e.gemms.push(d);
    }
    let unranked = format!("memref<*x{d}>");
    let threads = e.threads();
    let threads = if threads > 1 && e.cg.target.parallel_runtime_gemm(d, [b, m, n, k], threads) { threads } else { 1 };
    let flags: Vec<String> = [lay.a_km as i64, lay.b_nk as i64, accumulate as i64, threads].iter().map(|v| e.op(format!("arith.constant {v} : i64"))).collect();
    e.line(format!("func.call @quabla_gemm_{d}({au}, {bu}, {cu}, {}) : ({unranked}, {unranked}, {unranked}, i64, i64, i64, i64) -> ()", flags.join(", ")));
}

/// The declarations of the runtime products of element types `ds` (C interface).
pub fn declarations(ds: &[DType]) -> String {
    ds.iter().map(|d| format!("  func.func private @quabla_gemm_{d}(memref<*x{d}>, memref<*x{d}>, memref<*x{d}>, i64, i64, i64, i64) attributes {{llvm.emit_c_interface}}\n")).collect()
}

/// `C = A B` (A `m x k`, B `k x n`; C zero-initialized, or `init` accumulated into when not
/// `zero`) with B packed into contiguous panels of `nr` columns (`[n/nr, k, nr]`,
/// [`pack_b`]), looping over blocks of `mb` rows of A and over the panels; each step is one
/// tagged `mb x nr x k` `linalg.matmul` that the transform script blocks over K and
/// vectorizes, its output block zeroed where it is computed (no pass over the whole C before
/// the product). A panel slice stays in L1 while the register blocks of the row block pass
/// over it (crate::tiling::choose). Ragged N (`n % nr = w > 0`) peels the last panel: B's
/// last `w` columns are packed into a zero-padded panel, its steps compute the `mb x nr`
/// blocks of an `m x nr` edge product whose leading `m x w` is inserted into C, so neither B
/// nor C is copied whole for padding. Ragged M runs on a zero-padded copy of A (`plan.mp` rows) into an
/// `mp x n` product whose leading `m` rows are the result. With `par` the (row block, panel)
/// pairs are the iterations of one `scf.forall` (row-major, so a thread's contiguous share
/// keeps the row-block-outer order), and the peeled panel's row blocks another. With `b_nk`
/// B is given as `[n, k]` and packed from that layout; with `a_km` A is given as `[k, m]`
/// and each step reads its `k x mb` slice through the product's transposed lhs map.
#[allow(clippy::too_many_arguments)]
fn packed_matmul(e: &mut Emitter, d: DType, [a, b, init]: [&str; 3], [m, n, k]: [i64; 3], plan: &Plan, tag: usize, par: bool, lay: Layout, zero: bool) -> String {
    let (mp, mb, nr) = (plan.mp, plan.mb, plan.nr);
    let a_shape = |rows: i64| if lay.a_km { [k, rows] } else { [rows, k] };
    if mp != m {
        debug_assert!(zero, "a padded product is computed into a zero product");
        let z = e.scalar(d, zero_lit(d));
        let big = e.filled(&TensorType::new(d, a_shape(mp)), &z);
        let ap = super::insert_by_copy(e, a, &TensorType::new(d, a_shape(m)), &big, &TensorType::new(d, a_shape(mp)), "0, 0", None);
        let cp = e.empty(&TensorType::new(d, [mp, n]));
        let r = packed_matmul(e, d, [&ap, b, &cp], [mp, n, k], &Plan { mp, ..*plan }, tag, par, lay, true);
        return e.op(format!("tensor.extract_slice {r}[0, 0] [{m}, {n}] [1, 1] : {} to {}", TensorType::new(d, [mp, n]), TensorType::new(d, [m, n])));
    }
    if plan.micro(lay.a_km) {
        return micro_matmul(e, d, [a, b, init], [m, n, k], plan, tag, par, lay, zero);
    }
    let (full, w) = (n / nr, n % nr);
    debug_assert!(zero || w == 0, "a peeled panel is computed into a zero block");
    let no = full + i64::from(w > 0);
    let bp = pack_b(e, d, b, [n, k], nr, lay.b_nk, par);
    let (at, ct, bpt) = (TensorType::new(d, a_shape(m)), TensorType::new(d, [m, n]), TensorType::new(d, [no, k, nr]));
    let (abt, pant, cst) = (TensorType::new(d, a_shape(mb)), TensorType::new(d, [k, nr]), TensorType::new(d, [mb, nr]));
    let rows = m / mb;
    // A `[k, mb]` row block is the lhs of a matmul whose lhs map is transposed.
    let maps = if lay.a_km { "indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] " } else { "" };
    // One step: the (mb x nr) product of row block `ablk` and panel `jo` into `out`.
    let product = |e: &mut Emitter, ablk: &str, jo: &str, out: &str| -> String {
        let pan = e.op(format!("tensor.extract_slice {bp}[{jo}, 0, 0] [1, {k}, {nr}] [1, 1, 1] : {bpt} to {pant}"));
        e.op(format!("linalg.matmul {maps}{{quabla.tile = {tag} : i64}} ins({ablk}, {pan} : {abt}, {pant}) outs({out} : {cst}) -> {cst}"))
    };
    let mut acc = init.to_string();
    if full > 0 {
        acc = block_loop(e, par && rows * full >= 2, [a, &acc], [rows, full], [mb, k], [&at, &abt], lay.a_km, &ct, |e, ablk, io, jo, acc| {
            let cnr = e.index(nr);
            let j = e.op(format!("arith.muli {jo}, {cnr} : index"));
            let mut cs = e.op(format!("tensor.extract_slice {acc}[{io}, {j}] [{mb}, {nr}] [1, 1] : {ct} to {cst}"));
            if zero {
                let z = e.scalar(d, zero_lit(d));
                cs = e.op(format!("linalg.fill ins({z} : {d}) outs({cs} : {cst}) -> {cst}"));
            }
            let p = product(e, ablk, jo, &cs);
            format!("{p} into {acc}[{io}, {j}] [{mb}, {nr}] [1, 1] : {cst} into {ct}")
        });
    }
    if w > 0 {
        // The peeled panel's whole `mb x nr` blocks go to an `m x nr` edge product (full,
        // in-bounds vector writes like the other blocks), whose leading `w` columns are then
        // inserted into C.
        let et = TensorType::new(d, [m, nr]);
        let e0 = e.empty(&et);
        let ev = block_loop(e, par && rows >= 2, [a, &e0], [rows, 1], [mb, k], [&at, &abt], lay.a_km, &et, |e, ablk, io, _, acc| {
            let cs = e.op(format!("tensor.extract_slice {acc}[{io}, 0] [{mb}, {nr}] [1, 1] : {et} to {cst}"));
            let z = e.scalar(d, zero_lit(d));
            let cs = e.op(format!("linalg.fill ins({z} : {d}) outs({cs} : {cst}) -> {cst}"));
            let jo = e.index(full);
            let p = product(e, ablk, &jo, &cs);
            format!("{p} into {acc}[{io}, 0] [{mb}, {nr}] [1, 1] : {cst} into {et}")
        });
        let wt = TensorType::new(d, [m, w]);
        let pe = e.op(format!("tensor.extract_slice {ev}[0, 0] [{m}, {w}] [1, 1] : {et} to {wt}"));
        acc = super::insert_by_copy(e, &pe, &wt, &acc, &ct, &format!("0, {}", full * nr), None);
    }
    acc
}

/// `C = A B` on the micro-panel path (`Plan::micro`; A `m x k` with `m` a multiple of the
/// row block, B `k x n`): B packed into `[n/nr, k, nr]` panels ([`pack_b`], the last one
/// zero-padded), A into `[m/mr, k, mr]` micro-panels ([`pack_a`]), then per K block of `kc`:
/// over blocks of `mc` rows and the panels (one `scf.forall` over the pairs with `par`),
/// and over the row block's micro-panels, one tagged `mr x nr x kc` product each (the
/// register block: its accumulators stay in registers over the K block; the panel slice,
/// `kc x nr`, stays in L1 while the micro-panels pass over it, the row block's `mc x kc`
/// slice of packed A in L2 while the panels pass). The broadcasts of A come from contiguous
/// memory (`mr` elements per step of K) instead of `mr` rows `k` elements apart: on this Xeon the
/// in-place rows of A, 4 KB apart at K = 1024, fall into one L1 set. Each `mc x nr` output
/// block is zeroed where it is computed (with `zero`; else it accumulates into `init`), then
/// all K blocks accumulate into it. A ragged N computes an `m x np` product whose leading `n`
/// columns are C.
#[allow(clippy::too_many_arguments)]
fn micro_matmul(e: &mut Emitter, d: DType, [a, b, init]: [&str; 3], [m, n, k]: [i64; 3], plan: &Plan, tag: usize, par: bool, lay: Layout, zero: bool) -> String {
    let (mc, kc, nr, mr) = (plan.mc, plan.kc, plan.nr, plan.mr);
    let (full, w) = (n / nr, n % nr);
    debug_assert!(zero || w == 0, "a padded panel is computed into a zero product");
    let no = full + i64::from(w > 0);
    let bp = pack_b(e, d, b, [n, k], nr, lay.b_nk, par);
    let ap = pack_a(e, d, a, [m, k], mr, lay.a_km, par);
    let (apt, bpt, ct) = (TensorType::new(d, [m / mr, k, mr]), TensorType::new(d, [no, k, nr]), TensorType::new(d, [m, no * nr]));
    let (abt, pant, cst, c8t) = (TensorType::new(d, [kc, mr]), TensorType::new(d, [kc, nr]), TensorType::new(d, [mc, nr]), TensorType::new(d, [mr, nr]));
    let maps = "indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]";
    let rows = m / mc;
    // One K block at `pc` into the row block's `mc x nr` block `cs` of panel `jo`: its
    // micro-panels.
    let kblock = |e: &mut Emitter, pc: &str, jo: &str, io: &str, cs: &str| -> String {
        let pan = e.op(format!("tensor.extract_slice {bp}[{jo}, {pc}, 0] [1, {kc}, {nr}] [1, 1, 1] : {bpt} to {pant}"));
        let (c0, cmr, cmc) = (e.index(0), e.index(mr), e.index(mc));
        let (ir, cb, res) = (e.fresh(), e.fresh(), e.fresh());
        e.raw_line(format!("{res} = scf.for {ir} = {c0} to {cmc} step {cmr} iter_args({cb} = {cs}) -> ({cst}) {{"));
        e.depth += 1;
        let row = e.op(format!("arith.addi {io}, {ir} : index"));
        let q = e.op(format!("arith.divui {row}, {cmr} : index"));
        let ablk = e.op(format!("tensor.extract_slice {ap}[{q}, {pc}, 0] [1, {kc}, {mr}] [1, 1, 1] : {apt} to {abt}"));
        let c8 = e.op(format!("tensor.extract_slice {cb}[{ir}, 0] [{mr}, {nr}] [1, 1] : {cst} to {c8t}"));
        let p = e.op(format!("linalg.matmul {maps} {{quabla.tile = {tag} : i64}} ins({ablk}, {pan} : {abt}, {pant}) outs({c8} : {c8t}) -> {c8t}"));
        let ins = e.op(format!("tensor.insert_slice {p} into {cb}[{ir}, 0] [{mr}, {nr}] [1, 1] : {c8t} into {cst}"));
        end_for(e, &ins, &cst);
        res
    };
    let c0 = if w == 0 { init.to_string() } else { e.empty(&ct) };
    let acc = pair_loop(e, par && rows * no >= 2, &c0, [rows, no], mc, &ct, |_, _| String::new(), |e, _, io, jo, acc| {
        let cnr = e.index(nr);
        let j = e.op(format!("arith.muli {jo}, {cnr} : index"));
        let slot = e.op(format!("tensor.extract_slice {acc}[{io}, {j}] [{mc}, {nr}] [1, 1] : {ct} to {cst}"));
        // Zeroed where it is computed (or accumulated into `init`'s block), in C itself: a
        // contiguous buffer for the block (C's rows 4 KB apart at n = 1024 f32 share an L1
        // set), copied into C after the last K block, measured the same (1024^3 f32 16.3 /
        // 16.5 ms, f64 33.4 / 35.9 ms, CPU min at load 4).
        let mut cs = if zero {
            let z = e.scalar(d, zero_lit(d));
            e.op(format!("linalg.fill ins({z} : {d}) outs({slot} : {cst}) -> {cst}"))
        } else {
            slot
        };
        if kc == k {
            let pc = e.index(0);
            cs = kblock(e, &pc, jo, io, &cs);
        } else {
            let (cf, ck, ckc) = (e.index(0), e.index(k), e.index(kc));
            let (pc, cc, res) = (e.fresh(), e.fresh(), e.fresh());
            e.raw_line(format!("{res} = scf.for {pc} = {cf} to {ck} step {ckc} iter_args({cc} = {cs}) -> ({cst}) {{"));
            e.depth += 1;
            let r = kblock(e, &pc, jo, io, &cc);
            end_for(e, &r, &cst);
            cs = res;
        }
        format!("{cs} into {acc}[{io}, {j}] [{mc}, {nr}] [1, 1] : {cst} into {ct}")
    });
    if w == 0 {
        return acc;
    }
    e.op(format!("tensor.extract_slice {acc}[0, 0] [{m}, {n}] [1, 1] : {ct} to {}", TensorType::new(d, [m, n])))
}

/// A (`[m, k]`, or `[k, m]` with `a_km`; `m` a multiple of `mr`) packed into `[m/mr, k, mr]`
/// micro-panels (each contiguous, `mr` rows per step of K) by one `linalg.transpose`, or with
/// `par` one micro-panel per iteration of an `scf.forall`.
fn pack_a(e: &mut Emitter, d: DType, a: &str, [m, k]: [i64; 2], mr: i64, a_km: bool, par: bool) -> String {
    let at = if a_km { TensorType::new(d, [k, m]) } else { TensorType::new(d, [m, k]) };
    pack_panels(e, d, (a, &at), [m / mr, k, mr], !a_km, par)
}

/// `x` (`xt`: `[count * w, k]` with `rows`, else `[k, count * w]`) as `count` contiguous `[k, w]`
/// panels (`[count, k, w]`): by one `linalg.transpose`, or with `par` one panel per iteration
/// of an `scf.forall` (the copy split across threads like the product that follows it). Packs
/// A's micro-panels and B's panels alike.
fn pack_panels(e: &mut Emitter, d: DType, (x, xt): (&str, &TensorType), [count, k, w]: [i64; 3], rows: bool, par: bool) -> String {
    let ft = TensorType::new(d, [count, k, w]);
    let fe = e.empty(&ft);
    if par && count >= 2 {
        let pant = TensorType::new(d, [k, w]);
        let (jo, acc, res) = (e.fresh(), e.fresh(), e.fresh());
        e.raw_line(format!("{res} = scf.forall ({jo}) in ({count}) shared_outs({acc} = {fe}) -> ({ft}) {{"));
        e.depth += 1;
        let cw = e.index(w);
        let j = e.op(format!("arith.muli {jo}, {cw} : index"));
        let out = e.op(format!("tensor.extract_slice {acc}[{jo}, 0, 0] [1, {k}, {w}] [1, 1, 1] : {ft} to {pant}"));
        let pan = if rows {
            let src = TensorType::new(d, [w, k]);
            let y = e.op(format!("tensor.extract_slice {x}[{j}, 0] [{w}, {k}] [1, 1] : {xt} to {src}"));
            e.op(format!("linalg.transpose ins({y} : {src}) outs({out} : {pant}) permutation = [1, 0]"))
        } else {
            let y = e.op(format!("tensor.extract_slice {x}[0, {j}] [{k}, {w}] [1, 1] : {xt} to {pant}"));
            e.op(format!("linalg.copy ins({y} : {pant}) outs({out} : {pant}) -> {pant}"))
        };
        end_forall(e, &format!("{pan} into {acc}[{jo}, 0, 0] [1, {k}, {w}] [1, 1, 1] : {pant} into {ft}"));
        return res;
    }
    if rows {
        let x3t = TensorType::new(d, [count, w, k]);
        let x3 = e.op(format!("tensor.expand_shape {x} [[0, 1], [2]] output_shape [{count}, {w}, {k}] : {xt} into {x3t}"));
        e.op(format!("linalg.transpose ins({x3} : {x3t}) outs({fe} : {ft}) permutation = [0, 2, 1]"))
    } else {
        let x3t = TensorType::new(d, [k, count, w]);
        let x3 = e.op(format!("tensor.expand_shape {x} [[0], [1, 2]] output_shape [{k}, {count}, {w}] : {xt} into {x3t}"));
        e.op(format!("linalg.transpose ins({x3} : {x3t}) outs({fe} : {ft}) permutation = [1, 0, 2]"))
    }
}

/// A loop over `rows` blocks of `mb` rows and `cols` panels accumulating into `init` (`ct`):
/// `row(e, io)` (`io` the block's first row) gives a value of the row block, computed once
/// per row block (once per pair with `par`), and `body(e, rv, io, jo, acc)` returns the
/// `<block> into <acc>[...]` text of one step's insert. One `scf.forall` over the pairs with
/// `par`, else two nested `scf.for`.
#[allow(clippy::too_many_arguments)]
fn pair_loop(e: &mut Emitter, par: bool, init: &str, [rows, cols]: [i64; 2], mb: i64, ct: &TensorType, mut row: impl FnMut(&mut Emitter, &str) -> String, mut body: impl FnMut(&mut Emitter, &str, &str, &str, &str) -> String) -> String {
    if par {
        let cmb = e.index(mb);
        let (ib, jo, acc, res) = (e.fresh(), e.fresh(), e.fresh(), e.fresh());
        e.raw_line(format!("{res} = scf.forall ({ib}, {jo}) in ({rows}, {cols}) shared_outs({acc} = {init}) -> ({ct}) {{"));
        e.depth += 1;
        let io = e.op(format!("arith.muli {ib}, {cmb} : index"));
        let rv = row(e, &io);
        let into = body(e, &rv, &io, &jo, &acc);
        end_forall(e, &into);
        return res;
    }
    let (c0, c1, cmb, cm, cno) = (e.index(0), e.index(1), e.index(mb), e.index(rows * mb), e.index(cols));
    let (io, acc1, res) = (e.fresh(), e.fresh(), e.fresh());
    e.raw_line(format!("{res} = scf.for {io} = {c0} to {cm} step {cmb} iter_args({acc1} = {init}) -> ({ct}) {{"));
    e.depth += 1;
    let rv = row(e, &io);
    let (jo, acc2, res2) = (e.fresh(), e.fresh(), e.fresh());
    e.raw_line(format!("{res2} = scf.for {jo} = {c0} to {cno} step {c1} iter_args({acc2} = {acc1}) -> ({ct}) {{"));
    e.depth += 1;
    let into = body(e, &rv, &io, &jo, &acc2);
    let ins = e.op(format!("tensor.insert_slice {into}"));
    end_for(e, &ins, ct);
    end_for(e, &res2, ct);
    res
}

/// B (`[k, n]`, or `[n, k]` with `b_nk`) packed into `[ceil(n/nr), k, nr]` panels: the full
/// panels by one `linalg.transpose` (with `par`, one copy per panel in an `scf.forall`), a
/// ragged last panel (`n % nr` columns) zero-padded.
fn pack_b(e: &mut Emitter, d: DType, b: &str, [n, k]: [i64; 2], nr: i64, b_nk: bool, par: bool) -> String {
    let (full, w) = (n / nr, n % nr);
    let no = full + i64::from(w > 0);
    let bt = if b_nk { TensorType::new(d, [n, k]) } else { TensorType::new(d, [k, n]) };
    let bpt = TensorType::new(d, [no, k, nr]);
    // The full panels of `x` (B itself, or its leading `full * nr` columns/rows).
    let pack_full = |e: &mut Emitter, x: &str, xt: &TensorType| pack_panels(e, d, (x, xt), [full, k, nr], b_nk, par);
    if w == 0 {
        return pack_full(e, b, &bt);
    }
    let mut bp = e.empty(&bpt);
    if full > 0 {
        let xt = if b_nk { TensorType::new(d, [full * nr, k]) } else { TensorType::new(d, [k, full * nr]) };
        let x = e.op(format!("tensor.extract_slice {b}[0, 0] [{}, {}] [1, 1] : {bt} to {xt}", xt.shape[0], xt.shape[1]));
        let f = pack_full(e, &x, &xt);
        bp = e.op(format!("tensor.insert_slice {f} into {bp}[0, 0, 0] [{full}, {k}, {nr}] [1, 1, 1] : {} into {bpt}", TensorType::new(d, [full, k, nr])));
    }
    // The last `w` columns as a `[k, w]` tile.
    let kw = TensorType::new(d, [k, w]);
    let last = if b_nk {
        let wk = TensorType::new(d, [w, k]);
        let x = e.op(format!("tensor.extract_slice {b}[{}, 0] [{w}, {k}] [1, 1] : {bt} to {wk}", full * nr));
        let te = e.empty(&kw);
        e.op(format!("linalg.transpose ins({x} : {wk}) outs({te} : {kw}) permutation = [1, 0]"))
    } else {
        e.op(format!("tensor.extract_slice {b}[0, {}] [{k}, {w}] [1, 1] : {bt} to {kw}", full * nr))
    };
    let z = e.scalar(d, zero_lit(d));
    let pant = TensorType::new(d, [k, nr]);
    let pz = e.filled(&pant, &z);
    let pl = super::insert_by_copy(e, &last, &kw, &pz, &pant, "0, 0", None);
    e.op(format!("tensor.insert_slice {pl} into {bp}[{full}, 0, 0] [1, {k}, {nr}] [1, 1, 1] : {pant} into {bpt}"))
}

/// A loop over `rows` row blocks (`mb x k` slices of `a`, or `k x mb` ones with `a_km`: A
/// given as `[k, m]`; `abt` the block's type) and `cols` panels accumulating into `init` (`ct`):
/// `body(e, a_block, io, jo, acc)` returns the `<block> into <acc>[...]` text of one step's
/// insert. One `scf.forall` over the (row block, panel) pairs with `par`, else two nested
/// `scf.for` (the row block sliced once per row).
#[allow(clippy::too_many_arguments)]
fn block_loop(e: &mut Emitter, par: bool, [a, init]: [&str; 2], [rows, cols]: [i64; 2], [mb, k]: [i64; 2], [at, abt]: [&TensorType; 2], a_km: bool, ct: &TensorType, body: impl FnMut(&mut Emitter, &str, &str, &str, &str) -> String) -> String {
    let a_block = |e: &mut Emitter, io: &str| {
        if a_km {
            e.op(format!("tensor.extract_slice {a}[0, {io}] [{k}, {mb}] [1, 1] : {at} to {abt}"))
        } else {
            e.op(format!("tensor.extract_slice {a}[{io}, 0] [{mb}, {k}] [1, 1] : {at} to {abt}"))
        }
    };
    pair_loop(e, par, init, [rows, cols], mb, ct, a_block, body)
}

/// Ends an `scf.for` body that yields `value` of type `ty`.
fn end_for(e: &mut Emitter, value: &str, ty: impl std::fmt::Display) {
    e.line(format!("scf.yield {value} : {ty}"));
    e.depth -= 1;
    e.line("}");
}

/// Ends an `scf.forall` body whose one result is `tensor.parallel_insert_slice {into}`.
pub(super) fn end_forall(e: &mut Emitter, into: &str) {
    close_forall(e, &[into.to_string()], "}");
}

/// [`end_forall`] of a loop with one `tensor.parallel_insert_slice` per entry of `inserts`
/// and a `mapping` attribute (e.g. `#gpu.block<x>`): a mapped loop is not folded away by
/// canonicalization when it has one iteration.
pub(super) fn end_forall_mapped(e: &mut Emitter, inserts: &[String], mapping: &str) {
    close_forall(e, inserts, &format!("}} {{mapping = [{mapping}]}}"));
}

/// Closes an `scf.forall`: its `in_parallel` block with one `tensor.parallel_insert_slice` per
/// entry of `inserts`, then `last` (the closing brace and any attributes).
pub(super) fn close_forall(e: &mut Emitter, inserts: &[String], last: &str) {
    e.raw_line("scf.forall.in_parallel {");
    e.depth += 1;
    for into in inserts {
        e.line(format!("tensor.parallel_insert_slice {into}"));
    }
    e.depth -= 1;
    e.raw_line("}");
    e.depth -= 1;
    e.raw_line(last);
}

/// A loop over the batch of `[b, m, k] x [b, k, n] -> [b, m, n]` (init given; A as
/// `[b, k, m]` and B as `[b, n, k]` with `lay.a_km` / `lay.b_nk`) that computes each product
/// with `body` on rank-reduced slices; an `scf.forall` with `par`.
#[allow(clippy::too_many_arguments)]
fn batch_loop(e: &mut Emitter, d: DType, [a, bb, init]: [&str; 3], [b, m, n, k]: [i64; 4], par: bool, lay: Layout, body: impl FnOnce(&mut Emitter, [&str; 3]) -> String) -> String {
    let ([a0, a1], [b0, b1]) = (if lay.a_km { [k, m] } else { [m, k] }, if lay.b_nk { [n, k] } else { [k, n] });
    let (at, bt, ct) = (TensorType::new(d, [b, a0, a1]), TensorType::new(d, [b, b0, b1]), TensorType::new(d, [b, m, n]));
    let (a2, b2, c2) = (TensorType::new(d, [a0, a1]), TensorType::new(d, [b0, b1]), TensorType::new(d, [m, n]));
    let (bi, acc, res) = (e.fresh(), e.fresh(), e.fresh());
    if par {
        e.raw_line(format!("{res} = scf.forall ({bi}) in ({b}) shared_outs({acc} = {init}) -> ({ct}) {{"));
    } else {
        let (c0, c1, cb) = (e.index(0), e.index(1), e.index(b));
        e.raw_line(format!("{res} = scf.for {bi} = {c0} to {cb} step {c1} iter_args({acc} = {init}) -> ({ct}) {{"));
    }
    e.depth += 1;
    let x = e.op(format!("tensor.extract_slice {a}[{bi}, 0, 0] [1, {a0}, {a1}] [1, 1, 1] : {at} to {a2}"));
    let y = e.op(format!("tensor.extract_slice {bb}[{bi}, 0, 0] [1, {b0}, {b1}] [1, 1, 1] : {bt} to {b2}"));
    let z = e.op(format!("tensor.extract_slice {acc}[{bi}, 0, 0] [1, {m}, {n}] [1, 1, 1] : {ct} to {c2}"));
    let p = body(e, [&x, &y, &z]);
    let into = format!("{p} into {acc}[{bi}, 0, 0] [1, {m}, {n}] [1, 1, 1] : {c2} into {ct}");
    if par {
        end_forall(e, &into);
        return res;
    }
    let ins = e.op(format!("tensor.insert_slice {into}"));
    end_for(e, &ins, &ct);
    res
}

/// Lowers one op of this family, returning its result's name (exhaustive over the family).
pub fn lower(e: &mut Emitter, f: &Func, o: &Op, op: &DotOp) -> Result<String, LowerError> {
    match op {
        DotOp::DotGeneral { dims } => lower_dot_general(e, f, o, dims),
    }
}

/// `init + l r` for `l` `[m, k]`, `r` `[k, n]` and `init` `[m, n]` on the tiled path, or None
/// when the plan pads the shape or there is no plan (the padded path computes into a zero
/// product, not into `init`). For other lowerings' accumulating loops (convolution's).
pub fn matmul_into(e: &mut Emitter, d: DType, l: &str, r: &str, init: &str, [m, n, k]: [i64; 3]) -> Option<String> {
    if !e.cg.tile_matmuls {
        return None;
    }
    let plan = e.cg.target.matmul_plan(d, m, n, k)?;
    if (plan.mp, plan.np) != (m, n) {
        return None;
    }
    Some(tiled(e, d, [l, r, init], [1, m, n, k], Layout::PLAIN, &plan, false, None))
}

/// The panel width of the tiled product `[m, k] x [k, n]` when it could take B already packed
/// (`[n / nr, k, nr]`, see [`matmul_prepacked`]): None without a plan or when the plan pads N.
/// For lowerings that can write B in panel order themselves (convolution's patches).
pub fn prepacked_nr(e: &Emitter, d: DType, [m, n, k]: [i64; 3]) -> Option<i64> {
    if !e.cg.tile_matmuls {
        return None;
    }
    let plan = e.cg.target.matmul_plan(d, m, n, k)?;
    (plan.np == n).then_some(plan.nr)
}

/// `init + A B` (`init` `[m, n]`, zero when None) for `a` `[m, k]` and B given packed as `bp`
/// `[n / nr, k, nr]` (nr from [`prepacked_nr`]), on the tiled path without the packing copy:
/// the loops of `packed_matmul` (row blocks of A, then panels; one thread) over the caller's
/// panels. A ragged M runs on a zero-padded copy of A (not with `init`: None then).
/// Self-contained (its own loops) so that the panel layout it reads is the one
/// [`prepacked_nr`] promises.
pub fn matmul_prepacked(e: &mut Emitter, d: DType, a: &str, bp: &str, init: Option<&str>, [m, n, k]: [i64; 3]) -> Option<String> {
    let plan = e.cg.target.matmul_plan(d, m, n, k)?;
    if !e.cg.tile_matmuls || plan.np != n || (init.is_some() && plan.mp != m) {
        return None;
    }
    let (mp, mb, nr) = (plan.mp, plan.mb, plan.nr);
    let tag = e.tiles.len();
    e.tiles.push(MatmulTile { tag, kb: plan.kb, mr: plan.mr, nr });
    let z = e.scalar(d, zero_lit(d));
    let ap = if mp == m {
        a.to_string()
    } else {
        let big = e.filled(&TensorType::new(d, [mp, k]), &z);
        e.op(format!("tensor.insert_slice {a} into {big}[0, 0] [{m}, {k}] [1, 1] : {} into {}", TensorType::new(d, [m, k]), TensorType::new(d, [mp, k])))
    };
    let no = n / nr;
    let (at, ct, bpt) = (TensorType::new(d, [mp, k]), TensorType::new(d, [mp, n]), TensorType::new(d, [no, k, nr]));
    let (abt, pant, cst) = (TensorType::new(d, [mb, k]), TensorType::new(d, [k, nr]), TensorType::new(d, [mb, nr]));
    let init = match init {
        Some(i) => i.to_string(),
        None => e.filled(&ct, &z),
    };
    let (c0, c1, cmb, cm, cno, cnr) = (e.index(0), e.index(1), e.index(mb), e.index(mp), e.index(no), e.index(nr));
    let (io, acc1, res) = (e.fresh(), e.fresh(), e.fresh());
    e.raw_line(format!("{res} = scf.for {io} = {c0} to {cm} step {cmb} iter_args({acc1} = {init}) -> ({ct}) {{"));
    e.depth += 1;
    let ablk = e.op(format!("tensor.extract_slice {ap}[{io}, 0] [{mb}, {k}] [1, 1] : {at} to {abt}"));
    let (jo, acc2, res2) = (e.fresh(), e.fresh(), e.fresh());
    e.raw_line(format!("{res2} = scf.for {jo} = {c0} to {cno} step {c1} iter_args({acc2} = {acc1}) -> ({ct}) {{"));
    e.depth += 1;
    let pan = e.op(format!("tensor.extract_slice {bp}[{jo}, 0, 0] [1, {k}, {nr}] [1, 1, 1] : {bpt} to {pant}"));
    let j = e.op(format!("arith.muli {jo}, {cnr} : index"));
    let cs = e.op(format!("tensor.extract_slice {acc2}[{io}, {j}] [{mb}, {nr}] [1, 1] : {ct} to {cst}"));
    let p = e.op(format!("linalg.matmul {{quabla.tile = {tag} : i64}} ins({ablk}, {pan} : {abt}, {pant}) outs({cs} : {cst}) -> {cst}"));
    let ins = e.op(format!("tensor.insert_slice {p} into {acc2}[{io}, {j}] [{mb}, {nr}] [1, 1] : {cst} into {ct}"));
    end_for(e, &ins, &ct);
    end_for(e, &res2, &ct);
    if mp == m {
        return Some(res);
    }
    Some(e.op(format!("tensor.extract_slice {res}[0, 0] [{m}, {n}] [1, 1] : {ct} to {}", TensorType::new(d, [m, n]))))
}

/// A product `[m, k] x [k, n] -> [m, n]` (or `[b, m, k] x [b, k, n] -> [b, m, n]` when
/// `batched`) of operands already in that form, for other lowerings (convolution's im2col),
/// through the same tiled path as `dot_general`.
pub fn matmul_of(e: &mut Emitter, d: DType, l3: &str, r3: &str, [b, m, n, k]: [i64; 4], batched: bool) -> String {
    let (l3t, r3t, o3t) = if batched {
        (TensorType::new(d, [b, m, k]), TensorType::new(d, [b, k, n]), TensorType::new(d, [b, m, n]))
    } else {
        (TensorType::new(d, [m, k]), TensorType::new(d, [k, n]), TensorType::new(d, [m, n]))
    };
    let plan = if e.cg.tile_matmuls { e.cg.target.matmul_plan(d, m, n, k) } else { None };
    match plan {
        Some(plan) => {
            let init = e.empty(&o3t);
            tiled(e, d, [l3, r3, &init], [b, m, n, k], Layout { batched, ..Layout::PLAIN }, &plan, true, None)
        }
        None => plain_matmul(e, [l3, r3], [&l3t, &r3t, &o3t], batched, false, false),
    }
}

/// Whether every use of `v` in `f` reads each of its elements once per element it computes:
/// elementwise ops, reductions, the function's outputs, and reshapes or transposes of it whose
/// uses do. A broadcast, a product, a slice or gather, a control op may read an element many
/// times.
fn read_once(f: &Func, v: quabla_dialect::Value) -> bool {
    use quabla_dialect::{LayoutOp, OpKind};
    let mut ok = true;
    let mut layout_results = Vec::new();
    quabla_dialect::walk_ops(&f.ops, &mut |op| {
        if !op.operands.contains(&v) {
            return;
        }
        match &op.kind {
            OpKind::Elementwise(_) | OpKind::Reduce(_) => {}
            OpKind::Layout(LayoutOp::Reshape { .. } | LayoutOp::Transpose { .. } | LayoutOp::StopGradient {}) => layout_results.extend(op.results.iter().copied()),
            _ => ok = false,
        }
    });
    ok && layout_results.into_iter().all(|r| read_once(f, r))
}

/// Whether `v` is the result of an elementwise op of `f`, seen through layout ops (whose
/// generics upstream fusion also merges).
fn elementwise_result(f: &Func, v: quabla_dialect::Value) -> bool {
    super::elementwise::elementwise_source(f, v).is_some()
}

/// One step of a product's K group ([`plain_matmul`], [`km_matvec`]): the `u` products of the
/// operand pairs `a[2 i] * a[2 i + 1]` added in K order to `from` (a whole K's zero), else to
/// the accumulator, the block's last argument.
fn group_step(e: &mut Emitter, d: DType, a: &[String], u: usize, from: Option<&str>) -> String {
    let (mul, add) = if d.is_float() { ("arith.mulf", "arith.addf") } else { ("arith.muli", "arith.addi") };
    let mut acc = from.map_or_else(|| a[a.len() - 1].clone(), str::to_string);
    for i in 0..u {
        let p = e.op(format!("{mul} {}, {} : {d}", a[2 * i], a[2 * i + 1]));
        acc = e.op(format!("{add} {acc}, {p} : {d}"));
    }
    acc
}

/// The most elements of K an untiled product's step reads ([`plain_matmul`], [`k_group`]).
const K_GROUP_MAX: i64 = 16;

/// The elements of K each step of an untiled product reads: all of a K of 2 to
/// [`K_GROUP_MAX`], else its largest divisor from 4 to [`K_GROUP_MAX`] (None: one).
/// Measured (jitted `a @ b` f32, Zen 4, two threads, 2026-12-05, JAX alongside): batched
/// 256 x (8x8 @ 8x8) 77 -> 5.5 us (JAX 45-49), 64 x (16x16 @ 16x16) 42 -> 8.8 (38), 32 x (4x64
/// @ 64x4) 26 -> 13.3 (24-25), 8x4 x (16x16 @ 16x16) 21 -> 5.5 (24), 1024x3 @ 3x3 6.9 -> 1.5
/// (41-47); a [1000, 16] @ [16] dot broadcast over 1000 columns (the unit-loop form) 56 us
/// (JAX 92).
fn k_group(k: i64) -> Option<i64> {
    if (2..=K_GROUP_MAX).contains(&k) {
        return Some(k);
    }
    (4..=K_GROUP_MAX).rev().find(|u| k % u == 0).or((k <= K_WHOLE_MAX).then_some(k))
}

/// The longest K without a divisor from 4 to [`K_GROUP_MAX`] (a prime) that an untiled
/// product reads whole in one step ([`k_group`]); one element a step left each output's sum a
/// loop with its accumulator in memory, which LLVM did not vectorize over the columns (256 x
/// (17x17 @ 17x17) f32 470 -> 72 us, JAX 100-136).
const K_WHOLE_MAX: i64 = 32;

/// An untiled product `[b?, m, k] x [b?, k, n]` into a zero-filled init. On the CPU a
/// `linalg.generic` over (b?, m, k, n): the output's columns innermost, so the inner loop
/// reads rows of B and C contiguously and vectorizes (the named op's (m, n, k) order walks
/// B's columns: 1x1024 @ 1024x1024 f32 ran at 7.5 GB/s); each sum still runs over k in
/// order, so the results are those of the named op. K is read in groups ([`k_group`]: a
/// short K whole, in one step). Without `generic` (an operand an
/// elementwise generic computes, which upstream fusion would recompute per use), on other
/// targets and for booleans: `linalg.matmul` / `linalg.batch_matmul`.
fn plain_matmul(e: &mut Emitter, [l3, r3]: [&str; 2], [l3t, r3t, o3t]: [&TensorType; 3], batched: bool, generic_order: bool, read_once: bool) -> String {
    let d = o3t.dtype;
    let z = e.scalar(d, zero_lit(d));
    if !generic_order || e.cg.target.parallel_outer() || d == DType::I1 {
        let init = e.filled(o3t, &z);
        let name = if batched { "linalg.batch_matmul" } else { "linalg.matmul" };
        return e.op(format!("{name} ins({l3}, {r3} : {l3t}, {r3t}) outs({init} : {o3t}) -> {o3t}"));
    }
    let (rank, b) = if batched { (4, vec!["d0".to_string()]) } else { (3, vec![]) };
    let at = |x: &[&str]| b.iter().cloned().chain(x.iter().map(|s| s.to_string())).collect::<Vec<String>>();
    let (mul, add) = if d.is_float() { ("arith.mulf", "arith.addf") } else { ("arith.muli", "arith.addi") };
    let k = l3t.shape[l3t.rank() - 1];
    if let Some(u) = k_group(k) {
        // K in groups of `u`: loops (b?, m, K / u, n), the group's elements of A and B read
        // by 2 u operands, added to C in K order from zero (the loop's sums, bit for bit).
        // The K loop stored and reloaded C's row every step, each step waiting on the last
        // store when the row is a vector or two; now every u steps. A whole K whose result
        // each consumer reads once per element (`read_once`) has no K loop: all-parallel, its
        // sums start from a zero of the body (not its init: upstream fusion puts it into its
        // consumers, where an init read through a broadcast came out wrong), its output
        // fresh, so its loops reach LLVM with parallel accesses
        // (quabla_runtime::parallel_accesses). Read through a broadcast or by a product, it
        // keeps a unit K loop, which fusion leaves alone (else recomputed per use: a dot of
        // K = 16 broadcast over 1000 columns 2.2x JAX's time).
        let whole = u == k && read_once;
        let r = if whole { rank - 1 } else { rank };
        // The loops after the batch's: m, the groups' (not for a whole K), n.
        let mut loops = (batched as usize..).map(|i| format!("d{i}"));
        let dm = loops.next().unwrap_or_default();
        let dg = if whole { String::new() } else { loops.next().unwrap_or_default() };
        let dn = loops.next().unwrap_or_default();
        let (dm, dn) = (dm.as_str(), dn.as_str());
        let pos: Vec<String> = (0..u).map(|i| if whole { i.to_string() } else { format!("{dg} * {u} + {i}") }).collect();
        let mut ins: Vec<Operand> = pos.iter().flat_map(|i| [Operand::new(l3, l3t, map(r, &at(&[dm, i]))), Operand::new(r3, r3t, map(r, &at(&[i, dn])))]).collect();
        let mut its = vec![Iter::Parallel; r];
        let out = if whole {
            e.empty(o3t)
        } else {
            its[r - 2] = Iter::Reduction;
            // The groups' loop's extent (no operand reads it as a dim of its own).
            let gt = TensorType::new(d, [k / u]);
            let g = e.empty(&gt);
            ins.push(Operand::new(g, &gt, map(r, std::slice::from_ref(&dg))));
            e.filled(o3t, &z)
        };
        return generic(e, &its, &ins, &[Operand::new(out, o3t, map(r, &at(&[dm, dn])))], |e, a| vec![group_step(e, d, a, u as usize, whole.then_some(z.as_str()))]).remove(0);
    }
    let [dm, dk, dn] = if batched { ["d1", "d2", "d3"] } else { ["d0", "d1", "d2"] };
    let mut its = vec![Iter::Parallel; rank];
    its[rank - 2] = Iter::Reduction;
    let ins = [Operand::new(l3, l3t, map(rank, &at(&[dm, dk]))), Operand::new(r3, r3t, map(rank, &at(&[dk, dn])))];
    let init = e.filled(o3t, &z);
    generic(e, &its, &ins, &[Operand::new(init, o3t, map(rank, &at(&[dm, dn])))], |e, a| {
        let p = e.op(format!("{mul} {}, {} : {d}", a[0], a[1]));
        vec![e.op(format!("{add} {}, {p} : {d}", a[2]))]
    })
    .remove(0)
}

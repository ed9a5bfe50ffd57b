//! Threads for the CPU executor's compiled code: how many ([`threads_for`],
//! `QUABLA_NUM_THREADS`), the OpenMP runtime they run on (libomp, loaded into the process by
//! csrc/openmp.c so that the JIT links the `__kmpc_*` calls of OpenMP-lowered loops), and the
//! tagging of the large `linalg.generic`s that upstream fusion left ([`tag_loops`]), which the
//! transform script of quabla_lowering::tiling then tiles into `scf.forall`s.
//!
//! Policy (quabla_lowering::tiling): matmuls of at least `PAR_MATMUL_WORK` multiply-adds run
//! their (row block, panel) pairs, or batch elements, on all threads; generics of at least
//! `PAR_LOOP_WORK` work (iterations times the cost of one: the body's ops by
//! `quabla_lowering::linalg::elementwise::op_cost` plus the elements read and written; every
//! loop of 2^20 iterations, and from 2^16 iterations loops with dear bodies) are split along
//! one parallel loop into one tile per thread; smaller programs contain no OpenMP call at
//! all, so their per-call path is unchanged.
use melior::ir::attribute::{ArrayAttribute, AttributeLike};
use melior::ir::operation::{OperationLike, OperationMutLike, WalkOrder, WalkResult};
use melior::ir::r#type::{DimSize, RankedTensorType, ShapedTypeLike, TypeLike};
use melior::ir::{BlockLike, Module as MlirModule, RegionLike, Type, ValueLike};
use melior::Context;
use quabla_lowering::target::{par_code, PAR_MAX_RANK};

use crate::executor::CompileOptions;

unsafe extern "C" {
    /// csrc/openmp.c: opens libomp with global symbols; 1 when loaded.
    fn quabla_omp_load() -> i32;
}

/// Threads the code compiled with `opts` may use: `opts.threads`, or when 0
/// [`default_threads`]; 1 when the OpenMP runtime cannot be loaded (the code is then
/// single-threaded).
pub fn threads_for(opts: &CompileOptions) -> usize {
    let want = if opts.threads == 0 { default_threads() } else { opts.threads };
    if want > 1 && openmp_loaded() {
        want
    } else {
        1
    }
}

/// The process default for [`CompileOptions::threads`]: `QUABLA_NUM_THREADS` when it is a
/// positive integer, else the cores this process may run on
/// (`std::thread::available_parallelism`, which follows affinity masks and cgroup quotas).
pub fn default_threads() -> usize {
    static N: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *N.get_or_init(|| {
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        match std::env::var("QUABLA_NUM_THREADS") {
            Ok(v) => match v.trim().parse::<usize>() {
                Ok(n) if n > 0 => n,
                _ => {
                    eprintln!("quabla: QUABLA_NUM_THREADS={v:?} is not a positive integer; using {cores} threads");
                    cores
                }
            },
            Err(_) => cores,
        }
    })
}

/// Whether the OpenMP runtime (libomp) is loaded into the process, loading it on first use.
pub fn openmp_loaded() -> bool {
    static LOADED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    // SAFETY: dlopen of a system library; no arguments.
    *LOADED.get_or_init(|| unsafe { quabla_omp_load() } != 0)
}

/// Bumped when the cost model (`op_cost`) or the tagging changes, so cached objects tagged by
/// the old one miss.
const POLICY_VERSION: u32 = 15;

/// What the persistent compile cache's key adds for the loops [`tag_loops`] splits: the tag
/// pipeline and the policy's constants (the program text does not change with them).
pub fn policy_key(cm: &quabla_lowering::CpuModule) -> String {
    use quabla_lowering::tiling::{PAR_LOOP_MIN_COST, PAR_LOOP_MIN_ITERS, PAR_LOOP_WORK};
    match &cm.tag_pipeline {
        Some(p) => format!("{p};{}:{PAR_LOOP_WORK}/{PAR_LOOP_MIN_COST}/{PAR_LOOP_MIN_ITERS}/{}/v{POLICY_VERSION}", cm.threads, quabla_lowering::linalg::elementwise::MEMORY_COST),
        None => String::new(),
    }
}

/// Tags each `linalg.generic` of `module` (tensor form, after fusion) that
/// quabla_lowering::tiling::parallel_loop splits across `threads` with
/// `quabla.par = par_code(dim)`. Its loop extents are the shape of an operand with the
/// identity indexing map (elementwise ops, reductions over their input's dims), or else
/// those operand dims read as one loop alone give them ([`loop_extents`]); generics whose
/// extents are not all known stay untagged (serial), and so do generics inside an
/// `scf.forall`. Each
/// generic whose iterations are independent in memory too
/// ([`crate::parallel_accesses::fresh_parallel`]) is tagged `quabla.vec`, whatever the
/// thread count: its loops reach LLVM as loops with parallel accesses; elementwise ones of
/// several loops are first flattened into one ([`crate::flat_loops`]). Large `linalg.copy`
/// and `linalg.fill` ops are tagged `quabla.par` by the same policy ([`copy_split`]).
/// Returns how many ops were tagged.
pub fn tag_loops(ctx: &Context, module: &mut MlirModule, threads: i64) -> Tagged {
    let rejoined = crate::flat_loops::flatten_generics(ctx, module, |op| !small_generic(op));
    let i64t = Type::parse(ctx, "i64").expect("i64 parses").to_raw();
    let name = melior::StringRef::new("quabla.par");
    let vec = melior::StringRef::new("quabla.vec");
    // SAFETY: the context is live.
    let unit = unsafe { mlir_sys::mlirUnitAttrGet(ctx.to_raw()) };
    let (mut vecs, mut pars) = (0, 0);
    let mut body = module.as_operation_mut();
    body.walk_mut(WalkOrder::PreOrder, |op| {
        let op_name = op.name();
        let op_name = op_name.as_string_ref();
        // The body of a loop the lowering already made parallel (a convolution's per-image
        // scf.forall) runs on one thread per iteration: no nested teams.
        // The loops of a row-block loop (quabla_lowering's `row_blocks`) are tagged but not
        // split: its blocks are.
        if op_name.as_str() == Ok("scf.forall") {
            return if block_loop(&op) { WalkResult::Advance } else { WalkResult::Skip };
        }
        if matches!(op_name.as_str(), Ok("linalg.copy" | "linalg.fill")) {
            // A copy into a fresh buffer is a loop of independent iterations (vectorised
            // without overlap checks); as the plain `convert-linalg-to-loops` loop LLVM left
            // it scalar (a parameter returned as a 4096 x 1024 f32 output: 2.2 ms on two
            // threads, `memcpy` 1.2, JAX 0.7).
            if op_name.as_str() == Ok("linalg.copy") && crate::parallel_accesses::fresh_copy(&op) {
                // SAFETY: a live operation of the module; a unit attribute of its context.
                unsafe { mlir_sys::mlirOperationSetAttributeByName(op.to_raw(), vec.to_raw(), unit) };
                vecs += 1;
            }
            if let Some(dim) = copy_split(&op, threads).filter(|_| !in_forall(&op)) {
                // SAFETY: as below.
                unsafe { mlir_sys::mlirOperationSetAttributeByName(op.to_raw(), name.to_raw(), mlir_sys::mlirIntegerAttrGet(i64t, par_code(dim))) };
                pars += 1;
            }
            return WalkResult::Skip;
        }
        if op_name.as_str() != Ok("linalg.generic") {
            return WalkResult::Advance;
        }
        if crate::parallel_accesses::fresh_parallel(&op) && !small_generic(&op) {
            // SAFETY: a live operation of the module; a unit attribute of its context.
            unsafe { mlir_sys::mlirOperationSetAttributeByName(op.to_raw(), vec.to_raw(), unit) };
            vecs += 1;
            if let Some((attr, rank)) = written_out(&op) {
                let attr = melior::StringRef::new(attr);
                // SAFETY: as above; an i64 attribute of its context.
                unsafe { mlir_sys::mlirOperationSetAttributeByName(op.to_raw(), attr.to_raw(), mlir_sys::mlirIntegerAttrGet(i64t, rank as i64)) };
            }
        }
        if let Some(dim) = split_of(&op, threads).filter(|_| !in_forall(&op)) {
            let rank = loop_count(&op).unwrap_or(0);
            if rank <= PAR_MAX_RANK {
                // SAFETY: a live operation of the module; an i64 attribute of its context (the
                // walk's callback lifetimes are higher-ranked, so the raw API sets it).
                unsafe { mlir_sys::mlirOperationSetAttributeByName(op.to_raw(), name.to_raw(), mlir_sys::mlirIntegerAttrGet(i64t, par_code(dim))) };
                pars += 1;
            }
        }
        WalkResult::Skip
    });
    Tagged { vec: vecs, par: pars, rejoined }
}

/// The loop a large `linalg.copy` or `linalg.fill` (tensor form, static shape) is split
/// along, if any: by the policy of generics ([`split_of`]), an element read and written (a
/// fill: written) per iteration. Such copies are the lowering's (`pad`'s operand into its
/// slice, an updated parameter copied into the result: quabla_lowering's `insert_by_copy`,
/// `scatter`); as a `memcpy` on one thread a 1024^2 f32 copy took 270 us on the Xeon of
/// 2026-12-06, 133 us on two.
fn copy_split<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>, threads: i64) -> Option<usize> {
    let extents = static_shape(op.result(0).ok()?.r#type())?;
    quabla_lowering::tiling::parallel_loop(&vec![true; extents.len()], &extents, threads, copy_cost(op))
}

/// The extents of a ranked tensor type of static shape.
fn static_shape(t: Type) -> Option<Vec<i64>> {
    let t = RankedTensorType::try_from(t).ok()?;
    (0..t.rank()).map(|d| match t.dim_size(d) {
        Ok(DimSize::Static(s)) => i64::try_from(s).ok(),
        _ => None,
    }).collect()
}

/// Whether `op` is a row-block loop (an `scf.forall` with quabla_lowering's
/// `row_blocks::BLOCKS_ATTR`).
pub(crate) fn block_loop<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>) -> bool {
    op.attribute(quabla_lowering::linalg::row_blocks::BLOCKS_ATTR).is_ok()
}

/// Whether `op` lies inside an `scf.forall`.
fn in_forall<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>) -> bool {
    // SAFETY: plain queries of live operations; the parent chain ends in a null operation.
    let mut p = unsafe { mlir_sys::mlirOperationGetParentOperation(op.to_raw()) };
    while !p.ptr.is_null() {
        let name = unsafe { mlir_sys::mlirIdentifierStr(mlir_sys::mlirOperationGetName(p)) };
        // SAFETY: the identifier's string lives as long as the context.
        if unsafe { melior::StringRef::from_raw(name) }.as_str() == Ok("scf.forall") {
            return true;
        }
        p = unsafe { mlir_sys::mlirOperationGetParentOperation(p) };
    }
    false
}

/// The work units an element of a copy or fill counts for in the split policy (the
/// lowering's, which notes them as candidates: quabla_lowering's `copy_into`, `fill_into`).
fn copy_cost<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>) -> i64 {
    if op.name().as_string_ref().as_str() == Ok("linalg.copy") {
        quabla_lowering::tiling::COPY_ELEMENT_COST
    } else {
        quabla_lowering::linalg::elementwise::MEMORY_COST
    }
}

/// How many generics [`tag_loops`] tagged `quabla.vec` and `quabla.par`.
#[derive(Clone, Copy, Debug)]
pub struct Tagged {
    pub vec: usize,
    pub par: usize,
    /// Flattened results written to a flat destination (crate::flat_loops::flatten_generics):
    /// empty-tensor elimination runs again.
    pub rejoined: usize,
}

/// Generics of at most this many iterations in all (static) are left to LLVM as plain loops,
/// which its level-2 pipeline writes out (`loop-unroll-full`, quabla_runtime's
/// `llvm_compile::LEVEL2_PASSES`) so that their small buffers become registers; the loops of
/// a `quabla.vec` generic are not unrolled (`parallel_accesses::mark_parallel_loops`).
pub(crate) const SMALL_GENERIC: i64 = 16;

/// Whether `op`'s loops run at most [`SMALL_GENERIC`] iterations in all (static extents): the
/// elementwise ops of an RK4 step on a 3-vector in a `fori_loop` body, tagged, were masked
/// 4-lane vector steps over stack buffers, each reading scalars just stored (a failed
/// store-to-load forwarding per op).
fn small_generic<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>) -> bool {
    let Some(loops) = GenericLoops::of(op) else { return false };
    loop_extents(op, &loops).is_some_and(|e| e.iter().all(|&x| x >= 0) && quabla_dialect::size::saturating_product(e) <= SMALL_GENERIC)
}

/// The tag and rank of the `quabla.vec` generic `op` when loops of it are to be written out
/// (quabla_lowering::tiling::loops_script): every loop but the outer one for small blocks
/// (`quabla.unroll_block`, `quabla.unroll_scalar`: [`small_blocks`]); else the inner loop
/// (`quabla.unroll`): loops all parallel, an
/// inner loop of 2 to `UNROLL_ALWAYS` iterations, or of up to `UNROLL_INNER` under a body
/// of `UNROLL_MIN_COST` or more (a transcendental). Such a generic reads some operand through a broadcast (else it was
/// flattened: crate::flat_loops); LLVM vectorises the inner loop alone, and left one shorter
/// than a vector scalar: `exp(x[:, None] * w[None])` of 100000 x 5 ran one exp at a time.
/// Written out, the loop around it is vectorised (the short rows' accesses interleaved).
fn written_out<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>) -> Option<(&'static str, usize)> {
    let loops = GenericLoops::of(op)?;
    let rank = loops.parallel.len();
    if !loops.parallel.iter().all(|&p| p) {
        return None;
    }
    let extents = loop_extents(op, &loops)?;
    let inner = *extents.last()?;
    use quabla_lowering::tiling::{BLOCK_DEAR_COST, BLOCK_RANKS, UNROLL_ALWAYS, UNROLL_INNER, UNROLL_MIN_COST, UNROLL_RANKS};
    let cost = body_cost(op);
    let dear_block = cost >= BLOCK_DEAR_COST;
    if BLOCK_RANKS.contains(&rank) && small_blocks(&extents, dear_block) {
        return Some((if dear_block { "quabla.unroll_block" } else { "quabla.unroll_scalar" }, rank));
    }
    let dear = || cost >= UNROLL_MIN_COST || reads_by_inner_index(op, rank - 1);
    (UNROLL_RANKS.contains(&rank) && ((2..=UNROLL_ALWAYS).contains(&inner) || (2..=UNROLL_INNER).contains(&inner) && dear())).then_some(("quabla.unroll", rank))
}

/// Whether the blocks of a generic of loop `extents` (every loop's but the outer one) are
/// written out, under a `dear` body (`BLOCK_DEAR_COST`: a transcendental) or not. LLVM
/// vectorises the innermost loop left: over a middle extent of 3, 5, 6 or 7, a masked vector
/// step with gathers and scatters. Written out, a dear block (at most `BLOCK_MAX` elements;
/// over a middle extent of 2 too, in blocks of at most `PAIR_BLOCK_MAX`) is vectorised
/// across the blocks, a cheap one (at most `SCALAR_BLOCK_MAX`, over an inner loop of at most
/// `UNROLL_ALWAYS`, which the script writes out anyway) left scalar. Jitted, two threads,
/// Zen 4, 100000 blocks (2026-12-07; JAX alongside): `einsum("bij,bjk->bik")` of 3 x 3 f32
/// 940 -> 381 us (JAX 768), f64 1026 -> 396 (807), of 6 x 2 905 -> 358 (699);
/// `x[:, :, None] * y[:, None, :]` of 3 x 3 297 -> 141 (184); `exp(a) * v[:, None, :]` of
/// 3 x 3 1148 -> 573 (1314), of 2 x 3 532 -> 141 (893). Left as they were: cheap blocks over
/// a middle extent of 2 or 4 or an inner one of 4 to 7 (`einsum` 2 x 3 133 -> 263, 3 x 5
/// 2289 -> 3764, 2 x 7 929 -> 8636 written out), dear ones over 4 (`exp` 4 x 3 546 -> 1107)
/// and dear pairs of long rows (`exp` f64 2 x 6 1500 -> 2163).
fn small_blocks(extents: &[i64], dear: bool) -> bool {
    use quabla_lowering::tiling::{BLOCK_MAX, PAIR_BLOCK_MAX, SCALAR_BLOCK_MAX, UNROLL_ALWAYS, UNROLL_INNER};
    let (block, middle, inner) = (&extents[1..], &extents[1..extents.len() - 1], extents[extents.len() - 1]);
    if !block.iter().all(|&e| (1..=UNROLL_INNER).contains(&e)) {
        return false;
    }
    let elements = quabla_dialect::size::saturating_product(block.iter().copied());
    let masked = |e: i64| e > 2 && e % 4 != 0 || dear && e == 2 && elements <= PAIR_BLOCK_MAX;
    let max = if dear { BLOCK_MAX } else { SCALAR_BLOCK_MAX };
    elements <= max && middle.iter().any(|&e| masked(e)) && (dear || inner <= UNROLL_ALWAYS)
}

/// Whether a `tensor.extract` of `op`'s body reads its last index from loop `inner`'s index
/// (`linalg.index inner`, within a few ops: a clamped column of a short-row pad or
/// concatenation, quabla_lowering's `short_rows_pad`). Written out, each such read is at a
/// constant column and the rows' reads are interleaved; as a loop, a gather per element: `pad`
/// of a column before 100000 x 3 f32 115 -> 22 us, JAX 38-53.
fn reads_by_inner_index<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>, inner: usize) -> bool {
    let Some(block) = op.region(0).ok().and_then(|r| r.first_block()) else { return false };
    block_ops(&block).any(|o| {
        let n = o.operand_count();
        o.name().as_string_ref().as_str() == Ok("tensor.extract") && n > 1 && o.operand(n - 1).is_ok_and(|v| computed_from(v.to_raw(), 4, &|x| loop_index(x, inner)))
    })
}

/// Whether `v` is the result of `linalg.index dim`.
fn loop_index(v: mlir_sys::MlirValue, dim: usize) -> bool {
    // SAFETY: plain queries of a live value and its defining op.
    unsafe {
        if !mlir_sys::mlirValueIsAOpResult(v) {
            return false;
        }
        let op = melior::ir::operation::OperationRef::from_raw(mlir_sys::mlirOpResultGetOwner(v));
        op.name().as_string_ref().as_str() == Ok("linalg.index") && op.attribute("dim").ok().and_then(|a| melior::ir::attribute::IntegerAttribute::try_from(a).ok()).is_some_and(|a| a.value() == dim as i64)
    }
}

/// Whether `op`'s body reads its loop indices (`linalg.index`): flattened, each would be
/// recovered by a division and a remainder per element (tril of 1024^2 f32 53 -> 120 us).
pub(crate) fn reads_indices<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>) -> bool {
    op.region(0).ok().and_then(|r| r.first_block()).is_some_and(|b| block_ops(&b).any(|o| o.name().as_string_ref().as_str() == Ok("linalg.index")))
}

/// The operations of `block`, in order.
fn block_ops<'c: 'a, 'a>(block: &impl BlockLike<'c, 'a>) -> impl Iterator<Item = melior::ir::operation::OperationRef<'c, 'a>> {
    std::iter::successors(block.first_operation(), |o| o.next_in_block())
}

fn loop_count<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>) -> Option<usize> {
    let it = ArrayAttribute::try_from(op.attribute("iterator_types").ok()?).ok()?;
    Some(it.len())
}

/// A generic's loops: which are parallel, its indexing maps, and the text of the identity map
/// of its rank (to compare the maps with).
pub(crate) struct GenericLoops<'c> {
    pub parallel: Vec<bool>,
    pub maps: ArrayAttribute<'c>,
    pub identity: String,
}

impl<'c> GenericLoops<'c> {
    pub(crate) fn of<'a>(op: &impl OperationLike<'c, 'a>) -> Option<Self>
    where
        'c: 'a,
    {
        let it = ArrayAttribute::try_from(op.attribute("iterator_types").ok()?).ok()?;
        let maps = ArrayAttribute::try_from(op.attribute("indexing_maps").ok()?).ok()?;
        let rank = it.len();
        let parallel = (0..rank).map(|i| it.element(i).is_ok_and(|a| a.to_string().contains("parallel"))).collect();
        let dims: Vec<String> = (0..rank).map(|i| format!("d{i}")).collect();
        Some(GenericLoops { parallel, maps, identity: format!("affine_map<({0}) -> ({0})>", dims.join(", ")) })
    }

    /// Whether indexing map `i` is the identity.
    pub(crate) fn identity_map(&self, i: usize) -> bool {
        self.maps.element(i).is_ok_and(|m| m.to_string() == self.identity)
    }

    /// The results of indexing map `i`, each the loop it reads when it is a loop alone (`d2`),
    /// else None (`d0 * 4 + d1`, a constant); None when there is no map `i`.
    pub(crate) fn map_loops(&self, i: usize) -> Option<Vec<Option<usize>>> {
        let attr = self.maps.element(i).ok()?;
        // SAFETY: an affine map attribute of a live generic (its `indexing_maps` elements);
        // result k < the map's result count; plain queries of a live expression.
        unsafe {
            let map = mlir_sys::mlirAffineMapAttrGetValue(attr.to_raw());
            let results = (0..mlir_sys::mlirAffineMapGetNumResults(map)).map(|k| {
                let e = mlir_sys::mlirAffineMapGetResult(map, k);
                mlir_sys::mlirAffineExprIsADim(e).then(|| mlir_sys::mlirAffineDimExprGetPosition(e) as usize)
            });
            Some(results.collect())
        }
    }
}

/// The static extent of dim `d` of operand `i` of `op`, if it is a ranked tensor.
fn operand_dim<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>, i: usize, d: usize) -> Option<i64> {
    let t = RankedTensorType::try_from(op.operand(i).ok()?.r#type()).ok()?;
    match t.dim_size(d) {
        Ok(DimSize::Static(s)) => i64::try_from(s).ok(),
        _ => None,
    }
}

/// The extents of a generic's loops: loop by loop, the extent of the first operand dim its
/// map reads as that loop alone (all of an operand's with the identity map; a split
/// reduction's element loop from its chunk-shaped operand: quabla_lowering's
/// `reduce::thread_partials` reads the operand itself at `part * chunk + element`).
pub(crate) fn loop_extents<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>, loops: &GenericLoops<'c>) -> Option<Vec<i64>> {
    let rank = loops.parallel.len();
    let mut extents = vec![None; rank];
    for i in 0..loops.maps.len().min(op.operand_count()) {
        for (k, l) in loops.map_loops(i)?.into_iter().enumerate() {
            if let Some(l) = l.filter(|&l| l < rank && extents[l].is_none()) {
                extents[l] = operand_dim(op, i, k);
            }
        }
    }
    extents.into_iter().collect()
}

/// The loop a generic is split along, if any.
fn split_of<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>, threads: i64) -> Option<usize> {
    let loops = GenericLoops::of(op)?;
    let extents = loop_extents(op, &loops)?;
    let full = (0..loops.maps.len()).filter(|&i| loops.identity_map(i)).count() as i64;
    let cost = body_cost(op) + quabla_lowering::linalg::elementwise::MEMORY_COST * full;
    quabla_lowering::tiling::parallel_loop(&loops.parallel, &extents, threads, cost)
}

/// The summed `op_cost` of the ops of a generic's body (its only block): an `scf.for` with
/// constant bounds counts its body's ops once per iteration (a row reduction's loop over the
/// row, quabla_lowering::linalg::reduce), other nested regions as their op.
fn body_cost<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>) -> i64 {
    op.region(0).ok().and_then(|r| r.first_block()).map_or(0, |b| block_cost(&b, b.to_raw()))
}

/// The summed op costs of `block`, a block of the generic whose element block is `elements`.
fn block_cost<'c: 'a, 'a>(block: &impl BlockLike<'c, 'a>, elements: mlir_sys::MlirBlock) -> i64 {
    block_ops(block).fold(0i64, |cost, o| {
        cost.saturating_add(match o.name().as_string_ref().as_str() {
            Ok("scf.for") => for_cost(&o, elements),
            Ok("tensor.extract") if gathered(&o, elements) => quabla_lowering::linalg::elementwise::GATHER_READ_COST,
            Ok(name) => quabla_lowering::linalg::elementwise::op_cost(name),
            Err(_) => 0,
        })
    })
}

/// Whether the `tensor.extract` `o` reads a tensor of `GATHER_SOURCE_ELEMENTS` or more at
/// indices computed from the arguments of `elements` (the values of the generic's operands).
fn gathered<'c: 'a, 'a>(o: &impl OperationLike<'c, 'a>, elements: mlir_sys::MlirBlock) -> bool {
    let big = o.operand(0).ok().and_then(|v| static_shape(v.r#type())).is_some_and(|s| quabla_dialect::size::saturating_product(s) >= quabla_lowering::linalg::elementwise::GATHER_SOURCE_ELEMENTS);
    big && (1..o.operand_count()).any(|i| o.operand(i).is_ok_and(|v| computed_from(v.to_raw(), 8, &|x| element_of(x, elements))))
}

/// Whether `v` is computed (within `depth` ops) from a value `base` accepts (`v` itself
/// included).
fn computed_from(v: mlir_sys::MlirValue, depth: usize, base: &dyn Fn(mlir_sys::MlirValue) -> bool) -> bool {
    if base(v) {
        return true;
    }
    // SAFETY: plain queries of live values and operations of the module.
    unsafe {
        if depth == 0 || !mlir_sys::mlirValueIsAOpResult(v) {
            return false;
        }
        let op = mlir_sys::mlirOpResultGetOwner(v);
        (0..mlir_sys::mlirOperationGetNumOperands(op)).any(|i| computed_from(mlir_sys::mlirOperationGetOperand(op, i), depth - 1, base))
    }
}

/// Whether `v` is an argument of block `elements` (the values of a generic's operands).
fn element_of(v: mlir_sys::MlirValue, elements: mlir_sys::MlirBlock) -> bool {
    // SAFETY: plain queries of a live value.
    unsafe { mlir_sys::mlirValueIsABlockArgument(v) && mlir_sys::mlirBlockEqual(mlir_sys::mlirBlockArgumentGetOwner(v), elements) }
}

/// An `scf.for`'s body cost, at least `PAR_LOOP_MIN_COST` (an iteration of a loop over a
/// row costs about what one of a generic's loops does: 65536 rows of 10 f32 summed, 1.65 ns a
/// row on one thread, ~28 units an element), times its trip count when its bounds are
/// constants (once else).
fn for_cost<'c: 'a, 'a>(o: &impl OperationLike<'c, 'a>, elements: mlir_sys::MlirBlock) -> i64 {
    let body = o.region(0).ok().and_then(|r| r.first_block()).map_or(0, |b| block_cost(&b, elements));
    let bound = |i: usize| o.operand(i).ok().and_then(|v| constant_int(v.to_raw()));
    let trips = match (bound(0), bound(1), bound(2)) {
        (Some(lb), Some(ub), Some(st)) if st > 0 => (ub.saturating_sub(lb).max(0) + st - 1) / st,
        _ => 1,
    };
    body.max(quabla_lowering::tiling::PAR_LOOP_MIN_COST).saturating_mul(trips)
}

/// The value of `v` when an `arith.constant` with an integer (or index) attribute defines it.
fn constant_int(v: mlir_sys::MlirValue) -> Option<i64> {
    // SAFETY: a live value of the module; only an op result has an owner op.
    if unsafe { !mlir_sys::mlirValueIsAOpResult(v) } {
        return None;
    }
    // SAFETY: as above; the owner is a live operation.
    let def = unsafe { melior::ir::operation::OperationRef::from_raw(mlir_sys::mlirOpResultGetOwner(v)) };
    if def.name().as_string_ref().as_str() != Ok("arith.constant") {
        return None;
    }
    let a = def.attribute("value").ok()?;
    // SAFETY: a live attribute; checked to be an integer attribute before it is read.
    unsafe { mlir_sys::mlirAttributeIsAInteger(a.to_raw()).then(|| mlir_sys::mlirIntegerAttrGetValueInt(a.to_raw())) }
}

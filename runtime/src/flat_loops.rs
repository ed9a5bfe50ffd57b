//! Elementwise generics flattened into one loop, on tensors, before the transform script
//! splits them for threads. LLVM vectorises a loop nest's inner loop only: an elementwise
//! generic over `[rows, 3]` ran its body three elements at a time, scalar (a loop shorter
//! than the vector is left scalar), whatever the body cost. A generic whose operands are all
//! read through the identity map is one loop over all its elements instead: its operands
//! collapsed to one dim, its results expanded back to their shape (views, once bufferized).
//! Whatever its output: a loop carry updated in place is flattened too (a `fori_loop` of
//! tanh on a 10000 x 3 state 3850 -> 259 us), though only fresh outputs make the loop
//! `quabla.vec`. Operands must be contiguous (a strided slice would be copied).
//!
//! The same rewrite makes one loop of the run of parallel loops that ends a nest when every
//! operand reads that run last, in order: the kept trailing dims of a reduction over middle
//! dims, which upstream fusion expanded back from the lowering's collapsed operand ([`plan`]).
//!
//! Upstream's `flatten_elementwise` (on buffers, in the loop script until stop 46) refused
//! bodies with ops that are not elementwise-mappable: exp's `llvm.intr.ldexp`, the table
//! reads of sin's argument reduction. `exp(p * 2)` of a `[100000, 3]` array took 160 us
//! against 41 for the same exp over 300000 elements in one loop.
use melior::ir::operation::{OperationLike, OperationMutLike, OperationRef, WalkOrder, WalkResult};
use melior::ir::{Module as MlirModule, ValueLike};
use melior::Context;
use mlir_sys::{MlirAttribute, MlirContext, MlirLocation, MlirOperation, MlirType, MlirValue};

use crate::parallel::GenericLoops;

/// Flattens the elementwise generics that [`plan`] accepts among those `take` selects
/// (outside `scf.forall` bodies, whose generics the lowering placed).
/// Returns how many results of the flattened generics now reach a flat value directly
/// ([`flatten`]), which empty-tensor elimination may then place in their destination.
pub(crate) fn flatten_generics(ctx: &Context, module: &mut MlirModule, take: impl Fn(&OperationRef) -> bool) -> usize {
    let mut found: Vec<(MlirOperation, Plan)> = Vec::new();
    let mut fills: Vec<(MlirOperation, Plan)> = Vec::new();
    module.as_operation_mut().walk_mut(WalkOrder::PreOrder, |op| {
        let name = op.name();
        match name.as_string_ref().as_str() {
            Ok("scf.forall") if !crate::parallel::block_loop(&op) => WalkResult::Skip,
            Ok("linalg.fill") => {
                // SAFETY: as below.
                let r = unsafe { OperationRef::from_raw(op.to_raw()) };
                if let Some(p) = fill_plan(&r) {
                    fills.push((op.to_raw(), p));
                }
                WalkResult::Skip
            }
            Ok("linalg.generic") => {
                // SAFETY: a live operation of the module, viewed for the duration of the call.
                let r = unsafe { OperationRef::from_raw(op.to_raw()) };
                if take(&r) {
                    if let Some(p) = plan(&r) {
                        found.push((op.to_raw(), p));
                    }
                }
                WalkResult::Skip
            }
            _ => WalkResult::Advance,
        }
    });
    let mut rejoined = 0;
    for (op, plan) in found {
        // SAFETY: each collected op is a live generic of the module that `plan` checked; the
        // rewrites are independent (one generic each, uses replaced before it is destroyed).
        rejoined += unsafe { flatten(ctx.to_raw(), op, &plan) };
    }
    for (op, plan) in fills {
        // SAFETY: as above; each is a live fill `fill_plan` checked.
        rejoined += unsafe { flatten(ctx.to_raw(), op, &plan) };
    }
    rejoined
}

/// The [`Plan`] of a `linalg.fill` to flatten: one of a whole contiguous tensor of static
/// shape (rank 2 or more) that no structured op takes as its init (a pad's padding value under
/// its operand's copy: quabla_lowering's `slicing::lower_pad`). As a nest over short rows,
/// LLVM wrote the row out and vectorised the loop over rows with a scatter per column (`pad`
/// of 100000 x 8 f32 by a column each side: 254 -> 74 us).
fn fill_plan<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>) -> Option<Plan> {
    if op.operand_count() != 2 || op.result_count() != 1 {
        return None;
    }
    let dest = op.operand(1).ok()?.to_raw();
    let extents = static_tensor(dest)?;
    if extents.len() < 2 || extents.iter().any(|&e| e < 1) || !contiguous(dest) {
        return None;
    }
    // SAFETY: each user is a live op.
    let init = |user: MlirOperation| unsafe { OperationRef::from_raw(user) }.name().as_string_ref().as_str().map_or(true, |n| n.starts_with("linalg.") || n == "scf.forall");
    if users(op.result(0).ok()?.to_raw()).any(init) {
        return None;
    }
    let rank = extents.len();
    // The scalar reads no loop; the destination reads them all.
    Some(Plan { extents, parallel: vec![true; rank], from: 0, maps: vec![vec![], (0..rank).collect()] })
}

/// How [`flatten`] rewrites a generic of loop `extents` (`parallel` or not): its loops
/// `from..` (all parallel, at least two) become one loop; `maps` are its operands' indexing
/// maps' results, one list of loop numbers per operand, each ending in those loops in order.
struct Plan {
    extents: Vec<i64>,
    parallel: Vec<bool>,
    from: usize,
    maps: Vec<Vec<usize>>,
}

/// The [`Plan`] of `op` when it is to be flattened: a generic over static extents whose body
/// does not read its indices and whose operands are contiguous tensors of static shape;
/// each operand's map reads loops only (a projected permutation), ending in the longest run
/// of two or more parallel loops that ends the nest and that every map ends in, in order
/// (and reads nowhere else): all the loops of an elementwise generic (identity maps), or
/// the trailing kept dims of a reduction over middle dims (`x.sum(1)` of a [17, 33, 65, 9]
/// array: the lowering's collapsed [17, 33, 585] operand had been expanded back by upstream
/// fusion into a nest whose inner loop was 9 elements, 204 us against JAX's 50).
fn plan<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>) -> Option<Plan> {
    let loops = GenericLoops::of(op)?;
    let rank = loops.parallel.len();
    let first = rank - loops.parallel.iter().rev().take_while(|&&p| p).count();
    if rank - first < 2 || crate::parallel::reads_indices(op) {
        return None;
    }
    let (n, outs) = (op.operand_count(), op.result_count());
    if outs == 0 || outs > n || loops.maps.len() != n {
        return None;
    }
    if !(0..n).all(|i| op.operand(i).is_ok_and(|v| static_tensor(v.to_raw()).is_some() && contiguous(v.to_raw()))) {
        return None;
    }
    let maps: Vec<Vec<usize>> = (0..n).map(|i| loops.map_loops(i)?.into_iter().collect::<Option<_>>()).collect::<Option<_>>()?;
    // The longest run every operand ends in (a broadcast row `b[h, w]` of `x[n, h, w] + b`
    // allows the last two loops).
    let ends_in = |m: &[usize], from: usize| m.len().checked_sub(rank - from).is_some_and(|head| m[head..].iter().copied().eq(from..rank) && m[..head].iter().all(|&l| l < from));
    let from = (first..=rank - 2).find(|&from| maps.iter().all(|m| ends_in(m, from)))?;
    let extents = crate::parallel::loop_extents(op, &loops)?;
    (extents.len() == rank && extents.iter().all(|&e| e >= 1)).then_some(Plan { extents, parallel: loops.parallel.clone(), from, maps })
}

/// The shape of `v` when it is a ranked tensor of static shape.
fn static_tensor(v: MlirValue) -> Option<Vec<i64>> {
    // SAFETY: a live value; shape queries of its type after checking it is a ranked tensor.
    unsafe {
        let t = mlir_sys::mlirValueGetType(v);
        if !mlir_sys::mlirTypeIsARankedTensor(t) || !mlir_sys::mlirShapedTypeHasStaticShape(t) {
            return None;
        }
        Some((0..mlir_sys::mlirShapedTypeGetRank(t)).map(|d| mlir_sys::mlirShapedTypeGetDimSize(t, d as isize)).collect())
    }
}

/// Rewrites `op` by `plan` (see the module doc): its operands' trailing run collapsed, one
/// generic over the loops before the run and the run as one loop taking `op`'s body, expands
/// of its results replacing `op`'s; destroys `op`. A
/// use that collapsed a result to one dim (fusion had expanded a flat computation into
/// `op`: the gradient of `tanh(x.reshape(-1))`, written to the output buffer viewed flat)
/// takes the flat result instead, so that the generic can write that destination (the
/// round trip hid it from empty-tensor elimination: a buffer and a copy, 1.8 ms against
/// JAX's 0.8 for 4096 x 1024 f32); returns how many such uses there were.
unsafe fn flatten(ctx: MlirContext, op: MlirOperation, plan: &Plan) -> usize {
    // SAFETY (whole function): `op` is a live generic checked by `plan`; every handle made
    // here belongs to `ctx`; created ops are inserted into a block before use, and `op` is
    // destroyed only after its results' uses and its body have moved.
    unsafe {
        let loc = mlir_sys::mlirOperationGetLocation(op);
        let parent = mlir_sys::mlirOperationGetBlock(op);
        let n = mlir_sys::mlirOperationGetNumOperands(op) as usize;
        let outs = mlir_sys::mlirOperationGetNumResults(op) as usize;
        let (extents, from) = (&plan.extents, plan.from);
        let rank = extents.len();
        let run = rank - from;
        let total: i64 = quabla_dialect::size::saturating_product(extents[from..].iter().copied());
        // An operand of rank `r` keeps its first `r - run` dims and collapses the rest.
        let reassociation = |r: usize| {
            let head = (0..r - run).map(|d| format!("[{d}]"));
            let tail = (r - run..r).map(|d| d.to_string()).collect::<Vec<_>>().join(", ");
            attr(ctx, &format!("[{}]", head.chain([format!("[{tail}]")]).collect::<Vec<_>>().join(", ")))
        };
        let flat_type = |t: MlirType| {
            let r = mlir_sys::mlirShapedTypeGetRank(t) as usize;
            let shape: Vec<i64> = (0..r - run).map(|d| mlir_sys::mlirShapedTypeGetDimSize(t, d as isize)).chain([total]).collect();
            mlir_sys::mlirRankedTensorTypeGet(shape.len() as isize, shape.as_ptr(), mlir_sys::mlirShapedTypeGetElementType(t), mlir_sys::mlirAttributeGetNull())
        };
        let before = |new: MlirOperation| mlir_sys::mlirBlockInsertOwnedOperationBefore(parent, op, new);
        // A fresh init stays fresh (quabla_runtime::parallel_accesses::fresh_parallel);
        // other operands are collapsed.
        let collapse = |v: MlirValue| {
            let vt = mlir_sys::mlirValueGetType(v);
            let t = flat_type(vt);
            let c = if defined_by(v, "tensor.empty") {
                create(ctx, "tensor.empty", loc, &[], &[t], &[], 0)
            } else {
                create(ctx, "tensor.collapse_shape", loc, &[v], &[t], &[("reassociation", reassociation(mlir_sys::mlirShapedTypeGetRank(vt) as usize))], 0)
            };
            before(c);
            mlir_sys::mlirOperationGetResult(c, 0)
        };
        // One collapse per value (an in-place generic reads and writes the same one).
        let mut operands: Vec<MlirValue> = Vec::with_capacity(n);
        let mut seen: Vec<(MlirValue, MlirValue)> = Vec::new();
        let fill = OperationRef::from_raw(op).name().as_string_ref().as_str() == Ok("linalg.fill");
        for i in 0..n {
            let v = mlir_sys::mlirOperationGetOperand(op, i as isize);
            if fill && i == 0 {
                // A fill's scalar.
                operands.push(v);
                continue;
            }
            let c = match seen.iter().find(|(w, _)| mlir_sys::mlirValueEqual(*w, v)) {
                Some(&(_, c)) => c,
                None => {
                    let c = collapse(v);
                    seen.push((v, c));
                    c
                }
            };
            operands.push(c);
        }
        let ins = n - outs;
        let results: Vec<MlirType> = (0..outs).map(|k| flat_type(mlir_sys::mlirValueGetType(mlir_sys::mlirOperationGetResult(op, k as isize)))).collect();
        let segments = ("operandSegmentSizes", attr(ctx, &format!("array<i32: {ins}, {outs}>")));
        let generic = if fill {
            create(ctx, "linalg.fill", loc, &operands, &results, &[segments], 1)
        } else {
            // Loops `from..` are now loop `from`.
            let dims = (0..=from).map(|d| format!("d{d}")).collect::<Vec<_>>().join(", ");
            let maps = plan
                .maps
                .iter()
                .map(|m| {
                    let head = m[..m.len() - run].iter().map(|l| format!("d{l}"));
                    format!("affine_map<({dims}) -> ({})>", head.chain([format!("d{from}")]).collect::<Vec<_>>().join(", "))
                })
                .collect::<Vec<_>>()
                .join(", ");
            let iters: Vec<&str> = plan.parallel[..from].iter().map(|&p| if p { "#linalg.iterator_type<parallel>" } else { "#linalg.iterator_type<reduction>" }).chain(["#linalg.iterator_type<parallel>"]).collect();
            create(ctx, "linalg.generic", loc, &operands, &results, &[("indexing_maps", attr(ctx, &format!("[{maps}]"))), ("iterator_types", attr(ctx, &format!("[{}]", iters.join(", ")))), segments], 1)
        };
        mlir_sys::mlirRegionTakeBody(mlir_sys::mlirOperationGetRegion(generic, 0), mlir_sys::mlirOperationGetRegion(op, 0));
        before(generic);
        // The results, expanded back, in place of `op`'s.
        let mut at = generic;
        let mut rejoined = 0;
        for k in 0..outs {
            let old = mlir_sys::mlirOperationGetResult(op, k as isize);
            let ot = mlir_sys::mlirValueGetType(old);
            let r = mlir_sys::mlirShapedTypeGetRank(ot) as usize;
            let shape = (0..r).map(|d| mlir_sys::mlirShapedTypeGetDimSize(ot, d as isize).to_string()).collect::<Vec<_>>().join(", ");
            let e = create(
                ctx,
                "tensor.expand_shape",
                loc,
                &[mlir_sys::mlirOperationGetResult(generic, k as isize)],
                &[ot],
                &[("reassociation", reassociation(r)), ("static_output_shape", attr(ctx, &format!("array<i64: {shape}>")))],
                0,
            );
            mlir_sys::mlirBlockInsertOwnedOperationAfter(parent, at, e);
            at = e;
            mlir_sys::mlirValueReplaceAllUsesOfWith(old, mlir_sys::mlirOperationGetResult(e, 0));
            let flat = mlir_sys::mlirOperationGetResult(generic, k as isize);
            rejoined += rejoin(mlir_sys::mlirOperationGetResult(e, 0), flat);
        }
        mlir_sys::mlirOperationDestroy(op);
        rejoined
    }
}

/// Replaces the uses of each `tensor.collapse_shape` of `expanded` whose type is `flat`'s by
/// `flat` (the collapse undoes the expand); returns how many collapses it bypassed.
unsafe fn rejoin(expanded: MlirValue, flat: MlirValue) -> usize {
    // SAFETY (whole function): live values of one block; uses are read before any is
    // replaced (the replacement moves uses of the collapses, not of `expanded`).
    unsafe {
        let collapses: Vec<MlirValue> = users(expanded)
            .filter_map(|user| (mlir_sys::mlirOperationGetNumResults(user) == 1).then(|| mlir_sys::mlirOperationGetResult(user, 0)))
            .filter(|r| defined_by(*r, "tensor.collapse_shape") && mlir_sys::mlirTypeEqual(mlir_sys::mlirValueGetType(*r), mlir_sys::mlirValueGetType(flat)))
            .collect();
        for r in &collapses {
            mlir_sys::mlirValueReplaceAllUsesOfWith(*r, flat);
        }
        collapses.len()
    }
}

/// Whether `v`'s buffer is contiguous as far as its definition shows: anything but a slice
/// that is not a contiguous block of its source (unit strides; sizes 1 up to some dim, the
/// source's own after it). Collapsed, a strided view is copied element by element by
/// bufferization (`x[:, :3] * 2` of 100000 x 4: 34 -> 394-1507 us); a scan's step
/// `xs[i]` is contiguous.
fn contiguous(v: MlirValue) -> bool {
    if !defined_by(v, "tensor.extract_slice") {
        return true;
    }
    // SAFETY: `v` is the result of a live `tensor.extract_slice` (checked above); attribute
    // and type queries of it.
    unsafe {
        let op = mlir_sys::mlirOpResultGetOwner(v);
        let get = |name: &str| {
            let a = mlir_sys::mlirOperationGetAttributeByName(op, mlir_sys::MlirStringRef { data: name.as_ptr() as *const _, length: name.len() });
            if a.ptr.is_null() || !mlir_sys::mlirAttributeIsADenseI64Array(a) {
                return None;
            }
            Some((0..mlir_sys::mlirDenseArrayGetNumElements(a)).map(|k| mlir_sys::mlirDenseI64ArrayGetElement(a, k)).collect::<Vec<i64>>())
        };
        let (Some(sizes), Some(strides), Some(source)) = (get("static_sizes"), get("static_strides"), static_tensor(mlir_sys::mlirOperationGetOperand(op, 0))) else { return false };
        if sizes.len() != source.len() || strides.iter().any(|&s| s != 1) {
            return false;
        }
        // The first dim whose size is not 1: every later one whole.
        let first = sizes.iter().position(|&s| s != 1).unwrap_or(sizes.len());
        sizes.iter().zip(&source).skip(first + 1).all(|(s, d)| s == d)
    }
}

/// The ops that use `v`, once per use (read lazily: replace no use while iterating).
pub(crate) fn users(v: MlirValue) -> impl Iterator<Item = MlirOperation> {
    // SAFETY: `v` is a live value; each use is read before the next is asked for.
    let first = unsafe { mlir_sys::mlirValueGetFirstUse(v) };
    std::iter::successors(Some(first), |&u| Some(unsafe { mlir_sys::mlirOpOperandGetNextUse(u) }))
        .take_while(|&u| unsafe { !mlir_sys::mlirOpOperandIsNull(u) })
        .map(|u| unsafe { mlir_sys::mlirOpOperandGetOwner(u) })
}

/// Whether `v` is a result of an op named `name`.
fn defined_by(v: MlirValue, name: &str) -> bool {
    // SAFETY: a live value; only an op result has an owner.
    unsafe { mlir_sys::mlirValueIsAOpResult(v) && OperationRef::from_raw(mlir_sys::mlirOpResultGetOwner(v)).name().as_string_ref().as_str() == Ok(name) }
}

/// The attribute `text` parses to in `ctx` (texts built here, which parse).
pub(crate) unsafe fn attr(ctx: MlirContext, text: &str) -> MlirAttribute {
    // SAFETY: a live context; the string outlives the call.
    unsafe { mlir_sys::mlirAttributeParseGet(ctx, mlir_sys::MlirStringRef { data: text.as_ptr() as *const _, length: text.len() }) }
}

/// A detached op `name` with `operands`, `results`, attributes `attrs` and `regions` empty
/// regions.
pub(crate) unsafe fn create(ctx: MlirContext, name: &str, loc: MlirLocation, operands: &[MlirValue], results: &[MlirType], attrs: &[(&str, MlirAttribute)], regions: usize) -> MlirOperation {
    // SAFETY: live handles; the state's arrays outlive the create call.
    unsafe {
        let s = |t: &str| mlir_sys::MlirStringRef { data: t.as_ptr() as *const _, length: t.len() };
        let mut state = mlir_sys::mlirOperationStateGet(s(name), loc);
        mlir_sys::mlirOperationStateAddOperands(&mut state, operands.len() as isize, operands.as_ptr());
        mlir_sys::mlirOperationStateAddResults(&mut state, results.len() as isize, results.as_ptr());
        let named: Vec<_> = attrs.iter().map(|(k, a)| mlir_sys::mlirNamedAttributeGet(mlir_sys::mlirIdentifierGet(ctx, s(k)), *a)).collect();
        mlir_sys::mlirOperationStateAddAttributes(&mut state, named.len() as isize, named.as_ptr());
        let regions: Vec<_> = (0..regions).map(|_| mlir_sys::mlirRegionCreate()).collect();
        mlir_sys::mlirOperationStateAddOwnedRegions(&mut state, regions.len() as isize, regions.as_ptr());
        mlir_sys::mlirOperationCreate(&mut state)
    }
}

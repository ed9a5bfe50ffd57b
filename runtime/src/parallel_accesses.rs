//! Loops whose iterations are independent, told to LLVM. LLVM's loop vectorizer cannot prove
//! that a loop's output buffer does not overlap its inputs (they are separate arguments, or
//! separate fields of an OpenMP-outlined function's context), so each vectorised loop got a
//! runtime overlap check and a scalar copy of its body to fall back on: on the elementwise
//! `tanh(2x + 1) exp(-x)` program that copy was a third of the object and of LLVM's time.
//!
//! A `linalg.generic` whose loops are all parallel, whose outputs have the identity map and
//! are fresh buffers (a `tensor.empty`, or the program's own output memref, which the
//! executor allocates apart from every input), has no loop-carried memory dependence: each
//! iteration writes its own elements of buffers that no input shares. [`fresh_parallel`]
//! finds them on the tensor form after fusion and the executor tags them `quabla.vec`; the
//! pipeline's `@__quabla_loops` script (quabla_lowering::tiling::loops_script) turns each
//! into loops annotated `llvm.loop_annotation`, which the control-flow lowering carries to
//! the loop's back edge. [`mark_parallel_loops`] then, on the LLVM dialect, gives each such
//! loop an access group that every load and store of its body joins and lists the group as
//! the loop's parallel accesses (`llvm.loop.parallel_accesses`): the vectorizer then
//! vectorises without the check and the fallback.
use std::collections::{HashMap, HashSet};

use melior::ir::attribute::{ArrayAttribute, AttributeLike};
use melior::ir::operation::{OperationLike, OperationMutLike, OperationRef, WalkOrder, WalkResult};
use melior::ir::{Attribute, Module as MlirModule, ValueLike};
use melior::Context;
use mlir_sys::{MlirAttribute, MlirBlock, MlirOperation};

use crate::parallel::GenericLoops;

/// The discardable attribute the script puts on the loops and the control-flow lowering
/// moves to their back edges.
const MARK: &str = "llvm.loop_annotation";

/// The value of [`MARK`] on the `quabla.vec` loops (quabla_lowering::tiling::loops_script).
const SCRIPT_MARK: &str = quabla_lowering::tiling::VEC_MARK;

/// Whether `op` (a `linalg.generic` on tensors) is one whose loops may run their iterations
/// in any order, memory included (see the module doc): every iterator parallel, every output
/// through the identity map and initialised by a `tensor.empty` or by the
/// `bufferization.to_tensor` of a block argument (a program output, or a reshaped view of one),
/// through reshapes, slices and the inserts of other slices, and no output also read as an
/// input unless every map is the identity (an elementwise update in place).
pub fn fresh_parallel<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>) -> bool {
    let Some(loops) = GenericLoops::of(op) else { return false };
    if loops.parallel.is_empty() || !loops.parallel.iter().all(|&p| p) {
        return false;
    }
    let (n, outs) = (op.operand_count(), op.result_count());
    if outs == 0 || outs > n || loops.maps.len() != n {
        return false;
    }
    let ins: Vec<_> = (0..n - outs).filter_map(|i| op.operand(i).ok().map(|v| v.to_raw())).collect();
    // An elementwise update in place (every map the identity, an output also read as an
    // input: a loop's carries updated by one fused generic) reads and writes element i in
    // iteration i only; one-shot bufferization writes an output into an input's buffer only
    // for such elementwise accesses, so no other overlap arises.
    let elementwise = (0..n).all(|i| loops.identity_map(i));
    let in_place = |v: mlir_sys::MlirValue| elementwise && ins.iter().any(|w| unsafe { mlir_sys::mlirValueEqual(*w, v) });
    (n - outs..n).all(|i| loops.identity_map(i) && op.operand(i).is_ok_and(|v| fresh_output(v.to_raw(), &ins) || in_place(v.to_raw())))
}

/// Makes each `linalg.generic` of `module` (tensor form) that reads an output's own value as
/// an input (fusion and empty-tensor elimination update a loop's carries by one generic,
/// `ins(%c, ..) outs(%c, ..)`) read it through the output's block argument, through the same
/// indexing map: the input is left unread. Bufferization then sees no read of the carry but
/// the output's own, and the tiling into an `scf.forall`, which slices the output from the
/// loop's shared output but an input from the value outside it, leaves the update in place:
/// the three carries of a Mandelbrot loop (512^2 f32) were each copied into a new buffer
/// and back at every iteration. A `bufferization.materialize_in_destination` of such a
/// generic's result into the buffer the generic already writes (a flattened loop's
/// `expand_shape` of the result into the carry whose `collapse_shape` is its output) is its
/// source (the value it yields), not a copy of a buffer into itself, which bufferization
/// takes for a conflict and resolves by copying the carry out and back. Returns how many
/// inputs and materializations were redirected.
pub fn read_outputs_in_place(module: &mut MlirModule) -> usize {
    let mut redirected = 0;
    let mut same_buffer: Vec<MlirOperation> = Vec::new();
    module.as_operation_mut().walk_mut(WalkOrder::PreOrder, |op| {
        if op.name().as_string_ref().as_str() == Ok("bufferization.materialize_in_destination") {
            if let (Ok(src), Ok(dest), 1) = (op.operand(0), op.operand(1), op.result_count()) {
                if writes_into(src.to_raw(), dest.to_raw()) {
                    same_buffer.push(op.to_raw());
                }
            }
            return WalkResult::Advance;
        }
        if op.name().as_string_ref().as_str() != Ok("linalg.generic") {
            return WalkResult::Advance;
        }
        let Some(loops) = GenericLoops::of(&op) else { return WalkResult::Advance };
        let (n, outs) = (op.operand_count(), op.result_count());
        if outs > n || loops.maps.len() != n {
            return WalkResult::Advance;
        }
        let map = |i: usize| loops.maps.element(i).map(|m| m.to_string()).ok();
        // SAFETY: a live generic of the module: its region holds one block whose arguments
        // are its operands' elements, in operand order.
        let block = unsafe { mlir_sys::mlirRegionGetFirstBlock(mlir_sys::mlirOperationGetRegion(op.to_raw(), 0)) };
        if block.ptr.is_null() {
            return WalkResult::Advance;
        }
        for k in 0..n - outs {
            let Ok(x) = op.operand(k) else { continue };
            let same = (n - outs..n).find(|&m| op.operand(m).is_ok_and(|y| unsafe { mlir_sys::mlirValueEqual(x.to_raw(), y.to_raw()) }) && map(k).is_some() && map(k) == map(m));
            if let Some(m) = same {
                // SAFETY: block arguments k and m of the body (k < m < n, one per operand).
                unsafe { mlir_sys::mlirValueReplaceAllUsesOfWith(mlir_sys::mlirBlockGetArgument(block, k as isize), mlir_sys::mlirBlockGetArgument(block, m as isize)) };
                redirected += 1;
            }
        }
        WalkResult::Advance
    });
    for op in same_buffer {
        // SAFETY: a live materialization of the module (collected above, none destroyed yet):
        // its uses now read its source, then it goes.
        unsafe {
            mlir_sys::mlirValueReplaceAllUsesOfWith(mlir_sys::mlirOperationGetResult(op, 0), mlir_sys::mlirOperationGetOperand(op, 0));
            mlir_sys::mlirOperationDestroy(op);
        }
        redirected += 1;
    }
    redirected
}

/// The value `v` through `tensor.expand_shape` / `tensor.collapse_shape` ops ([`viewed`]
/// without slices, at most [`MAX_SLICE_DEPTH`] steps).
fn reshaped_from(mut v: mlir_sys::MlirValue) -> mlir_sys::MlirValue {
    for _ in 0..MAX_SLICE_DEPTH {
        match viewed(v, false) {
            Some(x) => v = x,
            None => break,
        }
    }
    v
}

/// Whether tensor `src` is (a reshape of) a result of a `linalg.generic` whose output operand
/// for it is (a reshape of) `dest`: the generic writes `src` into `dest`'s buffer.
fn writes_into(src: mlir_sys::MlirValue, dest: mlir_sys::MlirValue) -> bool {
    let v = reshaped_from(src);
    // SAFETY: live values; only an op result has an owner op and a result number.
    if unsafe { !mlir_sys::mlirValueIsAOpResult(v) } {
        return false;
    }
    let (def, r) = unsafe { (OperationRef::from_raw(mlir_sys::mlirOpResultGetOwner(v)), mlir_sys::mlirOpResultGetResultNumber(v) as usize) };
    if def.name().as_string_ref().as_str() != Ok("linalg.generic") {
        return false;
    }
    let (n, outs) = (def.operand_count(), def.result_count());
    let init = def.operand(n - outs + r).map(|x| reshaped_from(x.to_raw()));
    init.is_ok_and(|i| unsafe { mlir_sys::mlirValueEqual(i, reshaped_from(dest)) })
}

/// Whether a `linalg.copy` (tensor form) writes a fresh buffer no input shares, as
/// [`fresh_parallel`]'s outputs: its loops too may run their iterations in any order (a
/// parameter copied into the program's output: quabla_lowering's `lower_func`).
pub fn fresh_copy<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>) -> bool {
    match (op.operand(0), op.operand(1)) {
        (Ok(x), Ok(y)) => op.operand_count() == 2 && fresh_output(y.to_raw(), &[x.to_raw()]),
        _ => false,
    }
}

/// Whether output operand `v` is a fresh buffer (see [`fresh_parallel`]) that none of `ins`
/// is.
fn fresh_output(v: mlir_sys::MlirValue, ins: &[mlir_sys::MlirValue]) -> bool {
    // SAFETY: value handles of live values (a pointer comparison).
    if ins.iter().any(|w| unsafe { mlir_sys::mlirValueEqual(*w, v) }) {
        return false;
    }
    // A program output collapsed for a flat loop (crate::flat_loops) or for its unit dims
    // is still fresh; so is a slice of such a buffer (a pad's operand written into the
    // output, the padding filled around it: quabla_lowering's slicing::lower_pad), through
    // the inserts that wrote other slices of it, and a slice of a row-block loop's shared
    // output (quabla_lowering's row_blocks: each block writes its rows of it): no input
    // aliases the elements it writes (one-shot bufferization copies an input that would),
    // and no input is read from the same buffer.
    let Some(root) = buffer_root(v) else { return false };
    if ins.iter().any(|w| buffer_root(*w).is_some_and(|r| unsafe { mlir_sys::mlirValueEqual(r, root) })) {
        return false;
    }
    // SAFETY: a live value; only an op result has an owner op.
    if unsafe { !mlir_sys::mlirValueIsAOpResult(root) } {
        return false;
    }
    let def = unsafe { OperationRef::from_raw(mlir_sys::mlirOpResultGetOwner(root)) };
    match def.name().as_string_ref().as_str() {
        Ok("tensor.empty") => true,
        Ok("bufferization.to_tensor") => def.operand(0).is_ok_and(|m| argument_view(m.to_raw())),
        _ => false,
    }
}

/// The value whose buffer tensor `v` views: through reshapes, slices, the destinations of
/// inserts and the shared outputs of an `scf.forall` (to its init), at most
/// [`MAX_SLICE_DEPTH`] steps; None when the chain is longer.
fn buffer_root(mut v: mlir_sys::MlirValue) -> Option<mlir_sys::MlirValue> {
    for _ in 0..MAX_SLICE_DEPTH {
        match viewed(v, true) {
            Some(x) => v = x,
            None => return Some(v),
        }
    }
    None
}

/// One step from tensor `v` to the value whose buffer it views: the source of a reshape, and
/// with `slices` the source of an `extract_slice`, the destination of an `insert_slice` and
/// the init of an `scf.forall`'s shared output; None for any other value.
fn viewed(v: mlir_sys::MlirValue, slices: bool) -> Option<mlir_sys::MlirValue> {
    // SAFETY: live values and ops of the module; a block argument's owner block has a parent
    // op (the forall), whose shared outputs are its last operands and block arguments, one
    // each per result.
    unsafe {
        if mlir_sys::mlirValueIsAOpResult(v) {
            let def = OperationRef::from_raw(mlir_sys::mlirOpResultGetOwner(v));
            match def.name().as_string_ref().as_str() {
                Ok("tensor.collapse_shape" | "tensor.expand_shape") => def.operand(0).ok().map(|x| x.to_raw()),
                Ok("tensor.extract_slice") if slices => def.operand(0).ok().map(|x| x.to_raw()),
                Ok("tensor.insert_slice") if slices => def.operand(1).ok().map(|x| x.to_raw()),
                // A fill's result is its destination's buffer (a pad's padding value under the
                // operand's copy).
                Ok("linalg.fill") if slices => def.operand(1).ok().map(|x| x.to_raw()),
                _ => None,
            }
        } else if slices && mlir_sys::mlirValueIsABlockArgument(v) {
            let block = mlir_sys::mlirBlockArgumentGetOwner(v);
            let parent = mlir_sys::mlirBlockGetParentOperation(block);
            if parent.ptr.is_null() {
                return None;
            }
            let op = OperationRef::from_raw(parent);
            let (args, outs, n) = (mlir_sys::mlirBlockGetNumArguments(block) as usize, op.result_count(), op.operand_count());
            let k = mlir_sys::mlirBlockArgumentGetArgNumber(v) as usize;
            match op.name().as_string_ref().as_str() {
                Ok("scf.forall") if outs <= args && outs <= n && k >= args - outs => op.operand(n - outs + (k - (args - outs))).ok().map(|x| x.to_raw()),
                _ => None,
            }
        } else {
            None
        }
    }
}

/// Whether memref `m` is a block argument (a program output) or a reshape of one
/// (`memref.expand_shape`/`collapse_shape`: an output written in the shape of the value that
/// reshapes to it, quabla_lowering's `lower_func`).
fn argument_view(mut m: mlir_sys::MlirValue) -> bool {
    for _ in 0..MAX_SLICE_DEPTH {
        // SAFETY: a live value of the module; only an op result has an owner op.
        if unsafe { mlir_sys::mlirValueIsABlockArgument(m) } {
            return true;
        }
        if unsafe { !mlir_sys::mlirValueIsAOpResult(m) } {
            return false;
        }
        // SAFETY: as above.
        let def = unsafe { OperationRef::from_raw(mlir_sys::mlirOpResultGetOwner(m)) };
        match def.name().as_string_ref().as_str() {
            Ok("memref.expand_shape" | "memref.collapse_shape") => match def.operand(0) {
                Ok(s) => m = s.to_raw(),
                Err(_) => return false,
            },
            _ => return false,
        }
    }
    false
}

/// Most reshapes, slices and inserts [`fresh_parallel`] (and [`argument_view`]) follow from
/// an output to its buffer.
const MAX_SLICE_DEPTH: usize = 64;

/// Every loop of the LLVM-dialect `module` whose back edge carries the `quabla.vec` loops'
/// mark becomes a loop with parallel accesses (see the module doc): a fresh access group per
/// loop, joined by every `llvm.load` and `llvm.store` of the loop's blocks (an inner loop's
/// accesses join the groups of each loop around them), and the back edge's
/// `loop_annotation` lists it.
pub fn mark_parallel_loops(ctx: &Context, module: &mut MlirModule) {
    let mut edges: Vec<MlirOperation> = Vec::new();
    module.as_operation_mut().walk_mut(WalkOrder::PreOrder, |op| {
        if op.name().as_string_ref().as_str() == Ok("llvm.br") && op.attribute(MARK).is_ok() {
            edges.push(op.to_raw());
        }
        WalkResult::Advance
    });
    let mark = melior::StringRef::new(MARK);
    let annotation = melior::StringRef::new("loop_annotation");
    let groups = melior::StringRef::new("access_groups");
    // Loops the lowering annotated itself (quabla_lowering's row loops: unrolling disabled)
    // keep their annotation, now the back edge's own.
    let script_mark = Attribute::parse(ctx, SCRIPT_MARK);
    let unroll_mark = Attribute::parse(ctx, quabla_lowering::tiling::UNROLL_MARK);
    // The script's loops, each with whether it is to be unrolled in full.
    let mut full = HashSet::new();
    edges.retain(|&br| {
        // SAFETY: `br` is a live `llvm.br` carrying MARK (collected above).
        unsafe {
            let a = mlir_sys::mlirOperationGetAttributeByName(br, mark.to_raw());
            let is = |m: Option<Attribute>| m.is_some_and(|m| mlir_sys::mlirAttributeEqual(a, m.to_raw()));
            if is(unroll_mark) {
                full.insert(br.ptr);
                return true;
            }
            if is(script_mark) {
                return true;
            }
            mlir_sys::mlirOperationRemoveAttributeByName(br, mark.to_raw());
            mlir_sys::mlirOperationSetAttributeByName(br, annotation.to_raw(), a);
        }
        false
    });
    let mut joined: HashMap<*mut std::ffi::c_void, Vec<MlirAttribute>> = HashMap::new();
    // Each region's predecessor lists, built once for all the loops in it.
    let mut preds: HashMap<*mut std::ffi::c_void, Preds> = HashMap::new();
    for (k, &br) in edges.iter().enumerate() {
        // The group and the annotation that lists it come from one parse, so they share the
        // distinct group (each parse makes new distinct attributes).
        // Not unrolled: a short inner loop (a `[rows, 10]` operand's) written out left the
        // loop over the rows innermost, vectorized across rows with stride-10 interleaved
        // accesses (the softmax over 65536 rows of 10 f32 418 -> 642 us).
        // The inner loops of short rows under a dear body are written out on purpose
        // (quabla_lowering::tiling::UNROLL_MARK).
        let unroll = if full.contains(&br.ptr) { "full" } else { "disable" };
        let text = format!("[#llvm.access_group<id = distinct[{k}]<>>, #llvm.loop_annotation<unroll = <{unroll} = true>, mustProgress = true, parallelAccesses = #llvm.access_group<id = distinct[{k}]<>>>]");
        let Some(pair) = Attribute::parse(ctx, &text).and_then(|a| ArrayAttribute::try_from(a).ok()) else { continue };
        let (Ok(group), Ok(loop_annotation)) = (pair.element(0), pair.element(1)) else { continue };
        // SAFETY: `br` is a live `llvm.br` of the module (the walk only collected it); its
        // block, region and successor are live, and the rewrites only set attributes.
        unsafe {
            mlir_sys::mlirOperationRemoveAttributeByName(br, mark.to_raw());
            if mlir_sys::mlirOperationGetNumSuccessors(br) != 1 {
                continue;
            }
            let (latch, header) = (mlir_sys::mlirOperationGetBlock(br), mlir_sys::mlirOperationGetSuccessor(br, 0));
            let region = mlir_sys::mlirBlockGetParentRegion(latch);
            let preds = preds.entry(region.ptr).or_insert_with(|| predecessors(region));
            for block in loop_blocks(latch, header, preds) {
                let mut op = mlir_sys::mlirBlockGetFirstOperation(block);
                while !op.ptr.is_null() {
                    collect_accesses(op, &mut |access| joined.entry(access.ptr).or_default().push(group.to_raw()));
                    op = mlir_sys::mlirOperationGetNextInBlock(op);
                }
            }
            mlir_sys::mlirOperationSetAttributeByName(br, annotation.to_raw(), loop_annotation.to_raw());
        }
    }
    for (access, gs) in joined {
        let op = MlirOperation { ptr: access };
        // SAFETY: a live load or store of the module; an array of access group attributes of
        // its context.
        unsafe {
            let array = mlir_sys::mlirArrayAttrGet(ctx.to_raw(), gs.len() as isize, gs.as_ptr());
            mlir_sys::mlirOperationSetAttributeByName(op, groups.to_raw(), array);
        }
    }
}

/// The `llvm.load` and `llvm.store` ops of `op` and of the regions nested in it.
unsafe fn collect_accesses(op: MlirOperation, f: &mut impl FnMut(MlirOperation)) {
    // SAFETY: a live operation; its identifier's string lives in the context.
    unsafe {
        let name = melior::StringRef::from_raw(mlir_sys::mlirIdentifierStr(mlir_sys::mlirOperationGetName(op)));
        if matches!(name.as_str(), Ok("llvm.load") | Ok("llvm.store")) {
            f(op);
        }
        for r in 0..mlir_sys::mlirOperationGetNumRegions(op) {
            let mut b = mlir_sys::mlirRegionGetFirstBlock(mlir_sys::mlirOperationGetRegion(op, r));
            while !b.ptr.is_null() {
                let mut o = mlir_sys::mlirBlockGetFirstOperation(b);
                while !o.ptr.is_null() {
                    collect_accesses(o, f);
                    o = mlir_sys::mlirOperationGetNextInBlock(o);
                }
                b = mlir_sys::mlirBlockGetNextInRegion(b);
            }
        }
    }
}

/// The predecessors of each block of a region, by block.
type Preds = HashMap<*mut std::ffi::c_void, Vec<MlirBlock>>;

/// The [`Preds`] of `region`, from its blocks' terminators.
unsafe fn predecessors(region: mlir_sys::MlirRegion) -> Preds {
    let mut preds = Preds::new();
    // SAFETY: a live region; its blocks, terminators and successors are live.
    unsafe {
        let mut b = mlir_sys::mlirRegionGetFirstBlock(region);
        while !b.ptr.is_null() {
            let t = mlir_sys::mlirBlockGetTerminator(b);
            if !t.ptr.is_null() {
                for s in 0..mlir_sys::mlirOperationGetNumSuccessors(t) {
                    preds.entry(mlir_sys::mlirOperationGetSuccessor(t, s).ptr).or_default().push(b);
                }
            }
            b = mlir_sys::mlirBlockGetNextInRegion(b);
        }
    }
    preds
}

/// The blocks of the natural loop of the back edge `latch` -> `header` (blocks of one region
/// with predecessors `preds`): the header and every block that reaches the latch without
/// passing through the header.
fn loop_blocks(latch: MlirBlock, header: MlirBlock, preds: &Preds) -> Vec<MlirBlock> {
    let mut seen: HashSet<*mut std::ffi::c_void> = HashSet::from([header.ptr]);
    let mut out = vec![header];
    let mut work = vec![latch];
    while let Some(b) = work.pop() {
        if !seen.insert(b.ptr) {
            continue;
        }
        out.push(b);
        work.extend(preds.get(&b.ptr).into_iter().flatten().copied());
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_script_marks_its_loops_with_the_value_told_apart_here() {
        assert!(quabla_lowering::tiling::loops_script().contains(super::SCRIPT_MARK));
        assert!(quabla_lowering::tiling::loops_script().contains(quabla_lowering::tiling::UNROLL_MARK));
        // One sequence per tag and rank parallel::written_out may tag.
        for rank in quabla_lowering::tiling::UNROLL_RANKS {
            assert!(quabla_lowering::tiling::loops_script().contains(&format!("quabla.unroll = {rank} : i64")));
        }
        for rank in quabla_lowering::tiling::BLOCK_RANKS {
            for tag in ["quabla.unroll_block", "quabla.unroll_scalar"] {
                assert!(quabla_lowering::tiling::loops_script().contains(&format!("{tag} = {rank} : i64")));
            }
        }
        // The scalar blocks' outer loop keeps its own annotation (not a parallel-accesses loop).
        assert_ne!(quabla_lowering::tiling::SCALAR_MARK, super::SCRIPT_MARK);
        assert_ne!(quabla_lowering::linalg::reduce::ROW_LOOP_ANNOTATION, super::SCRIPT_MARK);
    }
}

//! `convert-quabla-to-linalg`: every quabla op becomes linalg/tensor/arith/math ops on
//! tensors, emitted as MLIR text from the in-memory IR (one file per op family, matching
//! dialect/src/ops/).
//!
//! Invariants: each quabla value has one SSA name in the output (`Emitter::name`); ops that
//! move no data (identity reshapes/transposes/converts) only rename. Every emitted op carries
//! the quabla op's location. With `Abi::Dps`, public functions take their outputs as memref
//! arguments and write them with `bufferization.materialize_in_destination`, so the JIT'ed
//! code never returns a buffer; private functions stay tensor functions, and a public
//! function that is also called gets a private tensor twin that the calls use.
pub mod call;
pub mod callback;
pub mod collective;
pub mod constant;
pub mod control;
pub mod dot;
pub mod elementwise;
pub mod layout;
#[allow(clippy::module_inception)]
pub mod linalg;
pub mod linalg_loops;
pub mod reduce;
pub mod row_blocks;
pub mod slicing;
pub mod scatter;
pub mod convolution;
pub mod reduce_window;
pub mod special;
pub mod sort;

use std::collections::{HashMap, HashSet};
use std::fmt::Write;

use quabla_dialect::{CallOp, DType, Func, Module, Op, OpKind, TensorType, Value};

pub use crate::target::Codegen;
use crate::target::MatmulTile;
use crate::{Abi, LowerError};

/// Text sink for one function body: fresh SSA names, the quabla value -> SSA name map and
/// the location of the op being lowered.
pub struct Emitter {
    out: String,
    next: usize,
    names: Vec<String>,
    loc: Option<String>,
    /// Nesting depth of the region being written (for indentation).
    depth: usize,
    /// Code-generation choices.
    pub cg: Codegen,
    /// Matmuls tagged for the tiled path so far (tags are unique in the module).
    pub tiles: Vec<MatmulTile>,
    /// Some generic so far is large enough to run on several threads.
    pub par: bool,
    /// The op being lowered computes a value kept apart from its consumers
    /// ([`elementwise::kept_apart`]): [`elementwise`] writes it with a unit reduction loop.
    pub apart: bool,
    /// Element types of the runtime products called so far (`quabla_gemm_<d>`,
    /// crate::linalg::dot), declared once in the module.
    pub gemms: Vec<DType>,
    /// The destination-passing outputs of the function: (value, its `%out<k>` memref), each
    /// value once. A runtime product whose result is one writes into it (crate::linalg::dot).
    pub outs: Vec<(Value, String)>,
    /// Lowering a row block's ops (crate::linalg::row_blocks): no runtime kernel calls.
    pub blocks: bool,
    /// Lines written at the start of the function's body, before every op
    /// ([`Emitter::output_tensor`]).
    prologue: String,
}

impl Emitter {
    fn new(f: &Func, cg: Codegen, (tiles, par, gemms): Tagged) -> Self {
        Emitter { out: String::new(), next: 0, names: (0..f.types.len()).map(|i| format!("%v{i}")).collect(), loc: None, depth: 0, cg, tiles, par, apart: false, gemms, outs: Vec::new(), blocks: false, prologue: String::new() }
    }

    /// Threads the code may use, when the target splits work across them (1 otherwise).
    pub fn threads(&self) -> i64 {
        if self.cg.tile_matmuls {
            self.cg.threads.max(1)
        } else {
            1
        }
    }

    /// A fresh number, unique in the function (SSA names; a runtime product's operand reads,
    /// crate::linalg::dot).
    pub fn id(&mut self) -> usize {
        self.next += 1;
        self.next
    }

    /// A fresh SSA name.
    pub fn fresh(&mut self) -> String {
        format!("%t{}", self.id())
    }

    /// The SSA name of quabla value `v`.
    pub fn name(&self, v: Value) -> String {
        self.names[v.0 as usize].clone()
    }

    /// Makes `v` refer to an existing SSA name.
    pub fn alias(&mut self, v: Value, name: String) {
        self.names[v.0 as usize] = name;
    }

    /// Writes one op line, followed by the current location.
    pub fn line(&mut self, s: impl AsRef<str>) {
        self.indent();
        self.out.push_str(s.as_ref());
        if let Some(l) = &self.loc {
            self.out.push_str(" loc(");
            self.out.push_str(l);
            self.out.push(')');
        }
        self.out.push('\n');
    }

    /// Writes a line that cannot carry a location (region openers, block headers).
    fn raw_line(&mut self, s: impl AsRef<str>) {
        self.indent();
        self.out.push_str(s.as_ref());
        self.out.push('\n');
    }

    fn indent(&mut self) {
        for _ in 0..self.depth + 2 {
            self.out.push_str("  ");
        }
    }

    /// `name = text`, returning the fresh name.
    pub fn op(&mut self, text: impl AsRef<str>) -> String {
        let n = self.fresh();
        self.line(format!("{n} = {}", text.as_ref()));
        n
    }

    /// `tensor.empty() : ty`.
    pub fn empty(&mut self, ty: &TensorType) -> String {
        self.op(format!("tensor.empty() : {ty}"))
    }

    /// A scalar constant of `dtype` (value given as MLIR text: `1.0`, `-3`, `true`, `0x7FC00000`).
    pub fn scalar(&mut self, dtype: DType, text: &str) -> String {
        match (dtype, text) {
            (DType::I1, "true" | "false") => self.op(format!("arith.constant {text}")),
            _ => self.op(format!("arith.constant {text} : {dtype}")),
        }
    }

    /// An `index` constant.
    pub fn index(&mut self, v: i64) -> String {
        self.op(format!("arith.constant {v} : index"))
    }

    /// `scf.if cond -> (ty)`: `then` writes the taken branch and returns its value; the other
    /// branch yields `keep` unchanged. Returns the `scf.if`'s result.
    pub fn if_else_keep(&mut self, cond: &str, ty: impl std::fmt::Display, keep: &str, then: impl FnOnce(&mut Emitter) -> String) -> String {
        let n = self.fresh();
        self.raw_line(format!("{n} = scf.if {cond} -> ({ty}) {{"));
        self.depth += 1;
        let v = then(self);
        self.line(format!("scf.yield {v} : {ty}"));
        self.depth -= 1;
        self.raw_line("} else {");
        self.depth += 1;
        self.line(format!("scf.yield {keep} : {ty}"));
        self.depth -= 1;
        self.line("}");
        n
    }

    /// The destination-passing buffer of output `v` of the function ([`Emitter::outs`]), if `v`
    /// is one.
    pub fn out_buffer(&self, v: Value) -> Option<String> {
        self.outs.iter().find(|(w, _)| *w == v).map(|(_, name)| name.clone())
    }

    /// [`Emitter::out_buffer`] of each value of `vs` (None: no buffer asked), each buffer
    /// once: a later value of the same buffer (a value returned twice) gets None.
    pub fn distinct_out_buffers(&self, vs: &[Option<Value>]) -> Vec<Option<String>> {
        let mut taken: Vec<String> = Vec::new();
        vs.iter()
            .map(|v| {
                let b = self.out_buffer((*v)?).filter(|b| !taken.contains(b))?;
                taken.push(b.clone());
                Some(b)
            })
            .collect()
    }

    /// The buffer of output `v` of the function (type `t`) as a tensor made at the start of the
    /// body, so that it dominates every op: empty-tensor elimination can then let the producer
    /// of a value inserted into it write it in place. None when `v` is no output. (Each output
    /// buffer is made a tensor once: this, or one op's own `to_tensor` of its result's buffer.)
    pub fn output_tensor(&mut self, v: Value, t: &TensorType) -> Option<String> {
        let buffer = self.out_buffer(v)?;
        let n = self.fresh();
        let _ = writeln!(self.prologue, "    {n} = bufferization.to_tensor {buffer} restrict writable : {} to {t}", memref(t));
        Some(n)
    }

    /// The output buffer of result `v` (type `t`) as a tensor when `v` is an output of the
    /// function ([`Emitter::output_tensor`]), else a new empty tensor: a destination that
    /// empty-tensor elimination need not find through reshapes.
    pub fn output_or_empty(&mut self, v: Value, t: &TensorType) -> String {
        match self.output_tensor(v, t) {
            Some(x) => x,
            None => self.empty(t),
        }
    }

    /// `linalg.fill` of a new tensor of `ty` with scalar `value`.
    pub fn filled(&mut self, ty: &TensorType, value: &str) -> String {
        let e = self.empty(ty);
        fill_into(self, value, ty, &e)
    }
}

/// `tensor.insert_slice` of `src` (`st`) into `dst` (`dt`) at `offsets` (with `strides`, unit
/// when None), written as a `linalg.copy` into the destination's slice: the copy bufferizes
/// to a loop over the subviews (vectorised by LLVM) instead of a strided `memrefCopy` call,
/// and a large one is split between the threads (quabla_runtime's `parallel::tag_loops`). A
/// copy that is a plain `linalg.generic` would not survive canonicalization (an identity
/// generic folds to its input).
pub fn insert_by_copy(e: &mut Emitter, src: &str, st: &TensorType, dst: &str, dt: &TensorType, offsets: &str, strides: Option<&[i64]>) -> String {
    write_slice(e, st, (dst, dt), offsets, strides, |e, slot| copy_into(e, src, st, slot))
}

/// The slice of `dst` (`dt`) at `offsets` (with `strides`, unit when None) of type `st`, written
/// by `write(e, slot)` (a destination-passing op into the slice, returning its result) and
/// inserted back: bufferized in place.
pub fn write_slice(e: &mut Emitter, st: &TensorType, (dst, dt): (&str, &TensorType), offsets: &str, strides: Option<&[i64]>, write: impl FnOnce(&mut Emitter, &str) -> String) -> String {
    let sizes = list(&st.shape);
    let strides = strides.map_or_else(|| vec!["1"; st.rank()].join(", "), list);
    let slot = e.op(format!("tensor.extract_slice {dst}[{offsets}] [{sizes}] [{strides}] : {dt} to {st}"));
    let c = write(e, &slot);
    e.op(format!("tensor.insert_slice {c} into {dst}[{offsets}] [{sizes}] [{strides}] : {st} into {dt}"))
}

/// `linalg.copy` of `src` into `dst` (both of type `t`), noted as a loop the executor may split
/// ([`split_candidate`] at `tiling::COPY_ELEMENT_COST`).
pub fn copy_into(e: &mut Emitter, src: &str, t: &TensorType, dst: &str) -> String {
    split_candidate(e, &vec![Iter::Parallel; t.rank()], &t.shape, crate::tiling::COPY_ELEMENT_COST);
    e.op(format!("linalg.copy ins({src} : {t}) outs({dst} : {t}) -> {t}"))
}

/// The parameters of `f` that [`lower_func`] copies into output buffers by a loop the
/// `threads` split (outputs that are parameters, or reshapes of them, large enough to split;
/// each parameter once), with their types; smaller ones are left to bufferization's `memcpy`.
/// The CPU executor counts these copies as work when it picks LLVM's level.
pub fn copied_parameters(f: &Func, threads: i64) -> Vec<(Value, TensorType)> {
    let mut copied: Vec<(Value, TensorType)> = Vec::new();
    for v in &f.outputs {
        let (u, t) = viewed_source(f, *v).unwrap_or_else(|| (*v, f.ty(*v).clone()));
        let split = t.rank() >= 1 && crate::tiling::parallel_loop(&vec![true; t.rank()], &t.shape, threads, crate::tiling::COPY_ELEMENT_COST).is_some();
        if split && f.params.contains(&u) && !copied.iter().any(|(w, _)| *w == u) {
            copied.push((u, t));
        }
    }
    copied
}

/// `linalg.fill` of `dst` (type `t`) with scalar `value`, noted as a loop the executor may
/// split (quabla_runtime's `parallel::tag_loops`).
pub fn fill_into(e: &mut Emitter, value: &str, t: &TensorType, dst: &str) -> String {
    split_candidate(e, &vec![Iter::Parallel; t.rank()], &t.shape, elementwise::MEMORY_COST);
    e.op(format!("linalg.fill ins({value} : {}) outs({dst} : {t}) -> {t}", t.dtype))
}

/// `affine_map<(d0, .., dn-1) -> (exprs)>`.
pub fn map(rank: usize, exprs: &[String]) -> String {
    let dims: Vec<String> = (0..rank).map(|i| format!("d{i}")).collect();
    format!("affine_map<({}) -> ({})>", dims.join(", "), exprs.join(", "))
}

/// The identity map of `rank`.
pub fn identity(rank: usize) -> String {
    let e: Vec<String> = (0..rank).map(|i| format!("d{i}")).collect();
    map(rank, &e)
}

/// Tensor `x` (type `t`) as the unranked memref a runtime kernel that only reads it takes,
/// read in place: `bufferization.to_buffer ... read_only` right before the call, each with its
/// own `quabla.gemm_operand` attribute so that CSE never merges it with an earlier read of
/// the same tensor (which would let bufferization reuse the buffer in between). The kernel
/// reads it through its strides.
pub fn kernel_operand(e: &mut Emitter, x: &str, t: &TensorType) -> String {
    let (buf, strided) = kernel_buffer(e, x, t);
    e.op(format!("memref.cast {buf} : {strided} to memref<*x{}>", t.dtype))
}

/// The read-only buffer of tensor `x` (type `t`) a runtime kernel reads, with any strides, and
/// its memref type ([`kernel_operand`] before the cast to unranked; views of it, a
/// convolution's windows).
pub fn kernel_buffer(e: &mut Emitter, x: &str, t: &TensorType) -> (String, String) {
    let dims: Vec<String> = t.shape.iter().map(|s| s.to_string()).collect();
    let strided = format!("memref<{}x{}, strided<[{}], offset: ?>>", dims.join("x"), t.dtype, vec!["?"; t.shape.len()].join(", "));
    let id = e.id();
    let buf = e.op(format!("bufferization.to_buffer {x} read_only {{quabla.gemm_operand = {id} : i64}} : {t} to {strided}"));
    (buf, strided)
}

/// An `scf.for` nest over `extents` whose levels carry a tensor of type `ty` from `init`
/// ([`open_nest`]; shared by the scatter loops and the row gather).
pub(super) struct ForNest {
    /// The induction variables, outermost first.
    pub ivs: Vec<String>,
    /// The carried tensor inside the innermost loop.
    pub acc: String,
    /// Each level's result, outermost first.
    pub results: Vec<String>,
}

pub(super) fn open_nest(e: &mut Emitter, extents: &[i64], ty: &TensorType, init: String) -> ForNest {
    let (zero, one) = (e.index(0), e.index(1));
    let (mut ivs, mut acc, mut results) = (Vec::with_capacity(extents.len()), init, Vec::with_capacity(extents.len()));
    for &n in extents {
        let ub = e.index(n);
        let (res, iv, inner) = (e.fresh(), e.fresh(), e.fresh());
        e.raw_line(format!("{res} = scf.for {iv} = {zero} to {ub} step {one} iter_args({inner} = {acc}) -> ({ty}) {{"));
        e.depth += 1;
        ivs.push(iv);
        results.push(res);
        acc = inner;
    }
    ForNest { ivs, acc, results }
}

/// Closes the nest whose levels' results are `results`, the innermost yielding `next`;
/// returns the outermost result (`next` itself without loops).
pub(super) fn close_nest(e: &mut Emitter, results: &[String], next: String, ty: &TensorType) -> String {
    let mut inner = next;
    for res in results.iter().rev() {
        e.line(format!("scf.yield {inner} : {ty}"));
        e.depth -= 1;
        e.line("}");
        inner = res.clone();
    }
    inner
}

/// Comma-separated integers.
pub fn list(v: &[i64]) -> String {
    v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ")
}

/// One operand of a `linalg.generic`: SSA name, tensor type and indexing map.
pub struct Operand {
    pub name: String,
    pub ty: TensorType,
    pub map: String,
}

impl Operand {
    pub fn new(name: impl Into<String>, ty: &TensorType, map: impl Into<String>) -> Self {
        Operand { name: name.into(), ty: ty.clone(), map: map.into() }
    }
}

/// Loop kinds of a `linalg.generic`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Iter {
    Parallel,
    Reduction,
}

/// Emits a `linalg.generic` with the given inputs and outputs (inits) over one loop per entry
/// of `iters`. `body` receives the block argument names (inputs then outputs) and returns the
/// yielded scalars, one per output. Returns the result names.
pub fn generic(e: &mut Emitter, iters: &[Iter], ins: &[Operand], outs: &[Operand], body: impl FnOnce(&mut Emitter, &[String]) -> Vec<String>) -> Vec<String> {
    let maps: Vec<&str> = ins.iter().chain(outs).map(|o| o.map.as_str()).collect();
    let it: Vec<&str> = iters.iter().map(|i| if *i == Iter::Parallel { "\"parallel\"" } else { "\"reduction\"" }).collect();
    let res = e.fresh();
    let lhs = if outs.len() == 1 { res.clone() } else { format!("{res}:{}", outs.len()) };
    let names = |v: &[Operand]| v.iter().map(|o| o.name.clone()).collect::<Vec<_>>().join(", ");
    let types = |v: &[Operand]| v.iter().map(|o| o.ty.to_string()).collect::<Vec<_>>().join(", ");
    let ins_part = if ins.is_empty() { String::new() } else { format!(" ins({} : {})", names(ins), types(ins)) };
    e.raw_line(format!(
        "{lhs} = linalg.generic {{indexing_maps = [{}], iterator_types = [{}]}}{ins_part} outs({} : {}) {{",
        maps.join(", "),
        it.join(", "),
        names(outs),
        types(outs)
    ));
    let args: Vec<String> = (0..ins.len() + outs.len()).map(|i| format!("%b{i}")).collect();
    let decl: Vec<String> = args.iter().zip(ins.iter().chain(outs)).map(|(a, o)| format!("{a}: {}", o.ty.dtype)).collect();
    e.raw_line(format!("^bb0({}):", decl.join(", ")));
    e.depth += 1;
    let start = e.out.len();
    let yields = body(e, &args);
    let cost = elementwise::text_body_cost(&e.out[start..]);
    parallel_candidate(e, iters, ins, outs, cost);
    let ytypes: Vec<String> = outs.iter().map(|o| o.ty.dtype.to_string()).collect();
    e.line(format!("linalg.yield {} : {}", yields.join(", "), ytypes.join(", ")));
    e.depth -= 1;
    e.line(format!("}} -> ({})", types(outs)));
    if outs.len() == 1 {
        vec![res]
    } else {
        (0..outs.len()).map(|i| format!("{res}#{i}")).collect()
    }
}

/// Records in `e.par` whether a generic over `iters` is one the target would split across
/// threads ([`crate::target::Target::parallel_loop`]; its loop extents are the shape of an
/// operand with the identity map: elementwise ops, reductions over their input's dims). The
/// generic is not tagged here: upstream fusion replaces generics (and drops their
/// attributes), so the CPU executor tags the generics left after fusion itself
/// (quabla_runtime's `parallel::tag_loops`); this only tells whether any can be.
///
/// `body_cost` is the [`elementwise::op_cost`] of the body; with [`elementwise::MEMORY_COST`]
/// per identity-mapped operand it is the work of one iteration.
pub(super) fn parallel_candidate(e: &mut Emitter, iters: &[Iter], ins: &[Operand], outs: &[Operand], body_cost: i64) {
    let id = identity(iters.len());
    let full: Vec<&Operand> = ins.iter().chain(outs).filter(|o| o.map == id && o.ty.rank() == iters.len()).collect();
    if let Some(first) = full.first() {
        split_candidate(e, iters, &first.ty.shape, body_cost + elementwise::MEMORY_COST * full.len() as i64);
    }
}

/// [`parallel_candidate`] of a generic over `iters` whose loop extents are `extents` and one
/// iteration costs `cost` (for generics where no operand has the identity map of all the
/// loops: dot::km_matvec's).
pub(super) fn split_candidate(e: &mut Emitter, iters: &[Iter], extents: &[i64], cost: i64) {
    let threads = e.threads();
    if threads <= 1 || e.par {
        return;
    }
    let parallel: Vec<bool> = iters.iter().map(|i| *i == Iter::Parallel).collect();
    e.par = e.cg.target.parallel_loop(&parallel, extents, threads, cost).is_some();
}

/// An elementwise `linalg.generic` (identity maps) over same-shaped operands, producing `out`.
/// At rank 0 the body runs on the extracted scalars and its result is inserted into an empty
/// tensor: canonicalization folds `tensor.extract` of that insert, so chains of 0-d ops
/// (a loop's counter arithmetic, scalar carries) stay in registers instead of a buffer per
/// op, and empty-tensor elimination makes the insert of a yielded carry store in place.
pub fn elementwise(e: &mut Emitter, operands: &[(String, TensorType)], out: &TensorType, body: impl FnOnce(&mut Emitter, &[String]) -> String) -> String {
    let r = out.rank();
    if r == 0 && e.cg.target.parallel_outer() {
        // A unit parallel loop, so the op is a kernel, not host code reading device memory.
        let one = TensorType::new(out.dtype, [1]);
        let ins: Vec<Operand> = operands.iter().map(|(n, t)| Operand::new(n.clone(), t, map(1, &[]))).collect();
        let init = e.empty(&one);
        let y = generic(e, &[Iter::Parallel], &ins, &[Operand::new(init, &one, identity(1))], |e, a| vec![body(e, a)]).remove(0);
        return e.op(format!("tensor.collapse_shape {y} [] : {one} into {out}"));
    }
    if r == 0 {
        let xs: Vec<String> = operands.iter().map(|(n, t)| e.op(format!("tensor.extract {n}[] : {t}"))).collect();
        let y = body(e, &xs);
        let init = e.empty(out);
        return e.op(format!("tensor.insert {y} into {init}[] : {out}"));
    }
    if e.apart && !operands.is_empty() {
        // (As a `linalg.map` it was not split across threads nor vectorized without overlap
        // checks.)
        return unfused_generic(e, operands, out, body);
    }
    let init = e.empty(out);
    let ins: Vec<Operand> = operands.iter().map(|(n, t)| Operand::new(n.clone(), t, identity(r))).collect();
    generic(e, &vec![Iter::Parallel; r], &ins, &[Operand::new(init, out, identity(r))], |e, a| vec![body(e, a)]).remove(0)
}

/// A generic over `out`'s dims, all parallel, then a unit reduction loop (its extent from an
/// empty `[1]` operand): upstream elementwise fusion only puts all-parallel generics into
/// their consumers, so a consumer that reads the result through a broadcast does not
/// recompute it per element (the pipeline's `linalg-fold-unit-extent-dims` drops the loop
/// after fusion). `ins` are read through the identity map of `out`'s dims; `body` gets their
/// elements and returns the result's.
pub(super) fn unfused_generic(e: &mut Emitter, ins: &[(String, TensorType)], out: &TensorType, body: impl FnOnce(&mut Emitter, &[String]) -> String) -> String {
    let r = out.rank();
    let mut iters = vec![Iter::Parallel; r + 1];
    iters[r] = Iter::Reduction;
    let ut = TensorType::new(out.dtype, [1]);
    let u = e.empty(&ut);
    let dims: Vec<String> = (0..r).map(|i| format!("d{i}")).collect();
    let mut operands: Vec<Operand> = ins.iter().map(|(n, t)| Operand::new(n.clone(), t, map(r + 1, &dims))).collect();
    operands.push(Operand::new(u, &ut, map(r + 1, &[format!("d{r}")])));
    let init = e.empty(out);
    let n = ins.len();
    generic(e, &iters, &operands, &[Operand::new(init, out, map(r + 1, &dims))], |e, a| vec![body(e, &a[..n])]).remove(0)
}

/// What the lowering of one module needs to know beyond the function at hand.
pub struct Ctx<'a> {
    pub module: &'a Module,
    pub abi: Abi,
    /// The name each call uses for its callee (public callees under `Abi::Dps` are renamed
    /// to their private tensor twins).
    pub callee: HashMap<String, String>,
    /// Code-generation choices.
    pub cg: Codegen,
}

/// Operand names and types of `o`.
pub fn operands(e: &Emitter, f: &Func, o: &Op) -> Vec<(String, TensorType)> {
    o.operands.iter().map(|v| (e.name(*v), f.ty(*v).clone())).collect()
}

/// Lowers the ops of one block (a function body or a region body whose outputs are
/// `outputs`). Chains of elementwise ops are fused here: an elementwise op whose single result
/// is used exactly once, by an elementwise op of the same block, is not materialised; the
/// consumer's `linalg.generic` computes it in its body from the chain's leaves
/// (`elementwise::lower_fused`). This keeps one generic per chain, so upstream
/// `linalg-fuse-elementwise-ops` (quadratic in the length of a chain it has to fuse) has only
/// broadcasts left to fuse. Broadcasts are read by the elementwise generics that use them
/// from their source through the broadcast's map, or as literals for splat constants
/// (`elementwise::read_broadcasts`), so one used several times is not materialised (upstream
/// fusion keeps a producer with several uses).
pub(crate) fn lower_block(e: &mut Emitter, cx: &Ctx, f: &Func, ops: &[Op], outputs: &[Value]) -> Result<(), LowerError> {
    // Runs of row-local ops on large arrays, lowered in blocks of rows (row_blocks); the other
    // ops are analysed and lowered as a block of their own, each run written before the op
    // that followed it.
    // On the block with its elementwise and layout ops next to their first users, so that a
    // run does not take in an op whose results only ops after it read (row_blocks::sunk).
    let sunk = row_blocks::sunk(e, ops);
    let ordered = sunk.as_deref().unwrap_or(ops);
    let runs = row_blocks::runs(e, f, ordered, outputs);
    if runs.is_empty() {
        return lower_ops(e, cx, f, ops, outputs, &[]);
    }
    let ops = ordered;
    let mut kept = Vec::with_capacity(ops.len());
    let mut at = Vec::with_capacity(runs.len());
    let mut next = 0;
    for run in &runs {
        kept.extend(ops[next..run.start].iter().cloned());
        at.push(kept.len());
        kept.extend(run.again.iter().map(|&k| ops[k].clone()));
        next = run.end;
    }
    kept.extend(ops[next..].iter().cloned());
    let placed: Vec<(usize, &row_blocks::Run)> = at.into_iter().zip(&runs).collect();
    // What the runs read is materialised like what the block yields (the analyses of the
    // other ops do not see the runs' uses).
    let mut yielded = outputs.to_vec();
    yielded.extend(runs.iter().flat_map(|r| r.inputs()));
    lower_ops(e, cx, f, &kept, &yielded, &placed)
}

/// [`lower_block`] of `ops` (the block without its row-block runs), each run of `runs` written
/// before the op of its index.
fn lower_ops(e: &mut Emitter, cx: &Ctx, f: &Func, ops: &[Op], outputs: &[Value], runs: &[(usize, &row_blocks::Run)]) -> Result<(), LowerError> {
    let pending = elementwise::fusible_producers(f, ops, outputs);
    let splats = elementwise::splat_scalars(ops);
    let scalars = elementwise::read_broadcasts(f, ops);
    let padded = if e.cg.target.parallel_outer() { Default::default() } else { elementwise::padded_reads(f, ops, &splats, &scalars) };
    let deferred = elementwise::deferred_values(f, ops, outputs, &pending);
    let unused = elementwise::unmaterialised(&scalars, &padded, ops, outputs);
    let apart = if e.cg.target.parallel_outer() { Default::default() } else { elementwise::kept_apart(f, ops, &scalars, &pending, &e.cg) };
    let reads = elementwise::Reads { splats, scalars, padded };
    for (i, op) in ops.iter().enumerate() {
        for (_, run) in runs.iter().filter(|(at, _)| *at == i) {
            row_blocks::lower_run(e, cx, f, run)?;
        }
        if op.results.len() == 1 && (pending.contains_key(&op.results[0]) || deferred.contains_key(&op.results[0]) || unused.contains(&op.results[0])) {
            continue;
        }
        e.apart = op.results.len() == 1 && apart.contains(&op.results[0]);
        if elementwise::takes_fused(op, &pending, &reads, &deferred) {
            e.loc = op.loc.as_ref().map(|l| l.to_string());
            let r = elementwise::lower_fused(e, f, op, &pending, &reads, &deferred)?;
            e.alias(op.results[0], r);
            e.loc = None;
            e.apart = false;
            continue;
        }
        lower_op(e, cx, f, op)?;
        e.apart = false;
    }
    for (_, run) in runs.iter().filter(|(at, _)| *at == ops.len()) {
        row_blocks::lower_run(e, cx, f, run)?;
    }
    Ok(())
}

/// Lowers one op, binding its results. Exhaustive over [`OpKind`].
fn lower_op(e: &mut Emitter, cx: &Ctx, f: &Func, o: &Op) -> Result<(), LowerError> {
    e.loc = o.loc.as_ref().map(|l| l.to_string());
    let one = |r: Result<String, LowerError>| r.map(|r| vec![r]);
    let names = match &o.kind {
        OpKind::Elementwise(x) => one(elementwise::lower(e, f, o, x)),
        OpKind::Constant(x) => one(constant::lower(e, x)),
        OpKind::Layout(x) => one(layout::lower(e, f, o, x)),
        OpKind::Slicing(x) => one(slicing::lower(e, f, o, x)),
        OpKind::Reduce(x) => one(reduce::lower(e, f, o, x)),
        OpKind::Dot(x) => one(dot::lower(e, f, o, x)),
        OpKind::Call(CallOp::Call { callee, results }) => call::lower_call(e, cx, f, o, callee, results),
        OpKind::Call(CallOp::CustomJvp { .. }) | OpKind::Call(CallOp::CustomVjp { .. }) => call::lower_custom(e, cx, f, o),
        OpKind::Control(x) => control::lower(e, cx, f, o, x),
        OpKind::Scatter(x) => one(scatter::lower(e, f, o, x)),
        OpKind::Convolution(x) => one(convolution::lower(e, f, o, x)),
        OpKind::ReduceWindow(x) => one(reduce_window::lower(e, f, o, x)),
        OpKind::Linalg(x) => linalg::lower(e, f, o, x),
        OpKind::Sort(x) => one(sort::lower(e, f, o, x)),
        OpKind::Callback(x) => one(callback::lower(e, f, o, x)),
        OpKind::Collective(x) => one(collective::lower(e, f, o, x)),
    }?;
    for (v, n) in o.results.iter().zip(names) {
        e.alias(*v, n);
    }
    e.loc = None;
    Ok(())
}

/// A symbol reference to function `name`: `@name`, quoted when `name` is not a bare identifier.
pub fn sym(name: &str) -> String {
    let bare = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_') && name.chars().all(|c| c.is_ascii_alphanumeric() || "_$.".contains(c));
    if bare {
        format!("@{name}")
    } else {
        format!("@\"{}\"", name.escape_default())
    }
}

/// `memref<d0x..xdtype>` with the identity layout.
pub fn memref(t: &TensorType) -> String {
    let mut s = String::from("memref<");
    for d in &t.shape {
        let _ = write!(s, "{d}x");
    }
    let _ = write!(s, "{}>", t.dtype);
    s
}

/// `x` (`t`, a tensor with a buffer of its own: a parameter, an op's result that fusion never
/// merges) viewed as `to` (the same elements, adjacent dims collapsed) through its buffer
/// (`bufferization.to_buffer ... read_only`, `memref.collapse_shape`, `to_tensor`): upstream
/// fusion does not propagate this reshape as it does a `tensor.collapse_shape` (expanding the
/// reshape's consumers back to `t`'s shape). Each view has an attribute of its own so that CSE
/// never merges two (as [`kernel_buffer`]).
pub fn collapsed_view(e: &mut Emitter, x: &str, t: &TensorType, to: &TensorType) -> String {
    if t.shape == to.shape {
        return x.to_string();
    }
    let groups = layout::reassociation(&t.shape, &to.shape).expect("a view of collapsed adjacent dims");
    let id = e.id();
    let (m, vm) = (memref(t), memref(to));
    let buf = e.op(format!("bufferization.to_buffer {x} read_only {{quabla.flat_view = {id} : i64}} : {t} to {m}"));
    let c = e.op(format!("memref.collapse_shape {buf} {} : {m} into {vm}", layout::assoc_text(&groups)));
    e.op(format!("bufferization.to_tensor {c} restrict : {vm} to {to}"))
}

/// The element of the splat constant that defines `v`, as a 0-d `arith.constant` tensor (its
/// name and type), if `v` is one: a splat constant, or the broadcast of a 0-d constant (the
/// form of splats larger than folding writes, `fold::MAX_SPLAT_ELEMENTS`: the zeros that two
/// embedding gradients scatter into, each filled in its own output).
pub fn splat_scalar(e: &mut Emitter, f: &Func, v: Value) -> Option<(String, TensorType)> {
    let def = defining(f, v)?;
    let def = match &def.kind {
        OpKind::Layout(quabla_dialect::LayoutOp::BroadcastInDim { dims, .. }) if dims.is_empty() => defining(f, def.operands[0])?,
        _ => def,
    };
    let OpKind::Constant(quabla_dialect::ConstantOp::Constant { value }) = &def.kind else {
        return None;
    };
    if !value.is_splat() || value.is_empty() {
        return None;
    }
    let st = TensorType::new(value.ty.dtype, Vec::<i64>::new());
    let scalar = quabla_dialect::Literal::from_bytes(st.clone(), value.elem_bytes(0).to_vec());
    Some((e.op(format!("arith.constant {}", scalar.to_mlir())), st))
}

/// Whether `v` is a parameter of `f`, or a reshape of one: a buffer that no op of `f` writes.
/// A value computed in `f` and copied into the output buffer may be computed there directly
/// (empty-tensor elimination), so the scatter's in-place updates would reach that value's
/// later readers (a gradient's `ct` both scattered into an output and gathered afterwards).
pub fn reads_parameter(f: &Func, mut v: Value) -> bool {
    loop {
        if f.params.contains(&v) {
            return true;
        }
        match f.ops.iter().find(|op| op.results.contains(&v)) {
            Some(Op { kind: OpKind::Layout(quabla_dialect::LayoutOp::Reshape { .. }), operands, .. }) => v = operands[0],
            _ => return false,
        }
    }
}

/// The op of `f` (at any depth) that defines `v`; None for a block argument.
pub fn defining(f: &Func, v: Value) -> Option<&Op> {
    let mut def = None;
    quabla_dialect::walk_ops(&f.ops, &mut |op| {
        if op.results.contains(&v) {
            def = Some(op);
        }
    });
    def
}

/// The value (and its type) that top-level reshape `v` of `f` reshapes, if `v` is one.
fn reshaped_source(f: &Func, v: Value) -> Option<(Value, TensorType)> {
    let op = f.ops.iter().find(|op| op.results.contains(&v))?;
    match op.kind {
        OpKind::Layout(quabla_dialect::LayoutOp::Reshape { .. }) => Some((op.operands[0], f.ty(op.operands[0]).clone())),
        _ => None,
    }
}

/// The value written into output `v`'s buffer viewed in its shape, when `v` reshapes it (both
/// of rank 1 or more: [`lower_func`]'s output views).
fn viewed_source(f: &Func, v: Value) -> Option<(Value, TensorType)> {
    reshaped_source(f, v).filter(|(_, ut)| f.ty(v).rank() >= 1 && ut.rank() >= 1)
}

/// Writes `f` as a func.func named `name`; `dps` selects the destination-passing signature
/// (public: the C interface; private: bare pointers, see [`crate::target::Target::private_dps`]).
/// `tagged` carries the module's tagged matmuls and parallel loops through the functions.
fn lower_func(out: &mut String, cx: &Ctx, f: &Func, name: &str, public: bool, dps: bool, tagged: &mut Tagged) -> Result<(), LowerError> {
    let mut e = Emitter::new(f, cx.cg, std::mem::take(tagged));
    let mut params: Vec<String> = f
        .params
        .iter()
        .map(|v| if dps { format!("%v{}: {} {{bufferization.writable = false}}", v.0, f.ty(*v)) } else { format!("%v{}: {}", v.0, f.ty(*v)) })
        .collect();
    let results = f.result_types();
    // An output that reshapes another value `u` is written as `u` into the output buffer
    // viewed in `u`'s shape (a collapse to 1-D and an expand; made first, so that it dominates
    // `u`'s producer): empty-tensor elimination, which does not see through the reshape, can
    // then let the producer write the output buffer itself, instead of a new buffer copied
    // into it (np.tile's broadcast: 4-D, then reshaped to 2-D). The view is also `u`'s
    // destination in `e.outs`: producers that write their destination themselves (runtime
    // products, the scatter loop) use it.
    let mut views = String::new();
    let mut targets: Vec<(Value, TensorType, String)> = Vec::new();
    if dps {
        params.extend(results.iter().enumerate().map(|(k, t)| format!("%out{k}: {}", memref(t))));
        for (k, v) in f.outputs.iter().enumerate() {
            if !e.outs.iter().any(|(w, _)| w == v) {
                e.outs.push((*v, format!("%out{k}")));
            }
        }
        for (k, (v, t)) in f.outputs.iter().zip(&results).enumerate() {
            match viewed_source(f, *v) {
                Some((u, ut)) => {
                    let view = layout::flat_view(&format!("%out{k}"), t, &ut, |step, rhs| {
                        let _ = writeln!(views, "    %out{k}_{step} = {rhs}");
                        format!("%out{k}_{step}")
                    });
                    if !e.outs.iter().any(|(w, _)| *w == u) {
                        e.outs.push((u, view.clone()));
                    }
                    targets.push((u, ut, view));
                }
                None => targets.push((*v, t.clone(), format!("%out{k}"))),
            }
        }
    }
    lower_block(&mut e, cx, f, &f.ops, &f.outputs)?;
    // A large output that is a parameter (or its reshape) is copied into the output buffer by
    // a loop the threads split, not by bufferization's `memref.copy` on one thread (a returned
    // 4096 x 1024 f32 argument: 1187 -> 621 us, JAX 665; the gradient of
    // `einsum("bij,bij->b")` with respect to one operand is the other).
    let mut written: Vec<String> = targets.iter().map(|(v, _, _)| e.name(*v)).collect();
    if dps && !e.cg.target.parallel_outer() {
        let mut copied = copied_parameters(f, e.threads());
        for (k, (v, t, _)) in targets.iter().enumerate() {
            // Each parameter once: its output buffer is made a tensor once.
            if let Some(i) = copied.iter().position(|(u, _)| u == v) {
                copied.swap_remove(i);
                if let Some(d) = e.output_tensor(*v, t) {
                    written[k] = copy_into(&mut e, &written[k], t, &d);
                }
            }
        }
    }
    let vis = if public { "" } else { "private " };
    let loc = f.loc.as_ref().map(|l| format!(" loc({l})")).unwrap_or_default();
    if dps {
        // A private destination-passing function is called only by the module's own code:
        // bare pointers (crate::target::Target::private_dps).
        let abi = if public { "llvm.emit_c_interface" } else { "llvm.bareptr" };
        let _ = writeln!(out, "  func.func {vis}{}({}) attributes {{{abi}}} {{", sym(name), params.join(", "));
        out.push_str(&views);
        out.push_str(&e.prologue);
        let mut writes = String::new();
        for ((_, t, dest), w) in targets.iter().zip(&written) {
            let _ = writeln!(writes, "    bufferization.materialize_in_destination {w} in restrict writable {dest} : ({t}, {}) -> ()", memref(t));
        }
        out.push_str(&e.out);
        out.push_str(&writes);
        let _ = writeln!(out, "    return\n  }}{loc}");
    } else {
        let rt: Vec<String> = results.iter().map(|t| t.to_string()).collect();
        let _ = writeln!(out, "  func.func {vis}{}({}) -> ({}) {{", sym(name), params.join(", "), rt.join(", "));
        out.push_str(&e.out);
        let names: Vec<String> = f.outputs.iter().map(|v| e.name(*v)).collect();
        if names.is_empty() {
            out.push_str("    return\n");
        } else {
            let _ = writeln!(out, "    return {} : {}", names.join(", "), rt.join(", "));
        }
        let _ = writeln!(out, "  }}{loc}");
    }
    *tagged = (e.tiles, e.par, e.gemms);
    Ok(())
}

/// What the target's transform script is for: the tagged matmuls, and whether any loop may
/// run on several threads; and the element types of the runtime products the module calls.
pub type Tagged = (Vec<MatmulTile>, bool, Vec<DType>);

/// Lowers every function of `m` (verified first) to upstream MLIR text.
///
/// `Abi::Tensor` keeps every signature. `Abi::Dps` gives each public function one
/// `memref` argument per result after its (read-only) tensor inputs, marks it
/// `llvm.emit_c_interface` and writes the results into those memrefs.
pub fn lower_module(m: &Module, abi: Abi) -> Result<String, LowerError> {
    lower_module_with(m, abi, Codegen::default())
}

/// [`lower_module`] with code-generation choices. With `cg.tile_matmuls`, a module with
/// tagged matmuls carries `transform.with_named_sequence` and the private named sequences of
/// the target's [`crate::target::Target::matmul_script`] (for the CPU [`crate::tiling::script`],
/// which [`crate::cpu::cpu_pipeline`] runs with `CpuOptions::transform`).
pub fn lower_module_with(m: &Module, abi: Abi, cg: Codegen) -> Result<String, LowerError> {
    Ok(lower_module_tiles(m, abi, cg)?.0)
}

/// [`lower_module_with`], also returning the tagged matmuls.
/// Unsigned dtypes are written signless (`tensor<4xi32>` for `tensor<4xui32>`, see
/// [`quabla_dialect::types::with_signless_spelling`]); their ops are the unsigned arith ops.
pub fn lower_module_tiles(m: &Module, abi: Abi, cg: Codegen) -> Result<(String, Vec<MatmulTile>), LowerError> {
    lower_module_tagged(m, abi, cg).map(|(text, (tiles, _, _))| (text, tiles))
}

/// [`lower_module_tiles`], also returning whether some loop may run on several threads.
pub fn lower_module_tagged(m: &Module, abi: Abi, cg: Codegen) -> Result<(String, Tagged), LowerError> {
    quabla_dialect::types::with_signless_spelling(|| lower_module_signless(m, abi, cg))
}

fn lower_module_signless(m: &Module, abi: Abi, cg: Codegen) -> Result<(String, Tagged), LowerError> {
    m.verify()?;
    if let Some((f, t)) = m.funcs.iter().find_map(|f| f.transform.as_ref().map(|t| (f, t))) {
        return Err(LowerError::UnexpandedTransform { func: f.name.clone(), kind: t.kind.name(), of: t.of.clone(), by: crate::Lowering::Linalg });
    }
    let mut callee: HashMap<String, String> = m.funcs.iter().map(|f| (f.name.clone(), f.name.clone())).collect();
    let mut twins: Vec<(&Func, String)> = Vec::new();
    if abi == Abi::Dps {
        let mut called: HashSet<&str> = HashSet::new();
        for f in &m.funcs {
            f.walk(&mut |o| {
                if let OpKind::Call(CallOp::Call { callee, .. }) = &o.kind {
                    called.insert(callee.as_str());
                }
            });
        }
        let mut taken: HashSet<String> = m.funcs.iter().map(|f| f.name.clone()).collect();
        for f in m.funcs.iter().filter(|f| f.public && called.contains(f.name.as_str())) {
            let base = format!("{}_tensor", f.name);
            let name = (0..).map(|i| if i == 0 { base.clone() } else { format!("{base}_{i}") }).find(|n| !taken.contains(n)).unwrap_or(base);
            taken.insert(name.clone());
            callee.insert(f.name.clone(), name.clone());
            twins.push((f, name));
        }
    }
    let cx = Ctx { module: m, abi, callee, cg };
    let mut body = String::new();
    let mut tagged = Tagged::default();
    for f in &m.funcs {
        lower_func(&mut body, &cx, f, &f.name, f.public, abi == Abi::Dps && (f.public || cg.target.private_dps()), &mut tagged)?;
    }
    for (f, name) in twins {
        lower_func(&mut body, &cx, f, &name, false, false, &mut tagged)?;
    }
    // A kernels-only target has loop forms instead of runtime kernels (crate::linalg::sort,
    // crate::linalg::linalg_loops).
    let kernels = !cg.target.parallel_outer();
    if kernels {
        body.push_str(&linalg::declarations(m));
    }
    body.push_str(&callback::declarations(m));
    if kernels {
        body.push_str(&sort::declarations(m));
        body.push_str(&dot::declarations(&tagged.2));
        body.push_str(&layout::declarations(m, cg.target));
        body.push_str(&reduce::declarations(m, cg.target));
    }
    let threads = if tagged.1 { cg.threads } else { 1 };
    let out = if tagged.0.is_empty() && threads <= 1 {
        format!("module {{\n{body}}}\n")
    } else {
        format!("module attributes {{transform.with_named_sequence}} {{\n{body}{}}}\n", cg.target.matmul_script(&tagged.0, threads))
    };
    Ok((out, tagged))
}

/// The MLIR spelling of a float constant of `dtype` for `v` (hex for non-finite values).
pub fn float_lit(dtype: DType, v: f64) -> String {
    if v.is_finite() && !(v == 0.0 && v.is_sign_negative()) {
        let s = format!("{v:e}");
        match s.split_once('e') {
            Some((m, x)) if !m.contains('.') => format!("{m}.0e{x}"),
            _ => s,
        }
    } else if dtype == DType::F32 {
        format!("0x{:08X}", (v as f32).to_bits())
    } else {
        format!("0x{:016X}", v.to_bits())
    }
}

/// The scalar `0` of a dtype as MLIR text.
pub fn zero_lit(d: DType) -> &'static str {
    match d {
        DType::F32 | DType::F64 => "0.0",
        DType::I1 => "false",
        DType::I32 | DType::I64 | DType::U8 | DType::U32 => "0",
    }
}

/// The scalar `1` of a dtype as MLIR text.
pub fn one_lit(d: DType) -> &'static str {
    match d {
        DType::F32 | DType::F64 => "1.0",
        DType::I1 => "true",
        DType::I32 | DType::I64 | DType::U8 | DType::U32 => "1",
    }
}

/// The smallest value of an integer dtype (`false` for i1), as text.
pub fn int_min(d: DType) -> &'static str {
    match d {
        DType::I32 => "-2147483648",
        DType::I64 => "-9223372036854775808",
        DType::U8 | DType::U32 => "0",
        DType::I1 | DType::F32 | DType::F64 => "false",
    }
}

/// The largest value of an integer dtype (`true` for i1), as text.
pub fn int_max(d: DType) -> &'static str {
    match d {
        DType::I32 => "2147483647",
        DType::I64 => "9223372036854775807",
        DType::U8 => "255",
        DType::U32 => "4294967295",
        DType::I1 | DType::F32 | DType::F64 => "true",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_literals() {
        assert_eq!(float_lit(DType::F32, 1.0), "1.0e0");
        assert_eq!(float_lit(DType::F64, 0.0), "0.0e0");
        assert_eq!(float_lit(DType::F64, -0.0), "0x8000000000000000");
        assert_eq!(float_lit(DType::F32, f64::NEG_INFINITY), "0xFF800000");
        assert_eq!(float_lit(DType::F64, 2147483648.0), "2.147483648e9");
    }

    #[test]
    fn symbols() {
        assert_eq!(sym("main"), "@main");
        assert_eq!(sym("f_1.x$"), "@f_1.x$");
        assert_eq!(sym("<lambda>"), "@\"<lambda>\"");
        assert_eq!(sym("1f"), "@\"1f\"");
    }

    #[test]
    fn maps() {
        assert_eq!(identity(0), "affine_map<() -> ()>");
        assert_eq!(map(2, &["d1".into(), "0".into()]), "affine_map<(d0, d1) -> (d1, 0)>");
    }
}

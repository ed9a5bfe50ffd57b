//! Running the CUDA pipeline and reading its result: [`compile`] parses the lowered text,
//! runs the bufferization stage, turns every `memref.copy` into a `linalg.copy` (so copies
//! become kernels too), runs the GPU stage, reads the host side of the entry function into a
//! [`HostPlan`], then runs the PTX stage and collects each `gpu.binary`'s PTX text.
//!
//! The host plan is what an executor does per call, in order: buffers (the entry's inputs
//! and outputs under the destination-passing ABI, temporaries, constants uploaded once) and
//! kernel launches with their grid and block sizes and arguments (bare-pointer ABI: one
//! device pointer per memref, the base pointer of the buffer a view aliases, since a view's
//! static offset and strides are part of the kernel's memref type; `index` as i64; scalars
//! by value). Allowed host ops: constants, allocations, deallocations, globals, views and
//! launches; anything else is [`LowerError::HostCode`].
use std::collections::HashMap;

use melior::ir::Module as MlirModule;
use melior::pass::PassManager;
use melior::utility::parse_pass_pipeline;
use melior::Context;
use mlir_sys as sys;
use quabla_dialect::Module;

use super::{lower_for_cuda, CudaOptions, Toolkit};
use crate::target::with_diagnostics;
use crate::LowerError;

/// One buffer of a [`HostPlan`].
#[derive(Clone, Debug, PartialEq)]
pub enum HostBuffer {
    /// Argument `k` of the entry function: inputs first, then one output per result (DPS).
    Param(usize),
    /// A temporary of `bytes` bytes, alive for one call.
    Temp { bytes: usize },
    /// A constant (a `memref.global`), uploaded once per executable.
    Const { name: String, bytes: Vec<u8> },
}

/// One kernel argument.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    /// The device pointer of buffer `k` of the plan.
    Buffer(usize),
    /// A scalar passed by value: its little-endian bytes (index and i64: 8, f32 and i32: 4, ...).
    Scalar(Vec<u8>),
}

/// One kernel launch.
#[derive(Clone, Debug, PartialEq)]
pub struct Launch {
    /// Index into [`CudaProgram::kernels`].
    pub kernel: usize,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub args: Vec<Arg>,
}

/// A matrix product through cuBLAS (`gemm_strided_batched`): `c[i] += a[i] @ b[i]` for each
/// of `batch` row-major `m x k` and `k x n` matrices of buffers `a`, `b` into `m x n` `c`
/// (`linalg.matmul`/`batch_matmul` semantics: C accumulates, after its fill kernel).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gemm {
    pub a: usize,
    pub b: usize,
    pub c: usize,
    pub batch: usize,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    /// f64 (else f32).
    pub f64: bool,
}

/// One step of a call, in program order on one stream.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    Launch(Launch),
    Gemm(Gemm),
}

/// What the host does per call.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HostPlan {
    /// Every buffer the steps use; the first `params` are the entry's arguments.
    pub buffers: Vec<HostBuffer>,
    /// Arguments of the entry function (inputs + outputs).
    pub params: usize,
    /// Kernel launches and cuBLAS products in program order.
    pub steps: Vec<Step>,
}

impl HostPlan {
    /// The kernel launches, in order.
    pub fn launches(&self) -> impl Iterator<Item = &Launch> {
        self.steps.iter().filter_map(|s| if let Step::Launch(l) = s { Some(l) } else { None })
    }

    /// The cuBLAS products, in order.
    pub fn gemms(&self) -> impl Iterator<Item = &Gemm> {
        self.steps.iter().filter_map(|s| if let Step::Gemm(g) = s { Some(g) } else { None })
    }
}

/// One outlined kernel: its `gpu.module`, its function and its PTX.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kernel {
    pub module: String,
    pub func: String,
    pub ptx: String,
}

/// A compiled program: the kernels and the host plan of the entry function.
#[derive(Clone, Debug, PartialEq)]
pub struct CudaProgram {
    pub kernels: Vec<Kernel>,
    pub plan: HostPlan,
    /// The GPU architecture of the PTX.
    pub arch: String,
}


fn run_stage(ctx: &Context, module: &mut MlirModule, pipeline: &str, stage: &'static str) -> Result<(), LowerError> {
    with_diagnostics(ctx, || {
        let pm = PassManager::new(ctx);
        parse_pass_pipeline(pm.as_operation_pass_manager(), pipeline).ok()?;
        pm.run(module).ok()
    })
    .map_err(|message| LowerError::Pipeline { target: "cuda", stage, message })
}

fn parse<'c>(ctx: &'c Context, text: &str, stage: &'static str) -> Result<MlirModule<'c>, LowerError> {
    with_diagnostics(ctx, || MlirModule::parse(ctx, text)).map_err(|message| LowerError::Pipeline { target: "cuda", stage, message })
}

/// `memref.copy %a, %b : T to U` lines as `linalg.copy ins(%a : T) outs(%b : U)` (0-d
/// copies through unit views, since a 0-d copy has no loop to map to threads; self-copies
/// dropped).
fn copies_to_linalg(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut fresh = 0;
    for line in text.lines() {
        let t = line.trim_start();
        let indent = &line[..line.len() - t.len()];
        let parsed = t.strip_prefix("memref.copy ").and_then(|rest| {
            let (vals, tys) = rest.split_once(" : ")?;
            let (a, b) = vals.split_once(", ")?;
            let (ta, tb) = tys.split_once(" to ")?;
            Some((a, b, ta, tb))
        });
        match parsed {
            None => out.push_str(line),
            Some((a, b, _, _)) if a == b => continue,
            Some((a, b, ta, tb)) => match (unit_type(ta), unit_type(tb)) {
                (Some(ua), Some(ub)) => {
                    fresh += 1;
                    let (va, vb) = (format!("%__qb_copy{fresh}_src"), format!("%__qb_copy{fresh}_dst"));
                    out.push_str(&format!("{indent}{va} = memref.expand_shape {a} [] output_shape [1] : {ta} into {ua}\n"));
                    out.push_str(&format!("{indent}{vb} = memref.expand_shape {b} [] output_shape [1] : {tb} into {ub}\n"));
                    out.push_str(&format!("{indent}linalg.copy ins({va} : {ua}) outs({vb} : {ub})"));
                }
                _ => out.push_str(&format!("{indent}linalg.copy ins({a} : {ta}) outs({b} : {tb})")),
            },
        }
        out.push('\n');
    }
    out
}

/// The mapping `gpu-map-parallel-loops` gives a 2-D loop nest (its first dim to x, the second
/// to y, for blocks and threads) with x and y swapped, so that consecutive threads of a warp
/// walk the second, contiguous dim of row-major buffers (coalesced loads and stores).
/// Semantics-preserving: only which hardware id enumerates which loop changes.
pub fn coalesce(text: &str) -> String {
    let m = "map = (d0) -> (d0), bound = (d0) -> (d0)>";
    let mut out = text.to_string();
    for (x, y) in [("block_x", "block_y"), ("thread_x", "thread_y")] {
        let from = format!("mapping = [#gpu.loop_dim_map<processor = {x}, {m}, #gpu.loop_dim_map<processor = {y}, {m}]");
        let to = format!("mapping = [#gpu.loop_dim_map<processor = {y}, {m}, #gpu.loop_dim_map<processor = {x}, {m}]");
        out = out.replace(&from, &to);
    }
    out
}

/// Prefix of the functions standing for cuBLAS products between stage one's passes.
const GEMM: &str = "__quabla_cublas_gemm_";

/// `linalg.matmul` / `linalg.batch_matmul` lines on contiguous f32/f64 memrefs as calls of
/// `@__quabla_cublas_gemm_<n>` (declared after the `module` line), which the host plan reads
/// as [`Gemm`] steps; other products stay loops (kernels).
fn matmuls_to_calls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut decls: Vec<String> = Vec::new();
    for line in text.lines() {
        let t = line.trim_start();
        let indent = &line[..line.len() - t.len()];
        let parsed = ["linalg.matmul ins(", "linalg.batch_matmul ins("].iter().find_map(|p| t.strip_prefix(p)).and_then(|rest| {
            let (ins, rest) = rest.split_once(") outs(")?;
            let outs = rest.strip_suffix(')')?;
            let (vals, tys) = ins.split_once(" : ")?;
            let (a, b) = vals.split_once(", ")?;
            let (ta, tb) = tys.split_once(", ")?;
            let (c, tc) = outs.split_once(" : ")?;
            let plain = |ty: &str| ty.starts_with("memref<") && !ty.contains(',') && (ty.ends_with("xf32>") || ty.ends_with("xf64>"));
            let same = ta.rsplit('x').next() == tb.rsplit('x').next() && tb.rsplit('x').next() == tc.rsplit('x').next();
            (plain(ta) && plain(tb) && plain(tc) && same).then(|| (a.to_string(), b.to_string(), c.to_string(), ta.to_string(), tb.to_string(), tc.to_string()))
        });
        match parsed {
            Some((a, b, c, ta, tb, tc)) => {
                let name = format!("{GEMM}{}", decls.len());
                decls.push(format!("  func.func private @{name}({ta}, {tb}, {tc})"));
                out.push_str(&format!("{indent}func.call @{name}({a}, {b}, {c}) : ({ta}, {tb}, {tc}) -> ()"));
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    if decls.is_empty() {
        return out;
    }
    let at = out.find("\nmodule").map(|i| i + 1).or_else(|| out.starts_with("module").then_some(0));
    match at.and_then(|i| out[i..].find('\n').map(|j| i + j + 1)) {
        Some(pos) => {
            out.insert_str(pos, &(decls.join("\n") + "\n"));
            out
        }
        None => text.to_string(),
    }
}

/// For a 0-d identity-layout memref type `memref<E>`, the unit type `memref<1xE>`.
fn unit_type(t: &str) -> Option<String> {
    let e = t.strip_prefix("memref<")?.strip_suffix('>')?;
    let scalar = e == "index" || e == "f32" || e == "f64" || (e.starts_with('i') && e[1..].chars().all(|c| c.is_ascii_digit()));
    scalar.then(|| format!("memref<1x{e}>"))
}

/// Compiles `m`'s public function `entry` for CUDA in `ctx` (a context with every dialect,
/// pass and LLVM translation registered: `quabla_dialect::mlir::new_context`).
pub fn compile(ctx: &Context, m: &Module, entry: &str, opts: &CudaOptions) -> Result<CudaProgram, LowerError> {
    let tk = Toolkit::locate()?;
    compile_with(ctx, m, entry, &tk, opts)
}

/// [`compile`] with a given toolkit.
pub fn compile_with(ctx: &Context, m: &Module, entry: &str, tk: &Toolkit, opts: &CudaOptions) -> Result<CudaProgram, LowerError> {
    let cm = lower_for_cuda(m, tk, opts)?;
    // QUABLA_DUMP_IR=dir: every stage as a file (valid mlir-opt-22 input).
    let dump = |name: &str, text: &str| {
        if let Some(dir) = std::env::var_os("QUABLA_DUMP_IR") {
            let _ = std::fs::create_dir_all(&dir);
            let _ = std::fs::write(std::path::Path::new(&dir).join(name), text);
        }
    };
    dump("cuda-linalg.mlir", &cm.text);
    let mut module = parse(ctx, &cm.text, "parse")?;
    run_stage(ctx, &mut module, &cm.bufferize, "bufferize")?;
    let mut text = copies_to_linalg(&module.as_operation().to_string());
    if opts.cublas {
        text = matmuls_to_calls(&text);
    }
    dump("cuda-bufferized.mlir", &text);
    let mut module = parse(ctx, &text, "copies")?;
    run_stage(ctx, &mut module, &cm.to_loops, "to-loops")?;
    let text = coalesce(&module.as_operation().to_string());
    let mut module = parse(ctx, &text, "coalesce")?;
    run_stage(ctx, &mut module, &cm.to_gpu, "to-gpu")?;
    dump("cuda-gpu.mlir", &module.as_operation().to_string());
    let (plan, modules) = host_plan(&module, entry)?;
    run_stage(ctx, &mut module, &cm.to_ptx, "to-ptx")?;
    let ptx = binaries(&module);
    let kernels = modules
        .into_iter()
        .map(|(module, func)| match ptx.get(&module) {
            Some(p) => Ok(Kernel { module, func, ptx: p.clone() }),
            None => Err(LowerError::Pipeline { target: "cuda", stage: "to-ptx", message: format!("no gpu.binary for @{module}") }),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(CudaProgram { kernels, plan, arch: opts.arch.clone() })
}

// ---- reading MLIR through the C API ----

fn sref(s: sys::MlirStringRef) -> String {
    if s.data.is_null() {
        return String::new();
    }
    // SAFETY: the string ref points at `length` bytes owned by MLIR for the call's duration.
    let b = unsafe { std::slice::from_raw_parts(s.data as *const u8, s.length) };
    String::from_utf8_lossy(b).into_owned()
}

fn op_name(op: sys::MlirOperation) -> String {
    unsafe { sref(sys::mlirIdentifierStr(sys::mlirOperationGetName(op))) }
}

fn attr(op: sys::MlirOperation, name: &str) -> Option<sys::MlirAttribute> {
    let a = unsafe { sys::mlirOperationGetAttributeByName(op, sys::MlirStringRef { data: name.as_ptr() as *const _, length: name.len() }) };
    (!a.ptr.is_null()).then_some(a)
}

fn print_to_string(f: impl FnOnce(sys::MlirStringCallback, *mut std::ffi::c_void)) -> String {
    unsafe extern "C" fn cb(s: sys::MlirStringRef, data: *mut std::ffi::c_void) {
        let out = unsafe { &mut *(data as *mut String) };
        out.push_str(&sref(s));
    }
    let mut s = String::new();
    f(Some(cb), &mut s as *mut String as *mut _);
    s
}

fn loc_of(op: sys::MlirOperation) -> String {
    print_to_string(|cb, d| unsafe { sys::mlirLocationPrint(sys::mlirOperationGetLocation(op), cb, d) })
}

fn ops_of_block(block: sys::MlirBlock) -> Vec<sys::MlirOperation> {
    let mut v = Vec::new();
    let mut op = unsafe { sys::mlirBlockGetFirstOperation(block) };
    while !op.ptr.is_null() {
        v.push(op);
        op = unsafe { sys::mlirOperationGetNextInBlock(op) };
    }
    v
}

fn top_ops(module: &MlirModule) -> Vec<sys::MlirOperation> {
    ops_of_block(unsafe { sys::mlirModuleGetBody(module.to_raw()) })
}

fn sym_name(op: sys::MlirOperation) -> Option<String> {
    attr(op, "sym_name").map(|a| unsafe { sref(sys::mlirStringAttrGetValue(a)) })
}

/// Static byte size of a memref type (None for dynamic shapes).
fn memref_bytes(t: sys::MlirType) -> Option<usize> {
    unsafe {
        if !sys::mlirTypeIsAMemRef(t) || !sys::mlirShapedTypeHasStaticShape(t) {
            return None;
        }
        let dims: Vec<i64> = (0..sys::mlirShapedTypeGetRank(t)).map(|i| sys::mlirShapedTypeGetDimSize(t, i as isize)).collect();
        quabla_dialect::size::byte_len(&dims, elem_bytes(sys::mlirShapedTypeGetElementType(t))?).ok()
    }
}

/// Bytes of a scalar element type as buffers store it (i1 one byte).
fn elem_bytes(t: sys::MlirType) -> Option<usize> {
    unsafe {
        if sys::mlirTypeIsAIndex(t) {
            Some(8)
        } else if sys::mlirTypeIsAInteger(t) {
            Some((sys::mlirIntegerTypeGetWidth(t) as usize).div_ceil(8))
        } else if sys::mlirTypeIsAF32(t) {
            Some(4)
        } else if sys::mlirTypeIsAF64(t) {
            Some(8)
        } else {
            None
        }
    }
}

/// The bytes of a dense (or splat) elements attribute of `count` elements of `elem`.
fn dense_bytes(a: sys::MlirAttribute, elem: sys::MlirType, count: usize) -> Option<Vec<u8>> {
    unsafe {
        if !sys::mlirAttributeIsADenseElements(a) {
            return None;
        }
        let size = elem_bytes(elem)?;
        if sys::mlirTypeIsAInteger(elem) && sys::mlirIntegerTypeGetWidth(elem) == 1 {
            return Some((0..count).map(|i| sys::mlirDenseElementsAttrGetBoolValue(a, if sys::mlirDenseElementsAttrIsSplat(a) { 0 } else { i as isize }) as u8).collect());
        }
        let raw = sys::mlirDenseElementsAttrGetRawData(a) as *const u8;
        if sys::mlirDenseElementsAttrIsSplat(a) {
            let one = std::slice::from_raw_parts(raw, size);
            Some(one.repeat(count))
        } else {
            Some(std::slice::from_raw_parts(raw, size * count).to_vec())
        }
    }
}

/// The value of a host scalar (`arith.constant` of index, integer or float type) as bytes.
fn constant_bytes(op: sys::MlirOperation) -> Option<Vec<u8>> {
    let a = attr(op, "value")?;
    unsafe {
        let t = sys::mlirAttributeGetType(a);
        if sys::mlirAttributeIsAInteger(a) {
            let v = sys::mlirIntegerAttrGetValueInt(a);
            let n = elem_bytes(t)?;
            return Some(v.to_le_bytes()[..n].to_vec());
        }
        if sys::mlirAttributeIsAFloat(a) {
            let v = sys::mlirFloatAttrGetValueDouble(a);
            return if sys::mlirTypeIsAF32(t) { Some((v as f32).to_le_bytes().to_vec()) } else if sys::mlirTypeIsAF64(t) { Some(v.to_le_bytes().to_vec()) } else { None };
        }
        if sys::mlirAttributeIsABool(a) {
            return Some(vec![sys::mlirBoolAttrGetValue(a) as u8]);
        }
    }
    None
}

fn int_value(bytes: &[u8]) -> i64 {
    let mut b = [0u8; 8];
    b[..bytes.len().min(8)].copy_from_slice(&bytes[..bytes.len().min(8)]);
    i64::from_le_bytes(b)
}

/// A host value: a scalar (its bytes) or a buffer.
#[derive(Clone)]
enum Host {
    Scalar(Vec<u8>),
    Buffer(usize),
}

/// The host plan of `entry` and the (gpu.module, kernel) pairs its launches name, in order
/// of first launch.
fn host_plan(module: &MlirModule, entry: &str) -> Result<(HostPlan, Vec<(String, String)>), LowerError> {
    let tops = top_ops(module);
    let globals: HashMap<String, sys::MlirOperation> = tops.iter().filter(|o| op_name(**o) == "memref.global").filter_map(|o| Some((sym_name(*o)?, *o))).collect();
    let func = tops
        .iter()
        .copied()
        .find(|o| op_name(*o) == "func.func" && sym_name(*o).as_deref() == Some(entry))
        .ok_or_else(|| LowerError::Pipeline { target: "cuda", stage: "host plan", message: format!("no function @{entry} after lowering") })?;
    let region = unsafe { sys::mlirOperationGetRegion(func, 0) };
    let block = unsafe { sys::mlirRegionGetFirstBlock(region) };
    let mut plan = HostPlan::default();
    let mut vals: HashMap<usize, Host> = HashMap::new();
    let nargs = unsafe { sys::mlirBlockGetNumArguments(block) } as usize;
    for k in 0..nargs {
        let v = unsafe { sys::mlirBlockGetArgument(block, k as isize) };
        plan.buffers.push(HostBuffer::Param(k));
        vals.insert(v.ptr as usize, Host::Buffer(k));
    }
    plan.params = nargs;
    let mut kernels: Vec<(String, String)> = Vec::new();
    let mut consts: HashMap<String, usize> = HashMap::new();
    let host_code = |op: sys::MlirOperation| LowerError::HostCode { op: op_name(op), loc: loc_of(op), device: "cuda" };
    for op in ops_of_block(block) {
        let name = op_name(op);
        let result = |i: isize| unsafe { sys::mlirOperationGetResult(op, i) }.ptr as usize;
        let operand = |i: isize| unsafe { sys::mlirOperationGetOperand(op, i) }.ptr as usize;
        match name.as_str() {
            "arith.constant" => {
                let b = constant_bytes(op).ok_or_else(|| host_code(op))?;
                vals.insert(result(0), Host::Scalar(b));
            }
            "memref.alloc" | "memref.alloca" => {
                let t = unsafe { sys::mlirValueGetType(sys::mlirOperationGetResult(op, 0)) };
                let bytes = memref_bytes(t).ok_or_else(|| host_code(op))?;
                plan.buffers.push(HostBuffer::Temp { bytes });
                vals.insert(result(0), Host::Buffer(plan.buffers.len() - 1));
            }
            "memref.get_global" => {
                let g = attr(op, "name").map(flat_symbol).unwrap_or_default();
                let k = match consts.get(&g) {
                    Some(k) => *k,
                    None => {
                        let gop = *globals.get(&g).ok_or_else(|| host_code(op))?;
                        let t = unsafe { sys::mlirValueGetType(sys::mlirOperationGetResult(op, 0)) };
                        let bytes = memref_bytes(t).ok_or_else(|| host_code(op))?;
                        let elem = unsafe { sys::mlirShapedTypeGetElementType(t) };
                        let count = bytes / elem_bytes(elem).unwrap_or(1).max(1);
                        let init = attr(gop, "initial_value").and_then(|a| dense_bytes(a, elem, count)).ok_or_else(|| host_code(op))?;
                        plan.buffers.push(HostBuffer::Const { name: g.clone(), bytes: init });
                        consts.insert(g, plan.buffers.len() - 1);
                        plan.buffers.len() - 1
                    }
                };
                vals.insert(result(0), Host::Buffer(k));
            }
            "memref.dealloc" => {}
            "memref.collapse_shape" | "memref.expand_shape" | "memref.subview" | "memref.cast" | "memref.reinterpret_cast" => {
                // Views: same base pointer (static offsets and strides live in the kernel's types).
                let n = unsafe { sys::mlirOperationGetNumOperands(op) };
                let static_only = (1..n).all(|i| matches!(vals.get(&operand(i)), Some(Host::Scalar(_))));
                match vals.get(&operand(0)) {
                    Some(Host::Buffer(k)) if static_only || name != "memref.reinterpret_cast" => {
                        let k = *k;
                        vals.insert(result(0), Host::Buffer(k));
                    }
                    _ => return Err(host_code(op)),
                }
            }
            "gpu.launch_func" => {
                let seg = attr(op, "operandSegmentSizes").ok_or_else(|| host_code(op))?;
                let n = unsafe { sys::mlirDenseArrayGetNumElements(seg) } as usize;
                let sizes: Vec<usize> = (0..n).map(|i| unsafe { sys::mlirDenseI32ArrayGetElement(seg, i as isize) } as usize).collect();
                // [async deps, grid x y z, block x y z, cluster x y z, dynamic shared memory, kernel operands, async object]
                if sizes.len() != 13 || sizes[0] != 0 || sizes[7..11].iter().any(|&s| s != 0) {
                    return Err(host_code(op));
                }
                let dim = |i: usize| -> Result<u32, LowerError> {
                    match vals.get(&operand(i as isize)) {
                        Some(Host::Scalar(b)) => u32::try_from(int_value(b)).map_err(|_| host_code(op)),
                        _ => Err(host_code(op)),
                    }
                };
                let grid = [dim(0)?, dim(1)?, dim(2)?];
                let block = [dim(3)?, dim(4)?, dim(5)?];
                let mut args = Vec::new();
                for i in 6..6 + sizes[11] {
                    args.push(match vals.get(&operand(i as isize)) {
                        Some(Host::Buffer(k)) => Arg::Buffer(*k),
                        Some(Host::Scalar(b)) => Arg::Scalar(b.clone()),
                        None => return Err(host_code(op)),
                    });
                }
                let sym = attr(op, "kernel").ok_or_else(|| host_code(op))?;
                let (module, func) = unsafe {
                    let root = sref(sys::mlirSymbolRefAttrGetRootReference(sym));
                    let nested = if sys::mlirSymbolRefAttrGetNumNestedReferences(sym) > 0 { flat_symbol(sys::mlirSymbolRefAttrGetNestedReference(sym, 0)) } else { String::new() };
                    (root, nested)
                };
                let key = (module, func);
                let kernel = match kernels.iter().position(|k| *k == key) {
                    Some(i) => i,
                    None => {
                        kernels.push(key);
                        kernels.len() - 1
                    }
                };
                plan.steps.push(Step::Launch(Launch { kernel, grid, block, args }));
            }
            "func.call" if attr(op, "callee").map(flat_symbol).is_some_and(|c| c.starts_with(GEMM)) => {
                let ty = |i: isize| unsafe { sys::mlirValueGetType(sys::mlirOperationGetOperand(op, i)) };
                let shape = |i: isize| -> Vec<usize> { unsafe { (0..sys::mlirShapedTypeGetRank(ty(i))).map(|d| sys::mlirShapedTypeGetDimSize(ty(i), d as isize) as usize).collect() } };
                let buf = |i: isize| match vals.get(&operand(i)) {
                    Some(Host::Buffer(k)) => Ok(*k),
                    _ => Err(host_code(op)),
                };
                let (sa, sb) = (shape(0), shape(1));
                let (batch, m, k, n) = match (sa.as_slice(), sb.as_slice()) {
                    ([m, k], [_, n]) => (1, *m, *k, *n),
                    ([bt, m, k], [_, _, n]) => (*bt, *m, *k, *n),
                    _ => return Err(host_code(op)),
                };
                let f64 = unsafe { sys::mlirTypeIsAF64(sys::mlirShapedTypeGetElementType(ty(0))) };
                plan.steps.push(Step::Gemm(Gemm { a: buf(0)?, b: buf(1)?, c: buf(2)?, batch, m, n, k, f64 }));
            }
            "func.return" => {}
            _ => return Err(host_code(op)),
        }
    }
    Ok((plan, kernels))
}

fn flat_symbol(a: sys::MlirAttribute) -> String {
    unsafe { sref(sys::mlirFlatSymbolRefAttrGetValue(a)) }
}

/// `gpu.binary` name -> PTX text (the first object of each).
fn binaries(module: &MlirModule) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for op in top_ops(module) {
        if op_name(op) != "gpu.binary" {
            continue;
        }
        let (Some(name), Some(objs)) = (sym_name(op), attr(op, "objects")) else { continue };
        unsafe {
            if sys::mlirAttributeIsAArray(objs) && sys::mlirArrayAttrGetNumElements(objs) > 0 {
                let o = sys::mlirArrayAttrGetElement(objs, 0);
                out.insert(name, sref(sys::mlirGPUObjectAttrGetObject(o)));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contiguous_matmuls_become_gemm_calls() {
        let t = "module {\n  func.func @f() {\n    linalg.matmul ins(%a, %b : memref<4x3xf32>, memref<3x2xf32>) outs(%c : memref<4x2xf32>)\n    linalg.matmul ins(%a, %b : memref<4x3xf32, strided<[6, 1]>>, memref<3x2xf32>) outs(%c : memref<4x2xf32>)\n  }\n}\n";
        let r = matmuls_to_calls(t);
        assert!(r.contains("func.func private @__quabla_cublas_gemm_0(memref<4x3xf32>, memref<3x2xf32>, memref<4x2xf32>)"), "{r}");
        assert!(r.contains("func.call @__quabla_cublas_gemm_0(%a, %b, %c) : (memref<4x3xf32>, memref<3x2xf32>, memref<4x2xf32>) -> ()"), "{r}");
        assert!(r.contains("linalg.matmul ins(%a, %b : memref<4x3xf32, strided<[6, 1]>>"), "a strided operand stays a kernel: {r}");
        assert!(!r.contains("__quabla_cublas_gemm_1"), "{r}");
    }

    #[test]
    fn two_dim_mappings_swap_x_and_y() {
        let m = "map = (d0) -> (d0), bound = (d0) -> (d0)>";
        let two = format!("}} {{mapping = [#gpu.loop_dim_map<processor = thread_x, {m}, #gpu.loop_dim_map<processor = thread_y, {m}]}}");
        let one = format!("}} {{mapping = [#gpu.loop_dim_map<processor = block_x, {m}]}}");
        assert_eq!(coalesce(&two), format!("}} {{mapping = [#gpu.loop_dim_map<processor = thread_y, {m}, #gpu.loop_dim_map<processor = thread_x, {m}]}}"));
        assert_eq!(coalesce(&one), one);
    }

    #[test]
    fn copies_become_linalg_copies() {
        let t = "  memref.copy %a, %b : memref<2xf32> to memref<2xf32, strided<[1], offset: 1>>\n  %x = arith.constant 0 : index\n";
        assert_eq!(copies_to_linalg(t), "  linalg.copy ins(%a : memref<2xf32>) outs(%b : memref<2xf32, strided<[1], offset: 1>>)\n  %x = arith.constant 0 : index\n");
        assert_eq!(copies_to_linalg("memref.copy %a, %a : memref<2xf32> to memref<2xf32>\n"), "");
        let z = copies_to_linalg("memref.copy %a, %b : memref<f32> to memref<f32>\n");
        assert!(z.contains("memref.expand_shape %a [] output_shape [1] : memref<f32> into memref<1xf32>") && z.contains("linalg.copy ins(%__qb_copy1_src : memref<1xf32>) outs(%__qb_copy1_dst : memref<1xf32>)"), "{z}");
    }
}

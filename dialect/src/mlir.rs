//! The bridge between MLIR and the in-memory IR: context creation (all upstream dialects,
//! passes and translations plus the IRDL-defined `quabla` dialect), import of a
//! `builtin.module` into [`Module`] with verification at each op's location, and
//! replacement of a module's body by new MLIR text (how passes write their result back).
use std::collections::{HashMap, HashSet};
use std::ffi::CString;
use std::sync::Arc;

use melior::dialect::DialectRegistry;
use melior::ir::attribute::AttributeLike;
use melior::ir::block::BlockLike;
use melior::ir::RegionLike;
use melior::ir::operation::OperationLike;
use melior::ir::{BlockRef, Module as MlirModule, OperationRef, RegionRef, ValueLike};
use melior::utility::{load_irdl_dialects, register_all_dialects, register_all_llvm_translations, register_all_passes};
use melior::Context;
use mlir_sys::MlirLocation;

use crate::ir::{Body, Func, Module, Op, Value};
use crate::ops::{ConstantOp, ControlOp, Literal, OpKind};
use crate::types::{DType, TensorType};

/// The IRDL definition of the dialect (generated from the op table; see `ops::irdl_text`).
pub const IRDL: &str = include_str!("../quabla.irdl.mlir");

/// A context with every upstream dialect, pass and LLVM translation registered and the
/// `quabla` dialect loaded.
pub fn new_context() -> Context {
    let registry = DialectRegistry::new();
    register_all_dialects(&registry);
    let context = Context::new();
    context.append_dialect_registry(&registry);
    context.load_all_available_dialects();
    register_all_llvm_translations(&context);
    register_all_passes();
    let irdl = MlirModule::parse(&context, IRDL).expect("the IRDL definition parses");
    assert!(load_irdl_dialects(&irdl), "the IRDL definition loads");
    context
}

/// An error found while importing, at an MLIR location.
#[derive(Debug, Clone)]
pub struct Diag {
    pub loc: Option<MlirLocation>,
    pub message: String,
}

impl Diag {
    fn new(loc: Option<MlirLocation>, message: impl Into<String>) -> Self {
        Diag { loc, message: message.into() }
    }

    /// Emits the error through the context's diagnostic handlers.
    pub fn emit(&self, context: &Context) {
        let loc = self.loc.unwrap_or_else(|| unsafe { mlir_sys::mlirLocationUnknownGet(context.to_raw()) });
        emit_error(loc, &self.message);
    }
}

/// Emits an error diagnostic at `loc`.
pub fn emit_error(loc: MlirLocation, message: &str) {
    let c = CString::new(message.replace('\0', " ")).unwrap();
    unsafe { mlir_sys::mlirEmitError(loc, c.as_ptr()) };
}

/// Location text without the `loc(...)` wrapper; `None` for unknown locations.
fn loc_text(op: &OperationRef) -> Option<Arc<str>> {
    let s = op.location().to_string();
    let inner = s.strip_prefix("loc(").and_then(|r| r.strip_suffix(')')).unwrap_or(&s);
    if inner == "unknown" {
        None
    } else {
        Some(Arc::from(inner))
    }
}

fn op_name(op: &OperationRef) -> String {
    op.name().as_string_ref().as_str().unwrap_or("?").to_string()
}

fn tensor_type(t: melior::ir::Type, loc: MlirLocation, what: &str) -> Result<TensorType, Diag> {
    TensorType::parse(&t.to_string()).map_err(|e| Diag::new(Some(loc), format!("{what}: {e}")))
}

/// Imports every `func.func` of `module` (a `builtin.module` op) and verifies each quabla op
/// against its shape rule. Any other op is an error at its location.
pub fn import_module(module: OperationRef) -> Result<Module, Diag> {
    let mut out = Module::default();
    let region = module.region(0).map_err(|_| Diag::new(None, "expected a builtin.module"))?;
    let Some(body) = region.first_block() else { return Ok(out) };
    let mut next = body.first_operation();
    while let Some(op) = next {
        next = op.next_in_block();
        let loc = op.location().to_raw();
        let name = op_name(&op);
        if name != "func.func" {
            return Err(Diag::new(Some(loc), format!("'{name}' op is not allowed at the top level of a quabla module (expected func.func)")));
        }
        out.funcs.push(import_func(&op)?);
    }
    resolve_custom(&mut out).map_err(|m| Diag::new(Some(module.location().to_raw()), m))?;
    let verified = out.verify();
    if let Err(e) = verified {
        // Call-graph errors (unknown callee, recursion, signature mismatch) are reported at the module.
        return Err(Diag::new(Some(module.location().to_raw()), e.to_string()));
    }
    Ok(out)
}

fn string_attr(op: &OperationRef, name: &str) -> Option<String> {
    op.attribute(name).ok().map(|a| a.to_string().trim_matches('"').to_string())
}

fn import_func(fop: &OperationRef) -> Result<Func, Diag> {
    let floc = fop.location().to_raw();
    let name = string_attr(fop, "sym_name").ok_or_else(|| Diag::new(Some(floc), "func.func without sym_name"))?;
    let public = string_attr(fop, "sym_visibility").is_none_or(|v| v != "private");
    let region = fop.region(0).map_err(|_| Diag::new(Some(floc), "func.func without a body"))?;
    let Some(block) = region.first_block() else { return import_declaration(fop, name, public) };
    if block.next_in_region().is_some() {
        return Err(Diag::new(Some(floc), format!("@{name}: functions with several blocks are not supported at the quabla level")));
    }
    let mut f = Func::new(name.clone(), &[]);
    f.public = public;
    f.loc = loc_text(fop);
    let mut scope = Scope::default();
    for i in 0..block.argument_count() {
        let a = block.argument(i).unwrap();
        let t = tensor_type(a.r#type(), floc, &format!("@{name} argument {i}"))?;
        let v = f.new_value(t);
        f.params.push(v);
        scope.ids.insert(a.to_raw().ptr as usize, v);
    }
    let (ops, outputs) = import_block(&mut f, block, &mut scope, &name, "func.return")?;
    let Some(outputs) = outputs else {
        return Err(Diag::new(Some(floc), format!("@{name} has no func.return")));
    };
    f.ops = ops;
    f.outputs = outputs;
    Ok(f)
}

/// The MLIR values visible while importing one block: tensors by their quabla value, and the
/// `i1`s extracted from 0-d predicates (`tensor.extract`) by the tensor they came from.
#[derive(Default)]
struct Scope {
    ids: HashMap<usize, Value>,
    preds: HashMap<usize, Value>,
    /// `index`es cast from extracted 0-d integers (`arith.index_cast`), by the tensor.
    indices: HashMap<usize, Value>,
}

fn ptr<'c>(v: impl ValueLike<'c>) -> usize {
    v.to_raw().ptr as usize
}

/// Imports the ops of `block` in order, up to its terminator (`func.return` at the top level,
/// `scf.yield` in a region), whose operands are returned as the block's outputs.
fn import_block(f: &mut Func, block: BlockRef, scope: &mut Scope, name: &str, terminator: &str) -> Result<(Vec<Op>, Option<Vec<Value>>), Diag> {
    let mut ops = Vec::new();
    let mut outputs = None;
    let mut next = block.first_operation();
    while let Some(op) = next {
        next = op.next_in_block();
        let loc = op.location().to_raw();
        let opname = op_name(&op);
        if opname == "tensor.extract" {
            // Only the i1 of a 0-d predicate, consumed by scf.if.
            let src = op.operand(0).map_err(|_| Diag::new(Some(loc), "'tensor.extract' op without an operand"))?;
            let v = scope.ids.get(&ptr(src)).copied().filter(|v| matches!(f.ty(*v).dtype, DType::I1 | DType::I32 | DType::I64) && f.ty(*v).rank() == 0 && op.operand_count() == 1);
            let Some(v) = v else {
                return Err(Diag::new(Some(loc), "'tensor.extract' op is allowed at the quabla level only to read the 0-d tensor<i1> predicate of an scf.if or scf.while condition, or the 0-d integer index of an scf.index_switch"));
            };
            let r = op.result(0).map_err(|_| Diag::new(Some(loc), "'tensor.extract' op without a result"))?;
            scope.preds.insert(ptr(r), v);
            continue;
        }
        if opname == "arith.index_cast" {
            // Only the index of an scf.index_switch, cast from an extracted 0-d integer.
            let src = op.operand(0).map_err(|_| Diag::new(Some(loc), "'arith.index_cast' op without an operand"))?;
            let v = scope.preds.get(&ptr(src)).copied().filter(|v| f.ty(*v).dtype != DType::I1);
            let Some(v) = v else {
                return Err(Diag::new(Some(loc), "'arith.index_cast' op is allowed at the quabla level only to cast the extracted 0-d integer index of an scf.index_switch"));
            };
            let r = op.result(0).map_err(|_| Diag::new(Some(loc), "'arith.index_cast' op without a result"))?;
            scope.indices.insert(ptr(r), v);
            continue;
        }
        if opname == "scf.index_switch" {
            let o = import_case(f, &op, scope, name)?;
            for (r, v) in op.results().zip(&o.results) {
                scope.ids.insert(ptr(r), *v);
            }
            ops.push(o);
            continue;
        }
        if opname == "scf.if" || opname == "scf.while" {
            let o = if opname == "scf.if" { import_if(f, &op, scope, name)? } else { import_while(f, &op, scope, name)? };
            for (r, v) in op.results().zip(&o.results) {
                scope.ids.insert(ptr(r), *v);
            }
            ops.push(o);
            continue;
        }
        if opname == "scf.condition" && terminator == "scf.condition" {
            // The cond region of a while: the predicate (a tensor.extract'ed 0-d tensor<i1>),
            // then the forwarded values (checked by import_while).
            let mut vals = op.operands();
            let c = vals.next().ok_or_else(|| Diag::new(Some(loc), "'scf.condition' op without a condition"))?;
            let p = scope.preds.get(&ptr(c)).copied().ok_or_else(|| Diag::new(Some(loc), "'scf.condition' op: the condition must be a tensor.extract of a 0-d tensor<i1>"))?;
            let mut out = vec![p];
            for (k, v) in vals.enumerate() {
                out.push(*scope.ids.get(&ptr(v)).ok_or_else(|| Diag::new(Some(loc), format!("'scf.condition' op operand {} is not defined in @{name}", k + 1)))?);
            }
            outputs = Some(out);
            continue;
        }
        let mut operands = Vec::new();
        for (k, v) in op.operands().enumerate() {
            let id = scope.ids.get(&ptr(v)).ok_or_else(|| Diag::new(Some(loc), format!("'{opname}' op operand {k} is not defined in @{name}")))?;
            operands.push(*id);
        }
        if opname == terminator {
            outputs = Some(operands);
            continue;
        }
        let short = if opname == "func.call" { Some("call") } else { opname.strip_prefix("quabla.") };
        let Some(short) = short else {
            return Err(Diag::new(Some(loc), format!("'{opname}' op is not a quabla op: quabla passes run on quabla-level IR (func.func, quabla.*, func.call, func.return, scf.if on a 0-d predicate)")));
        };
        if op.region_count() > 0 {
            return Err(Diag::new(Some(loc), format!("'{opname}' op must not have regions")));
        }
        let mut results = Vec::new();
        for (k, r) in op.results().enumerate() {
            results.push(tensor_type(r.r#type(), loc, &format!("'{opname}' op result {k}"))?);
        }
        let attrs: Vec<(String, String)> = op
            .attributes()
            .map(|(id, a)| (id.as_string_ref().as_str().unwrap_or("").to_string(), a.to_string()))
            // The rule names of a custom-derivative call (resolved by `resolve_custom`).
            .filter(|(k, _)| !(opname == "func.call" && k.starts_with("quabla.custom_")))
            .collect();
        let kind = if short == "constant" {
            import_constant(&op, &attrs, &results).map_err(|m| Diag::new(Some(loc), format!("'{opname}' op {m}")))?
        } else {
            OpKind::from_parts(short, &attrs, &results).map_err(|e| Diag::new(Some(loc), e.to_string()))?
        };
        let tys: Vec<&TensorType> = operands.iter().map(|v| f.ty(*v)).collect();
        let want = kind.infer(&tys).map_err(|e| Diag::new(Some(loc), e.to_string()))?;
        if want != results {
            let w: Vec<String> = want.iter().map(|t| t.to_string()).collect();
            let g: Vec<String> = results.iter().map(|t| t.to_string()).collect();
            return Err(Diag::new(Some(loc), format!("'{opname}' op result type ({}) differs from the inferred type ({})", g.join(", "), w.join(", "))));
        }
        let rv: Vec<Value> = results.into_iter().map(|t| f.new_value(t)).collect();
        for (r, v) in op.results().zip(&rv) {
            scope.ids.insert(ptr(r), *v);
        }
        ops.push(Op::new(kind, operands, rv, loc_text(&op)));
    }
    Ok((ops, outputs))
}

/// Collects, in order of first use, the values the ops of `region` (nested regions included)
/// use without defining them.
fn free_values(region: RegionRef, defined: &mut HashSet<usize>, free: &mut Vec<usize>) {
    let mut block = region.first_block();
    while let Some(b) = block {
        for i in 0..b.argument_count() {
            defined.insert(ptr(b.argument(i).unwrap()));
        }
        let mut next = b.first_operation();
        while let Some(op) = next {
            next = op.next_in_block();
            for v in op.operands() {
                let p = ptr(v);
                if !defined.contains(&p) && !free.contains(&p) {
                    free.push(p);
                }
            }
            for i in 0..op.region_count() {
                if let Ok(r) = op.region(i) {
                    free_values(r, defined, free);
                }
            }
            for r in op.results() {
                defined.insert(ptr(r));
            }
        }
        block = b.next_in_region();
    }
}

/// The values the regions of `op` use without defining them, in order of first use.
fn region_free_values(op: &OperationRef) -> Result<Vec<usize>, Diag> {
    let (mut free, mut defined) = (Vec::new(), HashSet::new());
    for i in 0..op.region_count() {
        free_values(op.region(i).map_err(|e| Diag::new(Some(op.location().to_raw()), e.to_string()))?, &mut defined, &mut free);
    }
    Ok(free)
}

/// `scf.while (%a = %x, ...) {... scf.condition(%c) %a, ...} do {^bb0(%b...): ... scf.yield ...}`
/// becomes `quabla.while`: the before region (ending in a condition that forwards its
/// arguments unchanged) is the cond body, the after region the loop body. Values the regions use
/// from outside become extra carries, passed through by the body (the op's results then have
/// them after the scf.while's own results).
fn import_while(f: &mut Func, op: &OperationRef, scope: &Scope, name: &str) -> Result<Op, Diag> {
    let loc = op.location().to_raw();
    let free = region_free_values(op)?;
    let mut captures: Vec<(usize, Value)> = Vec::new();
    for p in &free {
        let v = scope.ids.get(p).copied().ok_or_else(|| Diag::new(Some(loc), format!("'scf.while' op: a region uses a value not defined in @{name} (or an i1 condition from outside the loop)")))?;
        captures.push((*p, v));
    }
    let mut carries = Vec::new();
    for (k, v) in op.operands().enumerate() {
        carries.push(*scope.ids.get(&ptr(v)).ok_or_else(|| Diag::new(Some(loc), format!("'scf.while' op operand {k} is not defined in @{name}")))?);
    }
    let n = carries.len();
    let mut operands = carries;
    operands.extend(captures.iter().map(|(_, v)| *v));
    let tys: Vec<TensorType> = operands.iter().map(|v| f.ty(*v).clone()).collect();
    let mut regions = Vec::new();
    for (i, term) in [(0, "scf.condition"), (1, "scf.yield")] {
        let block = op.region(i).ok().and_then(|r| r.first_block()).ok_or_else(|| Diag::new(Some(loc), "'scf.while' op needs both regions"))?;
        if block.next_in_region().is_some() || block.argument_count() != n {
            return Err(Diag::new(Some(loc), format!("'scf.while' op: each region must be one block taking the {n} carries")));
        }
        let mut body = f.new_body(&tys);
        let mut inner = Scope::default();
        for k in 0..n {
            inner.ids.insert(ptr(block.argument(k).unwrap()), body.params[k]);
        }
        for (j, (p, _)) in captures.iter().enumerate() {
            inner.ids.insert(*p, body.params[n + j]);
        }
        let (ops, outs) = import_block(f, block, &mut inner, name, term)?;
        let outs = outs.ok_or_else(|| Diag::new(Some(loc), format!("'scf.while' op: region {i} has no {term}")))?;
        body.ops = ops;
        if i == 0 {
            if outs[1..] != body.params[..n] {
                return Err(Diag::new(Some(loc), "'scf.while' op: scf.condition must forward the before region's arguments unchanged (quabla.while has no separate before/after values)"));
            }
            body.outputs = vec![outs[0]];
        } else {
            let mut o = outs;
            o.extend(&body.params[n..]);
            body.outputs = o;
        }
        regions.push(body);
    }
    let kind = OpKind::Control(ControlOp::While {});
    let xs: Vec<&TensorType> = operands.iter().map(|v| f.ty(*v)).collect();
    let want = kind.infer(&xs).map_err(|e| Diag::new(Some(loc), e.to_string()))?;
    kind.check_regions(&xs, &want, &regions, &f.types).map_err(|e| Diag::new(Some(loc), e.to_string()))?;
    let rv: Vec<Value> = want.into_iter().map(|t| f.new_value(t)).collect();
    Ok(Op { kind, operands, results: rv, regions, loc: loc_text(op) })
}

/// `scf.if %c -> (...) {...} else {...}` with `%c` extracted from a 0-d predicate becomes
/// `quabla.if`: the values its regions use from outside become explicit captured operands,
/// bound to fresh parameters of each body (bodies are isolated from above).
fn import_if(f: &mut Func, op: &OperationRef, scope: &Scope, name: &str) -> Result<Op, Diag> {
    let loc = op.location().to_raw();
    let cond = op.operand(0).map_err(|_| Diag::new(Some(loc), "'scf.if' op without a condition"))?;
    let pred = scope.preds.get(&ptr(cond)).copied().ok_or_else(|| Diag::new(Some(loc), "'scf.if' op: the condition must be a tensor.extract of a 0-d tensor<i1> (the quabla.if predicate)"))?;
    let free = region_free_values(op)?;
    // A captured i1 condition of a nested scf.if is captured as its tensor.
    let mut captures: Vec<Value> = Vec::new();
    for p in &free {
        let v = scope.ids.get(p).or_else(|| scope.preds.get(p)).copied().ok_or_else(|| Diag::new(Some(loc), format!("'scf.if' op: a region uses a value not defined in @{name}")))?;
        if !captures.contains(&v) {
            captures.push(v);
        }
    }
    let mut results = Vec::new();
    for (k, r) in op.results().enumerate() {
        results.push(tensor_type(r.r#type(), loc, &format!("'scf.if' op result {k}"))?);
    }
    let mut regions = Vec::new();
    for i in 0..2 {
        let cap_tys: Vec<TensorType> = captures.iter().map(|v| f.ty(*v).clone()).collect();
        let mut body = f.new_body(&cap_tys);
        let mut inner = Scope::default();
        for p in &free {
            let outer = scope.ids.get(p).copied().map(|v| (v, false)).or_else(|| scope.preds.get(p).map(|v| (*v, true)));
            if let Some((v, is_pred)) = outer {
                let k = captures.iter().position(|c| *c == v).unwrap();
                if is_pred {
                    inner.preds.insert(*p, body.params[k]);
                } else {
                    inner.ids.insert(*p, body.params[k]);
                }
            }
        }
        let block = op.region(i).ok().and_then(|r| r.first_block());
        match block {
            Some(b) => {
                if b.next_in_region().is_some() {
                    return Err(Diag::new(Some(loc), "'scf.if' op: regions with several blocks are not supported at the quabla level"));
                }
                let (ops, outs) = import_block(f, b, &mut inner, name, "scf.yield")?;
                body.ops = ops;
                body.outputs = outs.ok_or_else(|| Diag::new(Some(loc), "'scf.if' op: a region has no scf.yield"))?;
            }
            None if results.is_empty() => {}
            None => return Err(Diag::new(Some(loc), "'scf.if' op with results needs an else region")),
        }
        regions.push(body);
    }
    let kind = OpKind::Control(ControlOp::If { results: results.clone() });
    let mut operands = vec![pred];
    operands.extend(&captures);
    let tys: Vec<&TensorType> = operands.iter().map(|v| f.ty(*v)).collect();
    let want = kind.infer(&tys).map_err(|e| Diag::new(Some(loc), e.to_string()))?;
    kind.check_regions(&tys, &want, &regions, &f.types).map_err(|e| Diag::new(Some(loc), e.to_string()))?;
    let rv: Vec<Value> = want.into_iter().map(|t| f.new_value(t)).collect();
    Ok(Op { kind, operands, results: rv, regions, loc: loc_text(op) })
}

/// `scf.index_switch %ix -> (...) case 0 {...} ... case N-2 {...} default {...}` with `%ix`
/// cast from an extracted 0-d integer becomes `quabla.case` with N branches (the cases in
/// order, then the default: StableHLO's out-of-range-selects-the-last semantics). The values
/// its regions use from outside become captured operands, as for `scf.if`.
fn import_case(f: &mut Func, op: &OperationRef, scope: &Scope, name: &str) -> Result<Op, Diag> {
    let loc = op.location().to_raw();
    let ix = op.operand(0).map_err(|_| Diag::new(Some(loc), "'scf.index_switch' op without an index"))?;
    let index = scope.indices.get(&ptr(ix)).copied().ok_or_else(|| Diag::new(Some(loc), "'scf.index_switch' op: the index must be an arith.index_cast of a tensor.extract of a 0-d integer tensor (the quabla.case index)"))?;
    let n = op.region_count();
    let cases = op.attribute("cases").map(|a| a.to_string()).unwrap_or_default();
    let want: Vec<i64> = (0..n as i64 - 1).collect();
    let got = if cases == "array<i64>" { Some(vec![]) } else { crate::ops::parse_i64_array(&cases) };
    if got.as_deref() != Some(&want[..]) {
        return Err(Diag::new(Some(loc), format!("'scf.index_switch' op: quabla.case needs cases 0..{} in order (then the default), got {cases}", n as i64 - 2)));
    }
    let free = region_free_values(op)?;
    let mut captures: Vec<Value> = Vec::new();
    for p in &free {
        let v = scope.ids.get(p).or_else(|| scope.preds.get(p)).or_else(|| scope.indices.get(p)).copied().ok_or_else(|| Diag::new(Some(loc), format!("'scf.index_switch' op: a region uses a value not defined in @{name}")))?;
        if !captures.contains(&v) {
            captures.push(v);
        }
    }
    let mut results = Vec::new();
    for (k, r) in op.results().enumerate() {
        results.push(tensor_type(r.r#type(), loc, &format!("'scf.index_switch' op result {k}"))?);
    }
    let mut regions = Vec::new();
    for k in 0..n {
        // MLIR's region 0 is the default (the last branch); regions 1.. are the cases.
        let i = if k + 1 == n { 0 } else { k + 1 };
        let cap_tys: Vec<TensorType> = captures.iter().map(|v| f.ty(*v).clone()).collect();
        let mut body = f.new_body(&cap_tys);
        let mut inner = Scope::default();
        for p in &free {
            if let Some(v) = scope.ids.get(p) {
                let j = captures.iter().position(|c| c == v).unwrap();
                inner.ids.insert(*p, body.params[j]);
            } else if let Some(v) = scope.preds.get(p) {
                let j = captures.iter().position(|c| c == v).unwrap();
                inner.preds.insert(*p, body.params[j]);
            } else if let Some(v) = scope.indices.get(p) {
                let j = captures.iter().position(|c| c == v).unwrap();
                inner.indices.insert(*p, body.params[j]);
            }
        }
        let block = op.region(i).ok().and_then(|r| r.first_block()).ok_or_else(|| Diag::new(Some(loc), "'scf.index_switch' op: a region has no block"))?;
        if block.next_in_region().is_some() {
            return Err(Diag::new(Some(loc), "'scf.index_switch' op: regions with several blocks are not supported at the quabla level"));
        }
        let (ops, outs) = import_block(f, block, &mut inner, name, "scf.yield")?;
        body.ops = ops;
        body.outputs = outs.ok_or_else(|| Diag::new(Some(loc), "'scf.index_switch' op: a region has no scf.yield"))?;
        regions.push(body);
    }
    let kind = OpKind::Control(ControlOp::Case { results: results.clone() });
    let mut operands = vec![index];
    operands.extend(&captures);
    let tys: Vec<&TensorType> = operands.iter().map(|v| f.ty(*v)).collect();
    let want = kind.infer(&tys).map_err(|e| Diag::new(Some(loc), e.to_string()))?;
    kind.check_regions(&tys, &want, &regions, &f.types).map_err(|e| Diag::new(Some(loc), e.to_string()))?;
    let rv: Vec<Value> = want.into_iter().map(|t| f.new_value(t)).collect();
    Ok(Op { kind, operands, results: rv, regions, loc: loc_text(op) })
}

/// A bodiless `func.func` must be a transform declaration (`quabla.transform`, `quabla.of`).
fn import_declaration(fop: &OperationRef, name: String, public: bool) -> Result<Func, Diag> {
    let floc = fop.location().to_raw();
    let kind = string_attr(fop, "quabla.transform").ok_or_else(|| Diag::new(Some(floc), format!("@{name}: declarations without a body are only allowed as transform functions (quabla.transform = \"jvp\"|\"vjp\", quabla.of = @f)")))?;
    let axes = |attr: &str| -> Result<Vec<Option<i64>>, Diag> {
        let v = fop.attribute(attr).map_err(|_| Diag::new(Some(floc), format!("@{name}: a vmap transform needs {attr}")))?.to_string();
        let a = crate::ops::parse_i64_array(&v).ok_or_else(|| Diag::new(Some(floc), format!("@{name}: {attr} must be array<i64: ...> (-1 = not mapped), got {v}")))?;
        Ok(a.into_iter().map(|x| if x < 0 { None } else { Some(x) }).collect())
    };
    let kind = match kind.as_str() {
        "jvp" => crate::ir::TransformKind::Jvp,
        "vjp" => crate::ir::TransformKind::Vjp,
        "vmap" => {
            let size = fop.attribute("quabla.axis_size").ok().and_then(|a| crate::ops::parse_i64(&a.to_string())).ok_or_else(|| Diag::new(Some(floc), format!("@{name}: a vmap transform needs quabla.axis_size = N : i64")))?;
            let axis_name = match string_attr(fop, "quabla.axis_name") {
                None => None,
                Some(s) => Some(crate::ops::AxisName::parse(&s).ok_or_else(|| Diag::new(Some(floc), format!("@{name}: quabla.axis_name must be a string of 1 to 64 letters, digits or '_.-#', got {s}")))?),
            };
            crate::ir::TransformKind::Vmap { in_axes: axes("quabla.in_axes")?, out_axes: axes("quabla.out_axes")?, size, axis_name }
        }
        other => return Err(Diag::new(Some(floc), format!("@{name}: quabla.transform must be \"jvp\", \"vjp\" or \"vmap\", got \"{other}\""))),
    };
    let of = string_attr(fop, "quabla.of").ok_or_else(|| Diag::new(Some(floc), format!("@{name}: a transform function needs quabla.of = @f")))?;
    let of = of.strip_prefix('@').ok_or_else(|| Diag::new(Some(floc), format!("@{name}: quabla.of must be a symbol reference")))?.trim_matches('"').to_string();
    if public {
        return Err(Diag::new(Some(floc), format!("@{name}: transform functions are private")));
    }
    let fty = fop.attribute("function_type").map_err(|_| Diag::new(Some(floc), "func.func without function_type"))?.to_string();
    let (ins, outs) = parse_function_type(&fty).ok_or_else(|| Diag::new(Some(floc), format!("@{name}: cannot read function type {fty}")))?;
    let tys = |v: Vec<String>| -> Result<Vec<TensorType>, Diag> { v.iter().map(|t| TensorType::parse(t).map_err(|e| Diag::new(Some(floc), format!("@{name}: {e}")))).collect() };
    let (ins, outs) = (tys(ins)?, tys(outs)?);
    let mut f = Func::declaration(name, &ins, &outs, crate::ir::Transform { kind, of });
    f.loc = loc_text(fop);
    Ok(f)
}

/// Splits `(tensor<2xf32>, tensor<f32>) -> (tensor<f32>)` (or a bare single result) into types.
fn parse_function_type(s: &str) -> Option<(Vec<String>, Vec<String>)> {
    let (ins, outs) = s.split_once(") -> ")?;
    let ins = ins.trim().strip_prefix('(')?;
    let split = |x: &str| -> Vec<String> { x.split(", ").map(|t| t.trim().to_string()).filter(|t| !t.is_empty()).collect() };
    let outs = outs.trim();
    let outs = outs.strip_prefix('(').and_then(|o| o.strip_suffix(')')).unwrap_or(outs);
    Some((split(ins), split(outs)))
}

fn import_constant(op: &OperationRef, attrs: &[(String, String)], results: &[TensorType]) -> Result<OpKind, String> {
    if attrs.iter().any(|(k, _)| k != "value") {
        return Err("has an unknown attribute (only `value` is allowed)".into());
    }
    let a = op.attribute("value").map_err(|_| "needs a `value` attribute".to_string())?;
    let raw = a.to_raw();
    if !unsafe { mlir_sys::mlirAttributeIsADenseElements(raw) } {
        return Err(format!("`value` must be dense elements, got {a}"));
    }
    let ty = TensorType::parse(&a.r#type().to_string())?;
    if results.len() != 1 || results[0] != ty {
        return Err(format!("result type must equal the value's type {ty}"));
    }
    let size = ty.check_size("constant").map_err(|e| e.violation().map_or_else(|| e.to_string(), |v| format!("({}): {}", v.constraint, v.message)))?;
    let n = ty.num_elements();
    let splat = unsafe { mlir_sys::mlirDenseElementsAttrIsSplat(raw) };
    let idx = |i: usize| if splat { 0 } else { i as isize };
    let mut bytes = Vec::new();
    bytes.try_reserve_exact(size).map_err(|_| format!("out of memory: cannot allocate the {size} bytes of a {ty} constant"))?;
    unsafe {
        for i in 0..n {
            match ty.dtype {
                DType::F32 => bytes.extend(mlir_sys::mlirDenseElementsAttrGetFloatValue(raw, idx(i)).to_le_bytes()),
                DType::F64 => bytes.extend(mlir_sys::mlirDenseElementsAttrGetDoubleValue(raw, idx(i)).to_le_bytes()),
                DType::I1 => bytes.push(mlir_sys::mlirDenseElementsAttrGetBoolValue(raw, idx(i)) as u8),
                DType::I32 => bytes.extend(mlir_sys::mlirDenseElementsAttrGetInt32Value(raw, idx(i)).to_le_bytes()),
                DType::I64 => bytes.extend(mlir_sys::mlirDenseElementsAttrGetInt64Value(raw, idx(i)).to_le_bytes()),
                DType::U8 => bytes.push(mlir_sys::mlirDenseElementsAttrGetUInt8Value(raw, idx(i))),
                DType::U32 => bytes.extend(mlir_sys::mlirDenseElementsAttrGetUInt32Value(raw, idx(i)).to_le_bytes()),
            }
        }
    }
    Ok(OpKind::Constant(ConstantOp::Constant { value: Literal::from_bytes(ty, bytes) }))
}

/// Replaces the body of `module` (a `builtin.module` op) by the top-level ops of `text`,
/// parsed in the same context. Returns the parse error text when `text` does not parse.
pub fn replace_module_body(context: &Context, module: OperationRef, text: &str) -> Result<(), String> {
    let parsed = MlirModule::parse(context, text).ok_or_else(|| format!("internal error: generated MLIR does not parse:\n{text}"))?;
    let body = module.region(0).map_err(|e| e.to_string())?.first_block().ok_or("module without a body")?;
    unsafe {
        while let Some(op) = body.first_operation() {
            mlir_sys::mlirOperationDestroy(op.to_raw());
        }
        let src = parsed.body();
        while let Some(op) = src.first_operation() {
            let raw = op.to_raw();
            mlir_sys::mlirOperationRemoveFromParent(raw);
            mlir_sys::mlirBlockAppendOwnedOperation(body.to_raw(), raw);
        }
    }
    Ok(())
}

/// Parses MLIR text in `context` and imports it (verifying every op).
pub fn parse_and_import(context: &Context, text: &str) -> Result<Module, String> {
    let m = MlirModule::parse(context, text).ok_or_else(|| "the text does not parse as an MLIR module".to_string())?;
    import_module(m.as_operation()).map_err(|d| d.message)
}

/// Turns the `func.call`s of outlined custom-derivative bodies (`@__qb_custom_<stem>_primal`
/// with `@<stem>_jvp`, or `@<stem>_fwd` and `@<stem>_bwd`; see `Func::write_mlir`) back into
/// `custom_jvp_call` / `custom_vjp_call` ops with those bodies as regions, and drops the
/// outlined functions.
fn resolve_custom(m: &mut Module) -> Result<(), String> {
    let reserved = |n: &str| n.starts_with(crate::ir::CUSTOM_PREFIX);
    let lib: HashMap<String, Func> = m.funcs.iter().filter(|f| reserved(&f.name)).map(|f| (f.name.clone(), f.clone())).collect();
    if lib.is_empty() {
        return Ok(());
    }
    m.funcs.retain(|f| !reserved(&f.name));
    for f in &mut m.funcs {
        let ops = std::mem::take(&mut f.ops);
        f.ops = resolve_ops(f, ops, &lib)?;
    }
    Ok(())
}

fn resolve_ops(f: &mut Func, ops: Vec<Op>, lib: &HashMap<String, Func>) -> Result<Vec<Op>, String> {
    let mut out = Vec::with_capacity(ops.len());
    for mut op in ops {
        for r in &mut op.regions {
            let body_ops = std::mem::take(&mut r.ops);
            r.ops = resolve_ops(f, body_ops, lib)?;
        }
        let target = match &op.kind {
            OpKind::Call(crate::ops::CallOp::Call { callee, results }) if callee.starts_with(crate::ir::CUSTOM_PREFIX) => callee.strip_suffix("_primal").map(|s| (s.to_string(), results.clone())),
            _ => None,
        };
        if let Some((stem, results)) = target {
            let get = |role: &str| lib.get(&format!("{stem}_{role}")).ok_or_else(|| format!("'func.call' op of @{stem}_primal: no function @{stem}_{role} for its rule"));
            let primal = get("primal")?;
            let (kind, fs) = match lib.get(&format!("{stem}_jvp")) {
                Some(j) => (crate::ops::CallOp::CustomJvp { results: results.clone() }, vec![primal, j]),
                None => (crate::ops::CallOp::CustomVjp { results: results.clone() }, vec![primal, get("fwd")?, get("bwd")?]),
            };
            let mut regions = Vec::with_capacity(fs.len());
            for g in fs {
                regions.push(adopt(g, f, lib)?);
            }
            op.kind = OpKind::Call(kind);
            op.regions = regions;
            let tys: Vec<&TensorType> = op.operands.iter().map(|v| f.ty(*v)).collect();
            op.kind.check_regions(&tys, &results, &op.regions, &f.types).map_err(|e| e.to_string())?;
        }
        out.push(op);
    }
    Ok(out)
}

/// Function `g` copied into `dst` as a region body with fresh values (placeholders inside
/// resolved too).
fn adopt(g: &Func, dst: &mut Func, lib: &HashMap<String, Func>) -> Result<Body, String> {
    let mut map: HashMap<Value, Value> = HashMap::new();
    let params: Vec<Value> = g.params.iter().map(|p| {
        let v = dst.new_value(g.ty(*p).clone());
        map.insert(*p, v);
        v
    }).collect();
    let ops = copy_into(&g.ops, g, dst, &mut map)?;
    let ops = resolve_ops(dst, ops, lib)?;
    let outputs = g.outputs.iter().map(|v| map.get(v).copied().ok_or_else(|| format!("@{} returns an undefined value", g.name))).collect::<Result<_, _>>()?;
    Ok(Body { params, ops, outputs })
}

fn copy_into(ops: &[Op], g: &Func, dst: &mut Func, map: &mut HashMap<Value, Value>) -> Result<Vec<Op>, String> {
    let mut out = Vec::with_capacity(ops.len());
    for op in ops {
        let operands = op.operands.iter().map(|v| map.get(v).copied().ok_or_else(|| format!("@{}: value %{} used before its definition", g.name, v.0))).collect::<Result<Vec<_>, _>>()?;
        let mut regions = Vec::with_capacity(op.regions.len());
        for r in &op.regions {
            let params: Vec<Value> = r.params.iter().map(|p| {
                let v = dst.new_value(g.ty(*p).clone());
                map.insert(*p, v);
                v
            }).collect();
            let body_ops = copy_into(&r.ops, g, dst, map)?;
            let outputs = r.outputs.iter().map(|v| map.get(v).copied().ok_or_else(|| format!("@{}: a region yields an undefined value", g.name))).collect::<Result<_, _>>()?;
            regions.push(Body { params, ops: body_ops, outputs });
        }
        let results = op.results.iter().map(|r| {
            let v = dst.new_value(g.ty(*r).clone());
            map.insert(*r, v);
            v
        }).collect();
        out.push(Op { kind: op.kind.clone(), operands, results, regions, loc: op.loc.clone() });
    }
    Ok(out)
}

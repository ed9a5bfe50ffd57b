//! `convert-quabla-to-linalg`: every quabla op becomes linalg/tensor/arith/math ops on
//! tensors, emitted as MLIR text (one file per op family, matching dialect/src/ops/).
//!
//! Invariants: each quabla value has one SSA name in the output (`Emitter::name`); ops that
//! move no data (identity reshapes/transposes) only rename. With `Abi::Dps`, public functions
//! take their outputs as memref arguments and write them with
//! `bufferization.materialize_in_destination`, so the JIT'ed code never returns a buffer.
pub mod call;
pub mod constant;
pub mod dot;
pub mod elementwise;
pub mod layout;
pub mod reduce;
pub mod slicing;

use std::fmt::Write;

use quabla_dialect::{DType, Func, Module, Op, OpKind, TensorType, Value};

use crate::{Abi, LowerError};

/// Text sink with fresh SSA names and the quabla value -> SSA name map.
pub struct Emitter {
    pub out: String,
    next: usize,
    names: Vec<String>,
    /// Lowering with the destination-passing ABI (public functions have memref outputs).
    pub dps: bool,
}

impl Emitter {
    fn new(f: &Func) -> Self {
        Emitter { out: String::new(), next: 0, names: (0..f.types.len()).map(|i| format!("%v{i}")).collect(), dps: false }
    }

    /// A fresh SSA name.
    pub fn fresh(&mut self) -> String {
        self.next += 1;
        format!("%t{}", self.next)
    }

    pub fn name(&self, v: Value) -> String {
        self.names[v.0 as usize].clone()
    }

    /// Makes `v` refer to an existing SSA name (ops that move no data).
    pub fn alias(&mut self, v: Value, name: String) {
        self.names[v.0 as usize] = name;
    }

    pub fn line(&mut self, s: impl AsRef<str>) {
        self.out.push_str("    ");
        self.out.push_str(s.as_ref());
        self.out.push('\n');
    }

    /// `tensor.empty() : ty`.
    pub fn empty(&mut self, ty: &TensorType) -> String {
        let n = self.fresh();
        self.line(format!("{n} = tensor.empty() : {ty}"));
        n
    }

    /// A scalar constant of `dtype` (value given as text: `1.0`, `-3`, `true`).
    pub fn scalar(&mut self, dtype: DType, text: &str) -> String {
        let n = self.fresh();
        self.line(format!("{n} = arith.constant {text} : {dtype}"));
        n
    }

    /// `linalg.fill` of a new tensor of `ty` with scalar `value`.
    pub fn filled(&mut self, ty: &TensorType, value: &str) -> String {
        let e = self.empty(ty);
        let n = self.fresh();
        self.line(format!("{n} = linalg.fill ins({value} : {}) outs({e} : {ty}) -> {ty}", ty.dtype));
        n
    }
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

/// One input of a `linalg.generic`.
pub struct GenericIn {
    pub name: String,
    pub ty: TensorType,
    pub map: String,
}

/// Emits `linalg.generic` over `rank` loops with the given inputs and outputs (inits, types,
/// maps). `body` receives the block argument names (inputs then outputs) and returns the
/// body lines and the yielded scalar names. Returns the result names.
pub fn generic(
    e: &mut Emitter,
    rank: usize,
    iterators: &[&str],
    ins: &[GenericIn],
    outs: &[(String, TensorType, String)],
    body: impl FnOnce(&mut Emitter, &[String]) -> Vec<String>,
) -> Vec<String> {
    let maps: Vec<&str> = ins.iter().map(|i| i.map.as_str()).chain(outs.iter().map(|o| o.2.as_str())).collect();
    let iters: Vec<String> = iterators.iter().map(|s| format!("\"{s}\"")).collect();
    assert_eq!(iters.len(), rank);
    let results: Vec<String> = outs.iter().map(|_| e.fresh()).collect();
    let ins_s: Vec<String> = ins.iter().map(|i| i.name.clone()).collect();
    let ins_t: Vec<String> = ins.iter().map(|i| i.ty.to_string()).collect();
    let outs_s: Vec<String> = outs.iter().map(|o| o.0.clone()).collect();
    let outs_t: Vec<String> = outs.iter().map(|o| o.1.to_string()).collect();
    let lhs = if results.len() == 1 { results[0].clone() } else { format!("{}:{}", results[0], results.len()) };
    let ins_part = if ins.is_empty() { String::new() } else { format!(" ins({} : {})", ins_s.join(", "), ins_t.join(", ")) };
    e.line(format!(
        "{lhs} = linalg.generic {{indexing_maps = [{}], iterator_types = [{}]}}{ins_part} outs({} : {}) {{",
        maps.join(", "),
        iters.join(", "),
        outs_s.join(", "),
        outs_t.join(", ")
    ));
    let args: Vec<String> = (0..ins.len() + outs.len()).map(|i| format!("%b{i}")).collect();
    let arg_decl: Vec<String> = args.iter().zip(ins.iter().map(|i| i.ty.dtype).chain(outs.iter().map(|o| o.1.dtype))).map(|(a, d)| format!("{a}: {d}")).collect();
    e.out.push_str(&format!("    ^bb0({}):\n", arg_decl.join(", ")));
    let yields = body(e, &args);
    let ytypes: Vec<String> = outs.iter().map(|o| o.1.dtype.to_string()).collect();
    e.line(format!("  linalg.yield {} : {}", yields.join(", "), ytypes.join(", ")));
    e.line(format!("}} -> ({})", outs_t.join(", ")));
    if results.len() == 1 {
        results
    } else {
        (0..results.len()).map(|i| format!("{}#{i}", results[0])).collect()
    }
}

/// An elementwise `linalg.generic` over same-shaped operands producing `out` (identity maps).
pub fn elementwise(e: &mut Emitter, operands: &[(String, TensorType)], out: &TensorType, body: impl FnOnce(&mut Emitter, &[String]) -> String) -> String {
    let r = out.rank();
    let ins: Vec<GenericIn> = operands.iter().map(|(n, t)| GenericIn { name: n.clone(), ty: t.clone(), map: identity(r) }).collect();
    let init = e.empty(out);
    let iters = vec!["parallel"; r];
    generic(e, r, &iters, &ins, &[(init, out.clone(), identity(r))], |e, args| vec![body(e, args)]).remove(0)
}

fn lower_op(e: &mut Emitter, m: &Module, f: &Func, op: &Op) -> Result<(), LowerError> {
    match &op.kind {
        OpKind::Unary(_) | OpKind::Binary(_) | OpKind::Powi { .. } | OpKind::Compare { .. } | OpKind::Select | OpKind::Convert { .. } => elementwise::lower(e, f, op),
        OpKind::Constant { .. } | OpKind::Iota { .. } => constant::lower(e, f, op),
        OpKind::BroadcastInDim { .. } | OpKind::Reshape { .. } | OpKind::Transpose { .. } => layout::lower(e, f, op),
        OpKind::Concatenate { .. } | OpKind::Slice { .. } | OpKind::Pad { .. } | OpKind::DynamicSlice { .. } | OpKind::Gather { .. } => slicing::lower(e, f, op),
        OpKind::Reduce { .. } | OpKind::ArgReduce { .. } => reduce::lower(e, f, op),
        OpKind::DotGeneral { .. } => dot::lower(e, f, op),
        OpKind::Call { .. } => call::lower(e, m, f, op),
    }
}

fn memref(t: &TensorType) -> String {
    let mut s = String::from("memref<");
    for d in &t.shape {
        let _ = write!(s, "{d}x");
    }
    let _ = write!(s, "{}>", t.dtype);
    s
}

fn lower_func(out: &mut String, m: &Module, f: &Func, abi: Abi) -> Result<(), LowerError> {
    let mut e = Emitter::new(f);
    e.dps = abi == Abi::Dps;
    let dps = abi == Abi::Dps && f.public;
    let mut params: Vec<String> = f
        .params
        .iter()
        .map(|v| if dps { format!("%v{}: {} {{bufferization.writable = false}}", v.0, f.ty(*v)) } else { format!("%v{}: {}", v.0, f.ty(*v)) })
        .collect();
    let results = f.result_types();
    if dps {
        params.extend(results.iter().enumerate().map(|(k, t)| format!("%out{k}: {}", memref(t))));
    }
    for op in &f.ops {
        lower_op(&mut e, m, f, op)?;
    }
    let vis = if f.public { "" } else { "private " };
    let attrs = if dps { " attributes {llvm.emit_c_interface}" } else { "" };
    if dps {
        let _ = writeln!(out, "  func.func {vis}@{}({}){attrs} {{", f.name, params.join(", "));
        out.push_str(&e.out);
        for (k, (v, t)) in f.outputs.iter().zip(&results).enumerate() {
            let _ = writeln!(out, "    bufferization.materialize_in_destination {} in restrict writable %out{k} : ({t}, {}) -> ()", e.name(*v), memref(t));
        }
        out.push_str("    return\n  }\n");
    } else {
        let rt: Vec<String> = results.iter().map(|t| t.to_string()).collect();
        let _ = writeln!(out, "  func.func {vis}@{}({}) -> ({}){attrs} {{", f.name, params.join(", "), rt.join(", "));
        out.push_str(&e.out);
        let names: Vec<String> = f.outputs.iter().map(|v| e.name(*v)).collect();
        if names.is_empty() {
            out.push_str("    return\n  }\n");
        } else {
            let _ = writeln!(out, "    return {} : {}\n  }}", names.join(", "), rt.join(", "));
        }
    }
    Ok(())
}

/// Lowers every function of `m` (see the crate docs for the two ABIs).
pub fn lower_module(m: &Module, abi: Abi) -> Result<String, LowerError> {
    m.verify().map_err(|e| LowerError::Invalid(e.to_string()))?;
    let mut out = String::from("module {\n");
    for f in &m.funcs {
        lower_func(&mut out, m, f, abi)?;
    }
    out.push_str("}\n");
    Ok(out)
}

/// The MLIR spelling of a float literal of `dtype` for `v` (hex for non-finite values).
pub fn float_lit(dtype: DType, v: f64) -> String {
    if v.is_finite() {
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

/// Smallest and largest values of an integer dtype, as text.
pub fn int_min(d: DType) -> &'static str {
    match d {
        DType::I32 => "-2147483648",
        DType::I64 => "-9223372036854775808",
        _ => "0",
    }
}

pub fn int_max(d: DType) -> &'static str {
    match d {
        DType::I32 => "2147483647",
        DType::I64 => "9223372036854775807",
        _ => "1",
    }
}

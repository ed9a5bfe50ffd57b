//! The op set of the `quabla` dialect. `OpKind` carries each op's attributes; every layer
//! (shape rules here, interpreter, lowerings, autodiff/vmap rules) matches on it
//! exhaustively, one file per op family with the same name in each crate.
pub mod call;
pub mod constant;
pub mod dot;
pub mod elementwise;
pub mod layout;
pub mod reduce;
pub mod slicing;

use crate::error::{DialectError, Result};
use crate::types::{DType, TensorType};
pub use constant::Literal;
pub use dot::DotDims;
pub use elementwise::{BinaryOp, CmpDir, DClass, UnaryOp};
pub use reduce::{ArgOp, ReduceOp};

/// An op of the dialect with its attributes. Types that MLIR carries on the result
/// (reshape/broadcast target shapes, convert target dtype, iota type, arg index dtype) are
/// attributes here so that the shape rule alone determines the result.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum OpKind {
    Unary(UnaryOp),
    Binary(BinaryOp),
    Powi { exponent: i64 },
    Compare { dir: CmpDir },
    Select,
    Convert { to: DType },
    Constant { value: Literal },
    Iota { dim: i64, ty: TensorType },
    BroadcastInDim { dims: Vec<i64>, shape: Vec<i64> },
    Reshape { shape: Vec<i64> },
    Transpose { perm: Vec<i64> },
    Concatenate { dim: i64 },
    Slice { start: Vec<i64>, limit: Vec<i64>, strides: Vec<i64> },
    Pad { low: Vec<i64>, high: Vec<i64>, interior: Vec<i64> },
    DynamicSlice { sizes: Vec<i64> },
    Gather { axis: i64 },
    Reduce { op: ReduceOp, dims: Vec<i64> },
    ArgReduce { op: ArgOp, dim: i64, index: DType },
    DotGeneral { dims: DotDims },
    Call { callee: String, results: Vec<TensorType> },
}

/// The op family of a kind: the file name shared by every layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    Elementwise,
    Constant,
    Layout,
    Slicing,
    Reduce,
    Dot,
    Call,
}

/// Names of all ops of the dialect, with their operand arity (`None` = variadic) and
/// attribute names and IRDL base constraints. Drives the IRDL file and name lookup.
pub struct OpSig {
    pub name: &'static str,
    pub operands: Option<usize>,
    pub results: Option<usize>,
    pub attrs: &'static [(&'static str, &'static str)],
}

const ARR: &str = "#builtin.dense_array";
const INT: &str = "#builtin.integer";
const STR: &str = "#builtin.string";

/// Every op signature of the dialect (elementwise ops are generated from their tables).
pub fn all_sigs() -> Vec<OpSig> {
    let mut v = Vec::new();
    for u in UnaryOp::ALL {
        v.push(OpSig { name: u.name(), operands: Some(1), results: Some(1), attrs: &[] });
    }
    for b in BinaryOp::ALL {
        v.push(OpSig { name: b.name(), operands: Some(2), results: Some(1), attrs: &[] });
    }
    v.extend([
        OpSig { name: "powi", operands: Some(1), results: Some(1), attrs: &[("exponent", INT)] },
        OpSig { name: "compare", operands: Some(2), results: Some(1), attrs: &[("direction", STR)] },
        OpSig { name: "select", operands: Some(3), results: Some(1), attrs: &[] },
        OpSig { name: "convert", operands: Some(1), results: Some(1), attrs: &[] },
        OpSig { name: "constant", operands: Some(0), results: Some(1), attrs: &[("value", "#builtin.dense_int_or_fp_elements")] },
        OpSig { name: "iota", operands: Some(0), results: Some(1), attrs: &[("dim", INT)] },
        OpSig { name: "broadcast_in_dim", operands: Some(1), results: Some(1), attrs: &[("dims", ARR)] },
        OpSig { name: "reshape", operands: Some(1), results: Some(1), attrs: &[] },
        OpSig { name: "transpose", operands: Some(1), results: Some(1), attrs: &[("perm", ARR)] },
        OpSig { name: "concatenate", operands: Some(2), results: Some(1), attrs: &[("dim", INT)] },
        OpSig { name: "slice", operands: Some(1), results: Some(1), attrs: &[("start_indices", ARR), ("limit_indices", ARR), ("strides", ARR)] },
        OpSig { name: "pad", operands: Some(2), results: Some(1), attrs: &[("edge_padding_low", ARR), ("edge_padding_high", ARR), ("interior_padding", ARR)] },
        OpSig { name: "dynamic_slice", operands: None, results: Some(1), attrs: &[("slice_sizes", ARR)] },
        OpSig { name: "gather", operands: Some(2), results: Some(1), attrs: &[("axis", INT)] },
    ]);
    for r in ReduceOp::ALL {
        v.push(OpSig { name: r.name(), operands: Some(1), results: Some(1), attrs: &[("dims", ARR)] });
    }
    for a in [ArgOp::Max, ArgOp::Min] {
        v.push(OpSig { name: a.name(), operands: Some(1), results: Some(1), attrs: &[("dim", INT)] });
    }
    v.extend([
        OpSig {
            name: "dot_general",
            operands: Some(2),
            results: Some(1),
            attrs: &[("lhs_batching_dimensions", ARR), ("rhs_batching_dimensions", ARR), ("lhs_contracting_dimensions", ARR), ("rhs_contracting_dimensions", ARR)],
        },
    ]);
    v
}

/// The IRDL definition of the dialect, generated from [`all_sigs`]. The checked-in
/// `dialect/quabla.irdl.mlir` equals this text (a test checks it).
pub fn irdl_text() -> String {
    let mut s = String::from("// Generated by quabla-dialect (ops::irdl_text); do not edit. See docs/spec.md.\nirdl.dialect @quabla {\n");
    for sig in all_sigs() {
        s += &format!("  irdl.operation @{} {{\n", sig.name);
        let mut n = 0;
        let mut var = |s: &mut String, base: &str| {
            *s += &format!("    %{n} = irdl.base \"{base}\"\n");
            n += 1;
            n - 1
        };
        // IRDL unifies a constraint variable across all its uses (a variadic group included),
        // so the only variadic group, dynamic_slice's start indices, must share one type.
        let ops: Vec<String> = match sig.operands {
            Some(k) => (0..k).map(|i| format!("x{i}: %{}", var(&mut s, "!builtin.tensor"))).collect(),
            None => vec![format!("x0: %{}", var(&mut s, "!builtin.tensor")), format!("starts: variadic %{}", var(&mut s, "!builtin.tensor"))],
        };
        let res = match sig.results {
            Some(_) => format!("y: %{}", var(&mut s, "!builtin.tensor")),
            None => format!("ys: variadic %{}", var(&mut s, "!builtin.tensor")),
        };
        let attrs: Vec<String> = sig.attrs.iter().map(|(a, b)| format!("\"{a}\" = %{}", var(&mut s, b))).collect();
        if !ops.is_empty() {
            s += &format!("    irdl.operands({})\n", ops.join(", "));
        }
        s += &format!("    irdl.results({res})\n");
        if !attrs.is_empty() {
            s += &format!("    irdl.attributes {{{}}}\n", attrs.join(", "));
        }
        s += "  }\n";
    }
    s += "}\n";
    s
}

impl OpKind {
    /// The op name without the dialect prefix (`reduce_sum`).
    pub fn name(&self) -> &'static str {
        match self {
            OpKind::Unary(u) => u.name(),
            OpKind::Binary(b) => b.name(),
            OpKind::Powi { .. } => "powi",
            OpKind::Compare { .. } => "compare",
            OpKind::Select => "select",
            OpKind::Convert { .. } => "convert",
            OpKind::Constant { .. } => "constant",
            OpKind::Iota { .. } => "iota",
            OpKind::BroadcastInDim { .. } => "broadcast_in_dim",
            OpKind::Reshape { .. } => "reshape",
            OpKind::Transpose { .. } => "transpose",
            OpKind::Concatenate { .. } => "concatenate",
            OpKind::Slice { .. } => "slice",
            OpKind::Pad { .. } => "pad",
            OpKind::DynamicSlice { .. } => "dynamic_slice",
            OpKind::Gather { .. } => "gather",
            OpKind::Reduce { op, .. } => op.name(),
            OpKind::ArgReduce { op, .. } => op.name(),
            OpKind::DotGeneral { .. } => "dot_general",
            OpKind::Call { .. } => "call",
        }
    }

    pub fn family(&self) -> Family {
        match self {
            OpKind::Unary(_) | OpKind::Binary(_) | OpKind::Powi { .. } | OpKind::Compare { .. } | OpKind::Select | OpKind::Convert { .. } => Family::Elementwise,
            OpKind::Constant { .. } | OpKind::Iota { .. } => Family::Constant,
            OpKind::BroadcastInDim { .. } | OpKind::Reshape { .. } | OpKind::Transpose { .. } => Family::Layout,
            OpKind::Concatenate { .. } | OpKind::Slice { .. } | OpKind::Pad { .. } | OpKind::DynamicSlice { .. } | OpKind::Gather { .. } => Family::Slicing,
            OpKind::Reduce { .. } | OpKind::ArgReduce { .. } => Family::Reduce,
            OpKind::DotGeneral { .. } => Family::Dot,
            OpKind::Call { .. } => Family::Call,
        }
    }

    /// Expected operand count (`None` when variadic).
    pub fn arity(&self) -> Option<usize> {
        match self {
            OpKind::Unary(_) | OpKind::Powi { .. } | OpKind::Convert { .. } => Some(1),
            OpKind::Binary(_) | OpKind::Compare { .. } => Some(2),
            OpKind::Select => Some(3),
            OpKind::Constant { .. } | OpKind::Iota { .. } => Some(0),
            OpKind::BroadcastInDim { .. } | OpKind::Reshape { .. } | OpKind::Transpose { .. } | OpKind::Slice { .. } => Some(1),
            OpKind::Pad { .. } | OpKind::Gather { .. } | OpKind::DotGeneral { .. } => Some(2),
            OpKind::Reduce { .. } | OpKind::ArgReduce { .. } => Some(1),
            OpKind::Concatenate { .. } => Some(2),
            OpKind::DynamicSlice { .. } | OpKind::Call { .. } => None,
        }
    }

    /// The shape/dtype rule: result types from operand types. The single source of truth
    /// used by the tracer, the verifier and the passes.
    pub fn infer(&self, xs: &[&TensorType]) -> Result<Vec<TensorType>> {
        if let Some(n) = self.arity() {
            if xs.len() != n {
                return Err(DialectError::shape(self.name(), "arity", format!("expects {n} operands, got {}", xs.len())));
            }
        }
        let one = |t: Result<TensorType>| t.map(|t| vec![t]);
        match self {
            OpKind::Unary(u) => one(elementwise::infer_unary(*u, xs[0])),
            OpKind::Binary(b) => one(elementwise::infer_binary(*b, xs[0], xs[1])),
            OpKind::Powi { .. } => one(elementwise::infer_powi(xs[0])),
            OpKind::Compare { .. } => one(elementwise::infer_compare(xs[0], xs[1])),
            OpKind::Select => one(elementwise::infer_select(xs[0], xs[1], xs[2])),
            OpKind::Convert { to } => one(elementwise::infer_convert(xs[0], *to)),
            OpKind::Constant { value } => one(constant::infer_constant(value)),
            OpKind::Iota { dim, ty } => one(constant::infer_iota(*dim, ty)),
            OpKind::BroadcastInDim { dims, shape } => one(layout::infer_broadcast_in_dim(xs[0], dims, shape)),
            OpKind::Reshape { shape } => one(layout::infer_reshape(xs[0], shape)),
            OpKind::Transpose { perm } => one(layout::infer_transpose(xs[0], perm)),
            OpKind::Concatenate { dim } => one(slicing::infer_concatenate(xs, *dim)),
            OpKind::Slice { start, limit, strides } => one(slicing::infer_slice(xs[0], start, limit, strides)),
            OpKind::Pad { low, high, interior } => one(slicing::infer_pad(xs[0], xs[1], low, high, interior)),
            OpKind::DynamicSlice { sizes } => {
                let Some((x, starts)) = xs.split_first() else { return crate::error::shape_err("dynamic_slice", "dynamic_slice_c1", "needs an operand") };
                one(slicing::infer_dynamic_slice(x, starts, sizes))
            }
            OpKind::Gather { axis } => one(slicing::infer_gather(xs[0], xs[1], *axis)),
            OpKind::Reduce { op, dims } => one(reduce::infer_reduce(*op, xs[0], dims)),
            OpKind::ArgReduce { op, dim, index } => one(reduce::infer_argreduce(*op, xs[0], *dim, *index)),
            OpKind::DotGeneral { dims } => one(dot::infer_dot_general(xs[0], xs[1], dims)),
            OpKind::Call { results, .. } => Ok(results.clone()),
        }
    }

    /// The attribute dictionary entries in MLIR syntax (without braces). Result-carried
    /// attributes (reshape shape, convert dtype, ...) are not printed.
    pub fn mlir_attrs(&self) -> Vec<(&'static str, String)> {
        let arr = |v: &[i64]| if v.is_empty() { "array<i64>".to_string() } else { format!("array<i64: {}>", v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ")) };
        let int = |v: i64| format!("{v} : i64");
        match self {
            OpKind::Unary(_) | OpKind::Binary(_) | OpKind::Select | OpKind::Convert { .. } | OpKind::Reshape { .. } => vec![],
            OpKind::Powi { exponent } => vec![("exponent", int(*exponent))],
            OpKind::Compare { dir } => vec![("direction", format!("\"{}\"", dir.name()))],
            OpKind::Constant { value } => vec![("value", value.to_mlir())],
            OpKind::Iota { dim, .. } => vec![("dim", int(*dim))],
            OpKind::BroadcastInDim { dims, .. } => vec![("dims", arr(dims))],
            OpKind::Transpose { perm } => vec![("perm", arr(perm))],
            OpKind::Concatenate { dim } => vec![("dim", int(*dim))],
            OpKind::Slice { start, limit, strides } => vec![("start_indices", arr(start)), ("limit_indices", arr(limit)), ("strides", arr(strides))],
            OpKind::Pad { low, high, interior } => vec![("edge_padding_low", arr(low)), ("edge_padding_high", arr(high)), ("interior_padding", arr(interior))],
            OpKind::DynamicSlice { sizes } => vec![("slice_sizes", arr(sizes))],
            OpKind::Gather { axis } => vec![("axis", int(*axis))],
            OpKind::Reduce { dims, .. } => vec![("dims", arr(dims))],
            OpKind::ArgReduce { dim, .. } => vec![("dim", int(*dim))],
            OpKind::DotGeneral { dims } => vec![
                ("lhs_batching_dimensions", arr(&dims.lhs_batch)),
                ("rhs_batching_dimensions", arr(&dims.rhs_batch)),
                ("lhs_contracting_dimensions", arr(&dims.lhs_contract)),
                ("rhs_contracting_dimensions", arr(&dims.rhs_contract)),
            ],
            OpKind::Call { callee, .. } => vec![("callee", format!("@{callee}"))],
        }
    }

    /// Rebuilds a kind from its name (without prefix), its attributes as MLIR text and its
    /// result types. `quabla.constant` is built by the importer (dense data is read through
    /// the C API), not here.
    pub fn from_parts(name: &str, attrs: &[(String, String)], results: &[TensorType]) -> Result<OpKind> {
        if name == "call" {
            let v = attrs.iter().find(|(a, _)| a == "callee").map(|(_, v)| v.as_str()).ok_or_else(|| attr_err(name, "callee", "missing"))?;
            let c = v.strip_prefix('@').ok_or_else(|| attr_err(name, "callee", &format!("expected a flat symbol reference, got `{v}`")))?;
            return Ok(OpKind::Call { callee: c.trim_matches('"').to_string(), results: results.to_vec() });
        }
        let sig = all_sigs().into_iter().find(|s| s.name == name).ok_or_else(|| DialectError::UnknownOp(format!("quabla.{name}")))?;
        for (k, _) in attrs {
            if !sig.attrs.iter().any(|(a, _)| a == k) {
                return Err(attr_err(name, k, "unknown attribute for this op"));
            }
        }
        let get = |k: &str| attrs.iter().find(|(a, _)| a == k).map(|(_, v)| v.as_str()).ok_or_else(|| attr_err(name, k, "missing"));
        let arr = |k: &str| get(k).and_then(|v| parse_i64_array(v).ok_or_else(|| attr_err(name, k, &format!("expected array<i64: ...>, got `{v}`"))));
        let int = |k: &str| get(k).and_then(|v| parse_i64(v).ok_or_else(|| attr_err(name, k, &format!("expected an i64 integer, got `{v}`"))));
        let res0 = || {
            results.first().cloned().ok_or_else(|| DialectError::Structure(format!("'quabla.{name}' op: expects one result")))
        };
        if sig.results.is_some() && results.len() != 1 {
            return Err(DialectError::Structure(format!("'quabla.{name}' op: expects one result, got {}", results.len())));
        }
        if let Some(u) = UnaryOp::from_name(name) {
            return Ok(OpKind::Unary(u));
        }
        if let Some(b) = BinaryOp::from_name(name) {
            return Ok(OpKind::Binary(b));
        }
        Ok(match name {
            "powi" => OpKind::Powi { exponent: int("exponent")? },
            "compare" => {
                let v = get("direction")?;
                let d = v.trim_matches('"');
                OpKind::Compare { dir: CmpDir::parse(d).ok_or_else(|| attr_err(name, "direction", &format!("expected one of \"eq\", \"ne\", \"lt\", \"le\", \"gt\", \"ge\", got {v}")))? }
            }
            "select" => OpKind::Select,
            "convert" => OpKind::Convert { to: res0()?.dtype },
            "iota" => OpKind::Iota { dim: int("dim")?, ty: res0()? },
            "broadcast_in_dim" => OpKind::BroadcastInDim { dims: arr("dims")?, shape: res0()?.shape },
            "reshape" => OpKind::Reshape { shape: res0()?.shape },
            "transpose" => OpKind::Transpose { perm: arr("perm")? },
            "concatenate" => OpKind::Concatenate { dim: int("dim")? },
            "slice" => OpKind::Slice { start: arr("start_indices")?, limit: arr("limit_indices")?, strides: arr("strides")? },
            "pad" => OpKind::Pad { low: arr("edge_padding_low")?, high: arr("edge_padding_high")?, interior: arr("interior_padding")? },
            "dynamic_slice" => OpKind::DynamicSlice { sizes: arr("slice_sizes")? },
            "gather" => OpKind::Gather { axis: int("axis")? },
            "reduce_sum" => OpKind::Reduce { op: ReduceOp::Sum, dims: arr("dims")? },
            "reduce_max" => OpKind::Reduce { op: ReduceOp::Max, dims: arr("dims")? },
            "reduce_min" => OpKind::Reduce { op: ReduceOp::Min, dims: arr("dims")? },
            "reduce_prod" => OpKind::Reduce { op: ReduceOp::Prod, dims: arr("dims")? },
            "argmax" => OpKind::ArgReduce { op: ArgOp::Max, dim: int("dim")?, index: res0()?.dtype },
            "argmin" => OpKind::ArgReduce { op: ArgOp::Min, dim: int("dim")?, index: res0()?.dtype },
            "dot_general" => OpKind::DotGeneral {
                dims: DotDims {
                    lhs_batch: arr("lhs_batching_dimensions")?,
                    rhs_batch: arr("rhs_batching_dimensions")?,
                    lhs_contract: arr("lhs_contracting_dimensions")?,
                    rhs_contract: arr("rhs_contracting_dimensions")?,
                },
            },
            "call" => {
                let v = get("callee")?;
                let c = v.strip_prefix('@').ok_or_else(|| attr_err(name, "callee", &format!("expected a flat symbol reference, got `{v}`")))?;
                OpKind::Call { callee: c.trim_matches('"').to_string(), results: results.to_vec() }
            }
            "constant" => return Err(attr_err(name, "value", "constants are imported from their dense attribute")),
            other => return Err(DialectError::UnknownOp(format!("quabla.{other}"))),
        })
    }
}

fn attr_err(op: &str, attr: &str, msg: &str) -> DialectError {
    DialectError::Attribute { op: op.to_string(), attr: attr.to_string(), message: msg.to_string() }
}

/// Parses `array<i64: 1, 2>` / `array<i64>`.
pub fn parse_i64_array(s: &str) -> Option<Vec<i64>> {
    let inner = s.trim().strip_prefix("array<i64")?.strip_suffix('>')?;
    let inner = inner.trim();
    if inner.is_empty() {
        return Some(vec![]);
    }
    inner.strip_prefix(':')?.split(',').map(|x| x.trim().parse().ok()).collect()
}

/// Parses `3 : i64` (or a bare integer).
pub fn parse_i64(s: &str) -> Option<i64> {
    let v = s.split(':').next()?.trim();
    v.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn attr_parsers() {
        assert_eq!(parse_i64_array("array<i64: 1, 2>"), Some(vec![1, 2]));
        assert_eq!(parse_i64_array("array<i64>"), Some(vec![]));
        assert_eq!(parse_i64("-3 : i64"), Some(-3));
    }
    #[test]
    fn irdl_file_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/quabla.irdl.mlir");
        let on_disk = std::fs::read_to_string(path).unwrap_or_default();
        assert!(on_disk == irdl_text(), "dialect/quabla.irdl.mlir is stale: regenerate with `cargo run -p quabla-opt -- --print-irdl > dialect/quabla.irdl.mlir`");
    }
    #[test]
    fn dot_rule() {
        let l = TensorType::new(DType::F32, [2, 3, 4]);
        let r = TensorType::new(DType::F32, [2, 4, 5]);
        let d = DotDims { lhs_batch: vec![0], rhs_batch: vec![0], lhs_contract: vec![2], rhs_contract: vec![1] };
        assert_eq!(OpKind::DotGeneral { dims: d }.infer(&[&l, &r]).unwrap()[0].shape, vec![2, 3, 5]);
    }
}

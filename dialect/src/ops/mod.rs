//! The op set of the `quabla` dialect. Each family file (`elementwise.rs`, `reduce.rs`, ...)
//! writes its ops once in an `op_family!` table (see `table.rs`), which generates the family's
//! sub-enum and its names, attributes, parsing and IRDL signatures; `OpKind` has one variant
//! per family, so every layer matches exhaustively on families, and each family file on its
//! own sub-enum. A new op fails to compile exactly where it must be handled.
pub mod call;
pub mod callback;
pub mod collective;
pub mod constant;
pub mod control;
pub mod dot;
pub mod elementwise;
pub mod layout;
pub mod linalg;
pub mod reduce;
pub mod sort;
pub mod slicing;
pub mod table;
pub mod scatter;
pub mod convolution;
pub mod reduce_window;

use crate::error::{DialectError, Result};
use crate::types::{DType, TensorType};
pub use call::CallOp;
pub use callback::CallbackOp;
pub use collective::{AxisName, CollectiveOp};
pub use constant::{ConstantOp, Literal};
pub use control::ControlOp;
pub use dot::{DotDims, DotOp};
pub use elementwise::{BinaryOp, CmpDir, DClass, ElementwiseOp, UnaryOp, RECOMPUTE_COST};
pub use layout::LayoutOp;
pub use linalg::LinalgOp;
pub use reduce::{ArgOp, ReduceOp, Reducer};
pub use sort::SortOp;
pub use slicing::SlicingOp;
pub use scatter::{Combiner, ScatterDims, ScatterOp};
pub use table::{AttrSource, OpSig};
pub use convolution::{ConvAttrs, ConvDims, ConvWindow, ConvolutionOp};
pub use reduce_window::{ReduceWindowOp, Window, WindowReducer};

/// An op of the dialect with its attributes, by family. Types that MLIR carries on the result
/// (reshape/broadcast target shapes, convert target dtype, iota type, arg index dtype) are
/// fields here so that the shape rule alone determines the result.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum OpKind {
    Elementwise(ElementwiseOp),
    Constant(ConstantOp),
    Layout(LayoutOp),
    Slicing(SlicingOp),
    Reduce(ReduceOp),
    Dot(DotOp),
    Call(CallOp),
    Control(ControlOp),
    Scatter(ScatterOp),
    Convolution(ConvolutionOp),
    ReduceWindow(ReduceWindowOp),
    Linalg(LinalgOp),
    Sort(SortOp),
    Callback(CallbackOp),
    Collective(CollectiveOp),
}

/// Runs `$e` with `$x` bound to the family sub-enum of `$k`.
macro_rules! each_family {
    ($k:expr, $x:ident => $e:expr) => {
        match $k {
            OpKind::Elementwise($x) => $e,
            OpKind::Constant($x) => $e,
            OpKind::Layout($x) => $e,
            OpKind::Slicing($x) => $e,
            OpKind::Reduce($x) => $e,
            OpKind::Dot($x) => $e,
            OpKind::Call($x) => $e,
            OpKind::Control($x) => $e,
            OpKind::Scatter($x) => $e,
            OpKind::Convolution($x) => $e,
            OpKind::ReduceWindow($x) => $e,
            OpKind::Linalg($x) => $e,
            OpKind::Sort($x) => $e,
            OpKind::Callback($x) => $e,
            OpKind::Collective($x) => $e,
        }
    };
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
    Control,
    Scatter,
    Convolution,
    ReduceWindow,
    Linalg,
    Sort,
    Callback,
    Collective,
}

impl Family {
    pub const ALL: [Family; 15] = [Family::Elementwise, Family::Constant, Family::Layout, Family::Slicing, Family::Reduce, Family::Dot, Family::Call, Family::Control, Family::Scatter, Family::Convolution, Family::ReduceWindow, Family::Linalg, Family::Sort, Family::Callback, Family::Collective];

    /// The family's file name in every layer (`reduce` for reduce.rs).
    pub fn name(self) -> &'static str {
        match self {
            Family::Elementwise => "elementwise",
            Family::Constant => "constant",
            Family::Layout => "layout",
            Family::Slicing => "slicing",
            Family::Reduce => "reduce",
            Family::Dot => "dot",
            Family::Call => "call",
            Family::Control => "control",
            Family::Scatter => "scatter",
            Family::Convolution => "convolution",
            Family::ReduceWindow => "reduce_window",
            Family::Linalg => "linalg",
            Family::Sort => "sort",
            Family::Callback => "callback",
            Family::Collective => "collective",
        }
    }

    /// Every op name of the family, in table order.
    pub fn op_names(self) -> Vec<&'static str> {
        match self {
            Family::Elementwise => ElementwiseOp::names(),
            Family::Constant => ConstantOp::names(),
            Family::Layout => LayoutOp::names(),
            Family::Slicing => SlicingOp::names(),
            Family::Reduce => ReduceOp::names(),
            Family::Dot => DotOp::names(),
            Family::Call => CallOp::names(),
            Family::Control => ControlOp::names(),
            Family::Scatter => ScatterOp::names(),
            Family::Convolution => ConvolutionOp::names(),
            Family::ReduceWindow => ReduceWindowOp::names(),
            Family::Linalg => LinalgOp::names(),
            Family::Sort => SortOp::names(),
            Family::Callback => CallbackOp::names(),
            Family::Collective => CollectiveOp::names(),
        }
    }
}

/// Every IRDL op signature of the dialect, family by family in table order.
pub fn all_sigs() -> Vec<OpSig> {
    let mut v = ElementwiseOp::sigs();
    v.extend(ConstantOp::sigs());
    v.extend(LayoutOp::sigs());
    v.extend(SlicingOp::sigs());
    v.extend(ReduceOp::sigs());
    v.extend(DotOp::sigs());
    v.extend(CallOp::sigs());
    v.extend(ControlOp::sigs());
    v.extend(ScatterOp::sigs());
    v.extend(ConvolutionOp::sigs());
    v.extend(ReduceWindowOp::sigs());
    v.extend(LinalgOp::sigs_with_results());
    v.extend(SortOp::sigs());
    v.extend(CallbackOp::sigs());
    v.extend(CollectiveOp::sigs());
    v
}

/// The IRDL definition of the dialect, generated from the op table. The checked-in
/// `dialect/quabla.irdl.mlir` equals this text (a test checks it).
pub fn irdl_text() -> String {
    irdl_text_of(&all_sigs())
}

/// The IRDL definition of a dialect with the given op signatures.
pub fn irdl_text_of(sigs: &[OpSig]) -> String {
    let mut s = String::from("// Generated by quabla-dialect (ops::irdl_text); do not edit. See docs/spec.md.\nirdl.dialect @quabla {\n");
    for sig in sigs {
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
            None => {
                let mut v: Vec<String> = (0..sig.leading).map(|i| format!("x{i}: %{}", var(&mut s, "!builtin.tensor"))).collect();
                v.push(format!("starts: variadic %{}", var(&mut s, "!builtin.tensor")));
                v
            }
        };
        let res = match sig.results {
            Some(k) if k > 1 => (0..k).map(|i| format!("y{i}: %{}", var(&mut s, "!builtin.tensor"))).collect::<Vec<_>>().join(", "),
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
        if sig.regions > 0 {
            let rs: Vec<String> = (0..sig.regions)
                .map(|i| {
                    s += &format!("    %r{i} = irdl.region with size 1\n");
                    format!("r{i}: %r{i}")
                })
                .collect();
            s += &format!("    irdl.regions({})\n", rs.join(", "));
        }
        s += "  }\n";
    }
    s += "}\n";
    s
}

/// Every op name of the dialect (upstream-spelled ones included), in table order.
pub fn all_op_names() -> Vec<&'static str> {
    Family::ALL.iter().flat_map(|f| f.op_names()).collect()
}

/// The Python keywords of op `name` with their Python types (from the table).
pub fn keywords(name: &str) -> Option<Vec<(&'static str, &'static str)>> {
    ElementwiseOp::keywords(name)
        .or_else(|| ConstantOp::keywords(name))
        .or_else(|| LayoutOp::keywords(name))
        .or_else(|| SlicingOp::keywords(name))
        .or_else(|| ReduceOp::keywords(name))
        .or_else(|| DotOp::keywords(name))
        .or_else(|| CallOp::keywords(name))
        .or_else(|| ControlOp::keywords(name))
        .or_else(|| ScatterOp::keywords(name))
        .or_else(|| ConvolutionOp::keywords(name))
        .or_else(|| ReduceWindowOp::keywords(name))
        .or_else(|| LinalgOp::keywords(name))
        .or_else(|| SortOp::keywords(name))
        .or_else(|| CallbackOp::keywords(name))
        .or_else(|| CollectiveOp::keywords(name))
}

/// Ops that the Python op builder (`quabla._quabla.Op`) cannot make: constants, calls and
/// control flow are built by the tracer.
fn tracer_built(name: &str) -> bool {
    name == "constant" || CallOp::names().contains(&name) || ControlOp::names().contains(&name)
}

/// The stub of the extension's op builder `quabla._quabla.Op`, generated from the op table:
/// `Op(name, **keywords)` overloads, one per distinct keyword list. `quabla-opt --print-pyi`
/// puts it after the rest of the extension's stubs (`quabla_opt::pyi_text`) into
/// `python/quabla/_quabla.pyi`.
pub fn pyi_text() -> String {
    type Keywords = Vec<(&'static str, &'static str)>;
    let mut groups: Vec<(Keywords, Vec<&'static str>)> = Vec::new();
    for name in all_op_names().into_iter().filter(|n| !tracer_built(n)) {
        let kw = keywords(name).unwrap_or_default();
        match groups.iter_mut().find(|(k, _)| *k == kw) {
            Some((_, ns)) => ns.push(name),
            None => groups.push((kw, vec![name])),
        }
    }
    let mut s = String::from("@final\nclass Op:\n    \"\"\"One dialect op with its attributes.\"\"\"\n\n");
    for (kw, names) in &groups {
        let lit: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
        let mut params = format!("cls, name: Literal[{}]", lit.join(", "));
        if !kw.is_empty() {
            params.push_str(", *");
            for (k, t) in kw {
                params.push_str(&format!(", {k}: {t}"));
            }
        }
        s += &format!("    @overload\n    def __new__({params}) -> Op: ...\n");
    }
    s += "    @property\n    def name(self) -> str: ...\n";
    s
}

impl OpKind {
    /// The op name without the dialect prefix (`reduce_sum`).
    pub fn name(&self) -> &'static str {
        each_family!(self, x => x.name())
    }

    pub fn family(&self) -> Family {
        match self {
            OpKind::Elementwise(_) => Family::Elementwise,
            OpKind::Constant(_) => Family::Constant,
            OpKind::Layout(_) => Family::Layout,
            OpKind::Slicing(_) => Family::Slicing,
            OpKind::Reduce(_) => Family::Reduce,
            OpKind::Dot(_) => Family::Dot,
            OpKind::Call(_) => Family::Call,
            OpKind::Control(_) => Family::Control,
            OpKind::Scatter(_) => Family::Scatter,
            OpKind::Convolution(_) => Family::Convolution,
            OpKind::ReduceWindow(_) => Family::ReduceWindow,
            OpKind::Linalg(_) => Family::Linalg,
            OpKind::Sort(_) => Family::Sort,
            OpKind::Callback(_) => Family::Callback,
            OpKind::Collective(_) => Family::Collective,
        }
    }

    /// Expected operand count (`None` when variadic).
    pub fn arity(&self) -> Option<usize> {
        each_family!(self, x => x.arity())
    }

    /// True for ops with an effect on the host (`host_callback`): passes keep them, in
    /// program order, even when their results are unused, and never fold or merge them.
    pub fn has_effect(&self) -> bool {
        matches!(self, OpKind::Callback(_))
    }

    /// How many regions the op has (`regions_c1`).
    pub fn region_count(&self) -> usize {
        each_family!(self, x => x.region_count())
    }

    /// The shape/dtype rule: result types from operand types. The single source of truth
    /// used by the tracer, the verifier and the passes.
    pub fn infer(&self, xs: &[&TensorType]) -> Result<Vec<TensorType>> {
        if let Some(n) = self.arity() {
            if xs.len() != n {
                return Err(DialectError::shape(self.name(), "arity", format!("expects {n} operands, got {}", xs.len())));
            }
        }
        let results = match self {
            OpKind::Elementwise(x) => x.infer(xs).map(|t| vec![t]),
            OpKind::Constant(x) => x.infer(xs).map(|t| vec![t]),
            OpKind::Layout(x) => x.infer(xs).map(|t| vec![t]),
            OpKind::Slicing(x) => x.infer(xs).map(|t| vec![t]),
            OpKind::Reduce(x) => x.infer(xs).map(|t| vec![t]),
            OpKind::Dot(x) => x.infer(xs).map(|t| vec![t]),
            OpKind::Call(x) => x.infer(xs),
            OpKind::Control(x) => x.infer(xs),
            OpKind::Scatter(x) => x.infer(xs).map(|t| vec![t]),
            OpKind::Convolution(x) => x.infer(xs).map(|t| vec![t]),
            OpKind::ReduceWindow(x) => x.infer(xs).map(|t| vec![t]),
            OpKind::Linalg(x) => x.infer(xs),
            OpKind::Sort(x) => x.infer(xs).map(|t| vec![t]),
            OpKind::Callback(x) => x.infer(xs).map(|t| vec![t]),
            OpKind::Collective(x) => x.infer(xs).map(|t| vec![t]),
        }?;
        // No result may be too big to exist (a wrapped element count is a memory-safety hole).
        for t in &results {
            t.check_size(self.name())?;
        }
        Ok(results)
    }

    /// Checks the op's regions against its operand and result types (`types` is the value
    /// table of the enclosing function). Ops without regions must have none (`regions_c1`).
    pub fn check_regions(&self, xs: &[&TensorType], results: &[TensorType], regions: &[crate::ir::Body], types: &[TensorType]) -> Result<()> {
        match self {
            OpKind::Control(c) => c.check_regions(xs, results, regions, types),
            OpKind::Call(c) => c.check_regions(xs, results, regions, types),
            _ if regions.is_empty() => Ok(()),
            _ => crate::error::shape_err(self.name(), "regions_c1", format!("expects no regions, got {}", regions.len())),
        }
    }

    /// The attribute dictionary entries in MLIR syntax (without braces). Result-carried
    /// attributes (reshape shape, convert dtype, ...) are not printed.
    pub fn mlir_attrs(&self) -> Vec<(&'static str, String)> {
        each_family!(self, x => x.mlir_attrs())
    }

    /// Builds op `name` from its attributes (MLIR attribute text with the result types, or
    /// Python keywords), through the op table.
    pub fn build(name: &str, src: &dyn AttrSource) -> Result<OpKind> {
        let r = ElementwiseOp::build(name, src)
            .map(|r| r.map(OpKind::Elementwise))
            .or_else(|| ConstantOp::build(name, src).map(|r| r.map(OpKind::Constant)))
            .or_else(|| LayoutOp::build(name, src).map(|r| r.map(OpKind::Layout)))
            .or_else(|| SlicingOp::build(name, src).map(|r| r.map(OpKind::Slicing)))
            .or_else(|| ReduceOp::build(name, src).map(|r| r.map(OpKind::Reduce)))
            .or_else(|| DotOp::build(name, src).map(|r| r.map(OpKind::Dot)))
            .or_else(|| CallOp::build(name, src).map(|r| r.map(OpKind::Call)))
            .or_else(|| ControlOp::build(name, src).map(|r| r.map(OpKind::Control)))
            .or_else(|| ScatterOp::build(name, src).map(|r| r.map(OpKind::Scatter)))
            .or_else(|| ConvolutionOp::build(name, src).map(|r| r.map(OpKind::Convolution)))
            .or_else(|| ReduceWindowOp::build(name, src).map(|r| r.map(OpKind::ReduceWindow)))
            .or_else(|| LinalgOp::build(name, src).map(|r| r.map(OpKind::Linalg)))
            .or_else(|| SortOp::build(name, src).map(|r| r.map(OpKind::Sort)))
            .or_else(|| CallbackOp::build(name, src).map(|r| r.map(OpKind::Callback)))
            .or_else(|| CollectiveOp::build(name, src).map(|r| r.map(OpKind::Collective)));
        r.unwrap_or_else(|| Err(DialectError::UnknownOp(format!("quabla.{name}"))))
    }

    /// Rebuilds a kind from its name (without prefix), its attributes as MLIR text and its
    /// result types. `quabla.constant` is built by the importer (dense data is read through
    /// the C API), not here.
    pub fn from_parts(name: &str, attrs: &[(String, String)], results: &[TensorType]) -> Result<OpKind> {
        let kind = OpKind::build(name, &MlirAttrs { attrs, results })?;
        // Every `quabla.*` op has one result; calls and control flow carry their result types.
        if !matches!(kind, OpKind::Call(_) | OpKind::Control(_) | OpKind::Linalg(_)) && results.len() != 1 {
            return Err(DialectError::Structure(format!("'quabla.{name}' op: expects one result, got {}", results.len())));
        }
        // Linear-algebra decompositions have a fixed number of results.
        if let OpKind::Linalg(_) = &kind {
            let want = LinalgOp::result_count(name);
            if results.len() != want {
                return Err(DialectError::Structure(format!("'quabla.{name}' op: expects {want} results, got {}", results.len())));
            }
        }
        Ok(kind)
    }
}

/// Attributes of an op read from MLIR: (name, attribute text) pairs and the result types.
struct MlirAttrs<'a> {
    attrs: &'a [(String, String)],
    results: &'a [TensorType],
}

impl MlirAttrs<'_> {
    fn get(&self, op: &str, key: &str) -> Result<&str> {
        self.attrs.iter().find(|(a, _)| a == key).map(|(_, v)| v.as_str()).ok_or_else(|| table::attr_err(op, key, "missing"))
    }
}

impl AttrSource for MlirAttrs<'_> {
    fn results(&self) -> Option<&[TensorType]> {
        Some(self.results)
    }
    fn keys(&self) -> Vec<String> {
        self.attrs.iter().map(|(k, _)| k.clone()).collect()
    }
    fn int(&self, op: &str, key: &str) -> Result<i64> {
        let v = self.get(op, key)?;
        parse_i64(v).ok_or_else(|| table::attr_err(op, key, format!("expected an i64 integer, got `{v}`")))
    }
    fn ints(&self, op: &str, key: &str) -> Result<Vec<i64>> {
        let v = self.get(op, key)?;
        parse_i64_array(v).ok_or_else(|| table::attr_err(op, key, format!("expected array<i64: ...>, got `{v}`")))
    }
    fn string(&self, op: &str, key: &str) -> Result<String> {
        let v = self.get(op, key)?;
        Ok(v.trim_matches('"').to_string())
    }
    fn dtype(&self, op: &str, key: &str) -> Result<DType> {
        Err(table::attr_err(op, key, "carried by the result type"))
    }
    fn tensor_type(&self, op: &str, key: &str) -> Result<TensorType> {
        Err(table::attr_err(op, key, "carried by the result type"))
    }
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
        let d = DotDims { lhs_batching_dimensions: vec![0], rhs_batching_dimensions: vec![0], lhs_contracting_dimensions: vec![2], rhs_contracting_dimensions: vec![1] };
        assert_eq!(OpKind::Dot(DotOp::DotGeneral { dims: d }).infer(&[&l, &r]).unwrap()[0].shape, vec![2, 3, 5]);
    }
}

//! `convert-quabla-to-stablehlo`: exports a quabla module as StableHLO text that XLA (jaxlib)
//! and IREE parse, verify and run. One quabla op becomes one StableHLO op wherever
//! StableHLO's semantics equal quabla's; where they differ (integer division by zero, `powi`,
//! argmax's tie and NaN rules) a short fixed sequence of StableHLO ops states quabla's
//! semantics explicitly. One file per op family, matching dialect/src/ops/.
//!
//! StableHLO is not registered in quabla's MLIR context, so the export is text written from
//! the in-memory IR, in MLIR's generic op form (`"stablehlo.add"(%a, %b) : (..) -> ..`), and is
//! never parsed back here. It is therefore a terminal step: `quabla-opt --emit=stablehlo`
//! (or the pipeline element `convert-quabla-to-stablehlo` in last position) runs the quabla
//! pipeline, then this export, and prints the text.
//!
//! Invariants: the module verifies and holds no unexpanded transform functions (run
//! `quabla-autodiff` first); the entry point is the public `func.func @main` (a module whose
//! only public function has another name exports it as `@main`); every other function is
//! private. Each quabla value has one SSA name (`Emitter::name`); ops that move no data
//! (identity reshapes/converts, reductions over no dims) only rename. Every emitted op carries
//! the quabla op's location.
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
pub mod slicing;
pub mod scatter;
pub mod convolution;
pub mod reduce_window;
pub mod sort;

use std::collections::HashMap;
use std::fmt::Write;

use quabla_dialect::{CallOp, DType, Func, Module, Op, OpKind, TensorType, Value};

use crate::linalg::{float_lit, sym};
use crate::LowerError;

/// An SSA value of the output with its type.
#[derive(Clone, Debug, PartialEq)]
pub struct Tv {
    pub name: String,
    pub ty: TensorType,
}

impl Tv {
    pub fn new(name: impl Into<String>, ty: &TensorType) -> Self {
        Tv { name: name.into(), ty: ty.clone() }
    }
}

/// Text sink for one function body: fresh SSA names, the quabla value -> SSA name map, the
/// location of the op being exported and the nesting depth (reduction regions).
pub struct Emitter {
    out: String,
    next: usize,
    names: Vec<String>,
    loc: Option<String>,
    depth: usize,
}

impl Emitter {
    fn new(f: &Func) -> Self {
        Emitter { out: String::new(), next: 0, names: (0..f.types.len()).map(|i| format!("%v{i}")).collect(), loc: None, depth: 0 }
    }

    /// A fresh SSA name.
    pub fn fresh(&mut self) -> String {
        self.next += 1;
        format!("%t{}", self.next)
    }

    /// The SSA name of quabla value `v`.
    pub fn name(&self, v: Value) -> String {
        self.names[v.0 as usize].clone()
    }

    /// Quabla value `v` of `f` with its type.
    pub fn get(&self, f: &Func, v: Value) -> Tv {
        Tv::new(self.name(v), f.ty(v))
    }

    /// Makes `v` refer to an existing SSA name.
    pub fn alias(&mut self, v: Value, name: String) {
        self.names[v.0 as usize] = name;
    }

    fn indent(&mut self) {
        for _ in 0..self.depth + 2 {
            self.out.push_str("  ");
        }
    }

    /// Writes one op line, followed by the current location.
    pub fn line(&mut self, s: impl AsRef<str>) {
        self.indent();
        self.out.push_str(s.as_ref());
        if let Some(l) = &self.loc {
            let _ = write!(self.out, " loc({l})");
        }
        self.out.push('\n');
    }

    /// Writes a line that carries no location (region openers, block headers).
    fn raw_line(&mut self, s: impl AsRef<str>) {
        self.indent();
        self.out.push_str(s.as_ref());
        self.out.push('\n');
    }

    /// `%r = "name"(args) {attrs} : (arg types) -> result`: a one-result op in generic form.
    pub fn op(&mut self, name: &str, args: &[&Tv], attrs: &[(&str, String)], result: &TensorType) -> Tv {
        let r = self.fresh();
        let text = generic_op(name, args, attrs, std::slice::from_ref(result));
        self.line(format!("{r} = {text}"));
        Tv::new(r, result)
    }

    /// A generic op with any number of results; returns their names.
    pub fn op_n(&mut self, name: &str, args: &[&Tv], attrs: &[(&str, String)], results: &[TensorType]) -> Vec<Tv> {
        let text = generic_op(name, args, attrs, results);
        if results.is_empty() {
            self.line(text);
            return vec![];
        }
        let r = self.fresh();
        if results.len() == 1 {
            self.line(format!("{r} = {text}"));
            return vec![Tv::new(r, &results[0])];
        }
        self.line(format!("{r}:{} = {text}", results.len()));
        results.iter().enumerate().map(|(i, t)| Tv::new(format!("{r}#{i}"), t)).collect()
    }

    /// `stablehlo.constant` of type `ty` with every element `text` (MLIR element syntax).
    pub fn splat(&mut self, ty: &TensorType, text: &str) -> Tv {
        self.op("stablehlo.constant", &[], &[("value", format!("dense<{text}> : {ty}"))], ty)
    }

    /// A splat of the number `v` (exact for the integer and float values used here).
    pub fn splat_num(&mut self, ty: &TensorType, v: f64) -> Tv {
        let text = scalar_text(ty.dtype, v);
        self.splat(ty, &text)
    }

    /// A multi-input reduction op with one region: `"name"(args) ({ ^bb0(block args): body;
    /// "stablehlo.return"(..) }) {attrs} : (..) -> (results)`. `body` receives the block
    /// arguments (0-d tensors of `block_types`) and returns the values it yields.
    pub fn region_op(
        &mut self,
        name: &str,
        args: &[&Tv],
        attrs: &[(&str, String)],
        block_types: &[TensorType],
        results: &[TensorType],
        body: impl FnOnce(&mut Emitter, &[Tv]) -> Vec<Tv>,
    ) -> Vec<Tv> {
        let r = self.fresh();
        let lhs = if results.len() == 1 { r.clone() } else { format!("{r}:{}", results.len()) };
        let names: Vec<&str> = args.iter().map(|a| a.name.as_str()).collect();
        self.raw_line(format!("{lhs} = \"{name}\"({}) ({{", names.join(", ")));
        let bargs: Vec<Tv> = block_types.iter().map(|t| Tv::new(self.fresh(), t)).collect();
        let decl: Vec<String> = bargs.iter().map(|a| format!("{}: {}", a.name, a.ty)).collect();
        self.raw_line(format!("^bb0({}):", decl.join(", ")));
        self.depth += 1;
        let ys = body(self, &bargs);
        let yn: Vec<&str> = ys.iter().map(|y| y.name.as_str()).collect();
        let yt: Vec<String> = ys.iter().map(|y| y.ty.to_string()).collect();
        self.line(format!("\"stablehlo.return\"({}) : ({}) -> ()", yn.join(", "), yt.join(", ")));
        self.depth -= 1;
        let at: Vec<String> = args.iter().map(|a| a.ty.to_string()).collect();
        let rt: Vec<String> = results.iter().map(|t| t.to_string()).collect();
        self.line(format!("}}){} : ({}) -> ({})", attr_dict(attrs), at.join(", "), rt.join(", ")));
        if results.len() == 1 {
            vec![Tv::new(r, &results[0])]
        } else {
            results.iter().enumerate().map(|(i, t)| Tv::new(format!("{r}#{i}"), t)).collect()
        }
    }
}

/// `{a = x, b = y}` (empty when there are no attributes), with a leading space.
fn attr_dict(attrs: &[(&str, String)]) -> String {
    if attrs.is_empty() {
        return String::new();
    }
    let a: Vec<String> = attrs.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    format!(" {{{}}}", a.join(", "))
}

/// The generic form of an op without regions.
fn generic_op(name: &str, args: &[&Tv], attrs: &[(&str, String)], results: &[TensorType]) -> String {
    let names: Vec<&str> = args.iter().map(|a| a.name.as_str()).collect();
    let at: Vec<String> = args.iter().map(|a| a.ty.to_string()).collect();
    let rt: Vec<String> = results.iter().map(|t| t.to_string()).collect();
    let res = if results.len() == 1 { rt[0].clone() } else { format!("({})", rt.join(", ")) };
    format!("\"{name}\"({}){} : ({}) -> {res}", names.join(", "), attr_dict(attrs), at.join(", "))
}

/// `array<i64: a, b>` (`array<i64>` when empty): StableHLO's dense i64 array attributes.
pub fn array(v: &[i64]) -> String {
    if v.is_empty() {
        "array<i64>".into()
    } else {
        format!("array<i64: {}>", list(v))
    }
}

/// `a, b, c`.
pub fn list(v: &[i64]) -> String {
    v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ")
}

/// `v : i64`.
pub fn int_attr(v: i64) -> String {
    format!("{v} : i64")
}

/// The MLIR element text of the number `v` in dtype `d` (hex bit patterns for non-finite
/// floats, `true`/`false` for i1).
pub fn scalar_text(d: DType, v: f64) -> String {
    match d {
        DType::F32 | DType::F64 => float_lit(d, v),
        DType::I1 => (if v != 0.0 { "true" } else { "false" }).into(),
        DType::I32 | DType::I64 | DType::U8 | DType::U32 => format!("{}", v as i64),
    }
}

/// The smallest value of an integer dtype as element text.
pub fn int_min_text(d: DType) -> String {
    match d {
        DType::I32 => i32::MIN.to_string(),
        DType::U8 | DType::U32 => "0".to_string(),
        _ => i64::MIN.to_string(),
    }
}

/// The largest value of an integer dtype as element text.
pub fn int_max_text(d: DType) -> String {
    match d {
        DType::I32 => i32::MAX.to_string(),
        DType::U8 => u8::MAX.to_string(),
        DType::U32 => u32::MAX.to_string(),
        _ => i64::MAX.to_string(),
    }
}

/// Exports one op, binding its results. Exhaustive over [`OpKind`].
fn export_op(e: &mut Emitter, names: &HashMap<String, String>, f: &Func, o: &Op) -> Result<(), LowerError> {
    e.loc = o.loc.as_ref().map(|l| l.to_string());
    let one = |r: Result<Tv, LowerError>| r.map(|r| vec![r]);
    let rs = match &o.kind {
        OpKind::Elementwise(x) => one(elementwise::lower(e, f, o, x)),
        OpKind::Constant(x) => one(constant::lower(e, x)),
        OpKind::Layout(x) => one(layout::lower(e, f, o, x)),
        OpKind::Slicing(x) => one(slicing::lower(e, f, o, x)),
        OpKind::Reduce(x) => one(reduce::lower(e, f, o, x)),
        OpKind::Dot(x) => one(dot::lower(e, f, o, x)),
        OpKind::Call(CallOp::Call { callee, results }) => call::lower_call(e, names, f, o, callee, results),
        OpKind::Call(CallOp::CustomJvp { .. }) | OpKind::Call(CallOp::CustomVjp { .. }) => call::lower_custom(e, names, f, o),
        OpKind::Control(x) => control::lower(e, names, f, o, x),
        OpKind::Scatter(x) => one(scatter::lower(e, f, o, x)),
        OpKind::Convolution(x) => one(convolution::lower(e, f, o, x)),
        OpKind::ReduceWindow(x) => one(reduce_window::lower(e, f, o, x)),
        OpKind::Linalg(x) => linalg::lower(e, f, o, x),
        OpKind::Sort(x) => one(sort::lower(e, f, o, x)),
        OpKind::Callback(x) => one(callback::lower(e, f, o, x)),
        OpKind::Collective(x) => one(collective::lower(e, f, o, x)),
    }?;
    for (v, r) in o.results.iter().zip(rs) {
        e.alias(*v, r.name);
    }
    e.loc = None;
    Ok(())
}

/// Writes `f` as a `func.func` named `name`.
fn export_func(out: &mut String, names: &HashMap<String, String>, f: &Func, name: &str, public: bool) -> Result<(), LowerError> {
    let mut e = Emitter::new(f);
    for op in &f.ops {
        export_op(&mut e, names, f, op)?;
    }
    let params: Vec<String> = f.params.iter().map(|v| format!("%v{}: {}", v.0, f.ty(*v))).collect();
    let rt: Vec<String> = f.result_types().iter().map(|t| t.to_string()).collect();
    let vis = if public { "" } else { "private " };
    let _ = writeln!(out, "  func.func {vis}{}({}) -> ({}) {{", sym(name), params.join(", "), rt.join(", "));
    out.push_str(&e.out);
    let outs: Vec<String> = f.outputs.iter().map(|v| e.name(*v)).collect();
    let _ = writeln!(out, "    \"func.return\"({}) : ({}) -> ()", outs.join(", "), rt.join(", "));
    let loc = f.loc.as_ref().map(|l| format!(" loc({l})")).unwrap_or_default();
    let _ = writeln!(out, "  }}{loc}");
    Ok(())
}

/// The function exported as `@main`: the public `@main`, or else the only public function.
fn entry(m: &Module) -> Result<&Func, LowerError> {
    if let Some(f) = m.func("main") {
        if f.public {
            return Ok(f);
        }
    }
    let public: Vec<&Func> = m.funcs.iter().filter(|f| f.public).collect();
    match public.as_slice() {
        [f] => Ok(f),
        _ => Err(LowerError::NoEntryPoint { public: public.iter().map(|f| f.name.clone()).collect() }),
    }
}

/// Exports `m` (verified first) as a StableHLO module in generic form: the entry point as the
/// public `func.func @main`, every other function private, calls as `func.call`.
///
/// Errors: invalid IR, unexpanded transform functions (run `quabla-autodiff` first), no
/// entry point, or an op without a StableHLO form (`LowerError::Unsupported` naming it).
pub fn export_module(m: &Module) -> Result<String, LowerError> {
    m.verify()?;
    if let Some((f, t)) = m.funcs.iter().find_map(|f| f.transform.as_ref().map(|t| (f, t))) {
        return Err(LowerError::UnexpandedTransform { func: f.name.clone(), kind: t.kind.name(), of: t.of.clone(), by: crate::Lowering::StableHlo });
    }
    let main = entry(m)?;
    // Output names: the entry becomes `main`; a private function already called `main` moves aside.
    let mut names: HashMap<String, String> = m.funcs.iter().map(|f| (f.name.clone(), f.name.clone())).collect();
    if main.name != "main" {
        if m.func("main").is_some() {
            let fresh = (1..).map(|i| format!("main_{i}")).find(|n| m.func(n).is_none()).unwrap_or_default();
            names.insert("main".into(), fresh);
        }
        names.insert(main.name.clone(), "main".into());
    }
    let mut out = String::from("module {\n");
    for f in &m.funcs {
        export_func(&mut out, &names, f, &names[&f.name], std::ptr::eq(f, main))?;
    }
    out.push_str("}\n");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use quabla_dialect::{BinaryOp, ConstantOp, ElementwiseOp, Literal, Transform, TransformKind};

    #[test]
    fn entry_and_names() {
        let t = TensorType::new(DType::F32, [3]);
        let mut g = Func::new("g", std::slice::from_ref(&t));
        let r = g.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add }), &[g.params[0], g.params[0]], None).unwrap();
        g.outputs = vec![r];
        let mut h = Func::new("main", std::slice::from_ref(&t));
        h.public = false;
        let c = h.push1(OpKind::Constant(ConstantOp::Constant { value: Literal::splat(t.clone(), 2.0) }), &[], None).unwrap();
        h.outputs = vec![c];
        let m = Module { funcs: vec![g, h] };
        let s = export_module(&m).unwrap();
        assert!(s.contains("func.func @main(%v0: tensor<3xf32>) -> (tensor<3xf32>)"), "{s}");
        assert!(s.contains("func.func private @main_1"), "{s}");
        assert!(s.contains("\"stablehlo.add\"(%v0, %v0) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>"), "{s}");
    }

    #[test]
    fn no_entry_and_transforms_are_errors() {
        let t = TensorType::new(DType::F64, []);
        let mut a = Func::new("a", std::slice::from_ref(&t));
        a.outputs = vec![a.params[0]];
        let mut b = a.clone();
        b.name = "b".into();
        let e = export_module(&Module { funcs: vec![a.clone(), b] }).unwrap_err().to_string();
        assert!(e.contains("@a, @b"), "{e}");
        let d = Func::declaration("da", &[t.clone(), t.clone()], &[t.clone(), t.clone()], Transform { kind: TransformKind::Vjp, of: "a".into() });
        let e = export_module(&Module { funcs: vec![a, d] }).unwrap_err().to_string();
        assert!(e.contains("quabla.vjp") && e.contains("run quabla-autodiff"), "{e}");
    }
}

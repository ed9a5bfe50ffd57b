//! The in-memory form of a quabla module: functions of SSA ops over tensor values, each
//! op an [`OpKind`] with its operands and result values. Passes import the MLIR module
//! into this form (`mlir::import_module`), transform it with exhaustive matches on
//! `OpKind`, and write it back as MLIR (`Module::to_mlir`). The tracer builds it directly.
//!
//! Invariants: every value is defined once (a parameter or an op result) before it is used;
//! `Func::types[v]` is the type of value `v`; every op's result types equal its shape rule.
use std::collections::{HashMap, HashSet};
use std::fmt::Write;
use std::sync::Arc;

use crate::error::{DialectError, Result, Violation};
use crate::ops::{call, CallOp, ControlOp, OpKind};
use crate::types::TensorType;

/// An SSA value of a function (index into `Func::types`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Value(pub u32);

/// Source location text as MLIR prints it inside `loc(...)`, e.g. `"model.py":12:5`.
pub type Loc = Option<Arc<str>>;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Op {
    pub kind: OpKind,
    pub operands: Vec<Value>,
    pub results: Vec<Value>,
    /// The op's regions (empty for most ops), each one block isolated from above.
    pub regions: Vec<Body>,
    pub loc: Loc,
}

/// The single block of a region: parameters, ops and the values it yields. A body is
/// isolated from above: its ops use only its own parameters and the results of earlier ops
/// of the same body (values an op needs from outside are explicit operands of the op that
/// owns the region, bound to the body's parameters). Its values are numbered in the
/// enclosing function's value table (`Func::types`), so ids stay unique in a function.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Body {
    pub params: Vec<Value>,
    pub ops: Vec<Op>,
    pub outputs: Vec<Value>,
}

impl Op {
    /// An op without regions.
    pub fn new(kind: OpKind, operands: Vec<Value>, results: Vec<Value>, loc: Loc) -> Op {
        Op { kind, operands, results, regions: vec![], loc }
    }
}

impl Body {
    /// Calls `f` on every op of the body, nested regions included (pre-order).
    pub fn walk<'a>(&'a self, f: &mut impl FnMut(&'a Op)) {
        walk_ops(&self.ops, f)
    }

    /// Calls `f` on every op of the body, nested regions included (pre-order).
    pub fn walk_mut(&mut self, f: &mut impl FnMut(&mut Op)) {
        walk_ops_mut(&mut self.ops, f)
    }
}

/// Calls `f` on every op of `ops` and of their regions, recursively (pre-order).
pub fn walk_ops<'a>(ops: &'a [Op], f: &mut impl FnMut(&'a Op)) {
    for op in ops {
        f(op);
        for r in &op.regions {
            walk_ops(&r.ops, f);
        }
    }
}

/// Calls `f` on every op of `ops` and of their regions, recursively (pre-order); `f` runs on
/// an op before its regions are visited.
pub fn walk_ops_mut(ops: &mut [Op], f: &mut impl FnMut(&mut Op)) {
    for op in ops {
        f(op);
        for r in &mut op.regions {
            walk_ops_mut(&mut r.ops, f);
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Func {
    pub name: String,
    /// Public functions are entry points (`@main`); private ones are callees.
    pub public: bool,
    pub params: Vec<Value>,
    pub ops: Vec<Op>,
    pub outputs: Vec<Value>,
    pub types: Vec<TensorType>,
    pub loc: Loc,
    /// Set on transform functions: bodiless declarations whose body `quabla-autodiff`
    /// derives from another function (see [`Transform`]).
    pub transform: Option<Transform>,
    /// The result types of a transform declaration (it has no body to take them from).
    pub outputs_decl: Vec<TensorType>,
}

/// Which transform a transform function computes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TransformKind {
    /// Forward mode: `(primals, tangents) -> (outputs, output tangents)`.
    Jvp,
    /// Reverse mode: `(primals, output cotangents) -> (outputs, input cotangents)`.
    Vjp,
    /// Batching: parameter i has an extra dim of extent `size` at `in_axes[i]` (or none),
    /// result j has it at `out_axes[j]` (or none: the result must not depend on a mapped input).
    /// `axis_name` names the axis for the collectives of the body (`quabla.psum`, ...): the
    /// expansion resolves those naming it.
    Vmap { in_axes: Vec<Option<i64>>, out_axes: Vec<Option<i64>>, size: i64, axis_name: Option<crate::ops::AxisName> },
}

impl TransformKind {
    pub fn name(&self) -> &'static str {
        match self {
            TransformKind::Jvp => "jvp",
            TransformKind::Vjp => "vjp",
            TransformKind::Vmap { .. } => "vmap",
        }
    }
}

/// Inserts `size` at `axis` of `t` (no-op for `None`).
pub fn insert_axis(t: &TensorType, axis: Option<i64>, size: i64) -> TensorType {
    let mut s = t.shape.clone();
    if let Some(a) = axis {
        s.insert(a as usize, size);
    }
    TensorType::new(t.dtype, s)
}

/// A transform function: `func.func private @g(...) attributes {quabla.transform = "vjp",
/// quabla.of = @f}` is the VJP of `@f`. Only float parameters and results carry tangents or
/// cotangents, in order: a JVP of `f: (P) -> (R)` has type `(P, T(P_float)) -> (R, T(R_float))`;
/// a VJP has type `(P, C(R_float)) -> (R, C(P_float))` (`transform_c1`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Transform {
    pub kind: TransformKind,
    pub of: String,
}

impl Transform {
    /// The signature of this transform of a function with the given parameter and result types.
    pub fn signature(&self, params: &[TensorType], results: &[TensorType]) -> (Vec<TensorType>, Vec<TensorType>) {
        let floats = |ts: &[TensorType]| ts.iter().filter(|t| t.dtype.is_float()).cloned().collect::<Vec<_>>();
        let mut p = params.to_vec();
        let mut r = results.to_vec();
        match &self.kind {
            TransformKind::Vmap { in_axes, out_axes, size, .. } => {
                p = params.iter().zip(in_axes).map(|(t, a)| insert_axis(t, *a, *size)).collect();
                r = results.iter().zip(out_axes).map(|(t, a)| insert_axis(t, *a, *size)).collect();
            }
            TransformKind::Jvp => {
                p.extend(floats(params));
                r.extend(floats(results));
            }
            TransformKind::Vjp => {
                p.extend(floats(results));
                r.extend(floats(params));
            }
        }
        (p, r)
    }
}

impl Func {
    /// A function with parameters of the given types and an empty body.
    pub fn new(name: impl Into<String>, params: &[TensorType]) -> Func {
        let mut f = Func { name: name.into(), public: true, params: vec![], ops: vec![], outputs: vec![], types: vec![], loc: None, transform: None, outputs_decl: vec![] };
        for t in params {
            let v = f.new_value(t.clone());
            f.params.push(v);
        }
        f
    }

    pub fn new_value(&mut self, ty: TensorType) -> Value {
        self.types.push(ty);
        Value(self.types.len() as u32 - 1)
    }

    pub fn ty(&self, v: Value) -> &TensorType {
        &self.types[v.0 as usize]
    }

    /// Appends an op, computing its result types with the op's shape rule.
    pub fn push(&mut self, kind: OpKind, operands: &[Value], loc: Loc) -> Result<Vec<Value>> {
        let op = self.make_op(kind, operands, vec![], loc)?;
        let results = op.results.clone();
        self.ops.push(op);
        Ok(results)
    }

    /// Appends an op with regions, checking its shape rule and its regions' signatures
    /// (`OpKind::check_regions`).
    pub fn push_with_regions(&mut self, kind: OpKind, operands: &[Value], regions: Vec<Body>, loc: Loc) -> Result<Vec<Value>> {
        let op = self.make_op(kind, operands, regions, loc)?;
        let results = op.results.clone();
        self.ops.push(op);
        Ok(results)
    }

    /// An op on `operands` with fresh result values of the types its shape rule gives;
    /// rule violations carry the op's location.
    fn make_op(&mut self, kind: OpKind, operands: &[Value], regions: Vec<Body>, loc: Loc) -> Result<Op> {
        let tys: Vec<&TensorType> = operands.iter().map(|v| self.ty(*v)).collect();
        let out = kind.infer(&tys).and_then(|out| kind.check_regions(&tys, &out, &regions, &self.types).map(|_| out)).map_err(|e| e.at(loc.clone()))?;
        let results: Vec<Value> = out.into_iter().map(|t| self.new_value(t)).collect();
        Ok(Op { kind, operands: operands.to_vec(), results, regions, loc })
    }

    /// A new region body with parameters of the given types (values of this function).
    pub fn new_body(&mut self, params: &[TensorType]) -> Body {
        Body { params: params.iter().map(|t| self.new_value(t.clone())).collect(), ops: vec![], outputs: vec![] }
    }

    /// Calls `f` on every op of the function, nested regions included (pre-order).
    pub fn walk<'a>(&'a self, f: &mut impl FnMut(&'a Op)) {
        walk_ops(&self.ops, f)
    }

    /// Calls `f` on every op of the function, nested regions included (pre-order).
    pub fn walk_mut(&mut self, f: &mut impl FnMut(&mut Op)) {
        walk_ops_mut(&mut self.ops, f)
    }

    /// Appends an op (with its regions, possibly none) to a region body under construction;
    /// its values live in this function. Checks the shape rule and the regions' signatures.
    pub fn push_into(&mut self, body: &mut Body, kind: OpKind, operands: &[Value], regions: Vec<Body>, loc: Loc) -> Result<Vec<Value>> {
        let op = self.make_op(kind, operands, regions, loc)?;
        let results = op.results.clone();
        body.ops.push(op);
        Ok(results)
    }

    /// [`Func::push`] for single-result ops.
    pub fn push1(&mut self, kind: OpKind, operands: &[Value], loc: Loc) -> Result<Value> {
        Ok(self.push(kind, operands, loc)?[0])
    }

    pub fn param_types(&self) -> Vec<TensorType> {
        self.params.iter().map(|v| self.ty(*v).clone()).collect()
    }

    pub fn result_types(&self) -> Vec<TensorType> {
        if self.transform.is_some() {
            return self.outputs_decl.clone();
        }
        self.outputs.iter().map(|v| self.ty(*v).clone()).collect()
    }

    /// A bodiless transform declaration with the given signature.
    pub fn declaration(name: impl Into<String>, params: &[TensorType], results: &[TensorType], transform: Transform) -> Func {
        let mut f = Func::new(name, params);
        f.public = false;
        f.transform = Some(transform);
        f.outputs_decl = results.to_vec();
        f
    }

    /// Writes the function as MLIR (func.func with quabla ops in generic form).
    pub fn write_mlir(&self, s: &mut String) {
        let params: Vec<String> = self.params.iter().map(|v| format!("%{}: {}", v.0, self.ty(*v))).collect();
        let results: Vec<String> = self.result_types().iter().map(|t| t.to_string()).collect();
        let vis = if self.public { "" } else { "private " };
        if let Some(t) = &self.transform {
            let ps: Vec<String> = self.params.iter().map(|v| self.ty(*v).to_string()).collect();
            let rs: Vec<String> = self.outputs_decl.iter().map(|t| t.to_string()).collect();
            let mut extra = String::new();
            if let TransformKind::Vmap { in_axes, out_axes, size, axis_name } = &t.kind {
                let ax = |v: &[Option<i64>]| v.iter().map(|a| a.unwrap_or(-1).to_string()).collect::<Vec<_>>().join(", ");
                let arr = |v: &[Option<i64>]| if v.is_empty() { "array<i64>".to_string() } else { format!("array<i64: {}>", ax(v)) };
                extra = format!(", quabla.axis_size = {size} : i64, quabla.in_axes = {}, quabla.out_axes = {}", arr(in_axes), arr(out_axes));
                if let Some(n) = axis_name {
                    extra = format!(", quabla.axis_name = \"{n}\"{extra}");
                }
            }
            let _ = writeln!(s, "  func.func private @{}({}) -> ({}) attributes {{quabla.of = @{}, quabla.transform = \"{}\"{extra}}}", self.name, ps.join(", "), rs.join(", "), t.of, t.kind.name());
            return;
        }
        let _ = write!(s, "  func.func {vis}@{}({})", self.name, params.join(", "));
        if !results.is_empty() {
            let _ = write!(s, " -> ({})", results.join(", "));
        }
        s.push_str(" {\n");
        let mut names = Names::default();
        self.write_ops(s, &self.ops, 2, &mut names);
        let outs: Vec<String> = self.outputs.iter().map(|v| names.get(*v)).collect();
        if outs.is_empty() {
            s.push_str("    return\n");
        } else {
            let _ = writeln!(s, "    return {} : {}", outs.join(", "), results.join(", "));
        }
        s.push_str("  }\n");
        // The bodies of custom-derivative calls, outlined as private functions.
        for g in std::mem::take(&mut names.outlined) {
            g.write_mlir(s);
        }
    }

    fn write_ops(&self, s: &mut String, ops: &[Op], depth: usize, names: &mut Names) {
        for op in ops {
            self.write_op(s, op, depth, names);
        }
    }

    /// `scf.yield` of a region body's outputs.
    fn write_yield(&self, s: &mut String, pad: &str, outputs: &[Value], names: &Names) {
        let outs: Vec<String> = outputs.iter().map(|v| names.get(*v)).collect();
        if outs.is_empty() {
            let _ = writeln!(s, "{pad}  scf.yield");
        } else {
            let _ = writeln!(s, "{pad}  scf.yield {} : {}", outs.join(", "), self.types_of(outputs));
        }
    }

    fn types_of(&self, vs: &[Value]) -> String {
        vs.iter().map(|v| self.ty(*v).to_string()).collect::<Vec<_>>().join(", ")
    }

    fn write_op(&self, s: &mut String, op: &Op, depth: usize, names: &mut Names) {
        let pad = "  ".repeat(depth);
        let loc = |s: &mut String| {
            if let Some(l) = &op.loc {
                let _ = write!(s, " loc({l})");
            }
            s.push('\n');
        };
        let operands: Vec<String> = op.operands.iter().map(|v| names.get(*v)).collect();
        let lhs = if op.results.is_empty() { String::new() } else { format!("{} = ", op.results.iter().map(|v| names.get(*v)).collect::<Vec<_>>().join(", ")) };
        match &op.kind {
            OpKind::Call(CallOp::Call { callee, .. }) => {
                // Calls are upstream `func.call` (IRDL cannot type heterogeneous variadic operands).
                let _ = write!(s, "{pad}{lhs}func.call @{}({}) : ({}) -> ({})", callee, operands.join(", "), self.types_of(&op.operands), self.types_of(&op.results));
                loc(s);
            }
            OpKind::Call(CallOp::CustomJvp { .. }) | OpKind::Call(CallOp::CustomVjp { .. }) => {
                // A `func.call` of the primal body outlined as `@__qb_custom_<f>_<k>_primal`,
                // naming its rule bodies (outlined the same way, printed after this
                // function) in discardable attributes; the importer folds them back into
                // regions (`mlir::resolve_custom`).
                let stem = format!("{CUSTOM_PREFIX}{}_{}", self.name, names.fresh());
                let jvp = matches!(op.kind, OpKind::Call(CallOp::CustomJvp { .. }));
                let roles: &[&str] = if jvp { &["primal", "jvp"] } else { &["primal", "fwd", "bwd"] };
                for (r, role) in op.regions.iter().zip(roles) {
                    let g = Func { name: format!("{stem}_{role}"), public: false, params: r.params.clone(), ops: r.ops.clone(), outputs: r.outputs.clone(), types: self.types.clone(), loc: None, transform: None, outputs_decl: vec![] };
                    names.outlined.push(g);
                }
                let attrs = if jvp { format!("{{quabla.custom_jvp = @{stem}_jvp}}") } else { format!("{{quabla.custom_vjp_bwd = @{stem}_bwd, quabla.custom_vjp_fwd = @{stem}_fwd}}") };
                let _ = write!(s, "{pad}{lhs}func.call @{stem}_primal({}) {attrs} : ({}) -> ({})", operands.join(", "), self.types_of(&op.operands), self.types_of(&op.results));
                loc(s);
            }
            OpKind::Control(ControlOp::If { .. }) => {
                // `scf.if` on an i1 extracted from the 0-d predicate; the bodies' parameters
                // print as the captured operands (scf regions see enclosing values).
                let p = format!("%p{}_{}", op.operands[0].0, names.fresh());
                let _ = write!(s, "{pad}{p} = tensor.extract {}[] : {}", operands[0], self.ty(op.operands[0]));
                loc(s);
                let rt = if op.results.is_empty() { String::new() } else { format!(" -> ({})", self.types_of(&op.results)) };
                let _ = writeln!(s, "{pad}{lhs}scf.if {p}{rt} {{");
                for (i, body) in op.regions.iter().enumerate() {
                    if i == 1 {
                        let _ = writeln!(s, "{pad}}} else {{");
                    }
                    for (bp, outer) in body.params.iter().zip(&op.operands[1..]) {
                        let n = names.get(*outer);
                        names.alias(*bp, n);
                    }
                    self.write_ops(s, &body.ops, depth + 1, names);
                    self.write_yield(s, &pad, &body.outputs, names);
                }
                let _ = write!(s, "{pad}}}");
                loc(s);
            }
            OpKind::Control(ControlOp::Case { .. }) => {
                // `scf.index_switch` on the index extracted from the 0-d operand; cases
                // 0..N-1 are the first bodies, `default` the last (StableHLO's clamping).
                let it = self.ty(op.operands[0]).clone();
                let i = format!("%i{}_{}", op.operands[0].0, names.fresh());
                let _ = write!(s, "{pad}{i} = tensor.extract {}[] : {it}", operands[0]);
                loc(s);
                let ix = format!("%ix{}_{}", op.operands[0].0, names.fresh());
                let _ = write!(s, "{pad}{ix} = arith.index_cast {i} : {} to index", it.dtype);
                loc(s);
                let rt = if op.results.is_empty() { String::new() } else { format!(" -> {}", self.types_of(&op.results)) };
                let _ = writeln!(s, "{pad}{lhs}scf.index_switch {ix}{rt}");
                let last = op.regions.len() - 1;
                for (k, body) in op.regions.iter().enumerate() {
                    if k == last {
                        let _ = writeln!(s, "{pad}default {{");
                    } else {
                        let _ = writeln!(s, "{pad}case {k} {{");
                    }
                    for (bp, outer) in body.params.iter().zip(&op.operands[1..]) {
                        let n = names.get(*outer);
                        names.alias(*bp, n);
                    }
                    self.write_ops(s, &body.ops, depth + 1, names);
                    self.write_yield(s, &pad, &body.outputs, names);
                    let _ = write!(s, "{pad}}}");
                    if k == last {
                        loc(s);
                    } else {
                        s.push('\n');
                    }
                }
            }
            OpKind::Control(ControlOp::While {}) => {
                // `scf.while`: the cond region's parameters are the loop's iteration
                // arguments, its `scf.condition` forwards them to the body region.
                let (cond, body) = (&op.regions[0], &op.regions[1]);
                let inits: Vec<String> = cond.params.iter().zip(&operands).map(|(p, x)| format!("{} = {x}", names.get(*p))).collect();
                let ts = self.types_of(&op.operands);
                let _ = writeln!(s, "{pad}{lhs}scf.while ({}) : ({ts}) -> ({ts}) {{", inits.join(", "));
                self.write_ops(s, &cond.ops, depth + 1, names);
                let c = format!("%c{}_{}", cond.outputs[0].0, names.fresh());
                let _ = writeln!(s, "{pad}  {c} = tensor.extract {}[] : tensor<i1>", names.get(cond.outputs[0]));
                let fwd: Vec<String> = cond.params.iter().map(|v| names.get(*v)).collect();
                if fwd.is_empty() {
                    let _ = writeln!(s, "{pad}  scf.condition({c})");
                } else {
                    let _ = writeln!(s, "{pad}  scf.condition({c}) {} : {ts}", fwd.join(", "));
                }
                let args: Vec<String> = body.params.iter().map(|v| format!("{}: {}", names.get(*v), self.ty(*v))).collect();
                let _ = writeln!(s, "{pad}}} do {{");
                let _ = writeln!(s, "{pad}^bb0({}):", args.join(", "));
                self.write_ops(s, &body.ops, depth + 1, names);
                self.write_yield(s, &pad, &body.outputs, names);
                let _ = write!(s, "{pad}}}");
                loc(s);
            }
            _ => {
                let _ = write!(s, "{pad}{lhs}\"quabla.{}\"({})", op.kind.name(), operands.join(", "));
                let attrs = op.kind.mlir_attrs();
                if !attrs.is_empty() {
                    let a: Vec<String> = attrs.iter().map(|(k, v)| format!("{k} = {v}")).collect();
                    let _ = write!(s, " {{{}}}", a.join(", "));
                }
                let outs: Vec<String> = op.results.iter().map(|v| self.ty(*v).to_string()).collect();
                let out = if outs.len() == 1 { outs[0].clone() } else { format!("({})", outs.join(", ")) };
                let _ = write!(s, " : ({}) -> {}", self.types_of(&op.operands), out);
                loc(s);
            }
        }
    }

    /// Number of ops in the body.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}

/// SSA names used when printing: `%<id>`, except region parameters, which print as the
/// value they are bound to.
#[derive(Default)]
struct Names {
    alias: HashMap<Value, String>,
    next: usize,
    /// Bodies of custom-derivative calls to print as private functions after this one.
    outlined: Vec<Func>,
}

/// The name prefix of the private functions that spell the bodies of custom-derivative calls
/// in MLIR (`@__qb_custom_<f>_<k>_{primal,jvp,fwd,bwd}`); the importer turns them back into
/// regions and drops them.
pub const CUSTOM_PREFIX: &str = "__qb_custom_";

impl Names {
    fn fresh(&mut self) -> usize {
        self.next += 1;
        self.next
    }
    fn get(&self, v: Value) -> String {
        self.alias.get(&v).cloned().unwrap_or_else(|| format!("%{}", v.0))
    }
    fn alias(&mut self, v: Value, name: String) {
        self.alias.insert(v, name);
    }
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct Module {
    pub funcs: Vec<Func>,
}

impl Module {
    pub fn func(&self, name: &str) -> Option<&Func> {
        self.funcs.iter().find(|f| f.name == name)
    }

    pub fn func_mut(&mut self, name: &str) -> Option<&mut Func> {
        self.funcs.iter_mut().find(|f| f.name == name)
    }

    /// A function name not yet used in the module, derived from `base`.
    pub fn fresh_name(&self, base: &str) -> String {
        if self.func(base).is_none() {
            return base.to_string();
        }
        (1..).map(|i| format!("{base}_{i}")).find(|n| self.func(n).is_none()).unwrap()
    }

    /// Names of the functions reachable from `roots` (included) through calls and transform
    /// targets.
    pub fn reachable<'a>(&self, roots: impl IntoIterator<Item = &'a str>) -> HashSet<String> {
        let mut seen: HashSet<String> = HashSet::new();
        let mut stack: Vec<String> = roots.into_iter().map(str::to_string).collect();
        while let Some(n) = stack.pop() {
            if !seen.insert(n.clone()) {
                continue;
            }
            if let Some(f) = self.func(&n) {
                if let Some(t) = &f.transform {
                    stack.push(t.of.clone());
                }
                f.walk(&mut |op| {
                    if let OpKind::Call(CallOp::Call { callee, .. }) = &op.kind {
                        stack.push(callee.clone());
                    }
                });
            }
        }
        seen
    }

    /// The module as MLIR text, parseable by quabla-opt and stock mlir-opt with the IRDL file.
    pub fn to_mlir(&self) -> String {
        let mut s = String::from("module {\n");
        for f in &self.funcs {
            f.write_mlir(&mut s);
        }
        s.push_str("}\n");
        s
    }

    /// Checks every invariant: unique function names, values defined before use and once,
    /// result types equal to the shape rule, calls matching their callee and no recursion.
    pub fn verify(&self) -> Result<()> {
        let mut names = HashSet::new();
        for f in &self.funcs {
            if !names.insert(f.name.as_str()) {
                return Err(DialectError::Structure(format!("function @{} is defined twice", f.name)));
            }
        }
        for f in &self.funcs {
            self.verify_func(f).map_err(|e| with_func(e, &f.name))?;
        }
        self.check_no_recursion()
    }

    fn verify_func(&self, f: &Func) -> Result<()> {
        if let Some(t) = &f.transform {
            let g = self.func(&t.of).ok_or_else(|| DialectError::Structure(format!("transform @{} refers to unknown function @{}", f.name, t.of)))?;
            if g.public {
                // Allowed: transforms of entry points are common (grad of main).
            }
            if let TransformKind::Vmap { in_axes, out_axes, size, .. } = &t.kind {
                let gp = g.param_types();
                let gr = g.result_types();
                let bad = in_axes.len() != gp.len()
                    || out_axes.len() != gr.len()
                    || *size < 1
                    || in_axes.iter().zip(&gp).chain(out_axes.iter().zip(&gr)).any(|(a, t)| a.is_some_and(|a| a < 0 || a as usize > t.rank()));
                if bad {
                    return Err(Violation {
                        op: "transform",
                        constraint: "transform_c2",
                        message: format!("vmap @{} of @{}: in_axes {in_axes:?} / out_axes {out_axes:?} must have one entry per parameter/result of @{} within rank, and axis_size {size} must be positive", f.name, t.of, t.of),
                        ..Default::default()
                    }
                    .shape());
                }
            }
            let (p, r) = t.signature(&g.param_types(), &g.result_types());
            if p != f.param_types() || r != f.outputs_decl {
                return Err(Violation {
                    op: "transform",
                    constraint: "transform_c1",
                    message: format!(
                        "@{} ({} of @{}) must have type ({}) -> ({}), has ({}) -> ({})",
                        f.name,
                        t.kind.name(),
                        t.of,
                        call::join(p.iter()),
                        call::join(r.iter()),
                        call::join(f.param_types().iter()),
                        call::join(f.outputs_decl.iter())
                    ),
                    ..Default::default()
                }
                .shape());
            }
            return Ok(());
        }
        let mut defined = vec![false; f.types.len()];
        self.verify_block(f, &f.params, &f.ops, &f.outputs, &mut defined, "return")
    }

    /// Checks one block: values defined once (across the whole function), every use visible
    /// (the block's parameters and earlier results of the same block: regions are isolated
    /// from above), result types equal to the shape rule, region signatures, calls.
    fn verify_block(&self, f: &Func, params: &[Value], ops: &[Op], outputs: &[Value], defined: &mut Vec<bool>, terminator: &str) -> Result<()> {
        let mut visible = vec![false; f.types.len()];
        let define = |v: Value, defined: &mut Vec<bool>, visible: &mut Vec<bool>| -> Result<()> {
            let slot = defined.get_mut(v.0 as usize).ok_or_else(|| DialectError::Structure(format!("value %{} has no type", v.0)))?;
            if std::mem::replace(slot, true) {
                return Err(DialectError::Structure(format!("value %{} is defined twice", v.0)));
            }
            visible[v.0 as usize] = true;
            Ok(())
        };
        for &p in params {
            define(p, defined, &mut visible)?;
        }
        for op in ops {
            for v in &op.operands {
                if !visible.get(v.0 as usize).copied().unwrap_or(false) {
                    return Err(DialectError::Structure(format!("'quabla.{}' op uses %{} before its definition", op.kind.name(), v.0)));
                }
            }
            let tys: Vec<&TensorType> = op.operands.iter().map(|v| f.ty(*v)).collect();
            let want = op.kind.infer(&tys)?;
            let got: Vec<TensorType> = op.results.iter().map(|v| f.ty(*v).clone()).collect();
            if want != got {
                return Err(DialectError::Structure(format!(
                    "'quabla.{}' op result types ({}) differ from the inferred ({})",
                    op.kind.name(),
                    call::join(got.iter()),
                    call::join(want.iter())
                )));
            }
            op.kind.check_regions(&tys, &got, &op.regions, &f.types)?;
            for r in &op.regions {
                self.verify_block(f, &r.params, &r.ops, &r.outputs, defined, "region yield")?;
            }
            if let OpKind::Call(CallOp::Call { callee, results }) = &op.kind {
                let g = self.func(callee).ok_or_else(|| DialectError::Structure(format!("'quabla.call' op refers to unknown function @{callee}")))?;
                call::check_call(callee, &tys, results, &g.param_types(), &g.result_types())?;
            }
            for &r in &op.results {
                define(r, defined, &mut visible)?;
            }
        }
        for v in outputs {
            if !visible.get(v.0 as usize).copied().unwrap_or(false) {
                return Err(DialectError::Structure(format!("{terminator} uses undefined value %{}", v.0)));
            }
        }
        Ok(())
    }

    /// Callee names reachable from each function; errors on a cycle (`call_c3`).
    fn check_no_recursion(&self) -> Result<()> {
        let edges: HashMap<&str, Vec<&str>> = self
            .funcs
            .iter()
            .map(|f| {
                let mut cs: Vec<&str> = Vec::new();
                f.walk(&mut |o| {
                    if let OpKind::Call(CallOp::Call { callee, .. }) = &o.kind {
                        cs.push(callee.as_str());
                    }
                });
                if let Some(t) = &f.transform {
                    cs.push(t.of.as_str());
                }
                (f.name.as_str(), cs)
            })
            .collect();
        // 0 = unvisited, 1 = on stack, 2 = done
        let mut state: HashMap<&str, u8> = HashMap::new();
        fn dfs<'a>(n: &'a str, e: &HashMap<&'a str, Vec<&'a str>>, st: &mut HashMap<&'a str, u8>) -> Result<()> {
            match st.get(n) {
                Some(1) => return Err(DialectError::shape("call", "call_c3", format!("recursive call cycle through @{n}"))),
                Some(2) => return Ok(()),
                _ => {}
            }
            st.insert(n, 1);
            for c in e.get(n).into_iter().flatten() {
                dfs(c, e, st)?;
            }
            st.insert(n, 2);
            Ok(())
        }
        for f in &self.funcs {
            dfs(&f.name, &edges, &mut state)?;
        }
        Ok(())
    }
}

fn with_func(e: DialectError, name: &str) -> DialectError {
    match e {
        DialectError::Structure(m) => DialectError::Structure(format!("in @{name}: {m}")),
        other => other,
    }
}

//! The MLX emitter (`quabla-opt --emit=mlx`, the `mlx` executor): an optimized quabla module
//! becomes Python source, a module of `def` functions calling MLX's Python API (`mx`, i.e.
//! `mlx.core`) and the small helpers of `quabla._mlx` (`q`) that state quabla's semantics
//! where an `mx` call alone does not (integer division and remainder, shifts, saturating
//! float -> int conversion, clamped gathers and dynamic slices). One file per op family,
//! matching dialect/src/ops/ and lowering/src/stablehlo/.
//!
//! Control flow: `mx.compile` traces a function once and cannot run data-dependent Python
//! control flow, so every function and region body is split into *segments*: maximal runs of
//! ops without control flow become their own `def`s, listed in `COMPILED` (the executor wraps
//! each with `mx.compile`); `quabla.if` / `case` / `while` become calls of `q.cond` /
//! `q.case` / `q.while_loop`, which evaluate the predicate or index with `.item()` in Python
//! and call the region functions (each region body is emitted the same way). A function
//! without control flow is therefore one compiled function.
//!
//! Invariants: the module verifies and holds no unexpanded transform; every op either maps
//! or is `LowerError::Unsupported { op, rule: "mlx" }`, found while emitting (at compile time,
//! never at first execution). Value `%k` of a function is the Python name `v{k}` (ids are unique
//! per function, bodies included); every function returns a tuple; constants are module-level
//! `C{k}` built once from their little-endian bytes.
pub mod call;
pub mod callback;
pub mod collective;
pub mod constant;
pub mod control;
pub mod convolution;
pub mod dot;
pub mod elementwise;
pub mod layout;
pub mod linalg;
pub mod reduce;
pub mod reduce_window;
pub mod scatter;
pub mod slicing;
pub mod sort;

use std::collections::{HashMap, HashSet};
use std::fmt::Write;

use quabla_dialect::{CallOp, DType, Func, Module, Op, OpKind, Value};

use crate::LowerError;

/// The rule name in `LowerError::Unsupported` (and the device name in Python).
pub const RULE: &str = "mlx";

/// The explicit gap for `op`.
pub fn unsupported(op: &'static str) -> LowerError {
    LowerError::Unsupported { op, rule: RULE }
}

/// The Python name of value `v`.
pub fn name(v: Value) -> String {
    format!("v{}", v.0)
}

/// `mx.<dtype>`.
pub fn dtype(d: DType) -> &'static str {
    match d {
        DType::F32 => "mx.float32",
        DType::F64 => "mx.float64",
        DType::I1 => "mx.bool_",
        DType::I32 => "mx.int32",
        DType::I64 => "mx.int64",
        DType::U8 => "mx.uint8",
        DType::U32 => "mx.uint32",
    }
}

/// A Python tuple literal of ints: `(2, 3)`, `(4,)`, `()`.
pub fn tuple(v: &[i64]) -> String {
    match v {
        [] => "()".into(),
        [x] => format!("({x},)"),
        _ => format!("({})", v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ")),
    }
}

/// `a, b, c` of Python names.
pub fn names(vs: &[Value]) -> String {
    vs.iter().map(|v| name(*v)).collect::<Vec<_>>().join(", ")
}

/// A tuple expression of values: `(v1,)`, `(v1, v2)`, `()`.
fn value_tuple(vs: &[Value]) -> String {
    match vs {
        [] => "()".into(),
        [v] => format!("({},)", name(*v)),
        _ => format!("({})", names(vs)),
    }
}

/// The left-hand side unpacking a tuple into `vs` (`v1, = ...`, `_ = ...` for none).
fn unpack(vs: &[Value]) -> String {
    match vs {
        [] => "_".into(),
        [v] => format!("{},", name(*v)),
        _ => names(vs),
    }
}

/// The module being written: finished functions, module-level constants and the names of the
/// straight-line functions to compile.
pub struct Emitter<'m> {
    module: &'m Module,
    defs: Vec<String>,
    consts: Vec<String>,
    compiled: Vec<String>,
    /// Functions of the module already emitted (by quabla name).
    done: HashSet<String>,
    /// Memo of `has_control` per function name.
    control: HashMap<String, bool>,
    counter: usize,
}

impl<'m> Emitter<'m> {
    /// A module-level constant holding `expr`; returns its name.
    pub fn constant(&mut self, expr: String) -> String {
        let n = format!("C{}", self.consts.len());
        self.consts.push(format!("{n} = {expr}"));
        n
    }

    fn fresh(&mut self, base: &str) -> String {
        self.counter += 1;
        format!("{base}_{}", self.counter)
    }

    /// True when `f` (or a function it calls) holds a control-flow op.
    fn func_has_control(&mut self, f: &str) -> Result<bool, LowerError> {
        if let Some(&c) = self.control.get(f) {
            return Ok(c);
        }
        self.control.insert(f.to_string(), false);
        let func = self.module.func(f).ok_or_else(|| LowerError::UnknownCallee { callee: f.to_string() })?;
        let mut c = false;
        for o in &func.ops {
            c |= self.is_control(o)?;
        }
        self.control.insert(f.to_string(), c);
        Ok(c)
    }

    /// True when `o` must run as Python control flow (not inside `mx.compile`).
    fn is_control(&mut self, o: &Op) -> Result<bool, LowerError> {
        Ok(match &o.kind {
            OpKind::Control(_) => true,
            OpKind::Call(CallOp::Call { callee, .. }) => self.func_has_control(callee)?,
            _ => false,
        })
    }

    /// Emits the quabla function `f` (once) as `def f_<name>`; returns that Python name.
    pub fn func(&mut self, f: &str) -> Result<String, LowerError> {
        let py = format!("f_{}", sanitize(f));
        if self.done.insert(f.to_string()) {
            let func = self.module.func(f).ok_or_else(|| LowerError::UnknownCallee { callee: f.to_string() })?;
            if let Some(t) = &func.transform {
                return Err(LowerError::UnexpandedTransform { func: func.name.clone(), kind: t.kind.name(), of: t.of.clone(), by: crate::Lowering::Mlx });
            }
            self.block(func, &py, &func.params, &func.ops, &func.outputs)?;
        }
        Ok(py)
    }

    /// Emits one block (a function's or a region's params, ops and outputs) as `def py`:
    /// a single compiled function when it has no control flow, else segments.
    pub fn block(&mut self, f: &Func, py: &str, params: &[Value], ops: &[Op], outputs: &[Value]) -> Result<(), LowerError> {
        let mut control = Vec::with_capacity(ops.len());
        for o in ops {
            control.push(self.is_control(o)?);
        }
        let mut body = String::new();
        if !control.iter().any(|&c| c) {
            for o in ops {
                self.straight(&mut body, f, o)?;
            }
            let _ = writeln!(body, "    return {}", value_tuple(outputs));
            self.defs.push(format!("def {py}({}):\n{body}", names(params)));
            self.compiled.push(py.to_string());
            return Ok(());
        }
        // Segments: runs of straight-line ops, each its own compiled function.
        let mut i = 0;
        while i < ops.len() {
            if control[i] {
                let line = self.control_op(f, py, &ops[i])?;
                body.push_str(&line);
                i += 1;
                continue;
            }
            let j = (i..ops.len()).find(|&k| control[k]).unwrap_or(ops.len());
            let seg = &ops[i..j];
            let (ins, outs) = segment_interface(seg, &ops[j..], outputs);
            let seg_name = self.fresh(&format!("{py}_seg"));
            let mut sb = String::new();
            for o in seg {
                self.straight(&mut sb, f, o)?;
            }
            let _ = writeln!(sb, "    return {}", value_tuple(&outs));
            self.defs.push(format!("def {seg_name}({}):\n{sb}", names(&ins)));
            self.compiled.push(seg_name.clone());
            let _ = writeln!(body, "    {} = {seg_name}({})", unpack(&outs), names(&ins));
            i = j;
        }
        let _ = writeln!(body, "    return {}", value_tuple(outputs));
        self.defs.push(format!("def {py}({}):\n{body}", names(params)));
        Ok(())
    }

    /// One straight-line op as `vR = expr` lines.
    fn straight(&mut self, out: &mut String, f: &Func, o: &Op) -> Result<(), LowerError> {
        if let OpKind::Call(CallOp::CustomJvp { .. } | CallOp::CustomVjp { .. }) = &o.kind {
            // The primal body in place (autodiff normally replaced it already).
            let body = &o.regions[0];
            for (bp, outer) in body.params.iter().zip(&o.operands) {
                let _ = writeln!(out, "    {} = {}", name(*bp), name(*outer));
            }
            for op in &body.ops {
                if self.is_control(op)? {
                    return Err(unsupported(o.kind.name()));
                }
                self.straight(out, f, op)?;
            }
            for (r, y) in o.results.iter().zip(&body.outputs) {
                let _ = writeln!(out, "    {} = {}", name(*r), name(*y));
            }
            return Ok(());
        }
        let expr = self.expr(f, o)?;
        let lhs = match o.results.as_slice() {
            [r] => name(*r),
            rs => unpack(rs),
        };
        let _ = writeln!(out, "    {lhs} = {expr}");
        Ok(())
    }

    /// The Python expression of a straight-line op (a tuple for several results).
    /// Exhaustive over [`OpKind`].
    fn expr(&mut self, f: &Func, o: &Op) -> Result<String, LowerError> {
        match &o.kind {
            OpKind::Elementwise(x) => elementwise::lower(self, f, o, x),
            OpKind::Constant(x) => constant::lower(self, x),
            OpKind::Layout(x) => layout::lower(self, f, o, x),
            OpKind::Slicing(x) => slicing::lower(self, f, o, x),
            OpKind::Reduce(x) => reduce::lower(self, f, o, x),
            OpKind::Dot(x) => dot::lower(self, f, o, x),
            OpKind::Call(x) => call::lower(self, f, o, x),
            OpKind::Control(_) => unreachable!("control ops are emitted by Emitter::control_op"),
            OpKind::Scatter(x) => scatter::lower(self, f, o, x),
            OpKind::Convolution(x) => convolution::lower(self, f, o, x),
            OpKind::ReduceWindow(x) => reduce_window::lower(self, f, o, x),
            OpKind::Linalg(x) => linalg::lower(self, f, o, x),
            OpKind::Sort(x) => sort::lower(self, f, o, x),
            OpKind::Callback(x) => callback::lower(self, f, o, x),
            OpKind::Collective(x) => collective::lower(self, f, o, x),
        }
    }

    /// A control op (or a call of a function with control flow) as Python statements.
    fn control_op(&mut self, f: &Func, py: &str, o: &Op) -> Result<String, LowerError> {
        let call = match &o.kind {
            OpKind::Control(x) => control::lower(self, f, py, o, x)?,
            OpKind::Call(CallOp::Call { callee, .. }) => {
                let target = self.func(callee)?;
                format!("{target}({})", names(&o.operands))
            }
            _ => unreachable!("only control ops and calls are control"),
        };
        Ok(format!("    {} = {call}\n", unpack(&o.results)))
    }
}

/// The inputs (values used by `seg` but defined before it, in order of first use) and outputs
/// (values `seg` defines that `rest` or `outputs` use) of a segment.
fn segment_interface(seg: &[Op], rest: &[Op], outputs: &[Value]) -> (Vec<Value>, Vec<Value>) {
    let mut defined: HashSet<Value> = HashSet::new();
    let mut ins = Vec::new();
    let mut seen = HashSet::new();
    for o in seg {
        // Regions are isolated: custom calls emitted inline read only their operands.
        for &v in &o.operands {
            if !defined.contains(&v) && seen.insert(v) {
                ins.push(v);
            }
        }
        defined.extend(o.results.iter().copied());
    }
    let mut later: HashSet<Value> = outputs.iter().copied().collect();
    for o in rest {
        later.extend(o.operands.iter().copied());
    }
    let mut outs = Vec::new();
    for o in seg {
        for r in &o.results {
            if later.contains(r) {
                outs.push(*r);
            }
        }
    }
    (ins, outs)
}

/// A Python identifier from a quabla symbol name.
fn sanitize(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect()
}

/// The emitted program: its Python source and the name of the entry function in it.
#[derive(Clone, Debug, PartialEq)]
pub struct MlxProgram {
    pub source: String,
    pub entry: String,
}

/// Emits `m` with its entry point: the public `@main`, or else the only public function
/// (as the StableHLO export chooses it).
pub fn emit_entry(m: &Module) -> Result<MlxProgram, LowerError> {
    let entry = match m.func("main") {
        Some(f) if f.public => f.name.clone(),
        _ => {
            let public: Vec<&Func> = m.funcs.iter().filter(|f| f.public).collect();
            match public.as_slice() {
                [f] => f.name.clone(),
                _ => return Err(LowerError::NoEntryPoint { public: public.iter().map(|f| f.name.clone()).collect() }),
            }
        }
    };
    emit_module(m, &entry)
}

/// Emits `m` (verified first) as Python source for MLX with `entry` as the entry point.
///
/// Errors: invalid IR, an unexpanded transform, no such entry, or an op without an MLX form
/// (`LowerError::Unsupported { rule: "mlx" }` naming it).
pub fn emit_module(m: &Module, entry: &str) -> Result<MlxProgram, LowerError> {
    m.verify()?;
    if let Some((f, t)) = m.funcs.iter().find_map(|f| f.transform.as_ref().map(|t| (f, t))) {
        return Err(LowerError::UnexpandedTransform { func: f.name.clone(), kind: t.kind.name(), of: t.of.clone(), by: crate::Lowering::Mlx });
    }
    let main = m.func(entry).ok_or_else(|| LowerError::NoEntryPoint { public: m.funcs.iter().filter(|f| f.public).map(|f| f.name.clone()).collect() })?;
    let mut e = Emitter { module: m, defs: vec![], consts: vec![], compiled: vec![], done: HashSet::new(), control: HashMap::new(), counter: 0 };
    let py = e.func(&main.name)?;
    let mut out = String::new();
    let _ = writeln!(out, "# quabla -> MLX (mlx.core as mx, quabla._mlx as q); entry {py}");
    for c in &e.consts {
        let _ = writeln!(out, "{c}");
    }
    for d in &e.defs {
        let _ = writeln!(out, "\n{d}");
    }
    let compiled: Vec<String> = e.compiled.iter().map(|c| format!("\"{c}\"")).collect();
    let list = if compiled.len() == 1 { format!("({},)", compiled[0]) } else { format!("({})", compiled.join(", ")) };
    let _ = writeln!(out, "\nCOMPILED = {list}\nENTRY = \"{py}\"");
    Ok(MlxProgram { source: out, entry: py })
}

#[cfg(test)]
mod tests {
    use super::*;
    use quabla_dialect::{BinaryOp, ControlOp, ElementwiseOp, TensorType, UnaryOp};

    fn t(shape: &[i64]) -> TensorType {
        TensorType::new(DType::F32, shape)
    }

    #[test]
    fn straight_line_is_one_compiled_function() {
        let mut f = Func::new("main", &[t(&[3]), t(&[3])]);
        let (x, y) = (f.params[0], f.params[1]);
        let s = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add }), &[x, y], None).unwrap();
        f.outputs = vec![f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Tanh }), &[s], None).unwrap()];
        let p = emit_entry(&Module { funcs: vec![f] }).unwrap();
        assert_eq!(p.entry, "f_main");
        assert!(p.source.contains("def f_main(v0, v1):\n    v2 = mx.add(v0, v1)\n    v3 = mx.tanh(v2)\n    return (v3,)\n"), "{}", p.source);
        assert!(p.source.contains("COMPILED = (\"f_main\",)"), "{}", p.source);
    }

    #[test]
    fn control_flow_splits_into_compiled_segments_and_regions() {
        let (pt, xt) = (TensorType::new(DType::I1, []), t(&[2]));
        let mut f = Func::new("main", &[pt, xt.clone()]);
        let (p, x) = (f.params[0], f.params[1]);
        let a = f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Sin }), &[x], None).unwrap();
        let mut then_b = f.new_body(std::slice::from_ref(&xt));
        let tp = then_b.params[0];
        let n = f.push_into(&mut then_b, OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Neg }), &[tp], vec![], None).unwrap()[0];
        then_b.outputs = vec![n];
        let mut else_b = f.new_body(std::slice::from_ref(&xt));
        else_b.outputs = vec![else_b.params[0]];
        let r = f.push_with_regions(OpKind::Control(ControlOp::If { results: vec![xt] }), &[p, a], vec![then_b, else_b], None).unwrap()[0];
        f.outputs = vec![f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), &[r, a], None).unwrap()];
        let src = emit_entry(&Module { funcs: vec![f] }).unwrap().source;
        // The entry is Python (not compiled); the ops before and after the if are segments.
        assert!(src.contains("def f_main(v0, v1):\n    v2, = f_main_seg_1(v1)\n    v6, = q.cond(v0, f_main_then_2, f_main_else_3, v2)\n    v7, = f_main_seg_4(v6, v2)\n    return (v7,)\n"), "{src}");
        assert!(src.contains("COMPILED = (\"f_main_seg_1\", \"f_main_then_2\", \"f_main_else_3\", \"f_main_seg_4\")"), "{src}");
    }

    #[test]
    fn gaps_name_the_op_and_the_mlx_rule() {
        let mut f = Func::new("main", &[t(&[3])]);
        f.outputs = vec![f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Cbrt }), &[f.params[0]], None).unwrap()];
        let e = emit_entry(&Module { funcs: vec![f] }).unwrap_err();
        assert_eq!(e, LowerError::Unsupported { op: "cbrt", rule: RULE });
        assert_eq!(e.to_string(), "'quabla.cbrt' op cannot be lowered: no mlx rule");
    }
}

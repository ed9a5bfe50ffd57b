//! `quabla.case` and the custom-derivative calls in the in-memory IR: `case` round-trips
//! through its `scf.index_switch` spelling (quabla's importer and stock mlir-opt), the JIT
//! agrees with the interpreter for in-range and clamped indices, the StableHLO export is a
//! `stablehlo.case`, the verifier rejects bad signatures with the case_c* labels; a
//! `custom_jvp_call` / `custom_vjp_call` runs its primal body everywhere, its derivative is its
//! rule's (not the primal's), and the rules are gone after the autodiff pass.
use quabla_dialect::mlir::{new_context, parse_and_import};
use quabla_dialect::{BinaryOp, CallOp, ControlOp, DType, ElementwiseOp, Func, Literal, Module, OpKind, TensorType, Transform, TransformKind, UnaryOp};
use quabla_runtime::{interp, Buffer, CompileOptions, Executor};

use crate::{executor, root};

fn t(d: DType, s: &[i64]) -> TensorType {
    TensorType::new(d, s)
}

fn un(u: UnaryOp) -> OpKind {
    OpKind::Elementwise(ElementwiseOp::Unary { op: u })
}

fn bin(b: BinaryOp) -> OpKind {
    OpKind::Elementwise(ElementwiseOp::Binary { op: b })
}

/// `@main(i: i32, x: f64[3], y: f64) = case i { x * y | -x | sin(x) }`.
pub fn case_module() -> Module {
    let (it, xt, yt) = (t(DType::I32, &[]), t(DType::F64, &[3]), t(DType::F64, &[]));
    let mut f = Func::new("main", &[it, xt.clone(), yt.clone()]);
    let (i, x, y) = (f.params[0], f.params[1], f.params[2]);
    let mut b0 = f.new_body(&[xt.clone(), yt.clone()]);
    let (x0, y0) = (b0.params[0], b0.params[1]);
    let yb = f.push_into(&mut b0, OpKind::Layout(quabla_dialect::LayoutOp::BroadcastInDim { dims: vec![], shape: vec![3] }), &[y0], vec![], None).unwrap()[0];
    let m0 = f.push_into(&mut b0, bin(BinaryOp::Mul), &[x0, yb], vec![], None).unwrap()[0];
    b0.outputs = vec![m0];
    let mut b1 = f.new_body(&[xt.clone(), yt.clone()]);
    let b1_p0 = b1.params[0];
    let n1 = f.push_into(&mut b1, un(UnaryOp::Neg), &[b1_p0], vec![], None).unwrap()[0];
    b1.outputs = vec![n1];
    let mut b2 = f.new_body(&[xt.clone(), yt.clone()]);
    let b2_p0 = b2.params[0];
    let s2 = f.push_into(&mut b2, un(UnaryOp::Sin), &[b2_p0], vec![], None).unwrap()[0];
    b2.outputs = vec![s2];
    f.outputs = f.push_with_regions(OpKind::Control(ControlOp::Case { results: vec![xt] }), &[i, x, y], vec![b0, b1, b2], None).unwrap();
    let m = Module { funcs: vec![f] };
    m.verify().unwrap();
    m
}

fn strip_locs(m: &mut Module) {
    for f in &mut m.funcs {
        f.loc = None;
        f.walk_mut(&mut |o| o.loc = None);
    }
}

fn case_inputs(i: i32) -> Vec<Buffer> {
    vec![
        Buffer::from_literal(&Literal::from_f64s(t(DType::I32, &[]), &[i as f64])),
        Buffer::from_literal(&Literal::from_f64s(t(DType::F64, &[3]), &[1.0, -2.0, 0.5])),
        Buffer::from_literal(&Literal::from_f64s(t(DType::F64, &[]), &[3.0])),
    ]
}

#[test]
fn case_round_trips_and_runs_everywhere() {
    let m = case_module();
    let text = m.to_mlir();
    assert!(text.contains("scf.index_switch") && text.contains("case 1 {") && text.contains("default {"), "{text}");
    let ctx = new_context();
    let mut back = parse_and_import(&ctx, &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    strip_locs(&mut back);
    assert_eq!(back, m, "{text}");
    let dir = std::env::temp_dir().join(format!("quabla-case-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("c.mlir"), &text).unwrap();
    let irdl = root().join("dialect/quabla.irdl.mlir");
    let out = std::process::Command::new("/usr/lib/llvm-22/bin/mlir-opt").arg(format!("--irdl-file={}", irdl.display())).arg(dir.join("c.mlir")).output().unwrap();
    assert!(out.status.success(), "stock mlir-opt rejected:\n{}\n{text}", String::from_utf8_lossy(&out.stderr));
    let exe = executor().compile(&m, "main", &CompileOptions::default()).unwrap();
    let x = [1.0f64, -2.0, 0.5];
    for i in [0, 1, 2, 3, 17, -1, i32::MIN] {
        let ins = case_inputs(i);
        let want = interp::run_func(&m, "main", &ins).unwrap()[0].to_f64_vec();
        let k = if (0..3).contains(&i) { i } else { 2 };
        let expect: Vec<f64> = match k {
            0 => x.iter().map(|v| v * 3.0).collect(),
            1 => x.iter().map(|v| -v).collect(),
            _ => x.iter().map(|v| v.sin()).collect(),
        };
        assert_eq!(want, expect, "i={i}");
        let refs: Vec<&Buffer> = ins.iter().collect();
        assert_eq!(exe.run(&refs).unwrap()[0].to_f64_vec(), want, "JIT i={i}");
    }
    let shlo = quabla_lowering::export_module(&m).unwrap();
    assert!(shlo.contains("\"stablehlo.case\""), "{shlo}");
}

#[test]
fn case_verifier_labels() {
    let (it, xt) = (t(DType::I32, &[]), t(DType::F64, &[2]));
    let mut f = Func::new("main", &[t(DType::F64, &[]), xt.clone()]);
    let (p, x) = (f.params[0], f.params[1]);
    let mut b = f.new_body(std::slice::from_ref(&xt));
    b.outputs = vec![b.params[0]];
    let e = f.push_with_regions(OpKind::Control(ControlOp::Case { results: vec![xt.clone()] }), &[p, x], vec![b.clone()], None).unwrap_err();
    assert!(e.to_string().contains("case_c1"), "{e}");
    let mut g = Func::new("g", &[it, xt.clone()]);
    let (i, y) = (g.params[0], g.params[1]);
    let e = g.push_with_regions(OpKind::Control(ControlOp::Case { results: vec![xt.clone()] }), &[i, y], vec![], None).unwrap_err();
    assert!(e.to_string().contains("case_c2"), "{e}");
    let mut wrong = g.new_body(&[t(DType::F32, &[2])]);
    wrong.outputs = vec![wrong.params[0]];
    let e = g.push_with_regions(OpKind::Control(ControlOp::Case { results: vec![xt.clone()] }), &[i, y], vec![wrong], None).unwrap_err();
    assert!(e.to_string().contains("case_c3"), "{e}");
    let mut b2 = g.new_body(std::slice::from_ref(&xt));
    let b2_p0 = b2.params[0];
    let s = g.push_into(&mut b2, OpKind::Reduce(quabla_dialect::ReduceOp::Reduce { op: quabla_dialect::Reducer::Sum, dims: vec![0] }), &[b2_p0], vec![], None).unwrap()[0];
    b2.outputs = vec![s];
    let e = g.push_with_regions(OpKind::Control(ControlOp::Case { results: vec![xt] }), &[i, y], vec![b2], None).unwrap_err();
    assert!(e.to_string().contains("case_c4"), "{e}");
}

/// `@main(x: f64[3]) = sum(custom_jvp_call(x) {primal: sin(x)} {jvp: (sin(x), 2 * t)})`: the
/// rule's derivative (2) differs from the primal's (cos x).
pub fn custom_jvp_module() -> Module {
    let xt = t(DType::F64, &[3]);
    let mut f = Func::new("main", std::slice::from_ref(&xt));
    let x = f.params[0];
    let mut p = f.new_body(std::slice::from_ref(&xt));
    let p_p0 = p.params[0];
    let s = f.push_into(&mut p, un(UnaryOp::Sin), &[p_p0], vec![], None).unwrap()[0];
    p.outputs = vec![s];
    let mut r = f.new_body(&[xt.clone(), xt.clone()]);
    let (rx, rt) = (r.params[0], r.params[1]);
    let s2 = f.push_into(&mut r, un(UnaryOp::Sin), &[rx], vec![], None).unwrap()[0];
    let two = f.push_into(&mut r, OpKind::Constant(quabla_dialect::ConstantOp::Constant { value: Literal::splat(xt.clone(), 2.0) }), &[], vec![], None).unwrap()[0];
    let d = f.push_into(&mut r, bin(BinaryOp::Mul), &[rt, two], vec![], None).unwrap()[0];
    r.outputs = vec![s2, d];
    let c = f.push_with_regions(OpKind::Call(CallOp::CustomJvp { results: vec![xt] }), &[x], vec![p, r], None).unwrap()[0];
    f.outputs = vec![f.push1(OpKind::Reduce(quabla_dialect::ReduceOp::Reduce { op: quabla_dialect::Reducer::Sum, dims: vec![0] }), &[c], None).unwrap()];
    let m = Module { funcs: vec![f] };
    m.verify().unwrap();
    m
}

/// `@main(x: f64[3]) = sum(custom_vjp_call(x) {primal: exp(x)} {fwd: (exp(x), res = x)}
/// {bwd: (res, ct) -> ct * res})`: the rule's gradient is x, the primal's exp(x).
pub fn custom_vjp_module() -> Module {
    let xt = t(DType::F64, &[3]);
    let mut f = Func::new("main", std::slice::from_ref(&xt));
    let x = f.params[0];
    let mut p = f.new_body(std::slice::from_ref(&xt));
    let p_p0 = p.params[0];
    let e = f.push_into(&mut p, un(UnaryOp::Exp), &[p_p0], vec![], None).unwrap()[0];
    p.outputs = vec![e];
    let mut fw = f.new_body(std::slice::from_ref(&xt));
    let fw_p0 = fw.params[0];
    let e2 = f.push_into(&mut fw, un(UnaryOp::Exp), &[fw_p0], vec![], None).unwrap()[0];
    fw.outputs = vec![e2, fw.params[0]];
    let mut bw = f.new_body(&[xt.clone(), xt.clone()]);
    let bw_p1 = bw.params[1];
    let bw_p0 = bw.params[0];
    let g = f.push_into(&mut bw, bin(BinaryOp::Mul), &[bw_p1, bw_p0], vec![], None).unwrap()[0];
    bw.outputs = vec![g];
    let c = f.push_with_regions(OpKind::Call(CallOp::CustomVjp { results: vec![xt] }), &[x], vec![p, fw, bw], None).unwrap()[0];
    f.outputs = vec![f.push1(OpKind::Reduce(quabla_dialect::ReduceOp::Reduce { op: quabla_dialect::Reducer::Sum, dims: vec![0] }), &[c], None).unwrap()];
    let m = Module { funcs: vec![f] };
    m.verify().unwrap();
    m
}

fn with_transform(m: &Module, name: &str, kind: TransformKind) -> Module {
    let f = &m.funcs[0];
    let tr = Transform { kind, of: "main".into() };
    let (p, r) = tr.signature(&f.param_types(), &f.result_types());
    let mut m2 = m.clone();
    m2.funcs[0].public = false;
    m2.funcs.push(Func::declaration(name, &p, &r, tr));
    quabla_passes::autodiff::autodiff(&mut m2).unwrap_or_else(|e| panic!("{e}"));
    m2.verify().unwrap();
    m2
}

fn has_custom(m: &Module) -> bool {
    let mut found = false;
    for f in &m.funcs {
        f.walk(&mut |o| found |= matches!(o.kind, OpKind::Call(CallOp::CustomJvp { .. }) | OpKind::Call(CallOp::CustomVjp { .. })));
    }
    found
}

#[test]
fn custom_calls_use_their_rules_and_expand_away() {
    let x = [0.3f64, -1.2, 2.0];
    let xb = || Buffer::from_literal(&Literal::from_f64s(t(DType::F64, &[3]), &x));
    let tb = || Buffer::from_literal(&Literal::from_f64s(t(DType::F64, &[3]), &[1.0, 0.5, -2.0]));
    let cb = || Buffer::from_literal(&Literal::from_f64s(t(DType::F64, &[]), &[1.0]));
    // custom_jvp: value sum(sin x); JVP sum(2 t); VJP 2.
    let m = custom_jvp_module();
    let v = interp::run_func(&m, "main", &[xb()]).unwrap()[0].to_f64_vec()[0];
    assert!((v - x.iter().map(|a| a.sin()).sum::<f64>()).abs() < 1e-15);
    let exe = executor().compile(&m, "main", &CompileOptions::default()).unwrap();
    assert_eq!(exe.run(&[&xb()]).unwrap()[0].to_f64_vec()[0], v);
    let j = with_transform(&m, "main_jvp", TransformKind::Jvp);
    assert!(!has_custom(&j), "{}", j.to_mlir());
    let out = interp::run_func(&j, "main_jvp", &[xb(), tb()]).unwrap();
    assert!((out[1].to_f64_vec()[0] - 2.0 * (1.0 + 0.5 - 2.0)).abs() < 1e-15);
    let g = with_transform(&m, "main_vjp", TransformKind::Vjp);
    assert_eq!(interp::run_func(&g, "main_vjp", &[xb(), cb()]).unwrap()[1].to_f64_vec(), vec![2.0; 3]);
    // custom_vjp: gradient x (the bwd rule), not exp(x).
    let m = custom_vjp_module();
    let g = with_transform(&m, "main_vjp", TransformKind::Vjp);
    assert!(!has_custom(&g));
    assert_eq!(interp::run_func(&g, "main_vjp", &[xb(), cb()]).unwrap()[1].to_f64_vec(), x.to_vec());
    let mut g = g;
    g.funcs.iter_mut().for_each(|f| f.public = f.name == "main_vjp");
    let exe = executor().compile(&g, "main_vjp", &CompileOptions::default()).unwrap();
    assert_eq!(exe.run(&[&xb(), &cb()]).unwrap()[1].to_f64_vec(), x.to_vec());
    let shlo = quabla_lowering::export_module(&m).unwrap();
    assert!(shlo.contains("stablehlo.exponential"), "{shlo}");
    // JVP of a custom_vjp call is an explicit gap, as in JAX.
    let mut m2 = m.clone();
    let f = &m.funcs[0];
    let tr = Transform { kind: TransformKind::Jvp, of: "main".into() };
    let (p, r) = tr.signature(&f.param_types(), &f.result_types());
    m2.funcs[0].public = false;
    m2.funcs.push(Func::declaration("main_jvp", &p, &r, tr));
    let e = quabla_passes::autodiff::autodiff(&mut m2).unwrap_err();
    assert!(e.to_string().contains("'quabla.custom_vjp_call' op has no jvp rule"), "{e}");
}

#[test]
fn custom_calls_round_trip_as_outlined_calls() {
    for m in [custom_jvp_module(), custom_vjp_module()] {
        let text = m.to_mlir();
        assert!(text.contains("func.call @__qb_custom_main_") && text.contains("func.func private @__qb_custom_main_"), "{text}");
        let ctx = new_context();
        let back = parse_and_import(&ctx, &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(back.funcs.len(), 1, "{text}");
        let again = back.to_mlir();
        assert_eq!(again.matches("func.func").count(), text.matches("func.func").count(), "{again}");
        assert_eq!(again.contains("quabla.custom_jvp ="), text.contains("quabla.custom_jvp ="));
        assert!(has_custom(&back));
        // Stock mlir-opt verifies the spelling.
        let dir = std::env::temp_dir().join(format!("quabla-custom-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("c.mlir"), &text).unwrap();
        let irdl = root().join("dialect/quabla.irdl.mlir");
        let out = std::process::Command::new("/usr/lib/llvm-22/bin/mlir-opt").arg(format!("--irdl-file={}", irdl.display())).arg(dir.join("c.mlir")).output().unwrap();
        assert!(out.status.success(), "stock mlir-opt rejected:\n{}\n{text}", String::from_utf8_lossy(&out.stderr));
        // The rules survive the round trip: the gradient is still the rule's.
        let g = with_transform(&back, "main_vjp", TransformKind::Vjp);
        let x = [0.3f64, -1.2, 2.0];
        let xb = Buffer::from_literal(&Literal::from_f64s(t(DType::F64, &[3]), &x));
        let cb = Buffer::from_literal(&Literal::from_f64s(t(DType::F64, &[]), &[1.0]));
        let got = interp::run_func(&g, "main_vjp", &[xb.clone(), cb.clone()]).unwrap()[1].to_f64_vec();
        let want = interp::run_func(&with_transform(&m, "main_vjp", TransformKind::Vjp), "main_vjp", &[xb, cb]).unwrap()[1].to_f64_vec();
        assert_eq!(got, want);
    }
}

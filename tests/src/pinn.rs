//! The README PINN built directly in the in-memory IR, as the Python front traces it:
//! `u_xx = vmap(grad(grad(u)), in_axes=(0, None))`, `value_and_grad(loss)` with respect to w.
//! Shared by the cross-crate tests and the benchmarks.
use quabla_dialect::{BinaryOp, CallOp, ConstantOp, DType, ElementwiseOp, Func, Literal, Module, OpKind, ReduceOp, Reducer, TensorType, Transform, TransformKind, UnaryOp, Value};

fn scalar() -> TensorType {
    TensorType::new(DType::F64, [])
}

fn konst(f: &mut Func, ty: &TensorType, v: f64) -> Value {
    f.push1(OpKind::Constant(ConstantOp::Constant { value: Literal::splat(ty.clone(), v) }), &[], None).unwrap()
}

fn declare(m: &mut Module, name: &str, kind: TransformKind, of: &str) {
    let g = m.func(of).unwrap();
    let t = Transform { kind, of: of.to_string() };
    let (p, r) = t.signature(&g.param_types(), &g.result_types());
    m.funcs.push(Func::declaration(name, &p, &r, t));
}

/// grad of a scalar function of (x, w) with respect to x, through its vjp declaration.
fn grad_x(m: &mut Module, name: &str, of: &str) {
    let vjp = format!("{of}_vjp");
    declare(m, &vjp, TransformKind::Vjp, of);
    let s = scalar();
    let mut g = Func::new(name, &[s.clone(), s.clone()]);
    g.public = false;
    let one = konst(&mut g, &s, 1.0);
    let r = g.push(OpKind::Call(CallOp::Call { callee: vjp, results: vec![s.clone(); 3] }), &[g.params[0], g.params[1], one], None).unwrap();
    g.outputs = vec![r[1]];
    m.funcs.push(g);
}

/// The module with public `@main(w: f64, x: [n] f64) -> (loss, dloss/dw)`.
pub fn pinn_module(n: i64) -> Module {
    let s = scalar();
    let v = TensorType::new(DType::F64, [n]);
    let mut m = Module::default();
    // u(x, w) = sin(x * w)
    let mut u = Func::new("u", &[s.clone(), s.clone()]);
    u.public = false;
    let xw = u.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), &[u.params[0], u.params[1]], None).unwrap();
    u.outputs = vec![u.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Sin }), &[xw], None).unwrap()];
    m.funcs.push(u);
    grad_x(&mut m, "u_x", "u");
    grad_x(&mut m, "u_xx", "u_x");
    declare(&mut m, "u_xx_b", TransformKind::Vmap { in_axes: vec![Some(0), None], out_axes: vec![Some(0)], size: n, axis_name: None }, "u_xx");
    // loss(w, x) = mean((u_xx(x, w) + pi^2 sin(pi x))^2)
    let mut l = Func::new("loss", &[s.clone(), v.clone()]);
    l.public = false;
    let (w, x) = (l.params[0], l.params[1]);
    let uxx = l.push1(OpKind::Call(CallOp::Call { callee: "u_xx_b".into(), results: vec![v.clone()] }), &[x, w], None).unwrap();
    let pi = konst(&mut l, &v, std::f64::consts::PI);
    let pi2 = konst(&mut l, &v, std::f64::consts::PI * std::f64::consts::PI);
    let px = l.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), &[pi, x], None).unwrap();
    let sp = l.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Sin }), &[px], None).unwrap();
    let rhs = l.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), &[pi2, sp], None).unwrap();
    let r = l.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add }), &[uxx, rhs], None).unwrap();
    let r2 = l.push1(OpKind::Elementwise(ElementwiseOp::Powi { exponent: 2 }), &[r], None).unwrap();
    let sum = l.push1(OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Sum, dims: vec![0] }), &[r2], None).unwrap();
    let inv = konst(&mut l, &s, 1.0 / n as f64);
    l.outputs = vec![l.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), &[sum, inv], None).unwrap()];
    m.funcs.push(l);
    declare(&mut m, "loss_vjp", TransformKind::Vjp, "loss");
    let mut main = Func::new("main", &[s.clone(), v.clone()]);
    let one = konst(&mut main, &s, 1.0);
    let r = main.push(OpKind::Call(CallOp::Call { callee: "loss_vjp".into(), results: vec![s.clone(), s.clone(), v.clone()] }), &[main.params[0], main.params[1], one], None).unwrap();
    main.outputs = vec![r[0], r[1]];
    m.funcs.push(main);
    m.verify().expect("the PINN module verifies");
    m
}

/// Expands transforms, inlines and canonicalizes (the jit pipeline on the quabla level).
pub fn compile_ready(mut m: Module) -> Module {
    quabla_passes::autodiff::autodiff(&mut m).expect("transforms expand");
    quabla_passes::simplify::inline::inline(&mut m);
    quabla_passes::canonicalize(&mut m);
    quabla_passes::simplify::dce::symbol_dce(&mut m);
    m
}

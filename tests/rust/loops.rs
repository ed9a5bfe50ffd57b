//! Loops in reverse mode and `dynamic_update_slice`: the op in every layer (JIT against the
//! interpreter for every dtype, JVP against finite differences and VJP against the JVP, vmap
//! with batched and unbatched starts against a loop), the recognition of counted loops
//! (`rules::control::counted_loop`), and the VJP of a counted `quabla.while` (a loop with a
//! stepped carry, a loop-invariant carry and a stacked output) against central finite
//! differences of the interpreter, its second order (VJP of the VJP, JVP of the VJP) against
//! finite differences of the VJP, the JIT against the interpreter on the derivative programs,
//! and the typed error for a loop whose trip count is a runtime value.
use quabla_dialect::{BinaryOp, CmpDir, ConstantOp, ControlOp, DType, ElementwiseOp, Func, LayoutOp, Literal, Module, OpKind, SlicingOp, TensorType, Transform, TransformKind, UnaryOp, Value};
use quabla_passes::autodiff::AutodiffError;
use quabla_passes::rules::control::{counted_loop, Counted};
use quabla_passes::rules::RuleError;
use quabla_runtime::{interp, Buffer, CompileOptions, Executor};
use quabla_tests::{Rng, Tol};

use crate::executor;
use crate::regions::while_module;

fn t(d: DType, s: &[i64]) -> TensorType {
    TensorType::new(d, s)
}

fn f64s(shape: &[i64], v: &[f64]) -> Buffer {
    Buffer::from_f64s(t(DType::F64, shape), v).unwrap()
}

#[test]
fn dynamic_update_slice_in_every_layer() {
    let mut rng = Rng(31);
    let dus = || OpKind::Slicing(SlicingOp::DynamicUpdateSlice {});
    for d in DType::ALL {
        let (xt, ut) = (t(d, &[5, 6]), t(d, &[2, 3]));
        let x = rng.buffer(&xt, -9.0, 9.0);
        let u = rng.buffer(&ut, -9.0, 9.0);
        for it in [DType::I32, DType::I64] {
            for (a, b) in [(1.0, 2.0), (-3.0, 9.0), (4.0, 0.0)] {
                let s0 = Buffer::from_f64s(t(it, &[]), &[a]).unwrap();
                let s1 = Buffer::from_f64s(t(it, &[]), &[b]).unwrap();
                crate::differential::check_op(&format!("dynamic_update_slice {xt} starts ({a},{b}) {it}"), dus(), &[xt.clone(), ut.clone(), t(it, &[]), t(it, &[])], &[x.clone(), u.clone(), s0, s1], Tol::Exact, 1.0);
            }
        }
    }
    let f = |s: &[i64]| t(DType::F64, s);
    let it = t(DType::I64, &[]);
    let i64s = |v: &[i64]| Buffer::from_slice(&[], v).unwrap();
    let (x, u) = (rng.buffer(&f(&[3, 4]), -2.0, 2.0), rng.buffer(&f(&[2, 2]), -2.0, 2.0));
    for (a, b) in [(1, 1), (5, -2), (0, 3)] {
        crate::autodiff::check(&format!("dynamic_update_slice at ({a}, {b})"), dus(), &[f(&[3, 4]), f(&[2, 2]), it.clone(), it.clone()], &[x.clone(), u.clone(), i64s(&[a]), i64s(&[b])], &mut rng);
        crate::vmap::check(&format!("dynamic_update_slice at ({a}, {b})"), dus(), &[f(&[3, 4]), f(&[2, 2]), it.clone(), it.clone()], &[x.clone(), u.clone(), i64s(&[a]), i64s(&[b])], &mut rng);
    }
    // A full-extent dim (nothing to move along it) next to a moved one.
    let (x, u) = (rng.buffer(&f(&[4, 3]), -2.0, 2.0), rng.buffer(&f(&[2, 3]), -2.0, 2.0));
    crate::vmap::check("dynamic_update_slice full dim", dus(), &[f(&[4, 3]), f(&[2, 3]), it.clone(), it.clone()], &[x, u, i64s(&[1]), i64s(&[0])], &mut rng);
}

fn int_const(f: &mut Func, body: Option<&mut quabla_dialect::Body>, v: i64) -> Value {
    let k = OpKind::Constant(ConstantOp::Constant { value: Literal::from_i64s(t(DType::I64, &[]), &[v]) });
    match body {
        Some(b) => f.push_into(b, k, &[], vec![], None).unwrap()[0],
        None => f.push1(k, &[], None).unwrap(),
    }
}

/// `main(x: f64[3], w: f64[3]) -> (x after 4 steps, Y: f64[4, 3])` with
/// `x <- sin(x) * w + x * x * 0.25` and `Y[i] = x` at the start of step `i`: a counter from 0
/// compared with `lt` against 4, the invariant carry `w` and the stacked output `Y`.
fn loop_module() -> Module {
    let (it, xt, yt) = (t(DType::I64, &[]), t(DType::F64, &[3]), t(DType::F64, &[4, 3]));
    let mut f = Func::new("main", &[xt.clone(), xt.clone()]);
    let (x, w) = (f.params[0], f.params[1]);
    let zero = int_const(&mut f, None, 0);
    let y0 = f.push1(OpKind::Constant(ConstantOp::Constant { value: Literal::splat(yt.clone(), 0.0) }), &[], None).unwrap();
    let carries = [it.clone(), xt.clone(), xt.clone(), yt.clone()];
    let mut cond = f.new_body(&carries);
    let i = cond.params[0];
    let four = int_const(&mut f, Some(&mut cond), 4);
    let c = f.push_into(&mut cond, OpKind::Elementwise(ElementwiseOp::Compare { direction: CmpDir::Lt }), &[i, four], vec![], None).unwrap()[0];
    cond.outputs = vec![c];
    let mut body = f.new_body(&carries);
    let (i, x1, w1, y1) = (body.params[0], body.params[1], body.params[2], body.params[3]);
    let one = int_const(&mut f, Some(&mut body), 1);
    let i2 = f.push_into(&mut body, OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add }), &[i, one], vec![], None).unwrap()[0];
    let ew = |f: &mut Func, body: &mut quabla_dialect::Body, k: OpKind, xs: &[Value]| f.push_into(body, k, xs, vec![], None).unwrap()[0];
    let s = ew(&mut f, &mut body, OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Sin }), &[x1]);
    let sw = ew(&mut f, &mut body, OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), &[s, w1]);
    let xx = ew(&mut f, &mut body, OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), &[x1, x1]);
    let q = ew(&mut f, &mut body, OpKind::Constant(ConstantOp::Constant { value: Literal::splat(xt.clone(), 0.25) }), &[]);
    let xq = ew(&mut f, &mut body, OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), &[xx, q]);
    let x2 = ew(&mut f, &mut body, OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add }), &[sw, xq]);
    let r = ew(&mut f, &mut body, OpKind::Layout(LayoutOp::Reshape { shape: vec![1, 3] }), &[x1]);
    let z = int_const(&mut f, Some(&mut body), 0);
    let y2 = ew(&mut f, &mut body, OpKind::Slicing(SlicingOp::DynamicUpdateSlice {}), &[y1, r, i, z]);
    body.outputs = vec![i2, x2, w1, y2];
    let res = f.push_with_regions(OpKind::Control(ControlOp::While {}), &[zero, x, w, y0], vec![cond, body], None).unwrap();
    f.outputs = vec![res[1], res[3]];
    let m = Module { funcs: vec![f] };
    m.verify().unwrap();
    m
}

fn declare(m: &mut Module, name: &str, kind: TransformKind, of: &str) {
    let g = m.func(of).unwrap();
    let tr = Transform { kind, of: of.to_string() };
    let (p, r) = tr.signature(&g.param_types(), &g.result_types());
    m.funcs.push(Func::declaration(name, &p, &r, tr));
}

fn expanded() -> Module {
    let mut m = loop_module();
    declare(&mut m, "vjp", TransformKind::Vjp, "main");
    declare(&mut m, "vjp2", TransformKind::Vjp, "vjp");
    declare(&mut m, "hvp", TransformKind::Jvp, "vjp");
    quabla_passes::autodiff::autodiff(&mut m).unwrap_or_else(|e| panic!("{e}"));
    m.verify().unwrap_or_else(|e| panic!("{e}\n{}", m.to_mlir()));
    m
}

fn run(m: &Module, name: &str, xs: &[Buffer]) -> Vec<Vec<f64>> {
    interp::run_func(m, name, xs).unwrap_or_else(|e| panic!("@{name}: {e}")).iter().map(|b| b.to_f64_vec()).collect()
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn shift(x: &[f64], d: &[f64], h: f64) -> Vec<f64> {
    x.iter().zip(d).map(|(a, b)| a + h * b).collect()
}

fn close(a: f64, b: f64, tol: f64) {
    assert!((a - b).abs() <= tol * (1.0 + a.abs().max(b.abs())), "{a} vs {b}");
}

const X: [f64; 3] = [0.7, -0.4, 1.1];
const W: [f64; 3] = [1.3, 0.6, -0.9];
const CX: [f64; 3] = [0.5, -1.2, 0.8];
const TX: [f64; 3] = [0.3, -0.7, 0.2];
const TW: [f64; 3] = [-0.4, 0.9, 0.5];

fn cy() -> Vec<f64> {
    (0..12).map(|k| ((k * 7 % 5) as f64 - 2.0) * 0.3).collect()
}

#[test]
fn vjp_of_a_counted_loop_matches_finite_differences() {
    let m = expanded();
    // One loop forward (the primal replaced by the stacking loop) and one loop backward.
    let whiles = m.func("vjp").unwrap().ops.iter().filter(|o| matches!(o.kind, OpKind::Control(ControlOp::While {}))).count();
    assert_eq!(whiles, 2, "{}", m.to_mlir());
    let cy = cy();
    let loss = |x: &[f64], w: &[f64]| {
        let o = run(&m, "main", &[f64s(&[3], x), f64s(&[3], w)]);
        dot(&o[0], &CX) + dot(&o[1], &cy)
    };
    let g = run(&m, "vjp", &[f64s(&[3], &X), f64s(&[3], &W), f64s(&[3], &CX), f64s(&[4, 3], &cy)]);
    let h = 1e-6;
    let fd = (loss(&shift(&X, &TX, h), &shift(&W, &TW, h)) - loss(&shift(&X, &TX, -h), &shift(&W, &TW, -h))) / (2.0 * h);
    close(dot(&g[2], &TX) + dot(&g[3], &TW), fd, 1e-7);
    // Each input direction alone (the invariant carry's cotangent is accumulated over steps).
    let fdx = (loss(&shift(&X, &TX, h), &W) - loss(&shift(&X, &TX, -h), &W)) / (2.0 * h);
    close(dot(&g[2], &TX), fdx, 1e-7);
    // The primal outputs of the VJP are the primal's.
    let o = run(&m, "main", &[f64s(&[3], &X), f64s(&[3], &W)]);
    assert_eq!(g[0], o[0]);
    assert_eq!(g[1], o[1]);
}

#[test]
fn second_order_through_a_counted_loop() {
    let m = expanded();
    let cy = cy();
    let ux = [0.2, 0.4, -0.6];
    let uw = [-0.3, 0.1, 0.7];
    let inner = |x: &[f64], w: &[f64]| {
        let g = run(&m, "vjp", &[f64s(&[3], x), f64s(&[3], w), f64s(&[3], &CX), f64s(&[4, 3], &cy)]);
        dot(&g[2], &ux) + dot(&g[3], &uw)
    };
    let h = 1e-5;
    let fd = (inner(&shift(&X, &TX, h), &shift(&W, &TW, h)) - inner(&shift(&X, &TX, -h), &shift(&W, &TW, -h))) / (2.0 * h);
    let ins = vec![f64s(&[3], &X), f64s(&[3], &W), f64s(&[3], &CX), f64s(&[4, 3], &cy), f64s(&[3], &[0.0; 3]), f64s(&[4, 3], &[0.0; 12]), f64s(&[3], &ux), f64s(&[3], &uw)];
    let v2 = run(&m, "vjp2", &ins);
    close(dot(&v2[4], &TX) + dot(&v2[5], &TW), fd, 1e-6);
    // JVP of the VJP: the tangent of (gx, gw) in direction (TX, TW) (cotangent tangents zero).
    let hv = run(&m, "hvp", &[f64s(&[3], &X), f64s(&[3], &W), f64s(&[3], &CX), f64s(&[4, 3], &cy), f64s(&[3], &TX), f64s(&[3], &TW), f64s(&[3], &[0.0; 3]), f64s(&[4, 3], &[0.0; 12])]);
    let n = hv.len();
    close(dot(&hv[n - 2], &ux) + dot(&hv[n - 1], &uw), fd, 1e-6);
    // The JIT agrees with the interpreter on the derivative programs.
    let mut m = m;
    m.func_mut("vjp2").unwrap().public = true;
    for (name, ins) in [("vjp2", ins.clone())] {
        let exe = executor().compile(&m, name, &CompileOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let refs: Vec<&Buffer> = ins.iter().collect();
        let got = exe.run(&refs).unwrap();
        for (a, b) in got.iter().zip(&v2) {
            for (x, y) in a.to_f64_vec().iter().zip(b) {
                close(*x, *y, 1e-12);
            }
        }
    }
}

fn cond_body(lt: CmpDir, start: i64, step: i64, bound: i64, mirrored: bool) -> (Module, Counted) {
    let it = t(DType::I64, &[]);
    let mut f = Func::new("main", &[t(DType::F64, &[])]);
    let x = f.params[0];
    let s0 = int_const(&mut f, None, start);
    let carries = [it.clone(), t(DType::F64, &[])];
    let mut cond = f.new_body(&carries);
    let i = cond.params[0];
    let nb = int_const(&mut f, Some(&mut cond), bound);
    let ops = if mirrored { [nb, i] } else { [i, nb] };
    let c = f.push_into(&mut cond, OpKind::Elementwise(ElementwiseOp::Compare { direction: lt }), &ops, vec![], None).unwrap()[0];
    cond.outputs = vec![c];
    let mut body = f.new_body(&carries);
    let (i, y) = (body.params[0], body.params[1]);
    let st = int_const(&mut f, Some(&mut body), step);
    let i2 = f.push_into(&mut body, OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add }), &[st, i], vec![], None).unwrap()[0];
    let y2 = f.push_into(&mut body, OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Sin }), &[y], vec![], None).unwrap()[0];
    body.outputs = vec![i2, y2];
    let r = f.push_with_regions(OpKind::Control(ControlOp::While {}), &[s0, x], vec![cond, body], None).unwrap();
    f.outputs = vec![r[1]];
    let m = Module { funcs: vec![f] };
    m.verify().unwrap();
    let g = &m.funcs[0];
    let w = g.ops.iter().find(|o| !o.regions.is_empty()).unwrap();
    let fb = |b: &quabla_dialect::Body| {
        let mut h = Func::new("r", &b.params.iter().map(|p| g.ty(*p).clone()).collect::<Vec<_>>());
        // Same numbering as the enclosing function: reuse its table.
        h.types = g.types.clone();
        h.params = b.params.clone();
        h.ops = b.ops.clone();
        h.outputs = b.outputs.clone();
        h
    };
    let cl = counted_loop(&g.ops, &w.operands, &fb(&w.regions[0]), &fb(&w.regions[1])).unwrap_or_else(|e| panic!("{e}"));
    (m, cl)
}

#[test]
fn counted_loops_are_recognised_with_their_trip_counts() {
    // (direction, start, step, bound, mirrored) -> trips; each checked against running the loop.
    let cases = [(CmpDir::Lt, 0, 1, 5, false, 5), (CmpDir::Lt, 2, 3, 11, false, 3), (CmpDir::Le, 1, 2, 7, false, 4), (CmpDir::Gt, 0, 1, 3, true, 3), (CmpDir::Ge, -2, 1, 2, true, 5), (CmpDir::Ne, 0, 2, 6, false, 3), (CmpDir::Lt, 5, 1, 2, false, 0)];
    for (d, start, step, bound, mirrored, trips) in cases {
        let (m, cl) = cond_body(d, start, step, bound, mirrored);
        assert_eq!(cl, Counted { counter: 0, start, step, trips }, "{d:?} {start} {step} {bound}");
        // sin applied `trips` times.
        let y = run(&m, "main", &[f64s(&[], &[0.9])])[0][0];
        let want = (0..trips).fold(0.9f64, |a, _| a.sin());
        assert_eq!(y, want);
    }
}

#[test]
fn a_loop_with_a_runtime_trip_count_has_no_vjp() {
    let mut m = while_module();
    declare(&mut m, "vjp", TransformKind::Vjp, "main");
    let e = quabla_passes::autodiff::autodiff(&mut m).unwrap_err();
    assert!(matches!(&e, AutodiffError::Rule { source: RuleError::DynamicTripCount(why), .. } if why.contains("runtime value")), "{e}");
    assert!(e.to_string().contains("static trip count"), "{e}");
    // Forward mode still works on it.
    let mut m = while_module();
    declare(&mut m, "jvp", TransformKind::Jvp, "main");
    quabla_passes::autodiff::autodiff(&mut m).unwrap();
}

#[test]
fn dynamic_update_slice_keeps_its_operand_when_the_operand_is_used_again() {
    // y = dus(x * 2, u, i, 1) returned next to x * 2 itself, and a dynamic_slice of the operand
    // read after the update: the JIT must not update the operand's buffer in place.
    let (xt, ut, it) = (t(DType::F64, &[5, 4]), t(DType::F64, &[2, 3]), t(DType::I64, &[]));
    let mut f = Func::new("main", &[xt.clone(), ut.clone(), it.clone()]);
    let (x, u, i) = (f.params[0], f.params[1], f.params[2]);
    let two = f.push1(OpKind::Constant(ConstantOp::Constant { value: Literal::splat(xt.clone(), 2.0) }), &[], None).unwrap();
    let x2 = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), &[x, two], None).unwrap();
    let one = int_const(&mut f, None, 1);
    let y = f.push1(OpKind::Slicing(SlicingOp::DynamicUpdateSlice {}), &[x2, u, i, one], None).unwrap();
    let z = f.push1(OpKind::Slicing(SlicingOp::DynamicSlice { slice_sizes: vec![2, 3] }), &[x2, i, one], None).unwrap();
    f.outputs = vec![y, x2, z];
    let m = Module { funcs: vec![f] };
    m.verify().unwrap();
    let mut rng = Rng(5);
    let ins = [rng.buffer(&xt, -1.0, 1.0), rng.buffer(&ut, -1.0, 1.0), Buffer::from_slice(&[], &[2i64]).unwrap()];
    let want = interp::run_func(&m, "main", &ins).unwrap();
    let exe = executor().compile(&m, "main", &CompileOptions::default()).unwrap();
    let refs: Vec<&Buffer> = ins.iter().collect();
    let got = exe.run(&refs).unwrap();
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g.to_f64_vec(), w.to_f64_vec());
    }
}

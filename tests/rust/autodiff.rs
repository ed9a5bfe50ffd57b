//! Autodiff checks over the whole op table, in float64, with the reference interpreter:
//! * JVP against central finite differences;
//! * VJP against JVP by the dot-product identity <ct, J t> = <J^T ct, t> (exact up to rounding);
//! * second order: the JVP of the VJP (a Hessian-vector product) against finite differences
//!   of the VJP;
//!
//! and the JIT agrees with the interpreter on the derivative programs.
use quabla_dialect::{ArgOp, BinaryOp, CallOp, CmpDir, ConstantOp, DType, DotDims, DotOp, ElementwiseOp, Func, LayoutOp, Module, OpKind, ReduceOp, Reducer, SlicingOp, TensorType, Transform, TransformKind, UnaryOp};
use quabla_runtime::{interp, Buffer, CompileOptions, Executor};
use quabla_tests::Rng;

use crate::executor;

fn t(s: &[i64]) -> TensorType {
    TensorType::new(DType::F64, s)
}

/// A module with @f (one op), its JVP, VJP, and the JVP of the VJP, expanded by quabla-autodiff.
fn derivative_module(kind: &OpKind, params: &[TensorType]) -> Module {
    let mut f = Func::new("f", params);
    let ps = f.params.clone();
    f.outputs = f.push(kind.clone(), &ps, None).unwrap();
    let mut m = Module { funcs: vec![f] };
    let add = |m: &mut Module, name: &str, kind: TransformKind, of: &str| {
        let g = m.func(of).unwrap();
        let tr = Transform { kind, of: of.to_string() };
        let (p, r) = tr.signature(&g.param_types(), &g.result_types());
        m.funcs.push(Func::declaration(name, &p, &r, tr));
    };
    add(&mut m, "f_jvp", TransformKind::Jvp, "f");
    add(&mut m, "f_vjp", TransformKind::Vjp, "f");
    add(&mut m, "f_hvp", TransformKind::Jvp, "f_vjp");
    m.verify().unwrap();
    quabla_passes::autodiff::autodiff(&mut m).unwrap();
    m.verify().unwrap();
    m
}

fn axpy(a: f64, x: &Buffer, y: &Buffer) -> Buffer {
    let v: Vec<f64> = (0..x.len()).map(|i| y.get_f64(i) + a * x.get_f64(i)).collect();
    Buffer::from_f64s(x.ty().clone(), &v).unwrap()
}

fn dot(a: &Buffer, b: &Buffer) -> f64 {
    (0..a.len()).map(|i| a.get_f64(i) * b.get_f64(i)).sum()
}

fn run(m: &Module, name: &str, xs: &[Buffer]) -> Vec<Buffer> {
    interp::run_func(m, name, xs).unwrap_or_else(|e| panic!("@{name}: {e}"))
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
}

/// Checks the derivatives of `kind` at `inputs` (float inputs are differentiated).
pub(crate) fn check(what: &str, kind: OpKind, params: &[TensorType], inputs: &[Buffer], rng: &mut Rng) {
    let m = derivative_module(&kind, params);
    let f = m.func("f").unwrap();
    let float_in: Vec<usize> = (0..params.len()).filter(|&i| params[i].dtype.is_float()).collect();
    let outs_ty = f.result_types();
    let float_out: Vec<usize> = (0..outs_ty.len()).filter(|&i| outs_ty[i].dtype.is_float()).collect();
    let tangents: Vec<Buffer> = float_in.iter().map(|&i| rng.buffer(&params[i], -1.0, 1.0)).collect();
    let cts: Vec<Buffer> = float_out.iter().map(|&i| rng.buffer(&outs_ty[i], -1.0, 1.0)).collect();
    let h = 1e-6;
    let shifted = |a: f64| -> Vec<Buffer> {
        let mut xs = inputs.to_vec();
        for (k, &i) in float_in.iter().enumerate() {
            xs[i] = axpy(a, &tangents[k], &inputs[i]);
        }
        xs
    };
    // JVP vs finite differences.
    let mut jin = inputs.to_vec();
    jin.extend(tangents.iter().cloned());
    let jout = run(&m, "f_jvp", &jin);
    let (fp, fm) = (run(&m, "f", &shifted(h)), run(&m, "f", &shifted(-h)));
    for (k, &o) in float_out.iter().enumerate() {
        let jt = &jout[outs_ty.len() + k];
        for e in 0..jt.len() {
            let fd = (fp[o].get_f64(e) - fm[o].get_f64(e)) / (2.0 * h);
            assert!(close(jt.get_f64(e), fd, 1e-6), "{what}: JVP output {o}[{e}] = {} but finite differences give {fd}", jt.get_f64(e));
        }
    }
    // VJP vs JVP: <ct, J t> == <J^T ct, t>.
    let mut vin = inputs.to_vec();
    vin.extend(cts.iter().cloned());
    let vout = run(&m, "f_vjp", &vin);
    let lhs: f64 = float_out.iter().enumerate().map(|(k, _)| dot(&cts[k], &jout[outs_ty.len() + k])).sum();
    let rhs: f64 = float_in.iter().enumerate().map(|(k, _)| dot(&vout[outs_ty.len() + k], &tangents[k])).sum();
    assert!(close(lhs, rhs, 1e-12), "{what}: <ct, J t> = {lhs} but <J^T ct, t> = {rhs}");
    // Second order: d/da vjp(x + a t, ct) at a = 0 against finite differences of the VJP.
    let mut hin = vin.clone();
    hin.extend(tangents.iter().cloned());
    hin.extend(cts.iter().map(|c| Buffer::zeros(c.ty().clone())));
    let hout = run(&m, "f_hvp", &hin);
    let vp = run(&m, "f_vjp", &[shifted(h), cts.clone()].concat());
    let vm = run(&m, "f_vjp", &[shifted(-h), cts.clone()].concat());
    let nv = vout.len();
    let float_v: Vec<usize> = (0..nv).filter(|&i| vout[i].dtype().is_float()).collect();
    for (k, &o) in float_v.iter().enumerate() {
        let ht = &hout[nv + k];
        for e in 0..ht.len() {
            let fd = (vp[o].get_f64(e) - vm[o].get_f64(e)) / (2.0 * h);
            assert!(close(ht.get_f64(e), fd, 1e-5), "{what}: second-order output {o}[{e}] = {} but finite differences give {fd}", ht.get_f64(e));
        }
    }
}

#[test]
fn unary_and_binary_ops() {
    let mut rng = Rng(11);
    for &u in UnaryOp::ALL {
        if !u.class().admits(DType::F64) {
            continue;
        }
        let (lo, hi) = match u {
            UnaryOp::Log | UnaryOp::Sqrt | UnaryOp::Rsqrt | UnaryOp::Log1p => (0.2, 3.0),
            UnaryOp::Tan => (-1.2, 1.2),
            UnaryOp::Asin | UnaryOp::Acos | UnaryOp::Atanh | UnaryOp::ErfInv => (-0.8, 0.8),
            UnaryOp::Acosh => (1.2, 3.0),
            UnaryOp::Lgamma | UnaryOp::Digamma => (0.2, 3.0),
            UnaryOp::Floor | UnaryOp::Ceil | UnaryOp::Round => (0.1, 0.4),
            _ => (-2.0, 2.0),
        };
        let x = rng.buffer(&t(&[5]), lo, hi);
        check(u.name(), OpKind::Elementwise(ElementwiseOp::Unary { op: u }), &[t(&[5])], &[x], &mut rng);
    }
    for &b in BinaryOp::ALL {
        if !b.class().admits(DType::F64) {
            continue;
        }
        let (x, y) = match b {
            BinaryOp::Pow => (rng.buffer(&t(&[4]), 0.3, 2.0), rng.buffer(&t(&[4]), -1.5, 2.5)),
            BinaryOp::Rem => (rng.buffer(&t(&[4]), 1.1, 5.0), rng.buffer(&t(&[4]), 0.7, 1.0)),
            _ => (rng.buffer(&t(&[4]), -2.0, 2.0), rng.buffer(&t(&[4]), 0.5, 2.0)),
        };
        check(b.name(), OpKind::Elementwise(ElementwiseOp::Binary { op: b }), &[t(&[4]), t(&[4])], &[x, y], &mut rng);
    }
    for n in [0, 1, 2, 3, -2] {
        let x = rng.buffer(&t(&[3]), 0.5, 2.0);
        check(&format!("powi {n}"), OpKind::Elementwise(ElementwiseOp::Powi { exponent: n }), &[t(&[3])], &[x], &mut rng);
    }
    let p = Buffer::from_slice(&[4], &[true, false, false, true]).unwrap();
    let (a, c) = (rng.buffer(&t(&[4]), -1.0, 1.0), rng.buffer(&t(&[4]), -1.0, 1.0));
    check("select", OpKind::Elementwise(ElementwiseOp::Select {}), &[TensorType::new(DType::I1, [4]), t(&[4]), t(&[4])], &[p, a, c], &mut rng);
}

#[test]
fn structural_ops() {
    let mut rng = Rng(12);
    let x = rng.buffer(&t(&[3, 4]), -2.0, 2.0);
    let cases: Vec<(&str, OpKind, Vec<TensorType>)> = vec![
        ("broadcast", OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![0, 2], shape: vec![3, 2, 4] }), vec![t(&[3, 4])]),
        ("broadcast size-1", OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![0, 1], shape: vec![3, 4] }), vec![t(&[3, 1])]),
        ("reshape", OpKind::Layout(LayoutOp::Reshape { shape: vec![2, 6] }), vec![t(&[3, 4])]),
        ("transpose", OpKind::Layout(LayoutOp::Transpose { perm: vec![1, 0] }), vec![t(&[3, 4])]),
        ("slice", OpKind::Slicing(SlicingOp::Slice { start_indices: vec![1, 0], limit_indices: vec![3, 4], strides: vec![1, 2] }), vec![t(&[3, 4])]),
        ("reduce_sum", OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Sum, dims: vec![1] }), vec![t(&[3, 4])]),
        ("reduce_max", OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Max, dims: vec![0] }), vec![t(&[3, 4])]),
        ("reduce_min", OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Min, dims: vec![0, 1] }), vec![t(&[3, 4])]),
        ("reduce_prod", OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Prod, dims: vec![1] }), vec![t(&[3, 4])]),
    ];
    for (what, kind, params) in cases {
        let inputs: Vec<Buffer> = params.iter().map(|p| if p.shape == vec![3, 4] { x.clone() } else { rng.buffer(p, -2.0, 2.0) }).collect();
        check(what, kind, &params, &inputs, &mut rng);
    }
    let pv = rng.buffer(&t(&[]), -1.0, 1.0);
    check("pad", OpKind::Slicing(SlicingOp::Pad { edge_padding_low: vec![1, 0], edge_padding_high: vec![0, 2], interior_padding: vec![1, 1]}), &[t(&[3, 4]), t(&[])], &[x.clone(), pv], &mut rng);
    let y = rng.buffer(&t(&[3, 2]), -1.0, 1.0);
    check("concatenate", OpKind::Slicing(SlicingOp::Concatenate { dim: 1 }), &[t(&[3, 4]), t(&[3, 2])], &[x.clone(), y], &mut rng);
    let i64s = |v: &[i64], s: &[i64]| Buffer::from_slice(s, v).unwrap();
    let it = TensorType::new(DType::I64, []);
    check("dynamic_slice", OpKind::Slicing(SlicingOp::DynamicSlice { slice_sizes: vec![2, 2]}), &[t(&[3, 4]), it.clone(), it.clone()], &[x.clone(), i64s(&[1], &[]), i64s(&[5], &[])], &mut rng);
    let idx = i64s(&[2, 0, 2, 7], &[2, 2]);
    check("gather", OpKind::Slicing(SlicingOp::Gather { axis: 1 }), &[t(&[3, 4]), TensorType::new(DType::I64, [2, 2])], &[x.clone(), idx], &mut rng);
    let w = rng.buffer(&t(&[4, 5]), -1.0, 1.0);
    check("dot_general matmul", OpKind::Dot(DotOp::DotGeneral { dims: DotDims::matmul() }), &[t(&[3, 4]), t(&[4, 5])], &[x.clone(), w], &mut rng);
    let (a, b) = (rng.buffer(&t(&[4, 2, 3]), -1.0, 1.0), rng.buffer(&t(&[3, 5, 2]), -1.0, 1.0));
    let dims = DotDims { lhs_batching_dimensions: vec![1], rhs_batching_dimensions: vec![2], lhs_contracting_dimensions: vec![2], rhs_contracting_dimensions: vec![0] };
    check("dot_general batch", OpKind::Dot(DotOp::DotGeneral { dims }), &[t(&[4, 2, 3]), t(&[3, 5, 2])], &[a, b], &mut rng);
    let (a, b) = (rng.buffer(&t(&[2, 3, 4]), -1.0, 1.0), rng.buffer(&t(&[4, 3, 6]), -1.0, 1.0));
    let dims = DotDims { lhs_batching_dimensions: vec![], rhs_batching_dimensions: vec![], lhs_contracting_dimensions: vec![1, 2], rhs_contracting_dimensions: vec![1, 0] };
    check("dot_general two contracting dims", OpKind::Dot(DotOp::DotGeneral { dims }), &[t(&[2, 3, 4]), t(&[4, 3, 6])], &[a, b], &mut rng);
    // Integer results have no tangent; the op still appears in differentiated programs.
    let _ = (ArgOp::Max, CmpDir::Lt);
}

#[test]
fn nested_transforms_and_jit() {
    // f(x) = sin(x) * x; grad(grad(f)) via vjp of (a function calling vjp of f), at 1.3.
    let s = t(&[]);
    let mut f = Func::new("f", &[s.clone()]);
    f.public = false;
    let a = f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Sin }), &[f.params[0]], None).unwrap();
    let y = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), &[a, f.params[0]], None).unwrap();
    f.outputs = vec![y];
    let vjp = Func::declaration("f_vjp", &[s.clone(), s.clone()], &[s.clone(), s.clone()], Transform { kind: TransformKind::Vjp, of: "f".into() });
    // g(x) = f'(x) = f_vjp(x, 1)[1]
    let mut g = Func::new("g", &[s.clone()]);
    g.public = false;
    let one = g.push1(OpKind::Constant(ConstantOp::Constant { value: quabla_dialect::Literal::splat(s.clone(), 1.0) }), &[], None).unwrap();
    let r = g.push(OpKind::Call(CallOp::Call { callee: "f_vjp".into(), results: vec![s.clone(), s.clone()] }), &[g.params[0], one], None).unwrap();
    g.outputs = vec![r[1]];
    let gvjp = Func::declaration("g_vjp", &[s.clone(), s.clone()], &[s.clone(), s.clone()], Transform { kind: TransformKind::Vjp, of: "g".into() });
    let mut main = Func::new("main", &[s.clone()]);
    let one = main.push1(OpKind::Constant(ConstantOp::Constant { value: quabla_dialect::Literal::splat(s.clone(), 1.0) }), &[], None).unwrap();
    let r = main.push(OpKind::Call(CallOp::Call { callee: "g_vjp".into(), results: vec![s.clone(), s.clone()] }), &[main.params[0], one], None).unwrap();
    main.outputs = vec![r[0], r[1]];
    let mut m = Module { funcs: vec![main, gvjp, g, vjp, f] };
    m.verify().unwrap();
    quabla_passes::autodiff::autodiff(&mut m).unwrap();
    quabla_passes::simplify::inline::inline(&mut m);
    quabla_passes::canonicalize(&mut m);
    let x = 1.3f64;
    let want1 = x.cos() * x + x.sin();
    let want2 = 2.0 * x.cos() - x * x.sin();
    let xb = Buffer::from_f64s(s.clone(), &[x]).unwrap();
    let out = interp::run_func(&m, "main", std::slice::from_ref(&xb)).unwrap();
    assert!((out[0].get_f64(0) - want1).abs() < 1e-14 && (out[1].get_f64(0) - want2).abs() < 1e-14, "{out:?}");
    let exe = executor().compile(&m, "main", &CompileOptions::default()).unwrap();
    let got = exe.run(&[&xb]).unwrap();
    assert!((got[1].get_f64(0) - want2).abs() < 1e-14, "JIT f''(1.3) = {:?}, want {want2}", got[1]);
    assert!(m.funcs[0].ops.len() < 16, "the second-derivative program stays small after canonicalize: {}", m.to_mlir());
}

//! The JVP, VJP and batching rules of `quabla.if` (passes/src/rules/control.rs) on the nested
//! `if` of tests/rust/regions.rs, with the reference interpreter in float64: the JVP against
//! central finite differences in both branches of both ifs, the VJP against the JVP by the
//! dot-product identity, second order (JVP of the VJP and VJP of the VJP) against finite
//! differences of the VJP, vmap with an unbatched and a batched predicate against a loop
//! over the examples, and the JIT against the interpreter on the derivative programs.
use quabla_dialect::{DType, Literal, Module, TensorType, Transform, TransformKind};
use quabla_runtime::{interp, Buffer, CompileOptions, Executor};

use crate::executor;
use crate::regions::nested_if_module;

fn t(d: DType, s: &[i64]) -> TensorType {
    TensorType::new(d, s)
}

fn declare(m: &mut Module, name: &str, kind: TransformKind, of: &str) {
    let g = m.func(of).unwrap();
    let tr = Transform { kind, of: of.to_string() };
    let (p, r) = tr.signature(&g.param_types(), &g.result_types());
    m.funcs.push(quabla_dialect::Func::declaration(name, &p, &r, tr));
}

/// @main with its JVP, VJP, JVP of the VJP, VJP of the VJP and two vmaps, expanded.
fn module() -> Module {
    let mut m = nested_if_module();
    declare(&mut m, "jvp", TransformKind::Jvp, "main");
    declare(&mut m, "vjp", TransformKind::Vjp, "main");
    declare(&mut m, "hvp", TransformKind::Jvp, "vjp");
    declare(&mut m, "vjp2", TransformKind::Vjp, "vjp");
    declare(&mut m, "vmap_x", TransformKind::Vmap { in_axes: vec![None, Some(0), Some(0)], out_axes: vec![Some(0)], size: 3, axis_name: None }, "main");
    declare(&mut m, "vmap_p", TransformKind::Vmap { in_axes: vec![Some(0), Some(1), None], out_axes: vec![Some(0)], size: 3, axis_name: None }, "main");
    m.verify().unwrap();
    quabla_passes::autodiff::autodiff(&mut m).unwrap_or_else(|e| panic!("{e}"));
    m.verify().unwrap_or_else(|e| panic!("{e}\n{}", m.to_mlir()));
    m
}

fn f64s(shape: &[i64], v: &[f64]) -> Buffer {
    Buffer::from_f64s(t(DType::F64, shape), v).unwrap()
}

fn pred(p: bool) -> Buffer {
    Buffer::from_literal(&Literal::from_f64s(t(DType::I1, &[]), &[if p { 1.0 } else { 0.0 }]))
}

fn run(m: &Module, name: &str, xs: &[Buffer]) -> Vec<Vec<f64>> {
    interp::run_func(m, name, xs).unwrap_or_else(|e| panic!("@{name}: {e}")).iter().map(|b| b.to_f64_vec()).collect()
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn close(a: &[f64], b: &[f64], tol: f64) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= tol * (1.0 + x.abs().max(y.abs())), "{a:?} vs {b:?}");
    }
}

fn shift(x: &[f64], t: &[f64], h: f64) -> Vec<f64> {
    x.iter().zip(t).map(|(a, b)| a + h * b).collect()
}

/// (p, y) covering the then branch, the else-then branch and the else-else branch.
const CASES: [(bool, f64); 3] = [(true, 0.7), (false, 0.5), (false, 10.0)];
const X: [f64; 3] = [1.3, -0.4, 2.1];
const TX: [f64; 3] = [0.3, -1.1, 0.6];
const TY: f64 = 0.8;
const CT: [f64; 3] = [0.9, -0.2, 1.4];

#[test]
fn if_jvp_matches_finite_differences_and_vjp_matches_jvp() {
    let m = module();
    for (p, y) in CASES {
        let h = 1e-6;
        let fp = run(&m, "main", &[pred(p), f64s(&[3], &shift(&X, &TX, h)), f64s(&[], &[y + h * TY])]);
        let fm = run(&m, "main", &[pred(p), f64s(&[3], &shift(&X, &TX, -h)), f64s(&[], &[y - h * TY])]);
        let fd: Vec<f64> = fp[0].iter().zip(&fm[0]).map(|(a, b)| (a - b) / (2.0 * h)).collect();
        let j = run(&m, "jvp", &[pred(p), f64s(&[3], &X), f64s(&[], &[y]), f64s(&[3], &TX), f64s(&[], &[TY])]);
        close(&j[1], &fd, 1e-6);
        let v = run(&m, "vjp", &[pred(p), f64s(&[3], &X), f64s(&[], &[y]), f64s(&[3], &CT)]);
        assert_eq!(v[0], j[0], "p={p} y={y}");
        let lhs = dot(&CT, &j[1]);
        let rhs = dot(&v[1], &TX) + v[2][0] * TY;
        close(&[lhs], &[rhs], 1e-12);
    }
}

#[test]
fn if_second_order_matches_finite_differences_of_the_vjp() {
    let m = module();
    for (p, y) in CASES {
        let h = 1e-6;
        let vjp_at = |s: f64| run(&m, "vjp", &[pred(p), f64s(&[3], &shift(&X, &TX, s)), f64s(&[], &[y + s * TY]), f64s(&[3], &CT)]);
        let (a, b) = (vjp_at(h), vjp_at(-h));
        let fd: Vec<f64> = a[1].iter().chain(&a[2]).zip(b[1].iter().chain(&b[2])).map(|(u, w)| (u - w) / (2.0 * h)).collect();
        // hvp: (p, x, y, ct, tx, ty, tct) -> (out, cx, cy, t_out, t_cx, t_cy); tct = 0.
        let hv = run(&m, "hvp", &[pred(p), f64s(&[3], &X), f64s(&[], &[y]), f64s(&[3], &CT), f64s(&[3], &TX), f64s(&[], &[TY]), f64s(&[3], &[0.0; 3])]);
        let got: Vec<f64> = hv[4].iter().chain(&hv[5]).copied().collect();
        close(&got, &fd, 1e-5);
        // vjp2 against hvp by the dot-product identity on the cotangent outputs (cx, cy).
        let (u, uy) = ([0.5, -0.7, 0.25], -1.5);
        let v2 = run(&m, "vjp2", &[pred(p), f64s(&[3], &X), f64s(&[], &[y]), f64s(&[3], &CT), f64s(&[3], &[0.0; 3]), f64s(&[3], &u), f64s(&[], &[uy])]);
        let lhs = dot(&u, &hv[4]) + uy * hv[5][0];
        let rhs = dot(&v2[3], &TX) + v2[4][0] * TY;
        close(&[lhs], &[rhs], 1e-9);
    }
}

#[test]
fn if_vmap_with_unbatched_and_batched_predicates() {
    let m = module();
    let xs = [[1.0, -2.0, 3.5], [0.5, 0.25, -1.0], [2.0, 2.0, 2.0]];
    let ys = [0.5, 10.0, -3.0];
    let flat: Vec<f64> = xs.iter().flatten().copied().collect();
    for p in [true, false] {
        let got = run(&m, "vmap_x", &[pred(p), f64s(&[3, 3], &flat), f64s(&[3], &ys)]);
        let want: Vec<f64> = (0..3).flat_map(|i| run(&m, "main", &[pred(p), f64s(&[3], &xs[i]), f64s(&[], &[ys[i]])]).remove(0)).collect();
        assert_eq!(got[0], want, "p={p}");
    }
    // Batched predicate; x mapped along its dim 1, y unmapped.
    let ps = [true, false, false];
    let pb = Buffer::from_literal(&Literal::from_f64s(t(DType::I1, &[3]), &[1.0, 0.0, 0.0]));
    let xt: Vec<f64> = (0..3).flat_map(|j| (0..3).map(move |i| xs[i][j])).collect();
    let got = run(&m, "vmap_p", &[pb, f64s(&[3, 3], &xt), f64s(&[], &[4.0])]);
    let want: Vec<f64> = (0..3).flat_map(|i| run(&m, "main", &[pred(ps[i]), f64s(&[3], &xs[i]), f64s(&[], &[4.0])]).remove(0)).collect();
    assert_eq!(got[0], want);
}

#[test]
fn jit_agrees_with_the_interpreter_on_if_derivatives() {
    let m = module();
    // Both take (p, x, y, ct) and then hvp: (tx, ty, tct), vjp2: (c_out, c_cx, c_cy).
    type Tail<'a> = (&'a str, [Vec<f64>; 3], [&'a [i64]; 3]);
    let tails: [Tail; 2] = [("hvp", [TX.to_vec(), vec![TY], vec![0.1, 0.2, -0.3]], [&[3], &[], &[3]]), ("vjp2", [vec![0.5, 0.1, -0.3], vec![0.2, -0.6, 0.9], vec![0.4]], [&[3], &[3], &[]])];
    for (name, vals, shapes) in tails {
        let mut jm = m.clone();
        jm.funcs.iter_mut().for_each(|f| f.public = f.name == name);
        let exe = executor().compile(&jm, name, &CompileOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
        for (p, y) in CASES {
            let mut ins = vec![pred(p), f64s(&[3], &X), f64s(&[], &[y]), f64s(&[3], &CT)];
            ins.extend(vals.iter().zip(shapes).map(|(v, s)| f64s(s, v)));
            let want = run(&m, name, &ins);
            let refs: Vec<&Buffer> = ins.iter().collect();
            let got: Vec<Vec<f64>> = exe.run(&refs).unwrap().iter().map(|b| b.to_f64_vec()).collect();
            assert_eq!(got.len(), want.len());
            for (g, w) in got.iter().zip(&want) {
                close(g, w, 1e-12);
            }
        }
    }
}

/// The outlined chunks of the derivative programs, each compiled as the entry: a chunk returns
/// an `if` whose else branch returns a nested `if` that yields a parameter in one branch and a
/// new value in the other. With the output's buffer as the outer branches' destination,
/// empty-tensor elimination put it into the inner branch and one-shot bufferization failed
/// ("cannot avoid RaW conflict"); such a result is copied out after the branch now.
#[test]
fn chunks_of_if_derivatives_compile_as_entries() {
    for name in ["hvp", "vjp2"] {
        let mut m = module();
        m.funcs.iter_mut().for_each(|f| f.public = f.name == name);
        let chunks = quabla_passes::outline::outline(&mut m, quabla_passes::outline::DEFAULT_MAX_OPS);
        assert!(!chunks.is_empty(), "{name}");
        for c in &chunks {
            let mut cm = m.clone();
            cm.funcs.iter_mut().for_each(|f| f.public = &f.name == c);
            let g = cm.func(c).unwrap().clone();
            let ins: Vec<Buffer> = g.param_types().iter().enumerate().map(|(k, t)| if t.dtype == DType::I1 { pred(k % 2 == 0) } else { quabla_tests::Rng(k as u64).buffer(t, -1.0, 1.0) }).collect();
            let want = run(&cm, c, &ins);
            let exe = executor().compile(&cm, c, &CompileOptions::default()).unwrap_or_else(|e| panic!("{c}: {e}"));
            let got: Vec<Vec<f64>> = exe.run(&ins.iter().collect::<Vec<_>>()).unwrap().iter().map(|b| b.to_f64_vec()).collect();
            for (g, w) in got.iter().zip(&want) {
                close(g, w, 1e-12);
            }
        }
    }
}

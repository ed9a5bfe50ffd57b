//! Numerics of the lowering: each family's cases are JIT-run through the DPS ABI with
//! `mlir-runner` (one process per family and vectorize setting) and compared with values
//! computed here or written out from docs/spec.md (division by zero, NaN rules, clamping,
//! first-index ties, saturation, ...).
mod common;

use common::{assert_close, fl, il, jit, jit_with, lit_f, lit_i, Case, Vals};
use quabla_lowering::Codegen;
use quabla_dialect::{ArgOp, BinaryOp, CallOp, CmpDir, Combiner, ConstantOp, DType, DotDims, DotOp, ElementwiseOp, Func, LayoutOp, Literal, OpKind, ReduceOp, Reducer, ScatterOp, SlicingOp, TensorType, UnaryOp};

const NAN: f64 = f64::NAN;

/// A check of one case's outputs / of its first output.
type Check = Box<dyn Fn(&[Vals])>;
type Check1 = Box<dyn Fn(&Vals)>;
type IntFn = fn(i64, i64) -> i64;
const INF: f64 = f64::INFINITY;

fn t(d: DType, s: &[i64]) -> TensorType {
    TensorType::new(d, s)
}

/// Runs `cases` with LLVM at -O0 and at -O3 (where LLVM's loop vectorizer runs, and float
/// sums may be reassociated), and the CUDA target's linalg forms at -O0 on the CPU: all must
/// agree (floats to 1e-5 relative; the CUDA forms' `math.*` ops, libm here, may also round
/// subnormal results to zero, e.g. logistic(-100) in f32); returns -O3's.
fn run(cases: &[Case], helpers: &[Func]) -> Vec<Vec<Vals>> {
    let a = jit(cases, helpers, 0);
    let b = jit(cases, helpers, 3);
    let c = jit_with(cases, helpers, 0, Codegen { target: &quabla_lowering::cuda::CUDA, ..Codegen::default() });
    for (what, other, abs) in [("-O0", &a, 0.0), ("the CUDA target's forms", &c, 1.2e-38)] {
        for (k, (x, y)) in other.iter().zip(&b).enumerate() {
            for (j, (p, q)) in x.iter().zip(y).enumerate() {
                let same = match (p, q) {
                    (Vals::F(p), Vals::F(q)) => p.iter().zip(q).all(|(u, v)| u.to_bits() == v.to_bits() || (u.is_nan() && v.is_nan()) || (u - v).abs() <= 1e-5 * u.abs() + abs),
                    _ => p == q,
                };
                assert!(same, "{} output {j}: {what} and -O3 differ:\n {what} {p:?}\n -O3 {q:?}", cases[k].func.name);
            }
        }
    }
    b
}

/// Relative tolerance of a few ulps of `d`.
fn ulps(d: DType) -> f64 {
    if d == DType::F32 {
        1e-6
    } else {
        1e-14
    }
}

/// Rounds through f32 when `d` is f32.
fn r(d: DType, v: f64) -> f64 {
    if d == DType::F32 {
        v as f32 as f64
    } else {
        v
    }
}

fn sign(x: f64) -> f64 {
    if x.is_nan() || x == 0.0 {
        x
    } else {
        x.signum()
    }
}

/// 1/(1 + e^-x) without overflow or cancellation (e^x/(1 + e^x) for x < 0), so that tiny
/// results such as logistic(-100) in f32 (subnormal) are exact references.
fn logistic(x: f64) -> f64 {
    if x < 0.0 {
        let e = x.exp();
        e / (1.0 + e)
    } else {
        1.0 / (1.0 + (-x).exp())
    }
}

/// The reference of a float unary op, evaluated in the precision of `d`.
fn unary_ref(u: UnaryOp, d: DType, x: f64) -> f64 {
    if d == DType::F32 {
        let x = x as f32;
        let y: f32 = match u {
            UnaryOp::Neg => -x,
            UnaryOp::Abs => x.abs(),
            UnaryOp::Sign => sign(x as f64) as f32,
            UnaryOp::Exp => x.exp(),
            UnaryOp::Exp2 => x.exp2(),
            UnaryOp::Expm1 => x.exp_m1(),
            UnaryOp::Log => x.ln(),
            UnaryOp::Log1p => x.ln_1p(),
            UnaryOp::Sin => x.sin(),
            UnaryOp::Cos => x.cos(),
            UnaryOp::Tan => x.tan(),
            UnaryOp::Tanh => x.tanh(),
            UnaryOp::Logistic => logistic(x as f64) as f32,
            UnaryOp::Sqrt => x.sqrt(),
            UnaryOp::Rsqrt => 1.0 / x.sqrt(),
            UnaryOp::Floor => x.floor(),
            UnaryOp::Ceil => x.ceil(),
            UnaryOp::Round => x.round_ties_even(),
            UnaryOp::Sinh => x.sinh(),
            UnaryOp::Cosh => x.cosh(),
            UnaryOp::Asin => x.asin(),
            UnaryOp::Acos => x.acos(),
            UnaryOp::Atan => x.atan(),
            UnaryOp::Asinh => x.asinh(),
            UnaryOp::Acosh => x.acosh(),
            UnaryOp::Atanh => x.atanh(),
            UnaryOp::Cbrt => x.cbrt(),
            UnaryOp::Erf | UnaryOp::Not | UnaryOp::IsFinite | UnaryOp::PopulationCount | UnaryOp::Erfc | UnaryOp::ErfInv | UnaryOp::Lgamma | UnaryOp::Digamma => unreachable!(),
        };
        return y as f64;
    }
    match u {
        UnaryOp::Neg => -x,
        UnaryOp::Abs => x.abs(),
        UnaryOp::Sign => sign(x),
        UnaryOp::Exp => x.exp(),
        UnaryOp::Exp2 => x.exp2(),
        UnaryOp::Expm1 => x.exp_m1(),
        UnaryOp::Log => x.ln(),
        UnaryOp::Log1p => x.ln_1p(),
        UnaryOp::Sin => x.sin(),
        UnaryOp::Cos => x.cos(),
        UnaryOp::Tan => x.tan(),
        UnaryOp::Tanh => x.tanh(),
        UnaryOp::Logistic => logistic(x),
        UnaryOp::Sqrt => x.sqrt(),
        UnaryOp::Rsqrt => 1.0 / x.sqrt(),
        UnaryOp::Floor => x.floor(),
        UnaryOp::Ceil => x.ceil(),
        UnaryOp::Round => x.round_ties_even(),
        UnaryOp::Sinh => x.sinh(),
        UnaryOp::Cosh => x.cosh(),
        UnaryOp::Asin => x.asin(),
        UnaryOp::Acos => x.acos(),
        UnaryOp::Atan => x.atan(),
        UnaryOp::Asinh => x.asinh(),
        UnaryOp::Acosh => x.acosh(),
        UnaryOp::Atanh => x.atanh(),
        UnaryOp::Cbrt => x.cbrt(),
        UnaryOp::Erf | UnaryOp::Not | UnaryOp::IsFinite | UnaryOp::PopulationCount | UnaryOp::Erfc | UnaryOp::ErfInv | UnaryOp::Lgamma | UnaryOp::Digamma => unreachable!(),
    }
}

const XS: [f64; 24] = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.7, -3.7, 1e-9, -1e-9, 1e-3, -0.3, 0.49, 0.51, 20.0, -20.0, 88.0, -100.0, INF, -INF, NAN];

#[test]
fn float_unary() {
    let mut cases = vec![];
    let mut want = vec![];
    for d in [DType::F32, DType::F64] {
        for &u in UnaryOp::ALL {
            // The special functions (erfc, erf_inv, lgamma, digamma) have no std reference: they are
            // checked against SciPy in tests/python/test_scipy.py.
            if matches!(u, UnaryOp::Erf | UnaryOp::Not | UnaryOp::IsFinite | UnaryOp::PopulationCount | UnaryOp::Erfc | UnaryOp::ErfInv | UnaryOp::Lgamma | UnaryOp::Digamma) {
                continue;
            }
            let x = fl(d, &[XS.len() as i64], &XS);
            want.push((u, d, lit_f(&x).iter().map(|&v| unary_ref(u, d, v)).collect::<Vec<_>>()));
            cases.push(Case::op(&format!("{}_{d}", u.name()), OpKind::Elementwise(ElementwiseOp::Unary { op: u }), vec![x]));
        }
        // erf against known values.
        let xs = [0.0, -0.0, 0.5, 1.0, -2.0, 3.0, INF, -INF, NAN];
        let e = [0.0, -0.0, 0.5204998778130465, 0.8427007929497149, -0.9953222650189527, 0.9999779095030014, 1.0, -1.0, NAN];
        want.push((UnaryOp::Erf, d, e.iter().map(|&v| r(d, v)).collect()));
        cases.push(Case::op(&format!("erf_{d}"), OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Erf }), vec![fl(d, &[9], &xs)]));
        // is_finite: an i1 result (1.0 / 0.0 here stand for true / false).
        want.push((UnaryOp::IsFinite, d, XS.iter().map(|x| if x.is_finite() { 1.0 } else { 0.0 }).collect()));
        cases.push(Case::op(&format!("is_finite_{d}"), OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::IsFinite }), vec![fl(d, &[XS.len() as i64], &XS)]));
    }
    let got = run(&cases, &[]);
    for ((u, d, w), g) in want.iter().zip(&got) {
        if *u == UnaryOp::IsFinite {
            let want: Vec<i64> = w.iter().map(|&v| v as i64).collect();
            assert_eq!(g[0].i(), want.as_slice(), "is_finite {d}");
            continue;
        }
        let exact = matches!(u, UnaryOp::Neg | UnaryOp::Abs | UnaryOp::Sign | UnaryOp::Floor | UnaryOp::Ceil | UnaryOp::Round | UnaryOp::Sqrt);
        // Transcendental functions: libm vs Rust's libm (a few ulps; expm1 is a formula).
        let tol = if exact { 0.0 } else { 4.0 * ulps(*d) };
        assert_close(&format!("{} {d}", u.name()), g[0].f(), w, tol);
    }
}

#[test]
fn expm1_log1p_small_arguments() {
    // Relative accuracy where exp(x) - 1 and log(1 + x) would cancel.
    let xs: Vec<f64> = (0..40).map(|i| 10f64.powf(-(i as f64) / 3.0) * if i % 2 == 0 { 1.0 } else { -1.0 }).collect();
    let mut cases = vec![];
    for d in [DType::F32, DType::F64] {
        cases.push(Case::op(&format!("expm1_{d}"), OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Expm1 }), vec![fl(d, &[40], &xs)]));
        cases.push(Case::op(&format!("log1p_{d}"), OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Log1p }), vec![fl(d, &[40], &xs.iter().map(|x| x.abs() * 0.9).collect::<Vec<_>>())]));
    }
    let got = run(&cases, &[]);
    for (c, g) in cases.iter().zip(&got) {
        let d = c.inputs[0].ty.dtype;
        let w: Vec<f64> = lit_f(&c.inputs[0]).iter().map(|&x| unary_ref(if c.func.name.starts_with("expm1") { UnaryOp::Expm1 } else { UnaryOp::Log1p }, d, x)).collect();
        assert_close(&c.func.name, g[0].f(), &w, 4.0 * ulps(d));
    }
}

#[test]
fn integer_and_bool_unary() {
    let mut cases = vec![];
    let mut want: Vec<Vec<i64>> = vec![];
    for (d, min, max) in [(DType::I32, i32::MIN as i64, i32::MAX as i64), (DType::I64, i64::MIN, i64::MAX)] {
        let xs = [0, 1, -1, 7, -7, min, max];
        let x = il(d, &[7], &xs);
        let wrap = |v: i64| if d == DType::I32 { v as i32 as i64 } else { v };
        cases.push(Case::op(&format!("neg_{d}"), OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Neg }), vec![x.clone()]));
        want.push(xs.iter().map(|&v| wrap(v.wrapping_neg())).collect());
        cases.push(Case::op(&format!("abs_{d}"), OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Abs }), vec![x.clone()]));
        want.push(xs.iter().map(|&v| wrap(v.wrapping_abs())).collect());
        cases.push(Case::op(&format!("sign_{d}"), OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Sign }), vec![x.clone()]));
        want.push(xs.iter().map(|&v| v.signum()).collect());
        cases.push(Case::op(&format!("not_{d}"), OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Not }), vec![x]));
        want.push(xs.iter().map(|&v| !v).collect());
    }
    cases.push(Case::op("not_i1", OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Not }), vec![il(DType::I1, &[2], &[0, 1])]));
    want.push(vec![1, 0]);
    let got = run(&cases, &[]);
    for ((c, g), w) in cases.iter().zip(&got).zip(&want) {
        assert_eq!(g[0].i(), w.as_slice(), "{}", c.func.name);
    }
}

fn int_div(a: i64, b: i64, d: DType) -> (i64, i64) {
    let min = if d == DType::I32 { i32::MIN as i64 } else { i64::MIN };
    if b == 0 {
        (-1, a)
    } else if a == min && b == -1 {
        (min, 0)
    } else {
        (a / b, a % b)
    }
}

#[test]
fn integer_binary() {
    let mut cases = vec![];
    let mut want: Vec<Vec<i64>> = vec![];
    for (d, min, max) in [(DType::I32, i32::MIN as i64, i32::MAX as i64), (DType::I64, i64::MIN, i64::MAX)] {
        let pairs = [(7, 2), (-7, 2), (7, -2), (-7, -2), (5, 0), (-5, 0), (0, 0), (min, -1), (min, 1), (max, -1), (min, 0), (3, 7), (max, max), (min, min)];
        let a = il(d, &[pairs.len() as i64], &pairs.iter().map(|p| p.0).collect::<Vec<_>>());
        let b = il(d, &[pairs.len() as i64], &pairs.iter().map(|p| p.1).collect::<Vec<_>>());
        let wrap = |v: i64| if d == DType::I32 { v as i32 as i64 } else { v };
        let table: [(BinaryOp, IntFn); 9] = [
            (BinaryOp::Add, i64::wrapping_add),
            (BinaryOp::Sub, i64::wrapping_sub),
            (BinaryOp::Mul, i64::wrapping_mul),
            (BinaryOp::Max, i64::max),
            (BinaryOp::Min, i64::min),
            (BinaryOp::And, |a, b| a & b),
            (BinaryOp::Or, |a, b| a | b),
            (BinaryOp::Xor, |a, b| a ^ b),
            (BinaryOp::Div, |_, _| 0),
        ];
        for (op, f) in table {
            cases.push(Case::op(&format!("{}_{d}", op.name()), OpKind::Elementwise(ElementwiseOp::Binary { op }), vec![a.clone(), b.clone()]));
            want.push(pairs.iter().map(|&(x, y)| if op == BinaryOp::Div { int_div(x, y, d).0 } else { wrap(f(x, y)) }).collect());
        }
        cases.push(Case::op(&format!("rem_{d}"), OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Rem }), vec![a, b]));
        want.push(pairs.iter().map(|&(x, y)| int_div(x, y, d).1).collect());
    }
    let (p, q) = (il(DType::I1, &[4], &[0, 0, 1, 1]), il(DType::I1, &[4], &[0, 1, 0, 1]));
    for (op, w) in [(BinaryOp::Max, [0, 1, 1, 1]), (BinaryOp::Min, [0, 0, 0, 1]), (BinaryOp::And, [0, 0, 0, 1]), (BinaryOp::Or, [0, 1, 1, 1]), (BinaryOp::Xor, [0, 1, 1, 0])] {
        cases.push(Case::op(&format!("{}_i1", op.name()), OpKind::Elementwise(ElementwiseOp::Binary { op }), vec![p.clone(), q.clone()]));
        want.push(w.to_vec());
    }
    let got = run(&cases, &[]);
    for ((c, g), w) in cases.iter().zip(&got).zip(&want) {
        assert_eq!(g[0].i(), w.as_slice(), "{}", c.func.name);
    }
}

#[test]
fn float_binary() {
    let pairs = [
        (1.0, 2.0),
        (-3.5, 2.0),
        (7.5, -2.0),
        (0.0, 0.0),
        (-0.0, 0.0),
        (0.0, -0.0),
        (NAN, 1.0),
        (1.0, NAN),
        (INF, 1.0),
        (-INF, INF),
        (-8.0, 1.0 / 3.0),
        (-2.0, 3.0),
        (2.0, -1.0),
        (0.0, -1.0),
        (1.0, INF),
        (-1.0, -0.0),
    ];
    let mut cases = vec![];
    let mut want = vec![];
    for d in [DType::F32, DType::F64] {
        let a = fl(d, &[pairs.len() as i64], &pairs.iter().map(|p| p.0).collect::<Vec<_>>());
        let b = fl(d, &[pairs.len() as i64], &pairs.iter().map(|p| p.1).collect::<Vec<_>>());
        let (av, bv) = (lit_f(&a), lit_f(&b));
        let maxf = |x: f64, y: f64| if x.is_nan() || y.is_nan() { NAN } else if x == y { if x.is_sign_negative() { y } else { x } } else { x.max(y) };
        let minf = |x: f64, y: f64| if x.is_nan() || y.is_nan() { NAN } else if x == y { if x.is_sign_negative() { x } else { y } } else { x.min(y) };
        for op in [BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Rem, BinaryOp::Max, BinaryOp::Min, BinaryOp::Pow, BinaryOp::Atan2, BinaryOp::Logaddexp] {
            let w: Vec<f64> = av
                .iter()
                .zip(&bv)
                .map(|(&x, &y)| {
                    let v = match op {
                        BinaryOp::Add => x + y,
                        BinaryOp::Sub => x - y,
                        BinaryOp::Mul => x * y,
                        BinaryOp::Div => x / y,
                        BinaryOp::Rem => x % y,
                        BinaryOp::Max => maxf(x, y),
                        BinaryOp::Min => minf(x, y),
                        BinaryOp::Pow if d == DType::F32 => (x as f32).powf(y as f32) as f64,
                        BinaryOp::Pow => x.powf(y),
                        BinaryOp::Atan2 if d == DType::F32 => (x as f32).atan2(y as f32) as f64,
                        BinaryOp::Atan2 => x.atan2(y),
                        // log(e^x + e^y): equal infinities give themselves, a NaN gives NaN.
                        BinaryOp::Logaddexp if x == y => x + std::f64::consts::LN_2,
                        BinaryOp::Logaddexp if x.is_nan() || y.is_nan() => NAN,
                        BinaryOp::Logaddexp => {
                            let (hi, lo) = if x > y { (x, y) } else { (y, x) };
                            hi + (lo - hi).exp().ln_1p()
                        }
                        _ => unreachable!(),
                    };
                    r(d, v)
                })
                .collect();
            want.push((op, d, w));
            cases.push(Case::op(&format!("{}_{d}", op.name()), OpKind::Elementwise(ElementwiseOp::Binary { op }), vec![a.clone(), b.clone()]));
        }
    }
    let got = run(&cases, &[]);
    for ((op, d, w), g) in want.iter().zip(&got) {
        let tol = if matches!(op, BinaryOp::Pow | BinaryOp::Atan2 | BinaryOp::Logaddexp) { 4.0 * ulps(*d) } else { 0.0 };
        assert_close(&format!("{} {d}", op.name()), g[0].f(), w, tol);
    }
}

#[test]
fn powi_compare_select_convert() {
    let mut cases = vec![];
    let mut checks: Vec<Check1> = vec![];
    for d in [DType::F32, DType::F64] {
        let xs = [2.0, -1.5, 0.0, -0.0, 1.0, NAN, INF, 0.5];
        for n in [0i64, 1, 2, 3, 5, 8, -1, -2, -3] {
            let w: Vec<f64> = xs.iter().map(|&x| if d == DType::F32 { (x as f32).powi(n as i32) as f64 } else { x.powi(n as i32) }).collect();
            cases.push(Case::op(&format!("powi_{d}_{}", n + 10), OpKind::Elementwise(ElementwiseOp::Powi { exponent: n }), vec![fl(d, &[8], &xs)]));
            checks.push(Box::new(move |g: &Vals| assert_close(&format!("powi {n} {d}"), g.f(), &w, 4.0 * ulps(d))));
        }
    }
    for (d, min) in [(DType::I32, i32::MIN as i64), (DType::I64, i64::MIN)] {
        let xs = [3, -3, 1, -1, 0, 2, min];
        for n in [0i64, 1, 2, 3, 7, -1, -2, -3] {
            let w: Vec<i64> = xs
                .iter()
                .map(|&x| {
                    if n >= 0 {
                        let p = (0..n).fold(1i64, |a, _| a.wrapping_mul(x));
                        if d == DType::I32 {
                            p as i32 as i64
                        } else {
                            p
                        }
                    } else if x == 1 {
                        1
                    } else if x == -1 {
                        if n % 2 == 0 {
                            1
                        } else {
                            -1
                        }
                    } else {
                        0
                    }
                })
                .collect();
            cases.push(Case::op(&format!("powi_{d}_{}", n + 10), OpKind::Elementwise(ElementwiseOp::Powi { exponent: n }), vec![il(d, &[7], &xs)]));
            checks.push(Box::new(move |g: &Vals| assert_eq!(g.i(), w.as_slice(), "powi {n} {d}")));
        }
    }
    // compare: ordered, except ne.
    for d in [DType::F32, DType::F64] {
        let a = fl(d, &[5], &[1.0, 2.0, NAN, 1.0, NAN]);
        let b = fl(d, &[5], &[2.0, 2.0, 1.0, NAN, NAN]);
        for (dir, w) in [
            (CmpDir::Eq, [0, 1, 0, 0, 0]),
            (CmpDir::Ne, [1, 0, 1, 1, 1]),
            (CmpDir::Lt, [1, 0, 0, 0, 0]),
            (CmpDir::Le, [1, 1, 0, 0, 0]),
            (CmpDir::Gt, [0, 0, 0, 0, 0]),
            (CmpDir::Ge, [0, 1, 0, 0, 0]),
        ] {
            cases.push(Case::op(&format!("cmp_{}_{d}", dir.name()), OpKind::Elementwise(ElementwiseOp::Compare { direction: dir}), vec![a.clone(), b.clone()]));
            checks.push(Box::new(move |g: &Vals| assert_eq!(g.i(), &w, "compare {} {d}", dir.name())));
        }
    }
    for d in [DType::I32, DType::I64, DType::I1] {
        let (a, b) = if d == DType::I1 { (il(d, &[4], &[0, 0, 1, 1]), il(d, &[4], &[0, 1, 0, 1])) } else { (il(d, &[4], &[-1, 0, 5, 5]), il(d, &[4], &[0, -1, 5, 6])) };
        let (av, bv) = (lit_i(&a), lit_i(&b));
        for dir in CmpDir::ALL {
            let w: Vec<i64> = av
                .iter()
                .zip(&bv)
                .map(|(&x, &y)| match dir {
                    CmpDir::Eq => x == y,
                    CmpDir::Ne => x != y,
                    CmpDir::Lt => x < y,
                    CmpDir::Le => x <= y,
                    CmpDir::Gt => x > y,
                    CmpDir::Ge => x >= y,
                } as i64)
                .collect();
            cases.push(Case::op(&format!("cmp_{}_{d}", dir.name()), OpKind::Elementwise(ElementwiseOp::Compare { direction: dir}), vec![a.clone(), b.clone()]));
            checks.push(Box::new(move |g: &Vals| assert_eq!(g.i(), w.as_slice(), "compare {} {d}", dir.name())));
        }
    }
    // select
    let p = il(DType::I1, &[2, 2], &[1, 0, 0, 1]);
    cases.push(Case::op("select_f64", OpKind::Elementwise(ElementwiseOp::Select {}), vec![p.clone(), fl(DType::F64, &[2, 2], &[1.0, 2.0, 3.0, 4.0]), fl(DType::F64, &[2, 2], &[-1.0, -2.0, -3.0, -4.0])]));
    checks.push(Box::new(|g: &Vals| assert_close("select", g.f(), &[1.0, -2.0, -3.0, 4.0], 0.0)));
    cases.push(Case::op("select_i1", OpKind::Elementwise(ElementwiseOp::Select {}), vec![p.clone(), il(DType::I1, &[2, 2], &[1, 1, 1, 1]), il(DType::I1, &[2, 2], &[0, 0, 0, 0])]));
    checks.push(Box::new(|g: &Vals| assert_eq!(g.i(), &[1, 0, 0, 1])));
    // convert
    let fx = [1.9, -1.9, 0.0, -0.0, 0.5, NAN, 3e9, -3e9, 1e19, -1e19, 2147483647.0, -2147483648.0];
    for from in [DType::F32, DType::F64] {
        let x = fl(from, &[fx.len() as i64], &fx);
        let xv = lit_f(&x);
        let w32: Vec<i64> = xv.iter().map(|&v| v as i32 as i64).collect();
        let w64: Vec<i64> = xv.iter().map(|&v| v as i64).collect();
        let wb: Vec<i64> = xv.iter().map(|&v| (v != 0.0) as i64).collect();
        cases.push(Case::op(&format!("cvt_{from}_i32"), OpKind::Elementwise(ElementwiseOp::Convert { to: DType::I32 }), vec![x.clone()]));
        checks.push(Box::new(move |g: &Vals| assert_eq!(g.i(), w32.as_slice(), "convert {from} -> i32")));
        cases.push(Case::op(&format!("cvt_{from}_i64"), OpKind::Elementwise(ElementwiseOp::Convert { to: DType::I64 }), vec![x.clone()]));
        checks.push(Box::new(move |g: &Vals| assert_eq!(g.i(), w64.as_slice(), "convert {from} -> i64")));
        cases.push(Case::op(&format!("cvt_{from}_i1"), OpKind::Elementwise(ElementwiseOp::Convert { to: DType::I1 }), vec![x.clone()]));
        checks.push(Box::new(move |g: &Vals| assert_eq!(g.i(), wb.as_slice(), "convert {from} -> i1")));
        let to = if from == DType::F32 { DType::F64 } else { DType::F32 };
        let wf: Vec<f64> = xv.iter().map(|&v| r(to, v)).collect();
        cases.push(Case::op(&format!("cvt_{from}_{to}"), OpKind::Elementwise(ElementwiseOp::Convert { to }), vec![x.clone()]));
        checks.push(Box::new(move |g: &Vals| assert_close(&format!("convert {from} -> {to}"), g.f(), &wf, 0.0)));
    }
    let ix = [0i64, 1, -1, 3_000_000_000, -3_000_000_000, i64::MIN, 16_777_217];
    let x = il(DType::I64, &[7], &ix);
    let w: Vec<i64> = ix.iter().map(|&v| v as i32 as i64).collect();
    cases.push(Case::op("cvt_i64_i32", OpKind::Elementwise(ElementwiseOp::Convert { to: DType::I32 }), vec![x.clone()]));
    checks.push(Box::new(move |g: &Vals| assert_eq!(g.i(), w.as_slice(), "convert i64 -> i32")));
    let w: Vec<f64> = ix.iter().map(|&v| v as f32 as f64).collect();
    cases.push(Case::op("cvt_i64_f32", OpKind::Elementwise(ElementwiseOp::Convert { to: DType::F32 }), vec![x.clone()]));
    checks.push(Box::new(move |g: &Vals| assert_close("convert i64 -> f32", g.f(), &w, 0.0)));
    let w: Vec<i64> = ix.iter().map(|&v| (v != 0) as i64).collect();
    cases.push(Case::op("cvt_i64_i1", OpKind::Elementwise(ElementwiseOp::Convert { to: DType::I1 }), vec![x]));
    checks.push(Box::new(move |g: &Vals| assert_eq!(g.i(), w.as_slice(), "convert i64 -> i1")));
    let x = il(DType::I32, &[3], &[-5, 0, i32::MAX as i64]);
    cases.push(Case::op("cvt_i32_i64", OpKind::Elementwise(ElementwiseOp::Convert { to: DType::I64 }), vec![x.clone()]));
    checks.push(Box::new(|g: &Vals| assert_eq!(g.i(), &[-5, 0, i32::MAX as i64])));
    cases.push(Case::op("cvt_i32_f64", OpKind::Elementwise(ElementwiseOp::Convert { to: DType::F64 }), vec![x]));
    checks.push(Box::new(|g: &Vals| assert_close("convert i32 -> f64", g.f(), &[-5.0, 0.0, i32::MAX as f64], 0.0)));
    let b = il(DType::I1, &[2], &[1, 0]);
    for to in [DType::F32, DType::F64] {
        cases.push(Case::op(&format!("cvt_i1_{to}"), OpKind::Elementwise(ElementwiseOp::Convert { to }), vec![b.clone()]));
        checks.push(Box::new(|g: &Vals| assert_close("convert i1 -> float", g.f(), &[1.0, 0.0], 0.0)));
    }
    for to in [DType::I32, DType::I64, DType::I1] {
        cases.push(Case::op(&format!("cvt_i1_{to}"), OpKind::Elementwise(ElementwiseOp::Convert { to }), vec![b.clone()]));
        checks.push(Box::new(|g: &Vals| assert_eq!(g.i(), &[1, 0])));
    }
    let got = run(&cases, &[]);
    for (chk, g) in checks.iter().zip(&got) {
        chk(&g[0]);
    }
}

#[test]
fn constants_iota_layout() {
    let mut cases = vec![];
    let mut checks: Vec<Check> = vec![];
    // constants (non-finite and signed zeros included) and iota in every dtype
    cases.push(Case::build("consts", vec![], |f, _| {
        let a = f.push1(OpKind::Constant(ConstantOp::Constant { value: fl(DType::F32, &[5], &[NAN, INF, -INF, -0.0, 1.25]) }), &[], None).unwrap();
        let b = f.push1(OpKind::Constant(ConstantOp::Constant { value: fl(DType::F64, &[2, 2], &[0.1, -2.0, 1e300, 5e-324]) }), &[], None).unwrap();
        let c = f.push1(OpKind::Constant(ConstantOp::Constant { value: il(DType::I1, &[3], &[1, 0, 1]) }), &[], None).unwrap();
        let d = f.push1(OpKind::Constant(ConstantOp::Constant { value: il(DType::I64, &[], &[i64::MIN]) }), &[], None).unwrap();
        let e = f.push1(OpKind::Constant(ConstantOp::Constant { value: Literal::splat(t(DType::I32, &[2, 3]), -7.0) }), &[], None).unwrap();
        vec![a, b, c, d, e]
    }));
    checks.push(Box::new(|g| {
        assert_close("const f32", g[0].f(), &[NAN, INF, -INF, -0.0, 1.25], 0.0);
        assert_close("const f64", g[1].f(), &[0.1, -2.0, 1e300, 5e-324], 0.0);
        assert_eq!(g[2].i(), &[1, 0, 1]);
        assert_eq!(g[3].i(), &[i64::MIN]);
        assert_eq!(g[4].i(), &[-7; 6]);
    }));
    cases.push(Case::build("iotas", vec![], |f, _| {
        let mut v = vec![];
        // The five signed/float dtypes whose outputs the checks below index (unsigned iotas:
        // tests/rust/uint.rs and the random tests).
        for d in [DType::F32, DType::F64, DType::I1, DType::I32, DType::I64] {
            v.push(f.push1(OpKind::Constant(ConstantOp::Iota { dim: 1, ty: t(d, &[2, 3]) }), &[], None).unwrap());
        }
        v.push(f.push1(OpKind::Constant(ConstantOp::Iota { dim: 0, ty: t(DType::I64, &[2, 3]) }), &[], None).unwrap());
        v
    }));
    checks.push(Box::new(|g| {
        assert_close("iota f32", g[0].f(), &[0.0, 1.0, 2.0, 0.0, 1.0, 2.0], 0.0);
        assert_close("iota f64", g[1].f(), &[0.0, 1.0, 2.0, 0.0, 1.0, 2.0], 0.0);
        assert_eq!(g[2].i(), &[0, 1, 1, 0, 1, 1]);
        assert_eq!(g[3].i(), &[0, 1, 2, 0, 1, 2]);
        assert_eq!(g[4].i(), &[0, 1, 2, 0, 1, 2]);
        assert_eq!(g[5].i(), &[0, 0, 0, 1, 1, 1]);
    }));
    // broadcast_in_dim
    let x = il(DType::I32, &[3], &[1, 2, 3]);
    cases.push(Case::op("bcast_row", OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![1], shape: vec![2, 3] }), vec![x.clone()]));
    checks.push(Box::new(|g| assert_eq!(g[0].i(), &[1, 2, 3, 1, 2, 3])));
    cases.push(Case::op("bcast_col", OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![0], shape: vec![3, 2] }), vec![x]));
    checks.push(Box::new(|g| assert_eq!(g[0].i(), &[1, 1, 2, 2, 3, 3])));
    cases.push(Case::op("bcast_unit", OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![0, 2], shape: vec![2, 2, 3] }), vec![il(DType::I64, &[2, 1], &[5, 6])]));
    checks.push(Box::new(|g| assert_eq!(g[0].i(), &[5, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6, 6])));
    cases.push(Case::op("bcast_scalar", OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![], shape: vec![2, 2] }), vec![il(DType::I1, &[], &[1])]));
    checks.push(Box::new(|g| assert_eq!(g[0].i(), &[1, 1, 1, 1])));
    // reshape (nested and through 1-D), transpose
    let x = il(DType::I32, &[2, 3], &[0, 1, 2, 3, 4, 5]);
    cases.push(Case::build("reshape_transpose", vec![x], |f, p| {
        let a = f.push1(OpKind::Layout(LayoutOp::Reshape { shape: vec![3, 2] }), &[p[0]], None).unwrap();
        let b = f.push1(OpKind::Layout(LayoutOp::Transpose { perm: vec![1, 0] }), &[a], None).unwrap();
        let c = f.push1(OpKind::Layout(LayoutOp::Reshape { shape: vec![1, 6, 1] }), &[b], None).unwrap();
        let d = f.push1(OpKind::Layout(LayoutOp::Reshape { shape: vec![6] }), &[c], None).unwrap();
        vec![a, b, d]
    }));
    checks.push(Box::new(|g| {
        assert_eq!(g[0].i(), &[0, 1, 2, 3, 4, 5]);
        assert_eq!(g[1].i(), &[0, 2, 4, 1, 3, 5]);
        assert_eq!(g[2].i(), &[0, 2, 4, 1, 3, 5]);
    }));
    let v: Vec<f64> = (0..24).map(|i| i as f64).collect();
    cases.push(Case::op("transpose3", OpKind::Layout(LayoutOp::Transpose { perm: vec![2, 0, 1] }), vec![fl(DType::F64, &[2, 3, 4], &v)]));
    checks.push(Box::new(|g| {
        // result[k, i, j] = x[i, j, k]
        let w: Vec<f64> = (0..4).flat_map(|k| (0..2).flat_map(move |i| (0..3).map(move |j| (i * 12 + j * 4 + k) as f64))).collect();
        assert_close("transpose3", g[0].f(), &w, 0.0);
    }));
    let got = run(&cases, &[]);
    for (chk, g) in checks.iter().zip(&got) {
        chk(g);
    }
}

#[test]
fn slicing() {
    let mut cases = vec![];
    let mut checks: Vec<Check> = vec![];
    let x = il(DType::I32, &[4, 3], &(0..12).collect::<Vec<_>>());
    cases.push(Case::op("slice", OpKind::Slicing(SlicingOp::Slice { start_indices: vec![1, 0], limit_indices: vec![4, 3], strides: vec![2, 2] }), vec![x.clone()]));
    checks.push(Box::new(|g| assert_eq!(g[0].i(), &[3, 5, 9, 11])));
    cases.push(Case::op("pad", OpKind::Slicing(SlicingOp::Pad { edge_padding_low: vec![1, 0], edge_padding_high: vec![0, 2], interior_padding: vec![0, 1]}), vec![il(DType::I64, &[2, 2], &[1, 2, 3, 4]), il(DType::I64, &[], &[-1])]));
    checks.push(Box::new(|g| assert_eq!(g[0].i(), &[-1, -1, -1, -1, -1, 1, -1, 2, -1, -1, 3, -1, 4, -1, -1])));
    cases.push(Case::op("pad_f32", OpKind::Slicing(SlicingOp::Pad { edge_padding_low: vec![2], edge_padding_high: vec![1], interior_padding: vec![2]}), vec![fl(DType::F32, &[2], &[1.0, 2.0]), fl(DType::F32, &[], &[NAN])]));
    checks.push(Box::new(|g| assert_close("pad f32", g[0].f(), &[NAN, NAN, 1.0, NAN, NAN, 2.0, NAN], 0.0)));
    cases.push(Case::op("concat", OpKind::Slicing(SlicingOp::Concatenate { dim: 1 }), vec![il(DType::I1, &[2, 1], &[1, 0]), il(DType::I1, &[2, 2], &[0, 1, 1, 0])]));
    checks.push(Box::new(|g| assert_eq!(g[0].i(), &[1, 0, 1, 0, 1, 0])));
    // dynamic_slice: starts clamped to [0, extent - size].
    for (name, s0, s1, want) in [("ds_in", 1, 1, [4, 5, 7, 8]), ("ds_neg", -3, -1, [0, 1, 3, 4]), ("ds_big", 9, 7, [7, 8, 10, 11])] {
        for id in [DType::I32, DType::I64] {
            cases.push(Case::op(&format!("{name}_{id}"), OpKind::Slicing(SlicingOp::DynamicSlice { slice_sizes: vec![2, 2]}), vec![x.clone(), il(id, &[], &[s0]), il(id, &[], &[s1])]));
            checks.push(Box::new(move |g| assert_eq!(g[0].i(), &want, "dynamic_slice {name}")));
        }
    }
    // dynamic_update_slice: starts clamped to [0, extent - update size].
    let upd = il(DType::I32, &[2, 2], &[-1, -2, -3, -4]);
    for (name, s0, s1, (r0, c0)) in [("dus_in", 1, 1, (1, 1)), ("dus_neg", -3, -1, (0, 0)), ("dus_big", 9, 7, (2, 1))] {
        let mut want: Vec<i64> = (0..12).collect();
        for (k, v) in [-1, -2, -3, -4].iter().enumerate() {
            want[(r0 + k / 2) * 3 + c0 + k % 2] = *v;
        }
        for id in [DType::I32, DType::I64] {
            cases.push(Case::op(&format!("{name}_{id}"), OpKind::Slicing(SlicingOp::DynamicUpdateSlice {}), vec![x.clone(), upd.clone(), il(id, &[], &[s0]), il(id, &[], &[s1])]));
            let want = want.clone();
            checks.push(Box::new(move |g| assert_eq!(g[0].i(), &want, "dynamic_update_slice {name}")));
        }
    }
    cases.push(Case::op("dus_f64", OpKind::Slicing(SlicingOp::DynamicUpdateSlice {}), vec![fl(DType::F64, &[5], &[1.0, 2.0, 3.0, 4.0, 5.0]), fl(DType::F64, &[2], &[-0.0, NAN]), il(DType::I32, &[], &[3])]));
    checks.push(Box::new(|g| assert_close("dynamic_update_slice f64", g[0].f(), &[1.0, 2.0, 3.0, -0.0, NAN], 0.0)));
    // scatter: updates applied in order (duplicates combine, `set` keeps the last), windows
    // that do not fit skipped.
    let sx = fl(DType::F32, &[4], &[1.0, 2.0, 3.0, 4.0]);
    let si = il(DType::I32, &[5, 1], &[2, 0, 2, 9, -1]);
    let su = fl(DType::F32, &[5], &[10.0, 20.0, 30.0, 40.0, 50.0]);
    for (c, want) in [(Combiner::Add, [21.0, 2.0, 43.0, 4.0]), (Combiner::Set, [20.0, 2.0, 30.0, 4.0]), (Combiner::Max, [20.0, 2.0, 30.0, 4.0])] {
        let op = OpKind::Scatter(ScatterOp::Scatter { op: c, update_window_dims: vec![], inserted_window_dims: vec![0], scatter_dims_to_operand_dims: vec![0], index_vector_dim: 1 });
        cases.push(Case::op(&format!("scatter_{c:?}"), op, vec![sx.clone(), si.clone(), su.clone()]));
        checks.push(Box::new(move |g| assert_close(&format!("scatter {c:?}"), g[0].f(), &want, 0.0)));
    }
    // A window of rows: x[i[k], :] += u[k, :].
    let op = OpKind::Scatter(ScatterOp::Scatter { op: Combiner::Add, update_window_dims: vec![1], inserted_window_dims: vec![0], scatter_dims_to_operand_dims: vec![0], index_vector_dim: 1 });
    cases.push(Case::op("scatter_rows", op, vec![il(DType::I64, &[3, 2], &[0, 1, 2, 3, 4, 5]), il(DType::I64, &[2, 1], &[2, 2]), il(DType::I64, &[2, 2], &[1, 1, 10, 10])]));
    checks.push(Box::new(|g| assert_eq!(g[0].i(), &[0, 1, 2, 3, 15, 16])));
    // gather: indices clamped to [0, n - 1].
    cases.push(Case::op("gather0", OpKind::Slicing(SlicingOp::Gather { axis: 0 }), vec![x.clone(), il(DType::I32, &[4], &[2, -1, 7, 0])]));
    checks.push(Box::new(|g| assert_eq!(g[0].i(), &[6, 7, 8, 0, 1, 2, 9, 10, 11, 0, 1, 2])));
    cases.push(Case::op("gather1", OpKind::Slicing(SlicingOp::Gather { axis: 1 }), vec![x.clone(), il(DType::I64, &[2, 2], &[2, 0, 1, 5])]));
    checks.push(Box::new(|g| assert_eq!(g[0].i(), &[2, 0, 1, 2, 5, 3, 4, 5, 8, 6, 7, 8, 11, 9, 10, 11])));
    cases.push(Case::op("gather_scalar", OpKind::Slicing(SlicingOp::Gather { axis: 0 }), vec![fl(DType::F64, &[3], &[1.5, 2.5, 3.5]), il(DType::I64, &[], &[1])]));
    checks.push(Box::new(|g| assert_close("gather scalar", g[0].f(), &[2.5], 0.0)));
    let got = run(&cases, &[]);
    for (chk, g) in checks.iter().zip(&got) {
        chk(g);
    }
}

#[test]
fn reductions() {
    let mut cases = vec![];
    let mut checks: Vec<Check> = vec![];
    let v: Vec<f64> = (0..24).map(|i| ((i * 7) % 11) as f64 - 5.0).collect();
    for d in [DType::F32, DType::F64, DType::I32, DType::I64] {
        let x = if d.is_float() { fl(d, &[2, 3, 4], &v) } else { il(d, &[2, 3, 4], &v.iter().map(|&a| a as i64).collect::<Vec<_>>()) };
        for (op, dims) in [(Reducer::Sum, vec![1]), (Reducer::Max, vec![0, 2]), (Reducer::Min, vec![0, 1, 2]), (Reducer::Prod, vec![2]), (Reducer::Sum, vec![])] {
            let kept: Vec<usize> = (0..3).filter(|i| !dims.contains(&(*i as i64))).collect();
            let shape = [2usize, 3, 4];
            let n: usize = kept.iter().map(|&i| shape[i]).product();
            let init = match op {
                Reducer::Sum => 0.0,
                Reducer::Prod => 1.0,
                Reducer::Max => -INF,
                Reducer::Min => INF,
            };
            let mut w = vec![init; n];
            for i in 0..2 {
                for j in 0..3 {
                    for k in 0..4 {
                        let idx = [i, j, k];
                        let o = kept.iter().fold(0, |acc, &q| acc * shape[q] + idx[q]);
                        let a = v[i * 12 + j * 4 + k];
                        w[o] = match op {
                            Reducer::Sum => w[o] + a,
                            Reducer::Prod => w[o] * a,
                            Reducer::Max => w[o].max(a),
                            Reducer::Min => w[o].min(a),
                        };
                    }
                }
            }
            cases.push(Case::op(&format!("{}_{d}_{}", op.name(), dims.len()), OpKind::Reduce(ReduceOp::Reduce { op, dims: dims.clone() }), vec![x.clone()]));
            checks.push(Box::new(move |g| match &g[0] {
                Vals::F(got) => assert_close(&format!("{} {dims:?} {d}", op.name()), got, &w, 0.0),
                Vals::I(got) => assert_eq!(got, &w.iter().map(|&a| a as i64).collect::<Vec<_>>(), "{} {dims:?} {d}", op.name()),
            }));
        }
    }
    // NaN propagation, identities, i1 any/all.
    for d in [DType::F32, DType::F64] {
        let x = fl(d, &[3, 3], &[1.0, NAN, 3.0, -INF, -INF, -INF, 2.0, 5.0, -1.0]);
        cases.push(Case::op(&format!("max_nan_{d}"), OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Max, dims: vec![1] }), vec![x.clone()]));
        checks.push(Box::new(|g| assert_close("reduce_max nan", g[0].f(), &[NAN, -INF, 5.0], 0.0)));
        cases.push(Case::op(&format!("min_nan_{d}"), OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Min, dims: vec![0] }), vec![x.clone()]));
        checks.push(Box::new(|g| assert_close("reduce_min nan", g[0].f(), &[-INF, NAN, -INF], 0.0)));
        cases.push(Case::op(&format!("sum_nan_{d}"), OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Sum, dims: vec![1] }), vec![x]));
        checks.push(Box::new(|g| assert_close("reduce_sum", g[0].f(), &[NAN, -INF, 6.0], 0.0)));
    }
    let b = il(DType::I1, &[3, 2], &[0, 0, 0, 1, 1, 1]);
    cases.push(Case::op("any", OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Max, dims: vec![1] }), vec![b.clone()]));
    checks.push(Box::new(|g| assert_eq!(g[0].i(), &[0, 1, 1])));
    cases.push(Case::op("all", OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Min, dims: vec![1] }), vec![b]));
    checks.push(Box::new(|g| assert_eq!(g[0].i(), &[0, 0, 1])));
    cases.push(Case::op("max_i32_min", OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Max, dims: vec![0] }), vec![il(DType::I32, &[2], &[i32::MIN as i64, i32::MIN as i64])]));
    checks.push(Box::new(|g| assert_eq!(g[0].i(), &[i32::MIN as i64])));
    // argmax/argmin: first index of ties; NaN is maximal (argmax) / minimal (argmin), first NaN wins.
    for d in [DType::F32, DType::F64] {
        let x = fl(d, &[5, 4], &[1.0, 3.0, 3.0, 0.0, 1.0, NAN, 7.0, NAN, -INF, -INF, -INF, -INF, 2.0, -1.0, -1.0, 2.0, INF, INF, NAN, 0.0]);
        for index in [DType::I32, DType::I64] {
            cases.push(Case::op(&format!("argmax_{d}_{index}"), OpKind::Reduce(ReduceOp::ArgReduce { op: ArgOp::Max, dim: 1, index }), vec![x.clone()]));
            checks.push(Box::new(|g| assert_eq!(g[0].i(), &[1, 1, 0, 0, 2])));
            cases.push(Case::op(&format!("argmin_{d}_{index}"), OpKind::Reduce(ReduceOp::ArgReduce { op: ArgOp::Min, dim: 1, index }), vec![x.clone()]));
            checks.push(Box::new(|g| assert_eq!(g[0].i(), &[3, 1, 0, 1, 2])));
        }
        cases.push(Case::op(&format!("argmax0_{d}"), OpKind::Reduce(ReduceOp::ArgReduce { op: ArgOp::Max, dim: 0, index: DType::I32 }), vec![x]));
        checks.push(Box::new(|g| assert_eq!(g[0].i(), &[4, 1, 4, 1])));
    }
    for d in [DType::I32, DType::I64] {
        let min = if d == DType::I32 { i32::MIN as i64 } else { i64::MIN };
        let x = il(d, &[3, 3], &[min, min, min, 4, 9, 9, -2, -5, -5]);
        cases.push(Case::op(&format!("argmax_{d}"), OpKind::Reduce(ReduceOp::ArgReduce { op: ArgOp::Max, dim: 1, index: DType::I64 }), vec![x.clone()]));
        checks.push(Box::new(|g| assert_eq!(g[0].i(), &[0, 1, 0])));
        cases.push(Case::op(&format!("argmin_{d}"), OpKind::Reduce(ReduceOp::ArgReduce { op: ArgOp::Min, dim: 1, index: DType::I32 }), vec![x]));
        checks.push(Box::new(|g| assert_eq!(g[0].i(), &[0, 0, 1])));
    }
    let got = run(&cases, &[]);
    for (chk, g) in checks.iter().zip(&got) {
        chk(g);
    }
}

/// `x` (row-major `shape`) reduced over `dims` by `f` from `init`: one value per kept index
/// (row-major), the reduced elements visited in row-major order.
fn reduce_ref(x: &[f64], shape: &[i64], dims: &[i64], init: f64, f: impl Fn(f64, f64) -> f64) -> Vec<f64> {
    let kept: Vec<usize> = (0..shape.len()).filter(|i| !dims.contains(&(*i as i64))).collect();
    let n: i64 = kept.iter().map(|&i| shape[i]).product();
    let mut w = vec![init; n as usize];
    for (flat, &a) in x.iter().enumerate() {
        let mut rest = flat as i64;
        let mut idx = vec![0; shape.len()];
        for i in (0..shape.len()).rev() {
            idx[i] = rest % shape[i];
            rest /= shape[i];
        }
        let o = kept.iter().fold(0, |acc, &q| acc * shape[q] + idx[q]) as usize;
        w[o] = f(w[o], a);
    }
    w
}

/// JAX's argmax (`max`) / argmin along `dim` of a row-major `shape`, stated directly: the
/// first NaN if there is one, else the first index holding the extremum.
fn arg_ref(x: &[f64], shape: &[i64], dim: usize, max: bool) -> Vec<i64> {
    let (outer, n): (i64, i64) = (shape[..dim].iter().product(), shape[dim]);
    let inner: i64 = shape[dim + 1..].iter().product();
    let mut out = vec![];
    for o in 0..outer {
        for i in 0..inner {
            let line: Vec<f64> = (0..n).map(|k| x[((o * n + k) * inner + i) as usize]).collect();
            let pos = match line.iter().position(|v| v.is_nan()) {
                Some(p) => p,
                None => {
                    let ext = line.iter().copied().fold(if max { -INF } else { INF }, |a, b| if max { a.max(b) } else { a.min(b) });
                    line.iter().position(|&v| v == ext).unwrap_or(0)
                }
            };
            out.push(pos as i64);
        }
    }
    out
}

/// Reductions the CUDA target splits into partials and a reduction of the partials (few
/// outputs over at least 256 elements): full, column, row and non-contiguous reduced dims,
/// extents that are no multiple of the partial count (1000: 59 partials of 17 elements,
/// interleaved; 4099; [5000, 3] per column: 295 partials of 17), every reducer and dtype,
/// argmax/argmin with ties and NaNs between partials (indices 16/17, 33/34) and across
/// rounds (600, 340). Integer-valued floats keep sums exact under any association; `run`
/// checks the CUDA forms against the CPU's.
#[test]
fn split_reductions() {
    let mut cases = vec![];
    let mut checks: Vec<Check> = vec![];
    let gen = |n: i64, m: i64, seed: i64| -> Vec<f64> { (0..n).map(|i| ((i * 7919 + seed * 104_729) % m - m / 2) as f64).collect() };
    let shapes: [(&[i64], &[i64]); 5] = [(&[1000], &[0]), (&[5000, 3], &[0]), (&[3, 4099], &[1]), (&[70, 50], &[0, 1]), (&[20, 3, 30], &[0, 2])];
    for d in [DType::F32, DType::F64, DType::I32, DType::I64] {
        for (k, &(shape, dims)) in shapes.iter().enumerate() {
            let n: i64 = shape.iter().product();
            let mut v = gen(n, 23, k as i64);
            if d.is_float() && k == 2 {
                v[17] = NAN; // row 0, the first element of partial 17
            }
            // Products of +-1 with a 2 every 97 elements: exact under any association in every
            // dtype (at most 2^52; the integers wrap like the reference).
            let pv: Vec<f64> = (0..n).map(|i| if i % 97 == 0 { 2.0 } else if i % 5 == 2 { -1.0 } else { 1.0 }).collect();
            let lit = |v: &[f64]| if d.is_float() { fl(d, shape, v) } else { il(d, shape, &v.iter().map(|&a| a as i64).collect::<Vec<_>>()) };
            for op in [Reducer::Sum, Reducer::Max, Reducer::Min, Reducer::Prod] {
                let x = if op == Reducer::Prod { &pv } else { &v };
                let want = match op {
                    Reducer::Sum => reduce_ref(x, shape, dims, 0.0, |a, b| a + b),
                    Reducer::Max => reduce_ref(x, shape, dims, -INF, |a, b| if a.is_nan() || b.is_nan() { NAN } else { a.max(b) }),
                    Reducer::Min => reduce_ref(x, shape, dims, INF, |a, b| if a.is_nan() || b.is_nan() { NAN } else { a.min(b) }),
                    Reducer::Prod if d == DType::I32 => reduce_ref(x, shape, dims, 1.0, |a, b| (a as i32).wrapping_mul(b as i32) as f64),
                    Reducer::Prod if d == DType::I64 => reduce_ref(x, shape, dims, 1.0, |a, b| (a as i64).wrapping_mul(b as i64) as f64),
                    Reducer::Prod => reduce_ref(x, shape, dims, 1.0, |a, b| a * b),
                };
                let name = format!("split_{}_{d}_{k}", op.name());
                cases.push(Case::op(&name, OpKind::Reduce(ReduceOp::Reduce { op, dims: dims.to_vec() }), vec![lit(x)]));
                checks.push(Box::new(move |g| match &g[0] {
                    Vals::F(got) => assert_close(&name, got, &want, 0.0),
                    Vals::I(got) => assert_eq!(got, &want.iter().map(|&a| a as i64).collect::<Vec<_>>(), "{name}"),
                }));
            }
        }
    }
    // Unsigned: compares and wrapping sums on the unsigned values.
    let big: Vec<i64> = (0..1000).map(|i| (i * 2_654_435_761i64) % 4_294_967_296).collect();
    let small: Vec<i64> = (0..4099).map(|i| (i * 37) % 256).collect();
    for (d, x, shape) in [(DType::U32, &big, vec![1000i64]), (DType::U8, &small, vec![4099])] {
        let m = if d == DType::U8 { 256 } else { 4_294_967_296 };
        for (op, want) in [
            (Reducer::Max, *x.iter().max().unwrap()),
            (Reducer::Min, *x.iter().min().unwrap()),
            (Reducer::Sum, x.iter().sum::<i64>() % m),
        ] {
            cases.push(Case::op(&format!("split_{}_{d}", op.name()), OpKind::Reduce(ReduceOp::Reduce { op, dims: vec![0] }), vec![il(d, &shape, x)]));
            checks.push(Box::new(move |g| assert_eq!(g[0].i(), &[want], "{} {d}", op.name())));
        }
        for (op, max) in [(ArgOp::Max, true), (ArgOp::Min, false)] {
            let want = arg_ref(&x.iter().map(|&a| a as f64).collect::<Vec<_>>(), &shape, 0, max);
            cases.push(Case::op(&format!("split_{}_{d}", op.name()), OpKind::Reduce(ReduceOp::ArgReduce { op, dim: 0, index: DType::I32 }), vec![il(d, &shape, x)]));
            checks.push(Box::new(move |g| assert_eq!(g[0].i(), &want[..], "{} {d}", op.name())));
        }
    }
    // i1 any/all: the one true (false) element last, in partial 16, or absent.
    let mut any = vec![0i64; 4099];
    any[4098] = 1;
    let mut all = vec![1i64; 4099];
    all[17] = 0;
    let mut col = vec![0i64; 15000];
    col[3 * 16] = 1; // column 0, row 16 (partial 16); column 2 stays all false
    col[3 * 4999 + 1] = 1; // column 1, the last row
    for (x, shape, op, want) in [
        (any.clone(), vec![4099i64], Reducer::Max, vec![1i64]),
        (all.clone(), vec![4099], Reducer::Min, vec![0]),
        (vec![0; 4099], vec![4099], Reducer::Max, vec![0]),
        (vec![1; 4099], vec![4099], Reducer::Min, vec![1]),
        (col.clone(), vec![5000, 3], Reducer::Max, vec![1, 1, 0]),
    ] {
        let name = format!("split_{}_i1_{}", op.name(), cases.len());
        cases.push(Case::op(&name, OpKind::Reduce(ReduceOp::Reduce { op, dims: vec![0] }), vec![il(DType::I1, &shape, &x)]));
        checks.push(Box::new(move |g| assert_eq!(g[0].i(), &want[..], "{name}")));
    }
    // argmax/argmin: ties between partials, in the first round and across rounds (16 and
    // 17 in partials 16 and 17, 600 in partial 10 of a later round: the first index wins),
    // NaN first, all -inf.
    let mut ties = gen(1000, 23, 7);
    for i in [16, 17, 600] {
        ties[i] = 50.0;
    }
    for i in [33, 34, 999] {
        ties[i] = -50.0;
    }
    let mut nans = ties.clone();
    nans[340] = NAN;
    nans[34] = NAN;
    let mut cols = gen(15000, 31, 3);
    for r in [16, 17, 4000] {
        cols[3 * r] = 99.0; // column 0's max: rows 16 and 17 in neighbouring partials, 4000 later
    }
    cols[3 * 2500 + 1] = NAN;
    cols[3 * 4999 + 1] = NAN;
    for r in 0..5000 {
        cols[3 * r + 2] = -INF; // column 2: all -inf, argmax and argmin 0
    }
    let mut rows = gen(3 * 4099, 19, 5);
    rows[4099 + 4098] = 1000.0; // row 1's max last
    rows[2 * 4099 + 255] = NAN; // row 2: NaN in a later round of its partial
    for d in [DType::F32, DType::F64] {
        for (x, shape, dim) in [(&ties, vec![1000i64], 0usize), (&nans, vec![1000], 0), (&cols, vec![5000, 3], 0), (&rows, vec![3, 4099], 1)] {
            for (op, max) in [(ArgOp::Max, true), (ArgOp::Min, false)] {
                for index in [DType::I32, DType::I64] {
                    let want = arg_ref(x, &shape, dim, max);
                    let name = format!("split_{}_{d}_{index}_{}", op.name(), cases.len());
                    cases.push(Case::op(&name, OpKind::Reduce(ReduceOp::ArgReduce { op, dim: dim as i64, index }), vec![fl(d, &shape, x)]));
                    checks.push(Box::new(move |g| assert_eq!(g[0].i(), &want[..], "{name}")));
                }
            }
        }
    }
    // A producer fused into the partials (stage one reads its operand through an affine map):
    // sums of x * x over [20, 3, 30] by dims [0, 2] and over [70, 50], argmax over [300, 7]'s
    // dim 0 (ties between rows: x and -x square alike).
    for (shape, dims) in [(vec![20i64, 3, 30], vec![0i64, 2]), (vec![70, 50], vec![0, 1])] {
        let n: i64 = shape.iter().product();
        let x = gen(n, 29, 11);
        let sq: Vec<f64> = x.iter().map(|a| a * a).collect();
        let want = reduce_ref(&sq, &shape, &dims, 0.0, |a, b| a + b);
        let name = format!("split_fused_sum_{}", cases.len());
        let ds = dims.clone();
        cases.push(Case::build(&name, vec![fl(DType::F32, &shape, &x)], |f, p| {
            let s = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), &[p[0], p[0]], None).unwrap();
            vec![f.push1(OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Sum, dims: ds }), &[s], None).unwrap()]
        }));
        checks.push(Box::new(move |g| assert_close(&name, g[0].f(), &want, 0.0)));
    }
    {
        let x = gen(2100, 29, 13);
        let sq: Vec<f64> = x.iter().map(|a| a * a).collect();
        let want = arg_ref(&sq, &[300, 7], 0, true);
        let name = format!("split_fused_argmax_{}", cases.len());
        cases.push(Case::build(&name, vec![fl(DType::F32, &[300, 7], &x)], |f, p| {
            let s = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), &[p[0], p[0]], None).unwrap();
            vec![f.push1(OpKind::Reduce(ReduceOp::ArgReduce { op: ArgOp::Max, dim: 0, index: DType::I32 }), &[s], None).unwrap()]
        }));
        checks.push(Box::new(move |g| assert_eq!(g[0].i(), &want[..], "{name}")));
    }
    for d in [DType::I32, DType::I64] {
        let min = if d == DType::I32 { i32::MIN as i64 } else { i64::MIN };
        let mut x: Vec<i64> = ties.iter().map(|&a| a as i64).collect();
        let flat = vec![min; 1000];
        x[500] = min;
        for (x, op, max) in [(&x, ArgOp::Max, true), (&x, ArgOp::Min, false), (&flat, ArgOp::Max, true), (&flat, ArgOp::Min, false)] {
            let want = arg_ref(&x.iter().map(|&a| a as f64).collect::<Vec<_>>(), &[1000], 0, max);
            let name = format!("split_{}_{d}_{}", op.name(), cases.len());
            cases.push(Case::op(&name, OpKind::Reduce(ReduceOp::ArgReduce { op, dim: 0, index: DType::I64 }), vec![il(d, &[1000], x)]));
            checks.push(Box::new(move |g| assert_eq!(g[0].i(), &want[..], "{name}")));
        }
    }
    let got = run(&cases, &[]);
    for (chk, g) in checks.iter().zip(&got) {
        chk(g);
    }
}

/// Naive dot_general on row-major data (i64 wrapping or f64).
fn dot_ref(l: &TensorType, lv: &[f64], r: &TensorType, rv: &[f64], d: &DotDims, out: &TensorType, int: bool) -> Vec<f64> {
    let lfree = DotDims::free(l.rank(), &d.lhs_batching_dimensions, &d.lhs_contracting_dimensions);
    let rfree = DotDims::free(r.rank(), &d.rhs_batching_dimensions, &d.rhs_contracting_dimensions);
    let csz: Vec<i64> = d.lhs_contracting_dimensions.iter().map(|&c| l.shape[c as usize]).collect();
    let nc: i64 = csz.iter().product();
    let (ls, rs) = (l.strides(), r.strides());
    let mut res = vec![];
    let os = out.strides();
    for o in 0..out.num_elements() as i64 {
        let oi: Vec<i64> = os.iter().zip(&out.shape).map(|(s, e)| (o / s) % e).collect();
        let nb = d.lhs_batching_dimensions.len();
        let (bi, rest) = oi.split_at(nb);
        let (li, ri) = rest.split_at(lfree.len());
        let (mut accf, mut acci) = (0.0f64, 0i64);
        for c in 0..nc {
            let mut ci = vec![0i64; csz.len()];
            let mut rem = c;
            for k in (0..csz.len()).rev() {
                ci[k] = rem % csz[k];
                rem /= csz[k];
            }
            let mut lidx = vec![0i64; l.rank()];
            let mut ridx = vec![0i64; r.rank()];
            for k in 0..nb {
                lidx[d.lhs_batching_dimensions[k] as usize] = bi[k];
                ridx[d.rhs_batching_dimensions[k] as usize] = bi[k];
            }
            for (k, &f) in lfree.iter().enumerate() {
                lidx[f as usize] = li[k];
            }
            for (k, &f) in rfree.iter().enumerate() {
                ridx[f as usize] = ri[k];
            }
            for k in 0..csz.len() {
                lidx[d.lhs_contracting_dimensions[k] as usize] = ci[k];
                ridx[d.rhs_contracting_dimensions[k] as usize] = ci[k];
            }
            let a = lv[lidx.iter().zip(&ls).map(|(i, s)| i * s).sum::<i64>() as usize];
            let b = rv[ridx.iter().zip(&rs).map(|(i, s)| i * s).sum::<i64>() as usize];
            accf += a * b;
            acci = acci.wrapping_add((a as i64).wrapping_mul(b as i64));
        }
        res.push(if int { acci as f64 } else { accf });
    }
    res
}

#[test]
fn dot_general() {
    let dd = |lb: &[i64], rb: &[i64], lc: &[i64], rc: &[i64]| DotDims { lhs_batching_dimensions: lb.to_vec(), rhs_batching_dimensions: rb.to_vec(), lhs_contracting_dimensions: lc.to_vec(), rhs_contracting_dimensions: rc.to_vec() };
    let configs: Vec<(Vec<i64>, Vec<i64>, DotDims)> = vec![
        (vec![2, 3], vec![3, 4], DotDims::matmul()),
        (vec![3, 2], vec![4, 3], dd(&[], &[], &[0], &[1])),
        (vec![5], vec![5], dd(&[], &[], &[0], &[0])),
        (vec![2], vec![3], dd(&[], &[], &[], &[])),
        (vec![], vec![4], dd(&[], &[], &[], &[])),
        (vec![2, 3, 4], vec![2, 4, 5], dd(&[0], &[0], &[2], &[1])),
        (vec![2, 3, 4, 5], vec![5, 6, 3, 2], dd(&[1], &[2], &[0, 3], &[3, 0])),
        (vec![3, 2, 4], vec![4, 2, 3], dd(&[1], &[1], &[2, 0], &[0, 2])),
    ];
    let mut cases = vec![];
    let mut want = vec![];
    for d in [DType::F32, DType::F64, DType::I32, DType::I64] {
        for (k, (ls, rs, dims)) in configs.iter().enumerate() {
            let (lt, rt) = (t(d, ls), t(d, rs));
            let lv: Vec<f64> = (0..lt.num_elements()).map(|i| ((i * 5 + k) % 9) as f64 - 4.0).collect();
            let rv: Vec<f64> = (0..rt.num_elements()).map(|i| ((i * 3 + 2 * k) % 7) as f64 - 3.0).collect();
            let (l, r) = if d.is_float() { (fl(d, ls, &lv), fl(d, rs, &rv)) } else { (il(d, ls, &lv.iter().map(|&v| v as i64).collect::<Vec<_>>()), il(d, rs, &rv.iter().map(|&v| v as i64).collect::<Vec<_>>())) };
            let c = Case::op(&format!("dot_{d}_{k}"), OpKind::Dot(DotOp::DotGeneral { dims: dims.clone() }), vec![l, r]);
            let out = c.func.result_types()[0].clone();
            want.push((d, dot_ref(&lt, &lv, &rt, &rv, dims, &out, !d.is_float())));
            cases.push(c);
        }
    }
    // Integer overflow wraps.
    let big = il(DType::I32, &[1, 2], &[i32::MAX as i64, 3]);
    let two = il(DType::I32, &[2, 1], &[2, 1]);
    cases.push(Case::op("dot_wrap", OpKind::Dot(DotOp::DotGeneral { dims: DotDims::matmul() }), vec![big, two]));
    want.push((DType::I32, vec![((i32::MAX as i64 * 2 + 3) as i32) as f64]));
    let got = run(&cases, &[]);
    for ((c, (d, w)), g) in cases.iter().zip(&want).zip(&got) {
        match &g[0] {
            Vals::F(v) => assert_close(&c.func.name, v, w, ulps(*d)),
            Vals::I(v) => assert_eq!(v, &w.iter().map(|&a| a as i64).collect::<Vec<_>>(), "{}", c.func.name),
        }
    }
}

#[test]
fn calls_and_dps_results() {
    let ty = t(DType::F64, &[3]);
    let mut g = Func::new("g", std::slice::from_ref(&ty));
    g.public = false;
    let p = g.params[0];
    let y = g.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), &[p, p], None).unwrap();
    g.outputs = vec![y, p];
    // A public function that is also called (its DPS form cannot be; the call uses a twin).
    let h = Case::op("h", OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Neg }), vec![fl(DType::F64, &[3], &[1.0, -2.0, 0.0])]);
    let x = fl(DType::F64, &[3], &[1.0, 2.0, 3.0]);
    let f = Case::build("f", vec![x.clone()], |f, p| {
        let r = f.push(OpKind::Call(CallOp::Call { callee: "g".into(), results: vec![ty.clone(), ty.clone()] }), &[p[0]], None).unwrap();
        let s = f.push1(OpKind::Call(CallOp::Call { callee: "h".into(), results: vec![ty.clone()] }), &[r[0]], None).unwrap();
        let z = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add }), &[s, r[1]], None).unwrap();
        vec![z, r[0], r[1]]
    });
    // Results that are arguments, constants, or the same value twice.
    let edge = Case::build("edge", vec![x, il(DType::I1, &[2], &[1, 0])], |f, p| {
        let c = f.push1(OpKind::Constant(ConstantOp::Constant { value: fl(DType::F64, &[3], &[7.0, 8.0, 9.0]) }), &[], None).unwrap();
        let y = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add }), &[p[0], c], None).unwrap();
        vec![p[0], p[0], c, y, y, p[1], c]
    });
    let got = run(&[h, f, edge], &[g]);
    assert_close("h", got[0][0].f(), &[-1.0, 2.0, -0.0], 0.0);
    assert_close("f.0", got[1][0].f(), &[0.0, -2.0, -6.0], 0.0);
    assert_close("f.1", got[1][1].f(), &[1.0, 4.0, 9.0], 0.0);
    assert_close("f.2", got[1][2].f(), &[1.0, 2.0, 3.0], 0.0);
    let e = &got[2];
    for k in [0, 1] {
        assert_close("edge arg", e[k].f(), &[1.0, 2.0, 3.0], 0.0);
    }
    assert_close("edge const", e[2].f(), &[7.0, 8.0, 9.0], 0.0);
    assert_close("edge twice", e[3].f(), &[8.0, 10.0, 12.0], 0.0);
    assert_close("edge twice", e[4].f(), &[8.0, 10.0, 12.0], 0.0);
    assert_eq!(e[5].i(), &[1, 0]);
    assert_close("edge const again", e[6].f(), &[7.0, 8.0, 9.0], 0.0);
}

#[test]
fn fused_chain_and_shapes() {
    // A chain of elementwise ops with broadcasts and a reduction, on odd shapes (remainders
    // for any vector width), to exercise fusion and vectorization.
    let mut cases = vec![];
    let mut want = vec![];
    for (rows, cols) in [(1i64, 1i64), (3, 7), (5, 33), (2, 100)] {
        for d in [DType::F32, DType::F64] {
            let n = (rows * cols) as usize;
            let xv: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin() * 3.0).collect();
            let bv: Vec<f64> = (0..cols as usize).map(|j| j as f64 * 0.1 - 1.0).collect();
            let c = Case::build(&format!("chain_{d}_{rows}x{cols}"), vec![fl(d, &[rows, cols], &xv), fl(d, &[cols], &bv)], |f, p| {
                let b = f.push1(OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![1], shape: vec![rows, cols] }), &[p[1]], None).unwrap();
                let s = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), &[p[0], b], None).unwrap();
                let e = f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Tanh }), &[s], None).unwrap();
                let m = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Max }), &[e, s], None).unwrap();
                let r = f.push1(OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Sum, dims: vec![1] }), &[m], None).unwrap();
                let mx = f.push1(OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Max, dims: vec![0, 1] }), &[m], None).unwrap();
                vec![m, r, mx]
            });
            let xs: Vec<f64> = lit_f(&c.inputs[0]);
            let bs: Vec<f64> = lit_f(&c.inputs[1]);
            let m: Vec<f64> = (0..n)
                .map(|i| {
                    let s = r(d, xs[i] * bs[i % cols as usize]);
                    let e = if d == DType::F32 { (s as f32).tanh() as f64 } else { s.tanh() };
                    e.max(s)
                })
                .collect();
            let sums: Vec<f64> = (0..rows as usize).map(|i| m[i * cols as usize..(i + 1) * cols as usize].iter().sum()).collect();
            let mx = m.iter().cloned().fold(-INF, f64::max);
            want.push((d, m, sums, mx));
            cases.push(c);
        }
    }
    let got = run(&cases, &[]);
    for ((c, (d, m, s, mx)), g) in cases.iter().zip(&want).zip(&got) {
        assert_close(&c.func.name, g[0].f(), m, 4.0 * ulps(*d));
        assert_close(&c.func.name, g[1].f(), s, 1e-5);
        assert_close(&c.func.name, g[2].f(), &[*mx], 4.0 * ulps(*d));
    }
}

/// `sort` / `argsort` in the CUDA target's forms (no runtime kernel: counted places), run on
/// the CPU: NumPy's stable total order (NaN last ascending, first descending, -0.0 ties 0.0,
/// ties keep their positions), along either dimension. The CPU's own forms call runtime
/// kernels that `mlir-runner` does not have; tests/rust/sort.rs checks those.
#[test]
fn sort_without_a_kernel() {
    use quabla_dialect::SortOp;
    let x = fl(DType::F32, &[2, 4], &[3.0, NAN, -0.0, 1.0, 2.0, 0.0, 2.0, -1.0]);
    let xi = il(DType::I32, &[6], &[5, -2, 5, 0, -2, 7]);
    let xu = il(DType::U8, &[4], &[200, 3, 255, 3]);
    let sort = |dimension, direction| OpKind::Sort(SortOp::Sort { dimension, direction });
    let argsort = |dimension, direction, index| OpKind::Sort(SortOp::Argsort { dimension, direction, index });
    let cases = vec![
        Case::op("sort_rows", sort(1, CmpDir::Lt), vec![x.clone()]),
        Case::op("sort_rows_desc", sort(1, CmpDir::Gt), vec![x.clone()]),
        Case::op("sort_cols", sort(0, CmpDir::Lt), vec![x.clone()]),
        Case::op("argsort_rows", argsort(1, CmpDir::Lt, DType::I32), vec![x.clone()]),
        Case::op("argsort_rows_desc", argsort(1, CmpDir::Gt, DType::I64), vec![x.clone()]),
        Case::op("argsort_int", argsort(0, CmpDir::Lt, DType::I64), vec![xi.clone()]),
        Case::op("argsort_int_desc", argsort(0, CmpDir::Gt, DType::I32), vec![xi.clone()]),
        Case::op("sort_u8", sort(0, CmpDir::Lt), vec![xu.clone()]),
    ];
    let g = jit_with(&cases, &[], 0, Codegen { target: &quabla_lowering::cuda::CUDA, ..Codegen::default() });
    assert_close("sort rows", g[0][0].f(), &[-0.0, 1.0, 3.0, NAN, -1.0, 0.0, 2.0, 2.0], 0.0);
    assert_close("sort rows desc", g[1][0].f(), &[NAN, 3.0, 1.0, -0.0, 2.0, 2.0, 0.0, -1.0], 0.0);
    assert_close("sort cols", g[2][0].f(), &[2.0, 0.0, -0.0, -1.0, 3.0, NAN, 2.0, 1.0], 0.0);
    assert_eq!(g[3][0].i(), &[2, 3, 0, 1, 3, 1, 0, 2]);
    assert_eq!(g[4][0].i(), &[1, 0, 3, 2, 0, 2, 1, 3]);
    assert_eq!(g[5][0].i(), &[1, 4, 3, 0, 2, 5]);
    assert_eq!(g[6][0].i(), &[5, 0, 2, 3, 1, 4]);
    assert_eq!(g[7][0].i(), &[3, 3, 200, 255]);
}

/// Cholesky factor of the row-major `n x n` SPD matrix `a` (lower), computed here.
fn cholesky_ref(a: &[f64], n: usize) -> Vec<f64> {
    let mut l = vec![0.0; n * n];
    for j in 0..n {
        let s = a[j * n + j] - (0..j).map(|k| l[j * n + k] * l[j * n + k]).sum::<f64>();
        l[j * n + j] = s.sqrt();
        for i in j + 1..n {
            let t = a[i * n + j] - (0..j).map(|k| l[i * n + k] * l[j * n + k]).sum::<f64>();
            l[i * n + j] = t / l[j * n + j];
        }
    }
    l
}

/// Linear algebra in the CUDA target's loop forms (crate::linalg::linalg_loops), run on the
/// CPU: cholesky of both triangles, batched, and of a matrix that is not positive definite
/// (NaN in the factor's triangle, zeros outside).
#[test]
fn linalg_without_kernels() {
    use quabla_dialect::LinalgOp;
    // SPD: m mᵀ + 3 I; the strict upper triangle of `lo` is garbage the lower factor must
    // not read, and likewise the strict lower triangle of `up`.
    let spd = [7.0, 2.0, -1.0, 2.0, 6.0, 0.5, -1.0, 0.5, 5.0];
    let mut lo = spd;
    lo[1] = 99.0;
    lo[2] = f64::NAN;
    let mut up = spd;
    up[3] = -42.0;
    let l = cholesky_ref(&spd, 3);
    let u: Vec<f64> = (0..9).map(|k| l[(k % 3) * 3 + k / 3]).collect();
    let batch = [4.0, 2.0, 2.0, 3.0, 9.0, -3.0, -3.0, 2.0];
    let lb: Vec<f64> = [cholesky_ref(&batch[..4], 2), cholesky_ref(&batch[4..], 2)].concat();
    let ch = |lower| OpKind::Linalg(LinalgOp::Cholesky { lower });
    let cases = vec![
        Case::op("chol_lower", ch(true), vec![fl(DType::F64, &[3, 3], &lo)]),
        Case::op("chol_upper", ch(false), vec![fl(DType::F64, &[3, 3], &up)]),
        Case::op("chol_batch_f32", ch(true), vec![fl(DType::F32, &[2, 2, 2], &batch)]),
        Case::op("chol_not_pd", ch(true), vec![fl(DType::F64, &[2, 2], &[1.0, 2.0, 2.0, 1.0])]),
    ];
    let g = jit_with(&cases, &[], 0, Codegen { target: &quabla_lowering::cuda::CUDA, ..Codegen::default() });
    assert_close("cholesky lower", g[0][0].f(), &l, 1e-14);
    assert_close("cholesky upper", g[1][0].f(), &u, 1e-14);
    assert_close("cholesky batched f32", g[2][0].f(), &lb, 1e-6);
    assert_close("cholesky not positive definite", g[3][0].f(), &[NAN, 0.0, NAN, NAN], 0.0);
}

/// `triangular_solve` in the CUDA target's loop form, run on the CPU, for every side,
/// triangle, transpose and diagonal: op(t) x = b (left) or x op(t) = b (right) holds for the
/// triangle `t` of `a` the flags select (the other triangle of `a` is garbage the solve must
/// not read).
#[test]
fn triangular_solve_without_kernels() {
    use quabla_dialect::LinalgOp;
    let m = 3usize;
    let a: Vec<f64> = vec![4.0, 1e3, -7e2, 0.5, 3.0, 9e2, -1.0, 2.0, 5.0];
    let a_up: Vec<f64> = vec![4.0, 0.5, -1.0, -3e2, 3.0, 2.0, 8e2, 1e3, 5.0];
    let b_left: Vec<f64> = vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let mut cases = vec![];
    let mut flags = vec![];
    for left in [true, false] {
        for lower in [true, false] {
            for transpose_a in [true, false] {
                for unit in [true, false] {
                    let op = OpKind::Linalg(LinalgOp::TriangularSolve { left_side: left, lower, transpose_a, unit_diagonal: unit });
                    let av = if lower { &a } else { &a_up };
                    let bshape: &[i64] = if left { &[3, 2] } else { &[2, 3] };
                    cases.push(Case::op(&format!("ts_{left}_{lower}_{transpose_a}_{unit}"), op, vec![fl(DType::F64, &[3, 3], av), fl(DType::F64, bshape, &b_left)]));
                    flags.push((left, lower, transpose_a, unit));
                }
            }
        }
    }
    let g = jit_with(&cases, &[], 0, Codegen { target: &quabla_lowering::cuda::CUDA, ..Codegen::default() });
    for (k, &(left, lower, transpose_a, unit)) in flags.iter().enumerate() {
        let av = if lower { &a } else { &a_up };
        // op(t)[i][j]
        let t = |i: usize, j: usize| -> f64 {
            let (p, q) = if transpose_a { (j, i) } else { (i, j) };
            if p == q {
                if unit { 1.0 } else { av[p * m + q] }
            } else if (p > q) == lower {
                av[p * m + q]
            } else {
                0.0
            }
        };
        let x = g[k][0].f();
        let mut got = vec![0.0; 6];
        if left {
            // x: 3 x 2; op(t) x
            for i in 0..3 {
                for c in 0..2 {
                    got[i * 2 + c] = (0..3).map(|j| t(i, j) * x[j * 2 + c]).sum();
                }
            }
        } else {
            // x: 2 x 3; x op(t)
            for r in 0..2 {
                for j in 0..3 {
                    got[r * 3 + j] = (0..3).map(|i| x[r * 3 + i] * t(i, j)).sum();
                }
            }
        }
        assert_close(&format!("triangular_solve left={left} lower={lower} transpose_a={transpose_a} unit={unit}"), &got, &b_left, 1e-12);
    }
}

/// `lu` in the CUDA target's loop form, run on the CPU: for square, wide, tall and batched
/// operands and a zero pivot, the permuted operand equals l u (l unit lower and u upper as
/// packed in the result), the permutation is what the pivots' row swaps make, and the
/// pivots are the first entries of largest magnitude (a known 2 x 2 case).
#[test]
fn lu_without_kernels() {
    use quabla_dialect::LinalgOp;
    let mats: Vec<(Vec<i64>, Vec<f64>)> = vec![
        (vec![2, 2], vec![1.0, 2.0, 3.0, 4.0]),
        (vec![3, 4], vec![2.0, -1.0, 0.5, 4.0, 6.0, 3.0, -2.0, 1.0, -4.0, 7.0, 2.5, 0.0]),
        (vec![4, 3], vec![0.0, 1.0, 2.0, 0.0, 3.0, -1.0, 0.0, -5.0, 4.0, 0.0, 2.0, 2.0]),
        (vec![2, 3, 3], vec![4.0, 3.0, 2.0, 8.0, 7.0, 9.0, -4.0, 6.0, 1.0, 1.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 3.0]),
    ];
    let cases: Vec<Case> = mats.iter().enumerate().map(|(k, (s, v))| Case::op(&format!("lu{k}"), OpKind::Linalg(LinalgOp::Lu {}), vec![fl(DType::F64, s, v)])).collect();
    let g = jit_with(&cases, &[], 0, Codegen { target: &quabla_lowering::cuda::CUDA, ..Codegen::default() });
    assert_eq!(g[0][1].i(), &[1, 1], "pivots of [[1, 2], [3, 4]]");
    assert_eq!(g[0][2].i(), &[1, 0]);
    assert_close("lu of [[1, 2], [3, 4]]", g[0][0].f(), &[3.0, 4.0, 1.0 / 3.0, 2.0 - 4.0 / 3.0], 1e-15);
    for (k, (s, v)) in mats.iter().enumerate() {
        let (m, n) = (s[s.len() - 2] as usize, s[s.len() - 1] as usize);
        let batch = v.len() / (m * n);
        let kmin = m.min(n);
        for bi in 0..batch {
            let a = &v[bi * m * n..(bi + 1) * m * n];
            let lu = &g[k][0].f()[bi * m * n..(bi + 1) * m * n];
            let piv = &g[k][1].i()[bi * kmin..(bi + 1) * kmin];
            let perm = &g[k][2].i()[bi * m..(bi + 1) * m];
            let mut want: Vec<i64> = (0..m as i64).collect();
            for (j, &p) in piv.iter().enumerate() {
                want.swap(j, p as usize);
            }
            assert_eq!(perm, &want[..], "lu{k}[{bi}]: the permutation follows the pivots");
            for i in 0..m {
                for j in 0..n {
                    let prod: f64 = (0..kmin).map(|t| {
                        let l = if t == i { 1.0 } else if t < i { lu[i * n + t] } else { 0.0 };
                        let u = if t <= j { lu[t * n + j] } else { 0.0 };
                        l * u
                    }).sum();
                    let want = a[perm[i] as usize * n + j];
                    assert!((prod - want).abs() <= 1e-12 * (1.0 + want.abs()), "lu{k}[{bi}]: (l u)[{i}][{j}] = {prod}, (p a)[{i}][{j}] = {want}");
                }
            }
        }
    }
}

/// `qr` in the CUDA target's loop form, run on the CPU, reduced and full, for tall, wide,
/// square (with a column already zero below the diagonal) and batched operands: q r = a, q's
/// columns orthonormal, r upper triangular, and the CPU kernel's signs (r's diagonal
/// opposite to the column's leading entry: a known 2 x 1 case).
#[test]
fn qr_without_kernels() {
    use quabla_dialect::LinalgOp;
    let mats: Vec<(Vec<i64>, Vec<f64>)> = vec![
        (vec![2, 1], vec![3.0, 4.0]),
        (vec![4, 3], vec![2.0, -1.0, 0.5, 4.0, 6.0, 3.0, -2.0, 1.0, -4.0, 7.0, 2.5, 0.0]),
        (vec![2, 3], vec![1.0, 2.0, 3.0, -4.0, 5.0, 6.0]),
        (vec![2, 3, 3], vec![5.0, 1.0, 2.0, 0.0, 3.0, 1.0, 0.0, 4.0, -2.0, 1.0, 2.0, 0.0, 3.0, 1.0, 1.0, -1.0, 0.0, 2.0]),
    ];
    let mut cases = vec![];
    for full in [false, true] {
        for (k, (s, v)) in mats.iter().enumerate() {
            cases.push(Case::op(&format!("qr{k}_{full}"), OpKind::Linalg(LinalgOp::Qr { full_matrices: full }), vec![fl(DType::F64, s, v)]));
        }
    }
    let g = jit_with(&cases, &[], 0, Codegen { target: &quabla_lowering::cuda::CUDA, ..Codegen::default() });
    assert_close("q of [3, 4]", g[0][0].f(), &[-0.6, -0.8], 1e-15);
    assert_close("r of [3, 4]", g[0][1].f(), &[-5.0], 1e-15);
    for (ci, full) in [false, true].into_iter().enumerate() {
        for (k, (s, v)) in mats.iter().enumerate() {
            let (m, n) = (s[s.len() - 2] as usize, s[s.len() - 1] as usize);
            let c = if full { m } else { m.min(n) };
            let batch = v.len() / (m * n);
            let out = &g[ci * mats.len() + k];
            for bi in 0..batch {
                let a = &v[bi * m * n..(bi + 1) * m * n];
                let q = &out[0].f()[bi * m * c..(bi + 1) * m * c];
                let r = &out[1].f()[bi * c * n..(bi + 1) * c * n];
                let what = format!("qr{k} full={full} [{bi}]");
                for i in 0..c {
                    for j in 0..i.min(n) {
                        assert_eq!(r[i * n + j], 0.0, "{what}: r[{i}][{j}] below the diagonal");
                    }
                }
                for i in 0..m {
                    for j in 0..n {
                        let p: f64 = (0..c).map(|t| q[i * c + t] * r[t * n + j]).sum();
                        assert!((p - a[i * n + j]).abs() <= 1e-12 * (1.0 + a[i * n + j].abs()), "{what}: (q r)[{i}][{j}] = {p}, a = {}", a[i * n + j]);
                    }
                }
                for x in 0..c {
                    for y in 0..c {
                        let p: f64 = (0..m).map(|t| q[t * c + x] * q[t * c + y]).sum();
                        let want = if x == y { 1.0 } else { 0.0 };
                        assert!((p - want).abs() <= 1e-12, "{what}: (qᵀ q)[{x}][{y}] = {p}");
                    }
                }
            }
        }
    }
}

/// `if` and `case` in the CUDA target's forms (every branch computed, the taken one selected
/// inside a kernel), run on the CPU: both predicates, every index (out-of-range ones take the
/// last branch, as `scf.index_switch`'s default), 0-d and vector results.
#[test]
fn control_without_host_reads() {
    let text = r#"
func.func @main(%p: tensor<i1>, %x: tensor<3xf32>, %s: tensor<f32>) -> (tensor<3xf32>, tensor<f32>) {
  %c = tensor.extract %p[] : tensor<i1>
  %r:2 = scf.if %c -> (tensor<3xf32>, tensor<f32>) {
    %a = "quabla.neg"(%x) : (tensor<3xf32>) -> tensor<3xf32>
    scf.yield %a, %s : tensor<3xf32>, tensor<f32>
  } else {
    %b = "quabla.add"(%x, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %t = "quabla.mul"(%s, %s) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    scf.yield %b, %t : tensor<3xf32>, tensor<f32>
  }
  return %r#0, %r#1 : tensor<3xf32>, tensor<f32>
}
func.func @sw(%i: tensor<i32>, %x: tensor<2xf64>) -> tensor<2xf64> {
  %c = tensor.extract %i[] : tensor<i32>
  %ix = arith.index_cast %c : i32 to index
  %r = scf.index_switch %ix -> tensor<2xf64>
  case 0 {
    %n = "quabla.neg"(%x) : (tensor<2xf64>) -> tensor<2xf64>
    scf.yield %n : tensor<2xf64>
  }
  case 1 {
    %m = "quabla.mul"(%x, %x) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
    scf.yield %m : tensor<2xf64>
  }
  default {
    scf.yield %x : tensor<2xf64>
  }
  return %r : tensor<2xf64>
}
"#;
    let m = quabla_dialect::mlir::parse_and_import(&quabla_dialect::mlir::new_context(), text).unwrap_or_else(|e| panic!("{e}"));
    let (main, sw) = (m.func("main").unwrap().clone(), m.func("sw").unwrap().clone());
    let x = fl(DType::F32, &[3], &[1.0, -2.0, 0.5]);
    let s = fl(DType::F32, &[], &[3.0]);
    let mut cases = vec![];
    for (k, p) in [true, false].into_iter().enumerate() {
        let mut f = main.clone();
        f.name = format!("if{k}");
        cases.push(Case { func: f, inputs: vec![il(DType::I1, &[], &[i64::from(p)]), x.clone(), s.clone()] });
    }
    let idx = [-1, 0, 1, 2, 7];
    for (k, i) in idx.iter().enumerate() {
        let mut f = sw.clone();
        f.name = format!("sw{k}");
        cases.push(Case { func: f, inputs: vec![il(DType::I32, &[], &[*i]), fl(DType::F64, &[2], &[3.0, -0.5])] });
    }
    let g = jit_with(&cases, &[], 0, Codegen { target: &quabla_lowering::cuda::CUDA, ..Codegen::default() });
    assert_close("if true", g[0][0].f(), &[-1.0, 2.0, -0.5], 0.0);
    assert_close("if true, 0-d", g[0][1].f(), &[3.0], 0.0);
    assert_close("if false", g[1][0].f(), &[2.0, -4.0, 1.0], 0.0);
    assert_close("if false, 0-d", g[1][1].f(), &[9.0], 0.0);
    let want: [[f64; 2]; 5] = [[3.0, -0.5], [-3.0, 0.5], [9.0, 0.25], [3.0, -0.5], [3.0, -0.5]];
    for (k, w) in want.iter().enumerate() {
        assert_close(&format!("case index {}", idx[k]), g[2 + k][0].f(), w, 0.0);
    }
}

/// Loops and an `if` whose branch holds one: on the CUDA target the loops run on the host
/// and that `if` branches there (not `every_branch`, which would run the untaken loop); its
/// linalg form, run here with the CPU's at -O0 and -O3, gives the same values.
#[test]
fn control_with_host_loops() {
    let text = r#"
func.func @main(%p: tensor<i1>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %c = tensor.extract %p[] : tensor<i1>
  %r = scf.if %c -> (tensor<2xf32>) {
    %w = scf.while (%y = %x) : (tensor<2xf32>) -> (tensor<2xf32>) {
      %s = "quabla.reduce_sum"(%y) {dims = array<i64: 0>} : (tensor<2xf32>) -> tensor<f32>
      %ten = "quabla.constant"() {value = dense<10.0> : tensor<f32>} : () -> tensor<f32>
      %lt = "quabla.compare"(%s, %ten) {direction = "lt"} : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cc = tensor.extract %lt[] : tensor<i1>
      scf.condition(%cc) %y : tensor<2xf32>
    } do {
    ^bb0(%y2: tensor<2xf32>):
      %y3 = "quabla.add"(%y2, %y2) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      scf.yield %y3 : tensor<2xf32>
    }
    scf.yield %w : tensor<2xf32>
  } else {
    %n = "quabla.neg"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    scf.yield %n : tensor<2xf32>
  }
  return %r : tensor<2xf32>
}
func.func @cnt(%x: tensor<2xf32>, %n: tensor<i64>) -> (tensor<2xf32>, tensor<i64>) {
  %zero = "quabla.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %r:3 = scf.while (%i = %zero, %y = %x, %m = %n) : (tensor<i64>, tensor<2xf32>, tensor<i64>) -> (tensor<i64>, tensor<2xf32>, tensor<i64>) {
    %lt = "quabla.compare"(%i, %m) {direction = "lt"} : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %c = tensor.extract %lt[] : tensor<i1>
    scf.condition(%c) %i, %y, %m : tensor<i64>, tensor<2xf32>, tensor<i64>
  } do {
  ^bb0(%i2: tensor<i64>, %y2: tensor<2xf32>, %m2: tensor<i64>):
    %one = "quabla.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %i3 = "quabla.add"(%i2, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %y3 = "quabla.mul"(%y2, %y2) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    scf.yield %i3, %y3, %m2 : tensor<i64>, tensor<2xf32>, tensor<i64>
  }
  return %r#1, %r#0 : tensor<2xf32>, tensor<i64>
}
"#;
    let m = quabla_dialect::mlir::parse_and_import(&quabla_dialect::mlir::new_context(), text).unwrap_or_else(|e| panic!("{e}"));
    let (main, cnt) = (m.func("main").unwrap().clone(), m.func("cnt").unwrap().clone());
    let x = fl(DType::F32, &[2], &[1.0, 2.0]);
    let mut cases = vec![];
    for (k, p) in [true, false].into_iter().enumerate() {
        let mut f = main.clone();
        f.name = format!("if{k}");
        cases.push(Case { func: f, inputs: vec![il(DType::I1, &[], &[i64::from(p)]), x.clone()] });
    }
    for (k, n) in [2, 0, -1].into_iter().enumerate() {
        let mut f = cnt.clone();
        f.name = format!("cnt{k}");
        cases.push(Case { func: f, inputs: vec![fl(DType::F32, &[2], &[1.5, -2.0]), il(DType::I64, &[], &[n])] });
    }
    let g = run(&cases, &[]);
    assert_close("if true: doubled until the sum reaches 10", g[0][0].f(), &[4.0, 8.0], 0.0);
    assert_close("if false", g[1][0].f(), &[-1.0, -2.0], 0.0);
    assert_close("two squarings", g[2][0].f(), &[5.0625, 16.0], 0.0);
    assert_eq!(g[2][1], Vals::I(vec![2]));
    for k in [3, 4] {
        assert_close("no iteration", g[k][0].f(), &[1.5, -2.0], 0.0);
        assert_eq!(g[k][1], Vals::I(vec![0]), "the counter of an empty loop");
    }
}

/// `eigh` in the CUDA target's loop form (the CPU kernel's cyclic Jacobi), run on the CPU:
/// from either triangle (garbage in the other), batched, and a diagonal matrix whose order
/// is known: a v = v diag(w), v orthonormal, w ascending.
#[test]
fn eigh_without_kernels() {
    use quabla_dialect::LinalgOp;
    let sym = [4.0, 1.0, -2.0, 1.0, 2.0, 0.5, -2.0, 0.5, 3.0];
    let mut lo = sym;
    lo[1] = 77.0;
    lo[5] = -9.0;
    let mut up = sym;
    up[3] = 55.0;
    let batch = [2.0, 1.0, 1.0, 2.0, 1.0, 0.0, 0.0, -1.0];
    let eig = |lower| OpKind::Linalg(LinalgOp::Eigh { lower });
    let cases = vec![
        Case::op("eigh_lower", eig(true), vec![fl(DType::F64, &[3, 3], &lo)]),
        Case::op("eigh_upper", eig(false), vec![fl(DType::F64, &[3, 3], &up)]),
        Case::op("eigh_batch_f32", eig(true), vec![fl(DType::F32, &[2, 2, 2], &batch)]),
        Case::op("eigh_diag", eig(true), vec![fl(DType::F64, &[3, 3], &[3.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 2.0])]),
    ];
    let g = jit_with(&cases, &[], 0, Codegen { target: &quabla_lowering::cuda::CUDA, ..Codegen::default() });
    assert_close("eigh diag w", g[3][1].f(), &[1.0, 2.0, 3.0], 0.0);
    assert_close("eigh diag v", g[3][0].f(), &[0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0], 0.0);
    for (k, a, n, tol) in [(0, &sym[..], 3, 1e-12), (1, &sym[..], 3, 1e-12), (2, &batch[..4], 2, 1e-5), (2, &batch[4..], 2, 1e-5)] {
        let bi = if k == 2 && a.as_ptr() != batch.as_ptr() { 1 } else { 0 };
        let v = &g[k][0].f()[bi * n * n..(bi + 1) * n * n];
        let w = &g[k][1].f()[bi * n..(bi + 1) * n];
        for j in 1..n {
            assert!(w[j - 1] <= w[j], "case {k}: eigenvalues ascending: {w:?}");
        }
        for i in 0..n {
            for j in 0..n {
                let av: f64 = (0..n).map(|t| a[i * n + t] * v[t * n + j]).sum();
                assert!((av - v[i * n + j] * w[j]).abs() <= tol * 10.0, "case {k}[{bi}]: (a v)[{i}][{j}] = {av}, v w = {}", v[i * n + j] * w[j]);
                let vv: f64 = (0..n).map(|t| v[t * n + i] * v[t * n + j]).sum();
                assert!((vv - if i == j { 1.0 } else { 0.0 }).abs() <= tol, "case {k}[{bi}]: (vᵀ v)[{i}][{j}] = {vv}");
            }
        }
    }
}

/// `svd` in the CUDA target's loop form (the CPU kernel's one-sided Jacobi with completion),
/// run on the CPU, reduced and full, tall, wide, rank-deficient and batched: u diag(s) vt = a,
/// u's columns and vt's rows orthonormal, s descending and non-negative.
#[test]
fn svd_without_kernels() {
    use quabla_dialect::LinalgOp;
    let mats: Vec<(Vec<i64>, Vec<f64>)> = vec![
        (vec![4, 3], vec![2.0, -1.0, 0.5, 4.0, 6.0, 3.0, -2.0, 1.0, -4.0, 7.0, 2.5, 0.0]),
        (vec![2, 3], vec![1.0, 2.0, 3.0, -4.0, 5.0, 6.0]),
        (vec![3, 3], vec![1.0, 2.0, 3.0, 2.0, 4.0, 6.0, 1.0, 0.0, 1.0]),
        (vec![2, 2, 2], vec![3.0, 0.0, 0.0, -2.0, 1.0, 1.0, 1.0, 1.0]),
    ];
    let mut cases = vec![];
    for full in [false, true] {
        for (k, (s, v)) in mats.iter().enumerate() {
            cases.push(Case::op(&format!("svd{k}_{full}"), OpKind::Linalg(LinalgOp::Svd { full_matrices: full }), vec![fl(DType::F64, s, v)]));
        }
    }
    let g = jit_with(&cases, &[], 0, Codegen { target: &quabla_lowering::cuda::CUDA, ..Codegen::default() });
    for (ci, full) in [false, true].into_iter().enumerate() {
        for (k, (sh, v)) in mats.iter().enumerate() {
            let (m, n) = (sh[sh.len() - 2] as usize, sh[sh.len() - 1] as usize);
            let kk = m.min(n);
            let (cu, rv) = if full { (m, n) } else { (kk, kk) };
            let batch = v.len() / (m * n);
            let out = &g[ci * mats.len() + k];
            for bi in 0..batch {
                let a = &v[bi * m * n..(bi + 1) * m * n];
                let u = &out[0].f()[bi * m * cu..(bi + 1) * m * cu];
                let s = &out[1].f()[bi * kk..(bi + 1) * kk];
                let vt = &out[2].f()[bi * rv * n..(bi + 1) * rv * n];
                let what = format!("svd{k} full={full} [{bi}]");
                for j in 0..kk {
                    assert!(s[j] >= 0.0 && (j == 0 || s[j - 1] >= s[j]), "{what}: s {s:?} u {u:?} vt {vt:?}");
                }
                for i in 0..m {
                    for j in 0..n {
                        let p: f64 = (0..kk).map(|t| u[i * cu + t] * s[t] * vt[t * n + j]).sum();
                        assert!((p - a[i * n + j]).abs() <= 1e-12 * 10.0, "{what}: (u s vt)[{i}][{j}] = {p}, a = {}", a[i * n + j]);
                    }
                }
                for x in 0..cu {
                    for y in 0..cu {
                        let p: f64 = (0..m).map(|t| u[t * cu + x] * u[t * cu + y]).sum();
                        assert!((p - if x == y { 1.0 } else { 0.0 }).abs() <= 1e-12, "{what}: (uᵀ u)[{x}][{y}] = {p}");
                    }
                }
                for x in 0..rv {
                    for y in 0..rv {
                        let p: f64 = (0..n).map(|t| vt[x * n + t] * vt[y * n + t]).sum();
                        assert!((p - if x == y { 1.0 } else { 0.0 }).abs() <= 1e-12, "{what}: (vt vtᵀ)[{x}][{y}] = {p}");
                    }
                }
            }
        }
    }
}

//! Differential tests: for every core op, on random inputs of every supported dtype
//! (including broadcasting, multi-dim reductions, 0-d tensors and non-trivial transposes),
//! the JIT result equals the reference interpreter: exactly for integer/bool results and
//! exactly rounded float ops, within 4 ulps for transcendental functions (libm vs Rust's
//! implementations), and within 1e-5 (f32) / 1e-12 (f64) relative to the magnitude of the
//! summands for reductions and dots (summation order differs).
use quabla_dialect::{ArgOp, BinaryOp, CallOp, CmpDir, ConstantOp, DType, DotDims, DotOp, ElementwiseOp, Func, LayoutOp, Literal, Module, OpKind, ReduceOp, Reducer, SlicingOp, TensorType, UnaryOp};
use quabla_runtime::{interp, Buffer, CompileOptions, Executor};
use quabla_tests::{compare, one_op_module, Rng, Tol};

use crate::executor;

const FLOATS: [DType; 2] = [DType::F32, DType::F64];
const NUMERIC: [DType; 4] = [DType::F32, DType::F64, DType::I32, DType::I64];

fn t(d: DType, s: &[i64]) -> TensorType {
    TensorType::new(d, s)
}

fn rel(d: DType) -> Tol {
    if d == DType::F32 {
        Tol::Rel(1e-5)
    } else {
        Tol::Rel(1e-12)
    }
}

/// The device the suite checks against the interpreter: `QUABLA_TEST_DEVICE` (tests/gpu/run.sh
/// sets `cuda`), else the CPU JIT.
fn device() -> Option<String> {
    std::env::var("QUABLA_TEST_DEVICE").ok().filter(|d| d != "cpu")
}

/// The executor of [`device`].
fn device_executor() -> &'static dyn Executor {
    match device() {
        Some(d) => quabla_runtime::executor(&d).unwrap_or_else(|e| panic!("QUABLA_TEST_DEVICE={d}: {e}")),
        None => executor(),
    }
}

/// Runs `m` with both engines on `inputs` and compares every output. On a GPU device
/// (`QUABLA_TEST_DEVICE`) inexact float results are compared within 1e-5 (f32) / 1e-12 (f64)
/// relative to `scale` (libdevice is not libm), and the CUDA target's typed gaps are skipped
/// with a message.
fn check(what: &str, m: &Module, inputs: &[Buffer], tol: Tol, scale: f64) {
    let want = interp::run_func(m, "main", inputs).unwrap_or_else(|e| panic!("{what}: interpreter failed: {e}"));
    let gpu = device().is_some();
    let exe = match device_executor().compile(m, "main", &CompileOptions::default()) {
        Ok(exe) => exe,
        Err(quabla_runtime::RuntimeError::Lower(quabla_lowering::LowerError::Unsupported { op, rule: "cuda" })) if gpu => {
            eprintln!("{what}: skipped on cuda: quabla.{op} has no cuda rule");
            return;
        }
        Err(e) => panic!("{what}: compile failed: {e}\n{}", m.to_mlir()),
    };
    let tol = match tol {
        Tol::Ulps(_) if gpu => {
            let f32 = want.iter().any(|b| b.ty().dtype == DType::F32);
            Tol::Rel(if f32 { 1e-5 } else { 1e-12 })
        }
        t => t,
    };
    let refs: Vec<&Buffer> = inputs.iter().collect();
    let got = exe.run(&refs).unwrap_or_else(|e| panic!("{what}: run failed: {e}"));
    assert_eq!(got.len(), want.len(), "{what}: output count");
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        let g = &g.to_host().unwrap_or_else(|e| panic!("{what}: output {k}: {e}"));
        if let Err(e) = compare(g, w, tol, scale) {
            panic!("{what}: output {k} differs (JIT vs interpreter): {e}\ninputs: {inputs:?}\nJIT: {g:?}\ninterp: {w:?}\n{}", m.to_mlir());
        }
    }
}

pub(crate) fn check_op(what: &str, kind: OpKind, params: &[TensorType], inputs: &[Buffer], tol: Tol, scale: f64) {
    check(what, &one_op_module(kind, params), inputs, tol, scale)
}

fn unary_domain(u: UnaryOp) -> (f64, f64) {
    match u {
        UnaryOp::Log | UnaryOp::Sqrt | UnaryOp::Rsqrt | UnaryOp::Log1p => (0.05, 4.0),
        UnaryOp::Tan => (-1.4, 1.4),
        UnaryOp::Asin | UnaryOp::Acos | UnaryOp::Atanh => (-0.95, 0.95),
        UnaryOp::ErfInv => (-0.99, 0.99),
        UnaryOp::Acosh => (1.05, 4.0),
        UnaryOp::Lgamma | UnaryOp::Digamma => (-2.9, 6.0),
        _ => (-3.0, 3.0),
    }
}

fn unary_tol(u: UnaryOp) -> Tol {
    match u {
        UnaryOp::Neg | UnaryOp::Abs | UnaryOp::Sign | UnaryOp::Floor | UnaryOp::Ceil | UnaryOp::Round | UnaryOp::Sqrt | UnaryOp::Not => Tol::Exact,
        // The CPU computes XLA's erf_inv (JAX's bits; quabla_lowering::approx::BOUNDS), the
        // interpreter a Halley-refined value: tens of ulps apart towards +-0.99.
        UnaryOp::ErfInv => Tol::Ulps(64),
        _ => Tol::Ulps(4),
    }
}

#[test]
fn unary_ops() {
    let mut rng = Rng(1);
    for &u in UnaryOp::ALL {
        for d in DType::ALL {
            if !u.class().admits(d) {
                continue;
            }
            for shape in [&[][..], &[2, 3, 5][..]] {
                let ty = t(d, shape);
                let (lo, hi) = if d.is_float() { unary_domain(u) } else { (-50.0, 50.0) };
                let x = rng.buffer(&ty, lo, hi);
                check_op(&format!("{} {ty}", u.name()), OpKind::Elementwise(ElementwiseOp::Unary { op: u }), &[ty.clone()], &[x], unary_tol(u), 1.0);
            }
        }
    }
}

#[test]
fn binary_ops() {
    let mut rng = Rng(2);
    for &b in BinaryOp::ALL {
        for d in DType::ALL {
            if !b.class().admits(d) {
                continue;
            }
            for shape in [&[][..], &[4, 6][..]] {
                let ty = t(d, shape);
                let (x, y) = match (b, d.is_float()) {
                    (BinaryOp::Pow, _) => (rng.buffer(&ty, 0.1, 3.0), rng.buffer(&ty, -2.0, 2.0)),
                    (_, true) => (rng.buffer(&ty, -5.0, 5.0), rng.buffer(&ty, -5.0, 5.0)),
                    // Small integers so that division and remainder by zero occur.
                    (_, false) => (rng.buffer(&ty, -6.0, 6.0), rng.buffer(&ty, -3.0, 3.0)),
                };
                let tol = match b {
                    // logaddexp = max + log1p(exp(-|x - y|)) through the exp and log1p kernels.
                    BinaryOp::Pow | BinaryOp::Atan2 | BinaryOp::Logaddexp => Tol::Ulps(4),
                    _ => Tol::Exact,
                };
                check_op(&format!("{} {ty}", b.name()), OpKind::Elementwise(ElementwiseOp::Binary { op: b }), &[ty.clone(), ty.clone()], &[x, y], tol, 1.0);
            }
        }
    }
}

#[test]
fn integer_division_edge_cases() {
    for d in [DType::I32, DType::I64] {
        let min = if d == DType::I32 { i32::MIN as f64 } else { i64::MIN as f64 };
        let ty = t(d, &[6]);
        let x = Buffer::from_f64s(ty.clone(), &[7.0, -7.0, min, min, 5.0, 0.0]).unwrap();
        let y = Buffer::from_f64s(ty.clone(), &[0.0, 2.0, -1.0, 0.0, -3.0, 0.0]).unwrap();
        for b in [BinaryOp::Div, BinaryOp::Rem] {
            check_op(&format!("{} edge {ty}", b.name()), OpKind::Elementwise(ElementwiseOp::Binary { op: b }), &[ty.clone(), ty.clone()], &[x.clone(), y.clone()], Tol::Exact, 1.0);
        }
    }
}

#[test]
fn float_special_values() {
    let vals = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 0.0, 0.5, 1.5, 2.5, -0.5, -2.5, 1.0, -1.0];
    for d in FLOATS {
        let ty = t(d, &[vals.len() as i64]);
        let x = Buffer::from_f64s(ty.clone(), &vals).unwrap();
        let mut y_vals = vals;
        y_vals.reverse();
        let y = Buffer::from_f64s(ty.clone(), &y_vals).unwrap();
        for u in [UnaryOp::Sign, UnaryOp::Abs, UnaryOp::Round, UnaryOp::Floor, UnaryOp::Ceil, UnaryOp::Neg] {
            check_op(&format!("{} specials {ty}", u.name()), OpKind::Elementwise(ElementwiseOp::Unary { op: u }), &[ty.clone()], &[x.clone()], Tol::Exact, 1.0);
        }
        for b in [BinaryOp::Max, BinaryOp::Min, BinaryOp::Add, BinaryOp::Mul, BinaryOp::Div] {
            check_op(&format!("{} specials {ty}", b.name()), OpKind::Elementwise(ElementwiseOp::Binary { op: b }), &[ty.clone(), ty.clone()], &[x.clone(), y.clone()], Tol::Exact, 1.0);
        }
        for dir in CmpDir::ALL {
            check_op(&format!("compare {} specials {ty}", dir.name()), OpKind::Elementwise(ElementwiseOp::Compare { direction: dir}), &[ty.clone(), ty.clone()], &[x.clone(), y.clone()], Tol::Exact, 1.0);
        }
    }
}

#[test]
fn powi_compare_select_convert() {
    let mut rng = Rng(3);
    for d in NUMERIC {
        let ty = t(d, &[3, 4]);
        for e in [0i64, 1, 2, 3, 7, -1, -2] {
            let x = if d.is_float() { rng.buffer(&ty, -2.0, 2.0) } else { rng.buffer(&ty, -3.0, 4.0) };
            check_op(&format!("powi {e} {ty}"), OpKind::Elementwise(ElementwiseOp::Powi { exponent: e }), &[ty.clone()], &[x], Tol::Ulps(2), 1.0);
        }
    }
    for d in DType::ALL {
        let ty = t(d, &[5, 3]);
        for dir in CmpDir::ALL {
            let (x, y) = (rng.buffer(&ty, -2.0, 2.0), rng.buffer(&ty, -2.0, 2.0));
            check_op(&format!("compare {} {ty}", dir.name()), OpKind::Elementwise(ElementwiseOp::Compare { direction: dir}), &[ty.clone(), ty.clone()], &[x, y], Tol::Exact, 1.0);
        }
        let p = rng.buffer(&t(DType::I1, &[5, 3]), 0.0, 1.0);
        let (x, y) = (rng.buffer(&ty, -9.0, 9.0), rng.buffer(&ty, -9.0, 9.0));
        check_op(&format!("select {ty}"), OpKind::Elementwise(ElementwiseOp::Select {}), &[t(DType::I1, &[5, 3]), ty.clone(), ty.clone()], &[p, x, y], Tol::Exact, 1.0);
        for to in DType::ALL {
            let x = rng.buffer(&t(d, &[7]), -100.0, 100.0);
            check_op(&format!("convert {d} -> {to}"), OpKind::Elementwise(ElementwiseOp::Convert { to }), &[t(d, &[7])], &[x], Tol::Exact, 1.0);
        }
    }
}

#[test]
fn constants_and_iota() {
    for d in DType::ALL {
        let ty = t(d, &[3, 4]);
        let mut f = Func::new("main", &[]);
        let lit = Literal::from_f64s(ty.clone(), &(0..12).map(|i| (i as f64) * 0.75 - 4.0).collect::<Vec<_>>());
        let c = f.push1(OpKind::Constant(ConstantOp::Constant { value: lit }), &[], None).unwrap();
        let s = f.push1(OpKind::Constant(ConstantOp::Constant { value: Literal::splat(t(d, &[]), 1.0) }), &[], None).unwrap();
        let i0 = f.push1(OpKind::Constant(ConstantOp::Iota { dim: 0, ty: ty.clone() }), &[], None).unwrap();
        let i1 = f.push1(OpKind::Constant(ConstantOp::Iota { dim: 1, ty: ty.clone() }), &[], None).unwrap();
        f.outputs = vec![c, s, i0, i1];
        check(&format!("constants/iota {d}"), &Module { funcs: vec![f] }, &[], Tol::Exact, 1.0);
    }
}

#[test]
fn layout_ops() {
    let mut rng = Rng(4);
    for d in DType::ALL {
        let cases: Vec<(OpKind, Vec<i64>)> = vec![
            (OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![1], shape: vec![2, 3, 4] }), vec![3]),
            (OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![0, 1], shape: vec![3, 4] }), vec![1, 4]),
            (OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![0, 2], shape: vec![3, 2, 4] }), vec![3, 1]),
            (OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![], shape: vec![5] }), vec![]),
            (OpKind::Layout(LayoutOp::Reshape { shape: vec![4, 6] }), vec![2, 3, 4]),
            (OpKind::Layout(LayoutOp::Reshape { shape: vec![] }), vec![1]),
            (OpKind::Layout(LayoutOp::Reshape { shape: vec![2, 1, 3] }), vec![6]),
            (OpKind::Layout(LayoutOp::Transpose { perm: vec![2, 0, 1] }), vec![2, 3, 4]),
            (OpKind::Layout(LayoutOp::Transpose { perm: vec![1, 0] }), vec![5, 3]),
            (OpKind::Layout(LayoutOp::Transpose { perm: vec![] }), vec![]),
        ];
        for (kind, shape) in cases {
            let ty = t(d, &shape);
            let x = rng.buffer(&ty, -9.0, 9.0);
            check_op(&format!("{kind:?} {ty}"), kind, &[ty.clone()], &[x], Tol::Exact, 1.0);
        }
    }
}

#[test]
fn slicing_ops() {
    let mut rng = Rng(5);
    for d in DType::ALL {
        let ty = t(d, &[5, 6]);
        let x = rng.buffer(&ty, -9.0, 9.0);
        check_op(&format!("slice {ty}"), OpKind::Slicing(SlicingOp::Slice { start_indices: vec![1, 0], limit_indices: vec![4, 6], strides: vec![2, 3] }), &[ty.clone()], &[x.clone()], Tol::Exact, 1.0);
        let pv = rng.buffer(&t(d, &[]), -9.0, 9.0);
        check_op(
            &format!("pad {ty}"),
            OpKind::Slicing(SlicingOp::Pad { edge_padding_low: vec![1, 0], edge_padding_high: vec![0, 2], interior_padding: vec![1, 1]}),
            &[ty.clone(), t(d, &[])],
            &[x.clone(), pv],
            Tol::Exact,
            1.0,
        );
        let parts = [t(d, &[5, 2]), t(d, &[5, 3])];
        let xs: Vec<Buffer> = parts.iter().map(|p| rng.buffer(p, -9.0, 9.0)).collect();
        check_op(&format!("concatenate {ty}"), OpKind::Slicing(SlicingOp::Concatenate { dim: 1 }), &parts, &xs, Tol::Exact, 1.0);
        for it in [DType::I32, DType::I64] {
            for (a, b) in [(1.0, 2.0), (-3.0, 9.0), (4.0, 0.0)] {
                let s0 = Buffer::from_f64s(t(it, &[]), &[a]).unwrap();
                let s1 = Buffer::from_f64s(t(it, &[]), &[b]).unwrap();
                check_op(
                    &format!("dynamic_slice {ty} starts ({a},{b}) {it}"),
                    OpKind::Slicing(SlicingOp::DynamicSlice { slice_sizes: vec![2, 3]}),
                    &[ty.clone(), t(it, &[]), t(it, &[])],
                    &[x.clone(), s0, s1],
                    Tol::Exact,
                    1.0,
                );
            }
            let idx = Buffer::from_f64s(t(it, &[2, 3]), &[0.0, 5.0, 2.0, -4.0, 11.0, 3.0]).unwrap();
            check_op(&format!("gather axis 1 {ty} {it}"), OpKind::Slicing(SlicingOp::Gather { axis: 1 }), &[ty.clone(), t(it, &[2, 3])], &[x.clone(), idx.clone()], Tol::Exact, 1.0);
            check_op(&format!("gather axis 0 {ty} {it}"), OpKind::Slicing(SlicingOp::Gather { axis: 0 }), &[ty.clone(), t(it, &[2, 3])], &[x.clone(), idx], Tol::Exact, 1.0);
        }
    }
}

#[test]
fn reductions() {
    let mut rng = Rng(6);
    for op in Reducer::ALL {
        for d in DType::ALL {
            if d == DType::I1 && matches!(op, Reducer::Sum | Reducer::Prod) {
                continue;
            }
            let ty = t(d, &[3, 4, 5]);
            let (lo, hi) = if op == Reducer::Prod { (0.7, 1.3) } else { (-4.0, 4.0) };
            let x = rng.buffer(&ty, lo, hi);
            for dims in [vec![0, 2], vec![1], vec![0, 1, 2], vec![]] {
                let tol = if d.is_float() && matches!(op, Reducer::Sum | Reducer::Prod) { rel(d) } else { Tol::Exact };
                check_op(&format!("{} {dims:?} {ty}", op.name()), OpKind::Reduce(ReduceOp::Reduce { op, dims: dims.clone() }), &[ty.clone()], &[x.clone()], tol, 60.0);
            }
        }
    }
    for op in [ArgOp::Max, ArgOp::Min] {
        for d in NUMERIC {
            let ty = t(d, &[4, 6]);
            let x = rng.buffer(&ty, -3.0, 3.0);
            for dim in [0, 1] {
                for index in [DType::I32, DType::I64] {
                    check_op(&format!("{} dim {dim} {ty} -> {index}", op.name()), OpKind::Reduce(ReduceOp::ArgReduce { op, dim, index }), &[ty.clone()], &[x.clone()], Tol::Exact, 1.0);
                }
            }
        }
    }
}

#[test]
fn dot_general() {
    let mut rng = Rng(7);
    let dd = |lb: &[i64], rb: &[i64], lc: &[i64], rc: &[i64]| DotDims { lhs_batching_dimensions: lb.to_vec(), rhs_batching_dimensions: rb.to_vec(), lhs_contracting_dimensions: lc.to_vec(), rhs_contracting_dimensions: rc.to_vec() };
    let cases: Vec<(Vec<i64>, Vec<i64>, DotDims)> = vec![
        (vec![3, 4], vec![4, 5], DotDims::matmul()),
        (vec![2, 3, 4], vec![2, 4, 5], dd(&[0], &[0], &[2], &[1])),
        (vec![4, 2, 3], vec![3, 5, 2], dd(&[1], &[2], &[2], &[0])),
        (vec![2, 3, 4], vec![4, 3, 6], dd(&[], &[], &[1, 2], &[1, 0])),
        (vec![7], vec![7], dd(&[], &[], &[0], &[0])),
        (vec![3], vec![5], dd(&[], &[], &[], &[])),
        (vec![4, 3], vec![4, 5], dd(&[], &[], &[0], &[0])),
    ];
    for d in NUMERIC {
        for (ls, rs, dims) in &cases {
            let (lt, rt) = (t(d, ls), t(d, rs));
            let (a, b) = (rng.buffer(&lt, -3.0, 3.0), rng.buffer(&rt, -3.0, 3.0));
            let tol = if d.is_float() { rel(d) } else { Tol::Exact };
            check_op(&format!("dot_general {lt} x {rt} {dims:?}"), OpKind::Dot(DotOp::DotGeneral { dims: dims.clone() }), &[lt.clone(), rt.clone()], &[a, b], tol, 100.0);
        }
    }
}

#[test]
fn calls_and_a_composite_program() {
    // A private callee used twice, and a softmax-like chain mixing families.
    let ty = t(DType::F64, &[3, 4]);
    let mut g = Func::new("g", &[ty.clone()]);
    g.public = false;
    let e = g.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Exp }), &[g.params[0]], None).unwrap();
    let s = g.push1(OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Sum, dims: vec![1] }), &[e], None).unwrap();
    let sb = g.push1(OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![0], shape: vec![3, 4] }), &[s], None).unwrap();
    let y = g.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Div }), &[e, sb], None).unwrap();
    g.outputs = vec![y];
    let mut f = Func::new("main", &[ty.clone()]);
    let call = OpKind::Call(CallOp::Call { callee: "g".into(), results: vec![ty.clone()] });
    let a = f.push1(call.clone(), &[f.params[0]], None).unwrap();
    let b = f.push1(call, &[a], None).unwrap();
    let tr = f.push1(OpKind::Layout(LayoutOp::Transpose { perm: vec![1, 0] }), &[b], None).unwrap();
    f.outputs = vec![tr, a];
    let m = Module { funcs: vec![f, g] };
    m.verify().unwrap();
    let x = Rng(8).buffer(&ty, -2.0, 2.0);
    check("call + softmax", &m, &[x.clone()], Tol::Rel(1e-14), 1.0);
    // The same program after the quabla passes (inline + canonicalize) still agrees.
    let mut m2 = m.clone();
    quabla_passes::simplify::inline::inline(&mut m2);
    quabla_passes::canonicalize(&mut m2);
    quabla_passes::simplify::dce::symbol_dce(&mut m2);
    assert!(m2.funcs.len() == 1, "the callee is inlined and removed");
    check("call + softmax after inline/canonicalize", &m2, &[x], Tol::Rel(1e-14), 1.0);
}

#[test]
fn several_outputs_of_one_type() {
    // Outputs whose computations start from identical inits (fills, empties) must not share
    // a destination buffer.
    let mut rng = Rng(9);
    let ty = t(DType::F32, &[4, 4]);
    let mut f = Func::new("main", &[ty.clone(), ty.clone()]);
    let (x, y) = (f.params[0], f.params[1]);
    let a = f.push1(OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Sum, dims: vec![1] }), &[x], None).unwrap();
    let b = f.push1(OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Sum, dims: vec![1] }), &[y], None).unwrap();
    let c = f.push1(OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Max, dims: vec![0] }), &[x], None).unwrap();
    let d = f.push1(OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Max, dims: vec![0] }), &[y], None).unwrap();
    let e = f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Exp }), &[x], None).unwrap();
    let g = f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Exp }), &[y], None).unwrap();
    let h = f.push1(OpKind::Dot(DotOp::DotGeneral { dims: DotDims::matmul() }), &[x, y], None).unwrap();
    let k = f.push1(OpKind::Dot(DotOp::DotGeneral { dims: DotDims::matmul() }), &[y, x], None).unwrap();
    f.outputs = vec![a, b, c, d, e, g, h, k, x, a];
    let m = Module { funcs: vec![f] };
    let inputs = [rng.buffer(&ty, -2.0, 2.0), rng.buffer(&ty, -2.0, 2.0)];
    check("several outputs of one type", &m, &inputs, Tol::Rel(1e-5), 10.0);
}

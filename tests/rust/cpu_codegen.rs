//! The CPU executor's fast paths against the reference interpreter: the polynomial kernels
//! of transcendental functions (quabla_lowering::approx) over wide ranges, within the ulp
//! bounds listed in `approx::BOUNDS` and bit-identical to the kernels' scalar evaluator; and
//! the tiled, vectorized matmul path (quabla_lowering::tiling) on divisible, blocked-K,
//! batched, transposed and ragged (loop path) shapes.
use quabla_dialect::{BinaryOp, DType, DotDims, DotOp, ElementwiseOp, Func, LayoutOp, Module, OpKind, TensorType, UnaryOp};
use quabla_lowering::approx::{self, eval};
use quabla_lowering::{lower_for_cpu, CpuOptions};
use quabla_runtime::{interp, Buffer, CompileOptions, Executor};
use quabla_tests::{compare, one_op_module, ulps, Rng, Tol};

use crate::executor;

/// Sample points: uniform on [lo, hi], log-uniform magnitudes below max(|lo|, |hi|) (both
/// signs, within the range), and specials.
fn points(rng: &mut Rng, lo: f64, hi: f64, n: usize) -> Vec<f64> {
    let mut v = vec![0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, lo, hi];
    let m = lo.abs().max(hi.abs());
    while v.len() < n {
        let u = rng.next_f64();
        if v.len() % 2 == 0 {
            v.push(lo + (hi - lo) * u);
        } else {
            let x = m * 2f64.powf(-40.0 * u);
            let x = if rng.next_f64() < 0.5 { -x } else { x };
            if x >= lo && x <= hi {
                v.push(x);
            }
        }
    }
    v
}

/// Ranges per kernel: wide (overflow, underflow, huge arguments) and the busy middle.
fn ranges(u: UnaryOp, d: DType) -> Vec<(f64, f64)> {
    let big = if d == DType::F32 { 3.0e38 } else { 1.0e300 };
    match u {
        UnaryOp::Exp | UnaryOp::Expm1 => vec![(-800.0, 800.0), (-2.0, 2.0)],
        UnaryOp::Log => vec![(0.0, big), (0.0, 3.0)],
        UnaryOp::Log1p => vec![(-1.0, big), (-0.9, 4.0), (-1e-6, 1e-6)],
        UnaryOp::Exp2 => vec![(-1100.0, 1100.0), (-2.0, 2.0)],
        UnaryOp::Sinh | UnaryOp::Cosh => vec![(-800.0, 800.0), (-2.0, 2.0), (-1e-6, 1e-6)],
        UnaryOp::Asinh => vec![(-big, big), (-10.0, 10.0), (-1e-6, 1e-6)],
        UnaryOp::Atanh => vec![(-1.0, 1.0), (-1e-6, 1e-6)],
        UnaryOp::Tanh => vec![(-30.0, 30.0), (-1.5, 1.5)],
        UnaryOp::Erf => vec![(-30.0, 30.0), (-1.5, 1.5), (-4.5, 4.5), (-1e-3, 1e-3)],
        // Past 9.2 the f32 result is subnormal (relative ulps lose their meaning).
        UnaryOp::Erfc => vec![(-30.0, 9.2), (-1.5, 1.5), (0.3, 4.5)],
        // The interpreter's 1/(1 + exp(-x)) loses accuracy below about -15 (its own
        // rounding of 1 + e); the kernel is checked there against the exact formula in
        // quabla-lowering's unit tests.
        UnaryOp::Logistic => vec![(-15.0, 800.0), (-3.0, 3.0)],
        UnaryOp::Sin | UnaryOp::Cos => vec![(-big, big), (-1.0e6, 1.0e6), (-10.0, 10.0)],
        // Out of [-1, 1] both give NaN (the tails near +-1, where the branches change, are
        // checked against JAX in tests/python/test_random.py).
        UnaryOp::ErfInv => vec![(-1.5, 1.5), (-1.0, 1.0)],
        _ => vec![],
    }
}

/// Compile options with IEEE gradual underflow: the kernels' subnormal cases (underflowing
/// exp, subnormal arguments of pow and atan2) as the interpreter computes them. By default
/// compiled code flushes denormals to zero, as XLA's does (quabla_runtime::fpmode).
fn gradual_underflow() -> CompileOptions {
    CompileOptions { flush_denormals: false, ..CompileOptions::default() }
}

/// Compiled code flushes denormals like XLA by default, on the calling thread and on the
/// parallel loops' workers (libomp hands them the caller's mode), and restores the caller's
/// mode; with `flush_denormals` off it underflows gradually like the interpreter.
#[test]
fn denormals_flush_to_zero_like_xla() {
    let n = 1 << 20;
    let t = TensorType::new(DType::F32, [n]);
    let tiny = Buffer::from_f64s(t.clone(), &vec![1e-40; n as usize]).unwrap();
    let m = one_op_module(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add }), &[t.clone(), t.clone()]);
    for threads in [1, 2] {
        let flushed = executor().compile(&m, "main", &with_threads(threads)).unwrap().run(&[&tiny, &tiny]).unwrap().remove(0);
        assert!(flushed.to_f64_vec().iter().all(|&v| v.to_bits() == 0), "{threads} threads: 1e-40 + 1e-40 reads subnormals as zero");
        let kept = executor().compile(&m, "main", &CompileOptions { threads, ..gradual_underflow() }).unwrap().run(&[&tiny, &tiny]).unwrap().remove(0);
        assert!(kept.to_f64_vec().iter().all(|&v| (v - 2e-40).abs() < 1e-44), "{threads} threads: gradual underflow keeps 2e-40");
    }
    let s = TensorType::new(DType::F32, [3]);
    let x = Buffer::from_f64s(s.clone(), &[-100.0, -87.0, 0.0]).unwrap();
    let e = one_op_module(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Exp }), &[s]);
    let got = executor().compile(&e, "main", &CompileOptions::default()).unwrap().run(&[&x]).unwrap().remove(0).to_f64_vec();
    assert_eq!(got[0], 0.0, "exp(-100) f32 is flushed (JAX gives 0 on the CPU)");
    assert!(got[1] > 1e-38 && got[2] == 1.0);
    // The caller's mode is back: this thread still underflows gradually.
    assert!(std::hint::black_box(1e-40_f32) * std::hint::black_box(1.5_f32) > 0.0);
}

#[test]
fn polynomial_kernels_match_the_interpreter() {
    let mut rng = Rng(77);
    let mut report = String::new();
    let mut failed = false;
    for &(u, d, bound) in approx::BOUNDS {
        for (lo, hi) in ranges(u, d) {
            let xs = points(&mut rng, lo, hi, 20_000);
            let ty = TensorType::new(d, [xs.len() as i64]);
            let x = Buffer::from_f64s(ty.clone(), &xs).unwrap();
            let m = one_op_module(OpKind::Elementwise(ElementwiseOp::Unary { op: u }), &[ty.clone()]);
            let want = &interp::run_func(&m, "main", &[x.clone()]).unwrap()[0];
            let got = &executor().compile(&m, "main", &gradual_underflow()).unwrap().run(&[&x]).unwrap()[0];
            let mut worst = (0u64, 0.0);
            for (i, &xi) in xs.iter().enumerate() {
                let (g, w) = (got.get_f64(i), want.get_f64(i));
                // The compiled kernel computes exactly what the evaluator computes.
                let e = if d == DType::F32 { eval::f32(u, xi as f32).unwrap() as f64 } else { eval::f64(u, xi).unwrap() };
                assert!(g.to_bits() == e.to_bits() || (g.is_nan() && e.is_nan()), "{} {d} at {xi:e}: JIT {g:e} vs evaluator {e:e}", u.name());
                let err = ulps(d, g, w);
                if err > worst.0 {
                    worst = (err, xi);
                }
            }
            report += &format!("{} {d} [{lo:e}, {hi:e}]: max {} ulps at {:e} (bound {bound})\n", u.name(), worst.0, worst.1);
            failed |= worst.0 > bound;
        }
    }
    println!("{report}");
    assert!(!failed, "a polynomial kernel exceeds its bound:\n{report}");
}

#[test]
fn pow_kernel_matches_the_interpreter() {
    // f32 pow is exp(y log|x|) in f64 with C99's special cases (approx.rs `powf`): over every
    // pair of special values (signed zeros, +-1, +-inf, NaN, subnormals, odd and even
    // integers, fractions) and random pairs, the JIT equals the kernels' evaluator bit for bit
    // and the interpreter's powf within 1 ulp (NaN where it gives NaN).
    use quabla_dialect::BinaryOp;
    let special: [f32; 24] = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 1e-40, -1e-40, 1e30, -1e30, 1.7, -1.7, 100.0, 0.1, -2.5, 7.0, 1e-3];
    let (mut xs, mut ys) = all_pairs(&special);
    let mut rng = Rng(88);
    let n = 20_000;
    let ty = TensorType::new(DType::F32, [n as i64]);
    xs.extend(rng.buffer(&ty, 0.0, 20.0).to_f64_vec());
    ys.extend(rng.buffer(&ty, -40.0, 40.0).to_f64_vec());
    xs.extend(rng.buffer(&ty, -6.0, 6.0).to_f64_vec().iter().map(|v| v.round()));
    ys.extend(rng.buffer(&ty, -20.0, 20.0).to_f64_vec().iter().map(|v| v.round()));
    binary_kernel_matches_the_interpreter(BinaryOp::Pow, &xs, &ys);
}

/// Every ordered pair of `special` values, as two columns.
fn all_pairs(special: &[f32]) -> (Vec<f64>, Vec<f64>) {
    special.iter().flat_map(|&a| special.iter().map(move |&b| (a as f64, b as f64))).unzip()
}

/// The f32 kernel of `op` on pairs `(xs[i], ys[i])`: the JIT equals the kernels' evaluator
/// bit for bit and the interpreter within 1 ulp (NaN where it gives NaN; equal bits count,
/// so signed zeros must match).
fn binary_kernel_matches_the_interpreter(op: quabla_dialect::BinaryOp, xs: &[f64], ys: &[f64]) {
    let t = TensorType::new(DType::F32, [xs.len() as i64]);
    let (x, y) = (Buffer::from_f64s(t.clone(), xs).unwrap(), Buffer::from_f64s(t.clone(), ys).unwrap());
    let m = one_op_module(OpKind::Elementwise(ElementwiseOp::Binary { op }), &[t.clone(), t]);
    let want = &interp::run_func(&m, "main", &[x.clone(), y.clone()]).unwrap()[0];
    let got = &executor().compile(&m, "main", &gradual_underflow()).unwrap().run(&[&x, &y]).unwrap()[0];
    for i in 0..xs.len() {
        let (g, w) = (got.get_f64(i), want.get_f64(i));
        let e = eval::f32_binary(op, xs[i] as f32, ys[i] as f32).unwrap() as f64;
        assert!(g.to_bits() == e.to_bits() || (g.is_nan() && e.is_nan()), "{op:?}({}, {}): JIT {g:e} vs evaluator {e:e}", xs[i], ys[i]);
        let ok = if w.is_nan() { g.is_nan() } else { g.to_bits() == w.to_bits() || ulps(DType::F32, g, w) <= 1 };
        assert!(ok, "{op:?}({:e}, {:e}): JIT {g:e} vs interpreter {w:e}", xs[i], ys[i]);
    }
}

#[test]
fn atan2_kernel_matches_the_interpreter() {
    // f32 atan2 is computed in f64 and rounded once (approx.rs `atan2f`): over every pair of
    // special values (signed zeros, +-inf, NaN, subnormals, equal magnitudes, tan(pi/8)'s
    // neighbourhood) and random pairs of several scales, the JIT equals the kernels' evaluator
    // bit for bit and the interpreter's atan2f within 1 ulp (NaN where it gives NaN).
    use quabla_dialect::BinaryOp;
    let special: [f32; 20] = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 1e-40, -1e-40, 1e30, -1e30, 0.41421357, 0.4142135, 2.4142137, 3.0, -7.5];
    let (mut ys, mut xs) = all_pairs(&special);
    let mut rng = Rng(193);
    let n = 20_000;
    let ty = TensorType::new(DType::F32, [n as i64]);
    for scale in [1.0, 1e-20, 1e20] {
        ys.extend(rng.buffer(&ty, -3.0, 3.0).to_f64_vec().iter().map(|v| v * scale));
        xs.extend(rng.buffer(&ty, -3.0, 3.0).to_f64_vec());
    }
    binary_kernel_matches_the_interpreter(BinaryOp::Atan2, &ys, &xs);
}

/// One dot_general module.
fn dot_module(lt: &TensorType, rt: &TensorType, dims: DotDims) -> Module {
    let mut f = Func::new("main", &[lt.clone(), rt.clone()]);
    let (a, b) = (f.params[0], f.params[1]);
    f.outputs = vec![f.push1(OpKind::Dot(DotOp::DotGeneral { dims }), &[a, b], None).unwrap()];
    Module { funcs: vec![f] }
}

/// Dims with the same batch dims on both sides and one contracted dim per side.
fn bdims(batch: &[i64], lc: &[i64], rc: &[i64]) -> DotDims {
    DotDims { lhs_batching_dimensions: batch.to_vec(), rhs_batching_dimensions: batch.to_vec(), lhs_contracting_dimensions: lc.to_vec(), rhs_contracting_dimensions: rc.to_vec() }
}

#[test]
fn tiled_matmuls_match_the_interpreter() {
    let mut rng = Rng(78);
    let mm = DotDims::matmul;
    let batched = || DotDims { lhs_batching_dimensions: vec![0], rhs_batching_dimensions: vec![0], lhs_contracting_dimensions: vec![2], rhs_contracting_dimensions: vec![1] };
    // (lhs shape, rhs shape, dims, tiled?)
    let cases: Vec<(Vec<i64>, Vec<i64>, DotDims, bool)> = vec![
        (vec![64, 64], vec![64, 64], mm(), true),
        (vec![128, 96], vec![96, 256], mm(), true),
        (vec![96, 100], vec![100, 96], mm(), true),
        // Several row blocks (mb = 32 / 40) and B panels; K blocks (1024 / 1000).
        (vec![256, 512], vec![512, 64], mm(), true),
        (vec![200, 320], vec![320, 96], mm(), true),
        (vec![40, 2048], vec![2048, 48], mm(), true),
        (vec![24, 3000], vec![3000, 40], mm(), true),
        (vec![2, 64, 48], vec![2, 48, 64], batched(), true),
        // lhs contracted over its first dim: transposed before the product.
        (vec![72, 64], vec![72, 64], DotDims { lhs_batching_dimensions: vec![], rhs_batching_dimensions: vec![], lhs_contracting_dimensions: vec![0], rhs_contracting_dimensions: vec![0] }, true),
        // rhs contracted over its second dim (`x @ W.T`): packed from its [n, k] layout,
        // divisible and ragged (rows of W padded).
        (vec![64, 64], vec![256, 64], DotDims { lhs_batching_dimensions: vec![], rhs_batching_dimensions: vec![], lhs_contracting_dimensions: vec![1], rhs_contracting_dimensions: vec![1] }, true),
        (vec![100, 96], vec![70, 96], DotDims { lhs_batching_dimensions: vec![], rhs_batching_dimensions: vec![], lhs_contracting_dimensions: vec![1], rhs_contracting_dimensions: vec![1] }, true),
        // Ragged M, N: zero-padded to whole blocks and panels on the tiled path.
        (vec![100, 60], vec![60, 70], mm(), true),
        (vec![9, 300], vec![300, 33], mm(), true),
        (vec![64, 512], vec![512, 10], mm(), true),
        (vec![3, 30, 50], vec![3, 50, 41], batched(), true),
        (vec![130, 270], vec![270, 17], mm(), true),
        // Ragged N with whole row blocks: the last panel peeled (zero-padded panel, its
        // blocks inserted into C), with full panels before it or none (N < NR), in both
        // layouts of B.
        (vec![16, 64], vec![64, 784], mm(), true),
        (vec![64, 96], vec![20, 96], DotDims { lhs_batching_dimensions: vec![], rhs_batching_dimensions: vec![], lhs_contracting_dimensions: vec![1], rhs_contracting_dimensions: vec![1] }, true),
        (vec![40, 64], vec![300, 64], DotDims { lhs_batching_dimensions: vec![], rhs_batching_dimensions: vec![], lhs_contracting_dimensions: vec![1], rhs_contracting_dimensions: vec![1] }, true),
        // lhs contracted over its first dim with ragged N (the MLP's dW = dh^T x).
        (vec![64, 40], vec![64, 70], DotDims { lhs_batching_dimensions: vec![], rhs_batching_dimensions: vec![], lhs_contracting_dimensions: vec![0], rhs_contracting_dimensions: vec![0] }, true),
        // lhs [k, m] read in place: K blocks, ragged M (the padded copy stays [k, m]), k equal
        // to the row block, and both operands transposed (lhs [k, m], rhs [n, k]).
        (vec![512, 64], vec![512, 96], DotDims { lhs_batching_dimensions: vec![], rhs_batching_dimensions: vec![], lhs_contracting_dimensions: vec![0], rhs_contracting_dimensions: vec![0] }, true),
        (vec![300, 100], vec![300, 33], DotDims { lhs_batching_dimensions: vec![], rhs_batching_dimensions: vec![], lhs_contracting_dimensions: vec![0], rhs_contracting_dimensions: vec![0] }, true),
        (vec![128, 128], vec![128, 96], DotDims { lhs_batching_dimensions: vec![], rhs_batching_dimensions: vec![], lhs_contracting_dimensions: vec![0], rhs_contracting_dimensions: vec![0] }, true),
        (vec![96, 72], vec![50, 96], DotDims { lhs_batching_dimensions: vec![], rhs_batching_dimensions: vec![], lhs_contracting_dimensions: vec![0], rhs_contracting_dimensions: vec![1] }, true),
        // The same over grouped dims (reshapes of the operands): a [batch, seq, features]
        // activation contracted over its leading two dims, an rhs [n, k1, k2] (x [m, k1, k2]).
        (vec![8, 16, 40], vec![8, 16, 70], DotDims { lhs_batching_dimensions: vec![], rhs_batching_dimensions: vec![], lhs_contracting_dimensions: vec![0, 1], rhs_contracting_dimensions: vec![0, 1] }, true),
        (vec![64, 4, 24], vec![50, 4, 24], DotDims { lhs_batching_dimensions: vec![], rhs_batching_dimensions: vec![], lhs_contracting_dimensions: vec![1, 2], rhs_contracting_dimensions: vec![1, 2] }, true),
        // Batched, lhs [b, k, m] and/or rhs [b, n, k] read in place (attention's q k^T and
        // its gradients), ragged M and N, two batch dims.
        (vec![2, 48, 64], vec![2, 48, 64], bdims(&[0], &[1], &[1]), true),
        (vec![3, 64, 16], vec![3, 64, 16], bdims(&[0], &[2], &[2]), true),
        (vec![3, 64, 64], vec![3, 64, 16], bdims(&[0], &[1], &[1]), true),
        (vec![2, 50, 30], vec![2, 41, 50], bdims(&[0], &[1], &[2]), true),
        (vec![2, 3, 40, 40], vec![2, 3, 40, 32], bdims(&[0, 1], &[2], &[2]), true),
        // The micro-panel path (A packed into 8-row micro-panels, K blocked by the lowering;
        // crate::tiling::micro_blocks and rows_alias: at least 4 panels, A's rows in place
        // 1, 2 or 4 KB apart): several K blocks (K 512 / 640 in blocks that fit L1),
        // ragged M (padded) and N (an m x np product), A as [k, m], B as [n, k], batched.
        (vec![64, 512], vec![512, 128], mm(), true),
        (vec![100, 512], vec![512, 150], mm(), true),
        (vec![640, 256], vec![640, 200], DotDims { lhs_batching_dimensions: vec![], rhs_batching_dimensions: vec![], lhs_contracting_dimensions: vec![0], rhs_contracting_dimensions: vec![0] }, true),
        (vec![48, 512], vec![136, 512], DotDims { lhs_batching_dimensions: vec![], rhs_batching_dimensions: vec![], lhs_contracting_dimensions: vec![1], rhs_contracting_dimensions: vec![1] }, true),
        (vec![2, 40, 512], vec![2, 512, 160], batched(), true),
        // Too small to pay: the loop path.
        (vec![8, 8], vec![8, 16], mm(), false),
        // Fewer rows than tiling::MIN_ROWS: the loop path over (m, k, n), also transposed,
        // batched and 1-D (a vector times a matrix).
        (vec![1, 300], vec![300, 200], mm(), false),
        (vec![3, 200], vec![150, 200], DotDims { lhs_batching_dimensions: vec![], rhs_batching_dimensions: vec![], lhs_contracting_dimensions: vec![1], rhs_contracting_dimensions: vec![1] }, false),
        (vec![2, 1, 100], vec![2, 100, 70], batched(), false),
        (vec![256], vec![256, 96], DotDims { lhs_batching_dimensions: vec![], rhs_batching_dimensions: vec![], lhs_contracting_dimensions: vec![0], rhs_contracting_dimensions: vec![0] }, false),
    ];
    // Integer products take the same vectorised path (wrapping i32/i64/u32 arithmetic, so
    // the results are exact); bool and u8 products stay on the loop path.
    for d in [DType::I32, DType::I64, DType::U32, DType::U8] {
        for (ls, rs, dims, tiled) in &cases {
            let (lt, rt) = (TensorType::new(d, ls.clone()), TensorType::new(d, rs.clone()));
            let m = dot_module(&lt, &rt, dims.clone());
            let what = format!("{d} {ls:?} x {rs:?}");
            let cm = lower_for_cpu(&m, &CpuOptions::default()).unwrap();
            assert_eq!(cm.tiled_matmuls > 0, *tiled && d != DType::U8, "{what}: tiled path chosen?");
            let (lo, hi) = if d == DType::I32 || d == DType::I64 { (-1e4, 1e4) } else { (0.0, 200.0) };
            let inputs = [rng.buffer(&lt, lo, hi), rng.buffer(&rt, lo, hi)];
            let want = &interp::run_func(&m, "main", &inputs).unwrap()[0];
            let got = &executor().compile(&m, "main", &CompileOptions::default()).unwrap().run(&[&inputs[0], &inputs[1]]).unwrap()[0];
            if let Err(e) = compare(got, want, Tol::Exact, 1.0) {
                panic!("{what}: JIT vs interpreter: {e}");
            }
        }
    }
    for d in [DType::F32, DType::F64] {
        for (ls, rs, dims, tiled) in &cases {
            let (lt, rt) = (TensorType::new(d, ls.clone()), TensorType::new(d, rs.clone()));
            let m = dot_module(&lt, &rt, dims.clone());
            let what = format!("{d} {ls:?} x {rs:?}");
            let cm = lower_for_cpu(&m, &generated_cpu()).unwrap();
            assert_eq!(cm.tiled_matmuls > 0, *tiled, "{what}: tiled path chosen?");
            let inputs = [rng.buffer(&lt, -1.0, 1.0), rng.buffer(&rt, -1.0, 1.0)];
            let want = &interp::run_func(&m, "main", &inputs).unwrap()[0];
            let got = &executor().compile(&m, "main", &generated(0)).unwrap().run(&[&inputs[0], &inputs[1]]).unwrap()[0];
            let k: i64 = dims.lhs_contracting_dimensions.iter().map(|&c| ls[c as usize]).product();
            let tol = if d == DType::F32 { Tol::Rel(1e-6 * k as f64) } else { Tol::Rel(1e-14 * k as f64) };
            if let Err(e) = compare(got, want, tol, 1.0) {
                panic!("{what}: JIT vs interpreter: {e}");
            }
        }
    }
}

#[test]
fn vector_matrix_products_stream_rows_on_one_and_two_threads() {
    // Fewer rows than tiling::MIN_ROWS where products are generated (with runtime products
    // they are the runtime's short path): one generic over (m, k, n) with B's rows streamed
    // (no packing, no padding to the register block), split across threads along n.
    let mut rng = Rng(83);
    for (ls, rs) in [(vec![1i64, 2048i64], vec![2048i64, 1024i64]), (vec![3, 1000], vec![1000, 777])] {
        let (lt, rt) = (TensorType::new(DType::F32, ls.clone()), TensorType::new(DType::F32, rs.clone()));
        let m = dot_module(&lt, &rt, DotDims::matmul());
        let cm = lower_for_cpu(&m, &CpuOptions { threads: 2, ..generated_cpu() }).unwrap();
        assert_eq!(cm.tiled_matmuls, 0, "{ls:?}: the loop path");
        assert!(cm.text.contains(r#"iterator_types = ["parallel", "reduction", "parallel"]"#), "{ls:?}: columns innermost:\n{}", cm.text);
        let inputs = [rng.buffer(&lt, -1.0, 1.0), rng.buffer(&rt, -1.0, 1.0)];
        // Each sum runs over k in order on either thread count: exact.
        let want = interp::run_func(&m, "main", &inputs).unwrap();
        for threads in [1, 2] {
            let got = executor().compile(&m, "main", &generated(threads)).unwrap().run(&inputs.iter().collect::<Vec<_>>()).unwrap();
            compare(&got[0], &want[0], Tol::Exact, 1.0).unwrap_or_else(|e| panic!("{ls:?} x {rs:?} on {threads} threads: {e}"));
        }
    }
}

#[test]
fn short_products_call_the_runtime_and_match_the_interpreter() {
    // Fewer than 16 rows, wider than one vector (quabla_lowering::tiling::short_gemm, on
    // AVX-512 hosts): one runtime call (B read in place, no packing), equal to the interpreter
    // within the float bounds of a length-K sum on one and two threads; vector-matrix, A given
    // transposed, ragged columns, f32 and f64, a batch of short products.
    let mut rng = Rng(84);
    let t_lhs = DotDims { lhs_batching_dimensions: vec![], rhs_batching_dimensions: vec![], lhs_contracting_dimensions: vec![0], rhs_contracting_dimensions: vec![0] };
    let batched = DotDims { lhs_batching_dimensions: vec![0], rhs_batching_dimensions: vec![0], lhs_contracting_dimensions: vec![2], rhs_contracting_dimensions: vec![1] };
    let short = quabla_lowering::tiling::short_gemm(DType::F32, 4, 512, quabla_lowering::tiling::host_regs());
    for d in [DType::F32, DType::F64] {
        for (ls, rs, dims) in [(vec![1i64, 2048i64], vec![2048i64, 1000i64], DotDims::matmul()), (vec![4, 512], vec![512, 512], DotDims::matmul()), (vec![300, 13], vec![300, 77], t_lhs.clone()), (vec![3, 9, 128], vec![3, 128, 100], batched.clone())] {
            let (lt, rt) = (TensorType::new(d, ls.clone()), TensorType::new(d, rs.clone()));
            let m = dot_module(&lt, &rt, dims);
            let cm = lower_for_cpu(&m, &CpuOptions::default()).unwrap();
            assert_eq!(cm.text.contains("call @quabla_gemm_"), short, "{d} {ls:?} x {rs:?}: a runtime call on AVX-512 hosts:\n{}", cm.text);
            let inputs = [rng.buffer(&lt, -1.0, 1.0), rng.buffer(&rt, -1.0, 1.0)];
            let k = if ls.len() == 3 { ls[2] } else { rs[0] };
            let tol = if d == DType::F32 { Tol::Rel(1e-6 * k as f64) } else { Tol::Rel(1e-14 * k as f64) };
            equals_interpreter_on_one_and_two_threads(&m, &inputs, tol, |_| 1.0, &format!("{d} {ls:?} x {rs:?} on "));
        }
        // Any rows, more than one vector of columns and fewer than two (tiling::two_vector_gemm):
        // the short kernel on blocks of 8 rows in one runtime call; A given transposed too.
        let lanes = 64 / d.size() as i64;
        for (ls, rs, dims) in [(vec![300i64, 200i64], vec![200i64, lanes + 1], DotDims::matmul()), (vec![77, 64], vec![64, 2 * lanes - 1], DotDims::matmul()), (vec![90, 257], vec![90, lanes + 5], t_lhs.clone())] {
            let (lt, rt) = (TensorType::new(d, ls.clone()), TensorType::new(d, rs.clone()));
            let m = dot_module(&lt, &rt, dims);
            let cm = lower_for_cpu(&m, &CpuOptions::default()).unwrap();
            assert_eq!(cm.text.contains("call @quabla_gemm_"), short, "{d} {ls:?} x {rs:?}: a runtime call on AVX-512 hosts:\n{}", cm.text);
            let inputs = [rng.buffer(&lt, -1.0, 1.0), rng.buffer(&rt, -1.0, 1.0)];
            let k = rs[0];
            let tol = if d == DType::F32 { Tol::Rel(1e-6 * k as f64) } else { Tol::Rel(1e-14 * k as f64) };
            equals_interpreter_on_one_and_two_threads(&m, &inputs, tol, |_| 1.0, &format!("{d} {ls:?} x {rs:?} on "));
        }
    }
}

#[test]
fn boolean_any_and_all_match_the_interpreter_on_one_and_two_threads() {
    // any/all (reduce_max/min of i1) reduce in an i8 accumulator, all as not any(not x):
    // full, row and column reductions of masks mostly true, mostly false and mixed.
    use quabla_dialect::{ReduceOp, Reducer};
    let mut rng = Rng(84);
    let ty = TensorType::new(DType::F32, [300i64, 700]);
    for threshold in [-3.0, 0.0, 3.0] {
        let mut f = Func::new("main", std::slice::from_ref(&ty));
        let x = f.params[0];
        let c = f.push1(OpKind::Constant(quabla_dialect::ConstantOp::Constant { value: quabla_dialect::Literal::from_f64s(ty.clone(), &vec![threshold; 300 * 700]) }), &[], None).unwrap();
        let mask = f.push1(OpKind::Elementwise(ElementwiseOp::Compare { direction: quabla_dialect::CmpDir::Gt }), &[x, c], None).unwrap();
        let mut outs = vec![];
        for op in [Reducer::Max, Reducer::Min] {
            for dims in [vec![0, 1], vec![0], vec![1]] {
                outs.push(f.push1(OpKind::Reduce(ReduceOp::Reduce { op, dims }), &[mask], None).unwrap());
            }
        }
        f.outputs = outs;
        let m = Module { funcs: vec![f] };
        let inputs = [rng.buffer(&ty, -3.5, 3.5)];
        equals_interpreter_on_one_and_two_threads(&m, &inputs, Tol::Exact, |_| 1.0, &format!("threshold {threshold}: "));
    }
}

#[test]
fn argmax_and_argmin_as_two_reductions_match_the_interpreter() {
    // The CPU's argmax/argmin (reduce::arg_by_reductions: the lane's extremum, then the
    // smallest candidate index), over every dim: rows and columns with ties (a constant run),
    // NaNs (two in one lane: the first wins), infinities, and integers; shapes that take the
    // short-column grouping (4099 rows of 3: a remainder of 3 rows), a prime row count
    // (peeled split), long rows (thread split) and a batch; one and two threads.
    use quabla_dialect::{ArgOp, ReduceOp};
    let mut rng = Rng(85);
    let shapes: [&[i64]; 5] = [&[37, 300], &[4099, 3], &[3, 40009], &[2, 4099, 3], &[8209]];
    for shape in shapes {
        for d in [DType::F32, DType::F64, DType::I32] {
            let ty = TensorType::new(d, shape);
            let mut f = Func::new("main", std::slice::from_ref(&ty));
            let x = f.params[0];
            let mut outs = vec![];
            for op in [ArgOp::Max, ArgOp::Min] {
                for dim in 0..shape.len() as i64 {
                    outs.push(f.push1(OpKind::Reduce(ReduceOp::ArgReduce { op, dim, index: DType::I64 }), &[x], None).unwrap());
                }
            }
            f.outputs = outs;
            let m = Module { funcs: vec![f] };
            let mut b = rng.buffer(&ty, -5.0, 5.0);
            let n = ty.num_elements();
            let mut v = b.to_f64_vec();
            for x in &mut v[n / 3..n / 3 + 300] {
                *x = 1.5;
            }
            if d.is_float() {
                for (i, x) in [(907, f64::NAN), (909, f64::NAN), (3002, f64::INFINITY), (3304, f64::NEG_INFINITY), (n - 2, f64::NAN)] {
                    v[i] = x;
                }
            }
            b = quabla_runtime::Buffer::from_f64s(ty.clone(), &v).unwrap();
            equals_interpreter_on_one_and_two_threads(&m, &[b], Tol::Exact, |_| 1.0, &format!("{d} {shape:?}: "));
        }
    }
}

#[test]
fn outputs_that_reshape_a_value_are_written_in_place() {
    // Outputs reshaping another value (np.tile's broadcast, a flattened elementwise result, a
    // parameter) are that value written into the output buffer viewed in its shape: the
    // broadcast writes the output itself (no copy after it), and every output equals the
    // interpreter's on one and two threads.
    use quabla_dialect::{BinaryOp, LayoutOp};
    let mut rng = Rng(86);
    let t = TensorType::new(DType::F32, [256i64, 256]);
    let flat = TensorType::new(DType::F32, [1i64 << 16]);
    let mut f = Func::new("main", &[t.clone(), flat.clone()]);
    let (x, y) = (f.params[0], f.params[1]);
    let x4 = f.push1(OpKind::Layout(LayoutOp::Reshape { shape: vec![1, 256, 1, 256] }), &[x], None).unwrap();
    let b = f.push1(OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![0, 1, 2, 3], shape: vec![4, 256, 4, 256] }), &[x4], None).unwrap();
    let tiled = f.push1(OpKind::Layout(LayoutOp::Reshape { shape: vec![1024, 1024] }), &[b], None).unwrap();
    let s = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add }), &[y, y], None).unwrap();
    let s2 = f.push1(OpKind::Layout(LayoutOp::Reshape { shape: vec![256, 256] }), &[s], None).unwrap();
    let y2 = f.push1(OpKind::Layout(LayoutOp::Reshape { shape: vec![64, 1024] }), &[y], None).unwrap();
    f.outputs = vec![tiled, s2, y2];
    let m = Module { funcs: vec![f] };
    let llvm = executor().lower_to_llvm(&m, &with_threads(1)).unwrap();
    // Two copies at most: the parameter into its output (y2), none for the broadcast or the sum.
    assert!(llvm.matches("llvm.intr.memcpy").count() <= 1, "copies:\n{llvm}");
    let inputs = [rng.buffer(&t, -1.0, 1.0), rng.buffer(&flat, -1.0, 1.0)];
    equals_interpreter_on_one_and_two_threads(&m, &inputs, Tol::Exact, |_| 1.0, "reshaped outputs on ");
}

#[test]
fn outputs_with_unit_dims_are_written_in_place() {
    // Outputs whose value has a unit dim (`x[:, None, :] * y`; np.tile by (4, 1), whose
    // broadcast is [4, n, 1, n] reshaped): folding the unit dims puts a reshape between the
    // generic and the output, so empty-tensor elimination runs before the fold too, and the
    // generic writes the output buffer through the reshapes (no buffer of its own, no copy),
    // a loop of independent iterations (quabla_runtime's parallel_accesses through the
    // output's reshaped view). Equal to the interpreter on one and two threads.
    use quabla_dialect::{BinaryOp, LayoutOp};
    let mut rng = Rng(88);
    let (t, u) = (TensorType::new(DType::F32, [256i64, 256]), TensorType::new(DType::F32, [256i64, 1, 256]));
    let mut f = Func::new("main", &[t.clone(), u.clone()]);
    let (x, y) = (f.params[0], f.params[1]);
    let x4 = f.push1(OpKind::Layout(LayoutOp::Reshape { shape: vec![1, 256, 1, 256] }), &[x], None).unwrap();
    let b = f.push1(OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![0, 1, 2, 3], shape: vec![4, 256, 1, 256] }), &[x4], None).unwrap();
    let tiled = f.push1(OpKind::Layout(LayoutOp::Reshape { shape: vec![1 << 18] }), &[b], None).unwrap();
    let x3 = f.push1(OpKind::Layout(LayoutOp::Reshape { shape: vec![256, 1, 256] }), &[x], None).unwrap();
    let p = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), &[x3, y], None).unwrap();
    f.outputs = vec![tiled, p];
    let m = Module { funcs: vec![f] };
    let llvm = executor().lower_to_llvm(&m, &with_threads(1)).unwrap();
    assert!(!llvm.contains("malloc") && !llvm.contains("memcpy") && !llvm.contains("memrefCopy"), "{llvm}");
    let tagged = executor().lower_tagged(&m, &with_threads(1)).unwrap();
    assert_eq!(tagged.matches("quabla.vec} {").count(), 2, "{tagged}");
    let inputs = [rng.buffer(&t, -1.0, 1.0), rng.buffer(&u, -1.0, 1.0)];
    equals_interpreter_on_one_and_two_threads(&m, &inputs, Tol::Exact, |_| 1.0, "outputs with unit dims on ");
}

#[test]
fn loop_carries_updated_by_one_generic_stay_in_place_on_two_threads() {
    // A counted loop whose three [512, 512] carries are updated by one fused elementwise
    // generic (z <- z^2 + c in real and imaginary parts, and n <- n + |z|^2, which reads both
    // new parts, so that fusion puts the three into one generic): flattened for the threads, the generic
    // writes the carries it reads (empty-tensor elimination), read through its outputs'
    // block arguments (quabla_runtime's parallel_accesses::read_outputs_in_place), so
    // bufferization copies neither carry inside the loop: the inits into fresh buffers and
    // the result into the output only (each carry was copied out and back per iteration).
    use quabla_dialect::{CmpDir, ConstantOp, ControlOp, Literal, Value};
    let mut rng = Rng(91);
    let t = TensorType::new(DType::F32, [512i64, 512]);
    let it = TensorType::new(DType::I64, Vec::<i64>::new());
    let mut f = Func::new("main", &[t.clone(), t.clone()]);
    let (cr, ci) = (f.params[0], f.params[1]);
    let int = |f: &mut Func, body: Option<&mut quabla_dialect::Body>, v: i64| {
        let k = OpKind::Constant(ConstantOp::Constant { value: Literal::from_i64s(it.clone(), &[v]) });
        match body {
            Some(b) => f.push_into(b, k, &[], vec![], None).unwrap()[0],
            None => f.push1(k, &[], None).unwrap(),
        }
    };
    let zero = int(&mut f, None, 0);
    let carries = [it.clone(), t.clone(), t.clone(), t.clone(), t.clone(), t.clone()];
    let mut cond = f.new_body(&carries);
    let ten = int(&mut f, Some(&mut cond), 10);
    let k = cond.params[0];
    let c = f.push_into(&mut cond, OpKind::Elementwise(ElementwiseOp::Compare { direction: CmpDir::Lt }), &[k, ten], vec![], None).unwrap()[0];
    cond.outputs = vec![c];
    let mut body = f.new_body(&carries);
    let (i, zr, zi, cr1, ci1, n) = (body.params[0], body.params[1], body.params[2], body.params[3], body.params[4], body.params[5]);
    let one = int(&mut f, Some(&mut body), 1);
    let bin = |f: &mut Func, body: &mut quabla_dialect::Body, op: BinaryOp, x: Value, y: Value| f.push_into(body, OpKind::Elementwise(ElementwiseOp::Binary { op }), &[x, y], vec![], None).unwrap()[0];
    let i2 = bin(&mut f, &mut body, BinaryOp::Add, i, one);
    let rr = bin(&mut f, &mut body, BinaryOp::Mul, zr, zr);
    let ii = bin(&mut f, &mut body, BinaryOp::Mul, zi, zi);
    let d = bin(&mut f, &mut body, BinaryOp::Sub, rr, ii);
    let zr2 = bin(&mut f, &mut body, BinaryOp::Add, d, cr1);
    let ri = bin(&mut f, &mut body, BinaryOp::Mul, zr, zi);
    let ri2 = bin(&mut f, &mut body, BinaryOp::Add, ri, ri);
    let zi2 = bin(&mut f, &mut body, BinaryOp::Add, ri2, ci1);
    let r2 = bin(&mut f, &mut body, BinaryOp::Mul, zr2, zr2);
    let i2s = bin(&mut f, &mut body, BinaryOp::Mul, zi2, zi2);
    let m2 = bin(&mut f, &mut body, BinaryOp::Add, r2, i2s);
    let n2 = bin(&mut f, &mut body, BinaryOp::Add, n, m2);
    body.outputs = vec![i2, zr2, zi2, cr1, ci1, n2];
    let res = f.push_with_regions(OpKind::Control(ControlOp::While {}), &[zero, cr, ci, cr, ci, cr], vec![cond, body], None).unwrap();
    f.outputs = vec![res[1], res[2], res[5]];
    let m = Module { funcs: vec![f] };
    m.verify().unwrap();
    let llvm = executor().lower_to_llvm(&m, &with_threads(2)).unwrap();
    assert!(llvm.contains("omp.parallel"), "{llvm}");
    // The three inits into fresh buffers and (at most) the results into the outputs.
    assert!(llvm.matches("llvm.intr.memcpy").count() <= 6, "copies:\n{llvm}");
    let inputs = [rng.buffer(&t, -0.5, 0.5), rng.buffer(&t, -0.5, 0.5)];
    equals_interpreter_on_one_and_two_threads(&m, &inputs, Tol::Exact, |_| 1.0, "in-place carries on ");
}

#[test]
fn elementwise_loops_run_block_by_block() {
    // A counted loop whose body is elementwise on its carries (Newton's iteration for the
    // square root of every element of a, 20 steps) runs in blocks of rows (row_blocks
    // loop_reads): an scf.forall over blocks, each iterating its block's carries in the
    // caches, instead of 20 passes over the arrays. Exact against the interpreter on one and
    // two threads (division, addition and a product by 0.5 are correctly rounded).
    use quabla_dialect::{CmpDir, ConstantOp, ControlOp, Literal};
    let mut rng = Rng(95);
    let t = TensorType::new(DType::F32, [1i64 << 18]);
    let it = TensorType::new(DType::I32, Vec::<i64>::new());
    let mut f = Func::new("main", &[t.clone()]);
    let a = f.params[0];
    let int = |v: i64| OpKind::Constant(ConstantOp::Constant { value: Literal::from_i64s(it.clone(), &[v]) });
    let zero = f.push1(int(0), &[], None).unwrap();
    let carries = [it.clone(), t.clone(), t.clone()];
    let mut cond = f.new_body(&carries);
    let n = f.push_into(&mut cond, int(20), &[], vec![], None).unwrap()[0];
    let k = cond.params[0];
    let c = f.push_into(&mut cond, OpKind::Elementwise(ElementwiseOp::Compare { direction: CmpDir::Lt }), &[k, n], vec![], None).unwrap()[0];
    cond.outputs = vec![c];
    let mut body = f.new_body(&carries);
    let (i, x, a1) = (body.params[0], body.params[1], body.params[2]);
    let one = f.push_into(&mut body, int(1), &[], vec![], None).unwrap()[0];
    let bin = |f: &mut Func, body: &mut quabla_dialect::Body, op: BinaryOp, x: quabla_dialect::Value, y: quabla_dialect::Value| f.push_into(body, OpKind::Elementwise(ElementwiseOp::Binary { op }), &[x, y], vec![], None).unwrap()[0];
    let i2 = bin(&mut f, &mut body, BinaryOp::Add, i, one);
    let q = bin(&mut f, &mut body, BinaryOp::Div, a1, x);
    let s = bin(&mut f, &mut body, BinaryOp::Add, x, q);
    let half = f.push_into(&mut body, OpKind::Constant(ConstantOp::Constant { value: Literal::splat(t.clone(), 0.5) }), &[], vec![], None).unwrap()[0];
    let x2 = bin(&mut f, &mut body, BinaryOp::Mul, s, half);
    body.outputs = vec![i2, x2, a1];
    let res = f.push_with_regions(OpKind::Control(ControlOp::While {}), &[zero, a, a], vec![cond, body], None).unwrap();
    f.outputs = vec![res[1]];
    let m = Module { funcs: vec![f] };
    m.verify().unwrap();
    let tagged = executor().lower_tagged(&m, &with_threads(2)).unwrap();
    let blocks = tagged.find("scf.forall").map(|p| &tagged[p..]).unwrap_or_else(|| panic!("no block loop:\n{tagged}"));
    assert!(blocks.contains("scf.for") && blocks.contains("quabla.blocks"), "{tagged}");
    let inputs = [rng.buffer(&t, 1.0, 4.0)];
    equals_interpreter_on_one_and_two_threads(&m, &inputs, Tol::Exact, |_| 1.0, "elementwise loop in blocks on ");
}

#[test]
fn row_block_outputs_are_vectorised_without_overlap_checks() {
    // `sin(x) + x.sum(1, keepdims=True)` over 4096 x 256 runs in blocks of rows (an
    // scf.forall whose blocks write slices of its shared output): the elementwise generic
    // writing its block of the output is a loop of independent iterations (quabla.vec, the
    // slice of the shared output traced to the fresh output, runtime parallel_accesses
    // buffer_root); it had runtime overlap checks that LLVM gave up on for sin's body (a
    // scalar loop, 4.5 ms against 0.94). Equal to the interpreter on one and two threads.
    use quabla_dialect::{LayoutOp, ReduceOp, Reducer};
    let mut rng = Rng(93);
    let t = TensorType::new(DType::F32, [4096i64, 256]);
    let mut f = Func::new("main", &[t.clone()]);
    let x = f.params[0];
    let s = f.push1(OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Sum, dims: vec![1] }), &[x], None).unwrap();
    let b = f.push1(OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![0], shape: vec![4096, 256] }), &[s], None).unwrap();
    let sn = f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Sin }), &[x], None).unwrap();
    let y = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add }), &[sn, b], None).unwrap();
    f.outputs = vec![y];
    let m = Module { funcs: vec![f] };
    let tagged = executor().lower_tagged(&m, &with_threads(2)).unwrap();
    assert!(tagged.contains("scf.forall"), "{tagged}");
    let sin_generic = tagged.split("linalg.generic").find(|g| g.contains("math.sin") || g.contains("roundeven")).unwrap_or_else(|| panic!("no sin generic:\n{tagged}"));
    let attrs = &sin_generic[..sin_generic.find("^bb0").unwrap_or(sin_generic.len())];
    assert!(attrs.contains("quabla.vec"), "the row block's sin generic is not tagged:\n{tagged}");
    let inputs = [rng.buffer(&t, -3.0, 3.0)];
    equals_interpreter_on_one_and_two_threads(&m, &inputs, Tol::Rel(1e-5), |_| 256.0, "row blocks on ");
}

#[test]
fn scatters_into_outputs_update_the_output_buffer() {
    // x.at[positions].add(v) on a flattened 256x256 operand: the scatter's result is an
    // output viewed through a reshape (the form qb traces for x.at[rows]), and in a second
    // program an output used again by a later op. The operand is copied once, into the
    // output, and the loop updates it there (it was copied into a new buffer, then that
    // buffer into the output). Duplicate positions and out-of-range ones (skipped) included;
    // equal to the interpreter on one and two threads.
    use quabla_dialect::{BinaryOp, Combiner, LayoutOp, ScatterOp};
    let mut rng = Rng(87);
    let t = TensorType::new(DType::F32, [256i64, 256]);
    let (it, ut) = (TensorType::new(DType::I64, [4096i64, 1]), TensorType::new(DType::F32, [4096i64]));
    let add = OpKind::Scatter(ScatterOp::Scatter { op: Combiner::Add, update_window_dims: vec![], inserted_window_dims: vec![0], scatter_dims_to_operand_dims: vec![0], index_vector_dim: 1 });
    let program = |second_use: bool| {
        let mut f = Func::new("main", &[t.clone(), it.clone(), ut.clone()]);
        let (x, i, v) = (f.params[0], f.params[1], f.params[2]);
        let flat = f.push1(OpKind::Layout(LayoutOp::Reshape { shape: vec![65536] }), &[x], None).unwrap();
        let s = f.push1(add.clone(), &[flat, i, v], None).unwrap();
        f.outputs = if second_use {
            let twice = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add }), &[s, s], None).unwrap();
            vec![s, twice]
        } else {
            vec![f.push1(OpKind::Layout(LayoutOp::Reshape { shape: vec![256, 256] }), &[s], None).unwrap()]
        };
        Module { funcs: vec![f] }
    };
    let inputs = [rng.buffer(&t, -1.0, 1.0), rng.buffer(&it, -100.0, 65636.0), rng.buffer(&ut, -1.0, 1.0)];
    for second_use in [false, true] {
        let m = program(second_use);
        let llvm = executor().lower_to_llvm(&m, &with_threads(1)).unwrap();
        assert!(llvm.matches("llvm.intr.memcpy").count() <= 1, "copies:\n{llvm}");
        equals_interpreter_on_one_and_two_threads(&m, &inputs, Tol::Exact, |_| 1.0, "scatter into its output on ");
    }
}

#[test]
fn large_pads_and_operand_copies_split_between_threads() {
    // pad fills its padding and copies the operand into its (strided) slice (the copy was one
    // `memrefCopy` on one thread), a loop a large pad splits between the threads; x.at[rows].set copies its operand into the
    // output the same way (it was bufferization's `memcpy`), and so does a stack of
    // parameters into its large result. Edge and interior padding, a
    // small pad (one thread), f32 and i32: the interpreter's results to the bit on one and two
    // threads.
    use quabla_dialect::{Combiner, ScatterOp, SlicingOp};
    let mut rng = Rng(131);
    let cases: [(DType, &[i64], [i64; 2], [i64; 2], [i64; 2], bool); 4] = [
        (DType::F32, &[1024, 512], [3, 5], [2, 7], [0, 0], true),
        (DType::F32, &[600, 300], [1, 0], [0, 4], [1, 0], true),
        (DType::I32, &[512, 513], [0, 9], [8, 0], [0, 1], true),
        (DType::F32, &[6, 7], [1, 1], [1, 1], [0, 1], false),
    ];
    for (d, shape, lo, hi, interior, split) in cases {
        let (xt, pt) = (TensorType::new(d, shape.to_vec()), TensorType::new(d, Vec::<i64>::new()));
        let pad = OpKind::Slicing(SlicingOp::Pad { edge_padding_low: lo.to_vec(), edge_padding_high: hi.to_vec(), interior_padding: interior.to_vec() });
        let m = one_op_module(pad.clone(), &[xt.clone(), pt.clone()]);
        let tagged = executor().lower_tagged(&m, &with_threads(2)).unwrap();
        assert_eq!(tagged.contains("= linalg.copy {quabla.par"), split, "{shape:?} {interior:?}:\n{tagged}");
        // The result is the output: only its padding is filled, in the output's buffer.
        let full = m.funcs[0].ty(m.funcs[0].outputs[0]).to_string();
        assert!(!tagged.lines().any(|l| l.contains("linalg.fill") && l.ends_with(&format!("-> {full}"))), "{shape:?} {interior:?}:\n{tagged}");
        let inputs = [rng.buffer(&xt, -100.0, 100.0), rng.buffer(&pt, -5.0, 5.0)];
        equals_interpreter_on_one_and_two_threads(&m, &inputs, Tol::Exact, |_| 1.0, &format!("pad of {shape:?} by {lo:?} {hi:?} {interior:?}, "));
        // Read by another op, it is a fill of the whole result and the copy.
        let mut f = Func::new("main", &[xt.clone(), pt.clone()]);
        let p = f.push1(pad.clone(), &f.params.clone(), None).unwrap();
        f.outputs = vec![f.push1(OpKind::Reduce(quabla_dialect::ReduceOp::Reduce { op: quabla_dialect::Reducer::Max, dims: vec![1] }), &[p], None).unwrap()];
        equals_interpreter_on_one_and_two_threads(&Module { funcs: vec![f] }, &inputs, Tol::Exact, |_| 1.0, &format!("max of the pad of {shape:?} by {lo:?} {hi:?} {interior:?}, "));
    }
    // Parameters stacked along a new first dim (reshapes of parameters, pairwise
    // concatenations as qb.stack traces them): copies, each split.
    let pt = TensorType::new(DType::F32, [256i64, 256]);
    let mut f = Func::new("main", &vec![pt.clone(); 8]);
    let rows: Vec<quabla_dialect::Value> = f.params.clone().into_iter().map(|p| f.push1(OpKind::Layout(quabla_dialect::LayoutOp::Reshape { shape: vec![1, 256, 256] }), &[p], None).unwrap()).collect();
    let mut acc = rows[0];
    for &r in &rows[1..] {
        acc = f.push1(OpKind::Slicing(SlicingOp::Concatenate { dim: 0 }), &[acc, r], None).unwrap();
    }
    f.outputs = vec![acc];
    let m = Module { funcs: vec![f] };
    let tagged = executor().lower_tagged(&m, &with_threads(2)).unwrap();
    assert_eq!(tagged.matches("= linalg.copy {quabla.par").count(), 8, "{tagged}");
    let inputs: Vec<Buffer> = (0..8).map(|_| rng.buffer(&pt, -1.0, 1.0)).collect();
    equals_interpreter_on_one_and_two_threads(&m, &inputs, Tol::Exact, |_| 1.0, "stack of 8, ");
    // A splat operand (a gradient's one-hot column) fills its slice.
    let mut f = Func::new("main", &[TensorType::new(DType::F32, Vec::<i64>::new())]);
    let c = f.push1(OpKind::Constant(quabla_dialect::ConstantOp::Constant { value: quabla_dialect::Literal::splat(TensorType::new(DType::F32, [65536i64, 1]), -1.0) }), &[], None).unwrap();
    let pv = f.params[0];
    f.outputs = vec![f.push1(OpKind::Slicing(SlicingOp::Pad { edge_padding_low: vec![0, 2], edge_padding_high: vec![0, 7], interior_padding: vec![0, 0] }), &[c, pv], None).unwrap()];
    let m = Module { funcs: vec![f] };
    let llvm = executor().lower_to_llvm(&m, &with_threads(1)).unwrap();
    assert!(!llvm.contains("memrefCopy"), "{llvm}");
    equals_interpreter_on_one_and_two_threads(&m, &[rng.buffer(&TensorType::new(DType::F32, Vec::<i64>::new()), -5.0, 5.0)], Tol::Exact, |_| 1.0, "pad of a splat, ");
    let (xt, it, ut) = (TensorType::new(DType::F32, [1024i64, 512]), TensorType::new(DType::I64, [64i64]), TensorType::new(DType::F32, [64i64, 512]));
    let m = one_op_module(OpKind::Scatter(ScatterOp::along_axis(Combiner::Set, 2, 1, 0)), &[xt.clone(), it.clone(), ut.clone()]);
    let tagged = executor().lower_tagged(&m, &with_threads(2)).unwrap();
    assert!(tagged.contains("= linalg.copy {quabla.par"), "{tagged}");
    let inputs = [rng.buffer(&xt, -1.0, 1.0), rng.buffer(&it, -10.0, 1030.0), rng.buffer(&ut, -1.0, 1.0)];
    equals_interpreter_on_one_and_two_threads(&m, &inputs, Tol::Exact, |_| 1.0, "x.at[rows].set, ");
}

#[test]
fn pads_by_constants_are_computed_by_their_elementwise_consumers() {
    // `x + pad(c)` with c a splat constant (or the broadcast of a scalar constant too large to
    // fold) and a constant padding value: the consumer's generic selects between the two
    // literals on its loop indices and no fill is written. Edge padding on either side and
    // interior padding, rank 3, f32, f64 and i32; a pad that is also an
    // output is written as well; a padding value that is a parameter keeps the fill. To the
    // bit against the interpreter on one and two threads.
    use quabla_dialect::{BinaryOp, ConstantOp, LayoutOp, Literal, SlicingOp};
    let mut rng = Rng(139);
    type Case = (DType, &'static [i64], [i64; 3], [i64; 3], [i64; 3], bool, bool);
    let cases: [Case; 6] = [
        (DType::F32, &[65536, 1, 1], [0, 0, 0], [0, 9, 0], [0, 0, 0], false, false),
        (DType::F32, &[300, 4, 1], [0, 3, 0], [0, 0, 0], [0, 1, 0], true, false),
        (DType::F32, &[7, 5, 3], [2, 1, 0], [3, 0, 2], [1, 0, 2], false, false),
        (DType::I32, &[40, 6, 8], [2, 0, 1], [0, 2, 0], [0, 1, 0], true, false),
        (DType::F32, &[64, 2, 2], [1, 1, 1], [1, 1, 1], [0, 0, 0], false, true),
        (DType::F64, &[128, 3, 5], [0, 2, 0], [0, 2, 0], [0, 0, 0], true, false),
    ];
    for (d, shape, lo, hi, interior, broadcast, also_output) in cases {
        let out: Vec<i64> = (0..3).map(|k| lo[k] + hi[k] + shape[k] + (shape[k] - 1) * interior[k]).collect();
        let (ct, ot, st) = (TensorType::new(d, shape.to_vec()), TensorType::new(d, out.clone()), TensorType::new(d, Vec::<i64>::new()));
        let mut f = Func::new("main", &[ot.clone()]);
        let x = f.params[0];
        let konst = |f: &mut Func, t: &TensorType, v: f64| f.push1(OpKind::Constant(ConstantOp::Constant { value: Literal::splat(t.clone(), v) }), &[], None).unwrap();
        let c = if broadcast {
            let s = konst(&mut f, &st, -1.5);
            f.push1(OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![], shape: shape.to_vec() }), &[s], None).unwrap()
        } else {
            konst(&mut f, &ct, 2.5)
        };
        let pv = konst(&mut f, &st, 0.25);
        let p = f.push1(OpKind::Slicing(SlicingOp::Pad { edge_padding_low: lo.to_vec(), edge_padding_high: hi.to_vec(), interior_padding: interior.to_vec() }), &[c, pv], None).unwrap();
        let y = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add }), &[x, p], None).unwrap();
        let z = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), &[y, p], None).unwrap();
        f.outputs = if also_output { vec![z, p] } else { vec![z] };
        let m = Module { funcs: vec![f] };
        let what = format!("{d} pad of {shape:?} by {lo:?} {hi:?} {interior:?}, ");
        let tagged = executor().lower_tagged(&m, &with_threads(2)).unwrap();
        assert!(tagged.contains("linalg.index"), "{what}\n{tagged}");
        assert_eq!(tagged.contains("= linalg.fill"), also_output, "{what}\n{tagged}");
        equals_interpreter_on_one_and_two_threads(&m, &[rng.buffer(&ot, -100.0, 100.0)], Tol::Exact, |_| 1.0, &what);
    }
    // A computed operand with one element along the padded dim (the cotangent of
    // `tanh(x[:, 2])`) is read in place through a map; a computed operand padded along a long
    // dim (`2 * x[:, 1:-1]`'s) is written by its producer into the output buffer, only the
    // padding filled: no buffer of its own, no copy (and a loop of independent iterations,
    // quabla_runtime::parallel_accesses::fresh_parallel through the slices of the output).
    use quabla_dialect::UnaryOp;
    for (d, n, lo, hi, read) in [(DType::F32, 1i64, 2i64, 7i64, true), (DType::F64, 1, 0, 4, true), (DType::F32, 1022, 1, 1, false), (DType::I32, 100, 0, 3, false)] {
        let (xt, ct) = (TensorType::new(d, [300i64, n + lo + hi]), TensorType::new(d, [300i64, n]));
        let mut f = Func::new("main", &[xt.clone(), ct.clone()]);
        let (x, c) = (f.params[0], f.params[1]);
        let t = f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: if d == DType::I32 { UnaryOp::Neg } else { UnaryOp::Tanh } }), &[c], None).unwrap();
        let zero = f.push1(OpKind::Constant(ConstantOp::Constant { value: Literal::splat(TensorType::new(d, Vec::<i64>::new()), 0.0) }), &[], None).unwrap();
        let p = f.push1(OpKind::Slicing(SlicingOp::Pad { edge_padding_low: vec![0, lo], edge_padding_high: vec![0, hi], interior_padding: vec![0, 0] }), &[t, zero], None).unwrap();
        f.outputs = vec![if read { f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add }), &[x, p], None).unwrap() } else { p }];
        let m = Module { funcs: vec![f] };
        let what = format!("{d} pad of a computed [300, {n}] by {lo} {hi}, ");
        let tagged = executor().lower_tagged(&m, &with_threads(2)).unwrap();
        assert_eq!(tagged.contains("linalg.index"), read, "{what}\n{tagged}");
        // The producer writing its slice of the output is a loop of independent iterations.
        assert!(tagged.contains("quabla.vec} {"), "{what}\n{tagged}");
        let llvm = executor().lower_to_llvm(&m, &with_threads(1)).unwrap();
        assert!(!llvm.contains("memrefCopy") && !llvm.contains("malloc"), "{what}\n{llvm}");
        equals_interpreter_on_one_and_two_threads(&m, &[rng.buffer(&xt, -100.0, 100.0), rng.buffer(&ct, -2.0, 2.0)], Tol::Ulps(4), |_| 1.0, &what);
    }
    // A padding value that is a parameter: the pad is a fill and an insert, as before.
    let (ct, xt, st) = (TensorType::new(DType::F32, [64i64, 1]), TensorType::new(DType::F32, [64i64, 4]), TensorType::new(DType::F32, Vec::<i64>::new()));
    let mut f = Func::new("main", &[xt.clone(), st.clone()]);
    let (x, pv) = (f.params[0], f.params[1]);
    let c = f.push1(OpKind::Constant(ConstantOp::Constant { value: Literal::splat(ct, 3.0) }), &[], None).unwrap();
    let p = f.push1(OpKind::Slicing(SlicingOp::Pad { edge_padding_low: vec![0, 1], edge_padding_high: vec![0, 2], interior_padding: vec![0, 0] }), &[c, pv], None).unwrap();
    f.outputs = vec![f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Sub }), &[x, p], None).unwrap()];
    let m = Module { funcs: vec![f] };
    assert!(!executor().lower_tagged(&m, &with_threads(1)).unwrap().contains("linalg.index"));
    equals_interpreter_on_one_and_two_threads(&m, &[rng.buffer(&xt, -1.0, 1.0), rng.buffer(&st, -1.0, 1.0)], Tol::Exact, |_| 1.0, "pad by a parameter, ");
}

#[test]
fn pads_of_short_rows_select_or_fill_the_whole_result() {
    // A pad of the last dim of rows of at most 7 elements is one generic of selects over the
    // operand's rows (its row written out: `quabla.unroll`), the earlier dims' padding filled;
    // wider rows up to 256 bytes fill the whole result as one flat loop (a 1-D fill), then copy
    // the operand. Parameters and computed operands, a padding value that is a parameter, the
    // pad an output or read by a reduction, f32, f64 and i32: to the bit against the
    // interpreter on one and two threads.
    use quabla_dialect::{ReduceOp, Reducer, SlicingOp, UnaryOp};
    let mut rng = Rng(149);
    // (dtype, shape, low, high, computed operand, select generic (else whole fill))
    type Case = (DType, &'static [i64], &'static [i64], &'static [i64], bool, bool);
    let cases: [Case; 8] = [
        (DType::F32, &[5000, 3], &[0, 1], &[0, 0], false, true),
        (DType::F32, &[3001, 3], &[1, 1], &[1, 1], false, true),
        (DType::I32, &[4096, 2], &[0, 0], &[0, 3], false, true),
        (DType::F64, &[40, 60, 5], &[2, 0, 2], &[0, 1, 0], true, true),
        (DType::F32, &[2000, 4], &[0, 1], &[0, 2], true, true),
        (DType::F32, &[100, 33, 9], &[0, 1, 1], &[0, 1, 1], false, false),
        (DType::F32, &[3000, 16], &[0, 0], &[0, 1], true, false),
        (DType::I32, &[1000, 30], &[1, 1], &[2, 1], false, false),
    ];
    for (d, shape, lo, hi, computed, select) in cases {
        let r = shape.len();
        let (xt, pt) = (TensorType::new(d, shape.to_vec()), TensorType::new(d, Vec::<i64>::new()));
        let pad = OpKind::Slicing(SlicingOp::Pad { edge_padding_low: lo.to_vec(), edge_padding_high: hi.to_vec(), interior_padding: vec![0; r] });
        let out: Vec<i64> = (0..r).map(|k| shape[k] + lo[k] + hi[k]).collect();
        let n: i64 = out.iter().product();
        let inputs = [rng.buffer(&xt, -100.0, 100.0), rng.buffer(&pt, -5.0, 5.0)];
        for read in [false, true] {
            let mut f = Func::new("main", &[xt.clone(), pt.clone()]);
            let (x, pv) = (f.params[0], f.params[1]);
            let x = if computed { f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Neg }), &[x], None).unwrap() } else { x };
            let p = f.push1(pad.clone(), &[x, pv], None).unwrap();
            f.outputs = vec![if read { f.push1(OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Max, dims: vec![0] }), &[p], None).unwrap() } else { p }];
            let m = Module { funcs: vec![f] };
            let what = format!("{d} pad of {shape:?} by {lo:?} {hi:?} (computed {computed}, read {read}), ");
            let tagged = executor().lower_tagged(&m, &with_threads(2)).unwrap();
            if select {
                assert!(tagged.contains("arith.select") && tagged.contains(&format!("quabla.unroll = {r} : i64")), "{what}\n{tagged}");
            } else {
                assert!(tagged.lines().any(|l| l.contains("linalg.fill") && l.ends_with(&format!(" : tensor<{n}x{d}>) -> tensor<{n}x{d}>"))), "{what}\n{tagged}");
            }
            equals_interpreter_on_one_and_two_threads(&m, &inputs, Tol::Exact, |_| 1.0, &what);
        }
    }
}

#[test]
fn small_odd_blocks_are_written_out_whole() {
    // Generics over [n, a, b] with small blocks [a, b] and a middle extent LLVM would
    // vectorise with masked gathers: cheap bodies (a batched 3 x 3 product, an outer product)
    // are written out whole and left scalar (`quabla.unroll_scalar`), dear ones (an exp)
    // written out and vectorised across the blocks (`quabla.unroll_block`); middle extents of
    // 2 or 4 keep the inner loop's rule. To the interpreter on one and two threads.
    let mut rng = Rng(151);
    let n = 20000i64;
    // (dtype, block, body: 0 product, 1 outer product, 2 exp times a broadcast row, the tag)
    let cases: [(DType, [i64; 2], u8, Option<&str>); 10] = [
        (DType::F32, [3, 3], 0, Some("quabla.unroll_scalar = 3")),
        (DType::F64, [3, 3], 0, Some("quabla.unroll_scalar = 3")),
        (DType::F32, [7, 3], 0, Some("quabla.unroll_scalar = 3")),
        (DType::F32, [6, 2], 1, Some("quabla.unroll_scalar = 3")),
        (DType::I32, [5, 3], 1, Some("quabla.unroll_scalar = 3")),
        (DType::F32, [3, 3], 2, Some("quabla.unroll_block = 3")),
        (DType::F64, [2, 3], 2, Some("quabla.unroll_block = 3")),
        (DType::F32, [2, 3], 0, None),
        (DType::F32, [4, 3], 2, None),
        (DType::F32, [3, 5], 1, None),
    ];
    for (d, [a, b], body, tag) in cases {
        let what = format!("{d} body {body} over [{n}, {a}, {b}], ");
        let m = match body {
            0 => dot_module(&TensorType::new(d, [n, a, b]), &TensorType::new(d, [n, b, b]), bdims(&[0], &[2], &[1])),
            _ => {
                let (xt, yt) = if body == 1 { (TensorType::new(d, [n, a]), TensorType::new(d, [n, b])) } else { (TensorType::new(d, [n, a, b]), TensorType::new(d, [n, b])) };
                let mut f = Func::new("main", &[xt, yt]);
                let (x, y) = (f.params[0], f.params[1]);
                let bc = |f: &mut Func, v, dims: Vec<i64>| f.push1(OpKind::Layout(LayoutOp::BroadcastInDim { dims, shape: vec![n, a, b] }), &[v], None).unwrap();
                let x = if body == 1 { bc(&mut f, x, vec![0, 1]) } else { f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Exp }), &[x], None).unwrap() };
                let y = bc(&mut f, y, vec![0, 2]);
                f.outputs = vec![f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), &[x, y], None).unwrap()];
                Module { funcs: vec![f] }
            }
        };
        let tagged = executor().lower_tagged(&m, &with_threads(2)).unwrap();
        // The tags of the generics (the script names every tag).
        let generics: Vec<&str> = tagged.lines().filter(|l| l.contains("= linalg.generic")).collect();
        match tag {
            Some(t) => assert!(generics.iter().any(|l| l.contains(t)), "{what}\n{tagged}"),
            None => assert!(!generics.iter().any(|l| l.contains("quabla.unroll_")), "{what}\n{tagged}"),
        }
        let inputs: Vec<Buffer> = m.funcs[0].param_types().iter().map(|t| rng.buffer(t, -2.0, 2.0)).collect();
        equals_interpreter_on_one_and_two_threads(&m, &inputs, Tol::Ulps(4), |_| 4.0, &what);
    }
}

#[test]
fn row_local_runs_on_large_arrays_are_lowered_in_blocks_of_rows() {
    // A softmax with a scale read whole ([cols] broadcast along rows, and a [1, cols] one),
    // its row sums a second output and read again after the run by a column sum (not
    // row-local: it ends the run). On 4 MB and more of input the run is one scf.forall over
    // blocks of rows (crate row_blocks in quabla_lowering); on fewer rows, a row count with
    // no block size under the limit but itself (a prime), or short rows, op by op. f32 and
    // f64, one and two threads, against the interpreter.
    use quabla_dialect::{BinaryOp, LayoutOp, ReduceOp, Reducer};
    let mut rng = Rng(137);
    for (d, rows, cols, blocked) in [(DType::F32, 8192i64, 128i64, true), (DType::F64, 4096, 160, true), (DType::F32, 4096, 128, false), (DType::F32, 65537, 64, false), (DType::F32, 131072, 16, false)] {
        let (xt, wt, w1t) = (TensorType::new(d, [rows, cols]), TensorType::new(d, [cols]), TensorType::new(d, [1, cols]));
        let mut f = Func::new("main", &[xt.clone(), wt.clone(), w1t.clone()]);
        let (x, w, w1) = (f.params[0], f.params[1], f.params[2]);
        let bin = |f: &mut Func, op, a, b| f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op }), &[a, b], None).unwrap();
        let bc = |f: &mut Func, v, dims: Vec<i64>| f.push1(OpKind::Layout(LayoutOp::BroadcastInDim { dims, shape: vec![rows, cols] }), &[v], None).unwrap();
        let wb = bc(&mut f, w, vec![1]);
        let w1b = bc(&mut f, w1, vec![0, 1]);
        let xw = bin(&mut f, BinaryOp::Mul, x, wb);
        let xw = bin(&mut f, BinaryOp::Add, xw, w1b);
        let mx = f.push1(OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Max, dims: vec![1] }), &[xw], None).unwrap();
        let mx = f.push1(OpKind::Layout(LayoutOp::Reshape { shape: vec![rows, 1] }), &[mx], None).unwrap();
        let mxb = bc(&mut f, mx, vec![0, 1]);
        let z = bin(&mut f, BinaryOp::Sub, xw, mxb);
        let ez = f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Exp }), &[z], None).unwrap();
        let s = f.push1(OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Sum, dims: vec![1] }), &[ez], None).unwrap();
        let sr = f.push1(OpKind::Layout(LayoutOp::Reshape { shape: vec![rows, 1] }), &[s], None).unwrap();
        let sb = bc(&mut f, sr, vec![0, 1]);
        let p = bin(&mut f, BinaryOp::Div, ez, sb);
        let total = f.push1(OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Sum, dims: vec![0] }), &[s], None).unwrap();
        f.outputs = vec![p, s, total];
        let m = Module { funcs: vec![f] };
        let text = lower_for_cpu(&m, &CpuOptions { threads: 2, ..CpuOptions::default() }).unwrap().text;
        let block_rows = text.contains("} {quabla.blocks}");
        assert_eq!(block_rows, blocked, "{d} {rows}x{cols}:\n{text}");
        let inputs = [rng.buffer(&xt, -4.0, 4.0), rng.buffer(&wt, 0.5, 1.5), rng.buffer(&w1t, -1.0, 1.0)];
        let tol = if d == DType::F32 { Tol::Rel(1e-5) } else { Tol::Rel(1e-13) };
        equals_interpreter_on_one_and_two_threads(&m, &inputs, tol, |k| [1.0, (cols as f64).sqrt(), (rows as f64).sqrt()][k], &format!("{d} {rows}x{cols} in row blocks, "));
    }
    // Slices, pads and concatenations along the rows are row-local too (a gradient's one-hot
    // column): max(concat(pad(x[:, 1:]), x[:, :1])) subtracted from that concatenation.
    use quabla_dialect::SlicingOp;
    let (rows, cols) = (8192i64, 128i64);
    let (xt, st) = (TensorType::new(DType::F32, [rows, cols]), TensorType::new(DType::F32, Vec::<i64>::new()));
    let mut f = Func::new("main", &[xt.clone(), st.clone()]);
    let (x, pv) = (f.params[0], f.params[1]);
    let tail = f.push1(OpKind::Slicing(SlicingOp::Slice { start_indices: vec![0, 1], limit_indices: vec![rows, cols], strides: vec![1, 1] }), &[x], None).unwrap();
    let head = f.push1(OpKind::Slicing(SlicingOp::Slice { start_indices: vec![0, 0], limit_indices: vec![rows, 1], strides: vec![1, 1] }), &[x], None).unwrap();
    let padded = f.push1(OpKind::Slicing(SlicingOp::Pad { edge_padding_low: vec![0, 0], edge_padding_high: vec![0, 2], interior_padding: vec![0, 0] }), &[tail, pv], None).unwrap();
    let c = f.push1(OpKind::Slicing(SlicingOp::Concatenate { dim: 1 }), &[padded, head], None).unwrap();
    let mx = f.push1(OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Max, dims: vec![1] }), &[c], None).unwrap();
    let mxb = f.push1(OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![0], shape: vec![rows, cols + 2] }), &[mx], None).unwrap();
    let out = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Sub }), &[c, mxb], None).unwrap();
    f.outputs = vec![out];
    let m = Module { funcs: vec![f] };
    let text = lower_for_cpu(&m, &CpuOptions { threads: 2, ..CpuOptions::default() }).unwrap().text;
    assert!(text.contains("} {quabla.blocks}"), "{text}");
    let inputs = [rng.buffer(&xt, -4.0, 4.0), rng.buffer(&st, -5.0, 5.0)];
    equals_interpreter_on_one_and_two_threads(&m, &inputs, Tol::Exact, |_| 1.0, "slices, pads and concatenations in row blocks, ");
}

#[test]
fn row_blocks_span_leading_dims_when_rows_along_the_first_are_too_long() {
    // A softmax over the last dim of [16, 256, 256] and [4, 8, 128, 256] f32 arrays, scaled by
    // a [256] weight (read whole) and shifted by a [1, 1, 256] (or [1, 1, 1, 256]) one: a row
    // along the first dim alone is 256 KB-1 MB, more than a block, so the rows span the first
    // two (three) dims and a block is [1, b, 256] ([1, 1, b, 256]). With the max a second
    // output. One and two threads against the interpreter.
    use quabla_dialect::{BinaryOp, LayoutOp, ReduceOp, Reducer};
    let mut rng = Rng(139);
    for shape in [vec![16i64, 256, 256], vec![4, 8, 128, 256]] {
        let r = shape.len();
        let cols = shape[r - 1];
        let lead = shape[..r - 1].to_vec();
        let ones: Vec<i64> = std::iter::repeat_n(1, r - 1).chain([cols]).collect();
        let (xt, wt, w1t) = (TensorType::new(DType::F32, shape.clone()), TensorType::new(DType::F32, [cols]), TensorType::new(DType::F32, ones));
        let mut f = Func::new("main", &[xt.clone(), wt.clone(), w1t.clone()]);
        let (x, w, w1) = (f.params[0], f.params[1], f.params[2]);
        let bin = |f: &mut Func, op, a, b| f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op }), &[a, b], None).unwrap();
        let bc = |f: &mut Func, v, dims: Vec<i64>| f.push1(OpKind::Layout(LayoutOp::BroadcastInDim { dims, shape: shape.clone() }), &[v], None).unwrap();
        let all: Vec<i64> = (0..r as i64).collect();
        let wb = bc(&mut f, w, vec![r as i64 - 1]);
        let w1b = bc(&mut f, w1, all.clone());
        let xw = bin(&mut f, BinaryOp::Mul, x, wb);
        let xw = bin(&mut f, BinaryOp::Add, xw, w1b);
        let mx = f.push1(OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Max, dims: vec![r as i64 - 1] }), &[xw], None).unwrap();
        let keep: Vec<i64> = lead.iter().copied().chain([1]).collect();
        let mxr = f.push1(OpKind::Layout(LayoutOp::Reshape { shape: keep.clone() }), &[mx], None).unwrap();
        let mxb = bc(&mut f, mxr, all.clone());
        let z = bin(&mut f, BinaryOp::Sub, xw, mxb);
        let ez = f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Exp }), &[z], None).unwrap();
        let sum = f.push1(OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Sum, dims: vec![r as i64 - 1] }), &[ez], None).unwrap();
        let sr = f.push1(OpKind::Layout(LayoutOp::Reshape { shape: keep }), &[sum], None).unwrap();
        let sb = bc(&mut f, sr, all);
        let p = bin(&mut f, BinaryOp::Div, ez, sb);
        f.outputs = vec![p, mx];
        let m = Module { funcs: vec![f] };
        let text = lower_for_cpu(&m, &CpuOptions { threads: 2, ..CpuOptions::default() }).unwrap().text;
        assert!(text.contains("} {quabla.blocks}"), "{shape:?}:\n{text}");
        let inputs = [rng.buffer(&xt, -4.0, 4.0), rng.buffer(&wt, 0.5, 1.5), rng.buffer(&w1t, -1.0, 1.0)];
        equals_interpreter_on_one_and_two_threads(&m, &inputs, Tol::Rel(1e-5), |_| 1.0, &format!("{shape:?} in row blocks over the leading dims, "));
    }
}

#[test]
fn row_block_runs_read_values_the_block_materialises() {
    // The softmax's forward ops and its gradient (a loss's cotangent) at 1024 x 1024: the
    // forward run ends at the full sum, the gradient's run reads the forward's exp, its
    // division and the sum's broadcast (copied into the run with its reshape): values the
    // rest of the block must materialise although its own consumers would fuse them.
    let text = softmax_grad_text(1024);
    let ctx = quabla_dialect::mlir::new_context();
    let module = quabla_dialect::mlir::parse_and_import(&ctx, &text).unwrap();
    let lowered = lower_for_cpu(&module, &CpuOptions { threads: 2, ..CpuOptions::default() }).unwrap().text;
    assert_eq!(lowered.matches("} {quabla.blocks}").count(), 2, "{lowered}");
    let mut rng = Rng(8);
    let ty = TensorType::new(DType::F32, [1024, 1024]);
    let inputs = [rng.buffer(&ty, -3.0, 3.0), rng.buffer(&ty, -1.0, 1.0)];
    equals_interpreter_on_one_and_two_threads(&module, &inputs, Tol::Rel(1e-4), |_| 1.0, "");
}

#[test]
fn sums_of_parameters_over_long_rows_or_many_columns_call_the_runtime() {
    // x.sum over trailing dims of rows of 1024+ elements, or over leading dims keeping 4096+
    // columns, of an f32/f64 parameter: one call of the runtime's sums (quabla_kernels::reduce)
    // into the output buffer or a fresh one (the sum used again), equal to the interpreter
    // on one and two threads (rows: lanes added pairwise, within the tolerance; columns: in
    // row order, the same bits); short rows, few columns and computed operands keep the
    // generated code.
    use quabla_dialect::{ReduceOp, Reducer};
    let mut rng = Rng(139);
    let cases: [(DType, &[i64], &[i64], bool); 8] = [
        (DType::F32, &[1024, 1024], &[1], true),
        (DType::F64, &[300, 1500], &[1], true),
        (DType::F32, &[7, 64, 40], &[1, 2], true),
        (DType::F32, &[3, 5000], &[0], true),
        (DType::F64, &[2, 33, 4100], &[0, 1], true),
        (DType::F32, &[1000, 4099], &[0], true),
        (DType::F32, &[65536, 16], &[1], false),
        (DType::F32, &[1024, 1024], &[0], false),
    ];
    for (d, shape, dims, runtime) in cases {
        let xt = TensorType::new(d, shape.to_vec());
        for used_again in [false, true] {
            let mut f = Func::new("main", &[xt.clone()]);
            let x = f.params[0];
            let s = f.push1(OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Sum, dims: dims.to_vec() }), &[x], None).unwrap();
            // Used again by a full sum (not row-local: no row-block run takes them both).
            let rank = f.ty(s).rank() as i64;
            f.outputs = if used_again { vec![f.push1(OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Sum, dims: (0..rank).collect() }), &[s], None).unwrap(), s] } else { vec![s] };
            let m = Module { funcs: vec![f] };
            let text = lower_for_cpu(&m, &CpuOptions::default()).unwrap().text;
            assert_eq!(text.contains("func.call @quabla_sum_"), runtime, "{d} {shape:?} over {dims:?}:\n{text}");
            let n: i64 = dims.iter().map(|&k| shape[k as usize]).product();
            let tol = if d == DType::F32 { Tol::Rel(1e-6) } else { Tol::Rel(1e-14) };
            let inputs = [rng.buffer(&xt, -1.0, 1.0)];
            let all = (xt.num_elements() as f64).sqrt() * 4.0;
            equals_interpreter_on_one_and_two_threads(&m, &inputs, tol, |k| if used_again && k == 0 { all } else { (n as f64).sqrt() * 4.0 }, &format!("{d} {shape:?} summed over {dims:?}, "));
        }
    }
    // Computed operands keep the generated (fused) reduction.
    let xt = TensorType::new(DType::F32, [512i64, 2048]);
    let mut f = Func::new("main", &[xt.clone()]);
    let x = f.params[0];
    let e = f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Exp }), &[x], None).unwrap();
    f.outputs = vec![f.push1(OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Sum, dims: vec![1] }), &[e], None).unwrap()];
    let text = lower_for_cpu(&Module { funcs: vec![f] }, &CpuOptions::default()).unwrap().text;
    assert!(!text.contains("quabla_sum_"), "{text}");
}

#[test]
fn tiled_matmul_inside_a_program() {
    // A matmul between elementwise work (tanh of the product, exp of an input): fusion,
    // the tiled path and the polynomial kernels together, with two results.
    let mut rng = Rng(79);
    let ty = TensorType::new(DType::F32, [64, 64]);
    let mut f = Func::new("main", &[ty.clone(), ty.clone()]);
    let (a, b) = (f.params[0], f.params[1]);
    let ea = f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Exp }), &[a], None).unwrap();
    let p = f.push1(OpKind::Dot(DotOp::DotGeneral { dims: DotDims::matmul() }), &[ea, b], None).unwrap();
    let t = f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Tanh }), &[p], None).unwrap();
    f.outputs = vec![t, p];
    let m = Module { funcs: vec![f] };
    let inputs = [rng.buffer(&ty, -1.0, 1.0), rng.buffer(&ty, -1.0, 1.0)];
    let want = interp::run_func(&m, "main", &inputs).unwrap();
    let got = executor().compile(&m, "main", &CompileOptions::default()).unwrap().run(&[&inputs[0], &inputs[1]]).unwrap();
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        if let Err(e) = compare(g, w, Tol::Rel(1e-4), 1.0) {
            panic!("output {k}: {e}");
        }
    }
}

/// The executor with `threads` threads for the compiled code.
fn with_threads(threads: usize) -> CompileOptions {
    CompileOptions { threads, ..CompileOptions::default() }
}

/// Runs `module` on `inputs` compiled for one and for two threads and checks every output
/// against the interpreter within `tol`, output k at `scale(k)`; `what` names the case.
fn equals_interpreter_on_one_and_two_threads(module: &Module, inputs: &[Buffer], tol: Tol, scale: impl Fn(usize) -> f64, what: &str) {
    let want = interp::run_func(module, "main", inputs).unwrap();
    for threads in [1, 2] {
        let got = executor().compile(module, "main", &with_threads(threads)).unwrap().run(&inputs.iter().collect::<Vec<_>>()).unwrap();
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            if let Err(e) = compare(g, w, tol, scale(k)) {
                panic!("{what}{threads} threads, output {k}: {e}");
            }
        }
    }
}

/// [`with_threads`] with every product's code generated (no runtime product calls: the tiled
/// path on any shape).
fn generated(threads: usize) -> CompileOptions {
    CompileOptions { threads, runtime_gemm: false, ..CompileOptions::default() }
}

/// The CPU lowering with every product's code generated.
fn generated_cpu() -> CpuOptions {
    CpuOptions { runtime_gemm: false, ..CpuOptions::default() }
}

#[test]
fn parallel_matmuls_match_the_interpreter_on_one_and_two_threads() {
    // Large enough for the parallel path (quabla_lowering::tiling::PAR_MATMUL_WORK): divisible,
    // ragged (padded) and several-K-block products, a batched product with the batch split
    // and one whose single batch element splits its blocks; f32 and f64.
    let mut rng = Rng(80);
    let mm = DotDims::matmul;
    let batched = || DotDims { lhs_batching_dimensions: vec![0], rhs_batching_dimensions: vec![0], lhs_contracting_dimensions: vec![2], rhs_contracting_dimensions: vec![1] };
    let cases: Vec<(Vec<i64>, Vec<i64>, DotDims)> = vec![
        (vec![256, 272], vec![272, 256], mm()),
        (vec![260, 300], vec![300, 230], mm()),
        (vec![64, 1024], vec![1024, 272], mm()),
        (vec![128, 2048], vec![2048, 96], mm()),
        // Batched with A as [b, k, m] / B as [b, n, k]: the batch split, and one batch
        // element whose blocks split.
        (vec![4, 256, 128], vec![4, 256, 136], bdims(&[0], &[1], &[1])),
        (vec![1, 256, 256], vec![1, 272, 256], bdims(&[0], &[1], &[2])),
        (vec![4, 128, 256], vec![4, 256, 136], batched()),
        (vec![300, 256], vec![230, 256], DotDims { lhs_batching_dimensions: vec![], rhs_batching_dimensions: vec![], lhs_contracting_dimensions: vec![1], rhs_contracting_dimensions: vec![1] }),
        (vec![1, 256, 256], vec![1, 256, 272], batched()),
        // Ragged N only: full panels and the peeled last panel, each its own parallel loop;
        // B as [n, k]; and N below one panel (only the peeled panel's row blocks split).
        (vec![256, 512], vec![512, 784], mm()),
        (vec![256, 512], vec![784, 512], DotDims { lhs_batching_dimensions: vec![], rhs_batching_dimensions: vec![], lhs_contracting_dimensions: vec![1], rhs_contracting_dimensions: vec![1] }),
        (vec![2048, 1024], vec![1024, 10], mm()),
        // lhs [k, m] read in place (the MLP's weight gradient x^T dz), divisible and ragged.
        (vec![256, 784], vec![256, 512], DotDims { lhs_batching_dimensions: vec![], rhs_batching_dimensions: vec![], lhs_contracting_dimensions: vec![0], rhs_contracting_dimensions: vec![0] }),
        (vec![300, 260], vec![300, 230], DotDims { lhs_batching_dimensions: vec![], rhs_batching_dimensions: vec![], lhs_contracting_dimensions: vec![0], rhs_contracting_dimensions: vec![0] }),
        // The micro-panel path with several K blocks, ragged M and N (A packed by threads).
        (vec![204, 1024], vec![1024, 330], mm()),
    ];
    for d in [DType::F32, DType::F64] {
        for (ls, rs, dims) in &cases {
            let (lt, rt) = (TensorType::new(d, ls.clone()), TensorType::new(d, rs.clone()));
            let m = dot_module(&lt, &rt, dims.clone());
            let what = format!("{d} {ls:?} x {rs:?}");
            let cm = lower_for_cpu(&m, &CpuOptions { threads: 2, ..generated_cpu() }).unwrap();
            assert!(cm.parallel && cm.text.contains("scf.forall"), "{what}: parallel path chosen?");
            assert!(!lower_for_cpu(&m, &generated_cpu()).unwrap().parallel, "{what}: one thread is serial");
            let inputs = [rng.buffer(&lt, -1.0, 1.0), rng.buffer(&rt, -1.0, 1.0)];
            let want = &interp::run_func(&m, "main", &inputs).unwrap()[0];
            let k: i64 = dims.lhs_contracting_dimensions.iter().map(|&c| ls[c as usize]).product();
            let tol = if d == DType::F32 { Tol::Rel(1e-6 * k as f64) } else { Tol::Rel(1e-14 * k as f64) };
            let mut outs = vec![];
            for threads in [1, 2] {
                let got = executor().compile(&m, "main", &generated(threads)).unwrap().run(&[&inputs[0], &inputs[1]]).unwrap().remove(0);
                if let Err(e) = compare(&got, want, tol, 1.0) {
                    panic!("{what}, {threads} threads: JIT vs interpreter: {e}");
                }
                outs.push(got);
            }
            // The blocks are the same on any thread count: the results are identical.
            assert!(outs[0].bytes() == outs[1].bytes(), "{what}: one and two threads differ");
        }
    }
}

#[test]
fn small_products_read_k_in_groups_and_match_the_interpreter_to_the_bit() {
    // Products on the loop path read K in groups (quabla_lowering::linalg::dot::k_group): a
    // whole K of up to 16 (no K loop), else a divisor from 4 to 16 per step, else a whole K
    // of up to 32 (dot::K_WHOLE_MAX); a longer K without a divisor keeps the K loop. The sums
    // run over K in order from zero either way: the
    // interpreter's bits, on one and two threads (f32, f64, i32).
    let mut rng = Rng(97);
    let mm = DotDims::matmul;
    let batched = || bdims(&[0], &[2], &[1]);
    // (lhs, rhs, dims, K per step: 0 for the K loop)
    let cases: Vec<(Vec<i64>, Vec<i64>, DotDims, i64)> = vec![
        (vec![256, 8, 8], vec![256, 8, 8], batched(), 8),
        (vec![16, 8], vec![8, 100], mm(), 8),
        (vec![7, 2], vec![2, 5], mm(), 2),
        (vec![32, 4, 64], vec![32, 64, 4], batched(), 16),
        (vec![3, 1000], vec![1000, 3], mm(), 10),
        (vec![5, 17], vec![17, 7], mm(), 17),
        (vec![2, 31, 31], vec![2, 31, 31], batched(), 31),
        (vec![5, 37], vec![37, 7], mm(), 0),
    ];
    for d in [DType::F32, DType::F64, DType::I32] {
        for (ls, rs, dims, u) in &cases {
            let (lt, rt) = (TensorType::new(d, ls.clone()), TensorType::new(d, rs.clone()));
            let m = dot_module(&lt, &rt, dims.clone());
            let what = format!("{d} {ls:?} x {rs:?}");
            let text = lower_for_cpu(&m, &CpuOptions { threads: 2, ..CpuOptions::default() }).unwrap().text;
            let k = ls[ls.len() - 1];
            let shape_ok = match *u {
                0 => text.contains("\"reduction\"") && !text.contains(" * "),
                u if u == k => !text.contains("\"reduction\"") && text.contains(&format!(", {})>", k - 1)),
                u => text.contains(&format!(" * {u} + {}", u - 1)),
            };
            assert!(shape_ok, "{what}: {u} elements of K a step:\n{text}");
            let inputs = [rng.buffer(&lt, -4.0, 4.0), rng.buffer(&rt, -4.0, 4.0)];
            equals_interpreter_on_one_and_two_threads(&m, &inputs, Tol::Exact, |_| 1.0, &what);
        }
    }
}

#[test]
fn products_without_a_sum_are_one_multiply_and_match_the_interpreter() {
    // A contracted extent of 1 (unit contracted dims, or none: per-batch outer products)
    // lowers to one generic computing l * r over the result's dims (dot::unit_k_product);
    // an operand computed by a dear elementwise op (tanh) is kept apart, a generic with a unit
    // reduction loop (elementwise::kept_apart: upstream fusion does not recompute it per
    // element of the result). Any dim order.
    let mut rng = Rng(131);
    let dd = |lb: &[i64], rb: &[i64], lc: &[i64], rc: &[i64]| DotDims { lhs_batching_dimensions: lb.to_vec(), rhs_batching_dimensions: rb.to_vec(), lhs_contracting_dimensions: lc.to_vec(), rhs_contracting_dimensions: rc.to_vec() };
    // (lhs, rhs, dims, tanh of the lhs first)
    let cases: Vec<(Vec<i64>, Vec<i64>, DotDims, bool)> = vec![
        (vec![128, 1, 32], vec![128, 1, 64], bdims(&[0], &[1], &[1]), false),
        (vec![128, 1, 32], vec![128, 1, 64], bdims(&[0], &[1], &[1]), true),
        (vec![5, 3], vec![4], dd(&[], &[], &[], &[]), false),
        (vec![1, 6, 1], vec![1, 1, 7], dd(&[], &[], &[0, 2], &[0, 1]), true),
        (vec![6, 4, 1], vec![1, 4, 5], dd(&[1], &[1], &[2], &[0]), false),
        (vec![6, 4, 1], vec![1, 4, 5], dd(&[1], &[1], &[2], &[0]), true),
    ];
    for d in [DType::F32, DType::F64, DType::I32] {
        for (ls, rs, dims, tanh) in &cases {
            if *tanh && d == DType::I32 {
                continue;
            }
            let (lt, rt) = (TensorType::new(d, ls.clone()), TensorType::new(d, rs.clone()));
            let mut f = Func::new("main", &[lt.clone(), rt.clone()]);
            let (mut a, b) = (f.params[0], f.params[1]);
            if *tanh {
                a = f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Tanh }), &[a], None).unwrap();
            }
            f.outputs = vec![f.push1(OpKind::Dot(DotOp::DotGeneral { dims: dims.clone() }), &[a, b], None).unwrap()];
            let m = Module { funcs: vec![f] };
            let what = format!("{d} {ls:?} x {rs:?} {dims:?} tanh {tanh}: ");
            let text = lower_for_cpu(&m, &CpuOptions::default()).unwrap().text;
            assert!(!text.contains("matmul") && text.contains("arith.mul"), "{what}one multiply:\n{text}");
            assert_eq!(text.contains("\"reduction\""), *tanh, "{what}a tanh kept apart:\n{text}");
            let inputs = [rng.buffer(&lt, -4.0, 4.0), rng.buffer(&rt, -4.0, 4.0)];
            // tanh is a polynomial kernel on the CPU (5 ulps), libm's in the interpreter.
            let tol = if *tanh { Tol::Ulps(12) } else { Tol::Exact };
            equals_interpreter_on_one_and_two_threads(&m, &inputs, tol, |_| 1.0, &what);
        }
    }
}

#[test]
fn transposed_matrix_vector_products_read_the_matrix_in_place_and_match_the_interpreter() {
    // `x.T @ g` (the matrix laid out [batch, contract, free], one column) on the loop path is
    // one generic over (batch, K groups, rows) reading the matrix in place (dot::km_matvec):
    // no transposed copy, no named matmul. K whole (at most 16), in groups, and prime (groups
    // of one); batched; a vector laid out [1, k]; several free dims. A vector computed by an
    // elementwise op is kept apart (its own generic with a unit reduction loop), not
    // recomputed per row. Sums in K order: the interpreter's bits.
    let mut rng = Rng(167);
    let dd = |lb: &[i64], rb: &[i64], lc: &[i64], rc: &[i64]| DotDims { lhs_batching_dimensions: lb.to_vec(), rhs_batching_dimensions: rb.to_vec(), lhs_contracting_dimensions: lc.to_vec(), rhs_contracting_dimensions: rc.to_vec() };
    // (lhs, rhs, dims, K whole)
    let cases: Vec<(Vec<i64>, Vec<i64>, DotDims, bool)> = vec![
        (vec![1000, 10], vec![1000], dd(&[], &[], &[0], &[0]), false),
        (vec![12, 7], vec![12, 1], dd(&[], &[], &[0], &[0]), true),
        (vec![1009, 5], vec![1009], dd(&[], &[], &[0], &[0]), false),
        (vec![3, 40, 6], vec![3, 40], dd(&[0], &[0], &[1], &[1]), false),
        (vec![20, 6], vec![1, 20], dd(&[], &[], &[0], &[1]), false),
        (vec![30, 2, 3], vec![30], dd(&[], &[], &[0], &[0]), false),
        // The rows split between two threads.
        (vec![4096, 256], vec![4096], dd(&[], &[], &[0], &[0]), false),
    ];
    for d in [DType::F32, DType::F64, DType::I32] {
        for (ls, rs, dims, whole) in &cases {
            for exp in [false, true] {
                if exp && d == DType::I32 {
                    continue;
                }
                let (lt, rt) = (TensorType::new(d, ls.clone()), TensorType::new(d, rs.clone()));
                let mut f = Func::new("main", &[lt.clone(), rt.clone()]);
                let (a, mut b) = (f.params[0], f.params[1]);
                if exp {
                    b = f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Exp }), &[b], None).unwrap();
                }
                f.outputs = vec![f.push1(OpKind::Dot(DotOp::DotGeneral { dims: dims.clone() }), &[a, b], None).unwrap()];
                let m = Module { funcs: vec![f] };
                let what = format!("{d} {ls:?} x {rs:?} {dims:?} exp {exp}: ");
                let text = lower_for_cpu(&m, &CpuOptions::default()).unwrap().text;
                assert!(!text.contains("matmul"), "{what}no named product:\n{text}");
                // The product's group loop, and the kept-apart vector's unit loop.
                assert_eq!(text.matches("\"reduction\"").count(), (!whole) as usize + exp as usize, "{what}loops:\n{text}");
                if ls[0] == 4096 {
                    let two = lower_for_cpu(&m, &CpuOptions { threads: 2, ..CpuOptions::default() }).unwrap();
                    assert!(two.tag_pipeline.is_some(), "{what}not split between threads:\n{}", two.text);
                }
                let inputs = [rng.buffer(&lt, -4.0, 4.0), rng.buffer(&rt, -2.0, 2.0)];
                // exp is a polynomial kernel on the CPU, libm's in the interpreter: a few ulps
                // of each of K terms of at most 4 e^2 (the sums cancel).
                let k: i64 = dims.lhs_contracting_dimensions.iter().map(|&i| ls[i as usize]).product();
                let tol = if exp { Tol::Rel(1e-6) } else { Tol::Exact };
                equals_interpreter_on_one_and_two_threads(&m, &inputs, tol, |_| k as f64 * 30.0, &what);
            }
        }
    }
}

#[test]
fn batched_small_products_call_the_runtime_and_match_the_interpreter() {
    // `vmap(m @ v)`: a batch of products of one column, each below the tiled path's size, is
    // one runtime product call (tiling::runtime_gemm's batched row dots, the target's
    // batched_plan) where the host has the kernels (AVX-512), else the loop path; the
    // rows' sums are reassociated (a length-K dot's bounds). So is a batch of products of 17
    // to 31 columns (tiling::BATCHED_MIN_COLUMNS, the packed kernels) from
    // tiling::BATCHED_SMALL_WORK multiply-adds; a smaller batch keeps the loop path. One and
    // two threads (the batch split between them).
    use quabla_lowering::tiling;
    let mut rng = Rng(179);
    let dd = |lb: &[i64], rb: &[i64], lc: &[i64], rc: &[i64]| DotDims { lhs_batching_dimensions: lb.to_vec(), rhs_batching_dimensions: rb.to_vec(), lhs_contracting_dimensions: lc.to_vec(), rhs_contracting_dimensions: rc.to_vec() };
    for d in [DType::F32, DType::F64] {
        // (lhs, rhs, dims, n)
        for (ls, rs, dims, n) in [
            (vec![64i64, 32, 48], vec![64i64, 48], dd(&[0], &[0], &[2], &[1]), 1),
            (vec![100, 16, 64], vec![100, 64, 1], dd(&[0], &[0], &[2], &[1]), 1),
            (vec![9, 130, 70], vec![9, 70], dd(&[0], &[0], &[2], &[1]), 1),
            (vec![256, 29, 29], vec![256, 29, 29], dd(&[0], &[0], &[2], &[1]), 29),
            (vec![64, 20, 30], vec![64, 30, 25], dd(&[0], &[0], &[2], &[1]), 25),
            (vec![3, 20, 30], vec![3, 30, 17], dd(&[0], &[0], &[2], &[1]), 17),
        ] {
            let (lt, rt) = (TensorType::new(d, ls.clone()), TensorType::new(d, rs.clone()));
            let m = dot_module(&lt, &rt, dims.clone());
            let what = format!("{d} {ls:?} x {rs:?}");
            let text = lower_for_cpu(&m, &CpuOptions::default()).unwrap().text;
            let bmnk = [ls[0], ls[1], n, ls[2]];
            let runtime = tiling::runtime_gemm(d, bmnk, tiling::host_regs()) && bmnk.iter().product::<i64>() >= tiling::BATCHED_SMALL_WORK;
            assert_eq!(text.contains("func.call @quabla_gemm_"), runtime, "{what}:\n{text}");
            let inputs = [rng.buffer(&lt, -1.0, 1.0), rng.buffer(&rt, -1.0, 1.0)];
            let tol = if d == DType::F32 { Tol::Rel(1e-6 * ls[2] as f64) } else { Tol::Rel(1e-14 * ls[2] as f64) };
            equals_interpreter_on_one_and_two_threads(&m, &inputs, tol, |_| 1.0, &what);
        }
    }
}

#[test]
fn runtime_products_match_the_interpreter_on_one_and_two_threads() {
    // Large f32/f64 products call the runtime's packed product (runtime/src/gemm.rs,
    // quabla_kernels::gemm) on hosts with its micro-kernels: every layout the lowering hands
    // it (A as [m, k] or [k, m], B as [k, n] or [n, k], batched, grouped dims transposed
    // first), ragged M, N and K (several K blocks), accumulated into by a later use, the
    // result written into the output buffer or a fresh one. Each element is one FMA chain
    // over K in order (the interpreter rounds products and sums apart): the same bits on one
    // and two threads, but for small outputs with a long K, which two threads split along K
    // (quabla_kernels::gemm::gemm_split_k: the parts' sums added, within the tolerance).
    use quabla_dialect::{BinaryOp, ElementwiseOp};
    use quabla_lowering::tiling;
    let mut rng = Rng(81);
    let mm = DotDims::matmul;
    let tr = |l: i64, r: i64| DotDims { lhs_batching_dimensions: vec![], rhs_batching_dimensions: vec![], lhs_contracting_dimensions: vec![l], rhs_contracting_dimensions: vec![r] };
    let cases: Vec<(Vec<i64>, Vec<i64>, DotDims)> = vec![
        (vec![256, 272], vec![272, 256], mm()),
        (vec![260, 300], vec![300, 230], mm()),
        (vec![33, 4000], vec![4000, 130], mm()),
        (vec![640, 256], vec![640, 200], tr(0, 0)),
        (vec![300, 256], vec![230, 256], tr(1, 1)),
        (vec![600, 130], vec![230, 600], tr(0, 1)),
        (vec![2, 128, 512], vec![2, 512, 272], bdims(&[0], &[2], &[1])),
        (vec![2, 1024, 140], vec![2, 120, 1024], bdims(&[0], &[1], &[2])),
        (vec![2, 2, 256, 256], vec![2, 2, 256, 264], bdims(&[0, 1], &[3], &[2])),
        // Single products from 2^22 with short K on two threads (tiling::PAR_RUNTIME_GEMM_WORK),
        // columns split and rows split; long K on one.
        (vec![256, 64], vec![64, 288], mm()),
        (vec![1000, 72], vec![72, 64], mm()),
        (vec![70, 1024], vec![1024, 64], mm()),
        // Batches split between the threads (tiling::PAR_BATCH_GEMM_WORK): 64 products of
        // 64^3, attention's q k^T ([b, q, d] x [b, k, d]); an odd batch of large products
        // (each product split instead).
        (vec![64, 64, 64], vec![64, 64, 64], bdims(&[0], &[2], &[1])),
        (vec![32, 64, 16], vec![32, 48, 16], bdims(&[0], &[2], &[2])),
        (vec![3, 200, 300], vec![3, 300, 96], bdims(&[0], &[2], &[1])),
        // Outputs of several batch or free dims, written through a [b, m, n] view of the
        // output: attention's [b, h, q, d] x [b, h, k, d] and [4, 8, 32] x [32, 64].
        (vec![2, 3, 64, 16], vec![2, 3, 48, 16], bdims(&[0, 1], &[3], &[3])),
        (vec![4, 8, 32], vec![32, 64], DotDims { lhs_batching_dimensions: vec![], rhs_batching_dimensions: vec![], lhs_contracting_dimensions: vec![2], rhs_contracting_dimensions: vec![0] }),
        // Small and mid-size single products (tiling::runtime_gemm: every product), plain and [k, m] x [n, k].
        (vec![40, 50], vec![50, 64], mm()),
        (vec![64, 40], vec![33, 64], tr(0, 1)),
        (vec![100, 100], vec![100, 100], mm()),
        (vec![64, 8, 100], vec![100, 8, 330], DotDims { lhs_batching_dimensions: vec![], rhs_batching_dimensions: vec![], lhs_contracting_dimensions: vec![2, 1], rhs_contracting_dimensions: vec![0, 1] }),
        // Small outputs, long K: split along K on two threads (a Gram matrix x^T x, a
        // vector-matrix product).
        (vec![3000, 100], vec![3000, 100], tr(0, 0)),
        (vec![1, 4096], vec![4096, 700], mm()),
        // Dot products and a matrix-vector product of a few rows (row dot products).
        (vec![4096], vec![4096], tr(0, 0)),
        (vec![3, 50_000], vec![50_000], tr(1, 0)),
        // A dot of long vectors: few multiply-adds but many elements read, split along K
        // (tiling::PAR_SPLIT_K_READ).
        (vec![300_000], vec![300_000], tr(0, 0)),
    ];
    for d in [DType::F32, DType::F64] {
        for (ls, rs, dims) in &cases {
            let (lt, rt) = (TensorType::new(d, ls.clone()), TensorType::new(d, rs.clone()));
            let m = dot_module(&lt, &rt, dims.clone());
            // Also: the product used again (x @ y + x @ y: not an output's buffer; both
            // products read the same operands, each through its own read).
            let mut m2 = m.clone();
            {
                let f = &mut m2.funcs[0];
                let p = f.outputs[0];
                let (x, y) = (f.params[0], f.params[1]);
                let q = f.push1(OpKind::Dot(DotOp::DotGeneral { dims: dims.clone() }), &[x, y], None).unwrap();
                let s = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add }), &[p, q], None).unwrap();
                f.outputs = vec![s, p];
            }
            let what = format!("{d} {ls:?} x {rs:?}");
            let text = lower_for_cpu(&m, &CpuOptions::default()).unwrap().text;
            if text.contains("func.call @quabla_gemm_") && lt.rank() + rt.rank() >= 5 {
                // The product writes the output itself, whatever its rank: no copy after it.
                let llvm = executor().lower_to_llvm(&m, &with_threads(1)).unwrap();
                assert!(!llvm.contains("llvm.intr.memcpy"), "{what}: a copy after the product:\n{llvm}");
            }
            let host = tiling::runtime_gemm(d, [1, 256, 256, 256], tiling::host_regs());
            assert_eq!(text.contains("func.call @quabla_gemm_"), host, "{what}: runtime product chosen where the host has kernels");
            let inputs = [rng.buffer(&lt, -1.0, 1.0), rng.buffer(&rt, -1.0, 1.0)];
            let k: i64 = dims.lhs_contracting_dimensions.iter().map(|&c| ls[c as usize]).product();
            let tol = if d == DType::F32 { Tol::Rel(1e-6 * k as f64) } else { Tol::Rel(1e-14 * k as f64) };
            for module in [&m, &m2] {
                let want = interp::run_func(module, "main", &inputs).unwrap();
                let mut outs = vec![];
                for threads in [1, 2] {
                    let got = executor().compile(module, "main", &with_threads(threads)).unwrap().run(&[&inputs[0], &inputs[1]]).unwrap();
                    for (g, w) in got.iter().zip(&want) {
                        if let Err(e) = compare(g, w, tol, 1.0) {
                            panic!("{what}, {threads} threads ({} outputs): runtime product vs interpreter: {e}", want.len());
                        }
                    }
                    outs.push(got);
                }
                let (m, n) = (lt.num_elements() as i64 / k, rt.num_elements() as i64 / k);
                let split = dims.lhs_batching_dimensions.is_empty() && tiling::split_k_gemm(d, [1, m, n, k], 2, tiling::host_regs()) && tiling::parallel_runtime_gemm(d, [1, m, n, k], 2, tiling::host_regs()) && host;
                assert_eq!(outs[0].iter().zip(&outs[1]).all(|(a, b)| a.bytes() == b.bytes()), !split, "{what}: one and two threads give the same bits unless K is split");
            }
        }
    }
}

#[test]
fn parallel_loops_match_the_interpreter_on_one_and_two_threads() {
    // Large elementwise chains (fused with a broadcast scalar), a row reduction fused with
    // its elementwise producer, a column reduction, and a full reduction (serial), with two
    // results; each generic left after fusion is split across threads or not.
    use quabla_dialect::{BinaryOp, LayoutOp, ReduceOp, Reducer};
    let mut rng = Rng(81);
    for (rows, cols) in [(1024usize, 1024usize), (3, 400_000), (1, 1_100_001)] {
        let ty = TensorType::new(DType::F32, [rows as i64, cols as i64]);
        let mut f = Func::new("main", &[ty.clone(), ty.clone()]);
        let (a, b) = (f.params[0], f.params[1]);
        let ew = |f: &mut Func, k, xs: &[quabla_dialect::Value]| f.push1(OpKind::Elementwise(k), xs, None).unwrap();
        let two = f.push1(OpKind::Constant(quabla_dialect::ConstantOp::Constant { value: quabla_dialect::Literal::from_f64s(TensorType::new(DType::F32, [] as [i64; 0]), &[2.0]) }), &[], None).unwrap();
        let twob = f.push1(OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![], shape: ty.shape.clone() }), &[two], None).unwrap();
        let m = ew(&mut f, ElementwiseOp::Binary { op: BinaryOp::Mul }, &[a, twob]);
        let t = ew(&mut f, ElementwiseOp::Unary { op: UnaryOp::Tanh }, &[m]);
        let s = ew(&mut f, ElementwiseOp::Binary { op: BinaryOp::Add }, &[t, b]);
        let e = ew(&mut f, ElementwiseOp::Unary { op: UnaryOp::Exp }, &[b]);
        let p = ew(&mut f, ElementwiseOp::Binary { op: BinaryOp::Mul }, &[e, a]);
        let rs = f.push1(OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Sum, dims: vec![1] }), &[p], None).unwrap();
        let cs = f.push1(OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Max, dims: vec![0] }), &[s], None).unwrap();
        let all = f.push1(OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Sum, dims: vec![0, 1] }), &[a], None).unwrap();
        f.outputs = vec![s, rs, cs, all];
        let module = Module { funcs: vec![f] };
        let cm = lower_for_cpu(&module, &CpuOptions { threads: 2, ..CpuOptions::default() }).unwrap();
        assert!(cm.tag_pipeline.is_some(), "{rows}x{cols}: loops may run on two threads");
        // At least the elementwise result and the column maxima run on two threads.
        let llvm = executor().lower_to_llvm(&module, &with_threads(2)).unwrap();
        assert!(llvm.matches("omp.parallel").count() >= 2, "{rows}x{cols}: parallel loops:\n{llvm}");
        assert!(!executor().lower_to_llvm(&module, &with_threads(1)).unwrap().contains("omp."), "{rows}x{cols}: one thread is serial");
        let inputs = [rng.buffer(&ty, -1.0, 1.0), rng.buffer(&ty, -1.0, 1.0)];
        let want = interp::run_func(&module, "main", &inputs).unwrap();
        let mut runs = vec![];
        for threads in [1, 2] {
            let got = executor().compile(&module, "main", &with_threads(threads)).unwrap().run(&[&inputs[0], &inputs[1]]).unwrap();
            for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                // Sums reassociate (vectorised partial sums): relative to their length.
                let scale = if k == 1 || k == 3 { cols as f64 } else { 1.0 };
                if let Err(e) = compare(g, w, Tol::Rel(1e-5), scale) {
                    panic!("{rows}x{cols}, {threads} threads, output {k}: {e}");
                }
            }
            runs.push(got);
        }
        // Elementwise results and the column maxima do not depend on the thread count.
        for k in [0, 2] {
            assert!(runs[0][k].bytes() == runs[1][k].bytes(), "{rows}x{cols}: output {k} differs between one and two threads");
        }
    }
}

#[test]
fn split_reductions_match_the_interpreter_on_one_and_two_threads() {
    // Reductions whose kept loops leave the threads nothing (full reductions, few outputs)
    // or short runs (column reductions) reduce contiguous parts of a reduced dim on the
    // threads, then the parts (quabla_lowering::linalg::reduce::thread_split): sums,
    // products, maxima with a NaN, minima, integer sums (exact), a fused producer, the split
    // dim inner or outer; an extent without a small divisor (a prime) is split after its last
    // n % 64 elements are peeled (reduce::peeled_split); a column sum with long rows stays
    // unsplit (the threads split the columns). Equal to the interpreter on
    // one and two threads (maxima, minima and integer sums to the bit).
    use quabla_dialect::Reducer;
    let mut rng = Rng(83);
    // (shape, reduced dims, reducer, dtype, square the operand first, split on two threads)
    let cases: [(Vec<i64>, Vec<i64>, Reducer, DType, bool, bool); 12] = [
        (vec![1024, 1024], vec![0, 1], Reducer::Sum, DType::F32, false, true),
        (vec![1024, 1024], vec![0, 1], Reducer::Sum, DType::F32, true, true),
        (vec![1000, 999], vec![0, 1], Reducer::Max, DType::F32, false, true),
        (vec![3, 400_000], vec![0, 1], Reducer::Min, DType::F64, false, true),
        (vec![3, 400_000], vec![1], Reducer::Sum, DType::F32, false, false),
        (vec![600_000, 1], vec![0], Reducer::Sum, DType::I32, false, true),
        (vec![2, 300_000], vec![0, 1], Reducer::Prod, DType::F64, false, true),
        (vec![1_000_003], vec![0], Reducer::Sum, DType::F32, false, true),
        (vec![257, 4096], vec![0, 1], Reducer::Max, DType::F64, true, true),
        (vec![4096, 512], vec![0], Reducer::Sum, DType::F32, false, true),
        (vec![20_000, 3, 64], vec![0, 2], Reducer::Max, DType::F32, true, true),
        (vec![64, 100_000], vec![0], Reducer::Sum, DType::F64, false, false),
    ];
    for (shape, dims, op, d, square, splits) in cases {
        let ty = TensorType::new(d, shape.clone());
        let module = reduction_module(&ty, op, &dims, square);
        let what = format!("{op:?} over {dims:?} of {d} {shape:?}, ");
        // A split reads its operand at `part * chunk + element`.
        // (The generated code: sums of parameters over long rows or many columns call the
        // runtime's sums otherwise, checked below and in sums_of_parameters_...)
        let split = |threads| lower_for_cpu(&module, &CpuOptions { threads, ..generated_cpu() }).unwrap().text.lines().any(|l| l.contains("linalg.generic") && l.contains(" + d"));
        assert_eq!((split(2), split(1)), (splits, false), "{what}split on two threads, not on one");
        let parallel = splits || dims.len() < shape.len();
        assert_eq!(executor().lower_to_llvm(&module, &generated(2)).unwrap().contains("omp.parallel"), parallel, "{what}on two threads");
        let (lo, hi) = match (op, d) {
            (Reducer::Prod, _) => (0.999_999, 1.000_001),
            (_, DType::I32) => (-1000.0, 1000.0),
            _ => (-1.0, 1.0),
        };
        let input = if op == Reducer::Max && d == DType::F32 {
            // A NaN in a later part: the maximum is NaN, split or not.
            let mut v: Vec<f64> = (0..ty.num_elements()).map(|_| lo + (hi - lo) * rng.next_f64()).collect();
            v[700_000] = f64::NAN;
            Buffer::from_f64s(ty.clone(), &v).unwrap()
        } else {
            rng.buffer(&ty, lo, hi)
        };
        // Float sums and products reassociate: within a bound relative to the sum of the
        // magnitudes (the interpreter sums f32 serially in f32: 4e-4 off on the million
        // squares), products relative to 1. A part lost or counted twice is 1/64 or more.
        let l1: f64 = input.to_f64_vec().iter().map(|v| if square { v * v } else { v.abs() }).sum();
        let (tol, scale) = reduction_tol(op, d, l1);
        equals_interpreter_on_one_and_two_threads(&module, &[input], tol, |_| scale, &what);
    }
}

/// A module of one reduction by `op` over `dims` of a parameter of type `ty`, of its square
/// with `squared` (an elementwise producer for fusion).
fn reduction_module(ty: &TensorType, op: quabla_dialect::Reducer, dims: &[i64], squared: bool) -> Module {
    use quabla_dialect::ReduceOp;
    let mut f = Func::new("main", std::slice::from_ref(ty));
    let mut x = f.params[0];
    if squared {
        x = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), &[x, x], None).unwrap();
    }
    let r = f.push1(OpKind::Reduce(ReduceOp::Reduce { op, dims: dims.to_vec() }), &[x], None).unwrap();
    f.outputs = vec![r];
    Module { funcs: vec![f] }
}

/// `m` (a [`reduction_module`] over `ty`, of the square with `squared`) on
/// [`reduction_values`] (the last element NaN for maxima) equals the interpreter on one and
/// two threads within [`reduction_tol`].
fn reduction_matches_interpreter(rng: &mut Rng, m: &Module, ty: &TensorType, op: quabla_dialect::Reducer, squared: bool, what: &str) {
    let mut v = reduction_values(rng, ty, op, 1e-6);
    if op == quabla_dialect::Reducer::Max {
        let last = v.len() - 1;
        v[last] = f64::NAN;
    }
    let input = Buffer::from_f64s(ty.clone(), &v).unwrap();
    let l1: f64 = v.iter().map(|x| if squared { x * x } else { x.abs() }).sum();
    let (tol, scale) = reduction_tol(op, ty.dtype, l1);
    equals_interpreter_on_one_and_two_threads(m, &[input], tol, |_| scale, what);
}

/// The tolerance of a reduction `op` of dtype `d` against the interpreter, and its scale
/// (`l1`, the sum of the magnitudes reduced, for sums): float sums and products reassociate,
/// maxima, minima and integer sums are exact.
fn reduction_tol(op: quabla_dialect::Reducer, d: DType, l1: f64) -> (Tol, f64) {
    use quabla_dialect::Reducer;
    match (op, d) {
        (Reducer::Sum, DType::F32) => (Tol::Rel(1e-3), l1),
        (Reducer::Sum, DType::F64) => (Tol::Rel(1e-12), l1),
        (Reducer::Prod, _) => (Tol::Rel(1e-12), 1.0),
        _ => (Tol::Exact, 1.0),
    }
}

#[test]
fn multi_dim_reductions_collapse_adjacent_dims_and_reduce_a_short_last_dim_last() {
    // Runs of adjacent reduced (or kept) dims are collapsed into one (reduce::collapsed; not
    // in full reductions); a trailing run of reduced dims whose last dim is short is reduced
    // in two steps, the last dim kept first (reduce::SHORT_LAST_BYTES); a last dim of at most
    // 16 elements summed alone is read whole per row (reduce::short_rows). Any dims, dtypes and reducers, a NaN in the
    // maxima: equal to the interpreter on one and two threads (maxima, minima and integer
    // sums to the bit).
    use quabla_dialect::{ReduceOp, Reducer};
    let mut rng = Rng(139);
    // (shape, reduced dims, reducer, dtype, a collapse in the lowered text)
    let cases: Vec<(Vec<i64>, Vec<i64>, Reducer, DType, bool)> = vec![
        (vec![64, 32, 16], vec![1, 2], Reducer::Max, DType::F32, false),
        (vec![64, 32, 16], vec![1, 2], Reducer::Sum, DType::F64, false),
        (vec![8, 4, 5, 6], vec![0, 1], Reducer::Sum, DType::F32, true),
        (vec![8, 4, 5, 6], vec![0, 2], Reducer::Max, DType::F64, false),
        (vec![7, 3, 5], vec![1, 2], Reducer::Min, DType::I32, false),
        (vec![10, 20, 300], vec![1, 2], Reducer::Sum, DType::F32, true),
        (vec![5, 6, 7, 8], vec![2, 3], Reducer::Prod, DType::F64, true),
        (vec![4, 1, 6], vec![1, 2], Reducer::Sum, DType::F32, false),
        (vec![9, 10, 11, 12], vec![1, 2, 3], Reducer::Max, DType::F32, true),
        (vec![3, 4, 5], vec![0, 1, 2], Reducer::Max, DType::F32, false),
        // Short rows summed whole (reduce::short_rows): one operand per element of a row.
        (vec![3000, 10], vec![1], Reducer::Sum, DType::F32, false),
        (vec![2000, 7], vec![1], Reducer::Prod, DType::F64, false),
        (vec![4, 400, 16], vec![2], Reducer::Sum, DType::I32, false),
    ];
    for (shape, dims, op, d, collapse) in cases {
        let ty = TensorType::new(d, shape.clone());
        let mut f = Func::new("main", std::slice::from_ref(&ty));
        let x = f.params[0];
        let r = f.push1(OpKind::Reduce(ReduceOp::Reduce { op, dims: dims.clone() }), &[x], None).unwrap();
        f.outputs = vec![r];
        let module = Module { funcs: vec![f] };
        let what = format!("{op:?} over {dims:?} of {d} {shape:?}, ");
        let text = lower_for_cpu(&module, &CpuOptions::default()).unwrap().text;
        assert_eq!(text.contains("tensor.collapse_shape"), collapse, "{what}collapsed:\n{text}");
        let mut v = reduction_values(&mut rng, &ty, op, 1e-2);
        if op == Reducer::Max {
            v[ty.num_elements() / 3] = f64::NAN;
        }
        let input = Buffer::from_f64s(ty.clone(), &v).unwrap();
        let (tol, scale) = reduction_tol(op, d, v.iter().map(|x| x.abs()).sum());
        equals_interpreter_on_one_and_two_threads(&module, &[input], tol, |_| scale, &what);
    }
}

#[test]
fn row_reductions_loop_over_each_row_and_match_the_interpreter() {
    // A last dim reduced alone (reduce::row_path): sums and products of rows of at most 8
    // read whole, rows shorter than 16 and (read in place) up to 256 reduced by a loop over
    // each row in the body of a generic over the rows (reduce::row_loop; argmax / argmin
    // packed (key, position) pairs for 32-bit elements, two loops for 64-bit ones), the rest
    // a generic reduction. In place and behind an elementwise producer (negation), all
    // dtypes, NaN of both signs, +-0, infinities and ties in the rows: equal to the
    // interpreter on one and two threads (to the bit but for float sums).
    use quabla_dialect::{ArgOp, ReduceOp, Reducer};
    let mut rng = Rng(151);
    let special = [f64::NAN, -f64::NAN, 0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, 2.5];
    // (rows, row length, the loop expected in place, behind the producer)
    let shapes: [(i64, i64, bool, bool); 10] = [
        (20000, 10, true, true),
        (5000, 2, true, true),
        (3000, 3, true, true),
        (1500, 8, true, true),
        (700, 15, true, true),
        (40, 16, true, false),
        (3000, 17, true, false),
        (300, 64, true, false),
        (100, 256, true, false),
        (90, 257, false, false),
    ];
    let reducers = [Reducer::Sum, Reducer::Prod, Reducer::Max, Reducer::Min];
    for d in [DType::F32, DType::F64, DType::I32, DType::I64, DType::U8, DType::U32] {
        for (rows, n, in_place_loop, producer_loop) in shapes {
            for producer in [false, true] {
                let ty = TensorType::new(d, [rows, n]);
                let mut f = Func::new("main", std::slice::from_ref(&ty));
                let mut x = f.params[0];
                if producer {
                    x = f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Neg }), &[x], None).unwrap();
                }
                let mut outs = vec![];
                for op in reducers.into_iter().filter(|&op| d.is_float() || op != Reducer::Prod) {
                    outs.push(f.push1(OpKind::Reduce(ReduceOp::Reduce { op, dims: vec![1] }), &[x], None).unwrap());
                }
                for (op, index) in [(ArgOp::Max, DType::I32), (ArgOp::Min, DType::I64)] {
                    outs.push(f.push1(OpKind::Reduce(ReduceOp::ArgReduce { op, dim: 1, index }), &[x], None).unwrap());
                }
                f.outputs = outs;
                let module = Module { funcs: vec![f] };
                let what = format!("{d} [{rows}, {n}]{}: ", if producer { " behind a producer" } else { "" });
                let text = lower_for_cpu(&module, &CpuOptions::default()).unwrap().text;
                let want_loop = if producer { producer_loop } else { in_place_loop };
                // The row's loop (written out for rows of at most 3) reads the operand from above.
                assert_eq!(text.contains("tensor.extract "), want_loop, "{what}a loop over each row:\n{text}");
                let (lo, hi) = match d {
                    DType::U8 => (0.0, 255.0),
                    DType::U32 => (0.0, 4e9),
                    DType::I32 | DType::I64 => (-1000.0, 1000.0),
                    _ => (0.9, 1.1),
                };
                let mut v: Vec<f64> = (0..ty.num_elements()).map(|_| (lo + (hi - lo) * rng.next_f64()).floor()).collect();
                let row = n as usize;
                for r in 0..(rows as usize).min(40) {
                    // Ties (a constant row, or its maximum twice) and, for floats, the specials.
                    let k = r % special.len();
                    for j in 0..row {
                        v[r * row + j] = match (r % 4, d.is_float()) {
                            (0, _) => v[r * row],
                            (1, true) if j % 3 == 1 => special[k],
                            (2, true) if j % 5 == 2 => special[(k + 3) % special.len()],
                            _ => v[r * row + j],
                        };
                    }
                }
                if d.is_float() {
                    for x in v.iter_mut().skip(2).step_by(7) {
                        *x = -*x;
                    }
                }
                let input = Buffer::from_f64s(ty.clone(), &v).unwrap();
                let want = interp::run_func(&module, "main", std::slice::from_ref(&input)).unwrap();
                for threads in [1, 2] {
                    let got = executor().compile(&module, "main", &with_threads(threads)).unwrap().run(&[&input]).unwrap();
                    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                        for i in 0..w.len() {
                            let (a, b) = (g.get_f64(i), w.get_f64(i));
                            // Float sums and products: their order is unspecified.
                            let sum = d.is_float() && k < 2;
                            let ok = if b.is_nan() { a.is_nan() } else if sum { (a - b).abs() <= 1e-5 * b.abs().max(1.0) || a == b } else { a.to_bits() == b.to_bits() };
                            assert!(ok, "{what}output {k}, {threads} threads, row {i}: {a:e} vs {b:e}");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn elementwise_loops_with_identity_maps_are_flattened_and_match_the_interpreter() {
    // An elementwise generic whose operands all have the identity map is one loop (runtime
    // flat_loops, on tensors before the threads' split): LLVM vectorizes a nest's inner loop
    // only, three elements of a [rows, 3] array. Bodies of any op are flattened (exp's
    // llvm.intr.ldexp, which upstream's flatten_elementwise refused); a broadcast operand
    // keeps the nest (under a dear body its short inner loop is written out:
    // short_inner_loops_under_dear_bodies_are_unrolled_and_match_the_interpreter), and so
    // does a body reading its loop indices (an iota: each index would be a division and a
    // remainder). Two results of one fused generic are both flattened. Equal to the
    // interpreter on one and two threads.
    use quabla_dialect::{ConstantOp, LayoutOp};
    let mut rng = Rng(157);
    let ty = TensorType::new(DType::F32, [40000, 3]);
    let row = TensorType::new(DType::F32, [3]);
    // (unary op, a broadcast row added, an iota along the rows added, both results out, one loop)
    for (op, broadcast, iota, two, flat) in [
        (UnaryOp::Tanh, false, false, false, true),
        (UnaryOp::Exp, false, false, false, true),
        (UnaryOp::Sin, false, false, true, true),
        (UnaryOp::Tanh, true, false, false, false),
        (UnaryOp::Tanh, false, true, false, false),
    ] {
        let mut f = Func::new("main", &[ty.clone(), row.clone()]);
        let (x, b) = (f.params[0], f.params[1]);
        let t = f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op }), &[x], None).unwrap();
        let mut y = t;
        if broadcast {
            let bb = f.push1(OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![1], shape: vec![40000, 3] }), &[b], None).unwrap();
            y = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add }), &[y, bb], None).unwrap();
        }
        if iota {
            let i = f.push1(OpKind::Constant(ConstantOp::Iota { dim: 0, ty: ty.clone() }), &[], None).unwrap();
            y = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add }), &[y, i], None).unwrap();
        }
        if two {
            y = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), &[t, x], None).unwrap();
            f.outputs = vec![t, y];
        } else {
            f.outputs = vec![y];
        }
        let m = Module { funcs: vec![f] };
        let what = format!("{op:?} broadcast {broadcast} iota {iota} two {two}: ");
        let llvm = executor().lower_to_llvm(&m, &with_threads(1)).unwrap();
        let loops = llvm.matches("{loop_annotation = #").count();
        assert_eq!(loops == 1 || (two && loops == 2 && !llvm.contains("array<2 x i64>")), flat, "{what}{loops} marked loops:\n{llvm}");
        let inputs = [rng.buffer(&ty, -3.0, 3.0), rng.buffer(&row, -1.0, 1.0)];
        equals_interpreter_on_one_and_two_threads(&m, &inputs, Tol::Rel(1e-5), |_| 1.0, &what);
    }
}

#[test]
fn reductions_over_middle_dims_flatten_their_trailing_kept_loops() {
    // A reduction over middle dims whose trailing kept dims are several loops (upstream fusion
    // expands the lowering's collapsed operand back) has those loops made one (runtime
    // flat_loops, a partial flatten): `x.sum(1)` of [17, 33, 65, 9] ran a 9-element inner
    // loop. A computed operand too; one trailing kept dim stays as it is. Equal to the
    // interpreter on one and two threads.
    use quabla_dialect::Reducer;
    let mut rng = Rng(158);
    // (shape, reduced dims, reducer, dtype, squared first, the flat loop's extent if any)
    let cases: [(Vec<i64>, Vec<i64>, Reducer, DType, bool, Option<i64>); 4] = [
        (vec![17, 33, 65, 9], vec![1], Reducer::Sum, DType::F32, false, Some(585)),
        (vec![6, 50, 7, 5], vec![1], Reducer::Max, DType::F64, false, Some(35)),
        (vec![5, 40, 33, 7], vec![1], Reducer::Sum, DType::F32, true, Some(231)),
        (vec![8, 16, 16, 3], vec![1, 2], Reducer::Min, DType::F32, false, None),
    ];
    for (shape, dims, op, d, squared, flat) in cases {
        let ty = TensorType::new(d, shape.clone());
        let m = reduction_module(&ty, op, &dims, squared);
        let what = format!("{op:?} over {dims:?} of {d} {shape:?} (squared {squared}): ");
        let tagged = executor().lower_tagged(&m, &with_threads(1)).unwrap();
        let lead = shape[0];
        if let Some(n) = flat {
            assert!(tagged.contains(&format!("tensor<{lead}x{}x{n}x{d}>", shape[1])), "{what}flat:\n{tagged}");
        } else {
            assert!(!tagged.contains("tensor.collapse_shape"), "{what}not flat:\n{tagged}");
        }
        let v = reduction_values(&mut rng, &ty, op, 1e-2);
        let l1: f64 = v.iter().map(|x| if squared { x * x } else { x.abs() }).sum();
        let input = Buffer::from_f64s(ty.clone(), &v).unwrap();
        let (tol, scale) = reduction_tol(op, d, l1);
        equals_interpreter_on_one_and_two_threads(&m, &[input], tol, |_| scale, &what);
    }
}

#[test]
fn broadcast_trailing_operands_flatten_the_loops_they_share() {
    // `x[n, h, w] + b[h, w]`: every operand ends in loops (h, w), made one loop of h * w
    // (runtime flat_loops); `x[n, h, w] * s[n]` (s ends in no trailing run) keeps its nest.
    // Equal to the interpreter on one and two threads.
    use quabla_dialect::LayoutOp;
    let mut rng = Rng(159);
    let ty = TensorType::new(DType::F32, [4096, 64, 9]);
    for (bshape, dims, flat) in [(vec![64i64, 9], vec![1i64, 2], true), (vec![4096], vec![0], false)] {
        let bt = TensorType::new(DType::F32, bshape.clone());
        let mut f = Func::new("main", &[ty.clone(), bt.clone()]);
        let (x, b) = (f.params[0], f.params[1]);
        let bb = f.push1(OpKind::Layout(LayoutOp::BroadcastInDim { dims, shape: vec![4096, 64, 9] }), &[b], None).unwrap();
        let y = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add }), &[x, bb], None).unwrap();
        f.outputs = vec![y];
        let m = Module { funcs: vec![f] };
        let what = format!("x + b{bshape:?}: ");
        let tagged = executor().lower_tagged(&m, &with_threads(1)).unwrap();
        assert_eq!(tagged.contains("tensor<4096x576xf32>"), flat, "{what}flat:\n{tagged}");
        let inputs = [rng.buffer(&ty, -3.0, 3.0), rng.buffer(&bt, -1.0, 1.0)];
        equals_interpreter_on_one_and_two_threads(&m, &inputs, Tol::Exact, |_| 1.0, &what);
    }
}

#[test]
fn loop_states_and_contiguous_slices_are_flattened_strided_slices_are_not() {
    // An elementwise update of a loop's [rows, 5] state (written in place: not a fresh
    // output, so not `quabla.vec`) is flattened too (runtime flat_loops; a fori_loop's tanh of
    // a 10000 x 3 state ran one element at a time, 14x JAX's time), and so is one that reads
    // a contiguous slice (a scan's `xs[i]`); one reading a strided slice (`x[:, :5]` of [rows, 6]) keeps
    // its nest (collapsed, its buffer would be copied element by element). Equal to the
    // interpreter on one and two threads.
    let looped = r#"module {
  func.func @main(%s0: tensor<20000x5xf32>, %x: tensor<4x20000x5xf32>) -> (tensor<20000x5xf32>) {
    %zero = "quabla.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
    %r:2 = scf.while (%i = %zero, %s = %s0) : (tensor<i64>, tensor<20000x5xf32>) -> (tensor<i64>, tensor<20000x5xf32>) {
      %n = "quabla.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
      %lt = "quabla.compare"(%i, %n) {direction = "lt"} : (tensor<i64>, tensor<i64>) -> tensor<i1>
      %c = tensor.extract %lt[] : tensor<i1>
      scf.condition(%c) %i, %s : tensor<i64>, tensor<20000x5xf32>
    } do {
    ^bb0(%i2: tensor<i64>, %s2: tensor<20000x5xf32>):
      %z = "quabla.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
      %xi = "quabla.dynamic_slice"(%x, %i2, %z, %z) {slice_sizes = array<i64: 1, 20000, 5>} : (tensor<4x20000x5xf32>, tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<1x20000x5xf32>
      %xr = "quabla.reshape"(%xi) : (tensor<1x20000x5xf32>) -> tensor<20000x5xf32>
      %k = "quabla.constant"() {value = dense<1.01e0> : tensor<20000x5xf32>} : () -> tensor<20000x5xf32>
      %m = "quabla.mul"(%s2, %k) : (tensor<20000x5xf32>, tensor<20000x5xf32>) -> tensor<20000x5xf32>
      %a = "quabla.add"(%m, %xr) : (tensor<20000x5xf32>, tensor<20000x5xf32>) -> tensor<20000x5xf32>
      %t = "quabla.tanh"(%a) : (tensor<20000x5xf32>) -> tensor<20000x5xf32>
      %one = "quabla.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
      %i3 = "quabla.add"(%i2, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
      scf.yield %i3, %t : tensor<i64>, tensor<20000x5xf32>
    }
    return %r#1 : tensor<20000x5xf32>
  }
}"#;
    let strided = r#"module {
  func.func @main(%x: tensor<20000x6xf32>) -> (tensor<20000x5xf32>) {
    %1 = "quabla.slice"(%x) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 20000, 5>, strides = array<i64: 1, 1>} : (tensor<20000x6xf32>) -> tensor<20000x5xf32>
    %2 = "quabla.tanh"(%1) : (tensor<20000x5xf32>) -> tensor<20000x5xf32>
    return %2 : tensor<20000x5xf32>
  }
}"#;
    let mut rng = Rng(181);
    for (text, flat) in [(looped, true), (strided, false)] {
        let ctx = quabla_dialect::mlir::new_context();
        let module = quabla_dialect::mlir::parse_and_import(&ctx, &text).unwrap();
        let llvm = executor().lower_to_llvm(&module, &with_threads(1)).unwrap();
        let what = if flat { "loop state: " } else { "strided slice: " };
        let tagged = executor().lower_tagged(&module, &with_threads(1)).unwrap();
        assert_eq!(tagged.contains("tensor<100000xf32>"), flat, "{what}\n{tagged}");
        assert!(!llvm.is_empty());
        let inputs: Vec<Buffer> = if flat { vec![rng.buffer(&TensorType::new(DType::F32, [20000, 5]), -1.0, 1.0), rng.buffer(&TensorType::new(DType::F32, [4, 20000, 5]), -2.0, 2.0)] } else { vec![rng.buffer(&TensorType::new(DType::F32, [20000, 6]), -2.0, 2.0)] };
        equals_interpreter_on_one_and_two_threads(&module, &inputs, Tol::Rel(1e-5), |_| 1.0, what);
    }
}

#[test]
fn concatenations_of_short_rows_are_one_generic_and_match_the_interpreter() {
    // Along the last dim of a result whose rows are at most 7 long (slicing.rs
    // short_rows_concat): one generic over the result picks each element from its operand
    // (clamped column, a select by column), no insert per operand; wider rows, a small result
    // and other dims keep the inserts. f32, i32 and bool; two and three operands, a chain of
    // concatenations (flattened into one), rank 3. Equal to the interpreter on one and two
    // threads (exactly: copies).
    use quabla_dialect::SlicingOp;
    let mut rng = Rng(191);
    // (operand shapes, dim, dtype, one generic)
    let cases: Vec<(Vec<Vec<i64>>, i64, DType, bool)> = vec![
        (vec![vec![30000, 3], vec![30000, 1]], 1, DType::F32, true),
        (vec![vec![30000, 2], vec![30000, 4], vec![30000, 1]], 1, DType::I32, true),
        (vec![vec![300, 40, 3], vec![300, 40, 4]], 2, DType::F32, true),
        (vec![vec![30000, 4], vec![30000, 4]], 1, DType::F32, false),
        (vec![vec![30000, 1], vec![30000, 1]], 1, DType::I1, true),
        (vec![vec![100, 3], vec![100, 1]], 1, DType::F32, false),
        (vec![vec![3, 30000], vec![1, 30000]], 0, DType::F32, false),
    ];
    for (shapes, dim, d, one) in cases {
        let tys: Vec<TensorType> = shapes.iter().map(|s| TensorType::new(d, s.clone())).collect();
        let mut f = Func::new("main", &tys);
        let ps = f.params.clone();
        // Pairwise, as qb.concatenate of three arrays traces.
        let mut y = f.push1(OpKind::Slicing(SlicingOp::Concatenate { dim }), &ps[..2], None).unwrap();
        if ps.len() > 2 {
            y = f.push1(OpKind::Slicing(SlicingOp::Concatenate { dim }), &[y, ps[2]], None).unwrap();
        }
        f.outputs = vec![y];
        let m = Module { funcs: vec![f] };
        let what = format!("{shapes:?} along {dim} {d:?}: ");
        let cm = lower_for_cpu(&m, &CpuOptions::default()).unwrap();
        assert_eq!(!cm.text.contains("tensor.insert_slice"), one, "{what}\n{}", cm.text);
        let inputs: Vec<Buffer> = tys.iter().map(|t| rng.buffer(t, -5.0, 5.0)).collect();
        equals_interpreter_on_one_and_two_threads(&m, &inputs, Tol::Exact, |_| 1.0, &what);
    }
}

#[test]
fn short_inner_loops_under_dear_bodies_are_unrolled_and_match_the_interpreter() {
    // A generic that reads an operand through a broadcast (a row `b[None]`, a column
    // `x[:, None]`) or a transposed map is not flattened; when its inner loop is 2 to 7 long
    // and its body dear (runtime parallel::written_out: exp, tanh, sin), the script marks
    // that loop for full unrolling (tiling::UNROLL_MARK), and LLVM vectorizes the loop
    // around it. Inner loops of 2 or 3 are written out whatever the body
    // (tiling::UNROLL_ALWAYS: LLVM left them scalar); inner loops of 8, and cheap bodies (a
    // negation) over 4 to 7, keep unrolling disabled. Ranks 2 to 4, f32, f64 and i32; equal
    // to the interpreter on one and two threads (the rows split between them).
    use quabla_dialect::LayoutOp;
    let mut rng = Rng(167);
    // (shape, body, dtype, read: 0 row broadcast, 1 column broadcast, 2 transposed)
    let cases: Vec<(Vec<i64>, UnaryOp, DType, u8)> = vec![
        (vec![50000, 3], UnaryOp::Exp, DType::F32, 0),
        (vec![50000, 5], UnaryOp::Tanh, DType::F64, 0),
        (vec![50000, 7], UnaryOp::Sin, DType::F32, 1),
        (vec![50000, 2], UnaryOp::Exp, DType::F64, 2),
        (vec![500, 40, 3], UnaryOp::Tanh, DType::F32, 0),
        (vec![500, 40, 5], UnaryOp::Exp, DType::F32, 1),
        (vec![50000, 8], UnaryOp::Exp, DType::F32, 0),
        (vec![50000, 3], UnaryOp::Neg, DType::F32, 0),
        (vec![50000, 2], UnaryOp::Neg, DType::I32, 1),
        (vec![500, 40, 2], UnaryOp::Neg, DType::F64, 0),
        (vec![50000, 4], UnaryOp::Neg, DType::F32, 0),
        (vec![20, 30, 40, 3], UnaryOp::Neg, DType::F32, 2),
        (vec![20, 30, 40, 5], UnaryOp::Exp, DType::F32, 2),
    ];
    for (shape, op, d, read) in cases {
        let rank = shape.len();
        let inner = shape[rank - 1];
        let ty = TensorType::new(d, shape.clone());
        let (other, map): (Vec<i64>, Vec<i64>) = match read {
            0 => (vec![inner], vec![rank as i64 - 1]),
            1 => (shape[..rank - 1].to_vec(), (0..rank as i64 - 1).collect()),
            _ => (shape.iter().rev().copied().collect(), vec![]),
        };
        let oty = TensorType::new(d, other.clone());
        let mut f = Func::new("main", &[ty.clone(), oty.clone()]);
        let (x, b) = (f.params[0], f.params[1]);
        let bb = if read == 2 {
            f.push1(OpKind::Layout(LayoutOp::Transpose { perm: (0..rank as i64).rev().collect() }), &[b], None).unwrap()
        } else {
            f.push1(OpKind::Layout(LayoutOp::BroadcastInDim { dims: map, shape: shape.clone() }), &[b], None).unwrap()
        };
        let s = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), &[x, bb], None).unwrap();
        let y = f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op }), &[s], None).unwrap();
        f.outputs = vec![y];
        let m = Module { funcs: vec![f] };
        let what = format!("{shape:?} {op:?} {d:?} read {read}: ");
        let dear = op != UnaryOp::Neg;
        let unrolled = inner <= quabla_lowering::tiling::UNROLL_ALWAYS || dear && inner <= 7;
        let llvm = executor().lower_to_llvm(&m, &with_threads(1)).unwrap();
        // (The annotations are printed through aliases: `#llvm.loop_unroll<full = true>`.)
        let full = llvm.contains("full = true");
        assert_eq!(full, unrolled, "{what}unrolled in full: {full}\n{llvm}");
        let loops = llvm.matches("{loop_annotation = #").count();
        assert_eq!(loops, rank, "{what}{loops} marked loops:\n{llvm}");
        let inputs = [rng.buffer(&ty, -2.0, 2.0), rng.buffer(&oty, -1.0, 1.0)];
        equals_interpreter_on_one_and_two_threads(&m, &inputs, Tol::Rel(2e-5), |_| 1.0, &what);
    }
}

#[test]
fn small_generics_stay_plain_loops_and_row_loops_are_not_unrolled() {
    // A generic of at most 16 iterations is not tagged `quabla.vec` (runtime
    // parallel::small_generic): its loop reaches LLVM unannotated, which writes it out
    // (LEVEL2_PASSES' loop-unroll-full) so its buffers become registers. Larger elementwise
    // loops keep their parallel-access annotation, now with unrolling disabled, and a row
    // loop (reduce.rs row_for) carries its own unroll-disable annotation to its back edge
    // (none is left as a discardable attribute). Equal to the interpreter on one and two
    // threads.
    use quabla_dialect::{ReduceOp, Reducer};
    let mut rng = Rng(163);
    for (shape, reduce) in [(vec![3i64], false), (vec![4, 4], false), (vec![17], false), (vec![65536, 10], false), (vec![4096, 10], true)] {
        let ty = TensorType::new(DType::F32, shape.clone());
        let mut f = Func::new("main", &[ty.clone()]);
        let x = f.params[0];
        let t = f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Tanh }), &[x], None).unwrap();
        let mut y = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), &[t, x], None).unwrap();
        if reduce {
            y = f.push1(OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Max, dims: vec![1] }), &[y], None).unwrap();
        }
        f.outputs = vec![y];
        let m = Module { funcs: vec![f] };
        let what = format!("{shape:?} reduce {reduce}: ");
        let llvm = executor().lower_to_llvm(&m, &with_threads(1)).unwrap();
        let parallel = llvm.matches("parallelAccesses").count();
        let small = shape.iter().product::<i64>() <= 16;
        assert_eq!(parallel == 0, small && !reduce, "{what}{parallel} parallel loops:\n{llvm}");
        if !small {
            assert!(llvm.contains("disable = true"), "{what}no loop with unrolling disabled:\n{llvm}");
        }
        assert!(!llvm.contains("llvm.loop_annotation ="), "{what}an annotation left off its back edge:\n{llvm}");
        let inputs = [rng.buffer(&ty, -3.0, 3.0)];
        equals_interpreter_on_one_and_two_threads(&m, &inputs, Tol::Rel(1e-5), |_| 1.0, &what);
    }
}

#[test]
fn float_maxima_and_minima_over_rows_reduce_ordered_keys_exactly() {
    // Max / min over a last dim reduce the floats' bits as ordered signed keys (reduce.rs
    // ordered_keys): the interpreter's values to the bit, -0 below +0, NaN of either sign
    // propagated (as the positive canonical NaN), infinities, one and two threads.
    use quabla_dialect::{ReduceOp, Reducer};
    let mut rng = Rng(149);
    let special = [0.0, -0.0, 1.0, -1.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, -f64::NAN, 1e-310, -1e-310, 3.5e38, -3.5e38];
    for d in [DType::F32, DType::F64] {
        for (shape, dims) in [(vec![300i64, 37], vec![1i64]), (vec![8, 40, 64], vec![1, 2]), (vec![5000, 16], vec![0, 1])] {
            for op in [Reducer::Max, Reducer::Min] {
                let ty = TensorType::new(d, shape.clone());
                let n = ty.num_elements();
                // Rows of one special value (or two), the rest random.
                let mut v: Vec<f64> = (0..n).map(|_| rng.next_f64() * 2.0 - 1.0).collect();
                let row = shape[shape.len() - 1] as usize;
                for (k, &x) in special.iter().enumerate() {
                    for j in 0..row {
                        v[k * row + j] = if j % 3 == 0 { x } else { special[(k + 1) % special.len()] };
                    }
                }
                for j in 0..row {
                    v[special.len() * row + j] = -0.0;
                }
                let input = Buffer::from_f64s(ty.clone(), &v).unwrap();
                let mut f = Func::new("main", std::slice::from_ref(&ty));
                let x = f.params[0];
                f.outputs = vec![f.push1(OpKind::Reduce(ReduceOp::Reduce { op, dims: dims.clone() }), &[x], None).unwrap()];
                let m = Module { funcs: vec![f] };
                let want = &interp::run_func(&m, "main", std::slice::from_ref(&input)).unwrap()[0];
                for threads in [1, 2] {
                    let got = executor().compile(&m, "main", &with_threads(threads)).unwrap().run(&[&input]).unwrap().remove(0);
                    for i in 0..want.len() {
                        let (g, w) = (got.get_f64(i), want.get_f64(i));
                        let ok = if w.is_nan() { g.is_nan() && g.is_sign_positive() } else { g.to_bits() == w.to_bits() };
                        assert!(ok, "{op:?} over {dims:?} of {d} {shape:?}, {threads} threads, element {i}: {g:e} vs {w:e}");
                    }
                }
            }
        }
    }
}

/// Random elements of `ty` for a reduction by `op`: products within `spread` of 1 (their
/// results stay finite), integers in [-1000, 1000], else [-1, 1].
fn reduction_values(rng: &mut Rng, ty: &TensorType, op: quabla_dialect::Reducer, spread: f64) -> Vec<f64> {
    let (lo, hi) = match (op, ty.dtype) {
        (quabla_dialect::Reducer::Prod, _) => (1.0 - spread, 1.0 + spread),
        (_, DType::I32) => (-1000.0, 1000.0),
        _ => (-1.0, 1.0),
    };
    (0..ty.num_elements()).map(|_| lo + (hi - lo) * rng.next_f64()).collect()
}

#[test]
fn column_reductions_of_few_columns_read_rows_in_groups() {
    // A split column reduction of a short row (at most UNROLL_MAX_RUN_BYTES) read in place
    // reads 4 (or 2) rows per step through operands of their own, combined pairwise before
    // the partial (quabla_lowering::linalg::reduce::unroll); a fused producer keeps one
    // operand (upstream fusion would otherwise materialize it). Equal to the interpreter on
    // one and two threads: maxima with a NaN and signed zeros, minima and integer sums to the
    // bit, float sums and products within reassociation.
    use quabla_dialect::Reducer;
    let mut rng = Rng(91);
    // (shape, reducer, dtype, square first, rows per step)
    let cases: [(Vec<i64>, Reducer, DType, bool, usize); 8] = [
        (vec![131_072, 64], Reducer::Max, DType::F32, false, 4),
        // 20 parts of 5000 rows (reduce::thread_split prefers chunks of 8), not 16 of 6250.
        (vec![100_000, 64], Reducer::Sum, DType::F32, false, 4),
        // 14 parts of 4290 rows: no even count of parts gives a multiple of 4.
        (vec![60_060, 64], Reducer::Sum, DType::F32, false, 2),
        (vec![131_072, 3], Reducer::Min, DType::F64, false, 4),
        (vec![65_536, 16], Reducer::Sum, DType::I32, false, 4),
        (vec![40_000, 2, 5], Reducer::Prod, DType::F64, false, 4),
        (vec![131_072, 64], Reducer::Sum, DType::F32, true, 1),
        (vec![131_072, 512], Reducer::Sum, DType::F32, false, 1),
    ];
    for (shape, op, d, square, rows) in cases {
        let ty = TensorType::new(d, shape.clone());
        let module = reduction_module(&ty, op, &[0], square);
        let what = format!("{op:?} over dim 0 of {d} {shape:?}, ");
        let text = lower_for_cpu(&module, &CpuOptions { threads: 2, ..CpuOptions::default() }).unwrap().text;
        let group = |u: usize| text.lines().any(|l| l.contains("linalg.generic") && l.contains(&format!(" * {u} + {}", u - 1)));
        assert_eq!([group(4), group(2)], [rows == 4, rows == 2], "{what}{rows} rows a step:\n{text}");
        let mut v = reduction_values(&mut rng, &ty, op, 1e-6);
        if op == Reducer::Max {
            // A NaN in column 7 of a late row; column 5 only zeros of both signs (+0).
            let cols = shape[1] as usize;
            v[100_001 * cols + 7] = f64::NAN;
            for (i, z) in v.iter_mut().skip(5).step_by(cols).enumerate() {
                *z = if i % 3 == 0 { 0.0 } else { -0.0 };
            }
        }
        let input = Buffer::from_f64s(ty.clone(), &v).unwrap();
        let l1: f64 = v.iter().map(|x| if square { x * x } else { x.abs() }).sum();
        let (tol, scale) = match (op, d) {
            (Reducer::Sum, DType::F32) => (Tol::Rel(1e-3), l1),
            (Reducer::Prod, _) => (Tol::Rel(1e-12), 1.0),
            _ => (Tol::Exact, 1.0),
        };
        equals_interpreter_on_one_and_two_threads(&module, &[input], tol, |_| scale, &what);
        if op == Reducer::Max {
            let got = executor().compile(&module, "main", &with_threads(2)).unwrap().run(&[&Buffer::from_f64s(ty.clone(), &v).unwrap()]).unwrap();
            let out = got[0].to_f64_vec();
            assert!(out[7].is_nan() && out[5] == 0.0 && out[5].is_sign_positive(), "{what}NaN and +0: {:?}", &out[..8]);
        }
    }
}

#[test]
fn full_reductions_read_flat_and_keep_short_rows_as_columns() {
    // A full reduction of a parameter reads it as one row (flat), cut by the thread split or,
    // for a prime count or an uneven split (3 parts), by the peel; a float max/min reads the
    // keys in the split's body (reduce::keyed_row); so does one of a square of a parameter,
    // computed as one row over a flat view of the parameter's buffer
    // (elementwise::flat_tree). Equal to the interpreter on one and two threads.
    use quabla_dialect::Reducer;
    let mut rng = Rng(93);
    // (shape, reducer, dtype, squared first, a text the lowering holds on two threads)
    let cases: [(Vec<i64>, Reducer, DType, bool, &str); 12] = [
        (vec![100_000, 16], Reducer::Sum, DType::F32, false, "tensor<1600000xf32>"),
        (vec![50_000, 32], Reducer::Sum, DType::F32, true, "memref<1600000xf32> to tensor<1600000xf32>"),
        (vec![100_000, 16], Reducer::Sum, DType::F64, true, "memref<1600000xf64> to tensor<1600000xf64>"),
        (vec![100_000, 16], Reducer::Sum, DType::I32, true, "memref<1600000xi32> to tensor<1600000xi32>"),
        (vec![1_000_003, 3], Reducer::Sum, DType::F32, false, "tensor<3000000xf32>"),
        (vec![1_000_003, 3], Reducer::Max, DType::F32, false, "tensor<3000000xf32>"),
        (vec![100_000, 16], Reducer::Max, DType::F64, false, "tensor<1600000xf64>"),
        (vec![100_000, 10], Reducer::Sum, DType::F32, true, "memref<1000000xf32> to tensor<1000000xf32>"),
        (vec![100_000, 16], Reducer::Min, DType::F32, true, "memref<1600000xf32> to tensor<1600000xf32>"),
        (vec![2_003, 50, 8], Reducer::Sum, DType::F64, true, "memref<801200xf64> to tensor<801200xf64>"),
        (vec![65_537, 7], Reducer::Sum, DType::I32, false, "tensor<458752xi32>"),
        (vec![4_099, 5], Reducer::Min, DType::I64, false, ""),
    ];
    for (shape, op, d, squared, holds) in cases {
        let ty = TensorType::new(d, shape.clone());
        let module = reduction_module(&ty, op, &(0..shape.len() as i64).collect::<Vec<_>>(), squared);
        let what = format!("full {op:?} of {d} {shape:?} (squared: {squared}), ");
        let text = lower_for_cpu(&module, &CpuOptions { threads: 2, ..CpuOptions::default() }).unwrap().text;
        assert!(text.contains(holds), "{what}holds {holds}:\n{text}");
        reduction_matches_interpreter(&mut rng, &module, &ty, op, squared, &what);
    }
}

#[test]
fn full_reductions_of_broadcast_products_give_partials_lanes() {
    // The full sum of `x * w[None, :]` (a tree with a leaf that is no buffer of the operand's
    // shape, so not computed as one row) keeps its short last dim (64 or 128 bytes) as a
    // vector column of the partials, which get lanes (reduce::thread_partials), up to 8
    // (`LANES_MAX`, the parts chosen so that their chunks give 8). Equal to the interpreter on
    // one and two threads.
    let mut rng = Rng(97);
    for (n, k, d, holds) in [(100_000i64, 16i64, DType::F32, "tensor<20x8x16xf32>"), (50_000, 32, DType::F32, "tensor<10x8x32xf32>"), (100_000, 16, DType::F64, "tensor<20x8x16xf64>")] {
        let (xt, wt) = (TensorType::new(d, [n, k]), TensorType::new(d, [k]));
        let mut f = Func::new("main", &[xt.clone(), wt.clone()]);
        let (x, w) = (f.params[0], f.params[1]);
        let b = f.push1(OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![1], shape: vec![n, k] }), &[w], None).unwrap();
        let y = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), &[x, b], None).unwrap();
        let r = f.push1(OpKind::Reduce(quabla_dialect::ReduceOp::Reduce { op: quabla_dialect::Reducer::Sum, dims: vec![0, 1] }), &[y], None).unwrap();
        f.outputs = vec![r];
        let module = Module { funcs: vec![f] };
        let what = format!("sum of x * w over {d} [{n}, {k}]");
        let text = lower_for_cpu(&module, &CpuOptions { threads: 2, ..CpuOptions::default() }).unwrap().text;
        assert!(text.contains(holds) && !text.contains("quabla.flat_view"), "{what} holds {holds}:\n{text}");
        let xv: Vec<f64> = (0..n * k).map(|_| rng.next_f64() - 0.5).collect();
        let wv: Vec<f64> = (0..k).map(|_| rng.next_f64() - 0.5).collect();
        let l1: f64 = xv.iter().enumerate().map(|(i, a)| (a * wv[i % k as usize]).abs()).sum();
        let tol = if d == DType::F32 { Tol::Rel(1e-6) } else { Tol::Rel(1e-14) };
        let inputs = [Buffer::from_f64s(xt, &xv).unwrap(), Buffer::from_f64s(wt, &wv).unwrap()];
        equals_interpreter_on_one_and_two_threads(&module, &inputs, tol, |_| l1, &what);
    }
}

#[test]
fn reductions_of_elementwise_trees_read_views_with_dims_collapsed() {
    // A reduction of all dims of a tree of elementwise ops whose leaves are buffers of its
    // shape (parameters, a product's result) and 0-d values (a splat constant, a broadcast
    // computed scalar) computes the tree as one row over flat views of the buffers
    // (elementwise::flat_tree, linalg::flat_view), ranks 2 to 4, sums, maxima (keys) and
    // integer sums; a tree with a value used twice, or a leaf broadcast along a dim, keeps its
    // shape; one reading a row broadcast along the leading dims runs over [leading, row]
    // dims, the row a view of its own when it has several dims. Equal to the interpreter on
    // one and two threads.
    use quabla_dialect::{ConstantOp, Literal, ReduceOp, Reducer};
    let mut rng = Rng(98);
    let ew = |op: BinaryOp| OpKind::Elementwise(ElementwiseOp::Binary { op });
    let reduce = |op: Reducer, r: usize| OpKind::Reduce(ReduceOp::Reduce { op, dims: (0..r as i64).collect() });
    // (shape, dtype, tree, reducer, flat); trees over params x, y of the shape:
    // 0: x * x - 1; 1: (x - mean(x))^2 (a broadcast 0-d scalar computed in the function);
    // 2: |x * y|; 3: (x @ y[.., :k, :k]-shaped product) - x, the product's result a leaf;
    // 4: x * x used twice (summed and returned): kept; 5: x * w (a parameter of x's last dims)
    // broadcast along dim 0 (the sum over [leading, w's] dims); 6: x * y[.., 0] broadcast
    // along the last dim: kept; 7: x * y[0, .., 0, :] (a computed row of the last dim).
    // Partial reductions read each run of reduced or kept dims as one (all dims otherwise).
    let partial: [(Vec<i64>, DType, usize, Reducer, Vec<i64>, bool); 5] = [
        (vec![100, 100, 32], DType::F32, 0, Reducer::Sum, vec![0, 1], true),
        (vec![8, 4, 16, 16], DType::F64, 1, Reducer::Sum, vec![0, 2, 3], true),
        (vec![100, 30, 16], DType::F32, 7, Reducer::Max, vec![0, 1], true),
        (vec![50, 20, 16], DType::F32, 5, Reducer::Sum, vec![0, 1], false),
        (vec![64, 16, 32], DType::I32, 2, Reducer::Sum, vec![1, 2], true),
    ];
    let cases: [(Vec<i64>, DType, usize, Reducer, bool); 14] = [
        (vec![100, 100, 32], DType::F32, 5, Reducer::Sum, true),
        (vec![20, 30, 16, 8], DType::F64, 5, Reducer::Max, true),
        (vec![500, 10], DType::F32, 5, Reducer::Sum, false),
        (vec![100, 30, 16], DType::F32, 6, Reducer::Sum, false),
        (vec![100, 30, 16], DType::I32, 7, Reducer::Sum, true),
        (vec![1000, 10], DType::F32, 0, Reducer::Sum, true),
        (vec![100, 100, 32], DType::F32, 0, Reducer::Sum, true),
        (vec![20, 20, 16, 8], DType::F64, 1, Reducer::Sum, true),
        (vec![1000, 10], DType::F32, 1, Reducer::Sum, true),
        (vec![50, 50, 6], DType::F32, 2, Reducer::Max, true),
        (vec![4099, 5], DType::I32, 2, Reducer::Sum, true),
        (vec![64, 64], DType::F32, 3, Reducer::Sum, true),
        (vec![1000, 10], DType::F32, 4, Reducer::Sum, false),
        (vec![7919, 13], DType::F64, 0, Reducer::Min, true),
    ];
    let full = cases.into_iter().map(|(shape, d, tree, op, flat)| (shape.clone(), d, tree, op, (0..shape.len() as i64).collect::<Vec<_>>(), flat));
    for (shape, d, tree, op, dims, flat) in full.chain(partial) {
        let ty = TensorType::new(d, shape.clone());
        let r = shape.len();
        let wt = TensorType::new(d, shape[1..].to_vec());
        let mut f = Func::new("main", &[ty.clone(), ty.clone(), wt.clone()]);
        let (x, y, w) = (f.params[0], f.params[1], f.params[2]);
        let scalar = TensorType::new(d, Vec::<i64>::new());
        let mut outputs = vec![];
        let v = match tree {
            0 => {
                let xx = f.push1(ew(BinaryOp::Mul), &[x, x], None).unwrap();
                let one = f.push1(OpKind::Constant(ConstantOp::Constant { value: Literal::splat(ty.clone(), 1.0) }), &[], None).unwrap();
                f.push1(ew(BinaryOp::Sub), &[xx, one], None).unwrap()
            }
            1 => {
                let s = f.push1(reduce(Reducer::Sum, r), &[x], None).unwrap();
                let n = f.push1(OpKind::Constant(ConstantOp::Constant { value: Literal::splat(scalar.clone(), 1.0 / ty.num_elements() as f64) }), &[], None).unwrap();
                let m = f.push1(ew(BinaryOp::Mul), &[s, n], None).unwrap();
                let mb = f.push1(OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![], shape: shape.clone() }), &[m], None).unwrap();
                let c = f.push1(ew(BinaryOp::Sub), &[x, mb], None).unwrap();
                f.push1(ew(BinaryOp::Mul), &[c, c], None).unwrap()
            }
            2 => {
                let p = f.push1(ew(BinaryOp::Mul), &[x, y], None).unwrap();
                f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Abs }), &[p], None).unwrap()
            }
            3 => {
                let p = f.push1(OpKind::Dot(DotOp::DotGeneral { dims: DotDims::matmul() }), &[x, y], None).unwrap();
                f.push1(ew(BinaryOp::Sub), &[p, x], None).unwrap()
            }
            4 => {
                let xx = f.push1(ew(BinaryOp::Mul), &[x, x], None).unwrap();
                outputs.push(xx);
                xx
            }
            5 => {
                let b = f.push1(OpKind::Layout(LayoutOp::BroadcastInDim { dims: (1..r as i64).collect(), shape: shape.clone() }), &[w], None).unwrap();
                f.push1(ew(BinaryOp::Mul), &[x, b], None).unwrap()
            }
            _ => {
                // y[0, .., 0, :] (its last dim: 7), or y[.., 0] (its leading dims: 6), broadcast back.
                let (limit, dims): (Vec<i64>, Vec<i64>) = if tree == 7 { ((0..r).map(|i| if i + 1 == r { shape[i] } else { 1 }).collect(), vec![r as i64 - 1]) } else { (shape[..r - 1].iter().copied().chain([1]).collect(), (0..r as i64 - 1).collect()) };
                let sl = f.push1(OpKind::Slicing(quabla_dialect::SlicingOp::Slice { start_indices: vec![0; r], limit_indices: limit, strides: vec![1; r] }), &[y], None).unwrap();
                let kept: Vec<i64> = dims.iter().map(|&i| shape[i as usize]).collect();
                let row = f.push1(OpKind::Layout(LayoutOp::Reshape { shape: kept }), &[sl], None).unwrap();
                let b = f.push1(OpKind::Layout(LayoutOp::BroadcastInDim { dims, shape: shape.clone() }), &[row], None).unwrap();
                f.push1(ew(BinaryOp::Mul), &[x, b], None).unwrap()
            }
        };
        let red = f.push1(OpKind::Reduce(ReduceOp::Reduce { op, dims: dims.clone() }), &[v], None).unwrap();
        outputs.insert(0, red);
        f.outputs = outputs;
        let module = Module { funcs: vec![f] };
        let what = format!("{op:?} over {dims:?} of tree {tree} over {d} {shape:?}");
        let text = lower_for_cpu(&module, &CpuOptions { threads: 2, ..CpuOptions::default() }).unwrap().text;
        assert_eq!(text.contains("quabla.flat_view"), flat, "{what}:\n{text}");
        let vals = |rng: &mut Rng| -> Vec<f64> { (0..ty.num_elements()).map(|_| if d == DType::I32 { (rng.next_f64() * 200.0 - 100.0).round() } else { rng.next_f64() * 2.0 - 1.0 }).collect() };
        let (xv, yv) = (vals(&mut rng), vals(&mut rng));
        let wv: Vec<f64> = yv[..wt.num_elements()].to_vec();
        // A bound on the sum of the magnitudes summed (reduction_tol's scale).
        let per_output = ty.num_elements() as f64 / (0..r).filter(|i| !dims.contains(&(*i as i64))).map(|i| shape[i] as f64).product::<f64>();
        let l1 = per_output * if tree == 3 { shape[1] as f64 + 1.0 } else { 4.0 };
        let (tol, scale) = reduction_tol(op, d, l1);
        let inputs = [Buffer::from_f64s(ty.clone(), &xv).unwrap(), Buffer::from_f64s(ty.clone(), &yv).unwrap(), Buffer::from_f64s(wt.clone(), &wv).unwrap()];
        equals_interpreter_on_one_and_two_threads(&module, &inputs, tol, |k| if k == 0 { scale } else { 1.0 }, &what);
    }
}

#[test]
fn column_reductions_of_prime_rows_and_short_rows_peel_and_group() {
    // A column reduction whose rows no divisor splits between the threads (a prime count)
    // splits the first n - n % 64 rows and reduces the rest on its own (reduce::peeled_split);
    // one whose rows are at most 32 bytes lays 16 rows side by side first
    // (reduce::short_columns), the last n % 16 rows apart, also under a batch dim and of a
    // computed operand. Equal to the interpreter on one and two threads: maxima and minima
    // and integer sums to the bit (a NaN among the maxima), float sums within reassociation.
    use quabla_dialect::Reducer;
    let mut rng = Rng(92);
    // (shape, reducer, dtype, peeled, grouped); shapes of rank 3 reduce dim 1, one operand
    // is squared first.
    let cases: [(Vec<i64>, Reducer, DType, bool, bool); 9] = [
        (vec![1_000_003, 3], Reducer::Max, DType::F32, false, true),
        (vec![8, 50_001, 3], Reducer::Max, DType::F32, false, true),
        (vec![100_003, 3], Reducer::Sum, DType::F64, false, true),
        (vec![1_000_003, 3], Reducer::Sum, DType::F32, false, true),
        (vec![100_003, 4], Reducer::Min, DType::F64, false, true),
        (vec![100_003, 64], Reducer::Sum, DType::F32, true, false),
        (vec![100_003, 64], Reducer::Max, DType::F64, true, false),
        (vec![65_537, 7], Reducer::Sum, DType::I32, false, true),
        (vec![65_536, 2], Reducer::Prod, DType::F64, false, true),
    ];
    for (shape, op, d, peeled, grouped) in cases {
        let ty = TensorType::new(d, shape.clone());
        let rank = shape.len();
        let squared = d == DType::F64 && op == Reducer::Sum;
        let module = reduction_module(&ty, op, &[rank as i64 - 2], squared);
        let what = format!("{op:?} over dim {} of {d} {shape:?} (squared: {squared}), ", rank - 2);
        let text = lower_for_cpu(&module, &CpuOptions { threads: 2, ..CpuOptions::default() }).unwrap().text;
        let (n, c) = (shape[rank - 2], shape[rank - 1]);
        let lead: String = shape[..rank - 2].iter().map(|b| format!("{b}x")).collect();
        let wide = format!("tensor<{lead}{}x{}x{d}>", (n - n % 16) / 16, 16 * c);
        assert_eq!(text.contains(&wide), grouped, "{what}grouped as {wide}:\n{text}");
        let main = format!("tensor<{}x{c}x{d}>", n - n % 64);
        if !grouped {
            assert_eq!(text.contains(&format!("to {main}")), peeled, "{what}peeled to {main}:\n{text}");
        }
        // A NaN in the last column of one of the last rows (the peeled or ungrouped rest).
        reduction_matches_interpreter(&mut rng, &module, &ty, op, squared, &what);
    }
}

#[test]
fn dear_broadcast_sources_are_computed_once_per_element_of_their_own() {
    // x / sqrt(sum(x * x, 1)): the per-row square root is a generic with a unit reduction
    // loop (elementwise::kept_apart), which upstream fusion leaves alone, so the division's
    // loop reads 4096 roots instead of taking a million; a cheap source (negation) still fuses.
    // Equal to the interpreter on one and two threads.
    let text = |op: &str| {
        format!(
            r#"module {{
  func.func @main(%0: tensor<4096x256xf32>) -> (tensor<4096x256xf32>) {{
    %1 = "quabla.mul"(%0, %0) : (tensor<4096x256xf32>, tensor<4096x256xf32>) -> tensor<4096x256xf32>
    %2 = "quabla.reduce_sum"(%1) {{dims = array<i64: 1>}} : (tensor<4096x256xf32>) -> tensor<4096xf32>
    %3 = "quabla.reshape"(%2) : (tensor<4096xf32>) -> tensor<4096x1xf32>
    %4 = "quabla.{op}"(%3) : (tensor<4096x1xf32>) -> tensor<4096x1xf32>
    %5 = "quabla.broadcast_in_dim"(%4) {{dims = array<i64: 0, 1>}} : (tensor<4096x1xf32>) -> tensor<4096x256xf32>
    %6 = "quabla.div"(%0, %5) : (tensor<4096x256xf32>, tensor<4096x256xf32>) -> tensor<4096x256xf32>
    return %6 : tensor<4096x256xf32>
  }}
}}"#
        )
    };
    let mut rng = Rng(29);
    let ty = TensorType::new(DType::F32, [4096, 256]);
    let inputs = [rng.buffer(&ty, 0.5, 2.0)];
    for (op, apart) in [("sqrt", true), ("neg", false)] {
        let ctx = quabla_dialect::mlir::new_context();
        let module = quabla_dialect::mlir::parse_and_import(&ctx, &text(op)).unwrap();
        let cm = lower_for_cpu(&module, &CpuOptions { threads: 2, ..CpuOptions::default() }).unwrap();
        assert_eq!(cm.text.contains(r#"iterator_types = ["parallel", "parallel", "reduction"]"#), apart, "{op}:\n{}", cm.text);
        equals_interpreter_on_one_and_two_threads(&module, &inputs, Tol::Rel(1e-5), |_| 1.0, op);
    }
}

#[test]
fn sources_broadcast_through_a_reshape_are_kept_apart_by_their_cost() {
    // n-body shaped: a [16, 16] value reshaped to [16, 16, 1], broadcast to [16, 16, 3] and
    // divided into, then summed over dim 1. A transcendental source read three times per
    // element is kept apart (elementwise::kept_apart: its cost with its fused producers
    // against the broadcast's extra reads, seen through the reshape), a square root (a
    // quarter of the cost) still fuses. Equal to the interpreter on one and two threads.
    let text = |op: &str| {
        format!(
            r#"module {{
  func.func @main(%0: tensor<16x16xf32>, %1: tensor<16x16x3xf32>) -> (tensor<16x3xf32>) {{
    %2 = "quabla.{op}"(%0) : (tensor<16x16xf32>) -> tensor<16x16xf32>
    %3 = "quabla.reshape"(%2) : (tensor<16x16xf32>) -> tensor<16x16x1xf32>
    %4 = "quabla.broadcast_in_dim"(%3) {{dims = array<i64: 0, 1, 2>}} : (tensor<16x16x1xf32>) -> tensor<16x16x3xf32>
    %5 = "quabla.div"(%1, %4) : (tensor<16x16x3xf32>, tensor<16x16x3xf32>) -> tensor<16x16x3xf32>
    %6 = "quabla.reduce_sum"(%5) {{dims = array<i64: 1>}} : (tensor<16x16x3xf32>) -> tensor<16x3xf32>
    return %6 : tensor<16x3xf32>
  }}
}}"#
        )
    };
    let mut rng = Rng(173);
    let inputs = [rng.buffer(&TensorType::new(DType::F32, [16, 16]), 0.5, 2.0), rng.buffer(&TensorType::new(DType::F32, [16, 16, 3]), -2.0, 2.0)];
    for (op, apart) in [("exp", true), ("sqrt", false)] {
        let ctx = quabla_dialect::mlir::new_context();
        let module = quabla_dialect::mlir::parse_and_import(&ctx, &text(op)).unwrap();
        let cm = lower_for_cpu(&module, &CpuOptions::default()).unwrap();
        assert_eq!(cm.text.contains(r#"iterator_types = ["parallel", "parallel", "reduction"]"#), apart, "{op}:\n{}", cm.text);
        equals_interpreter_on_one_and_two_threads(&module, &inputs, Tol::Rel(1e-5), |_| 4.0, op);
    }
}

#[test]
fn dear_inputs_of_reductions_over_short_rows_are_kept_apart() {
    // A reduction (over the rows or over the short dim itself) of an array whose last dim is
    // 2 to 7, whose input is a dear elementwise chain (tanh of x plus a broadcast row: the
    // gradient of sum(tanh(x + b)) in b), computes that chain apart (elementwise::kept_apart:
    // a unit reduction loop after its own, also when it reads a broadcast), so it is one
    // vectorized loop rather than one element of the short dim at a time inside the
    // reduction's loops. A cheap chain (an add), a last dim of 8 and a small array fuse.
    // Equal to the interpreter on one and two threads.
    let text = |rows: i64, cols: i64, op: &str, dim: i64| {
        let out = if dim == 0 { cols } else { rows };
        format!(
            r#"module {{
  func.func @main(%0: tensor<{rows}x{cols}xf32>, %1: tensor<{cols}xf32>) -> (tensor<{out}xf32>) {{
    %2 = "quabla.broadcast_in_dim"(%1) {{dims = array<i64: 1>}} : (tensor<{cols}xf32>) -> tensor<{rows}x{cols}xf32>
    %3 = "quabla.add"(%0, %2) : (tensor<{rows}x{cols}xf32>, tensor<{rows}x{cols}xf32>) -> tensor<{rows}x{cols}xf32>
    %4 = "quabla.{op}"(%3) : (tensor<{rows}x{cols}xf32>) -> tensor<{rows}x{cols}xf32>
    %5 = "quabla.mul"(%4, %4) : (tensor<{rows}x{cols}xf32>, tensor<{rows}x{cols}xf32>) -> tensor<{rows}x{cols}xf32>
    %6 = "quabla.reduce_sum"(%5) {{dims = array<i64: {dim}>}} : (tensor<{rows}x{cols}xf32>) -> tensor<{out}xf32>
    return %6 : tensor<{out}xf32>
  }}
}}"#
        )
    };
    let mut rng = Rng(179);
    for (rows, cols, op, dim, apart) in [(20000, 5, "tanh", 0, true), (20000, 3, "exp", 1, true), (20000, 5, "neg", 0, false), (20000, 8, "tanh", 0, false), (100, 5, "tanh", 0, false)] {
        let ctx = quabla_dialect::mlir::new_context();
        let module = quabla_dialect::mlir::parse_and_import(&ctx, &text(rows, cols, op, dim)).unwrap();
        let what = format!("{rows}x{cols} {op} over {dim}: ");
        let cm = lower_for_cpu(&module, &CpuOptions::default()).unwrap();
        assert_eq!(cm.text.contains(r#"iterator_types = ["parallel", "parallel", "reduction"]"#), apart, "{what}\n{}", cm.text);
        let inputs = [rng.buffer(&TensorType::new(DType::F32, [rows, cols]), -1.0, 1.0), rng.buffer(&TensorType::new(DType::F32, [cols]), -1.0, 1.0)];
        equals_interpreter_on_one_and_two_threads(&module, &inputs, Tol::Rel(1e-4), |_| 1.0, &what);
    }
}

#[test]
fn broadcasts_read_in_place_match_the_interpreter_on_one_and_two_threads() {
    // Softmax-shaped: row maxima and row sums (kept as [rows, 1]) and a per-column vector
    // ([cols], broadcast along dim 1), each broadcast with several elementwise uses, so the
    // generics read them through the broadcast maps (d0, 0) and (d1) instead of a
    // materialised [rows, cols] copy; one broadcast is also an output (materialised) and one
    // is used by a reduction (materialised for it). Ragged and large shapes.
    use quabla_dialect::{BinaryOp, LayoutOp, ReduceOp, Reducer};
    let mut rng = Rng(83);
    for (rows, cols) in [(37usize, 53usize), (256, 1024), (3, 300_001)] {
        let ty = TensorType::new(DType::F32, [rows as i64, cols as i64]);
        let col = TensorType::new(DType::F32, [cols as i64]);
        let mut f = Func::new("main", &[ty.clone(), ty.clone(), col.clone()]);
        let (x, w, c) = (f.params[0], f.params[1], f.params[2]);
        let shape = ty.shape.clone();
        let ew = |f: &mut Func, k, xs: &[quabla_dialect::Value]| f.push1(OpKind::Elementwise(k), xs, None).unwrap();
        let red = |f: &mut Func, op, v| f.push1(OpKind::Reduce(ReduceOp::Reduce { op, dims: vec![1] }), &[v], None).unwrap();
        let keep = |f: &mut Func, v| f.push1(OpKind::Layout(LayoutOp::Reshape { shape: vec![rows as i64, 1] }), &[v], None).unwrap();
        let bc = |f: &mut Func, v, dims: Vec<i64>| f.push1(OpKind::Layout(LayoutOp::BroadcastInDim { dims, shape: shape.clone() }), &[v], None).unwrap();
        let mx = red(&mut f, Reducer::Max, x);
        let mx = keep(&mut f, mx);
        let mxb = bc(&mut f, mx, vec![0, 1]);
        let d = ew(&mut f, ElementwiseOp::Binary { op: BinaryOp::Sub }, &[x, mxb]);
        let e = ew(&mut f, ElementwiseOp::Unary { op: UnaryOp::Exp }, &[d]);
        let sm = red(&mut f, Reducer::Sum, e);
        let sm = keep(&mut f, sm);
        let smb = bc(&mut f, sm, vec![0, 1]);
        let p = ew(&mut f, ElementwiseOp::Binary { op: BinaryOp::Div }, &[e, smb]);
        let cb = bc(&mut f, c, vec![1]);
        let pw = ew(&mut f, ElementwiseOp::Binary { op: BinaryOp::Mul }, &[p, w]);
        let q = ew(&mut f, ElementwiseOp::Binary { op: BinaryOp::Mul }, &[pw, cb]);
        let r = ew(&mut f, ElementwiseOp::Binary { op: BinaryOp::Div }, &[w, smb]);
        let r = ew(&mut f, ElementwiseOp::Binary { op: BinaryOp::Add }, &[r, cb]);
        let r = ew(&mut f, ElementwiseOp::Binary { op: BinaryOp::Sub }, &[r, mxb]);
        let cmax = f.push1(OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Max, dims: vec![0] }), &[cb], None).unwrap();
        f.outputs = vec![q, r, mxb, cmax];
        let module = Module { funcs: vec![f] };
        let text = lower_for_cpu(&module, &CpuOptions::default()).unwrap().text;
        assert!(text.contains("(d0, d1) -> (d0, 0)") && text.contains("(d0, d1) -> (d1)"), "{rows}x{cols}: broadcasts read through their maps:\n{text}");
        let inputs = [rng.buffer(&ty, -3.0, 3.0), rng.buffer(&ty, -1.0, 1.0), rng.buffer(&col, -1.0, 1.0)];
        let want = interp::run_func(&module, "main", &inputs).unwrap();
        let mut runs = vec![];
        for threads in [1, 2] {
            let got = executor().compile(&module, "main", &with_threads(threads)).unwrap().run(&[&inputs[0], &inputs[1], &inputs[2]]).unwrap();
            for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                // The row sums reassociate (vectorised partial sums); exp is within 1 ulp.
                if let Err(e) = compare(g, w, Tol::Rel(1e-5), 1.0) {
                    panic!("{rows}x{cols}, {threads} threads, output {k}: {e}");
                }
            }
            runs.push(got);
        }
        for k in 0..4 {
            assert!(runs[0][k].bytes() == runs[1][k].bytes(), "{rows}x{cols}: output {k} differs between one and two threads");
        }
    }
}

/// An Adam-shaped program over `n` f32 elements: m' = 0.9 m + 0.1 g, v' = 0.999 v + 0.001 g^2
/// (outputs, each also read by the update), p' = p - lr (m'/c1) / (sqrt(v'/c2) + eps) with the
/// bias corrections c1 = 1 - t, c2 = 1 - t/2 computed from a 0-d input t; the scalar
/// broadcasts (0.001 twice) have several uses.
fn adam_like(n: i64) -> Module {
    use quabla_dialect::{BinaryOp, ConstantOp, LayoutOp, Literal};
    let ty = TensorType::new(DType::F32, [n]);
    let s = TensorType::new(DType::F32, [] as [i64; 0]);
    let mut f = Func::new("main", &[ty.clone(), ty.clone(), ty.clone(), ty.clone(), s.clone()]);
    let (p, g, m, v, t) = (f.params[0], f.params[1], f.params[2], f.params[3], f.params[4]);
    let k = |f: &mut Func, x: f64| f.push1(OpKind::Constant(ConstantOp::Constant { value: Literal::from_f64s(s.clone(), &[x]) }), &[], None).unwrap();
    let bc = |f: &mut Func, x| f.push1(OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![], shape: vec![n] }), &[x], None).unwrap();
    let bin = |f: &mut Func, op, a, b| f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op }), &[a, b], None).unwrap();
    let (b1, nb1, b2, small, one, two) = (k(&mut f, 0.9), k(&mut f, 0.1), k(&mut f, 0.999), k(&mut f, 0.001), k(&mut f, 1.0), k(&mut f, 2.0));
    let c1 = bin(&mut f, BinaryOp::Sub, one, t);
    let th = bin(&mut f, BinaryOp::Div, t, two);
    let c2 = bin(&mut f, BinaryOp::Sub, one, th);
    let (b1b, nb1b, b2b, smallb, c1b, c2b) = (bc(&mut f, b1), bc(&mut f, nb1), bc(&mut f, b2), bc(&mut f, small), bc(&mut f, c1), bc(&mut f, c2));
    let m1 = bin(&mut f, BinaryOp::Mul, b1b, m);
    let m2 = bin(&mut f, BinaryOp::Mul, nb1b, g);
    let mn = bin(&mut f, BinaryOp::Add, m1, m2);
    let v1 = bin(&mut f, BinaryOp::Mul, b2b, v);
    let gg = bin(&mut f, BinaryOp::Mul, g, g);
    let v2 = bin(&mut f, BinaryOp::Mul, smallb, gg);
    let vn = bin(&mut f, BinaryOp::Add, v1, v2);
    let mh = bin(&mut f, BinaryOp::Div, mn, c1b);
    let vh = bin(&mut f, BinaryOp::Div, vn, c2b);
    let sq = f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Sqrt }), &[vh], None).unwrap();
    let eps = k(&mut f, 1e-8);
    let epsb = bc(&mut f, eps);
    let den = bin(&mut f, BinaryOp::Add, sq, epsb);
    let u = bin(&mut f, BinaryOp::Div, mh, den);
    let lu = bin(&mut f, BinaryOp::Mul, smallb, u);
    let pn = bin(&mut f, BinaryOp::Sub, p, lu);
    f.outputs = vec![pn, mn, vn];
    Module { funcs: vec![f] }
}

#[test]
fn multi_use_values_and_scalar_broadcasts_fuse_into_one_loop() {
    // The new moments (outputs read again by the update) are yielded by the update's generic
    // and the broadcast scalars are read as scalars: one loop reads p, g, m, v once and
    // writes p', m', v' once (no loop fills a broadcast); results equal the interpreter's.
    let mut rng = Rng(97);
    let n = 5000;
    let module = adam_like(n);
    let llvm = executor().lower_to_llvm(&module, &with_threads(1)).unwrap();
    assert_eq!(llvm.matches("llvm.cond_br").count(), 1, "one loop:\n{llvm}");
    let ty = TensorType::new(DType::F32, [n]);
    let mut inputs: Vec<Buffer> = (0..4).map(|_| rng.buffer(&ty, -1.0, 1.0)).collect();
    inputs[3] = rng.buffer(&ty, 0.0, 1.0);
    inputs.push(Buffer::from_f64s(TensorType::new(DType::F32, [] as [i64; 0]), &[0.5]).unwrap());
    let want = interp::run_func(&module, "main", &inputs).unwrap();
    let got = executor().compile(&module, "main", &with_threads(1)).unwrap().run(&inputs.iter().collect::<Vec<_>>()).unwrap();
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        if let Err(e) = compare(g, w, Tol::Rel(1e-6), 1.0) {
            panic!("output {k}: {e}");
        }
    }
}

#[test]
fn dear_loops_split_from_fewer_iterations_than_cheap_ones() {
    // The thread policy counts work (iterations x body cost): tanh(x) * exp(y) over 100k
    // elements runs on two threads, x + y over 100k elements on one (every loop splits from
    // 2^17 iterations); both equal the interpreter, the same bits on one and two threads.
    use quabla_dialect::BinaryOp;
    let mut rng = Rng(98);
    let ty = TensorType::new(DType::F32, [100_000]);
    let dear = {
        let mut f = Func::new("main", &[ty.clone(), ty.clone()]);
        let (a, b) = (f.params[0], f.params[1]);
        let t = f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Tanh }), &[a], None).unwrap();
        let e = f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Exp }), &[b], None).unwrap();
        let y = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), &[t, e], None).unwrap();
        f.outputs = vec![y];
        Module { funcs: vec![f] }
    };
    let cheap = one_op_module(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add }), &[ty.clone(), ty.clone()]);
    assert!(executor().lower_to_llvm(&dear, &with_threads(2)).unwrap().contains("omp.parallel"), "tanh * exp over 100k: two threads");
    assert!(!executor().lower_to_llvm(&cheap, &with_threads(2)).unwrap().contains("omp."), "x + y over 100k: one thread");
    let inputs = [rng.buffer(&ty, -3.0, 3.0), rng.buffer(&ty, -3.0, 3.0)];
    for module in [&dear, &cheap] {
        let want = interp::run_func(module, "main", &inputs).unwrap().remove(0);
        let mut outs = vec![];
        for threads in [1, 2] {
            let got = executor().compile(module, "main", &with_threads(threads)).unwrap().run(&[&inputs[0], &inputs[1]]).unwrap().remove(0);
            if let Err(e) = compare(&got, &want, Tol::Rel(1e-5), 1.0) {
                panic!("{threads} threads: {e}");
            }
            outs.push(got);
        }
        assert!(outs[0].bytes() == outs[1].bytes(), "one and two threads differ");
    }
}

#[test]
fn bool_loads_and_stores_in_vector_loops_match_the_interpreter() {
    // Bools read by vector loops (a select on a bool input, the mask broadcast along rows)
    // and written by them (a compare result), large enough for LLVM's vectorizer and ragged
    // against its vector widths: bool_memory's byte accesses.
    use quabla_dialect::{CmpDir, LayoutOp};
    let mut rng = Rng(81);
    let (bt, ft, mt) = (TensorType::new(DType::I1, [3, 1001]), TensorType::new(DType::F32, [3, 1001]), TensorType::new(DType::I1, [1001]));
    let mut f = Func::new("main", &[bt.clone(), ft.clone(), ft.clone(), mt.clone()]);
    let (p, x, y, m) = (f.params[0], f.params[1], f.params[2], f.params[3]);
    let sel = f.push1(OpKind::Elementwise(ElementwiseOp::Select {}), &[p, x, y], None).unwrap();
    let lt = f.push1(OpKind::Elementwise(ElementwiseOp::Compare { direction: CmpDir::Lt }), &[x, y], None).unwrap();
    let mb = f.push1(OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![1], shape: vec![3, 1001] }), &[m], None).unwrap();
    let both = f.push1(OpKind::Elementwise(ElementwiseOp::Select {}), &[mb, sel, y], None).unwrap();
    f.outputs = vec![sel, lt, both];
    let module = Module { funcs: vec![f] };
    let inputs = [rng.buffer(&bt, 0.0, 1.0), rng.buffer(&ft, -9.0, 9.0), rng.buffer(&ft, -9.0, 9.0), rng.buffer(&mt, 0.0, 1.0)];
    equals_interpreter_on_one_and_two_threads(&module, &inputs, Tol::Exact, |_| 1.0, "");
}

#[test]
fn cheap_multi_use_values_are_recomputed_by_each_consumer() {
    // The gelu gradient (as qb.value_and_grad traces it): 0.5 x, x^2, 1 + tanh(..) and the
    // backward's products each have several elementwise uses. The cheap ones are recomputed
    // inside each consumer's loop; tanh (dear) is computed once, by the loss's loop, which
    // yields it to the gradient's. So three loops are left (the loss's elementwise loop, its
    // sum, the gradient's), the gradient's yields nothing extra, and the results equal the
    // interpreter on one and two threads.
    let text = r#"module {
  func.func @main(%0: tensor<37x301xf32>, %1: tensor<37x301xf32>) -> (tensor<f32>, tensor<37x301xf32>) {
    %2 = "quabla.constant"() {value = dense<1.0e0> : tensor<f32>} : () -> tensor<f32>
    %6 = "quabla.constant"() {value = dense<5.0e-1> : tensor<f32>} : () -> tensor<f32>
    %7 = "quabla.broadcast_in_dim"(%6) {dims = array<i64>} : (tensor<f32>) -> tensor<37x301xf32>
    %8 = "quabla.mul"(%7, %0) : (tensor<37x301xf32>, tensor<37x301xf32>) -> tensor<37x301xf32>
    %9 = "quabla.mul"(%0, %0) : (tensor<37x301xf32>, tensor<37x301xf32>) -> tensor<37x301xf32>
    %10 = "quabla.mul"(%9, %0) : (tensor<37x301xf32>, tensor<37x301xf32>) -> tensor<37x301xf32>
    %11 = "quabla.constant"() {value = dense<4.4715e-2> : tensor<f32>} : () -> tensor<f32>
    %12 = "quabla.broadcast_in_dim"(%11) {dims = array<i64>} : (tensor<f32>) -> tensor<37x301xf32>
    %13 = "quabla.mul"(%12, %10) : (tensor<37x301xf32>, tensor<37x301xf32>) -> tensor<37x301xf32>
    %14 = "quabla.add"(%0, %13) : (tensor<37x301xf32>, tensor<37x301xf32>) -> tensor<37x301xf32>
    %15 = "quabla.constant"() {value = dense<7.978846e-1> : tensor<f32>} : () -> tensor<f32>
    %16 = "quabla.broadcast_in_dim"(%15) {dims = array<i64>} : (tensor<f32>) -> tensor<37x301xf32>
    %17 = "quabla.mul"(%16, %14) : (tensor<37x301xf32>, tensor<37x301xf32>) -> tensor<37x301xf32>
    %18 = "quabla.tanh"(%17) : (tensor<37x301xf32>) -> tensor<37x301xf32>
    %20 = "quabla.broadcast_in_dim"(%2) {dims = array<i64>} : (tensor<f32>) -> tensor<37x301xf32>
    %21 = "quabla.add"(%20, %18) : (tensor<37x301xf32>, tensor<37x301xf32>) -> tensor<37x301xf32>
    %22 = "quabla.mul"(%8, %21) : (tensor<37x301xf32>, tensor<37x301xf32>) -> tensor<37x301xf32>
    %23 = "quabla.mul"(%22, %1) : (tensor<37x301xf32>, tensor<37x301xf32>) -> tensor<37x301xf32>
    %24 = "quabla.reduce_sum"(%23) {dims = array<i64: 0, 1>} : (tensor<37x301xf32>) -> tensor<f32>
    %28 = "quabla.mul"(%1, %21) : (tensor<37x301xf32>, tensor<37x301xf32>) -> tensor<37x301xf32>
    %29 = "quabla.mul"(%1, %8) : (tensor<37x301xf32>, tensor<37x301xf32>) -> tensor<37x301xf32>
    %31 = "quabla.constant"() {value = dense<1.0e0> : tensor<37x301xf32>} : () -> tensor<37x301xf32>
    %32 = "quabla.mul"(%18, %18) : (tensor<37x301xf32>, tensor<37x301xf32>) -> tensor<37x301xf32>
    %33 = "quabla.sub"(%31, %32) : (tensor<37x301xf32>, tensor<37x301xf32>) -> tensor<37x301xf32>
    %34 = "quabla.mul"(%29, %33) : (tensor<37x301xf32>, tensor<37x301xf32>) -> tensor<37x301xf32>
    %36 = "quabla.mul"(%34, %16) : (tensor<37x301xf32>, tensor<37x301xf32>) -> tensor<37x301xf32>
    %39 = "quabla.mul"(%36, %12) : (tensor<37x301xf32>, tensor<37x301xf32>) -> tensor<37x301xf32>
    %41 = "quabla.mul"(%39, %0) : (tensor<37x301xf32>, tensor<37x301xf32>) -> tensor<37x301xf32>
    %42 = "quabla.mul"(%39, %9) : (tensor<37x301xf32>, tensor<37x301xf32>) -> tensor<37x301xf32>
    %43 = "quabla.add"(%36, %42) : (tensor<37x301xf32>, tensor<37x301xf32>) -> tensor<37x301xf32>
    %44 = "quabla.mul"(%41, %0) : (tensor<37x301xf32>, tensor<37x301xf32>) -> tensor<37x301xf32>
    %46 = "quabla.add"(%43, %44) : (tensor<37x301xf32>, tensor<37x301xf32>) -> tensor<37x301xf32>
    %47 = "quabla.add"(%46, %44) : (tensor<37x301xf32>, tensor<37x301xf32>) -> tensor<37x301xf32>
    %49 = "quabla.mul"(%28, %7) : (tensor<37x301xf32>, tensor<37x301xf32>) -> tensor<37x301xf32>
    %50 = "quabla.add"(%47, %49) : (tensor<37x301xf32>, tensor<37x301xf32>) -> tensor<37x301xf32>
    return %24, %50 : tensor<f32>, tensor<37x301xf32>
  }
}"#;
    let ctx = quabla_dialect::mlir::new_context();
    let module = quabla_dialect::mlir::parse_and_import(&ctx, &text).unwrap();
    let linalg = lower_for_cpu(&module, &CpuOptions::default()).unwrap().text;
    assert_eq!(linalg.matches("= linalg.generic").count(), 3, "three loops:\n{linalg}");
    assert_eq!(linalg.matches("tensor.empty() : tensor<37x301xf32>").count(), 3, "loss terms and tanh, then the gradient:\n{linalg}");
    let mut rng = Rng(8);
    let ty = TensorType::new(DType::F32, [37, 301]);
    let inputs = [rng.buffer(&ty, -3.0, 3.0), rng.buffer(&ty, -1.0, 1.0)];
    equals_interpreter_on_one_and_two_threads(&module, &inputs, Tol::Rel(1e-5), |_| 1.0, "");
}

#[test]
fn independent_loops_reach_llvm_with_parallel_accesses() {
    // The elementwise loops (tanh(2x + 1) * y, and x + y broadcast along rows) write fresh
    // buffers: each reaches LLVM as a loop with parallel accesses (an access group joined by
    // every load and store of its body), so the vectorizer needs no overlap check and no
    // scalar fallback; the row sum's reduction loop is not marked. Ragged sizes, one and two
    // threads, equal to the interpreter.
    use quabla_dialect::{BinaryOp, LayoutOp, ReduceOp, Reducer};
    let mut rng = Rng(99);
    for (rows, cols) in [(3, 1001), (97, 3001)] {
        let (ty, row) = (TensorType::new(DType::F32, [rows, cols]), TensorType::new(DType::F32, [cols]));
        let mut f = Func::new("main", &[ty.clone(), ty.clone(), row.clone()]);
        let (x, y, r) = (f.params[0], f.params[1], f.params[2]);
        let bin = |f: &mut Func, op, a, b| f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op }), &[a, b], None).unwrap();
        let two = bin(&mut f, BinaryOp::Add, x, x);
        let t = f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Tanh }), &[two], None).unwrap();
        let ty_ = bin(&mut f, BinaryOp::Mul, t, y);
        let rb = f.push1(OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![1], shape: vec![rows, cols] }), &[r], None).unwrap();
        let s = bin(&mut f, BinaryOp::Add, x, rb);
        let sum = f.push1(OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Sum, dims: vec![1] }), &[y], None).unwrap();
        f.outputs = vec![ty_, s, sum];
        let module = Module { funcs: vec![f] };
        for threads in [1, 2] {
            let llvm = executor().lower_to_llvm(&module, &with_threads(threads)).unwrap();
            // The elementwise product flattened into one loop (identity maps only), the
            // broadcast sum a nest of two: three marked back edges.
            assert_eq!(llvm.matches("{loop_annotation = #").count(), 3, "{rows}x{cols}, {threads} threads:\n{llvm}");
            assert!(llvm.contains("parallelAccesses") && llvm.contains("access_groups"), "{llvm}");
        }
        let inputs = [rng.buffer(&ty, -3.0, 3.0), rng.buffer(&ty, -1.0, 1.0), rng.buffer(&row, -1.0, 1.0)];
        // The row sums reassociate (vectorised partial sums of `cols` terms).
        equals_interpreter_on_one_and_two_threads(&module, &inputs, Tol::Rel(1e-5), |k| if k == 2 { (cols as f64).sqrt() } else { 1.0 }, &format!("{rows}x{cols}, "));
    }
}

#[test]
fn the_loops_script_runs_only_where_a_loop_was_tagged() {
    // The executor's pipeline runs @__quabla_loops; its variant for modules with no tagged
    // generic is the same passes without that run (symbol-dce still drops the sequences), and
    // likewise @__quabla_tile's run where no generic is split and no matmul tiled. A row sum
    // tags nothing: its LLVM module has no sequence left and no marked loop.
    use quabla_dialect::{BinaryOp, ReduceOp, Reducer};
    let ty = TensorType::new(DType::F32, [64, 300]);
    let add = one_op_module(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add }), &[ty.clone(), ty.clone()]);
    let cm = lower_for_cpu(&add, &CpuOptions::default()).unwrap();
    let without = cm.pipeline_without(false, true);
    assert!(cm.pipeline.contains("entry-point=__quabla_loops") && without.contains("symbol-dce"), "{}\n{without}", cm.pipeline);
    assert_eq!(cm.pipeline.replace("transform-interpreter{entry-point=__quabla_loops},", ""), without);
    assert_eq!(cm.pipeline_without(true, true), cm.pipeline);
    // Without the tile sequence's run too (no generic split, no tiled matmul).
    let big = TensorType::new(DType::F32, [1024, 1024]);
    let add2 = one_op_module(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add }), &[big.clone(), big]);
    let cm2 = lower_for_cpu(&add2, &CpuOptions { threads: 2, ..CpuOptions::default() }).unwrap();
    assert!(cm2.pipeline.contains("entry-point=__quabla_tile"), "{}", cm2.pipeline);
    assert_eq!(cm2.pipeline.replace("transform-interpreter{entry-point=__quabla_tile},", ""), cm2.pipeline_without(true, false));
    let sum = one_op_module(OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Sum, dims: vec![1] }), &[ty]);
    for threads in [1, 2] {
        let llvm = executor().lower_to_llvm(&sum, &with_threads(threads)).unwrap();
        assert!(!llvm.contains("transform.named_sequence") && !llvm.contains("loop_annotation"), "{threads} threads:\n{llvm}");
    }
}

/// The softmax gradient as qb.value_and_grad traces it, on `rows` rows of 1024 f32 (the loss
/// `sum(softmax(x) * y)` and its gradient in x).
fn softmax_grad_text(rows: i64) -> String {
    r#"module {
  func.func @main(%0: tensor<ROWSx1024xf32>, %1: tensor<ROWSx1024xf32>) -> (tensor<f32>, tensor<ROWSx1024xf32>) {
    %6 = "quabla.reduce_max"(%0) {dims = array<i64: 1>} : (tensor<ROWSx1024xf32>) -> tensor<ROWSxf32>
    %7 = "quabla.reshape"(%6) : (tensor<ROWSxf32>) -> tensor<ROWSx1xf32>
    %8 = "quabla.abs"(%7) : (tensor<ROWSx1xf32>) -> tensor<ROWSx1xf32>
    %10 = "quabla.constant"() {value = dense<0x7F800000> : tensor<ROWSx1xf32>} : () -> tensor<ROWSx1xf32>
    %11 = "quabla.compare"(%8, %10) {direction = "lt"} : (tensor<ROWSx1xf32>, tensor<ROWSx1xf32>) -> tensor<ROWSx1xi1>
    %13 = "quabla.constant"() {value = dense<0.0e0> : tensor<ROWSx1xf32>} : () -> tensor<ROWSx1xf32>
    %14 = "quabla.select"(%11, %7, %13) : (tensor<ROWSx1xi1>, tensor<ROWSx1xf32>, tensor<ROWSx1xf32>) -> tensor<ROWSx1xf32>
    %15 = "quabla.stop_gradient"(%14) : (tensor<ROWSx1xf32>) -> tensor<ROWSx1xf32>
    %16 = "quabla.broadcast_in_dim"(%15) {dims = array<i64: 0, 1>} : (tensor<ROWSx1xf32>) -> tensor<ROWSx1024xf32>
    %17 = "quabla.sub"(%0, %16) : (tensor<ROWSx1024xf32>, tensor<ROWSx1024xf32>) -> tensor<ROWSx1024xf32>
    %18 = "quabla.exp"(%17) : (tensor<ROWSx1024xf32>) -> tensor<ROWSx1024xf32>
    %19 = "quabla.reduce_sum"(%18) {dims = array<i64: 1>} : (tensor<ROWSx1024xf32>) -> tensor<ROWSxf32>
    %20 = "quabla.reshape"(%19) : (tensor<ROWSxf32>) -> tensor<ROWSx1xf32>
    %21 = "quabla.broadcast_in_dim"(%20) {dims = array<i64: 0, 1>} : (tensor<ROWSx1xf32>) -> tensor<ROWSx1024xf32>
    %22 = "quabla.div"(%18, %21) : (tensor<ROWSx1024xf32>, tensor<ROWSx1024xf32>) -> tensor<ROWSx1024xf32>
    %23 = "quabla.mul"(%22, %1) : (tensor<ROWSx1024xf32>, tensor<ROWSx1024xf32>) -> tensor<ROWSx1024xf32>
    %24 = "quabla.reduce_sum"(%23) {dims = array<i64: 0, 1>} : (tensor<ROWSx1024xf32>) -> tensor<f32>
    %28 = "quabla.constant"() {value = dense<1.0e0> : tensor<ROWSx1024xf32>} : () -> tensor<ROWSx1024xf32>
    %29 = "quabla.div"(%28, %21) : (tensor<ROWSx1024xf32>, tensor<ROWSx1024xf32>) -> tensor<ROWSx1024xf32>
    %30 = "quabla.div"(%22, %21) : (tensor<ROWSx1024xf32>, tensor<ROWSx1024xf32>) -> tensor<ROWSx1024xf32>
    %31 = "quabla.neg"(%30) : (tensor<ROWSx1024xf32>) -> tensor<ROWSx1024xf32>
    %32 = "quabla.mul"(%1, %29) : (tensor<ROWSx1024xf32>, tensor<ROWSx1024xf32>) -> tensor<ROWSx1024xf32>
    %33 = "quabla.mul"(%1, %31) : (tensor<ROWSx1024xf32>, tensor<ROWSx1024xf32>) -> tensor<ROWSx1024xf32>
    %34 = "quabla.reduce_sum"(%33) {dims = array<i64: 1>} : (tensor<ROWSx1024xf32>) -> tensor<ROWSxf32>
    %37 = "quabla.broadcast_in_dim"(%34) {dims = array<i64: 0>} : (tensor<ROWSxf32>) -> tensor<ROWSx1024xf32>
    %38 = "quabla.add"(%32, %37) : (tensor<ROWSx1024xf32>, tensor<ROWSx1024xf32>) -> tensor<ROWSx1024xf32>
    %39 = "quabla.mul"(%38, %18) : (tensor<ROWSx1024xf32>, tensor<ROWSx1024xf32>) -> tensor<ROWSx1024xf32>
    return %24, %39 : tensor<f32>, tensor<ROWSx1024xf32>
  }
}"#.replace("ROWS", &rows.to_string())
}

#[test]
fn loops_fused_through_reshapes_still_split_across_threads() {
    // The softmax gradient (as qb.value_and_grad traces it): fusion folds the keepdims
    // reshapes into the row reductions, which then have a third (unit) loop. Each of the five
    // 256 x 1024 loops left (the quotient exp / row sum, read by two consumers, is recomputed
    // by each) must still run on both threads (a split per rank once missed the three-loop
    // ones: 181 -> 232 us per call), and so does the loss's full sum (split in parts: six
    // parallel loops), and equal the interpreter on one and two.
    let text = softmax_grad_text(256);
    let ctx = quabla_dialect::mlir::new_context();
    let module = quabla_dialect::mlir::parse_and_import(&ctx, &text).unwrap();
    let llvm = executor().lower_to_llvm(&module, &with_threads(2)).unwrap();
    assert_eq!(llvm.matches("omp.parallel num_threads").count(), 6, "parallel loops:\n{llvm}");
    let mut rng = Rng(7);
    let ty = TensorType::new(DType::F32, [256, 1024]);
    let inputs = [rng.buffer(&ty, -3.0, 3.0), rng.buffer(&ty, -1.0, 1.0)];
    equals_interpreter_on_one_and_two_threads(&module, &inputs, Tol::Rel(1e-4), |_| 1.0, "");
}

#[test]
fn multi_use_values_within_one_loop_are_computed_once_there() {
    // Threefry's rounds: x0' = x0 + x1, x1' = rotl(x1, r) ^ x0' (each word read by the next
    // two ops, too dear to recompute after a few rounds). Every use ends in the last xor's
    // loop, so the whole chain is one generic (it was one generic per round or two, each
    // writing two full-size words), bit-identical to the interpreter on one and two threads.
    let ty = "tensor<37x301xui32>";
    let mut text = format!("module {{\n  func.func @main(%a: {ty}, %b: {ty}) -> ({ty}) {{\n");
    let (mut x0, mut x1) = ("%a".to_string(), "%b".to_string());
    for (k, r) in [13u32, 15, 26, 6, 17, 29, 16, 24].into_iter().enumerate() {
        let bin = |name: &str, out: &str, x: &str, y: &str| format!("    {out} = \"quabla.{name}\"({x}, {y}) : ({ty}, {ty}) -> {ty}\n");
        text += &format!("    %c{k} = \"quabla.constant\"() {{value = dense<{r}> : {ty}}} : () -> {ty}\n");
        text += &format!("    %d{k} = \"quabla.constant\"() {{value = dense<{}> : {ty}}} : () -> {ty}\n", 32 - r);
        text += &bin("add", &format!("%s{k}"), &x0, &x1);
        text += &bin("shift_left", &format!("%l{k}"), &x1, &format!("%c{k}"));
        text += &bin("shift_right_logical", &format!("%r{k}"), &x1, &format!("%d{k}"));
        text += &bin("or", &format!("%o{k}"), &format!("%l{k}"), &format!("%r{k}"));
        text += &bin("xor", &format!("%x{k}"), &format!("%o{k}"), &format!("%s{k}"));
        (x0, x1) = (format!("%s{k}"), format!("%x{k}"));
    }
    text += &format!("    %out = \"quabla.xor\"({x0}, {x1}) : ({ty}, {ty}) -> {ty}\n    return %out : {ty}\n  }}\n}}\n");
    let ctx = quabla_dialect::mlir::new_context();
    let module = quabla_dialect::mlir::parse_and_import(&ctx, &text).unwrap();
    let linalg = lower_for_cpu(&module, &CpuOptions::default()).unwrap().text;
    assert_eq!(linalg.matches("= linalg.generic").count(), 1, "one loop:\n{linalg}");
    assert_eq!(linalg.matches("tensor.empty() : tensor<37x301xi32>").count(), 1, "one full-size result:\n{linalg}");
    let mut rng = Rng(9);
    let t = TensorType::new(DType::U32, [37, 301]);
    let inputs = [rng.buffer(&t, 0.0, 4e9), rng.buffer(&t, 0.0, 4e9)];
    equals_interpreter_on_one_and_two_threads(&module, &inputs, Tol::Exact, |_| 1.0, "");
}

#[test]
fn large_transposes_call_the_runtime_and_match_the_interpreter() {
    // Batched 2-D transposes of 4- and 8-byte elements from 2^14 elements call the runtime's
    // transposing copy (quabla_lowering::linalg::layout::runtime_transpose), written into the
    // output buffer when the transpose is the output (viewed with a unit batch dim, or as
    // [n, c, h*w] of NCHW), or into a fresh buffer when it feeds another op: exact on one and
    // two threads (batches of small matrices split between them). A reversal of three dims is
    // no single swap: the generic.
    let mut rng = Rng(85);
    let mk = |d: DType, s: &[i64], perm: &[i64], then_add: bool| {
        let t = TensorType::new(d, s.to_vec());
        let mut f = Func::new("main", std::slice::from_ref(&t));
        let x = f.params[0];
        let mut y = f.push1(OpKind::Layout(LayoutOp::Transpose { perm: perm.to_vec() }), &[x], None).unwrap();
        if then_add {
            y = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add }), &[y, y], None).unwrap();
        }
        f.outputs = vec![y];
        (Module { funcs: vec![f] }, t)
    };
    for (d, s, perm, then_add, runtime) in [
        (DType::F32, vec![300i64, 200i64], vec![1i64, 0i64], false, true),
        (DType::I32, vec![4, 30, 40, 16], vec![0, 3, 1, 2], false, true),
        (DType::F64, vec![8, 64, 40], vec![0, 2, 1], true, true),
        (DType::I64, vec![130, 150], vec![1, 0], true, true),
        (DType::U32, vec![3, 2, 100, 90], vec![0, 1, 3, 2], false, true),
        (DType::F32, vec![40, 30, 20], vec![2, 1, 0], false, false),
        (DType::F32, vec![20, 30], vec![1, 0], false, false),
        // Batches of small matrices split between the threads (runtime layout_kernels).
        (DType::F32, vec![64, 64, 70], vec![0, 2, 1], false, true),
        (DType::F64, vec![33, 100, 90], vec![0, 2, 1], false, true),
        // Ragged edges of the 8 x 8 / 4 x 4 blocks (kernels gemm transpose_f32 / _f64).
        (DType::F32, vec![1003, 517], vec![1, 0], false, true),
        (DType::F64, vec![517, 1003], vec![1, 0], false, true),
        // An output whose dims do not nest with the kernel's [1, 64, 1024] view: through the
        // flat buffer (layout::result_buffer).
        (DType::F32, vec![32, 32, 64], vec![2, 0, 1], false, true),
        // Narrow sides (layout::RUNTIME_TRANSPOSE_MIN_SIDE): 8 and 9 take the kernel (one
        // 8-wide block and a ragged edge), 3 the generic.
        (DType::F32, vec![20000, 9], vec![1, 0], false, true),
        (DType::F64, vec![8, 9001], vec![1, 0], false, true),
        (DType::F32, vec![30000, 3], vec![1, 0], false, false),
    ] {
        let (m, t) = mk(d, &s, &perm, then_add);
        let text = lower_for_cpu(&m, &CpuOptions::default()).unwrap().text;
        assert_eq!(text.contains("call @quabla_transpose_"), runtime, "{d} {s:?} by {perm:?}:\n{text}");
        // The output itself receives the result (no buffer copied into it).
        assert_eq!(text.contains("memref.alloc"), runtime && then_add, "{d} {s:?} by {perm:?}:\n{text}");
        let inputs = [rng.buffer(&t, -100.0, 100.0)];
        equals_interpreter_on_one_and_two_threads(&m, &inputs, Tol::Exact, |_| 1.0, &format!("{d} {s:?} by {perm:?} on "));
    }
}

#[test]
fn branch_results_that_are_outputs_are_computed_into_the_output_buffer() {
    // quabla_lowering control `output_dests`: each branch materializes a returned result into
    // the output buffer (one `to_tensor ... restrict writable` before the `scf.if`), where the
    // branch wrote a fresh tensor copied out after it. Both branches against the interpreter
    // are in tests/lit/control/if_outputs.mlir.
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/lit/control/if_outputs.mlir")).unwrap();
    let ctx = quabla_dialect::mlir::new_context();
    let m = quabla_dialect::mlir::parse_and_import(&ctx, &text).unwrap();
    let lowered = quabla_lowering::lower_for_cpu(&m, &quabla_lowering::CpuOptions::default()).unwrap().text;
    let dest = lowered.lines().find(|l| l.contains("bufferization.to_tensor %out0 restrict writable")).unwrap_or_else(|| panic!("no destination:\n{lowered}"));
    let d = dest.trim().split(' ').next().unwrap();
    assert_eq!(lowered.matches(&format!("in {d} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>")).count(), 2, "{lowered}");
    assert!(!lowered.contains("to_tensor %out1"), "{lowered}");
}

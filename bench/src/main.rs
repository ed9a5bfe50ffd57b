//! Core benchmarks (never timed tests). Prints one JSON object per workload; per-call times
//! are timeit-style (each repeat runs `number` calls back to back, `number` chosen so that a
//! repeat takes >= 25 ms; min and median over the repeats), as JAX's anchors measure them, so
//! bench/compare_jax.py can run JAX's identical workloads in the same run and print ratios.
//!
//! Workloads (`quabla-bench [name ...]`, all by default):
//! * `pinn`: the README PINN value_and_grad step (f64, 8 points): first call (transform
//!   expansion + canonicalize + compile + run, in a process that compiled nothing before) and
//!   a second compile of the same program in the warm process, then per-call time;
//! * `matmul`: 1024^3 f32 and f64 dot_general (GFLOP/s);
//! * `ew`: tanh(2x + 1) * exp(-x) on 1e6 f32 (GB/s of input + output);
//! * `dispatch`: x + 1 on an f32 scalar (per-call overhead of an executable);
//! * `mlp`: compile time and per-call time of the hand-written MLP forward+backward
//!   (examples/mlp.mlir);
//! * `bmm`: 16 batched 256^3 f32 and f64 products (not in the default set);
//! * `axpb`: x * 2 + 1 on 1e6 f32, the memory-bound reference for `ew` (not in the default set);
//! * `peak`: the f32 FMA peak of one core and of all cores (independent vector FMA chains),
//!   the yardstick for the matmul figures;
//! * `mm=<n>`: n^3 f32 and f64 matmuls (not in the default set).
//!
//! `QUABLA_BENCH_OPT=<0-3>` overrides the LLVM level, `QUABLA_BENCH_NOVEC=1` turns the
//! vectorizing paths off (polynomial kernels, tiled matmuls), for comparisons.
use std::sync::Arc;
use std::time::Instant;

use quabla_dialect::{BinaryOp, ConstantOp, DType, DotDims, DotOp, ElementwiseOp, Func, Literal, Module, OpKind, TensorType, UnaryOp};
use quabla_runtime::{Buffer, CompileOptions, CpuExecutor, Executable, Executor};

/// Compile options: the defaults, with the environment overrides of the module docs.
fn opts() -> CompileOptions {
    let mut o = CompileOptions::default();
    if let Some(l) = std::env::var("QUABLA_BENCH_OPT").ok().and_then(|v| v.parse().ok()) {
        o.opt_level = l;
    }
    if std::env::var_os("QUABLA_BENCH_NOVEC").is_some() {
        o.vectorize = false;
    }
    o
}

/// Per-call timing in the manner of timeit: (min, median, number, repeats) in seconds.
fn timeit(mut call: impl FnMut(), repeats: usize) -> (f64, f64, usize, usize) {
    for _ in 0..3 {
        call();
    }
    let mut number = 1usize;
    let mut dt;
    loop {
        let t = Instant::now();
        for _ in 0..number {
            call();
        }
        dt = t.elapsed().as_secs_f64();
        if dt >= 0.025 || number >= 1 << 20 {
            break;
        }
        number *= if dt > 0.025 / 8.0 { 2 } else { 8 };
    }
    // At most ~6 s per workload.
    let repeats = repeats.min((6.0 / dt.max(1e-9)) as usize).max(5);
    let mut v: Vec<f64> = (0..repeats)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..number {
                call();
            }
            t.elapsed().as_secs_f64() / number as f64
        })
        .collect();
    v.sort_by(|a, b| a.total_cmp(b));
    (v[0], v[v.len() / 2], number, repeats)
}

/// Compiles `m` and runs it once on `inputs`; returns the executable and the elapsed time.
fn first_call(exe: &CpuExecutor, m: &Module, inputs: &[&Buffer]) -> (Arc<dyn Executable>, f64) {
    let t = Instant::now();
    let e = exe.compile(m, "main", &opts()).unwrap();
    e.run(inputs).unwrap();
    (e, t.elapsed().as_secs_f64())
}

/// Prints the JSON line of a workload; `extra` is more `"key": value` pairs.
fn report(name: &str, first: f64, t: (f64, f64, usize, usize), extra: &str) {
    let (min, med, number, repeats) = t;
    println!("{{\"workload\": \"{name}\", \"first_call_s\": {first:.6e}, \"min_s\": {min:.6e}, \"median_s\": {med:.6e}, \"number\": {number}, \"repeats\": {repeats}{extra}}}");
}

/// Deterministic values in [-1, 1) (a sine of the index: cheap, not periodic in the tensor).
fn values(n: usize) -> Vec<f64> {
    (0..n).map(|i| ((i as f64) * 0.7548776662).sin()).collect()
}

fn pinn(exe: &CpuExecutor) {
    let n = 8;
    let w = Buffer::from_f64s(TensorType::new(DType::F64, []), &[2.5]).unwrap();
    let xs: Vec<f64> = (0..n).map(|i| 0.05 + 0.9 * i as f64 / (n - 1) as f64).collect();
    let x = Buffer::from_f64s(TensorType::new(DType::F64, [n]), &xs).unwrap();
    let build = || quabla_tests::pinn::compile_ready(quabla_tests::pinn::pinn_module(n));
    let t = Instant::now();
    let m = build();
    let (e, compile) = first_call(exe, &m, &[&w, &x]);
    let first = t.elapsed().as_secs_f64();
    let _ = compile;
    // The same program again, in a process whose context and JIT are warm.
    let t = Instant::now();
    let m2 = build();
    let _ = first_call(exe, &m2, &[&w, &x]);
    let warm = t.elapsed().as_secs_f64();
    let r = timeit(
        || {
            e.run(&[&w, &x]).unwrap();
        },
        40,
    );
    report("pinn_step_f64", first, r, &format!(", \"first_call_warm_s\": {warm:.6e}, \"ops\": {}", m.func("main").unwrap().ops.len()));
}

fn matmul(exe: &CpuExecutor, d: DType, n: i64) {
    let t = TensorType::new(d, [n, n]);
    let mut f = Func::new("main", &[t.clone(), t.clone()]);
    let (a, b) = (f.params[0], f.params[1]);
    f.outputs = vec![f.push1(OpKind::Dot(DotOp::DotGeneral { dims: DotDims::matmul() }), &[a, b], None).unwrap()];
    let m = Module { funcs: vec![f] };
    let x = Buffer::from_f64s(t.clone(), &values((n * n) as usize)).unwrap();
    let y = Buffer::from_f64s(t.clone(), &values((n * n) as usize).iter().map(|v| 0.5 - v).collect::<Vec<_>>()).unwrap();
    let (e, first) = first_call(exe, &m, &[&x, &y]);
    let r = timeit(
        || {
            e.run(&[&x, &y]).unwrap();
        },
        20,
    );
    let flops = 2.0 * (n as f64).powi(3);
    report(&format!("matmul_{n}_{d}"), first, r, &format!(", \"gflops_at_min\": {:.2}, \"gflops_at_median\": {:.2}", flops / r.0 / 1e9, flops / r.1 / 1e9));
}

/// A batch of `b` n x n products (dot_general with one batch dim).
fn batched_matmul(exe: &CpuExecutor, d: DType, b: i64, n: i64) {
    let t = TensorType::new(d, [b, n, n]);
    let mut f = Func::new("main", &[t.clone(), t.clone()]);
    let (x, y) = (f.params[0], f.params[1]);
    let dims = DotDims { lhs_batching_dimensions: vec![0], rhs_batching_dimensions: vec![0], lhs_contracting_dimensions: vec![2], rhs_contracting_dimensions: vec![1] };
    f.outputs = vec![f.push1(OpKind::Dot(DotOp::DotGeneral { dims }), &[x, y], None).unwrap()];
    let m = Module { funcs: vec![f] };
    let xb = Buffer::from_f64s(t.clone(), &values((b * n * n) as usize)).unwrap();
    let (e, first) = first_call(exe, &m, &[&xb, &xb]);
    let r = timeit(
        || {
            e.run(&[&xb, &xb]).unwrap();
        },
        20,
    );
    let flops = 2.0 * b as f64 * (n as f64).powi(3);
    report(&format!("batch_matmul_{b}x{n}_{d}"), first, r, &format!(", \"gflops_at_min\": {:.2}, \"gflops_at_median\": {:.2}", flops / r.0 / 1e9, flops / r.1 / 1e9));
}

fn elementwise(exe: &CpuExecutor) {
    let n = 1_000_000i64;
    let t = TensorType::new(DType::F32, [n]);
    let mut f = Func::new("main", std::slice::from_ref(&t));
    let x = f.params[0];
    let c = |f: &mut Func, v: f64| f.push1(OpKind::Constant(ConstantOp::Constant { value: Literal::splat(t.clone(), v) }), &[], None).unwrap();
    let two = c(&mut f, 2.0);
    let one = c(&mut f, 1.0);
    let a = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), &[x, two], None).unwrap();
    let b = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add }), &[a, one], None).unwrap();
    let th = f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Tanh }), &[b], None).unwrap();
    let nx = f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Neg }), &[x], None).unwrap();
    let ex = f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Exp }), &[nx], None).unwrap();
    f.outputs = vec![f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), &[th, ex], None).unwrap()];
    let m = Module { funcs: vec![f] };
    let xb = Buffer::from_f64s(t.clone(), &values(n as usize).iter().map(|v| 2.0 * v).collect::<Vec<_>>()).unwrap();
    let (e, first) = first_call(exe, &m, &[&xb]);
    let r = timeit(
        || {
            e.run(&[&xb]).unwrap();
        },
        40,
    );
    let bytes = 2.0 * 4.0 * n as f64;
    report("elementwise_1e6_f32", first, r, &format!(", \"gbs_at_min\": {:.2}, \"gbs_at_median\": {:.2}", bytes / r.0 / 1e9, bytes / r.1 / 1e9));
}

/// x * 2 + 1 on 1e6 f32 (memory-bound reference for `ew`).
fn ew_simple(exe: &CpuExecutor) {
    let n = 1_000_000i64;
    let t = TensorType::new(DType::F32, [n]);
    let mut f = Func::new("main", std::slice::from_ref(&t));
    let x = f.params[0];
    let two = f.push1(OpKind::Constant(ConstantOp::Constant { value: Literal::splat(t.clone(), 2.0) }), &[], None).unwrap();
    let one = f.push1(OpKind::Constant(ConstantOp::Constant { value: Literal::splat(t.clone(), 1.0) }), &[], None).unwrap();
    let a = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), &[x, two], None).unwrap();
    f.outputs = vec![f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add }), &[a, one], None).unwrap()];
    let m = Module { funcs: vec![f] };
    let xb = Buffer::from_f64s(t.clone(), &values(n as usize)).unwrap();
    let (e, first) = first_call(exe, &m, &[&xb]);
    let r = timeit(
        || {
            e.run(&[&xb]).unwrap();
        },
        40,
    );
    let bytes = 2.0 * 4.0 * n as f64;
    report("axpb_1e6_f32", first, r, &format!(", \"gbs_at_min\": {:.2}", bytes / r.0 / 1e9));
}

fn dispatch(exe: &CpuExecutor) {
    let t = TensorType::new(DType::F32, []);
    let mut f = Func::new("main", std::slice::from_ref(&t));
    let x = f.params[0];
    let one = f.push1(OpKind::Constant(ConstantOp::Constant { value: Literal::splat(t.clone(), 1.0) }), &[], None).unwrap();
    f.outputs = vec![f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add }), &[x, one], None).unwrap()];
    let m = Module { funcs: vec![f] };
    let xb = Buffer::from_f64s(t.clone(), &[1.0]).unwrap();
    let (e, first) = first_call(exe, &m, &[&xb]);
    let r = timeit(
        || {
            e.run(&[&xb]).unwrap();
        },
        40,
    );
    report("dispatch_f32_scalar", first, r, "");
}

fn mlp_compile(exe: &CpuExecutor) {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/mlp.mlir")).unwrap();
    let ctx = quabla_dialect::mlir::new_context();
    let mut v: Vec<f64> = (0..10)
        .map(|_| {
            let t = Instant::now();
            let mut m = quabla_dialect::mlir::parse_and_import(&ctx, &text).unwrap();
            quabla_passes::canonicalize(&mut m);
            exe.compile(&m, "main", &opts()).unwrap();
            t.elapsed().as_secs_f64()
        })
        .collect();
    v.sort_by(|a, b| a.total_cmp(b));
    let mut m = quabla_dialect::mlir::parse_and_import(&ctx, &text).unwrap();
    quabla_passes::canonicalize(&mut m);
    let f = m.func("main").unwrap();
    let inputs: Vec<Buffer> = f.param_types().iter().map(|t| Buffer::from_f64s(t.clone(), &values(t.num_elements())).unwrap()).collect();
    let refs: Vec<&Buffer> = inputs.iter().collect();
    let e = exe.compile(&m, "main", &opts()).unwrap();
    let r = timeit(
        || {
            e.run(&refs).unwrap();
        },
        40,
    );
    println!(
        "{{\"workload\": \"mlp_fwd_bwd\", \"compile_min_s\": {:.6e}, \"compile_median_s\": {:.6e}, \"min_s\": {:.6e}, \"median_s\": {:.6e}, \"number\": {}, \"repeats\": {}}}",
        v[0], v[5], r.0, r.1, r.2, r.3
    );
}

/// The f32 FMA peak of one core and of every core together: independent chains of vector FMAs,
/// as many as fill the register file with the two constant operands beside them (16 chains of
/// 512-bit FMAs on AVX-512; 12 of 256-bit on AVX2, whose 16 registers cannot hold 16 chains
/// and their constants: that spilling version measured 54 GFLOP/s against 80-100 on a Zen 3
/// core). Twelve chains cover the FMA units' latency x throughput (4 cycles x 2 units).
#[cfg(target_arch = "x86_64")]
fn peak() {
    use std::arch::x86_64::*;
    #[target_feature(enable = "avx512f")]
    unsafe fn run512(n: usize) -> f32 {
        let b = _mm512_set1_ps(1.000_000_1);
        let c = _mm512_set1_ps(1e-7);
        let mut a = [_mm512_set1_ps(0.5); 16];
        for _ in 0..n {
            for x in a.iter_mut() {
                *x = _mm512_fmadd_ps(*x, b, c);
            }
        }
        a.iter().map(|x| _mm512_reduce_add_ps(*x)).sum()
    }
    #[target_feature(enable = "avx2,fma")]
    unsafe fn run256(n: usize) -> f32 {
        let b = _mm256_set1_ps(1.000_000_1);
        let c = _mm256_set1_ps(1e-7);
        let mut a = [_mm256_set1_ps(0.5); 12];
        for _ in 0..n {
            for x in a.iter_mut() {
                *x = _mm256_fmadd_ps(*x, b, c);
            }
        }
        let mut s = [0f32; 8];
        _mm256_storeu_ps(s.as_mut_ptr(), a.iter().fold(_mm256_setzero_ps(), |p, x| _mm256_add_ps(p, *x)));
        s.iter().sum()
    }
    let (flops_per_iter, f): (f64, unsafe fn(usize) -> f32) = if is_x86_feature_detected!("avx512f") {
        (16.0 * 16.0 * 2.0, run512)
    } else if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
        (12.0 * 8.0 * 2.0, run256)
    } else {
        return;
    };
    let n = 2_000_000;
    let flops = n as f64 * flops_per_iter;
    // SAFETY: the required CPU features were detected above.
    let one = || std::hint::black_box(unsafe { f(n) });
    let r = timeit(
        || {
            one();
        },
        10,
    );
    println!("{{\"workload\": \"fma_peak_f32\", \"threads\": 1, \"min_s\": {:.6e}, \"median_s\": {:.6e}, \"gflops_at_min\": {:.2}, \"gflops_at_median\": {:.2}}}", r.0, r.1, flops / r.0 / 1e9, flops / r.1 / 1e9);
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    if cores > 1 {
        // Every core runs the same chains at once; a repeat ends when the slowest does.
        let r = timeit(|| std::thread::scope(|s| (0..cores).for_each(|_| drop(s.spawn(one)))), 10);
        let all = flops * cores as f64;
        println!("{{\"workload\": \"fma_peak_f32\", \"threads\": {cores}, \"min_s\": {:.6e}, \"median_s\": {:.6e}, \"gflops_at_min\": {:.2}, \"gflops_at_median\": {:.2}}}", r.0, r.1, all / r.0 / 1e9, all / r.1 / 1e9);
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn peak() {}

fn main() {
    let which: Vec<String> = std::env::args().skip(1).collect();
    let want = |k: &str| which.is_empty() || which.iter().any(|w| w == k);
    let exe = CpuExecutor::new();
    if want("pinn") {
        pinn(&exe);
    }
    if want("peak") {
        peak();
    }
    if want("matmul") {
        matmul(&exe, DType::F32, 1024);
        matmul(&exe, DType::F64, 1024);
    }
    if want("ew") {
        elementwise(&exe);
    }
    if which.iter().any(|w| w == "bmm") {
        batched_matmul(&exe, DType::F32, 16, 256);
        batched_matmul(&exe, DType::F64, 16, 256);
    }
    if which.iter().any(|w| w == "axpb") {
        ew_simple(&exe);
    }
    if want("dispatch") {
        dispatch(&exe);
    }
    if want("mlp") {
        mlp_compile(&exe);
    }
    for w in &which {
        if let Some(n) = w.strip_prefix("mm=") {
            let n: i64 = n.parse().expect("mm=<size>");
            matmul(&exe, DType::F32, n);
            matmul(&exe, DType::F64, n);
        }
    }
}

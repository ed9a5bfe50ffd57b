//! Core benchmarks (never timed tests). Prints one JSON object per workload with min and
//! median over repetitions; bench/compare_jax.py runs JAX's identical workloads in the same
//! process tree and reports ratios.
//!
//! Workloads: compile time of the hand-written MLP forward+backward (examples/mlp.mlir);
//! GFLOP/s of f32 and f64 1024^3 dot_general; GB/s of the fused chain tanh(2x+1)*exp(-x) on
//! 1e6 f32; the README PINN value_and_grad step (per-call time) and its first call
//! (transform expansion + canonicalize + compile).
use std::time::Instant;

use quabla_dialect::{BinaryOp, DType, DotDims, Func, Literal, Module, OpKind, TensorType, UnaryOp};
use quabla_runtime::{Buffer, CompileOptions, CpuExecutor, Executor};

fn stats(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (v[0], v[v.len() / 2])
}

fn report(name: &str, unit: &str, samples: Vec<f64>, extra: &str) {
    let (min, med) = stats(samples);
    println!("{{\"workload\": \"{name}\", \"unit\": \"{unit}\", \"min\": {min:.6e}, \"median\": {med:.6e}{extra}}}");
}

fn time<F: FnMut()>(reps: usize, mut f: F) -> Vec<f64> {
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect()
}

fn mlp_compile(exe: &CpuExecutor) {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/mlp.mlir")).unwrap();
    let ctx = quabla_dialect::mlir::new_context();
    let samples = time(10, || {
        let mut m = quabla_dialect::mlir::parse_and_import(&ctx, &text).unwrap();
        quabla_passes::canonicalize(&mut m);
        exe.compile(&m, "main", &CompileOptions::default()).unwrap();
    });
    report("mlp_fwd_bwd_compile", "s", samples, "");
}

fn matmul(exe: &CpuExecutor, d: DType, n: i64) {
    let t = TensorType::new(d, [n, n]);
    let mut f = Func::new("main", &[t.clone(), t.clone()]);
    let (a, b) = (f.params[0], f.params[1]);
    f.outputs = vec![f.push1(OpKind::DotGeneral { dims: DotDims::matmul() }, &[a, b], None).unwrap()];
    let m = Module { funcs: vec![f] };
    let t0 = Instant::now();
    let e = exe.compile(&m, "main", &CompileOptions::default()).unwrap();
    let compile = t0.elapsed().as_secs_f64();
    let x = Buffer::from_literal(&Literal::splat(t.clone(), 0.5));
    e.run(&[&x, &x]).unwrap();
    let s = time(3, || {
        e.run(&[&x, &x]).unwrap();
    });
    let flops = 2.0 * (n as f64).powi(3);
    let g: Vec<f64> = s.iter().map(|t| flops / t / 1e9).collect();
    let (min_t, _) = stats(s);
    report(&format!("matmul_{n}_{d}"), "s", vec![min_t], &format!(", \"gflops_best\": {:.2}, \"gflops\": {:?}, \"compile_s\": {compile:.3}", flops / min_t / 1e9, g));
}

fn elementwise(exe: &CpuExecutor) {
    let n = 1_000_000i64;
    let t = TensorType::new(DType::F32, [n]);
    let mut f = Func::new("main", std::slice::from_ref(&t));
    let x = f.params[0];
    let c = |f: &mut Func, v: f64| f.push1(OpKind::Constant { value: Literal::splat(t.clone(), v) }, &[], None).unwrap();
    let two = c(&mut f, 2.0);
    let one = c(&mut f, 1.0);
    let a = f.push1(OpKind::Binary(BinaryOp::Mul), &[two, x], None).unwrap();
    let b = f.push1(OpKind::Binary(BinaryOp::Add), &[a, one], None).unwrap();
    let th = f.push1(OpKind::Unary(UnaryOp::Tanh), &[b], None).unwrap();
    let nx = f.push1(OpKind::Unary(UnaryOp::Neg), &[x], None).unwrap();
    let ex = f.push1(OpKind::Unary(UnaryOp::Exp), &[nx], None).unwrap();
    f.outputs = vec![f.push1(OpKind::Binary(BinaryOp::Mul), &[th, ex], None).unwrap()];
    let m = Module { funcs: vec![f] };
    let e = exe.compile(&m, "main", &CompileOptions::default()).unwrap();
    let xb = Buffer::from_literal(&Literal::splat(t.clone(), 0.25));
    e.run(&[&xb]).unwrap();
    let s = time(20, || {
        e.run(&[&xb]).unwrap();
    });
    let bytes = 2.0 * 4.0 * n as f64;
    let (min_t, _) = stats(s.clone());
    report("ew_chain_1e6_f32", "s", s, &format!(", \"gbps_best\": {:.2}", bytes / min_t / 1e9));
}

fn pinn(exe: &CpuExecutor) {
    let n = 8;
    let t0 = Instant::now();
    let m = quabla_tests::pinn::compile_ready(quabla_tests::pinn::pinn_module(n));
    let e = exe.compile(&m, "main", &CompileOptions::default()).unwrap();
    let first = t0.elapsed().as_secs_f64();
    let w = Buffer::from_f64s(TensorType::new(DType::F64, []), &[2.5]).unwrap();
    let xs: Vec<f64> = (0..n).map(|i| 0.05 + 0.9 * i as f64 / (n - 1) as f64).collect();
    let x = Buffer::from_f64s(TensorType::new(DType::F64, [n]), &xs).unwrap();
    for _ in 0..1000 {
        e.run(&[&w, &x]).unwrap();
    }
    // Per-call time: batches of 1000 calls, divided.
    let s: Vec<f64> = time(50, || {
        for _ in 0..1000 {
            e.run(&[&w, &x]).unwrap();
        }
    })
    .into_iter()
    .map(|t| t / 1000.0)
    .collect();
    report("pinn_step_rust", "s", s, &format!(", \"first_call_s\": {first:.4}, \"ops\": {}", m.func("main").unwrap().ops.len()));
}

fn main() {
    let which: Vec<String> = std::env::args().skip(1).collect();
    let want = |k: &str| which.is_empty() || which.iter().any(|w| w == k);
    let exe = CpuExecutor::new();
    if want("pinn") {
        pinn(&exe);
    }
    if want("mlp") {
        mlp_compile(&exe);
    }
    if want("ew") {
        elementwise(&exe);
    }
    if want("matmul") {
        matmul(&exe, DType::F32, 1024);
        matmul(&exe, DType::F64, 1024);
    }
    for w in &which {
        if let Some(n) = w.strip_prefix("mm=") {
            let n: i64 = n.parse().expect("mm=<size>");
            matmul(&exe, DType::F32, n);
            matmul(&exe, DType::F64, n);
        }
    }
}

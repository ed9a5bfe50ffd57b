//! No leak: an executable run 100,000 times keeps resident memory flat (outputs are
//! destination-passed; nothing is allocated by the compiled code that outlives a call).
use quabla_dialect::{BinaryOp, DType, ElementwiseOp, Func, Module, OpKind, ReduceOp, Reducer, TensorType, UnaryOp};
use quabla_runtime::{Buffer, CompileOptions, Executor};

use crate::executor;

fn rss_kib() -> u64 {
    let s = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = s.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4
}

#[test]
fn executable_does_not_leak() {
    let ty = TensorType::new(DType::F32, [64]);
    let mut f = Func::new("main", &[ty.clone(), ty.clone()]);
    let a = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), &[f.params[0], f.params[1]], None).unwrap();
    let b = f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Tanh }), &[a], None).unwrap();
    // A reduction and a transpose create intermediate buffers inside the compiled code.
    let s = f.push1(OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Sum, dims: vec![0] }), &[b], None).unwrap();
    f.outputs = vec![b, s, f.params[0]];
    let m = Module { funcs: vec![f] };
    let exe = executor().compile(&m, "main", &CompileOptions::default()).unwrap();
    let x = Buffer::from_slice(&[64], &(0..64).map(|i| i as f32 * 0.01).collect::<Vec<_>>()).unwrap();
    let y = Buffer::from_slice(&[64], &[0.5f32; 64]).unwrap();
    for _ in 0..10_000 {
        exe.run(&[&x, &y]).unwrap();
    }
    let before = rss_kib();
    for _ in 0..100_000 {
        let out = exe.run(&[&x, &y]).unwrap();
        assert_eq!(out.len(), 3);
    }
    let after = rss_kib();
    assert!(after <= before + 2048, "resident memory grew from {before} KiB to {after} KiB over 100,000 calls");
}

#[test]
fn programs_linked_and_freed_on_two_threads_stay_apart() {
    // Every program is linked into the process's one JIT in a JITDylib of its own, reused once
    // the program is freed (runtime/csrc/objload.c). Two threads compile, run and drop
    // programs that all define the same entry names, while a few stay alive: each call must
    // run its own code (x * k + t, k and t different per program).
    let keep: Vec<(f32, f32, std::sync::Arc<dyn quabla_runtime::Executable>, usize)> = Vec::new();
    let keep = std::sync::Mutex::new(keep);
    std::thread::scope(|s| {
        for t in 0..2usize {
            let keep = &keep;
            s.spawn(move || {
                for i in 0..24usize {
                    let n = 3 + 2 * i + t;
                    let ty = TensorType::new(DType::F32, [n as i64]);
                    let (k, c) = ((i + 1) as f32, t as f32 + 0.5);
                    let mut f = Func::new("main", &[ty.clone()]);
                    let kk = f.push1(OpKind::Constant(quabla_dialect::ConstantOp::Constant { value: quabla_dialect::Literal::splat(ty.clone(), k as f64) }), &[], None).unwrap();
                    let cc = f.push1(OpKind::Constant(quabla_dialect::ConstantOp::Constant { value: quabla_dialect::Literal::splat(ty.clone(), c as f64) }), &[], None).unwrap();
                    let a = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), &[f.params[0], kk], None).unwrap();
                    let b = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add }), &[a, cc], None).unwrap();
                    f.outputs = vec![b];
                    let m = Module { funcs: vec![f] };
                    let exe = executor().compile(&m, "main", &CompileOptions::default()).unwrap();
                    let xs: Vec<f32> = (0..n).map(|j| j as f32).collect();
                    let x = Buffer::from_slice(&[n as i64], &xs).unwrap();
                    let got = exe.run(&[&x]).unwrap().remove(0).to_f64_vec();
                    for (j, g) in got.iter().enumerate() {
                        assert_eq!(*g, (j as f32 * k + c) as f64, "thread {t} program {i} element {j}");
                    }
                    if i % 8 == 0 {
                        keep.lock().unwrap().push((k, c, exe, n));
                    }
                }
            });
        }
    });
    // The programs kept alive still run their own code after the others were freed.
    for (k, c, exe, n) in keep.into_inner().unwrap() {
        let x = Buffer::from_slice(&[n as i64], &(0..n).map(|j| j as f32).collect::<Vec<_>>()).unwrap();
        let got = exe.run(&[&x]).unwrap().remove(0).to_f64_vec();
        for (j, g) in got.iter().enumerate() {
            assert_eq!(*g, (j as f32 * k + c) as f64, "kept program x * {k} + {c}, element {j}");
        }
    }
}

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

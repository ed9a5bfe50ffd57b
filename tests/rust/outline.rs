//! Long programs: the CPU executor outlines a function longer than its chunk size into
//! private chunk functions (quabla-outline) before lowering; the chunked program computes what
//! the interpreter computes on the original one, and the chunks stay out of LLVM's inliner.
use quabla_dialect::{BinaryOp, DType, DotDims, DotOp, ElementwiseOp, Func, LayoutOp, Module, OpKind, ReduceOp, Reducer, TensorType, UnaryOp};
use quabla_passes::outline::{func_weight, outline, DEFAULT_MAX_OPS};
use quabla_runtime::{interp, CompileOptions, Executor};
use quabla_tests::{compare, Rng, Tol};

use crate::executor;

/// `main(x, w)` on 4x4 f64: `n` rounds of elementwise ops, a matmul with `w` every 50 ops and a
/// row sum broadcast back every 70, with the first round's value used again at the end (values
/// cross many chunk boundaries), returning the chain's end, that value and a row sum.
fn long_program(n: usize) -> Module {
    let t = TensorType::new(DType::F64, [4, 4]);
    let mut f = Func::new("main", &[t.clone(), t]);
    let (mut x, w) = (f.params[0], f.params[1]);
    let un = |op| OpKind::Elementwise(ElementwiseOp::Unary { op });
    let bin = |op| OpKind::Elementwise(ElementwiseOp::Binary { op });
    let first = f.push1(un(UnaryOp::Tanh), &[x], None).unwrap();
    x = first;
    let mut rows = x;
    for i in 0..n {
        x = match i % 5 {
            0 => f.push1(un(UnaryOp::Sin), &[x], None).unwrap(),
            1 => f.push1(bin(BinaryOp::Mul), &[x, w], None).unwrap(),
            2 => f.push1(un(UnaryOp::Tanh), &[x], None).unwrap(),
            3 => f.push1(bin(BinaryOp::Add), &[x, first], None).unwrap(),
            _ => f.push1(bin(BinaryOp::Max), &[x, w], None).unwrap(),
        };
        if i % 50 == 49 {
            x = f.push1(OpKind::Dot(DotOp::DotGeneral { dims: DotDims::matmul() }), &[x, w], None).unwrap();
            x = f.push1(un(UnaryOp::Tanh), &[x], None).unwrap();
        }
        if i % 70 == 69 {
            let s = f.push1(OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Sum, dims: vec![1] }), &[x], None).unwrap();
            rows = f.push1(OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![0], shape: vec![4, 4] }), &[s], None).unwrap();
            x = f.push1(bin(BinaryOp::Sub), &[x, rows], None).unwrap();
            x = f.push1(un(UnaryOp::Tanh), &[x], None).unwrap();
        }
    }
    f.outputs = vec![x, first, rows];
    let m = Module { funcs: vec![f] };
    m.verify().unwrap();
    m
}

#[test]
fn a_long_program_is_outlined_and_equals_the_interpreter() {
    let m = long_program(3 * DEFAULT_MAX_OPS);
    assert!(func_weight(&m.funcs[0]) > 2 * DEFAULT_MAX_OPS);
    let t = TensorType::new(DType::F64, [4, 4]);
    let inputs = [Rng(3).buffer(&t, -1.0, 1.0), Rng(4).buffer(&t, -1.0, 1.0)];
    let want = interp::run_func(&m, "main", &inputs).unwrap();
    // The outlined module itself (interpreter) and the CPU executor's compile of the original
    // (which outlines it) agree with the interpreter on the original.
    let mut chunked = m.clone();
    let names = outline(&mut chunked, DEFAULT_MAX_OPS);
    assert!(names.len() >= 3, "{names:?}");
    chunked.verify().unwrap();
    let via_chunks = interp::run_func(&chunked, "main", &inputs).unwrap();
    let exe = executor().compile(&m, "main", &CompileOptions::default()).unwrap();
    let got = exe.run(&inputs.iter().collect::<Vec<_>>()).unwrap();
    for (k, w) in want.iter().enumerate() {
        compare(&via_chunks[k], w, Tol::Exact, 1.0).unwrap_or_else(|e| panic!("outlined, interpreter: output {k}: {e}"));
        compare(&got[k], w, Tol::Rel(1e-9), 1.0).unwrap_or_else(|e| panic!("outlined, JIT: output {k}: {e}"));
    }
    // The chunks are functions of their own in the LLVM dialect, kept out of the inliner.
    let llvm = executor().lower_to_llvm(&m, &CompileOptions::default()).unwrap();
    for n in &names {
        let def = llvm.lines().find(|l| l.contains("llvm.func") && l.contains(&format!("@{n}("))).unwrap_or_else(|| panic!("no llvm.func @{n}"));
        assert!(def.contains("passthrough = [\"noinline\"]"), "{def}");
    }
}

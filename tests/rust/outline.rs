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

/// `main(p_0..p_n, g_0..g_n)` on 8x8 f32: `p_k - 0.01 * g_k` and `(p_k * g_k)` summed with
/// `p_0`, every result an output (an update step over a pytree of `n` leaves).
fn many_leaves(n: usize) -> Module {
    let t = TensorType::new(DType::F32, [8, 8]);
    let mut f = Func::new("main", &vec![t; 2 * n]);
    let bin = |op| OpKind::Elementwise(ElementwiseOp::Binary { op });
    let c = f.push1(OpKind::Constant(quabla_dialect::ConstantOp::Constant { value: quabla_dialect::Literal::splat(TensorType::new(DType::F32, [8, 8]), 0.01) }), &[], None).unwrap();
    let mut outs = Vec::new();
    for k in 0..n {
        let (p, g) = (f.params[k], f.params[n + k]);
        let s = f.push1(bin(BinaryOp::Mul), &[c, g], None).unwrap();
        outs.push(f.push1(bin(BinaryOp::Sub), &[p, s], None).unwrap());
        let m = f.push1(bin(BinaryOp::Mul), &[p, g], None).unwrap();
        outs.push(f.push1(bin(BinaryOp::Add), &[m, f.params[0]], None).unwrap());
    }
    f.outputs = outs;
    let m = Module { funcs: vec![f] };
    m.verify().unwrap();
    m
}

/// Signatures of one pointer per memref: the entry (and its C-interface wrapper, which takes
/// the executor's descriptors) and the chunks, which write their results into buffers their
/// caller passes (the entry's own outputs here) instead of returning descriptors. A step
/// over a pytree of 100 leaves had a 2100-parameter entry and chunks returning structs of 32
/// descriptors; its first call was mostly LLVM's instruction selection of those calls.
#[test]
fn many_leaves_pass_one_pointer_per_buffer() {
    let n = 40;
    let m = many_leaves(n);
    assert!(func_weight(&m.funcs[0]) > DEFAULT_MAX_OPS);
    let t = TensorType::new(DType::F32, [8, 8]);
    let inputs: Vec<_> = (0..2 * n).map(|k| Rng(10 + k as u64).buffer(&t, -1.0, 1.0)).collect();
    let want = interp::run_func(&m, "main", &inputs).unwrap();
    let got = executor().compile(&m, "main", &CompileOptions::default()).unwrap().run(&inputs.iter().collect::<Vec<_>>()).unwrap();
    assert_eq!(got.len(), 2 * n);
    for (k, w) in want.iter().enumerate() {
        compare(&got[k], w, Tol::Rel(1e-6), 1.0).unwrap_or_else(|e| panic!("output {k}: {e}"));
    }
    let llvm = executor().lower_to_llvm(&m, &CompileOptions::default()).unwrap();
    let def = |name: &str| llvm.lines().find(|l| l.contains("llvm.func") && l.contains(&format!("@{name}("))).unwrap_or_else(|| panic!("no llvm.func @{name}")).to_string();
    let params = |d: &str| d.split_once('(').unwrap().1.split_once(')').unwrap().0.split(", ").map(|p| p.rsplit(": ").next().unwrap().to_string()).collect::<Vec<_>>();
    for name in ["main", "_mlir_ciface_main"] {
        let p = params(&def(name));
        assert_eq!(p.len(), 4 * n, "@{name}");
        assert!(p.iter().all(|t| t == "!llvm.ptr"), "@{name}: {p:?}");
    }
    let chunks: Vec<String> = llvm.lines().filter(|l| l.contains("llvm.func @main_chunk")).map(str::to_string).collect();
    assert!(!chunks.is_empty());
    for c in &chunks {
        assert!(params(c).iter().all(|t| t == "!llvm.ptr") && !c.contains("-> !llvm.struct"), "{c}");
    }
}

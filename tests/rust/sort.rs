//! The sort family: the JIT (rank-counting linalg lowering) equals the reference interpreter
//! bit for bit for `sort` and `argsort` over every dtype, both directions, every dimension of
//! a rank-3 operand, with many ties and NaN/±inf/-0.0; and the values equal an independent
//! stable sort written here.
use quabla_dialect::{CmpDir, DType, OpKind, SortOp, TensorType};
use quabla_runtime::{interp, Buffer, CompileOptions, Executor};
use quabla_tests::{compare, one_op_module, Rng, Tol};

use crate::executor;

fn run_both(kind: OpKind, x: &Buffer) -> (Buffer, Buffer) {
    let m = one_op_module(kind, &[x.ty().clone()]);
    let want = interp::run_func(&m, "main", &[x.clone()]).unwrap().remove(0);
    let exe = executor().compile(&m, "main", &CompileOptions::default()).unwrap();
    let got = exe.run(&[x]).unwrap().remove(0);
    (got, want)
}

#[test]
fn jit_equals_interpreter() {
    let mut rng = Rng(5);
    for d in DType::ALL {
        let ty = TensorType::new(d, &[3, 4, 5]);
        // Few distinct values (many ties).
        let mut x = if d.is_unsigned() { rng.buffer(&ty, 0.0, 6.0) } else { rng.buffer(&ty, -3.0, 3.0) };
        if d.is_float() {
            let mut v = x.to_f64_vec().iter().map(|v| v.round() / 2.0).collect::<Vec<_>>();
            for (k, s) in [(3, f64::NAN), (7, f64::INFINITY), (11, f64::NEG_INFINITY), (13, -0.0), (17, f64::NAN)] {
                v[k] = s;
            }
            x = Buffer::from_f64s(ty.clone(), &v).unwrap();
        }
        for dim in 0..3 {
            for dir in [CmpDir::Lt, CmpDir::Gt] {
                let (g, w) = run_both(OpKind::Sort(SortOp::Sort { dimension: dim, direction: dir }), &x);
                compare(&g, &w, Tol::Exact, 1.0).unwrap_or_else(|e| panic!("sort {d} dim {dim} {dir:?}: {e}"));
                for index in [DType::I32, DType::I64, DType::U8, DType::U32] {
                    let (g, w) = run_both(OpKind::Sort(SortOp::Argsort { dimension: dim, direction: dir, index }), &x);
                    compare(&g, &w, Tol::Exact, 1.0).unwrap_or_else(|e| panic!("argsort {d} dim {dim} {dir:?}: {e}"));
                }
            }
        }
    }
}

#[test]
fn values_match_an_independent_stable_sort() {
    let mut rng = Rng(9);
    let ty = TensorType::new(DType::F64, &[4, 7]);
    let x = rng.buffer(&ty, -2.0, 2.0);
    let v = x.to_f64_vec();
    let (g, _) = run_both(OpKind::Sort(SortOp::Argsort { dimension: 1, direction: CmpDir::Gt, index: DType::I64 }), &x);
    let got = g.as_slice::<i64>().unwrap().to_vec();
    for r in 0..4 {
        let row = &v[r * 7..r * 7 + 7];
        let mut idx: Vec<i64> = (0..7).collect();
        // Insertion sort, descending, stable.
        for i in 1..7 {
            let mut j = i;
            while j > 0 && row[idx[j - 1] as usize] < row[idx[j] as usize] {
                idx.swap(j - 1, j);
                j -= 1;
            }
        }
        assert_eq!(&got[r * 7..r * 7 + 7], &idx[..], "row {r}");
    }
}

#[test]
fn large_operands_split_lanes_between_threads() {
    // Operands past quabla_lowering's SORT_PARALLEL_ELEMENTS are sorted with their lanes split
    // between the program's threads, the operand read in place: sort and argsort along each
    // dim, and the leading places alone (a slice of the argsort, as top_k), equal to the
    // interpreter on one and two threads, with ties and NaNs.
    use quabla_dialect::{Func, Module, SlicingOp};
    let mut rng = Rng(10);
    let ty = TensorType::new(DType::F32, &[64, 1024]);
    let v: Vec<f64> = rng.buffer(&ty, -4.0, 4.0).to_f64_vec().iter().enumerate().map(|(i, x)| if i % 97 == 0 { f64::NAN } else { x.round() }).collect();
    let x = Buffer::from_f64s(ty.clone(), &v).unwrap();
    let mut modules = Vec::new();
    for dim in 0..2 {
        for dir in [CmpDir::Lt, CmpDir::Gt] {
            modules.push(one_op_module(OpKind::Sort(SortOp::Sort { dimension: dim, direction: dir }), std::slice::from_ref(&ty)));
            modules.push(one_op_module(OpKind::Sort(SortOp::Argsort { dimension: dim, direction: dir, index: DType::I32 }), std::slice::from_ref(&ty)));
        }
    }
    let mut f = Func::new("main", std::slice::from_ref(&ty));
    let a = f.push1(OpKind::Sort(SortOp::Argsort { dimension: 1, direction: CmpDir::Gt, index: DType::I32 }), &[f.params[0]], None).unwrap();
    f.outputs = vec![f.push1(OpKind::Slicing(SlicingOp::Slice { start_indices: vec![0, 0], limit_indices: vec![64, 8], strides: vec![1, 1] }), &[a], None).unwrap()];
    modules.push(Module { funcs: vec![f] });
    for m in &modules {
        let want = interp::run_func(m, "main", &[x.clone()]).unwrap().remove(0);
        for threads in [1, 2] {
            let exe = executor().compile(m, "main", &CompileOptions { threads, ..CompileOptions::default() }).unwrap();
            let got = exe.run(&[&x]).unwrap().remove(0);
            compare(&got, &want, Tol::Exact, 1.0).unwrap_or_else(|e| panic!("{} on {threads} threads: {e}", m.to_mlir()));
        }
    }
}

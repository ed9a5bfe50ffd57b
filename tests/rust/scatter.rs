//! Scatter ops: the JIT (the `scf.for` loop over the updates) equals the reference
//! interpreter for every combiner and dtype, with duplicate and out-of-bounds indices, in the
//! take-along-axis form and with general dimension numbers (an index vector and partial
//! windows); the interpreter itself against hand-computed values; and the gather VJP is a
//! scatter_add (no dot_general one-hot).
use quabla_dialect::{Combiner, ConstantOp, DType, Func, Literal, Module, OpKind, ScatterOp, SlicingOp, TensorType, Transform, TransformKind};
use quabla_runtime::{interp, Buffer, CompileOptions, Executor};
use quabla_tests::{compare, one_op_module, Rng, Tol};

use crate::executor;

fn t(d: DType, s: &[i64]) -> TensorType {
    TensorType::new(d, s)
}

fn check(what: &str, m: &Module, inputs: &[Buffer]) {
    let want = interp::run_func(m, "main", inputs).unwrap_or_else(|e| panic!("{what}: interpreter failed: {e}"));
    let exe = executor().compile(m, "main", &CompileOptions::default()).unwrap_or_else(|e| panic!("{what}: compile failed: {e}\n{}", m.to_mlir()));
    let refs: Vec<&Buffer> = inputs.iter().collect();
    let got = exe.run(&refs).unwrap_or_else(|e| panic!("{what}: run failed: {e}"));
    for (g, w) in got.iter().zip(&want) {
        // Same update order in both engines: float results are bit-identical too.
        if let Err(e) = compare(g, w, Tol::Exact, 1.0) {
            panic!("{what}: JIT vs interpreter: {e}\ninputs: {inputs:?}\nJIT: {g:?}\ninterp: {w:?}");
        }
    }
}

#[test]
fn scatter_jit_matches_interpreter() {
    let mut rng = Rng(11);
    for c in Combiner::ALL {
        for d in [DType::F32, DType::F64, DType::I32, DType::I64] {
            for it in [DType::I32, DType::I64] {
                // (operand shape, indices shape, axis)
                for (xs, is, a) in [(vec![6], vec![9], 0usize), (vec![5, 3], vec![4], 0), (vec![3, 5], vec![2, 3], 1), (vec![2, 4, 3], vec![7], 1)] {
                    let xt = t(d, &xs);
                    let itt = t(it, &is);
                    let mut us = xs[..a].to_vec();
                    us.extend(&is);
                    us.extend(&xs[a + 1..]);
                    let ut = t(d, &us);
                    let op = OpKind::Scatter(ScatterOp::along_axis(c, xs.len(), is.len(), a));
                    let n = xs[a] as f64;
                    let inputs = [rng.buffer(&xt, -4.0, 4.0), rng.buffer(&itt, -2.0, n + 2.0), rng.buffer(&ut, -4.0, 4.0)];
                    check(&format!("{} {d} {it} {xs:?} {is:?} axis {a}", c.name()), &one_op_module(op, &[xt, itt, ut]), &inputs);
                }
            }
        }
    }
    // i1 with set.
    let (xt, itt, ut) = (t(DType::I1, &[5]), t(DType::I64, &[3]), t(DType::I1, &[3]));
    let inputs = [rng.buffer(&xt, 0.0, 1.0), rng.buffer(&itt, -1.0, 6.0), rng.buffer(&ut, 0.0, 1.0)];
    check("scatter i1", &one_op_module(OpKind::Scatter(ScatterOp::along_axis(Combiner::Set, 1, 1, 0)), &[xt, itt, ut]), &inputs);
}

#[test]
fn scatter_general_dimension_numbers() {
    // 2-component start indices into a 4x6 operand with 1x3 windows (partial along dim 1):
    // windows that do not fit (start col > 3, or negative) are dropped.
    let op = OpKind::Scatter(ScatterOp::Scatter { op: Combiner::Add, update_window_dims: vec![1], inserted_window_dims: vec![0], scatter_dims_to_operand_dims: vec![0, 1], index_vector_dim: 1 });
    let (xt, itt, ut) = (t(DType::F64, &[4, 6]), t(DType::I32, &[5, 2]), t(DType::F64, &[5, 3]));
    let x = Buffer::from_f64s(xt.clone(), &[0.0; 24]).unwrap();
    let i = Buffer::from_slice::<i32>(&[5, 2], &[0, 0, 3, 3, 0, 0, 2, 4, -1, 0]).unwrap();
    let u = Buffer::from_f64s(ut.clone(), &(1..=15).map(|v| v as f64).collect::<Vec<_>>()).unwrap();
    let m = one_op_module(op, &[xt, itt, ut]);
    let y = interp::run_func(&m, "main", &[x.clone(), i.clone(), u.clone()]).unwrap();
    let mut want = vec![0.0; 24];
    for (row, col, k) in [(0usize, 0usize, 0usize), (3, 3, 1), (0, 0, 2)] {
        for w in 0..3 {
            want[row * 6 + col + w] += (k * 3 + w + 1) as f64;
        }
    }
    assert_eq!(y[0].to_f64_vec(), want);
    check("general dims", &m, &[x, i, u]);
    // The index vector first (index_vector_dim = 0), windows over a trailing full dim.
    let op = OpKind::Scatter(ScatterOp::Scatter { op: Combiner::Max, update_window_dims: vec![1], inserted_window_dims: vec![0, 1], scatter_dims_to_operand_dims: vec![1, 0], index_vector_dim: 0 });
    let (xt, itt, ut) = (t(DType::F32, &[3, 4, 2]), t(DType::I64, &[2, 6]), t(DType::F32, &[6, 2]));
    let mut rng = Rng(5);
    let inputs = [rng.buffer(&xt, -1.0, 1.0), rng.buffer(&itt, -1.0, 4.0), rng.buffer(&ut, -1.0, 1.0)];
    check("index vector first", &one_op_module(op, &[xt, itt, ut]), &inputs);
}

#[test]
fn gather_vjp_is_a_scatter_add() {
    let (xt, it) = (t(DType::F64, &[8, 3]), t(DType::I64, &[5]));
    let mut g = Func::new("g", &[xt.clone(), it.clone()]);
    let ps = g.params.clone();
    g.outputs = g.push(OpKind::Slicing(SlicingOp::Gather { axis: 0 }), &ps, None).unwrap();
    let tr = Transform { kind: TransformKind::Vjp, of: "g".into() };
    let (p, r) = tr.signature(&g.param_types(), &g.result_types());
    let decl = Func::declaration("g_vjp", &p, &r, tr);
    let mut m = Module { funcs: vec![g, decl] };
    quabla_passes::autodiff::autodiff(&mut m).unwrap();
    let text = m.to_mlir();
    assert!(text.contains("quabla.scatter_add") && !text.contains("dot_general"), "{text}");
    let x = Buffer::from_f64s(xt, &[0.0; 24]).unwrap();
    let i = Buffer::from_slice::<i64>(&[5], &[1, 1, 7, -3, 9]).unwrap();
    let ct = Buffer::from_f64s(t(DType::F64, &[5, 3]), &(0..15).map(|v| v as f64).collect::<Vec<_>>()).unwrap();
    let out = interp::run_func(&m, "g_vjp", &[x, i, ct]).unwrap();
    // Clamped indices 1, 1, 7, 0, 7: rows add up.
    let mut want = vec![0.0; 24];
    for (k, row) in [1usize, 1, 7, 0, 7].into_iter().enumerate() {
        for c in 0..3 {
            want[row * 3 + c] += (k * 3 + c) as f64;
        }
    }
    assert_eq!(out[1].to_f64_vec(), want);
}

/// The JVP of every scatter against central differences, and the VJP against the JVP by the
/// dot-product identity `<ct, J t> = <J^T ct, t>`, in f64 with duplicate and dropped indices
/// (and ties for min/max: some updates equal the element they land on).
#[test]
fn scatter_derivatives() {
    let mut rng = Rng(3);
    let (xt, it, ut) = (t(DType::F64, &[5, 3]), t(DType::I64, &[6]), t(DType::F64, &[6, 3]));
    let idx = Buffer::from_slice::<i64>(&[6], &[1, 4, 1, 9, -1, 1]).unwrap();
    for c in Combiner::ALL {
        let kind = OpKind::Scatter(ScatterOp::along_axis(c, 2, 1, 0));
        let mut f = Func::new("f", &[xt.clone(), it.clone(), ut.clone()]);
        let ps = f.params.clone();
        f.outputs = f.push(kind, &ps, None).unwrap();
        let mut m = Module { funcs: vec![f] };
        for (name, k) in [("f_jvp", TransformKind::Jvp), ("f_vjp", TransformKind::Vjp)] {
            let g = m.func("f").unwrap();
            let tr = Transform { kind: k, of: "f".into() };
            let (p, r) = tr.signature(&g.param_types(), &g.result_types());
            m.funcs.push(Func::declaration(name, &p, &r, tr));
        }
        quabla_passes::autodiff::autodiff(&mut m).unwrap_or_else(|e| panic!("{}: {e}", c.name()));
        let x = rng.buffer(&xt, -2.0, 2.0);
        let mut uv = rng.buffer(&ut, -2.0, 2.0).to_f64_vec();
        // Ties: update 2 equals the element it lands on (row 1).
        let xv = x.to_f64_vec();
        uv[6..9].copy_from_slice(&xv[3..6]);
        let u = Buffer::from_f64s(ut.clone(), &uv).unwrap();
        let (tx, tu, ct) = (rng.buffer(&xt, -1.0, 1.0), rng.buffer(&ut, -1.0, 1.0), rng.buffer(&xt, -1.0, 1.0));
        let jv = interp::run_func(&m, "f_jvp", &[x.clone(), idx.clone(), u.clone(), tx.clone(), tu.clone()]).unwrap();
        let vj = interp::run_func(&m, "f_vjp", &[x.clone(), idx.clone(), u.clone(), ct.clone()]).unwrap();
        let dot = |a: &Buffer, b: &Buffer| a.to_f64_vec().iter().zip(b.to_f64_vec()).map(|(p, q)| p * q).sum::<f64>();
        let lhs = dot(&ct, &jv[1]);
        let rhs = dot(&vj[1], &tx) + dot(&vj[2], &tu);
        assert!((lhs - rhs).abs() <= 1e-12 * (1.0 + lhs.abs()), "{}: <ct, Jt> = {lhs}, <J^T ct, t> = {rhs}", c.name());
        if matches!(c, Combiner::Min | Combiner::Max) {
            continue; // not differentiable at the ties (the JVP splits them); checked against JAX in Python
        }
        let h = 1e-6;
        let shift = |b: &Buffer, d: &Buffer, s: f64| Buffer::from_f64s(b.ty().clone(), &b.to_f64_vec().iter().zip(d.to_f64_vec()).map(|(p, q)| p + s * q).collect::<Vec<_>>()).unwrap();
        let run = |s: f64| interp::run_func(&m, "f", &[shift(&x, &tx, s), idx.clone(), shift(&u, &tu, s)]).unwrap()[0].to_f64_vec();
        let (hi, lo) = (run(h), run(-h));
        for (k, g) in jv[1].to_f64_vec().iter().enumerate() {
            let fd = (hi[k] - lo[k]) / (2.0 * h);
            assert!((fd - g).abs() <= 1e-6 * (1.0 + g.abs()), "{}: element {k}: jvp {g}, finite difference {fd}", c.name());
        }
    }
}

#[test]
fn whole_rows_are_copied_or_added_a_row_at_a_time() {
    // Take-form set/add along the first axis (x.at[rows], the gather VJP's scatter_add): the CPU
    // lowering inserts or adds whole rows (`tensor.insert_slice`), one step per index, with
    // duplicate rows (set: the last wins; add: in order) and out-of-range ones (dropped), index
    // arrays of rank 0, 1 and 2, operands of rank 2 and 3: the interpreter's results to the
    // bit on one and two threads.
    let mut rng = Rng(12);
    for c in [Combiner::Set, Combiner::Add] {
        for (xs, is) in [(vec![40i64, 300], vec![]), (vec![40, 300], vec![64]), (vec![16, 5, 70], vec![3, 7]), (vec![2000, 2048], vec![9])] {
            let (xt, itt) = (t(DType::F32, &xs), t(DType::I64, &is));
            let mut us = is.clone();
            us.extend(&xs[1..]);
            let ut = t(DType::F32, &us);
            let m = one_op_module(OpKind::Scatter(ScatterOp::along_axis(c, xs.len(), is.len(), 0)), &[xt.clone(), itt.clone(), ut.clone()]);
            let text = quabla_lowering::lower_for_cpu(&m, &quabla_lowering::CpuOptions::default()).unwrap().text;
            assert!(text.contains("tensor.insert_slice"), "{} {xs:?} {is:?}: not a row loop:\n{text}", c.name());
            let n = xs[0] as f64;
            let inputs = [rng.buffer(&xt, -4.0, 4.0), rng.buffer(&itt, -3.0, n + 3.0), rng.buffer(&ut, -4.0, 4.0)];
            let want = interp::run_func(&m, "main", &inputs).unwrap();
            for threads in [1, 2] {
                let exe = executor().compile(&m, "main", &CompileOptions { threads, ..CompileOptions::default() }).unwrap();
                let got = exe.run(&inputs.iter().collect::<Vec<_>>()).unwrap();
                compare(&got[0], &want[0], Tol::Exact, 1.0).unwrap_or_else(|e| panic!("{} {xs:?} {is:?} on {threads} threads: {e}", c.name()));
            }
        }
    }
}

#[test]
fn an_output_scattered_from_a_value_read_again_keeps_that_value() {
    // A gradient's pattern: ct = cos(x) is scattered (zero rows) into an output and read
    // again afterwards (gathered into a second output). ct is computed, not a parameter, so
    // the scatter does not start from a copy in the output buffer: empty-tensor elimination
    // could compute ct there, and the scatter's writes would reach the later gather (the
    // second output was zeros). Equal to the interpreter on one and two threads.
    use quabla_dialect::{ElementwiseOp, UnaryOp};
    let (xt, itt, ut) = (t(DType::F64, &[5, 3]), t(DType::I64, &[2]), t(DType::F64, &[2, 3]));
    let mut f = Func::new("main", &[xt.clone(), itt.clone(), ut.clone()]);
    let (x, i, u) = (f.params[0], f.params[1], f.params[2]);
    let ct = f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Cos }), &[x], None).unwrap();
    let s = f.push1(OpKind::Scatter(ScatterOp::along_axis(Combiner::Set, 2, 1, 0)), &[ct, i, u], None).unwrap();
    let g = f.push1(OpKind::Slicing(SlicingOp::Gather { axis: 0 }), &[ct, i], None).unwrap();
    f.outputs = vec![s, g];
    let m = Module { funcs: vec![f] };
    let mut rng = Rng(13);
    let inputs = [rng.buffer(&xt, -2.0, 2.0), Buffer::from_slice::<i64>(&[2], &[2, 4]).unwrap(), rng.buffer(&ut, -1.0, 1.0)];
    let want = interp::run_func(&m, "main", &inputs).unwrap();
    for threads in [1, 2] {
        let exe = executor().compile(&m, "main", &CompileOptions { threads, ..CompileOptions::default() }).unwrap();
        let got = exe.run(&inputs.iter().collect::<Vec<_>>()).unwrap();
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            compare(g, w, Tol::Exact, 1.0).unwrap_or_else(|e| panic!("output {k} on {threads} threads: {e}"));
        }
    }
}

#[test]
fn row_gathers_match_the_interpreter() {
    // Gathers whose slices hold at least ROW_GATHER_ELEMENTS contiguous elements copy whole
    // slices (an scf.for nest, or an scf.forall on two threads past PAR_ROW_GATHER_BYTES):
    // along axis 0 and 1, a 2-D index, out-of-range indices clamped; bit-identical to the
    // interpreter on one and two threads.
    let mut rng = Rng(17);
    // (operand shape, index shape, axis)
    for (xs, is, a) in [(vec![40, 64], vec![9], 0usize), (vec![3, 7, 2, 64], vec![2, 5], 1), (vec![1024, 300], vec![1000], 0), (vec![4, 300, 96], vec![3, 200], 1)] {
        for d in [DType::F32, DType::I64] {
            let (xt, itt) = (t(d, &xs), t(DType::I32, &is));
            let m = one_op_module(OpKind::Slicing(SlicingOp::Gather { axis: a as i64 }), &[xt.clone(), itt.clone()]);
            let n = xs[a] as f64;
            let inputs = [rng.buffer(&xt, -4.0, 4.0), rng.buffer(&itt, -3.0, n + 3.0)];
            let want = interp::run_func(&m, "main", &inputs).unwrap();
            for threads in [1, 2] {
                let exe = executor().compile(&m, "main", &CompileOptions { threads, ..CompileOptions::default() }).unwrap();
                let got = exe.run(&inputs.iter().collect::<Vec<_>>()).unwrap();
                compare(&got[0], &want[0], Tol::Exact, 1.0).unwrap_or_else(|e| panic!("gather {d} {xs:?} {is:?} axis {a} on {threads} threads: {e}"));
            }
        }
    }
}

#[test]
fn progression_gathers_and_strided_slices_match_the_interpreter() {
    // A gather by a constant arithmetic progression inside the axis (reversals, negative-step
    // slices: no index reads) and a slice with a stride along its last dim (a generic through
    // the strided map, not a strided copy): bit-identical to the interpreter on one and two
    // threads; a progression that leaves the axis keeps the clamping gather.
    use quabla_dialect::{ConstantOp, Literal};
    let mut rng = Rng(19);
    for (xs, a, idx) in [(vec![40i64, 300i64], 1usize, (0..300).rev().collect::<Vec<i64>>()), (vec![300, 7], 0, (0..150).map(|i| 299 - 2 * i).collect()), (vec![5, 64, 9], 1, (0..20).map(|i| 3 + 3 * i).collect()), (vec![30, 8], 1, vec![9, 7, 5, 3, 1, -1])] {
        let xt = t(DType::F32, &xs);
        let it = t(DType::I64, &[idx.len() as i64]);
        let mut f = Func::new("main", std::slice::from_ref(&xt));
        let c = f.push1(OpKind::Constant(ConstantOp::Constant { value: Literal::from_i64s(it.clone(), &idx) }), &[], None).unwrap();
        let g = f.push1(OpKind::Slicing(SlicingOp::Gather { axis: a as i64 }), &[f.params[0], c], None).unwrap();
        f.outputs = vec![g];
        let m = Module { funcs: vec![f] };
        let inputs = [rng.buffer(&xt, -4.0, 4.0)];
        let want = interp::run_func(&m, "main", &inputs).unwrap();
        for threads in [1, 2] {
            let got = executor().compile(&m, "main", &CompileOptions { threads, ..CompileOptions::default() }).unwrap().run(&[&inputs[0]]).unwrap();
            compare(&got[0], &want[0], Tol::Exact, 1.0).unwrap_or_else(|e| panic!("gather {xs:?} axis {a} on {threads} threads: {e}"));
        }
    }
    // Strides along the last dim or only before it (rows copied whole, through the map).
    for (xs, start, limit, strides) in [(vec![1024i64, 1024i64], vec![0i64, 0i64], vec![1023i64, 1023i64], vec![2i64, 2i64]), (vec![3, 50, 41], vec![1, 2, 3], vec![3, 50, 41], vec![1, 3, 4]), (vec![4096, 300], vec![1, 7], vec![4095, 300], vec![2, 1]), (vec![30, 7, 9], vec![2, 0, 1], vec![30, 7, 8], vec![3, 1, 1])] {
        let xt = t(DType::F64, &xs);
        let op = OpKind::Slicing(SlicingOp::Slice { start_indices: start.clone(), limit_indices: limit.clone(), strides: strides.clone() });
        let m = one_op_module(op, std::slice::from_ref(&xt));
        let inputs = [rng.buffer(&xt, -4.0, 4.0)];
        let want = interp::run_func(&m, "main", &inputs).unwrap();
        for threads in [1, 2] {
            let got = executor().compile(&m, "main", &CompileOptions { threads, ..CompileOptions::default() }).unwrap().run(&[&inputs[0]]).unwrap();
            compare(&got[0], &want[0], Tol::Exact, 1.0).unwrap_or_else(|e| panic!("slice {xs:?} by {strides:?} on {threads} threads: {e}"));
        }
    }
}

#[test]
fn chained_progression_gathers_read_the_first_operand_once() {
    // Progression gathers of a progression gather (`x[::-1, ::-1]`, a reversal of a strided
    // reversal along one axis) are one generic reading the chain's first operand with the
    // positions composed; an inner gather that is also an output still runs. Bit-identical
    // to the interpreter on one and two threads.
    use quabla_dialect::{ConstantOp, Literal};
    let mut rng = Rng(37);
    let rev = |n: i64| (0..n).rev().collect::<Vec<i64>>();
    // (shape, (axis, index) per gather, innermost first; the first gather also an output)
    let cases: Vec<(Vec<i64>, Vec<(usize, Vec<i64>)>, bool)> = vec![
        (vec![300, 257], vec![(1, rev(257)), (0, rev(300))], false),
        (vec![64, 90], vec![(1, (0..45).map(|i| 89 - 2 * i).collect()), (1, (0..15).map(|i| 2 + 3 * i).collect())], false),
        (vec![4, 30, 50], vec![(2, rev(50)), (0, rev(4)), (1, (0..10).map(|i| 27 - 3 * i).collect())], true),
    ];
    for (xs, gathers, keep_inner) in cases {
        let xt = t(DType::F32, &xs);
        let mut f = Func::new("main", std::slice::from_ref(&xt));
        let mut v = f.params[0];
        let mut first = None;
        for (a, idx) in &gathers {
            let it = t(DType::I64, &[idx.len() as i64]);
            let c = f.push1(OpKind::Constant(ConstantOp::Constant { value: Literal::from_i64s(it, idx) }), &[], None).unwrap();
            v = f.push1(OpKind::Slicing(SlicingOp::Gather { axis: *a as i64 }), &[v, c], None).unwrap();
            first.get_or_insert(v);
        }
        f.outputs = if keep_inner { vec![v, first.unwrap()] } else { vec![v] };
        let m = Module { funcs: vec![f] };
        let text = quabla_lowering::lower_for_cpu(&m, &quabla_lowering::CpuOptions::default()).unwrap().text;
        // Every generic reads the parameter (an unchained outer gather reads the inner one's
        // result; the inner generics go when unused).
        assert!(text.lines().filter(|l| l.contains("tensor.extract")).all(|l| l.contains("tensor.extract %v0[")), "{xs:?}:\n{text}");
        let inputs = [rng.buffer(&xt, -4.0, 4.0)];
        let want = interp::run_func(&m, "main", &inputs).unwrap();
        for threads in [1, 2] {
            let got = executor().compile(&m, "main", &CompileOptions { threads, ..CompileOptions::default() }).unwrap().run(&[&inputs[0]]).unwrap();
            for (g, w) in got.iter().zip(&want) {
                compare(g, w, Tol::Exact, 1.0).unwrap_or_else(|e| panic!("gathers of {xs:?} on {threads} threads: {e}"));
            }
        }
    }
}

/// The type of the first output of `m`'s first function.
fn f_out_type(m: &Module) -> TensorType {
    let f = &m.funcs[0];
    f.ty(f.outputs[0]).clone()
}

#[test]
fn concatenation_chains_copy_each_operand_once() {
    // Pairwise concatenations along one dim (qb.stack, qb.concatenate of several arrays) copy
    // each operand once into the last result (quabla_lowering slicing `lower_concatenate`):
    // its inserts are the chain's operands; a link along another dim, or one that is also an
    // output, is still built. Bit-identical to the interpreter on one and two threads.
    let mut rng = Rng(41);
    // (operand shapes, dims of the links in order, the first link also an output)
    let cases: Vec<(Vec<Vec<i64>>, Vec<i64>, bool)> = vec![
        (vec![vec![1, 64, 32]; 8], vec![0; 7], false),
        (vec![vec![30, 5], vec![30, 7], vec![30, 1], vec![30, 2]], vec![1, 1, 1], true),
        (vec![vec![4, 6], vec![4, 6], vec![8, 6], vec![16, 3]], vec![0, 0, 1], false),
    ];
    for (shapes, dims, keep_first) in cases {
        let ts: Vec<TensorType> = shapes.iter().map(|s| t(DType::F32, s)).collect();
        let mut f = Func::new("main", &ts);
        let xs = f.params.clone();
        let mut v = xs[0];
        let mut first = None;
        for (x, d) in xs[1..].iter().zip(&dims) {
            v = f.push1(OpKind::Slicing(SlicingOp::Concatenate { dim: *d }), &[v, *x], None).unwrap();
            first.get_or_insert(v);
        }
        f.outputs = if keep_first { vec![v, first.unwrap()] } else { vec![v] };
        let m = Module { funcs: vec![f] };
        let text = quabla_lowering::lower_for_cpu(&m, &quabla_lowering::CpuOptions::default()).unwrap().text;
        // Inserts into a result: one per operand of its flattened chain (the lowered text
        // still has the inner links' own, which go later).
        let into = |ty: &TensorType| text.matches(&format!("into {ty}")).count();
        let last = f_out_type(&m);
        if dims.iter().all(|&d| d == dims[0]) {
            assert_eq!(into(&last), xs.len(), "{shapes:?} along {dims:?}:\n{text}");
        } else {
            assert_eq!((into(&last), into(&t(DType::F32, &[16, 6]))), (2, 3), "{shapes:?} along {dims:?}:\n{text}");
        }
        let inputs: Vec<Buffer> = ts.iter().map(|t| rng.buffer(t, -4.0, 4.0)).collect();
        let want = interp::run_func(&m, "main", &inputs).unwrap();
        for threads in [1, 2] {
            let got = executor().compile(&m, "main", &CompileOptions { threads, ..CompileOptions::default() }).unwrap().run(&inputs.iter().collect::<Vec<_>>()).unwrap();
            for (g, w) in got.iter().zip(&want) {
                compare(g, w, Tol::Exact, 1.0).unwrap_or_else(|e| panic!("{shapes:?} along {dims:?} on {threads} threads: {e}"));
            }
        }
    }
}

#[test]
fn large_concatenations_match_the_interpreter() {
    // Large parameters concatenated along a later dim are copied chunk by chunk in an
    // scf.forall on two threads; along dim 0, or computed operands, one insert each:
    // bit-identical to the interpreter on one and two threads. The dims before `dim` are one
    // loop of the copies (rank 4 along dims 3 and 2); the result is an output or read by
    // another op.
    use quabla_dialect::{ElementwiseOp, UnaryOp};
    let mut rng = Rng(23);
    let cases = [
        (vec![vec![512i64, 300i64], vec![512, 700]], 1usize, false, true),
        (vec![vec![4, 100, 300], vec![4, 100, 20]], 2, true, true),
        (vec![vec![4, 100, 300], vec![4, 100, 300]], 2, false, true),
        (vec![vec![600, 500], vec![100, 500]], 0, false, true),
        (vec![vec![2, 300, 600], vec![2, 300, 600]], 1, true, true),
        (vec![vec![3, 300, 600], vec![3, 300, 600]], 2, false, false),
        (vec![vec![17, 33, 65, 9], vec![17, 33, 65, 9]], 3, false, true),
        (vec![vec![6, 100, 70, 7], vec![6, 100, 50, 7]], 2, false, false),
    ];
    for (shapes, dim, computed, output) in cases {
        let ts: Vec<TensorType> = shapes.iter().map(|s| t(DType::F32, s)).collect();
        let mut f = Func::new("main", &ts);
        let mut xs = f.params.clone();
        if computed {
            xs[0] = f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Neg }), &[xs[0]], None).unwrap();
        }
        let c = f.push1(OpKind::Slicing(SlicingOp::Concatenate { dim: dim as i64 }), &xs, None).unwrap();
        f.outputs = vec![if output { c } else { f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Neg }), &[c], None).unwrap() }];
        let m = Module { funcs: vec![f] };
        let large = shapes.iter().any(|s| s.iter().product::<i64>() * 4 >= quabla_lowering::linalg::slicing::PAR_ROW_GATHER_BYTES);
        if dim > 1 && !computed && large {
            let steps: i64 = shapes[0][..dim].iter().product();
            let text = quabla_lowering::lower_for_cpu(&m, &quabla_lowering::CpuOptions { threads: 2, ..Default::default() }).unwrap().text;
            assert!(text.contains(&format!(") in ({steps}) shared_outs(")), "{shapes:?} along {dim}:\n{text}");
        }
        let inputs: Vec<Buffer> = ts.iter().map(|t| rng.buffer(t, -4.0, 4.0)).collect();
        let want = interp::run_func(&m, "main", &inputs).unwrap();
        for threads in [1, 2] {
            let got = executor().compile(&m, "main", &CompileOptions { threads, ..CompileOptions::default() }).unwrap().run(&inputs.iter().collect::<Vec<_>>()).unwrap();
            compare(&got[0], &want[0], Tol::Exact, 1.0).unwrap_or_else(|e| panic!("concatenate {shapes:?} along {dim} on {threads} threads: {e}"));
        }
    }
}

#[test]
fn scatters_into_splat_constants_fill_a_fresh_or_the_output_buffer() {
    // The gradient of a gather scatters into zeros: a splat constant of more than 4096
    // elements is filled by a generic (into the function's output buffer when the scatter's
    // result is an output, else into a fresh tensor), not copied from a dense global every
    // call (quabla_lowering scatter `splat_fill`). Same results as the interpreter, also
    // with duplicate rows and out-of-range indices (dropped); a small splat stays a constant.
    let mut rng = Rng(43);
    for (rows, cols, output) in [(5000i64, 64i64, true), (5000, 64, false), (8, 4, true)] {
        let (xt, it, ut) = (t(DType::F32, &[rows, cols]), t(DType::I32, &[300]), t(DType::F32, &[300, cols]));
        let mut f = Func::new("main", &[it.clone(), ut.clone()]);
        let (idx, upd) = (f.params[0], f.params[1]);
        let fill = Literal::splat(xt.clone(), 0.5);
        let zeros = f.push1(OpKind::Constant(ConstantOp::Constant { value: fill }), &[], None).unwrap();
        let s = f.push1(OpKind::Scatter(ScatterOp::along_axis(Combiner::Add, 2, 1, 0)), &[zeros, idx, upd], None).unwrap();
        f.outputs = if output { vec![s] } else { vec![f.push1(OpKind::Elementwise(quabla_dialect::ElementwiseOp::Unary { op: quabla_dialect::UnaryOp::Neg }), &[s], None).unwrap()] };
        let m = Module { funcs: vec![f] };
        let text = quabla_lowering::lower_for_cpu(&m, &quabla_lowering::CpuOptions::default()).unwrap().text;
        // The full-size constant is still lowered, but read (beyond its definition) only when
        // it stays the scatter's init.
        let line = text.lines().find(|l| l.contains(&format!("dense<5.0e-1> : {xt}"))).expect("the constant");
        let name = line.trim().split(' ').next().unwrap().to_string();
        let dense = text.matches(&format!("{name} ")).count() + text.matches(&format!("{name})")).count() + text.matches(&format!("{name},")).count() > 1;
        assert_eq!(dense, rows * cols <= 4096, "{rows}x{cols}:\n{text}");
        assert_eq!(text.contains(&format!("bufferization.to_tensor %out0 restrict writable : memref<{rows}x{cols}xf32> to {xt}")), output && !dense, "{rows}x{cols}:\n{text}");
        let ids: Vec<i32> = (0..300).map(|k| [3, 3, rows as i32 - 1, -1, rows as i32, (k as i32 * 37) % rows as i32][k as usize % 6]).collect();
        let ib = Buffer::from_slice(&[300], &ids).unwrap();
        check(&format!("splat scatter {rows}x{cols}"), &m, &[ib, rng.buffer(&ut, -2.0, 2.0)]);
    }
}

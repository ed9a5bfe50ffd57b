//! Every program Quabla prints is accepted by stock `mlir-opt-22 --irdl-file=dialect/quabla.irdl.mlir`:
//! one function per op kind (every variant of OpKind, every elementwise op) and transform
//! declarations of every kind, printed by
//! `Module::to_mlir`, and the same module after quabla-opt's canonicalize pipeline.
use std::process::Command;

use quabla_dialect::{ArgOp, BinaryOp, CallOp, CmpDir, ConstantOp, DType, DotDims, DotOp, ElementwiseOp, Func, LayoutOp, LinalgOp, Literal, Module, OpKind, ReduceOp, Reducer, SlicingOp, TensorType, Transform, TransformKind, UnaryOp};

use crate::root;

fn t(d: DType, s: &[i64]) -> TensorType {
    TensorType::new(d, s)
}

/// One function per op kind.
pub fn every_op_module() -> Module {
    let f32s = |s: &[i64]| t(DType::F32, s);
    let mut cases: Vec<(OpKind, Vec<TensorType>)> = Vec::new();
    for &u in UnaryOp::ALL {
        let d = if u == UnaryOp::Not { DType::I1 } else if u.class().admits(DType::F32) { DType::F32 } else { DType::U32 };
        cases.push((OpKind::Elementwise(ElementwiseOp::Unary { op: u }), vec![t(d, &[2, 3])]));
    }
    for &b in BinaryOp::ALL {
        let d = if matches!(b, BinaryOp::And | BinaryOp::Or | BinaryOp::Xor) { DType::I32 } else if b.class().admits(DType::F64) { DType::F64 } else { DType::U32 };
        cases.push((OpKind::Elementwise(ElementwiseOp::Binary { op: b }), vec![t(d, &[4]), t(d, &[4])]));
    }
    let idx = t(DType::I64, &[]);
    cases.extend([
        (OpKind::Elementwise(ElementwiseOp::Powi { exponent: -3 }), vec![f32s(&[2])]),
        (OpKind::Elementwise(ElementwiseOp::Compare { direction: CmpDir::Ge}), vec![f32s(&[2]), f32s(&[2])]),
        (OpKind::Elementwise(ElementwiseOp::Select {}), vec![t(DType::I1, &[2]), f32s(&[2]), f32s(&[2])]),
        (OpKind::Elementwise(ElementwiseOp::Convert { to: DType::I32 }), vec![f32s(&[2])]),
        (OpKind::Constant(ConstantOp::Constant { value: Literal::from_f64s(f32s(&[2, 2]), &[1.0, f64::NAN, -0.0, 1e-30]) }), vec![]),
        (OpKind::Constant(ConstantOp::Constant { value: Literal::from_f64s(t(DType::I1, &[3]), &[1.0, 0.0, 1.0]) }), vec![]),
        (OpKind::Constant(ConstantOp::Iota { dim: 1, ty: t(DType::I32, &[2, 3]) }), vec![]),
        (OpKind::Constant(ConstantOp::Constant { value: Literal::from_i64s(t(DType::U8, &[2]), &[255, 7]) }), vec![]),
        (OpKind::Elementwise(ElementwiseOp::Convert { to: DType::U8 }), vec![t(DType::U32, &[2])]),
        (OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![1], shape: vec![2, 3] }), vec![f32s(&[3])]),
        (OpKind::Layout(LayoutOp::Reshape { shape: vec![6] }), vec![f32s(&[2, 3])]),
        (OpKind::Layout(LayoutOp::Transpose { perm: vec![1, 0] }), vec![f32s(&[2, 3])]),
        (OpKind::Layout(LayoutOp::StopGradient {}), vec![f32s(&[2, 3])]),
        (OpKind::Slicing(SlicingOp::Concatenate { dim: 0 }), vec![f32s(&[2]), f32s(&[3])]),
        (OpKind::Slicing(SlicingOp::Slice { start_indices: vec![1], limit_indices: vec![5], strides: vec![2] }), vec![f32s(&[6])]),
        (OpKind::Slicing(SlicingOp::Pad { edge_padding_low: vec![1], edge_padding_high: vec![2], interior_padding: vec![1]}), vec![f32s(&[3]), f32s(&[])]),
        (OpKind::Slicing(SlicingOp::DynamicSlice { slice_sizes: vec![2]}), vec![f32s(&[5]), idx.clone()]),
        (OpKind::Slicing(SlicingOp::Gather { axis: 0 }), vec![f32s(&[5, 2]), t(DType::I32, &[3])]),
        (OpKind::Slicing(SlicingOp::DynamicUpdateSlice {}), vec![f32s(&[5, 2]), f32s(&[2, 2]), idx.clone(), idx.clone()]),
        (OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Prod, dims: vec![0] }), vec![f32s(&[2, 3])]),
        (OpKind::Reduce(ReduceOp::ArgReduce { op: ArgOp::Min, dim: 1, index: DType::I64 }), vec![f32s(&[2, 3])]),
        (OpKind::Dot(DotOp::DotGeneral { dims: DotDims::matmul() }), vec![f32s(&[2, 3]), f32s(&[3, 4])]),
        (OpKind::Convolution(quabla_dialect::ConvAttrs { window_strides: &[1], padding: &[1, 0], lhs_dilation: &[1], rhs_dilation: &[1], dims: &quabla_dialect::ConvDims::nchw(1), feature_group_count: 1, batch_group_count: 1 }.to_op()), vec![f32s(&[1, 2, 5]), f32s(&[3, 2, 2])]),
        (OpKind::ReduceWindow(quabla_dialect::ReduceWindowOp::ReduceWindow { op: quabla_dialect::WindowReducer::Max, window: Box::new(quabla_dialect::Window::simple(vec![1, 2], vec![1, 2])) }), vec![f32s(&[2, 4])]),
        (OpKind::ReduceWindow(quabla_dialect::ReduceWindowOp::SelectAndScatterAdd { select: CmpDir::Ge, window: Box::new(quabla_dialect::Window::simple(vec![1, 2], vec![1, 2])) }), vec![f32s(&[2, 2]), f32s(&[2, 4])]),
        (OpKind::ReduceWindow(quabla_dialect::ReduceWindowOp::SelectAndGatherAdd { select: CmpDir::Le, window: Box::new(quabla_dialect::Window::simple(vec![1, 2], vec![1, 2])) }), vec![f32s(&[2, 4]), f32s(&[2, 4])]),
    ]);
    for c in quabla_dialect::Combiner::ALL {
        cases.push((OpKind::Scatter(quabla_dialect::ScatterOp::along_axis(c, 2, 1, 0)), vec![f32s(&[5, 2]), t(DType::I32, &[3]), f32s(&[3, 2])]));
    }
    let f64s = |s: &[i64]| t(DType::F64, s);
    let axis = quabla_dialect::AxisName::parse("batch").unwrap();
    cases.extend([
        (OpKind::Linalg(LinalgOp::Cholesky { lower: true }), vec![f64s(&[2, 3, 3])]),
        (OpKind::Linalg(LinalgOp::TriangularSolve { left_side: false, lower: true, transpose_a: true, unit_diagonal: false }), vec![f64s(&[3, 3]), f64s(&[2, 3])]),
        (OpKind::Linalg(LinalgOp::Lu {}), vec![f64s(&[4, 3])]),
        (OpKind::Linalg(LinalgOp::Qr { full_matrices: false }), vec![f32s(&[4, 3])]),
        (OpKind::Linalg(LinalgOp::Eigh { lower: false }), vec![f64s(&[3, 3])]),
        (OpKind::Linalg(LinalgOp::Svd { full_matrices: true }), vec![f64s(&[2, 4])]),
        (OpKind::Sort(quabla_dialect::SortOp::Sort { dimension: 1, direction: CmpDir::Gt }), vec![f32s(&[2, 3])]),
        (OpKind::Sort(quabla_dialect::SortOp::Argsort { dimension: 0, direction: CmpDir::Lt, index: DType::I64 }), vec![f32s(&[2, 3])]),
        (OpKind::Callback(quabla_dialect::CallbackOp::HostCallback { callback: 0, index: 0, count: 1, batched: vec![] }), vec![f32s(&[2, 3])]),
        (OpKind::Callback(quabla_dialect::CallbackOp::CallbackResult { callback: 0, index: 0, batched: vec![], ty: f32s(&[2, 3]) }), vec![]),
        (OpKind::Collective(quabla_dialect::CollectiveOp::Psum { axis_name: axis.clone() }), vec![f32s(&[2, 3])]),
        (OpKind::Collective(quabla_dialect::CollectiveOp::Pmax { axis_name: axis.clone() }), vec![f32s(&[2, 3])]),
        (OpKind::Collective(quabla_dialect::CollectiveOp::Pmin { axis_name: axis.clone() }), vec![f32s(&[2, 3])]),
        (OpKind::Collective(quabla_dialect::CollectiveOp::AllGather { axis_name: axis.clone(), axis_size: 4 }), vec![f32s(&[2, 3])]),
        (OpKind::Collective(quabla_dialect::CollectiveOp::AxisIndex { axis_name: axis.clone() }), vec![]),
    ]);
    let mut m = Module::default();
    for (i, (kind, params)) in cases.into_iter().enumerate() {
        let mut f = Func::new(format!("op{i}"), &params);
        let ps = f.params.clone();
        f.outputs = f.push(kind, &ps, None).unwrap();
        m.funcs.push(f);
    }
    let callee = m.funcs[0].clone();
    let mut c = Func::new("caller", &callee.param_types());
    let ps = c.params.clone();
    c.outputs = c.push(OpKind::Call(CallOp::Call { callee: callee.name.clone(), results: callee.result_types() }), &ps, None).unwrap();
    m.funcs.push(c);
    // Transform declarations of every kind.
    for (name, kind) in [
        ("op0_jvp", TransformKind::Jvp),
        ("op0_vjp", TransformKind::Vjp),
        ("op0_vmap", TransformKind::Vmap { in_axes: vec![Some(1)], out_axes: vec![Some(0)], size: 4, axis_name: None }),
        ("op0_vmap_named", TransformKind::Vmap { in_axes: vec![Some(1)], out_axes: vec![Some(0)], size: 4, axis_name: quabla_dialect::AxisName::parse("batch") }),
    ] {
        let g = &m.funcs[0];
        let t = Transform { kind, of: g.name.clone() };
        let (p, r) = t.signature(&g.param_types(), &g.result_types());
        m.funcs.push(Func::declaration(name, &p, &r, t));
    }
    m.verify().unwrap();
    m
}

fn stock_accepts(text: &str, tag: &str) {
    let dir = std::env::temp_dir().join(format!("quabla-stock-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("m.mlir");
    std::fs::write(&file, text).unwrap();
    let irdl = root().join("dialect/quabla.irdl.mlir");
    let out = Command::new("/usr/lib/llvm-22/bin/mlir-opt").arg(format!("--irdl-file={}", irdl.display())).arg(&file).output().expect("mlir-opt-22 runs");
    assert!(out.status.success(), "stock mlir-opt rejected Quabla's output ({tag}):\n{}\n{text}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn stock_mlir_opt_parses_every_printed_op() {
    let m = every_op_module();
    stock_accepts(&m.to_mlir(), "printer");
    // Through quabla-opt (MLIR's own printer after our passes).
    let bin = root().join("target").join(if cfg!(debug_assertions) { "debug" } else { "release" }).join("quabla-opt");
    if bin.exists() {
        let dir = std::env::temp_dir().join(format!("quabla-stock-in-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("in.mlir");
        std::fs::write(&f, m.to_mlir()).unwrap();
        let out = Command::new(&bin).arg(&f).arg("--pass-pipeline=builtin.module(quabla-cse,quabla-fold)").output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        stock_accepts(&String::from_utf8_lossy(&out.stdout), "quabla-opt");
    }
}

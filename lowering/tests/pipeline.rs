//! Every op in every dtype it admits lowers, in both ABIs, and the CPU pipeline (with and
//! without vectorization) takes the result to the LLVM dialect, which translates to LLVM IR.
//! One module per op (all dtypes and attribute variants as functions of it) keeps the number
//! of tool runs small.
mod common;

use common::check_pipeline;
use quabla_dialect::{ArgOp, BinaryOp, CallOp, CmpDir, ConstantOp, DType, DotDims, DotOp, ElementwiseOp, Func, LayoutOp, Literal, Module, OpKind, ReduceOp, Reducer, SlicingOp, TensorType, UnaryOp};
use quabla_lowering::Abi;

fn t(d: DType, s: &[i64]) -> TensorType {
    TensorType::new(d, s)
}

/// Functions `@f0, @f1, ...`, one per (kind, params) pair.
fn module_of(items: Vec<(OpKind, Vec<TensorType>)>) -> Module {
    let funcs = items
        .into_iter()
        .enumerate()
        .map(|(i, (kind, params))| {
            let mut f = Func::new(format!("f{i}"), &params);
            let ps = f.params.clone();
            f.outputs = f.push(kind.clone(), &ps, None).unwrap_or_else(|e| panic!("building {} on {params:?}: {e}", kind.name()));
            f
        })
        .collect();
    Module { funcs }
}

fn check(what: &str, items: Vec<(OpKind, Vec<TensorType>)>) {
    assert!(!items.is_empty(), "{what}: no cases");
    let m = module_of(items);
    check_pipeline(what, &m, Abi::Tensor);
    check_pipeline(what, &m, Abi::Dps);
}

/// Shapes every elementwise op is tried on: 0-d, 1-d, 3-d.
fn shapes() -> Vec<Vec<i64>> {
    vec![vec![], vec![5], vec![2, 3, 4]]
}

#[test]
fn unary_ops() {
    for &u in UnaryOp::ALL {
        let items: Vec<_> = DType::ALL
            .into_iter()
            .filter(|d| u.class().admits(*d))
            .flat_map(|d| shapes().into_iter().map(move |s| (OpKind::Elementwise(ElementwiseOp::Unary { op: u }), vec![t(d, &s)])))
            .collect();
        check(u.name(), items);
    }
}

#[test]
fn binary_ops() {
    for &b in BinaryOp::ALL {
        let items: Vec<_> = DType::ALL
            .into_iter()
            .filter(|d| b.class().admits(*d))
            .flat_map(|d| shapes().into_iter().map(move |s| (OpKind::Elementwise(ElementwiseOp::Binary { op: b }), vec![t(d, &s), t(d, &s)])))
            .collect();
        check(b.name(), items);
    }
}

#[test]
fn powi_compare_select() {
    let mut items = vec![];
    for d in [DType::F32, DType::F64, DType::I32, DType::I64] {
        for n in [0, 1, 2, 3, 7, -1, -2, -5] {
            items.push((OpKind::Elementwise(ElementwiseOp::Powi { exponent: n }), vec![t(d, &[4])]));
        }
        items.push((OpKind::Elementwise(ElementwiseOp::Powi { exponent: i64::MIN }), vec![t(d, &[])]));
    }
    check("powi", items);
    let mut items = vec![];
    for d in DType::ALL {
        for dir in CmpDir::ALL {
            for s in shapes() {
                items.push((OpKind::Elementwise(ElementwiseOp::Compare { direction: dir}), vec![t(d, &s), t(d, &s)]));
            }
        }
    }
    check("compare", items);
    let items = DType::ALL.into_iter().flat_map(|d| shapes().into_iter().map(move |s| (OpKind::Elementwise(ElementwiseOp::Select {}), vec![t(DType::I1, &s), t(d, &s), t(d, &s)]))).collect();
    check("select", items);
}

#[test]
fn convert_all_pairs() {
    let items = DType::ALL.into_iter().flat_map(|a| DType::ALL.into_iter().flat_map(move |b| [(OpKind::Elementwise(ElementwiseOp::Convert { to: b }), vec![t(a, &[3, 2])]), (OpKind::Elementwise(ElementwiseOp::Convert { to: b }), vec![t(a, &[])])])).collect();
    check("convert", items);
}

#[test]
fn constants_and_iota() {
    let mut m = Module::default();
    for (i, d) in DType::ALL.into_iter().enumerate() {
        let mut f = Func::new(format!("c{i}"), &[]);
        let splat = f.push1(OpKind::Constant(ConstantOp::Constant { value: Literal::splat(t(d, &[2, 2]), 1.0) }), &[], None).unwrap();
        let dense = f.push1(OpKind::Constant(ConstantOp::Constant { value: Literal::from_f64s(t(d, &[3]), &[0.0, 1.0, -2.5]) }), &[], None).unwrap();
        let scalar = f.push1(OpKind::Constant(ConstantOp::Constant { value: Literal::from_f64s(t(d, &[]), &[1.0]) }), &[], None).unwrap();
        let mut outs = vec![splat, dense, scalar];
        if d.is_float() {
            let special = Literal::from_f64s(t(d, &[4]), &[f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0]);
            outs.push(f.push1(OpKind::Constant(ConstantOp::Constant { value: special }), &[], None).unwrap());
        }
        for (dim, shape) in [(0, vec![5]), (1, vec![2, 3]), (0, vec![2, 3])] {
            let ty = t(d, &shape);
            outs.push(f.push1(OpKind::Constant(ConstantOp::Iota { dim, ty }), &[], None).unwrap());
        }
        f.outputs = outs;
        m.funcs.push(f);
    }
    check_pipeline("constant/iota", &m, Abi::Tensor);
    check_pipeline("constant/iota", &m, Abi::Dps);
}

#[test]
fn layout_ops() {
    let mut items = vec![];
    for d in DType::ALL {
        items.push((OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![], shape: vec![2, 3] }), vec![t(d, &[])]));
        items.push((OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![1], shape: vec![2, 3] }), vec![t(d, &[3])]));
        items.push((OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![0], shape: vec![2, 3] }), vec![t(d, &[2])]));
        items.push((OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![0, 2], shape: vec![4, 2, 3] }), vec![t(d, &[1, 3])]));
        items.push((OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![0, 1], shape: vec![2, 3] }), vec![t(d, &[2, 3])]));
        items.push((OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![0, 1], shape: vec![1, 3] }), vec![t(d, &[1, 1])]));
        for (from, to) in [(vec![2, 3], vec![6]), (vec![6], vec![3, 2]), (vec![2, 3], vec![3, 2]), (vec![], vec![1, 1]), (vec![1, 1], vec![]), (vec![2, 3, 4], vec![6, 4]), (vec![4, 6], vec![2, 2, 3, 2]), (vec![1, 3], vec![3, 1])] {
            items.push((OpKind::Layout(LayoutOp::Reshape { shape: to }), vec![t(d, &from)]));
        }
        items.push((OpKind::Layout(LayoutOp::Transpose { perm: vec![1, 0] }), vec![t(d, &[2, 3])]));
        items.push((OpKind::Layout(LayoutOp::Transpose { perm: vec![2, 0, 1] }), vec![t(d, &[2, 3, 4])]));
        items.push((OpKind::Layout(LayoutOp::Transpose { perm: vec![0, 1] }), vec![t(d, &[2, 3])]));
        items.push((OpKind::Layout(LayoutOp::Transpose { perm: vec![] }), vec![t(d, &[])]));
    }
    check("layout", items);
}

#[test]
fn slicing_ops() {
    let mut items = vec![];
    for d in DType::ALL {
        items.push((OpKind::Slicing(SlicingOp::Concatenate { dim: 0 }), vec![t(d, &[2, 3]), t(d, &[1, 3])]));
        items.push((OpKind::Slicing(SlicingOp::Concatenate { dim: 1 }), vec![t(d, &[2, 3]), t(d, &[2, 2])]));
        items.push((OpKind::Slicing(SlicingOp::Slice { start_indices: vec![1, 0], limit_indices: vec![4, 3], strides: vec![2, 1] }), vec![t(d, &[5, 3])]));
        items.push((OpKind::Slicing(SlicingOp::Slice { start_indices: vec![0], limit_indices: vec![4], strides: vec![1] }), vec![t(d, &[4])]));
        items.push((OpKind::Slicing(SlicingOp::Pad { edge_padding_low: vec![1, 0], edge_padding_high: vec![0, 2], interior_padding: vec![1, 0]}), vec![t(d, &[3, 2]), t(d, &[])]));
        items.push((OpKind::Slicing(SlicingOp::Pad { edge_padding_low: vec![0], edge_padding_high: vec![0], interior_padding: vec![0]}), vec![t(d, &[3]), t(d, &[])]));
        for id in [DType::I32, DType::I64] {
            items.push((OpKind::Slicing(SlicingOp::DynamicSlice { slice_sizes: vec![2, 2]}), vec![t(d, &[4, 3]), t(id, &[]), t(id, &[])]));
            items.push((OpKind::Slicing(SlicingOp::DynamicSlice { slice_sizes: vec![4]}), vec![t(d, &[4]), t(id, &[])]));
            items.push((OpKind::Slicing(SlicingOp::Gather { axis: 0 }), vec![t(d, &[5, 3]), t(id, &[4])]));
            items.push((OpKind::Slicing(SlicingOp::Gather { axis: 1 }), vec![t(d, &[5, 3]), t(id, &[2, 2])]));
            items.push((OpKind::Slicing(SlicingOp::Gather { axis: 0 }), vec![t(d, &[5]), t(id, &[])]));
        }
    }
    check("slicing", items);
}

#[test]
fn reductions() {
    let mut items = vec![];
    for d in DType::ALL {
        for op in Reducer::ALL {
            if d == DType::I1 && matches!(op, Reducer::Sum | Reducer::Prod) {
                continue;
            }
            for dims in [vec![], vec![0], vec![1], vec![0, 2], vec![0, 1, 2]] {
                items.push((OpKind::Reduce(ReduceOp::Reduce { op, dims }), vec![t(d, &[2, 3, 4])]));
            }
            items.push((OpKind::Reduce(ReduceOp::Reduce { op, dims: vec![0] }), vec![t(d, &[7])]));
        }
        if d == DType::I1 {
            continue;
        }
        for op in [ArgOp::Max, ArgOp::Min] {
            for index in [DType::I32, DType::I64] {
                items.push((OpKind::Reduce(ReduceOp::ArgReduce { op, dim: 1, index }), vec![t(d, &[2, 3, 4])]));
                items.push((OpKind::Reduce(ReduceOp::ArgReduce { op, dim: 0, index }), vec![t(d, &[5])]));
            }
        }
    }
    check("reduce", items);
}

#[test]
fn dot_general() {
    let mut items = vec![];
    let dd = |lb: &[i64], rb: &[i64], lc: &[i64], rc: &[i64]| DotDims { lhs_batching_dimensions: lb.to_vec(), rhs_batching_dimensions: rb.to_vec(), lhs_contracting_dimensions: lc.to_vec(), rhs_contracting_dimensions: rc.to_vec() };
    for d in [DType::F32, DType::F64, DType::I32, DType::I64] {
        items.push((OpKind::Dot(DotOp::DotGeneral { dims: DotDims::matmul() }), vec![t(d, &[2, 3]), t(d, &[3, 4])]));
        items.push((OpKind::Dot(DotOp::DotGeneral { dims: dd(&[], &[], &[0], &[0]) }), vec![t(d, &[3]), t(d, &[3])]));
        items.push((OpKind::Dot(DotOp::DotGeneral { dims: dd(&[], &[], &[], &[]) }), vec![t(d, &[2]), t(d, &[3])]));
        items.push((OpKind::Dot(DotOp::DotGeneral { dims: dd(&[], &[], &[], &[]) }), vec![t(d, &[]), t(d, &[])]));
        items.push((OpKind::Dot(DotOp::DotGeneral { dims: dd(&[0], &[0], &[2], &[1]) }), vec![t(d, &[2, 3, 4]), t(d, &[2, 4, 5])]));
        items.push((OpKind::Dot(DotOp::DotGeneral { dims: dd(&[1], &[2], &[0, 3], &[3, 0]) }), vec![t(d, &[2, 3, 4, 5]), t(d, &[5, 6, 3, 2])]));
        items.push((OpKind::Dot(DotOp::DotGeneral { dims: dd(&[], &[], &[0], &[1]) }), vec![t(d, &[3, 2]), t(d, &[4, 3])]));
    }
    check("dot_general", items);
}

#[test]
fn calls() {
    let ty = t(DType::F32, &[3]);
    // Private callee with two results, one of them its argument.
    let mut g = Func::new("g", std::slice::from_ref(&ty));
    g.public = false;
    let p = g.params[0];
    let y = g.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Exp }), &[p], None).unwrap();
    g.outputs = vec![y, p];
    // Public callee (needs its tensor twin under the DPS ABI).
    let mut h = Func::new("h", std::slice::from_ref(&ty));
    let p = h.params[0];
    h.outputs = vec![h.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Neg }), &[p], None).unwrap()];
    let mut f = Func::new("f", std::slice::from_ref(&ty));
    let x = f.params[0];
    let r = f.push(OpKind::Call(CallOp::Call { callee: "g".into(), results: vec![ty.clone(), ty.clone()] }), &[x], None).unwrap();
    let s = f.push1(OpKind::Call(CallOp::Call { callee: "h".into(), results: vec![ty.clone()] }), &[r[0]], None).unwrap();
    let z = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add }), &[s, r[1]], None).unwrap();
    f.outputs = vec![z, r[0]];
    let m = Module { funcs: vec![g, h, f] };
    check_pipeline("call", &m, Abi::Tensor);
    check_pipeline("call", &m, Abi::Dps);
}

#[test]
fn dps_result_edge_cases() {
    let ty = t(DType::F32, &[4]);
    let mut f = Func::new("f", &[ty.clone(), t(DType::I1, &[2])]);
    let (x, b) = (f.params[0], f.params[1]);
    let c = f.push1(OpKind::Constant(ConstantOp::Constant { value: Literal::from_f64s(ty.clone(), &[1.0, 2.0, 3.0, 4.0]) }), &[], None).unwrap();
    let y = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add }), &[x, c], None).unwrap();
    // argument, argument again, constant, computed twice, i1 argument
    f.outputs = vec![x, x, c, y, y, b];
    let mut empty = Func::new("nothing", std::slice::from_ref(&ty));
    empty.outputs = vec![];
    let m = Module { funcs: vec![f, empty] };
    check_pipeline("dps edge cases", &m, Abi::Tensor);
    check_pipeline("dps edge cases", &m, Abi::Dps);
}

#[test]
fn locations_are_kept() {
    let ty = t(DType::F32, &[4]);
    let mut f = Func::new("f", std::slice::from_ref(&ty));
    let x = f.params[0];
    f.outputs = vec![f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Exp }), &[x], Some("\"model.py\":12:5".into())).unwrap()];
    let m = Module { funcs: vec![f] };
    let text = quabla_lowering::lower_module(&m, Abi::Tensor).unwrap();
    assert!(text.contains("math.exp %b0 : f32 loc(\"model.py\":12:5)"), "{text}");
    check_pipeline("locations", &m, Abi::Dps);
}

#[test]
fn unexpanded_transforms_are_rejected() {
    use quabla_dialect::{ElementwiseOp, Transform, TransformKind};
    let ty = t(DType::F32, &[3]);
    let mut f = Func::new("f", std::slice::from_ref(&ty));
    let x = f.params[0];
    f.outputs = vec![f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Sin }), &[x], None).unwrap()];
    let g = Func::declaration("f_vjp", &[ty.clone(), ty.clone()], &[ty.clone(), ty.clone()], Transform { kind: TransformKind::Vjp, of: "f".into() });
    let m = Module { funcs: vec![f, g] };
    let e = quabla_lowering::lower_module(&m, Abi::Dps).unwrap_err().to_string();
    assert!(e.contains("quabla.vjp") && e.contains("@f_vjp") && e.contains("quabla-autodiff"), "{e}");
}

#[test]
fn invalid_modules_are_rejected() {
    let ty = t(DType::F32, &[3]);
    let mut f = Func::new("f", std::slice::from_ref(&ty));
    let x = f.params[0];
    let y = f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Sin }), &[x], None).unwrap();
    f.types[y.0 as usize] = t(DType::F64, &[3]);
    f.outputs = vec![y];
    let e = quabla_lowering::lower_module(&Module { funcs: vec![f] }, Abi::Tensor).unwrap_err().to_string();
    assert!(e.contains("invalid module") && e.contains("quabla.sin"), "{e}");
}

#[test]
fn elementwise_chains_fuse() {
    // broadcast -> mul -> transpose -> tanh -> convert -> reduce: one loop nest after fusion.
    let (x, b) = (t(DType::F32, &[4, 6]), t(DType::F32, &[6]));
    let mut f = Func::new("f", &[x, b]);
    let (p, q) = (f.params[0], f.params[1]);
    let bb = f.push1(OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![1], shape: vec![4, 6] }), &[q], None).unwrap();
    let m = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), &[p, bb], None).unwrap();
    let tr = f.push1(OpKind::Layout(LayoutOp::Transpose { perm: vec![1, 0] }), &[m], None).unwrap();
    let th = f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Tanh }), &[tr], None).unwrap();
    let cv = f.push1(OpKind::Elementwise(ElementwiseOp::Convert { to: DType::F64 }), &[th], None).unwrap();
    f.outputs = vec![f.push1(OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Sum, dims: vec![1] }), &[cv], None).unwrap()];
    let text = quabla_lowering::lower_module(&Module { funcs: vec![f] }, Abi::Dps).unwrap();
    // The emitter fuses the tanh -> convert chain itself (one generic) and reads the broadcast
    // in the multiply through its map (no generic of its own); upstream fusion does the rest
    // across the transpose.
    assert_eq!(text.matches("linalg.generic").count(), 4, "{text}");
    assert!(text.contains("affine_map<(d0, d1) -> (d1)>"), "{text}");
    let fused = common::run_tool("mlir-opt", &["--pass-pipeline=builtin.module(func.func(linalg-fuse-elementwise-ops),canonicalize,cse)".into()], &text).unwrap();
    assert_eq!(fused.matches("linalg.generic").count(), 1, "{fused}");
}

#[test]
fn long_elementwise_chains_are_one_generic() {
    // 300 elementwise ops in a chain: one generic from the emitter (upstream fusion of such a
    // chain is quadratic in its length), with the chain's scalar formulas in its body.
    let ty = t(DType::F32, &[8]);
    let mut f = Func::new("f", &[ty.clone(), ty.clone()]);
    let (mut x, y) = (f.params[0], f.params[1]);
    for i in 0..100 {
        let a = f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Sin }), &[x], None).unwrap();
        let b = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: if i % 2 == 0 { BinaryOp::Mul } else { BinaryOp::Add } }), &[a, y], None).unwrap();
        x = f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Tanh }), &[b], None).unwrap();
    }
    f.outputs = vec![x];
    let text = quabla_lowering::lower_module(&Module { funcs: vec![f] }, Abi::Dps).unwrap();
    assert_eq!(text.matches("linalg.generic").count(), 1, "{text}");
    assert_eq!(text.matches("math.sin").count(), 100);
}

#[test]
fn odd_function_names_are_quoted() {
    let ty = t(DType::F32, &[2]);
    let mut g = Func::new("my-helper", std::slice::from_ref(&ty));
    g.public = false;
    let p = g.params[0];
    g.outputs = vec![g.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Neg }), &[p], None).unwrap()];
    let mut f = Func::new("<lambda>", std::slice::from_ref(&ty));
    let x = f.params[0];
    let y = f.push1(OpKind::Call(CallOp::Call { callee: "my-helper".into(), results: vec![ty.clone()] }), &[x], None).unwrap();
    f.outputs = vec![y];
    let mut h = Func::new("1st", std::slice::from_ref(&ty));
    let x = h.params[0];
    h.outputs = vec![h.push1(OpKind::Call(CallOp::Call { callee: "<lambda>".into(), results: vec![ty.clone()] }), &[x], None).unwrap()];
    let m = Module { funcs: vec![g, f, h] };
    check_pipeline("odd names", &m, Abi::Tensor);
    check_pipeline("odd names", &m, Abi::Dps);
}

#[test]
fn float_sums_are_reassociable() {
    for (d, op, flag) in [(DType::F32, Reducer::Sum, true), (DType::F64, Reducer::Prod, true), (DType::F32, Reducer::Max, false), (DType::I32, Reducer::Sum, false)] {
        let text = quabla_lowering::lower_module(&common::one_op(OpKind::Reduce(ReduceOp::Reduce { op, dims: vec![1] }), &[t(d, &[3, 4])]), Abi::Tensor).unwrap();
        assert_eq!(text.contains("fastmath<reassoc>"), flag, "{text}");
    }
}

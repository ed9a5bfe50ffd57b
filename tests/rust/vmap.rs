//! vmap checks with the reference interpreter: for every op family and every combination of
//! mapped/unmapped operands (at non-zero in_axes and out_axes too), the vmapped function
//! equals a loop over examples; vmap composes with vjp in both orders and with itself.
use quabla_dialect::{BinaryOp, DType, DotDims, DotOp, ElementwiseOp, Func, LayoutOp, Module, OpKind, ReduceOp, Reducer, SlicingOp, TensorType, Transform, TransformKind, UnaryOp};
use quabla_runtime::{interp, Buffer};
use quabla_tests::Rng;

fn t(d: DType, s: &[i64]) -> TensorType {
    TensorType::new(d, s)
}

/// Slice `b` of `x` along `axis`.
fn take(x: &Buffer, axis: usize, i: i64) -> Buffer {
    let ty = x.ty();
    let mut shape = ty.shape.clone();
    shape.remove(axis);
    let out_ty = TensorType::new(ty.dtype, shape.clone());
    let strides = ty.strides();
    let mut bytes = Vec::new();
    let es = ty.dtype.size();
    let n = out_ty.num_elements();
    for k in 0..n {
        // unravel k over `shape`, insert i at axis
        let mut rem = k as i64;
        let mut idx = vec![0i64; shape.len()];
        for d in (0..shape.len()).rev() {
            idx[d] = rem % shape[d];
            rem /= shape[d];
        }
        idx.insert(axis, i);
        let off: i64 = idx.iter().zip(&strides).map(|(a, s)| a * s).sum();
        bytes.extend_from_slice(&x.bytes()[off as usize * es..(off as usize + 1) * es]);
    }
    Buffer::from_bytes(out_ty, &bytes).unwrap()
}

/// Stacks buffers along `axis`.
fn stack(xs: &[Buffer], axis: usize) -> Buffer {
    let ty = xs[0].ty();
    let mut shape = ty.shape.clone();
    shape.insert(axis, xs.len() as i64);
    let out = TensorType::new(ty.dtype, shape.clone());
    let es = ty.dtype.size();
    let mut bytes = vec![0u8; out.num_elements() * es];
    let strides = out.strides();
    for (b, x) in xs.iter().enumerate() {
        for k in 0..x.len() {
            let mut rem = k as i64;
            let mut idx = vec![0i64; ty.rank()];
            for d in (0..ty.rank()).rev() {
                idx[d] = rem % ty.shape[d];
                rem /= ty.shape[d];
            }
            idx.insert(axis, b as i64);
            let off: i64 = idx.iter().zip(&strides).map(|(a, s)| a * s).sum();
            bytes[off as usize * es..(off as usize + 1) * es].copy_from_slice(&x.bytes()[k * es..(k + 1) * es]);
        }
    }
    Buffer::from_bytes(out, &bytes).unwrap()
}

fn vmap_module(f: Func, in_axes: &[Option<i64>], out_axes: &[Option<i64>], size: i64) -> Module {
    let mut m = Module { funcs: vec![f] };
    let g = &m.funcs[0];
    let tr = Transform { kind: TransformKind::Vmap { in_axes: in_axes.to_vec(), out_axes: out_axes.to_vec(), size, axis_name: None }, of: g.name.clone() };
    let (p, r) = tr.signature(&g.param_types(), &g.result_types());
    m.funcs.push(Func::declaration("f_vmap", &p, &r, tr));
    m.verify().unwrap();
    quabla_passes::autodiff::autodiff(&mut m).unwrap();
    m.verify().unwrap();
    m
}

fn one_op(kind: &OpKind, params: &[TensorType]) -> Func {
    let mut f = Func::new("f", params);
    let ps = f.params.clone();
    f.outputs = f.push(kind.clone(), &ps, None).unwrap();
    f
}

/// vmap(f) on batched inputs equals stacking f over examples.
pub(crate) fn check(what: &str, kind: OpKind, params: &[TensorType], inputs: &[Buffer], rng: &mut Rng) {
    let size = 3i64;
    let n = params.len();
    for mask in 0..(1u32 << n) {
        if mask == 0 {
            continue;
        }
        let in_axes: Vec<Option<i64>> = (0..n).map(|i| if mask & (1 << i) != 0 { Some((i as i64 + mask as i64) % (params[i].rank() as i64 + 1)) } else { None }).collect();
        let out_axis = (mask as i64) % 2;
        let f = one_op(&kind, params);
        let out_rank = f.result_types()[0].rank() as i64;
        let out_axes = vec![Some(out_axis.min(out_rank))];
        let m = vmap_module(f, &in_axes, &out_axes, size);
        let batched: Vec<Buffer> = (0..n)
            .map(|i| match in_axes[i] {
                Some(a) => {
                    let ex: Vec<Buffer> = (0..size).map(|_| if params[i].dtype.is_float() { rng.buffer(&params[i], -2.0, 2.0) } else { inputs[i].clone() }).collect();
                    let ex: Vec<Buffer> = ex.into_iter().enumerate().map(|(k, b)| if params[i].dtype.is_float() { b } else { perturb_int(&b, k as i64) }).collect();
                    stack(&ex, a as usize)
                }
                None => inputs[i].clone(),
            })
            .collect();
        let got = interp::run_func(&m, "f_vmap", &batched).unwrap_or_else(|e| panic!("{what} {in_axes:?}: {e}"));
        let mut per = Vec::new();
        for k in 0..size {
            let xs: Vec<Buffer> = (0..n).map(|i| match in_axes[i] { Some(a) => take(&batched[i], a as usize, k), None => batched[i].clone() }).collect();
            per.push(interp::run_func(&m, "f", &xs).unwrap().remove(0));
        }
        let want = stack(&per, out_axes[0].unwrap() as usize);
        assert_eq!(got[0].ty(), want.ty(), "{what} in_axes {in_axes:?}");
        for e in 0..want.len() {
            let (a, b) = (got[0].get_f64(e), want.get_f64(e));
            assert!(a == b || (a - b).abs() <= 1e-12 * (1.0 + b.abs()) || (a.is_nan() && b.is_nan()), "{what} in_axes {in_axes:?} out_axes {out_axes:?}: element {e}: vmap {a} vs loop {b}");
        }
    }
}

/// Integer inputs (indices) differ per example so that batching of indices is exercised.
fn perturb_int(b: &Buffer, k: i64) -> Buffer {
    let v: Vec<f64> = (0..b.len()).map(|i| (b.get_i64(i) + k * (i as i64 + 1)) as f64).collect();
    Buffer::from_f64s(b.ty().clone(), &v).unwrap()
}

#[test]
fn every_family_matches_a_loop() {
    let mut rng = Rng(21);
    let f = |s: &[i64]| t(DType::F64, s);
    let i = |s: &[i64]| t(DType::I64, s);
    let idx = |v: &[i64], s: &[i64]| Buffer::from_slice(s, v).unwrap();
    let cases: Vec<(&str, OpKind, Vec<TensorType>, Vec<Buffer>)> = vec![
        ("sin", OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Sin }), vec![f(&[4])], vec![]),
        ("add", OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add }), vec![f(&[2, 3]), f(&[2, 3])], vec![]),
        ("powi", OpKind::Elementwise(ElementwiseOp::Powi { exponent: 3 }), vec![f(&[3])], vec![]),
        ("select", OpKind::Elementwise(ElementwiseOp::Select {}), vec![t(DType::I1, &[3]), f(&[3]), f(&[3])], vec![]),
        ("broadcast", OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![1], shape: vec![2, 3] }), vec![f(&[3])], vec![]),
        ("reshape", OpKind::Layout(LayoutOp::Reshape { shape: vec![3, 2] }), vec![f(&[2, 3])], vec![]),
        ("transpose", OpKind::Layout(LayoutOp::Transpose { perm: vec![1, 0] }), vec![f(&[2, 3])], vec![]),
        ("slice", OpKind::Slicing(SlicingOp::Slice { start_indices: vec![1], limit_indices: vec![5], strides: vec![2] }), vec![f(&[6])], vec![]),
        ("pad", OpKind::Slicing(SlicingOp::Pad { edge_padding_low: vec![1], edge_padding_high: vec![2], interior_padding: vec![1]}), vec![f(&[3]), f(&[])], vec![]),
        ("concatenate", OpKind::Slicing(SlicingOp::Concatenate { dim: 0 }), vec![f(&[2]), f(&[3])], vec![]),
        ("dynamic_slice", OpKind::Slicing(SlicingOp::DynamicSlice { slice_sizes: vec![2, 2]}), vec![f(&[4, 5]), i(&[]), i(&[])], vec![]),
        ("gather", OpKind::Slicing(SlicingOp::Gather { axis: 1 }), vec![f(&[2, 5]), i(&[3])], vec![]),
        ("reduce_sum", OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Sum, dims: vec![1] }), vec![f(&[2, 3])], vec![]),
        ("reduce_max", OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Max, dims: vec![0] }), vec![f(&[2, 3])], vec![]),
        ("argmax", OpKind::Reduce(ReduceOp::ArgReduce { op: quabla_dialect::ArgOp::Max, dim: 1, index: DType::I64 }), vec![f(&[2, 3])], vec![]),
        ("matmul", OpKind::Dot(DotOp::DotGeneral { dims: DotDims::matmul() }), vec![f(&[2, 3]), f(&[3, 4])], vec![]),
        ("batched dot", OpKind::Dot(DotOp::DotGeneral { dims: DotDims { lhs_batching_dimensions: vec![0], rhs_batching_dimensions: vec![0], lhs_contracting_dimensions: vec![2], rhs_contracting_dimensions: vec![1] } }), vec![f(&[2, 3, 4]), f(&[2, 4, 2])], vec![]),
    ];
    for (what, kind, params, _) in cases {
        let inputs: Vec<Buffer> = params
            .iter()
            .map(|p| match (what, p.dtype) {
                ("dynamic_slice", DType::I64) => idx(&[1], &[]),
                ("gather", DType::I64) => idx(&[4, 0, 2], &[3]),
                (_, DType::I1) => Buffer::from_slice(&p.shape, &[true, false, true]).unwrap(),
                _ => rng.buffer(p, -2.0, 2.0),
            })
            .collect();
        check(what, kind, &params, &inputs, &mut rng);
    }
}

#[test]
fn vmap_of_vjp_gives_per_example_gradients() {
    // f(w, x) = sin(w * x); per-example d f / d w with w unmapped = vmap(vjp(f), in_axes=(None, 0, 0)).
    let s = t(DType::F64, &[]);
    let mut f = Func::new("f", &[s.clone(), s.clone()]);
    f.public = false;
    let a = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), &[f.params[0], f.params[1]], None).unwrap();
    f.outputs = vec![f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Sin }), &[a], None).unwrap()];
    let vjp = Transform { kind: TransformKind::Vjp, of: "f".into() };
    let (p, r) = vjp.signature(&f.param_types(), &f.result_types());
    let dvjp = Func::declaration("f_vjp", &p, &r, vjp);
    let vm = Transform { kind: TransformKind::Vmap { in_axes: vec![None, Some(0), Some(0)], out_axes: vec![Some(0), Some(0), Some(0)], size: 4, axis_name: None }, of: "f_vjp".into() };
    let (p, r) = vm.signature(&dvjp.param_types(), &dvjp.result_types());
    let dvm = Func::declaration("per_example", &p, &r, vm);
    let mut m = Module { funcs: vec![f, dvjp, dvm] };
    m.verify().unwrap();
    quabla_passes::autodiff::autodiff(&mut m).unwrap();
    let w = 0.7;
    let xs = [0.1, -0.4, 1.3, 2.0];
    let out = interp::run_func(&m, "per_example", &[Buffer::from_f64s(s.clone(), &[w]).unwrap(), Buffer::from_f64s(t(DType::F64, &[4]), &xs).unwrap(), Buffer::from_f64s(t(DType::F64, &[4]), &[1.0; 4]).unwrap()]).unwrap();
    for (k, x) in xs.iter().enumerate() {
        assert!((out[1].get_f64(k) - x * (w * x).cos()).abs() < 1e-15, "dw[{k}]");
        assert!((out[2].get_f64(k) - w * (w * x).cos()).abs() < 1e-15, "dx[{k}]");
    }
}

//! Differential tests of the convolution and window families: the CPU JIT (im2col + tiled
//! matmul; windowed generics) equals the reference interpreter for 1/2/3-D convolutions with
//! strides, positive and negative padding, lhs/rhs dilation, feature and batch groups and
//! permuted layouts (f32, f64 within the summation tolerance, i32 exactly), and for every
//! window op with padding, base and window dilation.
use quabla_dialect::{CmpDir, ConvAttrs, ConvDims, DType, OpKind, ReduceWindowOp, TensorType, Window, WindowReducer};
use quabla_lowering::{lower_for_cpu, CpuOptions};
use quabla_runtime::{interp, CompileOptions, Executor};
use quabla_tests::{compare, one_op_module, Rng, Tol};

use crate::executor;

fn check(what: &str, kind: OpKind, params: &[TensorType], tol: Tol, rng: &mut Rng) {
    let m = one_op_module(kind, params);
    let inputs: Vec<_> = params.iter().map(|t| rng.buffer(t, -2.0, 2.0)).collect();
    let want = interp::run_func(&m, "main", &inputs).unwrap_or_else(|e| panic!("{what}: interpreter failed: {e}"));
    let exe = executor().compile(&m, "main", &CompileOptions::default()).unwrap_or_else(|e| panic!("{what}: compile failed: {e}\n{}", m.to_mlir()));
    let refs: Vec<_> = inputs.iter().collect();
    let got = exe.run(&refs).unwrap_or_else(|e| panic!("{what}: run failed: {e}"));
    if let Err(e) = compare(&got[0], &want[0], tol, 50.0) {
        panic!("{what}: JIT differs from the interpreter: {e}\n{}", m.to_mlir());
    }
}

struct Case {
    name: &'static str,
    lhs: Vec<i64>,
    rhs: Vec<i64>,
    strides: Vec<i64>,
    padding: Vec<i64>,
    ld: Vec<i64>,
    rd: Vec<i64>,
    dims: ConvDims,
    fg: i64,
    bg: i64,
}

fn cases() -> Vec<Case> {
    let nhwc = ConvDims::from_specs(&[0, 3, 1, 2], &[3, 2, 0, 1], &[0, 3, 1, 2]);
    vec![
        Case { name: "1d", lhs: vec![2, 3, 11], rhs: vec![4, 3, 3], strides: vec![1], padding: vec![0, 0], ld: vec![1], rd: vec![1], dims: ConvDims::nchw(1), fg: 1, bg: 1 },
        Case { name: "1d strided dilated", lhs: vec![2, 3, 13], rhs: vec![4, 3, 3], strides: vec![2], padding: vec![2, 1], ld: vec![1], rd: vec![2], dims: ConvDims::nchw(1), fg: 1, bg: 1 },
        Case { name: "1d lhs dilation", lhs: vec![1, 2, 6], rhs: vec![3, 2, 4], strides: vec![1], padding: vec![2, 1], ld: vec![3], rd: vec![1], dims: ConvDims::nchw(1), fg: 1, bg: 1 },
        Case { name: "2d negative padding", lhs: vec![2, 2, 10, 9], rhs: vec![3, 2, 3, 3], strides: vec![1, 2], padding: vec![-1, 0, 2, -2], ld: vec![1, 1], rd: vec![1, 1], dims: ConvDims::nchw(2), fg: 1, bg: 1 },
        Case { name: "2d nhwc", lhs: vec![2, 9, 7, 3], rhs: vec![3, 3, 3, 4], strides: vec![2, 2], padding: vec![1, 1, 1, 1], ld: vec![1, 1], rd: vec![1, 1], dims: nhwc.clone(), fg: 1, bg: 1 },
        Case { name: "2d feature groups", lhs: vec![2, 4, 7, 7], rhs: vec![6, 2, 3, 3], strides: vec![1, 2], padding: vec![1, 1, 1, 0], ld: vec![1, 2], rd: vec![2, 1], dims: ConvDims::nchw(2), fg: 2, bg: 1 },
        Case { name: "2d batch groups", lhs: vec![4, 3, 7, 6], rhs: vec![6, 3, 2, 3], strides: vec![1, 1], padding: vec![0, 1, 1, 1], ld: vec![1, 1], rd: vec![1, 1], dims: ConvDims::nchw(2), fg: 1, bg: 2 },
        Case { name: "3d", lhs: vec![1, 2, 6, 5, 7], rhs: vec![3, 2, 2, 3, 2], strides: vec![1, 2, 1], padding: vec![0, 0, 1, 0, 0, 1], ld: vec![1, 1, 1], rd: vec![1, 1, 2], dims: ConvDims::nchw(3), fg: 1, bg: 1 },
        // Large enough for the tiled matmul path (M = 2 * 30 * 30, K = 8 * 9, N = 16).
        Case { name: "2d tiled", lhs: vec![2, 8, 32, 32], rhs: vec![16, 8, 3, 3], strides: vec![1, 1], padding: vec![0, 0, 0, 0], ld: vec![1, 1], rd: vec![1, 1], dims: ConvDims::nchw(2), fg: 1, bg: 1 },
        // Each formulation of the lowering (lowering/src/linalg/convolution.rs, `Form`) on the
        // tiled path: patches as columns (NCHW, output wider than the kernel), with groups and
        // strides; patches as rows with the features innermost (NHWC); patches as rows for a
        // kernel gradient's layout (batch and feature dims swapped, a kernel wider than the
        // output); narrow outputs (N = 10 < 16) and ragged extents.
        Case { name: "2d tiled cols strided", lhs: vec![3, 6, 33, 30], rhs: vec![10, 6, 3, 2], strides: vec![2, 1], padding: vec![1, 1, 0, 1], ld: vec![1, 1], rd: vec![1, 2], dims: ConvDims::nchw(2), fg: 1, bg: 1 },
        Case { name: "2d tiled cols feature groups", lhs: vec![2, 8, 20, 24], rhs: vec![16, 4, 3, 3], strides: vec![1, 1], padding: vec![1, 1, 1, 1], ld: vec![1, 1], rd: vec![1, 1], dims: ConvDims::nchw(2), fg: 2, bg: 1 },
        Case { name: "2d tiled cols batch groups", lhs: vec![4, 8, 20, 24], rhs: vec![16, 8, 3, 3], strides: vec![1, 1], padding: vec![1, 1, 1, 1], ld: vec![1, 1], rd: vec![1, 1], dims: ConvDims::nchw(2), fg: 1, bg: 2 },
        Case { name: "2d tiled cols lhs dilation", lhs: vec![2, 8, 12, 12], rhs: vec![16, 8, 3, 3], strides: vec![1, 1], padding: vec![2, 2, 2, 2], ld: vec![2, 2], rd: vec![1, 1], dims: ConvDims::nchw(2), fg: 1, bg: 1 },
        Case { name: "2d tiled nhwc", lhs: vec![2, 20, 18, 8], rhs: vec![3, 3, 8, 24], strides: vec![1, 1], padding: vec![1, 1, 1, 1], ld: vec![1, 1], rd: vec![1, 1], dims: nhwc.clone(), fg: 1, bg: 1 },
        Case { name: "2d tiled kernel-gradient layout", lhs: vec![6, 5, 20, 20], rhs: vec![6, 10, 18, 18], strides: vec![1, 1], padding: vec![1, 1, 1, 1], ld: vec![1, 1], rd: vec![1, 1], dims: ConvDims::from_specs(&[1, 0, 2, 3], &[1, 0, 2, 3], &[1, 0, 2, 3]), fg: 1, bg: 1 },
        // Large enough for the loop over input features (kernel gradients: M = 8 * 4 * 4, Og = 16).
        Case { name: "2d kernel-gradient feature loop padded", lhs: vec![10, 8, 32, 32], rhs: vec![10, 16, 31, 31], strides: vec![1, 1], padding: vec![1, 1, 2, 0], ld: vec![1, 1], rd: vec![1, 1], dims: ConvDims::from_specs(&[1, 0, 2, 3], &[1, 0, 2, 3], &[1, 0, 2, 3]), fg: 1, bg: 1 },
        Case { name: "2d kernel-gradient feature loop ragged", lhs: vec![10, 8, 32, 32], rhs: vec![10, 10, 31, 31], strides: vec![1, 1], padding: vec![1, 1, 1, 1], ld: vec![1, 1], rd: vec![1, 1], dims: ConvDims::from_specs(&[1, 0, 2, 3], &[1, 0, 2, 3], &[1, 0, 2, 3]), fg: 1, bg: 1 },
        Case { name: "2d kernel-gradient feature loop", lhs: vec![10, 8, 32, 32], rhs: vec![10, 16, 29, 29], strides: vec![1, 1], padding: vec![0, 0, 0, 0], ld: vec![1, 1], rd: vec![1, 1], dims: ConvDims::from_specs(&[1, 0, 2, 3], &[1, 0, 2, 3], &[1, 0, 2, 3]), fg: 1, bg: 1 },
        // Patches written in the packed panel order (the last output extent a multiple of the
        // 32-column panel): ragged output features (10, the kernel padded to 16 rows), strides
        // with rhs dilation, lhs dilation, 1-D; per-image padding throughout.
        Case { name: "2d packed panels", lhs: vec![3, 6, 9, 64], rhs: vec![10, 6, 3, 3], strides: vec![1, 1], padding: vec![1, 1, 1, 1], ld: vec![1, 1], rd: vec![1, 1], dims: ConvDims::nchw(2), fg: 1, bg: 1 },
        Case { name: "2d packed panels strided dilated", lhs: vec![2, 4, 10, 128], rhs: vec![16, 4, 2, 3], strides: vec![1, 2], padding: vec![0, 1, 1, 0], ld: vec![1, 1], rd: vec![2, 1], dims: ConvDims::nchw(2), fg: 1, bg: 1 },
        Case { name: "1d packed panels lhs dilation", lhs: vec![2, 8, 48], rhs: vec![12, 8, 3], strides: vec![1], padding: vec![2, 1], ld: vec![2], rd: vec![1], dims: ConvDims::nchw(1), fg: 1, bg: 1 },
        // lhs dilation by output phase (lowering/src/linalg/convolution.rs, by_phase): NHWC
        // with rhs dilation, a kernel narrower than the dilation (a phase without taps: zeros),
        // rhs dilation equal to the lhs dilation (taps of one parity per phase), a strided
        // undilated dim beside a dilated one, negative padding.
        Case { name: "2d lhs dilation nhwc", lhs: vec![2, 9, 8, 3], rhs: vec![3, 3, 3, 4], strides: vec![1, 1], padding: vec![2, 1, 3, 3], ld: vec![2, 2], rd: vec![2, 1], dims: nhwc.clone(), fg: 1, bg: 1 },
        Case { name: "1d lhs dilation empty phase", lhs: vec![2, 3, 7], rhs: vec![4, 3, 2], strides: vec![1], padding: vec![0, -1], ld: vec![3], rd: vec![1], dims: ConvDims::nchw(1), fg: 1, bg: 1 },
        Case { name: "1d lhs and rhs dilation 2", lhs: vec![1, 2, 8], rhs: vec![3, 2, 3], strides: vec![1], padding: vec![1, 2], ld: vec![2], rd: vec![2], dims: ConvDims::nchw(1), fg: 1, bg: 1 },
        Case { name: "2d lhs dilation beside stride", lhs: vec![2, 4, 6, 9], rhs: vec![6, 2, 3, 3], strides: vec![1, 2], padding: vec![1, -1, 0, 2], ld: vec![2, 1], rd: vec![1, 1], dims: ConvDims::nchw(2), fg: 2, bg: 1 },
        // NHWC per image (patches as rows, the kernel packed once): ragged output features,
        // a strided 7x7 stem.
        Case { name: "2d nhwc per image", lhs: vec![3, 32, 32, 16], rhs: vec![5, 5, 16, 6], strides: vec![1, 1], padding: vec![2, 2, 2, 2], ld: vec![1, 1], rd: vec![1, 1], dims: nhwc.clone(), fg: 1, bg: 1 },
        // NHWC with a few output features (3, a panel's columns mostly padding): per image,
        // and the input gradient of a strided RGB stem (lhs dilation by phase).
        Case { name: "2d nhwc few output features", lhs: vec![3, 32, 32, 16], rhs: vec![3, 3, 16, 3], strides: vec![1, 1], padding: vec![1, 1, 1, 1], ld: vec![1, 1], rd: vec![1, 1], dims: nhwc.clone(), fg: 1, bg: 1 },
        Case { name: "2d nhwc few output features lhs dilation", lhs: vec![2, 16, 16, 32], rhs: vec![7, 7, 32, 3], strides: vec![1, 1], padding: vec![3, 4, 3, 4], ld: vec![2, 2], rd: vec![1, 1], dims: nhwc.clone(), fg: 1, bg: 1 },
        Case { name: "2d nhwc per image strided stem", lhs: vec![3, 64, 64, 8], rhs: vec![7, 7, 8, 10], strides: vec![2, 2], padding: vec![3, 3, 2, 4], ld: vec![1, 1], rd: vec![1, 1], dims: nhwc.clone(), fg: 1, bg: 1 },
        // Depthwise (one input and one output feature per group: one generic, no patches),
        // NCHW strided with rhs dilation, NHWC, 1-D with lhs dilation.
        Case { name: "2d depthwise", lhs: vec![2, 4, 9, 10], rhs: vec![4, 1, 3, 3], strides: vec![1, 2], padding: vec![1, 1, 2, 0], ld: vec![1, 1], rd: vec![2, 1], dims: ConvDims::nchw(2), fg: 4, bg: 1 },
        Case { name: "2d depthwise nhwc", lhs: vec![2, 6, 5, 3], rhs: vec![3, 2, 1, 3], strides: vec![1, 1], padding: vec![1, 1, 0, 1], ld: vec![1, 1], rd: vec![1, 1], dims: nhwc.clone(), fg: 3, bg: 1 },
        Case { name: "1d depthwise lhs dilation", lhs: vec![3, 5, 9], rhs: vec![5, 1, 4], strides: vec![1], padding: vec![2, 3], ld: vec![2], rd: vec![1], dims: ConvDims::nchw(1), fg: 5, bg: 1 },
        // One input and one output feature: the depthwise generic with G = 1 (2-D and more
        // with the output rows outside the taps), NCHW strided with padding and rhs dilation,
        // NHWC, 3-D, lhs dilation (by phase), a 1-D kernel gradient's shape (a short output,
        // a long kernel).
        Case { name: "2d single channel", lhs: vec![2, 1, 9, 10], rhs: vec![1, 1, 3, 4], strides: vec![1, 2], padding: vec![1, 1, 2, 0], ld: vec![1, 1], rd: vec![2, 1], dims: ConvDims::nchw(2), fg: 1, bg: 1 },
        Case { name: "2d single channel nhwc", lhs: vec![2, 6, 5, 1], rhs: vec![3, 2, 1, 1], strides: vec![1, 1], padding: vec![1, 1, 0, 1], ld: vec![1, 1], rd: vec![1, 1], dims: nhwc.clone(), fg: 1, bg: 1 },
        Case { name: "3d single channel", lhs: vec![1, 1, 5, 6, 7], rhs: vec![1, 1, 2, 3, 2], strides: vec![1, 2, 1], padding: vec![0, 1, 1, 0, 0, 1], ld: vec![1, 1, 1], rd: vec![1, 1, 2], dims: ConvDims::nchw(3), fg: 1, bg: 1 },
        Case { name: "2d single channel lhs dilation", lhs: vec![1, 1, 6, 5], rhs: vec![1, 1, 3, 2], strides: vec![1, 1], padding: vec![2, 1, 1, 1], ld: vec![2, 3], rd: vec![1, 1], dims: ConvDims::nchw(2), fg: 1, bg: 1 },
        Case { name: "1d single channel long kernel", lhs: vec![1, 1, 300], rhs: vec![1, 1, 280], strides: vec![1], padding: vec![0, 0], ld: vec![1], rd: vec![1], dims: ConvDims::nchw(1), fg: 1, bg: 1 },
        Case { name: "1d tiled cols", lhs: vec![4, 8, 200], rhs: vec![12, 8, 5], strides: vec![1], padding: vec![2, 2], ld: vec![1], rd: vec![1], dims: ConvDims::nchw(1), fg: 1, bg: 1 },
    ]
}

#[test]
fn convolution_jit_equals_interpreter() {
    let mut rng = Rng(11);
    for c in cases() {
        for d in [DType::F32, DType::F64, DType::I32] {
            let kind = OpKind::Convolution(ConvAttrs { window_strides: &c.strides, padding: &c.padding, lhs_dilation: &c.ld, rhs_dilation: &c.rd, dims: &c.dims, feature_group_count: c.fg, batch_group_count: c.bg }.to_op());
            let tol = match d {
                DType::F32 => Tol::Rel(1e-5),
                DType::F64 => Tol::Rel(1e-12),
                _ => Tol::Exact,
            };
            check(&format!("{} {d}", c.name), kind, &[TensorType::new(d, c.lhs.clone()), TensorType::new(d, c.rhs.clone())], tol, &mut rng);
        }
    }
}

#[test]
fn window_ops_jit_equal_interpreter() {
    let mut rng = Rng(12);
    let windows = [
        (vec![2, 6, 7, 3], Window { window_dimensions: vec![1, 2, 3, 1], window_strides: vec![1, 2, 2, 1], base_dilations: vec![1, 1, 1, 1], window_dilations: vec![1, 1, 1, 1], padding: vec![0, 0, 1, 0, 1, 1, 0, 0] }),
        (vec![3, 9], Window { window_dimensions: vec![2, 3], window_strides: vec![1, 2], base_dilations: vec![1, 2], window_dilations: vec![1, 2], padding: vec![1, 0, -1, 2] }),
        (vec![10], Window { window_dimensions: vec![10], window_strides: vec![1], base_dilations: vec![1], window_dilations: vec![1], padding: vec![9, 0] }),
    ];
    for (shape, w) in windows {
        for d in [DType::F32, DType::F64] {
            let x = TensorType::new(d, shape.clone());
            let out = TensorType::new(d, w.out_shape(&shape));
            for r in WindowReducer::ALL {
                check(&format!("{} {shape:?} {d}", r.name()), OpKind::ReduceWindow(ReduceWindowOp::ReduceWindow { op: r, window: Box::new(w.clone()) }), std::slice::from_ref(&x), Tol::Rel(1e-5), &mut rng);
            }
            for s in [CmpDir::Ge, CmpDir::Le] {
                check(&format!("select_and_scatter_add {shape:?} {d}"), OpKind::ReduceWindow(ReduceWindowOp::SelectAndScatterAdd { select: s, window: Box::new(w.clone()) }), &[out.clone(), x.clone()], Tol::Rel(1e-5), &mut rng);
                check(&format!("select_and_gather_add {shape:?} {d}"), OpKind::ReduceWindow(ReduceWindowOp::SelectAndGatherAdd { select: s, window: Box::new(w.clone()) }), &[x.clone(), x.clone()], Tol::Exact, &mut rng);
            }
        }
        let xi = TensorType::new(DType::I64, shape.clone());
        for r in WindowReducer::ALL {
            check(&format!("{} {shape:?} i64", r.name()), OpKind::ReduceWindow(ReduceWindowOp::ReduceWindow { op: r, window: Box::new(w.clone()) }), std::slice::from_ref(&xi), Tol::Exact, &mut rng);
        }
    }
}

#[test]
fn cumulative_windows_are_scans_equal_to_the_interpreter_on_one_and_two_threads() {
    // Windows spanning a whole axis with a cumulative padding (what cumsum/cummax/cummin
    // trace) lower to scans (quabla_dialect::Window::scan_axis): forward and
    // reverse, along the first, a middle and the last axis (the contiguous one carries the
    // running value in a register), with unit axes around, large enough that the outer
    // slices split across threads; every reducer, float sums and products within a relative
    // tolerance (a reverse scan reassociates them) and the rest exactly. A sliding window shorter than its axis is not a scan.
    let mut rng = Rng(14);
    // [64, 1, 2048] along its last axis: one part of 32 slices per thread; [65, 1, 2048]:
    // one slice per iteration (65 parts do not divide); along the first axis, one slice of
    // 2048 columns, 1024 per thread.
    let shapes: [&[i64]; 6] = [&[7], &[5, 300], &[300, 5], &[3, 40, 6], &[64, 1, 2048], &[65, 1, 2048]];
    let mut case = 0;
    for shape in shapes {
        for axis in 0..shape.len() {
            let n = shape[axis];
            if n < 2 {
                continue;
            }
            for reverse in [false, true] {
                let mut w = Window::simple(vec![1; shape.len()], vec![1; shape.len()]);
                w.window_dimensions[axis] = n;
                w.padding[2 * axis + usize::from(reverse)] = n - 1;
                assert_eq!(w.scan_axis(shape), Some((axis, reverse)));
                // One element type per case, in turn.
                case += 1;
                {
                    let d = [DType::F32, DType::F64, DType::I32][case % 3];
                    let x = TensorType::new(d, shape.to_vec());
                    for r in WindowReducer::ALL {
                        let what = format!("{} {shape:?} axis {axis} reverse {reverse} {d}", r.name());
                        let m = one_op_module(OpKind::ReduceWindow(ReduceWindowOp::ReduceWindow { op: r, window: Box::new(w.clone()) }), std::slice::from_ref(&x));
                        let inputs = [rng.buffer(&x, -2.0, 2.0)];
                        let want = interp::run_func(&m, "main", &inputs).unwrap();
                        let tol = if d == DType::I32 || !matches!(r, WindowReducer::Sum | WindowReducer::Prod) { Tol::Exact } else { Tol::Rel(1e-5) };
                        for threads in [1, 2] {
                            // No window loop: the lowered text has no reduction iterator.
                            let cm = lower_for_cpu(&m, &CpuOptions { threads: threads as i64, ..CpuOptions::default() }).unwrap();
                            assert!(!cm.text.contains("reduction"), "{what}: a window loop:\n{}", cm.text);
                            // Written into the output's buffer (no buffer of its own, copied).
                            assert!(cm.text.contains("bufferization.to_tensor %out0"), "{what}: into the output:\n{}", cm.text);
                            // Along the first axis of [64 or 65, 1, 2048], one slice whose
                            // columns the threads share.
                            let columns = axis == 0 && shape.len() == 3;
                            assert_eq!(cm.parallel, threads == 2 && shape[0] >= 64 && (axis == 2 || columns), "{what}: slices on threads");
                            let opts = CompileOptions { threads, ..CompileOptions::default() };
                            let got = executor().compile(&m, "main", &opts).unwrap().run(&[&inputs[0]]).unwrap();
                            if let Err(e) = compare(&got[0], &want[0], tol, n as f64) {
                                panic!("{what}, {threads} threads: {e}");
                            }
                        }
                    }
                }
            }
        }
    }
    // A scan read by another op (not an output): into a tensor of its own.
    let x = TensorType::new(DType::F32, [3i64, 4096]);
    let mut w = Window::simple(vec![3, 1], vec![1, 1]);
    w.padding[0] = 2;
    let mut f = quabla_dialect::Func::new("main", std::slice::from_ref(&x));
    let s = f.push1(OpKind::ReduceWindow(ReduceWindowOp::ReduceWindow { op: WindowReducer::Sum, window: Box::new(w) }), &f.params.clone(), None).unwrap();
    f.outputs = vec![f.push1(OpKind::Elementwise(quabla_dialect::ElementwiseOp::Unary { op: quabla_dialect::UnaryOp::Neg }), &[s], None).unwrap()];
    let m = quabla_dialect::Module { funcs: vec![f] };
    let inputs = [rng.buffer(&x, -2.0, 2.0)];
    let want = interp::run_func(&m, "main", &inputs).unwrap();
    for threads in [1, 2] {
        let got = executor().compile(&m, "main", &CompileOptions { threads, ..CompileOptions::default() }).unwrap().run(&[&inputs[0]]).unwrap();
        compare(&got[0], &want[0], Tol::Rel(1e-6), 3.0).unwrap_or_else(|e| panic!("-cumsum of [3, 4096], {threads} threads: {e}"));
    }
    let mut slide = Window::simple(vec![4, 1], vec![1, 1]);
    slide.padding[0] = 3;
    assert_eq!(slide.scan_axis(&[10, 3]), None);
}

#[test]
fn per_image_convolution_on_one_and_two_threads() {
    // NCHW, large enough that the loop over the images is an scf.forall on two threads
    // (lowering/src/linalg/convolution.rs, per_image_loop): equal to the interpreter on one
    // and two threads, and the same bits on both (each image's product is computed alike).
    use quabla_lowering::{lower_for_cpu, CpuOptions};
    let mut rng = Rng(12);
    let (strides, padding, one) = (vec![1, 1], vec![1, 1, 1, 1], vec![1, 1]);
    let dims = ConvDims::nchw(2);
    let kind = OpKind::Convolution(ConvAttrs { window_strides: &strides, padding: &padding, lhs_dilation: &one, rhs_dilation: &one, dims: &dims, feature_group_count: 1, batch_group_count: 1 }.to_op());
    // 30 x 30: the patches packed by the product; 32 x 32: written in panel order (no packing
    // transpose in the lowered text).
    for (d, hw) in [(DType::F32, 30), (DType::F64, 30), (DType::F32, 32), (DType::F64, 32)] {
        let params = [TensorType::new(d, [8, 16, hw, hw]), TensorType::new(d, [32, 16, 3, 3])];
        let m = one_op_module(kind.clone(), &params);
        let cm = lower_for_cpu(&m, &CpuOptions { threads: 2, ..CpuOptions::default() }).unwrap();
        assert!(cm.parallel && cm.text.contains("scf.forall"), "{d}: parallel loop over the images");
        // The generated product's packing (the runtime's product packs in its own code).
        let gen = lower_for_cpu(&m, &CpuOptions { threads: 2, runtime_gemm: false, ..CpuOptions::default() }).unwrap();
        assert_eq!(gen.text.contains("linalg.transpose"), hw == 30, "{d} {hw}x{hw}: packing transpose");
        let inputs: Vec<_> = params.iter().map(|t| rng.buffer(t, -2.0, 2.0)).collect();
        let want = &interp::run_func(&m, "main", &inputs).unwrap()[0];
        let tol = if d == DType::F32 { Tol::Rel(1e-5) } else { Tol::Rel(1e-12) };
        let mut outs = vec![];
        for runtime_gemm in [true, false] {
            for threads in [1, 2] {
                let got = executor().compile(&m, "main", &CompileOptions { threads, runtime_gemm, ..CompileOptions::default() }).unwrap().run(&[&inputs[0], &inputs[1]]).unwrap().remove(0);
                if let Err(e) = compare(&got, want, tol, 50.0) {
                    panic!("{d}, {threads} threads (runtime products {runtime_gemm}): JIT differs from the interpreter: {e}");
                }
                outs.push(got);
            }
        }
        assert!(outs[0].bytes() == outs[1].bytes() && outs[2].bytes() == outs[3].bytes(), "{d}: one and two threads differ");
    }
    // NHWC per image (patches as rows): the same on one and two threads.
    let nhwc = ConvDims::from_specs(&[0, 3, 1, 2], &[3, 2, 0, 1], &[0, 3, 1, 2]);
    let kind = OpKind::Convolution(ConvAttrs { window_strides: &strides, padding: &padding, lhs_dilation: &one, rhs_dilation: &one, dims: &nhwc, feature_group_count: 1, batch_group_count: 1 }.to_op());
    images_on_threads("nhwc", kind, [TensorType::new(DType::F32, [8, 32, 32, 32]), TensorType::new(DType::F32, [3, 3, 32, 8])], &mut rng);
    // NWC in, NCW out, with a per-image product large enough to be "parallel by itself"
    // (1024 x 64 x 320): the product with the prepacked kernel never is, so the images are
    // split instead. (NWC out, stride 1: the patches are windows of the input, dilated or not,
    // `windowed` below.)
    let (s1, p1, o1, d2) = (vec![1], vec![4, 4], vec![1], vec![2]);
    let nwc = ConvDims::from_specs(&[0, 2, 1], &[2, 1, 0], &[0, 1, 2]);
    let kind = OpKind::Convolution(ConvAttrs { window_strides: &s1, padding: &p1, lhs_dilation: &o1, rhs_dilation: &d2, dims: &nwc, feature_group_count: 1, batch_group_count: 1 }.to_op());
    images_on_threads("nwc", kind, [TensorType::new(DType::F32, [4, 1024, 64]), TensorType::new(DType::F32, [5, 64, 64])], &mut rng);
}

#[test]
fn outputs_computed_in_another_shape_are_written_in_place() {
    // An NHWC convolution computes its output as [images, pixels, features] and reshapes it
    // back: the executor materializes that value into the output's memref viewed as [images,
    // pixels, features] (quabla_runtime's output_views), so it is written in place, not into
    // a buffer of its own copied at the end. Equal to the interpreter on one and two threads.
    let mut rng = Rng(73);
    let (s, p, o) = (vec![1, 1], vec![1, 1, 1, 1], vec![1, 1]);
    let nhwc = ConvDims::from_specs(&[0, 3, 1, 2], &[3, 2, 0, 1], &[0, 3, 1, 2]);
    let kind = OpKind::Convolution(ConvAttrs { window_strides: &s, padding: &p, lhs_dilation: &o, rhs_dilation: &o, dims: &nhwc, feature_group_count: 1, batch_group_count: 1 }.to_op());
    let params = [TensorType::new(DType::F32, [8, 32, 32, 16]), TensorType::new(DType::F32, [3, 3, 16, 32])];
    let m = one_op_module(kind, &params);
    for threads in [1, 2] {
        let tagged = executor().lower_tagged(&m, &CompileOptions { threads, ..CompileOptions::default() }).unwrap();
        assert!(tagged.contains("= memref.collapse_shape %arg2") && tagged.contains("writable %collapse_shape : (tensor<8x1024x32xf32>"), "{threads} threads:\n{tagged}");
    }
    on_one_and_two_threads("nhwc into its output", &m, &params, false, &mut rng);
}

#[test]
fn windowed_nwc_convolution_on_one_and_two_threads() {
    // A stride-1 undilated NWC convolution whose product the runtime computes reads its
    // patches as overlapping rows of the padded input (convolution.rs `windowed`: a
    // reinterpret_cast view, no patch copy), batched over the images: equal to the
    // interpreter on one and two threads, the same bits on both; padded (a fresh input) and
    // not (the parameter itself), kernel [W, I, O] and [O, I, W].
    let mut rng = Rng(71);
    let (s1, o1) = (vec![1], vec![1]);
    for (padding, kernel, kshape) in [(vec![2, 2], [2, 1, 0], [5, 64, 64]), (vec![0, 0], [0, 1, 2], [48, 64, 7])] {
        let nwc = ConvDims::from_specs(&[0, 2, 1], &kernel, &[0, 2, 1]);
        let kind = OpKind::Convolution(ConvAttrs { window_strides: &s1, padding: &padding, lhs_dilation: &o1, rhs_dilation: &o1, dims: &nwc, feature_group_count: 1, batch_group_count: 1 }.to_op());
        let params = [TensorType::new(DType::F32, [3, 1030, 64]), TensorType::new(DType::F32, kshape)];
        lowered_with(&format!("{padding:?}"), kind, params, &["memref.reinterpret_cast", "@quabla_gemm_f32"], true, &mut rng);
    }
    // Dilated (rhs dilation 2, padded 4 and 4): one product per tap accumulating into the
    // output, each tap's rows read from its offset.
    let (d2, p4) = (vec![2], vec![4, 4]);
    let nwc = ConvDims::from_specs(&[0, 2, 1], &[2, 1, 0], &[0, 2, 1]);
    let kind = OpKind::Convolution(ConvAttrs { window_strides: &s1, padding: &p4, lhs_dilation: &o1, rhs_dilation: &d2, dims: &nwc, feature_group_count: 1, batch_group_count: 1 }.to_op());
    lowered_with("dilated", kind, [TensorType::new(DType::F32, [4, 1024, 64]), TensorType::new(DType::F32, [5, 64, 64])], &["memref.reinterpret_cast", "@quabla_gemm_f32"], true, &mut rng);
    // Its kernel gradient as JAX's transpose rule writes it (input [N, W, C] with C as batch,
    // the cotangent [N, W', O] as kernel, result [K, C, O]): windows accumulated per image.
    // (Each image's product, 320 x 48 with K = 1026, is split along K on two threads:
    // kernels::gemm::gemm_split_k, sums in another order.)
    for padding in [vec![0, 0], vec![2, 2]] {
        let dims = ConvDims::from_specs(&[2, 0, 1], &[2, 0, 1], &[1, 2, 0]);
        let kind = OpKind::Convolution(ConvAttrs { window_strides: &s1, padding: &padding, lhs_dilation: &o1, rhs_dilation: &o1, dims: &dims, feature_group_count: 1, batch_group_count: 1 }.to_op());
        let wo = 1026 + padding[0] + padding[1];
        let params = [TensorType::new(DType::F32, [3, 1030, 64]), TensorType::new(DType::F32, [3, wo, 48])];
        lowered_with(&format!("kernel gradient {padding:?}"), kind, params, &["memref.reinterpret_cast", "scf.for"], false, &mut rng);
    }
    // The kernel gradient of a dilated window (taps 2 positions apart: stride 2 here, 5 taps
    // over a cotangent of 1022 positions): one product per tap into its rows of the result.
    let (s2, p0) = (vec![2], vec![0, 0]);
    let dims = ConvDims::from_specs(&[2, 0, 1], &[2, 0, 1], &[1, 2, 0]);
    let kind = OpKind::Convolution(ConvAttrs { window_strides: &s2, padding: &p0, lhs_dilation: &o1, rhs_dilation: &o1, dims: &dims, feature_group_count: 1, batch_group_count: 1 }.to_op());
    lowered_with("dilated kernel gradient", kind, [TensorType::new(DType::F32, [3, 1030, 64]), TensorType::new(DType::F32, [3, 1022, 48])], &["memref.reinterpret_cast", "offset: 3072>>", "scf.for"], false, &mut rng);
}

/// The convolution `kind` of f32 operands `params`, lowered for two threads with each of
/// `marks` in its text: equal to the interpreter on one and two threads (the same bits on
/// both when `same_bits`).
fn lowered_with(what: &str, kind: OpKind, params: [TensorType; 2], marks: &[&str], same_bits: bool, rng: &mut Rng) {
    use quabla_lowering::{lower_for_cpu, CpuOptions};
    let m = one_op_module(kind, &params);
    let text = lower_for_cpu(&m, &CpuOptions { threads: 2, ..CpuOptions::default() }).unwrap().text;
    assert!(marks.iter().all(|k| text.contains(k)), "{what}: {marks:?} in\n{text}");
    on_one_and_two_threads(what, &m, &params, same_bits, rng);
}

/// Module `m` (one convolution of f32 operands `params`) on random inputs: equal to the
/// interpreter on one and two threads, the same bits on both when `same_bits`.
fn on_one_and_two_threads(what: &str, m: &quabla_dialect::Module, params: &[TensorType; 2], same_bits: bool, rng: &mut Rng) {
    let inputs: Vec<_> = params.iter().map(|t| rng.buffer(t, -2.0, 2.0)).collect();
    let want = &interp::run_func(m, "main", &inputs).unwrap()[0];
    let outs: Vec<_> = [1, 2].iter().map(|&threads| executor().compile(m, "main", &CompileOptions { threads, ..CompileOptions::default() }).unwrap().run(&[&inputs[0], &inputs[1]]).unwrap().remove(0)).collect();
    for got in &outs {
        compare(got, want, Tol::Rel(1e-5), 200.0).unwrap_or_else(|e| panic!("{what}: JIT differs from the interpreter: {e}"));
    }
    assert!(!same_bits || outs[0].bytes() == outs[1].bytes(), "{what}: one and two threads differ");
}

/// The convolution `kind` of f32 operands `params`: its images in an `scf.forall` on two
/// threads, equal to the interpreter on one and two, the same bits on both.
fn images_on_threads(what: &str, kind: OpKind, params: [TensorType; 2], rng: &mut Rng) {
    use quabla_lowering::{lower_for_cpu, CpuOptions};
    let m = one_op_module(kind, &params);
    let cm = lower_for_cpu(&m, &CpuOptions { threads: 2, ..CpuOptions::default() }).unwrap();
    assert!(cm.parallel && cm.text.contains("scf.forall"), "{what}: parallel loop over the images");
    on_one_and_two_threads(what, &m, &params, true, rng);
}

#[test]
fn single_channel_filter_on_one_and_two_threads() {
    // One image, one input and one output feature, large enough for the loop over the output
    // rows to be split between two threads: equal to the interpreter, the same bits on one and
    // two threads (each element sums its taps in the same order).
    let mut rng = Rng(14);
    let (strides, padding, one) = (vec![1, 1], vec![2, 2, 2, 2], vec![1, 1]);
    let dims = ConvDims::nchw(2);
    let kind = OpKind::Convolution(ConvAttrs { window_strides: &strides, padding: &padding, lhs_dilation: &one, rhs_dilation: &one, dims: &dims, feature_group_count: 1, batch_group_count: 1 }.to_op());
    let params = [TensorType::new(DType::F32, [1, 1, 300, 300]), TensorType::new(DType::F32, [1, 1, 5, 5])];
    let m = one_op_module(kind, &params);
    on_one_and_two_threads("single channel 300^2 by 5^2", &m, &params, true, &mut rng);
}

#[test]
fn kernel_gradient_feature_loop_on_one_and_two_threads() {
    // Kernel gradients (batch and feature dims swapped) large enough for the loop over the
    // input features and, on two threads, split over the output batch in an scf.forall
    // (lowering/src/linalg/convolution.rs, feature_parts): equal to the interpreter on one and
    // two threads and the same bits on both (each part sums the features in the same order;
    // products split along K on two threads only within reassociation).
    // 1-D with the output features one panel (32) and ragged (10: on AVX-512 hosts the f32
    // product is the runtime's narrow path instead, threads splitting its rows), 2-D with
    // padding; f32, f64.
    use quabla_lowering::{lower_for_cpu, CpuOptions};
    let mut rng = Rng(13);
    let cases: [(Vec<i64>, Vec<i64>, Vec<i64>, ConvDims); 3] = [
        (vec![8, 32, 1024], vec![8, 32, 1024], vec![2, 2], ConvDims::from_specs(&[1, 0, 2], &[1, 0, 2], &[1, 0, 2])),
        (vec![8, 32, 1024], vec![8, 10, 1024], vec![2, 2], ConvDims::from_specs(&[1, 0, 2], &[1, 0, 2], &[1, 0, 2])),
        (vec![12, 16, 32, 32], vec![12, 16, 31, 31], vec![1, 1, 2, 0], ConvDims::from_specs(&[1, 0, 2, 3], &[1, 0, 2, 3], &[1, 0, 2, 3])),
    ];
    for (lhs, rhs, padding, dims) in cases {
        let n = lhs.len() - 2;
        let one = vec![1; n];
        let kind = OpKind::Convolution(ConvAttrs { window_strides: &one, padding: &padding, lhs_dilation: &one, rhs_dilation: &one, dims: &dims, feature_group_count: 1, batch_group_count: 1 }.to_op());
        for d in [DType::F32, DType::F64] {
            let what = format!("{d} {lhs:?} x {rhs:?}");
            let params = [TensorType::new(d, lhs.clone()), TensorType::new(d, rhs.clone())];
            let m = one_op_module(kind.clone(), &params);
            let cm = lower_for_cpu(&m, &CpuOptions { threads: 2, ..CpuOptions::default() }).unwrap();
            let narrow = rhs[1] < 32 && quabla_lowering::tiling::runtime_gemm(d, [1, 64, rhs[1], 1024], quabla_lowering::tiling::host_regs());
            if !narrow {
                assert!(cm.parallel && cm.text.contains("scf.forall"), "{what}: parallel loop over the output batch");
            }
            let inputs: Vec<_> = params.iter().map(|t| rng.buffer(t, -2.0, 2.0)).collect();
            let want = &interp::run_func(&m, "main", &inputs).unwrap()[0];
            let tol = if d == DType::F32 { Tol::Rel(1e-4) } else { Tol::Rel(1e-11) };
            let outs: Vec<_> = [1, 2].iter().map(|&threads| executor().compile(&m, "main", &CompileOptions { threads, ..CompileOptions::default() }).unwrap().run(&[&inputs[0], &inputs[1]]).unwrap().remove(0)).collect();
            for (got, threads) in outs.iter().zip([1, 2]) {
                compare(got, want, tol, 50.0).unwrap_or_else(|e| panic!("{what}, {threads} threads: JIT differs from the interpreter: {e}"));
            }
            // The same bits on both (the parts' order), or within the tolerance where a part's
            // product has a small output and a long K, which two threads split along K
            // (quabla_kernels::gemm::gemm_split_k: a reassociation of the sums).
            assert!(outs[0].bytes() == outs[1].bytes() || compare(&outs[0], &outs[1], tol, 50.0).is_ok(), "{what}: one and two threads differ");
        }
    }
}

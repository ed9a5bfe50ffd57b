//! The CUDA lowering without a GPU: every op of `every_op_module` (one function per op kind)
//! lowers to PTX that the `ptxas` of the nvidia-cuda-nvcc-cu12 wheel assembles for sm_80 and
//! sm_90, or is one of the explicit gaps below (a typed `LowerError::Unsupported` with rule
//! `cuda`). The host plans are checked too: every launch names a kernel with PTX, grids and
//! blocks are non-empty, every buffer argument exists. Skipped, with a message, only when the
//! wheel is absent (CI installs it from requirements-dev.txt).
use std::process::Command;

use quabla_dialect::mlir::new_context;
use quabla_dialect::Module;
use quabla_lowering::cuda::{self, CudaOptions, Operand, Step, Toolkit};
use quabla_lowering::LowerError;

use crate::stock_mlir_opt::every_op_module;

/// Ops without a CUDA lowering; each must be refused with `Unsupported { rule: "cuda" }`
/// (none: loops, host branches and callbacks are host steps of the plan).
const EXPECTED_GAPS: &[&str] = &["callback_result"];

fn toolkit() -> Option<Toolkit> {
    match Toolkit::locate() {
        Ok(t) => Some(t),
        Err(e) => {
            eprintln!("SKIPPED: the CUDA PTX tests need the nvidia-cuda-nvcc-cu12 wheel: {e}");
            None
        }
    }
}

/// The PTX of each module of `p` once (the kernels of a program share one module), after
/// checking that every kernel is an entry of its module's PTX.
fn modules(p: &cuda::CudaProgram) -> Vec<&str> {
    let mut out: Vec<(&str, &str)> = Vec::new();
    for k in &p.kernels {
        assert!(k.ptx.contains(&format!(".entry {}(", k.func)), "@{} is no entry of @{}:\n{}", k.func, k.module, k.ptx);
        if !out.iter().any(|(m, _)| *m == k.module) {
            out.push((&k.module, &k.ptx));
        }
    }
    // One module per program.
    assert!(out.len() <= 1, "{} modules", out.len());
    out.into_iter().map(|(_, ptx)| ptx).collect()
}

/// Assembles `ptx` with the wheel's ptxas for `arch`; Err with ptxas's message.
fn ptxas(tk: &Toolkit, ptx: &str, arch: &str, tag: &str) -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!("quabla-ptxas-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join(format!("{tag}.ptx"));
    std::fs::write(&src, ptx).unwrap();
    let out = Command::new(tk.ptxas()).arg(format!("-arch={arch}")).arg(&src).arg("-o").arg(dir.join(format!("{tag}.cubin"))).output().map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// The one op of each `every_op_module` function, and the function as a module of its own
/// (with its callees).
fn cases() -> Vec<(String, Module, String)> {
    let m = every_op_module();
    let mut v = Vec::new();
    for f in m.funcs.iter().filter(|f| f.transform.is_none()) {
        let op = f.ops.first().map(|o| o.kind.name().to_string()).unwrap_or_default();
        let mut funcs = vec![f.clone()];
        if f.name == "caller" {
            let mut callee = m.funcs[0].clone();
            callee.public = false;
            funcs.insert(0, callee);
        }
        v.push((op, Module { funcs }, f.name.clone()));
    }
    v
}

#[test]
fn every_op_lowers_to_ptx_that_ptxas_assembles() {
    let Some(tk) = toolkit() else { return };
    let ctx = new_context();
    let mut gaps: Vec<String> = Vec::new();
    let mut failures: Vec<String> = Vec::new();
    let mut assembled = 0;
    for (op, m, entry) in cases() {
        for arch in ["sm_80", "sm_90"] {
            match cuda::compile_with(&ctx, &m, &entry, &tk, &CudaOptions { arch: arch.into(), cublas: arch == "sm_90" }) {
                Ok(p) => {
                    assert_eq!(p.arch, arch);
                    assert!(p.plan.steps.len() > 0 || op == "stop_gradient" || op == "reshape", "{op}: no steps");
                    if op == "dot_general" {
                        // sm_90 with cuBLAS: the product is a gemm step; sm_80 without: a loop kernel.
                        assert_eq!(p.plan.gemms().count(), (arch == "sm_90") as usize, "{op} {arch}: {:?}", p.plan.steps);
                    }
                    if op == "host_callback" {
                        assert!(p.plan.all_steps().iter().any(|s| matches!(s, Step::Callback { .. })), "{op}: {:?}", p.plan.steps);
                    }
                    for g in p.plan.gemms() {
                        assert!(g.a.max(g.b).max(g.c) < p.plan.slots && g.m * g.n * g.k * g.batch > 0, "{op}: {g:?}");
                    }
                    for l in p.plan.launches() {
                        assert!(l.kernel < p.kernels.len() && l.grid.iter().chain(&l.block).all(|&d| d >= 1), "{op}: {l:?}");
                        assert!(l.args.iter().all(|a| !matches!(*a, Operand::Slot(b) if b >= p.plan.slots)), "{op}: {l:?}");
                    }
                    for (k, ptx) in modules(&p).into_iter().enumerate() {
                        match ptxas(&tk, ptx, arch, &format!("{entry}_{k}_{arch}")) {
                            Ok(()) => assembled += ptx.matches(".entry").count(),
                            Err(e) => failures.push(format!("{op} ({entry}, {arch}, module {k}): ptxas: {e}")),
                        }
                    }
                }
                Err(LowerError::Unsupported { op: gap, rule: "cuda" }) => {
                    if arch == "sm_80" {
                        gaps.push(gap.to_string());
                    }
                }
                // Collectives exist only inside the vmap naming their axis: alone, every
                // lowering rejects them.
                Err(LowerError::UnboundAxis { .. }) => {}
                Err(e) => failures.push(format!("{op} ({entry}, {arch}): {e}")),
            }
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    gaps.sort();
    let mut want: Vec<String> = EXPECTED_GAPS.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(gaps, want, "the CUDA gaps changed: update EXPECTED_GAPS (and docs/ARCHITECTURE.md)");
    assert!(assembled > 100, "only {assembled} kernels assembled");
}

#[test]
fn reductions_and_scalars_run_in_kernels() {
    // Full, column and row reductions and a 0-d chain: all in kernels (the host plan is only
    // launches), each reduction thread owning output elements (or, for the full sum, a
    // share of the elements: small_output_reductions_are_split_across_threads).
    let Some(tk) = toolkit() else { return };
    let text = r#"
func.func @main(%a: tensor<64x128xf32>, %s: tensor<f32>) -> (tensor<128xf32>, tensor<64xf32>, tensor<f32>, tensor<f32>) {
  %0 = "quabla.reduce_sum"(%a) {dims = array<i64: 0>} : (tensor<64x128xf32>) -> tensor<128xf32>
  %1 = "quabla.reduce_max"(%a) {dims = array<i64: 1>} : (tensor<64x128xf32>) -> tensor<64xf32>
  %2 = "quabla.reduce_sum"(%a) {dims = array<i64: 0, 1>} : (tensor<64x128xf32>) -> tensor<f32>
  %3 = "quabla.mul"(%s, %s) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %4 = "quabla.exp"(%3) : (tensor<f32>) -> tensor<f32>
  return %0, %1, %2, %4 : tensor<128xf32>, tensor<64xf32>, tensor<f32>, tensor<f32>
}"#;
    let ctx = new_context();
    let m = quabla_dialect::mlir::parse_and_import(&ctx, text).unwrap();
    let p = cuda::compile_with(&ctx, &m, "main", &tk, &CudaOptions::default()).unwrap();
    // column sum: 128 outputs over grid x block threads; row max: 64; full sum (8192
    // elements): split, 512 partials of 16 (one thread each), then a unit loop over them.
    assert!(p.plan.launches().any(|l| threads(l) >= 128), "{:?}", p.plan.steps);
    assert!(p.plan.launches().any(|l| threads(l) >= 512), "{:?}", p.plan.steps);
    for (k, ptx) in modules(&p).into_iter().enumerate() {
        ptxas(&tk, ptx, "sm_90", &format!("red_{k}")).unwrap();
    }
    assert!(p.kernels.iter().any(|k| k.ptx.contains("__nv_expf") || k.ptx.contains("ex2.approx")), "exp through libdevice");
}

/// Threads of a launch (grid times block).
fn threads(l: &cuda::Launch) -> u64 {
    l.grid.iter().chain(&l.block).map(|&d| d as u64).product()
}

/// Reductions with few outputs over many elements are split: a full reduction of 1e6
/// elements (a mean's sum), a sum of their squares (the square fused) and an argmax each
/// launch 1024 threads reading the input (partials of 977 interleaved elements) before the kernel
/// reducing the partials, and a column
/// sum of [5000, 3] far more threads than its three outputs; a reduction with 4096 outputs
/// keeps one thread per output. Every kernel assembles for sm_80 and sm_90.
#[test]
fn small_output_reductions_are_split_across_threads() {
    let Some(tk) = toolkit() else { return };
    let text = r#"
func.func @main(%a: tensor<1000x1000xf32>, %c: tensor<5000x3xf64>, %w: tensor<4096x300xf32>) -> (tensor<f32>, tensor<i64>, tensor<3xf64>, tensor<4096xf32>, tensor<f32>) {
  %0 = "quabla.reduce_sum"(%a) {dims = array<i64: 0, 1>} : (tensor<1000x1000xf32>) -> tensor<f32>
  %f = "quabla.reshape"(%a) : (tensor<1000x1000xf32>) -> tensor<1000000xf32>
  %1 = "quabla.argmax"(%f) {dim = 0 : i64} : (tensor<1000000xf32>) -> tensor<i64>
  %2 = "quabla.reduce_sum"(%c) {dims = array<i64: 0>} : (tensor<5000x3xf64>) -> tensor<3xf64>
  %3 = "quabla.reduce_max"(%w) {dims = array<i64: 1>} : (tensor<4096x300xf32>) -> tensor<4096xf32>
  %s = "quabla.mul"(%a, %a) : (tensor<1000x1000xf32>, tensor<1000x1000xf32>) -> tensor<1000x1000xf32>
  %4 = "quabla.reduce_sum"(%s) {dims = array<i64: 0, 1>} : (tensor<1000x1000xf32>) -> tensor<f32>
  return %0, %1, %2, %3, %4 : tensor<f32>, tensor<i64>, tensor<3xf64>, tensor<4096xf32>, tensor<f32>
}"#;
    let ctx = new_context();
    let m = quabla_dialect::mlir::parse_and_import(&ctx, text).unwrap();
    for arch in ["sm_80", "sm_90"] {
        let p = cuda::compile_with(&ctx, &m, "main", &tk, &CudaOptions { arch: arch.into(), cublas: true }).unwrap();
        let reading = |slot: usize| p.plan.launches().filter(move |l| l.args.contains(&Operand::Slot(slot))).map(threads).collect::<Vec<u64>>();
        // The 1e6 elements (slot 0) are read by the partials' kernels of the sums and the
        // argmax, 1024 threads each (before: one thread each); the square is fused into its
        // sum's partials (stage one reads the operand through an affine map): no 4 MB temporary.
        let full = reading(0);
        assert!(full.len() == 3 && full.iter().all(|&t| t >= 1024), "{arch}: {full:?} {:?}", p.plan.steps);
        assert!(p.plan.all_steps().iter().all(|s| !matches!(s, Step::Alloc { bytes, .. } if *bytes >= 4_000_000)), "{arch}: {:?}", p.plan.steps);
        // The column sum's partials, 295 x 3 (17 elements each), on at least 885 threads (before: 3 outputs, 32).
        let col = reading(1);
        assert!(col.len() == 1 && col[0] >= 885, "{arch}: {col:?} {:?}", p.plan.steps);
        // 4096 outputs: one thread per output, no partials.
        let rows = reading(2);
        assert!(rows.len() == 1 && rows[0] >= 4096, "{arch}: {rows:?} {:?}", p.plan.steps);
        for (k, ptx) in modules(&p).into_iter().enumerate() {
            ptxas(&tk, ptx, arch, &format!("split_{k}_{arch}")).unwrap_or_else(|e| panic!("{arch} module {k}: {e}"));
        }
    }
}

/// The region programs of tests/rust/regions.rs: a counted `while` is a host `for` whose
/// bound the host loads from device memory, with the body's kernel launched in it; a nested
/// `if` without loops stays select kernels (no host read); every kernel assembles.
#[test]
fn loops_run_on_the_host_and_branches_in_kernels() {
    let Some(tk) = toolkit() else { return };
    let ctx = new_context();
    let w = cuda::compile_with(&ctx, &crate::regions::while_module(), "main", &tk, &CudaOptions::default()).unwrap();
    let steps = w.plan.all_steps();
    let bound = steps.iter().find_map(|s| match s {
        Step::Load { dst, buf: 0, offset: 0, .. } => Some(*dst),
        _ => None,
    });
    let for_ = steps.iter().find_map(|s| match s {
        Step::For { ub: Operand::Slot(u), body, .. } => Some((*u, body.iter().filter(|b| matches!(b, Step::Launch(_))).count())),
        _ => None,
    });
    assert!(bound.is_some() && for_.map(|f| f.0) == bound && for_.unwrap().1 >= 1, "{:?}", w.plan.steps);
    assert!(w.plan.reads_device());
    let b = cuda::compile_with(&ctx, &crate::regions::nested_if_module(), "main", &tk, &CudaOptions::default()).unwrap();
    assert!(!b.plan.reads_device() && b.plan.all_steps().iter().all(|s| s.regions().is_empty()), "{:?}", b.plan.steps);
    for (p, tag) in [(&w, "while"), (&b, "if")] {
        for (k, ptx) in modules(&p).into_iter().enumerate() {
            ptxas(&tk, ptx, "sm_90", &format!("{tag}_{k}")).unwrap();
        }
    }
}

#[test]
fn missing_wheel_is_a_typed_error() {
    let e = LowerError::Toolkit { looked: vec!["/nowhere/nvidia/cuda_nvcc".into()] };
    assert!(e.to_string().contains("nvidia-cuda-nvcc-cu12") && e.to_string().contains("QUABLA_CUDA_NVCC"), "{e}");
    let bad = CudaOptions { arch: "gfx90a".into(), cublas: true }.check().unwrap_err();
    assert!(bad.to_string().contains("gfx90a"), "{bad}");
}

//! docs/op_status.md is generated: every op of the table is probed in every layer (shape rule,
//! reference interpreter, linalg lowering, StableHLO export, MLX emitter, JVP, VJP and batching rules) on a
//! sample program, and each cell says "yes" or names the explicit gap (`Unsupported { op, rule }`
//! arms) that the layer reported. A stale file fails this test; regenerate with
//! `QUABLA_REGEN=1 cargo test -p quabla-tests op_status`.
use quabla_dialect::{all_op_names, ArgOp, DType, Family, Func, Module, OpKind, ReduceOp, Reducer, TensorType, Transform, TransformKind};
use quabla_runtime::interp;
use quabla_tests::{one_op_module, Rng};

use crate::regions::{nested_if_module, while_module};
use crate::root;
use crate::stock_mlir_opt::every_op_module;

/// The status of one op in one layer.
fn cell(r: Result<(), String>) -> String {
    match r {
        Ok(()) => "yes".to_string(),
        Err(e) => {
            // The layers name their gaps: "has no jvp rule", "cannot be lowered", ...
            let short = e.split(": ").last().unwrap_or(&e).to_string();
            format!("gap: {short}")
        }
    }
}

/// A module holding `f` (public, renamed `main`) and, for a transform, its declaration.
fn with_transform(f: &Func, kind: TransformKind) -> Module {
    let mut g = f.clone();
    g.name = "main".into();
    g.public = false;
    let t = Transform { kind, of: "main".into() };
    let (p, r) = t.signature(&g.param_types(), &g.result_types());
    Module { funcs: vec![g, Func::declaration("main_t", &p, &r, t)] }
}

fn probe_transform(f: &Func, kind: TransformKind) -> Result<(), String> {
    let mut m = with_transform(f, kind);
    quabla_passes::autodiff::autodiff(&mut m).map_err(|e| e.to_string())?;
    m.verify().map_err(|e| e.to_string())
}

/// The statuses of the op in `f` (a function whose body is one op, or one op with regions).
fn probe(f: &Func, rng: &mut Rng) -> Vec<String> {
    let mut m = Module { funcs: vec![f.clone()] };
    m.funcs[0].name = "main".into();
    m.funcs[0].public = true;
    let inputs: Vec<_> = f.param_types().iter().map(|t| rng.buffer(t, 0.5, 1.5)).collect();
    let interp = interp::run_func(&m, "main", &inputs).map(|_| ()).map_err(|e| e.to_string());
    let linalg = quabla_lowering::lower_module(&m, quabla_lowering::Abi::Dps).map(|_| ()).map_err(|e| e.to_string());
    let shlo = quabla_lowering::export_module(&m).map(|_| ()).map_err(|e| e.to_string());
    let mlx = quabla_lowering::mlx::emit_module(&m, "main").map(|_| ()).map_err(|e| e.to_string());
    let cuda = quabla_lowering::cuda::lower_text(&m).map(|_| ()).map_err(|e| e.to_string());
    let jvp = probe_transform(f, TransformKind::Jvp);
    let vjp = probe_transform(f, TransformKind::Vjp);
    let n_in = f.params.len();
    let n_out = f.outputs.len();
    let out = if n_in == 0 { None } else { Some(0) };
    let vmap = probe_transform(f, TransformKind::Vmap { in_axes: vec![Some(0); n_in], out_axes: vec![out; n_out], size: 2, axis_name: None });
    [Ok(()), interp, linalg, shlo, mlx, cuda, jvp, vjp, vmap].into_iter().map(cell).collect()
}

/// The op of a sample function, if it is a one-op sample.
fn sample_op(f: &Func) -> Option<&OpKind> {
    match f.ops.as_slice() {
        [op] if f.transform.is_none() => Some(&op.kind),
        _ => None,
    }
}

fn render() -> String {
    let mut samples: Vec<Func> = every_op_module().funcs.into_iter().filter(|f| sample_op(f).is_some()).collect();
    samples.extend(nested_if_module().funcs.into_iter().map(|mut f| {
        // One op with regions at the top level.
        f.name = "if_sample".into();
        f
    }));
    samples.extend(while_module().funcs);
    samples.extend(crate::case_custom::case_module().funcs);
    samples.extend(crate::case_custom::custom_jvp_module().funcs);
    samples.extend(crate::case_custom::custom_vjp_module().funcs);
    // Every named variant of the reduce family (the shared sample has one of each kind).
    let x = TensorType::new(DType::F32, [2, 3]);
    for r in Reducer::ALL {
        samples.push(one_op_module(OpKind::Reduce(ReduceOp::Reduce { op: r, dims: vec![1] }), std::slice::from_ref(&x)).funcs.remove(0));
    }
    for a in ArgOp::ALL {
        samples.push(one_op_module(OpKind::Reduce(ReduceOp::ArgReduce { op: a, dim: 1, index: DType::I64 }), std::slice::from_ref(&x)).funcs.remove(0));
    }
    // Every named variant of the reduce_window family.
    for r in quabla_dialect::WindowReducer::ALL {
        let w = quabla_dialect::Window::simple(vec![1, 2], vec![1, 1]);
        samples.push(one_op_module(OpKind::ReduceWindow(quabla_dialect::ReduceWindowOp::ReduceWindow { op: r, window: Box::new(w) }), std::slice::from_ref(&x)).funcs.remove(0));
    }
    let mut rng = Rng(7);
    let mut rows: Vec<(Family, &'static str, Vec<String>)> = Vec::new();
    for f in &samples {
        // The op under test: the one with regions if there is one, else the first non-call.
        let op = f.ops.iter().find(|o| !o.regions.is_empty()).or_else(|| f.ops.iter().find(|o| !matches!(o.kind, OpKind::Call(_)))).map(|o| &o.kind);
        let Some(kind) = op.or_else(|| sample_op(f)) else { continue };
        if matches!(kind, OpKind::Call(quabla_dialect::CallOp::Call { .. })) || rows.iter().any(|(_, n, _)| *n == kind.name()) {
            continue;
        }
        rows.push((kind.family(), kind.name(), probe(f, &mut rng)));
    }
    // Calls: inlined before the rules run; the probe runs a caller.
    let every = every_op_module();
    if let Some(caller) = every.func("caller") {
        let mut m = every.clone();
        m.funcs.retain(|g| g.name == caller.name || Some(g.name.as_str()) == caller.ops.first().and_then(|o| if let OpKind::Call(quabla_dialect::CallOp::Call { callee, .. }) = &o.kind { Some(callee.as_str()) } else { None }));
        let inputs: Vec<_> = caller.param_types().iter().map(|t| rng.buffer(t, 0.5, 1.5)).collect();
        let interp = interp::run_func(&m, "caller", &inputs).map(|_| ()).map_err(|e| e.to_string());
        let linalg = quabla_lowering::lower_module(&m, quabla_lowering::Abi::Dps).map(|_| ()).map_err(|e| e.to_string());
        let mlx = quabla_lowering::mlx::emit_module(&m, "caller").map(|_| ()).map_err(|e| e.to_string());
        let cuda = quabla_lowering::cuda::lower_text(&m).map(|_| ()).map_err(|e| e.to_string());
        let cells = vec![cell(Ok(())), cell(interp), cell(linalg), "yes (func.call; inlined by --emit=stablehlo)".into(), cell(mlx), cell(cuda), "inlined first".into(), "inlined first".into(), "inlined first".into()];
        rows.push((Family::Call, "call", cells));
    }
    let names = all_op_names();
    let missing: Vec<&&str> = names.iter().filter(|n| !rows.iter().any(|(_, r, _)| r == *n)).collect();
    assert!(missing.is_empty(), "ops of the table without a sample in the status probe: {missing:?}");
    let mut s = String::from(
        "# Op status\n\n\
         Generated by tests/rust/op_status.rs (`QUABLA_REGEN=1 cargo test -p quabla-tests op_status`):\n\
         every op of the op table is probed in every layer on a sample program. \"yes\" means the layer\n\
         handles it (and the differential, autodiff, vmap and StableHLO suites check the numbers);\n\
         \"gap\" quotes the explicit `Unsupported` error the layer gave instead.\n\n\
         | family | ops | shape rule | interpreter | linalg lowering (CPU JIT) | StableHLO | MLX | CUDA (PTX) | JVP | VJP | vmap |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for fam in Family::ALL {
        // Group the family's ops by identical status rows, in table order.
        let mut groups: Vec<(Vec<&str>, &Vec<String>)> = Vec::new();
        for name in fam.op_names() {
            let Some((_, _, cells)) = rows.iter().find(|(f, n, _)| *f == fam && *n == name) else { continue };
            match groups.iter_mut().find(|(_, c)| *c == cells) {
                Some((ns, _)) => ns.push(name),
                None => groups.push((vec![name], cells)),
            }
        }
        for (ns, cells) in groups {
            s += &format!("| {} | {} | {} |\n", fam.name(), ns.join(" "), cells.join(" | "));
        }
    }
    s += "\nAutodiff: JVP checked against central finite differences, VJP against JVP by the dot-product\n\
          identity, second order against finite differences of the VJP, for every float op\n\
          (tests/rust/autodiff.rs). Integer and bool values carry no tangent. vmap: every family with every\n\
          mapped/unmapped operand combination equals a loop over examples (tests/rust/vmap.rs).\n\
          StableHLO: tests/stablehlo runs each export on XLA (jaxlib) and IREE llvm-cpu and compares with\n\
          the CPU JIT (docs/stablehlo.md).\n\
          CUDA: every sample lowers to PTX that ptxas assembles for sm_80 and sm_90 (tests/rust/cuda_ptx.rs);\n\
          not yet run on a GPU (tests/gpu/run.sh).\n";
    s
}

#[test]
fn op_status_md_is_current() {
    let text = render();
    let path = root().join("docs/op_status.md");
    if std::env::var("QUABLA_REGEN").is_ok() {
        std::fs::write(&path, &text).unwrap();
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(on_disk == text, "docs/op_status.md is stale: regenerate with `QUABLA_REGEN=1 cargo test -p quabla-tests op_status`\n{text}");
}

//! Emitters: what `quabla-opt --emit=LEVEL` prints after the pass pipeline, one table row
//! per level (quabla, linalg, llvm, stablehlo, mlx), and [`opt_plan`], which assembles
//! `quabla-opt`'s pass pipeline around them. An emitter either prints the MLIR module after
//! appending its passes to the pipeline (quabla, linalg), or imports the module and
//! translates it to text (llvm through the CPU executor, the StableHLO export, the MLX
//! emitter's Python source). An emitter whose text is not MLIR of quabla's contexts
//! (StableHLO, MLX) is *terminal*: its pass name may
//! end a `--pass-pipeline`, where it selects the emitter, and nothing may follow it.
//!
//! Invariants: emitters that want optimized IR (`runs_default_pipeline`) get the
//! [`default_pipeline`] object itself, recorded as used by [`Caller::Opt`].
use quabla_dialect::Module;
use quabla_passes::registry;

use crate::error::CompileError;
use crate::pipeline::{default_pipeline, record, Caller, Pipeline};

/// How an emitter produces its output.
#[derive(Clone, Copy)]
pub enum EmitKind {
    /// Print the MLIR module after the pipeline with these registry passes appended (none
    /// when empty).
    Mlir { passes: &'static str },
    /// Import the module after the pipeline and translate it to text.
    Text(fn(&Module, &quabla_runtime::CompileOptions) -> Result<String, CompileError>),
}

/// One output level of `quabla-opt --emit`.
pub struct Emitter {
    /// The `--emit` value.
    pub name: &'static str,
    /// One line for `--help`/`--list-passes`.
    pub summary: &'static str,
    /// For a terminal emitter, its name as the last element of a `--pass-pipeline`.
    pub pass: Option<&'static str>,
    /// What the output is (for error messages), e.g. `StableHLO`.
    pub output: &'static str,
    /// Whether `--emit` runs the default compile pipeline before the emitter.
    pub runs_default_pipeline: bool,
    /// How the output is produced.
    pub kind: EmitKind,
}

/// Every emitter, `quabla` (the default) first.
pub fn emitters() -> &'static [Emitter] {
    static EMITTERS: &[Emitter] = &[
        Emitter { name: "quabla", summary: "the quabla module after the pipeline", pass: None, output: "quabla", runs_default_pipeline: false, kind: EmitKind::Mlir { passes: "" } },
        Emitter {
            name: "linalg",
            summary: "lowered to linalg/tensor/arith/math (convert-quabla-to-linalg)",
            pass: None,
            output: "linalg",
            runs_default_pipeline: false,
            kind: EmitKind::Mlir { passes: "convert-quabla-to-linalg" },
        },
        Emitter {
            name: "llvm",
            summary: "lowered to the LLVM dialect by the CPU executor's pipeline",
            pass: None,
            output: "LLVM dialect",
            runs_default_pipeline: false,
            kind: EmitKind::Text(|m, o| Ok(quabla_runtime::registry::cpu().lower_to_llvm(m, o)?)),
        },
        Emitter {
            name: "ptx",
            summary: "lowered for CUDA: the host plan (launches in order) and each kernel's PTX (--cuda-arch=sm_XY, default sm_90)",
            pass: None,
            output: "PTX",
            runs_default_pipeline: false,
            kind: EmitKind::Text(|m, o| ptx_text(m, o).map_err(|source| CompileError::Emit { emitter: "ptx", source })),
        },
        Emitter {
            name: "stablehlo",
            summary: "export to StableHLO text (terminal: quabla-opt --emit=stablehlo, or last in --pass-pipeline)",
            pass: Some("convert-quabla-to-stablehlo"),
            output: "StableHLO",
            runs_default_pipeline: true,
            kind: EmitKind::Text(|m, _| quabla_lowering::export_module(m).map_err(|source| CompileError::Emit { emitter: "stablehlo", source })),
        },
        Emitter {
            name: "mlx",
            summary: "Python source calling mlx.core, what the mlx executor runs (terminal: quabla-opt --emit=mlx, or last in --pass-pipeline)",
            pass: Some("convert-quabla-to-mlx"),
            output: "MLX",
            runs_default_pipeline: true,
            kind: EmitKind::Text(|m, _| {
                quabla_lowering::mlx::emit_entry(m).map(|p| p.source).map_err(|source| CompileError::Emit { emitter: "mlx", source })
            }),
        },
    ];
    EMITTERS
}

/// `--emit=ptx`: the CUDA program of `m`'s `@main` (or its one public function) as text: a
/// comment per launch (kernel, grid, block, arguments: `bN` the plan's buffers), then each
/// kernel's `gpu.module` name and PTX.
pub fn ptx_text(m: &Module, o: &quabla_runtime::CompileOptions) -> Result<String, quabla_lowering::LowerError> {
    use quabla_lowering::cuda::{self, CudaOptions};
    use std::fmt::Write;
    let entry = match m.func("main") {
        Some(f) => f.name.clone(),
        None => {
            let public: Vec<String> = m.funcs.iter().filter(|f| f.public && f.transform.is_none()).map(|f| f.name.clone()).collect();
            match public.as_slice() {
                [one] => one.clone(),
                _ => return Err(quabla_lowering::LowerError::NoEntryPoint { public }),
            }
        }
    };
    let opts = CudaOptions::for_arch(o.cuda_arch.clone().unwrap_or_else(|| cuda::DEFAULT_ARCH.to_string()));
    let ctx = quabla_dialect::mlir::new_context();
    let p = cuda::compile(&ctx, m, &entry, &opts)?;
    let mut s = String::new();
    let _ = writeln!(s, "// CUDA program @{entry} for {}: {} kernels, {} launches, {} cuBLAS products", p.arch, p.kernels.len(), p.plan.launches().count(), p.plan.gemms().count());
    s.push_str(&p.plan.describe(&|k| format!("@{}::@{}", p.kernels[k].module, p.kernels[k].func)));
    let mut printed: Vec<&str> = Vec::new();
    for k in &p.kernels {
        if printed.contains(&k.module.as_str()) {
            continue;
        }
        printed.push(&k.module);
        let funcs: Vec<String> = p.kernels.iter().filter(|o| o.module == k.module).map(|o| format!("@{}", o.func)).collect();
        let _ = writeln!(s, "// gpu.module @{} kernels {}", k.module, funcs.join(" "));
        s.push_str(&k.ptx);
        if !k.ptx.ends_with('\n') {
            s.push('\n');
        }
    }
    Ok(s)
}

/// The emitter for `--emit=name`.
pub fn emitter(name: &str) -> Result<&'static Emitter, CompileError> {
    emitters().iter().find(|e| e.name == name).ok_or_else(|| {
        let names: Vec<&str> = emitters().iter().map(|e| e.name).collect();
        let (last, rest) = names.split_last().expect("emitters are listed");
        CompileError::UnknownEmitter { name: name.to_string(), known: format!("{} or {last}", rest.join(", ")) }
    })
}

/// What `quabla-opt` runs for one input: the pass pipeline (for
/// `quabla_passes::add_pipeline`), the emitter, and the compile pipeline it appended.
pub struct OptPlan {
    /// The full pass pipeline: `quabla-verify`, the user's pipeline, the emitter's passes
    /// and, for emitters that want optimized IR, the default pipeline.
    pub pipeline: String,
    /// What prints the result.
    pub emitter: &'static Emitter,
    /// The compile pipeline object appended (`Some(default_pipeline())`), if any.
    pub compile_pipeline: Option<&'static Pipeline>,
}

/// Assembles `quabla-opt`'s pipeline for `--pass-pipeline=user` (if given) and `--emit=emit`.
/// A user pipeline whose last element is a terminal emitter's pass name selects that emitter
/// and runs as written (without the default pipeline); such a name anywhere else is
/// [`CompileError::Terminal`].
pub fn opt_plan(user: Option<&str>, emit: &str) -> Result<OptPlan, CompileError> {
    let mut emitter = emitter(emit)?;
    let mut standard = emitter.runs_default_pipeline;
    let mut els = vec!["quabla-verify".to_string()];
    if let Some(p) = user {
        let mut user_els = registry::elements(p)?;
        if let Some(e) = user_els.last().and_then(|last| emitters().iter().find(|e| e.pass == Some(last.as_str()))) {
            user_els.pop();
            emitter = e;
            standard = false;
        }
        for el in &user_els {
            let name = el.split(['{', '(']).next().unwrap_or("").trim();
            if let Some(e) = emitters().iter().find(|e| e.pass == Some(name)) {
                return Err(CompileError::Terminal { pass: e.pass.expect("terminal emitters have a pass name"), emitter: e.name, what: e.output });
            }
        }
        els.extend(user_els);
    }
    if let EmitKind::Mlir { passes } = emitter.kind {
        if !passes.is_empty() {
            els.push(passes.to_string());
        }
    }
    let compile_pipeline = standard.then(default_pipeline);
    if let Some(p) = compile_pipeline {
        record(Caller::Opt, p);
        els.push(p.text());
    }
    Ok(OptPlan { pipeline: els.join(","), emitter, compile_pipeline })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::pipeline_used;

    #[test]
    fn emit_stablehlo_appends_the_default_pipeline_object() {
        let plan = opt_plan(Some("builtin.module(quabla-cse)"), "stablehlo").unwrap();
        assert_eq!(plan.emitter.name, "stablehlo");
        assert_eq!(plan.pipeline, format!("quabla-verify,quabla-cse,{}", default_pipeline().text()));
        assert!(plan.compile_pipeline.is_some_and(Pipeline::is_default));
        assert!(pipeline_used(Caller::Opt).is_some_and(Pipeline::is_default));
    }

    #[test]
    fn terminal_pass_selects_its_emitter() {
        let plan = opt_plan(Some("builtin.module(quabla-autodiff,convert-quabla-to-stablehlo)"), "quabla").unwrap();
        assert_eq!(plan.emitter.name, "stablehlo");
        assert_eq!(plan.pipeline, "quabla-verify,quabla-autodiff");
        assert!(plan.compile_pipeline.is_none());
        let plan = opt_plan(Some("convert-quabla-to-stablehlo"), "quabla").unwrap();
        assert_eq!(plan.pipeline, "quabla-verify");
        let e = opt_plan(Some("builtin.module(convert-quabla-to-stablehlo,quabla-dce)"), "quabla").err().expect("not last");
        assert!(matches!(e, CompileError::Terminal { pass: "convert-quabla-to-stablehlo", .. }));
        assert!(e.to_string().starts_with("convert-quabla-to-stablehlo is terminal"), "{e}");
    }

    #[test]
    fn levels() {
        assert_eq!(opt_plan(None, "quabla").unwrap().pipeline, "quabla-verify");
        assert_eq!(opt_plan(None, "linalg").unwrap().pipeline, "quabla-verify,convert-quabla-to-linalg");
        assert!(opt_plan(None, "llvm").unwrap().compile_pipeline.is_none());
        assert!(opt_plan(None, "ptx").unwrap().compile_pipeline.is_none());
        let e = opt_plan(None, "sass").err().expect("no sass emitter");
        assert_eq!(e.to_string(), "--emit: unknown level `sass` (expected quabla, linalg, llvm, ptx, stablehlo or mlx)");
    }
}

//! The compile pipeline: an ordered list of quabla passes ([`Pipeline`]), the single
//! process-wide default ([`default_pipeline`]: quabla-autodiff, quabla-inline,
//! quabla-canonicalize, quabla-symbol-dce), the in-memory optimizer ([`optimize`]) and
//! [`compile`] (optimize, then compile for a named device of the executor registry).
//!
//! Invariants: every caller that compiles records the pipeline object it used, by
//! [`Caller`] ([`pipeline_used`]); only `&'static` pipelines can be recorded, so the record
//! is a plain pointer that stays valid. A pipeline holds only passes that transform or
//! verify quabla IR in memory (checked when it is built).
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Arc, OnceLock};

use quabla_dialect::Module;
use quabla_passes::registry::{self, Action, PassOptions};
use quabla_runtime::Executable;

use crate::error::CompileError;

/// An ordered list of quabla passes, run on the in-memory IR by [`optimize`] and spelled as a
/// textual pipeline ([`Pipeline::text`]) where it runs inside an MLIR pass manager.
#[derive(Debug, PartialEq, Eq)]
pub struct Pipeline {
    passes: Vec<&'static str>,
}

impl Pipeline {
    /// A pipeline of registered quabla passes, in order. Errors when a name is not a
    /// registered transform or verification pass (conversions produce text, not IR).
    pub fn new(passes: &[&str]) -> Result<Pipeline, CompileError> {
        let passes = passes
            .iter()
            .map(|&n| match registry::find(n) {
                Some(info) if matches!(info.action, Action::Transform(_) | Action::Verify) => Ok(info.name),
                Some(_) | None => Err(CompileError::NotATransform(n.to_string())),
            })
            .collect::<Result<_, _>>()?;
        Ok(Pipeline { passes })
    }

    /// The pass names, in order.
    pub fn passes(&self) -> &[&'static str] {
        &self.passes
    }

    /// The textual pipeline elements: the pass names joined with `,` (also the description).
    pub fn text(&self) -> String {
        self.passes.join(",")
    }

    /// True for the object [`default_pipeline`] returns (identity, not equality).
    pub fn is_default(&self) -> bool {
        std::ptr::eq(self, default_pipeline())
    }
}

/// The compile pipeline of every entry point: expand transforms, inline, canonicalize (fold,
/// cse, dce to a fixpoint), drop unreachable private functions. One object per process.
pub fn default_pipeline() -> &'static Pipeline {
    static DEFAULT: OnceLock<Pipeline> = OnceLock::new();
    DEFAULT.get_or_init(|| Pipeline::new(&["quabla-autodiff", "quabla-inline", "quabla-canonicalize", "quabla-symbol-dce"]).expect("the default passes are registered transforms"))
}

/// Runs `pipeline` on a copy of `m`, pass by pass, on the in-memory IR.
pub fn optimize(m: &Module, pipeline: &Pipeline) -> Result<Module, CompileError> {
    let mut m = m.clone();
    let opts = PassOptions::new();
    for &pass in &pipeline.passes {
        registry::run_in_memory(pass, &mut m, &opts).map_err(|source| CompileError::Pass { pass, source })?;
    }
    Ok(m)
}

/// Who compiles: each entry point records the pipeline it used under its own caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Caller {
    /// `qb.jit` (and `Program.compile` of the Python front).
    Jit,
    /// Eager per-op execution of the Python front.
    Eager,
    /// `quabla-opt` (its default pipeline for `--emit=stablehlo`).
    Opt,
    /// Any other user of this crate's API.
    Api,
}

impl Caller {
    /// Every caller.
    pub const ALL: [Caller; 4] = [Caller::Jit, Caller::Eager, Caller::Opt, Caller::Api];

    /// The caller's name (`jit`, `eager`, `opt`, `api`).
    pub fn name(self) -> &'static str {
        match self {
            Caller::Jit => "jit",
            Caller::Eager => "eager",
            Caller::Opt => "opt",
            Caller::Api => "api",
        }
    }

    /// The caller named `name`.
    pub fn from_name(name: &str) -> Option<Caller> {
        Caller::ALL.into_iter().find(|c| c.name() == name)
    }

    fn slot(self) -> &'static AtomicPtr<Pipeline> {
        static USED: [AtomicPtr<Pipeline>; 4] = [const { AtomicPtr::new(std::ptr::null_mut()) }; 4];
        &USED[match self {
            Caller::Jit => 0,
            Caller::Eager => 1,
            Caller::Opt => 2,
            Caller::Api => 3,
        }]
    }
}

/// Records that `caller` runs `pipeline` (compile does this; so does `quabla-opt`'s plan).
pub(crate) fn record(caller: Caller, pipeline: &'static Pipeline) {
    caller.slot().store(pipeline as *const Pipeline as *mut Pipeline, Ordering::Relaxed);
}

/// The pipeline object `caller` used last, if it compiled anything in this process.
pub fn pipeline_used(caller: Caller) -> Option<&'static Pipeline> {
    let p = caller.slot().load(Ordering::Relaxed);
    // SAFETY: only `&'static Pipeline`s are stored (see `record`).
    (!p.is_null()).then(|| unsafe { &*p })
}

/// Options of [`compile`].
#[derive(Clone, Debug)]
pub struct CompileOptions {
    /// The passes run before code generation.
    pub pipeline: &'static Pipeline,
    /// Who compiles (for [`pipeline_used`]).
    pub caller: Caller,
    /// Options of the executor (optimisation level, vectorisation).
    pub codegen: quabla_runtime::CompileOptions,
}

impl CompileOptions {
    /// The default pipeline and code generation options, for `caller`.
    pub fn for_caller(caller: Caller) -> Self {
        CompileOptions { pipeline: default_pipeline(), caller, codegen: Default::default() }
    }
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions::for_caller(Caller::Api)
    }
}

/// Optimizes `m` with `opts.pipeline` and compiles its public function `entry` for the
/// device named `device` (`cpu`, `interp`, ...; `quabla_runtime::registry::DEFAULT_DEVICE` is the CPU).
pub fn compile(m: &Module, entry: &str, device: &str, opts: &CompileOptions) -> Result<Arc<dyn Executable>, CompileError> {
    let executor = quabla_runtime::executor(device)?;
    record(opts.caller, opts.pipeline);
    let (t, c) = (std::time::Instant::now(), quabla_runtime::cpu::cpu_ms());
    let optimized = optimize(m, opts.pipeline)?;
    if std::env::var_os("QUABLA_LOG_COMPILES").is_some() {
        let n: usize = optimized.funcs.iter().map(|f| f.ops.len()).sum();
        eprintln!("[quabla] quabla passes {:.2} ms, cpu {:.2} ms ({n} ops after them)", t.elapsed().as_secs_f64() * 1e3, quabla_runtime::cpu::cpu_ms() - c);
    }
    Ok(executor.compile(&optimized, entry, &opts.codegen)?)
}

#[cfg(test)]
mod tests {
    use melior::ir::Module as MlirModule;
    use quabla_dialect::mlir::{import_module, new_context};
    use quabla_dialect::{DType, TensorType};
    use quabla_runtime::{Buffer, RuntimeError};

    use super::*;

    /// `@main(x) = sum(vjp(sin)(x, 1))`: a transform to expand, a call to inline.
    const PROGRAM: &str = r#"
func.func private @f(%x: tensor<3xf64>) -> tensor<3xf64> {
  %0 = "quabla.sin"(%x) : (tensor<3xf64>) -> tensor<3xf64>
  return %0 : tensor<3xf64>
}
func.func private @f_vjp(tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>) attributes {quabla.of = @f, quabla.transform = "vjp"}
func.func @main(%x: tensor<3xf64>, %ct: tensor<3xf64>) -> tensor<3xf64> {
  %0:2 = func.call @f_vjp(%x, %ct) : (tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>)
  return %0#1 : tensor<3xf64>
}
"#;

    fn module(text: &str) -> Module {
        let ctx = new_context();
        let m = MlirModule::parse(&ctx, text).expect("valid MLIR");
        import_module(m.as_operation()).expect("valid quabla IR")
    }

    #[test]
    fn default_pipeline_is_one_object() {
        let p = default_pipeline();
        assert!(std::ptr::eq(p, default_pipeline()) && p.is_default());
        assert_eq!(p.text(), "quabla-autodiff,quabla-inline,quabla-canonicalize,quabla-symbol-dce");
        // An equal pipeline spelled elsewhere is not the default object.
        let copy = Pipeline::new(p.passes()).unwrap();
        assert_eq!(&copy, p);
        assert!(!copy.is_default());
    }

    #[test]
    fn pipelines_hold_only_in_memory_passes() {
        assert!(matches!(Pipeline::new(&["quabla-cse", "convert-quabla-to-linalg"]), Err(CompileError::NotATransform(n)) if n == "convert-quabla-to-linalg"));
        assert!(matches!(Pipeline::new(&["canonicalize"]), Err(CompileError::NotATransform(_))));
        assert!(Pipeline::new(&["quabla-verify", "quabla-cse"]).is_ok());
    }

    #[test]
    fn optimize_expands_inlines_and_drops_dead_functions() {
        let m = optimize(&module(PROGRAM), default_pipeline()).unwrap();
        assert_eq!(m.funcs.len(), 1, "{}", m.to_mlir());
        let text = m.to_mlir();
        assert!(text.contains("quabla.cos") && !text.contains("call"), "{text}");
    }

    #[test]
    fn in_memory_and_pass_manager_runs_agree() {
        // The default pipeline inside an MLIR pass manager (quabla-opt's path: one external
        // pass for the group) and on the in-memory IR (qb.jit's path) give the same module.
        let ctx = new_context();
        let mut pm_module = MlirModule::parse(&ctx, PROGRAM).unwrap();
        let pm = melior::pass::PassManager::new(&ctx);
        quabla_passes::add_pipeline(&pm, &default_pipeline().text()).unwrap();
        pm.run(&mut pm_module).unwrap();
        let in_memory = optimize(&module(PROGRAM), default_pipeline()).unwrap();
        let reparsed = MlirModule::parse(&ctx, &in_memory.to_mlir()).unwrap();
        assert_eq!(pm_module.as_operation().to_string(), reparsed.as_operation().to_string());
    }

    #[test]
    fn compile_runs_on_every_available_device_and_records_the_pipeline() {
        let m = module(PROGRAM);
        let t = TensorType::new(DType::F64, vec![3]);
        let x = Buffer::from_f64s(t.clone(), &[0.0, 1.0, -2.0]).unwrap();
        let ct = Buffer::from_f64s(t, &[1.0, 2.0, 3.0]).unwrap();
        for device in ["cpu", "interp"] {
            let exe = compile(&m, "main", device, &CompileOptions::for_caller(Caller::Api)).unwrap();
            let out = exe.run(&[&x, &ct]).unwrap()[0].to_f64_vec();
            let want = [1.0 * 0f64.cos(), 2.0 * 1f64.cos(), 3.0 * (-2f64).cos()];
            for (a, b) in out.iter().zip(want) {
                assert!((a - b).abs() < 1e-12, "{device}: {out:?}");
            }
        }
        assert!(pipeline_used(Caller::Api).is_some_and(Pipeline::is_default));
    }

    #[test]
    fn compile_errors_are_typed() {
        let m = module(PROGRAM);
        let opts = CompileOptions::for_caller(Caller::Api);
        assert!(matches!(compile(&m, "main", "tpu", &opts), Err(CompileError::Runtime(RuntimeError::UnknownDevice { .. }))));
        assert!(matches!(compile(&m, "main", "cuda", &opts), Err(CompileError::Runtime(RuntimeError::UnavailableDevice { .. }))));
        assert!(matches!(compile(&m, "nope", "cpu", &opts), Err(CompileError::Runtime(RuntimeError::NoEntry(_)))));
        // out_axes None on a result that depends on the mapped input: the vmap rule refuses.
        let bad = r#"
func.func private @f(%x: tensor<3xf64>) -> tensor<3xf64> {
  %0 = "quabla.sin"(%x) : (tensor<3xf64>) -> tensor<3xf64>
  return %0 : tensor<3xf64>
}
func.func private @f_v(tensor<2x3xf64>) -> tensor<3xf64> attributes {quabla.axis_size = 2 : i64, quabla.in_axes = array<i64: 0>, quabla.of = @f, quabla.out_axes = array<i64: -1>, quabla.transform = "vmap"}
func.func @main(%x: tensor<2x3xf64>) -> tensor<3xf64> {
  %0 = func.call @f_v(%x) : (tensor<2x3xf64>) -> tensor<3xf64>
  return %0 : tensor<3xf64>
}
"#;
        match compile(&module(bad), "main", "cpu", &opts).map(|_| ()) {
            Err(e @ CompileError::Pass { pass: "quabla-autodiff", source: quabla_passes::PassError::Autodiff(_) }) => assert!(e.to_string().starts_with("quabla-autodiff: vmap of @f: "), "{e}"),
            other => panic!("expected a quabla-autodiff error, got {other:?}"),
        }
    }
}

//! The `interp` executor: the reference interpreter (`crate::interp::run_func`) behind the
//! [`Executor`]/[`Executable`] traits, so that every caller (eager ops with
//! `QUABLA_EAGER=interp`, `quabla-opt --interpret`, tests) selects it by device name like any
//! other executor. "Compiling" keeps the functions the entry point reaches; a call checks the
//! inputs and interprets the entry function.
//!
//! Invariants: an executable owns its module (immutable after compile), so it is callable from
//! any thread; inputs are shared, not copied (buffers are reference counted).
use std::sync::Arc;

use quabla_dialect::{Module, TensorType};

use crate::Buffer;
use crate::executor::{check_inputs, CompileOptions, Executable, Executor, RuntimeError};
use crate::interp;

/// Runs programs with the reference interpreter (device `interp`).
#[derive(Clone, Copy, Debug, Default)]
pub struct InterpExecutor;

/// An entry function and the functions it reaches, run by the interpreter.
struct InterpExecutable {
    module: Module,
    entry: String,
    inputs: Vec<TensorType>,
    outputs: Vec<TensorType>,
}

impl Executor for InterpExecutor {
    fn name(&self) -> &str {
        "interp"
    }

    /// Options do not apply to the interpreter.
    fn compile(&self, m: &Module, entry: &str, _opts: &CompileOptions) -> Result<Arc<dyn Executable>, RuntimeError> {
        let f = m.func(entry).filter(|f| f.public).ok_or_else(|| RuntimeError::NoEntry(entry.to_string()))?;
        let (inputs, outputs) = (f.param_types(), f.result_types());
        let keep = m.reachable([entry]);
        let module = Module { funcs: m.funcs.iter().filter(|f| keep.contains(&f.name)).cloned().collect() };
        Ok(Arc::new(InterpExecutable { module, entry: entry.to_string(), inputs, outputs }))
    }
}

impl Executable for InterpExecutable {
    fn input_types(&self) -> &[TensorType] {
        &self.inputs
    }

    fn output_types(&self) -> &[TensorType] {
        &self.outputs
    }

    fn run(&self, inputs: &[&Buffer]) -> Result<Vec<Buffer>, RuntimeError> {
        check_inputs(&self.entry, &self.inputs, inputs)?;
        let owned: Vec<Buffer> = inputs.iter().map(|b| (*b).clone()).collect();
        Ok(interp::run_func(&self.module, &self.entry, &owned)?)
    }
}

#[cfg(test)]
mod tests {
    use melior::ir::Module as MlirModule;
    use quabla_dialect::mlir::{import_module, new_context};
    use quabla_dialect::DType;

    use super::*;
    use crate::registry::executor;

    /// A module from MLIR text (verified by the importer).
    fn module(text: &str) -> Module {
        let ctx = new_context();
        let m = MlirModule::parse(&ctx, text).expect("valid MLIR");
        import_module(m.as_operation()).expect("valid quabla IR")
    }

    const PROGRAM: &str = r#"
func.func private @sq(%x: tensor<4xf64>) -> tensor<4xf64> {
  %0 = "quabla.mul"(%x, %x) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}
func.func @main(%x: tensor<4xf64>, %y: tensor<4xf64>) -> (tensor<4xf64>, tensor<f64>) {
  %0 = func.call @sq(%x) : (tensor<4xf64>) -> tensor<4xf64>
  %1 = "quabla.sin"(%y) : (tensor<4xf64>) -> tensor<4xf64>
  %2 = "quabla.add"(%0, %1) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  %3 = "quabla.reduce_sum"(%2) {dims = array<i64: 0>} : (tensor<4xf64>) -> tensor<f64>
  return %2, %3 : tensor<4xf64>, tensor<f64>
}
"#;

    #[test]
    fn interp_matches_cpu() {
        let m = module(PROGRAM);
        let t = TensorType::new(DType::F64, vec![4]);
        let x = Buffer::from_f64s(t.clone(), &[1.0, -2.0, 0.5, 3.0]).unwrap();
        let y = Buffer::from_f64s(t, &[0.1, 0.2, -0.3, 1.5]).unwrap();
        let opts = CompileOptions::default();
        let run = |device: &str| {
            let exe = executor(device).unwrap().compile(&m, "main", &opts).unwrap();
            assert_eq!(exe.input_types().len(), 2);
            assert_eq!(exe.output_types().len(), 2);
            exe.run(&[&x, &y]).unwrap().iter().map(Buffer::to_f64_vec).collect::<Vec<_>>()
        };
        let (a, b) = (run("interp"), run("cpu"));
        assert_eq!(a.len(), 2);
        for (u, v) in a.iter().flatten().zip(b.iter().flatten()) {
            assert!((u - v).abs() <= 1e-12 * u.abs().max(1.0), "interp {u} vs cpu {v}");
        }
        assert!((a[0][0] - (1.0 + 0.1f64.sin())).abs() < 1e-15);
    }

    #[test]
    fn interp_checks_entry_and_inputs() {
        let m = module(PROGRAM);
        let ex = executor("interp").unwrap();
        assert!(matches!(ex.compile(&m, "sq", &CompileOptions::default()), Err(RuntimeError::NoEntry(_))));
        let exe = ex.compile(&m, "main", &CompileOptions::default()).unwrap();
        let x = Buffer::from_f64s(TensorType::new(DType::F64, vec![4]), &[0.0; 4]).unwrap();
        assert!(matches!(exe.run(&[&x]), Err(RuntimeError::InputCount { expected: 2, got: 1, .. })));
        let z = Buffer::from_f64s(TensorType::new(DType::F32, vec![4]), &[0.0; 4]).unwrap();
        assert!(matches!(exe.run(&[&x, &z]), Err(RuntimeError::InputType { index: 1, .. })));
    }
}

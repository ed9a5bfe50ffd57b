//! quabla-opt's default pipeline is the compiler's process-wide `default_pipeline()` object
//! (the one `qb.jit` and eager ops use, see tests/python/test_pipeline.py): the driver asks
//! the compiler crate for its plan, and `--print-pipeline` reports which pipeline object it
//! recorded. A driver that spelled its own pipeline would print `none` (nothing recorded) or
//! `custom` (another object).
use std::io::Write;
use std::process::{Command, Stdio};

const PROGRAM: &str = r#"func.func private @f(%x: tensor<3xf64>) -> tensor<3xf64> {
  %0 = "quabla.sin"(%x) : (tensor<3xf64>) -> tensor<3xf64>
  return %0 : tensor<3xf64>
}
func.func private @f_vjp(tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>) attributes {quabla.of = @f, quabla.transform = "vjp"}
func.func @main(%x: tensor<3xf64>, %ct: tensor<3xf64>) -> tensor<3xf64> {
  %0:2 = func.call @f_vjp(%x, %ct) : (tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>)
  return %0#1 : tensor<3xf64>
}
"#;

/// Runs quabla-opt on PROGRAM; returns (exit ok, stdout, stderr).
fn opt(args: &[&str]) -> (bool, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_quabla-opt")).args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("quabla-opt runs");
    child.stdin.take().expect("stdin").write_all(PROGRAM.as_bytes()).expect("write stdin");
    let out = child.wait_with_output().expect("quabla-opt exits");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn emit_stablehlo_runs_the_default_pipeline_object() {
    let (ok, out, err) = opt(&["--emit=stablehlo", "--print-pipeline"]);
    assert!(ok, "{err}");
    let default = quabla_compiler::default_pipeline().text();
    assert!(err.contains(&format!("quabla-opt: compile pipeline: default ({default})")), "{err}");
    assert!(err.contains(&format!("quabla-opt: pass pipeline: quabla-verify,{default}")), "{err}");
    assert!(out.contains("stablehlo.cosine") && !out.contains("func.call"), "{out}");
}

#[test]
fn a_pipeline_ending_in_the_export_runs_as_written() {
    let (ok, _, err) = opt(&["--pass-pipeline=builtin.module(quabla-autodiff,quabla-inline,convert-quabla-to-stablehlo)", "--print-pipeline"]);
    assert!(ok, "{err}");
    assert!(err.contains("quabla-opt: pass pipeline: quabla-verify,quabla-autodiff,quabla-inline\n"), "{err}");
    assert!(err.contains("quabla-opt: compile pipeline: none"), "{err}");
}

#[test]
fn print_ir_after_all_prints_after_each_group() {
    let (ok, _, err) = opt(&["--pass-pipeline=builtin.module(quabla-autodiff,quabla-inline,symbol-dce,quabla-canonicalize)", "--print-ir-after-all"]);
    assert!(ok, "{err}");
    let dumps: Vec<&str> = err.lines().filter(|l| l.contains("IR Dump After")).collect();
    assert_eq!(dumps.len(), 3, "{err}");
    assert!(dumps[0].contains("quabla-verify,quabla-autodiff,quabla-inline"), "{}", dumps[0]);
    assert!(dumps[2].contains("quabla-canonicalize"), "{}", dumps[2]);
}

#[test]
fn list_passes_names_the_export() {
    let (ok, out, _) = opt(&["--list-passes"]);
    assert!(ok);
    assert!(out.contains("quabla-canonicalize") && out.contains("convert-quabla-to-stablehlo"), "{out}");
}

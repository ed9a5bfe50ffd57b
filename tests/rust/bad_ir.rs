//! Bad input to quabla-opt (wrong shapes, unknown ops, bad attributes, malformed text, bad
//! options) yields an error message and exit code 1, never a crash. The corpus lives in
//! tests/lit/bad/ (one case per file; the first line says what is wrong).
use std::process::Command;

use crate::root;

fn quabla_opt() -> std::path::PathBuf {
    let bin = root().join("target").join(if cfg!(debug_assertions) { "debug" } else { "release" }).join("quabla-opt");
    assert!(bin.exists(), "build quabla-opt first (cargo build --workspace): {}", bin.display());
    bin
}

#[test]
fn bad_inputs_fail_cleanly() {
    let dir = root().join("tests/lit/bad");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "mlir")).collect();
    files.sort();
    assert!(files.len() >= 15, "the bad-input corpus is too small");
    for f in files {
        for extra in [&[][..], &["--pass-pipeline=builtin.module(quabla-canonicalize)", "--emit=linalg"][..]] {
            let out = Command::new(quabla_opt()).arg(&f).args(extra).output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{}: expected exit code 1, got {:?}; stderr:\n{err}", f.display(), out.status);
            assert!(err.contains("error"), "{}: no error message: {err}", f.display());
        }
    }
}

#[test]
fn bad_options_fail_cleanly() {
    let good = root().join("examples/mlp.mlir");
    for args in [
        vec!["--pass-pipeline=builtin.module(no-such-pass)"],
        vec!["--pass-pipeline=builtin.module(quabla-cse{bogus=1})"],
        vec!["--pass-pipeline=builtin.module(quabla-cse"],
        vec!["--emit=ptxx"],
        vec!["--run", "--arg=dense<1.0> : tensor<f32>"],
        vec!["--no-such-flag"],
    ] {
        let out = Command::new(quabla_opt()).arg(&good).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let missing = Command::new(quabla_opt()).arg("/nonexistent.mlir").output().unwrap();
    assert_eq!(missing.status.code(), Some(1));
}

//! The dialect's error type (dialect/src/error.rs): every variant has a sample, rule
//! violations render as `'quabla.<op>' op (<label>): <message>`, locations attach once.
//! (An integration test rather than `error::tests`, whose names would read as compiler
//! errors to scripts/test.sh's log check.)
use quabla_dialect::error::{DialectError, Expected, Violation};
use quabla_dialect::{DType, TensorType};

/// The variant names declared in dialect/src/error.rs's `enum DialectError`.
fn declared_variants() -> Vec<String> {
    let src = include_str!("../src/error.rs");
    let body = src.split("pub enum DialectError {").nth(1).and_then(|s| s.split("\n}").next()).expect("enum DialectError in error.rs");
    body.lines()
        .filter_map(|l| l.strip_prefix("    "))
        .filter(|l| l.starts_with(|c: char| c.is_ascii_uppercase()))
        .map(|l| l.split(|c: char| !c.is_ascii_alphanumeric()).next().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn samples_cover_every_variant() {
    let declared = declared_variants();
    assert_eq!(declared, ["Shape", "DType", "Size", "Attribute", "UnknownOp", "Structure"]);
    let sampled: Vec<&str> = DialectError::samples().iter().map(|e| e.variant()).collect();
    assert_eq!(sampled, declared, "DialectError::samples() must hold one value of every variant, in declaration order");
}

#[test]
fn messages_render_as_before() {
    let e = DialectError::shape("dot_general", "dot_general_c5", "contracting dims differ");
    assert_eq!(e.to_string(), "'quabla.dot_general' op (dot_general_c5): contracting dims differ");
    let d = Violation::new("and", "binary_c2", "operand type tensor<2xf32> is not a bool or integer type (i1, i32, i64)")
        .types(0, Expected::DTypes(&[DType::I1, DType::I32, DType::I64]), &TensorType::new(DType::F32, [2]))
        .dtype();
    assert_eq!(d.to_string(), "'quabla.and' op (binary_c2): operand type tensor<2xf32> is not a bool or integer type (i1, i32, i64)");
    assert_eq!(d.constraint(), Some("binary_c2"));
    let at = d.at(Some("\"m.py\":3:1".into()));
    assert_eq!(at.loc(), Some("\"m.py\":3:1"));
    assert!(at.to_string().ends_with("(i1, i32, i64) (at \"m.py\":3:1)"));
    // The first location wins.
    assert_eq!(at.clone().at(Some("other".into())).loc(), Some("\"m.py\":3:1"));
    assert_eq!(DialectError::Structure("x".into()).at(Some("l".into())).loc(), None);
}

#[test]
fn expected_renders() {
    assert_eq!(Expected::DTypes(&[DType::I32, DType::I64]).to_string(), "one of i32, i64");
    assert_eq!(Expected::Type(TensorType::new(DType::F64, [2, 3])).to_string(), "tensor<2x3xf64>");
    assert_eq!(Expected::Shape(vec![2, 3]).to_string(), "shape [2, 3]");
}

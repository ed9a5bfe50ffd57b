//! Checked sizes at the dialect's boundaries (issue 18): shape rules, reshape, constants and
//! the MLIR importer reject a type whose byte size overflows or exceeds `QUABLA_MAX_BYTES`
//! with a typed error naming the type, where they used to wrap (release) or panic (debug).
use quabla_dialect::error::DialectError;
use quabla_dialect::mlir::{new_context, parse_and_import};
use quabla_dialect::ops::layout::infer_reshape;
use quabla_dialect::{ConstantOp, DType, LayoutOp, Literal, OpKind, TensorType};

#[test]
fn reshape_to_a_wrapping_shape_is_a_size_error() {
    // 2^62 * 4 wraps to 0 in i64: this used to compare 0 elements against the operand's count.
    let x = TensorType::new(DType::F32, [4]);
    let e = infer_reshape(&x, &[1 << 62, 4]).unwrap_err();
    assert!(matches!(e, DialectError::Size(_)), "{e:?}");
    assert_eq!(e.constraint(), Some("size_overflow"));
    assert!(e.to_string().starts_with("'quabla.reshape' op (size_overflow): tensor<4611686018427387904x4xf32>"), "{e}");
    // A valid reshape still works, and a count mismatch is still reshape_c1.
    assert_eq!(infer_reshape(&x, &[2, 2]).unwrap(), TensorType::new(DType::F32, [2, 2]));
    assert_eq!(infer_reshape(&x, &[3]).unwrap_err().constraint(), Some("reshape_c1"));
}

#[test]
fn every_inferred_result_is_size_checked() {
    let x = TensorType::new(DType::F64, [1]);
    let wraps = OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![1], shape: vec![1 << 62, 1] });
    let e = wraps.infer(&[&x]).unwrap_err();
    assert!(matches!(&e, DialectError::Size(v) if v.op == "broadcast_in_dim" && v.actual == Some(TensorType::new(DType::F64, [1 << 62, 1]))), "{e:?}");
    let over = OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![0], shape: vec![1 << 38] });
    assert_eq!(over.infer(&[&x]).unwrap_err().constraint(), Some("size_limit"));
    let ok = OpKind::Layout(LayoutOp::BroadcastInDim { dims: vec![0], shape: vec![3] });
    assert_eq!(ok.infer(&[&x]).unwrap(), vec![TensorType::new(DType::F64, [3])]);
}

#[test]
fn a_constant_whose_size_wraps_is_rejected_not_multiplied() {
    // A literal claiming 2^62 x 4 elements with no bytes: `len * size` used to wrap to 0 = 0.
    let value = Literal { ty: TensorType::new(DType::F32, [1 << 62, 4]), bytes: Vec::new().into() };
    let e = OpKind::Constant(ConstantOp::Constant { value }).infer(&[]).unwrap_err();
    assert_eq!(e.constraint(), Some("size_overflow"), "{e}");
}

#[test]
fn the_importer_rejects_huge_types_before_allocating() {
    let ctx = new_context();
    let arg = "func.func @main(%a: tensor<4611686018427387904x4xf32>) -> tensor<4611686018427387904x4xf32> {\n  return %a : tensor<4611686018427387904x4xf32>\n}";
    let e = parse_and_import(&ctx, arg).unwrap_err();
    assert!(e.contains("size_overflow") && e.contains("tensor<4611686018427387904x4xf32>"), "{e}");
    // A splat constant of 4 TB: over the default limit of 1 TiB, refused before the Vec.
    let splat = "func.func @main() -> tensor<1000000000000xf32> {\n  %0 = \"quabla.constant\"() {value = dense<1.0> : tensor<1000000000000xf32>} : () -> tensor<1000000000000xf32>\n  return %0 : tensor<1000000000000xf32>\n}";
    let e = parse_and_import(&ctx, splat).unwrap_err();
    assert!(e.contains("size_limit") && e.contains("4000000000000 bytes"), "{e}");
}

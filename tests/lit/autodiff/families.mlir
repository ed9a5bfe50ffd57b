// RUN: quabla-opt %s --split-input-file --pass-pipeline='builtin.module(quabla-autodiff,quabla-canonicalize)' | FileCheck %s
// RUN: quabla-opt %s --split-input-file --pass-pipeline='builtin.module(quabla-autodiff,quabla-canonicalize)' | mlir-opt --split-input-file --irdl-file=%irdl
// The derivative program of one op per family, after canonicalization.

// Elementwise: d/dx sin(x) * w = cos(x) * w (reverse mode).
// CHECK-LABEL: func.func private @f_vjp
// CHECK-SAME: (%[[X:.*]]: tensor<3xf64>, %[[W:.*]]: tensor<3xf64>, %[[CT:.*]]: tensor<3xf64>)
// CHECK-DAG: "quabla.cos"(%[[X]])
// CHECK-DAG: "quabla.mul"(%[[CT]], %[[W]])
// CHECK: return
func.func @f(%x: tensor<3xf64>, %w: tensor<3xf64>) -> tensor<3xf64> {
  %0 = "quabla.sin"(%x) : (tensor<3xf64>) -> tensor<3xf64>
  %1 = "quabla.mul"(%0, %w) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  return %1 : tensor<3xf64>
}
func.func private @f_vjp(tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) attributes {quabla.of = @f, quabla.transform = "vjp"}

// -----

// Forward mode: the tangent of exp is the tangent times the result.
// CHECK-LABEL: func.func private @e_jvp
// CHECK: %[[Y:.*]] = "quabla.exp"(%arg0)
// CHECK: "quabla.mul"(%arg1, %[[Y]])
func.func @e(%x: tensor<f32>) -> tensor<f32> {
  %0 = "quabla.exp"(%x) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @e_jvp(tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>) attributes {quabla.of = @e, quabla.transform = "jvp"}

// -----

// Reduce and layout: the cotangent of a sum is broadcast back.
// CHECK-LABEL: func.func private @s_vjp
// CHECK: "quabla.broadcast_in_dim"(%arg1) {dims = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x5xf32>
func.func @s(%x: tensor<2x5xf32>) -> tensor<2xf32> {
  %0 = "quabla.reduce_sum"(%x) {dims = array<i64: 1>} : (tensor<2x5xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func private @s_vjp(tensor<2x5xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2x5xf32>) attributes {quabla.of = @s, quabla.transform = "vjp"}

// -----

// Dot: the cotangents are products with the other operand.
// CHECK-LABEL: func.func private @d_vjp
// CHECK-COUNT-3: quabla.dot_general
func.func @d(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = "quabla.dot_general"(%a, %b) {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
func.func private @d_vjp(tensor<2x3xf32>, tensor<3x4xf32>, tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x3xf32>, tensor<3x4xf32>) attributes {quabla.of = @d, quabla.transform = "vjp"}

// -----

// Slicing: the cotangent of a slice is padded with zeros.
// CHECK-LABEL: func.func private @sl_vjp
// CHECK: "quabla.pad"(%arg1, %{{.*}}) {edge_padding_high = array<i64: 2>, edge_padding_low = array<i64: 1>, interior_padding = array<i64: 1>}
func.func @sl(%x: tensor<6xf64>) -> tensor<2xf64> {
  %0 = "quabla.slice"(%x) {start_indices = array<i64: 1>, limit_indices = array<i64: 5>, strides = array<i64: 2>} : (tensor<6xf64>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}
func.func private @sl_vjp(tensor<6xf64>, tensor<2xf64>) -> (tensor<2xf64>, tensor<6xf64>) attributes {quabla.of = @sl, quabla.transform = "vjp"}

// -----

// Integer arguments get no cotangent: the vjp of a gather returns one cotangent.
// CHECK-LABEL: func.func private @g_vjp
// CHECK-SAME: -> (tensor<2xf32>, tensor<4xf32>)
// CHECK-NOT: quabla.dot_general
// CHECK: quabla.scatter_add
// CHECK-NOT: quabla.dot_general
func.func @g(%x: tensor<4xf32>, %i: tensor<2xi32>) -> tensor<2xf32> {
  %0 = "quabla.gather"(%x, %i) {axis = 0 : i64} : (tensor<4xf32>, tensor<2xi32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func private @g_vjp(tensor<4xf32>, tensor<2xi32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<4xf32>) attributes {quabla.of = @g, quabla.transform = "vjp"}

// RUN: quabla-opt %s --pass-pipeline='builtin.module(convert-quabla-to-stablehlo)' | FileCheck %s
// broadcast_in_dim, reshape and transpose keep their attributes; an identity reshape renames.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[A:.*]]: tensor<3xf32>)
// CHECK: %[[B:.*]] = "stablehlo.broadcast_in_dim"(%[[A]]) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: %[[T:.*]] = "stablehlo.transpose"(%[[B]]) {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK: %[[R:.*]] = "stablehlo.reshape"(%[[T]]) : (tensor<3x2xf32>) -> tensor<6xf32>
// CHECK-NOT: stablehlo.reshape
// CHECK: "func.return"(%[[T]], %[[R]])
func.func @main(%a: tensor<3xf32>) -> (tensor<3x2xf32>, tensor<6xf32>) {
  %0 = "quabla.broadcast_in_dim"(%a) {dims = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3xf32>
  %1 = "quabla.transpose"(%0) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %2 = "quabla.reshape"(%1) : (tensor<3x2xf32>) -> tensor<6xf32>
  %3 = "quabla.reshape"(%2) : (tensor<6xf32>) -> tensor<6xf32>
  return %1, %3 : tensor<3x2xf32>, tensor<6xf32>
}

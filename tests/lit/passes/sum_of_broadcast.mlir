// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | FileCheck %s
// RUN: quabla-opt %s --run --arg='dense<[1.0, -2.0, 3.5]> : tensor<3xf32>' --arg='dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>' | FileCheck %s --check-prefix=OUT
// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | quabla-opt --run --arg='dense<[1.0, -2.0, 3.5]> : tensor<3xf32>' --arg='dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>' | FileCheck %s --check-prefix=OUT
// A sum over dims a broadcast's operand has whole is the broadcast of the operand's sum
// (fold.rs pulled_sum): c summed once, not once per row (the gradient of
// sum(a[:, None] * c[None, :]) in a); a sum over a dim the broadcast adds stays.

// CHECK-LABEL: func.func @main
// CHECK: "quabla.reduce_sum"(%arg0) {dims = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
// CHECK: "quabla.broadcast_in_dim"
// CHECK: "quabla.reduce_sum"(%arg1) {dims = array<i64: 0>} : (tensor<2x2xf32>) -> tensor<2xf32>
// CHECK: "quabla.broadcast_in_dim"
// CHECK: "quabla.reduce_sum"(%{{.*}}) {dims = array<i64: 0>} : (tensor<4x3xf32>)

// OUT: dense<2.5e0> : tensor<4xf32>
// OUT-NEXT: dense<{{\[\[}}4.0e0, 6.0e0], [4.0e0, 6.0e0], [4.0e0, 6.0e0], [4.0e0, 6.0e0], [4.0e0, 6.0e0]]> : tensor<5x2xf32>
// OUT-NEXT: dense<[4.0e0, -8.0e0, 1.4e1]> : tensor<3xf32>
func.func @main(%c: tensor<3xf32>, %m: tensor<2x2xf32>) -> (tensor<4xf32>, tensor<5x2xf32>, tensor<3xf32>) {
  %b = "quabla.broadcast_in_dim"(%c) {dims = array<i64: 1>} : (tensor<3xf32>) -> tensor<4x3xf32>
  %s = "quabla.reduce_sum"(%b) {dims = array<i64: 1>} : (tensor<4x3xf32>) -> tensor<4xf32>
  %mb = "quabla.broadcast_in_dim"(%m) {dims = array<i64: 0, 2>} : (tensor<2x2xf32>) -> tensor<2x5x2xf32>
  %t = "quabla.reduce_sum"(%mb) {dims = array<i64: 0>} : (tensor<2x5x2xf32>) -> tensor<5x2xf32>
  %u = "quabla.reduce_sum"(%b) {dims = array<i64: 0>} : (tensor<4x3xf32>) -> tensor<3xf32>
  return %s, %t, %u : tensor<4xf32>, tensor<5x2xf32>, tensor<3xf32>
}

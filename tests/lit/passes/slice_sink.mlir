// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | FileCheck %s
// RUN: quabla-opt %s --run --arg='dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>' --arg='dense<[[7.0], [8.0]]> : tensor<2x1xf32>' | FileCheck %s --check-prefix=OUT
// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | quabla-opt --run --arg='dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>' --arg='dense<[[7.0], [8.0]]> : tensor<2x1xf32>' | FileCheck %s --check-prefix=OUT
// Slices sink towards their data (fold.rs sunk_slice): through a single-use elementwise op
// (the gradient of sum(concatenate([x, y], 1) ** 2) in x), into the operand of a
// concatenation that holds them, onto a scalar's broadcast. No concatenation is left.

// CHECK-LABEL: func.func @main
// CHECK-NOT: quabla.concatenate
// CHECK: "quabla.mul"
// CHECK: "quabla.slice"(%arg0) {limit_indices = array<i64: 2, 3>, start_indices = array<i64: 0, 1>
// CHECK: return %{{.*}}, %arg1, %{{.*}}, %{{.*}}

// OUT: dense<{{\[\[}}2.0e0, 4.0e0, 6.0e0], [8.0e0, 1.0e1, 1.2e1]]> : tensor<2x3xf32>
// OUT-NEXT: dense<{{\[\[}}7.0e0], [8.0e0]]> : tensor<2x1xf32>
// OUT-NEXT: dense<{{\[\[}}2.0e0, 3.0e0], [5.0e0, 6.0e0]]> : tensor<2x2xf32>
// OUT-NEXT: dense<5.0e-1> : tensor<1x2xf32>
func.func @main(%x: tensor<2x3xf32>, %y: tensor<2x1xf32>) -> (tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x2xf32>, tensor<1x2xf32>) {
  %c = "quabla.concatenate"(%x, %y) {dim = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %s2 = "quabla.constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %two = "quabla.broadcast_in_dim"(%s2) {dims = array<i64>} : (tensor<f32>) -> tensor<2x4xf32>
  %m = "quabla.mul"(%two, %c) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %a = "quabla.slice"(%m) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 2, 3>, strides = array<i64: 1, 1>} : (tensor<2x4xf32>) -> tensor<2x3xf32>
  %b = "quabla.slice"(%c) {start_indices = array<i64: 0, 3>, limit_indices = array<i64: 2, 4>, strides = array<i64: 1, 1>} : (tensor<2x4xf32>) -> tensor<2x1xf32>
  %s = "quabla.slice"(%c) {start_indices = array<i64: 0, 1>, limit_indices = array<i64: 2, 3>, strides = array<i64: 1, 1>} : (tensor<2x4xf32>) -> tensor<2x2xf32>
  %h = "quabla.constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %hb = "quabla.broadcast_in_dim"(%h) {dims = array<i64>} : (tensor<f32>) -> tensor<100000x2xf32>
  %hs = "quabla.slice"(%hb) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 1, 2>, strides = array<i64: 1, 1>} : (tensor<100000x2xf32>) -> tensor<1x2xf32>
  return %a, %b, %s, %hs : tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x2xf32>, tensor<1x2xf32>
}

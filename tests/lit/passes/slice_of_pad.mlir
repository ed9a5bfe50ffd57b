// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | FileCheck %s
// RUN: quabla-opt %s --run --arg='dense<[[1.0, -2.0, 3.0], [4.0, 5.5, -6.0]]> : tensor<2x3xf32>' | FileCheck %s --check-prefix=OUT
// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | quabla-opt --run --arg='dense<[[1.0, -2.0, 3.0], [4.0, 5.5, -6.0]]> : tensor<2x3xf32>' | FileCheck %s --check-prefix=OUT
// A slice within the operand of a pad without interior padding is a slice of the operand
// (fold.rs sunk_slice): the whole operand (the gradient of sum(pad(x, 1) ** 2)), a strided
// part of it; a slice reaching into the padding is the pad of the operand's slice; a slice of
// an interior-padded pad stays.

// CHECK-LABEL: func.func @main
// CHECK: "quabla.slice"(%arg0) {limit_indices = array<i64: 2, 3>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 2>}
// CHECK: %[[S:.*]] = "quabla.slice"(%arg0) {limit_indices = array<i64: 1, 2>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>}
// CHECK: "quabla.pad"(%[[S]], %{{.*}}) {edge_padding_high = array<i64: 0, 0>, edge_padding_low = array<i64: 1, 0>
// CHECK: %[[Q:.*]] = "quabla.pad"(%arg0
// CHECK: "quabla.slice"(%[[Q]])
// CHECK: return %arg0,

// OUT: dense<{{\[\[}}1.0e0, -2.0e0, 3.0e0], [4.0e0, 5.5e0, -6.0e0]]> : tensor<2x3xf32>
// OUT-NEXT: dense<{{\[\[}}1.0e0, 3.0e0], [4.0e0, -6.0e0]]> : tensor<2x2xf32>
// OUT-NEXT: dense<{{\[\[}}0.0e0, 0.0e0], [1.0e0, -2.0e0]]> : tensor<2x2xf32>
// OUT-NEXT: dense<{{\[\[}}1.0e0, 0.0e0, -2.0e0]]> : tensor<1x3xf32>
func.func @main(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<1x3xf32>) {
  %zero = "quabla.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %p = "quabla.pad"(%x, %zero) {edge_padding_low = array<i64: 1, 1>, edge_padding_high = array<i64: 1, 1>, interior_padding = array<i64: 0, 0>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<4x5xf32>
  %a = "quabla.slice"(%p) {start_indices = array<i64: 1, 1>, limit_indices = array<i64: 3, 4>, strides = array<i64: 1, 1>} : (tensor<4x5xf32>) -> tensor<2x3xf32>
  %b = "quabla.slice"(%p) {start_indices = array<i64: 1, 1>, limit_indices = array<i64: 3, 4>, strides = array<i64: 1, 2>} : (tensor<4x5xf32>) -> tensor<2x2xf32>
  %c = "quabla.slice"(%p) {start_indices = array<i64: 0, 1>, limit_indices = array<i64: 2, 3>, strides = array<i64: 1, 1>} : (tensor<4x5xf32>) -> tensor<2x2xf32>
  %q = "quabla.pad"(%x, %zero) {edge_padding_low = array<i64: 0, 0>, edge_padding_high = array<i64: 0, 0>, interior_padding = array<i64: 0, 1>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x5xf32>
  %d = "quabla.slice"(%q) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 1, 3>, strides = array<i64: 1, 1>} : (tensor<2x5xf32>) -> tensor<1x3xf32>
  return %a, %b, %c, %d : tensor<2x3xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<1x3xf32>
}

// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | FileCheck %s
// RUN: quabla-opt %s --run --arg='dense<[[1.0, -2.0], [3.0, 4.0], [5.0, 6.5]]> : tensor<3x2xf32>' --arg='dense<[[1.5, 2.5, -1.0], [0.5, 4.0, 2.0]]> : tensor<2x3xf32>' | FileCheck %s --check-prefix=OUT
// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | quabla-opt --run --arg='dense<[[1.0, -2.0], [3.0, 4.0], [5.0, 6.5]]> : tensor<3x2xf32>' --arg='dense<[[1.5, 2.5, -1.0], [0.5, 4.0, 2.0]]> : tensor<2x3xf32>' | FileCheck %s --check-prefix=OUT
// Sums move towards their data (fold.rs pulled_sum): through a single-use negation, onto the
// operand of a zero padding along the summed dims; a reduction over dims of one element is
// a reshape. The cross-entropy gradient's sum(neg(pad(-1 column))) folds to a constant.
// A padding along a dim that is not summed, or by a nonzero value, stays.

// CHECK-LABEL: func.func @main
// CHECK-NOT: quabla.neg
// CHECK: %[[S:.*]] = "quabla.reduce_sum"(%arg0) {dims = array<i64: 1>}
// CHECK: "quabla.pad"(%arg1
// CHECK: "quabla.reduce_sum"
// CHECK: "quabla.pad"(%arg1
// CHECK: "quabla.reduce_max"
// CHECK: "quabla.constant"() {value = dense<1.000000e+00> : tensor<3xf32>}
// CHECK-NOT: quabla.reduce

// OUT: dense<[1.0e0, -7.0e0, -1.15e1]> : tensor<3xf32>
// OUT-NEXT: dense<[2.0e0, 6.5e0, 1.0e0]> : tensor<3xf32>
// OUT-NEXT: dense<[1.5e0, 4.0e0, 2.0e0, 7.0e0]> : tensor<4xf32>
// OUT-NEXT: dense<1.0e0> : tensor<3xf32>
func.func @main(%x: tensor<3x2xf32>, %y: tensor<2x3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<4xf32>, tensor<3xf32>) {
  %zero = "quabla.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %seven = "quabla.constant"() {value = dense<7.0> : tensor<f32>} : () -> tensor<f32>
  %p = "quabla.pad"(%x, %zero) {edge_padding_low = array<i64: 0, 1>, edge_padding_high = array<i64: 0, 2>, interior_padding = array<i64: 0, 1>} : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x6xf32>
  %n = "quabla.neg"(%p) : (tensor<3x6xf32>) -> tensor<3x6xf32>
  %s = "quabla.reduce_sum"(%n) {dims = array<i64: 1>} : (tensor<3x6xf32>) -> tensor<3xf32>
  %q = "quabla.pad"(%y, %zero) {edge_padding_low = array<i64: 0, 0>, edge_padding_high = array<i64: 0, 0>, interior_padding = array<i64: 0, 0>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %qq = "quabla.pad"(%y, %zero) {edge_padding_low = array<i64: 0, 0>, edge_padding_high = array<i64: 0, 1>, interior_padding = array<i64: 0, 0>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x4xf32>
  %t = "quabla.reduce_sum"(%qq) {dims = array<i64: 0>} : (tensor<2x4xf32>) -> tensor<4xf32>
  %r = "quabla.pad"(%y, %seven) {edge_padding_low = array<i64: 0, 0>, edge_padding_high = array<i64: 0, 1>, interior_padding = array<i64: 0, 0>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x4xf32>
  %m = "quabla.reduce_max"(%r) {dims = array<i64: 0>} : (tensor<2x4xf32>) -> tensor<4xf32>
  %c = "quabla.constant"() {value = dense<-1.0> : tensor<3x1xf32>} : () -> tensor<3x1xf32>
  %cp = "quabla.pad"(%c, %zero) {edge_padding_low = array<i64: 0, 0>, edge_padding_high = array<i64: 0, 9>, interior_padding = array<i64: 0, 0>} : (tensor<3x1xf32>, tensor<f32>) -> tensor<3x10xf32>
  %cn = "quabla.neg"(%cp) : (tensor<3x10xf32>) -> tensor<3x10xf32>
  %cs = "quabla.reduce_sum"(%cn) {dims = array<i64: 1>} : (tensor<3x10xf32>) -> tensor<3xf32>
  %u = "quabla.slice"(%t) {start_indices = array<i64: 0>, limit_indices = array<i64: 3>, strides = array<i64: 1>} : (tensor<4xf32>) -> tensor<3xf32>
  return %s, %u, %m, %cs : tensor<3xf32>, tensor<3xf32>, tensor<4xf32>, tensor<3xf32>
}

// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | FileCheck %s
// RUN: quabla-opt %s --interpret | FileCheck %s --check-prefix=OUT
// RUN: quabla-opt %s --run | FileCheck %s --check-prefix=OUT
// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | quabla-opt --run | FileCheck %s --check-prefix=OUT
// A counted loop that adds a product of per-iteration values into a carry (a recurrent
// network's weight gradient, fold's accumulate.rs stacked_products): the operands are stacked
// at the iteration's index instead, and the carry's final value is its initial one plus one
// product of the stacks contracting the iteration dim with the product's own, after the loop.
// @small: an accumulator smaller than the operands of a step keeps its update.
// X[t, r, c] = 24t + 8r + c + 1 (4 x 3 x 8), a = X[t], b = 2a; acc = sum_t a^T b over r:
// acc[0, 0] = 2 sum_t sum_r X[t, r, 0]^2 = 2 (1 + 81 + 289 + 625 + 1089 + 1681 + 2401 +
// 3249 + 4225 + 5329 + 6561 + 7921) = 66904.

// CHECK-LABEL: func.func @main
// CHECK: scf.while
// CHECK-SAME: tensor<4x3x8xf64>, tensor<4x3x8xf64>
// CHECK-NOT: "quabla.dot_general"
// CHECK: "quabla.dynamic_update_slice"
// CHECK: "quabla.dynamic_update_slice"
// CHECK-NOT: "quabla.dot_general"
// CHECK: scf.yield
// CHECK: "quabla.dot_general"(%{{.*}}, %{{.*}}) {lhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 0, 1>, rhs_batching_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0, 1>} : (tensor<4x3x8xf64>, tensor<4x3x8xf64>) -> tensor<8x8xf64>
// CHECK-LABEL: func.func @small
// CHECK: scf.while
// CHECK: "quabla.dot_general"
// CHECK: scf.yield

// OUT: dense<{{\[\[}}6.6904{{0*}}e4, 6.7984{{0*}}e4,
func.func @main() -> tensor<8x8xf64> {
  %iota = "quabla.iota"() {dim = 0 : i64} : () -> tensor<96xf64>
  %one = "quabla.constant"() {value = dense<1.0> : tensor<96xf64>} : () -> tensor<96xf64>
  %x1 = "quabla.add"(%iota, %one) : (tensor<96xf64>, tensor<96xf64>) -> tensor<96xf64>
  %x = "quabla.reshape"(%x1) : (tensor<96xf64>) -> tensor<4x3x8xf64>
  %acc0 = "quabla.constant"() {value = dense<0.0> : tensor<8x8xf64>} : () -> tensor<8x8xf64>
  %zero = "quabla.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %r:3 = scf.while (%i = %zero, %acc = %acc0, %xs = %x) : (tensor<i64>, tensor<8x8xf64>, tensor<4x3x8xf64>) -> (tensor<i64>, tensor<8x8xf64>, tensor<4x3x8xf64>) {
    %n = "quabla.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %lt = "quabla.compare"(%i, %n) {direction = "lt"} : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %c = tensor.extract %lt[] : tensor<i1>
    scf.condition(%c) %i, %acc, %xs : tensor<i64>, tensor<8x8xf64>, tensor<4x3x8xf64>
  } do {
  ^bb0(%i2: tensor<i64>, %acc2: tensor<8x8xf64>, %xs2: tensor<4x3x8xf64>):
    %c1 = "quabla.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %c0 = "quabla.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
    %two = "quabla.constant"() {value = dense<2.0> : tensor<3x8xf64>} : () -> tensor<3x8xf64>
    %i3 = "quabla.add"(%i2, %c1) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %a0 = "quabla.dynamic_slice"(%xs2, %i2, %c0, %c0) {slice_sizes = array<i64: 1, 3, 8>} : (tensor<4x3x8xf64>, tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<1x3x8xf64>
    %a = "quabla.reshape"(%a0) : (tensor<1x3x8xf64>) -> tensor<3x8xf64>
    %b = "quabla.mul"(%a, %two) : (tensor<3x8xf64>, tensor<3x8xf64>) -> tensor<3x8xf64>
    %d = "quabla.dot_general"(%a, %b) {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 0>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<3x8xf64>, tensor<3x8xf64>) -> tensor<8x8xf64>
    %acc3 = "quabla.add"(%acc2, %d) : (tensor<8x8xf64>, tensor<8x8xf64>) -> tensor<8x8xf64>
    scf.yield %i3, %acc3, %xs2 : tensor<i64>, tensor<8x8xf64>, tensor<4x3x8xf64>
  }
  return %r#1 : tensor<8x8xf64>
}

func.func @small(%x: tensor<4x3x8xf64>) -> tensor<3x3xf64> {
  %acc0 = "quabla.constant"() {value = dense<0.0> : tensor<3x3xf64>} : () -> tensor<3x3xf64>
  %zero = "quabla.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %r:3 = scf.while (%i = %zero, %acc = %acc0, %xs = %x) : (tensor<i64>, tensor<3x3xf64>, tensor<4x3x8xf64>) -> (tensor<i64>, tensor<3x3xf64>, tensor<4x3x8xf64>) {
    %n = "quabla.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %lt = "quabla.compare"(%i, %n) {direction = "lt"} : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %c = tensor.extract %lt[] : tensor<i1>
    scf.condition(%c) %i, %acc, %xs : tensor<i64>, tensor<3x3xf64>, tensor<4x3x8xf64>
  } do {
  ^bb0(%i2: tensor<i64>, %acc2: tensor<3x3xf64>, %xs2: tensor<4x3x8xf64>):
    %c1 = "quabla.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %c0 = "quabla.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
    %i3 = "quabla.add"(%i2, %c1) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %a0 = "quabla.dynamic_slice"(%xs2, %i2, %c0, %c0) {slice_sizes = array<i64: 1, 3, 8>} : (tensor<4x3x8xf64>, tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<1x3x8xf64>
    %a = "quabla.reshape"(%a0) : (tensor<1x3x8xf64>) -> tensor<3x8xf64>
    %d = "quabla.dot_general"(%a, %a) {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 1>} : (tensor<3x8xf64>, tensor<3x8xf64>) -> tensor<3x3xf64>
    %acc3 = "quabla.add"(%d, %acc2) : (tensor<3x3xf64>, tensor<3x3xf64>) -> tensor<3x3xf64>
    scf.yield %i3, %acc3, %xs2 : tensor<i64>, tensor<3x3xf64>, tensor<4x3x8xf64>
  }
  return %r#1 : tensor<3x3xf64>
}

// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | FileCheck %s
// RUN: quabla-opt %s --run | FileCheck %s --check-prefix=OUT
// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | quabla-opt --run | FileCheck %s --check-prefix=OUT
// A dot_general with no free dims (einsum("ij,ij->i"), vmap(jnp.dot)) is the sum over the
// contracting dims of the operands' product (fold.rs free_dot); one whose operands' dims are
// not in the same places (a batch dim contracted on the other side) stays a product.

// CHECK-LABEL: func.func @main
// CHECK: %[[P:.*]] = "quabla.mul"(%{{.*}}, %{{.*}}) : (tensor<16x8xi32>, tensor<16x8xi32>) -> tensor<16x8xi32>
// CHECK: "quabla.reduce_sum"(%[[P]]) {dims = array<i64: 1>} : (tensor<16x8xi32>) -> tensor<16xi32>
// CHECK: %[[Q:.*]] = "quabla.mul"(%{{.*}}, %{{.*}}) : (tensor<4x8x4xi32>, tensor<4x8x4xi32>) -> tensor<4x8x4xi32>
// CHECK: "quabla.reduce_sum"(%[[Q]]) {dims = array<i64: 0, 2>} : (tensor<4x8x4xi32>) -> tensor<8xi32>
// CHECK: "quabla.dot_general"

// (Iotas of more than 64 elements: not evaluated by folding.) x's rows [8i, 8i + 8): squared
// norms 512 i^2 + 448 i + 140; the 4 x 8 x 4 iota y squared and summed over dims 0 and 2 for
// each middle index; an outer product z v (contracting z's unit columns with v's unit rows:
// free dims on both sides, no fold).
// OUT: dense<[140, 1100, 3084, 6092,
// OUT-NEXT: dense<[59704, 66296, 73400, 81016,
// OUT-NEXT: dense<{{\[}}[0, 0, 0], [0, 1, 2], [0, 2, 4],
func.func @main() -> (tensor<16xi32>, tensor<8xi32>, tensor<128x3xi32>) {
  %i = "quabla.iota"() {dim = 0 : i64} : () -> tensor<128xi32>
  %x = "quabla.reshape"(%i) : (tensor<128xi32>) -> tensor<16x8xi32>
  %d = "quabla.dot_general"(%x, %x) {lhs_batching_dimensions = array<i64: 0>, rhs_batching_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 1>} : (tensor<16x8xi32>, tensor<16x8xi32>) -> tensor<16xi32>
  %j = "quabla.iota"() {dim = 0 : i64} : () -> tensor<128xi32>
  %y = "quabla.reshape"(%j) : (tensor<128xi32>) -> tensor<4x8x4xi32>
  %e = "quabla.dot_general"(%y, %y) {lhs_batching_dimensions = array<i64: 1>, rhs_batching_dimensions = array<i64: 1>, lhs_contracting_dimensions = array<i64: 0, 2>, rhs_contracting_dimensions = array<i64: 0, 2>} : (tensor<4x8x4xi32>, tensor<4x8x4xi32>) -> tensor<8xi32>
  %k = "quabla.iota"() {dim = 0 : i64} : () -> tensor<128xi32>
  %z = "quabla.reshape"(%k) : (tensor<128xi32>) -> tensor<128x1xi32>
  %w = "quabla.iota"() {dim = 0 : i64} : () -> tensor<3xi32>
  %v = "quabla.reshape"(%w) : (tensor<3xi32>) -> tensor<1x3xi32>
  %n = "quabla.dot_general"(%z, %v) {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<128x1xi32>, tensor<1x3xi32>) -> tensor<128x3xi32>
  return %d, %e, %n : tensor<16xi32>, tensor<8xi32>, tensor<128x3xi32>
}

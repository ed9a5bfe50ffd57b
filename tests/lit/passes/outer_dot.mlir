// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | FileCheck %s
// RUN: quabla-opt %s --run | FileCheck %s --check-prefix=OUT
// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | quabla-opt --run | FileCheck %s --check-prefix=OUT
// A dot_general that contracts nothing is the product of its operands broadcast to the
// result [batch, lhs free, rhs free] (fold.rs outer_dot); an operand whose batch dim is not
// its first is transposed before its broadcast.

// CHECK-LABEL: func.func @main
// CHECK-NOT: "quabla.dot_general"
// CHECK: "quabla.transpose"(%{{.*}}) {perm = array<i64: 1, 0>} : (tensor<40x2xi32>) -> tensor<2x40xi32>
// CHECK: "quabla.broadcast_in_dim"(%{{.*}}) {dims = array<i64: 0, 1>} : (tensor<2x40xi32>) -> tensor<2x40x40xi32>
// CHECK: "quabla.broadcast_in_dim"(%{{.*}}) {dims = array<i64: 0, 2>} : (tensor<2x40xi32>) -> tensor<2x40x40xi32>
// CHECK: "quabla.mul"

// x[i, b] = 2i + b + 1 (40 x 2), y[b, k] = 40b + k + 1 (2 x 40); result[b, i, k] = x[i, b] y[b, k]:
// result[0, 0, :] = 1 * (1..40), result[0, 1, :] = 3 * (1..40).
// OUT: dense<{{\[\[}}[1, 2, 3, 4, 5,
func.func @main() -> tensor<2x40x40xi32> {
  %i = "quabla.iota"() {dim = 0 : i64} : () -> tensor<80xi32>
  %one = "quabla.constant"() {value = dense<1> : tensor<80xi32>} : () -> tensor<80xi32>
  %j = "quabla.add"(%i, %one) : (tensor<80xi32>, tensor<80xi32>) -> tensor<80xi32>
  %x = "quabla.reshape"(%j) : (tensor<80xi32>) -> tensor<40x2xi32>
  %y = "quabla.reshape"(%j) : (tensor<80xi32>) -> tensor<2x40xi32>
  %d = "quabla.dot_general"(%x, %y) {lhs_batching_dimensions = array<i64: 1>, rhs_batching_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64>, rhs_contracting_dimensions = array<i64>} : (tensor<40x2xi32>, tensor<2x40xi32>) -> tensor<2x40x40xi32>
  return %d : tensor<2x40x40xi32>
}

// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | FileCheck %s
// RUN: quabla-opt %s --run | FileCheck %s --check-prefix=OUT
// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | quabla-opt --run | FileCheck %s --check-prefix=OUT
// The sum over a short last dim of a single-use elementwise value is the sum of its columns
// (fold.rs summed_columns), whose slices sink into the value; a reshape of an elementwise op
// over a splat and a reshape from its shape is the op in that shape (sunk_reshape). The
// gradient of sum(repeat(x, 2, 1) ** 2) over 64 x 64 i32: 2x + 2x, no reduction, no
// reshape, no broadcast of x.

// CHECK-LABEL: func.func @main
// CHECK-NOT: "quabla.reshape"
// CHECK-NOT: "quabla.broadcast_in_dim"
// CHECK: %[[TWO:.*]] = "quabla.constant"() {value = dense<2> : tensor<64x64xi32>}
// CHECK: %[[M:.*]] = "quabla.mul"(%[[TWO]], %{{.*}}) : (tensor<64x64xi32>
// CHECK: %[[S:.*]] = "quabla.add"(%[[M]], %[[M]])
// CHECK: "quabla.reduce_sum"(%[[S]]) {dims = array<i64: 1>}
// CHECK-NOT: "quabla.reduce_sum"

// x = i * 64 + j; the gradient is 4x: row i sums to 16384 i + 8064.
// OUT: dense<[8064, 24448, 40832]> : tensor<3xi32>
// OUT-NEXT: dense<[1007488, 1023872, 1040256]> : tensor<3xi32>
func.func @main() -> (tensor<3xi32>, tensor<3xi32>) {
  %i = "quabla.iota"() {dim = 0 : i64} : () -> tensor<64x64xi32>
  %j = "quabla.iota"() {dim = 1 : i64} : () -> tensor<64x64xi32>
  %k = "quabla.constant"() {value = dense<64> : tensor<64x64xi32>} : () -> tensor<64x64xi32>
  %ik = "quabla.mul"(%i, %k) : (tensor<64x64xi32>, tensor<64x64xi32>) -> tensor<64x64xi32>
  %x = "quabla.add"(%ik, %j) : (tensor<64x64xi32>, tensor<64x64xi32>) -> tensor<64x64xi32>
  %x3 = "quabla.reshape"(%x) : (tensor<64x64xi32>) -> tensor<64x64x1xi32>
  %b = "quabla.broadcast_in_dim"(%x3) {dims = array<i64: 0, 1, 2>} : (tensor<64x64x1xi32>) -> tensor<64x64x2xi32>
  %r = "quabla.reshape"(%b) : (tensor<64x64x2xi32>) -> tensor<64x128xi32>
  %two = "quabla.constant"() {value = dense<2> : tensor<i32>} : () -> tensor<i32>
  %t = "quabla.broadcast_in_dim"(%two) {dims = array<i64>} : (tensor<i32>) -> tensor<64x128xi32>
  %g = "quabla.mul"(%t, %r) : (tensor<64x128xi32>, tensor<64x128xi32>) -> tensor<64x128xi32>
  %g3 = "quabla.reshape"(%g) : (tensor<64x128xi32>) -> tensor<64x64x2xi32>
  %s = "quabla.reduce_sum"(%g3) {dims = array<i64: 2>} : (tensor<64x64x2xi32>) -> tensor<64x64xi32>
  %rows = "quabla.reduce_sum"(%s) {dims = array<i64: 1>} : (tensor<64x64xi32>) -> tensor<64xi32>
  %a = "quabla.slice"(%rows) {start_indices = array<i64: 0>, limit_indices = array<i64: 3>, strides = array<i64: 1>} : (tensor<64xi32>) -> tensor<3xi32>
  %z = "quabla.slice"(%rows) {start_indices = array<i64: 61>, limit_indices = array<i64: 64>, strides = array<i64: 1>} : (tensor<64xi32>) -> tensor<3xi32>
  return %a, %z : tensor<3xi32>, tensor<3xi32>
}

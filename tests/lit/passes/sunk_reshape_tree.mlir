// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | FileCheck %s
// RUN: quabla-opt %s --run | FileCheck %s --check-prefix=OUT
// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | quabla-opt --run | FileCheck %s --check-prefix=OUT
// A reshape of a tree of elementwise ops (an inner value read twice by one op: add(m, m))
// over a splat and a reshape from the reshape's shape is the tree in that shape
// (fold.rs sunk_reshape); a sum over a short middle dim of a single-use elementwise value is
// the sum of its slices (summed_columns), which sink into the tree down to x. The gradient of
// a 2-D upsampling's sum of squares over 64 x 64 i32 (x repeated twice along both dims): no
// reshape, no broadcast of x, one reduction left (the rows' sums).

// CHECK-LABEL: func.func @main
// CHECK-NOT: "quabla.reshape"
// CHECK-NOT: "quabla.broadcast_in_dim"
// CHECK: %[[TWO:.*]] = "quabla.constant"() {value = dense<2> : tensor<64x64xi32>}
// CHECK: %[[M:.*]] = "quabla.mul"(%[[TWO]], %{{.*}}) : (tensor<64x64xi32>
// CHECK: %[[S:.*]] = "quabla.add"(%[[M]], %[[M]])
// CHECK: %[[T:.*]] = "quabla.add"(%[[S]], %[[S]])
// CHECK: "quabla.reduce_sum"(%[[T]]) {dims = array<i64: 1>}
// CHECK-NOT: "quabla.reduce_sum"

// x = i * 64 + j; each x[i, j] is read by four elements of the upsampled array, each of
// gradient 2x: 8x. Row i sums to 8 (64^2 i + 2016) = 32768 i + 16128.
// OUT: dense<[16128, 48896, 81664]> : tensor<3xi32>
// OUT-NEXT: dense<[2014976, 2047744, 2080512]> : tensor<3xi32>
func.func @main() -> (tensor<3xi32>, tensor<3xi32>) {
  %i = "quabla.iota"() {dim = 0 : i64} : () -> tensor<64x64xi32>
  %j = "quabla.iota"() {dim = 1 : i64} : () -> tensor<64x64xi32>
  %k = "quabla.constant"() {value = dense<64> : tensor<64x64xi32>} : () -> tensor<64x64xi32>
  %ik = "quabla.mul"(%i, %k) : (tensor<64x64xi32>, tensor<64x64xi32>) -> tensor<64x64xi32>
  %x = "quabla.add"(%ik, %j) : (tensor<64x64xi32>, tensor<64x64xi32>) -> tensor<64x64xi32>
  %x3 = "quabla.reshape"(%x) : (tensor<64x64xi32>) -> tensor<64x1x64xi32>
  %b = "quabla.broadcast_in_dim"(%x3) {dims = array<i64: 0, 1, 2>} : (tensor<64x1x64xi32>) -> tensor<64x2x64xi32>
  %r = "quabla.reshape"(%b) : (tensor<64x2x64xi32>) -> tensor<128x64x1xi32>
  %two = "quabla.constant"() {value = dense<2> : tensor<i32>} : () -> tensor<i32>
  %t = "quabla.broadcast_in_dim"(%two) {dims = array<i64>} : (tensor<i32>) -> tensor<128x64x1xi32>
  %m = "quabla.mul"(%t, %r) : (tensor<128x64x1xi32>, tensor<128x64x1xi32>) -> tensor<128x64x1xi32>
  %a = "quabla.add"(%m, %m) : (tensor<128x64x1xi32>, tensor<128x64x1xi32>) -> tensor<128x64x1xi32>
  %g3 = "quabla.reshape"(%a) : (tensor<128x64x1xi32>) -> tensor<64x2x64xi32>
  %s = "quabla.reduce_sum"(%g3) {dims = array<i64: 1>} : (tensor<64x2x64xi32>) -> tensor<64x64xi32>
  %rows = "quabla.reduce_sum"(%s) {dims = array<i64: 1>} : (tensor<64x64xi32>) -> tensor<64xi32>
  %lo = "quabla.slice"(%rows) {start_indices = array<i64: 0>, limit_indices = array<i64: 3>, strides = array<i64: 1>} : (tensor<64xi32>) -> tensor<3xi32>
  %hi = "quabla.slice"(%rows) {start_indices = array<i64: 61>, limit_indices = array<i64: 64>, strides = array<i64: 1>} : (tensor<64xi32>) -> tensor<3xi32>
  return %lo, %hi : tensor<3xi32>, tensor<3xi32>
}

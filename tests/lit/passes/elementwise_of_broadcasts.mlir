// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | FileCheck %s
// RUN: quabla-opt %s --run | FileCheck %s --check-prefix=OUT
// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | quabla-opt --run | FileCheck %s --check-prefix=OUT
// An elementwise op of broadcasts of one shape along the same dims, and splats, is the op on
// the broadcasts' sources, broadcast (chains.rs elementwise_of_broadcasts): the sine and the
// product with a splat of a row broadcast to 300 rows run on the 4 elements of the row (the
// final slice sinks to 2 rows). A product of a row and a column broadcast (an outer product)
// stays a product of broadcasts.

// CHECK-LABEL: func.func @main
// CHECK: %[[S:.*]] = "quabla.sin"(%{{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[M:.*]] = "quabla.mul"(%[[S]], %{{.*}}) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[B:.*]] = "quabla.broadcast_in_dim"(%[[M]]) {dims = array<i64: 1>} : (tensor<4xf32>) -> tensor<2x4xf32>
// CHECK: "quabla.mul"(%[[B]], %{{.*}}) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NOT: "quabla.sin"

// sin(0) = 0, sin(1) * 2 = 1.6829419, row r times column value r.
// OUT: dense<{{\[\[}}0.0e0, 0.0e0, 0.0e0, 0.0e0], [0.0e0, 1.6829419e0, 1.8185948e0, 2.8224e-1]]> : tensor<2x4xf32>
func.func @main() -> tensor<2x4xf32> {
  %big = "quabla.iota"() {dim = 0 : i64} : () -> tensor<300xi32>
  %i = "quabla.slice"(%big) {start_indices = array<i64: 0>, limit_indices = array<i64: 4>, strides = array<i64: 1>} : (tensor<300xi32>) -> tensor<4xi32>
  %x = "quabla.convert"(%i) : (tensor<4xi32>) -> tensor<4xf32>
  %b = "quabla.broadcast_in_dim"(%x) {dims = array<i64: 1>} : (tensor<4xf32>) -> tensor<300x4xf32>
  %s = "quabla.sin"(%b) : (tensor<300x4xf32>) -> tensor<300x4xf32>
  %two = "quabla.constant"() {value = dense<2.0> : tensor<300x4xf32>} : () -> tensor<300x4xf32>
  %m = "quabla.mul"(%s, %two) : (tensor<300x4xf32>, tensor<300x4xf32>) -> tensor<300x4xf32>
  %r = "quabla.iota"() {dim = 0 : i64} : () -> tensor<300xi32>
  %rf = "quabla.convert"(%r) : (tensor<300xi32>) -> tensor<300xf32>
  %c = "quabla.broadcast_in_dim"(%rf) {dims = array<i64: 0>} : (tensor<300xf32>) -> tensor<300x4xf32>
  %o = "quabla.mul"(%m, %c) : (tensor<300x4xf32>, tensor<300x4xf32>) -> tensor<300x4xf32>
  %top = "quabla.slice"(%o) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 2, 4>, strides = array<i64: 1, 1>} : (tensor<300x4xf32>) -> tensor<2x4xf32>
  return %top : tensor<2x4xf32>
}

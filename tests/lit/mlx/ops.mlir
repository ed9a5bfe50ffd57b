// RUN: quabla-opt %s --emit=mlx | FileCheck %s
// A straight-line function is one compiled def of mx calls; integer division, float64 exp
// and converts go through the q helpers that state quabla's semantics.

// CHECK: C0 = q.splat("0000000000000040", mx.float64, (3,))
// CHECK-LABEL: def f_main(v0, v1, v2):
// CHECK-NEXT: v3 = mx.add(v0, v0)
// CHECK-NEXT: v4 = C0
// CHECK-NEXT: v5 = mx.multiply(v3, v4)
// CHECK-NEXT: v6 = q.exp64(v5)
// CHECK-NEXT: v7 = q.int_div(v1, v2)
// CHECK-NEXT: v8 = q.convert(v6, mx.int32)
// CHECK-NEXT: v9 = mx.sum(v8, axis=(0,))
// CHECK-NEXT: v10 = q.dot_general(v0, v0, (), (), (0,), (0,))
// CHECK-NEXT: return (v7, v9, v10)
// CHECK: COMPILED = ("f_main",)
// CHECK-NEXT: ENTRY = "f_main"
func.func @main(%x: tensor<3xf64>, %a: tensor<3xi32>, %b: tensor<3xi32>) -> (tensor<3xi32>, tensor<i32>, tensor<f64>) {
  %0 = "quabla.add"(%x, %x) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %c = "quabla.constant"() {value = dense<2.0> : tensor<3xf64>} : () -> tensor<3xf64>
  %1 = "quabla.mul"(%0, %c) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %2 = "quabla.exp"(%1) : (tensor<3xf64>) -> tensor<3xf64>
  %3 = "quabla.div"(%a, %b) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  %4 = "quabla.convert"(%2) : (tensor<3xf64>) -> tensor<3xi32>
  %5 = "quabla.reduce_sum"(%4) {dims = array<i64: 0>} : (tensor<3xi32>) -> tensor<i32>
  %6 = "quabla.dot_general"(%x, %x) {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 0>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<3xf64>, tensor<3xf64>) -> tensor<f64>
  return %3, %5, %6 : tensor<3xi32>, tensor<i32>, tensor<f64>
}

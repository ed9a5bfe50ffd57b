// RUN: quabla-opt %s --pass-pipeline='builtin.module(convert-quabla-to-stablehlo)' | FileCheck %s
// Reductions are stablehlo.reduce with a region from the identity; argmax is a variadic
// reduce over (value, iota index) that prefers the better value, then NaN, then the first index.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.*]]: tensor<3x4xf32>, %[[B:.*]]: tensor<3x4xi1>)
// CHECK: %[[Z:.*]] = "stablehlo.constant"() {value = dense<0.0e0> : tensor<f32>}
// CHECK: %[[S:.*]] = "stablehlo.reduce"(%[[X]], %[[Z]]) ({
// CHECK-NEXT: ^bb0(%[[L:.*]]: tensor<f32>, %[[R:.*]]: tensor<f32>):
// CHECK-NEXT: %[[ADD:.*]] = "stablehlo.add"(%[[L]], %[[R]]) : (tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK-NEXT: "stablehlo.return"(%[[ADD]]) : (tensor<f32>) -> ()
// CHECK-NEXT: }) {dimensions = array<i64: 1>} : (tensor<3x4xf32>, tensor<f32>) -> (tensor<3xf32>)
// CHECK: "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>}
// CHECK: "stablehlo.maximum"
// CHECK: {dimensions = array<i64: 0, 1>} : (tensor<3x4xf32>, tensor<f32>) -> (tensor<f32>)
// CHECK: "stablehlo.constant"() {value = dense<true> : tensor<i1>}
// CHECK: "stablehlo.and"
// CHECK: {dimensions = array<i64: 0>} : (tensor<3x4xi1>, tensor<i1>) -> (tensor<4xi1>)
// CHECK: %[[IOTA:.*]] = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<3x4xi64>
// CHECK: %[[VI:.*]] = "stablehlo.constant"() {value = dense<0x7F800000> : tensor<f32>}
// CHECK: %[[II:.*]] = "stablehlo.constant"() {value = dense<0> : tensor<i64>}
// CHECK: %[[AM:.*]]:2 = "stablehlo.reduce"(%[[X]], %[[IOTA]], %[[VI]], %[[II]]) ({
// CHECK-NEXT: ^bb0(%{{.*}}: tensor<f32>, %{{.*}}: tensor<i64>, %{{.*}}: tensor<f32>, %{{.*}}: tensor<i64>):
// CHECK: comparison_direction LT
// CHECK: "stablehlo.return"(%{{.*}}, %{{.*}}) : (tensor<f32>, tensor<i64>) -> ()
// CHECK: }) {dimensions = array<i64: 1>} : (tensor<3x4xf32>, tensor<3x4xi64>, tensor<f32>, tensor<i64>) -> (tensor<3xf32>, tensor<3xi64>)
// CHECK: "func.return"(%[[S]], %{{.*}}, %{{.*}}, %[[AM]]#1, %[[X]])
func.func @main(%x: tensor<3x4xf32>, %b: tensor<3x4xi1>) -> (tensor<3xf32>, tensor<f32>, tensor<4xi1>, tensor<3xi64>, tensor<3x4xf32>) {
  %0 = "quabla.reduce_sum"(%x) {dims = array<i64: 1>} : (tensor<3x4xf32>) -> tensor<3xf32>
  %1 = "quabla.reduce_max"(%x) {dims = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<f32>
  %2 = "quabla.reduce_min"(%b) {dims = array<i64: 0>} : (tensor<3x4xi1>) -> tensor<4xi1>
  %3 = "quabla.argmin"(%x) {dim = 1 : i64} : (tensor<3x4xf32>) -> tensor<3xi64>
  %4 = "quabla.reduce_prod"(%x) {dims = array<i64>} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0, %1, %2, %3, %4 : tensor<3xf32>, tensor<f32>, tensor<4xi1>, tensor<3xi64>, tensor<3x4xf32>
}

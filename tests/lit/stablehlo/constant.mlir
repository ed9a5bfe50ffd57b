// RUN: quabla-opt %s --split-input-file --pass-pipeline='builtin.module(convert-quabla-to-stablehlo)' | FileCheck %s
// Constants keep their dense literal; iota is stablehlo.iota (an i1 iota converts an i32 one).

// CHECK-LABEL: func.func @main() -> (tensor<2xf32>, tensor<2x3xi64>, tensor<3xi1>)
// CHECK: %[[C:.*]] = "stablehlo.constant"() {value = dense<[1.5e0, 0x7F800000]> : tensor<2xf32>} : () -> tensor<2xf32>
// CHECK: %[[I:.*]] = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<2x3xi64>
// CHECK: %[[J:.*]] = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<3xi32>
// CHECK: %[[B:.*]] = "stablehlo.convert"(%[[J]]) : (tensor<3xi32>) -> tensor<3xi1>
// CHECK: "func.return"(%[[C]], %[[I]], %[[B]]) : (tensor<2xf32>, tensor<2x3xi64>, tensor<3xi1>) -> ()
func.func @main() -> (tensor<2xf32>, tensor<2x3xi64>, tensor<3xi1>) {
  %0 = "quabla.constant"() {value = dense<[1.5, 0x7F800000]> : tensor<2xf32>} : () -> tensor<2xf32>
  %1 = "quabla.iota"() {dim = 1 : i64} : () -> tensor<2x3xi64>
  %2 = "quabla.iota"() {dim = 0 : i64} : () -> tensor<3xi1>
  return %0, %1, %2 : tensor<2xf32>, tensor<2x3xi64>, tensor<3xi1>
}

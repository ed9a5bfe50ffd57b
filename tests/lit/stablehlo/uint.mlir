// RUN: quabla-opt %s --pass-pipeline='builtin.module(convert-quabla-to-stablehlo)' | FileCheck %s
// Unsigned types keep their ui spelling; compares are UNSIGNED; div guards only x/0; shifts
// and population_count are StableHLO's own.

// CHECK-LABEL: func.func @main
// CHECK-SAME: tensor<4xui32>
// CHECK: "stablehlo.compare"{{.*}}comparison_type UNSIGNED
// CHECK: "stablehlo.divide"
// CHECK: "stablehlo.shift_right_logical"
// CHECK: "stablehlo.popcnt"
func.func @main(%a: tensor<4xui32>, %b: tensor<4xui32>) -> (tensor<4xui32>, tensor<4xui32>) {
  %0 = "quabla.div"(%a, %b) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
  %1 = "quabla.shift_right_logical"(%0, %b) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
  %2 = "quabla.population_count"(%1) : (tensor<4xui32>) -> tensor<4xui32>
  return %1, %2 : tensor<4xui32>, tensor<4xui32>
}

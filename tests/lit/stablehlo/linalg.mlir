// RUN: quabla-opt %s --pass-pipeline='builtin.module(convert-quabla-to-stablehlo)' | FileCheck %s
// cholesky is stablehlo.cholesky and a select that zeros the other triangle; triangular_solve
// keeps its flags (transpose_a as StableHLO's transpose enum).

// CHECK-LABEL: func.func @main
// CHECK: "stablehlo.cholesky"(%{{.*}}) {lower = false} : (tensor<2x3x3xf64>) -> tensor<2x3x3xf64>
// CHECK: "stablehlo.compare"({{.*}}comparison_direction = #stablehlo<comparison_direction LE>
// CHECK: "stablehlo.select"
// CHECK: "stablehlo.triangular_solve"(%{{.*}}, %{{.*}}) {left_side = false, lower = true, unit_diagonal = true, transpose_a = #stablehlo<transpose TRANSPOSE>} : (tensor<3x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>
func.func @main(%a: tensor<2x3x3xf64>, %t: tensor<3x3xf64>, %b: tensor<2x3xf64>) -> (tensor<2x3x3xf64>, tensor<2x3xf64>) {
  %0 = "quabla.cholesky"(%a) {lower = false} : (tensor<2x3x3xf64>) -> tensor<2x3x3xf64>
  %1 = "quabla.triangular_solve"(%t, %b) {left_side = false, lower = true, transpose_a = true, unit_diagonal = true} : (tensor<3x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>
  return %0, %1 : tensor<2x3x3xf64>, tensor<2x3xf64>
}

// RUN: quabla-opt %s --pass-pipeline='builtin.module(convert-quabla-to-stablehlo)' | FileCheck %s
// dot_general keeps its dimension numbers (empty lists are left out).

// CHECK-LABEL: func.func @main
// CHECK: "stablehlo.dot_general"(%{{.*}}, %{{.*}}) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>} : (tensor<2x3x4xf64>, tensor<2x4x5xf64>) -> tensor<2x3x5xf64>
// CHECK: "stablehlo.dot_general"(%{{.*}}, %{{.*}}) {dot_dimension_numbers = #stablehlo.dot<>} : (tensor<3xi32>, tensor<2xi32>) -> tensor<3x2xi32>
func.func @main(%a: tensor<2x3x4xf64>, %b: tensor<2x4x5xf64>, %u: tensor<3xi32>, %v: tensor<2xi32>) -> (tensor<2x3x5xf64>, tensor<3x2xi32>) {
  %0 = "quabla.dot_general"(%a, %b) {lhs_batching_dimensions = array<i64: 0>, rhs_batching_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 2>, rhs_contracting_dimensions = array<i64: 1>} : (tensor<2x3x4xf64>, tensor<2x4x5xf64>) -> tensor<2x3x5xf64>
  %1 = "quabla.dot_general"(%u, %v) {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64>, rhs_contracting_dimensions = array<i64>} : (tensor<3xi32>, tensor<2xi32>) -> tensor<3x2xi32>
  return %0, %1 : tensor<2x3x5xf64>, tensor<3x2xi32>
}

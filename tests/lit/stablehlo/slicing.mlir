// RUN: quabla-opt %s --pass-pipeline='builtin.module(convert-quabla-to-stablehlo)' | FileCheck %s
// Slicing ops map to their StableHLO namesakes; take-along-axis gather is a stablehlo.gather
// with an implicit index vector, collapsing `axis`.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[A:.*]]: tensor<4x6xf32>, %[[P:.*]]: tensor<f32>, %[[I:.*]]: tensor<i64>, %[[J:.*]]: tensor<i64>, %[[K:.*]]: tensor<2x3xi32>)
// CHECK: "stablehlo.slice"(%[[A]]) {start_indices = array<i64: 1, 0>, limit_indices = array<i64: 4, 6>, strides = array<i64: 2, 3>} : (tensor<4x6xf32>) -> tensor<2x2xf32>
// CHECK: "stablehlo.concatenate"(%[[A]], %[[A]]) {dimension = 1 : i64} : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x12xf32>
// CHECK: "stablehlo.pad"(%[[A]], %[[P]]) {edge_padding_low = array<i64: 1, 0>, edge_padding_high = array<i64: 0, 2>, interior_padding = array<i64: 0, 1>} : (tensor<4x6xf32>, tensor<f32>) -> tensor<5x13xf32>
// CHECK: "stablehlo.dynamic_slice"(%[[A]], %[[I]], %[[J]]) {slice_sizes = array<i64: 2, 3>} : (tensor<4x6xf32>, tensor<i64>, tensor<i64>) -> tensor<2x3xf32>
// CHECK: "stablehlo.gather"(%[[A]], %[[K]]) {dimension_numbers = #stablehlo.gather<offset_dims = [0], collapsed_slice_dims = [1], start_index_map = [1], index_vector_dim = 2>, slice_sizes = array<i64: 4, 1>, indices_are_sorted = false} : (tensor<4x6xf32>, tensor<2x3xi32>) -> tensor<4x2x3xf32>
func.func @main(%a: tensor<4x6xf32>, %p: tensor<f32>, %i: tensor<i64>, %j: tensor<i64>, %k: tensor<2x3xi32>) -> (tensor<2x2xf32>, tensor<4x12xf32>, tensor<5x13xf32>, tensor<2x3xf32>, tensor<4x2x3xf32>) {
  %0 = "quabla.slice"(%a) {start_indices = array<i64: 1, 0>, limit_indices = array<i64: 4, 6>, strides = array<i64: 2, 3>} : (tensor<4x6xf32>) -> tensor<2x2xf32>
  %1 = "quabla.concatenate"(%a, %a) {dim = 1 : i64} : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x12xf32>
  %2 = "quabla.pad"(%a, %p) {edge_padding_low = array<i64: 1, 0>, edge_padding_high = array<i64: 0, 2>, interior_padding = array<i64: 0, 1>} : (tensor<4x6xf32>, tensor<f32>) -> tensor<5x13xf32>
  %3 = "quabla.dynamic_slice"(%a, %i, %j) {slice_sizes = array<i64: 2, 3>} : (tensor<4x6xf32>, tensor<i64>, tensor<i64>) -> tensor<2x3xf32>
  %4 = "quabla.gather"(%a, %k) {axis = 1 : i64} : (tensor<4x6xf32>, tensor<2x3xi32>) -> tensor<4x2x3xf32>
  return %0, %1, %2, %3, %4 : tensor<2x2xf32>, tensor<4x12xf32>, tensor<5x13xf32>, tensor<2x3xf32>, tensor<4x2x3xf32>
}

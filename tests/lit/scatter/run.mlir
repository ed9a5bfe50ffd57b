// RUN: quabla-opt %s --run --arg='dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf64>' --arg='dense<[1, 1, 7, -1, 3]> : tensor<5xi64>' --arg='dense<[10.0, 20.0, 30.0, 40.0, 50.0]> : tensor<5xf64>' | FileCheck %s
// RUN: quabla-opt %s --interpret --arg='dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf64>' --arg='dense<[1, 1, 7, -1, 3]> : tensor<5xi64>' --arg='dense<[10.0, 20.0, 30.0, 40.0, 50.0]> : tensor<5xf64>' | FileCheck %s
// Duplicates accumulate (add) or the last wins (set); out-of-bounds updates (7, -1) are dropped.

// CHECK: dense<[1.0e0, 3.2e1, 3.0e0, 5.4e1]> : tensor<4xf64>
// CHECK-NEXT: dense<[1.0e0, 2.0e1, 3.0e0, 5.0e1]> : tensor<4xf64>
func.func @main(%x: tensor<4xf64>, %i: tensor<5xi64>, %u: tensor<5xf64>) -> (tensor<4xf64>, tensor<4xf64>) {
  %0 = "quabla.scatter_add"(%x, %i, %u) {update_window_dims = array<i64>, inserted_window_dims = array<i64: 0>, scatter_dims_to_operand_dims = array<i64: 0>, index_vector_dim = 1 : i64} : (tensor<4xf64>, tensor<5xi64>, tensor<5xf64>) -> tensor<4xf64>
  %1 = "quabla.scatter"(%x, %i, %u) {update_window_dims = array<i64>, inserted_window_dims = array<i64: 0>, scatter_dims_to_operand_dims = array<i64: 0>, index_vector_dim = 1 : i64} : (tensor<4xf64>, tensor<5xi64>, tensor<5xf64>) -> tensor<4xf64>
  return %0, %1 : tensor<4xf64>, tensor<4xf64>
}

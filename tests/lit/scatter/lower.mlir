// RUN: quabla-opt %s --emit=linalg | FileCheck %s
// RUN: quabla-opt %s --emit=llvm | FileCheck %s --check-prefix=LLVM
// A scatter lowers to a loop over the updates carrying the result (no one-hot, no
// operand-sized temporary per update). Whole rows (a take-form set/add along the first axis)
// are one step per index: the row inserted, or added to the row's slice.

// CHECK-LABEL: func.func @add
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A:.*]] = %{{.*}}) -> (tensor<3x5xf32>)
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[B:.*]] = %[[A]]) -> (tensor<3x5xf32>)
// CHECK: tensor.extract %{{.*}}[%[[J]]] : tensor<4xi32>
// CHECK: arith.cmpi sge
// CHECK: scf.if
// CHECK: arith.addf
// CHECK: tensor.insert
// CHECK-NOT: linalg.matmul
// CHECK: return
// CHECK-LABEL: func.func @rows
// CHECK: scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[C:.*]] = %{{.*}}) -> (tensor<5x3xf32>)
// CHECK-NOT: scf.for
// CHECK: tensor.extract %{{.*}}[%[[R]]] : tensor<4xi32>
// CHECK: scf.if
// CHECK: tensor.extract_slice %{{.*}}[%[[R]], 0] [1, 3] [1, 1] : tensor<4x3xf32> to tensor<3xf32>
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: tensor.insert_slice %{{.*}} into %[[C]]
// CHECK: return
// LLVM-LABEL: llvm.func @add
// LLVM-LABEL: llvm.func @rows
func.func @add(%x: tensor<3x5xf32>, %i: tensor<4xi32>, %u: tensor<3x4xf32>) -> tensor<3x5xf32> {
  %0 = "quabla.scatter_add"(%x, %i, %u) {update_window_dims = array<i64: 0>, inserted_window_dims = array<i64: 1>, scatter_dims_to_operand_dims = array<i64: 1>, index_vector_dim = 1 : i64} : (tensor<3x5xf32>, tensor<4xi32>, tensor<3x4xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}
func.func @rows(%x: tensor<5x3xf32>, %i: tensor<4xi32>, %u: tensor<4x3xf32>) -> tensor<5x3xf32> {
  %0 = "quabla.scatter_add"(%x, %i, %u) {update_window_dims = array<i64: 1>, inserted_window_dims = array<i64: 0>, scatter_dims_to_operand_dims = array<i64: 0>, index_vector_dim = 1 : i64} : (tensor<5x3xf32>, tensor<4xi32>, tensor<4x3xf32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

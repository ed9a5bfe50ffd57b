// RUN: quabla-opt %s --emit=linalg | FileCheck %s
// RUN: quabla-opt %s --emit=llvm | FileCheck %s --check-prefix=LLVM
// A scatter lowers to a loop over the updates carrying the result (no one-hot, no
// operand-sized temporary per update).

// CHECK-LABEL: func.func @add
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A:.*]] = %{{.*}}) -> (tensor<5x3xf32>)
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[B:.*]] = %[[A]]) -> (tensor<5x3xf32>)
// CHECK: tensor.extract %{{.*}}[%[[I]]] : tensor<4xi32>
// CHECK: arith.cmpi sge
// CHECK: scf.if
// CHECK: arith.addf
// CHECK: tensor.insert
// CHECK-NOT: linalg.matmul
// CHECK: return
// LLVM-LABEL: llvm.func @add
func.func @add(%x: tensor<5x3xf32>, %i: tensor<4xi32>, %u: tensor<4x3xf32>) -> tensor<5x3xf32> {
  %0 = "quabla.scatter_add"(%x, %i, %u) {update_window_dims = array<i64: 1>, inserted_window_dims = array<i64: 0>, scatter_dims_to_operand_dims = array<i64: 0>, index_vector_dim = 1 : i64} : (tensor<5x3xf32>, tensor<4xi32>, tensor<4x3xf32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

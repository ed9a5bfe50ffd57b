// RUN: quabla-opt %s --emit=linalg | FileCheck %s
// RUN: quabla-opt %s --emit=llvm | FileCheck %s --check-prefix=LLVM
// A gather whose slices hold at least 64 contiguous elements copies whole slices: one loop
// step per index reads it once, clamps it and copies the slice (a memcpy in LLVM), instead of
// a generic over the result that reads the index per element. Narrow slices keep the generic.

// CHECK-LABEL: func.func @rows
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A:.*]] = %{{.*}}) -> (tensor<6x64xf32>)
// CHECK: tensor.extract %{{.*}}[%[[I]]] : tensor<6xi32>
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: %[[ROW:.*]] = tensor.extract_slice %{{.*}}[%{{.*}}, 0] [1, 64] [1, 1] : tensor<10x64xf32> to tensor<64xf32>
// CHECK: tensor.insert_slice %[[ROW]] into %[[A]][%[[I]], 0] [1, 64] [1, 1] : tensor<64xf32> into tensor<6x64xf32>
// CHECK-NOT: linalg.generic
// CHECK: return
// CHECK-LABEL: func.func @narrow
// CHECK: linalg.generic
// CHECK: tensor.extract
// LLVM-LABEL: llvm.func @rows
// LLVM: llvm.intr.memcpy
func.func @rows(%x: tensor<10x64xf32>, %i: tensor<6xi32>) -> tensor<6x64xf32> {
  %0 = "quabla.gather"(%x, %i) {axis = 0 : i64} : (tensor<10x64xf32>, tensor<6xi32>) -> tensor<6x64xf32>
  return %0 : tensor<6x64xf32>
}
func.func @narrow(%x: tensor<10x8xf32>, %i: tensor<6xi32>) -> tensor<6x8xf32> {
  %0 = "quabla.gather"(%x, %i) {axis = 0 : i64} : (tensor<10x8xf32>, tensor<6xi32>) -> tensor<6x8xf32>
  return %0 : tensor<6x8xf32>
}

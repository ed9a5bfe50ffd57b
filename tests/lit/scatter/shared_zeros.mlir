// RUN: quabla-opt %s --emit=llvm | FileCheck %s
// RUN: quabla-opt %s --run --arg='dense<1.5> : tensor<4x8xf32>' --arg='dense<-2.0> : tensor<4x8xf32>' --arg='dense<[2, 0, 2, 2999]> : tensor<4xi32>' | FileCheck %s --check-prefix=OUT
// RUN: quabla-opt %s --interpret --arg='dense<1.5> : tensor<4x8xf32>' --arg='dense<-2.0> : tensor<4x8xf32>' --arg='dense<[2, 0, 2, 2999]> : tensor<4xi32>' | FileCheck %s --check-prefix=OUT
// Two scatter-adds into one large splat of zeros (the broadcast of a 0-d constant, as folding
// keeps splats of more than 65536 elements; CSE made the two gradients' zeros one value), each
// into its own output: each fills its output and scatters into it (linalg/mod.rs
// splat_scalar), no copy of a filled buffer (two 25.6 MB copies in word2vec's gradient).

// CHECK-LABEL: llvm.func @main
// CHECK-NOT: memcpy
// CHECK-NOT: memrefCopy
// CHECK: llvm.return

// OUT: dense<{{\[\[}}1.5{{(e0)?}}, 1.5{{(e0)?}}, 1.5{{(e0)?}}, 1.5{{(e0)?}}, 1.5{{(e0)?}}, 1.5{{(e0)?}}, 1.5{{(e0)?}}, 1.5{{(e0)?}}], [0.0{{(e0)?}}, 0.0{{(e0)?}}, 0.0{{(e0)?}}, 0.0{{(e0)?}}, 0.0{{(e0)?}}, 0.0{{(e0)?}}, 0.0{{(e0)?}}, 0.0{{(e0)?}}], [3.0{{(e0)?}}, 3.0{{(e0)?}},
// OUT: dense<{{\[\[}}-2.0{{(e0)?}}, -2.0{{(e0)?}}, -2.0{{(e0)?}}, -2.0{{(e0)?}}, -2.0{{(e0)?}}, -2.0{{(e0)?}}, -2.0{{(e0)?}}, -2.0{{(e0)?}}], [0.0{{(e0)?}}, 0.0{{(e0)?}}, 0.0{{(e0)?}}, 0.0{{(e0)?}}, 0.0{{(e0)?}}, 0.0{{(e0)?}}, 0.0{{(e0)?}}, 0.0{{(e0)?}}], [-4.0{{(e0)?}}, -4.0{{(e0)?}},
func.func @main(%u: tensor<4x8xf32>, %v: tensor<4x8xf32>, %i: tensor<4xi32>) -> (tensor<3000x8xf32>, tensor<3000x8xf32>) {
  %z = "quabla.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %zeros = "quabla.broadcast_in_dim"(%z) {dims = array<i64>} : (tensor<f32>) -> tensor<3000x8xf32>
  %a = "quabla.scatter_add"(%zeros, %i, %u) {update_window_dims = array<i64: 1>, inserted_window_dims = array<i64: 0>, scatter_dims_to_operand_dims = array<i64: 0>, index_vector_dim = 1 : i64} : (tensor<3000x8xf32>, tensor<4xi32>, tensor<4x8xf32>) -> tensor<3000x8xf32>
  %b = "quabla.scatter_add"(%zeros, %i, %v) {update_window_dims = array<i64: 1>, inserted_window_dims = array<i64: 0>, scatter_dims_to_operand_dims = array<i64: 0>, index_vector_dim = 1 : i64} : (tensor<3000x8xf32>, tensor<4xi32>, tensor<4x8xf32>) -> tensor<3000x8xf32>
  return %a, %b : tensor<3000x8xf32>, tensor<3000x8xf32>
}

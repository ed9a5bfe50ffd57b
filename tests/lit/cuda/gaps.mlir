// REQUIRES: cuda-nvcc
// RUN: not quabla-opt %s --emit=ptx 2>&1 | FileCheck %s
// Ops whose lowering needs the host are typed errors, never host loops over device memory.
// CHECK: 'quabla.svd' op cannot be lowered: no cuda rule
func.func @main(%a: tensor<3x2xf32>) -> tensor<2xf32> {
  %u, %s, %vt = "quabla.svd"(%a) {full_matrices = false} : (tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<2xf32>, tensor<2x2xf32>)
  return %s : tensor<2xf32>
}

// REQUIRES: cuda-nvcc
// RUN: not quabla-opt %s --emit=ptx 2>&1 | FileCheck %s
// Ops whose lowering needs the host are typed errors, never host loops over device memory.
// CHECK: 'quabla.eigh' op cannot be lowered: no cuda rule
func.func @main(%a: tensor<3x3xf32>) -> tensor<3xf32> {
  %v, %w = "quabla.eigh"(%a) {lower = true} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xf32>)
  return %w : tensor<3xf32>
}

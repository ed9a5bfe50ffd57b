// REQUIRES: cuda-nvcc
// RUN: not quabla-opt %s --emit=ptx 2>&1 | FileCheck %s
// Ops whose lowering needs the host are typed errors, never host loops over device memory.
// CHECK: 'quabla.sort' op cannot be lowered: no cuda rule
func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "quabla.sort"(%a) {dimension = 1 : i64, direction = "gt"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// REQUIRES: cuda-nvcc
// RUN: quabla-opt %s --emit=ptx | FileCheck %s
// An `if` whose branch holds a loop branches on the host (the predicate loaded), so the
// untaken branch's loop never runs; the `if` without one stays a select kernel (kernels.mlir
// @branch).

// CHECK-LABEL: // CUDA program @main for sm_90
// CHECK: // b[[P:[0-9]+]] = load i1 b0[0]
// CHECK: // (b{{[0-9]+}}) = branch on b[[P]] cases [1]
// CHECK: // arm 0:
// CHECK: //   (b{{[0-9]+}}) = while
// CHECK: //   yield (b{{[0-9]+}})
// CHECK: // arm 1:
// CHECK-NEXT: //   launch
// CHECK-NEXT: //   yield (b2)
func.func @main(%p: tensor<i1>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %c = tensor.extract %p[] : tensor<i1>
  %r = scf.if %c -> (tensor<2xf32>) {
    %w = scf.while (%y = %x) : (tensor<2xf32>) -> (tensor<2xf32>) {
      %s = "quabla.reduce_sum"(%y) {dims = array<i64: 0>} : (tensor<2xf32>) -> tensor<f32>
      %ten = "quabla.constant"() {value = dense<10.0> : tensor<f32>} : () -> tensor<f32>
      %lt = "quabla.compare"(%s, %ten) {direction = "lt"} : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cc = tensor.extract %lt[] : tensor<i1>
      scf.condition(%cc) %y : tensor<2xf32>
    } do {
    ^bb0(%y2: tensor<2xf32>):
      %y3 = "quabla.add"(%y2, %y2) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      scf.yield %y3 : tensor<2xf32>
    }
    scf.yield %w : tensor<2xf32>
  } else {
    %n = "quabla.neg"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    scf.yield %n : tensor<2xf32>
  }
  return %r : tensor<2xf32>
}

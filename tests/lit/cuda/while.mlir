// REQUIRES: cuda-nvcc
// RUN: quabla-opt %s --emit=ptx | FileCheck %s
// A while loop is a step of the host plan: its condition is a kernel whose i1 the host loads
// each iteration; the loop state stays in device buffers, each allocation fresh per
// iteration (counted.mlir, branch.mlir, callback.mlir: the other host steps).

// CHECK-LABEL: // CUDA program @main for sm_90
// CHECK: // b0: argument 0
// CHECK: // (b{{[0-9]+}}) = while (b[[ARG:[0-9]+]]) = (b{{[0-9]+}})
// CHECK: //   launch {{.*}}(0x0000000000000001, b[[ARG]], b[[SUM:[0-9]+]], 0x0000000000000000, 0x0000000000000002)
// CHECK: //   launch {{.*}} args (0x0000000000000001, b[[SUM]], 0x41200000, b[[P:[0-9]+]])
// CHECK: //   b[[C:[0-9]+]] = load i1 b[[P]][0]
// CHECK: //   condition b[[C]] forward
// CHECK: // do (b{{[0-9]+}}):
// CHECK: //   b{{[0-9]+}} = alloc 8 bytes
// CHECK: //   yield
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %r = scf.while (%y = %x) : (tensor<2xf32>) -> (tensor<2xf32>) {
    %s = "quabla.reduce_sum"(%y) {dims = array<i64: 0>} : (tensor<2xf32>) -> tensor<f32>
    %ten = "quabla.constant"() {value = dense<10.0> : tensor<f32>} : () -> tensor<f32>
    %lt = "quabla.compare"(%s, %ten) {direction = "lt"} : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %c = tensor.extract %lt[] : tensor<i1>
    scf.condition(%c) %y : tensor<2xf32>
  } do {
  ^bb0(%y2: tensor<2xf32>):
    %y3 = "quabla.add"(%y2, %y2) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    scf.yield %y3 : tensor<2xf32>
  }
  return %r : tensor<2xf32>
}

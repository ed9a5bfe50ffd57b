// REQUIRES: cuda-nvcc
// RUN: quabla-opt %s --emit=ptx | FileCheck %s
// A host callback is a step of the host plan: its operand copied into a private buffer by a
// kernel, the buffer handed to the host (callback id, operand index and count, type).

// CHECK-LABEL: // CUDA program @main for sm_90
// CHECK: // launch {{.*}} args ({{.*}}b0, b[[V:[0-9]+]])
// CHECK: // callback 7 operand 0 of 2: b[[V]] : tensor<2xf32>
// CHECK: // callback 7 operand 1 of 2: b{{[0-9]+}} : tensor<i32>
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = "quabla.constant"() {value = dense<3> : tensor<i32>} : () -> tensor<i32>
  %a0 = "quabla.host_callback"(%x) {callback = 7 : i64, index = 0 : i64, count = 2 : i64, batched = array<i64>} : (tensor<2xf32>) -> tensor<2xf32>
  %a1 = "quabla.host_callback"(%c) {callback = 7 : i64, index = 1 : i64, count = 2 : i64, batched = array<i64>} : (tensor<i32>) -> tensor<i32>
  %y = "quabla.add"(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// REQUIRES: cuda-nvcc
// RUN: quabla-opt %s --emit=ptx | FileCheck %s
// A counted loop runs on the host: its bound loaded from device memory, its body's kernels
// launched per iteration, its final counter computed on the host and stored.

// CHECK-LABEL: // CUDA program @main for sm_90
// CHECK: // b[[N:[0-9]+]] = load i64 b1[0]
// CHECK: // () = for b{{[0-9]+}} = 0x0000000000000000 to b[[N]] step 0x0000000000000001 iter () = ()
// CHECK-NEXT: //   launch
// CHECK-NEXT: //   yield ()
// CHECK: // b[[K:[0-9]+]] = maxsi b[[N]], 0x0000000000000000 : i64
// CHECK: // store b[[K]] b{{[0-9]+}}[0]
func.func @main(%x: tensor<2xf32>, %n: tensor<i64>) -> (tensor<2xf32>, tensor<i64>) {
  %zero = "quabla.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %r:3 = scf.while (%i = %zero, %y = %x, %m = %n) : (tensor<i64>, tensor<2xf32>, tensor<i64>) -> (tensor<i64>, tensor<2xf32>, tensor<i64>) {
    %lt = "quabla.compare"(%i, %m) {direction = "lt"} : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %c = tensor.extract %lt[] : tensor<i1>
    scf.condition(%c) %i, %y, %m : tensor<i64>, tensor<2xf32>, tensor<i64>
  } do {
  ^bb0(%i2: tensor<i64>, %y2: tensor<2xf32>, %m2: tensor<i64>):
    %one = "quabla.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %i3 = "quabla.add"(%i2, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %y3 = "quabla.mul"(%y2, %y2) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    scf.yield %i3, %y3, %m2 : tensor<i64>, tensor<2xf32>, tensor<i64>
  }
  return %r#1, %r#0 : tensor<2xf32>, tensor<i64>
}

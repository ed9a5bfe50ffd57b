// REQUIRES: cuda-nvcc
// RUN: not quabla-opt %s --emit=ptx 2>&1 | FileCheck %s
// Ops whose lowering needs the host are typed errors, never host loops over device memory:
// a while loop's condition would be read on the host.
// CHECK: 'quabla.while' op cannot be lowered: no cuda rule
func.func @main(%x: tensor<2xf32>, %n: tensor<i64>) -> tensor<2xf32> {
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
  return %r#1 : tensor<2xf32>
}

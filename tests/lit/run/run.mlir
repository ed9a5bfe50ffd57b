// RUN: quabla-opt %s --run --arg='dense<[1.0, -2.0, 3.0]> : tensor<3xf32>' --arg='dense<[7, 0, -7]> : tensor<3xi32>' | FileCheck %s
// RUN: quabla-opt %s --interpret --arg='dense<[1.0, -2.0, 3.0]> : tensor<3xf32>' --arg='dense<[7, 0, -7]> : tensor<3xi32>' | FileCheck %s
// The JIT and the interpreter print the same results.

// CHECK: dense<6.0e0> : tensor<f32>
// CHECK-NEXT: dense<[0, -1, 0]> : tensor<3xi32>
// CHECK-NEXT: dense<[true, false, true]> : tensor<3xi1>
func.func @main(%x: tensor<3xf32>, %k: tensor<3xi32>) -> (tensor<f32>, tensor<3xi32>, tensor<3xi1>) {
  %a = "quabla.abs"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %s = "quabla.reduce_sum"(%a) {dims = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  %z = "quabla.constant"() {value = dense<0> : tensor<3xi32>} : () -> tensor<3xi32>
  // Integer division by zero is -1, never a trap.
  %d = "quabla.div"(%k, %z) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  %m = "quabla.constant"() {value = dense<-6> : tensor<3xi32>} : () -> tensor<3xi32>
  %q = "quabla.div"(%m, %k) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  %zf = "quabla.constant"() {value = dense<0.0> : tensor<3xf32>} : () -> tensor<3xf32>
  %c = "quabla.compare"(%x, %zf) {direction = "gt"} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  %r = "quabla.select"(%c, %q, %d) : (tensor<3xi1>, tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  %ne = "quabla.compare"(%k, %z) {direction = "ne"} : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>
  return %s, %r, %ne : tensor<f32>, tensor<3xi32>, tensor<3xi1>
}

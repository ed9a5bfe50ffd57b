// RUN: quabla-opt %s --run --arg='dense<[4294967295, 7, 0]> : tensor<3xui32>' --arg='dense<[31, 32, 1]> : tensor<3xui32>' | FileCheck %s
// RUN: quabla-opt %s --interpret --arg='dense<[4294967295, 7, 0]> : tensor<3xui32>' --arg='dense<[31, 32, 1]> : tensor<3xui32>' | FileCheck %s
// The JIT and the interpreter agree on unsigned arithmetic and the shifts.

// CHECK: dense<[138547332, 0, 0]> : tensor<3xui32>
// CHECK-NEXT: dense<[1, 0, 0]> : tensor<3xui32>
// CHECK-NEXT: dense<[4294967295, 0, 0]> : tensor<3xui32>
// CHECK-NEXT: dense<[false, true, true]> : tensor<3xi1>
// CHECK-NEXT: dense<[4294967295, 7, 0]> : tensor<3xui32>
func.func @main(%x: tensor<3xui32>, %n: tensor<3xui32>) -> (tensor<3xui32>, tensor<3xui32>, tensor<3xui32>, tensor<3xi1>, tensor<3xui32>) {
  %q = "quabla.div"(%x, %n) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
  %l = "quabla.shift_right_logical"(%x, %n) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
  %a = "quabla.shift_right_arithmetic"(%x, %n) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
  %c = "quabla.compare"(%x, %n) {direction = "lt"} : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xi1>
  %m = "quabla.max"(%x, %q) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
  return %q, %l, %a, %c, %m : tensor<3xui32>, tensor<3xui32>, tensor<3xui32>, tensor<3xi1>, tensor<3xui32>
}

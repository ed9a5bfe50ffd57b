// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' --run --arg='dense<[1.5, -2.0]> : tensor<2xf32>' | FileCheck %s
// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' --interpret --arg='dense<[1.5, -2.0]> : tensor<2xf32>' | FileCheck %s
// Host callbacks with no registered function print their operands when the last one
// arrives, in program order, from the JIT and the interpreter alike. Canonicalization keeps
// them (unused results, identical ops, constant operands) and does not fold them.

// CHECK: quabla.host_callback 7: dense<{{\[}}1.5e0, -2.0e0]> : tensor<2xf32>, dense<3> : tensor<i32>
// CHECK-NEXT: quabla.host_callback 7: dense<{{\[}}1.5e0, -2.0e0]> : tensor<2xf32>, dense<3> : tensor<i32>
// CHECK-NEXT: quabla.host_callback 8: dense<true> : tensor<i1>
// CHECK-NEXT: dense<{{\[}}3.0e0, -4.0e0]> : tensor<2xf32>
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = "quabla.constant"() {value = dense<3> : tensor<i32>} : () -> tensor<i32>
  %a0 = "quabla.host_callback"(%x) {callback = 7 : i64, index = 0 : i64, count = 2 : i64, batched = array<i64>} : (tensor<2xf32>) -> tensor<2xf32>
  %a1 = "quabla.host_callback"(%c) {callback = 7 : i64, index = 1 : i64, count = 2 : i64, batched = array<i64>} : (tensor<i32>) -> tensor<i32>
  %b0 = "quabla.host_callback"(%x) {callback = 7 : i64, index = 0 : i64, count = 2 : i64, batched = array<i64>} : (tensor<2xf32>) -> tensor<2xf32>
  %b1 = "quabla.host_callback"(%c) {callback = 7 : i64, index = 1 : i64, count = 2 : i64, batched = array<i64>} : (tensor<i32>) -> tensor<i32>
  %t = "quabla.constant"() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %p = "quabla.host_callback"(%t) {callback = 8 : i64, index = 0 : i64, count = 1 : i64, batched = array<i64>} : (tensor<i1>) -> tensor<i1>
  %y = "quabla.add"(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | FileCheck %s
// RUN: quabla-opt %s --run | FileCheck %s --check-prefix=OUT
// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | quabla-opt --run | FileCheck %s --check-prefix=OUT
// A sum of a splat is the splat of n times it where every order of the sum gives that
// (fold.rs summed_splat): -1.5 over 4 (exact), an i32 that wraps, a result too large for a
// dense constant (a broadcast of the scalar); 0.1 over 2 is past the rule's bound (its odd
// significand 13421773 times 2 > 2^24): kept, a sum (a pair sums alike in any order), which
// summed_columns writes as the add of the broadcast's two columns.

// CHECK-LABEL: func.func @main
// CHECK: dense<-6.000000e+00> : tensor<3xf32>
// CHECK: dense<-2147483648> : tensor<2xi32>
// CHECK: %[[C:.*]] = "quabla.reshape"
// CHECK-NEXT: "quabla.add"(%[[C]], %[[C]])
// CHECK: "quabla.constant"() {value = dense<1.600000e+01> : tensor<f32>}
// CHECK-NEXT: "quabla.broadcast_in_dim"({{.*}}) {dims = array<i64>} : (tensor<f32>) -> tensor<70000xf32>
// CHECK-NOT: quabla.reduce_sum

// OUT: dense<-6.0e0> : tensor<3xf32>
// OUT-NEXT: dense<-2147483648> : tensor<2xi32>
// OUT-NEXT: dense<2.0e-1> : tensor<70000xf32>
// OUT-NEXT: dense<1.6e1> : tensor<70000xf32>
func.func @main() -> (tensor<3xf32>, tensor<2xi32>, tensor<70000xf32>, tensor<70000xf32>) {
  %a = "quabla.constant"() {value = dense<-1.5> : tensor<f32>} : () -> tensor<f32>
  %ab = "quabla.broadcast_in_dim"(%a) {dims = array<i64>} : (tensor<f32>) -> tensor<3x4xf32>
  %s = "quabla.reduce_sum"(%ab) {dims = array<i64: 1>} : (tensor<3x4xf32>) -> tensor<3xf32>
  %i = "quabla.constant"() {value = dense<1073741824> : tensor<2x2xi32>} : () -> tensor<2x2xi32>
  %t = "quabla.reduce_sum"(%i) {dims = array<i64: 0>} : (tensor<2x2xi32>) -> tensor<2xi32>
  %p = "quabla.constant"() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %pb = "quabla.broadcast_in_dim"(%p) {dims = array<i64>} : (tensor<f32>) -> tensor<70000x2xf32>
  %u = "quabla.reduce_sum"(%pb) {dims = array<i64: 1>} : (tensor<70000x2xf32>) -> tensor<70000xf32>
  %h = "quabla.constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %hb = "quabla.broadcast_in_dim"(%h) {dims = array<i64>} : (tensor<f32>) -> tensor<70000x32xf32>
  %v = "quabla.reduce_sum"(%hb) {dims = array<i64: 1>} : (tensor<70000x32xf32>) -> tensor<70000xf32>
  return %s, %t, %u, %v : tensor<3xf32>, tensor<2xi32>, tensor<70000xf32>, tensor<70000xf32>
}

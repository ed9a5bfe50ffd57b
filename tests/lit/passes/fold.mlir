// RUN: quabla-opt %s --split-input-file --pass-pipeline='builtin.module(quabla-fold,quabla-dce)' | FileCheck %s

// Constant folding through the reference interpreter.
// CHECK-LABEL: func.func @consts
// CHECK-NEXT: %[[C:.*]] = "quabla.constant"() {value = dense<[3.000000e+00, 5.000000e+00]> : tensor<2xf32>}
// CHECK-NEXT: return %[[C]]
func.func @consts() -> tensor<2xf32> {
  %a = "quabla.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %b = "quabla.constant"() {value = dense<[2.0, 3.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %c = "quabla.add"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %c : tensor<2xf32>
}

// -----

// Identities: x*1, x+0, neg(neg(x)), transpose of transpose, reshape of reshape.
// CHECK-LABEL: func.func @identities
// CHECK-NOT: quabla.mul
// CHECK-NOT: quabla.neg
// CHECK-NOT: quabla.transpose
// CHECK: %[[R:.*]] = "quabla.reshape"(%arg0)
// CHECK: return %arg0, %arg0, %[[R]]
func.func @identities(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<6xf32>) {
  %one = "quabla.constant"() {value = dense<1.0> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %zero = "quabla.constant"() {value = dense<0.0> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %0 = "quabla.mul"(%x, %one) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "quabla.add"(%zero, %0) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = "quabla.neg"(%1) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = "quabla.neg"(%2) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = "quabla.transpose"(%3) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %5 = "quabla.transpose"(%4) {perm = array<i64: 1, 0>} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  %6 = "quabla.reshape"(%x) : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %7 = "quabla.reshape"(%6) : (tensor<3x2xf32>) -> tensor<6xf32>
  return %3, %5, %7 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<6xf32>
}

// -----

// A broadcast of a splat constant becomes a splat of the result shape.
// CHECK-LABEL: func.func @splat
// CHECK: "quabla.constant"() {{.*}}dense<1.500000e+00> : tensor<4x8xf64>
// CHECK-NOT: broadcast_in_dim
func.func @splat(%x: tensor<4x8xf64>) -> tensor<4x8xf64> {
  %c = "quabla.constant"() {value = dense<1.5> : tensor<f64>} : () -> tensor<f64>
  %b = "quabla.broadcast_in_dim"(%c) {dims = array<i64>} : (tensor<f64>) -> tensor<4x8xf64>
  %y = "quabla.mul"(%x, %b) : (tensor<4x8xf64>, tensor<4x8xf64>) -> tensor<4x8xf64>
  return %y : tensor<4x8xf64>
}

// -----

// A broadcast of a splat to a large shape stays a broadcast of the scalar (no dense constant
// of a million elements in the IR), and the identities still see the splat through it.
// CHECK-LABEL: func.func @large_splat
// CHECK: %[[C:.*]] = "quabla.constant"() {value = dense<2.000000e+00> : tensor<f32>}
// CHECK: %[[B:.*]] = "quabla.broadcast_in_dim"(%[[C]])
// CHECK: %[[M:.*]] = "quabla.mul"(%arg0, %[[B]])
// CHECK-NOT: quabla.add
// CHECK: return %[[M]]
func.func @large_splat(%x: tensor<1000x1000xf32>) -> tensor<1000x1000xf32> {
  %c = "quabla.constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %b = "quabla.broadcast_in_dim"(%c) {dims = array<i64>} : (tensor<f32>) -> tensor<1000x1000xf32>
  %m = "quabla.mul"(%x, %b) : (tensor<1000x1000xf32>, tensor<1000x1000xf32>) -> tensor<1000x1000xf32>
  %z = "quabla.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %zb = "quabla.broadcast_in_dim"(%z) {dims = array<i64>} : (tensor<f32>) -> tensor<1000x1000xf32>
  %r = "quabla.add"(%m, %zb) : (tensor<1000x1000xf32>, tensor<1000x1000xf32>) -> tensor<1000x1000xf32>
  return %r : tensor<1000x1000xf32>
}

// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-cse)' | FileCheck %s
// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-cse)' | mlir-opt --irdl-file=%irdl

// CHECK-LABEL: func.func @main
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // CHECK: %[[X:.*]] = "quabla.add"(%arg0, %arg1)
  // CHECK-NOT: quabla.add
  // CHECK: %[[C:.*]] = "quabla.constant"
  // CHECK-NOT: quabla.constant
  // CHECK: "quabla.mul"(%[[X]], %[[C]])
  // CHECK-NOT: quabla.mul
  %0 = "quabla.add"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = "quabla.add"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %c1 = "quabla.constant"() {value = dense<2.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %c2 = "quabla.constant"() {value = dense<2.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %2 = "quabla.mul"(%0, %c1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = "quabla.mul"(%1, %c2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  // An op with different attributes is not merged.
  // CHECK: "quabla.powi"(%{{.*}}) {exponent = 2
  // CHECK: "quabla.powi"(%{{.*}}) {exponent = 3
  %4 = "quabla.powi"(%2) {exponent = 2 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  %5 = "quabla.powi"(%2) {exponent = 3 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %4, %5 : tensor<4xf32>, tensor<4xf32>
}

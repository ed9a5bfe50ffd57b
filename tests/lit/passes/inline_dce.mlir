// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-inline,quabla-dce,quabla-symbol-dce)' | FileCheck %s
// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | FileCheck %s --check-prefix=CANON

// CHECK-LABEL: func.func @main
// CHECK-NOT: call @f
// CHECK: quabla.sin
// CHECK: quabla.sin
// CHECK-NOT: func.func private @f
// CANON-LABEL: func.func @main
// CANON: call @f(%arg0)
// CANON: call @f(%0)
// CANON-NOT: call @f
func.func @main(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0 = func.call @f(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = func.call @f(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %2 = func.call @f(%0) : (tensor<3xf32>) -> tensor<3xf32>
  %dead = "quabla.exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %1, %2 : tensor<3xf32>, tensor<3xf32>
}
func.func private @f(%a: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "quabla.sin"(%a) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
// CHECK-NOT: @unused
func.func private @unused(%a: tensor<3xf32>) -> tensor<3xf32> {
  return %a : tensor<3xf32>
}

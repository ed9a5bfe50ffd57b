// RUN: quabla-opt %s --pass-pipeline='builtin.module(convert-quabla-to-stablehlo)' | FileCheck %s
// RUN: quabla-opt %s --emit=stablehlo | FileCheck %s --check-prefix=INLINED
// Calls stay func.call to private functions; the entry point is the public @main. The
// standard --emit=stablehlo pipeline inlines them first.

// CHECK-LABEL: func.func private @sq
// CHECK: "stablehlo.multiply"
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.*]]: tensor<2xf32>)
// CHECK: %[[A:.*]] = "func.call"(%[[X]]) {callee = @sq} : (tensor<2xf32>) -> tensor<2xf32>
// CHECK: %[[B:.*]]:2 = "func.call"(%[[A]]) {callee = @two} : (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
// CHECK: "func.return"(%[[B]]#1, %[[B]]#0)
// INLINED-NOT: func.call
// INLINED-NOT: @sq
// INLINED: func.func @main
// INLINED-COUNT-2: "stablehlo.multiply"
func.func private @sq(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "quabla.mul"(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func private @two(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %0 = func.call @sq(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0, %x : tensor<2xf32>, tensor<2xf32>
}
func.func @main(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %0 = func.call @sq(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %1:2 = func.call @two(%0) : (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  return %1#1, %1#0 : tensor<2xf32>, tensor<2xf32>
}

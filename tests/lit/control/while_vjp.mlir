// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-autodiff,quabla-inline,quabla-canonicalize,quabla-symbol-dce)' | FileCheck %s
// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-autodiff,quabla-inline,quabla-canonicalize,quabla-symbol-dce)' | mlir-opt --irdl-file=%irdl
// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-autodiff)' > %t.mlir
// RUN: quabla-opt %t.mlir --run --arg='dense<[0.5, -1.5]> : tensor<2xf64>' | FileCheck %s --check-prefix=OUT
// RUN: quabla-opt %t.mlir --interpret --arg='dense<[0.5, -1.5]> : tensor<2xf64>' | FileCheck %s --check-prefix=OUT
// VJP of a counted while (counter from 0, +1, compared with 3): the forward loop (in place of
// the primal) stacks the carry into a [3, 2] buffer with dynamic_update_slice; the backward
// loop counts j = 0..3 and reads the carry of iteration 2 - j with dynamic_slice.
// Three steps of y <- y * y * 0.5 give y = x**8 / 2**7, so the gradient is x**7 / 16.

// OUT: dense<[4.8828125e-4, -1.06787109375e0]> : tensor<2xf64>

// CHECK-LABEL: func.func @main
// CHECK: scf.while
// CHECK: "quabla.dynamic_update_slice"
// CHECK: scf.while
// CHECK: "quabla.dynamic_slice"
// CHECK-NOT: scf.while
func.func @f(%x: tensor<2xf64>) -> tensor<2xf64> {
  %zero = "quabla.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %r:2 = scf.while (%i = %zero, %y = %x) : (tensor<i64>, tensor<2xf64>) -> (tensor<i64>, tensor<2xf64>) {
    %n = "quabla.constant"() {value = dense<3> : tensor<i64>} : () -> tensor<i64>
    %lt = "quabla.compare"(%i, %n) {direction = "lt"} : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %c = tensor.extract %lt[] : tensor<i1>
    scf.condition(%c) %i, %y : tensor<i64>, tensor<2xf64>
  } do {
  ^bb0(%i2: tensor<i64>, %y2: tensor<2xf64>):
    %one = "quabla.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %half = "quabla.constant"() {value = dense<0.5> : tensor<2xf64>} : () -> tensor<2xf64>
    %i3 = "quabla.add"(%i2, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %sq = "quabla.mul"(%y2, %y2) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
    %y3 = "quabla.mul"(%sq, %half) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
    scf.yield %i3, %y3 : tensor<i64>, tensor<2xf64>
  }
  return %r#1 : tensor<2xf64>
}
func.func private @vjp_f(tensor<2xf64>, tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>) attributes {quabla.of = @f, quabla.transform = "vjp"}
func.func @main(%x: tensor<2xf64>) -> tensor<2xf64> {
  %one = "quabla.constant"() {value = dense<1.0> : tensor<2xf64>} : () -> tensor<2xf64>
  %r:2 = func.call @vjp_f(%x, %one) : (tensor<2xf64>, tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>)
  return %r#1 : tensor<2xf64>
}

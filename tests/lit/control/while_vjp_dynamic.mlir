// RUN: not quabla-opt %s --pass-pipeline='builtin.module(quabla-autodiff)' 2>&1 | FileCheck %s
// Reverse mode of a while whose bound is a runtime value (%n) is a typed error naming the
// static trip count it needs; forward mode of the same loop is fine (tests/lit/control/while.mlir).

// CHECK: vjp of @f: 'quabla.while' op has no vjp rule without a static trip count
// CHECK-SAME: the loop bound is a runtime value
func.func @f(%n: tensor<i64>, %x: tensor<2xf64>) -> tensor<2xf64> {
  %zero = "quabla.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %r:3 = scf.while (%i = %zero, %y = %x, %m = %n) : (tensor<i64>, tensor<2xf64>, tensor<i64>) -> (tensor<i64>, tensor<2xf64>, tensor<i64>) {
    %lt = "quabla.compare"(%i, %m) {direction = "lt"} : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %c = tensor.extract %lt[] : tensor<i1>
    scf.condition(%c) %i, %y, %m : tensor<i64>, tensor<2xf64>, tensor<i64>
  } do {
  ^bb0(%i2: tensor<i64>, %y2: tensor<2xf64>, %m2: tensor<i64>):
    %one = "quabla.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %i3 = "quabla.add"(%i2, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %y3 = "quabla.mul"(%y2, %y2) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
    scf.yield %i3, %y3, %m2 : tensor<i64>, tensor<2xf64>, tensor<i64>
  }
  return %r#1 : tensor<2xf64>
}
func.func private @vjp_f(tensor<i64>, tensor<2xf64>, tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>) attributes {quabla.of = @f, quabla.transform = "vjp"}

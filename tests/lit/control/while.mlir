// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | FileCheck %s
// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | mlir-opt --irdl-file=%irdl
// RUN: quabla-opt %s --run --arg='dense<5> : tensor<i64>' --arg='dense<[1.0, -0.5]> : tensor<2xf64>' | FileCheck %s --check-prefix=OUT
// RUN: quabla-opt %s --interpret --arg='dense<5> : tensor<i64>' --arg='dense<[1.0, -0.5]> : tensor<2xf64>' | FileCheck %s --check-prefix=OUT
// quabla.while is spelled scf.while (the cond region forwards the carries with scf.condition);
// a value the body uses from outside (%k) becomes an extra carry passed through the loop.

// OUT: dense<[3.2e1, -1.6e1]> : tensor<2xf64>
// OUT-NEXT: dense<5> : tensor<i64>

// CHECK-LABEL: func.func @main
// CHECK: scf.while (%{{.*}} = %{{.*}}, %{{.*}} = %arg1, %{{.*}} = %arg0, %{{.*}} = %{{.*}}) : (tensor<i64>, tensor<2xf64>, tensor<i64>, tensor<2xf64>)
// CHECK: "quabla.compare"
// CHECK: scf.condition
// CHECK: } do {
// CHECK: "quabla.mul"
// CHECK: scf.yield
func.func @main(%n: tensor<i64>, %x: tensor<2xf64>) -> (tensor<2xf64>, tensor<i64>) {
  %zero = "quabla.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %k = "quabla.constant"() {value = dense<2.0> : tensor<2xf64>} : () -> tensor<2xf64>
  %r:3 = scf.while (%i = %zero, %y = %x, %m = %n) : (tensor<i64>, tensor<2xf64>, tensor<i64>) -> (tensor<i64>, tensor<2xf64>, tensor<i64>) {
    %lt = "quabla.compare"(%i, %m) {direction = "lt"} : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %c = tensor.extract %lt[] : tensor<i1>
    scf.condition(%c) %i, %y, %m : tensor<i64>, tensor<2xf64>, tensor<i64>
  } do {
  ^bb0(%i2: tensor<i64>, %y2: tensor<2xf64>, %m2: tensor<i64>):
    %one = "quabla.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %i3 = "quabla.add"(%i2, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %y3 = "quabla.mul"(%y2, %k) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
    scf.yield %i3, %y3, %m2 : tensor<i64>, tensor<2xf64>, tensor<i64>
  }
  return %r#1, %r#0 : tensor<2xf64>, tensor<i64>
}

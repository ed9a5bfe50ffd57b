// RUN: quabla-opt %s --emit=mlx | FileCheck %s
// Control flow: the straight-line ops around the loop are compiled segments, each region is
// its own def, and the while runs in Python (q.while_loop reads the predicate with .item()).

// CHECK-LABEL: def f_main_seg_1():
// CHECK: return (v{{[0-9]+}}, v{{[0-9]+}})
// CHECK-LABEL: def f_main_cond_2(
// CHECK: mx.less(
// CHECK-LABEL: def f_main_body_3(
// CHECK: mx.multiply(
// CHECK-LABEL: def f_main_seg_4(
// CHECK: mx.sin(
// CHECK-LABEL: def f_main(v0, v1):
// CHECK-NEXT: = f_main_seg_1()
// CHECK-NEXT: = q.while_loop(f_main_cond_2, f_main_body_3,
// CHECK-NEXT: = f_main_seg_4(
// CHECK: COMPILED = ("f_main_seg_1", "f_main_cond_2", "f_main_body_3", "f_main_seg_4")
func.func @main(%n: tensor<i64>, %x: tensor<2xf32>) -> (tensor<2xf32>) {
  %zero = "quabla.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %k = "quabla.constant"() {value = dense<2.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %r:3 = scf.while (%i = %zero, %y = %x, %m = %n) : (tensor<i64>, tensor<2xf32>, tensor<i64>) -> (tensor<i64>, tensor<2xf32>, tensor<i64>) {
    %lt = "quabla.compare"(%i, %m) {direction = "lt"} : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %c = tensor.extract %lt[] : tensor<i1>
    scf.condition(%c) %i, %y, %m : tensor<i64>, tensor<2xf32>, tensor<i64>
  } do {
  ^bb0(%i2: tensor<i64>, %y2: tensor<2xf32>, %m2: tensor<i64>):
    %one = "quabla.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %i3 = "quabla.add"(%i2, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %y3 = "quabla.mul"(%y2, %k) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    scf.yield %i3, %y3, %m2 : tensor<i64>, tensor<2xf32>, tensor<i64>
  }
  %s = "quabla.sin"(%r#1) : (tensor<2xf32>) -> tensor<2xf32>
  return %s : tensor<2xf32>
}

// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-dce)' | FileCheck %s
// RUN: quabla-opt %s --run --arg='dense<[0.5, -1.5]> : tensor<2xf64>' --arg='dense<3.0> : tensor<f64>' | FileCheck %s --check-prefix=OUT
// RUN: quabla-opt %s --interpret --arg='dense<[0.5, -1.5]> : tensor<2xf64>' --arg='dense<3.0> : tensor<f64>' | FileCheck %s --check-prefix=OUT
// Dead carries of a while: %acc (its result unused, read only by its own update) and %junk
// (an invariant carry nobody reads) go; %s (invariant, read by the body) stays as a capture
// and the use of its result after the loop is redirected to its initial value; %y (read by
// the update of the live %x) and the counter (read by the cond) stay.
// Three steps of x <- x * s + y, y <- y * 0.5 from x = y = [0.5, -1.5], s = 3:
// y: 0.25, 0.125; x: 0.5*3+0.5 = 2, 2*3+0.25 = 6.25, 6.25*3+0.125 = 18.875 (and -56.625).

// OUT: dense<[1.8875e1, -5.6625e1]> : tensor<2xf64>
// OUT: dense<3.0{{(e0)?}}> : tensor<f64>

// CHECK-LABEL: func.func @main
// CHECK: %[[R:.*]]:4 = scf.while (%[[I:.*]] = %{{.*}}, %[[X:.*]] = %arg0, %[[Y:.*]] = %arg0, %[[S:.*]] = %arg1) : (tensor<i64>, tensor<2xf64>, tensor<2xf64>, tensor<f64>)
// CHECK: scf.condition
// CHECK-SAME: : tensor<i64>, tensor<2xf64>, tensor<2xf64>, tensor<f64>
// CHECK: ^bb0(%{{.*}}: tensor<i64>, %{{.*}}: tensor<2xf64>, %{{.*}}: tensor<2xf64>, %{{.*}}: tensor<f64>):
// CHECK-NOT: quabla.exp
// CHECK: scf.yield
// CHECK-SAME: : tensor<i64>, tensor<2xf64>, tensor<2xf64>, tensor<f64>
// CHECK: return %[[R]]#1, %arg1
func.func @main(%x0: tensor<2xf64>, %s0: tensor<f64>) -> (tensor<2xf64>, tensor<f64>) {
  %zero = "quabla.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %r:6 = scf.while (%i = %zero, %x = %x0, %y = %x0, %acc = %x0, %s = %s0, %junk = %x0) : (tensor<i64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<f64>, tensor<2xf64>) -> (tensor<i64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<f64>, tensor<2xf64>) {
    %n = "quabla.constant"() {value = dense<3> : tensor<i64>} : () -> tensor<i64>
    %lt = "quabla.compare"(%i, %n) {direction = "lt"} : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %c = tensor.extract %lt[] : tensor<i1>
    scf.condition(%c) %i, %x, %y, %acc, %s, %junk : tensor<i64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<f64>, tensor<2xf64>
  } do {
  ^bb0(%i2: tensor<i64>, %x2: tensor<2xf64>, %y2: tensor<2xf64>, %acc2: tensor<2xf64>, %s2: tensor<f64>, %junk2: tensor<2xf64>):
    %one = "quabla.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %half = "quabla.constant"() {value = dense<0.5> : tensor<2xf64>} : () -> tensor<2xf64>
    %i3 = "quabla.add"(%i2, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %sb = "quabla.broadcast_in_dim"(%s2) {dims = array<i64>} : (tensor<f64>) -> tensor<2xf64>
    %xs = "quabla.mul"(%x2, %sb) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
    %x3 = "quabla.add"(%xs, %y2) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
    %y3 = "quabla.mul"(%y2, %half) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
    %e = "quabla.exp"(%x2) : (tensor<2xf64>) -> tensor<2xf64>
    %acc3 = "quabla.add"(%acc2, %e) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
    scf.yield %i3, %x3, %y3, %acc3, %s2, %junk2 : tensor<i64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<f64>, tensor<2xf64>
  }
  return %r#1, %r#4 : tensor<2xf64>, tensor<f64>
}

// quabla.if and quabla.while (scf spelling at the quabla level): a predicate-selected branch
// and a counted loop (x doubled n times, then the branch on the loop count's parity).
func.func @main(%n: tensor<i64>, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<i64>) {
  %zero = "quabla.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %r:3 = scf.while (%i = %zero, %y = %x, %m = %n) : (tensor<i64>, tensor<4xf32>, tensor<i64>) -> (tensor<i64>, tensor<4xf32>, tensor<i64>) {
    %lt = "quabla.compare"(%i, %m) {direction = "lt"} : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %c = tensor.extract %lt[] : tensor<i1>
    scf.condition(%c) %i, %y, %m : tensor<i64>, tensor<4xf32>, tensor<i64>
  } do {
  ^bb0(%i2: tensor<i64>, %y2: tensor<4xf32>, %m2: tensor<i64>):
    %one = "quabla.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %i3 = "quabla.add"(%i2, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %y3 = "quabla.add"(%y2, %y2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    scf.yield %i3, %y3, %m2 : tensor<i64>, tensor<4xf32>, tensor<i64>
  }
  %two = "quabla.constant"() {value = dense<2> : tensor<i64>} : () -> tensor<i64>
  %rem = "quabla.rem"(%r#0, %two) : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %odd = "quabla.compare"(%rem, %zero) {direction = "ne"} : (tensor<i64>, tensor<i64>) -> tensor<i1>
  %p = tensor.extract %odd[] : tensor<i1>
  %s = scf.if %p -> (tensor<4xf32>) {
    %e = "quabla.sin"(%r#1) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %e : tensor<4xf32>
  } else {
    %g = "quabla.neg"(%r#1) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %g : tensor<4xf32>
  }
  return %s, %r#0 : tensor<4xf32>, tensor<i64>
}

// A PINN value_and_grad step in f64: u(x) = w2 . tanh(w1 x + b1); the residual of
// u''(x) + sin(x) = 0 at 16 points, u'' by two nested JVPs, batched over the points with
// vmap; the loss mean(residual^2) and its gradient with respect to (w1, b1, w2) by VJP.
func.func private @u(%x: tensor<f64>, %w1: tensor<8xf64>, %b1: tensor<8xf64>, %w2: tensor<8xf64>) -> tensor<f64> {
  %xb = "quabla.broadcast_in_dim"(%x) {dims = array<i64>} : (tensor<f64>) -> tensor<8xf64>
  %z0 = "quabla.mul"(%w1, %xb) : (tensor<8xf64>, tensor<8xf64>) -> tensor<8xf64>
  %z = "quabla.add"(%z0, %b1) : (tensor<8xf64>, tensor<8xf64>) -> tensor<8xf64>
  %h = "quabla.tanh"(%z) : (tensor<8xf64>) -> tensor<8xf64>
  %p = "quabla.mul"(%h, %w2) : (tensor<8xf64>, tensor<8xf64>) -> tensor<8xf64>
  %s = "quabla.reduce_sum"(%p) {dims = array<i64: 0>} : (tensor<8xf64>) -> tensor<f64>
  return %s : tensor<f64>
}
func.func private @u_jvp(tensor<f64>, tensor<8xf64>, tensor<8xf64>, tensor<8xf64>, tensor<f64>, tensor<8xf64>, tensor<8xf64>, tensor<8xf64>) -> (tensor<f64>, tensor<f64>) attributes {quabla.of = @u, quabla.transform = "jvp"}
func.func private @ux(%x: tensor<f64>, %w1: tensor<8xf64>, %b1: tensor<8xf64>, %w2: tensor<8xf64>) -> tensor<f64> {
  %one = "quabla.constant"() {value = dense<1.0> : tensor<f64>} : () -> tensor<f64>
  %zero = "quabla.constant"() {value = dense<0.0> : tensor<8xf64>} : () -> tensor<8xf64>
  %r:2 = func.call @u_jvp(%x, %w1, %b1, %w2, %one, %zero, %zero, %zero) : (tensor<f64>, tensor<8xf64>, tensor<8xf64>, tensor<8xf64>, tensor<f64>, tensor<8xf64>, tensor<8xf64>, tensor<8xf64>) -> (tensor<f64>, tensor<f64>)
  return %r#1 : tensor<f64>
}
func.func private @ux_jvp(tensor<f64>, tensor<8xf64>, tensor<8xf64>, tensor<8xf64>, tensor<f64>, tensor<8xf64>, tensor<8xf64>, tensor<8xf64>) -> (tensor<f64>, tensor<f64>) attributes {quabla.of = @ux, quabla.transform = "jvp"}
func.func private @residual(%x: tensor<f64>, %w1: tensor<8xf64>, %b1: tensor<8xf64>, %w2: tensor<8xf64>) -> tensor<f64> {
  %one = "quabla.constant"() {value = dense<1.0> : tensor<f64>} : () -> tensor<f64>
  %zero = "quabla.constant"() {value = dense<0.0> : tensor<8xf64>} : () -> tensor<8xf64>
  %r:2 = func.call @ux_jvp(%x, %w1, %b1, %w2, %one, %zero, %zero, %zero) : (tensor<f64>, tensor<8xf64>, tensor<8xf64>, tensor<8xf64>, tensor<f64>, tensor<8xf64>, tensor<8xf64>, tensor<8xf64>) -> (tensor<f64>, tensor<f64>)
  %sx = "quabla.sin"(%x) : (tensor<f64>) -> tensor<f64>
  %res = "quabla.add"(%r#1, %sx) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  return %res : tensor<f64>
}
func.func private @residual_v(tensor<16xf64>, tensor<8xf64>, tensor<8xf64>, tensor<8xf64>) -> tensor<16xf64> attributes {quabla.axis_size = 16 : i64, quabla.in_axes = array<i64: 0, -1, -1, -1>, quabla.of = @residual, quabla.out_axes = array<i64: 0>, quabla.transform = "vmap"}
func.func private @loss(%xs: tensor<16xf64>, %w1: tensor<8xf64>, %b1: tensor<8xf64>, %w2: tensor<8xf64>) -> tensor<f64> {
  %r = func.call @residual_v(%xs, %w1, %b1, %w2) : (tensor<16xf64>, tensor<8xf64>, tensor<8xf64>, tensor<8xf64>) -> tensor<16xf64>
  %r2 = "quabla.mul"(%r, %r) : (tensor<16xf64>, tensor<16xf64>) -> tensor<16xf64>
  %s = "quabla.reduce_sum"(%r2) {dims = array<i64: 0>} : (tensor<16xf64>) -> tensor<f64>
  %n = "quabla.constant"() {value = dense<6.25e-2> : tensor<f64>} : () -> tensor<f64>
  %l = "quabla.mul"(%s, %n) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  return %l : tensor<f64>
}
func.func private @loss_vjp(tensor<16xf64>, tensor<8xf64>, tensor<8xf64>, tensor<8xf64>, tensor<f64>) -> (tensor<f64>, tensor<16xf64>, tensor<8xf64>, tensor<8xf64>, tensor<8xf64>) attributes {quabla.of = @loss, quabla.transform = "vjp"}
func.func @main(%xs: tensor<16xf64>, %w1: tensor<8xf64>, %b1: tensor<8xf64>, %w2: tensor<8xf64>) -> (tensor<f64>, tensor<8xf64>, tensor<8xf64>, tensor<8xf64>) {
  %one = "quabla.constant"() {value = dense<1.0> : tensor<f64>} : () -> tensor<f64>
  %g:5 = func.call @loss_vjp(%xs, %w1, %b1, %w2, %one) : (tensor<16xf64>, tensor<8xf64>, tensor<8xf64>, tensor<8xf64>, tensor<f64>) -> (tensor<f64>, tensor<16xf64>, tensor<8xf64>, tensor<8xf64>, tensor<8xf64>)
  return %g#0, %g#2, %g#3, %g#4 : tensor<f64>, tensor<8xf64>, tensor<8xf64>, tensor<8xf64>
}

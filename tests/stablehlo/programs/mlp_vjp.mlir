// MLP loss and gradients through a vjp transform function (expanded by quabla-autodiff in
// the --emit=stablehlo pipeline): loss = mean((tanh(x @ w1 + b1) @ w2 + b2 - y)^2).
func.func private @loss(%x: tensor<8x16xf32>, %y: tensor<8x4xf32>, %w1: tensor<16x32xf32>, %b1: tensor<32xf32>, %w2: tensor<32x4xf32>, %b2: tensor<4xf32>) -> tensor<f32> {
  %z0 = "quabla.dot_general"(%x, %w1) {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %b1b = "quabla.broadcast_in_dim"(%b1) {dims = array<i64: 1>} : (tensor<32xf32>) -> tensor<8x32xf32>
  %z = "quabla.add"(%z0, %b1b) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %h = "quabla.tanh"(%z) : (tensor<8x32xf32>) -> tensor<8x32xf32>
  %o0 = "quabla.dot_general"(%h, %w2) {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<8x32xf32>, tensor<32x4xf32>) -> tensor<8x4xf32>
  %b2b = "quabla.broadcast_in_dim"(%b2) {dims = array<i64: 1>} : (tensor<4xf32>) -> tensor<8x4xf32>
  %o = "quabla.add"(%o0, %b2b) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %r = "quabla.sub"(%o, %y) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %r2 = "quabla.powi"(%r) {exponent = 2 : i64} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %s = "quabla.reduce_sum"(%r2) {dims = array<i64: 0, 1>} : (tensor<8x4xf32>) -> tensor<f32>
  %n = "quabla.constant"() {value = dense<3.125e-2> : tensor<f32>} : () -> tensor<f32>
  %l = "quabla.mul"(%s, %n) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %l : tensor<f32>
}
func.func private @loss_vjp(tensor<8x16xf32>, tensor<8x4xf32>, tensor<16x32xf32>, tensor<32xf32>, tensor<32x4xf32>, tensor<4xf32>, tensor<f32>) -> (tensor<f32>, tensor<8x16xf32>, tensor<8x4xf32>, tensor<16x32xf32>, tensor<32xf32>, tensor<32x4xf32>, tensor<4xf32>) attributes {quabla.of = @loss, quabla.transform = "vjp"}
func.func @main(%x: tensor<8x16xf32>, %y: tensor<8x4xf32>, %w1: tensor<16x32xf32>, %b1: tensor<32xf32>, %w2: tensor<32x4xf32>, %b2: tensor<4xf32>) -> (tensor<f32>, tensor<16x32xf32>, tensor<32xf32>, tensor<32x4xf32>, tensor<4xf32>) {
  %one = "quabla.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %g:7 = func.call @loss_vjp(%x, %y, %w1, %b1, %w2, %b2, %one) : (tensor<8x16xf32>, tensor<8x4xf32>, tensor<16x32xf32>, tensor<32xf32>, tensor<32x4xf32>, tensor<4xf32>, tensor<f32>) -> (tensor<f32>, tensor<8x16xf32>, tensor<8x4xf32>, tensor<16x32xf32>, tensor<32xf32>, tensor<32x4xf32>, tensor<4xf32>)
  return %g#0, %g#3, %g#4, %g#5, %g#6 : tensor<f32>, tensor<16x32xf32>, tensor<32xf32>, tensor<32x4xf32>, tensor<4xf32>
}

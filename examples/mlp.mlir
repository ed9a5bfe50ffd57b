// A 2-layer MLP, forward and hand-written backward, in the quabla dialect.
// loss = mean((tanh(x @ w1 + b1) @ w2 + b2 - y)^2); returns loss and d loss / d (w1, b1, w2, b2).
// Run: quabla-opt examples/mlp.mlir --pass-pipeline='builtin.module(quabla-canonicalize)' --run --random-args=1
func.func @main(%x: tensor<8x16xf32>, %y: tensor<8x4xf32>, %w1: tensor<16x32xf32>, %b1: tensor<32xf32>, %w2: tensor<32x4xf32>, %b2: tensor<4xf32>)
    -> (tensor<f32>, tensor<16x32xf32>, tensor<32xf32>, tensor<32x4xf32>, tensor<4xf32>) {
  // forward
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
  %loss = "quabla.mul"(%s, %n) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  // backward: dout = 2 r / 32
  %two_n = "quabla.constant"() {value = dense<6.25e-2> : tensor<8x4xf32>} : () -> tensor<8x4xf32>
  %dout = "quabla.mul"(%r, %two_n) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %dw2 = "quabla.dot_general"(%h, %dout) {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 0>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<8x32xf32>, tensor<8x4xf32>) -> tensor<32x4xf32>
  %db2 = "quabla.reduce_sum"(%dout) {dims = array<i64: 0>} : (tensor<8x4xf32>) -> tensor<4xf32>
  %dh = "quabla.dot_general"(%dout, %w2) {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 1>} : (tensor<8x4xf32>, tensor<32x4xf32>) -> tensor<8x32xf32>
  %hh = "quabla.mul"(%h, %h) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %one = "quabla.constant"() {value = dense<1.0> : tensor<8x32xf32>} : () -> tensor<8x32xf32>
  %dt = "quabla.sub"(%one, %hh) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %dz = "quabla.mul"(%dh, %dt) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %dw1 = "quabla.dot_general"(%x, %dz) {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 0>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<8x16xf32>, tensor<8x32xf32>) -> tensor<16x32xf32>
  %db1 = "quabla.reduce_sum"(%dz) {dims = array<i64: 0>} : (tensor<8x32xf32>) -> tensor<32xf32>
  return %loss, %dw1, %db1, %dw2, %db2 : tensor<f32>, tensor<16x32xf32>, tensor<32xf32>, tensor<32x4xf32>, tensor<4xf32>
}

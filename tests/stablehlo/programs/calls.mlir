// A two-layer network written with calls: exported with convert-quabla-to-stablehlo alone,
// the calls stay func.call of private functions (one of them returning two results).
func.func private @layer(%x: tensor<3x4xf32>, %b: tensor<4xf32>) -> tensor<3x4xf32> {
  %bb = "quabla.broadcast_in_dim"(%b) {dims = array<i64: 1>} : (tensor<4xf32>) -> tensor<3x4xf32>
  %z = "quabla.add"(%x, %bb) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %h = "quabla.tanh"(%z) : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %h : tensor<3x4xf32>
}
func.func private @stats(%x: tensor<3x4xf32>) -> (tensor<4xf32>, tensor<3xi32>) {
  %s = "quabla.reduce_sum"(%x) {dims = array<i64: 0>} : (tensor<3x4xf32>) -> tensor<4xf32>
  %a = "quabla.argmax"(%x) {dim = 1 : i64} : (tensor<3x4xf32>) -> tensor<3xi32>
  return %s, %a : tensor<4xf32>, tensor<3xi32>
}
func.func @main(%x: tensor<3x4xf32>, %b: tensor<4xf32>) -> (tensor<3x4xf32>, tensor<4xf32>, tensor<3xi32>) {
  %h1 = func.call @layer(%x, %b) : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %h2 = func.call @layer(%h1, %b) : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %s:2 = func.call @stats(%h2) : (tensor<3x4xf32>) -> (tensor<4xf32>, tensor<3xi32>)
  return %h2, %s#0, %s#1 : tensor<3x4xf32>, tensor<4xf32>, tensor<3xi32>
}

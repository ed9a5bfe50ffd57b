// broadcast_in_dim_c3
func.func @main(%a: tensor<3xf32>) -> tensor<2x4xf32> {
  %0 = "quabla.broadcast_in_dim"(%a) {dims = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

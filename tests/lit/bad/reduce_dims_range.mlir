// reduce_c1
func.func @main(%a: tensor<2x3xf32>) -> tensor<2xf32> {
  %0 = "quabla.reduce_max"(%a) {dims = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

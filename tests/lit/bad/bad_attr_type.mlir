// dims must be array<i64>
func.func @main(%a: tensor<2x3xf32>) -> tensor<2xf32> {
  %0 = "quabla.reduce_sum"(%a) {dims = 1 : i64} : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

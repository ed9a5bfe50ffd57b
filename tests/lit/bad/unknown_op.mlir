// unknown op in the quabla dialect
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "quabla.frobnicate"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

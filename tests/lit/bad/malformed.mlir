// malformed text
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "quabla.neg"(%a : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

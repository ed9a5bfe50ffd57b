// result type differs from the shape rule
func.func @main(%a: tensor<2xf32>) -> tensor<2xf64> {
  %0 = "quabla.exp"(%a) : (tensor<2xf32>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

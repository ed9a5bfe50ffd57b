// transpose without perm
func.func @main(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = "quabla.transpose"(%a) : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

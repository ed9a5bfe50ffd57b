// unary_c1: exp on integers
func.func @main(%a: tensor<2xi32>) -> tensor<2xi32> {
  %0 = "quabla.exp"(%a) : (tensor<2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

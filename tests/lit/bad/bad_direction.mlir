// compare direction
func.func @main(%a: tensor<2xf32>) -> tensor<2xi1> {
  %0 = "quabla.compare"(%a, %a) {direction = "lessish"} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

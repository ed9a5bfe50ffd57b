// f16 is not supported
func.func @main(%a: tensor<2xf16>) -> tensor<2xf16> {
  %0 = "quabla.neg"(%a) : (tensor<2xf16>) -> tensor<2xf16>
  return %0 : tensor<2xf16>
}

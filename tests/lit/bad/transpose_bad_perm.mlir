// transpose_c1
func.func @main(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = "quabla.transpose"(%a) {perm = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

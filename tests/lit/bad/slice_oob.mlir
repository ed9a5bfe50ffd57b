// slice_c2
func.func @main(%a: tensor<4xf32>) -> tensor<2xf32> {
  %0 = "quabla.slice"(%a) {start_indices = array<i64: 3>, limit_indices = array<i64: 5>, strides = array<i64: 1>} : (tensor<4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

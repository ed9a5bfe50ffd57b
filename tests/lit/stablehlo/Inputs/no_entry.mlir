// Two public functions and no @main: the StableHLO export has no entry point.
func.func @a(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}
func.func @b(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}

// constant result type differs from its value
func.func @main() -> tensor<2xf64> {
  %0 = "quabla.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

// scf.if branches yielding a type other than the op's result (rejected by scf's verifier)
func.func @main(%p: tensor<i1>, %x: tensor<2xf32>, %y: tensor<2xf64>) -> tensor<2xf32> {
  %c = tensor.extract %p[] : tensor<i1>
  %r = scf.if %c -> (tensor<2xf32>) {
    scf.yield %x : tensor<2xf32>
  } else {
    scf.yield %y : tensor<2xf64>
  }
  return %r : tensor<2xf32>
}

// scf.if whose condition is not the tensor.extract of a 0-d tensor<i1> predicate
func.func @main(%x: tensor<2xf32>, %b: i1) -> tensor<2xf32> {
  %r = scf.if %b -> (tensor<2xf32>) {
    scf.yield %x : tensor<2xf32>
  } else {
    scf.yield %x : tensor<2xf32>
  }
  return %r : tensor<2xf32>
}

// scf.index_switch branches yielding a type other than the op's result (case_c4; rejected by scf's verifier)
func.func @main(%i: tensor<i32>, %x: tensor<2xf32>, %y: tensor<2xf64>) -> tensor<2xf32> {
  %c = tensor.extract %i[] : tensor<i32>
  %ix = arith.index_cast %c : i32 to index
  %r = scf.index_switch %ix -> tensor<2xf32>
  case 0 {
    scf.yield %x : tensor<2xf32>
  }
  default {
    scf.yield %y : tensor<2xf64>
  }
  return %r : tensor<2xf32>
}

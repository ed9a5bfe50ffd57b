// scf.index_switch whose cases are not 0..N-2 in order (quabla.case branches are positional)
func.func @main(%i: tensor<i32>, %x: tensor<2xf64>) -> tensor<2xf64> {
  %c = tensor.extract %i[] : tensor<i32>
  %ix = arith.index_cast %c : i32 to index
  %r = scf.index_switch %ix -> tensor<2xf64>
  case 1 {
    %n = "quabla.neg"(%x) : (tensor<2xf64>) -> tensor<2xf64>
    scf.yield %n : tensor<2xf64>
  }
  default {
    scf.yield %x : tensor<2xf64>
  }
  return %r : tensor<2xf64>
}

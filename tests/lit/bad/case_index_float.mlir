// scf.index_switch on an index cast from an extracted float (quabla.case needs a 0-d integer index, case_c1)
func.func @main(%i: tensor<f64>, %x: tensor<2xf64>) -> tensor<2xf64> {
  %c = tensor.extract %i[] : tensor<f64>
  %j = arith.fptosi %c : f64 to i64
  %ix = arith.index_cast %j : i64 to index
  %r = scf.index_switch %ix -> tensor<2xf64>
  default {
    scf.yield %x : tensor<2xf64>
  }
  return %r : tensor<2xf64>
}

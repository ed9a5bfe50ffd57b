// scf.while whose condition forwards other values than its arguments (quabla.while has none)
func.func @main(%x: tensor<f32>, %p: tensor<i1>) -> tensor<f32> {
  %r = scf.while (%a = %x) : (tensor<f32>) -> (tensor<f32>) {
    %n = "quabla.neg"(%a) : (tensor<f32>) -> tensor<f32>
    %c = tensor.extract %p[] : tensor<i1>
    scf.condition(%c) %n : tensor<f32>
  } do {
  ^bb0(%b: tensor<f32>):
    scf.yield %b : tensor<f32>
  }
  return %r : tensor<f32>
}

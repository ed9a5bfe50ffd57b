// dynamic shapes are not quabla types
func.func @main(%a: tensor<?xf32>) -> tensor<?xf32> {
  %0 = "quabla.neg"(%a) : (tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

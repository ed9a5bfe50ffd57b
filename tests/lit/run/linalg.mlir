// RUN: quabla-opt %s --run --arg='dense<[[4.0, 2.0], [2.0, 10.0]]> : tensor<2x2xf64>' --arg='dense<[[2.0], [7.0]]> : tensor<2x1xf64>' --arg='dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf64>' | FileCheck %s
// RUN: quabla-opt %s --interpret --arg='dense<[[4.0, 2.0], [2.0, 10.0]]> : tensor<2x2xf64>' --arg='dense<[[2.0], [7.0]]> : tensor<2x1xf64>' --arg='dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf64>' | FileCheck %s
// Linear-algebra ops: the JIT (runtime kernels) and the interpreter print the same results.
// a = l lᵀ with l = [[2, 0], [1, 3]]; l x = [2, 7] gives x = [1, 2]; lu of [[1, 2], [3, 4]]
// swaps the rows: lu = [[3, 4], [1/3, 2/3]], pivots [1, 1], permutation [1, 0].

// CHECK: dense<{{\[}}[2.0e0, 0.0e0], [1.0e0, 3.0e0]]> : tensor<2x2xf64>
// CHECK-NEXT: dense<{{\[}}[1.0e0], [2.0e0]]> : tensor<2x1xf64>
// CHECK-NEXT: dense<{{\[}}[3.0e0, 4.0e0], [3.333333333333333{{[0-9]*}}e-1, 6.66666666666666{{[0-9]*}}e-1]]> : tensor<2x2xf64>
// CHECK-NEXT: dense<1> : tensor<2xi32>
// CHECK-NEXT: dense<[1, 0]> : tensor<2xi32>
func.func @main(%a: tensor<2x2xf64>, %b: tensor<2x1xf64>, %m: tensor<2x2xf64>) -> (tensor<2x2xf64>, tensor<2x1xf64>, tensor<2x2xf64>, tensor<2xi32>, tensor<2xi32>) {
  %l = "quabla.cholesky"(%a) {lower = true} : (tensor<2x2xf64>) -> tensor<2x2xf64>
  %x = "quabla.triangular_solve"(%l, %b) {left_side = true, lower = true, transpose_a = false, unit_diagonal = false} : (tensor<2x2xf64>, tensor<2x1xf64>) -> tensor<2x1xf64>
  %lu, %piv, %perm = "quabla.lu"(%m) : (tensor<2x2xf64>) -> (tensor<2x2xf64>, tensor<2xi32>, tensor<2xi32>)
  return %l, %x, %lu, %piv, %perm : tensor<2x2xf64>, tensor<2x1xf64>, tensor<2x2xf64>, tensor<2xi32>, tensor<2xi32>
}

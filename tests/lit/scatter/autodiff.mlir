// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-autodiff,quabla-canonicalize)' | FileCheck %s --check-prefix=VJP
// The gather VJP is a scatter_add of the cotangent (no one-hot dot_general).

// VJP-LABEL: func.func private @g_vjp
// VJP-NOT: dot_general
// VJP: "quabla.scatter_add"
// VJP-NOT: dot_general
// VJP: return
func.func @g(%x: tensor<1000x8xf64>, %i: tensor<3xi64>) -> tensor<3x8xf64> {
  %0 = "quabla.gather"(%x, %i) {axis = 0 : i64} : (tensor<1000x8xf64>, tensor<3xi64>) -> tensor<3x8xf64>
  return %0 : tensor<3x8xf64>
}
func.func private @g_vjp(tensor<1000x8xf64>, tensor<3xi64>, tensor<3x8xf64>) -> (tensor<3x8xf64>, tensor<1000x8xf64>) attributes {quabla.of = @g, quabla.transform = "vjp"}

// RUN: not quabla-opt %s --emit=mlx 2>&1 | FileCheck %s
// RUN: not quabla-opt %s --pass-pipeline='builtin.module(convert-quabla-to-mlx,quabla-dce)' 2>&1 | FileCheck %s --check-prefix=TERMINAL
// An op without a faithful MLX form is an error of the emitter naming the op, at compile time.

// CHECK: 'quabla.cbrt' op cannot be lowered: no mlx rule
// TERMINAL: convert-quabla-to-mlx is terminal
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "quabla.cbrt"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

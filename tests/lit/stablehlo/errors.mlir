// RUN: not quabla-opt %s --pass-pipeline='builtin.module(convert-quabla-to-stablehlo)' 2>&1 | FileCheck %s
// RUN: quabla-opt %s --emit=stablehlo | FileCheck %s --check-prefix=EXPANDED
// RUN: not quabla-opt %s --pass-pipeline='builtin.module(convert-quabla-to-stablehlo,quabla-dce)' 2>&1 | FileCheck %s --check-prefix=TERMINAL
// Transform functions must be expanded before the export; --emit=stablehlo runs quabla-autodiff.
// The export is terminal: no pass can follow it.

// CHECK: 'quabla.vjp' op cannot be lowered: @f_vjp (the vjp of @f) is a transform function without a body: run quabla-autodiff
// EXPANDED: func.func @main
// EXPANDED: "stablehlo.cosine"
// EXPANDED-NOT: func.call
// TERMINAL: convert-quabla-to-stablehlo is terminal
func.func private @f(%x: tensor<3xf64>) -> tensor<3xf64> {
  %0 = "quabla.sin"(%x) : (tensor<3xf64>) -> tensor<3xf64>
  return %0 : tensor<3xf64>
}
func.func private @f_vjp(tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>) attributes {quabla.of = @f, quabla.transform = "vjp"}
func.func @main(%x: tensor<3xf64>, %ct: tensor<3xf64>) -> tensor<3xf64> {
  %0:2 = func.call @f_vjp(%x, %ct) : (tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>)
  return %0#1 : tensor<3xf64>
}

// RUN: not quabla-opt %S/Inputs/no_entry.mlir --emit=stablehlo 2>&1 | FileCheck %s --check-prefix=ENTRY
// ENTRY: the StableHLO export needs one entry point, a public func.func @main (public functions: @a, @b)

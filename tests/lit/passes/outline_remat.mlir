// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-outline{max-ops=2})' | FileCheck %s
// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-outline{max-ops=2})' | quabla-opt --run --arg='dense<[0.5, -1.0]> : tensor<2xf32>' | FileCheck %s --check-prefix=VALUES
// RUN: quabla-opt %s --interpret --arg='dense<[0.5, -1.0]> : tensor<2xf32>' | FileCheck %s --check-prefix=VALUES
// Broadcasts of small values are made again in each chunk that uses them (outline.rs), in
// program order: a later chunk that reads a broadcast of a broadcast (%o) before the inner
// one (%i) makes the inner one first (it made the outer one from a value it did not have).

// VALUES: dense<{{\[\[}}[5.0e-1, -1.0e0], [5.0e-1, -1.0e0]], {{\[\[}}5.0e-1, -1.0e0], [5.0e-1, -1.0e0]], {{\[\[}}5.0e-1, -1.0e0], [5.0e-1, -1.0e0]]]> : tensor<3x2x2xf32>
// VALUES-NEXT: dense<{{\[\[}}1.0e0, -2.0e0], [1.0e0, -2.0e0]]> : tensor<2x2xf32>

// CHECK-LABEL: func.func @main
// CHECK: func.func private @main_chunk1
// CHECK: %[[I:.*]] = "quabla.broadcast_in_dim"(%arg0)
// CHECK: "quabla.broadcast_in_dim"(%[[I]])
func.func @main(%x: tensor<2xf32>) -> (tensor<3x2x2xf32>, tensor<2x2xf32>) {
  %i = "quabla.broadcast_in_dim"(%x) {dims = array<i64: 1>} : (tensor<2xf32>) -> tensor<2x2xf32>
  %o = "quabla.broadcast_in_dim"(%i) {dims = array<i64: 1, 2>} : (tensor<2x2xf32>) -> tensor<3x2x2xf32>
  %a = "quabla.neg"(%o) : (tensor<3x2x2xf32>) -> tensor<3x2x2xf32>
  %b = "quabla.neg"(%a) : (tensor<3x2x2xf32>) -> tensor<3x2x2xf32>
  %c = "quabla.add"(%o, %b) : (tensor<3x2x2xf32>, tensor<3x2x2xf32>) -> tensor<3x2x2xf32>
  %d = "quabla.add"(%i, %i) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %e = "quabla.sub"(%c, %o) : (tensor<3x2x2xf32>, tensor<3x2x2xf32>) -> tensor<3x2x2xf32>
  return %e, %d : tensor<3x2x2xf32>, tensor<2x2xf32>
}

// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | FileCheck %s
// RUN: quabla-opt %s --run | FileCheck %s --check-prefix=OUT
// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | quabla-opt --run | FileCheck %s --check-prefix=OUT
// A chain of reshapes and broadcasts with two broadcasts (nearest 2x upsampling: repeat 2 along
// dim 0, then along dim 1) is one broadcast between two reshapes (fold.rs broadcast_chain),
// in the common refinement [5, 2, 20, 2] of the chain's shapes. @ragged's reshape splits
// 6 into 4 x .. where no factor matches: left as it is.

// CHECK-LABEL: func.func @main
// CHECK: "quabla.broadcast_in_dim"(%{{.*}}) {dims = array<i64: 0, 2>} : (tensor<5x20xi32>) -> tensor<5x2x20x2xi32>
// CHECK-NOT: "quabla.broadcast_in_dim"
// CHECK: "quabla.reshape"(%{{.*}}) : (tensor<5x2x20x2xi32>) -> tensor<10x40xi32>
// CHECK-LABEL: func.func @ragged
// CHECK-COUNT-2: "quabla.broadcast_in_dim"

// x[i, j] = 20i + j + 1; out[r, c] = x[r / 2, c / 2]: rows 0 and 1 are 1 1 2 2 3 3 ...
// OUT: dense<{{\[\[}}1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15, 16, 16, 17, 17, 18, 18, 19, 19, 20, 20], [1, 1, 2, 2,
func.func @main() -> tensor<10x40xi32> {
  %i = "quabla.iota"() {dim = 0 : i64} : () -> tensor<100xi32>
  %one = "quabla.constant"() {value = dense<1> : tensor<100xi32>} : () -> tensor<100xi32>
  %j = "quabla.add"(%i, %one) : (tensor<100xi32>, tensor<100xi32>) -> tensor<100xi32>
  %x = "quabla.reshape"(%j) : (tensor<100xi32>) -> tensor<5x20xi32>
  %a = "quabla.reshape"(%x) : (tensor<5x20xi32>) -> tensor<5x1x20xi32>
  %b = "quabla.broadcast_in_dim"(%a) {dims = array<i64: 0, 1, 2>} : (tensor<5x1x20xi32>) -> tensor<5x2x20xi32>
  %c = "quabla.reshape"(%b) : (tensor<5x2x20xi32>) -> tensor<10x20x1xi32>
  %d = "quabla.broadcast_in_dim"(%c) {dims = array<i64: 0, 1, 2>} : (tensor<10x20x1xi32>) -> tensor<10x20x2xi32>
  %e = "quabla.reshape"(%d) : (tensor<10x20x2xi32>) -> tensor<10x40xi32>
  return %e : tensor<10x40xi32>
}

func.func @ragged(%x: tensor<6xi32>) -> tensor<4x6x2xi32> {
  %b = "quabla.broadcast_in_dim"(%x) {dims = array<i64: 0>} : (tensor<6xi32>) -> tensor<6x4xi32>
  %c = "quabla.reshape"(%b) : (tensor<6x4xi32>) -> tensor<4x6xi32>
  %d = "quabla.broadcast_in_dim"(%c) {dims = array<i64: 0, 1>} : (tensor<4x6xi32>) -> tensor<4x6x2xi32>
  return %d : tensor<4x6x2xi32>
}

// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | FileCheck %s
// RUN: quabla-opt %s --run | FileCheck %s --check-prefix=OUT
// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | quabla-opt --run | FileCheck %s --check-prefix=OUT
// A chain of reshapes and sums (the gradient of a 2-D upsampling: a sum over the column
// repeats, then over the row repeats) is one sum between two reshapes over the refinement's
// summed dims (chains.rs reduction_chain): here [10, 2, 20, 2] summed over dims 1 and 3.
// @maxes: a chain of maxima likewise. @mixed: a max below a sum stays two reductions.
// x[i, j] = 40i + j + 1 (20 x 40); out[r, c] = x[2r, 2c] + x[2r, 2c+1] + x[2r+1, 2c] +
// x[2r+1, 2c+1] = 4 (80r + 2c) + 86: out[0, 0] = 86, out[0, 1] = 94.

// CHECK-LABEL: func.func @main
// CHECK: "quabla.reduce_sum"(%{{.*}}) {dims = array<i64: 1, 3>} : (tensor<10x2x20x2xi32>) -> tensor<10x20xi32>
// CHECK-NOT: "quabla.reduce_sum"
// CHECK-LABEL: func.func @maxes
// CHECK: "quabla.reduce_max"(%{{.*}}) {dims = array<i64: 1, 3>} : (tensor<10x2x20x2xi32>) -> tensor<10x20xi32>
// CHECK-NOT: "quabla.reduce_max"
// CHECK-LABEL: func.func @mixed
// CHECK: "quabla.reduce_max"
// CHECK: "quabla.reduce_sum"

// OUT: dense<{{\[\[}}86, 94, 102,
func.func @main() -> tensor<10x20xi32> {
  %i = "quabla.iota"() {dim = 0 : i64} : () -> tensor<800xi32>
  %one = "quabla.constant"() {value = dense<1> : tensor<800xi32>} : () -> tensor<800xi32>
  %j = "quabla.add"(%i, %one) : (tensor<800xi32>, tensor<800xi32>) -> tensor<800xi32>
  %x = "quabla.reshape"(%j) : (tensor<800xi32>) -> tensor<20x20x2xi32>
  %a = "quabla.reduce_sum"(%x) {dims = array<i64: 2>} : (tensor<20x20x2xi32>) -> tensor<20x20xi32>
  %b = "quabla.reshape"(%a) : (tensor<20x20xi32>) -> tensor<10x2x20xi32>
  %c = "quabla.reduce_sum"(%b) {dims = array<i64: 1>} : (tensor<10x2x20xi32>) -> tensor<10x20xi32>
  return %c : tensor<10x20xi32>
}

func.func @maxes(%x: tensor<20x20x2xi32>) -> tensor<10x20xi32> {
  %a = "quabla.reduce_max"(%x) {dims = array<i64: 2>} : (tensor<20x20x2xi32>) -> tensor<20x20xi32>
  %b = "quabla.reshape"(%a) : (tensor<20x20xi32>) -> tensor<10x2x20xi32>
  %c = "quabla.reduce_max"(%b) {dims = array<i64: 1>} : (tensor<10x2x20xi32>) -> tensor<10x20xi32>
  return %c : tensor<10x20xi32>
}

func.func @mixed(%x: tensor<20x20x2xi32>) -> tensor<10x20xi32> {
  %a = "quabla.reduce_max"(%x) {dims = array<i64: 2>} : (tensor<20x20x2xi32>) -> tensor<20x20xi32>
  %b = "quabla.reshape"(%a) : (tensor<20x20xi32>) -> tensor<10x2x20xi32>
  %c = "quabla.reduce_sum"(%b) {dims = array<i64: 1>} : (tensor<10x2x20xi32>) -> tensor<10x20xi32>
  return %c : tensor<10x20xi32>
}

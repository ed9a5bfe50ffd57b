// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | FileCheck %s
// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | mlir-opt --irdl-file=%irdl
// RUN: quabla-opt %s --emit=linalg | FileCheck %s --check-prefix=LINALG
// RUN: quabla-opt %s --emit=stablehlo | FileCheck %s --check-prefix=SHLO
// RUN: quabla-opt %s --run --arg='dense<1> : tensor<i32>' --arg='dense<[1.0, -0.5]> : tensor<2xf64>' | FileCheck %s --check-prefix=ONE
// RUN: quabla-opt %s --interpret --arg='dense<1> : tensor<i32>' --arg='dense<[1.0, -0.5]> : tensor<2xf64>' | FileCheck %s --check-prefix=ONE
// RUN: quabla-opt %s --run --arg='dense<9> : tensor<i32>' --arg='dense<[1.0, -0.5]> : tensor<2xf64>' | FileCheck %s --check-prefix=LAST
// RUN: quabla-opt %s --interpret --arg='dense<-4> : tensor<i32>' --arg='dense<[1.0, -0.5]> : tensor<2xf64>' | FileCheck %s --check-prefix=LAST
// quabla.case is spelled scf.index_switch on the extracted, index_cast index: cases 0..N-2,
// then the default (the last branch, also taken by an out-of-range index as in StableHLO);
// a value a branch uses from outside (%k) becomes a captured operand. It lowers to
// scf.index_switch and exports to stablehlo.case.

// ONE: dense<[-1.0e0, 5.0e-1]> : tensor<2xf64>
// LAST: dense<[2.0e0, -1.0e0]> : tensor<2xf64>

// CHECK-LABEL: func.func @main
// CHECK: %[[I:.*]] = tensor.extract %arg0[] : tensor<i32>
// CHECK: %[[IX:.*]] = arith.index_cast %[[I]] : i32 to index
// CHECK: scf.index_switch %[[IX]] -> tensor<2xf64>
// CHECK: case 0 {
// CHECK: "quabla.sin"(%arg1)
// CHECK: case 1 {
// CHECK: "quabla.neg"(%arg1)
// CHECK: default {
// CHECK: "quabla.mul"(%arg1, %{{.*}})

// LINALG-LABEL: func.func @main
// LINALG: arith.index_cast %{{.*}} : i32 to index
// LINALG: scf.index_switch
// LINALG: case 0 {
// LINALG: math.sin
// LINALG: default {
// LINALG: arith.mulf

// SHLO: "stablehlo.case"(%{{.*}}) ({
// SHLO: stablehlo.sine
// SHLO: }, {
// SHLO: stablehlo.negate
// SHLO: }, {
// SHLO: stablehlo.multiply
// SHLO: }) : (tensor<i32>) -> (tensor<2xf64>)
func.func @main(%i: tensor<i32>, %x: tensor<2xf64>) -> tensor<2xf64> {
  %k = "quabla.constant"() {value = dense<2.0> : tensor<2xf64>} : () -> tensor<2xf64>
  %c = tensor.extract %i[] : tensor<i32>
  %ix = arith.index_cast %c : i32 to index
  %r = scf.index_switch %ix -> tensor<2xf64>
  case 0 {
    %s = "quabla.sin"(%x) : (tensor<2xf64>) -> tensor<2xf64>
    scf.yield %s : tensor<2xf64>
  }
  case 1 {
    %n = "quabla.neg"(%x) : (tensor<2xf64>) -> tensor<2xf64>
    scf.yield %n : tensor<2xf64>
  }
  default {
    %m = "quabla.mul"(%x, %k) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
    scf.yield %m : tensor<2xf64>
  }
  return %r : tensor<2xf64>
}

// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | FileCheck %s
// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | mlir-opt --irdl-file=%irdl
// RUN: quabla-opt %s --run --arg='dense<true> : tensor<i1>' --arg='dense<[1.0, -2.0]> : tensor<2xf32>' | FileCheck %s --check-prefix=TAKEN
// RUN: quabla-opt %s --interpret --arg='dense<true> : tensor<i1>' --arg='dense<[1.0, -2.0]> : tensor<2xf32>' | FileCheck %s --check-prefix=TAKEN
// RUN: quabla-opt %s --run --arg='dense<false> : tensor<i1>' --arg='dense<[1.0, -2.0]> : tensor<2xf32>' | FileCheck %s --check-prefix=OTHER
// RUN: quabla-opt %s --interpret --arg='dense<false> : tensor<i1>' --arg='dense<[1.0, -2.0]> : tensor<2xf32>' | FileCheck %s --check-prefix=OTHER
// quabla.if is spelled scf.if on the i1 of its 0-d predicate; the simplification passes work
// inside its regions (CSE merges the two sin, DCE drops the unused cos), and the JIT and the
// interpreter take the same branch.

// TAKEN: dense<[1.68294{{[0-9]*}}e0, -1.81859{{[0-9]*}}e0]> : tensor<2xf32>
// OTHER: dense<[-1.0e0, 2.0e0]> : tensor<2xf32>

// CHECK-LABEL: func.func @main
// CHECK: %[[P:.*]] = tensor.extract %arg0[] : tensor<i1>
// CHECK: scf.if %[[P]] -> (tensor<2xf32>) {
// CHECK: %[[S:.*]] = "quabla.sin"(%arg1)
// CHECK-NOT: quabla.sin
// CHECK-NOT: quabla.cos
// CHECK: "quabla.add"(%[[S]], %[[S]])
// CHECK: scf.yield
// CHECK: } else {
// CHECK: "quabla.neg"(%arg1)
// CHECK: scf.yield
func.func @main(%p: tensor<i1>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %c = tensor.extract %p[] : tensor<i1>
  %r = scf.if %c -> (tensor<2xf32>) {
    %s1 = "quabla.sin"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    %s2 = "quabla.sin"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    %unused = "quabla.cos"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    %a = "quabla.add"(%s1, %s2) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    scf.yield %a : tensor<2xf32>
  } else {
    %n = "quabla.neg"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    scf.yield %n : tensor<2xf32>
  }
  return %r : tensor<2xf32>
}

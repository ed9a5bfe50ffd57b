// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | FileCheck %s
// A constant predicate folds the if away: the taken branch's ops replace it.

// CHECK-LABEL: func.func @main
// CHECK-NOT: scf.if
// CHECK: %[[E:.*]] = "quabla.exp"(%arg0)
// CHECK-NOT: quabla.log
// CHECK: return %[[E]]
func.func @main(%x: tensor<3xf64>) -> tensor<3xf64> {
  %t = "quabla.constant"() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %c = tensor.extract %t[] : tensor<i1>
  %r = scf.if %c -> (tensor<3xf64>) {
    %e = "quabla.exp"(%x) : (tensor<3xf64>) -> tensor<3xf64>
    scf.yield %e : tensor<3xf64>
  } else {
    %l = "quabla.log"(%x) : (tensor<3xf64>) -> tensor<3xf64>
    scf.yield %l : tensor<3xf64>
  }
  return %r : tensor<3xf64>
}

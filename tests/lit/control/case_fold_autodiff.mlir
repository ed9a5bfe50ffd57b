// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-autodiff,quabla-inline,quabla-canonicalize,quabla-symbol-dce)' | FileCheck %s
// A case with a constant index folds to its branch (an out-of-range constant to the last);
// the VJP of a case is a case on the same index of the branches' VJPs.

// CHECK-LABEL: func.func @folded
// CHECK-NOT: scf.index_switch
// CHECK: "quabla.neg"(%arg0)
// CHECK-LABEL: func.func @main
// CHECK: scf.index_switch %{{.*}} -> tensor<3xf64>
// CHECK: case 0 {
// CHECK: "quabla.cos"(%arg1)
// CHECK: default {
// CHECK: "quabla.add"
// CHECK: return
func.func @folded(%x: tensor<3xf64>) -> tensor<3xf64> {
  %i = "quabla.constant"() {value = dense<7> : tensor<i64>} : () -> tensor<i64>
  %c = tensor.extract %i[] : tensor<i64>
  %ix = arith.index_cast %c : i64 to index
  %r = scf.index_switch %ix -> tensor<3xf64>
  case 0 {
    %s = "quabla.sin"(%x) : (tensor<3xf64>) -> tensor<3xf64>
    scf.yield %s : tensor<3xf64>
  }
  default {
    %n = "quabla.neg"(%x) : (tensor<3xf64>) -> tensor<3xf64>
    scf.yield %n : tensor<3xf64>
  }
  return %r : tensor<3xf64>
}
func.func private @f(%i: tensor<i64>, %x: tensor<3xf64>) -> tensor<3xf64> {
  %c = tensor.extract %i[] : tensor<i64>
  %ix = arith.index_cast %c : i64 to index
  %r = scf.index_switch %ix -> tensor<3xf64>
  case 0 {
    %s = "quabla.sin"(%x) : (tensor<3xf64>) -> tensor<3xf64>
    scf.yield %s : tensor<3xf64>
  }
  default {
    %m = "quabla.mul"(%x, %x) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    scf.yield %m : tensor<3xf64>
  }
  return %r : tensor<3xf64>
}
func.func private @f_vjp(tensor<i64>, tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>) attributes {quabla.of = @f, quabla.transform = "vjp"}
func.func @main(%i: tensor<i64>, %x: tensor<3xf64>, %ct: tensor<3xf64>) -> tensor<3xf64> {
  %r:2 = func.call @f_vjp(%i, %x, %ct) : (tensor<i64>, tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>)
  return %r#1 : tensor<3xf64>
}

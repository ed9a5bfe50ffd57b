// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-autodiff,quabla-inline,quabla-canonicalize,quabla-symbol-dce)' | FileCheck %s
// The VJP of an if is an if over (pred, captures, result cotangent) whose branches are the
// branches' VJPs: d/dx of (p ? sin(x) : x*x) is cos(x)*ct in one branch and 2x*ct in the other.
// The vmap of the same if with a batched predicate inlines both branches and selects.

// CHECK-LABEL: func.func @main(%arg0: tensor<i1>, %arg1: tensor<3xf64>, %arg2: tensor<3xf64>)
// CHECK: %[[C:.*]] = tensor.extract %arg0[]
// CHECK: %[[R:.*]] = scf.if %[[C]] -> (tensor<3xf64>) {
// CHECK-NEXT: %[[COS:.*]] = "quabla.cos"(%arg1)
// CHECK-NEXT: %[[T:.*]] = "quabla.mul"(%arg2, %[[COS]])
// CHECK-NEXT: scf.yield %[[T]]
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[M:.*]] = "quabla.mul"(%arg2, %arg1)
// CHECK-NEXT: %[[E:.*]] = "quabla.add"(%[[M]], %[[M]])
// CHECK-NEXT: scf.yield %[[E]]
// CHECK: return %[[R]]
// CHECK-LABEL: func.func @batched
// CHECK-NOT: scf.if
// CHECK-DAG: %[[S:.*]] = "quabla.sin"(%arg1)
// CHECK-DAG: %[[Q:.*]] = "quabla.mul"(%arg1, %arg1)
// CHECK-DAG: %[[P:.*]] = "quabla.broadcast_in_dim"(%arg0) {dims = array<i64: 0>}
// CHECK: %[[SEL:.*]] = "quabla.select"(%[[P]], %[[S]], %[[Q]])
// CHECK: return %[[SEL]]
func.func private @f(%p: tensor<i1>, %x: tensor<3xf64>) -> tensor<3xf64> {
  %c = tensor.extract %p[] : tensor<i1>
  %r = scf.if %c -> (tensor<3xf64>) {
    %s = "quabla.sin"(%x) : (tensor<3xf64>) -> tensor<3xf64>
    scf.yield %s : tensor<3xf64>
  } else {
    %m = "quabla.mul"(%x, %x) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    scf.yield %m : tensor<3xf64>
  }
  return %r : tensor<3xf64>
}
func.func private @f_vjp(tensor<i1>, tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>) attributes {quabla.of = @f, quabla.transform = "vjp"}
func.func private @f_vmap(tensor<2xi1>, tensor<2x3xf64>) -> tensor<2x3xf64> attributes {quabla.axis_size = 2 : i64, quabla.in_axes = array<i64: 0, 0>, quabla.out_axes = array<i64: 0>, quabla.of = @f, quabla.transform = "vmap"}
func.func @main(%p: tensor<i1>, %x: tensor<3xf64>, %ct: tensor<3xf64>) -> tensor<3xf64> {
  %r:2 = func.call @f_vjp(%p, %x, %ct) : (tensor<i1>, tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>)
  return %r#1 : tensor<3xf64>
}
func.func @batched(%p: tensor<2xi1>, %x: tensor<2x3xf64>) -> tensor<2x3xf64> {
  %r = func.call @f_vmap(%p, %x) : (tensor<2xi1>, tensor<2x3xf64>) -> tensor<2x3xf64>
  return %r : tensor<2x3xf64>
}

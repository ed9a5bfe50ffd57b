// RUN: quabla-opt %s --emit=linalg | FileCheck %s
// RUN: quabla-opt %s --pass-pipeline='builtin.module(convert-quabla-to-linalg{abi=dps})' | mlir-opt --pass-pipeline='builtin.module(func.func(linalg-fuse-elementwise-ops),eliminate-empty-tensors,canonicalize,cse,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map allow-return-allocs-from-loops},buffer-deallocation-pipeline,canonicalize)' | FileCheck %s --check-prefix=BUF
// RUN: quabla-opt %s --run --arg='dense<5> : tensor<i64>' --arg='dense<[1.0, -0.5]> : tensor<2xf64>' | FileCheck %s --check-prefix=OUT
// RUN: quabla-opt %s --interpret --arg='dense<5> : tensor<i64>' --arg='dense<[1.0, -0.5]> : tensor<2xf64>' | FileCheck %s --check-prefix=OUT
// RUN: quabla-opt %s --run --arg='dense<-2> : tensor<i64>' --arg='dense<[1.0, -0.5]> : tensor<2xf64>' | FileCheck %s --check-prefix=NONE
// A while whose counter starts at a constant, steps by a constant and is compared (lt) with
// a loop-invariant carry is a counted loop: it lowers to scf.for on i64 (the invariant bound
// and the constant multiplier are not iteration arguments), the carry is yielded through
// materialize_in_destination into its iteration argument, and after bufferization the loop
// body updates the carry's buffer in place: no allocation and no copy inside the loop (the
// read-only input is copied once, before it). The counter's final value is
// lb + max(0, ceildiv(ub - lb, step)) * step. A while stepping by a non-constant stays scf.while.

// OUT: dense<[3.2e1, -1.6e1]> : tensor<2xf64>
// OUT-NEXT: dense<5> : tensor<i64>
// NONE: dense<[1.0e0, -5.0e-1]> : tensor<2xf64>
// NONE-NEXT: dense<0> : tensor<i64>

// CHECK-LABEL: func.func @main
// CHECK-NOT: scf.while
// CHECK: %[[LB:.*]] = tensor.extract %{{.*}}[] : tensor<i64>
// CHECK: %[[UB:.*]] = tensor.extract %arg0[] : tensor<i64>
// CHECK: %[[ST:.*]] = arith.constant 1 : i64
// CHECK: %[[INIT:.*]] = bufferization.alloc_tensor() copy(%arg1) : tensor<2xf64>
// CHECK: %[[R:.*]] = scf.for %[[IV:.*]] = %[[LB]] to %[[UB]] step %[[ST]] iter_args(%[[A:.*]] = %[[INIT]]) -> (tensor<2xf64>) : i64 {
// CHECK: tensor.from_elements %[[IV]] : tensor<i64>
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[A]], %{{.*}} : tensor<2xf64>, tensor<2xf64>)
// CHECK: %[[M:.*]] = bufferization.materialize_in_destination %[[Y]] in %[[A]]
// CHECK: scf.yield %[[M]] : tensor<2xf64>
// CHECK: arith.ceildivsi
// CHECK: arith.maxsi
// CHECK-LABEL: func.func @dynamic_step
// CHECK: scf.while

// BUF-LABEL: func.func @main
// BUF: %[[A:.*]] = memref.alloc()
// BUF-NEXT: memref.copy %arg1, %[[A]]
// BUF-NEXT: scf.for
// BUF-NEXT: linalg.generic {{.*}} ins(%[[A]] : memref<2xf64>) outs(%[[A]] : memref<2xf64>)
// BUF-NEXT: ^bb0
// BUF-NEXT: arith.mulf
// BUF-NEXT: linalg.yield
// BUF-NEXT: }
// BUF-NEXT: }
func.func @main(%n: tensor<i64>, %x: tensor<2xf64>) -> (tensor<2xf64>, tensor<i64>) {
  %zero = "quabla.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %k = "quabla.constant"() {value = dense<2.0> : tensor<2xf64>} : () -> tensor<2xf64>
  %r:3 = scf.while (%i = %zero, %y = %x, %m = %n) : (tensor<i64>, tensor<2xf64>, tensor<i64>) -> (tensor<i64>, tensor<2xf64>, tensor<i64>) {
    %lt = "quabla.compare"(%i, %m) {direction = "lt"} : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %c = tensor.extract %lt[] : tensor<i1>
    scf.condition(%c) %i, %y, %m : tensor<i64>, tensor<2xf64>, tensor<i64>
  } do {
  ^bb0(%i2: tensor<i64>, %y2: tensor<2xf64>, %m2: tensor<i64>):
    %one = "quabla.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %i3 = "quabla.add"(%i2, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %y3 = "quabla.mul"(%y2, %k) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
    scf.yield %i3, %y3, %m2 : tensor<i64>, tensor<2xf64>, tensor<i64>
  }
  return %r#1, %r#0 : tensor<2xf64>, tensor<i64>
}
func.func @dynamic_step(%n: tensor<i64>, %s: tensor<i64>) -> tensor<i64> {
  %zero = "quabla.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %r:3 = scf.while (%i = %zero, %m = %n, %t = %s) : (tensor<i64>, tensor<i64>, tensor<i64>) -> (tensor<i64>, tensor<i64>, tensor<i64>) {
    %lt = "quabla.compare"(%i, %m) {direction = "lt"} : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %c = tensor.extract %lt[] : tensor<i1>
    scf.condition(%c) %i, %m, %t : tensor<i64>, tensor<i64>, tensor<i64>
  } do {
  ^bb0(%i2: tensor<i64>, %m2: tensor<i64>, %t2: tensor<i64>):
    %i3 = "quabla.add"(%i2, %t2) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    scf.yield %i3, %m2, %t2 : tensor<i64>, tensor<i64>, tensor<i64>
  }
  return %r#0 : tensor<i64>
}

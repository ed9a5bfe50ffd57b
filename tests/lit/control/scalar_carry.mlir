// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize,convert-quabla-to-linalg,func.func(linalg-fuse-elementwise-ops),eliminate-empty-tensors,canonicalize,cse,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map allow-return-allocs-from-loops},buffer-deallocation-pipeline)' | FileCheck %s --check-prefix=BUF
// RUN: quabla-opt %s --run --arg='dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf64>' | FileCheck %s --check-prefix=OUT
// RUN: quabla-opt %s --interpret --arg='dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf64>' | FileCheck %s --check-prefix=OUT
// A scan stacking its old 0-d carry (c <- 0.5 c + x_t, y_t = c): the counted loop carries
// the scalar (control.rs lower_for), so the loop allocates nothing per iteration (a tensor
// carry read after its update took a new buffer each step); the one-element update of ys is
// a store of the element.

// c: 0, 1, 2.5, 4.25, then 6.125; ys the carries before each step.
// OUT: dense<[0.0e0, 1.0e0, 2.5e0, 4.25e0]> : tensor<4xf64>
// OUT-NEXT: dense<6.125e0> : tensor<f64>

// BUF-LABEL: func.func @main
// BUF: scf.for {{.*}} iter_args({{.*}}) -> (f64) {{ *}}: i64 {
// BUF-NOT: memref.alloc
// BUF: scf.yield {{.*}} : f64
func.func @main(%xs: tensor<4xf64>) -> (tensor<4xf64>, tensor<f64>) {
  %i0 = "quabla.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %c0 = "quabla.constant"() {value = dense<0.0> : tensor<f64>} : () -> tensor<f64>
  %ys0 = "quabla.constant"() {value = dense<0.0> : tensor<4xf64>} : () -> tensor<4xf64>
  %r:4 = scf.while (%i = %i0, %c = %c0, %ys = %ys0, %x = %xs) : (tensor<i64>, tensor<f64>, tensor<4xf64>, tensor<4xf64>) -> (tensor<i64>, tensor<f64>, tensor<4xf64>, tensor<4xf64>) {
    %n = "quabla.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %p = "quabla.compare"(%i, %n) {direction = "lt"} : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %b = tensor.extract %p[] : tensor<i1>
    scf.condition(%b) %i, %c, %ys, %x : tensor<i64>, tensor<f64>, tensor<4xf64>, tensor<4xf64>
  } do {
  ^bb0(%i: tensor<i64>, %c: tensor<f64>, %ys: tensor<4xf64>, %x: tensor<4xf64>):
    %xt1 = "quabla.dynamic_slice"(%x, %i) {slice_sizes = array<i64: 1>} : (tensor<4xf64>, tensor<i64>) -> tensor<1xf64>
    %xt = "quabla.reshape"(%xt1) : (tensor<1xf64>) -> tensor<f64>
    %h = "quabla.constant"() {value = dense<0.5> : tensor<f64>} : () -> tensor<f64>
    %m = "quabla.mul"(%c, %h) : (tensor<f64>, tensor<f64>) -> tensor<f64>
    %c2 = "quabla.add"(%m, %xt) : (tensor<f64>, tensor<f64>) -> tensor<f64>
    %cv = "quabla.reshape"(%c) : (tensor<f64>) -> tensor<1xf64>
    %ys2 = "quabla.dynamic_update_slice"(%ys, %cv, %i) : (tensor<4xf64>, tensor<1xf64>, tensor<i64>) -> tensor<4xf64>
    %one = "quabla.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %i2 = "quabla.add"(%i, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    scf.yield %i2, %c2, %ys2, %x : tensor<i64>, tensor<f64>, tensor<4xf64>, tensor<4xf64>
  }
  return %r#2, %r#1 : tensor<4xf64>, tensor<f64>
}

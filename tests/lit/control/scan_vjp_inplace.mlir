// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-autodiff,quabla-inline,quabla-canonicalize,quabla-symbol-dce,convert-quabla-to-linalg,func.func(linalg-fuse-elementwise-ops),eliminate-empty-tensors,canonicalize,cse,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map allow-return-allocs-from-loops},buffer-deallocation-pipeline)' | FileCheck %s --check-prefix=BUF --strict-whitespace
// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-autodiff)' > %t.mlir
// RUN: quabla-opt %t.mlir --run --arg='dense<[0.5, -0.7]> : tensor<2xf64>' --arg='dense<[[0.1, 0.2], [-0.3, 0.4], [0.5, -0.6]]> : tensor<3x2xf64>' | FileCheck %s --check-prefix=OUT
// RUN: quabla-opt %t.mlir --interpret --arg='dense<[0.5, -0.7]> : tensor<2xf64>' --arg='dense<[[0.1, 0.2], [-0.3, 0.4], [0.5, -0.6]]> : tensor<3x2xf64>' | FileCheck %s --check-prefix=OUT
// The gradient of a scan with stacked outputs (h <- tanh(h * w + x_t), y_t = 2 h; loss
// sum(ys**2) + sum(h)) is linear in the trip count: after bufferization neither the forward
// loop (which stacks ys and the residual h) nor the backward loop (which reads the ys
// cotangent's window, zeroes it, and accumulates the xs cotangent's window) copies a whole
// [3, 2] buffer per iteration; only windows ([1, 2]) are copied inside the loops. The VJP of
// dynamic_update_slice reads the window before zeroing it, so the zeroing writes in place.
// The numbers are jax.grad of the same loss (x64).

// OUT: dense<[-8.5355234839517{{[0-9]*}}e-1, 7.0189078466{{[0-9]*}}e-2]> : tensor<2xf64>
// OUT: dense<{{\[\[}}6.63337845470{{[0-9]*}}e-1, -8.3649353261{{[0-9]*}}e-1], [-2.5470118462{{[0-9]*}}e-1, 3.49914907395{{[0-9]*}}e0], [3.3792422822{{[0-9]*}}e0, -2.4235336467{{[0-9]*}}e0]]> : tensor<3x2xf64>

// BUF-LABEL: func.func @main
// BUF: scf.for
// BUF-NOT: memref<3x2xf64> to memref<3x2xf64>
// BUF: {{^    }$}}
// BUF: scf.for
// BUF-NOT: memref<3x2xf64> to memref<3x2xf64>
// BUF: {{^    }$}}
// BUF-NOT: scf.for
// BUF: return
func.func @f(%w: tensor<2xf64>, %xs: tensor<3x2xf64>) -> tensor<f64> {
  %c0 = "quabla.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %h0 = "quabla.constant"() {value = dense<0.0> : tensor<2xf64>} : () -> tensor<2xf64>
  %ys0 = "quabla.constant"() {value = dense<0.0> : tensor<3x2xf64>} : () -> tensor<3x2xf64>
  %r:5 = scf.while (%i = %c0, %h = %h0, %ys = %ys0, %x = %xs, %v = %w) : (tensor<i64>, tensor<2xf64>, tensor<3x2xf64>, tensor<3x2xf64>, tensor<2xf64>) -> (tensor<i64>, tensor<2xf64>, tensor<3x2xf64>, tensor<3x2xf64>, tensor<2xf64>) {
    %n = "quabla.constant"() {value = dense<3> : tensor<i64>} : () -> tensor<i64>
    %lt = "quabla.compare"(%i, %n) {direction = "lt"} : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %c = tensor.extract %lt[] : tensor<i1>
    scf.condition(%c) %i, %h, %ys, %x, %v : tensor<i64>, tensor<2xf64>, tensor<3x2xf64>, tensor<3x2xf64>, tensor<2xf64>
  } do {
  ^bb0(%i2: tensor<i64>, %h2: tensor<2xf64>, %ys2: tensor<3x2xf64>, %x2: tensor<3x2xf64>, %v2: tensor<2xf64>):
    %z = "quabla.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
    %xw = "quabla.dynamic_slice"(%x2, %i2, %z) {slice_sizes = array<i64: 1, 2>} : (tensor<3x2xf64>, tensor<i64>, tensor<i64>) -> tensor<1x2xf64>
    %xt = "quabla.reshape"(%xw) : (tensor<1x2xf64>) -> tensor<2xf64>
    %a = "quabla.mul"(%h2, %v2) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
    %b = "quabla.add"(%a, %xt) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
    %h3 = "quabla.tanh"(%b) : (tensor<2xf64>) -> tensor<2xf64>
    %two = "quabla.constant"() {value = dense<2.0> : tensor<2xf64>} : () -> tensor<2xf64>
    %y = "quabla.mul"(%h3, %two) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
    %yw = "quabla.reshape"(%y) : (tensor<2xf64>) -> tensor<1x2xf64>
    %ys3 = "quabla.dynamic_update_slice"(%ys2, %yw, %i2, %z) : (tensor<3x2xf64>, tensor<1x2xf64>, tensor<i64>, tensor<i64>) -> tensor<3x2xf64>
    %one = "quabla.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %i3 = "quabla.add"(%i2, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    scf.yield %i3, %h3, %ys3, %x2, %v2 : tensor<i64>, tensor<2xf64>, tensor<3x2xf64>, tensor<3x2xf64>, tensor<2xf64>
  }
  %sq = "quabla.mul"(%r#2, %r#2) : (tensor<3x2xf64>, tensor<3x2xf64>) -> tensor<3x2xf64>
  %s1 = "quabla.reduce_sum"(%sq) {dims = array<i64: 0, 1>} : (tensor<3x2xf64>) -> tensor<f64>
  %s2 = "quabla.reduce_sum"(%r#1) {dims = array<i64: 0>} : (tensor<2xf64>) -> tensor<f64>
  %l = "quabla.add"(%s1, %s2) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  return %l : tensor<f64>
}
func.func private @vjp_f(tensor<2xf64>, tensor<3x2xf64>, tensor<f64>) -> (tensor<f64>, tensor<2xf64>, tensor<3x2xf64>) attributes {quabla.of = @f, quabla.transform = "vjp"}
func.func @main(%w: tensor<2xf64>, %xs: tensor<3x2xf64>) -> (tensor<2xf64>, tensor<3x2xf64>) {
  %one = "quabla.constant"() {value = dense<1.0> : tensor<f64>} : () -> tensor<f64>
  %r:3 = func.call @vjp_f(%w, %xs, %one) : (tensor<2xf64>, tensor<3x2xf64>, tensor<f64>) -> (tensor<f64>, tensor<2xf64>, tensor<3x2xf64>)
  return %r#1, %r#2 : tensor<2xf64>, tensor<3x2xf64>
}

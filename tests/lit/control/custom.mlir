// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | FileCheck %s --check-prefix=KEEP
// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-autodiff,quabla-inline,quabla-canonicalize,quabla-symbol-dce)' | FileCheck %s
// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-autodiff)' --run --arg='dense<[0.5, -1.0]> : tensor<2xf64>' --arg='dense<[1.0, 3.0]> : tensor<2xf64>' | FileCheck %s --check-prefix=OUT
// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-autodiff)' --interpret --arg='dense<[0.5, -1.0]> : tensor<2xf64>' --arg='dense<[1.0, 3.0]> : tensor<2xf64>' | FileCheck %s --check-prefix=OUT
// A custom_jvp_call is spelled as a func.call of its outlined primal body naming its outlined
// jvp rule (@__qb_custom_<f>_<k>_{primal,jvp}); the quabla passes keep it (KEEP) and the
// autodiff pass uses the rule: the VJP of sin(x) with rule tangent 2*t is 2*ct, not cos(x)*ct.

// OUT: dense<[2.0e0, 6.0e0]> : tensor<2xf64>

// KEEP-LABEL: func.func private @f
// KEEP: call @__qb_custom_f_{{[0-9]+}}_primal(%arg0) {quabla.custom_jvp = @__qb_custom_f_{{[0-9]+}}_jvp}
// KEEP: func.func private @__qb_custom_f_{{[0-9]+}}_primal
// KEEP: "quabla.sin"
// KEEP: func.func private @__qb_custom_f_{{[0-9]+}}_jvp

// CHECK-LABEL: func.func @main(%arg0: tensor<2xf64>, %arg1: tensor<2xf64>)
// CHECK-NOT: quabla.cos
// CHECK-NOT: __qb_custom
// CHECK: %[[R:.*]] = "quabla.add"(%arg1, %arg1)
// CHECK: return %[[R]]
func.func private @f(%x: tensor<2xf64>) -> tensor<2xf64> {
  %r = func.call @__qb_custom_f_1_primal(%x) {quabla.custom_jvp = @__qb_custom_f_1_jvp} : (tensor<2xf64>) -> tensor<2xf64>
  return %r : tensor<2xf64>
}
func.func private @__qb_custom_f_1_primal(%x: tensor<2xf64>) -> tensor<2xf64> {
  %s = "quabla.sin"(%x) : (tensor<2xf64>) -> tensor<2xf64>
  return %s : tensor<2xf64>
}
func.func private @__qb_custom_f_1_jvp(%x: tensor<2xf64>, %t: tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>) {
  %s = "quabla.sin"(%x) : (tensor<2xf64>) -> tensor<2xf64>
  %d = "quabla.add"(%t, %t) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
  return %s, %d : tensor<2xf64>, tensor<2xf64>
}
func.func private @f_vjp(tensor<2xf64>, tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>) attributes {quabla.of = @f, quabla.transform = "vjp"}
func.func @main(%x: tensor<2xf64>, %ct: tensor<2xf64>) -> tensor<2xf64> {
  %r:2 = func.call @f_vjp(%x, %ct) : (tensor<2xf64>, tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>)
  return %r#1 : tensor<2xf64>
}

// RUN: quabla-opt %s --emit=linalg | FileCheck %s
// Elementwise fusion at the linalg lowering (lowering/src/linalg/elementwise.rs): a scalar
// broadcast with several uses is read through a `()` map, not materialised as a fill; a value
// with several uses (a result, and read by a later chain) is yielded by that chain's generic.

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[S:.*]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @main
// No fill of the broadcast: one generic reads %s through `()` and yields p and m.
// CHECK-NOT: linalg.generic
// CHECK: %[[G:.*]]:2 = linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[ID]], #[[S]], #[[ID]], #[[ID]]], iterator_types = ["parallel"]} ins(%arg0, %arg1, %arg2, %arg3 : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<f32>)
// CHECK: %[[M1:.*]] = arith.mulf
// CHECK: %[[MN:.*]] = arith.addf %[[M1]]
// CHECK: arith.divf %[[MN]]
// CHECK: %[[P:.*]] = arith.subf
// CHECK: linalg.yield %[[P]], %[[MN]] : f32, f32
// CHECK-NOT: linalg.generic
// CHECK: return %[[G]]#0, %[[G]]#1
func.func @main(%p: tensor<64xf32>, %g: tensor<64xf32>, %m: tensor<64xf32>, %s: tensor<f32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %sb = "quabla.broadcast_in_dim"(%s) {dims = array<i64>} : (tensor<f32>) -> tensor<64xf32>
  %m1 = "quabla.mul"(%sb, %m) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %mn = "quabla.add"(%m1, %g) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %u = "quabla.div"(%mn, %sb) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %pn = "quabla.sub"(%p, %u) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return %pn, %mn : tensor<64xf32>, tensor<64xf32>
}

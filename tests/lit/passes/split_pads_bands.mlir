// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | FileCheck %s
// RUN: quabla-opt %s --run | FileCheck %s --check-prefix=OUT
// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | quabla-opt --run | FileCheck %s --check-prefix=OUT
// fold.rs split_pads' bands: a 5-point stencil's adjoint (the sum of five pads of one computed
// array c) over 512 x 512 has cuts at 0, 1, 2, 510, 511, 512 along both dims; the two first
// and the two last rows are one thin band each (one box reading small pads), and so are the
// two first and the two last columns of the rows between: 5 boxes, 4 concatenations. Over
// 128 x 128 the boxes would hold fewer than 16384 elements each: not split (the pads stay).

// CHECK-LABEL: func.func @main
// CHECK-COUNT-4: "quabla.concatenate"
// CHECK-NOT: "quabla.concatenate"
// CHECK: "quabla.pad"({{.*}}tensor<126x126xi32>
// CHECK: return

// x = i * j; row sums of the adjoint at the first and last three rows, i32 (wrapping).
// OUT: dense<[44347135, 221735675, 620859890]> : tensor<3xi32>
// OUT-NEXT: dense<[1476392675, -1129777421, -1592343556]> : tensor<3xi32>
// OUT-NEXT: dense<[674751, 3373755, 9446514]> : tensor<3xi32>
// OUT-NEXT: dense<[1565531555, -219505229, 2122412284]> : tensor<3xi32>
func.func @main() -> (tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>) {
  %zero = "quabla.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %iL = "quabla.iota"() {dim = 0 : i64} : () -> tensor<512x512xi32>
  %jL = "quabla.iota"() {dim = 1 : i64} : () -> tensor<512x512xi32>
  %xL = "quabla.mul"(%iL, %jL) : (tensor<512x512xi32>, tensor<512x512xi32>) -> tensor<512x512xi32>
  %inL = "quabla.slice"(%xL) {start_indices = array<i64: 1, 1>, limit_indices = array<i64: 511, 511>, strides = array<i64: 1, 1>} : (tensor<512x512xi32>) -> tensor<510x510xi32>
  %cL = "quabla.mul"(%inL, %inL) : (tensor<510x510xi32>, tensor<510x510xi32>) -> tensor<510x510xi32>
  %p0L = "quabla.pad"(%cL, %zero) {edge_padding_low = array<i64: 2, 1>, edge_padding_high = array<i64: 0, 1>, interior_padding = array<i64: 0, 0>} : (tensor<510x510xi32>, tensor<i32>) -> tensor<512x512xi32>
  %p1L = "quabla.pad"(%cL, %zero) {edge_padding_low = array<i64: 0, 1>, edge_padding_high = array<i64: 2, 1>, interior_padding = array<i64: 0, 0>} : (tensor<510x510xi32>, tensor<i32>) -> tensor<512x512xi32>
  %p2L = "quabla.pad"(%cL, %zero) {edge_padding_low = array<i64: 1, 2>, edge_padding_high = array<i64: 1, 0>, interior_padding = array<i64: 0, 0>} : (tensor<510x510xi32>, tensor<i32>) -> tensor<512x512xi32>
  %p3L = "quabla.pad"(%cL, %zero) {edge_padding_low = array<i64: 1, 0>, edge_padding_high = array<i64: 1, 2>, interior_padding = array<i64: 0, 0>} : (tensor<510x510xi32>, tensor<i32>) -> tensor<512x512xi32>
  %p4L = "quabla.pad"(%cL, %zero) {edge_padding_low = array<i64: 1, 1>, edge_padding_high = array<i64: 1, 1>, interior_padding = array<i64: 0, 0>} : (tensor<510x510xi32>, tensor<i32>) -> tensor<512x512xi32>
  %s0L = "quabla.add"(%p0L, %p1L) : (tensor<512x512xi32>, tensor<512x512xi32>) -> tensor<512x512xi32>
  %s1L = "quabla.add"(%s0L, %p2L) : (tensor<512x512xi32>, tensor<512x512xi32>) -> tensor<512x512xi32>
  %s2L = "quabla.add"(%s1L, %p3L) : (tensor<512x512xi32>, tensor<512x512xi32>) -> tensor<512x512xi32>
  %s3L = "quabla.sub"(%s2L, %p4L) : (tensor<512x512xi32>, tensor<512x512xi32>) -> tensor<512x512xi32>
  %rL = "quabla.reduce_sum"(%s3L) {dims = array<i64: 1>} : (tensor<512x512xi32>) -> tensor<512xi32>
  %aL = "quabla.slice"(%rL) {start_indices = array<i64: 0>, limit_indices = array<i64: 3>, strides = array<i64: 1>} : (tensor<512xi32>) -> tensor<3xi32>
  %bL = "quabla.slice"(%rL) {start_indices = array<i64: 509>, limit_indices = array<i64: 512>, strides = array<i64: 1>} : (tensor<512xi32>) -> tensor<3xi32>
  %iS = "quabla.iota"() {dim = 0 : i64} : () -> tensor<128x128xi32>
  %jS = "quabla.iota"() {dim = 1 : i64} : () -> tensor<128x128xi32>
  %xS = "quabla.mul"(%iS, %jS) : (tensor<128x128xi32>, tensor<128x128xi32>) -> tensor<128x128xi32>
  %inS = "quabla.slice"(%xS) {start_indices = array<i64: 1, 1>, limit_indices = array<i64: 127, 127>, strides = array<i64: 1, 1>} : (tensor<128x128xi32>) -> tensor<126x126xi32>
  %cS = "quabla.mul"(%inS, %inS) : (tensor<126x126xi32>, tensor<126x126xi32>) -> tensor<126x126xi32>
  %p0S = "quabla.pad"(%cS, %zero) {edge_padding_low = array<i64: 2, 1>, edge_padding_high = array<i64: 0, 1>, interior_padding = array<i64: 0, 0>} : (tensor<126x126xi32>, tensor<i32>) -> tensor<128x128xi32>
  %p1S = "quabla.pad"(%cS, %zero) {edge_padding_low = array<i64: 0, 1>, edge_padding_high = array<i64: 2, 1>, interior_padding = array<i64: 0, 0>} : (tensor<126x126xi32>, tensor<i32>) -> tensor<128x128xi32>
  %p2S = "quabla.pad"(%cS, %zero) {edge_padding_low = array<i64: 1, 2>, edge_padding_high = array<i64: 1, 0>, interior_padding = array<i64: 0, 0>} : (tensor<126x126xi32>, tensor<i32>) -> tensor<128x128xi32>
  %p3S = "quabla.pad"(%cS, %zero) {edge_padding_low = array<i64: 1, 0>, edge_padding_high = array<i64: 1, 2>, interior_padding = array<i64: 0, 0>} : (tensor<126x126xi32>, tensor<i32>) -> tensor<128x128xi32>
  %p4S = "quabla.pad"(%cS, %zero) {edge_padding_low = array<i64: 1, 1>, edge_padding_high = array<i64: 1, 1>, interior_padding = array<i64: 0, 0>} : (tensor<126x126xi32>, tensor<i32>) -> tensor<128x128xi32>
  %s0S = "quabla.add"(%p0S, %p1S) : (tensor<128x128xi32>, tensor<128x128xi32>) -> tensor<128x128xi32>
  %s1S = "quabla.add"(%s0S, %p2S) : (tensor<128x128xi32>, tensor<128x128xi32>) -> tensor<128x128xi32>
  %s2S = "quabla.add"(%s1S, %p3S) : (tensor<128x128xi32>, tensor<128x128xi32>) -> tensor<128x128xi32>
  %s3S = "quabla.sub"(%s2S, %p4S) : (tensor<128x128xi32>, tensor<128x128xi32>) -> tensor<128x128xi32>
  %rS = "quabla.reduce_sum"(%s3S) {dims = array<i64: 1>} : (tensor<128x128xi32>) -> tensor<128xi32>
  %aS = "quabla.slice"(%rS) {start_indices = array<i64: 0>, limit_indices = array<i64: 3>, strides = array<i64: 1>} : (tensor<128xi32>) -> tensor<3xi32>
  %bS = "quabla.slice"(%rS) {start_indices = array<i64: 125>, limit_indices = array<i64: 128>, strides = array<i64: 1>} : (tensor<128xi32>) -> tensor<3xi32>
  return %aL, %bL, %aS, %bS : tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>
}

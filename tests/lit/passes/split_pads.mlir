// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | FileCheck %s
// RUN: quabla-opt %s --run | FileCheck %s --check-prefix=OUT
// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-canonicalize)' | quabla-opt --run | FileCheck %s --check-prefix=OUT
// An elementwise op over pads of computed arrays is the concatenation of the op over the
// boxes between the pads' edges (fold.rs split_pads), each box reading slices of what the pads
// were computed from (cheap chains recomputed, slices of slices merged): the gradient of
// sum(diff(x) ** 2), 3 boxes along one dim; a pad along both dims read with x: its first and
// last rows are thin bands (one box each, all padding), the rows between two boxes. No pad is
// left, and the results are those of the pads.

// CHECK-LABEL: func.func @main
// CHECK-NOT: "quabla.pad"
// Boxes: 3 for g (2 joins), 4 for h (3 joins).
// CHECK-COUNT-5: "quabla.concatenate"
// CHECK-NOT: "quabla.concatenate"
// CHECK-NOT: "quabla.pad"
// CHECK: return

// x = i * j over 256 x 256; the gradient's columns are -3i, 3i (254 of them), 6i, summed over i.
// OUT: dense<[-97920, 97920, 97920]> : tensor<3xi32>
// OUT-NEXT: dense<[97920, 97920, 195840]> : tensor<3xi32>
// h = x + pad(x[1:255, 2:256] ** 2) over 256 x 256 (zero first and last rows, first two
// columns), summed over j (i32 sums wrap).
// OUT-NEXT: dense<[0, 5592319, 22303996]> : tensor<3xi32>
// OUT-NEXT: dense<[-604534537, -2080711940, 8323200]> : tensor<3xi32>
func.func @main() -> (tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>) {
  %i = "quabla.iota"() {dim = 0 : i64} : () -> tensor<256x256xi32>
  %j = "quabla.iota"() {dim = 1 : i64} : () -> tensor<256x256xi32>
  %x = "quabla.mul"(%i, %j) : (tensor<256x256xi32>, tensor<256x256xi32>) -> tensor<256x256xi32>
  %zero = "quabla.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %three = "quabla.constant"() {value = dense<3> : tensor<256x255xi32>} : () -> tensor<256x255xi32>
  %two = "quabla.constant"() {value = dense<2> : tensor<256x256xi32>} : () -> tensor<256x256xi32>
  %hi = "quabla.slice"(%x) {start_indices = array<i64: 0, 1>, limit_indices = array<i64: 256, 256>, strides = array<i64: 1, 1>} : (tensor<256x256xi32>) -> tensor<256x255xi32>
  %lo = "quabla.slice"(%x) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 256, 255>, strides = array<i64: 1, 1>} : (tensor<256x256xi32>) -> tensor<256x255xi32>
  %d = "quabla.sub"(%hi, %lo) : (tensor<256x255xi32>, tensor<256x255xi32>) -> tensor<256x255xi32>
  %t = "quabla.mul"(%three, %d) : (tensor<256x255xi32>, tensor<256x255xi32>) -> tensor<256x255xi32>
  %n = "quabla.neg"(%t) : (tensor<256x255xi32>) -> tensor<256x255xi32>
  %pa = "quabla.pad"(%n, %zero) {edge_padding_low = array<i64: 0, 0>, edge_padding_high = array<i64: 0, 1>, interior_padding = array<i64: 0, 0>} : (tensor<256x255xi32>, tensor<i32>) -> tensor<256x256xi32>
  %pb = "quabla.pad"(%t, %zero) {edge_padding_low = array<i64: 0, 1>, edge_padding_high = array<i64: 0, 0>, interior_padding = array<i64: 0, 0>} : (tensor<256x255xi32>, tensor<i32>) -> tensor<256x256xi32>
  %pb2 = "quabla.mul"(%pb, %two) : (tensor<256x256xi32>, tensor<256x256xi32>) -> tensor<256x256xi32>
  %g = "quabla.add"(%pa, %pb2) : (tensor<256x256xi32>, tensor<256x256xi32>) -> tensor<256x256xi32>
  %gs = "quabla.reduce_sum"(%g) {dims = array<i64: 0>} : (tensor<256x256xi32>) -> tensor<256xi32>
  %g0 = "quabla.slice"(%gs) {start_indices = array<i64: 0>, limit_indices = array<i64: 3>, strides = array<i64: 1>} : (tensor<256xi32>) -> tensor<3xi32>
  %g1 = "quabla.slice"(%gs) {start_indices = array<i64: 253>, limit_indices = array<i64: 256>, strides = array<i64: 1>} : (tensor<256xi32>) -> tensor<3xi32>
  %i2 = "quabla.iota"() {dim = 0 : i64} : () -> tensor<256x256xi32>
  %j2 = "quabla.iota"() {dim = 1 : i64} : () -> tensor<256x256xi32>
  %x2 = "quabla.mul"(%i2, %j2) : (tensor<256x256xi32>, tensor<256x256xi32>) -> tensor<256x256xi32>
  %in = "quabla.slice"(%x2) {start_indices = array<i64: 1, 2>, limit_indices = array<i64: 255, 256>, strides = array<i64: 1, 1>} : (tensor<256x256xi32>) -> tensor<254x254xi32>
  %sq = "quabla.mul"(%in, %in) : (tensor<254x254xi32>, tensor<254x254xi32>) -> tensor<254x254xi32>
  %ph = "quabla.pad"(%sq, %zero) {edge_padding_low = array<i64: 1, 2>, edge_padding_high = array<i64: 1, 0>, interior_padding = array<i64: 0, 0>} : (tensor<254x254xi32>, tensor<i32>) -> tensor<256x256xi32>
  %h = "quabla.add"(%x2, %ph) : (tensor<256x256xi32>, tensor<256x256xi32>) -> tensor<256x256xi32>
  %hs = "quabla.reduce_sum"(%h) {dims = array<i64: 1>} : (tensor<256x256xi32>) -> tensor<256xi32>
  %h0 = "quabla.slice"(%hs) {start_indices = array<i64: 0>, limit_indices = array<i64: 3>, strides = array<i64: 1>} : (tensor<256xi32>) -> tensor<3xi32>
  %h1 = "quabla.slice"(%hs) {start_indices = array<i64: 253>, limit_indices = array<i64: 256>, strides = array<i64: 1>} : (tensor<256xi32>) -> tensor<3xi32>
  return %g0, %g1, %h0, %h1 : tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>
}

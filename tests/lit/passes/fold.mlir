// RUN: quabla-opt %s --split-input-file --pass-pipeline='builtin.module(quabla-fold,quabla-dce)' | FileCheck %s

// Constant folding through the reference interpreter.
// CHECK-LABEL: func.func @consts
// CHECK-NEXT: %[[C:.*]] = "quabla.constant"() {value = dense<[3.000000e+00, 5.000000e+00]> : tensor<2xf32>}
// CHECK-NEXT: return %[[C]]
func.func @consts() -> tensor<2xf32> {
  %a = "quabla.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %b = "quabla.constant"() {value = dense<[2.0, 3.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %c = "quabla.add"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %c : tensor<2xf32>
}

// -----

// Identities: x*1, x+0, neg(neg(x)), transpose of transpose, reshape of reshape.
// CHECK-LABEL: func.func @identities
// CHECK-NOT: quabla.mul
// CHECK-NOT: quabla.neg
// CHECK-NOT: quabla.transpose
// CHECK: %[[R:.*]] = "quabla.reshape"(%arg0)
// CHECK: return %arg0, %arg0, %[[R]]
func.func @identities(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<6xf32>) {
  %one = "quabla.constant"() {value = dense<1.0> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %zero = "quabla.constant"() {value = dense<0.0> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %0 = "quabla.mul"(%x, %one) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "quabla.add"(%zero, %0) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = "quabla.neg"(%1) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = "quabla.neg"(%2) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = "quabla.transpose"(%3) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %5 = "quabla.transpose"(%4) {perm = array<i64: 1, 0>} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  %6 = "quabla.reshape"(%x) : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %7 = "quabla.reshape"(%6) : (tensor<3x2xf32>) -> tensor<6xf32>
  return %3, %5, %7 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<6xf32>
}

// -----

// A broadcast of a splat constant becomes a splat of the result shape.
// CHECK-LABEL: func.func @splat
// CHECK: "quabla.constant"() {{.*}}dense<1.500000e+00> : tensor<4x8xf64>
// CHECK-NOT: broadcast_in_dim
func.func @splat(%x: tensor<4x8xf64>) -> tensor<4x8xf64> {
  %c = "quabla.constant"() {value = dense<1.5> : tensor<f64>} : () -> tensor<f64>
  %b = "quabla.broadcast_in_dim"(%c) {dims = array<i64>} : (tensor<f64>) -> tensor<4x8xf64>
  %y = "quabla.mul"(%x, %b) : (tensor<4x8xf64>, tensor<4x8xf64>) -> tensor<4x8xf64>
  return %y : tensor<4x8xf64>
}

// -----

// A broadcast of a splat to a large shape stays a broadcast of the scalar (no dense constant
// of a million elements in the IR), and the identities still see the splat through it.
// CHECK-LABEL: func.func @large_splat
// CHECK: %[[C:.*]] = "quabla.constant"() {value = dense<2.000000e+00> : tensor<f32>}
// CHECK: %[[B:.*]] = "quabla.broadcast_in_dim"(%[[C]])
// CHECK: %[[M:.*]] = "quabla.mul"(%arg0, %[[B]])
// CHECK-NOT: quabla.add
// CHECK: return %[[M]]
func.func @large_splat(%x: tensor<1000x1000xf32>) -> tensor<1000x1000xf32> {
  %c = "quabla.constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %b = "quabla.broadcast_in_dim"(%c) {dims = array<i64>} : (tensor<f32>) -> tensor<1000x1000xf32>
  %m = "quabla.mul"(%x, %b) : (tensor<1000x1000xf32>, tensor<1000x1000xf32>) -> tensor<1000x1000xf32>
  %z = "quabla.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %zb = "quabla.broadcast_in_dim"(%z) {dims = array<i64>} : (tensor<f32>) -> tensor<1000x1000xf32>
  %r = "quabla.add"(%m, %zb) : (tensor<1000x1000xf32>, tensor<1000x1000xf32>) -> tensor<1000x1000xf32>
  return %r : tensor<1000x1000xf32>
}

// -----

// The transpose of a product's only use that swaps its free dims is the product with its
// operands swapped (autodiff's weight gradients); a batched one keeps its batch dim first.
// CHECK-LABEL: func.func @transposed_dot
// CHECK-NOT: quabla.transpose
// CHECK: %[[D:.*]] = "quabla.dot_general"(%arg1, %arg0) {lhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 0>, rhs_batching_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<4x5xf32>, tensor<4x3xf32>) -> tensor<5x3xf32>
// CHECK: %[[B:.*]] = "quabla.dot_general"(%arg3, %arg2) {lhs_batching_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 1>, rhs_batching_dimensions = array<i64: 0>, rhs_contracting_dimensions = array<i64: 2>} : (tensor<2x4x6xf32>, tensor<2x3x4xf32>) -> tensor<2x6x3xf32>
// CHECK: return %[[D]], %[[B]]
func.func @transposed_dot(%a: tensor<4x3xf32>, %b: tensor<4x5xf32>, %c: tensor<2x3x4xf32>, %d: tensor<2x4x6xf32>) -> (tensor<5x3xf32>, tensor<2x6x3xf32>) {
  %0 = "quabla.dot_general"(%a, %b) {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 0>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<4x3xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %1 = "quabla.transpose"(%0) {perm = array<i64: 1, 0>} : (tensor<3x5xf32>) -> tensor<5x3xf32>
  %2 = "quabla.dot_general"(%c, %d) {lhs_batching_dimensions = array<i64: 0>, rhs_batching_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 2>, rhs_contracting_dimensions = array<i64: 1>} : (tensor<2x3x4xf32>, tensor<2x4x6xf32>) -> tensor<2x3x6xf32>
  %3 = "quabla.transpose"(%2) {perm = array<i64: 0, 2, 1>} : (tensor<2x3x6xf32>) -> tensor<2x6x3xf32>
  return %1, %3 : tensor<5x3xf32>, tensor<2x6x3xf32>
}

// -----

// Not when the product has another use (that would compute it twice), nor for a perm that
// moves the batch dim.
// CHECK-LABEL: func.func @transposed_dot_kept
// CHECK: "quabla.transpose"
// CHECK: "quabla.transpose"
func.func @transposed_dot_kept(%a: tensor<4x3xf32>, %b: tensor<4x5xf32>, %c: tensor<2x3x4xf32>, %d: tensor<2x4x6xf32>) -> (tensor<5x3xf32>, tensor<3x5xf32>, tensor<6x3x2xf32>) {
  %0 = "quabla.dot_general"(%a, %b) {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 0>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<4x3xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %1 = "quabla.transpose"(%0) {perm = array<i64: 1, 0>} : (tensor<3x5xf32>) -> tensor<5x3xf32>
  %2 = "quabla.dot_general"(%c, %d) {lhs_batching_dimensions = array<i64: 0>, rhs_batching_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 2>, rhs_contracting_dimensions = array<i64: 1>} : (tensor<2x3x4xf32>, tensor<2x4x6xf32>) -> tensor<2x3x6xf32>
  %3 = "quabla.transpose"(%2) {perm = array<i64: 2, 1, 0>} : (tensor<2x3x6xf32>) -> tensor<6x3x2xf32>
  return %1, %0, %3 : tensor<5x3xf32>, tensor<3x5xf32>, tensor<6x3x2xf32>
}

// -----

// A product of a transposed operand (the transpose's only use) reads the operand itself, its
// dims mapped through the perm: `x @ W.T`, `a.T @ b`, a batched `q @ swapaxes(k)`.
// CHECK-LABEL: func.func @dot_of_transposed
// CHECK-NOT: quabla.transpose
// CHECK: "quabla.dot_general"(%arg0, %arg1) {lhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_batching_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 1>} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
// CHECK: "quabla.dot_general"(%arg2, %arg0) {lhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 0>, rhs_batching_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<2x5xf32>, tensor<2x3xf32>) -> tensor<5x3xf32>
// CHECK: "quabla.dot_general"(%arg3, %arg4) {lhs_batching_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 2>, rhs_batching_dimensions = array<i64: 0>, rhs_contracting_dimensions = array<i64: 2>} : (tensor<2x3x4xf32>, tensor<2x6x4xf32>) -> tensor<2x3x6xf32>
func.func @dot_of_transposed(%x: tensor<2x3xf32>, %w: tensor<4x3xf32>, %a: tensor<2x5xf32>, %q: tensor<2x3x4xf32>, %k: tensor<2x6x4xf32>) -> (tensor<2x4xf32>, tensor<5x3xf32>, tensor<2x3x6xf32>) {
  %0 = "quabla.transpose"(%w) {perm = array<i64: 1, 0>} : (tensor<4x3xf32>) -> tensor<3x4xf32>
  %1 = "quabla.dot_general"(%x, %0) {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %2 = "quabla.transpose"(%a) {perm = array<i64: 1, 0>} : (tensor<2x5xf32>) -> tensor<5x2xf32>
  %3 = "quabla.dot_general"(%2, %x) {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<5x2xf32>, tensor<2x3xf32>) -> tensor<5x3xf32>
  %4 = "quabla.transpose"(%k) {perm = array<i64: 0, 2, 1>} : (tensor<2x6x4xf32>) -> tensor<2x4x6xf32>
  %5 = "quabla.dot_general"(%q, %4) {lhs_batching_dimensions = array<i64: 0>, rhs_batching_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 2>, rhs_contracting_dimensions = array<i64: 1>} : (tensor<2x3x4xf32>, tensor<2x4x6xf32>) -> tensor<2x3x6xf32>
  return %1, %3, %5 : tensor<2x4xf32>, tensor<5x3xf32>, tensor<2x3x6xf32>
}

// -----

// Kept: a transpose with another use, and one that reorders the free dims (the result would
// be a different array).
// CHECK-LABEL: func.func @dot_of_transposed_kept
// CHECK-COUNT-2: "quabla.transpose"
// CHECK-NOT: "quabla.transpose"
func.func @dot_of_transposed_kept(%x: tensor<2x3xf32>, %w: tensor<4x3xf32>, %y: tensor<5x6x3xf32>) -> (tensor<2x4xf32>, tensor<3x4xf32>, tensor<6x5xf32>) {
  %0 = "quabla.transpose"(%w) {perm = array<i64: 1, 0>} : (tensor<4x3xf32>) -> tensor<3x4xf32>
  %1 = "quabla.dot_general"(%x, %0) {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %2 = "quabla.transpose"(%y) {perm = array<i64: 1, 0, 2>} : (tensor<5x6x3xf32>) -> tensor<6x5x3xf32>
  %v = "quabla.constant"() {value = dense<1.0> : tensor<3xf32>} : () -> tensor<3xf32>
  %3 = "quabla.dot_general"(%2, %v) {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 2>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<6x5x3xf32>, tensor<3xf32>) -> tensor<6x5xf32>
  return %1, %0, %3 : tensor<2x4xf32>, tensor<3x4xf32>, tensor<6x5xf32>
}

// -----

// A small iota is a known value: its consumers fold and DCE drops it. A large one stays an op
// (its consumers are not materialised as dense constants).
// CHECK-LABEL: func.func @small_iota
// CHECK-NEXT: %[[C:.*]] = "quabla.constant"() {value = dense<[7, 6]> : tensor<2xui32>}
// CHECK-NEXT: return %[[C]]
func.func @small_iota() -> tensor<2xui32> {
  %i = "quabla.iota"() {dim = 0 : i64} : () -> tensor<2xui32>
  %c = "quabla.constant"() {value = dense<7> : tensor<2xui32>} : () -> tensor<2xui32>
  %x = "quabla.xor"(%i, %c) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
  return %x : tensor<2xui32>
}

// -----

// CHECK-LABEL: func.func @large_iota
// CHECK: "quabla.iota"
// CHECK: "quabla.xor"
func.func @large_iota() -> tensor<1000xui32> {
  %i = "quabla.iota"() {dim = 0 : i64} : () -> tensor<1000xui32>
  %c = "quabla.constant"() {value = dense<7> : tensor<1000xui32>} : () -> tensor<1000xui32>
  %x = "quabla.xor"(%i, %c) : (tensor<1000xui32>, tensor<1000xui32>) -> tensor<1000xui32>
  return %x : tensor<1000xui32>
}

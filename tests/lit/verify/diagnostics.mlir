// RUN: quabla-opt %s --split-input-file --verify-diagnostics
// Verifier constraints of docs/spec.md, each reported at the op's location.

func.func @binary(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{binary_c1}}
  %0 = "quabla.add"(%a, %b) : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @dot(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error@+1 {{dot_general_c5}}
  %0 = "quabla.dot_general"(%a, %b) {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @reduce(%a: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{reduce_c1}}
  %0 = "quabla.reduce_sum"(%a) {dims = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @transpose(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{transpose_c1}}
  %0 = "quabla.transpose"(%a) {perm = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @broadcast(%a: tensor<3xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{broadcast_in_dim_c3}}
  %0 = "quabla.broadcast_in_dim"(%a) {dims = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @select(%p: tensor<2xf32>, %a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{select_c1}}
  %0 = "quabla.select"(%p, %a, %a) : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @slice(%a: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{slice_c2}}
  %0 = "quabla.slice"(%a) {start_indices = array<i64: 3>, limit_indices = array<i64: 5>, strides = array<i64: 1>} : (tensor<4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @unary(%a: tensor<2xi32>) -> tensor<2xi32> {
  // expected-error@+1 {{unary_c1}}
  %0 = "quabla.sqrt"(%a) : (tensor<2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

func.func @result(%a: tensor<2xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{differs from the inferred type}}
  %0 = "quabla.exp"(%a) : (tensor<2xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

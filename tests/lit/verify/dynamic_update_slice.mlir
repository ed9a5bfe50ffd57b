// RUN: quabla-opt %s --split-input-file --verify-diagnostics
// dynamic_update_slice constraints of docs/spec.md (5.6), each at the op's location.

func.func @dtype(%a: tensor<4x3xf32>, %u: tensor<1x3xf64>, %i: tensor<i64>) -> tensor<4x3xf32> {
  // expected-error@+1 {{dynamic_update_slice_c1}}
  %0 = "quabla.dynamic_update_slice"(%a, %u, %i, %i) : (tensor<4x3xf32>, tensor<1x3xf64>, tensor<i64>, tensor<i64>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @rank(%a: tensor<4x3xf32>, %u: tensor<3xf32>, %i: tensor<i64>) -> tensor<4x3xf32> {
  // expected-error@+1 {{dynamic_update_slice_c1}}
  %0 = "quabla.dynamic_update_slice"(%a, %u, %i, %i) : (tensor<4x3xf32>, tensor<3xf32>, tensor<i64>, tensor<i64>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @too_big(%a: tensor<4x3xf32>, %u: tensor<5x1xf32>, %i: tensor<i64>) -> tensor<4x3xf32> {
  // expected-error@+1 {{dynamic_update_slice_c2}}
  %0 = "quabla.dynamic_update_slice"(%a, %u, %i, %i) : (tensor<4x3xf32>, tensor<5x1xf32>, tensor<i64>, tensor<i64>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @starts(%a: tensor<4x3xf32>, %u: tensor<1x3xf32>, %i: tensor<i64>) -> tensor<4x3xf32> {
  // expected-error@+1 {{dynamic_update_slice_c3}}
  %0 = "quabla.dynamic_update_slice"(%a, %u, %i) : (tensor<4x3xf32>, tensor<1x3xf32>, tensor<i64>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// The starts are one IRDL variadic group, so IRDL itself rejects mixed start types.
func.func @mixed_starts(%a: tensor<4x3xf32>, %u: tensor<1x3xf32>, %i: tensor<i64>, %j: tensor<i32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{expected 'tensor<i64>' but got 'tensor<i32>'}}
  %0 = "quabla.dynamic_update_slice"(%a, %u, %i, %j) : (tensor<4x3xf32>, tensor<1x3xf32>, tensor<i64>, tensor<i32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

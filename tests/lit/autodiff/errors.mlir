// RUN: quabla-opt %s --split-input-file --verify-diagnostics

// expected-error@+1 {{transform_c1}}
module {
  func.func @f(%x: tensor<f32>) -> tensor<f32> {
    return %x : tensor<f32>
  }
  func.func private @bad(tensor<f32>) -> (tensor<f32>) attributes {quabla.of = @f, quabla.transform = "vjp"}
}

// -----

// expected-error@+1 {{declarations without a body are only allowed as transform functions}}
func.func private @decl(tensor<f32>) -> tensor<f32>

// -----

module {
  // expected-error@+1 {{quabla.transform must be "jvp", "vjp" or "vmap"}}
  func.func private @t(tensor<f32>) -> (tensor<f32>) attributes {quabla.of = @t, quabla.transform = "hvp"}
}

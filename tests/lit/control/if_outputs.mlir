// RUN: quabla-opt %s --run --arg='dense<true> : tensor<i1>' --arg='dense<[1.0, -2.0]> : tensor<2xf32>' | FileCheck %s --check-prefix=TAKEN
// RUN: quabla-opt %s --interpret --arg='dense<true> : tensor<i1>' --arg='dense<[1.0, -2.0]> : tensor<2xf32>' | FileCheck %s --check-prefix=TAKEN
// RUN: quabla-opt %s --run --arg='dense<false> : tensor<i1>' --arg='dense<[1.0, -2.0]> : tensor<2xf32>' | FileCheck %s --check-prefix=OTHER
// RUN: quabla-opt %s --interpret --arg='dense<false> : tensor<i1>' --arg='dense<[1.0, -2.0]> : tensor<2xf32>' | FileCheck %s --check-prefix=OTHER
// A branch op's result that the function returns is computed, in every branch, into the CPU
// executor's output buffer (tests/rust/cpu_codegen.rs `branch_results_that_are_outputs_...`
// checks the lowered text); a branch yielding its operand copies it there, the result returned
// twice takes one buffer (the other output is a copy) and is still read after the branch.

// TAKEN: dense<[2.0e0, -4.0e0]> : tensor<2xf32>
// TAKEN: dense<[2.0e0, -4.0e0]> : tensor<2xf32>
// TAKEN: dense<[3.0e0, -3.0e0]> : tensor<2xf32>
// OTHER: dense<[1.0e0, -2.0e0]> : tensor<2xf32>
// OTHER: dense<[1.0e0, -2.0e0]> : tensor<2xf32>
// OTHER: dense<[2.0e0, -1.0e0]> : tensor<2xf32>

func.func @main(%p: tensor<i1>, %x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %c = tensor.extract %p[] : tensor<i1>
  %r = scf.if %c -> (tensor<2xf32>) {
    %a = "quabla.add"(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    scf.yield %a : tensor<2xf32>
  } else {
    scf.yield %x : tensor<2xf32>
  }
  %one = "quabla.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %s = "quabla.add"(%r, %one) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %r, %r, %s : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

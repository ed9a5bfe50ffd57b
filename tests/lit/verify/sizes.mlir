// RUN: env QUABLA_MAX_BYTES=1000000000 not quabla-opt %s --split-input-file 2>&1 | FileCheck %s
// Sizes are checked, never wrapped: a type whose byte size overflows or exceeds
// QUABLA_MAX_BYTES (lowered here so that no run depends on the machine's memory) is a
// diagnostic with exit code 1, never an abort or a panic. sizes_oom.mlir covers a failed
// allocation.

// CHECK: sizes.mlir:[[@LINE+1]]:1: error: @wraps argument 0: 'quabla.tensor' op (size_overflow): tensor<4611686018427387904x4xf32> (shape [4611686018427387904, 4]) is too big: its element count times the item size 4 overflows
func.func @wraps(%a: tensor<4611686018427387904x4xf32>) -> tensor<4611686018427387904x4xf32> {
  return %a : tensor<4611686018427387904x4xf32>
}

// -----

// A splat constant of 400 GB (issue 18's reproducer), refused before any allocation.
func.func @splat() -> tensor<100000000000xf32> {
  // CHECK: sizes.mlir:[[@LINE+1]]:8: error: 'quabla.constant' op result 0: 'quabla.tensor' op (size_limit): tensor<100000000000xf32> (shape [100000000000]) needs 400000000000 bytes, more than the limit of 1000000000 bytes (set QUABLA_MAX_BYTES to raise it)
  %0 = "quabla.constant"() {value = dense<1.0> : tensor<100000000000xf32>} : () -> tensor<100000000000xf32>
  return %0 : tensor<100000000000xf32>
}

// -----

// Through a shape rule: broadcasting to 2^62 x 4 elements wraps.
func.func @broadcast(%a: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: sizes.mlir:[[@LINE+1]]:8: error: {{.*}}(size_overflow)
  %0 = "quabla.broadcast_in_dim"(%a) {dims = array<i64: 1>} : (tensor<4xf32>) -> tensor<4611686018427387904x4xf32>
  return %a : tensor<4xf32>
}

// RUN: not quabla-opt %s --split-input-file 2>&1 | FileCheck %s
// RUN: env QUABLA_MAX_BYTES=1000000000 not quabla-opt %s --split-input-file 2>&1 | FileCheck %s --check-prefix=LIMIT
// RUN: env QUABLA_MAX_BYTES=9223372036854775807 not quabla-opt %s --split-input-file 2>&1 | FileCheck %s --check-prefix=OOM
// Sizes are checked, never wrapped: a type whose byte size overflows, exceeds QUABLA_MAX_BYTES
// or cannot be allocated is a diagnostic with exit code 1, never an abort or a panic.

// CHECK: argument 0: 'quabla.tensor' op (size_overflow): tensor<4611686018427387904x4xf32> (shape [4611686018427387904, 4]) is too big
// LIMIT: (size_overflow)
func.func @wraps(%a: tensor<4611686018427387904x4xf32>) -> tensor<4611686018427387904x4xf32> {
  return %a : tensor<4611686018427387904x4xf32>
}

// -----

// A splat constant of 400 GB: over a lowered limit it is refused before any allocation.
// LIMIT: 'quabla.constant' op (size_limit): tensor<100000000000xf32> (shape [100000000000]) needs 400000000000 bytes, more than the limit of 1000000000 bytes (set QUABLA_MAX_BYTES to raise it)
func.func @splat() -> tensor<100000000000xf32> {
  %0 = "quabla.constant"() {value = dense<1.0> : tensor<100000000000xf32>} : () -> tensor<100000000000xf32>
  return %0 : tensor<100000000000xf32>
}

// -----

// 2^62 bytes pass a raised limit but no allocator can serve them: a failed try_reserve.
// CHECK: (size_limit): tensor<1152921504606846976xf32> (shape [1152921504606846976]) needs 4611686018427387904 bytes
// OOM: 'quabla.constant' op out of memory: cannot allocate the 4611686018427387904 bytes of a tensor<1152921504606846976xf32> constant
func.func @oom() -> tensor<1152921504606846976xf32> {
  %0 = "quabla.constant"() {value = dense<1.0> : tensor<1152921504606846976xf32>} : () -> tensor<1152921504606846976xf32>
  return %0 : tensor<1152921504606846976xf32>
}

// RUN: env QUABLA_MAX_BYTES=9223372036854775807 not quabla-opt %s 2>&1 | FileCheck %s
// RUN: env QUABLA_MAX_BYTES=9223372036854775807 not quabla-opt %s --interpret 2>&1 | FileCheck %s
// 2^62 bytes pass a raised QUABLA_MAX_BYTES but no allocator can serve them: the failed
// try_reserve is a diagnostic with exit code 1, not an abort.

func.func @main() -> tensor<1152921504606846976xf32> {
  // CHECK: sizes_oom.mlir:[[@LINE+1]]:8: error: 'quabla.constant' op out of memory: cannot allocate the 4611686018427387904 bytes of a tensor<1152921504606846976xf32> constant
  %0 = "quabla.constant"() {value = dense<1.0> : tensor<1152921504606846976xf32>} : () -> tensor<1152921504606846976xf32>
  return %0 : tensor<1152921504606846976xf32>
}

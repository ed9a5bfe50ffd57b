// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-outline{max-ops=2})' | FileCheck %s
// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-outline{max-ops=2})' | mlir-opt --irdl-file=%irdl
// RUN: quabla-opt %s --pass-pipeline='builtin.module(quabla-outline{max-ops=2})' | quabla-opt --run --arg='dense<[0.5, -1.0]> : tensor<2xf32>' | FileCheck %s --check-prefix=VALUES
// RUN: quabla-opt %s --interpret --arg='dense<[0.5, -1.0]> : tensor<2xf32>' | FileCheck %s --check-prefix=VALUES
// RUN: not quabla-opt %s --pass-pipeline='builtin.module(quabla-outline{max-ops=0})' 2>&1 | FileCheck %s --check-prefix=BAD
// A function of five ops becomes three chunks of at most two ops called in sequence; a value
// used two chunks later (%0) and the value returned early (%1) cross the cuts as results.

// VALUES: dense<[1.43547{{[0-9]*}}e-1, 5.57563{{[0-9]*}}e-1]> : tensor<2xf32>
// VALUES: dense<[2.29848{{[0-9]*}}e-1, 7.08073{{[0-9]*}}e-1]> : tensor<2xf32>
// BAD: quabla-outline: option max-ops must be a positive integer, got `0`

// CHECK-LABEL: func.func @main(%arg0: tensor<2xf32>)
// CHECK: %[[A:.*]]:2 = call @main_chunk0(%arg0)
// CHECK: %[[B:.*]] = call @main_chunk1(%[[A]]#1, %arg0)
// CHECK: %[[C:.*]] = call @main_chunk2(%[[B]], %[[A]]#0)
// CHECK: return %[[C]], %[[A]]#1
// CHECK: func.func private @main_chunk0(%arg0: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
// CHECK: func.func private @main_chunk1
// CHECK: func.func private @main_chunk2
func.func @main(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %0 = "quabla.sin"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %1 = "quabla.mul"(%0, %0) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %2 = "quabla.add"(%1, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %3 = "quabla.tanh"(%2) : (tensor<2xf32>) -> tensor<2xf32>
  %4 = "quabla.sub"(%3, %0) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %4, %1 : tensor<2xf32>, tensor<2xf32>
}

// RUN: quabla-opt %s --emit=linalg | FileCheck %s
// RUN: quabla-opt %s --emit=llvm | FileCheck %s --check-prefix=LLVM
// Linear-algebra ops lower to calls of the runtime kernels on unranked memrefs: operands copied
// into private buffers, results fresh allocations, flags as i64; one declaration per kernel.
// The last i64 of qr / eigh / svd says whether the program reads the vectors: eigh's are
// returned (1), svd's u and vt are not (0: the kernel computes the singular values alone).

// CHECK-LABEL: func.func @main
// CHECK: %[[A:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x3x3xf32>
// CHECK: bufferization.materialize_in_destination %{{.*}} in restrict writable %[[A]] : (tensor<2x3x3xf32>, memref<2x3x3xf32>) -> ()
// CHECK: %[[R:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x3x3xf32>
// CHECK: %[[LOWER:.*]] = arith.constant 1 : i64
// CHECK: %[[VECS:.*]] = arith.constant 1 : i64
// CHECK: call @quabla_linalg_eigh_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[LOWER]], %[[VECS]]) : (memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64) -> ()
// CHECK: bufferization.to_tensor %[[R]] restrict writable : memref<2x3x3xf32> to tensor<2x3x3xf32>
// CHECK: %[[FULL:.*]] = arith.constant 0 : i64
// CHECK: %[[NOVECS:.*]] = arith.constant 0 : i64
// CHECK: call @quabla_linalg_svd_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[FULL]], %[[NOVECS]]) : (memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64) -> ()
// CHECK-DAG: func.func private @quabla_linalg_eigh_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @quabla_linalg_svd_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64) attributes {llvm.emit_c_interface}
// LLVM: llvm.call @_mlir_ciface_quabla_linalg_eigh_f32
func.func @main(%a: tensor<2x3x3xf32>) -> (tensor<2x3x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %v, %w = "quabla.eigh"(%a) {lower = true} : (tensor<2x3x3xf32>) -> (tensor<2x3x3xf32>, tensor<2x3xf32>)
  %u, %s, %vt = "quabla.svd"(%v) {full_matrices = false} : (tensor<2x3x3xf32>) -> (tensor<2x3x3xf32>, tensor<2x3xf32>, tensor<2x3x3xf32>)
  return %v, %w, %s : tensor<2x3x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// RUN: quabla-opt %s --split-input-file --emit=linalg | FileCheck %s
// RUN: quabla-opt %s --split-input-file --emit=llvm | FileCheck %s --check-prefix=LLVM
// One case per op family: the lowered form, and that the CPU pipeline reaches the LLVM dialect.

// CHECK-LABEL: func.func @elementwise
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: math.tanh
// LLVM-LABEL: llvm.func @elementwise
func.func @elementwise(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "quabla.add"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = "quabla.tanh"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @integer_div
// CHECK: arith.divsi
// CHECK: arith.select
func.func @integer_div(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "quabla.div"(%a, %b) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @constant
// CHECK: arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf64>
// CHECK: linalg.index 0
func.func @constant() -> (tensor<2xf64>, tensor<3xi32>) {
  %0 = "quabla.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf64>} : () -> tensor<2xf64>
  %1 = "quabla.iota"() {dim = 0 : i64} : () -> tensor<3xi32>
  return %0, %1 : tensor<2xf64>, tensor<3xi32>
}

// -----

// CHECK-LABEL: func.func @layout
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel"]
// CHECK: linalg.generic
// CHECK: tensor.collapse_shape
func.func @layout(%a: tensor<3xf32>) -> (tensor<3x2xf32>, tensor<6xf32>) {
  %0 = "quabla.broadcast_in_dim"(%a) {dims = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3xf32>
  %1 = "quabla.transpose"(%0) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %2 = "quabla.reshape"(%1) : (tensor<3x2xf32>) -> tensor<6xf32>
  return %1, %2 : tensor<3x2xf32>, tensor<6xf32>
}

// -----

// A stride along the last dim reads through the strided map (a generic, not a strided copy).
// CHECK: #[[STRIDED:.*]] = affine_map<(d0) -> (d0 * 2 + 1)>
// CHECK-LABEL: func.func @slicing
// CHECK: linalg.generic {indexing_maps = [#[[STRIDED]], #{{.*}}]
// CHECK: tensor.insert_slice
// CHECK: linalg.fill
func.func @slicing(%a: tensor<6xf32>, %p: tensor<f32>) -> (tensor<2xf32>, tensor<12xf32>, tensor<8xf32>) {
  %0 = "quabla.slice"(%a) {start_indices = array<i64: 1>, limit_indices = array<i64: 5>, strides = array<i64: 2>} : (tensor<6xf32>) -> tensor<2xf32>
  %1 = "quabla.concatenate"(%a, %a) {dim = 0 : i64} : (tensor<6xf32>, tensor<6xf32>) -> tensor<12xf32>
  %2 = "quabla.pad"(%a, %p) {edge_padding_low = array<i64: 1>, edge_padding_high = array<i64: 1>, interior_padding = array<i64: 0>} : (tensor<6xf32>, tensor<f32>) -> tensor<8xf32>
  return %0, %1, %2 : tensor<2xf32>, tensor<12xf32>, tensor<8xf32>
}

// -----

// A float maximum over a short last dim, or one read in place, loops over each row in the
// body of a generic over the rows (a unit reduction loop last), on ordered integer keys (the
// bits, all but the sign flipped for negatives, NaN canonical): arith.maxsi instead of
// arith.maximumf, turned back into a float after the loop (reduce.rs row_loop). A longer row
// computed by an elementwise op is keyed before a generic reduction (ordered_keys / from_keys).
// CHECK-LABEL: func.func @reduce
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<1xf32>)
// CHECK: scf.for
// CHECK: tensor.extract %arg0
// CHECK: arith.cmpf uno
// CHECK: arith.bitcast {{.*}} : f32 to i32
// CHECK: arith.xori
// CHECK: arith.maxsi
// CHECK: scf.yield
// CHECK: arith.bitcast {{.*}} : i32 to f32
// CHECK: math.exp
// CHECK: arith.cmpf uno
// CHECK: arith.bitcast {{.*}} : f32 to i32
// CHECK: arith.xori
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.maxsi
// CHECK: arith.bitcast {{.*}} : i32 to f32
// CHECK-NOT: arith.maximumf
func.func @reduce(%a: tensor<2x5xf32>, %b: tensor<2x32xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %0 = "quabla.reduce_max"(%a) {dims = array<i64: 1>} : (tensor<2x5xf32>) -> tensor<2xf32>
  %1 = "quabla.exp"(%b) : (tensor<2x32xf32>) -> tensor<2x32xf32>
  %2 = "quabla.reduce_max"(%1) {dims = array<i64: 1>} : (tensor<2x32xf32>) -> tensor<2xf32>
  return %0, %2 : tensor<2xf32>, tensor<2xf32>
}

// -----

// Untiled products on the CPU: generics with the output's columns innermost. A short K (2-16)
// read once per element is read whole: (b?, m, n), all parallel, summed from zero.
// CHECK-LABEL: func.func @dot
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]
func.func @dot(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %c: tensor<5x2x3xf32>, %d: tensor<5x3x4xf32>) -> (tensor<2x4xf32>, tensor<5x2x4xf32>) {
  %0 = "quabla.dot_general"(%a, %b) {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %1 = "quabla.dot_general"(%c, %d) {lhs_batching_dimensions = array<i64: 0>, rhs_batching_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 2>, rhs_contracting_dimensions = array<i64: 1>} : (tensor<5x2x3xf32>, tensor<5x3x4xf32>) -> tensor<5x2x4xf32>
  return %0, %1 : tensor<2x4xf32>, tensor<5x2x4xf32>
}

// -----

// A longer K in groups of its largest divisor up to 16 (m, K / u, n); a K without one from 4
// is read whole up to 32 (dot::K_WHOLE_MAX), and keeps a loop over K past it (37).
// CHECK-LABEL: func.func @dot_groups
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]} ins(%arg0, %arg1, %arg0, %arg1, %arg0, %arg1,
// CHECK: linalg.generic {indexing_maps = [#map{{[0-9]+}}, #map{{[0-9]+}}, #map{{[0-9]+}}], iterator_types = ["parallel", "reduction", "parallel"]} ins(%arg2, %arg3 :
func.func @dot_groups(%a: tensor<2x32xf32>, %b: tensor<32x4xf32>, %c: tensor<2x37xf32>, %d: tensor<37x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %0 = "quabla.dot_general"(%a, %b) {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<2x32xf32>, tensor<32x4xf32>) -> tensor<2x4xf32>
  %1 = "quabla.dot_general"(%c, %d) {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<2x37xf32>, tensor<37x4xf32>) -> tensor<2x4xf32>
  return %0, %1 : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// CHECK-LABEL: func.func @caller
// CHECK: call @callee
func.func @caller(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = func.call @callee(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func private @callee(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "quabla.exp"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

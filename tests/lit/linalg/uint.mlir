// RUN: quabla-opt %s --split-input-file --emit=linalg | FileCheck %s
// RUN: quabla-opt %s --split-input-file --emit=llvm | FileCheck %s --check-prefix=LLVM
// Unsigned types lower to signless integers with the unsigned arith ops; the shifts select
// around arith's poison for amounts >= the width.

// CHECK-LABEL: func.func @udiv
// CHECK-SAME: tensor<4xi32>
// CHECK-NOT: ui32
// CHECK: arith.divui
// CHECK: arith.constant -1 : i32
// CHECK: arith.select
// LLVM-LABEL: llvm.func @udiv
func.func @udiv(%a: tensor<4xui32>, %b: tensor<4xui32>) -> tensor<4xui32> {
  %0 = "quabla.div"(%a, %b) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
  return %0 : tensor<4xui32>
}

// -----

// CHECK-LABEL: func.func @ucompare_convert
// CHECK: arith.cmpi ult
// CHECK: arith.maxui
// CHECK: arith.uitofp {{.*}} : i8 to f64
// LLVM-LABEL: llvm.func @ucompare_convert
func.func @ucompare_convert(%a: tensor<3xui8>, %b: tensor<3xui8>) -> (tensor<3xi1>, tensor<3xui8>, tensor<3xf64>) {
  %0 = "quabla.compare"(%a, %b) {direction = "lt"} : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xi1>
  %1 = "quabla.max"(%a, %b) : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
  %2 = "quabla.convert"(%a) : (tensor<3xui8>) -> tensor<3xf64>
  return %0, %1, %2 : tensor<3xi1>, tensor<3xui8>, tensor<3xf64>
}

// -----

// CHECK-LABEL: func.func @shifts
// CHECK: arith.cmpi ult
// CHECK: arith.shli
// CHECK: arith.select
// CHECK: arith.shrui
// CHECK: arith.shrsi
// CHECK: math.ctpop
// LLVM-LABEL: llvm.func @shifts
func.func @shifts(%a: tensor<2xui32>, %n: tensor<2xui32>) -> (tensor<2xui32>, tensor<2xui32>, tensor<2xui32>, tensor<2xui32>) {
  %0 = "quabla.shift_left"(%a, %n) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
  %1 = "quabla.shift_right_logical"(%a, %n) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
  %2 = "quabla.shift_right_arithmetic"(%a, %n) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
  %3 = "quabla.population_count"(%a) : (tensor<2xui32>) -> tensor<2xui32>
  return %0, %1, %2, %3 : tensor<2xui32>, tensor<2xui32>, tensor<2xui32>, tensor<2xui32>
}

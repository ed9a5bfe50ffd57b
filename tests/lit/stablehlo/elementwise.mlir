// RUN: quabla-opt %s --split-input-file --pass-pipeline='builtin.module(convert-quabla-to-stablehlo)' | FileCheck %s
// Elementwise ops: one StableHLO op each, except integer div/rem (guarded against x/0 and
// MIN/-1), powi (a multiply chain) and pow (C pow around stablehlo.power).

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK: %[[S:.*]] = "stablehlo.add"(%[[A]], %[[B]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[T:.*]] = "stablehlo.tanh"(%[[S]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[R:.*]] = "stablehlo.round_nearest_even"(%[[T]])
// CHECK: %[[E:.*]] = "chlo.erf"(%[[R]])
// CHECK: %[[L:.*]] = "stablehlo.logistic"(%[[E]])
// CHECK: %[[Q:.*]] = "stablehlo.rsqrt"(%[[L]])
// CHECK: %[[M:.*]] = "stablehlo.maximum"(%[[Q]], %[[B]])
// CHECK: "func.return"(%[[S]], %[[T]], %[[E]], %[[Q]], %[[M]])
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = "quabla.add"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = "quabla.tanh"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "quabla.round"(%1) : (tensor<4xf32>) -> tensor<4xf32>
  %3 = "quabla.erf"(%2) : (tensor<4xf32>) -> tensor<4xf32>
  %4 = "quabla.logistic"(%3) : (tensor<4xf32>) -> tensor<4xf32>
  %5 = "quabla.rsqrt"(%4) : (tensor<4xf32>) -> tensor<4xf32>
  %6 = "quabla.max"(%5, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %3, %5, %6 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// x / 0 = -1 and MIN / -1 = MIN: the divisor becomes 1 in those lanes, then -1 where it was 0.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[A:.*]]: tensor<3xi32>, %[[B:.*]]: tensor<3xi32>)
// CHECK-DAG: %[[Z:.*]] = "stablehlo.constant"() {value = dense<0> : tensor<3xi32>}
// CHECK-DAG: %[[O:.*]] = "stablehlo.constant"() {value = dense<1> : tensor<3xi32>}
// CHECK-DAG: %[[M1:.*]] = "stablehlo.constant"() {value = dense<-1> : tensor<3xi32>}
// CHECK-DAG: %[[MIN:.*]] = "stablehlo.constant"() {value = dense<-2147483648> : tensor<3xi32>}
// CHECK: %[[BZ:.*]] = "stablehlo.compare"(%[[B]], %[[Z]]) {comparison_direction = #stablehlo<comparison_direction EQ>, compare_type = #stablehlo<comparison_type SIGNED>}
// CHECK: %[[SAFE:.*]] = "stablehlo.select"(%{{.*}}, %[[O]], %[[B]])
// CHECK: %[[Q:.*]] = "stablehlo.divide"(%[[A]], %[[SAFE]])
// CHECK: %[[D:.*]] = "stablehlo.select"(%[[BZ]], %[[M1]], %[[Q]])
// CHECK: %[[R:.*]] = "stablehlo.remainder"(%[[A]], %[[SAFE2:.*]])
// CHECK: "stablehlo.select"(%{{.*}}, %[[A]], %[[R]])
func.func @main(%a: tensor<3xi32>, %b: tensor<3xi32>) -> (tensor<3xi32>, tensor<3xi32>) {
  %0 = "quabla.div"(%a, %b) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  %1 = "quabla.rem"(%a, %b) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  return %0, %1 : tensor<3xi32>, tensor<3xi32>
}

// -----

// powi 3 = x * x^2 by square-and-multiply; powi -2 = 1 / (x^2).
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.*]]: tensor<2xf64>)
// CHECK: %[[X2:.*]] = "stablehlo.multiply"(%[[X]], %[[X]])
// CHECK: %[[X3:.*]] = "stablehlo.multiply"(%[[X]], %[[X2]])
// CHECK: %[[Y2:.*]] = "stablehlo.multiply"(%[[X]], %[[X]])
// CHECK: %[[ONE:.*]] = "stablehlo.constant"() {value = dense<1.0e0> : tensor<2xf64>}
// CHECK: %[[INV:.*]] = "stablehlo.divide"(%[[ONE]], %[[Y2]])
// CHECK: "func.return"(%[[X3]], %[[INV]])
func.func @main(%x: tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>) {
  %0 = "quabla.powi"(%x) {exponent = 3 : i64} : (tensor<2xf64>) -> tensor<2xf64>
  %1 = "quabla.powi"(%x) {exponent = -2 : i64} : (tensor<2xf64>) -> tensor<2xf64>
  return %0, %1 : tensor<2xf64>, tensor<2xf64>
}

// -----

// pow: |x|^y by stablehlo.power, then the sign for odd integer exponents and the C special cases.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.*]]: tensor<2xf32>, %[[Y:.*]]: tensor<2xf32>)
// CHECK: %[[AX:.*]] = "stablehlo.abs"(%[[X]])
// CHECK: "stablehlo.power"(%[[AX]], %[[Y]])
// CHECK: "stablehlo.bitcast_convert"(%[[X]]) : (tensor<2xf32>) -> tensor<2xi32>
// CHECK: "stablehlo.remainder"(%[[Y]], %{{.*}})
// CHECK: "stablehlo.floor"(%[[Y]])
// CHECK: "stablehlo.constant"() {value = dense<0x7FC00000> : tensor<2xf32>}
func.func @main(%x: tensor<2xf32>, %y: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "quabla.pow"(%x, %y) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Compare types: FLOAT (ordered; NE unordered), SIGNED, UNSIGNED for i1; i1 max/min are or/and.
// CHECK-LABEL: func.func @main
// CHECK: "stablehlo.compare"(%{{.*}}, %{{.*}}) {comparison_direction = #stablehlo<comparison_direction NE>, compare_type = #stablehlo<comparison_type FLOAT>} : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xi1>
// CHECK: "stablehlo.compare"(%{{.*}}, %{{.*}}) {comparison_direction = #stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type SIGNED>} : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi1>
// CHECK: "stablehlo.compare"(%{{.*}}, %{{.*}}) {comparison_direction = #stablehlo<comparison_direction GE>, compare_type = #stablehlo<comparison_type UNSIGNED>} : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
// CHECK: "stablehlo.or"
// CHECK: "stablehlo.select"
// CHECK: "stablehlo.convert"(%{{.*}}) : (tensor<2xi64>) -> tensor<2xf64>
// CHECK-NOT: stablehlo.convert
// CHECK: "func.return"
func.func @main(%a: tensor<2xf64>, %b: tensor<2xf64>, %i: tensor<2xi64>, %j: tensor<2xi64>, %p: tensor<2xi1>) -> (tensor<2xi1>, tensor<2xf64>, tensor<2xf64>) {
  %0 = "quabla.compare"(%a, %b) {direction = "ne"} : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xi1>
  %1 = "quabla.compare"(%i, %j) {direction = "lt"} : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi1>
  %2 = "quabla.compare"(%0, %p) {direction = "ge"} : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  %3 = "quabla.max"(%1, %2) : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  %4 = "quabla.select"(%3, %a, %b) : (tensor<2xi1>, tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
  %5 = "quabla.convert"(%i) : (tensor<2xi64>) -> tensor<2xf64>
  %6 = "quabla.convert"(%5) : (tensor<2xf64>) -> tensor<2xf64>
  return %3, %4, %6 : tensor<2xi1>, tensor<2xf64>, tensor<2xf64>
}

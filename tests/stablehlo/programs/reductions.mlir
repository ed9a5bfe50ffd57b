// Every reduction in one program: a numerically stable softmax cross-entropy (reduce_max,
// reduce_sum), per-row products and minima, argmax/argmin predictions and an "any/all" mask.
func.func @main(%logits: tensor<6x5xf64>, %labels: tensor<6xi32>) -> (tensor<f64>, tensor<6xi32>, tensor<5xi64>, tensor<6xf64>, tensor<5xf64>, tensor<6xi1>, tensor<i1>) {
  %m = "quabla.reduce_max"(%logits) {dims = array<i64: 1>} : (tensor<6x5xf64>) -> tensor<6xf64>
  %mb = "quabla.broadcast_in_dim"(%m) {dims = array<i64: 0>} : (tensor<6xf64>) -> tensor<6x5xf64>
  %z = "quabla.sub"(%logits, %mb) : (tensor<6x5xf64>, tensor<6x5xf64>) -> tensor<6x5xf64>
  %e = "quabla.exp"(%z) : (tensor<6x5xf64>) -> tensor<6x5xf64>
  %s = "quabla.reduce_sum"(%e) {dims = array<i64: 1>} : (tensor<6x5xf64>) -> tensor<6xf64>
  %ls = "quabla.log"(%s) : (tensor<6xf64>) -> tensor<6xf64>
  %lb = "quabla.broadcast_in_dim"(%ls) {dims = array<i64: 0>} : (tensor<6xf64>) -> tensor<6x5xf64>
  %logp = "quabla.sub"(%z, %lb) : (tensor<6x5xf64>, tensor<6x5xf64>) -> tensor<6x5xf64>
  %li = "quabla.reshape"(%labels) : (tensor<6xi32>) -> tensor<6x1xi32>
  %picked = "quabla.gather"(%logp, %li) {axis = 1 : i64} : (tensor<6x5xf64>, tensor<6x1xi32>) -> tensor<6x6x1xf64>
  %iota = "quabla.iota"() {dim = 0 : i64} : () -> tensor<6x6xi32>
  %iotb = "quabla.iota"() {dim = 1 : i64} : () -> tensor<6x6xi32>
  %diag = "quabla.compare"(%iota, %iotb) {direction = "eq"} : (tensor<6x6xi32>, tensor<6x6xi32>) -> tensor<6x6xi1>
  %p2 = "quabla.reshape"(%picked) : (tensor<6x6x1xf64>) -> tensor<6x6xf64>
  %zero = "quabla.constant"() {value = dense<0.0> : tensor<6x6xf64>} : () -> tensor<6x6xf64>
  %pd = "quabla.select"(%diag, %p2, %zero) : (tensor<6x6xi1>, tensor<6x6xf64>, tensor<6x6xf64>) -> tensor<6x6xf64>
  %nll = "quabla.reduce_sum"(%pd) {dims = array<i64: 0, 1>} : (tensor<6x6xf64>) -> tensor<f64>
  %loss = "quabla.neg"(%nll) : (tensor<f64>) -> tensor<f64>
  %pred = "quabla.argmax"(%logits) {dim = 1 : i64} : (tensor<6x5xf64>) -> tensor<6xi32>
  %worst = "quabla.argmin"(%logits) {dim = 0 : i64} : (tensor<6x5xf64>) -> tensor<5xi64>
  %prod = "quabla.reduce_prod"(%e) {dims = array<i64: 1>} : (tensor<6x5xf64>) -> tensor<6xf64>
  %mins = "quabla.reduce_min"(%logits) {dims = array<i64: 0>} : (tensor<6x5xf64>) -> tensor<5xf64>
  %thr = "quabla.constant"() {value = dense<1.0> : tensor<6x5xf64>} : () -> tensor<6x5xf64>
  %big = "quabla.compare"(%logits, %thr) {direction = "gt"} : (tensor<6x5xf64>, tensor<6x5xf64>) -> tensor<6x5xi1>
  %any = "quabla.reduce_max"(%big) {dims = array<i64: 1>} : (tensor<6x5xi1>) -> tensor<6xi1>
  %all = "quabla.reduce_min"(%any) {dims = array<i64: 0>} : (tensor<6xi1>) -> tensor<i1>
  return %loss, %pred, %worst, %prod, %mins, %any, %all : tensor<f64>, tensor<6xi32>, tensor<5xi64>, tensor<6xf64>, tensor<5xf64>, tensor<6xi1>, tensor<i1>
}

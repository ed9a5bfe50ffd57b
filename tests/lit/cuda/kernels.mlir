// REQUIRES: cuda-nvcc
// RUN: quabla-opt %s --split-input-file --emit=ptx | FileCheck %s
// RUN: quabla-opt %s --split-input-file --emit=ptx --cuda-arch=sm_80 | FileCheck %s --check-prefix=SM80
// RUN: env QUABLA_CUDA_CUBLAS=0 quabla-opt %s --split-input-file --emit=ptx | FileCheck %s --check-prefix=LOOPS
// The CUDA lowering (lowering/src/target/cuda): the host plan (buffers, launches in order with
// grid and block sizes) and the PTX of the program's one gpu.module (every outlined kernel
// merged into `@<entry>_kernels`, each named after the module outlining made for it).

// A fused elementwise chain is one kernel over 32 x 8 tiles, threads' x along the contiguous
// dim (grid [128/8, 64/32]); tanh goes through libdevice.
// CHECK-LABEL: // CUDA program @elementwise for sm_90: 1 kernels, 1 launches, 0 cuBLAS products
// CHECK: // b0: argument 0
// CHECK: // b2: argument 2
// CHECK: // launch @elementwise_kernels::@elementwise_kernel grid [16, 2, 1] block [8, 32, 1] args (b1, b0, b2)
// CHECK: // gpu.module @elementwise_kernels kernels @elementwise_kernel
// CHECK: .target sm_90
// CHECK: .visible .entry elementwise_kernel(
// CHECK-COUNT-3: .param .u64 .ptr
// CHECK: ld.global
// CHECK: st.global
// SM80: .target sm_80
func.func @elementwise(%a: tensor<64x128xf32>, %b: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %0 = "quabla.add"(%a, %b) : (tensor<64x128xf32>, tensor<64x128xf32>) -> tensor<64x128xf32>
  %1 = "quabla.tanh"(%0) : (tensor<64x128xf32>) -> tensor<64x128xf32>
  return %1 : tensor<64x128xf32>
}

// -----

// A column sum is a kernel parallel over the 128 outputs (each thread reduces one column):
// fill, then the reduction, both launched (nothing left on the host).
// CHECK-LABEL: // CUDA program @column_sum for sm_90: 2 kernels, 2 launches, 0 cuBLAS products
// CHECK: // launch @column_sum_kernels::@column_sum_kernel grid [4, 1, 1] block [32, 1, 1] args (0x00000000, b1)
// CHECK: // launch @column_sum_kernels::@column_sum_kernel_0 grid [4, 1, 1] block [32, 1, 1] args (b0, b1,
// CHECK: .visible .entry column_sum_kernel(
// CHECK: ld.global
// CHECK: add.rn.f32
func.func @column_sum(%a: tensor<64x128xf32>) -> tensor<128xf32> {
  %0 = "quabla.reduce_sum"(%a) {dims = array<i64: 0>} : (tensor<64x128xf32>) -> tensor<128xf32>
  return %0 : tensor<128xf32>
}

// -----

// A full sum of 4096 elements is split (few outputs over many elements): 256 partials
// (1 KiB) on 256 threads, each summing 16 elements 256 apart (consecutive threads read
// consecutive elements; the stride 256 and extent 4096 are kernel arguments), then one
// thread sums the 256 partials. The operand is read through an affine
// map (row and column of the flat index: divisions by constants, strength-reduced).
// CHECK-LABEL: // CUDA program @full_sum for sm_90: 5 kernels, 5 launches, 0 cuBLAS products
// CHECK: // b2 = alloc 1024 bytes
// CHECK: // launch @full_sum_kernels::@full_sum_kernel grid [8, 1, 1] block [32, 1, 1] args (0x00000000, b2)
// CHECK: // launch @full_sum_kernels::@full_sum_kernel_0 grid [8, 1, 1] block [32, 1, 1] args (b0, b2, 0x0000000000000100, 0x0000000000001000,
// CHECK: // launch @full_sum_kernels::@full_sum_kernel_2 grid [1, 1, 1] block [32, 1, 1] args ({{.*}}b2, b3, {{.*}}0x0000000000000100)
// CHECK: // gpu.module @full_sum_kernels kernels @full_sum_kernel @full_sum_kernel_0 @full_sum_kernel_1 @full_sum_kernel_2 @full_sum_kernel_3
// CHECK: .visible .entry full_sum_kernel_0(
// CHECK-NOT: div
// CHECK: add.rn.f32
// CHECK: .visible .entry full_sum_kernel_1(
func.func @full_sum(%a: tensor<64x64xf32>) -> tensor<f32> {
  %0 = "quabla.reduce_sum"(%a) {dims = array<i64: 0, 1>} : (tensor<64x64xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// A contiguous matmul is a cuBLAS product after the fill kernel of its result (row-major
// c += a @ b); with QUABLA_CUDA_CUBLAS=0 a loop kernel, one thread per output element.
// CHECK-LABEL: // CUDA program @matmul for sm_90: 1 kernels, 1 launches, 1 cuBLAS products
// CHECK: // launch @matmul_kernels::@matmul_kernel grid [4, 1, 1] block [8, 32, 1] args ({{.*}}b2)
// CHECK-NEXT: // cublas gemm f64 batch 1 m 16 n 32 k 8: b2 += b0 @ b1
// LOOPS-LABEL: // CUDA program @matmul for sm_90: 2 kernels, 2 launches, 0 cuBLAS products
// LOOPS: // launch @matmul_kernels::@matmul_kernel_0 grid [4, 1, 1] block [8, 32, 1] args ({{.*}}b0, b1, b2,
// LOOPS: mul.rn.f64
// LOOPS: add.rn.f64
func.func @matmul(%a: tensor<16x8xf64>, %b: tensor<8x32xf64>) -> tensor<16x32xf64> {
  %0 = "quabla.dot_general"(%a, %b) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>, lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>} : (tensor<16x8xf64>, tensor<8x32xf64>) -> tensor<16x32xf64>
  return %0 : tensor<16x32xf64>
}

// -----

// An if computes both branches and selects the taken one inside the kernel (the predicate
// is never read on the host): one fused kernel reading the predicate's buffer.
// CHECK-LABEL: // CUDA program @branch for sm_90: 1 kernels, 1 launches, 0 cuBLAS products
// CHECK: // launch @branch_kernels::@branch_kernel grid [1, 1, 1] block [32, 1, 1] args ({{.*}}b0, b1, b2)
// CHECK: selp
func.func @branch(%p: tensor<i1>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %c = tensor.extract %p[] : tensor<i1>
  %r = scf.if %c -> (tensor<2xf32>) {
    %s = "quabla.sin"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    scf.yield %s : tensor<2xf32>
  } else {
    %n = "quabla.neg"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    scf.yield %n : tensor<2xf32>
  }
  return %r : tensor<2xf32>
}

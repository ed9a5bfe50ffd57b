//! The matrix products compiled programs call (`quabla_gemm_<dtype>`, see
//! `quabla_lowering::linalg::dot`): large `f32`/`f64` `dot_general`s on hosts with AVX2 or
//! AVX-512 run `quabla_kernels::gemm` (packed panels, precompiled micro-kernels) instead of
//! JIT-compiled loops, on libomp's team (csrc/openmp.c `quabla_omp_run`), so the program's
//! own compile has no product kernel to generate. The C interface symbols
//! `_mlir_ciface_quabla_gemm_*` take unranked memref descriptors: A (`[m, k]`, or `[k, m]`
//! with `a_km`; a leading batch dim when batched), B (`[k, n]`, or `[n, k]` with `b_nk`), the
//! result C (`[m, n]`, contiguous), then `a_km`, `b_nk`, `accumulate` (C += A B) and the
//! threads as `i64`. Operands are read in place through their strides.
use std::ffi::c_void;

use quabla_kernels::gemm::{gemm, gemm_parts, Mat, OutOfMemory, Problem, Real, Team};

use crate::linalg_kernels::{parts, Unranked};

unsafe extern "C" {
    fn quabla_omp_run(body: unsafe extern "C" fn(*mut c_void, i32, i32), ctx: *mut c_void, threads: i32);
    fn quabla_omp_barrier();
    fn quabla_rt_fail(bytes: u64) -> !;
}

/// libomp's team of `threads` threads (also the sort kernels', crate::sort_kernels).
pub(crate) struct Omp {
    threads: usize,
}

impl Omp {
    /// The team of a kernel's `threads` argument (clamped to 1..=256).
    pub(crate) fn new(threads: i64) -> Omp {
        Omp { threads: threads.clamp(1, 256) as usize }
    }
}

unsafe extern "C" fn trampoline(ctx: *mut c_void, thread: i32, threads: i32) {
    // SAFETY: `ctx` is the body `Omp::run` passed, alive for the region.
    let body = unsafe { &*(ctx as *const &(dyn Fn(usize, usize) + Sync)) };
    body(thread.max(0) as usize, threads.max(1) as usize);
}

impl Team for Omp {
    fn threads(&self) -> usize {
        self.threads
    }
    fn run(&self, body: &(dyn Fn(usize, usize) + Sync)) {
        let mut b: &(dyn Fn(usize, usize) + Sync) = body;
        // SAFETY: the region ends before `b` goes out of scope.
        unsafe { quabla_omp_run(trampoline, &mut b as *mut _ as *mut c_void, self.threads as i32) };
    }
    fn barrier(&self) {
        // SAFETY: called by every thread of the region, the same number of times.
        unsafe { quabla_omp_barrier() };
    }
}

/// A 2-D view of the `[rows, cols]` matrix `i` of a rank-2 (`i` = 0) or rank-3 descriptor.
fn matrix<T>(p: *mut T, sizes: &[i64], strides: &[i64], i: usize, transposed: bool) -> (Mat<T>, usize, usize) {
    let r = sizes.len();
    let base = if r == 3 { unsafe { p.offset(i as isize * strides[0] as isize) } } else { p };
    let (rows, cols) = (sizes[r - 2] as usize, sizes[r - 1] as usize);
    let (rs, cs) = (strides[r - 2] as isize, strides[r - 1] as isize);
    if transposed {
        (Mat { ptr: base, rs: cs, cs: rs }, cols, rows)
    } else {
        (Mat { ptr: base, rs, cs }, rows, cols)
    }
}

/// Runs the product the descriptors describe; the sizes were checked by the op's shape rule.
unsafe fn call<T: Real>(a: *const Unranked, b: *const Unranked, c: *const Unranked, a_km: i64, b_nk: i64, accumulate: i64, threads: i64) {
    let failed = run::<T>(a, b, c, a_km != 0, b_nk != 0, accumulate != 0, threads).err();
    if let Some(OutOfMemory(bytes)) = failed {
        quabla_rt_fail(bytes as u64);
    }
}

/// The three operands' (data, sizes, strides), shared with the team's threads.
struct Operands<'a, T>([(*mut T, &'a [i64], &'a [i64]); 3]);
// SAFETY: the threads read A and B and write disjoint batch elements of C.
unsafe impl<T> Sync for Operands<'_, T> {}

impl<T: Real> Operands<'_, T> {
    /// Batch element `i`'s product.
    unsafe fn problem(&self, i: usize, a_km: bool, b_nk: bool, accumulate: bool) -> Problem<T> {
        let [(ap, asz, ast), (bp, bsz, bst), (cp, csz, cst)] = self.0;
        let (am, m, k) = matrix(ap, asz, ast, i, a_km);
        let (bm, _, n) = matrix(bp, bsz, bst, i, b_nk);
        let (cm, _, _) = matrix(cp, csz, cst, i, false);
        Problem { m, n, k, a: am, b: bm, c: cm.ptr as *mut T, ldc: cm.rs, accumulate }
    }
}

/// Whether a batch of `batch` products on `threads` threads splits the batch elements between
/// the threads (each product on one thread, no barriers) rather than each product: when the
/// elements divide evenly or are many (attention's per-head products, 64 x 64 x 64 x 64).
fn split_batch(batch: usize, threads: usize) -> bool {
    threads > 1 && batch > 1 && (batch % threads == 0 || batch >= 4 * threads)
}

unsafe fn run<T: Real>(a: *const Unranked, b: *const Unranked, c: *const Unranked, a_km: bool, b_nk: bool, accumulate: bool, threads: i64) -> Result<(), OutOfMemory> {
    let ops = Operands([parts::<T>(a), parts::<T>(b), parts::<T>(c)]);
    let csz = ops.0[2].1;
    let batch = if csz.len() == 3 { csz[0].max(0) as usize } else { 1 };
    let team = Omp::new(threads);
    if batch > 1 {
        if let Some(dot) = T::row_dots() {
            let p = ops.problem(0, a_km, b_nk, accumulate);
            if p.n == 1 && p.a.cs == 1 && p.b.rs == 1 && p.k > 0 {
                // A batch of matrix-vector products (`vmap(m @ v)`), A's rows and the vector
                // contiguous along K: the row dot products of each element straight away,
                // the batch split between the threads. Through `gemm` per element (its
                // dispatch and scratch) 1000 x (16x16 @ 16) f32 took 84.5 us, JAX 46-47.
                let body = |t: usize, n: usize| {
                    let n = n.max(1);
                    for i in batch * t / n..batch * (t + 1) / n {
                        let p = ops.problem(i, a_km, b_nk, accumulate);
                        dot(p.k, p.a.ptr, p.a.rs, p.b.ptr, p.c, p.ldc as usize, p.m, p.accumulate);
                    }
                };
                team.run(&body);
                return Ok(());
            }
        }
    }
    if split_batch(batch, team.threads) {
        return gemm_parts(&team, batch, |i| ops.problem(i, a_km, b_nk, accumulate));
    }
    for i in 0..batch {
        gemm(&ops.problem(i, a_km, b_nk, accumulate), &team)?;
    }
    Ok(())
}

unsafe extern "C" fn gemm_f32(a: *const Unranked, b: *const Unranked, c: *const Unranked, a_km: i64, b_nk: i64, accumulate: i64, threads: i64) {
    call::<f32>(a, b, c, a_km, b_nk, accumulate, threads)
}

unsafe extern "C" fn gemm_f64(a: *const Unranked, b: *const Unranked, c: *const Unranked, a_km: i64, b_nk: i64, accumulate: i64, threads: i64) {
    call::<f64>(a, b, c, a_km, b_nk, accumulate, threads)
}

/// (C interface symbol, address) of each product kernel.
pub(crate) fn symbols() -> Vec<(&'static str, *mut ())> {
    vec![("_mlir_ciface_quabla_gemm_f32", gemm_f32 as *mut ()), ("_mlir_ciface_quabla_gemm_f64", gemm_f64 as *mut ())]
}

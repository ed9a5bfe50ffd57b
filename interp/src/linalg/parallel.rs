//! The threads the linear-algebra kernels may use. The kernels are the interpreter's and also
//! what the CPU runtime calls; the interpreter runs everything on the calling thread, and the
//! CPU runtime installs its OpenMP team ([`set_parallel`]) so that large [`Scalar::gemm`]s
//! (LU's and Cholesky's trailing updates, the triangular solves' off-diagonal products) run on
//! the same threads as the compiled loops (no second pool competing for the cores).
//!
//! A product is split by columns of its result: every element is computed by one thread with
//! the same additions in the same order as without the split (the GEMM's blocking over `k` does
//! not depend on the number of columns), so results do not depend on the thread count.
//!
//! [`Scalar::gemm`]: super::kernels::Scalar::gemm
use std::sync::OnceLock;

/// Runs `f(i)` for every `i < n`, each exactly once, in any order and possibly at once on
/// several threads; returns when all have run.
pub type ParallelFor = fn(n: usize, f: &(dyn Fn(usize) + Sync));

static PARALLEL: OnceLock<(ParallelFor, usize)> = OnceLock::new();

/// Installs `run` with `threads` threads for the kernels (once per process; later calls are
/// ignored). `threads <= 1` keeps everything on the calling thread.
pub fn set_parallel(run: ParallelFor, threads: usize) {
    if threads > 1 {
        let _ = PARALLEL.set((run, threads));
    }
}

/// Multiply-adds below which a product stays on one thread (about 5 us of one core's work:
/// more than a fork and join of a warm OpenMP team).
pub const PAR_GEMM_WORK: usize = 1 << 19;

/// Columns per piece are a multiple of this (the GEMM's register blocks are 8-16 wide).
const COLUMN_ALIGN: usize = 16;

/// Calls `part(j0, j1)` for column ranges covering `0..n`: one range on the calling thread for
/// products of fewer than [`PAR_GEMM_WORK`] multiply-adds or without installed threads, else
/// one range per thread.
pub(super) fn columns(m: usize, k: usize, n: usize, part: &(dyn Fn(usize, usize) + Sync)) {
    let Some(&(run, threads)) = PARALLEL.get() else {
        return part(0, n);
    };
    let work = m.saturating_mul(k).saturating_mul(n);
    let pieces = threads.min(n / COLUMN_ALIGN);
    if work < PAR_GEMM_WORK || pieces < 2 {
        return part(0, n);
    }
    let step = n.div_ceil(pieces).next_multiple_of(COLUMN_ALIGN);
    let count = n.div_ceil(step);
    run(count, &|i| {
        let j0 = i * step;
        part(j0, (j0 + step).min(n));
    });
}

//! Sums of the rows and of the columns of a matrix, the reductions compiled programs call
//! (quabla_runtime's `reduce_kernels`, for the sum of a parameter over its trailing or its
//! leading dims: quabla_lowering's `reduce::runtime_sum`). Precompiled, so that such a
//! program's own compile has no reduction loop to generate (the first call of a row sum of
//! 1024 x 1024 f32 was 12-15 ms, most of it LLVM's code generation of the vectorized loop).
//!
//! Every output element is summed by one thread, so the bits do not depend on the team: a
//! row by [`LANES`] accumulators (the vector lanes) added pairwise at the end, then its tail
//! in order; a column in row order (the interpreter's order). Multi-versioned for AVX-512
//! and AVX2 hosts (the generic code otherwise compiles for the baseline's SSE2).
use crate::gemm::Team;

/// The element types summed: `f32` and `f64`. [`Summand::sums`] is compiled here, at this
/// crate's opt-level (a generic function is compiled in the crate that instantiates it: the
/// runtime's debug build ran the row sums 6x slower).
pub trait Summand: Copy + Default + std::ops::Add<Output = Self> + Send + Sync + 'static {
    /// [`sums`] of this element type.
    ///
    /// # Safety
    /// As [`sums`].
    unsafe fn sums(x: *const Self, mn: [usize; 2], rs: usize, columns: bool, out: *mut Self, team: &dyn Team);
}

impl Summand for f32 {
    unsafe fn sums(x: *const f32, mn: [usize; 2], rs: usize, columns: bool, out: *mut f32, team: &dyn Team) {
        sums_of(x, mn, rs, columns, out, team)
    }
}

impl Summand for f64 {
    unsafe fn sums(x: *const f64, mn: [usize; 2], rs: usize, columns: bool, out: *mut f64, team: &dyn Team) {
        sums_of(x, mn, rs, columns, out, team)
    }
}

/// Independent accumulators of a row sum (four AVX-512 vectors of f32).
const LANES: usize = 64;

/// Accumulators of a row's remainder after the [`LANES`] steps.
const TAIL_LANES: usize = 8;

/// Columns a thread sums at a time (their sums stay in registers).
const COLUMN_BLOCK: usize = 128;

/// Rows a column sum reads at a time (up to 256 KB of rows of 1024 f32, in L2).
const ROW_TILE: usize = 64;

/// The sum of `n` elements at `p` (contiguous).
#[inline(always)]
unsafe fn row_sum<T: Summand>(p: *const T, n: usize) -> T {
    let row = std::slice::from_raw_parts(p, n);
    let mut acc = [T::default(); LANES];
    let mut chunks = row.chunks_exact(LANES);
    for c in &mut chunks {
        for l in 0..LANES {
            acc[l] = acc[l] + c[l];
        }
    }
    let mut w = if n >= LANES { LANES } else { 1 };
    while w > 1 {
        w /= 2;
        for l in 0..w {
            acc[l] = acc[l] + acc[l + w];
        }
    }
    let rest = chunks.remainder();
    let mut tail = [T::default(); TAIL_LANES];
    let mut small = rest.chunks_exact(TAIL_LANES);
    for c in &mut small {
        for l in 0..TAIL_LANES {
            tail[l] = tail[l] + c[l];
        }
    }
    let mut s = acc[0];
    for t in tail {
        s = s + t;
    }
    for &v in small.remainder() {
        s = s + v;
    }
    s
}

/// Rows `rows` of the `[m, n]` matrix at `x` (row stride `rs`) summed into `out`.
#[inline(always)]
unsafe fn rows_of<T: Summand>(x: *const T, rs: usize, n: usize, out: *mut T, rows: std::ops::Range<usize>) {
    for i in rows {
        *out.add(i) = row_sum(x.add(i * rs), n);
    }
}

/// Columns `cols` of the `[m, n]` matrix at `x` (row stride `rs`) summed into `out`, in row
/// order: [`ROW_TILE`] rows at a time (read from memory once, then from L2), each
/// [`COLUMN_BLOCK`] columns of them with their sums in registers (eight AVX-512 vectors of
/// f32) between the tile's rows, in `out` between tiles.
#[inline(always)]
unsafe fn cols_of<T: Summand>(x: *const T, rs: usize, m: usize, out: *mut T, cols: std::ops::Range<usize>) {
    for c in cols.clone() {
        *out.add(c) = T::default();
    }
    let mut i0 = 0;
    while i0 < m {
        let rows = i0..m.min(i0 + ROW_TILE);
        let mut c0 = cols.start;
        while c0 + COLUMN_BLOCK <= cols.end {
            let sums = &mut *(out.add(c0) as *mut [T; COLUMN_BLOCK]);
            let mut acc = *sums;
            for i in rows.clone() {
                let row = &*(x.add(i * rs + c0) as *const [T; COLUMN_BLOCK]);
                for l in 0..COLUMN_BLOCK {
                    acc[l] = acc[l] + row[l];
                }
            }
            *sums = acc;
            c0 += COLUMN_BLOCK;
        }
        let w = cols.end - c0;
        if w > 0 {
            let sums = std::slice::from_raw_parts_mut(out.add(c0), w);
            for i in rows.clone() {
                let row = std::slice::from_raw_parts(x.add(i * rs + c0), w);
                for (a, &v) in sums.iter_mut().zip(row) {
                    *a = *a + v;
                }
            }
        }
        i0 = rows.end;
    }
}

/// The row and column loops compiled for an instruction set (`$feat`, or the baseline).
macro_rules! versions {
    ($rows:ident, $cols:ident $(, $feat:literal)?) => {
        $(#[target_feature(enable = $feat)])?
        unsafe fn $rows<T: Summand>(x: *const T, rs: usize, n: usize, out: *mut T, rows: std::ops::Range<usize>) {
            rows_of(x, rs, n, out, rows)
        }
        $(#[target_feature(enable = $feat)])?
        unsafe fn $cols<T: Summand>(x: *const T, rs: usize, m: usize, out: *mut T, cols: std::ops::Range<usize>) {
            cols_of(x, rs, m, out, cols)
        }
    };
}
versions!(rows_base, cols_base);
#[cfg(target_arch = "x86_64")]
versions!(rows_avx2, cols_avx2, "avx2");
#[cfg(target_arch = "x86_64")]
versions!(rows_avx512, cols_avx512, "avx512f");

type RowsFn<T> = unsafe fn(*const T, usize, usize, *mut T, std::ops::Range<usize>);

/// The best (rows, columns) loops for the host.
fn loops<T: Summand>() -> (RowsFn<T>, RowsFn<T>) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            return (rows_avx512::<T>, cols_avx512::<T>);
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            return (rows_avx2::<T>, cols_avx2::<T>);
        }
    }
    (rows_base::<T>, cols_base::<T>)
}

/// The sums of the `m` rows (`columns` false: `out[i] = sum_j x[i, j]`, `m` outputs) or of the
/// `n` columns (`columns`: `out[j] = sum_i x[i, j]`, `n` outputs) of the `[m, n]` matrix at `x`
/// whose rows are `rs` elements apart (contiguous rows), on `team` (the rows or the columns
/// split between its threads).
///
/// # Safety
/// `x` is readable for `m` rows of `n` elements `rs` apart, `out` writable for the outputs,
/// and they do not overlap.
pub unsafe fn sums<T: Summand>(x: *const T, mn: [usize; 2], rs: usize, columns: bool, out: *mut T, team: &dyn Team) {
    T::sums(x, mn, rs, columns, out, team)
}

/// [`sums`], instantiated by [`Summand`]'s impls.
#[inline(always)]
unsafe fn sums_of<T: Summand>(x: *const T, [m, n]: [usize; 2], rs: usize, columns: bool, out: *mut T, team: &dyn Team) {
    let (rows_fn, cols_fn) = loops::<T>();
    let outputs = if columns { n } else { m };
    let (xa, oa) = (x as usize, out as usize);
    let body = move |t: usize, nt: usize| {
        let nt = nt.max(1);
        // Column ranges in multiples of 16 (whole vectors), row ranges as they fall.
        let q = if columns { 16 } else { 1 };
        let units = outputs.div_ceil(q);
        let (a, b) = ((units * t / nt * q).min(outputs), (units * (t + 1) / nt * q).min(outputs));
        if a < b {
            // SAFETY: each thread writes its own outputs; the caller's contract covers the rest.
            unsafe {
                if columns {
                    cols_fn(xa as *const T, rs, m, oa as *mut T, a..b)
                } else {
                    rows_fn(xa as *const T, rs, n, oa as *mut T, a..b)
                }
            }
        }
    };
    if team.threads() > 1 && outputs >= 2 {
        team.run(&body);
    } else {
        body(0, 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemm::Serial;

    #[test]
    fn row_and_column_sums_match_a_plain_loop() {
        // Sizes around the lanes, the tail lanes and the column blocks; the columns summed
        // in order are the plain loop's to the bit, the rows within a few ulps.
        for (m, n) in [(1usize, 1usize), (3, 7), (5, 64), (2, 65), (9, 200), (4, 1031), (700, 3)] {
            let x: Vec<f64> = (0..m * n).map(|k| ((k * 7919) % 1000) as f64 / 997.0 - 0.5).collect();
            let mut rows = vec![0.0; m];
            let mut cols = vec![0.0; n];
            unsafe {
                sums(x.as_ptr(), [m, n], n, false, rows.as_mut_ptr(), &Serial);
                sums(x.as_ptr(), [m, n], n, true, cols.as_mut_ptr(), &Serial);
            }
            for i in 0..m {
                let want: f64 = x[i * n..(i + 1) * n].iter().sum();
                assert!((rows[i] - want).abs() <= 1e-12 * (n as f64), "{m}x{n} row {i}: {} vs {want}", rows[i]);
            }
            for j in 0..n {
                let mut want = 0.0;
                for i in 0..m {
                    want += x[i * n + j];
                }
                assert_eq!(cols[j].to_bits(), want.to_bits(), "{m}x{n} column {j}");
            }
        }
    }
}

//! Blocked LU with partial pivoting (LAPACK getrf's right-looking structure): per block
//! column of `NB`, an unblocked factor of the panel (the rows' swaps applied across the whole
//! matrix), a unit-lower triangular solve for the block row right of it, and the trailing
//! update `a22 -= l21 u12` as one [`Scalar::gemm`].
use super::kernels::{axpy8, Scalar};
use super::triangular_solve::solve_view;

/// The panel width (32: the unblocked panels cost `m n NB / 2` of the `m n² ` multiply-adds).
const NB: usize = 32;

/// LU with partial pivoting of the `m x n` matrix `a` in place (LAPACK getrf): `l`
/// (unit lower, below the diagonal) and `u` packed in `a`; `pivots` (length min(m, n))
/// and `perm` (length m) as in JAX. The pivot of each column is its first entry of maximal
/// magnitude (a NaN only when the rest are NaN); a zero pivot leaves its column as it is.
pub fn lu<T: Scalar>(a: &mut [T], m: usize, n: usize, pivots: &mut [i32], perm: &mut [i32]) {
    assert!(a.len() >= m * n && pivots.len() >= m.min(n) && perm.len() >= m, "lu: buffers too small for {m} x {n}");
    for (i, p) in perm.iter_mut().enumerate() {
        *p = i as i32;
    }
    let kmin = m.min(n);
    let ld = n as isize;
    for j0 in (0..kmin).step_by(NB) {
        let j1 = (j0 + NB).min(kmin);
        factor_panel(a, m, n, j0, j1, pivots, perm);
        if j1 == n {
            continue;
        }
        let p = a.as_mut_ptr();
        // SAFETY: the views lie inside `a` (m x n, row stride n): l11 (rows/cols j0..j1), u12
        // (rows j0..j1, cols j1..n), l21 (rows j1..m, cols j0..j1) and a22 (rows j1..m, cols
        // j1..n); the solve's and the GEMM's outputs do not overlap their inputs.
        unsafe {
            solve_view(p.add(j0 * n + j0) as *const T, ld, 1, j1 - j0, true, true, p.add(j0 * n + j1), ld, 1, n - j1);
            T::gemm(m - j1, j1 - j0, n - j1, -T::ONE, p.add(j1 * n + j0) as *const T, ld, 1, p.add(j0 * n + j1) as *const T, ld, 1, T::ONE, p.add(j1 * n + j1), ld, 1);
        }
    }
}

/// Unblocked LU of the panel of columns `j0..j1` (rows `j0..m`), on a column-major copy of
/// the panel (contiguous pivot searches and column updates): pivot, swap the panel's rows,
/// eliminate within the panel; the copy written back, then the panel's row swaps applied to
/// the columns outside it in order (LAPACK's laswp). The same operations per element as an
/// elimination in place (compiled for AVX2 where the CPU has it).
fn factor_panel<T: Scalar>(a: &mut [T], m: usize, n: usize, j0: usize, j1: usize, pivots: &mut [i32], perm: &mut [i32]) {
    let (w, h) = (j1 - j0, m - j0);
    // The copy's column stride: not a power of two, so that its columns (and the matrix's
    // rows, copied eight at a time) do not crowd into a few cache sets.
    let ld = h.next_multiple_of(8) + 8;
    let mut p = vec![T::ZERO; w * ld];
    let first = j0 * n + j0;
    for i0 in (0..h).step_by(8) {
        for (r, row) in a[first + i0 * n..].chunks(n).take(8.min(h - i0)).enumerate() {
            for (c, &x) in row[..w].iter().enumerate() {
                p[c * ld + i0 + r] = x;
            }
        }
    }
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2.
        unsafe { eliminate_avx2(&mut p, [w, h, ld], &mut pivots[j0..j1]) };
    } else {
        eliminate(&mut p, [w, h, ld], &mut pivots[j0..j1]);
    }
    #[cfg(not(target_arch = "x86_64"))]
    eliminate(&mut p, [w, h, ld], &mut pivots[j0..j1]);
    for i0 in (0..h).step_by(8) {
        for (r, row) in a[first + i0 * n..].chunks_mut(n).take(8.min(h - i0)).enumerate() {
            for (c, x) in row[..w].iter_mut().enumerate() {
                *x = p[c * ld + i0 + r];
            }
        }
    }
    for j in j0..j1 {
        // `eliminate` left the pivot rows relative to the panel's first row.
        let q = j0 + pivots[j] as usize;
        pivots[j] = q as i32;
        if q != j {
            perm.swap(j, q);
            let (top, rest) = a.split_at_mut(q * n);
            let (rj, rq) = (&mut top[j * n..j * n + n], &mut rest[..n]);
            rj[..j0].swap_with_slice(&mut rq[..j0]);
            rj[j1..].swap_with_slice(&mut rq[j1..]);
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn eliminate_avx2<T: Scalar>(p: &mut [T], dims: [usize; 3], pivots: &mut [i32]) {
    eliminate(p, dims, pivots)
}

/// LU with partial pivoting of the column-major `h x w` panel `p` (`h >= w`, column stride
/// `ld`) in place; the
/// pivot rows (relative to the panel) into `pivots`. The pivot of each column is its first
/// entry of maximal magnitude (a NaN only when the rest are NaN); a zero pivot leaves its
/// column as it is.
#[inline(always)]
fn eliminate<T: Scalar>(p: &mut [T], [w, h, ld]: [usize; 3], pivots: &mut [i32]) {
    for j in 0..w {
        let col = &p[j * ld..j * ld + h];
        let mut q = j;
        let mut best = col[j].abs();
        for (i, &v) in col[j + 1..].iter().enumerate() {
            let v = v.abs();
            if v > best || (best.is_nan() && !v.is_nan()) {
                best = v;
                q = j + 1 + i;
            }
        }
        pivots[j] = q as i32;
        if q != j {
            for c in 0..w {
                p.swap(c * ld + j, c * ld + q);
            }
        }
        let d = p[j * ld + j];
        if d != T::ZERO {
            let (left, right) = p.split_at_mut((j + 1) * ld);
            let l = &mut left[j * ld + j + 1..j * ld + h];
            for f in l.iter_mut() {
                *f = *f / d;
            }
            for c in 0..w - j - 1 {
                let colc = &mut right[c * ld..c * ld + h];
                let u = colc[j];
                axpy8(&mut colc[j + 1..], u, l);
            }
        }
    }
}

//! Blocked LU with partial pivoting (LAPACK getrf's right-looking structure): per block
//! column of `NB`, an unblocked factor of the panel (the rows' swaps applied across the whole
//! matrix), a unit-lower triangular solve for the block row right of it, and the trailing
//! update `a22 -= l21 u12` as one [`Scalar::gemm`].
use super::kernels::{axpy, Scalar};
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

/// Unblocked LU of the panel of columns `j0..j1` (rows `j0..m`): pivot, swap whole rows,
/// eliminate within the panel (compiled for AVX2 where the CPU has it: the same operations
/// per element).
fn factor_panel<T: Scalar>(a: &mut [T], m: usize, n: usize, j0: usize, j1: usize, pivots: &mut [i32], perm: &mut [i32]) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2.
        return unsafe { factor_panel_avx2(a, m, n, j0, j1, pivots, perm) };
    }
    factor_panel_body(a, m, n, j0, j1, pivots, perm)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn factor_panel_avx2<T: Scalar>(a: &mut [T], m: usize, n: usize, j0: usize, j1: usize, pivots: &mut [i32], perm: &mut [i32]) {
    factor_panel_body(a, m, n, j0, j1, pivots, perm)
}

#[inline(always)]
fn factor_panel_body<T: Scalar>(a: &mut [T], m: usize, n: usize, j0: usize, j1: usize, pivots: &mut [i32], perm: &mut [i32]) {
    for j in j0..j1 {
        let mut p = j;
        let mut best = a[j * n + j].abs();
        for i in j + 1..m {
            let v = a[i * n + j].abs();
            if v > best || (best.is_nan() && !v.is_nan()) {
                best = v;
                p = i;
            }
        }
        pivots[j] = p as i32;
        if p != j {
            for c in 0..n {
                a.swap(j * n + c, p * n + c);
            }
            perm.swap(j, p);
        }
        let d = a[j * n + j];
        if d != T::ZERO {
            let (top, rest) = a.split_at_mut((j + 1) * n);
            let prow = &top[j * n + j + 1..j * n + j1];
            for i in 0..m - j - 1 {
                let row = &mut rest[i * n + j..i * n + j1];
                let f = row[0] / d;
                row[0] = f;
                axpy(&mut row[1..], f, prow);
            }
        }
    }
}

//! Recursive Cholesky (LAPACK potrf2's structure) computed as the upper factor `u` (`a = uᵀ u`)
//! of row-major data, where both GEMM operands of its updates are read along their rows
//! (matrixmultiply packs those fastest): the leading half factored, the block row right of it
//! solved (`u11ᵀ x = a12`, the recursive triangular solve), the trailing half updated by
//! `x ᵀ x` (recursive halves of [`Scalar::gemm`]s), then factored; blocks of `BASE`
//! unblocked. The lower factor is its transpose.
use super::kernels::{axpy, load_tile_t, store_tile, transpose_triangle_into, Scalar, TILE};
use super::triangular_solve::{solve_view, split};

/// Cholesky factor of the `n x n` matrix `a` (its `lower` triangle, else its upper one)
/// into `out`: `l` with `a = l lᵀ` (or `u` with `a = uᵀ u`), zeros in the other
/// triangle; NaN in the factor's triangle when `a` is not positive definite (as JAX).
pub fn cholesky<T: Scalar>(a: &[T], n: usize, lower: bool, out: &mut [T]) {
    assert!(a.len() >= n * n && out.len() >= n * n, "cholesky: buffers too small for {n} x {n}");
    let (a, out) = (&a[..n * n], &mut out[..n * n]);
    if lower {
        // u = the lower triangle of a, transposed (the other triangle comes along, unread).
        transpose_triangle_into(a, n, true, out);
        let ok = factor_upper(out, n);
        transpose_in_place(out, n);
        finish(out, n, true, ok);
    } else {
        out.copy_from_slice(a);
        let ok = factor_upper(out, n);
        finish(out, n, false, ok);
    }
}

/// Zeros outside the factor's triangle (`lower` or upper); NaN inside it unless `ok`.
fn finish<T: Scalar>(out: &mut [T], n: usize, lower: bool, ok: bool) {
    for (r, row) in out.chunks_exact_mut(n).enumerate() {
        let (lo, hi) = row.split_at_mut(if lower { r + 1 } else { r });
        let (inside, outside) = if lower { (lo, hi) } else { (hi, lo) };
        outside.fill(T::ZERO);
        if !ok {
            inside.fill(T::NAN);
        }
    }
}

/// Transposes the `n x n` row-major matrix `w` in place, swapping tiles across the diagonal.
fn transpose_in_place<T: Scalar>(w: &mut [T], n: usize) {
    assert!(w.len() >= n * n);
    let p = w.as_mut_ptr();
    for i0 in (0..n).step_by(TILE) {
        let rows = TILE.min(n - i0);
        for j0 in (0..=i0).step_by(TILE) {
            let cols = TILE.min(n - j0);
            // SAFETY: both tiles lie inside the n x n buffer (asserted); each is read whole
            // before either is written.
            unsafe {
                let a = load_tile_t(p, n, i0, j0, rows, cols);
                let b = load_tile_t(p, n, j0, i0, cols, rows);
                store_tile(&a, p, n, j0, i0, cols, rows);
                store_tile(&b, p, n, i0, j0, rows, cols);
            }
        }
    }
}

/// Factors the upper triangle of the row-major `n x n` matrix `w` in place (`w = uᵀ u`;
/// the strict lower triangle is not read, and partly overwritten); false when a pivot is not
/// positive (the matrix is not positive definite, or has a NaN).
fn factor_upper<T: Scalar>(w: &mut [T], n: usize) -> bool {
    // SAFETY: the recursion's views lie inside `w` (n x n, row stride n).
    unsafe { factor_rec(w.as_mut_ptr(), n as isize, n) }
}

/// The largest block factored unblocked.
const BASE: usize = 16;
/// The largest diagonal block of the trailing update done as one full GEMM.
const SYRK_BASE: usize = 32;

/// Recursive Cholesky of the `n x n` upper triangle at `p` (row stride `ld`).
unsafe fn factor_rec<T: Scalar>(p: *mut T, ld: isize, n: usize) -> bool {
    if n <= BASE {
        return factor_unblocked(p, ld, n);
    }
    let n1 = split(n, BASE);
    let n2 = n - n1;
    if !factor_rec(p, ld, n1) {
        return false;
    }
    let a12 = p.add(n1);
    // u11ᵀ x = a12: u11ᵀ[i, j] = u11[j, i] (lower, column-contiguous).
    solve_view(p as *const T, 1, ld, n1, true, false, a12, ld, 1, n2);
    let p22 = p.offset(n1 as isize * (ld + 1));
    syrk_upper(p22, ld, n2, a12, ld, n1);
    factor_rec(p22, ld, n2)
}

/// `c -= aᵀ a` on the upper triangle of the `n x n` matrix `c` (row stride `ldc`; the strict
/// lower part of its diagonal blocks of up to `SYRK_BASE` is overwritten too) for the `k x n`
/// matrix `a` (row stride `lda`), not overlapping `c`: recursive halves, the off-diagonal
/// block one GEMM.
unsafe fn syrk_upper<T: Scalar>(c: *mut T, ldc: isize, n: usize, a: *const T, lda: isize, k: usize) {
    if n <= SYRK_BASE {
        T::gemm(n, k, n, -T::ONE, a, 1, lda, a, lda, 1, T::ONE, c, ldc, 1);
        return;
    }
    let n1 = split(n, SYRK_BASE);
    let a2 = a.add(n1);
    syrk_upper(c, ldc, n1, a, lda, k);
    T::gemm(n1, k, n - n1, -T::ONE, a, 1, lda, a2, lda, 1, T::ONE, c.add(n1), ldc, 1);
    syrk_upper(c.offset(n1 as isize * (ldc + 1)), ldc, n - n1, a2, lda, k);
}

/// Unblocked right-looking factor of the `n x n` upper triangle at `p`, by rows (compiled
/// for AVX2 where the CPU has it: the same operations per element, four lanes wide).
unsafe fn factor_unblocked<T: Scalar>(p: *mut T, ld: isize, n: usize) -> bool {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        return factor_unblocked_avx2(p, ld, n);
    }
    factor_unblocked_body(p, ld, n)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn factor_unblocked_avx2<T: Scalar>(p: *mut T, ld: isize, n: usize) -> bool {
    factor_unblocked_body(p, ld, n)
}

#[inline(always)]
unsafe fn factor_unblocked_body<T: Scalar>(p: *mut T, ld: isize, n: usize) -> bool {
    let row = |i: usize| std::slice::from_raw_parts_mut(p.offset(i as isize * ld), n);
    for i in 0..n {
        let ri = row(i);
        let s = ri[i];
        if !(s > T::ZERO) {
            return false;
        }
        let d = s.sqrt();
        ri[i] = d;
        for e in &mut ri[i + 1..] {
            *e = *e / d;
        }
        let ri = &*ri;
        for r in i + 1..n {
            let f = ri[r];
            axpy(&mut row(r)[r..], f, &ri[r..]);
        }
    }
    true
}

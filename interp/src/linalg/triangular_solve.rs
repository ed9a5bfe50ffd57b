//! Blocked triangular solve (LAPACK's recursive trsm structure): every variant is `t x = b`
//! for a strided view `t` of `a` (`op(a)` for the left side, `op(a)ᵀ` with `x` viewed
//! transposed for the right side), split recursively in halves: solve one half, subtract its
//! contribution from the other by one [`Scalar::gemm`], solve the other; blocks of `BASE` rows
//! are solved densely with register-blocked row updates. A few
//! right-hand sides are solved one at a time instead (dots or axpys along `t`'s contiguous
//! direction), where a GEMM would only pack.
use super::kernels::{axpy, dot, transpose, transpose_into, transpose_triangle_into, Scalar};

/// The largest diagonal block solved directly (below it, the recursion's GEMMs are too small).
pub(super) const BASE: usize = 16;
/// Up to this many right-hand sides are solved one at a time.
const FEW: usize = 4;

/// Solves `op(a) x = b` (left side; `b` is `m x k`) or `x op(a) = b` (`b` is `k x m`)
/// for the `m x m` triangular `a`; `x` overwrites `b`.
#[allow(clippy::too_many_arguments)]
pub fn triangular_solve<T: Scalar>(a: &[T], m: usize, b: &mut [T], k: usize, left_side: bool, lower: bool, transpose_a: bool, unit_diagonal: bool) {
    assert!(a.len() >= m * m && b.len() >= m * k, "triangular_solve: a {} elements for m = {m}, b {} for k = {k}", a.len(), b.len());
    let mi = m as isize;
    let eff_lower = lower != transpose_a;
    if k <= FEW || m <= BASE {
        // op(a)[i, j] at i * rs + j * cs.
        let (rs, cs) = if transpose_a { (1, mi) } else { (mi, 1) };
        // SAFETY: the views address exactly the m x m elements of `a` and the m x k of `b`.
        unsafe {
            if left_side {
                solve_view(a.as_ptr(), rs, cs, m, eff_lower, unit_diagonal, b.as_mut_ptr(), k as isize, 1, k);
            } else {
                // x op(a) = b  <=>  op(a)ᵀ xᵀ = bᵀ, xᵀ being b's k x m read by columns.
                solve_view(a.as_ptr(), cs, rs, m, !eff_lower, unit_diagonal, b.as_mut_ptr(), 1, mi, k);
            }
        }
        return;
    }
    // The GEMMs read their first operand (the triangle) fastest by columns and their second
    // (solved rows of x) by rows: the triangle is copied column-major and a right side's x
    // transposed when they are not already so (O(m² + mk) against the solve's O(m² k)).
    // t = op(a) (left) or op(a)ᵀ (right), lower when `t_lower`; t[i, j] at j * m + i.
    let (t_lower, t_transposed) = if left_side { (eff_lower, transpose_a) } else { (!eff_lower, !transpose_a) };
    let owned;
    let t: &[T] = if t_transposed {
        // t = aᵀ: t[i, j] = a[j, i] at j * m + i already.
        a
    } else {
        let mut t = vec![T::ZERO; m * m];
        transpose_triangle_into(a, m, lower, &mut t);
        owned = t;
        &owned
    };
    // SAFETY: the views address exactly the m x m elements of `t` and the m x k of `x`.
    unsafe {
        if left_side {
            solve_view(t.as_ptr(), 1, mi, m, t_lower, unit_diagonal, b.as_mut_ptr(), k as isize, 1, k);
        } else {
            let mut xt = transpose(b, k, m);
            solve_view(t.as_ptr(), 1, mi, m, t_lower, unit_diagonal, xt.as_mut_ptr(), k as isize, 1, k);
            transpose_into(&xt, m, k, b);
        }
    }
}

/// Solves `t x = b` in place (`x` overwrites `b`) for the `m x m` view `t` (element `[i, j]`
/// at `t + i rs + j cs`; only its `lower` or upper triangle is read, and its diagonal taken
/// as ones with `unit`) and the `m x k` view `x` (`[i, c]` at `x + i rsx + c csx`). One of
/// `rs`, `cs` is 1.
///
/// # Safety
/// The views' elements must be valid, `x`'s for writes, and not overlap `t`'s triangle.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn solve_view<T: Scalar>(t: *const T, rs: isize, cs: isize, m: usize, lower: bool, unit: bool, x: *mut T, rsx: isize, csx: isize, k: usize) {
    if m == 0 || k == 0 {
        return;
    }
    if k <= FEW {
        let mut v = vec![T::ZERO; m];
        for c in 0..k {
            let col = x.offset(c as isize * csx);
            for (i, e) in v.iter_mut().enumerate() {
                *e = *col.offset(i as isize * rsx);
            }
            solve_vector(t, rs, cs, m, lower, unit, &mut v);
            for (i, e) in v.iter().enumerate() {
                *col.offset(i as isize * rsx) = *e;
            }
        }
        return;
    }
    let mut scratch = Vec::new();
    solve_rec(t, rs, cs, m, lower, unit, x, rsx, csx, k, &mut scratch);
}

/// The first part of a recursive split of `m > BASE`: about half, a multiple of `BASE`.
pub(super) fn split(m: usize, base: usize) -> usize {
    (m / 2).div_ceil(base) * base
}

/// [`solve_view`] for more than [`FEW`] right-hand sides: split in two (LAPACK's recursive
/// structure), the solved half's contribution to the other subtracted by one GEMM; blocks of
/// at most `BASE` rows by [`solve_block`].
#[allow(clippy::too_many_arguments)]
unsafe fn solve_rec<T: Scalar>(t: *const T, rs: isize, cs: isize, m: usize, lower: bool, unit: bool, x: *mut T, rsx: isize, csx: isize, k: usize, scratch: &mut Vec<T>) {
    if m <= BASE {
        solve_block(t, rs, cs, m, lower, unit, x, rsx, csx, k, scratch);
        return;
    }
    let m1 = split(m, BASE);
    let m2 = m - m1;
    let (t11, t12, t21, t22) = (t, t.offset(m1 as isize * cs), t.offset(m1 as isize * rs), t.offset(m1 as isize * (rs + cs)));
    let (x1, x2) = (x, x.offset(m1 as isize * rsx));
    if lower {
        solve_rec(t11, rs, cs, m1, lower, unit, x1, rsx, csx, k, scratch);
        T::gemm(m2, m1, k, -T::ONE, t21, rs, cs, x1, rsx, csx, T::ONE, x2, rsx, csx);
        solve_rec(t22, rs, cs, m2, lower, unit, x2, rsx, csx, k, scratch);
    } else {
        solve_rec(t22, rs, cs, m2, lower, unit, x2, rsx, csx, k, scratch);
        T::gemm(m1, m2, k, -T::ONE, t12, rs, cs, x2, rsx, csx, T::ONE, x1, rsx, csx);
        solve_rec(t11, rs, cs, m1, lower, unit, x1, rsx, csx, k, scratch);
    }
}

/// Solves one diagonal block of `ib <= BASE` rows: its triangle copied dense, then
/// [`solve_rows`] on `x`'s rows (where they are when contiguous, else through a row-major
/// copy in `scratch`).
#[allow(clippy::too_many_arguments)]
unsafe fn solve_block<T: Scalar>(t: *const T, rs: isize, cs: isize, ib: usize, lower: bool, unit: bool, xb: *mut T, rsx: isize, csx: isize, k: usize, scratch: &mut Vec<T>) {
    let at = |i: usize, j: usize| *t.offset(i as isize * rs + j as isize * cs);
    let mut d = [T::ZERO; BASE * BASE];
    for i in 0..ib {
        for j in 0..ib {
            let inside = if lower { j < i } else { j > i };
            d[i * ib + j] = if i == j {
                if unit { T::ONE } else { at(i, j) }
            } else if inside {
                at(i, j)
            } else {
                T::ZERO
            };
        }
    }
    let d = &d[..ib * ib];
    if csx == 1 {
        solve_rows(d, ib, lower, unit, xb, rsx, k);
    } else {
        scratch.resize(ib * k, T::ZERO);
        for i in 0..ib {
            for c in 0..k {
                scratch[i * k + c] = *xb.offset(i as isize * rsx + c as isize * csx);
            }
        }
        solve_rows(d, ib, lower, unit, scratch.as_mut_ptr(), k as isize, k);
        for i in 0..ib {
            for c in 0..k {
                *xb.offset(i as isize * rsx + c as isize * csx) = scratch[i * k + c];
            }
        }
    }
}

/// Solves `d y = y` in place for the dense row-major `ib x ib` triangular `d` (zeros outside
/// its triangle) and the `ib x k` rows `y` (row `i` at `y + i ry`, contiguous): for each row
/// in solve order, the solved rows subtracted four at a time (one pass over the row per
/// four).
///
/// # Safety
/// `y`'s rows must be valid for reads and writes.
unsafe fn solve_rows<T: Scalar>(d: &[T], ib: usize, lower: bool, unit: bool, y: *mut T, ry: isize, k: usize) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        return solve_rows_avx2(d, ib, lower, unit, y, ry, k);
    }
    solve_rows_body(d, ib, lower, unit, y, ry, k)
}

/// [`solve_rows_body`] compiled for AVX2 (the same operations in the same order per element,
/// four lanes wide: results equal to the baseline build's).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn solve_rows_avx2<T: Scalar>(d: &[T], ib: usize, lower: bool, unit: bool, y: *mut T, ry: isize, k: usize) {
    solve_rows_body(d, ib, lower, unit, y, ry, k)
}

#[inline(always)]
unsafe fn solve_rows_body<T: Scalar>(d: &[T], ib: usize, lower: bool, unit: bool, y: *mut T, ry: isize, k: usize) {
    let row = |i: usize| std::slice::from_raw_parts(y.offset(i as isize * ry), k);
    for s in 0..ib {
        let i = if lower { s } else { ib - 1 - s };
        let (lo, hi) = if lower { (0, i) } else { (i + 1, ib) };
        let yi = std::slice::from_raw_parts_mut(y.offset(i as isize * ry), k);
        let di = &d[i * ib..i * ib + ib];
        let mut j = lo;
        while j + 4 <= hi {
            let (c0, c1, c2, c3) = (di[j], di[j + 1], di[j + 2], di[j + 3]);
            for ((((e, a0), a1), a2), a3) in yi.iter_mut().zip(row(j)).zip(row(j + 1)).zip(row(j + 2)).zip(row(j + 3)) {
                *e = *e - ((c0 * *a0 + c1 * *a1) + (c2 * *a2 + c3 * *a3));
            }
            j += 4;
        }
        for jj in j..hi {
            let c = di[jj];
            for (e, a) in yi.iter_mut().zip(row(jj)) {
                *e = *e - c * *a;
            }
        }
        if !unit {
            let dii = di[i];
            for e in yi.iter_mut() {
                *e = *e / dii;
            }
        }
    }
}

/// Solves `t v = b` for one contiguous right-hand side `v` (overwritten), by dots along `t`'s
/// rows when they are contiguous, else by axpys along its columns.
///
/// # Safety
/// As [`solve_view`]'s for `t`.
unsafe fn solve_vector<T: Scalar>(t: *const T, rs: isize, cs: isize, m: usize, lower: bool, unit: bool, v: &mut [T]) {
    let diag = |i: usize| *t.offset(i as isize * (rs + cs));
    if cs == 1 {
        let row = |i: usize, from: usize, to: usize| std::slice::from_raw_parts(t.offset(i as isize * rs + from as isize), to - from);
        for s in 0..m {
            let i = if lower { s } else { m - 1 - s };
            let r = if lower { dot(row(i, 0, i), &v[..i]) } else { dot(row(i, i + 1, m), &v[i + 1..]) };
            let e = v[i] - r;
            v[i] = if unit { e } else { e / diag(i) };
        }
    } else {
        // Columns contiguous (rs == 1): t[i, j] at t + j cs + i.
        let col = |j: usize, from: usize, to: usize| std::slice::from_raw_parts(t.offset(j as isize * cs + from as isize), to - from);
        for s in 0..m {
            let j = if lower { s } else { m - 1 - s };
            let xj = if unit { v[j] } else { v[j] / diag(j) };
            v[j] = xj;
            if lower {
                axpy(&mut v[j + 1..], xj, col(j, j + 1, m));
            } else {
                axpy(&mut v[..j], xj, col(j, 0, j));
            }
        }
    }
}

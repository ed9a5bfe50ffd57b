//! The per-matrix kernels (row-major slices), shared with the CPU runtime. `cholesky`,
//! `triangular_solve`, `lu`, `qr` and `eigh` are blocked (LAPACK's potrf / trsm / getrf /
//! geqrf / sytrd + steqr structure, their own modules beside this one) with their bulk in
//! [`Scalar::gemm`]; `svd` is the unblocked kernel below.
use std::ops::{Add, Div, Mul, Neg, Sub};

pub use super::cholesky::cholesky;
pub use super::eigh::eigh;
pub use super::qr::qr;
pub use super::lu::lu;
pub use super::triangular_solve::triangular_solve;

/// A float element type the kernels compute at.
pub trait Scalar: Copy + PartialOrd + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Div<Output = Self> + Neg<Output = Self> + 'static {
    const ZERO: Self;
    const ONE: Self;
    const NAN: Self;
    const EPS: Self;
    fn sqrt(self) -> Self;
    fn abs(self) -> Self;
    fn is_nan(self) -> bool;
    /// `c = alpha a b + beta c` for the `m x k` matrix `a`, the `k x n` matrix `b` and the
    /// `m x n` matrix `c`, each given by a pointer and its row and column strides (in
    /// elements); `c` is not read when `beta` is zero. One thread, a fixed order of additions
    /// for given extents: the blocked factorizations' updates (`alpha` 1 or -1, `beta` 0 or 1,
    /// `c`'s columns contiguous) through `quabla_kernels`' packed product (AVX-512 / AVX2
    /// micro-kernels; `alpha` -1 by a negated copy of the smaller factor), the rest through matrixmultiply's
    /// (the SIMD kernel of either chosen at run time by the CPU's features). On Zen 4 the LU of
    /// `linalg.solve` 256 (8 right-hand sides) went 700 -> 470 us.
    ///
    /// # Safety
    /// Every element the strides address must be valid (`c` for writes), and `c` must not
    /// overlap `a` or `b`.
    #[allow(clippy::too_many_arguments)]
    unsafe fn gemm(m: usize, k: usize, n: usize, alpha: Self, a: *const Self, rsa: isize, csa: isize, b: *const Self, rsb: isize, csb: isize, beta: Self, c: *mut Self, rsc: isize, csc: isize);
}

macro_rules! scalar {
    ($t:ty, $gemm:path) => {
        impl Scalar for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const NAN: Self = <$t>::NAN;
            const EPS: Self = <$t>::EPSILON;
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            #[inline(always)]
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            unsafe fn gemm(m: usize, k: usize, n: usize, alpha: Self, a: *const Self, rsa: isize, csa: isize, b: *const Self, rsb: isize, csb: isize, beta: Self, c: *mut Self, rsc: isize, csc: isize) {
                if m == 0 || n == 0 {
                    return;
                }
                if packed(m, k, n, alpha, a, [rsa, csa], b, [rsb, csb], beta, c, [rsc, csc]) {
                    return;
                }
                $gemm(m, k, n, alpha, a, rsa, csa, b, rsb, csb, beta, c, rsc, csc)
            }
        }
    };
}
/// [`Scalar::gemm`] through `quabla_kernels`' packed product when it applies (`alpha` 1 or -1,
/// `beta` 0 or 1, `c`'s columns contiguous, the scratch allocated); false when it does not.
#[allow(clippy::too_many_arguments)]
unsafe fn packed<T: Scalar + quabla_kernels::gemm::Real>(m: usize, k: usize, n: usize, alpha: T, a: *const T, [rsa, csa]: [isize; 2], b: *const T, [rsb, csb]: [isize; 2], beta: T, c: *mut T, [rsc, csc]: [isize; 2]) -> bool {
    use quabla_kernels::gemm::{gemm, Mat, Problem, Serial};
    let negate = alpha == -T::ONE;
    if csc != 1 || !(alpha == T::ONE || negate) || !(beta == T::ZERO || beta == T::ONE) {
        return false;
    }
    // `alpha` -1: a negated row-major copy of the smaller factor (`a` for a factorization's
    // trailing update, `b` for a solve's few right-hand sides).
    let neg_a = negate && m <= n;
    let (rows, cols, src, [rs, cs]) = if neg_a { (m, k, a, [rsa, csa]) } else { (k, n, b, [rsb, csb]) };
    let mut neg: Vec<T> = Vec::new();
    if negate && k > 0 {
        if neg.try_reserve_exact(rows * cols).is_err() {
            return false;
        }
        for i in 0..rows {
            let row = src.offset(i as isize * rs);
            neg.extend((0..cols).map(|p| -*row.offset(p as isize * cs)));
        }
    }
    let copy = Mat { ptr: neg.as_ptr(), rs: cols as isize, cs: 1 };
    let am = if negate && neg_a { copy } else { Mat { ptr: a, rs: rsa, cs: csa } };
    let bm = if negate && !neg_a { copy } else { Mat { ptr: b, rs: rsb, cs: csb } };
    let p = Problem { m, n, k, a: am, b: bm, c, ldc: rsc, accumulate: beta == T::ONE };
    gemm(&p, &Serial).is_ok()
}

scalar!(f32, matrixmultiply::sgemm);
scalar!(f64, matrixmultiply::dgemm);

/// Dot product of two equal-length slices with four independent accumulators (the order
/// of additions is fixed, so results are deterministic).
pub fn dot<T: Scalar>(x: &[T], y: &[T]) -> T {
    let n = x.len().min(y.len());
    let (x, y) = (&x[..n], &y[..n]);
    let mut acc = [T::ZERO; 4];
    let mut xc = x.chunks_exact(4);
    let mut yc = y.chunks_exact(4);
    for (a, b) in (&mut xc).zip(&mut yc) {
        acc[0] = acc[0] + a[0] * b[0];
        acc[1] = acc[1] + a[1] * b[1];
        acc[2] = acc[2] + a[2] * b[2];
        acc[3] = acc[3] + a[3] * b[3];
    }
    let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for (a, b) in xc.remainder().iter().zip(yc.remainder()) {
        s = s + *a * *b;
    }
    s
}

/// `y -= alpha * x` elementwise.
#[inline]
pub(super) fn axpy<T: Scalar>(y: &mut [T], alpha: T, x: &[T]) {
    for (a, b) in y.iter_mut().zip(x) {
        *a = *a - alpha * *b;
    }
}

/// [`axpy`] eight elements at a time (the same operation per element; a shape the
/// vectorizer takes where it leaves the plain loop scalar).
#[inline(always)]
pub(super) fn axpy8<T: Scalar>(y: &mut [T], alpha: T, x: &[T]) {
    let n = y.len().min(x.len());
    let (y, x) = (&mut y[..n], &x[..n]);
    let mut yc = y.chunks_exact_mut(8);
    let mut xc = x.chunks_exact(8);
    for (a, b) in (&mut yc).zip(&mut xc) {
        // Local copies: the loads and stores cannot alias, the eight lanes are independent.
        let (mut y, x): ([T; 8], [T; 8]) = (a.try_into().expect("a chunk of 8"), b.try_into().expect("a chunk of 8"));
        for (y, x) in y.iter_mut().zip(x) {
            *y = *y - alpha * x;
        }
        a.copy_from_slice(&y);
    }
    axpy(yc.into_remainder(), alpha, xc.remainder());
}

/// Transposes an `r x c` matrix.
pub fn transpose<T: Scalar>(a: &[T], r: usize, c: usize) -> Vec<T> {
    let mut t = vec![T::ZERO; r * c];
    transpose_into(a, r, c, &mut t);
    t
}

/// The tile of [`transpose_into`] and [`transpose_in_place`].
pub(super) const TILE: usize = 8;

/// Copies the `TILE x TILE` tile at `(i0, j0)` of the row-major `n`-wide `src`, transposed,
/// into a local array (`rows x cols` of it valid).
///
/// # Safety
/// The tile's elements must be valid.
#[allow(clippy::needless_range_loop)]
pub(super) unsafe fn load_tile_t<T: Scalar>(src: *const T, n: usize, i0: usize, j0: usize, rows: usize, cols: usize) -> [[T; TILE]; TILE] {
    let mut t = [[T::ZERO; TILE]; TILE];
    if rows == TILE && cols == TILE {
        for i in 0..TILE {
            let r = &*(src.add((i0 + i) * n + j0) as *const [T; TILE]);
            for j in 0..TILE {
                t[j][i] = r[j];
            }
        }
        return t;
    }
    for i in 0..rows {
        for j in 0..cols {
            t[j][i] = *src.add((i0 + i) * n + j0 + j);
        }
    }
    t
}

/// Writes the local tile `t` (`rows x cols` of it) at `(i0, j0)` of the row-major `n`-wide
/// `dst`.
///
/// # Safety
/// The tile's elements must be valid for writes.
pub(super) unsafe fn store_tile<T: Scalar>(t: &[[T; TILE]; TILE], dst: *mut T, n: usize, i0: usize, j0: usize, rows: usize, cols: usize) {
    if rows == TILE && cols == TILE {
        for (i, tr) in t.iter().enumerate() {
            *(dst.add((i0 + i) * n + j0) as *mut [T; TILE]) = *tr;
        }
        return;
    }
    for (i, tr) in t.iter().enumerate().take(rows) {
        for (j, e) in tr.iter().enumerate().take(cols) {
            *dst.add((i0 + i) * n + j0 + j) = *e;
        }
    }
}

/// `dst = srcᵀ` for the row-major `r x c` matrix `src` (`dst` is `c x r`), by tiles.
pub fn transpose_into<T: Scalar>(src: &[T], r: usize, c: usize, dst: &mut [T]) {
    transpose_tiles(src, r, c, dst, None);
}

/// [`transpose_into`] for a square `src`, only the tiles that meet its `lower` (else upper)
/// triangle (the rest of `dst` is left as it was).
pub fn transpose_triangle_into<T: Scalar>(src: &[T], n: usize, lower: bool, dst: &mut [T]) {
    transpose_tiles(src, n, n, dst, Some(lower));
}

fn transpose_tiles<T: Scalar>(src: &[T], r: usize, c: usize, dst: &mut [T], triangle: Option<bool>) {
    assert!(src.len() >= r * c && dst.len() >= r * c);
    for i0 in (0..r).step_by(TILE) {
        let rows = TILE.min(r - i0);
        let (from, to) = match triangle {
            None => (0, c),
            Some(true) => (0, (i0 + rows).min(c)),
            Some(false) => (i0 / TILE * TILE, c),
        };
        for j0 in (from..to).step_by(TILE) {
            let cols = TILE.min(c - j0);
            // SAFETY: both tiles lie inside the r x c buffers (asserted).
            unsafe {
                let t = load_tile_t(src.as_ptr(), c, i0, j0, rows, cols);
                store_tile(&t, dst.as_mut_ptr(), r, j0, i0, cols, rows);
            }
        }
    }
}

/// Rotates rows `p` and `q` of the row-major matrix `mat` (rows of `len`) in their plane:
/// `(x, y) -> (c x - s y, s x + c y)` element by element (a Jacobi / Givens step).
fn rotate_rows<T: Scalar>(mat: &mut [T], len: usize, p: usize, q: usize, c: T, s: T) {
    for k in 0..len {
        let (x, y) = (mat[p * len + k], mat[q * len + k]);
        mat[p * len + k] = c * x - s * y;
        mat[q * len + k] = s * x + c * y;
    }
}

/// Orthonormal columns: completes the rows of `ut` (`c` rows of length `m`) marked
/// missing with unit vectors orthogonal to the others (Gram-Schmidt on the standard
/// basis, twice for stability).
fn complete<T: Scalar>(ut: &mut [T], m: usize, missing: &[bool]) {
    let c = missing.len();
    let mut e = 0;
    for j in 0..c {
        if !missing[j] {
            continue;
        }
        while e < m {
            let mut x = vec![T::ZERO; m];
            x[e] = T::ONE;
            e += 1;
            for _ in 0..2 {
                for k in 0..c {
                    if k != j && (!missing[k] || k < j) {
                        let row = &ut[k * m..k * m + m];
                        let d = dot(&x, row);
                        axpy(&mut x, d, row);
                    }
                }
            }
            let nrm = dot(&x, &x).sqrt();
            if nrm > (T::ONE + T::ONE).sqrt() / (T::ONE + T::ONE + T::ONE) {
                for (dst, s) in ut[j * m..j * m + m].iter_mut().zip(&x) {
                    *dst = *s / nrm;
                }
                break;
            }
        }
    }
}

/// SVD of the `m x n` matrix `a` by one-sided Jacobi: `u` (`m x cu`), `s` (length
/// min(m, n), descending), `vt` (`rv x n`), with `cu = m, rv = n` (`full`) or both
/// min(m, n).
pub fn svd<T: Scalar>(a: &[T], m: usize, n: usize, full: bool, u: &mut [T], s: &mut [T], vt: &mut [T]) {
    if m < n {
        // aᵀ = v s uᵀ: the SVD of the transpose, with the factors swapped.
        let at = transpose(a, m, n);
        let k = m;
        let (cu, rv) = if full { (n, m) } else { (k, k) };
        let mut u2 = vec![T::ZERO; n * cu];
        let mut vt2 = vec![T::ZERO; rv * m];
        svd(&at, n, m, full, &mut u2, s, &mut vt2);
        // u = vt2ᵀ (m x rv), vt = u2ᵀ (cu x n).
        u.copy_from_slice(&transpose(&vt2, rv, m));
        vt.copy_from_slice(&transpose(&u2, n, cu));
        return;
    }
    // m >= n: columns of a are the rows of wt (n x m); zt rows are the columns of v.
    let mut wt = transpose(a, m, n);
    let mut zt = vec![T::ZERO; n * n];
    for i in 0..n {
        zt[i * n + i] = T::ONE;
    }
    for _sweep in 0..100 {
        let mut rotated = false;
        for p in 0..n {
            for q in p + 1..n {
                let (wp, wq) = (&wt[p * m..p * m + m], &wt[q * m..q * m + m]);
                let (alpha, beta, gamma) = (dot(wp, wp), dot(wq, wq), dot(wp, wq));
                if !(gamma.abs() > T::EPS * (alpha * beta).sqrt()) || gamma == T::ZERO {
                    continue;
                }
                rotated = true;
                let two = T::ONE + T::ONE;
                let zeta = (beta - alpha) / (two * gamma);
                let t = {
                    let r = T::ONE / (zeta.abs() + (zeta * zeta + T::ONE).sqrt());
                    if zeta >= T::ZERO { r } else { -r }
                };
                let c = T::ONE / (t * t + T::ONE).sqrt();
                let sn = c * t;
                rotate_rows(&mut wt, m, p, q, c, sn);
                rotate_rows(&mut zt, n, p, q, c, sn);
            }
        }
        if !rotated {
            break;
        }
    }
    let norms: Vec<T> = (0..n).map(|j| dot(&wt[j * m..j * m + m], &wt[j * m..j * m + m]).sqrt()).collect();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&x, &y| norms[y].partial_cmp(&norms[x]).unwrap_or(std::cmp::Ordering::Equal));
    let cu = if full { m } else { n };
    let mut ut = vec![T::ZERO; cu * m];
    let mut missing = vec![true; cu];
    let smax = norms.iter().copied().fold(T::ZERO, |a, b| if b > a { b } else { a });
    for (j, &o) in order.iter().enumerate() {
        s[j] = norms[o];
        if norms[o] > smax * T::EPS && norms[o] > T::ZERO {
            for i in 0..m {
                ut[j * m + i] = wt[o * m + i] / norms[o];
            }
            missing[j] = false;
        }
        vt[j * n..j * n + n].copy_from_slice(&zt[o * n..o * n + n]);
    }
    complete(&mut ut, m, &missing);
    for i in 0..m {
        for j in 0..cu {
            u[i * cu + j] = ut[j * m + i];
        }
    }
}

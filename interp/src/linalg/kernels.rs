//! The per-matrix kernels (row-major slices), shared with the CPU runtime. Each has
//! LAPACK's structure (potrf, trsm, getrf, geqrf + orgqr, sytrd + steqr, gebrd + bdsqr) in its
//! own module beside this one, its bulk in [`Scalar::gemm`].
use std::ops::{Add, Div, Mul, Neg, Sub};

pub use super::cholesky::cholesky;
pub use super::eigh::eigh;
pub use super::qr::qr;
pub use super::svd::svd;
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
    fn is_finite(self) -> bool;
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
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
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

/// A plane rotation of rows `i`, `j` of a row-major matrix: `(yᵢ, yⱼ) -> (c yᵢ + s yⱼ,
/// -s yᵢ + c yⱼ)`.
pub(super) type Rotation<T> = (usize, usize, T, T);

/// The rotations of a QR / QL iteration on one matrix's rows (`eigh`'s eigenvectors, `svd`'s
/// `uᵀ` and `vᵀ`), applied [`RotationQueue::LAG`] rotations after they are computed: by then
/// their `c` and `s` are known, so the vector work overlaps the iteration's serial sqrt/div
/// chain instead of stalling it (eigh's QL at 128 f32: 400 us applied at once, ~300 queued).
/// Off (`new(false)`): the values alone, rotations dropped.
pub(super) struct RotationQueue<T> {
    q: std::collections::VecDeque<Rotation<T>>,
    on: bool,
}

impl<T: Scalar> RotationQueue<T> {
    /// Rotations kept between a rotation's computation and its application.
    const LAG: usize = 8;

    pub(super) fn new(on: bool) -> Self {
        RotationQueue { q: std::collections::VecDeque::with_capacity(if on { Self::LAG + 1 } else { 0 }), on }
    }

    /// Queues `r` for `y` (rows of `len`), applying the oldest one past the lag.
    #[inline(always)]
    pub(super) fn push(&mut self, y: &mut [T], len: usize, r: Rotation<T>) {
        if !self.on {
            return;
        }
        self.q.push_back(r);
        if self.q.len() > Self::LAG {
            let r = self.q.pop_front().expect("queued");
            rotate(y, len, r);
        }
    }

    /// Applies every queued rotation, in order.
    #[inline(always)]
    pub(super) fn flush(&mut self, y: &mut [T], len: usize) {
        while let Some(r) = self.q.pop_front() {
            rotate(y, len, r);
        }
    }
}

#[inline(always)]
fn rotate<T: Scalar>(y: &mut [T], len: usize, (i, j, c, s): Rotation<T>) {
    let (lo, hi) = if i < j { (i, j) } else { (j, i) };
    let (a, b) = y.split_at_mut(hi * len);
    let (a, b) = (&mut a[lo * len..lo * len + len], &mut b[..len]);
    // a is row lo, b row hi; row i is a when i < j.
    let (yi, yj) = if i < j { (a, b) } else { (b, a) };
    for (x, z) in yi.iter_mut().zip(yj.iter_mut()) {
        let (p, q) = (*x, *z);
        *x = c * p + s * q;
        *z = c * q - s * p;
    }
}

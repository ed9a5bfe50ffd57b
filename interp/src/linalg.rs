//! Linear algebra: `cholesky`, `triangular_solve`, `lu`, `qr`, `eigh`, `svd` on row-major
//! matrices, batched over the leading dims. The kernels ([`kernels`]) are generic over the
//! float width and compute at it; they are the interpreter's semantics and also what the CPU
//! runtime calls for these ops (`quabla-runtime` registers them with the JIT), so the
//! interpreter is not an independent oracle here: the tests compare both with NumPy/SciPy/JAX.
//!
//! Semantics (docs/spec.md): `cholesky` reads the `lower` (else upper) triangle, writes zeros
//! in the other one, and NaNs in its triangle when the input is not positive definite (as JAX);
//! `triangular_solve` reads `a`'s triangle (its diagonal taken as ones with
//! `unit_diagonal`) and solves `op(a) x = b` (`left_side`) or `x op(a) = b`; `lu` is LAPACK's
//! getrf (partial pivoting, first maximal pivot, `pivots[i]` the row swapped with row `i`,
//! `permutation` the rows of `a` in the order of `l @ u`); `qr` is Householder QR with
//! LAPACK's sign convention; `eigh` is cyclic Jacobi (eigenvalues ascending, eigenvectors in
//! columns, reading the `lower`/upper triangle); `svd` is one-sided Jacobi (singular values
//! descending, `u` completed to an orthonormal basis with `full_matrices`).
use quabla_dialect::{LinalgOp, TensorType};

use super::{to_buffer, vals, InterpError, Result, Vals};
use crate::buffer::{Buffer, BufferError};

pub mod kernels {
    //! The per-matrix kernels (row-major slices), shared with the CPU runtime.
    use std::ops::{Add, Div, Mul, Neg, Sub};

    /// A float element type the kernels compute at.
    pub trait Scalar: Copy + PartialOrd + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Div<Output = Self> + Neg<Output = Self> + 'static {
        const ZERO: Self;
        const ONE: Self;
        const NAN: Self;
        const EPS: Self;
        fn sqrt(self) -> Self;
        fn abs(self) -> Self;
        fn is_nan(self) -> bool;
    }

    macro_rules! scalar {
        ($t:ty) => {
            impl Scalar for $t {
                const ZERO: Self = 0.0;
                const ONE: Self = 1.0;
                const NAN: Self = <$t>::NAN;
                const EPS: Self = <$t>::EPSILON;
                fn sqrt(self) -> Self {
                    <$t>::sqrt(self)
                }
                fn abs(self) -> Self {
                    <$t>::abs(self)
                }
                fn is_nan(self) -> bool {
                    <$t>::is_nan(self)
                }
            }
        };
    }
    scalar!(f32);
    scalar!(f64);

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
    fn axpy<T: Scalar>(y: &mut [T], alpha: T, x: &[T]) {
        for (a, b) in y.iter_mut().zip(x) {
            *a = *a - alpha * *b;
        }
    }

    /// Transposes an `r x c` matrix.
    pub fn transpose<T: Scalar>(a: &[T], r: usize, c: usize) -> Vec<T> {
        let mut t = vec![T::ZERO; r * c];
        for i in 0..r {
            for j in 0..c {
                t[j * r + i] = a[i * c + j];
            }
        }
        t
    }

    /// Cholesky factor of the `n x n` matrix `a` (its `lower` triangle, else its upper one)
    /// into `out`: `l` with `a = l lᵀ` (or `u` with `a = uᵀ u`), zeros in the other
    /// triangle; NaN in the factor's triangle when `a` is not positive definite (as JAX).
    pub fn cholesky<T: Scalar>(a: &[T], n: usize, lower: bool, out: &mut [T]) {
        // Row-blocked Cholesky-Banachiewicz: l[i, j] = (a[i, j] - l[i, :j] . l[j, :j]) / l[j, j].
        // Rows are computed in blocks of B: for each earlier column j, the B dots of the block
        // share the row l[j, :j], which stays in L1 (B times less traffic than row by row).
        const B: usize = 8;
        let owned;
        let src: &[T] = if lower {
            a
        } else {
            owned = transpose(a, n, n);
            &owned
        };
        let mut l = vec![T::ZERO; n * n];
        let mut ok = true;
        'blocks: for i0 in (0..n).step_by(B) {
            let rows = B.min(n - i0);
            for j in 0..i0 {
                let (head, block) = l.split_at_mut(i0 * n);
                let lj = &head[j * n..j * n + j];
                let d = head[j * n + j];
                for r in 0..rows {
                    let row = &mut block[r * n..r * n + n];
                    row[j] = (src[(i0 + r) * n + j] - dot(&row[..j], lj)) / d;
                }
            }
            for j in i0..i0 + rows {
                let (head, rest) = l.split_at_mut(j * n);
                let (lj_row, below) = rest.split_at_mut(n);
                let s = src[j * n + j] - dot(&lj_row[..j], &lj_row[..j]);
                if !(s > T::ZERO) {
                    ok = false;
                    break 'blocks;
                }
                let d = s.sqrt();
                lj_row[j] = d;
                let _ = head;
                for r in 1..i0 + rows - j {
                    let row = &mut below[(r - 1) * n..(r - 1) * n + n];
                    row[j] = (src[(j + r) * n + j] - dot(&row[..j], &lj_row[..j])) / d;
                }
            }
        }
        for r in 0..n {
            for c in 0..n {
                let v = if c > r { T::ZERO } else if ok { l[r * n + c] } else { T::NAN };
                if lower {
                    out[r * n + c] = v;
                } else {
                    out[c * n + r] = v;
                }
            }
        }
    }

    /// Solves `op(a) x = b` (left side; `b` is `m x k`) or `x op(a) = b` (`b` is `k x m`)
    /// for the `m x m` triangular `a`; `x` overwrites `b`.
    pub fn triangular_solve<T: Scalar>(a: &[T], m: usize, b: &mut [T], k: usize, left_side: bool, lower: bool, transpose_a: bool, unit_diagonal: bool) {
        if !left_side {
            // x op(a) = b  <=>  op(a)ᵀ xᵀ = bᵀ.
            let mut bt = transpose(b, k, m);
            triangular_solve(a, m, &mut bt, k, true, lower, !transpose_a, unit_diagonal);
            b.copy_from_slice(&transpose(&bt, m, k));
            return;
        }
        let eff_lower = lower != transpose_a;
        let order: Vec<usize> = if eff_lower { (0..m).collect() } else { (0..m).rev().collect() };
        if transpose_a {
            // aᵀ x = b by columns of aᵀ (rows of a, contiguous): once row i of x is final,
            // every later row j loses aᵀ[j, i] x[i] = a[i, j] x[i].
            for (step, &i) in order.iter().enumerate() {
                if !unit_diagonal {
                    let d = a[i * m + i];
                    for x in &mut b[i * k..i * k + k] {
                        *x = *x / d;
                    }
                }
                for &j in &order[step + 1..] {
                    let c = a[i * m + j];
                    if c != T::ZERO {
                        let (lo, hi) = (i.min(j), i.max(j));
                        let (first, second) = b.split_at_mut(hi * k);
                        let (xj, xi) = if j < i { (&mut first[lo * k..lo * k + k], &second[..k]) } else { (&mut second[..k], &first[lo * k..lo * k + k]) };
                        axpy(xj, c, xi);
                    }
                }
            }
            return;
        }
        let t = a;
        let diag = |i: usize| if unit_diagonal { T::ONE } else { t[i * m + i] };
        for (step, &i) in order.iter().enumerate() {
            for &j in &order[..step] {
                let c = t[i * m + j];
                if c != T::ZERO {
                    let (lo, hi) = (i.min(j), i.max(j));
                    let (first, second) = b.split_at_mut(hi * k);
                    let (xi, xj) = if i < j { (&mut first[lo * k..lo * k + k], &second[..k]) } else { (&mut second[..k], &first[lo * k..lo * k + k]) };
                    axpy(xi, c, xj);
                }
            }
            let d = diag(i);
            if !unit_diagonal {
                for x in &mut b[i * k..i * k + k] {
                    *x = *x / d;
                }
            }
        }
    }

    /// LU with partial pivoting of the `m x n` matrix `a` in place (LAPACK getrf): `l`
    /// (unit lower, below the diagonal) and `u` packed in `a`; `pivots` (length min(m, n))
    /// and `perm` (length m) as in JAX.
    pub fn lu<T: Scalar>(a: &mut [T], m: usize, n: usize, pivots: &mut [i32], perm: &mut [i32]) {
        for (i, p) in perm.iter_mut().enumerate() {
            *p = i as i32;
        }
        for j in 0..m.min(n) {
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
                let prow = &top[j * n..];
                for i in 0..m - j - 1 {
                    let row = &mut rest[i * n..i * n + n];
                    let f = row[j] / d;
                    row[j] = f;
                    axpy(&mut row[j + 1..], f, &prow[j + 1..]);
                }
            }
        }
    }

    /// Householder QR of the `m x n` matrix `a`: `q` is `m x c`, `r` is `c x n` with
    /// `c = m` (`full`) or `min(m, n)`.
    pub fn qr<T: Scalar>(a: &[T], m: usize, n: usize, full: bool, q: &mut [T], r: &mut [T]) {
        let k = m.min(n);
        let c = if full { m } else { k };
        // Reflectors v_j (length m - j) are applied to a copy of a and stored aside.
        let mut w = a.to_vec();
        let mut vs: Vec<Option<Vec<T>>> = Vec::with_capacity(k);
        for j in 0..k {
            let x: Vec<T> = (j..m).map(|i| w[i * n + j]).collect();
            let tail = dot(&x[1..], &x[1..]);
            if !(tail > T::ZERO) {
                vs.push(None);
                continue;
            }
            let norm = (x[0] * x[0] + tail).sqrt();
            let beta = if x[0] >= T::ZERO { -norm } else { norm };
            let mut v = x.clone();
            v[0] = x[0] - beta;
            let vn = dot(&v, &v).sqrt();
            for e in &mut v {
                *e = *e / vn;
            }
            // w[j.., j..] -= 2 v (vᵀ w[j.., j..]).
            let two = T::ONE + T::ONE;
            let mut proj = vec![T::ZERO; n - j];
            for (ii, vi) in v.iter().enumerate() {
                let row = &w[(j + ii) * n + j..(j + ii) * n + n];
                for (p, x) in proj.iter_mut().zip(row) {
                    *p = *p + *vi * *x;
                }
            }
            for (ii, vi) in v.iter().enumerate() {
                let row = &mut w[(j + ii) * n + j..(j + ii) * n + n];
                axpy(row, two * *vi, &proj);
            }
            w[j * n + j] = beta;
            for i in j + 1..m {
                w[i * n + j] = T::ZERO;
            }
            vs.push(Some(v));
        }
        for i in 0..c {
            for jj in 0..n {
                r[i * n + jj] = if i < m && jj >= i { w[i * n + jj] } else { T::ZERO };
            }
        }
        // q = H_0 ... H_{k-1} [I_m]_{:, :c}: apply the reflectors in reverse to the columns.
        // Rows of qt (c x m) are the columns of q; each reflector updates every row of qt.
        let mut qt = vec![T::ZERO; c * m];
        for i in 0..c {
            qt[i * m + i] = T::ONE;
        }
        let two = T::ONE + T::ONE;
        for (j, v) in vs.iter().enumerate().rev() {
            let Some(v) = v else { continue };
            for row in qt.chunks_exact_mut(m) {
                let s = dot(&row[j..], v);
                axpy(&mut row[j..], two * s, v);
            }
        }
        for i in 0..m {
            for jj in 0..c {
                q[i * c + jj] = qt[jj * m + i];
            }
        }
    }

    /// Symmetric eigendecomposition of the `n x n` matrix `a` (its `lower` triangle, else
    /// its upper one) by cyclic Jacobi: `v` (`n x n`, eigenvectors in columns) and `w`
    /// (ascending).
    pub fn eigh<T: Scalar>(a: &[T], n: usize, lower: bool, v: &mut [T], w: &mut [T]) {
        let mut s = vec![T::ZERO; n * n];
        for i in 0..n {
            for j in 0..n {
                let (r, c) = if (i >= j) == lower { (i, j) } else { (j, i) };
                s[i * n + j] = a[r * n + c];
            }
        }
        // vt: rows are the eigenvectors.
        let mut vt = vec![T::ZERO; n * n];
        for i in 0..n {
            vt[i * n + i] = T::ONE;
        }
        let total = dot(&s, &s);
        // Rotations skip entries already negligible against their diagonal (or the whole
        // matrix); the iteration stops after a sweep without a rotation.
        let tiny = T::EPS * T::EPS * total;
        for _sweep in 0..100 {
            let mut rotated = false;
            for p in 0..n {
                for q in p + 1..n {
                    let apq = s[p * n + q];
                    let scale = (s[p * n + p] * s[q * n + q]).abs().sqrt();
                    if !(apq.abs() > T::EPS * scale) || !(apq * apq > tiny) {
                        continue;
                    }
                    rotated = true;
                    let two = T::ONE + T::ONE;
                    let theta = (s[q * n + q] - s[p * n + p]) / (two * apq);
                    let t = {
                        let r = T::ONE / (theta.abs() + (theta * theta + T::ONE).sqrt());
                        if theta >= T::ZERO { r } else { -r }
                    };
                    let c = T::ONE / (t * t + T::ONE).sqrt();
                    let sn = t * c;
                    // s = Jᵀ s J with J the rotation in the (p, q) plane.
                    for k in 0..n {
                        let (skp, skq) = (s[k * n + p], s[k * n + q]);
                        s[k * n + p] = c * skp - sn * skq;
                        s[k * n + q] = sn * skp + c * skq;
                    }
                    for k in 0..n {
                        let (spk, sqk) = (s[p * n + k], s[q * n + k]);
                        s[p * n + k] = c * spk - sn * sqk;
                        s[q * n + k] = sn * spk + c * sqk;
                    }
                    for k in 0..n {
                        let (vp, vq) = (vt[p * n + k], vt[q * n + k]);
                        vt[p * n + k] = c * vp - sn * vq;
                        vt[q * n + k] = sn * vp + c * vq;
                    }
                }
            }
            if !rotated {
                break;
            }
        }
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&x, &y| s[x * n + x].partial_cmp(&s[y * n + y]).unwrap_or(std::cmp::Ordering::Equal));
        for (j, &o) in order.iter().enumerate() {
            w[j] = s[o * n + o];
            for i in 0..n {
                v[i * n + j] = vt[o * n + i];
            }
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
                    for (mat, len) in [(&mut wt, m), (&mut zt, n)] {
                        for k in 0..len {
                            let (x, y) = (mat[p * len + k], mat[q * len + k]);
                            mat[p * len + k] = c * x - sn * y;
                            mat[q * len + k] = sn * x + c * y;
                        }
                    }
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
}

use kernels::Scalar;

/// The batch size and matrix extents of `t` (rank >= 2, checked by the shape rule).
fn dims(t: &TensorType) -> (usize, usize, usize) {
    let r = t.rank();
    let (m, n) = (t.shape[r - 2] as usize, t.shape[r - 1] as usize);
    (t.num_elements() / (m * n).max(1), m, n)
}

/// The results of one op on float data of one width (`Vec`s per result: floats, or i32s
/// for `lu`'s pivots and permutation).
pub enum Out<T> {
    F(Vec<T>),
    I(Vec<i32>),
}

/// A batch-sized allocation of [`run`] failed: `bytes` were requested.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutOfMemory {
    pub bytes: usize,
}

/// `n` copies of `v` (a batch-sized result or copy), allocated fallibly.
fn filled<T: Clone>(n: usize, v: T) -> std::result::Result<Vec<T>, OutOfMemory> {
    let mut out = Vec::new();
    out.try_reserve_exact(n).map_err(|_| OutOfMemory { bytes: n.saturating_mul(std::mem::size_of::<T>()) })?;
    out.resize(n, v);
    Ok(out)
}

/// A copy of `a`, allocated fallibly.
fn copied<T: Clone>(a: &[T]) -> std::result::Result<Vec<T>, OutOfMemory> {
    let mut out = Vec::new();
    out.try_reserve_exact(a.len()).map_err(|_| OutOfMemory { bytes: std::mem::size_of_val(a) })?;
    out.extend_from_slice(a);
    Ok(out)
}

/// Runs `op` on row-major data: `a` of type `at` and, for `triangular_solve`, `b` of type
/// `bt` (types already checked by the shape rule). Returns one [`Out`] per result. The
/// batch-sized results are allocated fallibly ([`OutOfMemory`]); the kernels' scratch is at
/// most a few matrices of one batch element.
pub fn run<T: Scalar>(op: &LinalgOp, a: &[T], at: &TensorType, b: Option<&[T]>, bt: Option<&TensorType>) -> std::result::Result<Vec<Out<T>>, OutOfMemory> {
    let (nb, m, n) = dims(at);
    match op {
        LinalgOp::Cholesky { lower } => {
            let mut out = filled(a.len(), T::ZERO)?;
            for (x, y) in a.chunks_exact(m * n).zip(out.chunks_exact_mut(m * n)) {
                kernels::cholesky(x, n, *lower, y);
            }
            Ok(vec![Out::F(out)])
        }
        LinalgOp::TriangularSolve { left_side, lower, transpose_a, unit_diagonal } => {
            let (b, bt) = (b.unwrap_or_default(), bt.unwrap_or(at));
            let r = bt.rank();
            let k = if *left_side { bt.shape[r - 1] } else { bt.shape[r - 2] } as usize;
            let mut x = copied(b)?;
            for (aa, xx) in a.chunks_exact(m * m).zip(x.chunks_exact_mut(m * k)) {
                kernels::triangular_solve(aa, m, xx, k, *left_side, *lower, *transpose_a, *unit_diagonal);
            }
            Ok(vec![Out::F(x)])
        }
        LinalgOp::Lu {} => {
            let k = m.min(n);
            let (mut lu, mut piv, mut perm) = (copied(a)?, filled(nb * k, 0i32)?, filled(nb * m, 0i32)?);
            for ((x, p), q) in lu.chunks_exact_mut(m * n).zip(piv.chunks_exact_mut(k)).zip(perm.chunks_exact_mut(m)) {
                kernels::lu(x, m, n, p, q);
            }
            Ok(vec![Out::F(lu), Out::I(piv), Out::I(perm)])
        }
        LinalgOp::Qr { full_matrices } => {
            let c = if *full_matrices { m } else { m.min(n) };
            let (mut q, mut r) = (filled(nb * m * c, T::ZERO)?, filled(nb * c * n, T::ZERO)?);
            for ((x, qq), rr) in a.chunks_exact(m * n).zip(q.chunks_exact_mut(m * c)).zip(r.chunks_exact_mut(c * n)) {
                kernels::qr(x, m, n, *full_matrices, qq, rr);
            }
            Ok(vec![Out::F(q), Out::F(r)])
        }
        LinalgOp::Eigh { lower } => {
            let (mut v, mut w) = (filled(nb * n * n, T::ZERO)?, filled(nb * n, T::ZERO)?);
            for ((x, vv), ww) in a.chunks_exact(n * n).zip(v.chunks_exact_mut(n * n)).zip(w.chunks_exact_mut(n)) {
                kernels::eigh(x, n, *lower, vv, ww);
            }
            Ok(vec![Out::F(v), Out::F(w)])
        }
        LinalgOp::Svd { full_matrices } => {
            let k = m.min(n);
            let (cu, rv) = if *full_matrices { (m, n) } else { (k, k) };
            let (mut u, mut s, mut vt) = (filled(nb * m * cu, T::ZERO)?, filled(nb * k, T::ZERO)?, filled(nb * rv * n, T::ZERO)?);
            for (((x, uu), ss), vv) in a.chunks_exact(m * n).zip(u.chunks_exact_mut(m * cu)).zip(s.chunks_exact_mut(k)).zip(vt.chunks_exact_mut(rv * n)) {
                kernels::svd(x, m, n, *full_matrices, uu, ss, vv);
            }
            Ok(vec![Out::F(u), Out::F(s), Out::F(vt)])
        }
    }
}

/// Evaluates one op of this family (exhaustive over the family).
pub(super) fn eval(operands: &[&Buffer], tys: &[TensorType], op: &LinalgOp) -> Result<Vec<Buffer>> {
    let name = op.name();
    let at = operands[0].ty();
    let bt = operands.get(1).map(|b| b.ty());
    let oom = |e: OutOfMemory| InterpError::Buffer { op: name, source: BufferError::OutOfMemory { ty: at.clone(), bytes: e.bytes } };
    let outs: Vec<Vals> = match (vals(name, operands[0])?, operands.get(1).map(|b| vals(name, b)).transpose()?) {
        (Vals::F32(a), b) => {
            let b = match b {
                Some(Vals::F32(b)) => Some(b),
                None => None,
                Some(_) => return Err(InterpError::Unsupported { op: name, dtype: operands[1].dtype() }),
            };
            run(op, &a, at, b.as_deref(), bt).map_err(oom)?.into_iter().map(|o| match o { Out::F(v) => Vals::F32(v), Out::I(v) => Vals::Int(v.into_iter().map(i64::from).collect()) }).collect()
        }
        (Vals::F64(a), b) => {
            let b = match b {
                Some(Vals::F64(b)) => Some(b),
                None => None,
                Some(_) => return Err(InterpError::Unsupported { op: name, dtype: operands[1].dtype() }),
            };
            run(op, &a, at, b.as_deref(), bt).map_err(oom)?.into_iter().map(|o| match o { Out::F(v) => Vals::F64(v), Out::I(v) => Vals::Int(v.into_iter().map(i64::from).collect()) }).collect()
        }
        _ => return Err(InterpError::Unsupported { op: name, dtype: operands[0].dtype() }),
    };
    outs.into_iter().zip(tys).map(|(v, t)| to_buffer(name, t, v)).collect()
}

#[cfg(test)]
mod tests {
    use super::super::run_op;
    use super::super::test_util::*;
    use quabla_dialect::{DType, LinalgOp, OpKind, TensorType};

    #[test]
    fn batch_sized_results_fail_as_out_of_memory() {
        // 2**58 batches of 2x2: the q result alone needs 2**63 bytes; no allocator serves it,
        // and `run` says so instead of aborting (the runtime's kernels turn it into the
        // executor's OutOfMemory through the allocation guard).
        let at = TensorType::new(DType::F64, [1i64 << 58, 2, 2]);
        let e = super::run(&LinalgOp::Qr { full_matrices: false }, &[0.0f64; 4], &at, None, None).err();
        assert_eq!(e, Some(super::OutOfMemory { bytes: 1usize << 63 }));
        let e = super::run(&LinalgOp::Cholesky { lower: true }, &[0.0f64; 4], &TensorType::new(DType::F64, [2, 2]), None, None);
        assert!(e.is_ok());
    }

    fn close(a: &[f64], b: &[f64], tol: f64) {
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() <= tol, "{a:?} vs {b:?}");
        }
    }

    #[test]
    fn cholesky_and_solve() {
        // a = l lᵀ with l = [[2, 0], [1, 3]].
        let a = f64s(&[2, 2], &[4.0, 2.0, 2.0, 10.0]);
        let l = run1(OpKind::Linalg(LinalgOp::Cholesky { lower: true }), &[&a]);
        close(&l.to_f64_vec(), &[2.0, 0.0, 1.0, 3.0], 1e-15);
        let u = run1(OpKind::Linalg(LinalgOp::Cholesky { lower: false }), &[&a]);
        close(&u.to_f64_vec(), &[2.0, 1.0, 0.0, 3.0], 1e-15);
        let bad = f64s(&[2, 2], &[1.0, 2.0, 2.0, 1.0]);
        let nan = run1(OpKind::Linalg(LinalgOp::Cholesky { lower: true }), &[&bad]).to_f64_vec();
        assert!(nan[0].is_nan() && nan[1] == 0.0 && nan[2].is_nan() && nan[3].is_nan(), "{nan:?}");
        // l x = b with b = l [1, 2]ᵀ = [2, 7]; lᵀ x = [4, 6] -> x = [1, 2]; x l = [4, 6] -> x = [0.5 * (4 - 6 / 3), 2].
        let b = f64s(&[2, 1], &[2.0, 7.0]);
        let ts = |left_side, transpose_a| OpKind::Linalg(LinalgOp::TriangularSolve { left_side, lower: true, transpose_a, unit_diagonal: false });
        close(&run1(ts(true, false), &[&l, &b]).to_f64_vec(), &[1.0, 2.0], 1e-15);
        close(&run1(ts(true, true), &[&l, &f64s(&[2, 1], &[4.0, 6.0])]).to_f64_vec(), &[1.0, 2.0], 1e-15);
        close(&run1(ts(false, false), &[&l, &f64s(&[1, 2], &[4.0, 6.0])]).to_f64_vec(), &[1.0, 2.0], 1e-15);
    }

    #[test]
    fn triangular_solve_residuals() {
        // Many right-hand sides, every flag: op(a) x = b (or x op(a) = b) to rounding,
        // checked by the residual against the dense op(a).
        let (m, k) = (13usize, 19usize);
        let mut seed = 7u64;
        let mut rnd = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((seed >> 11) as f64 / (1u64 << 53) as f64) - 0.5
        };
        let mut a: Vec<f64> = (0..m * m).map(|_| rnd()).collect();
        for i in 0..m {
            a[i * m + i] = 2.0 + a[i * m + i];
        }
        let b: Vec<f64> = (0..m * k).map(|_| rnd()).collect();
        for flags in 0..16 {
            let (left, lower, trans, unit) = (flags & 1 != 0, flags & 2 != 0, flags & 4 != 0, flags & 8 != 0);
            // op(a) dense: the triangle read, the diagonal as ones with `unit`, transposed.
            let t = |i: usize, j: usize| {
                let inside = if lower { j <= i } else { j >= i };
                if i == j && unit { 1.0 } else if inside { a[i * m + j] } else { 0.0 }
            };
            let op = |i: usize, j: usize| if trans { t(j, i) } else { t(i, j) };
            let mut x = b.clone();
            super::kernels::triangular_solve(&a, m, &mut x, k, left, lower, trans, unit);
            let mut worst = 0.0f64;
            if left {
                for i in 0..m {
                    for c in 0..k {
                        let s: f64 = (0..m).map(|j| op(i, j) * x[j * k + c]).sum();
                        worst = worst.max((s - b[i * k + c]).abs());
                    }
                }
            } else {
                for r in 0..k {
                    for j in 0..m {
                        let s: f64 = (0..m).map(|i| x[r * m + i] * op(i, j)).sum();
                        worst = worst.max((s - b[r * m + j]).abs());
                    }
                }
            }
            assert!(worst < 1e-12, "flags {flags:04b}: residual {worst}");
        }
    }

    /// Timing of the kernels on 256 x 256 (run with `--ignored --nocapture`).
    #[test]
    #[ignore]
    fn kernel_timing() {
        let n = 256;
        let m: Vec<f64> = (0..n * n).map(|i| ((i * 7919) % 1000) as f64 / 1000.0 - 0.5).collect();
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                a[i * n + j] = super::kernels::dot(&m[i * n..i * n + n], &m[j * n..j * n + n]) + if i == j { n as f64 } else { 0.0 };
            }
        }
        let mut l = vec![0.0; n * n];
        let t = std::time::Instant::now();
        for _ in 0..10 {
            super::kernels::cholesky(&a, n, true, &mut l);
        }
        eprintln!("cholesky {:.3} ms", t.elapsed().as_secs_f64() * 100.0);
        let mut b = a.clone();
        let t = std::time::Instant::now();
        super::kernels::triangular_solve(&l, n, &mut b, n, true, true, false, false);
        eprintln!("trsm {n} rhs {:.3} ms", t.elapsed().as_secs_f64() * 1e3);
        let (mut v, mut w) = (vec![0.0; n * n], vec![0.0; n]);
        let t = std::time::Instant::now();
        super::kernels::eigh(&a, n, true, &mut v, &mut w);
        eprintln!("eigh {:.3} ms", t.elapsed().as_secs_f64() * 1e3);
        let (mut u, mut s, mut vt) = (vec![0.0; n * n], vec![0.0; n], vec![0.0; n * n]);
        let t = std::time::Instant::now();
        super::kernels::svd(&m, n, n, false, &mut u, &mut s, &mut vt);
        eprintln!("svd {:.3} ms", t.elapsed().as_secs_f64() * 1e3);
    }

    #[test]
    fn lu_pivots_like_lapack() {
        let a = f64s(&[3, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 10.0]);
        let r = run_op(&OpKind::Linalg(LinalgOp::Lu {}), &[&a]).unwrap();
        assert_eq!(r[1].as_slice::<i32>().unwrap(), &[2, 2, 2]);
        assert_eq!(r[2].as_slice::<i32>().unwrap(), &[2, 0, 1]);
        // scipy.linalg.lu_factor: lu = [[7, 8, 10], [1/7, 6/7, 11/7], [4/7, 1/2, -1/2]].
        close(&r[0].to_f64_vec(), &[7.0, 8.0, 10.0, 1.0 / 7.0, 6.0 / 7.0, 11.0 / 7.0, 4.0 / 7.0, 0.5, -0.5], 1e-14);
    }

    #[test]
    fn decompositions_reconstruct() {
        let a = f64s(&[3, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 7.0]);
        let qr = run_op(&OpKind::Linalg(LinalgOp::Qr { full_matrices: false }), &[&a]).unwrap();
        let (q, r) = (qr[0].to_f64_vec(), qr[1].to_f64_vec());
        let qr_prod: Vec<f64> = (0..3).flat_map(|i| (0..2).map(move |j| (i, j))).map(|(i, j)| (0..2).map(|k| q[i * 2 + k] * r[k * 2 + j]).sum()).collect();
        close(&qr_prod, &a.to_f64_vec(), 1e-14);
        assert_eq!(r[2], 0.0);
        let sym = f64s(&[2, 2], &[2.0, 1.0, 1.0, 2.0]);
        let e = run_op(&OpKind::Linalg(LinalgOp::Eigh { lower: true }), &[&sym]).unwrap();
        close(&e[1].to_f64_vec(), &[1.0, 3.0], 1e-14);
        let s = run_op(&OpKind::Linalg(LinalgOp::Svd { full_matrices: true }), &[&a]).unwrap();
        assert_eq!(s[0].shape(), &[3, 3]);
        let sv = s[1].to_f64_vec();
        // Singular values of a: sqrt of the eigenvalues of aᵀa = [[35, 49], [49, 69]].
        let (tr, det) = (104.0f64, 35.0 * 69.0 - 49.0 * 49.0);
        let l1 = (tr + (tr * tr - 4.0 * det).sqrt()) / 2.0;
        close(&sv, &[l1.sqrt(), (det / l1).sqrt()], 1e-13);
    }
}

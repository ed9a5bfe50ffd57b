//! Singular value decomposition in LAPACK's two phases (gesvd's structure, our code): a
//! Householder reduction to upper bidiagonal form (gebrd), then the implicit-shift QR
//! iteration on the bidiagonal (Golub and Kahan's step with Wilkinson shifts, zero diagonal
//! entries chased out of their row or column first: bdsqr's standard path), its rotations
//! applied to the rows of `Uᵀ` and `Vᵀ` (formed from the reflectors, blocked as `qr`'s `q`
//! and `eigh`'s `Qᵀ`). About 30 n³ flops at m = n against the one-sided Jacobi's ~100 n³.
//! Rotations are queued as in `eigh`'s QL: each step applies older ones while its own
//! square roots and divisions are in flight.
use super::eigh::{accumulate, householder, Reflector};
use super::kernels::{axpy, transpose, Rotation, RotationQueue, Scalar};
use super::qr::{blocks_of, form_q, Block};

/// SVD of the `m x n` matrix `a`: `u` (`m x cu`), `s` (length min(m, n), descending), `vt`
/// (`rv x n`), with `cu = m, rv = n` (`full`) or both min(m, n). NaN input, or a bidiagonal
/// on which the iteration does not converge (30 steps per singular value), gives NaNs.
/// Without `vectors` only `s` is computed (`u` and `vt` are left as they are).
#[allow(clippy::too_many_arguments)]
pub fn svd<T: Scalar>(a: &[T], m: usize, n: usize, full: bool, u: &mut [T], s: &mut [T], vt: &mut [T], vectors: bool) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2.
        return unsafe { svd_avx2(a, m, n, full, u, s, vt, vectors) };
    }
    svd_body(a, m, n, full, u, s, vt, vectors)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(clippy::too_many_arguments)]
unsafe fn svd_avx2<T: Scalar>(a: &[T], m: usize, n: usize, full: bool, u: &mut [T], s: &mut [T], vt: &mut [T], vectors: bool) {
    svd_body(a, m, n, full, u, s, vt, vectors)
}

#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn svd_body<T: Scalar>(a: &[T], m: usize, n: usize, full: bool, u: &mut [T], s: &mut [T], vt: &mut [T], vectors: bool) {
    if m < n {
        // aᵀ = v s uᵀ: the SVD of the transpose, with the factors swapped.
        let at = transpose(a, m, n);
        if !vectors {
            return svd(&at, n, m, full, &mut [], s, &mut [], false);
        }
        let (cu, rv) = if full { (n, m) } else { (m, m) };
        let mut u2 = vec![T::ZERO; n * cu];
        let mut vt2 = vec![T::ZERO; rv * m];
        svd(&at, n, m, full, &mut u2, s, &mut vt2, true);
        // u = vt2ᵀ (m x rv), vt = u2ᵀ (cu x n).
        u.copy_from_slice(&transpose(&vt2, rv, m));
        vt.copy_from_slice(&transpose(&u2, n, cu));
        return;
    }
    if n == 0 {
        // No singular values; u is the identity (full) or empty.
        let cu = if full && vectors { m } else { 0 };
        for i in 0..cu {
            u[i * cu + i] = T::ONE;
        }
        return;
    }
    let cu = if full { m } else { n };
    // Scaled to a largest magnitude of one: no square in the shifts over- or underflows.
    let amax = a.iter().fold(T::ZERO, |x, v| if v.abs() > x { v.abs() } else { x });
    let scale = if amax > T::ZERO && amax.is_finite() { amax } else { T::ONE };
    let inv = T::ONE / scale;
    let mut w: Vec<T> = a.iter().map(|x| *x * inv).collect();
    let (mut d, mut f) = (vec![T::ZERO; n], vec![T::ZERO; n]);
    let (left, right) = bidiagonalize(&mut w, m, n, &mut d, &mut f, vectors);
    if !vectors {
        if bidiagonal_qr(&mut d, &mut f, &mut [], m, &mut [], n, false) {
            let mut sv: Vec<T> = d.iter().map(|x| x.abs()).collect();
            sv.sort_by(|x, y| y.partial_cmp(x).unwrap_or(std::cmp::Ordering::Equal));
            for (o, x) in s.iter_mut().zip(sv) {
                *o = x * scale;
            }
        } else {
            s.fill(T::NAN);
        }
        return;
    }
    // uᵀ (cu x m) from the left reflectors, vᵀ (n x n) from the right ones.
    let mut q = vec![T::ZERO; m * cu];
    form_q(&left, m, cu, &mut q);
    let mut ut = transpose(&q, m, cu);
    let mut vtt = vec![T::ZERO; n * n];
    accumulate(&mut vtt, n, &right);
    if !bidiagonal_qr(&mut d, &mut f, &mut ut, m, &mut vtt, n, true) {
        s.fill(T::NAN);
        u.fill(T::NAN);
        vt.fill(T::NAN);
        return;
    }
    // Nonnegative values (a negative one flips its row of vᵀ), descending.
    for (j, x) in d.iter_mut().enumerate() {
        if *x < T::ZERO {
            *x = -*x;
            for e in &mut vtt[j * n..j * n + n] {
                *e = -*e;
            }
        }
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&x, &y| d[y].partial_cmp(&d[x]).unwrap_or(std::cmp::Ordering::Equal));
    for (j, &o) in order.iter().enumerate() {
        s[j] = d[o] * scale;
        vt[j * n..j * n + n].copy_from_slice(&vtt[o * n..o * n + n]);
        for i in 0..m {
            u[i * cu + j] = ut[o * m + i];
        }
    }
    for j in n..cu {
        for i in 0..m {
            u[i * cu + j] = ut[j * m + i];
        }
    }
}

/// Reduces the row-major `m x n` (`m >= n`) `w` to the upper bidiagonal `d` (diagonal) / `f`
/// (`f[k]` at `(k, k + 1)`) by left reflectors on columns (`H_k` acting on rows `k..`) and
/// right reflectors on rows (`G_k` acting on columns `k + 1..`): `w = (H_0 … H_{n-1}) B (G_0 …
/// G_{n-3})ᵀ`. Returns the left reflectors as `qr`'s blocks (for [`form_q`]) and the right
/// ones (for [`accumulate`]); neither without `vectors`.
#[inline(always)]
fn bidiagonalize<T: Scalar>(w: &mut [T], m: usize, n: usize, d: &mut [T], f: &mut [T], vectors: bool) -> (Vec<Block<T>>, Vec<Reflector<T>>) {
    let mut left = Vec::with_capacity(if vectors { n } else { 0 });
    let mut right = Vec::with_capacity(n.saturating_sub(2));
    let mut proj = vec![T::ZERO; n];
    let mut proj2 = vec![T::ZERO; m];
    let mut x = Vec::with_capacity(m);
    for k in 0..n {
        // Left: column k, rows k.., applied to columns k + 1.. as a sum of rows.
        x.clear();
        x.extend((k..m).map(|i| w[i * n + k]));
        let (tau, uu, beta) = householder(&x);
        d[k] = beta;
        if tau != T::ZERO && k + 1 < n {
            let p = &mut proj[..n - k - 1];
            p.fill(T::ZERO);
            for (t, ui) in uu.iter().enumerate() {
                axpy(p, -*ui, &w[(k + t) * n + k + 1..(k + t) * n + n]);
            }
            for (t, ui) in uu.iter().enumerate() {
                axpy(&mut w[(k + t) * n + k + 1..(k + t) * n + n], tau * *ui, p);
            }
        }
        if vectors {
            left.push(Reflector { tau, u: uu });
        }
        // Right: row k, columns k + 1.., applied to rows k + 1.. (a dot product per row).
        if k + 2 < n {
            let (tau, uu, beta) = householder(&w[k * n + k + 1..k * n + n]);
            f[k] = beta;
            if tau != T::ZERO {
                // s = W u for the rows below (one matrix-vector product through the packed
                // GEMM: dot products of short rows are latency bound), then W -= τ s uᵀ.
                let (rows, len) = (m - k - 1, n - k - 1);
                let sv = &mut proj2[..rows];
                if rows * len >= GEMV_MIN {
                    // SAFETY: W's rows x len block (stride n) lies in w; u and s are contiguous.
                    unsafe {
                        T::gemm(rows, len, 1, T::ONE, w.as_ptr().add((k + 1) * n + k + 1), n as isize, 1, uu.as_ptr(), 1, 1, T::ZERO, sv.as_mut_ptr(), 1, 1);
                    }
                } else {
                    for (t, r) in sv.iter_mut().zip(k + 1..m) {
                        *t = super::eigh::dot(&w[r * n + k + 1..r * n + n], &uu);
                    }
                }
                for (t, r) in sv.iter().zip(k + 1..m) {
                    axpy(&mut w[r * n + k + 1..r * n + n], tau * *t, &uu);
                }
            }
            if vectors {
                right.push(Reflector { tau, u: uu });
            }
        } else if k + 1 < n {
            f[k] = w[k * n + k + 1];
        }
    }
    (blocks_of(&left, m), right)
}

/// Below this many elements the right reflector's matrix-vector product is a dot product per
/// row (a packed product's fixed cost dominates small ones: 10000 3x3 svds).
const GEMV_MIN: usize = 1024;

/// `(c, s, r)` with `[c s; -s c] [a; b] = [r; 0]` (`c` = 1, `s` = 0 for `b` = 0).
#[inline(always)]
fn givens<T: Scalar>(a: T, b: T) -> (T, T, T) {
    if b == T::ZERO {
        return (T::ONE, T::ZERO, a);
    }
    let r = (a * a + b * b).sqrt();
    let ri = T::ONE / r;
    (a * ri, b * ri, r)
}

/// Rotation queues of `uᵀ` and `vᵀ` (kernels' [`RotationQueue`]).
struct Queues<'a, T> {
    ut: &'a mut [T],
    m: usize,
    vt: &'a mut [T],
    n: usize,
    qu: RotationQueue<T>,
    qv: RotationQueue<T>,
}

impl<T: Scalar> Queues<'_, T> {
    #[inline(always)]
    fn left(&mut self, r: Rotation<T>) {
        self.qu.push(self.ut, self.m, r);
    }

    #[inline(always)]
    fn right(&mut self, r: Rotation<T>) {
        self.qv.push(self.vt, self.n, r);
    }

    #[inline(always)]
    fn flush(&mut self) {
        self.qu.flush(self.ut, self.m);
        self.qv.flush(self.vt, self.n);
    }
}

/// The implicit-shift QR iteration on the upper bidiagonal `d` / `f` (length `n`, `n - 1`),
/// leaving the singular values (of either sign) in `d`; left rotations act on rows of `ut`
/// (rows of `m`, the first `n` of them), right ones on rows of `vt` (rows of `n`). False when
/// it does not converge.
#[inline(always)]
fn bidiagonal_qr<T: Scalar>(d: &mut [T], f: &mut [T], ut: &mut [T], m: usize, vt: &mut [T], n: usize, vectors: bool) -> bool {
    if d.iter().chain(f.iter()).any(|x| x.is_nan()) {
        return false;
    }
    let two = T::ONE + T::ONE;
    let bnorm = d.iter().chain(f[..n - 1].iter()).fold(T::ZERO, |x, v| if v.abs() > x { v.abs() } else { x });
    let tiny = T::EPS * bnorm;
    let mut q = Queues { ut, m, vt, n, qu: RotationQueue::new(vectors), qv: RotationQueue::new(vectors) };
    let mut steps = 0usize;
    let limit = 30 * n.max(1);
    let mut hi = n - 1;
    while hi > 0 {
        // Negligible couplings split the matrix.
        for i in 0..hi {
            if f[i] != T::ZERO && f[i].abs() <= T::EPS * (d[i].abs() + d[i + 1].abs()) {
                f[i] = T::ZERO;
            }
        }
        while hi > 0 && f[hi - 1] == T::ZERO {
            hi -= 1;
        }
        if hi == 0 {
            break;
        }
        let mut lo = hi - 1;
        while lo > 0 && f[lo - 1] != T::ZERO {
            lo -= 1;
        }
        if steps == limit {
            return false;
        }
        steps += 1;
        // A zero on the diagonal: chase its row's coupling out to the right (left rotations)
        // or, for the last one, its column's upward (right rotations).
        if let Some(i) = (lo..hi).find(|&i| d[i].abs() <= tiny) {
            d[i] = T::ZERO;
            let mut bulge = f[i];
            f[i] = T::ZERO;
            for j in i + 1..=hi {
                let (c, s, r) = givens(d[j], bulge);
                d[j] = r;
                // Rows (j, i): row j takes c row_j + s row_i; row i keeps -s row_j + c row_i.
                q.left((j, i, c, s));
                if j < hi {
                    bulge = -s * f[j];
                    f[j] = c * f[j];
                }
            }
            continue;
        }
        if d[hi].abs() <= tiny {
            d[hi] = T::ZERO;
            let mut bulge = f[hi - 1];
            f[hi - 1] = T::ZERO;
            let mut j = hi;
            while j > lo {
                j -= 1;
                let (c, s, r) = givens(d[j], bulge);
                d[j] = r;
                // Columns (j, hi) of B: col j = c col_j + s col_hi, col hi = -s col_j + c col_hi.
                q.right((j, hi, c, s));
                if j > lo {
                    bulge = -s * f[j - 1];
                    f[j - 1] = c * f[j - 1];
                }
            }
            continue;
        }
        // Wilkinson's shift: the eigenvalue of the trailing 2 x 2 of BᵀB nearer its last entry.
        let t11 = d[hi - 1] * d[hi - 1] + if hi - 1 > lo { f[hi - 2] * f[hi - 2] } else { T::ZERO };
        let t12 = d[hi - 1] * f[hi - 1];
        let t22 = d[hi] * d[hi] + f[hi - 1] * f[hi - 1];
        let delta = (t11 - t22) / two;
        let root = (delta * delta + t12 * t12).sqrt();
        let mu = if delta >= T::ZERO { t22 - t12 * t12 / (delta + root) } else { t22 + t12 * t12 / (root - delta) };
        let mu = if mu.is_finite() { mu } else { t22 };
        let (mut y, mut z) = (d[lo] * d[lo] - mu, d[lo] * f[lo]);
        for k in lo..hi {
            // Right rotation of columns k, k + 1.
            let (c, s, r) = givens(y, z);
            if k > lo {
                f[k - 1] = r;
            }
            let (a, b) = (d[k], f[k]);
            d[k] = c * a + s * b;
            f[k] = c * b - s * a;
            let bulge = s * d[k + 1];
            d[k + 1] = c * d[k + 1];
            q.right((k, k + 1, c, s));
            // Left rotation of rows k, k + 1 removes the bulge at (k + 1, k).
            let (c, s, r) = givens(d[k], bulge);
            d[k] = r;
            let (a, b) = (f[k], d[k + 1]);
            f[k] = c * a + s * b;
            d[k + 1] = c * b - s * a;
            q.left((k, k + 1, c, s));
            if k + 1 < hi {
                y = f[k];
                z = s * f[k + 1];
                f[k + 1] = c * f[k + 1];
            }
        }
    }
    q.flush();
    d.iter().all(|x| !x.is_nan())
}

#[cfg(test)]
mod tests {
    use super::svd;

    use super::super::test_values as random;

    /// `u diag(s) vt = a`, orthonormal `u` columns and `vt` rows, descending nonnegative `s`.
    fn check(a: &[f64], m: usize, n: usize, full: bool, tol: f64) -> Vec<f64> {
        let k = m.min(n);
        let (cu, rv) = if full { (m, n) } else { (k, k) };
        let (mut u, mut s, mut vt) = (vec![0.0; m * cu], vec![0.0; k], vec![0.0; rv * n]);
        svd(a, m, n, full, &mut u, &mut s, &mut vt, true);
        let scale = a.iter().fold(1e-300f64, |x, v| x.max(v.abs())) * (m.max(n) as f64);
        for i in 0..m {
            for j in 0..n {
                let x: f64 = (0..k).map(|t| u[i * cu + t] * s[t] * vt[t * n + j]).sum();
                assert!((x - a[i * n + j]).abs() <= tol * scale, "{m}x{n}: (u s vt - a)[{i}, {j}] = {}", x - a[i * n + j]);
            }
        }
        for i in 0..cu {
            for j in 0..cu {
                let g: f64 = (0..m).map(|t| u[t * cu + i] * u[t * cu + j]).sum();
                assert!((g - if i == j { 1.0 } else { 0.0 }).abs() <= tol * m as f64, "{m}x{n}: (uᵀ u)[{i}, {j}] = {g}");
            }
        }
        for i in 0..rv {
            for j in 0..rv {
                let g: f64 = (0..n).map(|t| vt[i * n + t] * vt[j * n + t]).sum();
                assert!((g - if i == j { 1.0 } else { 0.0 }).abs() <= tol * n as f64, "{m}x{n}: (vt vtᵀ)[{i}, {j}] = {g}");
            }
        }
        assert!(s.windows(2).all(|p| p[0] >= p[1]) && s.iter().all(|x| *x >= 0.0), "{m}x{n}: {s:?}");
        s
    }

    #[test]
    fn random_matrices_decompose() {
        for (m, n) in [(1, 1), (2, 1), (1, 3), (2, 2), (5, 3), (3, 5), (33, 33), (70, 40), (40, 70), (130, 100)] {
            for full in [false, true] {
                check(&random(m * n, (m * 7 + n) as u64), m, n, full, 1e-13);
            }
        }
    }

    #[test]
    fn rank_deficient_and_graded_matrices_decompose() {
        // Rank 2 (zero singular values: diagonal zeros in the bidiagonal), zero, and a matrix
        // with columns scaled from 1 to 1e-12.
        let (m, n) = (40, 30);
        let (x, y) = (random(m * 2, 3), random(2 * n, 4));
        let low: Vec<f64> = (0..m * n).map(|k| (0..2).map(|t| x[(k / n) * 2 + t] * y[t * n + k % n]).sum()).collect();
        let s = check(&low, m, n, true, 1e-13);
        assert!(s[2..].iter().all(|v| *v < 1e-13 * s[0]), "{s:?}");
        let s = check(&vec![0.0; m * n], m, n, false, 1e-13);
        assert!(s.iter().all(|v| *v == 0.0));
        let r = random(m * n, 5);
        let graded: Vec<f64> = (0..m * n).map(|k| r[k] * 10f64.powf(-12.0 * (k % n) as f64 / (n - 1) as f64)).collect();
        check(&graded, m, n, false, 1e-13);
        let eye: Vec<f64> = (0..n * n).map(|k| if k / n == k % n { 1.0 } else { 0.0 }).collect();
        check(&eye, n, n, true, 1e-14);
    }

    #[test]
    fn values_alone_equal_the_values_with_vectors() {
        for (m, n) in [(40, 30), (30, 40), (70, 70)] {
            let a = random(m * n, 8);
            let k = m.min(n);
            let (mut u, mut s, mut vt) = (vec![0.0; m * k], vec![0.0; k], vec![0.0; k * n]);
            svd(&a, m, n, false, &mut u, &mut s, &mut vt, true);
            let mut s2 = vec![0.0; k];
            svd(&a, m, n, false, &mut [], &mut s2, &mut [], false);
            assert_eq!(s, s2, "{m}x{n}");
        }
    }

    #[test]
    fn nan_input_gives_nan() {
        let a = [1.0, f64::NAN, 2.0, 3.0];
        let (mut u, mut s, mut vt) = (vec![0.0; 4], vec![0.0; 2], vec![0.0; 4]);
        svd(&a, 2, 2, false, &mut u, &mut s, &mut vt, true);
        assert!(s.iter().all(|x| x.is_nan()));
    }
}

#[cfg(test)]
mod timing {
    #[test]
    #[ignore]
    fn svd_phases() {
        use super::*;
        let (m, n) = (128, 128);
        let mut x: u64 = 1;
        let a: Vec<f32> = (0..m * n).map(|_| { x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); ((x >> 40) as f32 / (1u64 << 24) as f32) - 0.5 }).collect();
        let mut best = [f64::MAX; 4];
        for _ in 0..200 {
            let t0 = std::time::Instant::now();
            let mut w = a.clone();
            let (mut d, mut f) = (vec![0f32; n], vec![0f32; n]);
            let (left, right) = bidiagonalize(&mut w, m, n, &mut d, &mut f, true);
            let t1 = std::time::Instant::now();
            let mut q = vec![0f32; m * n];
            form_q(&left, m, n, &mut q);
            let mut ut = transpose(&q, m, n);
            let mut vtt = vec![0f32; n * n];
            accumulate(&mut vtt, n, &right);
            let t2 = std::time::Instant::now();
            bidiagonal_qr(&mut d, &mut f, &mut ut, m, &mut vtt, n, true);
            let t3 = std::time::Instant::now();
            for (b, t) in best.iter_mut().zip([t1 - t0, t2 - t1, t3 - t2]) {
                *b = b.min(t.as_secs_f64() * 1e6);
            }
        }
        eprintln!("bidiagonalize {:.1} form u, v {:.1} bidiagonal qr {:.1} us", best[0], best[1], best[2]);
    }
}

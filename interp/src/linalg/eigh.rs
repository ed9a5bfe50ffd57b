//! Symmetric eigendecomposition in LAPACK's two phases (syevd's structure, its own code): a
//! Householder reduction to tridiagonal form (sytrd), then the implicit QL iteration with
//! Wilkinson shifts on the tridiagonal (steqr), its plane rotations applied to the rows of
//! `Qᵀ` (the reduction's orthogonal factor, formed by orgtr's backward accumulation), so
//! that the rows end as the eigenvectors. About 9 n³ flops against the cyclic Jacobi's ~90
//! n³ (eight to ten sweeps of 9 n³): 128 x 128 f32 went 11.3 -> see docs/performance.md.
//! Every inner loop walks a contiguous row (compiled for AVX2 where the CPU has it, the same
//! operations per element).
use super::kernels::{axpy, RotationQueue, Scalar};
use super::qr::{blocks_of, form_q};

/// Eigenvalues (`w`, ascending) and eigenvectors (`v`, `n x n`, in columns) of the symmetric
/// `n x n` matrix `a`, read from its `lower` triangle (else the upper one). A NaN input, or a
/// tridiagonal on which the QL iteration does not converge in 30 steps per eigenvalue,
/// gives NaNs (LAPACK reports the latter as `info > 0`). Without `vectors` only `w` is
/// computed (`v` is left as it is): no `Qᵀ`, no rotations.
pub fn eigh<T: Scalar>(a: &[T], n: usize, lower: bool, v: &mut [T], w: &mut [T], vectors: bool) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2.
        return unsafe { eigh_avx2(a, n, lower, v, w, vectors) };
    }
    eigh_body(a, n, lower, v, w, vectors)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn eigh_avx2<T: Scalar>(a: &[T], n: usize, lower: bool, v: &mut [T], w: &mut [T], vectors: bool) {
    eigh_body(a, n, lower, v, w, vectors)
}

#[inline(always)]
fn eigh_body<T: Scalar>(a: &[T], n: usize, lower: bool, v: &mut [T], w: &mut [T], vectors: bool) {
    if n == 0 {
        return;
    }
    // The full symmetric matrix from the triangle read.
    let mut s = vec![T::ZERO; n * n];
    for i in 0..n {
        for j in 0..n {
            let (r, c) = if (i >= j) == lower { (i, j) } else { (j, i) };
            s[i * n + j] = a[r * n + c];
        }
    }
    let mut d = vec![T::ZERO; n];
    let mut e = vec![T::ZERO; n];
    let reflectors = tridiagonalize(&mut s, n, &mut d, &mut e);
    // y = Qᵀ, then the QL rotations turn its rows into the eigenvectors.
    let y = &mut s;
    if vectors {
        accumulate(y, n, &reflectors);
    }
    let ok = ql_implicit(&mut d, &mut e, y, n, vectors);
    if !ok {
        w.fill(T::NAN);
        if vectors {
            v.fill(T::NAN);
        }
        return;
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&x, &y| d[x].partial_cmp(&d[y]).unwrap_or(std::cmp::Ordering::Equal));
    for (j, &o) in order.iter().enumerate() {
        w[j] = d[o];
        if vectors {
            for i in 0..n {
                v[i * n + j] = y[o * n + i];
            }
        }
    }
}

/// One Householder reflector `I - tau u uᵀ` acting on the components `k + 1..n` (`u[0]` = 1).
pub(super) struct Reflector<T> {
    pub(super) tau: T,
    pub(super) u: Vec<T>,
}

/// The Euclidean norm of `x`, scaled by its largest magnitude so that neither tiny nor huge
/// entries under- or overflow in the squares.
#[inline(always)]
fn norm<T: Scalar>(x: &[T]) -> T {
    let m = x.iter().fold(T::ZERO, |m, v| if v.abs() > m { v.abs() } else { m });
    if !(m > T::ZERO) {
        // All zero (or all NaN: the sum keeps them).
        return x.iter().fold(T::ZERO, |s, v| s + v.abs());
    }
    let inv = T::ONE / m;
    let mut acc = T::ZERO;
    for v in x {
        let t = *v * inv;
        acc = acc + t * t;
    }
    m * acc.sqrt()
}

/// The dot product of `x` and `y` with eight independent accumulators (one AVX2 vector of
/// f32, two of f64), combined pairwise: a fixed order of additions.
#[inline(always)]
pub(super) fn dot<T: Scalar>(x: &[T], y: &[T]) -> T {
    let n = x.len().min(y.len());
    let (x, y) = (&x[..n], &y[..n]);
    let mut acc = [T::ZERO; 8];
    let (xc, yc) = (x.chunks_exact(8), y.chunks_exact(8));
    let (xr, yr) = (xc.remainder(), yc.remainder());
    for (a, b) in xc.zip(yc) {
        let (a, b): (&[T; 8], &[T; 8]) = (a.try_into().expect("8"), b.try_into().expect("8"));
        for k in 0..8 {
            acc[k] = acc[k] + a[k] * b[k];
        }
    }
    let mut s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
    for (a, b) in xr.iter().zip(yr) {
        s = s + *a * *b;
    }
    s
}

/// `sqrt(a² + b²)` without under- or overflow.
#[inline(always)]
pub(super) fn hypot<T: Scalar>(a: T, b: T) -> T {
    let (a, b) = (a.abs(), b.abs());
    let (big, small) = if a > b { (a, b) } else { (b, a) };
    if big == T::ZERO {
        return small;
    }
    let r = small / big;
    big * (T::ONE + r * r).sqrt()
}

/// The reflector `I - tau u uᵀ` (`u[0]` = 1) that maps `x` to `beta e₁`, and `beta`
/// (LAPACK's larfg: `beta` has the opposite sign of `x[0]`; `tau` 0 when `x[1..]` is zero).
#[inline(always)]
pub(super) fn householder<T: Scalar>(x: &[T]) -> (T, Vec<T>, T) {
    let mut u = x.to_vec();
    let (tau, beta) = householder_in_place(&mut u);
    (tau, u, beta)
}

/// [`householder`] in place: `x` becomes the reflector's `u` (`x[0]` = 1); returns `(tau,
/// beta)`.
#[inline(always)]
pub(super) fn householder_in_place<T: Scalar>(x: &mut [T]) -> (T, T) {
    let alpha = x[0];
    let tail = norm(&x[1..]);
    x[0] = T::ONE;
    if tail == T::ZERO {
        x[1..].fill(T::ZERO);
        return (T::ZERO, alpha);
    }
    let r = hypot(alpha, tail);
    let beta = if alpha >= T::ZERO { -r } else { r };
    let tau = (beta - alpha) / beta;
    let scale = T::ONE / (alpha - beta);
    for d in &mut x[1..] {
        *d = *d * scale;
    }
    (tau, beta)
}

/// Reduces the full symmetric `s` to the tridiagonal `d` (diagonal) / `e` (`e[i]` couples `i`
/// and `i + 1`; `e[n - 1]` = 0) by `H_{n-3} … H_0 s H_0 … H_{n-3}`; returns the reflectors
/// (`H_k` acts on `k + 1..n`). Each step updates the whole trailing block `B` with the
/// symmetric rank-2 update `B -= u qᵀ + q uᵀ` (row by row: it stays exactly symmetric) and,
/// in the same pass, accumulates the next step's product `τ' B' u'` as a sum of its rows
/// (`B'` is symmetric; row sums vectorize where dot products of short rows stay latency
/// bound): the next reflector comes from the block's first row, updated first. One pass over
/// the block per step.
#[inline(always)]
fn tridiagonalize<T: Scalar>(s: &mut [T], n: usize, d: &mut [T], e: &mut [T]) -> Vec<Reflector<T>> {
    let mut out: Vec<Reflector<T>> = Vec::with_capacity(n.saturating_sub(2));
    let two = T::ONE + T::ONE;
    let steps = n.saturating_sub(2);
    // p = τ B u for the current step's block and reflector.
    let mut p: Vec<T> = Vec::new();
    if steps > 0 {
        let (tau, u, beta) = householder(&s[1..n]);
        e[0] = beta;
        let b0 = n + 1;
        p = vec![T::ZERO; n - 1];
        if tau != T::ZERO {
            // B symmetric: B u = Σᵢ uᵢ B[i, :] (rows, no reductions).
            for (i, ui) in u.iter().enumerate() {
                axpy(&mut p, -(tau * *ui), &s[b0 + i * n..b0 + i * n + n - 1]);
            }
        }
        out.push(Reflector { tau, u });
    }
    for k in 0..steps {
        let len = n - k - 1;
        let b0 = (k + 1) * n + k + 1;
        let (tau, last) = (out[k].tau, k + 1 == steps);
        // q = p - (τ/2)(pᵀu) u (in p).
        if tau != T::ZERO {
            let kk = tau / two * dot(&p, &out[k].u);
            for (pi, ui) in p.iter_mut().zip(&out[k].u) {
                *pi = *pi - kk * *ui;
            }
        }
        let update = |row: &mut [T], i: usize, u: &[T], q: &[T]| {
            let (ui, qi) = (u[i], q[i]);
            for ((r, uj), qj) in row.iter_mut().zip(u).zip(q) {
                *r = *r - (ui * *qj + qi * *uj);
            }
        };
        // The block's first row, then the next reflector from it.
        if tau != T::ZERO {
            update(&mut s[b0..b0 + len], 0, &out[k].u, &p);
        }
        if last {
            for i in 1..len {
                if tau != T::ZERO {
                    update(&mut s[b0 + i * n..b0 + i * n + len], i, &out[k].u, &p);
                }
            }
            break;
        }
        let (tau2, u2, beta2) = householder(&s[b0 + 1..b0 + len]);
        e[k + 1] = beta2;
        let mut p2 = vec![T::ZERO; len - 1];
        for i in 1..len {
            let row = &mut s[b0 + i * n..b0 + i * n + len];
            if tau != T::ZERO {
                update(row, i, &out[k].u, &p);
            }
            if tau2 != T::ZERO {
                // p2 = τ' B' u' as Σᵢ u'ᵢ B'[i, :] (B' exactly symmetric).
                axpy(&mut p2, -(tau2 * u2[i - 1]), &row[1..]);
            }
        }
        out.push(Reflector { tau: tau2, u: u2 });
        p = p2;
    }
    for k in 0..n {
        d[k] = s[k * n + k];
    }
    if n >= 2 {
        e[n - 2] = s[(n - 2) * n + n - 1];
    }
    e[n - 1] = T::ZERO;
    out
}

/// Overwrites `y` with `Qᵀ` for `Q = H_0 … H_{n-3}` (`H_k` acting on `k + 1..n`): `Q` is
/// `diag(1, Q')` with `Q'` the product of the same reflectors on rows `0..n - 1`, formed as
/// `qr`'s `q` is (blocks of 32 through the packed GEMM, backward).
pub(super) fn accumulate<T: Scalar>(y: &mut [T], n: usize, reflectors: &[Reflector<T>]) {
    y.fill(T::ZERO);
    if n == 0 {
        return;
    }
    y[0] = T::ONE;
    let m = n - 1;
    let mut q = vec![T::ZERO; m * m];
    form_q(&blocks_of(reflectors, m), m, m, &mut q);
    for (i, row) in y[n..].chunks_exact_mut(n).enumerate() {
        for (j, x) in row[1..].iter_mut().enumerate() {
            *x = q[j * m + i];
        }
    }
}

/// The implicit QL iteration with Wilkinson shifts on the symmetric tridiagonal `d` / `e`
/// (eigenvalues left in `d`, unsorted). Each plane rotation (of columns `(i, i + 1)` of the
/// eigenvector matrix, i.e. rows `i`, `i + 1` of `y`, rows of `n`) goes through a
/// [`RotationQueue`], so its vector work overlaps the next steps' sqrt/div chain (128 x 128
/// f32: 400 us applied at once, 450 after each sweep, about 300 queued). The
/// tridiagonal is scaled to a largest entry of one (LAPACK's steqr scales into a safe range
/// too), so `sqrt(f² + g²)` needs no hypot. False when an eigenvalue takes more than 30
/// iterations (NaNs in the input do).
#[inline(always)]
fn ql_implicit<T: Scalar>(d: &mut [T], e: &mut [T], y: &mut [T], n: usize, vectors: bool) -> bool {
    let two = T::ONE + T::ONE;
    let anorm = d.iter().chain(e.iter()).fold(T::ZERO, |m, v| if v.abs() > m { v.abs() } else { m });
    if !(anorm > T::ZERO) {
        // Zero (already diagonal), or NaN in d or e (never the largest: checked below).
        return d.iter().chain(e.iter()).all(|x| !x.is_nan());
    }
    let inv = T::ONE / anorm;
    for x in d.iter_mut().chain(e.iter_mut()) {
        *x = *x * inv;
    }
    let mut queue = RotationQueue::new(vectors);
    for l in 0..n {
        let mut iterations = 0;
        loop {
            // The first negligible coupling at or after l splits the matrix there.
            let mut m = l;
            while m + 1 < n {
                let dd = d[m].abs() + d[m + 1].abs();
                if e[m].abs() <= T::EPS * dd {
                    break;
                }
                m += 1;
            }
            if m == l {
                break;
            }
            if iterations == 30 {
                return false;
            }
            iterations += 1;
            // Wilkinson's shift from the leading 2 x 2 block, chased from the bottom (m) up.
            let mut g = (d[l + 1] - d[l]) / (two * e[l]);
            let mut r = hypot(g, T::ONE);
            g = d[m] - d[l] + e[l] / (g + if g >= T::ZERO { r } else { -r });
            let (mut s, mut c, mut p) = (T::ONE, T::ONE, T::ZERO);
            let mut underflow = false;
            let mut i = m;
            while i > l {
                i -= 1;
                let f = s * e[i];
                let b = c * e[i];
                r = (f * f + g * g).sqrt();
                e[i + 1] = r;
                if r == T::ZERO {
                    // The rotation underflowed: the coupling is gone; restart from l.
                    d[i + 1] = d[i + 1] - p;
                    e[m] = T::ZERO;
                    underflow = true;
                    break;
                }
                let ri = T::ONE / r;
                s = f * ri;
                c = g * ri;
                g = d[i + 1] - p;
                r = (d[i] - g) * s + two * c * b;
                p = s * r;
                d[i + 1] = g + p;
                g = c * r - b;
                // Rows (i, i + 1): (c yᵢ - s yᵢ₊₁, s yᵢ + c yᵢ₊₁).
                queue.push(y, n, (i, i + 1, c, -s));
            }
            if underflow {
                continue;
            }
            d[l] = d[l] - p;
            e[l] = g;
            e[m] = T::ZERO;
        }
    }
    queue.flush(y, n);
    for x in d.iter_mut() {
        *x = *x * anorm;
    }
    d.iter().all(|x| !x.is_nan())
}

#[cfg(test)]
mod tests {
    use super::eigh;

    /// A deterministic pseudo-random n x n matrix in [-1, 1).
    fn random(n: usize, seed: u64) -> Vec<f64> {
        super::super::test_values(n * n, seed)
    }

    /// `a v = v diag(w)`, `vᵀ v = I` and ascending `w`, within `tol` times the norm.
    fn check(a: &[f64], n: usize, tol: f64) {
        let (mut v, mut w) = (vec![0.0; n * n], vec![0.0; n]);
        eigh(a, n, true, &mut v, &mut w, true);
        let scale = a.iter().fold(1e-300f64, |m, x| m.max(x.abs())) * n as f64;
        for j in 0..n {
            for i in 0..n {
                let av: f64 = (0..n).map(|k| a[i * n + k] * v[k * n + j]).sum();
                assert!((av - w[j] * v[i * n + j]).abs() <= tol * scale, "n {n}: (a v - v w)[{i}, {j}] = {}", av - w[j] * v[i * n + j]);
                let g: f64 = (0..n).map(|k| v[k * n + i] * v[k * n + j]).sum();
                let want = if i == j { 1.0 } else { 0.0 };
                assert!((g - want).abs() <= tol * n as f64, "n {n}: (vᵀ v)[{i}, {j}] = {g}");
            }
        }
        assert!(w.windows(2).all(|p| p[0] <= p[1]), "n {n}: eigenvalues not ascending");
    }

    #[test]
    fn random_symmetric_matrices_decompose() {
        for (n, seed) in [(1, 1), (2, 2), (3, 3), (7, 4), (33, 5), (64, 6), (130, 7)] {
            let r = random(n, seed);
            let a: Vec<f64> = (0..n * n).map(|k| r[k] + r[(k % n) * n + k / n]).collect();
            check(&a, n, 1e-13);
        }
    }

    #[test]
    fn degenerate_spectra_decompose() {
        let n = 40;
        // Identity, zero, repeated eigenvalues (a projector), a diagonal and a tridiagonal
        // with tiny couplings.
        let eye: Vec<f64> = (0..n * n).map(|k| if k / n == k % n { 1.0 } else { 0.0 }).collect();
        check(&eye, n, 1e-14);
        check(&vec![0.0; n * n], n, 1e-14);
        let u: Vec<f64> = random(n, 9)[..n].to_vec();
        let uu: f64 = u.iter().map(|x| x * x).sum();
        let proj: Vec<f64> = (0..n * n).map(|k| u[k / n] * u[k % n] / uu).collect();
        check(&proj, n, 1e-13);
        let diag: Vec<f64> = (0..n * n).map(|k| if k / n == k % n { (k / n) as f64 - 7.5 } else { 0.0 }).collect();
        check(&diag, n, 1e-14);
        let tri: Vec<f64> = (0..n * n).map(|k| if k / n == k % n { 2.0 } else if (k / n).abs_diff(k % n) == 1 { 1e-170 } else { 0.0 }).collect();
        check(&tri, n, 1e-14);
        let huge: Vec<f64> = random(n, 11).iter().enumerate().map(|(k, x)| 1e150 * (x + random(n, 11)[(k % n) * n + k / n])).collect();
        check(&huge, n, 1e-13);
    }

    #[test]
    fn values_alone_equal_the_values_with_vectors() {
        let n = 90;
        let r = random(n, 12);
        let a: Vec<f64> = (0..n * n).map(|k| r[k] + r[(k % n) * n + k / n]).collect();
        let (mut v, mut w, mut w2) = (vec![0.0; n * n], vec![0.0; n], vec![0.0; n]);
        eigh(&a, n, true, &mut v, &mut w, true);
        eigh(&a, n, true, &mut [], &mut w2, false);
        assert_eq!(w, w2);
    }

    #[test]
    fn nan_input_gives_nan() {
        let mut a = vec![1.0, 2.0, 2.0, 3.0];
        a[1] = f64::NAN;
        let (mut v, mut w) = (vec![0.0; 4], vec![0.0; 2]);
        eigh(&a, 2, false, &mut v, &mut w, true);
        assert!(w.iter().all(|x| x.is_nan()) && v.iter().all(|x| x.is_nan()));
    }
}

#[cfg(test)]
mod timing {
    #[test]
    #[ignore]
    fn eigh_phases() {
        use super::*;
        let n = 128;
        let mut x: u64 = 1;
        let r: Vec<f32> = (0..n * n).map(|_| { x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); ((x >> 40) as f32 / (1u64 << 24) as f32) - 0.5 }).collect();
        let a: Vec<f32> = (0..n * n).map(|k| r[k] + r[(k % n) * n + k / n]).collect();
        let mut best = [f64::MAX; 4];
        for _ in 0..200 {
            let t0 = std::time::Instant::now();
            let mut s = a.clone();
            let (mut d, mut e) = (vec![0f32; n], vec![0f32; n]);
            let refl = tridiagonalize(&mut s, n, &mut d, &mut e);
            let t1 = std::time::Instant::now();
            accumulate(&mut s, n, &refl);
            let t2 = std::time::Instant::now();
            ql_implicit(&mut d, &mut e, &mut s, n, true);
            let t3 = std::time::Instant::now();
            let (mut v, mut w) = (vec![0f32; n * n], vec![0f32; n]);
            eigh(&a, n, true, &mut v, &mut w, true);
            let t4 = std::time::Instant::now();
            for (b, t) in best.iter_mut().zip([t1 - t0, t2 - t1, t3 - t2, t4 - t3]) {
                *b = b.min(t.as_secs_f64() * 1e6);
            }
        }
        eprintln!("tridiagonalize {:.1} accumulate {:.1} ql {:.1} (baseline code) whole eigh {:.1} us", best[0], best[1], best[2], best[3]);
    }
}

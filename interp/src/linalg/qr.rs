//! Householder QR in LAPACK's blocked form (geqrf / orgqr, their structure, our code): panels
//! of [`PANEL`] columns are factored column by column, and each panel's reflectors act on the
//! rest of the matrix (and later on `q`) as one block reflector `I - V T Vᵀ` through
//! [`Scalar::gemm`]. LAPACK's sign convention (`r`'s diagonal has the sign opposite to the
//! column's leading element; NumPy's and JAX's results).
use super::eigh::{dot, householder_in_place, Reflector};
use super::kernels::{axpy, Scalar};

/// Columns per panel.
const PANEL: usize = 32;

/// One panel's reflectors: `v` (`rows x nb`, reflector `j`'s vector from row `j` down, with a
/// unit leading element, zeros above) and the negated upper triangular `t` (`nb x nb`) of
/// `H_0 … H_{nb-1} = I - V T Vᵀ`.
pub(super) struct Block<T> {
    j0: usize,
    nb: usize,
    rows: usize,
    v: Vec<T>,
    taus: Vec<T>,
    /// `-T`, formed at the block's first application (a block that is never applied, the last
    /// panel when `q` is not wanted, costs no product).
    neg_t: std::cell::OnceCell<Vec<T>>,
}

/// Householder QR of the `m x n` matrix `a`: `q` is `m x c`, `r` is `c x n` with
/// `c = m` (`full`) or `min(m, n)`.
/// (Compiled for AVX2 where the CPU has it: the same operations per element.)
/// Without `vectors`, `q` is not formed (left as it is).
pub fn qr<T: Scalar>(a: &[T], m: usize, n: usize, full: bool, q: &mut [T], r: &mut [T], vectors: bool) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2.
        return unsafe { qr_avx2(a, m, n, full, q, r, vectors) };
    }
    qr_body(a, m, n, full, q, r, vectors)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn qr_avx2<T: Scalar>(a: &[T], m: usize, n: usize, full: bool, q: &mut [T], r: &mut [T], vectors: bool) {
    qr_body(a, m, n, full, q, r, vectors)
}

#[inline(always)]
fn qr_body<T: Scalar>(a: &[T], m: usize, n: usize, full: bool, q: &mut [T], r: &mut [T], vectors: bool) {
    let k = m.min(n);
    let c = if full { m } else { k };
    let mut w = a.to_vec();
    let mut blocks = Vec::with_capacity(k.div_ceil(PANEL));
    let mut j0 = 0;
    while j0 < k {
        let nb = PANEL.min(k - j0);
        let b = factor_panel(&mut w, m, n, j0, nb, vectors || j0 + nb < n);
        // The rest of the matrix: C <- (I - V Tᵀ Vᵀ) C on rows j0.., columns j0 + nb...
        apply(&b, &mut w[j0 * n + j0 + nb..], n, n - j0 - nb, true);
        blocks.push(b);
        j0 += nb;
    }
    for (i, row) in r.chunks_exact_mut(n).take(c).enumerate() {
        let from = i.min(n);
        row[..from].fill(T::ZERO);
        if i < m {
            row[from..].copy_from_slice(&w[i * n + from..i * n + n]);
        } else {
            row[from..].fill(T::ZERO);
        }
    }
    if vectors {
        form_q(&blocks, m, c, q);
    }
}

/// `q = H_0 … H_{k-1} [I_m]_{:, :c}` (`m x c`) for the reflectors of `blocks`, applied
/// backward; block `b` touches rows and columns `b.j0..` only.
#[inline(always)]
pub(super) fn form_q<T: Scalar>(blocks: &[Block<T>], m: usize, c: usize, q: &mut [T]) {
    q[..m * c].fill(T::ZERO);
    for i in 0..c.min(m) {
        q[i * c + i] = T::ONE;
    }
    for b in blocks.iter().rev() {
        if b.j0 < c {
            apply(b, &mut q[b.j0 * c + b.j0..], c, c - b.j0, false);
        }
    }
}

/// Factors columns `j0..j0 + nb` of the row-major `m x n` `w` (rows `j0..`), leaving `r`'s
/// part in place and zeros below the diagonal; returns the block reflector. The panel is
/// factored transposed (its columns contiguous: each reflector meets the later columns as
/// dot products and axpys of whole columns, where the rows of a 32-wide panel are short).
#[inline(always)]
fn factor_panel<T: Scalar>(w: &mut [T], m: usize, n: usize, j0: usize, nb: usize, keep: bool) -> Block<T> {
    let rows = m - j0;
    let mut pt = vec![T::ZERO; nb * rows];
    for i in 0..rows {
        for (c, x) in w[(j0 + i) * n + j0..(j0 + i) * n + j0 + nb].iter().enumerate() {
            pt[c * rows + i] = *x;
        }
    }
    // The reflectors are kept (for the columns right of the panel or for q) only when `keep`.
    let mut v = if keep { vec![T::ZERO; rows * nb] } else { Vec::new() };
    let mut taus = vec![T::ZERO; nb];
    for jj in 0..nb {
        let (done, rest) = pt.split_at_mut((jj + 1) * rows);
        // The column becomes the reflector's u (u[0] = 1) until the later columns saw it.
        let u = &mut done[jj * rows + jj..];
        let (tau, beta) = householder_in_place(u);
        taus[jj] = tau;
        if keep {
            for (t, e) in u.iter().enumerate() {
                v[(jj + t) * nb + jj] = *e;
            }
        }
        if tau != T::ZERO {
            for later in rest.chunks_exact_mut(rows) {
                let x = &mut later[jj..];
                let f = tau * dot(u, x);
                axpy(x, f, u);
            }
        }
        u[0] = beta;
        u[1..].fill(T::ZERO);
    }
    for i in 0..rows {
        for (c, x) in w[(j0 + i) * n + j0..(j0 + i) * n + j0 + nb].iter_mut().enumerate() {
            *x = pt[c * rows + i];
        }
    }
    Block::new(j0, rows, nb, v, &taus)
}

/// The block reflectors ([`PANEL`] reflectors each) of `reflectors`, reflector `k` acting on
/// rows `k..rows` (its `u` of `rows - k` elements, `u[0]` = 1): for [`form_q`].
pub(super) fn blocks_of<T: Scalar>(reflectors: &[Reflector<T>], rows: usize) -> Vec<Block<T>> {
    reflectors
        .chunks(PANEL)
        .enumerate()
        .map(|(c, hs)| {
            let (j0, nb) = (c * PANEL, hs.len());
            let mut v = vec![T::ZERO; (rows - j0) * nb];
            for (j, h) in hs.iter().enumerate() {
                for (t, x) in h.u.iter().enumerate() {
                    v[(j + t) * nb + j] = *x;
                }
            }
            let taus: Vec<T> = hs.iter().map(|h| h.tau).collect();
            Block::new(j0, rows - j0, nb, v, &taus)
        })
        .collect()
}

impl<T: Scalar> Block<T> {
    /// The block reflector of `nb` reflectors acting from row `j0` (`rows` rows): `v` as in
    /// [`Block`], `taus` their factors.
    pub(super) fn new(j0: usize, rows: usize, nb: usize, v: Vec<T>, taus: &[T]) -> Block<T> {
        Block { j0, nb, rows, v, taus: taus.to_vec(), neg_t: std::cell::OnceCell::new() }
    }
}

/// LAPACK's larft (forward, columnwise): `T[j][j] = τ_j`, `T[..j, j] = -τ_j T[..j, ..j] (V[:,
/// ..j]ᵀ v_j)`, with `Vᵀ V` from one product.
fn triangular_factor<T: Scalar>(v: &[T], rows: usize, nb: usize, taus: &[T]) -> Vec<T> {
    let mut g = vec![T::ZERO; nb * nb];
    // SAFETY: v is rows x nb, g nb x nb.
    unsafe {
        T::gemm(nb, rows, nb, T::ONE, v.as_ptr(), 1, nb as isize, v.as_ptr(), nb as isize, 1, T::ZERO, g.as_mut_ptr(), nb as isize, 1);
    }
    let mut t = vec![T::ZERO; nb * nb];
    for (j, tau) in taus.iter().enumerate() {
        for i in 0..j {
            let acc = (i..j).fold(T::ZERO, |acc, c| acc + t[i * nb + c] * g[c * nb + j]);
            t[i * nb + j] = -*tau * acc;
        }
        t[j * nb + j] = *tau;
    }
    t
}

/// `C <- (I - V Tᵀ Vᵀ) C` (`transposed`: the block's `Qᵀ`, as the factorization applies it)
/// or `C <- (I - V T Vᵀ) C` (its `Q`), for the `b.rows x cols` matrix `C` at `c` (row stride
/// `ldc`): `W = Vᵀ C`, `W = T(ᵀ) W`, `C -= V W`.
fn apply<T: Scalar>(b: &Block<T>, c: &mut [T], ldc: usize, cols: usize, transposed: bool) {
    if cols == 0 {
        return;
    }
    let (nb, rows) = (b.nb, b.rows);
    let mut w = vec![T::ZERO; nb * cols];
    let mut w2 = vec![T::ZERO; nb * cols];
    let (rst, cst) = if transposed { (1, nb as isize) } else { (nb as isize, 1) };
    // SAFETY: C's rows x cols elements (stride ldc) lie in `c`; the work buffers are nb x cols.
    unsafe {
        T::gemm(nb, rows, cols, T::ONE, b.v.as_ptr(), 1, nb as isize, c.as_ptr(), ldc as isize, 1, T::ZERO, w.as_mut_ptr(), cols as isize, 1);
        // -T(ᵀ) W, from the negated factor: the last product is then an accumulation with
        // alpha 1 (alpha -1 would copy and negate an operand per call).
        let neg_t = b.neg_t.get_or_init(|| triangular_factor(&b.v, rows, nb, &b.taus).into_iter().map(|x| -x).collect());
        T::gemm(nb, nb, cols, T::ONE, neg_t.as_ptr(), rst, cst, w.as_ptr(), cols as isize, 1, T::ZERO, w2.as_mut_ptr(), cols as isize, 1);
        T::gemm(rows, nb, cols, T::ONE, b.v.as_ptr(), nb as isize, 1, w2.as_ptr(), cols as isize, 1, T::ONE, c.as_mut_ptr(), ldc as isize, 1);
    }
}

#[cfg(test)]
mod tests {
    use super::qr;

    use super::super::test_values as random;

    #[test]
    fn r_alone_equals_r_with_q() {
        let (m, n) = (100, 70);
        let a = random(m * n, 3);
        let (mut q, mut r, mut r2) = (vec![0.0; m * n], vec![0.0; n * n], vec![0.0; n * n]);
        qr(&a, m, n, false, &mut q, &mut r, true);
        qr(&a, m, n, false, &mut [], &mut r2, false);
        assert_eq!(r, r2);
    }

    /// `q r = a`, `qᵀ q = I`, `r` upper triangular, for tall, wide and square shapes across
    /// panel boundaries.
    #[test]
    fn blocked_factors_reconstruct() {
        for (m, n) in [(1, 1), (5, 3), (3, 5), (31, 33), (64, 64), (100, 37), (37, 100), (130, 70)] {
            for full in [false, true] {
                let a = random(m * n, (m * 131 + n) as u64);
                let k = m.min(n);
                let c = if full { m } else { k };
                let (mut q, mut r) = (vec![0.0; m * c], vec![0.0; c * n]);
                qr(&a, m, n, full, &mut q, &mut r, true);
                for i in 0..m {
                    for j in 0..n {
                        let x: f64 = (0..c).map(|t| q[i * c + t] * r[t * n + j]).sum();
                        assert!((x - a[i * n + j]).abs() < 1e-13, "{m}x{n} full {full}: (q r - a)[{i}, {j}] = {}", x - a[i * n + j]);
                    }
                }
                for i in 0..c {
                    for j in 0..c {
                        let g: f64 = (0..m).map(|t| q[t * c + i] * q[t * c + j]).sum();
                        assert!((g - if i == j { 1.0 } else { 0.0 }).abs() < 1e-13, "{m}x{n}: (qᵀ q)[{i}, {j}] = {g}");
                    }
                    for j in 0..i.min(n) {
                        assert_eq!(r[i * n + j], 0.0);
                    }
                }
            }
        }
    }
}

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
//! LAPACK's sign convention; `eigh` is a Householder tridiagonalization and the implicit QL
//! iteration (eigenvalues ascending, eigenvectors in columns, reading the `lower`/upper
//! triangle); `svd` is a Householder bidiagonalization and the
//! implicit-shift bidiagonal QR (singular values descending, `u` and `vt` orthonormal, `u`
//! a full basis with `full_matrices`).
use quabla_dialect::{LinalgOp, TensorType};

use super::{to_buffer, vals, InterpError, Result, Vals};
use crate::buffer::{Buffer, BufferError};

pub mod kernels;
mod cholesky;
mod eigh;
mod qr;
mod svd;
mod triangular_solve;
mod lu;

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

/// The element counts of `op`'s results for operands of types `at` (and `bt` for
/// `triangular_solve`): (float results, i32 results), in result order within each.
pub fn result_sizes(op: &LinalgOp, at: &TensorType, bt: Option<&TensorType>) -> (Vec<usize>, Vec<usize>) {
    let (nb, m, n) = dims(at);
    let k = m.min(n);
    match op {
        LinalgOp::Cholesky { .. } => (vec![nb * m * n], vec![]),
        LinalgOp::TriangularSolve { .. } => (vec![bt.unwrap_or(at).num_elements()], vec![]),
        LinalgOp::Lu {} => (vec![nb * m * n], vec![nb * k, nb * m]),
        LinalgOp::Qr { full_matrices } => {
            let c = if *full_matrices { m } else { k };
            (vec![nb * m * c, nb * c * n], vec![])
        }
        LinalgOp::Eigh { .. } => (vec![nb * n * n, nb * n], vec![]),
        LinalgOp::Svd { full_matrices } => {
            let (cu, rv) = if *full_matrices { (m, n) } else { (k, k) };
            (vec![nb * m * cu, nb * k, nb * rv * n], vec![])
        }
    }
}

/// The element types the CPU runtime calls the kernels at, with [`run`] and [`run_into`]
/// instantiated here: a generic kernel is compiled in the crate that instantiates it, at that
/// crate's optimisation level (the runtime's is the dev profile's 1, where the kernels' loops
/// stay scalar and their helpers are calls); these methods compile them with this crate's.
pub trait Element: Scalar {
    /// [`run`] at this type.
    fn run(op: &LinalgOp, a: &[Self], at: &TensorType, b: Option<&[Self]>, bt: Option<&TensorType>) -> std::result::Result<Vec<Out<Self>>, OutOfMemory>;
    /// [`run_into`] at this type.
    #[allow(clippy::too_many_arguments)]
    fn run_into(op: &LinalgOp, a: &[Self], at: &TensorType, b: Option<&[Self]>, bt: Option<&TensorType>, floats: &mut [&mut [Self]], ints: &mut [&mut [i32]], vectors: bool);
}

macro_rules! element {
    ($t:ty) => {
        impl Element for $t {
            fn run(op: &LinalgOp, a: &[Self], at: &TensorType, b: Option<&[Self]>, bt: Option<&TensorType>) -> std::result::Result<Vec<Out<Self>>, OutOfMemory> {
                run::<$t>(op, a, at, b, bt)
            }
            fn run_into(op: &LinalgOp, a: &[Self], at: &TensorType, b: Option<&[Self]>, bt: Option<&TensorType>, floats: &mut [&mut [Self]], ints: &mut [&mut [i32]], vectors: bool) {
                run_into::<$t>(op, a, at, b, bt, floats, ints, vectors)
            }
        }
    };
}
element!(f32);
element!(f64);

/// Runs `op` on row-major data: `a` of type `at` and, for `triangular_solve`, `b` of type
/// `bt` (types already checked by the shape rule). Returns one [`Out`] per result. The
/// batch-sized results are allocated fallibly ([`OutOfMemory`]); the kernels' scratch is at
/// most a few matrices of one batch element.
pub fn run<T: Scalar>(op: &LinalgOp, a: &[T], at: &TensorType, b: Option<&[T]>, bt: Option<&TensorType>) -> std::result::Result<Vec<Out<T>>, OutOfMemory> {
    let (fs, is) = result_sizes(op, at, bt);
    let mut floats = fs.iter().map(|&n| filled(n, T::ZERO)).collect::<std::result::Result<Vec<_>, _>>()?;
    let mut ints = is.iter().map(|&n| filled(n, 0i32)).collect::<std::result::Result<Vec<_>, _>>()?;
    {
        let mut fo: Vec<&mut [T]> = floats.iter_mut().map(|v| &mut v[..]).collect();
        let mut io: Vec<&mut [i32]> = ints.iter_mut().map(|v| &mut v[..]).collect();
        run_into(op, a, at, b, bt, &mut fo, &mut io, true);
    }
    let mut out: Vec<Out<T>> = floats.into_iter().map(Out::F).collect();
    out.extend(ints.into_iter().map(Out::I));
    Ok(out)
}

/// [`run`] into caller-provided results: `floats` and `ints` sized as [`result_sizes`] says
/// (the runtime passes the compiled program's result buffers, saving a copy of each).
/// Without `vectors`, `qr`, `eigh` and `svd` compute only `r`, the eigenvalues and the
/// singular values, and leave `q`, the eigenvectors and `u` / `vt` zero (the CPU lowering asks
/// so when the program never reads them: `eigvalsh`, `svdvals`, `qr(mode="r")`).
#[allow(clippy::too_many_arguments)]
pub fn run_into<T: Scalar>(op: &LinalgOp, a: &[T], at: &TensorType, b: Option<&[T]>, bt: Option<&TensorType>, floats: &mut [&mut [T]], ints: &mut [&mut [i32]], vectors: bool) {
    let (_, m, n) = dims(at);
    match op {
        LinalgOp::Cholesky { lower } if n > 0 => {
            for (x, y) in a.chunks_exact(m * n).zip(floats[0].chunks_exact_mut(m * n)) {
                kernels::cholesky(x, n, *lower, y);
            }
        }
        LinalgOp::Cholesky { .. } => {}
        LinalgOp::TriangularSolve { left_side, lower, transpose_a, unit_diagonal } => {
            let (b, bt) = (b.unwrap_or_default(), bt.unwrap_or(at));
            let r = bt.rank();
            let k = if *left_side { bt.shape[r - 1] } else { bt.shape[r - 2] } as usize;
            let x = &mut *floats[0];
            x.copy_from_slice(b);
            if m * k > 0 {
                for (aa, xx) in a.chunks_exact(m * m).zip(x.chunks_exact_mut(m * k)) {
                    kernels::triangular_solve(aa, m, xx, k, *left_side, *lower, *transpose_a, *unit_diagonal);
                }
            }
        }
        LinalgOp::Lu {} => {
            let k = m.min(n);
            let lu = &mut *floats[0];
            lu.copy_from_slice(a);
            let (piv, perm) = ints.split_at_mut(1);
            if m * n > 0 {
                for ((x, p), q) in lu.chunks_exact_mut(m * n).zip(piv[0].chunks_exact_mut(k.max(1))).zip(perm[0].chunks_exact_mut(m)) {
                    kernels::lu(x, m, n, p, q);
                }
            } else if m > 0 {
                // No columns: no pivots, and the permutation is the identity.
                for q in perm[0].chunks_exact_mut(m) {
                    for (i, e) in q.iter_mut().enumerate() {
                        *e = i as i32;
                    }
                }
            }
        }
        LinalgOp::Qr { full_matrices } => {
            let c = if *full_matrices { m } else { m.min(n) };
            let [q, r] = floats else { return };
            q.fill(T::ZERO);
            r.fill(T::ZERO);
            for ((x, qq), rr) in a.chunks_exact(m * n).zip(q.chunks_exact_mut(m * c)).zip(r.chunks_exact_mut(c * n)) {
                kernels::qr(x, m, n, *full_matrices, qq, rr, vectors);
            }
        }
        LinalgOp::Eigh { lower } => {
            let [v, w] = floats else { return };
            v.fill(T::ZERO);
            w.fill(T::ZERO);
            for ((x, vv), ww) in a.chunks_exact(n * n).zip(v.chunks_exact_mut(n * n)).zip(w.chunks_exact_mut(n)) {
                kernels::eigh(x, n, *lower, vv, ww, vectors);
            }
        }
        LinalgOp::Svd { full_matrices } => {
            let k = m.min(n);
            let (cu, rv) = if *full_matrices { (m, n) } else { (k, k) };
            let [u, s, vt] = floats else { return };
            u.fill(T::ZERO);
            s.fill(T::ZERO);
            vt.fill(T::ZERO);
            for (((x, uu), ss), vv) in a.chunks_exact(m * n).zip(u.chunks_exact_mut(m * cu)).zip(s.chunks_exact_mut(k)).zip(vt.chunks_exact_mut(rv * n)) {
                kernels::svd(x, m, n, *full_matrices, uu, ss, vv, vectors);
            }
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

/// Deterministic pseudo-random values in [-1, 1) for the kernels' tests.
#[cfg(test)]
pub(super) fn test_values(len: usize, seed: u64) -> Vec<f64> {
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..len)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((x >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::run_op;
    use super::super::test_util::*;
    use super::Scalar;
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
        // checked by the residual against the dense op(a); sizes across the blocks (64) and
        // the few-right-hand-sides path (<= 4).
        for (m, k) in [(13usize, 19usize), (13, 1), (70, 3), (130, 67), (65, 5)] {
            triangular_solve_residuals_at(m, k);
        }
    }

    fn triangular_solve_residuals_at(m: usize, k: usize) {
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
            assert!(worst < 1e-12, "m {m} k {k} flags {flags:04b}: residual {worst}");
        }
    }

    /// Timing of the kernels (run with `--ignored --nocapture`; min of repeated calls).
    #[test]
    #[ignore]
    fn kernel_timing() {
        fn best(mut f: impl FnMut()) -> f64 {
            f();
            let mut b = f64::INFINITY;
            let start = std::time::Instant::now();
            for _ in 0..200 {
                let t = std::time::Instant::now();
                f();
                b = b.min(t.elapsed().as_secs_f64());
                if start.elapsed().as_secs_f64() > 1.0 {
                    break;
                }
            }
            b * 1e3
        }
        for n in [64usize, 256, 1024] {
            let m: Vec<f64> = (0..n * n).map(|i| ((i * 7919) % 1000) as f64 / 1000.0 - 0.5).collect();
            let mut a = vec![0.0; n * n];
            unsafe { f64::gemm(n, n, n, 1.0, m.as_ptr(), n as isize, 1, m.as_ptr(), 1, n as isize, 0.0, a.as_mut_ptr(), n as isize, 1) };
            for i in 0..n {
                a[i * n + i] += n as f64;
            }
            let mut c = vec![0.0; n * n];
            let tg = best(|| unsafe { f64::gemm(n, n, n, 1.0, m.as_ptr(), n as isize, 1, a.as_ptr(), n as isize, 1, 0.0, c.as_mut_ptr(), n as isize, 1) });
            eprintln!("n {n}: gemm {tg:.3} ms = {:.1} GFLOP/s", 2.0 * (n * n * n) as f64 / tg * 1e-6);
            let mut l = vec![0.0; n * n];
            let tt = best(|| super::kernels::transpose_into(&a, n, n, &mut l));
            eprintln!("n {n}: transpose {tt:.3} ms");
            let tc = best(|| super::kernels::cholesky(&a, n, true, &mut l));
            let tu = best(|| super::kernels::cholesky(&a, n, false, &mut l));
            super::kernels::cholesky(&a, n, true, &mut l);
            let mut line = format!("n {n}: cholesky {tc:.3} ms (upper {tu:.3})");
            for k in [1usize, 32, n] {
                let b0: Vec<f64> = m[..n * k].to_vec();
                let t = best(|| {
                    let mut b = b0.clone();
                    super::kernels::triangular_solve(&l, n, &mut b, k, true, true, false, false);
                });
                let tt = best(|| {
                    let mut b = b0.clone();
                    super::kernels::triangular_solve(&l, n, &mut b, k, true, true, true, false);
                });
                let tr = best(|| {
                    let mut b = b0.clone();
                    super::kernels::triangular_solve(&l, n, &mut b, k, false, true, false, false);
                });
                line += &format!(", trsm {k} rhs {t:.3} (trans {tt:.3}, right {tr:.3})");
            }
            let (mut piv, mut perm) = (vec![0; n], vec![0; n]);
            let tl = best(|| {
                let mut x = m.clone();
                super::kernels::lu(&mut x, n, n, &mut piv, &mut perm);
            });
            eprintln!("{line}, lu {tl:.3} ms");
        }
    }

    #[test]
    fn gemm_updates_match_a_plain_product() {
        // The factorizations' updates (c -= a b, c = a b; the packed product, a negated copy of
        // the smaller factor) and the rest (alpha 0.5, beta 2: matrixmultiply), with strided
        // and transposed views, against a plain triple loop.
        for (m, k, n) in [(37, 32, 53), (70, 5, 9), (9, 40, 3), (1, 1, 1)] {
            let a: Vec<f64> = (0..m * k).map(|i| ((i * 7) % 13) as f64 - 6.0).collect();
            let b: Vec<f64> = (0..k * n).map(|i| ((i * 5) % 11) as f64 * 0.5 - 2.0).collect();
            let c0: Vec<f64> = (0..m * n).map(|i| (i % 3) as f64).collect();
            for (alpha, beta) in [(-1.0, 1.0), (1.0, 0.0), (1.0, 1.0), (-1.0, 0.0), (0.5, 2.0)] {
                // a read transposed (column-major storage of an m x k matrix) or row-major.
                for a_t in [false, true] {
                    let (a_store, rsa, csa) = if a_t {
                        let mut t = vec![0.0; m * k];
                        for i in 0..m {
                            for p in 0..k {
                                t[p * m + i] = a[i * k + p];
                            }
                        }
                        (t, 1isize, m as isize)
                    } else {
                        (a.clone(), k as isize, 1isize)
                    };
                    let mut c = c0.clone();
                    unsafe { f64::gemm(m, k, n, alpha, a_store.as_ptr(), rsa, csa, b.as_ptr(), n as isize, 1, beta, c.as_mut_ptr(), n as isize, 1) };
                    for i in 0..m {
                        for j in 0..n {
                            let s: f64 = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
                            let want = alpha * s + beta * c0[i * n + j];
                            assert!((c[i * n + j] - want).abs() <= 1e-9 * (1.0 + want.abs()), "{m}x{k}x{n} alpha {alpha} beta {beta} a_t {a_t} at ({i}, {j}): {} != {want}", c[i * n + j]);
                        }
                    }
                }
            }
        }
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

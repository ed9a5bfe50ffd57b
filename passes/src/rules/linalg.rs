//! Derivative and batching rules of the linear-algebra ops, written with the family's own ops
//! (triangular solves), batched matmuls (`dot_general` over the leading dims) and constant
//! masks. Notation: `mm` matrix product, `mt` transpose of the last two dims, `tril`/`triu`
//! triangle masks, `Φ(X)` the lower triangle of X with half its diagonal.
//!
//! * `cholesky` (reads one triangle: the effective input is `M(A) = tril(A) + tril(A,-1)ᵀ`):
//!   JVP `dL = L Φ(L⁻¹ M(dA) L⁻ᵀ)`; VJP its transpose `Āe = L⁻ᵀ Φ(Lᵀ L̄) L⁻¹`,
//!   `Ā = tril(Āe) + tril(Āeᵀ, -1)`. The upper form is the lower one on transposes.
//! * `triangular_solve`: `dX = op(A)⁻¹ (dB - op(dT) X)` (left) / `(dB - X op(dT)) op(A)⁻¹`
//!   (right) with `dT` the masked triangle of dA; VJP `B̄ = op(A)⁻ᵀ X̄`, `op(dT)‾ = -B̄ Xᵀ`
//!   (right: `-Xᵀ B̄`), masked back to the triangle.
//! * `lu` (square): `X = L⁻¹ P dA U⁻¹`, `dLU = L tril(X,-1) + triu(X) U`; VJP its transpose.
//! * `qr` (reduced, m >= n, as JAX): `D = dA R⁻¹, C = Qᵀ D, Ω = tril(C,-1) - tril(C,-1)ᵀ`,
//!   `dQ = Q(Ω - C) + D`, `dR = (C - Ω) R`; VJP its transpose.
//! * `eigh`: `S = Vᵀ M(dA) V`, `dw = diag(S)`, `dV = V (F ∘ S)`, `F_ij = 1/(w_j - w_i)`.
//! * `svd` (reduced): `S = Uᵀ dA V`, `ds = diag(S)`, `dU = U(F∘(S D + D Sᵀ)) + (I - UUᵀ) dA V D⁻¹`,
//!   `dV = V(F∘(D S + Sᵀ D)) + (I - VVᵀ) dAᵀ U D⁻¹`, `F_ij = 1/(s_j² - s_i²)`; VJP its transpose.
//!
//! The cases JAX does not differentiate (QR with m < n or full matrices of a non-square
//! input, SVD with full matrices of a non-square input, non-square LU) are typed
//! `RuleError::Unsupported`. Batching: the ops take leading batch dims, so a batched operand
//! (batch dim first) is used as is; an unbatched `triangular_solve` operand is broadcast.
use quabla_dialect::{CmpDir, ConstantOp, DType, DotDims, DotOp, LinalgOp, Literal, Op, OpKind, TensorType, Value};

use super::{lift_all, RuleError, Tangents, B};

/// Pushes a (possibly multi-result) op.
fn push_n(b: &mut B, kind: OpKind, xs: &[Value]) -> Vec<Value> {
    b.f.push(kind, xs, b.loc.clone()).unwrap_or_else(|e| panic!("linalg rule built an invalid op: {e}"))
}

/// Transpose of the last two dims.
fn mt(b: &mut B, x: Value) -> Value {
    let r = b.ty(x).rank();
    let mut p: Vec<i64> = (0..r as i64).collect();
    p.swap(r - 2, r - 1);
    b.transpose(x, p)
}

/// Batched matrix product over the leading dims.
fn mm(b: &mut B, x: Value, y: Value) -> Value {
    let r = b.ty(x).rank() as i64;
    let batch: Vec<i64> = (0..r - 2).collect();
    let dims = DotDims { lhs_batching_dimensions: batch.clone(), rhs_batching_dimensions: batch, lhs_contracting_dimensions: vec![r - 1], rhs_contracting_dimensions: vec![r - 2] };
    b.op(OpKind::Dot(DotOp::DotGeneral { dims }), &[x, y])
}

/// A constant matrix `f(i, j)` broadcast to `shape` (a batch of matrices) of dtype `d`.
fn const_mat(b: &mut B, d: DType, shape: &[i64], f: impl Fn(i64, i64) -> f64) -> Value {
    let r = shape.len();
    let (m, n) = (shape[r - 2], shape[r - 1]);
    let vals: Vec<f64> = (0..m).flat_map(|i| (0..n).map(move |j| (i, j))).map(|(i, j)| f(i, j)).collect();
    let c = b.op(OpKind::Constant(ConstantOp::Constant { value: Literal::from_f64s(TensorType::new(d, [m, n]), &vals) }), &[]);
    b.broadcast(c, vec![r as i64 - 2, r as i64 - 1], shape.to_vec())
}

/// `x * mask(i, j)`.
fn masked(b: &mut B, x: Value, f: impl Fn(i64, i64) -> f64) -> Value {
    let t = b.ty(x);
    let m = const_mat(b, t.dtype, &t.shape, f);
    b.mul(x, m)
}

/// Entries with `j <= i + k`.
fn tril(b: &mut B, x: Value, k: i64) -> Value {
    masked(b, x, |i, j| if j <= i + k { 1.0 } else { 0.0 })
}

/// Entries with `j >= i + k`.
fn triu(b: &mut B, x: Value, k: i64) -> Value {
    masked(b, x, |i, j| if j >= i + k { 1.0 } else { 0.0 })
}

/// `Φ(X)`: strictly lower part plus half the diagonal.
fn phi(b: &mut B, x: Value) -> Value {
    masked(b, x, |i, j| if j < i { 1.0 } else if i == j { 0.5 } else { 0.0 })
}

/// A `triangular_solve`.
fn solve(b: &mut B, a: Value, x: Value, left_side: bool, lower: bool, transpose_a: bool, unit_diagonal: bool) -> Value {
    b.op(OpKind::Linalg(LinalgOp::TriangularSolve { left_side, lower, transpose_a, unit_diagonal }), &[a, x])
}

/// `w[..., None, :]` (`row`) or `w[..., :, None]` broadcast to `[..., m, n]`.
fn bcast_vec(b: &mut B, w: Value, m: i64, n: i64, row: bool) -> Value {
    let t = b.ty(w);
    let nb = t.rank() - 1;
    let mut shape = t.shape[..nb].to_vec();
    shape.extend([m, n]);
    let mut dims: Vec<i64> = (0..nb as i64).collect();
    dims.push(if row { nb as i64 + 1 } else { nb as i64 });
    b.broadcast(w, dims, shape)
}

/// `diag(x)`: `[..., n, n] -> [..., n]`.
fn diag_part(b: &mut B, x: Value) -> Value {
    let r = b.ty(x).rank();
    let d = masked(b, x, |i, j| if i == j { 1.0 } else { 0.0 });
    b.reduce_sum(d, vec![r as i64 - 1])
}

/// The diagonal matrix of `w`: `[..., n] -> [..., n, n]`.
fn diag_embed(b: &mut B, w: Value) -> Value {
    let n = *b.ty(w).shape.last().unwrap_or(&1);
    let x = bcast_vec(b, w, n, n, true);
    masked(b, x, |i, j| if i == j { 1.0 } else { 0.0 })
}

/// `F_ij = 1 / (v_j - v_i)` off the diagonal, 0 on it (`v` a `[..., n]` vector).
fn gaps(b: &mut B, v: Value) -> Value {
    let n = *b.ty(v).shape.last().unwrap_or(&1);
    let (r, c) = (bcast_vec(b, v, n, n, true), bcast_vec(b, v, n, n, false));
    let diff = b.sub(r, c);
    let t = b.ty(diff);
    let eye = const_mat(b, t.dtype, &t.shape, |i, j| if i == j { 1.0 } else { 0.0 });
    let off = const_mat(b, t.dtype, &t.shape, |i, j| if i == j { 0.0 } else { 1.0 });
    let den = b.add(diff, eye);
    b.div(off, den)
}

/// The effective symmetric input of an op that reads one triangle: `tril(A) + tril(A,-1)ᵀ`
/// (upper: `triu(A) + triu(A,1)ᵀ`).
fn sym_of(b: &mut B, a: Value, lower: bool) -> Value {
    let (t, s) = if lower { (tril(b, a, 0), tril(b, a, -1)) } else { (triu(b, a, 0), triu(b, a, 1)) };
    let st = mt(b, s);
    b.add(t, st)
}

/// The transpose of [`sym_of`]: `tril(G) + tril(Gᵀ, -1)` (upper: `triu(G) + triu(Gᵀ, 1)`).
fn sym_of_t(b: &mut B, g: Value, lower: bool) -> Value {
    let gt = mt(b, g);
    let (x, y) = if lower { (tril(b, g, 0), tril(b, gt, -1)) } else { (triu(b, g, 0), triu(b, gt, 1)) };
    b.add(x, y)
}

/// The one-hot permutation matrix `P[i, j] = (perm[i] == j)` of `lu` (`P A = L U`).
fn perm_matrix(b: &mut B, perm: Value, d: DType) -> Value {
    let t = b.ty(perm);
    let m = *t.shape.last().unwrap_or(&1);
    let p = bcast_vec(b, perm, m, m, false);
    let pt = b.ty(p);
    let iota = b.op(OpKind::Constant(ConstantOp::Iota { dim: pt.rank() as i64 - 1, ty: pt.clone() }), &[]);
    let eq = b.cmp(CmpDir::Eq, p, iota);
    b.convert(eq, d)
}

/// The (m, n) extents of `x`'s matrices.
fn mn(b: &B, x: Value) -> (i64, i64) {
    let t = b.ty(x);
    let r = t.rank();
    (t.shape[r - 2], t.shape[r - 1])
}

fn unsupported(op: &LinalgOp, rule: &'static str) -> RuleError {
    RuleError::Unsupported { op: op.name(), rule }
}

fn the_op(op: &Op) -> Result<&LinalgOp, RuleError> {
    match &op.kind {
        OpKind::Linalg(l) => Ok(l),
        _ => Err(RuleError::Internal("linalg rule got another op".into())),
    }
}

/// JVP rules (one tangent per result; integer results have none).
pub fn jvp(b: &mut B, op: &Op, t: &[Option<Value>]) -> Result<Tangents, RuleError> {
    let l = the_op(op)?;
    let a = op.operands[0];
    match l {
        LinalgOp::Cholesky { lower } => {
            let Some(da) = t[0] else { return Ok(vec![None]) };
            let (lo, da) = if *lower { (op.results[0], da) } else { (mt(b, op.results[0]), mt(b, da)) };
            let dae = sym_of(b, da, true);
            let y = solve(b, lo, dae, true, true, false, false);
            let x = solve(b, lo, y, false, true, true, false);
            let p = phi(b, x);
            let dl = mm(b, lo, p);
            Ok(vec![Some(if *lower { dl } else { mt(b, dl) })])
        }
        LinalgOp::TriangularSolve { left_side, lower, transpose_a, unit_diagonal } => {
            let x = op.results[0];
            let mut rhs = t[1];
            if let Some(da) = t[0] {
                let k = if *unit_diagonal { 1 } else { 0 };
                let dt = if *lower { tril(b, da, -k) } else { triu(b, da, k) };
                let dop = if *transpose_a { mt(b, dt) } else { dt };
                let prod = if *left_side { mm(b, dop, x) } else { mm(b, x, dop) };
                rhs = Some(match rhs {
                    Some(db) => b.sub(db, prod),
                    None => b.neg(prod),
                });
            }
            Ok(vec![rhs.map(|r| solve(b, a, r, *left_side, *lower, *transpose_a, *unit_diagonal))])
        }
        LinalgOp::Lu {} => {
            let Some(da) = t[0] else { return Ok(vec![None, None, None]) };
            let (m, n) = mn(b, a);
            if m != n {
                return Err(unsupported(l, "jvp (non-square lu)"));
            }
            let (lu, perm) = (op.results[0], op.results[2]);
            let d = b.ty(a).dtype;
            let p = perm_matrix(b, perm, d);
            let pda = mm(b, p, da);
            let y = solve(b, lu, pda, true, true, false, true);
            let x = solve(b, lu, y, false, false, false, false);
            let lm = tril(b, lu, -1);
            let eye = const_mat(b, d, &b.ty(lu).shape, |i, j| if i == j { 1.0 } else { 0.0 });
            let lmat = b.add(lm, eye);
            let umat = triu(b, lu, 0);
            let xl = tril(b, x, -1);
            let xu = triu(b, x, 0);
            let t1 = mm(b, lmat, xl);
            let t2 = mm(b, xu, umat);
            Ok(vec![Some(b.add(t1, t2)), None, None])
        }
        LinalgOp::Qr { full_matrices } => {
            let Some(da) = t[0] else { return Ok(vec![None, None]) };
            let (m, n) = mn(b, a);
            if m < n || (*full_matrices && m != n) {
                return Err(unsupported(l, "jvp (qr with m < n or full matrices of a non-square input)"));
            }
            let (q, r) = (op.results[0], op.results[1]);
            let dd = solve(b, r, da, false, false, false, false);
            let qt = mt(b, q);
            let c = mm(b, qt, dd);
            let low = tril(b, c, -1);
            let lowt = mt(b, low);
            let om = b.sub(low, lowt);
            let oc = b.sub(om, c);
            let qoc = mm(b, q, oc);
            let dq = b.add(qoc, dd);
            let co = b.sub(c, om);
            let dr = mm(b, co, r);
            Ok(vec![Some(dq), Some(dr)])
        }
        LinalgOp::Eigh { lower } => {
            let Some(da) = t[0] else { return Ok(vec![None, None]) };
            let (v, w) = (op.results[0], op.results[1]);
            let dae = sym_of(b, da, *lower);
            let vt = mt(b, v);
            let av = mm(b, dae, v);
            let s = mm(b, vt, av);
            let dw = diag_part(b, s);
            let f = gaps(b, w);
            let fs = b.mul(f, s);
            let dv = mm(b, v, fs);
            Ok(vec![Some(dv), Some(dw)])
        }
        LinalgOp::Svd { full_matrices } => {
            let Some(da) = t[0] else { return Ok(vec![None, None, None]) };
            let (m, n) = mn(b, a);
            if *full_matrices && m != n {
                return Err(unsupported(l, "jvp (svd with full matrices of a non-square input)"));
            }
            let (u, s, vt) = (op.results[0], op.results[1], op.results[2]);
            let k = m.min(n);
            let v = mt(b, vt);
            let ut = mt(b, u);
            let dav = mm(b, da, v);
            let ss = mm(b, ut, dav);
            let ds = diag_part(b, ss);
            let s2 = b.mul(s, s);
            let f = gaps(b, s2);
            let (sr, sc) = (bcast_vec(b, s, k, k, true), bcast_vec(b, s, k, k, false));
            let sst = mt(b, ss);
            let a1 = b.mul(ss, sr);
            let a2 = b.mul(sc, sst);
            let au = b.add(a1, a2);
            let fu = b.mul(f, au);
            let mut du = mm(b, u, fu);
            let b1 = b.mul(sc, ss);
            let b2 = b.mul(sst, sr);
            let av = b.add(b1, b2);
            let fv = b.mul(f, av);
            let mut dv = mm(b, v, fv);
            if m > n {
                let proj = mm(b, ut, dav);
                let uproj = mm(b, u, proj);
                let rest = b.sub(dav, uproj);
                let sm = bcast_vec(b, s, m, k, true);
                let extra = b.div(rest, sm);
                du = b.add(du, extra);
            }
            if n > m {
                let dat = mt(b, da);
                let dau = mm(b, dat, u);
                let proj = mm(b, vt, dau);
                let vproj = mm(b, v, proj);
                let rest = b.sub(dau, vproj);
                let sn = bcast_vec(b, s, n, k, true);
                let extra = b.div(rest, sn);
                dv = b.add(dv, extra);
            }
            let dvt = mt(b, dv);
            Ok(vec![Some(du), Some(ds), Some(dvt)])
        }
    }
}

/// VJP rules: operand cotangents from the cotangents of all results (`None`: zero).
pub fn vjp(b: &mut B, op: &Op, cts: &[Option<Value>]) -> Result<Tangents, RuleError> {
    let l = the_op(op)?;
    let a = op.operands[0];
    if cts.iter().all(Option::is_none) {
        return Ok(vec![None; op.operands.len()]);
    }
    let ct = |b: &mut B, i: usize| b.or_zero(cts[i], op.results[i]);
    match l {
        LinalgOp::Cholesky { lower } => {
            let lbar = ct(b, 0);
            let (lo, lbar) = if *lower { (op.results[0], lbar) } else { (mt(b, op.results[0]), mt(b, lbar)) };
            let lt = mt(b, lo);
            let g = mm(b, lt, lbar);
            let p = phi(b, g);
            let y = solve(b, lo, p, true, true, true, false);
            let s = solve(b, lo, y, false, true, false, false);
            let abar = sym_of_t(b, s, true);
            Ok(vec![Some(if *lower { abar } else { mt(b, abar) })])
        }
        LinalgOp::TriangularSolve { left_side, lower, transpose_a, unit_diagonal } => {
            let xbar = ct(b, 0);
            let x = op.results[0];
            let bbar = solve(b, a, xbar, *left_side, *lower, !*transpose_a, *unit_diagonal);
            let g = if *left_side {
                let xt = mt(b, x);
                mm(b, bbar, xt)
            } else {
                let xt = mt(b, x);
                mm(b, xt, bbar)
            };
            let g = b.neg(g);
            let g = if *transpose_a { mt(b, g) } else { g };
            let k = if *unit_diagonal { 1 } else { 0 };
            let abar = if *lower { tril(b, g, -k) } else { triu(b, g, k) };
            Ok(vec![Some(abar), Some(bbar)])
        }
        LinalgOp::Lu {} => {
            let (m, n) = mn(b, a);
            if m != n {
                return Err(unsupported(l, "vjp (non-square lu)"));
            }
            let Some(lubar) = cts[0] else { return Ok(vec![None]) };
            let (lu, perm) = (op.results[0], op.results[2]);
            let d = b.ty(a).dtype;
            let lm = tril(b, lu, -1);
            let eye = const_mat(b, d, &b.ty(lu).shape, |i, j| if i == j { 1.0 } else { 0.0 });
            let lmat = b.add(lm, eye);
            let umat = triu(b, lu, 0);
            let lb = tril(b, lubar, -1);
            let ub = triu(b, lubar, 0);
            let lt = mt(b, lmat);
            let ut = mt(b, umat);
            let g1 = mm(b, lt, lb);
            let g1 = tril(b, g1, -1);
            let g2 = mm(b, ub, ut);
            let g2 = triu(b, g2, 0);
            let xbar = b.add(g1, g2);
            let y = solve(b, lu, xbar, true, true, true, true);
            let z = solve(b, lu, y, false, false, true, false);
            let p = perm_matrix(b, perm, d);
            let pt = mt(b, p);
            Ok(vec![Some(mm(b, pt, z))])
        }
        LinalgOp::Qr { full_matrices } => {
            let (m, n) = mn(b, a);
            if m < n || (*full_matrices && m != n) {
                return Err(unsupported(l, "vjp (qr with m < n or full matrices of a non-square input)"));
            }
            let (q, r) = (op.results[0], op.results[1]);
            let (qbar, rbar) = (ct(b, 0), ct(b, 1));
            let qt = mt(b, q);
            let rt = mt(b, r);
            let m1 = mm(b, qt, qbar);
            let m2 = mm(b, rbar, rt);
            let mm_ = b.sub(m1, m2);
            let mmt = mt(b, mm_);
            let asym = b.sub(mm_, mmt);
            let low = tril(b, asym, -1);
            let nn = b.sub(low, mm_);
            let qn = mm(b, q, nn);
            let dbar = b.add(qn, qbar);
            Ok(vec![Some(solve(b, r, dbar, false, false, true, false))])
        }
        LinalgOp::Eigh { lower } => {
            let (v, w) = (op.results[0], op.results[1]);
            let vt = mt(b, v);
            let mut sbar = None;
            if let Some(vbar) = cts[0] {
                let f = gaps(b, w);
                let g = mm(b, vt, vbar);
                sbar = Some(b.mul(f, g));
            }
            if let Some(wbar) = cts[1] {
                let d = diag_embed(b, wbar);
                sbar = b.add_opt(sbar, Some(d));
            }
            let sbar = sbar.ok_or_else(|| RuleError::Internal("eigh vjp without cotangents".into()))?;
            let sv = mm(b, sbar, vt);
            let g = mm(b, v, sv);
            Ok(vec![Some(sym_of_t(b, g, *lower))])
        }
        LinalgOp::Svd { full_matrices } => {
            let (m, n) = mn(b, a);
            if *full_matrices && m != n {
                return Err(unsupported(l, "vjp (svd with full matrices of a non-square input)"));
            }
            let (u, s, vt) = (op.results[0], op.results[1], op.results[2]);
            let k = m.min(n);
            let v = mt(b, vt);
            let ut = mt(b, u);
            let s2 = b.mul(s, s);
            let f = gaps(b, s2);
            let (sr, sc) = (bcast_vec(b, s, k, k, true), bcast_vec(b, s, k, k, false));
            let mut sbar = None;
            if let Some(ubar) = cts[0] {
                let g = mm(b, ut, ubar);
                let gu = b.mul(f, g);
                let gut = mt(b, gu);
                let sum = b.add(gu, gut);
                let x = b.mul(sum, sr);
                sbar = b.add_opt(sbar, Some(x));
            }
            let vbar = cts[2].map(|x| mt(b, x));
            if let Some(vbar) = vbar {
                let g = mm(b, vt, vbar);
                let gv = b.mul(f, g);
                let gvt = mt(b, gv);
                let sum = b.add(gv, gvt);
                let x = b.mul(sc, sum);
                sbar = b.add_opt(sbar, Some(x));
            }
            if let Some(sb) = cts[1] {
                let d = diag_embed(b, sb);
                sbar = b.add_opt(sbar, Some(d));
            }
            let sbar = sbar.ok_or_else(|| RuleError::Internal("svd vjp without cotangents".into()))?;
            let sv = mm(b, sbar, vt);
            let mut abar = mm(b, u, sv);
            if let (true, Some(ubar)) = (m > n, cts[0]) {
                let proj = mm(b, ut, ubar);
                let uproj = mm(b, u, proj);
                let rest = b.sub(ubar, uproj);
                let sm = bcast_vec(b, s, m, k, true);
                let scaled = b.div(rest, sm);
                let extra = mm(b, scaled, vt);
                abar = b.add(abar, extra);
            }
            if let (true, Some(vbar)) = (n > m, vbar) {
                let proj = mm(b, vt, vbar);
                let vproj = mm(b, v, proj);
                let rest = b.sub(vbar, vproj);
                let restt = mt(b, rest);
                let sm = bcast_vec(b, s, m, k, true);
                let us = b.div(u, sm);
                let extra = mm(b, us, restt);
                abar = b.add(abar, extra);
            }
            Ok(vec![Some(abar)])
        }
    }
}

/// Batching: the ops take leading batch dims, so batched operands (batch dim first) go in as
/// they are (an unbatched operand of `triangular_solve` is broadcast); every result is batched.
pub fn batch(b: &mut B, op: &Op, xs: &[Value], batched: &[bool], size: i64) -> Result<Vec<(Value, bool)>, RuleError> {
    let l = the_op(op)?;
    let xs = lift_all(b, xs, batched, size);
    let ys = push_n(b, OpKind::Linalg(l.clone()), &xs);
    Ok(ys.into_iter().map(|y| (y, true)).collect())
}

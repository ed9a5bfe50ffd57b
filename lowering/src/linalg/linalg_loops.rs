//! The linear-algebra family as loop nests, for a target whose computations are all kernels
//! (`Target::parallel_outer`, the GPU: no runtime kernel to call). Each op is an `scf.forall`
//! mapped to `#gpu.block<x>` over its independent problems (a factorization per matrix of the
//! batch; a triangular solve per right-hand-side column and batch matrix), whose body runs
//! the textbook algorithm sequentially with `scf.for` loops carrying tensors (bufferized in
//! place) and writes its problem's part of the result with `tensor.parallel_insert_slice`.
//!
//! * cholesky: the column-by-column (left-looking) factor, `l[j][j] = sqrt(a[j][j] - sum
//!   l[j][k]^2)`, `l[i][j] = (a[i][j] - sum l[i][k] l[j][k]) / l[j][j]`, reading the `lower`
//!   triangle of `a` (the upper one as its transpose, the factor written transposed); zeros
//!   outside the factor's triangle and NaN inside it when a pivot is not positive (as the
//!   CPU kernels and JAX).
//! * triangular_solve: forward or backward substitution per column of `b` (left side) or per
//!   row (right side: `x op(a) = b` is `op(a)^T x^T = b^T`), on op(a) = `a` or its transpose,
//!   with a unit diagonal assumed when asked.
//!
//! `lu`, `qr`, `eigh` and `svd` have no loop form yet (their `cuda::gap` stays).
use quabla_dialect::{DType, Func, LinalgOp, Op, TensorType};

use super::Emitter;

/// Emits `scf.for iv = lo to hi` carrying `carried` (value, type) pairs; `body` gets the
/// induction variable and the carried values and returns the values to yield. Returns the
/// loop's results.
fn for_loop(e: &mut Emitter, lo: &str, hi: &str, carried: &[(String, String)], body: impl FnOnce(&mut Emitter, &str, &[String]) -> Vec<String>) -> Vec<String> {
    let one = e.index(1);
    let (res, iv) = (e.fresh(), e.fresh());
    let args: Vec<String> = carried.iter().map(|_| e.fresh()).collect();
    let inits: Vec<String> = args.iter().zip(carried).map(|(a, (v, _))| format!("{a} = {v}")).collect();
    let tys: Vec<&str> = carried.iter().map(|(_, t)| t.as_str()).collect();
    let lhs = if carried.len() == 1 { res.clone() } else { format!("{res}:{}", carried.len()) };
    e.raw_line(format!("{lhs} = scf.for {iv} = {lo} to {hi} step {one} iter_args({}) -> ({}) {{", inits.join(", "), tys.join(", ")));
    e.depth += 1;
    let ys = body(e, &iv, &args);
    e.line(format!("scf.yield {} : {}", ys.join(", "), tys.join(", ")));
    e.depth -= 1;
    e.raw_line("}");
    if carried.len() == 1 {
        vec![res]
    } else {
        (0..carried.len()).map(|k| format!("{res}#{k}")).collect()
    }
}

/// `t` (batch dims, then two matrix dims) viewed as `[B, r, c]` (B = 1 without batch dims).
fn as_batch(e: &mut Emitter, x: &str, t: &TensorType) -> (String, TensorType) {
    let r = t.rank();
    let b: i64 = t.shape[..r - 2].iter().product();
    let bt = TensorType::new(t.dtype, [b, t.shape[r - 2], t.shape[r - 1]]);
    let groups = if r == 2 { "[[0, 1], [2]]".to_string() } else { format!("[[{}], [{}], [{}]]", (0..r - 2).map(|k| k.to_string()).collect::<Vec<_>>().join(", "), r - 2, r - 1) };
    let v = if r == 2 {
        e.op(format!("tensor.expand_shape {x} {groups} output_shape [1, {}, {}] : {t} into {bt}", t.shape[0], t.shape[1]))
    } else {
        e.op(format!("tensor.collapse_shape {x} {groups} : {t} into {bt}"))
    };
    (v, bt)
}

/// The `[B, r, c]` result `v` back in the op's result type `t`.
fn from_batch(e: &mut Emitter, v: &str, bt: &TensorType, t: &TensorType) -> String {
    let r = t.rank();
    if r == 2 {
        return e.op(format!("tensor.collapse_shape {v} [[0, 1], [2]] : {bt} into {t}"));
    }
    let groups = format!("[[{}], [{}], [{}]]", (0..r - 2).map(|k| k.to_string()).collect::<Vec<_>>().join(", "), r - 2, r - 1);
    let shape: Vec<String> = t.shape.iter().map(|n| n.to_string()).collect();
    e.op(format!("tensor.expand_shape {v} {groups} output_shape [{}] : {bt} into {t}", shape.join(", ")))
}

/// A float constant of `d`.
fn fconst(e: &mut Emitter, d: DType, v: &str) -> String {
    e.scalar(d, v)
}

/// `x[b, i, j]`, or `x[b, j, i]` when `transposed`.
fn at(e: &mut Emitter, x: &str, t: &TensorType, b: &str, i: &str, j: &str, transposed: bool) -> String {
    let (i, j) = if transposed { (j, i) } else { (i, j) };
    e.op(format!("tensor.extract {x}[{b}, {i}, {j}] : {t}"))
}

/// `cholesky` (see the module docs). The factor is built in the result's own slice (no
/// allocation or fill inside the kernel): `l[i][j]` (i >= j) is kept at `[i, j]` for the
/// lower factor and at `[j, i]` for the upper one, and a last pass writes NaN over it unless
/// every pivot was positive and zeros over the other triangle.
fn cholesky(e: &mut Emitter, f: &Func, o: &Op, lower: bool) -> String {
    let at_ = f.ty(o.operands[0]).clone();
    let (a, bt) = as_batch(e, &e.name(o.operands[0]), &at_);
    let (d, bsz, n) = (bt.dtype, bt.shape[0], bt.shape[1]);
    let mt = TensorType::new(d, [n, n]);
    let init = e.empty(&bt);
    let (res, b, out) = (e.fresh(), e.fresh(), e.fresh());
    e.raw_line(format!("{res} = scf.forall ({b}) in ({bsz}) shared_outs({out} = {init}) -> ({bt}) {{"));
    e.depth += 1;
    let (c0, cn) = (e.index(0), e.index(n));
    let z = fconst(e, d, "0.0");
    let yes = e.scalar(DType::I1, "true");
    let bts = bt.to_string();
    // l[i][j] in the result's slice (transposed for the upper factor).
    let get = |e: &mut Emitter, w: &str, i: &str, j: &str| at(e, w, &bt, &b, i, j, !lower);
    let set = |e: &mut Emitter, v: &str, w: &str, i: &str, j: &str| {
        let (i, j) = if lower { (i, j) } else { (j, i) };
        e.op(format!("tensor.insert {v} into {w}[{b}, {i}, {j}] : {bt}"))
    };
    let done = for_loop(e, &c0, &cn, &[(out.clone(), bts.clone()), (yes, "i1".to_string())], |e, j, c| {
        let (w, ok) = (c[0].clone(), c[1].clone());
        let ajj = at(e, &a, &bt, &b, j, j, !lower);
        let s = for_loop(e, &c0, j, &[(ajj, d.to_string())], |e, k, acc| {
            let ljk = get(e, &w, j, k);
            let nl = e.op(format!("arith.negf {ljk} : {d}"));
            vec![e.op(format!("math.fma {nl}, {ljk}, {} : {d}", acc[0]))]
        })
        .remove(0);
        let pos = e.op(format!("arith.cmpf ogt, {s}, {z} : {d}"));
        let ok = e.op(format!("arith.andi {ok}, {pos} : i1"));
        let djj = e.op(format!("math.sqrt {s} : {d}"));
        let w1 = set(e, &djj, &w, j, j);
        let one = e.index(1);
        let j1 = e.op(format!("arith.addi {j}, {one} : index"));
        let w2 = for_loop(e, &j1, &cn, &[(w1, bts.clone())], |e, i, c| {
            let w = c[0].clone();
            let aij = at(e, &a, &bt, &b, i, j, !lower);
            let t = for_loop(e, &c0, j, &[(aij, d.to_string())], |e, k, acc| {
                let lik = get(e, &w, i, k);
                let ljk = get(e, &w, j, k);
                let nl = e.op(format!("arith.negf {lik} : {d}"));
                vec![e.op(format!("math.fma {nl}, {ljk}, {} : {d}", acc[0]))]
            })
            .remove(0);
            let v = e.op(format!("arith.divf {t}, {djj} : {d}"));
            vec![set(e, &v, &w, i, j)]
        })
        .remove(0);
        vec![w2, ok]
    });
    let (w, ok) = (done[0].clone(), done[1].clone());
    let nan = fconst(e, d, if d == DType::F32 { "0x7FC00000" } else { "0x7FF8000000000000" });
    let fin = for_loop(e, &c0, &cn, &[(w, bts.clone())], |e, i, c| {
        for_loop(e, &c0, &cn, &[(c[0].clone(), bts.clone())], |e, j, c| {
            let lij = get(e, &c[0], i, j);
            let kept = e.op(format!("arith.select {ok}, {lij}, {nan} : {d}"));
            let inside = e.op(format!("arith.cmpi ule, {j}, {i} : index"));
            let v = e.op(format!("arith.select {inside}, {kept}, {z} : {d}"));
            vec![set(e, &v, &c[0], i, j)]
        })
    })
    .remove(0);
    let mine = e.op(format!("tensor.extract_slice {fin}[{b}, 0, 0] [1, {n}, {n}] [1, 1, 1] : {bt} to {mt}"));
    super::dot::end_forall_mapped(e, &format!("{mine} into {out}[{b}, 0, 0] [1, {n}, {n}] [1, 1, 1] : {mt} into {bt}"), "#gpu.block<x>");
    from_batch(e, &res, &bt, f.ty(o.results[0]))
}

/// `triangular_solve` (see the module docs): one problem per batch matrix and right-hand
/// side (a column of `b` on the left side, a row on the right), solved in place in the
/// result's slice (which starts as `b`) by substitution in the order the triangle needs.
fn triangular_solve(e: &mut Emitter, f: &Func, o: &Op, left: bool, lower: bool, transpose_a: bool, unit: bool) -> String {
    let (at_, bt_) = (f.ty(o.operands[0]).clone(), f.ty(o.operands[1]).clone());
    let (a, abt) = as_batch(e, &e.name(o.operands[0]), &at_);
    let (x0, xbt) = as_batch(e, &e.name(o.operands[1]), &bt_);
    let (d, bsz, m) = (abt.dtype, abt.shape[0], abt.shape[1]);
    let k = if left { xbt.shape[2] } else { xbt.shape[1] };
    // The system solved per right-hand side: N(i, j) = op(a)[i][j] on the left, op(a)[j][i]
    // on the right (x op(a) = b is op(a)ᵀ xᵀ = bᵀ); N is lower iff this is.
    let n_lower = (lower != transpose_a) == left;
    let n_transposed = transpose_a != !left;
    let (res, p, out) = (e.fresh(), e.fresh(), e.fresh());
    e.raw_line(format!("{res} = scf.forall ({p}) in ({}) shared_outs({out} = {x0}) -> ({xbt}) {{", bsz * k));
    e.depth += 1;
    let kk = e.index(k);
    let b = e.op(format!("arith.divui {p}, {kk} : index"));
    let c = e.op(format!("arith.remui {p}, {kk} : index"));
    let (c0, cm) = (e.index(0), e.index(m));
    let xbts = xbt.to_string();
    let pos = |i: &str| if left { format!("{b}, {i}, {c}") } else { format!("{b}, {c}, {i}") };
    let fin = for_loop(e, &c0, &cm, &[(out.clone(), xbts.clone())], |e, t, w| {
        let w = w[0].clone();
        let i = if n_lower {
            t.to_string()
        } else {
            let last = e.index(m - 1);
            e.op(format!("arith.subi {last}, {t} : index"))
        };
        let one = e.index(1);
        let (lo, hi) = if n_lower { (c0.clone(), i.clone()) } else { (e.op(format!("arith.addi {i}, {one} : index")), cm.clone()) };
        let bi = e.op(format!("tensor.extract {w}[{}] : {xbt}", pos(&i)));
        let s = for_loop(e, &lo, &hi, &[(bi, d.to_string())], |e, q, acc| {
            let nik = at(e, &a, &abt, &b, &i, q, n_transposed);
            let xk = e.op(format!("tensor.extract {w}[{}] : {xbt}", pos(q)));
            let nn = e.op(format!("arith.negf {nik} : {d}"));
            vec![e.op(format!("math.fma {nn}, {xk}, {} : {d}", acc[0]))]
        })
        .remove(0);
        let x = if unit {
            s
        } else {
            let nii = at(e, &a, &abt, &b, &i, &i, false);
            e.op(format!("arith.divf {s}, {nii} : {d}"))
        };
        vec![e.op(format!("tensor.insert {x} into {w}[{}] : {xbt}", pos(&i)))]
    })
    .remove(0);
    let (sizes, vt) = if left { (format!("[1, {m}, 1]"), TensorType::new(d, [m])) } else { (format!("[1, 1, {m}]"), TensorType::new(d, [m])) };
    let offs = if left { format!("[{b}, 0, {c}]") } else { format!("[{b}, {c}, 0]") };
    let mine = e.op(format!("tensor.extract_slice {fin}{offs} {sizes} [1, 1, 1] : {xbt} to {vt}"));
    super::dot::end_forall_mapped(e, &format!("{mine} into {out}{offs} {sizes} [1, 1, 1] : {vt} into {xbt}"), "#gpu.block<x>");
    from_batch(e, &res, &xbt, f.ty(o.results[0]))
}

/// Whether `op` has a loop form here.
pub fn has_loop_form(op: &LinalgOp) -> bool {
    matches!(op, LinalgOp::Cholesky { .. } | LinalgOp::TriangularSolve { .. })
}

/// The loop form of `op`'s results, or `None` when it has none yet.
pub fn lower(e: &mut Emitter, f: &Func, o: &Op, op: &LinalgOp) -> Option<Vec<String>> {
    match op {
        LinalgOp::Cholesky { lower } => Some(vec![cholesky(e, f, o, *lower)]),
        LinalgOp::TriangularSolve { left_side, lower, transpose_a, unit_diagonal } => Some(vec![triangular_solve(e, f, o, *left_side, *lower, *transpose_a, *unit_diagonal)]),
        LinalgOp::Lu {} | LinalgOp::Qr { .. } | LinalgOp::Eigh { .. } | LinalgOp::Svd { .. } => None,
    }
}

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
//! * lu: unblocked right-looking elimination with partial pivoting (getrf's pivots and
//!   permutation, JAX's results).
//! * qr: the CPU kernel's Householder QR step for step (reflectors normalised, none for a
//!   column already zero below the diagonal; q from the identity with the reflectors
//!   applied in reverse), reduced or full.
//! * eigh: the CPU kernel's cyclic Jacobi step for step (at most 100 sweeps, until one
//!   rotates nothing), eigenvalues ascending with their vectors as columns.
//! * svd: the CPU kernel's one-sided Jacobi step for step (on aᵀ when m < n), singular
//!   values descending, u completed from the standard basis where columns are missing.
//!
//! The algorithms follow quabla_interp::linalg::kernels operation for operation except for
//! summation order (sequential here), so results agree to rounding, and the signs of
//! vectors and factors agree.
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
    // The operand's type passed the size checks, so its batch product fits.
    let b = quabla_dialect::size::saturating_product(t.shape[..r - 2].iter().copied());
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

/// A new uninitialised tensor for one of a forall's shared outputs: a
/// `bufferization.alloc_tensor`, which CSE does not merge (two equal `tensor.empty`s would
/// become one value and the outputs one buffer).
fn scratch(e: &mut Emitter, t: &TensorType) -> String {
    e.op(format!("bufferization.alloc_tensor() : {t}"))
}

/// An open `scf.forall` (mapped to `#gpu.block<x>`): its result names, induction variable,
/// shared outputs and their types.
struct Forall {
    results: Vec<String>,
    iv: String,
    outs: Vec<String>,
    types: Vec<TensorType>,
}

/// Opens an `scf.forall` over `count` independent problems with one shared output per
/// `inits` entry (initial value, type).
fn open_forall(e: &mut Emitter, count: i64, inits: &[(String, TensorType)]) -> Forall {
    let (res, iv) = (e.fresh(), e.fresh());
    let outs: Vec<String> = inits.iter().map(|_| e.fresh()).collect();
    let shared: Vec<String> = outs.iter().zip(inits).map(|(o, (v, _))| format!("{o} = {v}")).collect();
    let types: Vec<TensorType> = inits.iter().map(|(_, t)| t.clone()).collect();
    let tys: Vec<String> = types.iter().map(|t| t.to_string()).collect();
    let (lhs, results) = match inits.len() {
        1 => (res.clone(), vec![res.clone()]),
        n => (format!("{res}:{n}"), (0..n).map(|k| format!("{res}#{k}")).collect()),
    };
    e.raw_line(format!("{lhs} = scf.forall ({iv}) in ({count}) shared_outs({}) -> ({}) {{", shared.join(", "), tys.join(", ")));
    e.depth += 1;
    Forall { results, iv, outs, types }
}

/// Closes a forall over the batch: `finals[k]` (the k-th shared output as the iteration left
/// it) has its slice of batch element `iv` inserted into the k-th output.
fn close_batch(e: &mut Emitter, fa: &Forall, finals: &[String]) {
    let b = &fa.iv;
    let inserts: Vec<String> = fa.types.iter().zip(finals.iter().zip(&fa.outs)).map(|(t, (v, out))| {
        let inner = TensorType::new(t.dtype, t.shape[1..].to_vec());
        let zeros = vec!["0"; t.rank() - 1].join(", ");
        let sizes: Vec<String> = std::iter::once("1".to_string()).chain(t.shape[1..].iter().map(|x| x.to_string())).collect();
        let ones = vec!["1"; t.rank()].join(", ");
        let spec = format!("[{b}, {zeros}] [{}] [{ones}]", sizes.join(", "));
        let sl = e.op(format!("tensor.extract_slice {v}{spec} : {t} to {inner}"));
        format!("{sl} into {out}{spec} : {inner} into {t}")
    }).collect();
    super::dot::end_forall_mapped(e, &inserts, "#gpu.block<x>");
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
    let init = scratch(e, &bt);
    let fa = open_forall(e, bsz, &[(init, bt.clone())]);
    let (b, out) = (fa.iv.clone(), fa.outs[0].clone());
    let (c0, cn) = (e.index(0), e.index(n));
    let z = e.scalar(d, "0.0");
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
    let nan = e.scalar(d, if d == DType::F32 { "0x7FC00000" } else { "0x7FF8000000000000" });
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
    close_batch(e, &fa, &[fin]);
    from_batch(e, &fa.results[0], &bt, f.ty(o.results[0]))
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
    let n_transposed = transpose_a == left;
    let fa = open_forall(e, bsz * k, &[(x0, xbt.clone())]);
    let (p, out) = (fa.iv.clone(), fa.outs[0].clone());
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
    super::dot::end_forall_mapped(e, &[format!("{mine} into {out}{offs} {sizes} [1, 1, 1] : {vt} into {xbt}")], "#gpu.block<x>");
    from_batch(e, &fa.results[0], &xbt, f.ty(o.results[0]))
}

/// The `[B, k]` vector `v` back in the result type `t` (batch dims, then `k`).
fn vec_from_batch(e: &mut Emitter, v: &str, bt: &TensorType, t: &TensorType) -> String {
    let r = t.rank();
    if r == 1 {
        return e.op(format!("tensor.collapse_shape {v} [[0, 1]] : {bt} into {t}"));
    }
    let groups = format!("[[{}], [{}]]", (0..r - 1).map(|k| k.to_string()).collect::<Vec<_>>().join(", "), r - 1);
    let shape: Vec<String> = t.shape.iter().map(|n| n.to_string()).collect();
    e.op(format!("tensor.expand_shape {v} {groups} output_shape [{}] : {bt} into {t}", shape.join(", ")))
}

/// `scf.if cond` yielding one `ty` value: `then` computes it, the else branch yields `other`.
fn if_then(e: &mut Emitter, cond: &str, ty: &str, other: &str, then: impl FnOnce(&mut Emitter) -> String) -> String {
    if_many(e, cond, &[(other.to_string(), ty.to_string())], |e| vec![then(e)]).remove(0)
}

/// The place of element `i` among the `n` values `get(j)` in a stable order (ascending, or
/// descending): how many come before it, ties by position; as an `index`.
fn stable_place(e: &mut Emitter, d: DType, n: &str, i: &str, descending: bool, get: impl Fn(&mut Emitter, &str) -> String) -> String {
    let c0 = e.index(0);
    let zi = e.scalar(DType::I64, "0");
    let xi = get(e, i);
    let place = for_loop(e, &c0, n, &[(zi, "i64".into())], |e, j, acc| {
        let xj = get(e, j);
        let first = e.op(format!("arith.cmpf {}, {xj}, {xi} : {d}", if descending { "ogt" } else { "olt" }));
        let eq = e.op(format!("arith.cmpf oeq, {xj}, {xi} : {d}"));
        vec![super::sort::count_before(e, &first, &eq, j, i, &acc[0])]
    })
    .remove(0);
    e.op(format!("arith.index_cast {place} : i64 to index"))
}

/// `lu` (LAPACK getrf's results, as JAX): the unblocked right-looking elimination with
/// partial pivoting, in place in the result's slice (which starts as `a`): for each column
/// the first entry of largest magnitude below the diagonal (a NaN only when the rest are
/// NaN) is the pivot, its row swapped with the diagonal's across the matrix (and in the
/// permutation), and when the pivot is not zero the column below it divided by it and the
/// trailing rows updated. Pivots and permutation as `i32`.
fn lu(e: &mut Emitter, f: &Func, o: &Op) -> Vec<String> {
    let at_ = f.ty(o.operands[0]).clone();
    let (a, bt) = as_batch(e, &e.name(o.operands[0]), &at_);
    let (d, bsz, m, n) = (bt.dtype, bt.shape[0], bt.shape[1], bt.shape[2]);
    let kmin = m.min(n);
    let (pt, qt) = (TensorType::new(DType::I32, [bsz, kmin]), TensorType::new(DType::I32, [bsz, m]));
    let (pi, qi) = (scratch(e, &pt), scratch(e, &qt));
    let fa = open_forall(e, bsz, &[(a, bt.clone()), (pi, pt.clone()), (qi, qt.clone())]);
    let (b, w0, p0, q0) = (fa.iv.clone(), fa.outs[0].clone(), fa.outs[1].clone(), fa.outs[2].clone());
    let (c0, cm, cn, ck) = (e.index(0), e.index(m), e.index(n), e.index(kmin));
    let (bts, pts, qts) = (bt.to_string(), pt.to_string(), qt.to_string());
    let one = e.index(1);
    let perm = for_loop(e, &c0, &cm, &[(q0.clone(), qts.clone())], |e, i, c| {
        let v = e.op(format!("arith.index_cast {i} : index to i32"));
        vec![e.op(format!("tensor.insert {v} into {}[{b}, {i}] : {qt}", c[0]))]
    })
    .remove(0);
    let done = for_loop(e, &c0, &ck, &[(w0.clone(), bts.clone()), (p0.clone(), pts.clone()), (perm, qts.clone())], |e, j, c| {
        let (w, piv, perm) = (c[0].clone(), c[1].clone(), c[2].clone());
        let wjj = e.op(format!("tensor.extract {w}[{b}, {j}, {j}] : {bt}"));
        let best0 = e.op(format!("math.absf {wjj} : {d}"));
        let j1 = e.op(format!("arith.addi {j}, {one} : index"));
        let found = for_loop(e, &j1, &cm, &[(j.to_string(), "index".into()), (best0, d.to_string())], |e, i, c| {
            let wij = e.op(format!("tensor.extract {w}[{b}, {i}, {j}] : {bt}"));
            let v = e.op(format!("math.absf {wij} : {d}"));
            let gt = e.op(format!("arith.cmpf ogt, {v}, {} : {d}", c[1]));
            let best_nan = e.op(format!("arith.cmpf uno, {}, {} : {d}", c[1], c[1]));
            let v_num = e.op(format!("arith.cmpf ord, {v}, {v} : {d}"));
            let nan_fix = e.op(format!("arith.andi {best_nan}, {v_num} : i1"));
            let take = e.op(format!("arith.ori {gt}, {nan_fix} : i1"));
            vec![e.op(format!("arith.select {take}, {i}, {} : index", c[0])), e.op(format!("arith.select {take}, {v}, {} : {d}", c[1]))]
        });
        let q = found[0].clone();
        let q32 = e.op(format!("arith.index_cast {q} : index to i32"));
        let piv = e.op(format!("tensor.insert {q32} into {piv}[{b}, {j}] : {pt}"));
        // Rows j and q swapped (a no-op when q = j), in the matrix and the permutation.
        let w = for_loop(e, &c0, &cn, &[(w, bts.clone())], |e, cc, c| {
            let x = e.op(format!("tensor.extract {}[{b}, {j}, {cc}] : {bt}", c[0]));
            let y = e.op(format!("tensor.extract {}[{b}, {q}, {cc}] : {bt}", c[0]));
            let w1 = e.op(format!("tensor.insert {y} into {}[{b}, {j}, {cc}] : {bt}", c[0]));
            vec![e.op(format!("tensor.insert {x} into {w1}[{b}, {q}, {cc}] : {bt}"))]
        })
        .remove(0);
        let pj = e.op(format!("tensor.extract {perm}[{b}, {j}] : {qt}"));
        let pq = e.op(format!("tensor.extract {perm}[{b}, {q}] : {qt}"));
        let perm = e.op(format!("tensor.insert {pq} into {perm}[{b}, {j}] : {qt}"));
        let perm = e.op(format!("tensor.insert {pj} into {perm}[{b}, {q}] : {qt}"));
        let dj = e.op(format!("tensor.extract {w}[{b}, {j}, {j}] : {bt}"));
        let z = e.scalar(d, "0.0");
        let nz = e.op(format!("arith.cmpf une, {dj}, {z} : {d}"));
        let w = if_then(e, &nz, &bts, &w, |e| {
            for_loop(e, &j1, &cm, &[(w.clone(), bts.clone())], |e, i, c| {
                let wij = e.op(format!("tensor.extract {}[{b}, {i}, {j}] : {bt}", c[0]));
                let fct = e.op(format!("arith.divf {wij}, {dj} : {d}"));
                let w1 = e.op(format!("tensor.insert {fct} into {}[{b}, {i}, {j}] : {bt}", c[0]));
                let nf = e.op(format!("arith.negf {fct} : {d}"));
                for_loop(e, &j1, &cn, &[(w1, bts.clone())], |e, cc, c| {
                    let wic = e.op(format!("tensor.extract {}[{b}, {i}, {cc}] : {bt}", c[0]));
                    let wjc = e.op(format!("tensor.extract {}[{b}, {j}, {cc}] : {bt}", c[0]));
                    let v = e.op(format!("math.fma {nf}, {wjc}, {wic} : {d}"));
                    vec![e.op(format!("tensor.insert {v} into {}[{b}, {i}, {cc}] : {bt}", c[0]))]
                })
            })
            .remove(0)
        });
        vec![w, piv, perm]
    });
    close_batch(e, &fa, &done);
    let rt: Vec<TensorType> = o.results.iter().map(|v| f.ty(*v).clone()).collect();
    let r = &fa.results;
    vec![from_batch(e, &r[0], &bt, &rt[0]), vec_from_batch(e, &r[1], &pt, &rt[1]), vec_from_batch(e, &r[2], &qt, &rt[2])]
}

/// `Σ_{i in lo..hi} f(i)` in `d`, summed in order.
fn sum(e: &mut Emitter, d: DType, lo: &str, hi: &str, f: impl Fn(&mut Emitter, &str) -> String) -> String {
    let z = e.scalar(d, "0.0");
    for_loop(e, lo, hi, &[(z, d.to_string())], |e, i, acc| {
        let v = f(e, i);
        vec![e.op(format!("arith.addf {}, {v} : {d}", acc[0]))]
    })
    .remove(0)
}

/// `qr` (the CPU kernel's Householder QR, step for step): for each column j < min(m, n) the
/// reflector v of the column's part from the diagonal down (beta = -sign(x0) |x|, v = x -
/// beta e0 normalised; none when the part below the diagonal is zero, stored as a zero v)
/// updates the working copy `w` (`w -= 2 v (vᵀ w)`); `r` is w's upper part, `q` the
/// identity's first `c` columns with the reflectors applied in reverse. `w` and the
/// reflectors live in two scratch results of the loop (no allocation inside the kernel).
fn qr(e: &mut Emitter, f: &Func, o: &Op, full: bool) -> Vec<String> {
    let at_ = f.ty(o.operands[0]).clone();
    let (a, bt) = as_batch(e, &e.name(o.operands[0]), &at_);
    let (d, bsz, m, n) = (bt.dtype, bt.shape[0], bt.shape[1], bt.shape[2]);
    let k = m.min(n);
    let c = if full { m } else { k };
    let (qt, rt, vt) = (TensorType::new(d, [bsz, m, c]), TensorType::new(d, [bsz, c, n]), TensorType::new(d, [bsz, k, m]));
    let (qi, ri, vi) = (scratch(e, &qt), scratch(e, &rt), scratch(e, &vt));
    let fa = open_forall(e, bsz, &[(qi, qt.clone()), (ri, rt.clone()), (a, bt.clone()), (vi, vt.clone())]);
    let (b, q0, r0, w0, v0) = (fa.iv.clone(), fa.outs[0].clone(), fa.outs[1].clone(), fa.outs[2].clone(), fa.outs[3].clone());
    let (c0, cm, cn, ck, cc) = (e.index(0), e.index(m), e.index(n), e.index(k), e.index(c));
    let one = e.index(1);
    let (bts, vts, qts, rts) = (bt.to_string(), vt.to_string(), qt.to_string(), rt.to_string());
    let z = e.scalar(d, "0.0");
    let two = e.scalar(d, "2.0");
    let done = for_loop(e, &c0, &ck, &[(w0.clone(), bts.clone()), (v0.clone(), vts.clone())], |e, j, cw| {
        let (w, v) = (cw[0].clone(), cw[1].clone());
        let j1 = e.op(format!("arith.addi {j}, {one} : index"));
        let tail = sum(e, d, &j1, &cm, |e, i| {
            let x = e.op(format!("tensor.extract {w}[{b}, {i}, {j}] : {bt}"));
            e.op(format!("arith.mulf {x}, {x} : {d}"))
        });
        let x0 = e.op(format!("tensor.extract {w}[{b}, {j}, {j}] : {bt}"));
        let has = e.op(format!("arith.cmpf ogt, {tail}, {z} : {d}"));
        let x0sq = e.op(format!("arith.mulf {x0}, {x0} : {d}"));
        let nsq = e.op(format!("arith.addf {x0sq}, {tail} : {d}"));
        let norm = e.op(format!("math.sqrt {nsq} : {d}"));
        let nnorm = e.op(format!("arith.negf {norm} : {d}"));
        let nonneg = e.op(format!("arith.cmpf oge, {x0}, {z} : {d}"));
        let beta = e.op(format!("arith.select {nonneg}, {nnorm}, {norm} : {d}"));
        let v0e = e.op(format!("arith.subf {x0}, {beta} : {d}"));
        let v0sq = e.op(format!("arith.mulf {v0e}, {v0e} : {d}"));
        let vsq = e.op(format!("arith.addf {v0sq}, {tail} : {d}"));
        let vn = e.op(format!("math.sqrt {vsq} : {d}"));
        // The reflector (zero where there is none), in row j of the scratch.
        let v = for_loop(e, &c0, &cm, &[(v, vts.clone())], |e, i, cv| {
            let diag = e.op(format!("arith.cmpi eq, {i}, {j} : index"));
            let ic = e.op(format!("arith.maxui {i}, {j} : index"));
            let x = e.op(format!("tensor.extract {w}[{b}, {ic}, {j}] : {bt}"));
            let x = e.op(format!("arith.select {diag}, {v0e}, {x} : {d}"));
            let x = e.op(format!("arith.divf {x}, {vn} : {d}"));
            let keep = e.op(format!("arith.cmpi uge, {i}, {j} : index"));
            let keep = e.op(format!("arith.andi {keep}, {has} : i1"));
            let x = e.op(format!("arith.select {keep}, {x}, {z} : {d}"));
            vec![e.op(format!("tensor.insert {x} into {}[{b}, {j}, {i}] : {vt}", cv[0]))]
        })
        .remove(0);
        let w = if_then(e, &has, &bts, &w, |e| {
            let w = for_loop(e, j, &cn, &[(w.clone(), bts.clone())], |e, col, cw| {
                let w = cw[0].clone();
                let proj = sum(e, d, j, &cm, |e, i| {
                    let vi = e.op(format!("tensor.extract {v}[{b}, {j}, {i}] : {vt}"));
                    let x = e.op(format!("tensor.extract {w}[{b}, {i}, {col}] : {bt}"));
                    e.op(format!("arith.mulf {vi}, {x} : {d}"))
                });
                for_loop(e, j, &cm, &[(w, bts.clone())], |e, i, cw| {
                    let vi = e.op(format!("tensor.extract {v}[{b}, {j}, {i}] : {vt}"));
                    let a2 = e.op(format!("arith.mulf {two}, {vi} : {d}"));
                    let x = e.op(format!("tensor.extract {}[{b}, {i}, {col}] : {bt}", cw[0]));
                    let t = e.op(format!("arith.mulf {a2}, {proj} : {d}"));
                    let y = e.op(format!("arith.subf {x}, {t} : {d}"));
                    vec![e.op(format!("tensor.insert {y} into {}[{b}, {i}, {col}] : {bt}", cw[0]))]
                })
            })
            .remove(0);
            let w = e.op(format!("tensor.insert {beta} into {w}[{b}, {j}, {j}] : {bt}"));
            for_loop(e, &j1, &cm, &[(w, bts.clone())], |e, i, cw| vec![e.op(format!("tensor.insert {z} into {}[{b}, {i}, {j}] : {bt}", cw[0]))]).remove(0)
        });
        vec![w, v]
    });
    let (w, v) = (done[0].clone(), done[1].clone());
    // r: w's upper part, c rows.
    let mlast = e.index(m - 1);
    let r = for_loop(e, &c0, &cc, &[(r0.clone(), rts.clone())], |e, i, cr| {
        for_loop(e, &c0, &cn, &[(cr[0].clone(), rts.clone())], |e, jj, cr| {
            let upper = e.op(format!("arith.cmpi uge, {jj}, {i} : index"));
            let ok = e.op(format!("arith.cmpi ult, {i}, {cm} : index"));
            let upper = e.op(format!("arith.andi {upper}, {ok} : i1"));
            let ic = e.op(format!("arith.minui {i}, {mlast} : index"));
            let x = e.op(format!("tensor.extract {w}[{b}, {ic}, {jj}] : {bt}"));
            let x = e.op(format!("arith.select {upper}, {x}, {z} : {d}"));
            vec![e.op(format!("tensor.insert {x} into {}[{b}, {i}, {jj}] : {rt}", cr[0]))]
        })
    })
    .remove(0);
    // q: the identity's first c columns, then the reflectors in reverse on each column.
    let oner = e.scalar(d, "1.0");
    let q = for_loop(e, &c0, &cm, &[(q0.clone(), qts.clone())], |e, i, cq| {
        for_loop(e, &c0, &cc, &[(cq[0].clone(), qts.clone())], |e, col, cq| {
            let diag = e.op(format!("arith.cmpi eq, {i}, {col} : index"));
            let x = e.op(format!("arith.select {diag}, {oner}, {z} : {d}"));
            vec![e.op(format!("tensor.insert {x} into {}[{b}, {i}, {col}] : {qt}", cq[0]))]
        })
    })
    .remove(0);
    let q = for_loop(e, &c0, &ck, &[(q, qts.clone())], |e, t, cq| {
        let last = e.index(k - 1);
        let j = e.op(format!("arith.subi {last}, {t} : index"));
        for_loop(e, &c0, &cc, &[(cq[0].clone(), qts.clone())], |e, col, cq| {
            let q = cq[0].clone();
            let s = sum(e, d, &j, &cm, |e, i| {
                let x = e.op(format!("tensor.extract {q}[{b}, {i}, {col}] : {qt}"));
                let vi = e.op(format!("tensor.extract {v}[{b}, {j}, {i}] : {vt}"));
                e.op(format!("arith.mulf {x}, {vi} : {d}"))
            });
            let s2 = e.op(format!("arith.mulf {two}, {s} : {d}"));
            for_loop(e, &j, &cm, &[(q, qts.clone())], |e, i, cq| {
                let x = e.op(format!("tensor.extract {}[{b}, {i}, {col}] : {qt}", cq[0]));
                let vi = e.op(format!("tensor.extract {v}[{b}, {j}, {i}] : {vt}"));
                let t = e.op(format!("arith.mulf {s2}, {vi} : {d}"));
                let y = e.op(format!("arith.subf {x}, {t} : {d}"));
                vec![e.op(format!("tensor.insert {y} into {}[{b}, {i}, {col}] : {qt}", cq[0]))]
            })
        })
    })
    .remove(0);
    close_batch(e, &fa, &[q, r, w, v]);
    let rts_: Vec<TensorType> = o.results.iter().map(|v| f.ty(*v).clone()).collect();
    vec![from_batch(e, &fa.results[0], &qt, &rts_[0]), from_batch(e, &fa.results[1], &rt, &rts_[1])]
}

/// `scf.if cond` yielding the `carried` (value, type) pairs: `then` computes new values, the
/// else branch yields the old ones.
fn if_many(e: &mut Emitter, cond: &str, carried: &[(String, String)], then: impl FnOnce(&mut Emitter) -> Vec<String>) -> Vec<String> {
    let r = e.fresh();
    let tys: Vec<&str> = carried.iter().map(|(_, t)| t.as_str()).collect();
    let olds: Vec<&str> = carried.iter().map(|(v, _)| v.as_str()).collect();
    e.raw_line(format!("{r}:{} = scf.if {cond} -> ({}) {{", carried.len(), tys.join(", ")));
    e.depth += 1;
    let ys = then(e);
    e.line(format!("scf.yield {} : {}", ys.join(", "), tys.join(", ")));
    e.depth -= 1;
    e.raw_line("} else {");
    e.depth += 1;
    e.line(format!("scf.yield {} : {}", olds.join(", "), tys.join(", ")));
    e.depth -= 1;
    e.raw_line("}");
    (0..carried.len()).map(|k| format!("{r}#{k}")).collect()
}

/// Rows `p` and `q` of `w` (batch `b`, rows of `len`; with `cols`, columns) rotated in
/// their plane: `(x, y) -> (c x - s y, s x + c y)` element by element.
#[allow(clippy::too_many_arguments)]
fn rotate(e: &mut Emitter, w: &str, t: &TensorType, b: &str, [p, q]: [&str; 2], [c, sn]: [&str; 2], len: &str, cols: bool) -> String {
    let (d, ts) = (t.dtype, t.to_string());
    let c0 = e.index(0);
    let at = |r: &str, k: &str| if cols { format!("{b}, {k}, {r}") } else { format!("{b}, {r}, {k}") };
    for_loop(e, &c0, len, &[(w.to_string(), ts)], |e, k, cw| {
        let x = e.op(format!("tensor.extract {}[{}] : {t}", cw[0], at(p, k)));
        let y = e.op(format!("tensor.extract {}[{}] : {t}", cw[0], at(q, k)));
        let (cx, sy, sx, cy) = (e.op(format!("arith.mulf {c}, {x} : {d}")), e.op(format!("arith.mulf {sn}, {y} : {d}")), e.op(format!("arith.mulf {sn}, {x} : {d}")), e.op(format!("arith.mulf {c}, {y} : {d}")));
        let nx = e.op(format!("arith.subf {cx}, {sy} : {d}"));
        let ny = e.op(format!("arith.addf {sx}, {cy} : {d}"));
        let w1 = e.op(format!("tensor.insert {nx} into {}[{}] : {t}", cw[0], at(p, k)));
        vec![e.op(format!("tensor.insert {ny} into {w1}[{}] : {t}", at(q, k)))]
    })
    .remove(0)
}

/// The Jacobi rotation (c, s) that zeroes the off-diagonal `x` of the 2 x 2 symmetric
/// problem whose diagonal difference is `hi - lo` (eigh's `s[q][q] - s[p][p]` over `s[p][q]`;
/// svd's `|w_q|^2 - |w_p|^2` over `w_p . w_q`), as the CPU kernels compute it: theta =
/// (hi - lo) / 2x, t = sign(theta) / (|theta| + sqrt(theta^2 + 1)), c = 1 / sqrt(t^2 + 1),
/// s = t c.
fn jacobi(e: &mut Emitter, d: DType, [hi, lo]: [&str; 2], x: &str) -> (String, String) {
    let (z, one, two) = (e.scalar(d, "0.0"), e.scalar(d, "1.0"), e.scalar(d, "2.0"));
    let diff = e.op(format!("arith.subf {hi}, {lo} : {d}"));
    let den = e.op(format!("arith.mulf {two}, {x} : {d}"));
    let theta = e.op(format!("arith.divf {diff}, {den} : {d}"));
    let th2 = e.op(format!("arith.mulf {theta}, {theta} : {d}"));
    let th2 = e.op(format!("arith.addf {th2}, {one} : {d}"));
    let rt = e.op(format!("math.sqrt {th2} : {d}"));
    let tabs = e.op(format!("math.absf {theta} : {d}"));
    let den2 = e.op(format!("arith.addf {tabs}, {rt} : {d}"));
    let r = e.op(format!("arith.divf {one}, {den2} : {d}"));
    let nr = e.op(format!("arith.negf {r} : {d}"));
    let pos = e.op(format!("arith.cmpf oge, {theta}, {z} : {d}"));
    let t = e.op(format!("arith.select {pos}, {r}, {nr} : {d}"));
    let t2 = e.op(format!("arith.mulf {t}, {t} : {d}"));
    let t2 = e.op(format!("arith.addf {t2}, {one} : {d}"));
    let sq = e.op(format!("math.sqrt {t2} : {d}"));
    let c = e.op(format!("arith.divf {one}, {sq} : {d}"));
    let sn = e.op(format!("arith.mulf {t}, {c} : {d}"));
    (c, sn)
}

/// `eigh` (the CPU kernel's cyclic Jacobi, step for step): the symmetric matrix from the
/// `lower` (else upper) triangle; sweeps over the pairs p < q rotate away each entry not
/// already negligible against its diagonal (or the whole matrix), at most 100 sweeps, until
/// one rotates nothing; eigenvalues ascending (ties in order) with their vectors as columns.
/// The working matrix and the rotations' product live in two scratch results.
fn eigh(e: &mut Emitter, f: &Func, o: &Op, lower: bool) -> Vec<String> {
    let at_ = f.ty(o.operands[0]).clone();
    let (a, bt) = as_batch(e, &e.name(o.operands[0]), &at_);
    let (d, bsz, n) = (bt.dtype, bt.shape[0], bt.shape[1]);
    let wt = TensorType::new(d, [bsz, n]);
    let (vi, wi, si, ti) = (scratch(e, &bt), scratch(e, &wt), scratch(e, &bt), scratch(e, &bt));
    let fa = open_forall(e, bsz, &[(vi, bt.clone()), (wi, wt.clone()), (si, bt.clone()), (ti, bt.clone())]);
    let (b, v0, w0, s0, t0) = (fa.iv.clone(), fa.outs[0].clone(), fa.outs[1].clone(), fa.outs[2].clone(), fa.outs[3].clone());
    let (c0, cn) = (e.index(0), e.index(n));
    let one = e.index(1);
    let (bts, wts) = (bt.to_string(), wt.to_string());
    let (z, onef) = (e.scalar(d, "0.0"), e.scalar(d, "1.0"));
    let eps = e.scalar(d, if d == DType::F32 { "1.1920928955078125e-7" } else { "2.220446049250313e-16" });
    // s: the symmetric matrix; t (vᵀ): the identity.
    let st = for_loop(e, &c0, &cn, &[(s0.clone(), bts.clone()), (t0.clone(), bts.clone())], |e, i, c| {
        for_loop(e, &c0, &cn, &[(c[0].clone(), bts.clone()), (c[1].clone(), bts.clone())], |e, j, c| {
            // s[i][j] from a[i][j] when (i, j) lies in the read triangle, else from a[j][i].
            let direct = e.op(format!("arith.cmpi {}, {i}, {j} : index", if lower { "uge" } else { "ule" }));
            let (r, cc) = (e.op(format!("arith.select {direct}, {i}, {j} : index")), e.op(format!("arith.select {direct}, {j}, {i} : index")));
            let x = e.op(format!("tensor.extract {a}[{b}, {r}, {cc}] : {bt}"));
            let s1 = e.op(format!("tensor.insert {x} into {}[{b}, {i}, {j}] : {bt}", c[0]));
            let diag = e.op(format!("arith.cmpi eq, {i}, {j} : index"));
            let id = e.op(format!("arith.select {diag}, {onef}, {z} : {d}"));
            let t1 = e.op(format!("tensor.insert {id} into {}[{b}, {i}, {j}] : {bt}", c[1]));
            vec![s1, t1]
        })
    });
    let (s, t) = (st[0].clone(), st[1].clone());
    let total = for_loop(e, &c0, &cn, &[(z.clone(), d.to_string())], |e, i, acc| {
        let row = sum(e, d, &c0, &cn, |e, j| {
            let x = e.op(format!("tensor.extract {s}[{b}, {i}, {j}] : {bt}"));
            e.op(format!("arith.mulf {x}, {x} : {d}"))
        });
        vec![e.op(format!("arith.addf {}, {row} : {d}", acc[0]))]
    })
    .remove(0);
    let eps2 = e.op(format!("arith.mulf {eps}, {eps} : {d}"));
    let tiny = e.op(format!("arith.mulf {eps2}, {total} : {d}"));
    let yes = e.scalar(DType::I1, "true");
    let no = e.scalar(DType::I1, "false");
    let sweeps = e.index(100);
    let done = for_loop(e, &c0, &sweeps, &[(s, bts.clone()), (t, bts.clone()), (yes, "i1".into())], |e, _, c| {
        let (s, t, go) = (c[0].clone(), c[1].clone(), c[2].clone());
        if_many(e, &go, &[(s.clone(), bts.clone()), (t.clone(), bts.clone()), (go.clone(), "i1".into())], |e| {
            let r = for_loop(e, &c0, &cn, &[(s, bts.clone()), (t, bts.clone()), (no.clone(), "i1".into())], |e, p, c| {
                let p1 = e.op(format!("arith.addi {p}, {one} : index"));
                for_loop(e, &p1, &cn, &[(c[0].clone(), bts.clone()), (c[1].clone(), bts.clone()), (c[2].clone(), "i1".into())], |e, q, c| {
                    let (s, t, rot) = (c[0].clone(), c[1].clone(), c[2].clone());
                    let apq = e.op(format!("tensor.extract {s}[{b}, {p}, {q}] : {bt}"));
                    let spp = e.op(format!("tensor.extract {s}[{b}, {p}, {p}] : {bt}"));
                    let sqq = e.op(format!("tensor.extract {s}[{b}, {q}, {q}] : {bt}"));
                    let prod = e.op(format!("arith.mulf {spp}, {sqq} : {d}"));
                    let prod = e.op(format!("math.absf {prod} : {d}"));
                    let scale = e.op(format!("math.sqrt {prod} : {d}"));
                    let aabs = e.op(format!("math.absf {apq} : {d}"));
                    let lim = e.op(format!("arith.mulf {eps}, {scale} : {d}"));
                    let big = e.op(format!("arith.cmpf ogt, {aabs}, {lim} : {d}"));
                    let asq = e.op(format!("arith.mulf {apq}, {apq} : {d}"));
                    let big2 = e.op(format!("arith.cmpf ogt, {asq}, {tiny} : {d}"));
                    let act = e.op(format!("arith.andi {big}, {big2} : i1"));
                    if_many(e, &act, &[(s.clone(), bts.clone()), (t.clone(), bts.clone()), (rot.clone(), "i1".into())], |e| {
                        let (cs, sn) = jacobi(e, d, [&sqq, &spp], &apq);
                        // Columns p and q, then rows p and q, of s; rows of vᵀ.
                        let s1 = rotate(e, &s, &bt, &b, [p, q], [&cs, &sn], &cn, true);
                        let s2 = rotate(e, &s1, &bt, &b, [p, q], [&cs, &sn], &cn, false);
                        let t2 = rotate(e, &t, &bt, &b, [p, q], [&cs, &sn], &cn, false);
                        let yes = e.scalar(DType::I1, "true");
                        vec![s2, t2, yes]
                    })
                })
            });
            r
        })
    });
    let (s, t) = (done[0].clone(), done[1].clone());
    // Place of each eigenvalue (ascending, ties in order); its vector into that column.
    let vw = for_loop(e, &c0, &cn, &[(v0.clone(), bts.clone()), (w0.clone(), wts.clone())], |e, i, c| {
        let di = e.op(format!("tensor.extract {s}[{b}, {i}, {i}] : {bt}"));
        let pl = stable_place(e, d, &cn, i, false, |e, j| e.op(format!("tensor.extract {s}[{b}, {j}, {j}] : {bt}")));
        let w = e.op(format!("tensor.insert {di} into {}[{b}, {pl}] : {wt}", c[1]));
        let v = for_loop(e, &c0, &cn, &[(c[0].clone(), bts.clone())], |e, r, cv| {
            let x = e.op(format!("tensor.extract {t}[{b}, {i}, {r}] : {bt}"));
            vec![e.op(format!("tensor.insert {x} into {}[{b}, {r}, {pl}] : {bt}", cv[0]))]
        })
        .remove(0);
        vec![v, w]
    });
    close_batch(e, &fa, &[vw[0].clone(), vw[1].clone(), s, t]);
    let rts_: Vec<TensorType> = o.results.iter().map(|v| f.ty(*v).clone()).collect();
    vec![from_batch(e, &fa.results[0], &bt, &rts_[0]), vec_from_batch(e, &fa.results[1], &wt, &rts_[1])]
}

/// `Σ_k x[b, p, k] y[b, q, k]` over `k < len` (rows of `t`), in order.
fn row_dot(e: &mut Emitter, x: &str, y: &str, t: &TensorType, b: &str, [p, q]: [&str; 2], len: &str) -> String {
    let d = t.dtype;
    let c0 = e.index(0);
    sum(e, d, &c0, len, |e, k| {
        let a = e.op(format!("tensor.extract {x}[{b}, {p}, {k}] : {t}"));
        let c = e.op(format!("tensor.extract {y}[{b}, {q}, {k}] : {t}"));
        e.op(format!("arith.mulf {a}, {c} : {d}"))
    })
}

/// `svd` (the CPU kernel's one-sided Jacobi step for step): on the tall problem a' (a, or
/// aᵀ when m < n, whose factors are then swapped and transposed), sweeps over the column
/// pairs rotate until they are orthogonal (at most 100 sweeps); singular values descending
/// (ties in order), u's columns the normalised columns (those of negligible norm, and the
/// extra ones of full matrices, completed from the standard basis by Gram-Schmidt twice, as
/// the CPU's `complete`). Working rows, rotations, u's rows, their flags and a candidate
/// vector live in scratch results.
fn svd(e: &mut Emitter, f: &Func, o: &Op, full: bool) -> Vec<String> {
    let at_ = f.ty(o.operands[0]).clone();
    let (a, bt) = as_batch(e, &e.name(o.operands[0]), &at_);
    let (d, bsz, m, n) = (bt.dtype, bt.shape[0], bt.shape[1], bt.shape[2]);
    let tall = m >= n;
    let (mm, nn) = (m.max(n), m.min(n));
    let cu = if full { mm } else { nn };
    let k = nn;
    let (cu_out, rv_out) = if full { (m, n) } else { (k, k) };
    let t3 = |r: i64, c: i64| TensorType::new(d, [bsz, r, c]);
    let (wtt, ztt, utt) = (t3(nn, mm), t3(nn, nn), t3(cu, mm));
    let (mist, nrmt, xt) = (TensorType::new(DType::I1, [bsz, cu]), TensorType::new(d, [bsz, nn]), TensorType::new(d, [bsz, mm]));
    let (uo, so, vo) = (t3(m, cu_out), TensorType::new(d, [bsz, k]), t3(rv_out, n));
    let ts: Vec<TensorType> = vec![uo.clone(), so.clone(), vo.clone(), wtt.clone(), ztt.clone(), utt.clone(), mist.clone(), nrmt.clone(), xt.clone()];
    let inits: Vec<(String, TensorType)> = ts.iter().map(|t| (scratch(e, t), t.clone())).collect();
    let fa = open_forall(e, bsz, &inits);
    let (b, outs) = (fa.iv.clone(), fa.outs.clone());
    let (c0, one) = (e.index(0), e.index(1));
    let (cmm, cnn, ccu) = (e.index(mm), e.index(nn), e.index(cu));
    let (z, onef) = (e.scalar(d, "0.0"), e.scalar(d, "1.0"));
    let eps = e.scalar(d, if d == DType::F32 { "1.1920928955078125e-7" } else { "2.220446049250313e-16" });
    let (wts, zts, uts, miss_s, nrms, xts) = (wtt.to_string(), ztt.to_string(), utt.to_string(), mist.to_string(), nrmt.to_string(), xt.to_string());
    // wt[j][i] = a'[i][j]; zt = I.
    let wz = for_loop(e, &c0, &cnn, &[(outs[3].clone(), wts.clone()), (outs[4].clone(), zts.clone())], |e, j, c| {
        let w = for_loop(e, &c0, &cmm, &[(c[0].clone(), wts.clone())], |e, i, cw| {
            let x = if tall { e.op(format!("tensor.extract {a}[{b}, {i}, {j}] : {bt}")) } else { e.op(format!("tensor.extract {a}[{b}, {j}, {i}] : {bt}")) };
            vec![e.op(format!("tensor.insert {x} into {}[{b}, {j}, {i}] : {wtt}", cw[0]))]
        })
        .remove(0);
        let zz = for_loop(e, &c0, &cnn, &[(c[1].clone(), zts.clone())], |e, i, cz| {
            let diag = e.op(format!("arith.cmpi eq, {i}, {j} : index"));
            let x = e.op(format!("arith.select {diag}, {onef}, {z} : {d}"));
            vec![e.op(format!("tensor.insert {x} into {}[{b}, {j}, {i}] : {ztt}", cz[0]))]
        })
        .remove(0);
        vec![w, zz]
    });
    let yes = e.scalar(DType::I1, "true");
    let no = e.scalar(DType::I1, "false");
    let sweeps = e.index(100);
    let done = for_loop(e, &c0, &sweeps, &[(wz[0].clone(), wts.clone()), (wz[1].clone(), zts.clone()), (yes, "i1".into())], |e, _, c| {
        let (w, zm, go) = (c[0].clone(), c[1].clone(), c[2].clone());
        if_many(e, &go, &[(w.clone(), wts.clone()), (zm.clone(), zts.clone()), (go.clone(), "i1".into())], |e| {
            for_loop(e, &c0, &cnn, &[(w, wts.clone()), (zm, zts.clone()), (no.clone(), "i1".into())], |e, p, c| {
                let p1 = e.op(format!("arith.addi {p}, {one} : index"));
                for_loop(e, &p1, &cnn, &[(c[0].clone(), wts.clone()), (c[1].clone(), zts.clone()), (c[2].clone(), "i1".into())], |e, q, c| {
                    let (w, zm, rot) = (c[0].clone(), c[1].clone(), c[2].clone());
                    let alpha = row_dot(e, &w, &w, &wtt, &b, [p, p], &cmm);
                    let beta = row_dot(e, &w, &w, &wtt, &b, [q, q], &cmm);
                    let gamma = row_dot(e, &w, &w, &wtt, &b, [p, q], &cmm);
                    let ab = e.op(format!("arith.mulf {alpha}, {beta} : {d}"));
                    let sab = e.op(format!("math.sqrt {ab} : {d}"));
                    let lim = e.op(format!("arith.mulf {eps}, {sab} : {d}"));
                    let g = e.op(format!("math.absf {gamma} : {d}"));
                    let big = e.op(format!("arith.cmpf ogt, {g}, {lim} : {d}"));
                    let nz = e.op(format!("arith.cmpf une, {gamma}, {z} : {d}"));
                    let act = e.op(format!("arith.andi {big}, {nz} : i1"));
                    if_many(e, &act, &[(w.clone(), wts.clone()), (zm.clone(), zts.clone()), (rot.clone(), "i1".into())], |e| {
                        let (cs, sn) = jacobi(e, d, [&beta, &alpha], &gamma);
                        let w2 = rotate(e, &w, &wtt, &b, [p, q], [&cs, &sn], &cmm, false);
                        let z3 = rotate(e, &zm, &ztt, &b, [p, q], [&cs, &sn], &cnn, false);
                        let yes = e.scalar(DType::I1, "true");
                        vec![w2, z3, yes]
                    })
                })
            })
        })
    });
    let (w, zm) = (done[0].clone(), done[1].clone());
    // Column norms and their maximum.
    let nrm = for_loop(e, &c0, &cnn, &[(outs[7].clone(), nrms.clone())], |e, j, c| {
        let sq = row_dot(e, &w, &w, &wtt, &b, [j, j], &cmm);
        let x = e.op(format!("math.sqrt {sq} : {d}"));
        vec![e.op(format!("tensor.insert {x} into {}[{b}, {j}] : {nrmt}", c[0]))]
    })
    .remove(0);
    let smax = for_loop(e, &c0, &cnn, &[(z.clone(), d.to_string())], |e, j, acc| {
        let x = e.op(format!("tensor.extract {nrm}[{b}, {j}] : {nrmt}"));
        let gt = e.op(format!("arith.cmpf ogt, {x}, {} : {d}", acc[0]));
        vec![e.op(format!("arith.select {gt}, {x}, {} : {d}", acc[0]))]
    })
    .remove(0);
    let floor = e.op(format!("arith.mulf {smax}, {eps} : {d}"));
    // ut zero and every row missing; then each column o at its place (descending norms).
    let um = for_loop(e, &c0, &ccu, &[(outs[5].clone(), uts.clone()), (outs[6].clone(), miss_s.clone())], |e, j, c| {
        let u = for_loop(e, &c0, &cmm, &[(c[0].clone(), uts.clone())], |e, i, cu_| vec![e.op(format!("tensor.insert {z} into {}[{b}, {j}, {i}] : {utt}", cu_[0]))]).remove(0);
        let yes = e.scalar(DType::I1, "true");
        let mi = e.op(format!("tensor.insert {yes} into {}[{b}, {j}] : {mist}", c[1]));
        vec![u, mi]
    });
    let placed = for_loop(e, &c0, &cnn, &[(um[0].clone(), uts.clone()), (um[1].clone(), miss_s.clone()), (outs[1].clone(), so.to_string()), (outs[2].clone(), vo.to_string())], |e, o_, c| {
        let no_ = e.op(format!("tensor.extract {nrm}[{b}, {o_}] : {nrmt}"));
        let j = stable_place(e, d, &cnn, o_, true, |e, j| e.op(format!("tensor.extract {nrm}[{b}, {j}] : {nrmt}")));
        let sv = e.op(format!("tensor.insert {no_} into {}[{b}, {j}] : {so}", c[2]));
        let ok1 = e.op(format!("arith.cmpf ogt, {no_}, {floor} : {d}"));
        let ok2 = e.op(format!("arith.cmpf ogt, {no_}, {z} : {d}"));
        let ok = e.op(format!("arith.andi {ok1}, {ok2} : i1"));
        let um = if_many(e, &ok, &[(c[0].clone(), uts.clone()), (c[1].clone(), miss_s.clone())], |e| {
            let u = for_loop(e, &c0, &cmm, &[(c[0].clone(), uts.clone())], |e, i, cu_| {
                let x = e.op(format!("tensor.extract {w}[{b}, {o_}, {i}] : {wtt}"));
                let x = e.op(format!("arith.divf {x}, {no_} : {d}"));
                vec![e.op(format!("tensor.insert {x} into {}[{b}, {j}, {i}] : {utt}", cu_[0]))]
            })
            .remove(0);
            let nof = e.scalar(DType::I1, "false");
            vec![u, e.op(format!("tensor.insert {nof} into {}[{b}, {j}] : {mist}", c[1]))]
        });
        // v'ᵀ row j = zt row o: into vt (tall) or, transposed, into u (wide) at the end; kept
        // in zt's place here through the output written directly.
        let vv = for_loop(e, &c0, &cnn, &[(c[3].clone(), vo.to_string())], |e, i, cv| {
            let x = e.op(format!("tensor.extract {zm}[{b}, {o_}, {i}] : {ztt}"));
            // Tall: vt[j][i]; wide: u[i][j] is v'ᵀ's transpose — written below from zt, so here
            // only the tall case writes.
            if tall {
                vec![e.op(format!("tensor.insert {x} into {}[{b}, {j}, {i}] : {vo}", cv[0]))]
            } else {
                vec![cv[0].clone()]
            }
        })
        .remove(0);
        vec![um[0].clone(), um[1].clone(), sv, vv]
    });
    let (ut, miss, sres, vres) = (placed[0].clone(), placed[1].clone(), placed[2].clone(), placed[3].clone());
    // complete: rows marked missing from the standard basis, candidates in order.
    let thr = e.scalar(d, "0.47140452079103168");
    let completed = for_loop(e, &c0, &ccu, &[(ut, uts.clone()), (c0.clone(), "index".into()), (outs[8].clone(), xts.clone())], |e, j, c| {
        let mj = e.op(format!("tensor.extract {miss}[{b}, {j}] : {mist}"));
        if_many(e, &mj, &[(c[0].clone(), uts.clone()), (c[1].clone(), "index".into()), (c[2].clone(), xts.clone())], |e| {
            let nof = e.scalar(DType::I1, "false");
            let r = for_loop(e, &c0, &cmm, &[(c[0].clone(), uts.clone()), (c[1].clone(), "index".into()), (c[2].clone(), xts.clone()), (nof, "i1".into())], |e, cand, c| {
                let (u, next, x, found) = (c[0].clone(), c[1].clone(), c[2].clone(), c[3].clone());
                let tru = e.scalar(DType::I1, "true");
                let nf = e.op(format!("arith.xori {found}, {tru} : i1"));
                let due = e.op(format!("arith.cmpi uge, {cand}, {next} : index"));
                let tr = e.op(format!("arith.andi {nf}, {due} : i1"));
                let r = if_many(e, &tr, &[(u.clone(), uts.clone()), (next.clone(), "index".into()), (x.clone(), xts.clone()), (found.clone(), "i1".into())], |e| {
                    // x = e_cand, orthogonalised twice against the rows present.
                    let x = for_loop(e, &c0, &cmm, &[(x.clone(), xts.clone())], |e, i, cx| {
                        let hit = e.op(format!("arith.cmpi eq, {i}, {cand} : index"));
                        let v = e.op(format!("arith.select {hit}, {onef}, {z} : {d}"));
                        vec![e.op(format!("tensor.insert {v} into {}[{b}, {i}] : {xt}", cx[0]))]
                    })
                    .remove(0);
                    let twice = e.index(2);
                    let x = for_loop(e, &c0, &twice, &[(x, xts.clone())], |e, _, cx| {
                        for_loop(e, &c0, &ccu, &[(cx[0].clone(), xts.clone())], |e, kk, cx| {
                            let x = cx[0].clone();
                            let mk = e.op(format!("tensor.extract {miss}[{b}, {kk}] : {mist}"));
                            let tru = e.scalar(DType::I1, "true");
                            let present = e.op(format!("arith.xori {mk}, {tru} : i1"));
                            let before = e.op(format!("arith.cmpi ult, {kk}, {j} : index"));
                            let use_ = e.op(format!("arith.ori {present}, {before} : i1"));
                            let other = e.op(format!("arith.cmpi ne, {kk}, {j} : index"));
                            let use_ = e.op(format!("arith.andi {use_}, {other} : i1"));
                            let x2 = if_then(e, &use_, &xts, &x, |e| {
                                let dd = sum(e, d, &c0, &cmm, |e, i| {
                                    let xi = e.op(format!("tensor.extract {x}[{b}, {i}] : {xt}"));
                                    let ui = e.op(format!("tensor.extract {u}[{b}, {kk}, {i}] : {utt}"));
                                    e.op(format!("arith.mulf {xi}, {ui} : {d}"))
                                });
                                for_loop(e, &c0, &cmm, &[(x.clone(), xts.clone())], |e, i, cx| {
                                    let xi = e.op(format!("tensor.extract {}[{b}, {i}] : {xt}", cx[0]));
                                    let ui = e.op(format!("tensor.extract {u}[{b}, {kk}, {i}] : {utt}"));
                                    let t = e.op(format!("arith.mulf {dd}, {ui} : {d}"));
                                    let y = e.op(format!("arith.subf {xi}, {t} : {d}"));
                                    vec![e.op(format!("tensor.insert {y} into {}[{b}, {i}] : {xt}", cx[0]))]
                                })
                                .remove(0)
                            });
                            vec![x2]
                        })
                    })
                    .remove(0);
                    let sq = sum(e, d, &c0, &cmm, |e, i| {
                        let xi = e.op(format!("tensor.extract {x}[{b}, {i}] : {xt}"));
                        e.op(format!("arith.mulf {xi}, {xi} : {d}"))
                    });
                    let nrm = e.op(format!("math.sqrt {sq} : {d}"));
                    let good = e.op(format!("arith.cmpf ogt, {nrm}, {thr} : {d}"));
                    let u2 = if_then(e, &good, &uts, &u, |e| {
                        for_loop(e, &c0, &cmm, &[(u.clone(), uts.clone())], |e, i, cu_| {
                            let xi = e.op(format!("tensor.extract {x}[{b}, {i}] : {xt}"));
                            let v = e.op(format!("arith.divf {xi}, {nrm} : {d}"));
                            vec![e.op(format!("tensor.insert {v} into {}[{b}, {j}, {i}] : {utt}", cu_[0]))]
                        })
                        .remove(0)
                    });
                    let next2 = e.op(format!("arith.addi {cand}, {one} : index"));
                    vec![u2, next2, x, good]
                });
                r
            });
            vec![r[0].clone(), r[1].clone(), r[2].clone()]
        })
    });
    let ut = completed[0].clone();
    // u (and for the wide problem vt) from ut and zt.
    let (uo_s, vo_s) = (uo.to_string(), vo.to_string());
    let (ures, vres) = if tall {
        let u = for_loop(e, &c0, &cmm, &[(outs[0].clone(), uo_s.clone())], |e, i, c| {
            for_loop(e, &c0, &ccu, &[(c[0].clone(), uo_s.clone())], |e, jj, c| {
                let x = e.op(format!("tensor.extract {ut}[{b}, {jj}, {i}] : {utt}"));
                vec![e.op(format!("tensor.insert {x} into {}[{b}, {i}, {jj}] : {uo}", c[0]))]
            })
        })
        .remove(0);
        (u, vres)
    } else {
        // a = (a')ᵀ: u = v' (m x rv' = zt rows placed as columns), vt = u'ᵀ (cu x n = ut rows).
        let vt = for_loop(e, &c0, &ccu, &[(vres, vo_s.clone())], |e, jj, c| {
            for_loop(e, &c0, &cmm, &[(c[0].clone(), vo_s.clone())], |e, i, c| {
                let x = e.op(format!("tensor.extract {ut}[{b}, {jj}, {i}] : {utt}"));
                vec![e.op(format!("tensor.insert {x} into {}[{b}, {jj}, {i}] : {vo}", c[0]))]
            })
        })
        .remove(0);
        // u[i][jp] = zt[o][i] for the column o placed at jp (the same places as s).
        let u = for_loop(e, &c0, &cnn, &[(outs[0].clone(), uo_s.clone())], |e, o_, c| {
            let jp = stable_place(e, d, &cnn, o_, true, |e, j| e.op(format!("tensor.extract {nrm}[{b}, {j}] : {nrmt}")));
            for_loop(e, &c0, &cnn, &[(c[0].clone(), uo_s.clone())], |e, i, c| {
                let x = e.op(format!("tensor.extract {zm}[{b}, {o_}, {i}] : {ztt}"));
                vec![e.op(format!("tensor.insert {x} into {}[{b}, {i}, {jp}] : {uo}", c[0]))]
            })
        })
        .remove(0);
        (u, vt)
    };
    let finals = [ures, sres, vres, w, zm, completed[0].clone(), miss, nrm, completed[2].clone()];
    close_batch(e, &fa, &finals);
    let rts_: Vec<TensorType> = o.results.iter().map(|v| f.ty(*v).clone()).collect();
    let r = &fa.results;
    vec![from_batch(e, &r[0], &uo, &rts_[0]), vec_from_batch(e, &r[1], &so, &rts_[1]), from_batch(e, &r[2], &vo, &rts_[2])]
}

/// The loop form of `op`'s results (exhaustive over the family).
pub fn lower(e: &mut Emitter, f: &Func, o: &Op, op: &LinalgOp) -> Vec<String> {
    match op {
        LinalgOp::Cholesky { lower } => vec![cholesky(e, f, o, *lower)],
        LinalgOp::TriangularSolve { left_side, lower, transpose_a, unit_diagonal } => vec![triangular_solve(e, f, o, *left_side, *lower, *transpose_a, *unit_diagonal)],
        LinalgOp::Lu {} => lu(e, f, o),
        LinalgOp::Qr { full_matrices } => qr(e, f, o, *full_matrices),
        LinalgOp::Eigh { lower } => eigh(e, f, o, *lower),
        LinalgOp::Svd { full_matrices } => svd(e, f, o, *full_matrices),
    }
}

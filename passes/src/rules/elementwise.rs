//! Derivative rules of elementwise ops. Non-linear ops are given by their partial
//! derivatives (`partials`): JVP = sum of tangent * partial, VJP = cotangent * partial.
//! Linear ops (neg, add, sub, select, float converts) have direct rules. Conventions:
//! max/min split ties evenly (as JAX); pow follows reference §3.2: the base partial is 0
//! where x == 0 and y < 1 and keeps its finite limit for y >= 1; the exponent partial is 0
//! for x <= 0; singular points are masked out of the inner power so that higher
//! derivatives stay finite.
use quabla_dialect::{BinaryOp, CmpDir, ElementwiseOp, Op, OpKind, UnaryOp, Value};

use super::{differentiable, RuleError, Tangents, B};

const TWO_OVER_SQRT_PI: f64 = std::f64::consts::FRAC_2_SQRT_PI;

/// Weight of `x` in a max/min that produced `z`, with `y` the other operand.
fn balanced(b: &mut B, x: Value, z: Value, y: Value) -> Value {
    let xe = b.cmp(CmpDir::Eq, x, z);
    let ye = b.cmp(CmpDir::Eq, y, z);
    let half = b.like(x, 0.5);
    let one = b.like(x, 1.0);
    let zero = b.like(x, 0.0);
    let w = b.select(ye, half, one);
    b.select(xe, w, zero)
}

/// Trigamma psi'(x) from elementwise ops (so that it differentiates again): reflection
/// `pi^2 / sin^2(pi x) - psi'(1 - x)` below 1/2, `psi'(w) = psi'(w + 8) + sum_k 1/(w + k)^2`
/// below 8.5 and the asymptotic series `1/z + 1/(2z^2) + sum B_2k / z^(2k+1)` (seven terms).
fn trigamma(b: &mut B, x: Value) -> Value {
    const BERN: [f64; 7] = [1.0 / 6.0, -1.0 / 30.0, 1.0 / 42.0, -1.0 / 30.0, 5.0 / 66.0, -691.0 / 2730.0, 7.0 / 6.0];
    let one = b.like(x, 1.0);
    let half = b.like(x, 0.5);
    let lt = b.cmp(CmpDir::Lt, x, half);
    let omx = b.sub(one, x);
    let w = b.select(lt, omx, x);
    let lim = b.like(x, 8.5);
    let small = b.cmp(CmpDir::Lt, w, lim);
    let ws = b.select(small, w, lim);
    let mut acc = b.like(x, 0.0);
    for k in 0..8 {
        let kk = b.like(x, k as f64);
        let t = b.add(ws, kk);
        let t2 = b.mul(t, t);
        let r = b.div(one, t2);
        acc = b.add(acc, r);
    }
    let eight = b.like(x, 8.0);
    let w8 = b.add(w, eight);
    let z = b.select(small, w8, w);
    let zero = b.like(x, 0.0);
    let corr = b.select(small, acc, zero);
    let zz = b.mul(z, z);
    let u = b.div(one, zz);
    let mut h = b.like(x, 0.0);
    for &c in BERN.iter().rev() {
        let m = b.mul(h, u);
        let k = b.like(x, c);
        h = b.add(m, k);
    }
    let uz = b.div(u, z);
    let tail = b.mul(uz, h);
    let iz = b.div(one, z);
    let hu = b.mul(half, u);
    let s1 = b.add(iz, hu);
    let s2 = b.add(s1, tail);
    let pos = b.add(s2, corr);
    let r = b.un(UnaryOp::Round, x);
    let fr = b.sub(x, r);
    let pi = b.like(x, std::f64::consts::PI);
    let px = b.mul(pi, fr);
    let sn = b.un(UnaryOp::Sin, px);
    let sn2 = b.mul(sn, sn);
    let pi2 = b.like(x, std::f64::consts::PI * std::f64::consts::PI);
    // The reflection branch sees 1 where it is not taken, so no inf reaches the derivative.
    let sn2 = b.select(lt, sn2, one);
    let q = b.div(pi2, sn2);
    let refl = b.sub(q, pos);
    b.select(lt, refl, pos)
}

/// Elementwise partial derivatives dy/dx_i of a non-linear op (None = identically zero or
/// not differentiable).
fn partials(b: &mut B, op: &Op) -> Result<Vec<Option<Value>>, RuleError> {
    let x = op.operands[0];
    let y = op.results[0];
    Ok(match &op.kind {
        OpKind::Elementwise(ElementwiseOp::Unary { op: u }) => vec![match u {
            // JAX's convention: +1 where x >= 0 (so at 0 and -0 too), -1 elsewhere (NaN).
            UnaryOp::Abs => {
                let z = b.like(x, 0.0);
                let ge = b.cmp(CmpDir::Ge, x, z);
                let one = b.like(x, 1.0);
                let minus = b.like(x, -1.0);
                Some(b.select(ge, one, minus))
            }
            UnaryOp::Sign | UnaryOp::Floor | UnaryOp::Ceil | UnaryOp::Round | UnaryOp::Not | UnaryOp::IsFinite | UnaryOp::PopulationCount => None,
            UnaryOp::Neg => Some(b.like(x, -1.0)),
            UnaryOp::Exp => Some(y),
            UnaryOp::Exp2 => {
                let ln2 = b.like(x, std::f64::consts::LN_2);
                Some(b.mul(y, ln2))
            }
            UnaryOp::Expm1 => {
                let one = b.like(x, 1.0);
                Some(b.add(y, one))
            }
            UnaryOp::Log => {
                let one = b.like(x, 1.0);
                Some(b.div(one, x))
            }
            UnaryOp::Log1p => {
                let one = b.like(x, 1.0);
                let d = b.add(one, x);
                Some(b.div(one, d))
            }
            UnaryOp::Sin => Some(b.un(UnaryOp::Cos, x)),
            UnaryOp::Cos => {
                let s = b.un(UnaryOp::Sin, x);
                Some(b.neg(s))
            }
            UnaryOp::Tan => {
                let one = b.like(x, 1.0);
                let y2 = b.mul(y, y);
                Some(b.add(one, y2))
            }
            UnaryOp::Tanh => {
                let one = b.like(x, 1.0);
                let y2 = b.mul(y, y);
                Some(b.sub(one, y2))
            }
            UnaryOp::Logistic => {
                let one = b.like(x, 1.0);
                let c = b.sub(one, y);
                Some(b.mul(y, c))
            }
            UnaryOp::Sqrt => {
                let h = b.like(x, 0.5);
                Some(b.div(h, y))
            }
            UnaryOp::Rsqrt => {
                let h = b.like(x, -0.5);
                let q = b.div(y, x);
                Some(b.mul(h, q))
            }
            UnaryOp::Erf => {
                let c = b.like(x, TWO_OVER_SQRT_PI);
                let x2 = b.mul(x, x);
                let n = b.neg(x2);
                let e = b.un(UnaryOp::Exp, n);
                Some(b.mul(c, e))
            }
            UnaryOp::Sinh => Some(b.un(UnaryOp::Cosh, x)),
            UnaryOp::Cosh => Some(b.un(UnaryOp::Sinh, x)),
            UnaryOp::Asin | UnaryOp::Acos => {
                // ±1/sqrt(1 - x^2)
                let one = b.like(x, 1.0);
                let x2 = b.mul(x, x);
                let d = b.sub(one, x2);
                let r = b.un(UnaryOp::Rsqrt, d);
                Some(if *u == UnaryOp::Asin { r } else { b.neg(r) })
            }
            UnaryOp::Atan => {
                let one = b.like(x, 1.0);
                let x2 = b.mul(x, x);
                let d = b.add(one, x2);
                Some(b.div(one, d))
            }
            UnaryOp::Asinh => {
                let one = b.like(x, 1.0);
                let x2 = b.mul(x, x);
                let d = b.add(x2, one);
                Some(b.un(UnaryOp::Rsqrt, d))
            }
            UnaryOp::Acosh => {
                // 1/sqrt((x - 1)(x + 1)), accurate near 1.
                let one = b.like(x, 1.0);
                let xm = b.sub(x, one);
                let xp = b.add(x, one);
                let d = b.mul(xm, xp);
                Some(b.un(UnaryOp::Rsqrt, d))
            }
            UnaryOp::Atanh => {
                let one = b.like(x, 1.0);
                let x2 = b.mul(x, x);
                let d = b.sub(one, x2);
                Some(b.div(one, d))
            }
            UnaryOp::Cbrt => {
                // 1 / (3 y^2)
                let three = b.like(x, 3.0);
                let y2 = b.mul(y, y);
                let d = b.mul(three, y2);
                let one = b.like(x, 1.0);
                Some(b.div(one, d))
            }
            UnaryOp::Erfc => {
                let c = b.like(x, -TWO_OVER_SQRT_PI);
                let x2 = b.mul(x, x);
                let n = b.neg(x2);
                let e = b.un(UnaryOp::Exp, n);
                Some(b.mul(c, e))
            }
            UnaryOp::ErfInv => {
                // sqrt(pi)/2 exp(y^2)
                let c = b.like(x, 1.0 / TWO_OVER_SQRT_PI);
                let y2 = b.mul(y, y);
                let e = b.un(UnaryOp::Exp, y2);
                Some(b.mul(c, e))
            }
            UnaryOp::Lgamma => Some(b.un(UnaryOp::Digamma, x)),
            UnaryOp::Digamma => Some(trigamma(b, x)),
        }],
        OpKind::Elementwise(ElementwiseOp::Binary { op: bo }) => {
            let z = op.operands[1];
            match bo {
                BinaryOp::Add => {
                    let one = b.like(x, 1.0);
                    vec![Some(one), Some(one)]
                }
                BinaryOp::Sub => {
                    let one = b.like(x, 1.0);
                    let m = b.like(x, -1.0);
                    vec![Some(one), Some(m)]
                }
                BinaryOp::Mul => vec![Some(z), Some(x)],
                BinaryOp::Div => {
                    let one = b.like(x, 1.0);
                    let pa = b.div(one, z);
                    let q = b.div(y, z);
                    vec![Some(pa), Some(b.neg(q))]
                }
                BinaryOp::Rem => {
                    let q = b.div(x, z);
                    let s = b.un(UnaryOp::Sign, q);
                    let a = b.un(UnaryOp::Abs, q);
                    let fl = b.un(UnaryOp::Floor, a);
                    let t = b.mul(s, fl);
                    let one = b.like(x, 1.0);
                    vec![Some(one), Some(b.neg(t))]
                }
                BinaryOp::Max | BinaryOp::Min => vec![Some(balanced(b, x, y, z)), Some(balanced(b, z, y, x))],
                BinaryOp::Pow => {
                    let zero = b.like(x, 0.0);
                    let one = b.like(x, 1.0);
                    let x0 = b.cmp(CmpDir::Eq, x, zero);
                    let elt1 = b.cmp(CmpDir::Lt, z, one);
                    let mask = b.bin(BinaryOp::And, x0, elt1);
                    let safe_x = b.select(mask, one, x);
                    let em1 = b.sub(z, one);
                    let p = b.bin(BinaryOp::Pow, safe_x, em1);
                    let d = b.mul(z, p);
                    let pb = b.select(mask, zero, d);
                    let nonpos = b.cmp(CmpDir::Le, x, zero);
                    let safe = b.select(nonpos, one, x);
                    let l = b.un(UnaryOp::Log, safe);
                    let ys = b.bin(BinaryOp::Pow, safe, z);
                    let d2 = b.mul(ys, l);
                    let pe = b.select(nonpos, zero, d2);
                    vec![Some(pb), Some(pe)]
                }
                BinaryOp::Atan2 => {
                    let a2 = b.mul(x, x);
                    let b2 = b.mul(z, z);
                    let d = b.add(a2, b2);
                    let pa = b.div(z, d);
                    let q = b.div(x, d);
                    vec![Some(pa), Some(b.neg(q))]
                }
                BinaryOp::Logaddexp => {
                    // exp(x - out) and exp(z - out), with +inf read as 0 (as JAX), so that
                    // logaddexp(inf, inf) and the like keep finite weights.
                    let inf = b.like(x, f64::INFINITY);
                    let zero = b.like(x, 0.0);
                    let finite = |b: &mut B, v: Value| {
                        let c = b.cmp(CmpDir::Eq, v, inf);
                        b.select(c, zero, v)
                    };
                    let (xf, zf, yf) = (finite(b, x), finite(b, z), finite(b, y));
                    let dx = b.sub(xf, yf);
                    let dz = b.sub(zf, yf);
                    vec![Some(b.un(UnaryOp::Exp, dx)), Some(b.un(UnaryOp::Exp, dz))]
                }
                BinaryOp::And | BinaryOp::Or | BinaryOp::Xor | BinaryOp::ShiftLeft | BinaryOp::ShiftRightLogical | BinaryOp::ShiftRightArithmetic => vec![None, None],
            }
        }
        OpKind::Elementwise(ElementwiseOp::Powi { exponent }) => {
            let n = *exponent;
            if n == 0 {
                vec![None]
            } else {
                let c = b.like(x, n as f64);
                let p = if n == 1 { b.like(x, 1.0) } else { b.op(OpKind::Elementwise(ElementwiseOp::Powi { exponent: n - 1 }), &[x]) };
                vec![Some(b.mul(c, p))]
            }
        }
        other => return Err(RuleError::Internal(format!("no partials for {}", other.name()))),
    })
}

pub fn jvp(b: &mut B, op: &Op, t: &[Option<Value>]) -> Result<Tangents, RuleError> {
    let out_diff = differentiable(b.f.ty(op.results[0]));
    if !out_diff || t.iter().all(Option::is_none) {
        return Ok(vec![None]);
    }
    Ok(vec![match &op.kind {
        OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Neg }) => t[0].map(|t| b.neg(t)),
        OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add }) => b.add_opt(t[0], t[1]),
        OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Sub }) => match (t[0], t[1]) {
            (Some(a), Some(c)) => Some(b.sub(a, c)),
            (a, None) => a,
            (None, Some(c)) => Some(b.neg(c)),
        },
        OpKind::Elementwise(ElementwiseOp::Compare { .. }) => None,
        OpKind::Elementwise(ElementwiseOp::Select {}) => {
            if t[1].is_none() && t[2].is_none() {
                None
            } else {
                let tt = b.or_zero(t[1], op.operands[1]);
                let tf = b.or_zero(t[2], op.operands[2]);
                Some(b.select(op.operands[0], tt, tf))
            }
        }
        OpKind::Elementwise(ElementwiseOp::Convert { to }) => {
            let from = b.f.ty(op.operands[0]).dtype;
            if from.is_float() && to.is_float() {
                t[0].map(|t| b.convert(t, *to))
            } else {
                None
            }
        }
        _ => {
            let ps = partials(b, op)?;
            let mut acc = None;
            for (ti, pi) in t.iter().zip(ps) {
                if let (Some(ti), Some(pi)) = (ti, pi) {
                    let term = b.mul(*ti, pi);
                    acc = b.add_opt(acc, Some(term));
                }
            }
            acc
        }
    }])
}

pub fn vjp(b: &mut B, op: &Op, ct: Value) -> Result<Tangents, RuleError> {
    let n = op.operands.len();
    let diff: Vec<bool> = op.operands.iter().map(|v| differentiable(b.f.ty(*v))).collect();
    let keep = |v: Vec<Option<Value>>| v.into_iter().zip(&diff).map(|(c, d)| if *d { c } else { None }).collect::<Vec<_>>();
    Ok(keep(match &op.kind {
        OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Neg }) => vec![Some(b.neg(ct))],
        OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add }) => vec![Some(ct), Some(ct)],
        OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Sub }) => vec![Some(ct), Some(b.neg(ct))],
        OpKind::Elementwise(ElementwiseOp::Compare { .. }) => vec![None; n],
        OpKind::Elementwise(ElementwiseOp::Select {}) => {
            let z = b.like(ct, 0.0);
            let p = op.operands[0];
            let a = b.select(p, ct, z);
            let c = b.select(p, z, ct);
            vec![None, Some(a), Some(c)]
        }
        OpKind::Elementwise(ElementwiseOp::Convert { .. }) => {
            let from = b.f.ty(op.operands[0]).dtype;
            if from.is_float() {
                vec![Some(b.convert(ct, from))]
            } else {
                vec![None]
            }
        }
        _ => {
            let ps = partials(b, op)?;
            ps.into_iter().map(|p| p.map(|p| b.mul(ct, p))).collect()
        }
    }))
}

/// Batching: unbatched operands are broadcast to the batched shape; the op is applied as is.
pub fn batch(b: &mut B, op: &Op, xs: &[Value], batched: &[bool], size: i64) -> Result<Vec<(Value, bool)>, RuleError> {
    let ys = super::lift_all(b, xs, batched, size);
    Ok(vec![(b.op(op.kind.clone(), &ys), true)])
}

//! Export of elementwise ops (unary, binary, `powi`, `compare`, `select`, `convert`): one
//! StableHLO op per quabla op from the tables below, except where StableHLO's semantics
//! leave a case to the implementation and quabla fixes it:
//!
//! - integer `div`/`rem`: StableHLO leaves x/0 and MIN/-1 to the implementation (and IREE's
//!   CPU code traps on them), so the divisor is replaced by 1 in those lanes and the result
//!   selected: x/0 = -1, x%0 = x, MIN/-1 = MIN, MIN%-1 = 0;
//! - `powi {exponent = n}`: square-and-multiply with `stablehlo.multiply` (the same product
//!   order as the CPU lowering), `1/x^|n|` for negative n on floats, and for negative n on
//!   integers 1 if x == 1, (-1)^n if x == -1, else 0;
//! - `pow` is C's pow. StableHLO's `power` is IEEE pow, and XLA's follows it, but IREE's
//!   computes exp(y * log(x)), which is NaN for every negative base (and for 0^0, 1^NaN,
//!   (-1)^inf). So the export raises |x| to y with `stablehlo.power` (which every backend
//!   gets right) and states the rest: the sign of x for odd integer y, NaN for a finite
//!   negative base with a non-integer y, and 1 for y = ±0, x = 1 and (-1)^±inf;
//! - `max`/`min` on i1 are `or`/`and`; on floats `stablehlo.maximum`/`minimum`, which
//!   propagate NaN as quabla's do;
//! - `erf` is `chlo.erf` (CHLO ships with StableHLO; XLA and IREE both legalize it);
//! - unsigned types (`ui8`, `ui32`) compare UNSIGNED; their div/rem guard only x/0 (all ones)
//!   and x%0 = x; `abs` is the identity and `sign` is x != 0 (StableHLO's abs/sign take
//!   signed operands only); shifts and `popcnt` are StableHLO's own, whose out-of-range
//!   amounts (0, or the sign fill) are quabla's semantics.
//!
//! The others are direct: StableHLO's float compare is IEEE (ordered, except `NE`, which is
//! true on NaN), `sign` keeps ±0 and NaN, `round_nearest_even` rounds half to even, `not`/
//! `and`/`or`/`xor` are logical on i1 and bitwise on integers, and `convert` to i1 is x != 0.
use quabla_dialect::{BinaryOp, CmpDir, DType, ElementwiseOp, Func, Op, TensorType, UnaryOp};

use super::{int_min_text, Emitter, Tv};
use crate::LowerError;

/// The StableHLO (or CHLO) op of a unary quabla op; `None` for `exp2`, written as
/// `exponential(x * ln 2)`.
pub fn unary_name(u: UnaryOp) -> Option<&'static str> {
    Some(match u {
        UnaryOp::Neg => "stablehlo.negate",
        UnaryOp::Abs => "stablehlo.abs",
        UnaryOp::Sign => "stablehlo.sign",
        UnaryOp::Exp => "stablehlo.exponential",
        UnaryOp::Expm1 => "stablehlo.exponential_minus_one",
        UnaryOp::Log => "stablehlo.log",
        UnaryOp::Log1p => "stablehlo.log_plus_one",
        UnaryOp::Sin => "stablehlo.sine",
        UnaryOp::Cos => "stablehlo.cosine",
        UnaryOp::Tan => "stablehlo.tan",
        UnaryOp::Tanh => "stablehlo.tanh",
        UnaryOp::Logistic => "stablehlo.logistic",
        UnaryOp::Sqrt => "stablehlo.sqrt",
        UnaryOp::Rsqrt => "stablehlo.rsqrt",
        UnaryOp::Floor => "stablehlo.floor",
        UnaryOp::Ceil => "stablehlo.ceil",
        UnaryOp::Round => "stablehlo.round_nearest_even",
        UnaryOp::Erf => "chlo.erf",
        UnaryOp::Not => "stablehlo.not",
        UnaryOp::IsFinite => "stablehlo.is_finite",
        UnaryOp::PopulationCount => "stablehlo.popcnt",
        UnaryOp::Sinh => "chlo.sinh",
        UnaryOp::Cosh => "chlo.cosh",
        UnaryOp::Asin => "chlo.asin",
        UnaryOp::Acos => "chlo.acos",
        UnaryOp::Atan => "chlo.atan",
        UnaryOp::Asinh => "chlo.asinh",
        UnaryOp::Acosh => "chlo.acosh",
        UnaryOp::Atanh => "chlo.atanh",
        UnaryOp::Cbrt => "stablehlo.cbrt",
        UnaryOp::Erfc => "chlo.erfc",
        UnaryOp::ErfInv => "chlo.erf_inv",
        UnaryOp::Lgamma => "chlo.lgamma",
        UnaryOp::Digamma => "chlo.digamma",
        UnaryOp::Exp2 => return None,
    })
}

/// The StableHLO op of a binary quabla op on dtype `d`; `None` for integer div/rem and
/// `pow`, which need the sequences of [`int_divrem`] and [`pow`].
pub fn binary_name(b: BinaryOp, d: DType) -> Option<&'static str> {
    let f = d.is_float();
    Some(match b {
        BinaryOp::Add => "stablehlo.add",
        BinaryOp::Sub => "stablehlo.subtract",
        BinaryOp::Mul => "stablehlo.multiply",
        BinaryOp::Div if f => "stablehlo.divide",
        BinaryOp::Rem if f => "stablehlo.remainder",
        BinaryOp::Div | BinaryOp::Rem => return None,
        BinaryOp::Max if d == DType::I1 => "stablehlo.or",
        BinaryOp::Max => "stablehlo.maximum",
        BinaryOp::Min if d == DType::I1 => "stablehlo.and",
        BinaryOp::Min => "stablehlo.minimum",
        BinaryOp::Pow => return None,
        BinaryOp::Atan2 => "stablehlo.atan2",
        BinaryOp::Logaddexp => return None,
        BinaryOp::And => "stablehlo.and",
        BinaryOp::Or => "stablehlo.or",
        BinaryOp::Xor => "stablehlo.xor",
        BinaryOp::ShiftLeft => "stablehlo.shift_left",
        BinaryOp::ShiftRightLogical => "stablehlo.shift_right_logical",
        BinaryOp::ShiftRightArithmetic => "stablehlo.shift_right_arithmetic",
    })
}

/// `#stablehlo<comparison_direction ..>` spelling.
fn direction(dir: CmpDir) -> &'static str {
    match dir {
        CmpDir::Eq => "EQ",
        CmpDir::Ne => "NE",
        CmpDir::Lt => "LT",
        CmpDir::Le => "LE",
        CmpDir::Gt => "GT",
        CmpDir::Ge => "GE",
    }
}

/// `#stablehlo<comparison_type ..>` for operands of dtype `d`: FLOAT (IEEE: ordered except
/// NE), SIGNED, or UNSIGNED for i1 (false < true).
fn compare_type(d: DType) -> &'static str {
    match d {
        DType::F32 | DType::F64 => "FLOAT",
        DType::I1 | DType::U8 | DType::U32 => "UNSIGNED",
        DType::I32 | DType::I64 => "SIGNED",
    }
}

/// `stablehlo.compare` of `a dir b` (an i1 tensor of their shape).
pub fn compare(e: &mut Emitter, dir: CmpDir, a: &Tv, b: &Tv) -> Tv {
    let attrs = [
        ("comparison_direction", format!("#stablehlo<comparison_direction {}>", direction(dir))),
        ("compare_type", format!("#stablehlo<comparison_type {}>", compare_type(a.ty.dtype))),
    ];
    e.op("stablehlo.compare", &[a, b], &attrs, &a.ty.with_dtype(DType::I1))
}

/// `stablehlo.select(p, t, f)`.
pub fn select(e: &mut Emitter, p: &Tv, t: &Tv, f: &Tv) -> Tv {
    e.op("stablehlo.select", &[p, t, f], &[], &t.ty)
}

/// A same-typed binary op `name(a, b)`.
pub fn bin(e: &mut Emitter, name: &str, a: &Tv, b: &Tv) -> Tv {
    e.op(name, &[a, b], &[], &a.ty)
}

/// Unsigned integer division or remainder that never traps: x/0 = all ones, x%0 = x.
fn uint_divrem(e: &mut Emitter, div: bool, a: &Tv, b: &Tv) -> Tv {
    let t = &a.ty;
    let z = e.splat_num(t, 0.0);
    let o = e.splat_num(t, 1.0);
    let bz = compare(e, CmpDir::Eq, b, &z);
    let safe = select(e, &bz, &o, b);
    if div {
        let q = bin(e, "stablehlo.divide", a, &safe);
        let m = e.splat(t, &super::int_max_text(t.dtype));
        select(e, &bz, &m, &q)
    } else {
        let r = bin(e, "stablehlo.remainder", a, &safe);
        select(e, &bz, a, &r)
    }
}

/// Signed integer division or remainder that never traps (see the file header).
fn int_divrem(e: &mut Emitter, div: bool, a: &Tv, b: &Tv) -> Tv {
    let t = &a.ty;
    if t.dtype.is_unsigned() {
        return uint_divrem(e, div, a, b);
    }
    let z = e.splat_num(t, 0.0);
    let o = e.splat_num(t, 1.0);
    let m1 = e.splat_num(t, -1.0);
    let min = e.splat(t, &int_min_text(t.dtype));
    let bz = compare(e, CmpDir::Eq, b, &z);
    let bm1 = compare(e, CmpDir::Eq, b, &m1);
    let amin = compare(e, CmpDir::Eq, a, &min);
    let ov = bin(e, "stablehlo.and", &bm1, &amin);
    let bad = bin(e, "stablehlo.or", &bz, &ov);
    let safe = select(e, &bad, &o, b);
    if div {
        // a / 1 = a: MIN / -1 already gives MIN.
        let q = bin(e, "stablehlo.divide", a, &safe);
        select(e, &bz, &m1, &q)
    } else {
        // a % 1 = 0: MIN % -1 already gives 0.
        let r = bin(e, "stablehlo.remainder", a, &safe);
        select(e, &bz, a, &r)
    }
}

/// C pow of floats `x`, `y` (see the file header).
pub fn pow(e: &mut Emitter, x: &Tv, y: &Tv) -> Tv {
    let t = &x.ty;
    let bits_ty = t.with_dtype(if t.dtype == DType::F32 { DType::I32 } else { DType::I64 });
    let ax = e.op("stablehlo.abs", &[x], &[], t);
    let mag = bin(e, "stablehlo.power", &ax, y);
    // x's sign bit (set for -0.0 too) flips the result when y is an odd integer.
    let bits = e.op("stablehlo.bitcast_convert", &[x], &[], &bits_ty);
    let izero = e.splat_num(&bits_ty, 0.0);
    let neg = compare(e, CmpDir::Lt, &bits, &izero);
    let one = e.splat_num(t, 1.0);
    let two = e.splat_num(t, 2.0);
    let r2 = bin(e, "stablehlo.remainder", y, &two);
    let ar2 = e.op("stablehlo.abs", &[&r2], &[], t);
    let odd = compare(e, CmpDir::Eq, &ar2, &one);
    let flip = bin(e, "stablehlo.and", &neg, &odd);
    let negmag = e.op("stablehlo.negate", &[&mag], &[], t);
    let signed = select(e, &flip, &negmag, &mag);
    // A finite negative base with a non-integer exponent has no real power.
    let zero = e.splat_num(t, 0.0);
    let ninf = e.splat_num(t, f64::NEG_INFINITY);
    let fl = e.op("stablehlo.floor", &[y], &[], t);
    let int = compare(e, CmpDir::Eq, &fl, y);
    let nonint = e.op("stablehlo.not", &[&int], &[], &int.ty);
    let xneg = compare(e, CmpDir::Lt, x, &zero);
    let xfin = compare(e, CmpDir::Gt, x, &ninf);
    let negfin = bin(e, "stablehlo.and", &xneg, &xfin);
    let undefined = bin(e, "stablehlo.and", &negfin, &nonint);
    let nan = e.splat_num(t, f64::NAN);
    let r = select(e, &undefined, &nan, &signed);
    // pow(x, ±0) = 1 and pow(1, y) = 1 even for NaN; pow(-1, ±inf) = 1.
    let inf = e.splat_num(t, f64::INFINITY);
    let y0 = compare(e, CmpDir::Eq, y, &zero);
    let x1 = compare(e, CmpDir::Eq, x, &one);
    let ax1 = compare(e, CmpDir::Eq, &ax, &one);
    let ay = e.op("stablehlo.abs", &[y], &[], t);
    let yinf = compare(e, CmpDir::Eq, &ay, &inf);
    let unit_inf = bin(e, "stablehlo.and", &ax1, &yinf);
    let some = bin(e, "stablehlo.or", &x1, &unit_inf);
    let is_one = bin(e, "stablehlo.or", &y0, &some);
    select(e, &is_one, &one, &r)
}

/// x^n by square-and-multiply (n >= 0; x^0 = 1).
fn pow_nonneg(e: &mut Emitter, x: &Tv, n: u64) -> Tv {
    let mut acc: Option<Tv> = None;
    let mut base = x.clone();
    let mut k = n;
    while k > 0 {
        if k & 1 == 1 {
            acc = Some(match acc {
                None => base.clone(),
                Some(a) => bin(e, "stablehlo.multiply", &a, &base),
            });
        }
        k >>= 1;
        if k > 0 {
            base = bin(e, "stablehlo.multiply", &base, &base);
        }
    }
    acc.unwrap_or_else(|| e.splat_num(&x.ty, 1.0))
}

/// `powi` with exponent `n` on `x` (see the file header).
pub fn powi(e: &mut Emitter, x: &Tv, n: i64) -> Tv {
    if n >= 0 {
        return pow_nonneg(e, x, n as u64);
    }
    let t = &x.ty;
    if t.dtype.is_float() {
        let p = pow_nonneg(e, x, n.unsigned_abs());
        let o = e.splat_num(t, 1.0);
        return bin(e, "stablehlo.divide", &o, &p);
    }
    let o = e.splat_num(t, 1.0);
    let z = e.splat_num(t, 0.0);
    let is1 = compare(e, CmpDir::Eq, x, &o);
    if t.dtype.is_unsigned() {
        return select(e, &is1, &o, &z);
    }
    let m1 = e.splat_num(t, -1.0);
    let ism1 = compare(e, CmpDir::Eq, x, &m1);
    let sgn = if n % 2 == 0 { o.clone() } else { m1.clone() };
    let r = select(e, &ism1, &sgn, &z);
    select(e, &is1, &o, &r)
}

/// `quabla.<unary>`.
pub fn lower_unary(e: &mut Emitter, f: &Func, o: &Op, u: UnaryOp) -> Result<Tv, LowerError> {
    let x = e.get(f, o.operands[0]);
    let out = f.ty(o.results[0]).clone();
    if x.ty.dtype.is_unsigned() && matches!(u, UnaryOp::Abs | UnaryOp::Sign) {
        if u == UnaryOp::Abs {
            return Ok(x);
        }
        let z = e.splat_num(&x.ty, 0.0);
        let o = e.splat_num(&x.ty, 1.0);
        let nz = compare(e, CmpDir::Ne, &x, &z);
        return Ok(select(e, &nz, &o, &z));
    }
    if u == UnaryOp::Cbrt && out.dtype == DType::F64 {
        // sign(x) * |x|^(1/3): IREE's llvm-cpu backend cannot lower an f64 `math.cbrt`
        // (relative error about 1e-14 from the rounded exponent; signs of zeros and infinities kept).
        let a = e.op("stablehlo.abs", &[&x], &[], &out);
        let third = e.splat_num(&x.ty, 1.0 / 3.0);
        let p = bin(e, "stablehlo.power", &a, &third);
        let s = e.op("stablehlo.sign", &[&x], &[], &out);
        return Ok(bin(e, "stablehlo.multiply", &s, &p));
    }
    Ok(match unary_name(u) {
        Some(name) => e.op(name, &[&x], &[], &out),
        None => {
            let ln2 = e.splat_num(&x.ty, std::f64::consts::LN_2);
            let s = bin(e, "stablehlo.multiply", &x, &ln2);
            e.op("stablehlo.exponential", &[&s], &[], &out)
        }
    })
}

/// logaddexp(x, y) = max + log1p(exp(-|x - y|)), or x + y where x - y is NaN.
fn logaddexp(e: &mut Emitter, x: &Tv, y: &Tv) -> Tv {
    let m = bin(e, "stablehlo.maximum", x, y);
    let d = bin(e, "stablehlo.subtract", x, y);
    let ad = e.op("stablehlo.abs", &[&d], &[], &d.ty);
    let n = e.op("stablehlo.negate", &[&ad], &[], &d.ty);
    let ex = e.op("stablehlo.exponential", &[&n], &[], &d.ty);
    let l = e.op("stablehlo.log_plus_one", &[&ex], &[], &d.ty);
    let r = bin(e, "stablehlo.add", &m, &l);
    let s = bin(e, "stablehlo.add", x, y);
    let nan = compare(e, CmpDir::Ne, &d, &d);
    select(e, &nan, &s, &r)
}

/// `quabla.<binary>`.
pub fn lower_binary(e: &mut Emitter, f: &Func, o: &Op, b: BinaryOp) -> Result<Tv, LowerError> {
    let (x, y) = (e.get(f, o.operands[0]), e.get(f, o.operands[1]));
    Ok(match binary_name(b, x.ty.dtype) {
        Some(name) => bin(e, name, &x, &y),
        None if b == BinaryOp::Pow => pow(e, &x, &y),
        None if b == BinaryOp::Logaddexp => logaddexp(e, &x, &y),
        None => int_divrem(e, b == BinaryOp::Div, &x, &y),
    })
}

/// `quabla.powi`.
pub fn lower_powi(e: &mut Emitter, f: &Func, o: &Op, n: i64) -> Result<Tv, LowerError> {
    let x = e.get(f, o.operands[0]);
    Ok(powi(e, &x, n))
}

/// `quabla.compare`.
pub fn lower_compare(e: &mut Emitter, f: &Func, o: &Op, dir: CmpDir) -> Result<Tv, LowerError> {
    let (x, y) = (e.get(f, o.operands[0]), e.get(f, o.operands[1]));
    Ok(compare(e, dir, &x, &y))
}

/// `quabla.select`.
pub fn lower_select(e: &mut Emitter, f: &Func, o: &Op) -> Result<Tv, LowerError> {
    let (p, t, g) = (e.get(f, o.operands[0]), e.get(f, o.operands[1]), e.get(f, o.operands[2]));
    Ok(select(e, &p, &t, &g))
}

/// `quabla.convert` (a rename when the dtype does not change).
pub fn lower_convert(e: &mut Emitter, f: &Func, o: &Op, to: DType) -> Result<Tv, LowerError> {
    let x = e.get(f, o.operands[0]);
    if x.ty.dtype == to {
        return Ok(x);
    }
    Ok(convert(e, &x, to))
}

/// `stablehlo.convert` of `x` to `to`.
pub fn convert(e: &mut Emitter, x: &Tv, to: DType) -> Tv {
    let t: TensorType = x.ty.with_dtype(to);
    e.op("stablehlo.convert", &[x], &[], &t)
}

/// Exports one op of this family (exhaustive over the family).
pub fn lower(e: &mut Emitter, f: &Func, o: &Op, op: &ElementwiseOp) -> Result<Tv, LowerError> {
    match op {
        ElementwiseOp::Unary { op: u } => lower_unary(e, f, o, *u),
        ElementwiseOp::Binary { op: b } => lower_binary(e, f, o, *b),
        ElementwiseOp::Powi { exponent } => lower_powi(e, f, o, *exponent),
        ElementwiseOp::Compare { direction: dir} => lower_compare(e, f, o, *dir),
        ElementwiseOp::Select {} => lower_select(e, f, o),
        ElementwiseOp::Convert { to } => lower_convert(e, f, o, *to),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quabla_dialect::{ElementwiseOp, Module, OpKind};

    fn export(kind: OpKind, ts: &[TensorType]) -> String {
        let mut f = Func::new("main", ts);
        let ps = f.params.clone();
        let r = f.push1(kind, &ps, None).unwrap();
        f.outputs = vec![r];
        super::super::export_module(&Module { funcs: vec![f] }).unwrap()
    }

    #[test]
    fn guarded_integer_division() {
        let t = TensorType::new(DType::I32, [4]);
        let s = export(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Div }), &[t.clone(), t.clone()]);
        assert!(s.contains("dense<-2147483648> : tensor<4xi32>"), "{s}");
        assert!(s.contains("\"stablehlo.divide\""), "{s}");
        assert_eq!(s.matches("\"stablehlo.select\"").count(), 2, "{s}");
        let s = export(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Div }), &vec![TensorType::new(DType::F64, [2]); 2]);
        assert_eq!(s.matches("\"stablehlo.").count(), 1, "{s}");
    }

    #[test]
    fn powi_chain() {
        let t = TensorType::new(DType::F32, [3]);
        // x^5 = x * (x^2)^2: three multiplies.
        let s = export(OpKind::Elementwise(ElementwiseOp::Powi { exponent: 5 }), std::slice::from_ref(&t));
        assert_eq!(s.matches("\"stablehlo.multiply\"").count(), 3, "{s}");
        let s = export(OpKind::Elementwise(ElementwiseOp::Powi { exponent: -2 }), &[t]);
        assert!(s.contains("\"stablehlo.divide\""), "{s}");
        let s = export(OpKind::Elementwise(ElementwiseOp::Powi { exponent: 0 }), &[TensorType::new(DType::I64, [2])]);
        assert!(s.contains("dense<1> : tensor<2xi64>"), "{s}");
    }

    #[test]
    fn compare_types() {
        let s = export(OpKind::Elementwise(ElementwiseOp::Compare { direction: CmpDir::Ne}), &vec![TensorType::new(DType::I1, [2]); 2]);
        assert!(s.contains("comparison_direction = #stablehlo<comparison_direction NE>, compare_type = #stablehlo<comparison_type UNSIGNED>"), "{s}");
    }
}

//! Lowering of elementwise ops: one `linalg.generic` with identity maps whose body is the
//! scalar formula. Integer division guards against traps (x/0 = -1, x%0 = x,
//! MIN/-1 = MIN, MIN%-1 = 0); float max/min propagate NaN; round is half-to-even.
use quabla_dialect::{BinaryOp, CmpDir, DType, Func, Op, OpKind, TensorType, UnaryOp};

use super::{elementwise as ew, float_lit, int_min, Emitter};
use crate::LowerError;

fn one(e: &mut Emitter, d: DType) -> String {
    if d.is_float() {
        e.scalar(d, "1.0")
    } else {
        e.scalar(d, "1")
    }
}

fn zero(e: &mut Emitter, d: DType) -> String {
    if d.is_float() {
        e.scalar(d, "0.0")
    } else {
        e.scalar(d, "0")
    }
}

/// Emits `name = op args : type` and returns name.
fn op(e: &mut Emitter, text: String) -> String {
    let n = e.fresh();
    e.line(format!("{n} = {text}"));
    n
}

pub fn unary(e: &mut Emitter, u: UnaryOp, d: DType, a: &str) -> String {
    let f = d.is_float();
    let math = |e: &mut Emitter, name: &str| op(e, format!("math.{name} {a} : {d}"));
    match u {
        UnaryOp::Neg if f => op(e, format!("arith.negf {a} : {d}")),
        UnaryOp::Neg => {
            let z = zero(e, d);
            op(e, format!("arith.subi {z}, {a} : {d}"))
        }
        UnaryOp::Abs if f => math(e, "absf"),
        UnaryOp::Abs => {
            let z = zero(e, d);
            let neg = op(e, format!("arith.subi {z}, {a} : {d}"));
            let lt = op(e, format!("arith.cmpi slt, {a}, {z} : {d}"));
            op(e, format!("arith.select {lt}, {neg}, {a} : {d}"))
        }
        UnaryOp::Sign if f => {
            // +1 above zero, -1 below, and x itself for +-0 and NaN.
            let o = one(e, d);
            let m1 = e.scalar(d, "-1.0");
            let z = zero(e, d);
            let gt = op(e, format!("arith.cmpf ogt, {a}, {z} : {d}"));
            let lt = op(e, format!("arith.cmpf olt, {a}, {z} : {d}"));
            let r = op(e, format!("arith.select {lt}, {m1}, {a} : {d}"));
            op(e, format!("arith.select {gt}, {o}, {r} : {d}"))
        }
        UnaryOp::Sign => {
            let z = zero(e, d);
            let gt = op(e, format!("arith.cmpi sgt, {a}, {z} : {d}"));
            let lt = op(e, format!("arith.cmpi slt, {a}, {z} : {d}"));
            let g = op(e, format!("arith.extui {gt} : i1 to {d}"));
            let l = op(e, format!("arith.extui {lt} : i1 to {d}"));
            op(e, format!("arith.subi {g}, {l} : {d}"))
        }
        UnaryOp::Exp => math(e, "exp"),
        UnaryOp::Expm1 => math(e, "expm1"),
        UnaryOp::Log => math(e, "log"),
        UnaryOp::Log1p => math(e, "log1p"),
        UnaryOp::Sin => math(e, "sin"),
        UnaryOp::Cos => math(e, "cos"),
        UnaryOp::Tan => math(e, "tan"),
        UnaryOp::Tanh => math(e, "tanh"),
        UnaryOp::Logistic => {
            let o = one(e, d);
            let n = op(e, format!("arith.negf {a} : {d}"));
            let x = op(e, format!("math.exp {n} : {d}"));
            let s = op(e, format!("arith.addf {o}, {x} : {d}"));
            op(e, format!("arith.divf {o}, {s} : {d}"))
        }
        UnaryOp::Sqrt => math(e, "sqrt"),
        UnaryOp::Rsqrt => {
            let o = one(e, d);
            let s = math(e, "sqrt");
            op(e, format!("arith.divf {o}, {s} : {d}"))
        }
        UnaryOp::Floor => math(e, "floor"),
        UnaryOp::Ceil => math(e, "ceil"),
        UnaryOp::Round => math(e, "roundeven"),
        UnaryOp::Erf => math(e, "erf"),
        UnaryOp::Not => {
            let m = if d == DType::I1 { e.scalar(d, "1") } else { e.scalar(d, "-1") };
            op(e, format!("arith.xori {a}, {m} : {d}"))
        }
    }
}

/// Guarded signed integer division or remainder.
fn int_divrem(e: &mut Emitter, div: bool, d: DType, a: &str, b: &str) -> String {
    let z = zero(e, d);
    let o = one(e, d);
    let m1 = e.scalar(d, "-1");
    let min = e.scalar(d, int_min(d));
    let bz = op(e, format!("arith.cmpi eq, {b}, {z} : {d}"));
    let bm1 = op(e, format!("arith.cmpi eq, {b}, {m1} : {d}"));
    let amin = op(e, format!("arith.cmpi eq, {a}, {min} : {d}"));
    let ov = op(e, format!("arith.andi {bm1}, {amin} : i1"));
    let bad = op(e, format!("arith.ori {bz}, {ov} : i1"));
    let bs = op(e, format!("arith.select {bad}, {o}, {b} : {d}"));
    if div {
        let q = op(e, format!("arith.divsi {a}, {bs} : {d}"));
        let q1 = op(e, format!("arith.select {ov}, {min}, {q} : {d}"));
        op(e, format!("arith.select {bz}, {m1}, {q1} : {d}"))
    } else {
        let r = op(e, format!("arith.remsi {a}, {bs} : {d}"));
        let r1 = op(e, format!("arith.select {ov}, {z}, {r} : {d}"));
        op(e, format!("arith.select {bz}, {a}, {r1} : {d}"))
    }
}

pub fn binary(e: &mut Emitter, b: BinaryOp, d: DType, x: &str, y: &str) -> String {
    let f = d.is_float();
    let bin = |e: &mut Emitter, name: &str| op(e, format!("{name} {x}, {y} : {d}"));
    match b {
        BinaryOp::Add => bin(e, if f { "arith.addf" } else { "arith.addi" }),
        BinaryOp::Sub => bin(e, if f { "arith.subf" } else { "arith.subi" }),
        BinaryOp::Mul => bin(e, if f { "arith.mulf" } else { "arith.muli" }),
        BinaryOp::Div if f => bin(e, "arith.divf"),
        BinaryOp::Div => int_divrem(e, true, d, x, y),
        BinaryOp::Rem if f => bin(e, "arith.remf"),
        BinaryOp::Rem => int_divrem(e, false, d, x, y),
        BinaryOp::Max if f => bin(e, "arith.maximumf"),
        BinaryOp::Max if d == DType::I1 => bin(e, "arith.ori"),
        BinaryOp::Max => bin(e, "arith.maxsi"),
        BinaryOp::Min if f => bin(e, "arith.minimumf"),
        BinaryOp::Min if d == DType::I1 => bin(e, "arith.andi"),
        BinaryOp::Min => bin(e, "arith.minsi"),
        BinaryOp::Pow => bin(e, "math.powf"),
        BinaryOp::Atan2 => bin(e, "math.atan2"),
        BinaryOp::And => bin(e, "arith.andi"),
        BinaryOp::Or => bin(e, "arith.ori"),
        BinaryOp::Xor => bin(e, "arith.xori"),
    }
}

/// x^n by square-and-multiply (n >= 0).
fn pow_nonneg(e: &mut Emitter, d: DType, x: &str, n: u64) -> String {
    let mul = if d.is_float() { "arith.mulf" } else { "arith.muli" };
    let mut acc: Option<String> = None;
    let mut base = x.to_string();
    let mut k = n;
    while k > 0 {
        if k & 1 == 1 {
            acc = Some(match acc {
                None => base.clone(),
                Some(a) => op(e, format!("{mul} {a}, {base} : {d}")),
            });
        }
        k >>= 1;
        if k > 0 {
            base = op(e, format!("{mul} {base}, {base} : {d}"));
        }
    }
    acc.unwrap_or_else(|| one(e, d))
}

pub fn powi(e: &mut Emitter, d: DType, x: &str, n: i64) -> String {
    if n >= 0 {
        return pow_nonneg(e, d, x, n as u64);
    }
    if d.is_float() {
        let p = pow_nonneg(e, d, x, n.unsigned_abs());
        let o = one(e, d);
        return op(e, format!("arith.divf {o}, {p} : {d}"));
    }
    // Integers: 1 -> 1, -1 -> (-1)^n, anything else -> 0.
    let o = one(e, d);
    let m1 = e.scalar(d, "-1");
    let z = zero(e, d);
    let is1 = op(e, format!("arith.cmpi eq, {x}, {o} : {d}"));
    let ism1 = op(e, format!("arith.cmpi eq, {x}, {m1} : {d}"));
    let sgn = if n % 2 == 0 { o.clone() } else { m1.clone() };
    let r = op(e, format!("arith.select {ism1}, {sgn}, {z} : {d}"));
    op(e, format!("arith.select {is1}, {o}, {r} : {d}"))
}

pub fn compare(e: &mut Emitter, dir: CmpDir, d: DType, x: &str, y: &str) -> String {
    let pred = match (d, dir) {
        (d, dir) if d.is_float() => match dir {
            CmpDir::Eq => "oeq",
            CmpDir::Ne => "une",
            CmpDir::Lt => "olt",
            CmpDir::Le => "ole",
            CmpDir::Gt => "ogt",
            CmpDir::Ge => "oge",
        },
        (DType::I1, dir) => match dir {
            CmpDir::Eq => "eq",
            CmpDir::Ne => "ne",
            CmpDir::Lt => "ult",
            CmpDir::Le => "ule",
            CmpDir::Gt => "ugt",
            CmpDir::Ge => "uge",
        },
        (_, dir) => match dir {
            CmpDir::Eq => "eq",
            CmpDir::Ne => "ne",
            CmpDir::Lt => "slt",
            CmpDir::Le => "sle",
            CmpDir::Gt => "sgt",
            CmpDir::Ge => "sge",
        },
    };
    let kind = if d.is_float() { "cmpf" } else { "cmpi" };
    op(e, format!("arith.{kind} {pred}, {x}, {y} : {d}"))
}

pub fn convert(e: &mut Emitter, from: DType, to: DType, x: &str) -> String {
    use DType::*;
    if from == to {
        return x.to_string();
    }
    match (from, to) {
        (F32, F64) => op(e, format!("arith.extf {x} : f32 to f64")),
        (F64, F32) => op(e, format!("arith.truncf {x} : f64 to f32")),
        (F32 | F64, I1) => {
            let z = zero(e, from);
            op(e, format!("arith.cmpf une, {x}, {z} : {from}"))
        }
        (I32 | I64, I1) => {
            let z = zero(e, from);
            op(e, format!("arith.cmpi ne, {x}, {z} : {from}"))
        }
        (I1, F32 | F64) => op(e, format!("arith.uitofp {x} : i1 to {to}")),
        (I1, I32 | I64) => op(e, format!("arith.extui {x} : i1 to {to}")),
        (I32 | I64, F32 | F64) => op(e, format!("arith.sitofp {x} : {from} to {to}")),
        (F32 | F64, I32 | I64) => op(e, format!("arith.fptosi {x} : {from} to {to}")),
        (I32, I64) => op(e, format!("arith.extsi {x} : i32 to i64")),
        (I64, I32) => op(e, format!("arith.trunci {x} : i64 to i32")),
        _ => unreachable!("equal dtypes handled above"),
    }
}

pub fn lower(e: &mut Emitter, f: &Func, o: &Op) -> Result<(), LowerError> {
    let operands: Vec<(String, TensorType)> = o.operands.iter().map(|v| (e.name(*v), f.ty(*v).clone())).collect();
    let out = f.ty(o.results[0]).clone();
    let d0 = operands[0].1.dtype;
    let kind = o.kind.clone();
    let r = match kind {
        OpKind::Unary(u) => ew::elementwise(e, &operands, &out, |e, a| unary(e, u, d0, &a[0])),
        OpKind::Binary(b) => ew::elementwise(e, &operands, &out, |e, a| binary(e, b, d0, &a[0], &a[1])),
        OpKind::Powi { exponent } => ew::elementwise(e, &operands, &out, |e, a| powi(e, d0, &a[0], exponent)),
        OpKind::Compare { dir } => ew::elementwise(e, &operands, &out, |e, a| compare(e, dir, d0, &a[0], &a[1])),
        OpKind::Select => ew::elementwise(e, &operands, &out, |e, a| op(e, format!("arith.select {}, {}, {} : {}", a[0], a[1], a[2], out.dtype))),
        OpKind::Convert { to } if to == d0 => {
            e.alias(o.results[0], operands[0].0.clone());
            return Ok(());
        }
        OpKind::Convert { to } => ew::elementwise(e, &operands, &out, |e, a| convert(e, d0, to, &a[0])),
        other => return Err(LowerError::Internal(format!("elementwise lowering got {}", other.name()))),
    };
    e.alias(o.results[0], r);
    let _ = float_lit;
    Ok(())
}

/// The body of an elementwise generic: identity maps over all operands.
pub fn elementwise(e: &mut Emitter, operands: &[(String, TensorType)], out: &TensorType, body: impl FnOnce(&mut Emitter, &[String]) -> String) -> String {
    super::elementwise(e, operands, out, body)
}

//! Lowering of elementwise ops (unary, binary, `powi`, `compare`, `select`, `convert`): one
//! `linalg.generic` with identity maps whose body is the scalar formula, written by the
//! scalar builders here (also used by reductions).
//!
//! Semantics kept exactly (docs/spec.md): integer div/rem never trap (x/0 = -1, x%0 = x,
//! MIN/-1 = MIN, MIN%-1 = 0); float max/min propagate NaN; round is half to even;
//! sign(±0) = ±0 and sign(NaN) = NaN; float compares are ordered except `ne`; float -> int
//! converts truncate and saturate (NaN -> 0, as Rust `as`); x -> i1 is x != 0; expm1 and
//! log1p stay accurate near 0 (expm1 is written through tanh, which the LLVM lowering keeps
//! as a libm call, because `convert-math-to-llvm` expands `math.expm1` to exp(x) - 1).
//!
//! With `Codegen::approx_math`, transcendental functions that have a kernel in crate::approx
//! are written as its scalar arith/math.fma code instead of `math.*` ops ([`Text`] is the
//! approx::Builder that prints it).
use std::collections::HashMap;

use quabla_dialect::{BinaryOp, CmpDir, DType, ElementwiseOp, Func, Op, OpKind, TensorType, UnaryOp, Value, RECOMPUTE_COST};

use super::{elementwise, float_lit, generic, identity, int_max, int_min, map, one_lit, operands, zero_lit, Emitter, Iter, Operand};
use crate::target::{Builder, Cast, FBin, FCmp, FUn, IBin, ICmp};
use crate::LowerError;

/// The approx::Builder that writes a kernel as MLIR ops through an [`Emitter`]; values are
/// (SSA name, type).
pub struct Text<'e> {
    pub e: &'e mut Emitter,
    /// The SSA name of the last lookup table (one per kernel).
    table: Option<(usize, String)>,
    /// Write a 2^k as `llvm.intr.ldexp` (set by a target whose LLVM backend lowers the
    /// vector intrinsic to one instruction, crate::target::cpu on AVX-512 hosts).
    pub ldexp: bool,
}

impl<'e> Text<'e> {
    pub fn new(e: &'e mut Emitter) -> Self {
        Text { e, table: None, ldexp: false }
    }
}

impl Builder for Text<'_> {
    type V = (String, DType);
    fn fconst(&mut self, d: DType, v: f64) -> Self::V {
        (self.e.scalar(d, &float_lit(d, v)), d)
    }
    fn iconst(&mut self, d: DType, v: i64) -> Self::V {
        (self.e.scalar(d, &v.to_string()), d)
    }
    fn fbin(&mut self, op: FBin, a: &Self::V, b: &Self::V) -> Self::V {
        let name = match op {
            FBin::Add => "arith.addf",
            FBin::Sub => "arith.subf",
            FBin::Mul => "arith.mulf",
            FBin::Div => "arith.divf",
        };
        (self.e.op(format!("{name} {}, {} : {}", a.0, b.0, a.1)), a.1)
    }
    fn fun(&mut self, op: FUn, a: &Self::V) -> Self::V {
        let name = match op {
            FUn::Neg => "arith.negf",
            FUn::Abs => "math.absf",
            FUn::RoundEven => "math.roundeven",
            FUn::Sqrt => "math.sqrt",
            FUn::LibmLog => "math.log",
        };
        (self.e.op(format!("{name} {} : {}", a.0, a.1)), a.1)
    }
    fn fma(&mut self, a: &Self::V, b: &Self::V, c: &Self::V) -> Self::V {
        (self.e.op(format!("math.fma {}, {}, {} : {}", a.0, b.0, c.0, a.1)), a.1)
    }
    fn copysign(&mut self, a: &Self::V, b: &Self::V) -> Self::V {
        (self.e.op(format!("math.copysign {}, {} : {}", a.0, b.0, a.1)), a.1)
    }
    fn fcmp(&mut self, p: FCmp, a: &Self::V, b: &Self::V) -> Self::V {
        let p = match p {
            FCmp::Olt => "olt",
            FCmp::Oge => "oge",
            FCmp::Ogt => "ogt",
            FCmp::Oeq => "oeq",
            FCmp::Ult => "ult",
            FCmp::Uno => "uno",
        };
        (self.e.op(format!("arith.cmpf {p}, {}, {} : {}", a.0, b.0, a.1)), DType::I1)
    }
    fn ibin(&mut self, op: IBin, a: &Self::V, b: &Self::V) -> Self::V {
        let name = match op {
            IBin::Add => "arith.addi",
            IBin::Sub => "arith.subi",
            IBin::And => "arith.andi",
            IBin::Or => "arith.ori",
            IBin::Shl => "arith.shli",
            IBin::ShrS => "arith.shrsi",
            IBin::MaxS => "arith.maxsi",
            IBin::MinS => "arith.minsi",
        };
        (self.e.op(format!("{name} {}, {} : {}", a.0, b.0, a.1)), a.1)
    }
    fn icmp(&mut self, p: ICmp, a: &Self::V, b: &Self::V) -> Self::V {
        let p = match p {
            ICmp::Eq => "eq",
            ICmp::Ne => "ne",
        };
        (self.e.op(format!("arith.cmpi {p}, {}, {} : {}", a.0, b.0, a.1)), DType::I1)
    }
    fn select(&mut self, c: &Self::V, a: &Self::V, b: &Self::V) -> Self::V {
        (self.e.op(format!("arith.select {}, {}, {} : {}", c.0, a.0, b.0, a.1)), a.1)
    }
    fn cast(&mut self, op: Cast, a: &Self::V, to: DType) -> Self::V {
        let name = match op {
            Cast::Bitcast => "arith.bitcast",
            Cast::FpToSi => "arith.fptosi",
            Cast::SiToFp => "arith.sitofp",
            Cast::ExtF => "arith.extf",
            Cast::TruncF => "arith.truncf",
        };
        (self.e.op(format!("{name} {} : {} to {to}", a.0, a.1)), to)
    }
    fn lookup(&mut self, table: &[f64], index: &Self::V) -> Self::V {
        let ty = format!("tensor<{}xf64>", table.len());
        let key = table.as_ptr() as usize;
        let t = match &self.table {
            Some((k, name)) if *k == key => name.clone(),
            _ => {
                let vals: Vec<String> = table.iter().map(|&v| float_lit(DType::F64, v)).collect();
                let name = self.e.op(format!("arith.constant dense<[{}]> : {ty}", vals.join(", ")));
                self.table = Some((key, name.clone()));
                name
            }
        };
        let i = self.e.op(format!("arith.index_cast {} : {} to index", index.0, index.1));
        (self.e.op(format!("tensor.extract {t}[{i}] : {ty}")), DType::F64)
    }
    fn ldexp(&mut self, a: &Self::V, k: &Self::V) -> Option<Self::V> {
        // LLVM's intrinsic takes an i32 exponent for every float type.
        let k = match k.1 {
            DType::I32 => k.0.clone(),
            _ if self.ldexp => self.e.op(format!("arith.trunci {} : {} to i32", k.0, k.1)),
            _ => return None,
        };
        self.ldexp.then(|| (self.e.op(format!("llvm.intr.ldexp({}, {k}) : ({}, i32) -> {}", a.0, a.1, a.1)), a.1))
    }
}

fn one(e: &mut Emitter, d: DType) -> String {
    e.scalar(d, one_lit(d))
}

fn zero(e: &mut Emitter, d: DType) -> String {
    e.scalar(d, zero_lit(d))
}

/// expm1(x): 2t / (1 - t) with t = tanh(x/2) for |x| < 0.5 (no cancellation), exp(x) - 1
/// elsewhere (the cancellation there costs at most a factor of about 2.5).
fn expm1(e: &mut Emitter, d: DType, a: &str) -> String {
    let half = e.scalar(d, "0.5");
    let o = one(e, d);
    let two = e.scalar(d, "2.0");
    let h = e.op(format!("arith.mulf {a}, {half} : {d}"));
    let t = e.op(format!("math.tanh {h} : {d}"));
    let num = e.op(format!("arith.mulf {two}, {t} : {d}"));
    let den = e.op(format!("arith.subf {o}, {t} : {d}"));
    let small = e.op(format!("arith.divf {num}, {den} : {d}"));
    let ex = e.op(format!("math.exp {a} : {d}"));
    let big = e.op(format!("arith.subf {ex}, {o} : {d}"));
    let ab = e.op(format!("math.absf {a} : {d}"));
    // NaN fails `olt` and takes exp(NaN) - 1 = NaN.
    let is_small = e.op(format!("arith.cmpf olt, {ab}, {half} : {d}"));
    e.op(format!("arith.select {is_small}, {small}, {big} : {d}"))
}

/// The scalar formula of a unary op on `a` of dtype `d`.
pub fn unary(e: &mut Emitter, u: UnaryOp, d: DType, a: &str) -> String {
    if e.cg.approx_math {
        let target = e.cg.target;
        let mut t = Text::new(e);
        if let Some((r, _)) = target.unary_kernel(&mut t, u, d, &(a.to_string(), d)) {
            return r;
        }
    }
    let f = d.is_float();
    let math = |e: &mut Emitter, name: &str| e.op(format!("math.{name} {a} : {d}"));
    match u {
        UnaryOp::Neg if f => e.op(format!("arith.negf {a} : {d}")),
        UnaryOp::Neg => {
            let z = zero(e, d);
            e.op(format!("arith.subi {z}, {a} : {d}"))
        }
        UnaryOp::Abs if f => math(e, "absf"),
        UnaryOp::Abs if d.is_unsigned() => a.to_string(),
        UnaryOp::Abs => math(e, "absi"),
        UnaryOp::Sign if f => {
            // ±1 with a's sign, except that ±0 and NaN map to themselves.
            let o = one(e, d);
            let z = zero(e, d);
            let s = e.op(format!("math.copysign {o}, {a} : {d}"));
            let keep = e.op(format!("arith.cmpf ueq, {a}, {z} : {d}"));
            e.op(format!("arith.select {keep}, {a}, {s} : {d}"))
        }
        UnaryOp::Sign if d.is_unsigned() => {
            let z = zero(e, d);
            let nz = e.op(format!("arith.cmpi ne, {a}, {z} : {d}"));
            e.op(format!("arith.extui {nz} : i1 to {d}"))
        }
        UnaryOp::Sign => {
            let z = zero(e, d);
            let gt = e.op(format!("arith.cmpi sgt, {a}, {z} : {d}"));
            let lt = e.op(format!("arith.cmpi slt, {a}, {z} : {d}"));
            let g = e.op(format!("arith.extui {gt} : i1 to {d}"));
            let l = e.op(format!("arith.extui {lt} : i1 to {d}"));
            e.op(format!("arith.subi {g}, {l} : {d}"))
        }
        UnaryOp::Exp => math(e, "exp"),
        UnaryOp::Exp2 => math(e, "exp2"),
        UnaryOp::Expm1 => expm1(e, d, a),
        UnaryOp::Log => math(e, "log"),
        UnaryOp::Log1p => math(e, "log1p"),
        UnaryOp::Sin => math(e, "sin"),
        UnaryOp::Cos => math(e, "cos"),
        UnaryOp::Tan => math(e, "tan"),
        UnaryOp::Tanh => math(e, "tanh"),
        UnaryOp::Logistic => {
            let o = one(e, d);
            let n = e.op(format!("arith.negf {a} : {d}"));
            let x = e.op(format!("math.exp {n} : {d}"));
            let s = e.op(format!("arith.addf {o}, {x} : {d}"));
            e.op(format!("arith.divf {o}, {s} : {d}"))
        }
        UnaryOp::Sqrt => math(e, "sqrt"),
        UnaryOp::Rsqrt => {
            let o = one(e, d);
            let s = math(e, "sqrt");
            e.op(format!("arith.divf {o}, {s} : {d}"))
        }
        UnaryOp::Floor => math(e, "floor"),
        UnaryOp::Ceil => math(e, "ceil"),
        UnaryOp::Round => math(e, "roundeven"),
        UnaryOp::Erf => math(e, "erf"),
        UnaryOp::Sinh => math(e, "sinh"),
        UnaryOp::Cosh => math(e, "cosh"),
        UnaryOp::Asin => math(e, "asin"),
        UnaryOp::Acos => math(e, "acos"),
        UnaryOp::Atan => math(e, "atan"),
        UnaryOp::Asinh => math(e, "asinh"),
        UnaryOp::Acosh => math(e, "acosh"),
        UnaryOp::Atanh => math(e, "atanh"),
        UnaryOp::Cbrt => math(e, "cbrt"),
        UnaryOp::Erfc => math(e, "erfc"),
        UnaryOp::ErfInv => super::special::special(e, super::special::Special::ErfInv, d, a),
        UnaryOp::Lgamma => super::special::special(e, super::special::Special::Lgamma, d, a),
        UnaryOp::Digamma => super::special::special(e, super::special::Special::Digamma, d, a),
        UnaryOp::Not => {
            let m = if d == DType::I1 { e.scalar(d, "true") } else { e.scalar(d, "-1") };
            e.op(format!("arith.xori {a}, {m} : {d}"))
        }
        UnaryOp::PopulationCount => math(e, "ctpop"),
        UnaryOp::IsFinite => {
            // |x| < inf is false for ±inf and (ordered) for NaN.
            let inf = e.scalar(d, &float_lit(d, f64::INFINITY));
            let m = math(e, "absf");
            e.op(format!("arith.cmpf olt, {m}, {inf} : {d}"))
        }
    }
}

/// logaddexp(x, y) = max + log1p(exp(-|x - y|)), or x + y where x - y is NaN (equal
/// infinities, NaN operands).
fn logaddexp(e: &mut Emitter, d: DType, x: &str, y: &str) -> String {
    let m = e.op(format!("arith.maximumf {x}, {y} : {d}"));
    let diff = e.op(format!("arith.subf {x}, {y} : {d}"));
    let ad = e.op(format!("math.absf {diff} : {d}"));
    let n = e.op(format!("arith.negf {ad} : {d}"));
    let ex = unary(e, UnaryOp::Exp, d, &n);
    let l = unary(e, UnaryOp::Log1p, d, &ex);
    let r = e.op(format!("arith.addf {m}, {l} : {d}"));
    let s = e.op(format!("arith.addf {x}, {y} : {d}"));
    let nan = e.op(format!("arith.cmpf uno, {diff}, {diff} : {d}"));
    e.op(format!("arith.select {nan}, {s}, {r} : {d}"))
}

/// Signed integer division or remainder that never traps.
fn int_divrem(e: &mut Emitter, div: bool, d: DType, a: &str, b: &str) -> String {
    let z = zero(e, d);
    let o = one(e, d);
    let m1 = e.scalar(d, "-1");
    let min = e.scalar(d, int_min(d));
    let bz = e.op(format!("arith.cmpi eq, {b}, {z} : {d}"));
    let bm1 = e.op(format!("arith.cmpi eq, {b}, {m1} : {d}"));
    let amin = e.op(format!("arith.cmpi eq, {a}, {min} : {d}"));
    let ov = e.op(format!("arith.andi {bm1}, {amin} : i1"));
    let bad = e.op(format!("arith.ori {bz}, {ov} : i1"));
    let bs = e.op(format!("arith.select {bad}, {o}, {b} : {d}"));
    if div {
        // a / 1 = a: MIN / -1 already gives MIN.
        let q = e.op(format!("arith.divsi {a}, {bs} : {d}"));
        e.op(format!("arith.select {bz}, {m1}, {q} : {d}"))
    } else {
        // a % 1 = 0: MIN % -1 already gives 0.
        let r = e.op(format!("arith.remsi {a}, {bs} : {d}"));
        e.op(format!("arith.select {bz}, {a}, {r} : {d}"))
    }
}

/// Unsigned integer division or remainder that never traps (x / 0 = all ones, x % 0 = x).
fn uint_divrem(e: &mut Emitter, div: bool, d: DType, a: &str, b: &str) -> String {
    let z = zero(e, d);
    let o = one(e, d);
    let bz = e.op(format!("arith.cmpi eq, {b}, {z} : {d}"));
    let bs = e.op(format!("arith.select {bz}, {o}, {b} : {d}"));
    if div {
        let q = e.op(format!("arith.divui {a}, {bs} : {d}"));
        let m = e.scalar(d, int_max(d));
        e.op(format!("arith.select {bz}, {m}, {q} : {d}"))
    } else {
        let r = e.op(format!("arith.remui {a}, {bs} : {d}"));
        e.op(format!("arith.select {bz}, {a}, {r} : {d}"))
    }
}

/// A shift with StableHLO's semantics (the amount read as unsigned; an amount >= the width
/// gives 0, or the sign fill for the arithmetic shift), where arith's shifts are poison.
fn shift(e: &mut Emitter, b: BinaryOp, d: DType, x: &str, y: &str) -> String {
    let w = e.scalar(d, &d.bits().to_string());
    let ok = e.op(format!("arith.cmpi ult, {y}, {w} : {d}"));
    match b {
        BinaryOp::ShiftRightArithmetic => {
            let wm1 = e.scalar(d, &(d.bits() - 1).to_string());
            let n = e.op(format!("arith.select {ok}, {y}, {wm1} : {d}"));
            e.op(format!("arith.shrsi {x}, {n} : {d}"))
        }
        _ => {
            let name = if b == BinaryOp::ShiftLeft { "arith.shli" } else { "arith.shrui" };
            let z = zero(e, d);
            let n = e.op(format!("arith.select {ok}, {y}, {z} : {d}"));
            let r = e.op(format!("{name} {x}, {n} : {d}"));
            e.op(format!("arith.select {ok}, {r}, {z} : {d}"))
        }
    }
}

/// The scalar formula of a binary op on `x`, `y` of dtype `d`.
pub fn binary(e: &mut Emitter, b: BinaryOp, d: DType, x: &str, y: &str) -> String {
    if e.cg.approx_math {
        let target = e.cg.target;
        let mut t = Text::new(e);
        if let Some((r, _)) = target.binary_kernel(&mut t, b, d, &(x.to_string(), d), &(y.to_string(), d)) {
            return r;
        }
    }
    let f = d.is_float();
    let bin = |e: &mut Emitter, name: &str| e.op(format!("{name} {x}, {y} : {d}"));
    match b {
        BinaryOp::Add => bin(e, if f { "arith.addf" } else { "arith.addi" }),
        BinaryOp::Sub => bin(e, if f { "arith.subf" } else { "arith.subi" }),
        BinaryOp::Mul => bin(e, if f { "arith.mulf" } else { "arith.muli" }),
        BinaryOp::Div if f => bin(e, "arith.divf"),
        BinaryOp::Div if d.is_unsigned() => uint_divrem(e, true, d, x, y),
        BinaryOp::Div => int_divrem(e, true, d, x, y),
        BinaryOp::Rem if f => bin(e, "arith.remf"),
        BinaryOp::Rem if d.is_unsigned() => uint_divrem(e, false, d, x, y),
        BinaryOp::Rem => int_divrem(e, false, d, x, y),
        BinaryOp::Max if f => bin(e, "arith.maximumf"),
        BinaryOp::Max if d == DType::I1 => bin(e, "arith.ori"),
        BinaryOp::Max if d.is_unsigned() => bin(e, "arith.maxui"),
        BinaryOp::Max => bin(e, "arith.maxsi"),
        BinaryOp::Min if f => bin(e, "arith.minimumf"),
        BinaryOp::Min if d == DType::I1 => bin(e, "arith.andi"),
        BinaryOp::Min if d.is_unsigned() => bin(e, "arith.minui"),
        BinaryOp::Min => bin(e, "arith.minsi"),
        BinaryOp::Pow => bin(e, "math.powf"),
        BinaryOp::Atan2 => bin(e, "math.atan2"),
        BinaryOp::Logaddexp => logaddexp(e, d, x, y),
        BinaryOp::And => bin(e, "arith.andi"),
        BinaryOp::Or => bin(e, "arith.ori"),
        BinaryOp::Xor => bin(e, "arith.xori"),
        BinaryOp::ShiftLeft | BinaryOp::ShiftRightLogical | BinaryOp::ShiftRightArithmetic => shift(e, b, d, x, y),
    }
}

/// x^n by square-and-multiply (n >= 0; x^0 = 1).
fn pow_nonneg(e: &mut Emitter, d: DType, x: &str, n: u64) -> String {
    let mul = if d.is_float() { "arith.mulf" } else { "arith.muli" };
    let mut acc: Option<String> = None;
    let mut base = x.to_string();
    let mut k = n;
    while k > 0 {
        if k & 1 == 1 {
            acc = Some(match acc {
                None => base.clone(),
                Some(a) => e.op(format!("{mul} {a}, {base} : {d}")),
            });
        }
        k >>= 1;
        if k > 0 {
            base = e.op(format!("{mul} {base}, {base} : {d}"));
        }
    }
    acc.unwrap_or_else(|| one(e, d))
}

/// The scalar formula of `powi` with exponent `n`.
pub fn powi(e: &mut Emitter, d: DType, x: &str, n: i64) -> String {
    if n >= 0 {
        return pow_nonneg(e, d, x, n as u64);
    }
    if d.is_float() {
        let p = pow_nonneg(e, d, x, n.unsigned_abs());
        let o = one(e, d);
        return e.op(format!("arith.divf {o}, {p} : {d}"));
    }
    // Integers: 1 -> 1, -1 -> (-1)^n, anything else -> 0 (unsigned: no -1).
    let o = one(e, d);
    if d.is_unsigned() {
        let z = zero(e, d);
        let is1 = e.op(format!("arith.cmpi eq, {x}, {o} : {d}"));
        return e.op(format!("arith.select {is1}, {o}, {z} : {d}"));
    }
    let m1 = e.scalar(d, "-1");
    let z = zero(e, d);
    let is1 = e.op(format!("arith.cmpi eq, {x}, {o} : {d}"));
    let ism1 = e.op(format!("arith.cmpi eq, {x}, {m1} : {d}"));
    let sgn = if n % 2 == 0 { o.clone() } else { m1.clone() };
    let r = e.op(format!("arith.select {ism1}, {sgn}, {z} : {d}"));
    e.op(format!("arith.select {is1}, {o}, {r} : {d}"))
}

/// The `arith.cmpf`/`arith.cmpi` predicate of a comparison on dtype `d`.
pub fn cmp_pred(dir: CmpDir, d: DType) -> &'static str {
    // i1 and the unsigned types compare unsigned.
    match (d.is_float(), d == DType::I1 || d.is_unsigned(), dir) {
        (true, _, CmpDir::Eq) => "oeq",
        (true, _, CmpDir::Ne) => "une",
        (true, _, CmpDir::Lt) => "olt",
        (true, _, CmpDir::Le) => "ole",
        (true, _, CmpDir::Gt) => "ogt",
        (true, _, CmpDir::Ge) => "oge",
        (false, _, CmpDir::Eq) => "eq",
        (false, _, CmpDir::Ne) => "ne",
        (false, true, CmpDir::Lt) => "ult",
        (false, true, CmpDir::Le) => "ule",
        (false, true, CmpDir::Gt) => "ugt",
        (false, true, CmpDir::Ge) => "uge",
        (false, false, CmpDir::Lt) => "slt",
        (false, false, CmpDir::Le) => "sle",
        (false, false, CmpDir::Gt) => "sgt",
        (false, false, CmpDir::Ge) => "sge",
    }
}

/// The scalar comparison `x dir y`.
pub fn compare(e: &mut Emitter, dir: CmpDir, d: DType, x: &str, y: &str) -> String {
    let kind = if d.is_float() { "cmpf" } else { "cmpi" };
    e.op(format!("arith.{kind} {}, {x}, {y} : {d}", cmp_pred(dir, d)))
}

/// Float -> signed integer, truncating, saturating at the integer range, NaN -> 0.
fn float_to_int(e: &mut Emitter, from: DType, to: DType, x: &str) -> String {
    let bits = if to == DType::I32 { 31 } else { 63 };
    let lim = float_lit(from, 2f64.powi(bits));
    let nlim = float_lit(from, -(2f64.powi(bits)));
    let r = e.op(format!("arith.fptosi {x} : {from} to {to}"));
    let hi = e.scalar(from, &lim);
    let lo = e.scalar(from, &nlim);
    let max = e.scalar(to, int_max(to));
    let min = e.scalar(to, int_min(to));
    let z = zero(e, to);
    let over = e.op(format!("arith.cmpf oge, {x}, {hi} : {from}"));
    let under = e.op(format!("arith.cmpf olt, {x}, {lo} : {from}"));
    let nan = e.op(format!("arith.cmpf uno, {x}, {x} : {from}"));
    let r1 = e.op(format!("arith.select {over}, {max}, {r} : {to}"));
    let r2 = e.op(format!("arith.select {under}, {min}, {r1} : {to}"));
    e.op(format!("arith.select {nan}, {z}, {r2} : {to}"))
}

/// Float -> unsigned integer, truncating, saturating at [0, max], NaN -> 0.
fn float_to_uint(e: &mut Emitter, from: DType, to: DType, x: &str) -> String {
    let lim = float_lit(from, 2f64.powi(to.bits() as i32));
    let r = e.op(format!("arith.fptoui {x} : {from} to {to}"));
    let hi = e.scalar(from, &lim);
    let fz = zero(e, from);
    let max = e.scalar(to, int_max(to));
    let z = zero(e, to);
    let over = e.op(format!("arith.cmpf oge, {x}, {hi} : {from}"));
    // Negative values and NaN (unordered) give 0.
    let under = e.op(format!("arith.cmpf ult, {x}, {fz} : {from}"));
    let r1 = e.op(format!("arith.select {over}, {max}, {r} : {to}"));
    e.op(format!("arith.select {under}, {z}, {r1} : {to}"))
}

/// Integer -> integer of another width or signedness: truncation, sign extension from a
/// signed source, zero extension from an unsigned one; same width is the same bits.
fn int_to_int(e: &mut Emitter, from: DType, to: DType, x: &str) -> String {
    use std::cmp::Ordering;
    match from.bits().cmp(&to.bits()) {
        Ordering::Equal => x.to_string(),
        Ordering::Greater => e.op(format!("arith.trunci {x} : {from} to {to}")),
        Ordering::Less if from.is_unsigned() => e.op(format!("arith.extui {x} : {from} to {to}")),
        Ordering::Less => e.op(format!("arith.extsi {x} : {from} to {to}")),
    }
}

/// The scalar conversion of `x` from `from` to `to`.
pub fn convert(e: &mut Emitter, from: DType, to: DType, x: &str) -> String {
    use DType::*;
    match (from, to) {
        (F32, F32) | (F64, F64) | (I1, I1) | (I32, I32) | (I64, I64) | (U8, U8) | (U32, U32) => x.to_string(),
        (U8 | U32, I1) => {
            let z = zero(e, from);
            e.op(format!("arith.cmpi ne, {x}, {z} : {from}"))
        }
        (I1, U8 | U32) => e.op(format!("arith.extui {x} : i1 to {to}")),
        (U8 | U32, F32 | F64) => e.op(format!("arith.uitofp {x} : {from} to {to}")),
        (F32 | F64, U8 | U32) => float_to_uint(e, from, to, x),
        (U8 | U32, I32 | I64 | U8 | U32) | (I32 | I64, U8 | U32) => int_to_int(e, from, to, x),
        (F32, F64) => e.op(format!("arith.extf {x} : f32 to f64")),
        (F64, F32) => e.op(format!("arith.truncf {x} : f64 to f32")),
        (F32 | F64, I1) => {
            let z = zero(e, from);
            e.op(format!("arith.cmpf une, {x}, {z} : {from}"))
        }
        (I32 | I64, I1) => {
            let z = zero(e, from);
            e.op(format!("arith.cmpi ne, {x}, {z} : {from}"))
        }
        (I1, F32 | F64) => e.op(format!("arith.uitofp {x} : i1 to {to}")),
        (I1, I32 | I64) => e.op(format!("arith.extui {x} : i1 to {to}")),
        (I32 | I64, F32 | F64) => e.op(format!("arith.sitofp {x} : {from} to {to}")),
        (F32 | F64, I32 | I64) => float_to_int(e, from, to, x),
        (I32, I64) => e.op(format!("arith.extsi {x} : i32 to i64")),
        (I64, I32) => e.op(format!("arith.trunci {x} : i64 to i32")),
    }
}

/// `quabla.<unary>`.
pub fn lower_unary(e: &mut Emitter, f: &Func, o: &Op, u: UnaryOp) -> Result<String, LowerError> {
    let xs = operands(e, f, o);
    let d = xs[0].1.dtype;
    Ok(elementwise(e, &xs, f.ty(o.results[0]), |e, a| unary(e, u, d, &a[0])))
}

/// `quabla.<binary>`.
pub fn lower_binary(e: &mut Emitter, f: &Func, o: &Op, b: BinaryOp) -> Result<String, LowerError> {
    let xs = operands(e, f, o);
    let d = xs[0].1.dtype;
    Ok(elementwise(e, &xs, f.ty(o.results[0]), |e, a| binary(e, b, d, &a[0], &a[1])))
}

/// `quabla.powi`.
pub fn lower_powi(e: &mut Emitter, f: &Func, o: &Op, n: i64) -> Result<String, LowerError> {
    let xs = operands(e, f, o);
    let d = xs[0].1.dtype;
    Ok(elementwise(e, &xs, f.ty(o.results[0]), |e, a| powi(e, d, &a[0], n)))
}

/// `quabla.compare`.
pub fn lower_compare(e: &mut Emitter, f: &Func, o: &Op, dir: CmpDir) -> Result<String, LowerError> {
    let xs = operands(e, f, o);
    let d = xs[0].1.dtype;
    Ok(elementwise(e, &xs, f.ty(o.results[0]), |e, a| compare(e, dir, d, &a[0], &a[1])))
}

/// `quabla.select`.
pub fn lower_select(e: &mut Emitter, f: &Func, o: &Op) -> Result<String, LowerError> {
    let xs = operands(e, f, o);
    let d = xs[1].1.dtype;
    Ok(elementwise(e, &xs, f.ty(o.results[0]), |e, a| e.op(format!("arith.select {}, {}, {} : {d}", a[0], a[1], a[2]))))
}

/// `quabla.convert` (a rename when the dtype does not change).
pub fn lower_convert(e: &mut Emitter, f: &Func, o: &Op, to: quabla_dialect::DType) -> Result<String, LowerError> {
    let xs = operands(e, f, o);
    let from = xs[0].1.dtype;
    if from == to {
        return Ok(xs[0].0.clone());
    }
    Ok(elementwise(e, &xs, f.ty(o.results[0]), |e, a| convert(e, from, to, &a[0])))
}

/// The elementwise ops of `ops` computed inside their consumers' generics (`lower_fused`)
/// instead of materialised, by result value:
/// - a single result used exactly once in the block, by an elementwise op (so it has the same
///   shape);
/// - a cheap value with several uses, all elementwise ops of its shape and none a block
///   output, when recomputing it costs at most [`RECOMPUTE_COST`] work units per element
///   (its [`ElementwiseOp::scalar_cost`] plus those of the computed-inside producers it brings along). Each
///   consumer's generic recomputes it (once per generic, however many of its ops use it)
///   instead of one loop writing it and each consumer reading it back. Example: the gelu
///   gradient's 0.5 x, x^2 and 1 + tanh(..), each read by both the loss's loop and the
///   gradient's;
/// - a value with several uses, all elementwise ops of its shape, that all end in one
///   consumer's generic (through the values above): computed once there, whatever it costs.
///   Example: threefry's 20 rounds, one loop.
pub fn fusible_producers<'a>(f: &Func, ops: &'a [Op], outputs: &[Value]) -> HashMap<Value, &'a Op> {
    let mut uses: HashMap<Value, (usize, bool)> = HashMap::new();
    // The ops (indices) that use each value, once per operand position.
    let mut users: HashMap<Value, Vec<usize>> = HashMap::new();
    for (i, op) in ops.iter().enumerate() {
        let elementwise = matches!(op.kind, OpKind::Elementwise(_));
        for v in &op.operands {
            let u = uses.entry(*v).or_insert((0, true));
            u.0 += 1;
            u.1 &= elementwise;
            users.entry(*v).or_default().push(i);
        }
    }
    // A value the block yields is materialised.
    for v in outputs {
        uses.entry(*v).or_insert((0, true)).1 = false;
    }
    let candidate = |op: &Op| matches!(op.kind, OpKind::Elementwise(_)) && op.results.len() == 1 && op.regions.is_empty() && op.operands.iter().all(|v| f.ty(*v).shape == f.ty(op.results[0]).shape);
    let mut out: HashMap<Value, &Op> = ops.iter().filter(|op| candidate(op) && uses.get(&op.results[0]).is_some_and(|&(n, ew)| n == 1 && ew)).map(|op| (op.results[0], op)).collect();
    // Recomputation costs in op order (operands first); a shared operand counts once.
    let mut cost: HashMap<Value, i64> = HashMap::new();
    for op in ops {
        let OpKind::Elementwise(k) = &op.kind else { continue };
        if op.results.len() != 1 || !op.regions.is_empty() {
            continue;
        }
        let mut seen: Vec<Value> = Vec::new();
        let mut c = k.scalar_cost();
        for v in &op.operands {
            if out.contains_key(v) && !seen.contains(v) {
                seen.push(*v);
                c = c.saturating_add(cost.get(v).copied().unwrap_or(0));
            }
        }
        let v = op.results[0];
        cost.insert(v, c);
        if !out.contains_key(&v) && candidate(op) && c <= RECOMPUTE_COST && uses.get(&v).is_some_and(|&(n, ew)| n > 1 && ew) {
            out.insert(v, op);
        }
    }
    // Values with several uses that all end in one generic are computed once inside it: in
    // reverse op order, each op's home is the root whose generic computes it (itself for a
    // root, none for a value recomputed by several generics); a multi-use value whose users
    // all have the same home joins it. Threefry's rounds (each word read by the next two ops) become
    // one loop instead of one generic per round with two 1e6-element results each.
    let mut home: Vec<Option<usize>> = vec![None; ops.len()];
    for i in (0..ops.len()).rev() {
        let op = &ops[i];
        home[i] = Some(i);
        if op.results.len() != 1 {
            continue;
        }
        let v = op.results[0];
        let us = users.get(&v).map(Vec::as_slice).unwrap_or(&[]);
        let shared = || -> Option<usize> {
            let first = home[*us.first()?]?;
            us.iter().all(|&u| home[u] == Some(first)).then_some(first)
        };
        if out.contains_key(&v) {
            // Computed inside its consumers: by one generic when they share it.
            home[i] = shared();
        } else if candidate(op) && us.len() > 1 && uses.get(&v).is_some_and(|&(_, ew)| ew) {
            if let Some(h) = shared() {
                out.insert(v, op);
                home[i] = Some(h);
            }
        }
    }
    out
}

/// The splat constants of `ops` as scalar MLIR text (`1.5e0`, `-3`, `true`), by value: inside a
/// fused generic they are scalars of the body.
pub fn splat_scalars(ops: &[Op]) -> HashMap<Value, String> {
    ops.iter()
        .filter_map(|op| match &op.kind {
            OpKind::Constant(quabla_dialect::ConstantOp::Constant { value }) if value.is_splat() => {
                let d = value.ty.dtype;
                let text = match d {
                    DType::F32 | DType::F64 => float_lit(d, value.get_f64(0)),
                    DType::I1 => (if value.get_i64(0) != 0 { "true" } else { "false" }).to_string(),
                    DType::I32 | DType::I64 | DType::U8 | DType::U32 => value.get_i64(0).to_string(),
                };
                Some((op.results[0], text))
            }
            _ => None,
        })
        .collect()
}

/// A [`deferred_values`] entry.
pub struct Deferred<'a> {
    /// The op that computes the value.
    pub op: &'a Op,
    /// The result of the root op whose generic computes it.
    pub root: Value,
    /// Whether that generic yields it: a later generic reads it, or it is a block output.
    pub yielded: bool,
}

/// Elementwise values of `ops` with several uses that are computed inside a later fused
/// generic and yielded as extra results of it (one pass writes them and their consumer's
/// result instead of a write, then a read back): by value, the op and the result of the
/// root op whose generic computes it. A value qualifies when every use is an elementwise op
/// of its shape or a block output and it is not recomputed by its consumers
/// ([`fusible_producers`]). The first root R whose generic uses it (through chains of
/// computed-inside producers) computes and yields it; every later root reads the yielded
/// value (the generic yields it only when a later root reads it or it is a block output). A
/// root that takes such a value is not itself deferred. Example: Adam's new moments
/// m, v (outputs, and read by the parameter update) are yielded by the parameter update's
/// generic, which reads p, g, m, v once and writes p, m, v once.
pub fn deferred_values<'a>(f: &Func, ops: &'a [Op], outputs: &[Value], pending: &HashMap<Value, &'a Op>) -> HashMap<Value, Deferred<'a>> {
    let mut users: HashMap<Value, Vec<usize>> = HashMap::new();
    for (i, op) in ops.iter().enumerate() {
        for v in &op.operands {
            users.entry(*v).or_default().push(i);
        }
    }
    // The first and last roots whose generics compute op i: follow computed-inside
    // producers ([`fusible_producers`]) to their consumers; users come after their operands.
    let mut first: Vec<usize> = (0..ops.len()).collect();
    let mut last = first.clone();
    for i in (0..ops.len()).rev() {
        if ops[i].results.len() == 1 && pending.contains_key(&ops[i].results[0]) {
            if let Some(us) = users.get(&ops[i].results[0]).filter(|us| !us.is_empty()) {
                first[i] = us.iter().map(|&j| first[j]).min().unwrap_or(i);
                last[i] = us.iter().map(|&j| last[j]).max().unwrap_or(i);
            }
        }
    }
    let mut out: HashMap<Value, Deferred> = HashMap::new();
    let mut absorbed: std::collections::HashSet<usize> = std::collections::HashSet::new();
    for (i, op) in ops.iter().enumerate() {
        if !matches!(op.kind, OpKind::Elementwise(_)) || op.results.len() != 1 || !op.regions.is_empty() || absorbed.contains(&i) {
            continue;
        }
        let v = op.results[0];
        let ty = f.ty(v);
        if pending.contains_key(&v) || ty.rank() == 0 || op.operands.iter().any(|x| f.ty(*x).shape != ty.shape) {
            continue;
        }
        let Some(us) = users.get(&v) else { continue };
        let fusible = |j: &usize| matches!(ops[*j].kind, OpKind::Elementwise(_)) && ops[*j].results.len() == 1 && ops[*j].regions.is_empty() && f.ty(ops[*j].results[0]).shape == ty.shape;
        if us.len() + outputs.iter().filter(|o| **o == v).count() < 2 || !us.iter().all(fusible) {
            continue;
        }
        // The first generic that uses v computes and yields it; later ones read it.
        let Some(r) = us.iter().map(|&w| first[w]).min() else { continue };
        if r <= i || !matches!(ops[r].kind, OpKind::Elementwise(_)) || out.contains_key(&ops[r].results[0]) {
            continue;
        }
        let yielded = outputs.contains(&v) || us.iter().any(|&w| last[w] > r);
        out.insert(v, Deferred { op, root: ops[r].results[0], yielded });
        absorbed.insert(r);
    }
    out
}

/// Work units of one execution of the loop-body op `name`, the thread policy's estimate of
/// what an iteration costs (crate::tiling::parallel_loop: a loop is split across threads
/// when its iterations times its per-iteration cost are large). Constants and the yield are
/// free, a vector-friendly arith/math op costs 1, a division or square root 4, a `math.*` op
/// that stays a libm call 16; [`MEMORY_COST`] per element read or written.
pub fn op_cost(name: &str) -> i64 {
    match name {
        "arith.constant" | "linalg.yield" | "linalg.index" => 0,
        "arith.divf" | "arith.divsi" | "arith.divui" | "arith.remf" | "arith.remsi" | "arith.remui" | "math.sqrt" | "math.rsqrt" => 4,
        "math.fma" | "math.absf" | "math.absi" | "math.copysign" | "math.roundeven" | "math.round" | "math.floor" | "math.ceil" | "math.trunc" | "math.ctpop" => 1,
        n if n.starts_with("math.") => 16,
        // An element read in a body (a row reduction's loop, crate::linalg::reduce).
        "tensor.extract" | "memref.load" => MEMORY_COST,
        _ => 1,
    }
}

/// Work units per element a loop reads or writes through an identity map (see [`op_cost`]).
pub const MEMORY_COST: i64 = 2;

/// Work units of an element read at a position computed from the generic's own elements (a
/// gather: `x[i, j]` with index arrays) out of a tensor of [`GATHER_SOURCE_ELEMENTS`] or more:
/// a cache miss, not a streamed read. 10^5 such reads of a 4096 x 1024 f32 took 4.5 ns each on
/// one core (~400 units), and at the streamed cost the loop stayed on one thread: 449 us,
/// JAX 338 on two. Counted by the CPU executor's thread policy (quabla_runtime's
/// `parallel::tag_loops`) and by the gathers' lowering (crate::linalg::slicing).
pub const GATHER_READ_COST: i64 = 128;

/// The least elements of a tensor whose data-dependent reads count [`GATHER_READ_COST`]
/// (smaller ones stay in the core's caches).
pub const GATHER_SOURCE_ELEMENTS: i64 = 1 << 16;

/// The summed [`op_cost`] of the ops of a loop body written as text (`%x = name ...` lines).
pub fn text_body_cost(body: &str) -> i64 {
    body.lines()
        .filter_map(|l| {
            let rest = &l[l.find(" = ")? + 3..];
            rest.split([' ', '(', '"', '<']).find(|t| !t.is_empty())
        })
        .map(op_cost)
        .sum()
}

/// A pad by a constant padding value that elementwise generics read without a padded array
/// ([`padded_reads`]): what is inside, the padding value's literal and, for each padded dim,
/// (dim, first position of the operand, last position, step).
#[derive(Clone, Debug, PartialEq)]
pub struct PaddedRead {
    pub inside: Inside,
    pub outside: String,
    pub dims: Vec<(usize, i64, i64, i64)>,
}

/// The operand of a [`PaddedRead`]: a splat's literal, or the operand read through a map over
/// the result's dims (`0` along the padded dims, where it has one element).
#[derive(Clone, Debug, PartialEq)]
pub enum Inside {
    Literal(String),
    Read(ReadBroadcast),
}

/// The pads by constant padding values (`splats`) whose operand is a splat constant (or the
/// broadcast of one too large to fold, `scalars`) or has one element along every padded dim,
/// by result: a gradient's cotangents of `x[:, 0]` and `x[:, k::2]` (a one-hot column of a
/// loss, `pad(-1, [0, 9])` of `[n, 1]`; the column `1 - tanh(x[:, 0])^2`). An elementwise
/// generic that uses one computes it from its loop indices (a compare and a select per padded
/// dim, reading the operand in place where it is not a splat) instead of reading a padded
/// array: the cross-entropy gradient over 65536 x 10 f32 wrote a 2.6 MB fill, its column,
/// then read it (765 -> 389 us, JAX 528). Not on targets whose kernels are the outer loops
/// (`Target::parallel_outer`).
pub fn padded_reads(f: &Func, ops: &[Op], splats: &HashMap<Value, String>, scalars: &HashMap<Value, ReadBroadcast>) -> HashMap<Value, PaddedRead> {
    let literal = |v: &Value| splats.get(v).or_else(|| splats.get(&scalars.get(v)?.0));
    ops.iter()
        .filter_map(|op| {
            let OpKind::Slicing(quabla_dialect::SlicingOp::Pad { edge_padding_low: low, interior_padding: interior, .. }) = &op.kind else { return None };
            let (x, outside) = (*op.operands.first()?, splats.get(op.operands.get(1)?)?);
            let (xt, out) = (f.ty(x), f.ty(*op.results.first()?));
            if xt.rank() != out.rank() || out.rank() == 0 || low.len() != out.rank() || interior.len() != out.rank() || xt.num_elements() == 0 {
                return None;
            }
            let mut dims = Vec::new();
            for k in 0..out.rank() {
                let (n, l, step) = (xt.shape[k], low[k], interior[k].checked_add(1)?);
                let last = l.checked_add((n - 1).checked_mul(step)?)?;
                if l != 0 || step != 1 || last != out.shape[k] - 1 {
                    dims.push((k, l, last, step));
                }
            }
            let inside = match literal(&x) {
                Some(text) => Inside::Literal(text.clone()),
                None if dims.iter().all(|&(k, ..)| xt.shape[k] == 1) => Inside::Read(unit_reshaped(f, x, (0..out.rank()).map(|k| if dims.iter().any(|d| d.0 == k) { "0".to_string() } else { format!("d{k}") }).collect())),
                None => return None,
            };
            Some((op.results[0], PaddedRead { inside, outside: outside.clone(), dims }))
        })
        .collect()
}

/// `x` read through `exprs`, or the source of a reshape `x` that only adds or drops unit dims,
/// read through the same expressions of its other dims (`0` along its own unit dims): the
/// generic then reads the computed value itself, which upstream fusion computes inside it. A
/// gradient's interleaved columns (`pad` of `reshape(c)`, `c = 2 (x[:, ::2] + x[:, 1::2])`)
/// read `c` through an `expand_shape`, which kept `c`'s generic (with strided reads, not
/// expandable) out of the padded read's: `c` was written and read back.
fn unit_reshaped(f: &Func, x: Value, exprs: Vec<String>) -> ReadBroadcast {
    let Some(y) = super::defining(f, x).and_then(|op| match op.kind {
        OpKind::Layout(quabla_dialect::LayoutOp::Reshape { .. }) => op.operands.first().copied(),
        _ => None,
    }) else {
        return (x, exprs);
    };
    let (xt, yt) = (f.ty(x), f.ty(y));
    let kept = |t: &TensorType| t.shape.iter().copied().filter(|&n| n != 1).collect::<Vec<_>>();
    if kept(xt) != kept(yt) || exprs.len() != xt.rank() {
        return (x, exprs);
    }
    let mut from_x = (0..xt.rank()).filter(|&k| xt.shape[k] != 1).map(|k| exprs[k].clone());
    let ys = yt.shape.iter().map(|&n| if n == 1 { Some("0".to_string()) } else { from_x.next() }).collect::<Option<Vec<_>>>();
    match ys {
        Some(ys) => (y, ys),
        None => (x, exprs),
    }
}

/// [`PaddedRead`] `p` in a generic body over `extent`: `inside` (the operand's value) where
/// every padded dim's loop index is a position of the operand, else the padding value.
fn padded_value(e: &mut Emitter, p: &PaddedRead, d: DType, extent: &[i64], inside: String) -> String {
    let mut cond: Option<String> = None;
    for &(k, first, last, step) in &p.dims {
        let i = e.op(format!("linalg.index {k} : index"));
        let mut conds = Vec::new();
        if first > 0 {
            let c = e.index(first);
            conds.push(e.op(format!("arith.cmpi sge, {i}, {c} : index")));
        }
        if last < extent[k] - 1 {
            let c = e.index(last);
            conds.push(e.op(format!("arith.cmpi sle, {i}, {c} : index")));
        }
        if step > 1 {
            // (i - first) is non-negative wherever i >= first; below it the first compare fails.
            let (c, s, z) = (e.index(first), e.index(step), e.index(0));
            let off = e.op(format!("arith.subi {i}, {c} : index"));
            let m = e.op(format!("arith.remsi {off}, {s} : index"));
            conds.push(e.op(format!("arith.cmpi eq, {m}, {z} : index")));
        }
        for c in conds {
            cond = Some(match cond {
                None => c,
                Some(a) => e.op(format!("arith.andi {a}, {c} : i1")),
            });
        }
    }
    match cond {
        None => inside,
        Some(c) => {
            let outside = e.scalar(d, &p.outside);
            e.op(format!("arith.select {c}, {inside}, {outside} : {d}"))
        }
    }
}

/// A broadcast read in place: its source and the source's indexing expressions over the
/// result's dims (empty for a scalar source; `0` for a size-1 dim that is expanded).
pub type ReadBroadcast = (Value, Vec<String>);

/// The broadcasts of `ops` (`broadcast_in_dim` that changes the type), by result: their
/// source and its indexing expressions. An elementwise generic that uses one reads the
/// source through that map instead (a splat constant's literal is a scalar of the body), so
/// the full-size tensor is not materialised: upstream fusion leaves a broadcast with several
/// uses as a separate generic, a whole extra write and read of the array per use (the same
/// hyperparameter scaling several arrays; softmax's row sums, read by three elementwise ops
/// of its gradient: a 256x1024 f32 array written once and read three times per call).
pub fn read_broadcasts(f: &Func, ops: &[Op]) -> HashMap<Value, ReadBroadcast> {
    ops.iter()
        .filter_map(|op| match &op.kind {
            OpKind::Layout(quabla_dialect::LayoutOp::BroadcastInDim { dims, .. }) if op.operands.len() == 1 && op.results.len() == 1 => {
                let (from, to) = (f.ty(op.operands[0]), f.ty(op.results[0]));
                if from == to || to.rank() == 0 || dims.len() != from.rank() {
                    return None;
                }
                let exprs = dims.iter().enumerate().map(|(i, &d)| if from.shape[i] == 1 && to.shape[d as usize] != 1 { "0".to_string() } else { format!("d{d}") }).collect();
                Some((op.results[0], (op.operands[0], exprs)))
            }
            _ => None,
        })
        .collect()
}

/// Most elements of a value [`kept_apart`] (a broadcast's small source).
const APART_MAX_ELEMENTS: i64 = 1 << 16;

/// Sources of [`read_broadcasts`] (of at most [`APART_MAX_ELEMENTS`], seen through a reshape)
/// whose elementwise chain costs more to recompute for the broadcast's extra elements than to
/// write and read (a transcendental function broadcast to twice as many elements, a square
/// root or a division to four times; not a negation), such operands of products with
/// nothing to sum, and the vectors of transposed matrix-vector products (any cost): lowered
/// with a unit reduction loop, which upstream elementwise fusion
/// leaves alone, so that a consumer reading it through the broadcast does not recompute it
/// per element (`x / sqrt(sum(x * x, 1))` on 4096 x 256
/// f32: a million square roots instead of 4096, 175 -> 93 us, JAX 112-152).
pub fn kept_apart(f: &Func, ops: &[Op], scalars: &HashMap<Value, ReadBroadcast>, pending: &HashMap<Value, &Op>, cg: &crate::target::Codegen) -> std::collections::HashSet<Value> {
    // Each float elementwise value's cost per element ([`ElementwiseOp::scalar_cost`]) with that of the
    // producers its generic computes ([`fusible_producers`]).
    let mut cost: HashMap<Value, i64> = HashMap::new();
    for op in ops {
        let OpKind::Elementwise(k) = &op.kind else { continue };
        if op.results.len() != 1 || !f.ty(op.results[0]).dtype.is_float() && !op.operands.iter().any(|v| f.ty(*v).dtype.is_float()) {
            continue;
        }
        let inner = op.operands.iter().filter(|v| pending.contains_key(v)).filter_map(|v| cost.get(v)).fold(0i64, |a, c| a.saturating_add(*c));
        cost.insert(op.results[0], k.scalar_cost().saturating_add(inner));
    }
    // Kept apart when the consumers' extra evaluations (the broadcast's `big / n - 1` per
    // element) cost more than writing and reading it: a transcendental function from twice
    // as many elements (n-body forces: `r2 ** 1.5` of [16, 16] read as [16, 16, 3] inside
    // the sum over bodies, 5.7 us of a 6.8 us step), a division or square root from four;
    // cheaper chains (a negation: a free instruction in a loop bound by memory) fuse.
    let apart = |src: Value, big: usize| {
        let n = f.ty(src).num_elements() as i64;
        let c = cost.get(&src).copied().unwrap_or(0);
        c >= 4 && n > 0 && n <= APART_MAX_ELEMENTS && big as i64 >= 2 * n && (big as i64 / n - 1).saturating_mul(c) >= 12
    };
    // (A source reshaped first, `p[:, :, None]`, is the value it reshapes.)
    let broadcast = scalars.iter().filter_map(|(b, (src, _))| elementwise_source(f, *src).filter(|&s| apart(s, f.ty(*b).num_elements())));
    // The operands of products with nothing to sum (crate::linalg::dot's unit_k_product),
    // which read each element once per element of the other operand: `einsum("bi,bj->bij",
    // tanh(a), b)` took a tanh per element of the result.
    let unit_k = ops.iter().filter_map(|op| match &op.kind {
        OpKind::Dot(quabla_dialect::DotOp::DotGeneral { dims }) if op.operands.len() == 2 && op.results.len() == 1 => {
            let lt = f.ty(op.operands[0]);
            let k = quabla_dialect::size::saturating_product(dims.lhs_contracting_dimensions.iter().map(|&i| lt.shape.get(i as usize).copied().unwrap_or(0)));
            (k == 1).then_some(op)
        }
        _ => None,
    });
    let unit_k = unit_k.flat_map(|op| op.operands.iter().map(|&v| (elementwise_source(f, v), f.ty(op.results[0]).num_elements())).collect::<Vec<_>>());
    let unit_k = unit_k.filter_map(|(src, big)| src.filter(|&s| apart(s, big)));
    // The vector of a matrix-vector product read in place from the `[k, m]` matrix
    // (crate::linalg::dot's km_matvec), read once per row: however cheap, its producer fused
    // into the product would run m times per element.
    let km = ops.iter().filter_map(|op| match &op.kind {
        OpKind::Dot(quabla_dialect::DotOp::DotGeneral { dims }) if op.operands.len() == 2 && super::dot::transposed_matvec(cg, f.ty(op.operands[0]), f.ty(op.operands[1]), dims) => elementwise_source(f, op.operands[1]),
        _ => None,
    });
    // The inputs of reductions over arrays whose last dim is short (2 to
    // tiling::UNROLL_INNER: points of 3, a few features or classes), dear ones
    // (tiling::UNROLL_MIN_COST): fused, the chain runs inside the reduction's loops,
    // one element of the short dim at a time (scalar); apart, it is one flat loop
    // (vectorized) and the reduction reads its result. The gradient of `sum(tanh(x + b))` in
    // b over 65536 x 5 f32 457 -> ~200 us (JAX 358), `tanh(x).sum(1)` 317 -> ~90.
    let short = ops.iter().filter_map(|op| match &op.kind {
        OpKind::Reduce(quabla_dialect::ReduceOp::Reduce { .. }) | OpKind::Reduce(quabla_dialect::ReduceOp::ArgReduce { .. }) if op.operands.len() == 1 => {
            let t = f.ty(op.operands[0]);
            let last = t.shape.last().copied().unwrap_or(0);
            let big = t.num_elements() as i64 >= SHORT_APART_MIN_ELEMENTS;
            (t.rank() >= 2 && (2..=crate::tiling::UNROLL_INNER).contains(&last) && big).then(|| elementwise_source(f, op.operands[0])).flatten()
        }
        _ => None,
    });
    let short = short.filter(|s| cost.get(s).copied().unwrap_or(0) >= crate::tiling::UNROLL_MIN_COST);
    broadcast.chain(unit_k).chain(km).chain(short).collect()
}

/// The least elements of a reduction's input over short rows [`kept_apart`] (smaller ones
/// are not worth a buffer).
const SHORT_APART_MIN_ELEMENTS: i64 = 4096;

/// The value an elementwise op of `f` computes that `v` is, seen through layout ops (which
/// read it in place or fuse with it); None when `v` is no such value.
pub(crate) fn elementwise_source(f: &Func, v: Value) -> Option<Value> {
    match super::defining(f, v).map(|op| (&op.kind, op.operands.first())) {
        Some((OpKind::Elementwise(_), _)) => Some(v),
        Some((OpKind::Layout(_), Some(&x))) => elementwise_source(f, x),
        _ => None,
    }
}

/// The [`read_broadcasts`] and [`padded_reads`] that need no tensor at all: every use is an
/// elementwise op (which reads the source or computes the value instead, [`lower_fused`]) and
/// none is a block output.
pub fn unmaterialised(scalars: &HashMap<Value, ReadBroadcast>, padded: &HashMap<Value, PaddedRead>, ops: &[Op], outputs: &[Value]) -> std::collections::HashSet<Value> {
    let mut out: std::collections::HashSet<Value> = scalars.keys().chain(padded.keys()).copied().filter(|v| !outputs.contains(v)).collect();
    for op in ops {
        if !matches!(op.kind, OpKind::Elementwise(_)) {
            for v in &op.operands {
                out.remove(v);
            }
        }
    }
    out
}

/// Whether elementwise op `op` is lowered by [`lower_fused`]: it consumes a pending producer
/// a broadcast read in place or a padded read.
pub fn takes_fused(op: &Op, pending: &HashMap<Value, &Op>, reads: &Reads, deferred: &HashMap<Value, Deferred>) -> bool {
    matches!(op.kind, OpKind::Elementwise(_)) && op.operands.iter().any(|v| pending.contains_key(v) || reads.scalars.contains_key(v) || reads.padded.contains_key(v) || deferred.contains_key(v))
}

/// What elementwise generics of a block read without a tensor of the value: splat constants
/// as literals ([`splat_scalars`]), broadcasts from their sources ([`read_broadcasts`]), pads
/// from the loop indices ([`padded_reads`]).
pub struct Reads {
    pub splats: HashMap<Value, String>,
    pub scalars: HashMap<Value, ReadBroadcast>,
    pub padded: HashMap<Value, PaddedRead>,
}

/// The scalar formula of elementwise op `op` on operand scalars `a` (operand dtypes from `f`).
fn scalar(e: &mut Emitter, f: &Func, op: &Op, a: &[String]) -> Result<String, LowerError> {
    let OpKind::Elementwise(k) = &op.kind else { return Err(LowerError::Unsupported { op: op.kind.name(), rule: "fused elementwise" }) };
    let d = f.ty(op.operands[0]).dtype;
    Ok(match k {
        ElementwiseOp::Unary { op: u } => unary(e, *u, d, &a[0]),
        ElementwiseOp::Binary { op: b } => binary(e, *b, d, &a[0], &a[1]),
        ElementwiseOp::Powi { exponent } => powi(e, d, &a[0], *exponent),
        ElementwiseOp::Compare { direction } => compare(e, *direction, d, &a[0], &a[1]),
        ElementwiseOp::Select {} => {
            let t = f.ty(op.operands[1]).dtype;
            e.op(format!("arith.select {}, {}, {} : {t}", a[0], a[1], a[2]))
        }
        ElementwiseOp::Convert { to } => convert(e, d, *to, &a[0]),
    })
}

/// The ops of the DAG under `root` in post order (each once, its operands' ops first; no
/// recursion): `inner(v)` is the op of the DAG that computes operand `v`, None for a leaf, on
/// which `leaf` is called (once per use).
fn post_order<'a>(root: &'a Op, mut inner: impl FnMut(Value) -> Option<&'a Op>, mut leaf: impl FnMut(Value)) -> Vec<&'a Op> {
    let mut order: Vec<&Op> = Vec::new();
    let mut seen: std::collections::HashSet<Value> = std::collections::HashSet::new();
    let mut stack: Vec<(&Op, bool)> = vec![(root, false)];
    while let Some((op, expanded)) = stack.pop() {
        if expanded {
            order.push(op);
            continue;
        }
        if !seen.insert(op.results[0]) {
            continue;
        }
        stack.push((op, true));
        for v in op.operands.iter().rev() {
            match inner(*v) {
                Some(p) => stack.push((p, false)),
                None => leaf(*v),
            }
        }
    }
    order
}

/// The scalar formulas of `order` (a [`post_order`]) in a generic's body, each op's operands
/// from `vals` (the leaves' scalars, then each op's result as it is written).
fn evaluate(e: &mut Emitter, f: &Func, order: &[&Op], vals: &mut HashMap<Value, String>) -> Result<(), LowerError> {
    for op in order {
        let a: Vec<String> = op.operands.iter().map(|v| vals[v].clone()).collect();
        let s = scalar(e, f, op, &a)?;
        vals.insert(op.results[0], s);
    }
    Ok(())
}

/// `root` with the chain of `pending` producers that feed it, as one elementwise generic over
/// the chain's leaves (the values it uses that are not pending). The chain is a tree (each
/// pending value has one use); it is evaluated in post order without recursion. A leaf that
/// is a broadcast (`scalars`, [`read_broadcasts`]) is read from its source through the
/// broadcast's map (or is the source's literal when that is a splat constant); a padded read
/// ([`padded_reads`]) is a select on the loop indices.
///
/// The [`deferred_values`] whose root is `root` are computed in the same generic (the tree is
/// then a DAG: each op is evaluated once) and yielded as extra results, which their values
/// then name.
pub fn lower_fused(e: &mut Emitter, f: &Func, root: &Op, pending: &HashMap<Value, &Op>, reads: &Reads, deferred: &HashMap<Value, Deferred>) -> Result<String, LowerError> {
    let (splats, scalars, padded) = (&reads.splats, &reads.scalars, &reads.padded);
    let mine: HashMap<Value, &Deferred> = deferred.iter().filter(|(_, d)| d.root == root.results[0]).map(|(v, d)| (*v, d)).collect();
    // Post order of the DAG and its leaves.
    let mut leaves: Vec<Value> = Vec::new();
    let order = post_order(
        root,
        |v| pending.get(&v).copied().or_else(|| mine.get(&v).map(|d| d.op)),
        |v| {
            if !leaves.contains(&v) && !splats.contains_key(&v) && !padded.contains_key(&v) {
                leaves.push(v);
            }
        },
    );
    let out = f.ty(root.results[0]).clone();
    // The deferred values this generic yields, in evaluation order (rank > 0: see deferred_values).
    let extra: Vec<Value> = order.iter().map(|op| op.results[0]).filter(|v| mine.get(v).is_some_and(|d| d.yielded)).collect();
    // Broadcasts: a splat source is a literal (no operand), another one an operand.
    let mut literal: HashMap<Value, String> = HashMap::new();
    let mut ins_of: Vec<Value> = Vec::new();
    if out.rank() > 0 {
        leaves.retain(|v| match scalars.get(v) {
            Some((src, _)) => {
                match splats.get(src) {
                    Some(text) => {
                        literal.insert(*v, text.clone());
                    }
                    None => ins_of.push(*v),
                }
                false
            }
            None => true,
        });
    }
    let n_full = leaves.len();
    // One operand per (source, map): two broadcasts of one source along the same dims share it.
    let mut srcs: Vec<&ReadBroadcast> = Vec::new();
    // The padded reads of the chain (in order of use), their operands read in place.
    let mut pads: Vec<Value> = Vec::new();
    for v in order.iter().flat_map(|op| &op.operands) {
        if padded.contains_key(v) && !pads.contains(v) {
            pads.push(*v);
        }
    }
    let reads_of_pads = pads.iter().filter_map(|v| match &padded[v].inside {
        Inside::Read(r) => Some(r),
        Inside::Literal(_) => None,
    });
    for s in ins_of.iter().map(|v| &scalars[v]).chain(reads_of_pads) {
        if !srcs.contains(&s) {
            srcs.push(s);
        }
    }
    let mut ins: Vec<(String, TensorType)> = leaves.iter().map(|v| (e.name(*v), f.ty(*v).clone())).collect();
    ins.extend(srcs.iter().map(|(v, _)| (e.name(*v), f.ty(*v).clone())));
    let mut err = None;
    let mut body = |e: &mut Emitter, args: &[String]| {
        let mut vals: HashMap<Value, String> = leaves.iter().copied().zip(args.iter().cloned()).collect();
        for v in &ins_of {
            let k = srcs.iter().position(|s| **s == scalars[v]).unwrap_or(0);
            vals.insert(*v, args[n_full + k].clone());
        }
        for (v, text) in &literal {
            let s = e.scalar(f.ty(*v).dtype, text);
            vals.insert(*v, s);
        }
        // Padded reads from the loop indices (the generic's loops are the result's dims).
        for v in &pads {
            let p = &padded[v];
            let d = f.ty(*v).dtype;
            let inside = match &p.inside {
                Inside::Read(r) => args[n_full + srcs.iter().position(|s| *s == r).unwrap_or(0)].clone(),
                Inside::Literal(text) => e.scalar(d, text),
            };
            let s = padded_value(e, p, d, &out.shape, inside);
            vals.insert(*v, s);
        }
        // Splat constants become scalars of the body (not operands of the generic).
        for op in &order {
            for v in &op.operands {
                if let (Some(text), false) = (splats.get(v), vals.contains_key(v)) {
                    let s = e.scalar(f.ty(*v).dtype, text);
                    vals.insert(*v, s);
                }
            }
        }
        if let Err(x) = evaluate(e, f, &order, &mut vals) {
            err = Some(x);
            return vec![String::new(); 1 + extra.len()];
        }
        let mut ys = vec![vals.remove(&root.results[0]).unwrap_or_default()];
        ys.extend(extra.iter().map(|v| vals.get(v).cloned().unwrap_or_default()));
        ys
    };
    let r = if srcs.is_empty() && extra.is_empty() {
        elementwise(e, &ins, &out, |e, a| body(e, a).remove(0))
    } else {
        // Full-size leaves through the identity map, broadcast sources through theirs (`()`
        // for a scalar); the root's result, then the deferred values.
        let r = out.rank();
        // A value kept apart (kept_apart) gets a unit reduction loop after its own, as
        // super::unfused_generic writes it: upstream fusion leaves it out of its consumers.
        let apart = e.apart && extra.is_empty() && r > 0;
        let loops = r + usize::from(apart);
        let dims: Vec<String> = (0..r).map(|i| format!("d{i}")).collect();
        let mut ops: Vec<Operand> = ins.iter().enumerate().map(|(i, (n, t))| Operand::new(n.clone(), t, if i < n_full { map(loops, &dims) } else { map(loops, &srcs[i - n_full].1) })).collect();
        let n_ins = ops.len();
        let mut iters = vec![Iter::Parallel; r];
        if apart {
            let ut = TensorType::new(out.dtype, [1]);
            let u = e.empty(&ut);
            ops.push(Operand::new(u, &ut, map(loops, &[format!("d{r}")])));
            iters.push(Iter::Reduction);
        }
        let mut outs = vec![];
        for t in std::iter::once(&out).chain(extra.iter().map(|v| f.ty(*v))) {
            let init = e.empty(t);
            outs.push(Operand::new(init, t, map(loops, &dims)));
        }
        let mut names = generic(e, &iters, &ops, &outs, |e, a| body(e, &a[..n_ins]));
        for (v, n) in extra.iter().zip(names.drain(1..)) {
            e.alias(*v, n);
        }
        names.remove(0)
    };
    match err {
        Some(x) => Err(x),
        None => Ok(r),
    }
}

/// A leaf of a [`Tree`].
enum Leaf {
    /// A value of the tree's shape with a buffer of its own.
    Buffer,
    /// A 0-d value read as a scalar: a splat constant (itself) or a broadcast's 0-d operand.
    Scalar(Value),
    /// A broadcast along the leading dims of this value of the tree's last dims.
    Row(Value),
}

/// A tree of elementwise ops computing a value that a reduction reads ([`tree`]).
pub struct Tree<'a> {
    v: Value,
    order: Vec<&'a Op>,
    leaves: Vec<(Value, Leaf)>,
}

impl Tree<'_> {
    /// The rank of the rows the tree reads broadcast along its leading dims (the first one's),
    /// if it reads any.
    pub fn row_rank(&self, f: &Func) -> Option<usize> {
        self.leaves.iter().find_map(|(_, l)| match l {
            Leaf::Row(src) => Some(f.ty(*src).rank()),
            _ => None,
        })
    }
}

/// The tree of elementwise ops that computes `v` (of `f`), for a reduction of `v` that may
/// read it as a view with dims collapsed ([`tree_view`]); None when `v` is computed otherwise.
/// The tree's inner values are used only by the tree (a DAG); its leaves are values of `v`'s
/// shape that are buffers (parameters of `f`, results of the ops
/// [`super::reduce::read_in_place`] names), 0-d values (splat constants, broadcasts of 0-d
/// values) and broadcasts along the leading dims of values of `v`'s last dims (one dim, or a
/// buffer).
pub fn tree(f: &Func, v: Value) -> Option<Tree<'_>> {
    let vt = f.ty(v);
    let r = vt.rank();
    let mut uses: HashMap<Value, usize> = HashMap::new();
    quabla_dialect::walk_ops(&f.ops, &mut |op| {
        for w in &op.operands {
            *uses.entry(*w).or_default() += 1;
        }
    });
    for w in &f.outputs {
        *uses.entry(*w).or_default() += 1;
    }
    let inner = |w: Value| -> Option<&Op> {
        let op = super::defining(f, w)?;
        let tree = matches!(op.kind, OpKind::Elementwise(_)) && op.results.len() == 1 && op.regions.is_empty() && op.operands.iter().all(|x| f.ty(*x).shape == vt.shape);
        tree.then_some(op)
    };
    let root = inner(v).filter(|_| uses.get(&v) == Some(&1))?;
    let buffer = |w: &Value| f.params.contains(w) || (super::defining(f, *w).is_some() && super::reduce::read_in_place(f, *w));
    let mut leaves: Vec<(Value, Leaf)> = Vec::new();
    let mut refused = false;
    let order = post_order(root, inner, |w| {
        if refused || leaves.iter().any(|(l, _)| *l == w) {
            return;
        }
        let leaf = if buffer(&w) {
            Some(Leaf::Buffer)
        } else {
            match super::defining(f, w).map(|d| (&d.kind, d.operands.first().copied())) {
                Some((OpKind::Layout(quabla_dialect::LayoutOp::BroadcastInDim { dims, .. }), Some(src))) => {
                    let st = f.ty(src);
                    let j = st.rank();
                    if j == 0 {
                        Some(Leaf::Scalar(src))
                    } else if j < r && dims.iter().copied().eq(r as i64 - j as i64..r as i64) && st.shape[..] == vt.shape[r - j..] && (j == 1 || buffer(&src)) {
                        Some(Leaf::Row(src))
                    } else {
                        None
                    }
                }
                Some((OpKind::Constant(quabla_dialect::ConstantOp::Constant { value }), _)) if value.is_splat() && !value.is_empty() => Some(Leaf::Scalar(w)),
                _ => None,
            }
        };
        match leaf {
            Some(l) => leaves.push((w, l)),
            None => refused = true,
        }
    });
    if refused {
        return None;
    }
    // Every use of an inner value is the tree's (a DAG: `c * c`), or it is materialized anyway.
    let mut within: HashMap<Value, usize> = HashMap::new();
    for w in order.iter().flat_map(|op| &op.operands) {
        *within.entry(*w).or_default() += 1;
    }
    if order.iter().any(|op| op.results[0] != v && within.get(&op.results[0]) != uses.get(&op.results[0])) {
        return None;
    }
    Some(Tree { v, order, leaves })
}

/// `tree` computed as one generic over a view of its value with its dims collapsed into
/// `groups` (adjacent runs, in order), for a reduction that then runs over fewer, longer dims
/// ([`super::reduce`]): its name and type. Buffers are read through views of their own
/// ([`super::collapsed_view`]: a reshape of the tensor itself would be undone by upstream
/// fusion, which expands the tree back to the reshape's source shape and leaves it
/// unfused), 0-d values as scalars, rows through views of their dims' groups. None (nothing
/// emitted) when a row's dims are not whole groups.
pub fn tree_view(e: &mut Emitter, f: &Func, tree: &Tree, groups: &[Vec<usize>]) -> Option<Result<(String, TensorType), LowerError>> {
    let vt = f.ty(tree.v).clone();
    let r = vt.rank();
    let prod = |d: &[usize]| quabla_dialect::size::saturating_product(d.iter().map(|&i| vt.shape[i]));
    let view = TensorType::new(vt.dtype, groups.iter().map(|g| prod(g)).collect::<Vec<_>>());
    let vr = view.rank();
    // The view dim from which each row rank's dims are whole groups.
    let row_from = |j: usize| groups.iter().position(|g| g[0] == r - j);
    if tree.leaves.iter().any(|(_, l)| matches!(l, Leaf::Row(src) if row_from(f.ty(*src).rank()).is_none())) {
        return None;
    }
    let mut ins: Vec<Operand> = Vec::new();
    for (w, leaf) in &tree.leaves {
        match leaf {
            Leaf::Buffer => {
                let t = TensorType::new(f.ty(*w).dtype, view.shape.clone());
                let x = super::collapsed_view(e, &e.name(*w), f.ty(*w), &t);
                ins.push(Operand::new(x, &t, identity(vr)));
            }
            Leaf::Scalar(src) => {
                let (x, t) = match f.ty(*src).rank() {
                    0 => (e.name(*src), f.ty(*src).clone()),
                    _ => super::splat_scalar(e, f, *src)?,
                };
                ins.push(Operand::new(x, &t, map(vr, &[])));
            }
            Leaf::Row(src) => {
                let st = f.ty(*src);
                let from = row_from(st.rank())?;
                let t = TensorType::new(st.dtype, view.shape[from..].to_vec());
                let x = super::collapsed_view(e, &e.name(*src), st, &t);
                let dims: Vec<String> = (from..vr).map(|i| format!("d{i}")).collect();
                ins.push(Operand::new(x, &t, map(vr, &dims)));
            }
        }
    }
    let out = view;
    let init = e.empty(&out);
    let mut err = None;
    let res = generic(e, &vec![Iter::Parallel; vr], &ins, &[Operand::new(init, &out, identity(vr))], |e, a| {
        let mut vals: HashMap<Value, String> = tree.leaves.iter().map(|(w, _)| *w).zip(a.iter().cloned()).collect();
        if let Err(x) = evaluate(e, f, &tree.order, &mut vals) {
            err = Some(x);
            return vec![String::new()];
        }
        vec![vals.remove(&tree.v).unwrap_or_default()]
    })
    .remove(0);
    Some(match err {
        Some(x) => Err(x),
        None => Ok((res, out)),
    })
}

/// Lowers one op of this family, returning its result's name (exhaustive over the family).
pub fn lower(e: &mut Emitter, f: &Func, o: &Op, op: &ElementwiseOp) -> Result<String, LowerError> {
    match op {
        ElementwiseOp::Unary { op: u } => lower_unary(e, f, o, *u),
        ElementwiseOp::Binary { op: b } => lower_binary(e, f, o, *b),
        ElementwiseOp::Powi { exponent } => lower_powi(e, f, o, *exponent),
        ElementwiseOp::Compare { direction: dir} => lower_compare(e, f, o, *dir),
        ElementwiseOp::Select {} => lower_select(e, f, o),
        ElementwiseOp::Convert { to } => lower_convert(e, f, o, *to),
    }
}

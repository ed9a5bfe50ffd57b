//! Elementwise ops as `mx` calls: one table arm per unary/binary op. Where MLX's own op
//! differs from docs/spec.md (integer division and remainder, C `fmod`, shifts past the
//! width, `sign` of NaN and -0.0, max/min of signed zeros, saturating float -> int converts,
//! `logaddexp`'s NaN rule, `powi`; float64 `exp`, `sin`, `cos`, `logistic`, whose MLX CPU
//! kernels are only float32-accurate) the expression calls a `q.*` helper of quabla/_mlx.py
//! that writes quabla's semantics with `mx` ops. Ops with no faithful MLX form (`cbrt`, `erfc`,
//! `lgamma`, `digamma`, `population_count`) (and float64 `erf`) are `Unsupported`.
use quabla_dialect::{BinaryOp, CmpDir, DType, ElementwiseOp, Func, Op, UnaryOp};

use super::{dtype, name, unsupported, Emitter};
use crate::LowerError;

/// `unary(a)` for an operand of dtype `d`.
fn unary(op: UnaryOp, a: &str, d: DType) -> Option<String> {
    let f = |n: &str| Some(format!("mx.{n}({a})"));
    // MLX's CPU float64 exp, sin, cos and sigmoid are float32-accurate approximations (relative
    // errors 3e-7 to 5e-6, measured): float64 uses q.*64 formulas over MLX's accurate float64
    // sinh/cosh/tan; its erf has no accurate form and is a gap.
    let f64 = d == DType::F64;
    let q64 = |n: &str| Some(format!("q.{n}64({a})"));
    match op {
        UnaryOp::Exp if f64 => q64("exp"),
        UnaryOp::Sin if f64 => q64("sin"),
        UnaryOp::Cos if f64 => q64("cos"),
        UnaryOp::Logistic if f64 => q64("sigmoid"),
        UnaryOp::Erf if f64 => None,
        UnaryOp::Neg => if d.is_unsigned() { Some(format!("mx.subtract(mx.zeros_like({a}), {a})")) } else { f("negative") },
        UnaryOp::Abs => if d.is_unsigned() { Some(a.to_string()) } else { f("abs") },
        UnaryOp::Sign => Some(format!("q.sign({a})")),
        UnaryOp::Exp => f("exp"),
        UnaryOp::Exp2 => Some(format!("mx.power(mx.array(2, {}), {a})", dtype(d))),
        UnaryOp::Expm1 => f("expm1"),
        UnaryOp::Log => f("log"),
        UnaryOp::Log1p => f("log1p"),
        UnaryOp::Sin => f("sin"),
        UnaryOp::Cos => f("cos"),
        UnaryOp::Tan => f("tan"),
        UnaryOp::Tanh => f("tanh"),
        UnaryOp::Logistic => f("sigmoid"),
        UnaryOp::Sqrt => f("sqrt"),
        UnaryOp::Rsqrt => f("rsqrt"),
        UnaryOp::Floor => f("floor"),
        UnaryOp::Ceil => f("ceil"),
        UnaryOp::Round => f("round"),
        UnaryOp::Erf => f("erf"),
        UnaryOp::Not => if d == DType::I1 { f("logical_not") } else { f("bitwise_invert") },
        UnaryOp::IsFinite => f("isfinite"),
        UnaryOp::Sinh => f("sinh"),
        UnaryOp::Cosh => f("cosh"),
        UnaryOp::Asin => f("arcsin"),
        UnaryOp::Acos => f("arccos"),
        UnaryOp::Atan => f("arctan"),
        UnaryOp::Asinh => f("arcsinh"),
        UnaryOp::Acosh => f("arccosh"),
        UnaryOp::Atanh => f("arctanh"),
        UnaryOp::ErfInv => f("erfinv"),
        // No MLX op, and the obvious compositions are not within the spec's accuracy.
        UnaryOp::Cbrt | UnaryOp::Erfc | UnaryOp::Lgamma | UnaryOp::Digamma | UnaryOp::PopulationCount => None,
    }
}

/// `binary(a, b)` for operands of dtype `d`.
fn binary(op: BinaryOp, a: &str, b: &str, d: DType) -> Option<String> {
    let f = |n: &str| Some(format!("mx.{n}({a}, {b})"));
    let q = |n: &str| Some(format!("q.{n}({a}, {b})"));
    let bool_or = |logical: &str, bitwise: &str| if d == DType::I1 { f(logical) } else { f(bitwise) };
    match op {
        BinaryOp::Add => f("add"),
        BinaryOp::Sub => f("subtract"),
        BinaryOp::Mul => f("multiply"),
        BinaryOp::Div => if d.is_float() { f("divide") } else { q("int_div") },
        BinaryOp::Rem => if d.is_float() { q("fmod") } else { q("int_rem") },
        BinaryOp::Max => match d {
            DType::I1 => f("logical_or"),
            _ if d.is_float() => q("fmax"),
            _ => f("maximum"),
        },
        BinaryOp::Min => match d {
            DType::I1 => f("logical_and"),
            _ if d.is_float() => q("fmin"),
            _ => f("minimum"),
        },
        BinaryOp::Pow => f("power"),
        BinaryOp::Atan2 => f("arctan2"),
        BinaryOp::Logaddexp => q("logaddexp"),
        BinaryOp::And => bool_or("logical_and", "bitwise_and"),
        BinaryOp::Or => bool_or("logical_or", "bitwise_or"),
        BinaryOp::Xor => bool_or("not_equal", "bitwise_xor"),
        BinaryOp::ShiftLeft => q("shift_left"),
        BinaryOp::ShiftRightLogical => q("shift_right_logical"),
        BinaryOp::ShiftRightArithmetic => q("shift_right_arithmetic"),
    }
}

/// `mx.<cmp>(a, b)`: ordered comparisons, unordered `ne`, as MLX (and NumPy) compare.
fn compare(dir: CmpDir, a: &str, b: &str) -> String {
    let n = match dir {
        CmpDir::Eq => "equal",
        CmpDir::Ne => "not_equal",
        CmpDir::Lt => "less",
        CmpDir::Le => "less_equal",
        CmpDir::Gt => "greater",
        CmpDir::Ge => "greater_equal",
    };
    format!("mx.{n}({a}, {b})")
}

/// Lowers one op of this family (exhaustive over the family).
pub fn lower(_e: &mut Emitter, f: &Func, o: &Op, op: &ElementwiseOp) -> Result<String, LowerError> {
    let arg = |i: usize| name(o.operands[i]);
    let d = f.ty(o.operands[0]).dtype;
    let gap = || unsupported(o.kind.name());
    match op {
        ElementwiseOp::Unary { op } => unary(*op, &arg(0), d).ok_or_else(gap),
        ElementwiseOp::Binary { op } => binary(*op, &arg(0), &arg(1), d).ok_or_else(gap),
        ElementwiseOp::Powi { exponent } => Ok(format!("q.powi({}, {exponent})", arg(0))),
        ElementwiseOp::Compare { direction } => Ok(compare(*direction, &arg(0), &arg(1))),
        ElementwiseOp::Select {} => Ok(format!("mx.where({}, {}, {})", arg(0), arg(1), arg(2))),
        ElementwiseOp::Convert { to } => Ok(format!("q.convert({}, {})", arg(0), dtype(*to))),
    }
}

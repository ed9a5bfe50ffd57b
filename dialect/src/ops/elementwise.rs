//! Elementwise ops: unary, binary, `powi`, `compare`, `select`, `convert`.
//! Invariants: operands of a binary op have identical types (broadcasting is explicit,
//! through `broadcast_in_dim`); the result has the operands' shape.
use crate::error::{Expected, Result, Violation};
use crate::ops::table::op_family;
use crate::types::{DType, TensorType};

op_family! {
    /// Elementwise ops (docs/spec.md, elementwise): one table line per op, unary and binary
    /// ops named by their own tables below.
    pub enum ElementwiseOp : Elementwise {
        Unary = _, operands 1, regions 0, irdl { op: UnaryOp [name] },
        Binary = _, operands 2, regions 0, irdl { op: BinaryOp [name] },
        Powi = "powi", operands 1, regions 0, irdl { exponent: i64 [attr] },
        Compare = "compare", operands 2, regions 0, irdl { direction: CmpDir [attr] },
        Select = "select", operands 3, regions 0, irdl {},
        Convert = "convert", operands 1, regions 0, irdl { to: DType [dtype] },
    }
}

impl ElementwiseOp {
    /// The shape/dtype rule (operand count already checked).
    pub fn infer(&self, xs: &[&TensorType]) -> Result<TensorType> {
        match self {
            ElementwiseOp::Unary { op } => infer_unary(*op, xs[0]),
            ElementwiseOp::Binary { op } => infer_binary(*op, xs[0], xs[1]),
            ElementwiseOp::Powi { .. } => infer_powi(xs[0]),
            ElementwiseOp::Compare { .. } => infer_compare(xs[0], xs[1]),
            ElementwiseOp::Select {} => infer_select(xs[0], xs[1], xs[2]),
            ElementwiseOp::Convert { to } => infer_convert(xs[0], *to),
        }
    }

    /// Work units of one evaluation in a loop body: 1 for what is one or two instructions, 4
    /// for a division or square root, 16 for a transcendental function (the scale of the CPU
    /// lowering's loop costs, where reading or writing an element costs 2).
    pub fn scalar_cost(&self) -> i64 {
        match self {
            ElementwiseOp::Unary { op } => match op {
                UnaryOp::Neg | UnaryOp::Abs | UnaryOp::Sign | UnaryOp::Floor | UnaryOp::Ceil | UnaryOp::Round | UnaryOp::Not | UnaryOp::IsFinite | UnaryOp::PopulationCount => 1,
                UnaryOp::Sqrt | UnaryOp::Rsqrt => 4,
                UnaryOp::Exp | UnaryOp::Exp2 | UnaryOp::Expm1 | UnaryOp::Log | UnaryOp::Log1p | UnaryOp::Sin | UnaryOp::Cos | UnaryOp::Tan | UnaryOp::Tanh | UnaryOp::Logistic | UnaryOp::Erf | UnaryOp::Sinh | UnaryOp::Cosh | UnaryOp::Asin | UnaryOp::Acos | UnaryOp::Atan | UnaryOp::Asinh | UnaryOp::Acosh | UnaryOp::Atanh | UnaryOp::Cbrt | UnaryOp::Erfc | UnaryOp::ErfInv | UnaryOp::Lgamma | UnaryOp::Digamma => 16,
            },
            ElementwiseOp::Binary { op } => match op {
                BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Max | BinaryOp::Min | BinaryOp::And | BinaryOp::Or | BinaryOp::Xor | BinaryOp::ShiftLeft | BinaryOp::ShiftRightLogical | BinaryOp::ShiftRightArithmetic => 1,
                BinaryOp::Div | BinaryOp::Rem => 4,
                BinaryOp::Pow | BinaryOp::Atan2 | BinaryOp::Logaddexp => 16,
            },
            // Square and multiply: two multiplies per bit, and a division for a negative exponent.
            ElementwiseOp::Powi { exponent } => 2 * i64::from(64 - exponent.unsigned_abs().leading_zeros()).max(1) + if *exponent < 0 { 4 } else { 0 },
            ElementwiseOp::Compare { .. } | ElementwiseOp::Select {} | ElementwiseOp::Convert { .. } => 1,
        }
    }
}

/// The most work units per element ([`ElementwiseOp::scalar_cost`], summed over a chain) a
/// value with several uses may cost for its consumers to recompute it instead of reading it
/// from memory. Materialising it costs a write and a read per consumer loop (2 units each,
/// more once the arrays outgrow the caches); a handful of adds and multiplies is cheaper than
/// that, a transcendental function is not.
pub const RECOMPUTE_COST: i64 = 8;

/// The dtype classes an elementwise op accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DClass {
    /// f32, f64
    Float,
    /// f32, f64, i32, i64, ui8, ui32
    Numeric,
    /// i1, i32, i64, ui8, ui32
    Logical,
    /// i32, i64, ui8, ui32 (shifts, population_count)
    Integer,
    /// everything
    Any,
}

impl DClass {
    pub fn admits(self, d: DType) -> bool {
        match self {
            DClass::Float => d.is_float(),
            DClass::Numeric => d.is_numeric(),
            DClass::Logical => !d.is_float(),
            DClass::Integer => d.is_int(),
            DClass::Any => true,
        }
    }
    /// The admitted element types.
    pub fn dtypes(self) -> &'static [DType] {
        match self {
            DClass::Float => &[DType::F32, DType::F64],
            DClass::Numeric => &[DType::F32, DType::F64, DType::I32, DType::I64, DType::U8, DType::U32],
            DClass::Logical => &[DType::I1, DType::I32, DType::I64, DType::U8, DType::U32],
            DClass::Integer => &[DType::I32, DType::I64, DType::U8, DType::U32],
            DClass::Any => &DType::ALL,
        }
    }
    pub fn describe(self) -> &'static str {
        match self {
            DClass::Float => "a float type (f32, f64)",
            DClass::Numeric => "a numeric type (f32, f64, i32, i64, ui8, ui32)",
            DClass::Logical => "a bool or integer type (i1, i32, i64, ui8, ui32)",
            DClass::Integer => "an integer type (i32, i64, ui8, ui32)",
            DClass::Any => "any type",
        }
    }
}

/// One line per op: variant, op name, the dtype class it accepts and, for predicates, `-> Bool`
/// (the result is i1 of the operand's shape; otherwise it has the operand's type).
macro_rules! elementwise_table {
    (@bool) => { false };
    (@bool Bool) => { true };
    ($enum:ident { $($v:ident => $name:literal, $class:ident $(-> $res:ident)?;)* }) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $enum { $($v,)* }
        impl $enum {
            pub const ALL: &'static [$enum] = &[$($enum::$v,)*];
            pub fn name(self) -> &'static str { match self { $($enum::$v => $name,)* } }
            pub fn class(self) -> DClass { match self { $($enum::$v => DClass::$class,)* } }
            /// True for predicates (`is_finite`): the result is i1.
            pub fn bool_result(self) -> bool { match self { $($enum::$v => elementwise_table!(@bool $($res)?),)* } }
            pub fn from_name(s: &str) -> Option<Self> { match s { $($name => Some($enum::$v),)* _ => None } }
        }
    };
}

elementwise_table!(UnaryOp {
    Neg => "neg", Numeric;
    Abs => "abs", Numeric;
    Sign => "sign", Numeric;
    Exp => "exp", Float;
    Exp2 => "exp2", Float;
    Expm1 => "expm1", Float;
    Log => "log", Float;
    Log1p => "log1p", Float;
    Sin => "sin", Float;
    Cos => "cos", Float;
    Tan => "tan", Float;
    Tanh => "tanh", Float;
    Logistic => "logistic", Float;
    Sqrt => "sqrt", Float;
    Rsqrt => "rsqrt", Float;
    Floor => "floor", Float;
    Ceil => "ceil", Float;
    Round => "round", Float;
    Erf => "erf", Float;
    Not => "not", Logical;
    IsFinite => "is_finite", Float -> Bool;
    PopulationCount => "population_count", Integer;
    Sinh => "sinh", Float;
    Cosh => "cosh", Float;
    Asin => "asin", Float;
    Acos => "acos", Float;
    Atan => "atan", Float;
    Asinh => "asinh", Float;
    Acosh => "acosh", Float;
    Atanh => "atanh", Float;
    Cbrt => "cbrt", Float;
    Erfc => "erfc", Float;
    ErfInv => "erf_inv", Float;
    Lgamma => "lgamma", Float;
    Digamma => "digamma", Float;
});

elementwise_table!(BinaryOp {
    Add => "add", Numeric;
    Sub => "sub", Numeric;
    Mul => "mul", Numeric;
    Div => "div", Numeric;
    Rem => "rem", Numeric;
    Max => "max", Any;
    Min => "min", Any;
    Pow => "pow", Float;
    Atan2 => "atan2", Float;
    Logaddexp => "logaddexp", Float;
    And => "and", Logical;
    Or => "or", Logical;
    Xor => "xor", Logical;
    ShiftLeft => "shift_left", Integer;
    ShiftRightLogical => "shift_right_logical", Integer;
    ShiftRightArithmetic => "shift_right_arithmetic", Integer;
});

/// Comparison direction of `quabla.compare`. Float comparisons are ordered (false on NaN)
/// except `ne`, which is unordered (true on NaN), as in NumPy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpDir {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CmpDir {
    pub const ALL: [CmpDir; 6] = [CmpDir::Eq, CmpDir::Ne, CmpDir::Lt, CmpDir::Le, CmpDir::Gt, CmpDir::Ge];
    pub fn name(self) -> &'static str {
        match self {
            CmpDir::Eq => "eq",
            CmpDir::Ne => "ne",
            CmpDir::Lt => "lt",
            CmpDir::Le => "le",
            CmpDir::Gt => "gt",
            CmpDir::Ge => "ge",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        CmpDir::ALL.into_iter().find(|d| d.name() == s)
    }
}

/// `unary_c1`: the operand's dtype is in the op's class. The result type equals the operand's.
pub fn infer_unary(op: UnaryOp, x: &TensorType) -> Result<TensorType> {
    if !op.class().admits(x.dtype) {
        return Violation::new(op.name(), "unary_c1", format!("operand type {x} is not {}", op.class().describe())).types(0, Expected::DTypes(op.class().dtypes()), x).dtype_err();
    }
    Ok(if op.bool_result() { x.with_dtype(DType::I1) } else { x.clone() })
}

/// A "same type" rule (`binary_c1`, `compare_c1`, `select_c2`): operand `index` of type `got`
/// should have type `want`. A dtype error when the element types differ, else a shape error.
fn same_type(v: Violation, index: usize, want: &TensorType, got: &TensorType) -> Result<TensorType> {
    let v = v.types(index, Expected::Type(want.clone()), got);
    if want.dtype != got.dtype {
        v.dtype_err()
    } else {
        v.shape_err()
    }
}

/// `binary_c1`: both operands have the same type; `binary_c2`: the dtype is in the op's class.
pub fn infer_binary(op: BinaryOp, a: &TensorType, b: &TensorType) -> Result<TensorType> {
    if a != b {
        return same_type(Violation::new(op.name(), "binary_c1", format!("operand types differ: lhs {a}, rhs {b} (broadcast explicitly with broadcast_in_dim)")), 1, a, b);
    }
    if !op.class().admits(a.dtype) {
        return Violation::new(op.name(), "binary_c2", format!("operand type {a} is not {}", op.class().describe())).types(0, Expected::DTypes(op.class().dtypes()), a).dtype_err();
    }
    Ok(if op.bool_result() { a.with_dtype(DType::I1) } else { a.clone() })
}

/// `powi_c1`: the base is numeric. Result type = base type.
pub fn infer_powi(x: &TensorType) -> Result<TensorType> {
    if !x.dtype.is_numeric() {
        return Violation::new("powi", "powi_c1", format!("base type {x} is not numeric")).types(0, Expected::DTypes(DClass::Numeric.dtypes()), x).dtype_err();
    }
    Ok(x.clone())
}

/// `compare_c1`: same operand types. Result: i1 of the operands' shape.
pub fn infer_compare(a: &TensorType, b: &TensorType) -> Result<TensorType> {
    if a != b {
        return same_type(Violation::new("compare", "compare_c1", format!("operand types differ: lhs {a}, rhs {b}")), 1, a, b);
    }
    Ok(a.with_dtype(DType::I1))
}

/// `select_c1`: the predicate is i1; `select_c2`: on_true and on_false have the same type;
/// `select_c3`: the predicate has their shape.
pub fn infer_select(p: &TensorType, t: &TensorType, f: &TensorType) -> Result<TensorType> {
    if p.dtype != DType::I1 {
        return Violation::new("select", "select_c1", format!("predicate type {p} is not i1")).types(0, Expected::DTypes(&[DType::I1]), p).dtype_err();
    }
    if t != f {
        return same_type(Violation::new("select", "select_c2", format!("branch types differ: on_true {t}, on_false {f}")), 2, t, f);
    }
    if p.shape != t.shape {
        return Violation::new("select", "select_c3", format!("predicate shape {p} differs from branch shape {t}")).types(0, Expected::Shape(t.shape.clone()), p).shape_err();
    }
    Ok(t.clone())
}

/// `convert`: any dtype to any dtype, same shape.
pub fn infer_convert(x: &TensorType, to: DType) -> Result<TensorType> {
    Ok(x.with_dtype(to))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::DialectError;

    fn t(d: DType, s: &[i64]) -> TensorType {
        TensorType::new(d, s)
    }

    #[test]
    fn a_dtype_mix_is_a_dtype_error_and_a_shape_mismatch_a_shape_error() {
        let (a, b) = (t(DType::F32, &[2]), t(DType::F64, &[2]));
        let DialectError::DType(v) = infer_binary(BinaryOp::Add, &a, &b).unwrap_err() else { panic!("expected a dtype error") };
        assert_eq!((v.op, v.constraint, v.operand), ("add", "binary_c1", Some(1)));
        assert_eq!((v.expected, v.actual), (Some(Expected::Type(a.clone())), Some(b)));
        let c = t(DType::F32, &[3]);
        let e = infer_binary(BinaryOp::Add, &a, &c).unwrap_err();
        assert!(matches!(&e, DialectError::Shape(v) if v.constraint == "binary_c1" && v.operand == Some(1)));
        assert_eq!(e.to_string(), "'quabla.add' op (binary_c1): operand types differ: lhs tensor<2xf32>, rhs tensor<3xf32> (broadcast explicitly with broadcast_in_dim)");
        assert!(matches!(infer_compare(&a, &t(DType::F64, &[2])), Err(DialectError::DType(_))));
        assert!(matches!(infer_compare(&a, &c), Err(DialectError::Shape(_))));
    }

    #[test]
    fn class_violations_are_dtype_errors() {
        let f = t(DType::F64, &[2, 3]);
        let DialectError::DType(v) = infer_binary(BinaryOp::And, &f, &f).unwrap_err() else { panic!("expected a dtype error") };
        assert_eq!((v.constraint, v.operand, v.expected), ("binary_c2", Some(0), Some(Expected::DTypes(&[DType::I1, DType::I32, DType::I64, DType::U8, DType::U32]))));
        assert!(matches!(infer_unary(UnaryOp::Exp, &t(DType::I32, &[2])), Err(DialectError::DType(v)) if v.constraint == "unary_c1"));
        assert!(matches!(infer_powi(&t(DType::I1, &[2])), Err(DialectError::DType(_))));
        let p = t(DType::I1, &[2]);
        assert!(matches!(infer_select(&f, &f, &f), Err(DialectError::DType(v)) if v.constraint == "select_c1"));
        assert!(matches!(infer_select(&p, &t(DType::F32, &[2]), &t(DType::F64, &[2])), Err(DialectError::DType(v)) if v.operand == Some(2)));
        assert!(matches!(infer_select(&p, &f, &f), Err(DialectError::Shape(v)) if v.constraint == "select_c3"));
    }
}

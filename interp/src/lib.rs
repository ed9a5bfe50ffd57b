//! The reference interpreter: naive, obviously correct loops over host buffers, one file per
//! op family (the same names as `dialect/src/ops/`). It is the oracle every lowering is checked
//! against and the evaluator of constant folding, so it follows docs/spec.md to the bit.
//!
//! Invariants: result types always come from `OpKind::infer` (so a shape-rule violation is an
//! error here too, with the rule's label); floats are computed at their own width (an f32 op
//! rounds to f32 after each operation); integers are computed in i64 with wrapping arithmetic
//! and wrapped to their width when written back (i32 wraps at 32 bits); i1 is `bool`.
//! Helpers shared by the families (element decoding, multi-indices, element moves) live here.
//!
//! The crate also owns [`Buffer`], the host array type the interpreter computes on (and the
//! executors exchange); it depends only on `quabla-dialect`, so `quabla-passes` can fold
//! constants without the JIT runtime.
pub mod buffer;
mod call;
pub mod callback;
pub mod collective;
mod constant;
mod control;
mod dot;
mod elementwise;
mod special;
mod layout;
pub mod linalg;
mod reduce;
mod slicing;
mod scatter;
mod convolution;
mod reduce_window;
mod sort;

use std::ops::{Add, Div, Mul, Neg, Rem, Sub};

use quabla_dialect::{CallOp, DType, DialectError, Module, OpKind, TensorType};
use thiserror::Error;

pub use crate::buffer::{Buffer, BufferError, DeviceStorage, Element, Storage};

/// Errors of the reference interpreter.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum InterpError {
    /// No function of that name in the module.
    #[error("unknown function @{0}")]
    UnknownFunction(String),
    /// A function got the wrong number of inputs.
    #[error("@{func}: expects {expected} inputs, got {actual}")]
    InputCount { func: String, expected: usize, actual: usize },
    /// Input `index` of a function has the wrong type.
    #[error("@{func}: input {index} has type {actual}, expected {expected}")]
    InputType { func: String, index: usize, expected: TensorType, actual: TensorType },
    /// A shape/dtype rule of docs/spec.md rejected the operands (carries the rule's label).
    #[error(transparent)]
    Shape(#[from] DialectError),
    /// The op is not defined for this element type (only reachable if the shape rule admits it).
    #[error("'quabla.{op}' op: not defined for element type {dtype}")]
    Unsupported { op: &'static str, dtype: DType },
    /// `quabla.call` needs its module: use [`run_func`].
    #[error("'quabla.call' op: the call to @{0} can only run through run_func (it needs the module)")]
    CallOutsideModule(String),
    /// An op with regions needs its regions and its function: use [`run_func`].
    #[error("'quabla.{0}' op has regions: it runs only inside a function (run_func)")]
    RegionsOutsideFunction(&'static str),
    /// A call cycle (`call_c3`), caught before it overflows the stack.
    #[error("'quabla.call' op (call_c3): recursive call cycle through @{0}")]
    Recursion(String),
    /// An op or the return uses a value that was never defined.
    #[error("@{func}: value %{value} is used before its definition")]
    UndefinedValue { func: String, value: u32 },
    /// An operand buffer has a zero extent (quabla tensors have positive extents).
    #[error("'quabla.{op}' op: operand {index} has type {ty} with a zero extent (quabla tensors have positive extents)")]
    ZeroExtent { op: &'static str, index: usize, ty: TensorType },
    /// An operand buffer lives on a device; the interpreter computes on host buffers.
    #[error("'quabla.{op}' op: operand {index} lives on device '{device}'; the interpreter computes on host buffers (copy it with Buffer::to_host)")]
    NotOnHost { op: &'static str, index: usize, device: String },
    /// An op has a different number of results in the IR than its evaluation produced.
    #[error("@{func}: 'quabla.{op}' op has {expected} results in the IR but computes {actual}")]
    ResultCount { func: String, op: &'static str, expected: usize, actual: usize },
    /// A result buffer could not be allocated (`BufferError::TooLarge` or
    /// `BufferError::OutOfMemory`): the interpreter never aborts on a failed allocation.
    #[error("'quabla.{op}' op: {source}")]
    Buffer { op: &'static str, source: BufferError },
    /// A pure host callback (`callback_result`) failed: its function raised, or returned
    /// results of other types than the program declares.
    #[error("'quabla.callback_result' op: pure callback {callback} failed: {message}")]
    CallbackFailed { callback: i64, message: String },
    /// A collective whose axis no enclosing vmap binds (the vmap expansion resolves the
    /// collectives of its axis; docs/spec.md, collectives).
    #[error("'quabla.{op}' op: axis '{axis}' is bound by no enclosing vmap (collectives run inside vmap(..., axis_name='{axis}'), whose expansion resolves them)")]
    UnboundAxis { op: &'static str, axis: String },
    /// An op's result types in the IR differ from what the interpreter computed.
    #[error("@{func}: 'quabla.{op}' op result {index} has type {expected} in the IR but computes {actual}")]
    ResultType { func: String, op: &'static str, index: usize, expected: TensorType, actual: TensorType },
}

/// Result of the interpreter.
pub type Result<T> = std::result::Result<T, InterpError>;

/// Runs function `name` of module `m` on `inputs` and returns its outputs.
/// Input types are checked against the function's parameters.
pub fn run_func(m: &Module, name: &str, inputs: &[Buffer]) -> Result<Vec<Buffer>> {
    call::run_func_in(m, name, inputs, &mut Vec::new())
}

/// Runs one op on operand buffers (constant folding, eager execution). The result types are
/// those of `OpKind::infer`. `quabla.call` needs a module and is an error here.
pub fn run_op(kind: &OpKind, operands: &[&Buffer]) -> Result<Vec<Buffer>> {
    if let OpKind::Call(CallOp::Call { callee, .. }) = kind {
        return Err(InterpError::CallOutsideModule(callee.clone()));
    }
    if kind.region_count() > 0 {
        return Err(InterpError::RegionsOutsideFunction(kind.name()));
    }
    if let Some((index, b)) = operands.iter().enumerate().find(|(_, b)| b.shape().iter().any(|&d| d <= 0)) {
        return Err(InterpError::ZeroExtent { op: kind.name(), index, ty: b.ty().clone() });
    }
    if let Some((index, b)) = operands.iter().enumerate().find(|(_, b)| !b.is_host()) {
        return Err(InterpError::NotOnHost { op: kind.name(), index, device: b.device().to_string() });
    }
    let tys: Vec<&TensorType> = operands.iter().map(|b| b.ty()).collect();
    let out = kind.infer(&tys)?;
    let Some(ty) = out.first() else { return Err(InterpError::RegionsOutsideFunction(kind.name())) };
    match kind {
        OpKind::Elementwise(x) => elementwise::eval(operands, ty, x),
        OpKind::Constant(x) => constant::eval(ty, x),
        OpKind::Layout(x) => layout::eval(operands, ty, x),
        OpKind::Slicing(x) => slicing::eval(operands, ty, x),
        OpKind::Reduce(x) => reduce::eval(operands, ty, x),
        OpKind::Dot(x) => dot::eval(operands, ty, x),
        OpKind::Call(CallOp::Call { callee, .. }) => Err(InterpError::CallOutsideModule(callee.clone())),
        OpKind::Call(CallOp::CustomJvp { .. }) | OpKind::Call(CallOp::CustomVjp { .. }) | OpKind::Control(_) => Err(InterpError::RegionsOutsideFunction(kind.name())),
        OpKind::Scatter(x) => scatter::eval(operands, ty, x),
        OpKind::Convolution(x) => convolution::eval(operands, ty, x),
        OpKind::ReduceWindow(x) => reduce_window::eval(operands, ty, x),
        OpKind::Linalg(x) => linalg::eval(operands, &out, x),
        OpKind::Sort(x) => sort::eval(operands, ty, x),
        OpKind::Callback(x) => callback::eval(operands, ty, x),
        OpKind::Collective(x) => collective::eval(operands, ty, x),
    }
}

// ---------------------------------------------------------------------------------------------
// Element values

/// A buffer's elements decoded for arithmetic. Floats keep their width; i32 and i64 widen to
/// i64 (wrapped back to the dtype's width by [`to_buffer`]); i1 is `bool`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Vals {
    F32(Vec<f32>),
    F64(Vec<f64>),
    I1(Vec<bool>),
    Int(Vec<i64>),
}

/// The typed elements of `b` (empty when `T` is not its dtype, which callers rule out).
fn typed<T: Element>(b: &Buffer) -> &[T] {
    b.as_slice::<T>().unwrap_or_default()
}

/// Decodes the elements of `b` (an operand of op `op`) into a fallibly allocated temporary:
/// a failed allocation is [`InterpError::Buffer`] (`OutOfMemory`), never an abort.
pub(crate) fn vals(op: &'static str, b: &Buffer) -> Result<Vals> {
    let (ty, n) = (b.ty(), b.len());
    Ok(match b.dtype() {
        DType::F32 => Vals::F32(try_collect(op, ty, n, typed::<f32>(b).iter().copied())?),
        DType::F64 => Vals::F64(try_collect(op, ty, n, typed::<f64>(b).iter().copied())?),
        DType::I1 => Vals::I1(try_collect(op, ty, n, b.bytes().iter().take(n).map(|&x| x != 0))?),
        DType::I32 => Vals::Int(try_collect(op, ty, n, typed::<i32>(b).iter().map(|&x| x as i64))?),
        DType::I64 => Vals::Int(try_collect(op, ty, n, typed::<i64>(b).iter().copied())?),
        DType::U8 => Vals::Int(try_collect(op, ty, n, typed::<u8>(b).iter().map(|&x| x as i64))?),
        DType::U32 => Vals::Int(try_collect(op, ty, n, typed::<u32>(b).iter().map(|&x| x as i64))?),
    })
}

/// A fresh (zeroed) result buffer of type `ty` for op `op`: a failed allocation is
/// [`InterpError::Buffer`], never an abort.
pub(crate) fn alloc(op: &'static str, ty: &TensorType) -> Result<Buffer> {
    Buffer::try_zeros(ty.clone()).map_err(|source| InterpError::Buffer { op, source })
}

/// A vector of `n` copies of `v` (a result-sized temporary of op `op`): a failed allocation
/// is [`InterpError::Buffer`] (`OutOfMemory` for the temporary's bytes), never an abort.
pub(crate) fn try_vec<T: Clone>(op: &'static str, ty: &TensorType, n: usize, v: T) -> Result<Vec<T>> {
    let mut out = try_capacity(op, ty, n)?;
    out.resize(n, v);
    Ok(out)
}

/// An empty vector with room for `n` elements (a result-sized temporary of op `op`, filled
/// by pushes), with the failure of [`try_vec`].
pub(crate) fn try_capacity<T>(op: &'static str, ty: &TensorType, n: usize) -> Result<Vec<T>> {
    let mut out = Vec::new();
    out.try_reserve_exact(n).map_err(|_| InterpError::Buffer { op, source: BufferError::OutOfMemory { ty: ty.clone(), bytes: n.saturating_mul(std::mem::size_of::<T>()) } })?;
    Ok(out)
}

/// The `n` items of `items` (a result- or operand-sized temporary of op `op`) in a vector
/// allocated up front with the failure of [`try_vec`]: the fallible `collect()`.
pub(crate) fn try_collect<U>(op: &'static str, ty: &TensorType, n: usize, items: impl IntoIterator<Item = U>) -> Result<Vec<U>> {
    let mut out = try_capacity(op, ty, n)?;
    out.extend(items.into_iter().take(n));
    Ok(out)
}

/// A fresh buffer of type `ty` holding `data`.
fn make<T: Element>(op: &'static str, ty: &TensorType, data: &[T]) -> Result<Buffer> {
    let mut b = alloc(op, ty)?;
    if let Some(s) = b.as_mut_slice::<T>() {
        s.copy_from_slice(data);
    }
    Ok(b)
}

/// Encodes `v` as a buffer of type `ty`. `v` must be the decoded form of `ty.dtype`
/// (checked: a mismatch is [`InterpError::Unsupported`]); integers wrap to the dtype's width.
pub(crate) fn to_buffer(op: &'static str, ty: &TensorType, v: Vals) -> Result<Buffer> {
    match (ty.dtype, v) {
        (DType::F32, Vals::F32(x)) => make(op, ty, &x),
        (DType::F64, Vals::F64(x)) => make(op, ty, &x),
        (DType::I1, Vals::I1(x)) => make(op, ty, &x),
        (DType::I32, Vals::Int(x)) => make(op, ty, &try_collect(op, ty, x.len(), x.iter().map(|&a| a as i32))?),
        (DType::I64, Vals::Int(x)) => make(op, ty, &x),
        (DType::U8, Vals::Int(x)) => make(op, ty, &try_collect(op, ty, x.len(), x.iter().map(|&a| a as u8))?),
        (DType::U32, Vals::Int(x)) => make(op, ty, &try_collect(op, ty, x.len(), x.iter().map(|&a| a as u32))?),
        (dtype, _) => Err(InterpError::Unsupported { op, dtype }),
    }
}

/// Wraps an i64 to the width of an integer dtype (i32 values are sign-extended back to i64,
/// unsigned values zero-extended, so every decoded integer is its exact value).
pub(crate) fn wrap(dtype: DType, v: i64) -> i64 {
    match dtype {
        DType::I32 => v as i32 as i64,
        DType::U8 => v as u8 as i64,
        DType::U32 => v as u32 as i64,
        DType::F32 | DType::F64 | DType::I1 | DType::I64 => v,
    }
}

/// The float element types, with the operations the interpreter needs at their own width.
pub(crate) trait Real:
    Copy + PartialOrd + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Div<Output = Self> + Rem<Output = Self> + Neg<Output = Self>
{
    const ZERO: Self;
    const ONE: Self;
    const NAN: Self;
    const INFINITY: Self;
    fn is_nan(self) -> bool;
    fn is_sign_negative(self) -> bool;
    fn exp(self) -> Self;
    fn exp2(self) -> Self;
    fn is_finite(self) -> bool;
    fn exp_m1(self) -> Self;
    fn ln(self) -> Self;
    fn ln_1p(self) -> Self;
    fn sin(self) -> Self;
    fn cos(self) -> Self;
    fn tan(self) -> Self;
    fn tanh(self) -> Self;
    fn sqrt(self) -> Self;
    fn floor(self) -> Self;
    fn ceil(self) -> Self;
    fn round_ties_even(self) -> Self;
    fn erf(self) -> Self;
    fn powf(self, e: Self) -> Self;
    fn atan2(self, x: Self) -> Self;
    fn sinh(self) -> Self;
    fn cosh(self) -> Self;
    fn asin(self) -> Self;
    fn acos(self) -> Self;
    fn atan(self) -> Self;
    fn asinh(self) -> Self;
    fn acosh(self) -> Self;
    fn atanh(self) -> Self;
    fn cbrt(self) -> Self;
    fn erfc(self) -> Self;
    /// `f` evaluated in f64 and rounded to this type (the special functions of special.rs).
    fn via_f64(self, f: fn(f64) -> f64) -> Self;
}

macro_rules! impl_real {
    ($t:ty, $erf:expr, $erfc:expr, $ih:expr) => {
        impl Real for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const NAN: Self = <$t>::NAN;
            const INFINITY: Self = <$t>::INFINITY;
            fn is_nan(self) -> bool { <$t>::is_nan(self) }
            fn is_sign_negative(self) -> bool { <$t>::is_sign_negative(self) }
            fn exp(self) -> Self { <$t>::exp(self) }
            fn exp2(self) -> Self { <$t>::exp2(self) }
            fn is_finite(self) -> bool { <$t>::is_finite(self) }
            fn exp_m1(self) -> Self { <$t>::exp_m1(self) }
            fn ln(self) -> Self { <$t>::ln(self) }
            fn ln_1p(self) -> Self { <$t>::ln_1p(self) }
            fn sin(self) -> Self { <$t>::sin(self) }
            fn cos(self) -> Self { <$t>::cos(self) }
            fn tan(self) -> Self { <$t>::tan(self) }
            fn tanh(self) -> Self { <$t>::tanh(self) }
            fn sqrt(self) -> Self { <$t>::sqrt(self) }
            fn floor(self) -> Self { <$t>::floor(self) }
            fn ceil(self) -> Self { <$t>::ceil(self) }
            fn round_ties_even(self) -> Self { <$t>::round_ties_even(self) }
            fn erf(self) -> Self { let f: fn($t) -> $t = $erf; f(self) }
            fn powf(self, e: Self) -> Self { <$t>::powf(self, e) }
            fn atan2(self, x: Self) -> Self { <$t>::atan2(self, x) }
            fn sinh(self) -> Self { <$t>::sinh(self) }
            fn cosh(self) -> Self { <$t>::cosh(self) }
            fn asin(self) -> Self { <$t>::asin(self) }
            fn acos(self) -> Self { <$t>::acos(self) }
            fn atan(self) -> Self { <$t>::atan(self) }
            fn asinh(self) -> Self { let f: fn(u8, $t) -> $t = $ih; f(0, self) }
            fn acosh(self) -> Self { let f: fn(u8, $t) -> $t = $ih; f(1, self) }
            fn atanh(self) -> Self { let f: fn(u8, $t) -> $t = $ih; f(2, self) }
            fn cbrt(self) -> Self { <$t>::cbrt(self) }
            fn erfc(self) -> Self { let f: fn($t) -> $t = $erfc; f(self) }
            fn via_f64(self, f: fn(f64) -> f64) -> Self { f(self as f64) as $t }
        }
    };
}

impl_real!(f64, elementwise::erf_f64, special::erfc_f64, special::inverse_hyperbolic_f64);
impl_real!(f32, |x| elementwise::erf_f64(x as f64) as f32, special::erfc_f32, special::inverse_hyperbolic_f32);

/// max with NaN propagation; -0.0 counts as less than +0.0 (IEEE 754 `maximum`).
pub(crate) fn max_real<T: Real>(a: T, b: T) -> T {
    if a.is_nan() || b.is_nan() {
        T::NAN
    } else if a > b || (a == b && b.is_sign_negative()) {
        a
    } else {
        b
    }
}

/// min with NaN propagation; -0.0 counts as less than +0.0 (IEEE 754 `minimum`).
pub(crate) fn min_real<T: Real>(a: T, b: T) -> T {
    if a.is_nan() || b.is_nan() {
        T::NAN
    } else if a < b || (a == b && a.is_sign_negative()) {
        a
    } else {
        b
    }
}

// ---------------------------------------------------------------------------------------------
// Multi-indices

/// Row-major strides (in elements) of `shape`.
pub(crate) fn strides(shape: &[i64]) -> Vec<usize> {
    let mut s = vec![1usize; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1] as usize;
    }
    s
}

/// The flat (row-major) position of multi-index `idx` under `strides`.
pub(crate) fn flat(idx: &[usize], strides: &[usize]) -> usize {
    idx.iter().zip(strides).map(|(i, s)| i * s).sum()
}

/// Calls `f` with every multi-index of `shape` in row-major order (once, with `[]`, for a 0-d
/// shape; never for a shape with a zero extent).
pub(crate) fn for_each_index(shape: &[i64], mut f: impl FnMut(&[usize])) {
    if shape.iter().any(|&d| d <= 0) {
        return;
    }
    let mut idx = vec![0usize; shape.len()];
    loop {
        f(&idx);
        let mut d = shape.len();
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < shape[d] as usize {
                break;
            }
            idx[d] = 0;
        }
    }
}

/// Builds a buffer of type `ty` by copying, for each result multi-index, the element that
/// `src(idx)` names as `(k, j)`: element `j` (flat) of `srcs[k]`. All of `srcs` have `ty`'s dtype.
pub(crate) fn move_elems(op: &'static str, ty: &TensorType, srcs: &[&Buffer], mut src: impl FnMut(&[usize]) -> (usize, usize)) -> Result<Buffer> {
    let es = ty.dtype.size();
    let mut out = alloc(op, ty)?;
    if let Some(dst) = out.bytes_mut() {
        let mut o = 0;
        for_each_index(&ty.shape, |idx| {
            let (k, j) = src(idx);
            dst[o * es..(o + 1) * es].copy_from_slice(&srcs[k].bytes()[j * es..(j + 1) * es]);
            o += 1;
        });
    }
    Ok(out)
}

#[cfg(test)]
pub(crate) mod test_util {
    //! Builders shared by the family tests.
    use super::*;

    pub fn f32s(shape: &[i64], v: &[f32]) -> Buffer {
        Buffer::from_slice(shape, v).unwrap()
    }
    pub fn f64s(shape: &[i64], v: &[f64]) -> Buffer {
        Buffer::from_slice(shape, v).unwrap()
    }
    pub fn i32s(shape: &[i64], v: &[i32]) -> Buffer {
        Buffer::from_slice(shape, v).unwrap()
    }
    pub fn i64s(shape: &[i64], v: &[i64]) -> Buffer {
        Buffer::from_slice(shape, v).unwrap()
    }
    pub fn bools(shape: &[i64], v: &[bool]) -> Buffer {
        Buffer::from_slice(shape, v).unwrap()
    }
    /// Runs a single-result op.
    pub fn run1(kind: OpKind, xs: &[&Buffer]) -> Buffer {
        let mut out = run_op(&kind, xs).unwrap();
        assert_eq!(out.len(), 1);
        out.remove(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quabla_dialect::SlicingOp;
    #[test]
    fn index_helpers() {
        assert_eq!(strides(&[2, 3, 4]), vec![12, 4, 1]);
        assert_eq!(strides(&[]), Vec::<usize>::new());
        let mut seen = vec![];
        for_each_index(&[2, 2], |i| seen.push(i.to_vec()));
        assert_eq!(seen, vec![vec![0, 0], vec![0, 1], vec![1, 0], vec![1, 1]]);
        let mut n = 0;
        for_each_index(&[], |i| {
            assert!(i.is_empty());
            n += 1
        });
        assert_eq!(n, 1);
        assert_eq!(flat(&[1, 2, 3], &strides(&[2, 3, 4])), 12 + 8 + 3);
    }
    #[test]
    fn nan_and_signed_zero_max_min() {
        assert!(max_real(f64::NAN, 1.0).is_nan());
        assert!(min_real(1.0f32, f32::NAN).is_nan());
        assert!(max_real(-0.0f64, 0.0).is_sign_positive());
        assert!(max_real(0.0f64, -0.0).is_sign_positive());
        assert!(min_real(0.0f64, -0.0).is_sign_negative());
        assert!(min_real(-0.0f64, 0.0).is_sign_negative());
    }
    #[test]
    fn call_is_an_error_in_run_op() {
        let k = OpKind::Call(CallOp::Call { callee: "f".into(), results: vec![] });
        assert_eq!(run_op(&k, &[]).unwrap_err(), InterpError::CallOutsideModule("f".into()));
    }
    #[test]
    fn zero_extents_are_rejected() {
        let x = Buffer::from_slice::<f32>(&[2, 0], &[]).unwrap();
        let idx = Buffer::from_slice(&[1], &[0i32]).unwrap();
        let e = run_op(&OpKind::Slicing(SlicingOp::Gather { axis: 1 }), &[&x, &idx]).unwrap_err();
        assert!(matches!(e, InterpError::ZeroExtent { index: 0, .. }), "{e}");
    }
    #[test]
    fn failed_result_allocations_are_errors_not_aborts() {
        // 2**62 bytes: over the default QUABLA_MAX_BYTES (TooLarge), and under a raised one
        // more than any allocator serves (OutOfMemory); temporaries are not size-checked.
        let huge = TensorType::new(DType::F64, [1i64 << 59]);
        let x = Buffer::from_slice(&[1], &[1.0f64]).unwrap();
        let e = move_elems("broadcast_in_dim", &huge, &[&x], |_| (0, 0)).unwrap_err();
        assert!(matches!(&e, InterpError::Buffer { op: "broadcast_in_dim", source: BufferError::TooLarge { .. } | BufferError::OutOfMemory { .. } }), "{e}");
        assert!(e.to_string().starts_with("'quabla.broadcast_in_dim' op: "), "{e}");
        let e = try_vec("reduce_window", &huge, 1 << 59, 0.0f64).unwrap_err();
        assert!(matches!(e, InterpError::Buffer { op: "reduce_window", source: BufferError::OutOfMemory { bytes: 4611686018427387904, .. } }), "{e}");
        let e = try_capacity::<i64>("iota", &huge, 1 << 59).unwrap_err();
        assert!(matches!(e, InterpError::Buffer { op: "iota", .. }), "{e}");
        let e = to_buffer("exp", &huge, Vals::F64(vec![1.0])).unwrap_err();
        assert!(matches!(e, InterpError::Buffer { op: "exp", .. }), "{e}");
        // The same paths still compute small results.
        let small = TensorType::new(DType::F64, [3]);
        assert_eq!(move_elems("broadcast_in_dim", &small, &[&x], |_| (0, 0)).unwrap().to_f64_vec(), vec![1.0; 3]);
    }
}

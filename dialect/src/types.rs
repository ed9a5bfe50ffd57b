//! Element types and ranked, statically shaped tensor types: the only types the `quabla`
//! dialect admits. Text forms follow MLIR's builtin syntax (`tensor<2x3xf32>`).
use std::fmt;

use crate::error::{DialectError, Violation};

pub use crate::size::{max_bytes, DEFAULT_MAX_BYTES};

/// An element type of a quabla tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    F32,
    F64,
    I1,
    I32,
    I64,
    /// Unsigned 8-bit integer: `ui8` in the quabla dialect and StableHLO, signless `i8` with
    /// unsigned arith ops in the linalg lowering.
    U8,
    /// Unsigned 32-bit integer: `ui32` in the quabla dialect and StableHLO, signless `i32`
    /// with unsigned arith ops in the linalg lowering.
    U32,
}

thread_local! {
    /// Set while the linalg lowering writes its text: unsigned dtypes print signless there.
    static SIGNLESS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with unsigned dtypes displayed in their signless spelling (`ui32` as `i32`, so
/// `tensor<4xui32>` as `tensor<4xi32>`): the spelling of upstream arith/linalg/memref, which
/// only admit signless integers. Only the text formatted inside `f` on this thread is
/// affected; the linalg lowering chooses the unsigned arith ops (`divui`, `cmpi ult`, ...)
/// itself from [`DType::is_unsigned`].
pub fn with_signless_spelling<R>(f: impl FnOnce() -> R) -> R {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            SIGNLESS.with(|c| c.set(self.0));
        }
    }
    let _reset = Reset(SIGNLESS.with(|c| c.replace(true)));
    f()
}

impl DType {
    pub const ALL: [DType; 7] = [DType::F32, DType::F64, DType::I1, DType::I32, DType::I64, DType::U8, DType::U32];

    /// The MLIR spelling (`f32`, `i1`, `ui32`, ...).
    pub fn mlir(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::I1 => "i1",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::U8 => "ui8",
            DType::U32 => "ui32",
        }
    }

    /// The signless MLIR spelling (`ui32` -> `i32`, `ui8` -> `i8`; the others as [`DType::mlir`]).
    pub fn signless(self) -> &'static str {
        match self {
            DType::U8 => "i8",
            DType::U32 => "i32",
            d => d.mlir(),
        }
    }

    pub fn parse(s: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.mlir() == s)
    }

    /// True for the unsigned integer types (u8, u32).
    pub fn is_unsigned(self) -> bool {
        matches!(self, DType::U8 | DType::U32)
    }

    /// The bit width of an integer type (1 for i1; floats: their width).
    pub fn bits(self) -> u32 {
        match self {
            DType::I1 => 1,
            DType::U8 => 8,
            DType::F32 | DType::I32 | DType::U32 => 32,
            DType::F64 | DType::I64 => 64,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64)
    }

    /// Signed or unsigned integer (not i1).
    pub fn is_int(self) -> bool {
        matches!(self, DType::I32 | DType::I64 | DType::U8 | DType::U32)
    }

    pub fn is_bool(self) -> bool {
        self == DType::I1
    }

    /// Float or non-bool integer: the types arithmetic accepts.
    pub fn is_numeric(self) -> bool {
        self != DType::I1
    }

    /// Bytes per element in host buffers (bool is one byte).
    pub fn size(self) -> usize {
        match self {
            DType::F32 | DType::I32 | DType::U32 => 4,
            DType::F64 | DType::I64 => 8,
            DType::I1 | DType::U8 => 1,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(if SIGNLESS.with(|c| c.get()) { self.signless() } else { self.mlir() })
    }
}

/// Element `i` of little-endian element bytes of `dtype`, as f64 (i1: one byte 0/1).
pub fn decode_f64(dtype: DType, b: &[u8], i: usize) -> f64 {
    match dtype {
        DType::F32 => f32::from_le_bytes(b[i * 4..i * 4 + 4].try_into().unwrap()) as f64,
        DType::F64 => f64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap()),
        DType::I1 => b[i] as f64,
        DType::I32 => i32::from_le_bytes(b[i * 4..i * 4 + 4].try_into().unwrap()) as f64,
        DType::I64 => i64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap()) as f64,
        DType::U8 => b[i] as f64,
        DType::U32 => u32::from_le_bytes(b[i * 4..i * 4 + 4].try_into().unwrap()) as f64,
    }
}

/// Element `i` as i64: exact for integers (unsigned ones zero-extended) and bools, truncating
/// for floats.
pub fn decode_i64(dtype: DType, b: &[u8], i: usize) -> i64 {
    match dtype {
        DType::I1 => b[i] as i64,
        DType::I32 => i32::from_le_bytes(b[i * 4..i * 4 + 4].try_into().unwrap()) as i64,
        DType::I64 => i64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap()),
        DType::U8 => b[i] as i64,
        DType::U32 => u32::from_le_bytes(b[i * 4..i * 4 + 4].try_into().unwrap()) as i64,
        DType::F32 | DType::F64 => decode_f64(dtype, b, i) as i64,
    }
}

/// `tensor<d0 x d1 x ... x dtype>` with static, positive extents (0-d allowed).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TensorType {
    pub dtype: DType,
    pub shape: Vec<i64>,
}

impl TensorType {
    pub fn new(dtype: DType, shape: impl Into<Vec<i64>>) -> Self {
        TensorType { dtype, shape: shape.into() }
    }

    pub fn scalar(dtype: DType) -> Self {
        TensorType { dtype, shape: vec![] }
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// The element count. Never panics and never wraps: it saturates at `usize::MAX` when the
    /// product overflows (and counts a negative extent as 0), so code that allocates from it
    /// fails instead of under-allocating. Boundaries call [`TensorType::check_size`] first.
    pub fn num_elements(&self) -> usize {
        self.checked_num_elements().unwrap_or_else(|| if self.shape.iter().any(|&d| d < 0) { 0 } else { usize::MAX })
    }

    /// The element count, or `None` when an extent is negative or the product overflows.
    pub fn checked_num_elements(&self) -> Option<usize> {
        crate::size::checked_product(&self.shape).ok()
    }

    /// The byte size in host buffers, or `None` when an extent is negative or it overflows.
    pub fn checked_byte_size(&self) -> Option<usize> {
        crate::size::byte_len(&self.shape, self.dtype.size()).ok()
    }

    /// Checks that the type can exist: every extent positive (`extent_positive`), the byte size
    /// representable (`size_overflow`) and at most [`max_bytes`] (`size_limit`). Returns the
    /// byte size. `op` names the op (or constructor) the error is reported for.
    pub fn check_size(&self, op: &'static str) -> Result<usize, DialectError> {
        if let Some(d) = self.shape.iter().find(|&&d| d <= 0) {
            return Err(Violation::new(op, "extent_positive", format!("shape {:?} has the extent {d}: quabla tensors have positive extents", self.shape)).actual(self).shape());
        }
        self.check_bytes(op)
    }

    /// The size part of [`TensorType::check_size`], for storage that admits zero extents
    /// (host buffers): a negative extent (`extent_positive`), an overflowing byte size
    /// (`size_overflow`) or one over [`max_bytes`] (`size_limit`) is an error. Returns the
    /// byte size.
    pub fn check_bytes(&self, op: &'static str) -> Result<usize, DialectError> {
        if let Some(d) = self.shape.iter().find(|&&d| d < 0) {
            return Err(Violation::new(op, "extent_positive", format!("shape {:?} has the negative extent {d}", self.shape)).actual(self).shape());
        }
        let Some(bytes) = self.checked_byte_size().filter(|&b| i64::try_from(b).is_ok()) else {
            return Err(Violation::new(op, "size_overflow", format!("{self} (shape {:?}) is too big: its element count times the item size {} overflows", self.shape, self.dtype.size())).actual(self).size());
        };
        let max = max_bytes();
        if bytes as u64 > max {
            return Err(Violation::new(op, "size_limit", format!("{self} (shape {:?}) needs {bytes} bytes, more than the limit of {max} bytes (set QUABLA_MAX_BYTES to raise it)", self.shape)).actual(self).size());
        }
        Ok(bytes)
    }

    pub fn with_dtype(&self, dtype: DType) -> Self {
        TensorType { dtype, shape: self.shape.clone() }
    }

    /// Row-major strides in elements.
    pub fn strides(&self) -> Vec<i64> {
        let mut s = vec![1i64; self.shape.len()];
        for i in (0..self.shape.len().saturating_sub(1)).rev() {
            s[i] = s[i + 1].saturating_mul(self.shape[i + 1]);
        }
        s
    }

    /// Parses `tensor<2x3xf32>` / `tensor<f64>`. Dynamic or zero extents are rejected.
    pub fn parse(s: &str) -> Result<Self, String> {
        let inner = s
            .trim()
            .strip_prefix("tensor<")
            .and_then(|r| r.strip_suffix('>'))
            .ok_or_else(|| format!("expected a ranked tensor type, got `{s}`"))?;
        let mut parts: Vec<&str> = inner.split('x').collect();
        let elem = parts.pop().unwrap_or("");
        let dtype = DType::parse(elem)
            .ok_or_else(|| format!("unsupported element type `{elem}` in `{s}` (expected f32, f64, i1, i32, i64, ui8 or ui32)"))?;
        let mut shape = Vec::with_capacity(parts.len());
        for p in parts {
            let d: i64 = p.parse().map_err(|_| format!("dynamic or malformed extent `{p}` in `{s}`: quabla tensors are static"))?;
            if d <= 0 {
                return Err(format!("zero or negative extent in `{s}`: quabla tensors have positive extents"));
            }
            shape.push(d);
        }
        let t = TensorType { dtype, shape };
        t.check_size("tensor").map_err(|e| e.to_string())?;
        Ok(t)
    }
}

impl fmt::Display for TensorType {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("tensor<")?;
        for d in &self.shape {
            write!(f, "{d}x")?;
        }
        write!(f, "{}>", self.dtype)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn round_trip() {
        for s in ["tensor<f32>", "tensor<2x3xi1>", "tensor<7xi64>"] {
            assert_eq!(TensorType::parse(s).unwrap().to_string(), s);
        }
        assert!(TensorType::parse("tensor<?xf32>").is_err());
        assert!(TensorType::parse("tensor<0xf32>").is_err());
        assert!(TensorType::parse("tensor<2xf16>").is_err());
        let e = TensorType::parse("tensor<4611686018427387904x4xf32>").unwrap_err();
        assert!(e.contains("size_overflow") && e.contains("too big"), "{e}");
        assert_eq!(TensorType::new(DType::F32, [2, 3, 4]).strides(), vec![12, 4, 1]);
    }

    #[test]
    fn sizes_are_checked_never_wrapped() {
        let t = TensorType::new(DType::F32, [1 << 62, 4]);
        assert_eq!(t.checked_num_elements(), None);
        assert_eq!(t.num_elements(), usize::MAX);
        let e = t.check_size("zeros").unwrap_err();
        assert!(matches!(e, DialectError::Size(_)), "{e:?}");
        assert_eq!(e.constraint(), Some("size_overflow"));
        assert!(e.to_string().contains("tensor<4611686018427387904x4xf32>"), "{e}");
        // Fits usize as elements but not as bytes.
        let b = TensorType::new(DType::F64, [1 << 61]);
        assert_eq!(b.checked_num_elements(), Some(1 << 61));
        assert_eq!(b.checked_byte_size(), None);
        assert_eq!(b.check_size("full").unwrap_err().constraint(), Some("size_overflow"));
        // Representable, but over the default limit.
        let big = TensorType::new(DType::F32, [1 << 20, 1 << 20]);
        assert_eq!(big.checked_byte_size(), Some(1 << 42));
        let e = big.check_size("zeros").unwrap_err();
        assert_eq!(e.constraint(), Some("size_limit"));
        assert!(e.to_string().contains("QUABLA_MAX_BYTES"), "{e}");
        // Negative and zero extents are shape errors, not sizes.
        let neg = TensorType::new(DType::F32, [-1]);
        assert_eq!(neg.num_elements(), 0);
        assert_eq!(neg.check_size("ShapeDtype").unwrap_err().constraint(), Some("extent_positive"));
        assert!(matches!(neg.check_size("x"), Err(DialectError::Shape(_))));
        assert_eq!(TensorType::new(DType::I1, [3, 5]).check_size("x"), Ok(15));
        assert_eq!(TensorType::scalar(DType::F64).check_size("x"), Ok(8));
        // Storage admits zero extents, never negative ones.
        assert_eq!(TensorType::new(DType::F32, [2, 0]).check_bytes("buffer"), Ok(0));
        assert!(TensorType::new(DType::F32, [2, 0]).check_size("x").is_err());
        assert_eq!(neg.check_bytes("buffer").unwrap_err().constraint(), Some("extent_positive"));
        assert_eq!(TensorType::new(DType::F32, [0, 1 << 62, 4]).check_bytes("buffer"), Ok(0));
        assert_eq!(TensorType::new(DType::F32, [1 << 62, 4]).strides(), vec![4, 1]);
        assert_eq!(TensorType::new(DType::F32, [2, 1 << 62, 4]).strides()[0], i64::MAX);
    }
}

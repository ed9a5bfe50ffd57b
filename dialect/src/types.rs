//! Element types and ranked, statically shaped tensor types: the only types the `quabla`
//! dialect admits. Text forms follow MLIR's builtin syntax (`tensor<2x3xf32>`).
use std::fmt;

/// An element type of a quabla tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    F32,
    F64,
    I1,
    I32,
    I64,
}

impl DType {
    pub const ALL: [DType; 5] = [DType::F32, DType::F64, DType::I1, DType::I32, DType::I64];

    /// The MLIR spelling (`f32`, `i1`, ...).
    pub fn mlir(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::I1 => "i1",
            DType::I32 => "i32",
            DType::I64 => "i64",
        }
    }

    pub fn parse(s: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.mlir() == s)
    }

    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64)
    }

    pub fn is_int(self) -> bool {
        matches!(self, DType::I32 | DType::I64)
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
            DType::F32 | DType::I32 => 4,
            DType::F64 | DType::I64 => 8,
            DType::I1 => 1,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.mlir())
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
    }
}

/// Element `i` as i64: exact for integers and bools, truncating for floats.
pub fn decode_i64(dtype: DType, b: &[u8], i: usize) -> i64 {
    match dtype {
        DType::I1 => b[i] as i64,
        DType::I32 => i32::from_le_bytes(b[i * 4..i * 4 + 4].try_into().unwrap()) as i64,
        DType::I64 => i64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap()),
        _ => decode_f64(dtype, b, i) as i64,
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

    pub fn num_elements(&self) -> usize {
        self.shape.iter().product::<i64>() as usize
    }

    pub fn with_dtype(&self, dtype: DType) -> Self {
        TensorType { dtype, shape: self.shape.clone() }
    }

    /// Row-major strides in elements.
    pub fn strides(&self) -> Vec<i64> {
        let mut s = vec![1i64; self.shape.len()];
        for i in (0..self.shape.len().saturating_sub(1)).rev() {
            s[i] = s[i + 1] * self.shape[i + 1];
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
            .ok_or_else(|| format!("unsupported element type `{elem}` in `{s}` (expected f32, f64, i1, i32 or i64)"))?;
        let mut shape = Vec::with_capacity(parts.len());
        for p in parts {
            let d: i64 = p.parse().map_err(|_| format!("dynamic or malformed extent `{p}` in `{s}`: quabla tensors are static"))?;
            if d <= 0 {
                return Err(format!("zero or negative extent in `{s}`: quabla tensors have positive extents"));
            }
            shape.push(d);
        }
        Ok(TensorType { dtype, shape })
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
        assert_eq!(TensorType::new(DType::F32, [2, 3, 4]).strides(), vec![12, 4, 1]);
    }
}

//! `constant` (dense elements) and `iota`. Literals store little-endian element bytes
//! (i1 as one byte, 0 or 1) so that they hash and compare exactly (CSE, folding). The bytes
//! are shared (`Arc<[u8]>`): the passes clone ops and their literals freely (a fold sweep
//! copies each op into its maps; autodiff writes full-shape splats such as a 256x1024 tensor of
//! ones), so a clone is a count increment and comparing a literal with its clone is a pointer
//! test; the hash reads a bounded sample of the bytes (see `Hash for Literal`).
use std::sync::Arc;

use crate::error::{shape_err, Result, Violation};
use crate::ops::table::op_family;
use crate::types::{DType, TensorType};

/// A dense tensor value held in the IR.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Literal {
    pub ty: TensorType,
    pub bytes: Arc<[u8]>,
}

/// Bytes of a literal's head and tail that its hash reads.
const HASHED_BYTES: usize = 64;

/// Consistent with `Eq` (equal literals have equal types, lengths, heads and tails); literals
/// that differ only in their middle collide and are told apart by `Eq`. SipHash over every
/// byte of a 1 MiB constant cost ~1 ms per CSE sweep (layernorm grad: ~20 ms of its passes).
impl std::hash::Hash for Literal {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.ty.hash(h);
        let b = &self.bytes[..];
        b.len().hash(h);
        let k = b.len().min(HASHED_BYTES);
        h.write(&b[..k]);
        h.write(&b[b.len() - k..]);
    }
}

impl Literal {
    pub fn from_f64s(ty: TensorType, vals: &[f64]) -> Literal {
        // `vals` exists, so its length times an item size of at most 8 cannot overflow.
        let mut bytes = Vec::with_capacity(vals.len().saturating_mul(ty.dtype.size()));
        for &v in vals {
            match ty.dtype {
                DType::F32 => bytes.extend((v as f32).to_le_bytes()),
                DType::F64 => bytes.extend(v.to_le_bytes()),
                DType::I1 => bytes.push((v != 0.0) as u8),
                DType::I32 => bytes.extend((v as i32).to_le_bytes()),
                DType::I64 => bytes.extend((v as i64).to_le_bytes()),
                DType::U8 => bytes.push(v as u8),
                DType::U32 => bytes.extend((v as u32).to_le_bytes()),
            }
        }
        Literal { ty, bytes: bytes.into() }
    }

    pub fn from_i64s(ty: TensorType, vals: &[i64]) -> Literal {
        let mut bytes = Vec::with_capacity(vals.len().saturating_mul(ty.dtype.size()));
        for &v in vals {
            match ty.dtype {
                DType::F32 => bytes.extend((v as f32).to_le_bytes()),
                DType::F64 => bytes.extend((v as f64).to_le_bytes()),
                DType::I1 => bytes.push((v != 0) as u8),
                DType::I32 => bytes.extend((v as i32).to_le_bytes()),
                DType::I64 => bytes.extend(v.to_le_bytes()),
                DType::U8 => bytes.push(v as u8),
                DType::U32 => bytes.extend((v as u32).to_le_bytes()),
            }
        }
        Literal { ty, bytes: bytes.into() }
    }

    /// A literal of `ty` holding `bytes` (little-endian elements).
    pub fn from_bytes(ty: TensorType, bytes: Vec<u8>) -> Literal {
        Literal { ty, bytes: bytes.into() }
    }

    /// A tensor of `ty` filled with `v`: one element encoded, then repeated.
    pub fn splat(ty: TensorType, v: f64) -> Literal {
        let n = ty.num_elements();
        let one = Literal::from_f64s(TensorType::scalar(ty.dtype), &[v]);
        Literal { ty, bytes: one.bytes.repeat(n).into() }
    }

    /// A tensor of `ty` filled with this literal's first element (the splat of a splat
    /// literal in another shape; `ty` has this literal's dtype).
    pub fn splat_like(&self, ty: TensorType) -> Literal {
        let bytes = self.elem_bytes(0).repeat(ty.num_elements());
        Literal { ty, bytes: bytes.into() }
    }

    pub fn len(&self) -> usize {
        self.ty.num_elements()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i` as f64 (exact for f32/f64/i1/i32; i64 beyond 2^53 rounds).
    pub fn get_f64(&self, i: usize) -> f64 {
        crate::types::decode_f64(self.ty.dtype, &self.bytes, i)
    }

    /// Element `i` as i64 (integers and bools exact; floats truncated).
    pub fn get_i64(&self, i: usize) -> i64 {
        crate::types::decode_i64(self.ty.dtype, &self.bytes, i)
    }

    /// Bytes of element `i`.
    pub fn elem_bytes(&self, i: usize) -> &[u8] {
        let s = self.ty.dtype.size();
        &self.bytes[i * s..(i + 1) * s]
    }

    /// True when every element has the same bytes.
    pub fn is_splat(&self) -> bool {
        // Every element equals the next one: the bytes equal themselves shifted by one element.
        let (s, b) = (self.ty.dtype.size(), &self.bytes[..]);
        b.len() <= s || b[s..] == b[..b.len() - s]
    }

    /// True when every element equals `v` (compared as f64 values; -0.0 == 0.0 is *not* used:
    /// bit patterns are compared for floats so that x*1 folding keeps signed zeros exact).
    pub fn is_splat_of(&self, v: f64) -> bool {
        let probe = Literal::splat(TensorType::scalar(self.ty.dtype), v);
        if probe.get_f64(0) != v {
            return false;
        }
        self.is_splat() && self.elem_bytes(0) == &probe.bytes[..]
    }

    /// The MLIR attribute text: `dense<...> : tensor<...>`.
    pub fn to_mlir(&self) -> String {
        let mut s = String::from("dense<");
        if self.is_splat() {
            s.push_str(&self.fmt_elem(0));
        } else {
            self.write_nested(&mut s, 0, 0);
        }
        s.push_str("> : ");
        s.push_str(&self.ty.to_string());
        s
    }

    /// [`Literal::to_mlir`], with the elements of a literal of at least [`HEX_MIN_ELEMENTS`]
    /// that is not a splat (and not of `i1`, which MLIR packs by bits) written as one hex
    /// string of their little-endian bytes (`dense<"0x...">`, MLIR's own form for large
    /// constants). A positional encoding folded to two 512 x 128 f32 constants took 39 ms to
    /// print in decimal and 138 ms for MLIR to parse back, most of its 200 ms first call.
    pub fn to_mlir_compact(&self) -> String {
        if self.ty.dtype == DType::I1 || self.ty.num_elements() < HEX_MIN_ELEMENTS || self.is_splat() {
            return self.to_mlir();
        }
        const HEX: &[u8; 16] = b"0123456789ABCDEF";
        let mut s = String::with_capacity(self.bytes.len() * 2 + 64);
        s.push_str("dense<\"0x");
        for &b in self.bytes.iter() {
            s.push(HEX[(b >> 4) as usize] as char);
            s.push(HEX[(b & 15) as usize] as char);
        }
        s.push_str("\"> : ");
        s.push_str(&self.ty.to_string());
        s
    }

    fn write_nested(&self, s: &mut String, dim: usize, offset: usize) {
        if dim == self.ty.rank() {
            s.push_str(&self.fmt_elem(offset));
            return;
        }
        let stride = crate::size::saturating_product(self.ty.shape[dim + 1..].iter().copied());
        s.push('[');
        for i in 0..self.ty.shape[dim] as usize {
            if i > 0 {
                s.push_str(", ");
            }
            self.write_nested(s, dim + 1, offset + i * stride as usize);
        }
        s.push(']');
    }

    fn fmt_elem(&self, i: usize) -> String {
        match self.ty.dtype {
            DType::F32 => {
                let v = f32::from_le_bytes(self.elem_bytes(i).try_into().unwrap());
                if v.is_finite() { fmt_float(&format!("{v:e}")) } else { format!("0x{:08X}", v.to_bits()) }
            }
            DType::F64 => {
                let v = self.get_f64(i);
                if v.is_finite() { fmt_float(&format!("{v:e}")) } else { format!("0x{:016X}", v.to_bits()) }
            }
            DType::I1 => if self.bytes[i] != 0 { "true".into() } else { "false".into() },
            _ => self.get_i64(i).to_string(),
        }
    }
}

/// The least elements of a literal [`Literal::to_mlir_compact`] writes in hex.
pub const HEX_MIN_ELEMENTS: usize = 256;

/// Rust's `{:e}` gives the shortest round-tripping digits (`1e-1`); MLIR needs a '.' in the mantissa.
fn fmt_float(s: &str) -> String {
    match s.split_once('e') {
        Some((m, e)) if !m.contains('.') => format!("{m}.0e{e}"),
        _ => s.to_string(),
    }
}

op_family! {
    /// Ops without operands: `constant` (a dense literal) and `iota`.
    pub enum ConstantOp : Constant {
        Constant = "constant", operands 0, regions 0, irdl { value: Literal [attr] },
        Iota = "iota", operands 0, regions 0, irdl { dim: i64 [attr], ty: TensorType [ty] },
    }
}

impl ConstantOp {
    /// The shape/dtype rule.
    pub fn infer(&self, _xs: &[&TensorType]) -> Result<TensorType> {
        match self {
            ConstantOp::Constant { value } => infer_constant(value),
            ConstantOp::Iota { dim, ty } => infer_iota(*dim, ty),
        }
    }
}

/// `constant`: the result type is the literal's type (`constant_c1`: it is a valid quabla type).
pub fn infer_constant(value: &Literal) -> Result<TensorType> {
    let want = value.ty.check_size("constant")?;
    if value.bytes.len() != want {
        return shape_err("constant", "constant_c1", format!("literal holds {} bytes, expected {want} for {}", value.bytes.len(), value.ty));
    }
    Ok(value.ty.clone())
}

/// `iota_c1`: 0 <= dim < rank(result); `iota_c2`: the result has rank >= 1.
pub fn infer_iota(dim: i64, ty: &TensorType) -> Result<TensorType> {
    if ty.rank() == 0 {
        return Violation::new("iota", "iota_c2", format!("result type {ty} has rank 0")).actual(ty).shape_err();
    }
    if dim < 0 || dim as usize >= ty.rank() {
        return Violation::new("iota", "iota_c1", format!("dim {dim} out of range for result type {ty}")).actual(ty).shape_err();
    }
    Ok(ty.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn literal_text() {
        let l = Literal::from_f64s(TensorType::new(DType::F32, [2, 2]), &[1.0, 0.1, -2.5, 1e-7]);
        assert_eq!(l.to_mlir(), "dense<[[1.0e0, 1.0e-1], [-2.5e0, 1.0e-7]]> : tensor<2x2xf32>");
        let s = Literal::splat(TensorType::new(DType::F64, [3]), f64::INFINITY);
        assert_eq!(s.to_mlir(), "dense<0x7FF0000000000000> : tensor<3xf64>");
        assert!(Literal::splat(TensorType::scalar(DType::F32), 1.0).is_splat_of(1.0));
        assert!(!Literal::splat(TensorType::scalar(DType::F32), -0.0).is_splat_of(0.0));
    }

    #[test]
    fn large_literals_print_in_hex() {
        let n = HEX_MIN_ELEMENTS;
        let vals: Vec<f64> = (0..n).map(|i| i as f64 * 0.5).collect();
        let l = Literal::from_f64s(TensorType::new(DType::F32, [n as i64]), &vals);
        let text = l.to_mlir_compact();
        // 0.0 is 00000000, 0.5 is 0x3F000000 (little-endian 0000003F).
        assert!(text.starts_with("dense<\"0x000000000000003F"), "{}", &text[..40]);
        assert!(text.ends_with(&format!("\"> : tensor<{n}xf32>")));
        assert_eq!(text.len(), "dense<\"0x".len() + 8 * n + format!("\"> : tensor<{n}xf32>").len());
        // Smaller, splat and bool literals keep the element list.
        let small = Literal::from_f64s(TensorType::new(DType::F32, [3]), &[1.0, 2.0, 3.0]);
        assert_eq!(small.to_mlir_compact(), small.to_mlir());
        let splat = Literal::splat(TensorType::new(DType::F32, [n as i64]), 2.0);
        assert_eq!(splat.to_mlir_compact(), splat.to_mlir());
        let bools = Literal::from_f64s(TensorType::new(DType::I1, [n as i64]), &vals);
        assert_eq!(bools.to_mlir_compact(), bools.to_mlir());
    }
}

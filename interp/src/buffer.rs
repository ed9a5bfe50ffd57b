//! Host buffers: immutable, 64-byte aligned, reference-counted storage for one tensor of
//! the five dtypes. i1 is stored as one byte per element (0 or 1). A buffer is written only
//! while it is uniquely owned (by its creator, or by an executable filling an output).
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::sync::Arc;

use quabla_dialect::{DType, Literal, TensorType};

pub const ALIGN: usize = 64;

/// 64-byte aligned bytes.
pub struct AlignedBytes {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: AlignedBytes owns its allocation exclusively; shared access is read-only except
// through `Buffer::as_mut_ptr` while the Arc is unique (documented there).
unsafe impl Send for AlignedBytes {}
unsafe impl Sync for AlignedBytes {}

impl AlignedBytes {
    /// Zeroed storage of `len` bytes (at least one byte is allocated).
    pub fn zeroed(len: usize) -> Self {
        let layout = Layout::from_size_align(len.max(1), ALIGN).expect("buffer size overflows");
        // SAFETY: layout has non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        AlignedBytes { ptr, len }
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for len bytes for the lifetime of self.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl Drop for AlignedBytes {
    fn drop(&mut self) {
        // SAFETY: allocated in `zeroed` with this layout.
        unsafe { dealloc(self.ptr, Layout::from_size_align(self.len.max(1), ALIGN).unwrap()) }
    }
}

/// A tensor on the host.
#[derive(Clone)]
pub struct Buffer {
    ty: TensorType,
    data: Arc<AlignedBytes>,
}

impl std::fmt::Debug for Buffer {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "Buffer({}, {:?})", self.ty, self.to_f64_vec())
    }
}

/// Rust element types of buffers.
pub trait Element: Copy + 'static {
    const DTYPE: DType;
}
impl Element for f32 {
    const DTYPE: DType = DType::F32;
}
impl Element for f64 {
    const DTYPE: DType = DType::F64;
}
impl Element for bool {
    const DTYPE: DType = DType::I1;
}
impl Element for i32 {
    const DTYPE: DType = DType::I32;
}
impl Element for i64 {
    const DTYPE: DType = DType::I64;
}

impl Buffer {
    /// A zero-filled buffer of type `ty`.
    pub fn zeros(ty: TensorType) -> Buffer {
        let n = ty.num_elements() * ty.dtype.size();
        Buffer { ty, data: Arc::new(AlignedBytes::zeroed(n)) }
    }

    /// Copies raw little-endian element bytes (i1: one byte per element, nonzero = true).
    pub fn from_bytes(ty: TensorType, bytes: &[u8]) -> Result<Buffer, String> {
        let want = ty.num_elements() * ty.dtype.size();
        if bytes.len() != want {
            return Err(format!("{} needs {want} bytes, got {}", ty, bytes.len()));
        }
        let is_bool = ty.dtype == DType::I1;
        let mut b = Buffer::zeros(ty);
        let dst = b.bytes_mut().expect("fresh buffer is unique");
        if is_bool {
            for (d, s) in dst.iter_mut().zip(bytes) {
                *d = (*s != 0) as u8;
            }
        } else {
            dst.copy_from_slice(bytes);
        }
        Ok(b)
    }

    /// Copies a slice of elements with the given shape.
    pub fn from_slice<T: Element>(shape: &[i64], data: &[T]) -> Result<Buffer, String> {
        let ty = TensorType::new(T::DTYPE, shape);
        if data.len() != ty.num_elements() {
            return Err(format!("{} has {} elements, got {}", ty, ty.num_elements(), data.len()));
        }
        // SAFETY: T is one of the five plain element types; bool is one byte 0/1.
        let bytes = unsafe { std::slice::from_raw_parts(data.as_ptr() as *const u8, std::mem::size_of_val(data)) };
        Buffer::from_bytes(ty, bytes)
    }

    /// Converts values given as f64 to the buffer's dtype (truncating for integers).
    pub fn from_f64s(ty: TensorType, vals: &[f64]) -> Result<Buffer, String> {
        if vals.len() != ty.num_elements() {
            return Err(format!("{} has {} elements, got {}", ty, ty.num_elements(), vals.len()));
        }
        Ok(Buffer::from_literal(&Literal::from_f64s(ty, vals)))
    }

    pub fn from_literal(l: &Literal) -> Buffer {
        Buffer::from_bytes(l.ty.clone(), &l.bytes).expect("literal sizes are consistent")
    }

    pub fn to_literal(&self) -> Literal {
        Literal { ty: self.ty.clone(), bytes: self.bytes().to_vec() }
    }

    pub fn ty(&self) -> &TensorType {
        &self.ty
    }

    pub fn dtype(&self) -> DType {
        self.ty.dtype
    }

    pub fn shape(&self) -> &[i64] {
        &self.ty.shape
    }

    pub fn len(&self) -> usize {
        self.ty.num_elements()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn bytes(&self) -> &[u8] {
        self.data.as_slice()
    }

    /// Mutable bytes while this handle is the only one; `None` once shared.
    pub fn bytes_mut(&mut self) -> Option<&mut [u8]> {
        let d = Arc::get_mut(&mut self.data)?;
        // SAFETY: unique access through Arc::get_mut.
        Some(unsafe { std::slice::from_raw_parts_mut(d.ptr, d.len) })
    }

    /// Typed view of the elements; `None` when `T` does not match the dtype.
    pub fn as_slice<T: Element>(&self) -> Option<&[T]> {
        if T::DTYPE != self.ty.dtype {
            return None;
        }
        // SAFETY: the storage is 64-byte aligned and holds len() elements of T.
        Some(unsafe { std::slice::from_raw_parts(self.data.ptr as *const T, self.len()) })
    }

    /// Mutable typed view while unique.
    pub fn as_mut_slice<T: Element>(&mut self) -> Option<&mut [T]> {
        if T::DTYPE != self.ty.dtype {
            return None;
        }
        let n = self.len();
        let d = Arc::get_mut(&mut self.data)?;
        // SAFETY: unique, aligned, n elements of T.
        Some(unsafe { std::slice::from_raw_parts_mut(d.ptr as *mut T, n) })
    }

    /// Raw data pointer (for executables reading inputs).
    pub fn as_ptr(&self) -> *const u8 {
        self.data.ptr
    }

    /// Element `i` as f64.
    pub fn get_f64(&self, i: usize) -> f64 {
        quabla_dialect::types::decode_f64(self.ty.dtype, self.bytes(), i)
    }

    /// Element `i` as i64 (exact for integer and bool dtypes).
    pub fn get_i64(&self, i: usize) -> i64 {
        quabla_dialect::types::decode_i64(self.ty.dtype, self.bytes(), i)
    }

    pub fn to_f64_vec(&self) -> Vec<f64> {
        (0..self.len()).map(|i| self.get_f64(i)).collect()
    }

    /// True when both buffers share storage (zero-copy views).
    pub fn same_storage(&self, other: &Buffer) -> bool {
        Arc::ptr_eq(&self.data, &other.data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn aligned_and_typed() {
        let b = Buffer::from_slice(&[2, 2], &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
        assert_eq!(b.as_ptr() as usize % ALIGN, 0);
        assert_eq!(b.as_slice::<f32>().unwrap(), &[1.0, 2.0, 3.0, 4.0]);
        assert!(b.as_slice::<f64>().is_none());
        let c = Buffer::from_slice(&[3], &[true, false, true]).unwrap();
        assert_eq!(c.to_f64_vec(), vec![1.0, 0.0, 1.0]);
    }
}

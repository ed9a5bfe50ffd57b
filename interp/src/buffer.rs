//! Buffers: immutable, reference-counted storage for one tensor of the seven dtypes. i1 is
//! stored as one byte per element (0 or 1). A buffer is written only while it is uniquely
//! owned (by its creator, or by an executable filling an output).
//!
//! Storage is [`Storage::Host`] (64-byte aligned host memory, what the interpreter and the CPU
//! executor compute on) or [`Storage::Device`] (bytes an accelerator executor owns, behind the
//! [`DeviceStorage`] trait). Host data is never read implicitly from a device: the fallible
//! accessors ([`Buffer::host_bytes`], [`Buffer::try_as_slice`], [`Buffer::try_to_literal`])
//! return [`BufferError::NotOnHost`] for a device buffer, [`Buffer::to_host`] copies it, and the
//! infallible accessors kept for host code see no host data on a device buffer (documented on
//! each: `None`, an empty slice, a null pointer), so nothing here panics on a device buffer.
use std::alloc::{alloc, alloc_zeroed, dealloc, Layout};
use std::sync::Arc;

use quabla_dialect::{DType, Literal, TensorType};
use thiserror::Error;

/// Alignment of host storage in bytes.
pub const ALIGN: usize = 64;

/// Errors of buffer access and device transfers.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BufferError {
    /// Host data was asked of a buffer that lives on a device.
    #[error("the {ty} buffer lives on device '{device}': copy it to the host first (Buffer::to_host)")]
    NotOnHost { device: String, ty: TensorType },
    /// A typed view asked for an element type other than the buffer's.
    #[error("the buffer has type {ty}, not element type {requested}")]
    DTypeMismatch { ty: TensorType, requested: DType },
    /// A device storage's byte length does not match the tensor type it is to hold.
    #[error("{ty} needs {expected} bytes but the storage on device '{device}' holds {actual}")]
    StorageSize { device: String, ty: TensorType, expected: usize, actual: usize },
    /// The type is too big to exist: its byte size overflows or exceeds the limit
    /// (`QUABLA_MAX_BYTES`, see [`quabla_dialect::types::max_bytes`]); `message` says which.
    #[error("cannot create a {ty} buffer: {message}")]
    TooLarge { ty: TensorType, message: String },
    /// The host allocator could not provide the bytes.
    #[error("out of memory: cannot allocate {bytes} bytes for a {ty} buffer")]
    OutOfMemory { ty: TensorType, bytes: usize },
    /// A device failed to copy a buffer's bytes to the host.
    #[error("copying a {ty} buffer from device '{device}' to the host failed: {message}")]
    Transfer { device: String, ty: TensorType, message: String },
}

/// Bytes resident on a device, implemented by the executor that owns them (CUDA, MLX). The
/// bytes use the host layout (row-major, little-endian, i1 one byte per element) so a copy to
/// the host is a plain byte copy.
pub trait DeviceStorage: Send + Sync {
    /// The device holding the bytes, as the executor registry names it (e.g. `cuda:0`).
    fn device(&self) -> &str;
    /// Length of the storage in bytes.
    fn byte_len(&self) -> usize;
    /// Copies all bytes into `dst`, which is exactly [`DeviceStorage::byte_len`] long. A
    /// failure is the device's message (wrapped into [`BufferError::Transfer`] by
    /// [`Buffer::to_host`]).
    fn copy_to_host(&self, dst: &mut [u8]) -> Result<(), String>;
    /// The storage as `Any`, for the executor that owns it to recognise its own storage
    /// (and take inputs without a copy); `None` unless the implementation opts in.
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        None
    }
}

/// Where a buffer's bytes live.
#[derive(Clone)]
pub enum Storage {
    /// 64-byte aligned host memory.
    Host(Arc<AlignedBytes>),
    /// Memory owned by a device executor.
    Device(Arc<dyn DeviceStorage>),
}

/// Name of the host in [`Buffer::device`].
pub const HOST: &str = "host";

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
    /// Zeroed storage of `len` bytes (at least one byte is allocated). Aborts when the
    /// allocation fails, like `Vec`: for sizes of already checked types only; sizes that come
    /// from the user go through [`AlignedBytes::try_zeroed`].
    pub fn zeroed(len: usize) -> Self {
        match AlignedBytes::try_zeroed(len) {
            Some(b) => b,
            None => match Layout::from_size_align(len.max(1), ALIGN) {
                Ok(layout) => std::alloc::handle_alloc_error(layout),
                Err(_) => panic!("a host buffer of {len} bytes cannot be laid out"),
            },
        }
    }

    /// Zeroed storage of `len` bytes, or `None` when no layout of that size exists (over
    /// `isize::MAX`) or the allocator fails.
    pub fn try_zeroed(len: usize) -> Option<Self> {
        if let Some(ptr) = large::take(len) {
            // SAFETY: a pooled block of at least `len` bytes, owned from here on.
            unsafe { std::ptr::write_bytes(ptr, 0, len) };
            return Some(AlignedBytes { ptr, len });
        }
        let layout = large::layout(len)?;
        // SAFETY: layout has non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        (!ptr.is_null()).then_some(AlignedBytes { ptr, len })
    }

    /// Storage of `len` bytes whose contents are not initialised (no zero-filling pass), or
    /// `None` as [`AlignedBytes::try_zeroed`].
    ///
    /// # Safety
    /// The caller writes every byte before anything reads them (compiled code writing an
    /// output it defines completely).
    pub unsafe fn try_uninit(len: usize) -> Option<Self> {
        if let Some(ptr) = large::take(len) {
            return Some(AlignedBytes { ptr, len });
        }
        let layout = large::layout(len)?;
        // SAFETY: layout has non-zero size; the contents are written before use (contract).
        let ptr = unsafe { alloc(layout) };
        (!ptr.is_null()).then_some(AlignedBytes { ptr, len })
    }

    /// The bytes.
    #[inline]
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for len bytes for the lifetime of self.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// The bytes, mutably (exclusive access through `&mut self`).
    #[inline]
    fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: ptr is valid for len bytes and `&mut self` excludes other access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for AlignedBytes {
    fn drop(&mut self) {
        if large::give(self.ptr, self.len) {
            return;
        }
        // SAFETY: allocated in `try_zeroed` / `try_uninit` with this layout.
        unsafe { dealloc(self.ptr, large::layout(self.len).expect("laid out when allocated")) }
    }
}

/// Recycling of large host blocks. glibc serves blocks above its mmap threshold (32 MiB at
/// most, where the CPU executor sets it) with a fresh mapping each time, so a program whose
/// output or temporaries are larger pays page faults and the kernel's zeroing of every page
/// on every call (a 4096x4096 f32 result: ~30 ms of a 50 ms matmul). Freed blocks of at least
/// [`large::MIN`] bytes are kept here instead, up to [`large::bound`] bytes in all, and handed
/// out again for a request of the same rounded size (XLA's CPU client keeps its buffers in a
/// pool for the same reason). `release` (behind `cpu::release_memory`) frees them.
pub mod large {
    use std::alloc::{dealloc, Layout};
    use std::sync::Mutex;

    /// The smallest block kept (glibc keeps smaller ones in its heap already).
    pub const MIN: usize = 32 << 20;
    /// Sizes are rounded up to this granule, so that blocks are reused across nearby sizes.
    const GRANULE: usize = 1 << 20;
    /// The most blocks kept.
    const SLOTS: usize = 16;

    /// The kept blocks as (rounded size, address); at most [`SLOTS`] of them.
    static POOL: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

    fn kept(pool: &[(usize, usize)]) -> usize {
        pool.iter().map(|&(size, _)| size).sum()
    }

    /// The allocation size of a request of `len` bytes.
    fn rounded(len: usize) -> usize {
        if len >= MIN {
            len.div_ceil(GRANULE).saturating_mul(GRANULE)
        } else {
            len.max(1)
        }
    }

    /// The layout every host block of `len` bytes is allocated and freed with.
    pub(super) fn layout(len: usize) -> Option<Layout> {
        Layout::from_size_align(rounded(len), super::ALIGN).ok()
    }

    /// The most bytes kept: an eighth of the memory `QUABLA_MAX_BYTES` allows (the machine's),
    /// at most 1 GiB.
    pub fn bound() -> usize {
        static B: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        *B.get_or_init(|| (quabla_dialect::size::max_bytes() / 8).min(1 << 30) as usize)
    }

    /// A kept block for a request of `len` bytes, if one of its rounded size is free.
    pub(super) fn take(len: usize) -> Option<*mut u8> {
        if len < MIN {
            return None;
        }
        let want = rounded(len);
        let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
        let i = pool.iter().position(|&(size, _)| size == want)?;
        Some(pool.swap_remove(i).1 as *mut u8)
    }

    /// Keeps the block `ptr` of `len` bytes for reuse; false when it is not kept (small, or
    /// the pool is full) and the caller frees it.
    pub(super) fn give(ptr: *mut u8, len: usize) -> bool {
        if len < MIN {
            return false;
        }
        let size = rounded(len);
        let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
        if pool.len() >= SLOTS || kept(&pool).saturating_add(size) > bound() {
            return false;
        }
        pool.push((size, ptr as usize));
        true
    }

    /// Frees every kept block.
    pub fn release() {
        let blocks = std::mem::take(&mut *POOL.lock().unwrap_or_else(|e| e.into_inner()));
        for (size, ptr) in blocks {
            // SAFETY: allocated with `layout(size)` (sizes of kept blocks are already rounded).
            unsafe { dealloc(ptr as *mut u8, layout(size).expect("kept blocks are laid out")) }
        }
    }

    /// Bytes kept now.
    pub fn kept_bytes() -> usize {
        kept(&POOL.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// A tensor on the host or on a device.
#[derive(Clone)]
pub struct Buffer {
    ty: TensorType,
    storage: Storage,
}

impl std::fmt::Debug for Buffer {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match &self.storage {
            Storage::Host(_) => write!(f, "Buffer({}, {:?})", self.ty, self.to_f64_vec()),
            Storage::Device(d) => write!(f, "Buffer({}, on device '{}')", self.ty, d.device()),
        }
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
impl Element for u8 {
    const DTYPE: DType = DType::U8;
}
impl Element for u32 {
    const DTYPE: DType = DType::U32;
}

impl Buffer {
    /// A zero-filled buffer of type `ty`, a type of an existing value (tests build them from
    /// buffers they hold); sizes from the user go through [`Buffer::try_zeros`]. A byte size
    /// that does not fit saturates, so the allocation fails instead of under-allocating.
    pub fn zeros(ty: TensorType) -> Buffer {
        let n = ty.checked_byte_size().unwrap_or(usize::MAX);
        Buffer { ty, storage: Storage::Host(Arc::new(AlignedBytes::zeroed(n))) }
    }

    /// A zero-filled buffer of type `ty` whose size comes from the user: the size is checked
    /// ([`TensorType::check_bytes`]: [`BufferError::TooLarge`]; zero extents are allowed) and the allocation is fallible
    /// ([`BufferError::OutOfMemory`]), so nothing wraps or aborts.
    pub fn try_zeros(ty: TensorType) -> Result<Buffer, BufferError> {
        let bytes = ty.check_bytes("buffer").map_err(|e| BufferError::TooLarge { ty: ty.clone(), message: e.violation().map_or_else(|| e.to_string(), |v| format!("({}) {}", v.constraint, v.message)) })?;
        match AlignedBytes::try_zeroed(bytes) {
            Some(b) => Ok(Buffer { ty, storage: Storage::Host(Arc::new(b)) }),
            None => Err(BufferError::OutOfMemory { ty, bytes }),
        }
    }

    /// A buffer of type `ty` with the checks and errors of [`Buffer::try_zeros`] but no
    /// zero-filling pass: for the outputs of compiled code, which writes all of them (a
    /// multi-megabyte output was otherwise written twice per call).
    ///
    /// # Safety
    /// Every byte is written before the buffer is read ([`AlignedBytes::try_uninit`]).
    pub unsafe fn try_uninit(ty: TensorType) -> Result<Buffer, BufferError> {
        let bytes = ty.check_bytes("buffer").map_err(|e| BufferError::TooLarge { ty: ty.clone(), message: e.violation().map_or_else(|| e.to_string(), |v| format!("({}) {}", v.constraint, v.message)) })?;
        // SAFETY: forwarded to the caller.
        match unsafe { AlignedBytes::try_uninit(bytes) } {
            Some(b) => Ok(Buffer { ty, storage: Storage::Host(Arc::new(b)) }),
            None => Err(BufferError::OutOfMemory { ty, bytes }),
        }
    }

    /// A buffer of type `ty` with every element `elem` (the little-endian bytes of one
    /// element), with the checks of [`Buffer::try_zeros`]. An all-zero element writes nothing.
    pub fn try_splat(ty: TensorType, elem: &[u8]) -> Result<Buffer, BufferError> {
        let size = ty.dtype.size();
        if elem.len() != size {
            return Err(BufferError::TooLarge { ty, message: format!("a splat element of {} bytes for item size {size}", elem.len()) });
        }
        let mut b = Buffer::try_zeros(ty)?;
        if elem.iter().any(|&x| x != 0) {
            if let Some(dst) = b.bytes_mut() {
                for c in dst.chunks_exact_mut(size) {
                    c.copy_from_slice(elem);
                }
            }
        }
        Ok(b)
    }

    /// A buffer of type `ty` whose bytes live in `storage` on a device; the storage's length
    /// must be the type's byte size.
    pub fn from_device(ty: TensorType, storage: Arc<dyn DeviceStorage>) -> Result<Buffer, BufferError> {
        let expected = ty.checked_byte_size().unwrap_or(usize::MAX);
        let actual = storage.byte_len();
        if actual != expected {
            return Err(BufferError::StorageSize { device: storage.device().to_string(), ty, expected, actual });
        }
        Ok(Buffer { ty, storage: Storage::Device(storage) })
    }

    /// Where the bytes live.
    #[inline]
    pub fn storage(&self) -> &Storage {
        &self.storage
    }

    /// True when the bytes are in host memory.
    #[inline]
    pub fn is_host(&self) -> bool {
        matches!(self.storage, Storage::Host(_))
    }

    /// The device holding the bytes: [`HOST`] for host memory, else the device storage's name.
    #[inline]
    pub fn device(&self) -> &str {
        match &self.storage {
            Storage::Host(_) => HOST,
            Storage::Device(d) => d.device(),
        }
    }

    /// This buffer in host memory: a cheap handle clone for a host buffer, a copy of the
    /// bytes for a device buffer.
    pub fn to_host(&self) -> Result<Buffer, BufferError> {
        match &self.storage {
            Storage::Host(_) => Ok(self.clone()),
            Storage::Device(d) => {
                let mut bytes = AlignedBytes::try_zeroed(d.byte_len()).ok_or_else(|| BufferError::OutOfMemory { ty: self.ty.clone(), bytes: d.byte_len() })?;
                d.copy_to_host(bytes.as_mut_slice()).map_err(|message| BufferError::Transfer { device: d.device().to_string(), ty: self.ty.clone(), message })?;
                Ok(Buffer { ty: self.ty.clone(), storage: Storage::Host(Arc::new(bytes)) })
            }
        }
    }

    /// The host bytes, or [`BufferError::NotOnHost`] for a device buffer.
    #[inline]
    pub fn host_bytes(&self) -> Result<&[u8], BufferError> {
        match &self.storage {
            Storage::Host(h) => Ok(h.as_slice()),
            Storage::Device(d) => Err(BufferError::NotOnHost { device: d.device().to_string(), ty: self.ty.clone() }),
        }
    }

    /// Typed view of the host elements; [`BufferError::DTypeMismatch`] when `T` is not the
    /// dtype, [`BufferError::NotOnHost`] for a device buffer.
    #[inline]
    pub fn try_as_slice<T: Element>(&self) -> Result<&[T], BufferError> {
        if T::DTYPE != self.ty.dtype {
            return Err(BufferError::DTypeMismatch { ty: self.ty.clone(), requested: T::DTYPE });
        }
        let bytes = self.host_bytes()?;
        // SAFETY: host storage is 64-byte aligned and holds len() elements of T.
        Ok(unsafe { std::slice::from_raw_parts(bytes.as_ptr() as *const T, self.len()) })
    }

    /// The elements as a literal; [`BufferError::NotOnHost`] for a device buffer.
    pub fn try_to_literal(&self) -> Result<Literal, BufferError> {
        Ok(Literal { ty: self.ty.clone(), bytes: self.host_bytes()?.into() })
    }

    /// The host storage, when there is one.
    #[inline]
    fn host(&self) -> Option<&Arc<AlignedBytes>> {
        match &self.storage {
            Storage::Host(h) => Some(h),
            Storage::Device(_) => None,
        }
    }

    /// Unique access to the host storage, when there is one and this handle is its only owner.
    #[inline]
    fn host_mut(&mut self) -> Option<&mut AlignedBytes> {
        match &mut self.storage {
            Storage::Host(h) => Arc::get_mut(h),
            Storage::Device(_) => None,
        }
    }

    /// Copies raw little-endian element bytes (i1: one byte per element, nonzero = true).
    pub fn from_bytes(ty: TensorType, bytes: &[u8]) -> Result<Buffer, String> {
        let want = ty.checked_byte_size();
        if want != Some(bytes.len()) {
            return Err(match want {
                Some(want) => format!("{} needs {want} bytes, got {}", ty, bytes.len()),
                None => format!("{ty} is too big: its byte size overflows"),
            });
        }
        let mut b = Buffer::try_zeros(ty).map_err(|e| e.to_string())?;
        b.fill_fresh(bytes);
        Ok(b)
    }

    /// Copies a slice of elements with the given shape.
    pub fn from_slice<T: Element>(shape: &[i64], data: &[T]) -> Result<Buffer, String> {
        let ty = TensorType::new(T::DTYPE, shape);
        if data.len() != ty.num_elements() {
            return Err(format!("{} has {} elements, got {}", ty, ty.num_elements(), data.len()));
        }
        // SAFETY: T is one of the seven plain element types; bool is one byte 0/1.
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

    /// A host buffer holding a literal's elements. Panics when the host allocation of the
    /// copy fails (the literal's own bytes already exist); user-sized data goes through
    /// [`Buffer::from_bytes`] or [`Buffer::try_from_literal`], which return the error.
    pub fn from_literal(l: &Literal) -> Buffer {
        Buffer::from_bytes(l.ty.clone(), &l.bytes).unwrap_or_else(|e| panic!("a literal's host buffer: {e}"))
    }

    /// [`Buffer::from_literal`] with a typed error: [`BufferError::TooLarge`] or
    /// [`BufferError::OutOfMemory`] when the copy cannot be allocated (the interpreter's
    /// `constant`), `TooLarge` also for a literal whose bytes do not fit its type.
    pub fn try_from_literal(l: &Literal) -> Result<Buffer, BufferError> {
        if l.ty.checked_byte_size() != Some(l.bytes.len()) {
            return Err(BufferError::TooLarge { ty: l.ty.clone(), message: format!("the literal holds {} bytes", l.bytes.len()) });
        }
        let mut b = Buffer::try_zeros(l.ty.clone())?;
        b.fill_fresh(&l.bytes);
        Ok(b)
    }

    /// Copies element bytes of the buffer's size into a fresh (unique) host buffer; i1
    /// bytes become 0/1.
    fn fill_fresh(&mut self, bytes: &[u8]) {
        let is_bool = self.ty.dtype == DType::I1;
        let dst = self.bytes_mut().expect("fresh buffer is unique");
        if is_bool {
            for (d, s) in dst.iter_mut().zip(bytes) {
                *d = (*s != 0) as u8;
            }
        } else {
            dst.copy_from_slice(bytes);
        }
    }

    /// The elements as a literal. A device buffer has no host data: its literal is a splat of
    /// NaN converted to the dtype; use [`Buffer::try_to_literal`] or [`Buffer::to_host`].
    pub fn to_literal(&self) -> Literal {
        match self.host() {
            Some(h) => Literal { ty: self.ty.clone(), bytes: h.as_slice().into() },
            None => Literal::splat(self.ty.clone(), f64::NAN),
        }
    }

    /// The tensor type.
    #[inline]
    pub fn ty(&self) -> &TensorType {
        &self.ty
    }

    /// The element type.
    #[inline]
    pub fn dtype(&self) -> DType {
        self.ty.dtype
    }

    /// The extents.
    #[inline]
    pub fn shape(&self) -> &[i64] {
        &self.ty.shape
    }

    /// The number of elements.
    #[inline]
    pub fn len(&self) -> usize {
        self.ty.num_elements()
    }

    /// True when there are no elements.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The host bytes; empty for a device buffer (see [`Buffer::host_bytes`]).
    #[inline]
    pub fn bytes(&self) -> &[u8] {
        self.host().map_or(&[], |h| h.as_slice())
    }

    /// Mutable bytes while this handle is the only one; `None` once shared, and for a device
    /// buffer.
    #[inline]
    pub fn bytes_mut(&mut self) -> Option<&mut [u8]> {
        Some(self.host_mut()?.as_mut_slice())
    }

    /// Typed view of the elements; `None` when `T` does not match the dtype, and for a device
    /// buffer (see [`Buffer::try_as_slice`]).
    #[inline]
    pub fn as_slice<T: Element>(&self) -> Option<&[T]> {
        self.try_as_slice().ok()
    }

    /// Mutable typed view while unique (`None` for a device buffer).
    #[inline]
    pub fn as_mut_slice<T: Element>(&mut self) -> Option<&mut [T]> {
        if T::DTYPE != self.ty.dtype {
            return None;
        }
        let n = self.len();
        let d = self.host_mut()?;
        // SAFETY: unique, aligned, n elements of T.
        Some(unsafe { std::slice::from_raw_parts_mut(d.ptr as *mut T, n) })
    }

    /// Raw host data pointer (for executables reading inputs); null for a device buffer.
    #[inline]
    pub fn as_ptr(&self) -> *const u8 {
        self.host().map_or(std::ptr::null(), |h| h.ptr)
    }

    /// Element `i` as f64 (NaN for a device buffer, which has no host data).
    #[inline]
    pub fn get_f64(&self, i: usize) -> f64 {
        match self.host() {
            Some(h) => quabla_dialect::types::decode_f64(self.ty.dtype, h.as_slice(), i),
            None => f64::NAN,
        }
    }

    /// Element `i` as i64, exact for integer and bool dtypes (0 for a device buffer, which has
    /// no host data).
    #[inline]
    pub fn get_i64(&self, i: usize) -> i64 {
        match self.host() {
            Some(h) => quabla_dialect::types::decode_i64(self.ty.dtype, h.as_slice(), i),
            None => 0,
        }
    }

    /// The elements as f64 (NaN for a device buffer).
    pub fn to_f64_vec(&self) -> Vec<f64> {
        (0..self.len()).map(|i| self.get_f64(i)).collect()
    }

    /// True when both buffers share storage (zero-copy views).
    #[inline]
    pub fn same_storage(&self, other: &Buffer) -> bool {
        match (&self.storage, &other.storage) {
            (Storage::Host(a), Storage::Host(b)) => Arc::ptr_eq(a, b),
            (Storage::Device(a), Storage::Device(b)) => Arc::ptr_eq(a, b),
            (Storage::Host(_), Storage::Device(_)) | (Storage::Device(_), Storage::Host(_)) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_blocks_are_reused_zeroed_and_released() {
        // One test touches the pool, so no other test's blocks come and go meanwhile.
        let len = large::MIN + 12345;
        let mut a = unsafe { AlignedBytes::try_uninit(len) }.unwrap();
        a.as_mut_slice().fill(7);
        let ptr = a.ptr;
        drop(a);
        assert!(large::kept_bytes() >= len);
        // A request of the same rounded size gets the block back, zeroed when asked.
        let b = AlignedBytes::try_zeroed(len + 100).unwrap();
        assert_eq!(b.ptr, ptr);
        assert!(b.as_slice().iter().all(|&x| x == 0));
        drop(b);
        // Small blocks are never kept; release frees everything.
        let before = large::kept_bytes();
        drop(AlignedBytes::try_zeroed(1 << 20).unwrap());
        assert_eq!(large::kept_bytes(), before);
        large::release();
        assert_eq!(large::kept_bytes(), 0);
    }

    #[test]
    fn aligned_and_typed() {
        let b = Buffer::from_slice(&[2, 2], &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
        assert_eq!(b.as_ptr() as usize % ALIGN, 0);
        assert_eq!(b.as_slice::<f32>().unwrap(), &[1.0, 2.0, 3.0, 4.0]);
        assert!(b.as_slice::<f64>().is_none());
        let c = Buffer::from_slice(&[3], &[true, false, true]).unwrap();
        assert_eq!(c.to_f64_vec(), vec![1.0, 0.0, 1.0]);
    }

    /// Device bytes kept in a `Vec`, to exercise the storage seam; `fail` makes every copy to
    /// the host fail.
    struct TestDevice {
        bytes: Vec<u8>,
        fail: bool,
    }

    impl DeviceStorage for TestDevice {
        fn device(&self) -> &str {
            "test:0"
        }
        fn byte_len(&self) -> usize {
            self.bytes.len()
        }
        fn copy_to_host(&self, dst: &mut [u8]) -> Result<(), String> {
            if self.fail {
                return Err("device lost".into());
            }
            dst.copy_from_slice(&self.bytes);
            Ok(())
        }
    }

    fn on_device(shape: &[i64], v: &[f32], fail: bool) -> Buffer {
        let bytes = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        Buffer::from_device(TensorType::new(DType::F32, shape), Arc::new(TestDevice { bytes, fail })).unwrap()
    }

    #[test]
    fn device_storage_must_match_the_type() {
        let t = TensorType::new(DType::F64, [3]);
        let e = Buffer::from_device(t.clone(), Arc::new(TestDevice { bytes: vec![0; 12], fail: false })).unwrap_err();
        assert_eq!(e, BufferError::StorageSize { device: "test:0".into(), ty: t, expected: 24, actual: 12 });
        assert!(e.to_string().contains("needs 24 bytes"), "{e}");
    }

    #[test]
    fn host_reads_of_a_device_buffer_are_typed_errors() {
        let mut d = on_device(&[2], &[1.5, -2.0], false);
        assert!(!d.is_host());
        assert_eq!(d.device(), "test:0");
        let not_on_host = BufferError::NotOnHost { device: "test:0".into(), ty: d.ty().clone() };
        assert_eq!(d.host_bytes().unwrap_err(), not_on_host);
        assert_eq!(d.try_as_slice::<f32>().unwrap_err(), not_on_host);
        assert_eq!(d.try_to_literal().unwrap_err(), not_on_host);
        assert!(not_on_host.to_string().contains("Buffer::to_host"), "{not_on_host}");
        // The infallible accessors see no host data.
        assert!(d.as_slice::<f32>().is_none());
        assert!(d.bytes().is_empty());
        assert!(d.as_ptr().is_null());
        assert!(d.bytes_mut().is_none());
        assert!(d.as_mut_slice::<f32>().is_none());
        assert!(d.get_f64(0).is_nan());
        assert_eq!(d.get_i64(1), 0);
        assert!(d.to_f64_vec().iter().all(|x| x.is_nan()));
        assert_eq!(d.to_literal(), Literal::splat(d.ty().clone(), f64::NAN));
        assert_eq!(format!("{d:?}"), "Buffer(tensor<2xf32>, on device 'test:0')");
    }

    #[test]
    fn to_host_copies_device_bytes_into_aligned_host_storage() {
        let d = on_device(&[2, 2], &[1.0, 2.0, 3.0, -4.5], false);
        let h = d.to_host().unwrap();
        assert!(h.is_host());
        assert_eq!(h.device(), HOST);
        assert_eq!(h.ty(), d.ty());
        assert_eq!(h.as_ptr() as usize % ALIGN, 0);
        assert_eq!(h.as_slice::<f32>().unwrap(), &[1.0, 2.0, 3.0, -4.5]);
        assert!(!h.same_storage(&d));
        // A host buffer's to_host is the same storage, not a copy.
        assert!(h.to_host().unwrap().same_storage(&h));
        // Clones of a device buffer share its storage.
        assert!(d.clone().same_storage(&d));
        assert!(!d.same_storage(&on_device(&[2, 2], &[1.0, 2.0, 3.0, -4.5], false)));
    }

    #[test]
    fn a_failed_transfer_is_a_typed_error() {
        let d = on_device(&[1], &[7.0], true);
        let e = d.to_host().unwrap_err();
        assert_eq!(e, BufferError::Transfer { device: "test:0".into(), ty: d.ty().clone(), message: "device lost".into() });
        assert!(e.to_string().contains("device lost"), "{e}");
    }

    #[test]
    fn sizes_from_the_user_are_checked_and_allocations_fallible() {
        // Overflowing element count: a typed error, never a wrapped, under-sized buffer.
        let t = TensorType::new(DType::F32, [1 << 62, 4]);
        let e = Buffer::try_zeros(t.clone()).unwrap_err();
        assert!(matches!(&e, BufferError::TooLarge { ty, message } if *ty == t && message.contains("size_overflow")), "{e}");
        // Over the limit (1 TiB by default): refused before allocating.
        let e = Buffer::try_zeros(TensorType::new(DType::F64, [1 << 20, 1 << 20])).unwrap_err();
        assert!(matches!(&e, BufferError::TooLarge { message, .. } if message.contains("size_limit")), "{e}");
        // A size no allocator can serve is a typed error, not an abort.
        assert!(AlignedBytes::try_zeroed(usize::MAX - 8).is_none());
        assert!(AlignedBytes::try_zeroed((isize::MAX as usize) - 1024).is_none());
        assert!(Buffer::from_bytes(t, &[]).unwrap_err().contains("too big"));
        // Splats fill every element; zeros stay as allocated.
        let s = Buffer::try_splat(TensorType::new(DType::I32, [3]), &7i32.to_le_bytes()).unwrap();
        assert_eq!(s.as_slice::<i32>().unwrap(), &[7, 7, 7]);
        let z = Buffer::try_splat(TensorType::new(DType::F64, [2]), &0f64.to_le_bytes()).unwrap();
        assert_eq!(z.as_slice::<f64>().unwrap(), &[0.0, 0.0]);
        assert!(Buffer::try_splat(TensorType::new(DType::F64, [2]), &[1]).is_err());
        let oom = BufferError::OutOfMemory { ty: TensorType::new(DType::F32, [8]), bytes: 32 };
        assert!(oom.to_string().starts_with("out of memory"), "{oom}");
    }

    #[test]
    fn typed_views_name_the_mismatch() {
        let b = Buffer::from_slice(&[1], &[3i32]).unwrap();
        assert_eq!(b.try_as_slice::<i32>().unwrap(), &[3]);
        assert_eq!(b.try_as_slice::<i64>().unwrap_err(), BufferError::DTypeMismatch { ty: b.ty().clone(), requested: DType::I64 });
        assert_eq!(b.host_bytes().unwrap(), &3i32.to_le_bytes());
        assert_eq!(b.try_to_literal().unwrap(), b.to_literal());
        assert_eq!(b.device(), HOST);
    }

    #[test]
    fn the_interpreter_rejects_device_operands() {
        let h = Buffer::from_slice(&[1], &[1.0f32]).unwrap();
        let d = on_device(&[1], &[2.0], false);
        let add = quabla_dialect::OpKind::Elementwise(quabla_dialect::ElementwiseOp::Binary { op: quabla_dialect::BinaryOp::Add });
        let e = crate::run_op(&add, &[&h, &d]).unwrap_err();
        assert_eq!(e, crate::InterpError::NotOnHost { op: "add", index: 1, device: "test:0".into() });
        let sum = crate::run_op(&add, &[&h, &d.to_host().unwrap()]).unwrap();
        assert_eq!(sum[0].as_slice::<f32>().unwrap(), &[3.0]);
    }
}

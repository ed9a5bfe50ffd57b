//! `quabla.Tensor`: an immutable host tensor wrapping a runtime [`Buffer`] (64-byte aligned,
//! reference-counted storage). NumPy interop lives here: import through the buffer protocol
//! (any strides, always a copy, non-native byte order and unsupported formats rejected
//! explicitly) and a read-only buffer export that shares the tensor's storage (zero-copy).
//! Python-level methods (operators, reductions, repr) are attached by `quabla/_tensor.py`.
//!
//! Invariants: a Tensor's buffer is never written after construction, so an exported view
//! stays valid while the view holds a reference to the Tensor (`view.obj`).
use std::ffi::{c_int, c_void, CStr};

use pyo3::buffer::PyUntypedBuffer;
use pyo3::exceptions::{PyBufferError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyInt, PyList, PyTuple, PyType};
use pyo3::{ffi, IntoPyObjectExt};
use quabla_dialect::{DType, TensorType};
use quabla_runtime::Buffer;

use crate::errors;

/// The seven dtypes in the order of their integer codes (shared with `quabla/dtypes.py`).
pub const DTYPES: [DType; 7] = DType::ALL;

/// The Python dtype objects (`quabla.float32`, ...), registered at import by `quabla.dtypes`.
static PY_DTYPES: PyOnceLock<Vec<Py<PyAny>>> = PyOnceLock::new();

/// The integer code of a dtype (index into [`DTYPES`]).
pub fn code(d: DType) -> usize {
    match d {
        DType::F32 => 0,
        DType::F64 => 1,
        DType::I1 => 2,
        DType::I32 => 3,
        DType::I64 => 4,
        DType::U8 => 5,
        DType::U32 => 6,
    }
}

/// The dtype of an integer code.
pub fn dtype_of(c: usize) -> PyResult<DType> {
    DTYPES.get(c).copied().ok_or_else(|| PyValueError::new_err(format!("unknown dtype code {c}")))
}

/// Registers the Python dtype objects, in code order.
#[pyfunction]
pub fn register_dtypes(py: Python<'_>, objs: Vec<Py<PyAny>>) -> PyResult<()> {
    errors::guard(|| {
        if objs.len() != DTYPES.len() {
            return Err(PyValueError::new_err(format!("register_dtypes expects {} dtype objects", DTYPES.len())));
        }
        let _ = PY_DTYPES.set(py, objs);
        Ok(())
    })
}

/// The Python object of a dtype (its code when none was registered yet).
pub fn py_dtype(py: Python<'_>, d: DType) -> Py<PyAny> {
    match PY_DTYPES.get(py) {
        Some(v) => v[code(d)].clone_ref(py),
        None => code(d).into_py_any(py).expect("int conversion"),
    }
}

/// A shape as a Python tuple.
pub fn shape_tuple<'py>(py: Python<'py>, shape: &[i64]) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(py, shape)
}

/// An immutable tensor: its buffer on the host, or on a device (an executor's resident
/// result, e.g. an `mlx` output), read through a host copy made once on first read.
#[pyclass(module = "quabla", name = "Tensor", frozen, weakref, subclass)]
pub struct Tensor {
    pub buf: Buffer,
    /// The host copy of a device buffer (made on the first host read).
    host_copy: std::sync::OnceLock<Buffer>,
}

impl Tensor {
    pub fn new(buf: Buffer) -> Tensor {
        Tensor { buf, host_copy: std::sync::OnceLock::new() }
    }

    /// The device holding the buffer as a registry name: `cpu` for host memory, else the
    /// device of its storage (`cuda:0`, `mlx`).
    pub fn device_name(&self) -> &str {
        if self.buf.is_host() {
            quabla_runtime::DEFAULT_DEVICE
        } else {
            self.buf.device()
        }
    }

    /// The buffer in host memory: the buffer itself, or the (cached) copy of a device buffer.
    pub fn host(&self, py: Python<'_>) -> PyResult<&Buffer> {
        if self.buf.is_host() {
            return Ok(&self.buf);
        }
        if let Some(b) = self.host_copy.get() {
            return Ok(b);
        }
        let b = self.buf.to_host().map_err(|e| errors::buffer(py, &e, "Tensor"))?;
        Ok(self.host_copy.get_or_init(|| b))
    }
}

/// Wraps a buffer into a new Python Tensor.
pub fn wrap(py: Python<'_>, buf: Buffer) -> PyResult<Py<Tensor>> {
    Py::new(py, Tensor::new(buf))
}

/// Shape and strides storage of one buffer export, freed in `__releasebuffer__`.
struct ExportInfo {
    shape: Vec<isize>,
    strides: Vec<isize>,
}

fn format_of(d: DType) -> &'static CStr {
    match d {
        DType::F32 => c"f",
        DType::F64 => c"d",
        DType::I1 => c"?",
        DType::I32 => c"i",
        DType::I64 => c"q",
        DType::U8 => c"B",
        DType::U32 => c"I",
    }
}

fn scalar_to_py(py: Python<'_>, b: &Buffer, i: usize) -> PyResult<Py<PyAny>> {
    match b.dtype() {
        DType::F32 | DType::F64 => b.get_f64(i).into_py_any(py),
        DType::I1 => (b.get_i64(i) != 0).into_py_any(py),
        DType::I32 | DType::I64 | DType::U8 | DType::U32 => b.get_i64(i).into_py_any(py),
    }
}

fn nested_list(py: Python<'_>, b: &Buffer, dim: usize, offset: usize, strides: &[i64]) -> PyResult<Py<PyAny>> {
    let shape = b.shape();
    if dim == shape.len() {
        return scalar_to_py(py, b, offset);
    }
    let items = (0..shape[dim] as usize).map(|i| nested_list(py, b, dim + 1, offset + i * strides[dim] as usize, strides)).collect::<PyResult<Vec<_>>>()?;
    Ok(PyList::new(py, items)?.into_any().unbind())
}

#[pymethods]
impl Tensor {
    /// The shape as a tuple of ints.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        errors::guard(|| {
            shape_tuple(py, self.buf.shape())
        })
    }

    /// The dtype (`quabla.float32`, ...).
    #[getter]
    fn dtype(&self, py: Python<'_>) -> Py<PyAny> {
        py_dtype(py, self.buf.dtype())
    }

    /// The integer dtype code (internal).
    #[getter]
    fn _code(&self) -> usize {
        code(self.buf.dtype())
    }

    /// The number of dimensions.
    #[getter]
    fn ndim(&self) -> usize {
        self.buf.shape().len()
    }

    /// The number of elements.
    #[getter]
    fn size(&self) -> usize {
        self.buf.len()
    }

    /// The size of one element in bytes (bool is one byte).
    #[getter]
    fn itemsize(&self) -> usize {
        self.buf.dtype().size()
    }

    /// The elements as (nested) Python lists of floats, ints or bools.
    fn tolist(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        errors::guard(|| {
            let b = self.host(py)?;
            nested_list(py, b, 0, 0, &b.ty().strides())
        })
    }

    /// The only element of a one-element tensor as a Python scalar.
    fn item(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        errors::guard(|| {
            if self.buf.len() != 1 {
                return Err(errors::new(py, "ShapeError", format!("item(): only one-element tensors can be converted to Python scalars, got shape {:?}", self.buf.shape())));
            }
            scalar_to_py(py, self.host(py)?, 0)
        })
    }

    fn __float__(&self, py: Python<'_>) -> PyResult<f64> {
        errors::guard(|| {
            if self.buf.len() != 1 {
                return Err(errors::new(py, "ShapeError", format!("float(): only one-element tensors can be converted to Python scalars, got shape {:?}", self.buf.shape())));
            }
            Ok(self.host(py)?.get_f64(0))
        })
    }

    fn __int__(&self, py: Python<'_>) -> PyResult<i64> {
        errors::guard(|| {
            if self.buf.len() != 1 {
                return Err(errors::new(py, "ShapeError", format!("int(): only one-element tensors can be converted to Python scalars, got shape {:?}", self.buf.shape())));
            }
            Ok(self.host(py)?.get_i64(0))
        })
    }

    fn __index__(&self, py: Python<'_>) -> PyResult<i64> {
        errors::guard(|| {
            if self.buf.len() != 1 || self.buf.dtype().is_float() {
                return Err(errors::new(py, "ArgumentTypeError", format!("only one-element integer or bool tensors can be used as an index, got {}", self.buf.ty())));
            }
            Ok(self.host(py)?.get_i64(0))
        })
    }

    fn __bool__(&self, py: Python<'_>) -> PyResult<bool> {
        errors::guard(|| {
            if self.buf.len() != 1 {
                return Err(errors::new(
                    py,
                    "ShapeError",
                    format!("bool(): the truth value of a tensor of shape {:?} is ambiguous; use qb.any or qb.all", self.buf.shape()),
                ));
            }
            Ok(self.host(py)?.get_f64(0) != 0.0)
        })
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        errors::guard(|| {
            match self.buf.shape().first() {
                Some(&n) => Ok(n as usize),
                None => Err(errors::new(py, "ArgumentTypeError", "len() of a 0-d tensor")),
            }
        })
    }

    /// True when both tensors share storage (zero-copy views, `qb.array` of a Tensor).
    fn _shares_storage(&self, other: &Tensor) -> bool {
        self.buf.same_storage(&other.buf)
    }

    /// The address of the tensor's storage (for zero-copy checks); 0 for a device buffer.
    #[getter]
    fn _data_ptr(&self) -> usize {
        self.buf.as_ptr() as usize
    }

    /// Where the tensor's buffer lives: `host`, or the device name of an executor's resident
    /// result (`mlx`).
    #[getter]
    fn _device(&self) -> PyResult<String> {
        errors::guard(|| Ok(self.buf.device().to_string()))
    }

    /// The device holding the tensor (`qb.Tensor.device`): `cpu` for host memory, else the
    /// device of an executor's resident result or of `qb.device_put` (`cuda:0`, `mlx`).
    #[getter]
    fn device(&self) -> PyResult<String> {
        errors::guard(|| Ok(self.device_name().to_string()))
    }

    /// Read-only, C-contiguous export of the tensor's storage.
    unsafe fn __getbuffer__(slf: Bound<'_, Self>, view: *mut ffi::Py_buffer, flags: c_int) -> PyResult<()> {
        errors::guard(|| {
            if view.is_null() {
                return Err(PyBufferError::new_err("view is null"));
            }
            if (flags & ffi::PyBUF_WRITABLE) == ffi::PyBUF_WRITABLE {
                return Err(PyBufferError::new_err("quabla tensors are immutable: the buffer is read-only"));
            }
            let t = slf.get();
            let b = t.host(slf.py())?;
            let item = b.dtype().size() as isize;
            let shape: Vec<isize> = b.shape().iter().map(|&d| d as isize).collect();
            let strides: Vec<isize> = b.ty().strides().iter().map(|&s| s as isize * item).collect();
            let info = Box::new(ExportInfo { shape, strides });
            // SAFETY: view is a valid, caller-owned Py_buffer; every pointer stored in it stays
            // valid until __releasebuffer__: the storage is kept alive by `obj` (a strong
            // reference to this immutable Tensor) and the shape/strides by `internal`.
            unsafe {
                (*view).buf = b.as_ptr() as *mut c_void;
                (*view).len = b.ty().checked_byte_size().unwrap_or(0) as isize;
                (*view).readonly = 1;
                (*view).itemsize = item;
                (*view).format = if (flags & ffi::PyBUF_FORMAT) == ffi::PyBUF_FORMAT { format_of(b.dtype()).as_ptr() as *mut _ } else { std::ptr::null_mut() };
                (*view).ndim = info.shape.len() as c_int;
                (*view).shape = if (flags & ffi::PyBUF_ND) == ffi::PyBUF_ND { info.shape.as_ptr() as *mut _ } else { std::ptr::null_mut() };
                (*view).strides = if (flags & ffi::PyBUF_STRIDES) == ffi::PyBUF_STRIDES { info.strides.as_ptr() as *mut _ } else { std::ptr::null_mut() };
                (*view).suboffsets = std::ptr::null_mut();
                (*view).internal = Box::into_raw(info) as *mut c_void;
                (*view).obj = slf.into_any().into_ptr();
            }
            Ok(())
        })
    }

    unsafe fn __releasebuffer__(&self, view: *mut ffi::Py_buffer) {
        // SAFETY: `internal` was set by __getbuffer__ to a leaked Box<ExportInfo>.
        unsafe {
            let p = (*view).internal as *mut ExportInfo;
            if !p.is_null() {
                drop(Box::from_raw(p));
                (*view).internal = std::ptr::null_mut();
            }
        }
    }
}

/// Element decoding of an imported buffer: the source format and the target dtype.
fn import_dtype(fmt: &[u8], itemsize: usize) -> Result<DType, String> {
    let (order, ch) = match fmt {
        [c] => (b'@', *c),
        [o, c] => (*o, *c),
        _ => return Err(format!("unsupported buffer format {:?}", String::from_utf8_lossy(fmt))),
    };
    let little = cfg!(target_endian = "little");
    match order {
        b'@' | b'=' => {}
        b'<' if little => {}
        b'>' | b'!' if !little => {}
        b'<' | b'>' | b'!' => return Err(format!("non-native byte order in buffer format {:?}: convert with .astype(dtype.newbyteorder('='))", String::from_utf8_lossy(fmt))),
        _ => return Err(format!("unsupported buffer format {:?}", String::from_utf8_lossy(fmt))),
    }
    match (ch, itemsize) {
        (b'f', 4) => Ok(DType::F32),
        (b'd', 8) => Ok(DType::F64),
        (b'?', 1) => Ok(DType::I1),
        (b'i' | b'l' | b'q' | b'n', 4) => Ok(DType::I32),
        (b'i' | b'l' | b'q' | b'n', 8) => Ok(DType::I64),
        (b'B', 1) => Ok(DType::U8),
        (b'I' | b'L' | b'N', 4) => Ok(DType::U32),
        (b'e', 2) => Err("float16 is not supported: quabla dtypes are float32, float64, bool_, int32, int64, uint8 and uint32 (use .astype(np.float32))".into()),
        _ => Err(format!(
            "unsupported element format {:?} ({itemsize} bytes): quabla dtypes are float32, float64, bool_, int32, int64, uint8 and uint32",
            String::from_utf8_lossy(fmt)
        )),
    }
}

static NDARRAY: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// The type of the Tensor that a NumPy array argument of a jitted call becomes (the one
/// `_from_numpy` makes of it without a dtype, by a copy: [`from_buffer`]), for the fast
/// path's key ([`crate::callkey`]); None for anything but a `numpy.ndarray` (not its
/// subclasses) and for the arrays that path treats otherwise: 0-d, zero extents, the dtypes
/// it widens (uint8) or rejects.
pub fn ndarray_type(x: &Bound<'_, PyAny>) -> Option<TensorType> {
    let py = x.py();
    let nd = NDARRAY.get_or_try_init(py, || py.import("numpy")?.getattr("ndarray")?.cast_into::<PyType>().map(|t| t.unbind()).map_err(PyErr::from)).ok()?;
    if !x.get_type().is(nd.bind(py)) {
        return None;
    }
    let pb = PyUntypedBuffer::get(x).ok()?;
    let d = import_dtype(pb.format().to_bytes(), pb.item_size()).ok()?;
    let shape: Vec<i64> = pb.shape().iter().map(|&s| s as i64).collect();
    if d == DType::U8 || shape.is_empty() || shape.contains(&0) || pb.suboffsets().is_some() {
        return None;
    }
    Some(TensorType::new(d, shape))
}

/// Copies any object exporting the buffer protocol into a new Tensor (always a copy; any
/// strides; C order). Raises TypeError for unsupported element formats and ValueError for
/// zero-extent shapes. `shape` overrides the exported shape (same element count): NumPy
/// exports 0-d arrays without a shape, so the Python side passes them as 1-element vectors.
#[pyfunction]
#[pyo3(signature = (obj, shape=None))]
pub fn from_buffer(py: Python<'_>, obj: &Bound<'_, PyAny>, shape: Option<Vec<i64>>) -> PyResult<Py<Tensor>> {
    errors::guard(|| {
        let pb = PyUntypedBuffer::get(obj)?;
        let fmt = pb.format().to_bytes().to_vec();
        let dtype = import_dtype(&fmt, pb.item_size()).map_err(|m| errors::new(py, "DTypeError", m))?;
        let exported: Vec<i64> = pb.shape().iter().map(|&d| d as i64).collect();
        let shape = match shape {
            Some(s) if s.iter().try_fold(1i64, |a, &d| a.checked_mul(d)) == exported.iter().try_fold(1i64, |a, &d| a.checked_mul(d)) => s,
            Some(s) => return Err(errors::new(py, "ShapeError", format!("from_buffer: shape {s:?} does not match the exported shape {exported:?}"))),
            None => exported,
        };
        if shape.contains(&0) {
            return Err(errors::new(py, "ShapeError", format!("array: zero-extent shape {shape:?} is not supported (quabla tensors have positive extents)")));
        }
        if pb.suboffsets().is_some() {
            return Err(PyBufferError::new_err("buffers with suboffsets (PIL-style) are not supported"));
        }
        let ty = TensorType::new(dtype, shape);
        let item = pb.item_size();
        let n = ty.num_elements();
        // SAFETY: both copies below write all n elements before anything reads them.
        let mut out = unsafe { Buffer::try_uninit(ty) }.map_err(|e| errors::buffer(py, &e, "array"))?;
        let dst = out.bytes_mut().expect("fresh buffer");
        let src = pb.buf_ptr() as *const u8;
        if pb.is_c_contiguous() {
            // SAFETY: a C-contiguous buffer holds n * item readable bytes at buf_ptr.
            unsafe { std::ptr::copy_nonoverlapping(src, dst.as_mut_ptr(), n * item) };
        } else {
            let shp = pb.shape().to_vec();
            let strides = pb.strides().to_vec();
            let mut idx = vec![0usize; shp.len()];
            for k in 0..n {
                let off: isize = idx.iter().zip(&strides).map(|(&i, &s)| i as isize * s).sum();
                // SAFETY: idx is within shape, so off addresses an element of the exporter.
                unsafe { std::ptr::copy_nonoverlapping(src.offset(off), dst.as_mut_ptr().add(k * item), item) };
                for d in (0..shp.len()).rev() {
                    idx[d] += 1;
                    if idx[d] < shp[d] {
                        break;
                    }
                    idx[d] = 0;
                }
            }
        }
        if dtype == DType::I1 {
            for b in dst.iter_mut() {
                *b = (*b != 0) as u8;
            }
        }
        drop(pb);
        wrap(py, out)
    })
}

/// Checks that a tensor of `shape` and dtype `code` can exist (positive extents, a byte size
/// that neither overflows nor exceeds `QUABLA_MAX_BYTES`) and returns its type; `op` (the
/// Python function, e.g. `zeros` or `ShapeDtype`) prefixes the error: ShapeError for a zero
/// or negative extent, ArraySizeError (also ValueError and MemoryError) for a size.
pub fn checked_type(py: Python<'_>, op: &str, shape: Vec<i64>, code: usize) -> PyResult<TensorType> {
    let ty = TensorType::new(dtype_of(code)?, shape);
    ty.check_size("tensor").map_err(|e| errors::dialect_for(py, &e, op))?;
    Ok(ty)
}

/// [`checked_type`] for Python: validates a shape before anything is built from it
/// (`ShapeDtype`, constructors that compute their values in NumPy).
#[pyfunction]
pub fn check_shape(py: Python<'_>, op: &str, shape: Vec<i64>, code: usize) -> PyResult<()> {
    errors::guard(|| {
        checked_type(py, op, shape, code).map(|_| ())
    })
}

/// A tensor of `shape` filled with `value` converted to dtype `code`; `op` names the Python
/// function in errors. The size is checked and the allocation fallible, so a huge shape is an
/// ArraySizeError or OutOfMemoryError, never a wrapped size or an abort.
#[pyfunction]
#[pyo3(signature = (shape, value, code, op="full"))]
pub fn full(py: Python<'_>, shape: Vec<i64>, value: &Bound<'_, PyAny>, code: usize, op: &str) -> PyResult<Py<Tensor>> {
    errors::guard(|| {
        let ty = checked_type(py, op, shape, code)?;
        wrap(py, fill(py, op, ty, value)?)
    })
}

/// A buffer of `ty` filled with a Python number (ints stay exact for integer dtypes).
pub fn fill(py: Python<'_>, op: &str, ty: TensorType, value: &Bound<'_, PyAny>) -> PyResult<Buffer> {
    let not_a_number = |_| errors::new(py, "DTypeError", format!("{op}: the fill value must be a number, got {}", value.get_type().name().map(|n| n.to_string()).unwrap_or_default()));
    let one = TensorType::scalar(ty.dtype);
    let lit = if ty.dtype.is_float() {
        let v: f64 = match value.extract() {
            Ok(v) => v,
            Err(_) if value.is_instance_of::<PyInt>() => return Err(errors::new(py, "ScalarOverflowError", format!("{op}: the Python int {} is too large to convert to a float", short_int(value)))),
            Err(e) => return Err(not_a_number(e)),
        };
        quabla_dialect::Literal::from_f64s(one, &[v])
    } else if ty.dtype == DType::I1 && value.is_instance_of::<PyInt>() {
        quabla_dialect::Literal::from_f64s(one, &[value.is_truthy()? as i64 as f64])
    } else if ty.dtype == DType::I1 {
        let v: f64 = value.extract().map_err(not_a_number)?;
        quabla_dialect::Literal::from_f64s(one, &[(v != 0.0) as i64 as f64])
    } else {
        let v: i64 = match value.extract::<i64>() {
            Ok(v) => {
                // A Python int must fit the dtype (NumPy 2 and JAX raise OverflowError);
                // floats truncate, as NumPy's casts do.
                if value.is_instance_of::<PyInt>() && !int_range(ty.dtype).is_some_and(|(lo, hi)| (lo..=hi).contains(&(v as i128))) {
                    return Err(int_out_of_bounds(py, op, value, ty.dtype));
                }
                v
            }
            Err(_) if value.is_instance_of::<PyInt>() => return Err(int_out_of_bounds(py, op, value, ty.dtype)),
            Err(_) => value.extract::<f64>().map_err(not_a_number)? as i64,
        };
        quabla_dialect::Literal::from_i64s(one, &[v])
    };
    Buffer::try_splat(ty, &lit.bytes).map_err(|e| errors::buffer(py, &e, op))
}

/// The value range of an integer dtype, with its Python name (None for float and bool).
fn int_range(d: DType) -> Option<(i128, i128)> {
    match d {
        DType::I32 => Some((i32::MIN as i128, i32::MAX as i128)),
        DType::I64 => Some((i64::MIN as i128, i64::MAX as i128)),
        DType::U8 => Some((0, u8::MAX as i128)),
        DType::U32 => Some((0, u32::MAX as i128)),
        DType::F32 | DType::F64 | DType::I1 => None,
    }
}

/// The ScalarOverflowError of a Python int outside the range of integer dtype `d`.
fn int_out_of_bounds(py: Python<'_>, op: &str, value: &Bound<'_, PyAny>, d: DType) -> PyErr {
    let (lo, hi) = int_range(d).unwrap_or((i64::MIN as i128, i64::MAX as i128));
    let name = py_dtype(py, d).bind(py).getattr("name").map(|n| n.to_string()).unwrap_or_else(|_| d.to_string());
    errors::new(py, "ScalarOverflowError", format!("{op}: the Python int {} is out of bounds for {name} ({lo} to {hi})", short_int(value)))
}

/// A Python int's text, shortened when it has more than 24 digits.
fn short_int(value: &Bound<'_, PyAny>) -> String {
    let s = value.str().map(|s| s.to_string()).unwrap_or_default();
    if s.len() > 24 { format!("{}... ({} digits)", &s[..12], s.len()) } else { s }
}

/// A new Tensor object sharing `t`'s immutable storage.
#[pyfunction]
pub fn share(py: Python<'_>, t: &Tensor) -> PyResult<Py<Tensor>> {
    errors::guard(|| {
        wrap(py, t.buf.clone())
    })
}

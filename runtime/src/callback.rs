//! The host-callback functions the CPU lowering calls (`quabla_host_callback_<dtype>`, see
//! `quabla_lowering::linalg::callback`), registered with each JIT'ed module (and the compile
//! cache's loader) as their C interface symbols `_mlir_ciface_quabla_host_callback_*`. Each
//! takes the operand as an unranked memref descriptor (a private contiguous copy), the
//! callback id, the operand's index and count, and its `batched` flags as a count and a bit
//! mask; it copies the value into a [`Buffer`] and hands it to
//! [`quabla_interp::callback::deliver`], which runs the host function once the last operand
//! of the callback has arrived.
use quabla_dialect::{DType, TensorType};
use quabla_interp::callback::{deliver, fetch, record_error, Arg};
use quabla_interp::Buffer;

use crate::linalg_kernels::{view, Unranked};

/// Reads the contiguous value behind `u` (elements of Rust type `T`, dtype `d`) and delivers it.
unsafe fn run<T>(d: DType, u: *const Unranked, callback: i64, index: i64, count: i64, levels: i64, mask: i64) {
    let (p, sizes, _strides) = view::<T>(u);
    // The sizes of a memref of a program type (checked when the program was built).
    let n = quabla_dialect::size::saturating_product(sizes.iter().copied());
    let bytes = std::slice::from_raw_parts(p as *const u8, n.max(0) as usize * std::mem::size_of::<T>());
    let batched = (0..levels.clamp(0, 63)).map(|l| (mask >> l) & 1).collect();
    // The host function runs with gradual underflow, as outside compiled code (crate::fpmode).
    let _mode = crate::fpmode::Flushed::leave();
    match Buffer::from_bytes(TensorType::new(d, sizes), bytes) {
        Ok(value) => deliver(callback, index, count, Arg { value, batched }),
        Err(e) => eprintln!("quabla: host callback {callback}: {e}"),
    }
}

/// Writes result `index` of pure callback `callback` (fetched as
/// `quabla_interp::callback::fetch`) into the contiguous memref behind `u`, of dtype `d` and
/// its `batched` flags as a count and a bit mask; on a failure, records it (`record_error`: the caller raises it after the
/// program returns) and writes zeros.
unsafe fn fetch_into<T>(d: DType, u: *const Unranked, callback: i64, index: i64, levels: i64, mask: i64) {
    let (p, sizes, _strides) = view::<T>(u);
    let n = quabla_dialect::size::saturating_product(sizes.iter().copied()).max(0) as usize;
    let out = std::slice::from_raw_parts_mut(p as *mut u8, n * std::mem::size_of::<T>());
    let ty = TensorType::new(d, sizes);
    let _mode = crate::fpmode::Flushed::leave();
    let batched: Vec<i64> = (0..levels.clamp(0, 63)).map(|l| (mask >> l) & 1).collect();
    match fetch(callback, index, &ty, &batched) {
        Ok(b) if b.bytes().len() == out.len() => out.copy_from_slice(b.bytes()),
        Ok(b) => {
            record_error(format!("result {index} of pure callback {callback} has {} bytes, the program's {ty} {}", b.bytes().len(), out.len()));
            out.fill(0);
        }
        Err(e) => {
            record_error(e);
            out.fill(0);
        }
    }
}

macro_rules! entries {
    ($($f:ident: $t:ty = $d:expr),* $(,)?) => {
        $(
            unsafe extern "C" fn $f(u: *const Unranked, callback: i64, index: i64, count: i64, levels: i64, mask: i64) {
                run::<$t>($d, u, callback, index, count, levels, mask)
            }
        )*

        mod result {
            use super::*;
            $(
                pub(super) unsafe extern "C" fn $f(u: *const Unranked, callback: i64, index: i64, levels: i64, mask: i64) {
                    fetch_into::<$t>($d, u, callback, index, levels, mask)
                }
            )*
        }

        /// Every entry: (C interface symbol, address).
        pub(crate) fn symbols() -> Vec<(&'static str, *mut ())> {
            vec![
                $((concat!("_mlir_ciface_quabla_host_callback_", stringify!($f)), $f as *mut ()),)*
                $((concat!("_mlir_ciface_quabla_callback_result_", stringify!($f)), result::$f as *mut ()),)*
            ]
        }
    };
}

entries!(f32: f32 = DType::F32, f64: f64 = DType::F64, i1: u8 = DType::I1, i32: i32 = DType::I32, i64: i64 = DType::I64, ui8: u8 = DType::U8, ui32: u32 = DType::U32);

/// Registers the entries with a freshly created engine (before its first lookup).
///
/// # Safety
/// `engine` must be a live execution engine.
pub unsafe fn register(engine: mlir_sys::MlirExecutionEngine) {
    for (name, ptr) in symbols() {
        mlir_sys::mlirExecutionEngineRegisterSymbol(engine, melior::StringRef::new(name).to_raw(), ptr as *mut std::ffi::c_void);
    }
}

//! Collectives across the local GPUs through NCCL (cudarc's `nccl` feature, dynamically
//! loaded): [`all_reduce`] of one device buffer per GPU, every GPU receiving the reduction
//! (`qb.distributed.all_reduce`). One communicator per set of GPUs, created on first use
//! (`ncclCommInitAll`) and kept for the process; the reductions of one call are one NCCL
//! group on the GPUs' streams (so ordered after the programs that produced the inputs), and
//! the results are new buffers from each GPU's caching pool.
//!
//! Invariants: no NCCL call before [`present`] said the library loads (cudarc panics when it
//! is missing), and none before the CUDA probe passed; every input is checked (a CUDA
//! buffer, one per GPU, one type) before any device work.
use std::sync::{Arc, Mutex};

use cudarc::driver::CudaSlice;
use cudarc::nccl::{Comm, NcclType, ReduceOp};
use quabla_dialect::DType;

use crate::buffer::Buffer;
use crate::cuda::{self, Mem, Place};
use crate::executor::RuntimeError;

/// The reduction of [`all_reduce`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Collective {
    Sum,
    Prod,
    Max,
    Min,
    /// The sum divided by the number of GPUs (floats only).
    Mean,
}

impl Collective {
    /// The reduction named `name` (`sum`, `prod`, `max`, `min`, `mean`).
    pub fn parse(name: &str) -> Option<Collective> {
        Some(match name {
            "sum" => Collective::Sum,
            "prod" => Collective::Prod,
            "max" => Collective::Max,
            "min" => Collective::Min,
            "mean" => Collective::Mean,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Collective::Sum => "sum",
            Collective::Prod => "prod",
            Collective::Max => "max",
            Collective::Min => "min",
            Collective::Mean => "mean",
        }
    }

    fn nccl(self) -> ReduceOp {
        match self {
            Collective::Sum => ReduceOp::Sum,
            Collective::Prod => ReduceOp::Prod,
            Collective::Max => ReduceOp::Max,
            Collective::Min => ReduceOp::Min,
            Collective::Mean => ReduceOp::Avg,
        }
    }
}

/// True when the NCCL library (libnccl) loads. Checked before any NCCL call.
pub fn present() -> bool {
    // SAFETY: only tries to dlopen the library.
    unsafe { cudarc::nccl::sys::is_culib_present() }
}

fn invalid(message: String) -> RuntimeError {
    RuntimeError::Device { device: "cuda".into(), message: format!("all_reduce: {message}") }
}

/// Whether `op` is defined on `d` (bools: max and min, i.e. or / and; mean: floats).
fn check_dtype(op: Collective, d: DType) -> Result<(), RuntimeError> {
    let ok = match (op, d) {
        (Collective::Mean, d) => d.is_float(),
        (Collective::Sum | Collective::Prod, DType::I1) => false,
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(invalid(format!("`{}` is not defined on {d} (bool takes max and min; mean takes floats)", op.name())))
    }
}

/// The communicators of one set of GPUs (by rank).
struct Comms(Vec<Comm>);
// SAFETY: a communicator is used only while `COMMS`'s mutex is held, by one thread at a time;
// NCCL communicators have no thread affinity.
unsafe impl Send for Comms {}

static COMMS: Mutex<Vec<(Vec<usize>, Comms)>> = Mutex::new(Vec::new());

/// Every GPU's buffer replaced by the `op` reduction of all of them: `bufs[r]` lives on a
/// distinct GPU (`cuda:N` device buffers, e.g. results of programs compiled for them or of
/// `device_put`), all of one type; the result `r` lives on `bufs[r]`'s GPU.
/// Errors: `UnavailableDevice` without a driver, a GPU or the NCCL library; `Device` for
/// inputs that are not one CUDA buffer per GPU of one type, or an op the dtype lacks.
pub fn all_reduce(bufs: &[&Buffer], op: Collective) -> Result<Vec<Buffer>, RuntimeError> {
    let first = bufs.first().ok_or_else(|| invalid("needs at least one buffer".into()))?;
    let ty = first.ty().clone();
    check_dtype(op, ty.dtype)?;
    if let Some((r, b)) = bufs.iter().enumerate().find(|(_, b)| b.ty() != &ty) {
        return Err(invalid(format!("buffer {r} is {}, buffer 0 {ty}: every GPU's buffer must have one type", b.ty())));
    }
    let mut parts: Vec<(Place, Arc<Mem>)> = Vec::with_capacity(bufs.len());
    for (r, b) in bufs.iter().enumerate() {
        let (p, m) = cuda::located(b).ok_or_else(|| invalid(format!("buffer {r} is on `{}`, not on a GPU (qb.device_put it on cuda:N first)", b.device())))?;
        if parts.iter().any(|(q, _)| q.ordinal == p.ordinal) {
            return Err(invalid(format!("two buffers on {}: one buffer per GPU", p.name())));
        }
        parts.push((p, m));
    }
    cuda::probe().map_err(|reason| RuntimeError::UnavailableDevice { name: "cuda".into(), reason })?;
    if !present() {
        return Err(RuntimeError::UnavailableDevice { name: "cuda".into(), reason: "no NCCL library (libnccl.so.2) on this machine" });
    }
    let ordinals: Vec<usize> = parts.iter().map(|(p, _)| p.ordinal).collect();
    let bytes = ty.checked_byte_size().ok_or_else(|| invalid(format!("{ty} is too large")))?;
    let n = ty.num_elements();
    let mut outs: Vec<(CudaSlice<u8>, usize)> = Vec::with_capacity(parts.len());
    for (p, _) in &parts {
        outs.push(p.block(bytes)?);
    }
    let mut guard = COMMS.lock().unwrap_or_else(|e| e.into_inner());
    let at = match guard.iter().position(|(o, _)| *o == ordinals) {
        Some(at) => at,
        None => {
            let streams = parts.iter().map(|(p, _)| p.stream.clone()).collect();
            let comms = Comm::from_devices(streams).map_err(|e| invalid(format!("creating the NCCL communicator of {ordinals:?}: {e:?}")))?;
            guard.push((ordinals.clone(), Comms(comms)));
            guard.len() - 1
        }
    };
    let comms = &guard[at].1 .0;
    if n > 0 {
        cudarc::nccl::group_start().map_err(|e| invalid(format!("ncclGroupStart: {e:?}")))?;
        let mut result = Ok(());
        for ((comm, (_, src)), (out, _)) in comms.iter().zip(&parts).zip(outs.iter_mut()) {
            result = reduce_one(comm, src, out, n, ty.dtype, op);
            if result.is_err() {
                break;
            }
        }
        // The group is closed even when a reduction failed to enqueue.
        let end = cudarc::nccl::group_end().map_err(|e| invalid(format!("ncclGroupEnd: {e:?}")));
        result?;
        end?;
    }
    drop(guard);
    parts.iter().zip(outs).map(|((p, _), (slice, class))| p.buffer(p.mem(slice, class), &ty)).collect()
}

/// Enqueues one rank's reduction of `n` elements of `d` from `src` into `dst`.
fn reduce_one(comm: &Comm, src: &Mem, dst: &mut CudaSlice<u8>, n: usize, d: DType, op: Collective) -> Result<(), RuntimeError> {
    fn typed<T: NcclType>(comm: &Comm, src: &CudaSlice<u8>, dst: &mut CudaSlice<u8>, n: usize, op: Collective) -> Result<(), RuntimeError> {
        // SAFETY: both blocks hold at least `n` elements of `T` (their byte size is the
        // tensor's, rounded up to a pool class), and `T` is the buffer's element type.
        let (Some(s), Some(mut t)) = (unsafe { src.transmute::<T>(n) }, unsafe { dst.transmute_mut::<T>(n) }) else {
            return Err(invalid(format!("a block smaller than {n} elements")));
        };
        comm.all_reduce(&s, &mut t, &op.nccl()).map(|_| ()).map_err(|e| invalid(format!("ncclAllReduce: {e:?}")))
    }
    match d {
        DType::F32 => typed::<f32>(comm, src, dst, n, op),
        DType::F64 => typed::<f64>(comm, src, dst, n, op),
        DType::I32 => typed::<i32>(comm, src, dst, n, op),
        DType::I64 => typed::<i64>(comm, src, dst, n, op),
        DType::U32 => typed::<u32>(comm, src, dst, n, op),
        // Bools are bytes 0 / 1: max is or, min is and.
        DType::U8 | DType::I1 => typed::<u8>(comm, src, dst, n, op),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quabla_dialect::TensorType;

    #[test]
    fn reductions_by_name() {
        for op in [Collective::Sum, Collective::Prod, Collective::Max, Collective::Min, Collective::Mean] {
            assert_eq!(Collective::parse(op.name()), Some(op));
        }
        assert_eq!(Collective::parse("avg"), None);
    }

    /// Host buffers, mixed types and ops a dtype lacks are typed errors on any machine,
    /// before any driver or NCCL call.
    #[test]
    fn inputs_are_checked_before_any_device_work() {
        let a = Buffer::from_f64s(TensorType::new(DType::F32, [3]), &[1.0, 2.0, 3.0]).unwrap();
        let b = Buffer::from_f64s(TensorType::new(DType::F64, [3]), &[1.0, 2.0, 3.0]).unwrap();
        let flags = Buffer::from_f64s(TensorType::new(DType::I1, [2]), &[1.0, 0.0]).unwrap();
        let msg = |r: Result<Vec<Buffer>, RuntimeError>| match r {
            Err(RuntimeError::Device { message, .. }) => message,
            Err(e) => panic!("wrong error: {e}"),
            Ok(_) => panic!("reduced"),
        };
        assert!(msg(all_reduce(&[], Collective::Sum)).contains("at least one"));
        assert!(msg(all_reduce(&[&a], Collective::Sum)).contains("not on a GPU"));
        assert!(msg(all_reduce(&[&a, &b], Collective::Sum)).contains("one type"));
        assert!(msg(all_reduce(&[&flags], Collective::Sum)).contains("not defined on i1"));
        assert!(msg(all_reduce(&[&flags], Collective::Mean)).contains("mean takes floats"));
        let ints = Buffer::from_f64s(TensorType::new(DType::I32, [1]), &[4.0]).unwrap();
        assert!(msg(all_reduce(&[&ints], Collective::Mean)).contains("not defined on i32"));
    }
}

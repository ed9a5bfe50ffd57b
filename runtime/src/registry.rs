//! The executor registry: one table row per device name, each with its lazily created,
//! process-wide executor. `cpu` is the [`CpuExecutor`] (created once, on first use: it owns an
//! MLIR context), `interp` the [`InterpExecutor`] over the reference interpreter, `cuda` the
//! CUDA executor (cargo feature `cuda`) behind a probe: where the machine has no CUDA driver or
//! GPU (or the build lacks the feature) [`devices`] lists it as unavailable and [`executor`]
//! answers [`RuntimeError::UnavailableDevice`] before any driver call; a name not in the table
//! is [`RuntimeError::UnknownDevice`]. Adding an executor is one row (and its module).
//! A row's executor may also be registered at run time by a crate above the runtime
//! ([`register_executor`]): the Python extension registers `mlx`, whose executor runs MLX's
//! Python API (the runtime crate does not link Python). A registered getter answers `None`
//! while its device cannot run (e.g. `mlx.core` does not import), and the row stays unavailable.
//!
//! Invariants: each executor is created at most once per process and lives for the whole
//! process (`&'static`); the table order is the listing order, `cpu` first (the default).
use std::sync::{OnceLock, RwLock};

use crate::cpu::CpuExecutor;
use crate::device::{Device, DeviceKind};
use crate::executor::{Executor, RuntimeError};
use crate::interp_exec::InterpExecutor;

/// One registered device: its description and how to get its executor.
struct Entry {
    name: &'static str,
    kind: DeviceKind,
    description: &'static str,
    /// The process-wide executor, or why this build has none.
    executor: Result<fn() -> &'static dyn Executor, &'static str>,
    /// Whether this machine can run it (driver, hardware), checked before the executor is
    /// created; `None`: always.
    probe: Option<fn() -> Result<(), &'static str>>,
}

/// The name of the default device.
pub const DEFAULT_DEVICE: &str = "cpu";

static TABLE: &[Entry] = &[
    Entry { name: "cpu", kind: DeviceKind::Cpu, description: "host CPU: linalg -> LLVM, compiled to objects and linked in an ORC JIT", executor: Ok(|| cpu() as &dyn Executor), probe: None },
    Entry {
        name: "interp",
        kind: DeviceKind::Reference,
        description: "the reference interpreter (naive loops over host buffers; the oracle lowerings are checked against)",
        executor: Ok(|| interp() as &dyn Executor),
        probe: None,
    },
    Entry { name: "cuda", kind: DeviceKind::Gpu, description: "NVIDIA GPUs: gpu -> NVVM -> PTX, launched through cudarc", executor: CUDA_EXECUTOR, probe: CUDA_PROBE },
    Entry {
        name: "mlx",
        kind: DeviceKind::Gpu,
        description: "MLX through its Python API (mlx.core, mx.compile); the CPU stream where MLX has no GPU backend",
        executor: Err("the MLX executor is registered by the Python extension (quabla._quabla) and needs mlx.core (pip install 'mlx[cpu]')"),
        probe: None,
    },
];

/// A run-time registered executor getter: the process-wide executor, or `None` while the
/// device cannot run.
pub type Registered = fn() -> Option<&'static dyn Executor>;

static REGISTERED: RwLock<Vec<(&'static str, Registered)>> = RwLock::new(Vec::new());

/// Registers `get` as the executor of the table row `name` (replacing an earlier
/// registration); `UnknownDevice` for a name not in the table.
pub fn register_executor(name: &'static str, get: Registered) -> Result<(), RuntimeError> {
    if !TABLE.iter().any(|e| e.name == name) {
        return Err(unknown(name));
    }
    let mut r = REGISTERED.write().unwrap_or_else(|e| e.into_inner());
    r.retain(|(n, _)| *n != name);
    r.push((name, get));
    Ok(())
}

fn registered(name: &str) -> Option<Registered> {
    REGISTERED.read().unwrap_or_else(|e| e.into_inner()).iter().find(|(n, _)| *n == name).map(|(_, g)| *g)
}

#[cfg(feature = "cuda")]
const CUDA_EXECUTOR: Result<fn() -> &'static dyn Executor, &'static str> = Ok(|| cuda() as &dyn Executor);
#[cfg(feature = "cuda")]
const CUDA_PROBE: Option<fn() -> Result<(), &'static str>> = Some(crate::cuda::probe);
#[cfg(not(feature = "cuda"))]
const CUDA_EXECUTOR: Result<fn() -> &'static dyn Executor, &'static str> = Err("the CUDA executor is not part of this build (cargo feature `cuda`)");
#[cfg(not(feature = "cuda"))]
const CUDA_PROBE: Option<fn() -> Result<(), &'static str>> = None;

/// The process-wide CUDA executor (created on first use, after its probe passed).
#[cfg(feature = "cuda")]
pub fn cuda() -> &'static crate::cuda::CudaExecutor {
    static CUDA: OnceLock<crate::cuda::CudaExecutor> = OnceLock::new();
    CUDA.get_or_init(crate::cuda::CudaExecutor::new)
}

/// The process-wide CPU executor (created on first use).
pub fn cpu() -> &'static CpuExecutor {
    static CPU: OnceLock<CpuExecutor> = OnceLock::new();
    CPU.get_or_init(CpuExecutor::new)
}

/// The process-wide reference-interpreter executor.
pub fn interp() -> &'static InterpExecutor {
    static INTERP: InterpExecutor = InterpExecutor;
    &INTERP
}

/// Every registered device, available or not, in table order (`cpu` first).
pub fn devices() -> Vec<Device> {
    TABLE
        .iter()
        .map(|e| {
            let built = e.executor.is_ok() && e.probe.is_none_or(|p| p().is_ok());
            let available = built || registered(e.name).is_some_and(|get| get().is_some());
            Device { name: e.name, kind: e.kind, description: e.description, available }
        })
        .collect()
}

/// The device named `name`.
pub fn device(name: &str) -> Result<Device, RuntimeError> {
    devices().into_iter().find(|d| d.name == name).ok_or_else(|| unknown(name))
}

fn unknown(name: &str) -> RuntimeError {
    RuntimeError::UnknownDevice { name: name.to_string(), known: TABLE.iter().map(|e| e.name).collect::<Vec<_>>().join(", ") }
}

/// The executor of device `name`, created on first use and shared by the whole process.
/// Errors: `UnknownDevice` for a name not in the table, `UnavailableDevice` for a device
/// whose executor this build lacks.
pub fn executor(name: &str) -> Result<&'static dyn Executor, RuntimeError> {
    let e = TABLE.iter().find(|e| e.name == name).ok_or_else(|| unknown(name))?;
    if let Some(x) = registered(name).and_then(|get| get()) {
        return Ok(x);
    }
    let unavailable = |reason| RuntimeError::UnavailableDevice { name: name.to_string(), reason };
    let get = e.executor.map_err(unavailable)?;
    if let Some(probe) = e.probe {
        probe().map_err(unavailable)?;
    }
    Ok(get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_is_first_and_available() {
        let ds = devices();
        assert_eq!(ds[0].name, DEFAULT_DEVICE);
        assert!(ds[0].available && ds[0].kind == DeviceKind::Cpu);
        let interp = ds.iter().find(|d| d.name == "interp").expect("interp is registered");
        assert!(interp.available && interp.kind == DeviceKind::Reference);
    }

    #[test]
    fn executors_are_created_once() {
        let a = executor("cpu").unwrap() as *const dyn Executor as *const u8;
        let b = executor("cpu").unwrap() as *const dyn Executor as *const u8;
        assert_eq!(a, b);
        assert_eq!(executor("cpu").unwrap().name(), "cpu");
        assert_eq!(executor("interp").unwrap().name(), "interp");
    }

    #[test]
    fn unknown_device_is_a_typed_error() {
        match executor("tpu") {
            Err(RuntimeError::UnknownDevice { name, known }) => {
                assert_eq!(name, "tpu");
                assert!(known.contains("cpu") && known.contains("interp"), "{known}");
            }
            Err(e) => panic!("wrong error: {e}"),
            Ok(_) => panic!("tpu is not a device"),
        }
        assert!(matches!(device("tpu"), Err(RuntimeError::UnknownDevice { .. })));
    }

    struct Fake;
    impl Executor for Fake {
        fn name(&self) -> &str {
            "mlx"
        }
        fn compile(&self, _: &quabla_dialect::Module, _: &str, _: &crate::executor::CompileOptions) -> Result<std::sync::Arc<dyn crate::executor::Executable>, RuntimeError> {
            Err(RuntimeError::Compile("not a real executor".into()))
        }
    }

    #[test]
    fn registered_executors_follow_their_getter() {
        static FAKE: Fake = Fake;
        assert!(matches!(register_executor("tpu", || None), Err(RuntimeError::UnknownDevice { .. })));
        register_executor("mlx", || None).unwrap();
        assert!(!device("mlx").unwrap().available);
        assert!(matches!(executor("mlx"), Err(RuntimeError::UnavailableDevice { .. })));
        register_executor("mlx", || Some(&FAKE as &dyn Executor)).unwrap();
        assert!(device("mlx").unwrap().available);
        assert_eq!(executor("mlx").unwrap().name(), "mlx");
    }

    /// Without a CUDA driver (this machine, CI) `cuda` is listed unavailable and asking for
    /// its executor is a typed error naming the driver, before any cudarc call; built without
    /// the feature, it names the feature. With a driver and a GPU it is available.
    #[test]
    fn cuda_is_available_only_with_a_driver_and_a_gpu() {
        let cuda = device("cuda").unwrap();
        assert_eq!(cuda.kind, DeviceKind::Gpu);
        #[cfg(feature = "cuda")]
        let usable = crate::cuda::probe().is_ok();
        #[cfg(not(feature = "cuda"))]
        let usable = false;
        assert_eq!(cuda.available, usable);
        match executor("cuda") {
            Ok(e) => {
                assert!(usable);
                assert_eq!(e.name(), "cuda");
            }
            Err(RuntimeError::UnavailableDevice { name, reason }) => {
                assert!(!usable);
                assert_eq!(name, "cuda");
                assert!(reason.contains("CUDA driver") || reason.contains("cargo feature `cuda`"), "{reason}");
            }
            Err(e) => panic!("wrong error: {e}"),
        }
    }
}

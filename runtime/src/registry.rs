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
//!
//! A row may stand for several devices of one kind (`units`: the GPUs of `cuda`). They are
//! named `<row>:<n>` (`cuda:0`, `cuda:1`), listed one by one where the row is available, and
//! the bare row name means unit 0 (`cuda` is `cuda:0`); each unit has its own executor.
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
    /// The process-wide executor of a unit (0 for a row of one device), or why this build
    /// has none.
    executor: Result<fn(usize) -> &'static dyn Executor, &'static str>,
    /// Whether this machine can run it (driver, hardware), checked before the executor is
    /// created; `None`: always.
    probe: Option<fn() -> Result<(), &'static str>>,
    /// For a row of several devices: how many this machine has, and the name of unit `n`
    /// (`<row>:<n>`, a `&'static str` for [`Device::name`]).
    units: Option<Units>,
}

/// The devices of a row of several (see the module doc).
#[derive(Clone, Copy)]
struct Units {
    count: fn() -> usize,
    name: fn(usize) -> &'static str,
}

/// The name of the default device.
pub const DEFAULT_DEVICE: &str = "cpu";

static TABLE: &[Entry] = &[
    Entry { name: "cpu", kind: DeviceKind::Cpu, description: "host CPU: linalg -> LLVM, compiled to objects and linked in an ORC JIT", executor: Ok(|_| cpu() as &dyn Executor), probe: None, units: None },
    Entry {
        name: "interp",
        kind: DeviceKind::Reference,
        description: "the reference interpreter (naive loops over host buffers; the oracle lowerings are checked against)",
        executor: Ok(|_| interp() as &dyn Executor),
        probe: None,
        units: None,
    },
    Entry { name: "cuda", kind: DeviceKind::Gpu, description: "NVIDIA GPUs: gpu -> NVVM -> PTX, launched through cudarc", executor: CUDA_EXECUTOR, probe: CUDA_PROBE, units: CUDA_UNITS },
    Entry {
        name: "mlx",
        kind: DeviceKind::Gpu,
        description: "MLX through its Python API (mlx.core, mx.compile); the CPU stream where MLX has no GPU backend",
        executor: Err("the MLX executor is registered by the Python extension (quabla._quabla) and needs mlx.core (pip install 'mlx[cpu]')"),
        probe: None,
        units: None,
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
const CUDA_EXECUTOR: Result<fn(usize) -> &'static dyn Executor, &'static str> = Ok(|n| cuda(n) as &dyn Executor);
#[cfg(feature = "cuda")]
const CUDA_PROBE: Option<fn() -> Result<(), &'static str>> = Some(crate::cuda::probe);
#[cfg(feature = "cuda")]
const CUDA_UNITS: Option<Units> = Some(Units { count: crate::cuda::device_count, name: crate::cuda::device_name });
#[cfg(not(feature = "cuda"))]
const CUDA_EXECUTOR: Result<fn(usize) -> &'static dyn Executor, &'static str> = Err("the CUDA executor is not part of this build (cargo feature `cuda`)");
#[cfg(not(feature = "cuda"))]
const CUDA_PROBE: Option<fn() -> Result<(), &'static str>> = None;
#[cfg(not(feature = "cuda"))]
const CUDA_UNITS: Option<Units> = None;

/// The process-wide CUDA executor of GPU `ordinal` (created on first use, after its probe
/// passed; an ordinal past the machine's GPUs gets an executor that answers
/// `UnavailableDevice`).
#[cfg(feature = "cuda")]
pub fn cuda(ordinal: usize) -> &'static crate::cuda::CudaExecutor {
    let n = ordinal.min(crate::cuda::MAX_DEVICES - 1);
    cuda_executors()[n].get_or_init(|| crate::cuda::CudaExecutor::on(n))
}

#[cfg(feature = "cuda")]
fn cuda_executors() -> &'static [OnceLock<crate::cuda::CudaExecutor>] {
    static CUDA: OnceLock<Vec<OnceLock<crate::cuda::CudaExecutor>>> = OnceLock::new();
    CUDA.get_or_init(|| (0..crate::cuda::MAX_DEVICES).map(|_| OnceLock::new()).collect())
}

/// Frees the device memory executors cache between calls (each opened GPU's caching pool;
/// `qb.release_memory`). Host memory is `cpu::release_memory`'s.
pub fn release_device_memory() {
    #[cfg(feature = "cuda")]
    for e in cuda_executors().iter().filter_map(OnceLock::get) {
        e.release_memory();
    }
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

/// Every registered device, available or not, in table order (`cpu` first); a row of
/// several devices is listed as its units (`cuda:0`, `cuda:1`, ...) where it is available, as
/// its row name otherwise.
pub fn devices() -> Vec<Device> {
    let mut out = Vec::new();
    for e in TABLE {
        let available = row_available(e);
        match e.units {
            Some(u) if available && (u.count)() > 0 => out.extend((0..(u.count)()).map(|n| Device { name: (u.name)(n), kind: e.kind, description: e.description, available })),
            _ => out.push(Device { name: e.name, kind: e.kind, description: e.description, available }),
        }
    }
    out
}

fn row_available(e: &Entry) -> bool {
    let built = e.executor.is_ok() && e.probe.is_none_or(|p| p().is_ok());
    built || registered(e.name).is_some_and(|get| get().is_some())
}

/// The table row and unit a device name means: `cuda` and `cuda:0` are unit 0 of `cuda`; an
/// index on a row of one device, or one that is not a decimal number, names no device.
fn resolve(name: &str) -> Result<(&'static Entry, usize), RuntimeError> {
    let (row, unit) = match name.split_once(':') {
        Some((row, n)) => (row, Some(n)),
        None => (name, None),
    };
    let e = TABLE.iter().find(|e| e.name == row).ok_or_else(|| unknown(name))?;
    let n = match (unit, e.units) {
        (None, _) => 0,
        (Some(n), Some(_)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => n.parse::<usize>().map_err(|_| unknown(name))?,
        _ => return Err(unknown(name)),
    };
    Ok((e, n))
}

/// The canonical name of device `name`: unit 0's name for a bare row name of several devices
/// where the machine has them (`cuda` -> `cuda:0`), else `name` itself.
pub fn canonical_name(name: &str) -> Result<String, RuntimeError> {
    let (e, n) = resolve(name)?;
    Ok(canonical(e, n, name).to_string())
}

/// [`canonical_name`] of unit `n` of row `e`, named `name`.
fn canonical<'a>(e: &Entry, n: usize, name: &'a str) -> &'a str {
    match e.units {
        Some(u) if row_available(e) && n < (u.count)() => (u.name)(n),
        _ => name,
    }
}

/// The device named `name` (`cuda` means `cuda:0`).
pub fn device(name: &str) -> Result<Device, RuntimeError> {
    let (e, n) = resolve(name)?;
    let canonical = canonical(e, n, name);
    let listed = devices().into_iter().find(|d| d.name == canonical);
    // A unit past the machine's devices is a device of the table that is not available.
    Ok(listed.unwrap_or(Device { name: e.name, kind: e.kind, description: e.description, available: false }))
}

fn unknown(name: &str) -> RuntimeError {
    RuntimeError::UnknownDevice { name: name.to_string(), known: TABLE.iter().map(|e| if e.units.is_some() { format!("{0}, {0}:N", e.name) } else { e.name.to_string() }).collect::<Vec<_>>().join(", ") }
}

/// The executor of device `name`, created on first use and shared by the whole process.
/// Errors: `UnknownDevice` for a name not in the table, `UnavailableDevice` for a device
/// whose executor this build lacks, that this machine cannot run, or a unit past the
/// machine's devices (`cuda:3` on a machine with two GPUs).
pub fn executor(name: &str) -> Result<&'static dyn Executor, RuntimeError> {
    let (e, n) = resolve(name)?;
    if let Some(x) = registered(e.name).and_then(|get| get()) {
        return Ok(x);
    }
    let unavailable = |reason| RuntimeError::UnavailableDevice { name: name.to_string(), reason };
    let get = e.executor.map_err(unavailable)?;
    if let Some(probe) = e.probe {
        probe().map_err(unavailable)?;
    }
    if let Some(u) = e.units {
        if n >= (u.count)() {
            return Err(unavailable("this machine has fewer devices of this kind"));
        }
    }
    Ok(get(n))
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

    /// `<row>:<n>` names a unit of a row of several devices only (`cuda:1`), with a decimal
    /// index; `cuda` is `cuda:0`; a unit past the machine's GPUs is unavailable, not unknown.
    #[test]
    fn units_are_named_row_colon_index() {
        for bad in ["cpu:0", "interp:1", "cuda:", "cuda:x", "cuda:-1", "cuda:1:2", ":0", "cuda: 1"] {
            assert!(matches!(executor(bad), Err(RuntimeError::UnknownDevice { .. })), "{bad}");
            assert!(matches!(canonical_name(bad), Err(RuntimeError::UnknownDevice { .. })), "{bad}");
        }
        match executor("tpu") {
            Err(RuntimeError::UnknownDevice { known, .. }) => assert!(known.contains("cuda, cuda:N"), "{known}"),
            _ => panic!("tpu is not a device"),
        }
        assert_eq!(canonical_name("cpu").unwrap(), "cpu");
        let gpus = devices().iter().filter(|d| d.name.starts_with("cuda:")).count();
        #[cfg(feature = "cuda")]
        assert_eq!(gpus, crate::cuda::device_count());
        if gpus == 0 {
            assert_eq!(canonical_name("cuda").unwrap(), "cuda");
            assert!(devices().iter().any(|d| d.name == "cuda" && !d.available));
        } else {
            assert_eq!(canonical_name("cuda").unwrap(), "cuda:0");
            assert_eq!(device("cuda").unwrap().name, "cuda:0");
            assert!(!devices().iter().any(|d| d.name == "cuda"));
        }
        let past = format!("cuda:{gpus}");
        assert!(!device(&past).unwrap().available);
        match executor(&past) {
            Err(RuntimeError::UnavailableDevice { name, .. }) => assert_eq!(name, past),
            Err(e) => panic!("wrong error: {e}"),
            Ok(_) => panic!("{past} is past this machine's GPUs"),
        }
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

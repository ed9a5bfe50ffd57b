//! Execution of quabla programs: the `Executor`/`Executable` traits and the CPU executor
//! (LLVM objects linked in an ORC JIT). Buffers and the reference interpreter are re-exported from
//! `quabla-interp` under their old paths.
pub use quabla_interp::buffer;
pub mod bool_memory;
pub mod callback;
pub mod cpu;
#[cfg(feature = "cuda")]
pub mod cuda;
#[cfg(feature = "cuda")]
pub mod nccl;
pub mod device;
mod entry_abi;
pub mod executor;
mod flat_loops;
pub mod fpmode;
mod gemm;
mod layout_kernels;
mod reduce_kernels;
pub use quabla_interp as interp;
pub mod interp_exec;
mod objcache;
mod output_views;
pub mod parallel;
pub mod parallel_accesses;
pub mod linalg_kernels;
mod llvm_compile;
mod sort_kernels;
pub mod pool;
pub mod registry;

pub use buffer::{Buffer, BufferError, DeviceStorage, Element, Storage};
pub use cpu::CpuExecutor;
pub use executor::{CompileOptions, Executable, ExecutableCache, Executor, RuntimeError};
pub use device::{Device, DeviceKind};
pub use interp_exec::InterpExecutor;
pub use registry::{canonical_name, device, devices, executor, DEFAULT_DEVICE};

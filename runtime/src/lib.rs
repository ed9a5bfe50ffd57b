//! Execution of quabla programs: host buffers, the `Executor`/`Executable` traits, the CPU
//! executor (MLIR ExecutionEngine) and the reference interpreter.
pub mod buffer;
pub mod cpu;
pub mod device;
pub mod executor;
pub mod interp;
pub mod interp_exec;
pub mod registry;

pub use buffer::{Buffer, Element};
pub use cpu::CpuExecutor;
pub use executor::{CompileOptions, Executable, ExecutableCache, Executor, RuntimeError};
pub use device::{Device, DeviceKind};
pub use interp_exec::InterpExecutor;
pub use registry::{device, devices, executor, DEFAULT_DEVICE};

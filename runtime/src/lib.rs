//! Execution of quabla programs: the `Executor`/`Executable` traits and the CPU executor
//! (MLIR ExecutionEngine). Buffers and the reference interpreter live in `quabla-interp` and
//! are re-exported here under their old paths (`quabla_runtime::Buffer`,
//! `quabla_runtime::interp`, `quabla_runtime::buffer`).
pub mod cpu;
pub mod executor;

pub use quabla_interp as interp;
pub use quabla_interp::buffer;
pub use quabla_interp::buffer::{Buffer, Element};
pub use cpu::CpuExecutor;
pub use executor::{CompileOptions, Executable, Executor, RuntimeError};

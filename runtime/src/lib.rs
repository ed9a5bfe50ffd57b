//! Execution of quabla programs: host buffers, the `Executor`/`Executable` traits, the CPU
//! executor (MLIR ExecutionEngine) and the reference interpreter.
pub mod buffer;
pub mod cpu;
pub mod executor;
pub mod interp;

pub use buffer::{Buffer, Element};
pub use cpu::CpuExecutor;
pub use executor::{CompileOptions, Executable, Executor, RuntimeError};

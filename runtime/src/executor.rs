//! The executor abstraction: an `Executor` compiles a quabla module's public function into
//! an `Executable`, which maps input buffers to output buffers and may be called from any
//! thread.
use std::sync::Arc;

use quabla_dialect::{Module, TensorType};
use thiserror::Error;

use crate::buffer::Buffer;

/// Errors of compiling and running programs through an executor.
#[derive(Debug, Error)]
pub enum RuntimeError {
    #[error("{entry}: expected {expected} inputs, got {got}")]
    InputCount { entry: String, expected: usize, got: usize },
    #[error("{entry}: input {index} has type {got}, expected {expected}")]
    InputType { entry: String, index: usize, expected: TensorType, got: TensorType },
    #[error("no public function @{0} in the module")]
    NoEntry(String),
    /// The lowering rejected the module (an explicit gap, an unexpanded transform, ...).
    #[error("lowering failed: {0}")]
    Lower(#[from] quabla_lowering::LowerError),
    #[error("compilation failed: {0}")]
    Compile(String),
    /// The reference interpreter rejected the program or its inputs.
    #[error(transparent)]
    Interp(#[from] crate::interp::InterpError),
    /// A buffer could not be read or moved (a device transfer failed, a host read of a device
    /// buffer).
    #[error("{entry}: {source}")]
    Buffer { entry: String, source: crate::buffer::BufferError },
    /// No device of that name is registered.
    #[error("unknown device `{name}` (registered devices: {known})")]
    UnknownDevice { name: String, known: String },
    /// The device is registered but its executor is not part of this build.
    #[error("device `{name}` is not available: {reason}")]
    UnavailableDevice { name: String, reason: &'static str },
}

/// Compile options shared by executors.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CompileOptions {
    /// LLVM optimisation level, 0 to 3.
    pub opt_level: usize,
    /// Vectorise elementwise code and use the tiled matmul path.
    pub vectorize: bool,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions { opt_level: 2, vectorize: true }
    }
}

/// A compiled function.
pub trait Executable: Send + Sync {
    fn input_types(&self) -> &[TensorType];
    fn output_types(&self) -> &[TensorType];
    /// Runs on host buffers; checks their count and types first.
    fn run(&self, inputs: &[&Buffer]) -> Result<Vec<Buffer>, RuntimeError>;
}

/// A backend that compiles modules.
pub trait Executor: Send + Sync {
    fn name(&self) -> &str;
    fn compile(&self, m: &Module, entry: &str, opts: &CompileOptions) -> Result<Arc<dyn Executable>, RuntimeError>;
}

/// Checks inputs against the expected types.
pub fn check_inputs(entry: &str, want: &[TensorType], inputs: &[&Buffer]) -> Result<(), RuntimeError> {
    if want.len() != inputs.len() {
        return Err(RuntimeError::InputCount { entry: entry.to_string(), expected: want.len(), got: inputs.len() });
    }
    for (i, (w, b)) in want.iter().zip(inputs).enumerate() {
        if w != b.ty() {
            return Err(RuntimeError::InputType { entry: entry.to_string(), index: i, expected: w.clone(), got: b.ty().clone() });
        }
    }
    Ok(())
}

/// Executables by key (e.g. an eager op's operand types): a map that only grows, readable
/// from any thread. Lookups take a read lock; a poisoned lock is recovered (entries are
/// immutable, so no half-written state can be observed).
pub struct ExecutableCache<K> {
    map: std::sync::RwLock<std::collections::HashMap<K, Arc<dyn Executable>>>,
}

impl<K> Default for ExecutableCache<K> {
    fn default() -> Self {
        ExecutableCache { map: Default::default() }
    }
}

impl<K: Eq + std::hash::Hash> ExecutableCache<K> {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// The executable cached under `key`.
    pub fn get<Q>(&self, key: &Q) -> Option<Arc<dyn Executable>>
    where
        K: std::borrow::Borrow<Q>,
        Q: Eq + std::hash::Hash + ?Sized,
    {
        self.map.read().unwrap_or_else(|e| e.into_inner()).get(key).cloned()
    }

    /// Caches `exe` under `key` (replacing an entry of the same key).
    pub fn insert(&self, key: K, exe: Arc<dyn Executable>) {
        self.map.write().unwrap_or_else(|e| e.into_inner()).insert(key, exe);
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.map.read().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// True when nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

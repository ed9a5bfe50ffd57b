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
    /// Compiled code could not allocate a temporary of `bytes` bytes (the call was abandoned).
    #[error("{entry}: out of memory: the compiled code could not allocate a temporary of {bytes} bytes")]
    OutOfMemory { entry: String, bytes: u64 },
    /// No device of that name is registered.
    #[error("unknown device `{name}` (registered devices: {known})")]
    UnknownDevice { name: String, known: String },
    /// The device is registered but not usable here: its executor is not part of this
    /// build, or its driver or hardware is missing.
    #[error("device `{name}` is not available: {reason}")]
    UnavailableDevice { name: String, reason: &'static str },
    /// The device's driver failed (`device` as named by the registry, e.g. `cuda:0`).
    #[error("device `{device}`: {message}")]
    Device { device: String, message: String },
}

/// Compile options shared by executors.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CompileOptions {
    /// LLVM optimisation level, 0 to 3.
    pub opt_level: usize,
    /// Vectorise elementwise code and use the tiled matmul path.
    pub vectorize: bool,
    /// Threads the compiled code may use for its large matmuls and loops (CPU executor);
    /// 0: the process default, `QUABLA_NUM_THREADS` or the cores the process may run on.
    pub threads: usize,
    /// The GPU architecture (`sm_90`) the CUDA executor and `--emit=ptx` compile for; `None`:
    /// the device's own (the executor) or `sm_90` (`--emit=ptx`).
    pub cuda_arch: Option<String>,
    /// CPU executor: large f32/f64 products call the runtime's packed product
    /// (quabla_lowering::tiling::runtime_gemm); off, their code is generated.
    pub runtime_gemm: bool,
    /// CPU executor: calls run with denormals flushed to zero, as XLA's CPU programs run
    /// (crate::fpmode); off, with IEEE gradual underflow (the interpreter's arithmetic).
    /// Default: on, unless `QUABLA_FLUSH_DENORMALS=0`.
    pub flush_denormals: bool,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions { opt_level: 2, vectorize: true, threads: 0, cuda_arch: None, runtime_gemm: true, flush_denormals: crate::fpmode::enabled() }
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
    /// `buf` resident where this executor's programs read their inputs without a copy
    /// (`qb.device_put`): on the device for a GPU executor, else in host memory (executors
    /// that run on host buffers).
    fn put(&self, buf: &Buffer) -> Result<Buffer, RuntimeError> {
        buf.to_host().map_err(|source| RuntimeError::Buffer { entry: self.name().to_string(), source })
    }
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

/// Executables by key (e.g. an eager op's operand types), readable from any thread and
/// bounded: past its capacity, an insert evicts the least recently used eighth of the entries
/// (their compiled code is freed once no caller holds it) and returns the freed heap to the
/// OS. Lookups take a read lock and stamp the entry's last use atomically; a poisoned lock is
/// recovered (entries are immutable, so no half-written state can be observed).
pub struct ExecutableCache<K> {
    map: std::sync::RwLock<std::collections::HashMap<K, CacheEntry>>,
    capacity: usize,
    clock: std::sync::atomic::AtomicU64,
}

struct CacheEntry {
    exe: Arc<dyn Executable>,
    last_use: std::sync::atomic::AtomicU64,
}

impl<K> Default for ExecutableCache<K> {
    fn default() -> Self {
        ExecutableCache::with_capacity(usize::MAX)
    }
}

impl<K> ExecutableCache<K> {
    /// An empty cache holding at most `capacity` executables (at least one).
    pub fn with_capacity(capacity: usize) -> Self {
        ExecutableCache { map: Default::default(), capacity: capacity.max(1), clock: Default::default() }
    }

    /// The most entries the cache keeps.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    fn tick(&self) -> u64 {
        self.clock.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }
}

impl<K: Eq + std::hash::Hash> ExecutableCache<K> {
    /// An empty, unbounded cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// The executable cached under `key` (marking it used).
    pub fn get<Q>(&self, key: &Q) -> Option<Arc<dyn Executable>>
    where
        K: std::borrow::Borrow<Q>,
        Q: Eq + std::hash::Hash + ?Sized,
    {
        let map = self.map.read().unwrap_or_else(|e| e.into_inner());
        let entry = map.get(key)?;
        entry.last_use.store(self.tick(), std::sync::atomic::Ordering::Relaxed);
        Some(entry.exe.clone())
    }

    /// Caches `exe` under `key` (replacing an entry of the same key), first evicting the least
    /// recently used eighth of the entries when the cache is full.
    pub fn insert(&self, key: K, exe: Arc<dyn Executable>) {
        let evicted: Vec<CacheEntry> = {
            let mut map = self.map.write().unwrap_or_else(|e| e.into_inner());
            let mut evicted = Vec::new();
            if map.len() >= self.capacity && !map.contains_key(&key) {
                let mut stamps: Vec<u64> = map.values().map(|e| e.last_use.load(std::sync::atomic::Ordering::Relaxed)).collect();
                let n = (self.capacity / 8).max(1).min(stamps.len());
                stamps.select_nth_unstable(n - 1);
                let cut = stamps[n - 1];
                // Stamps are unique (one clock tick each), so exactly `n` entries go.
                evicted.extend(map.extract_if(|_, e| e.last_use.load(std::sync::atomic::Ordering::Relaxed) <= cut).map(|(_, e)| e));
            }
            map.insert(key, CacheEntry { exe, last_use: self.tick().into() });
            evicted
        };
        if !evicted.is_empty() {
            drop(evicted);
            crate::cpu::release_memory();
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp_exec::InterpExecutor;
    use quabla_dialect::{DType, ElementwiseOp, Func, Module, OpKind, UnaryOp};

    /// A real (interpreted) executable of `neg` on an f64 vector of length `n`.
    fn neg(n: i64) -> Arc<dyn Executable> {
        let t = TensorType::new(DType::F64, [n]);
        let mut f = Func::new("main", &[t]);
        let x = f.params[0];
        f.outputs = vec![f.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Neg }), &[x], None).unwrap()];
        InterpExecutor.compile(&Module { funcs: vec![f] }, "main", &CompileOptions::default()).unwrap()
    }

    #[test]
    fn cache_evicts_the_least_recently_used_eighth_past_its_capacity() {
        let cache = ExecutableCache::with_capacity(16);
        let held = neg(3);
        for n in 0..16 {
            cache.insert(n, if n == 2 { held.clone() } else { neg(n + 1) });
        }
        // Touch the oldest two: they are now the most recently used.
        assert!(cache.get(&0).is_some() && cache.get(&1).is_some());
        cache.insert(16, neg(17));
        // 16 / 8 = 2 entries went: the least recently used, 2 and 3 (not the touched 0, 1).
        assert_eq!(cache.len(), 15);
        assert!(cache.get(&2).is_none() && cache.get(&3).is_none());
        assert!((0..2).chain(4..17).all(|k| cache.get(&k).is_some()));
        // An evicted executable a caller still holds stays usable.
        assert_eq!(held.input_types()[0].shape, vec![3]);
        // Replacing an existing key never evicts.
        cache.insert(16, neg(17));
        assert_eq!(cache.len(), 15);
    }

    #[test]
    fn cache_bound_holds_under_many_inserts() {
        let cache = ExecutableCache::with_capacity(8);
        for n in 0..100 {
            cache.insert(n, neg(1 + n % 4));
            assert!(cache.len() <= 8);
        }
        assert!(cache.get(&99).is_some());
    }
}

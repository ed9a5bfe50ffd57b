//! A caching allocator's bookkeeping: blocks of device memory that a call no longer uses are
//! kept by size class and handed to the next request of that class, instead of being freed
//! and allocated again (the CUDA executor's buffers: every call allocates its outputs and
//! temporaries, so a training step would otherwise pay a driver allocation per buffer).
//!
//! Generic over the block type so that its policy is tested with host memory; the CUDA
//! executor instantiates it with `CudaSlice<u8>` (runtime/src/cuda.rs).
//!
//! Policy: sizes round up to a class ([`Pool::class`]: 512-byte steps up to 4 KiB, then a
//! quarter of the size's power of two, so at most 25% is wasted past 4 KiB); a request takes a cached
//! block of exactly its class; the blocks cached stay under a byte bound, past which a
//! returned block is dropped (freed); [`Pool::clear`] drops every cached block (on an
//! allocation failure, before the retry, and from `qb.release_memory`).
//!
//! Invariant: a block is in the cache at most once, and only while no buffer uses it.
use std::collections::BTreeMap;
use std::sync::Mutex;

/// Counters of a pool's life (what its tests check).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Requests served from the cache.
    pub hits: u64,
    /// Requests that needed a fresh allocation.
    pub misses: u64,
    /// Bytes cached now.
    pub cached: usize,
    /// Blocks dropped because the cache was full.
    pub dropped: u64,
}

struct Inner<B> {
    free: BTreeMap<usize, Vec<B>>,
    stats: PoolStats,
}

/// Cached blocks by size class, at most `limit` bytes of them.
pub struct Pool<B> {
    inner: Mutex<Inner<B>>,
    limit: usize,
}

impl<B> Pool<B> {
    /// An empty pool caching at most `limit` bytes.
    pub fn new(limit: usize) -> Self {
        Pool { inner: Mutex::new(Inner { free: BTreeMap::new(), stats: PoolStats::default() }), limit }
    }

    /// The size class of a request of `bytes` (at least 512; less than 512 bytes over
    /// `bytes` up to 4 KiB, at most 25% over past it).
    pub fn class(bytes: usize) -> usize {
        const SMALL: usize = 512;
        if bytes <= 8 * SMALL {
            return bytes.max(1).div_ceil(SMALL) * SMALL;
        }
        let step = 1usize << (usize::BITS - 1 - bytes.leading_zeros() - 2);
        bytes.div_ceil(step).saturating_mul(step)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner<B>> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A cached block of class `class`, if one is free (counted as a hit; `None` counts a
    /// miss: the caller allocates).
    pub fn take(&self, class: usize) -> Option<B> {
        let mut g = self.lock();
        let b = g.free.get_mut(&class).and_then(Vec::pop);
        match b {
            Some(b) => {
                g.stats.hits += 1;
                g.stats.cached -= class;
                Some(b)
            }
            None => {
                g.stats.misses += 1;
                None
            }
        }
    }

    /// Returns a block of class `class` that is no longer used: cached when it fits under the
    /// limit, else handed back to be dropped by the caller (outside the lock).
    pub fn give(&self, class: usize, b: B) -> Option<B> {
        let mut g = self.lock();
        if g.stats.cached.saturating_add(class) > self.limit {
            g.stats.dropped += 1;
            return Some(b);
        }
        g.stats.cached += class;
        g.free.entry(class).or_default().push(b);
        None
    }

    /// Removes every cached block (the caller drops them, outside the lock).
    pub fn clear(&self) -> Vec<B> {
        let mut g = self.lock();
        g.stats.cached = 0;
        std::mem::take(&mut g.free).into_values().flatten().collect()
    }

    /// The pool's counters.
    pub fn stats(&self) -> PoolStats {
        self.lock().stats
    }
}

/// The cache bound from `var` (bytes; `K`, `M`, `G` suffixes), else `default`.
pub fn limit_from_env(var: &str, default: usize) -> usize {
    let Ok(v) = std::env::var(var) else { return default };
    let v = v.trim();
    let (digits, unit) = match v.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&v[..i], match c.to_ascii_uppercase() {
            'K' => 1usize << 10,
            'M' => 1 << 20,
            'G' => 1 << 30,
            _ => return default,
        }),
        _ => (v, 1),
    };
    digits.parse::<usize>().ok().and_then(|n| n.checked_mul(unit)).unwrap_or(default)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_round_up_by_at_most_a_quarter() {
        assert_eq!(Pool::<()>::class(0), 512);
        assert_eq!(Pool::<()>::class(1), 512);
        assert_eq!(Pool::<()>::class(512), 512);
        assert_eq!(Pool::<()>::class(513), 1024);
        assert_eq!(Pool::<()>::class(4096), 4096);
        assert_eq!(Pool::<()>::class(4097), 5120);
        assert_eq!(Pool::<()>::class(1 << 20), 1 << 20);
        assert_eq!(Pool::<()>::class((1 << 20) + 1), (1 << 20) + (1 << 18));
        for n in (1..200_000).step_by(97).chain([usize::MAX / 2, 3 << 40]) {
            let c = Pool::<()>::class(n);
            assert!(c >= n && (c - n < 512 || c - n <= n / 4), "{n} -> {c}");
            // A class is its own class: a block of a class serves every request of it.
            assert_eq!(Pool::<()>::class(c), c, "{n} -> {c}");
        }
    }

    #[test]
    fn blocks_are_reused_by_class_under_the_limit() {
        let pool: Pool<Vec<u8>> = Pool::new(3 * 1024);
        let c = Pool::<Vec<u8>>::class(1000);
        assert!(pool.take(c).is_none());
        let mut a = vec![0u8; c];
        a[0] = 7;
        assert!(pool.give(c, a).is_none());
        assert_eq!(pool.stats().cached, c);
        // Another class misses; the same class gets the cached block back.
        assert!(pool.take(Pool::<Vec<u8>>::class(3000)).is_none());
        let b = pool.take(c).expect("a cached block");
        assert_eq!((b.len(), b[0]), (c, 7));
        let s = pool.stats();
        assert_eq!((s.hits, s.misses, s.cached), (1, 2, 0));
        // Past the limit a returned block is handed back to be freed.
        assert!(pool.give(c, b).is_none());
        assert!(pool.give(c, vec![0; c]).is_none());
        assert!(pool.give(c, vec![0; c]).is_none());
        assert!(pool.give(c, vec![0; c]).is_some());
        assert_eq!(pool.stats().dropped, 1);
        assert_eq!(pool.clear().len(), 3);
        assert_eq!(pool.stats().cached, 0);
        assert!(pool.take(c).is_none());
    }

    #[test]
    fn a_zero_limit_caches_nothing() {
        let pool: Pool<Vec<u8>> = Pool::new(0);
        assert!(pool.give(512, vec![0; 512]).is_some());
        assert!(pool.take(512).is_none());
    }

    #[test]
    fn limits_parse_with_units() {
        std::env::set_var("QUABLA_TEST_POOL_LIMIT", "3G");
        assert_eq!(limit_from_env("QUABLA_TEST_POOL_LIMIT", 1), 3 << 30);
        std::env::set_var("QUABLA_TEST_POOL_LIMIT", "512k");
        assert_eq!(limit_from_env("QUABLA_TEST_POOL_LIMIT", 1), 512 << 10);
        std::env::set_var("QUABLA_TEST_POOL_LIMIT", "0");
        assert_eq!(limit_from_env("QUABLA_TEST_POOL_LIMIT", 1), 0);
        for bad in ["x", "1T", "", "-1", "99999999999999999999G"] {
            std::env::set_var("QUABLA_TEST_POOL_LIMIT", bad);
            assert_eq!(limit_from_env("QUABLA_TEST_POOL_LIMIT", 5), 5, "{bad}");
        }
        std::env::remove_var("QUABLA_TEST_POOL_LIMIT");
        assert_eq!(limit_from_env("QUABLA_TEST_POOL_LIMIT", 9), 9);
    }
}

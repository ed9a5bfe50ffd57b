//! The CPU executor's persistent compile cache: the object code of each compiled program,
//! kept on disk so that a later process skips MLIR and LLVM for a program it has seen.
//!
//! * Location: `QUABLA_CACHE_DIR`, else `$XDG_CACHE_HOME/quabla`, else `~/.cache/quabla`;
//!   `QUABLA_CACHE=0` turns the cache off. Bound: `QUABLA_CACHE_MAX_BYTES` (default 1 GiB);
//!   past it the least recently used entries (by modification time, refreshed on each hit)
//!   are deleted.
//! * Key: a 128-bit hash of everything the object depends on: the linalg-level program text
//!   and upstream pipeline the lowering produced (so any change of Quabla's lowering misses),
//!   the entry point, the LLVM optimisation level, the host CPU name and features, the LLVM
//!   version and this crate's version.
//! * Entry: one file `<key>.qobj`: a header (magic, format version, flags, payload length and
//!   an FNV-1a checksum of the payload) and the payload: the object count, each object's
//!   length and the objects (one, or one per partition of a program whose chunks were
//!   compiled on several threads, linked together when loaded). Written to a temporary file and
//!   renamed, so concurrent processes never see half an entry. An entry that fails its checks
//!   (truncated, foreign, corrupt, or one the loader rejects) is reported once on stderr,
//!   deleted and rebuilt.
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"QUABLAO1";
const HEADER: usize = 8 + 4 + 4 + 8 + 8;
/// The entry format: 2 holds a list of objects (1 held one object).
const VERSION: u32 = 2;

/// Flags stored with an object: what the executor must provide when loading it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Flags {
    /// The code allocates through `quabla_rt_malloc` (calls go through the guard).
    pub guarded: bool,
    /// The code calls MLIR's C runner utilities (`memrefCopy`).
    pub needs_utils: bool,
}

impl Flags {
    fn bits(self) -> u32 {
        self.guarded as u32 | (self.needs_utils as u32) << 1
    }
    fn from_bits(b: u32) -> Option<Flags> {
        (b < 4).then_some(Flags { guarded: b & 1 != 0, needs_utils: b & 2 != 0 })
    }
}

/// The cache directory, or None when the cache is off or no directory can be named.
pub(crate) fn dir() -> Option<PathBuf> {
    if std::env::var("QUABLA_CACHE").is_ok_and(|v| v == "0" || v.eq_ignore_ascii_case("false") || v.eq_ignore_ascii_case("off")) {
        return None;
    }
    if let Some(d) = std::env::var_os("QUABLA_CACHE_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return Some(Path::new(&d).join("quabla"));
    }
    std::env::var_os("HOME").filter(|d| !d.is_empty()).map(|h| Path::new(&h).join(".cache").join("quabla"))
}

fn max_bytes() -> u64 {
    std::env::var("QUABLA_CACHE_MAX_BYTES").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(1 << 30)
}

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The entry name of the key material `parts` (two independent 64-bit hashes).
pub(crate) fn key(parts: &[&[u8]]) -> String {
    let mut sip = std::collections::hash_map::DefaultHasher::new();
    let mut fnv = Vec::new();
    for p in parts {
        p.hash(&mut sip);
        fnv.extend_from_slice(&(p.len() as u64).to_le_bytes());
        fnv.extend_from_slice(p);
    }
    format!("{:016x}{:016x}", sip.finish(), fnv1a(&fnv))
}

fn entry_path(dir: &Path, key: &str) -> PathBuf {
    dir.join(format!("{key}.qobj"))
}

/// Reports a problem with the cache once per process (a cache problem never fails a compile).
pub(crate) fn warn(what: &str) {
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
        eprintln!("[quabla] compile cache: {what} (the program is recompiled; further cache warnings are not shown)");
    }
}

/// The objects and flags cached under `key`, refreshing its modification time; None on a
/// miss. A damaged entry is deleted (and reported) and counts as a miss.
pub(crate) fn load(dir: &Path, key: &str) -> Option<(Flags, Vec<Vec<u8>>)> {
    let path = entry_path(dir, key);
    let bytes = std::fs::read(&path).ok()?;
    match parse(&bytes) {
        Some((flags, objs)) => {
            if let Ok(f) = std::fs::File::options().append(true).open(&path) {
                let _ = f.set_modified(std::time::SystemTime::now());
            }
            Some((flags, objs))
        }
        None => {
            warn(&format!("ignoring a damaged entry {}", path.display()));
            let _ = std::fs::remove_file(&path);
            None
        }
    }
}

fn parse(bytes: &[u8]) -> Option<(Flags, Vec<Vec<u8>>)> {
    if bytes.len() < HEADER || &bytes[..8] != MAGIC {
        return None;
    }
    let u32_at = |b: &[u8], i: usize| b.get(i..i + 4).map(|w| u32::from_le_bytes(w.try_into().expect("4 bytes")));
    let u64_at = |b: &[u8], i: usize| b.get(i..i + 8).map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")));
    let (version, flags, len, sum) = (u32_at(bytes, 8)?, u32_at(bytes, 12)?, u64_at(bytes, 16)?, u64_at(bytes, 24)?);
    let payload = &bytes[HEADER..];
    if version != VERSION || payload.len() as u64 != len || fnv1a(payload) != sum {
        return None;
    }
    let n = u32_at(payload, 0)? as usize;
    let mut at = 4 + 8 * n;
    let mut objs = Vec::with_capacity(n);
    for i in 0..n {
        let l = usize::try_from(u64_at(payload, 4 + 8 * i)?).ok()?;
        objs.push(payload.get(at..at.checked_add(l)?)?.to_vec());
        at += l;
    }
    (at == payload.len() && n > 0).then_some(())?;
    Some((Flags::from_bits(flags)?, objs))
}

/// Deletes the entry of `key` (one the loader rejected).
pub(crate) fn remove(dir: &Path, key: &str) {
    let _ = std::fs::remove_file(entry_path(dir, key));
}

/// Stores `objs` under `key` (write to a temporary file, then rename), then keeps the
/// directory under its byte bound.
pub(crate) fn store(dir: &Path, key: &str, flags: Flags, objs: &[Vec<u8>]) {
    if let Err(e) = std::fs::create_dir_all(dir) {
        warn(&format!("cannot create {}: {e}", dir.display()));
        return;
    }
    let mut payload = Vec::with_capacity(4 + 8 * objs.len() + objs.iter().map(Vec::len).sum::<usize>());
    payload.extend_from_slice(&(objs.len() as u32).to_le_bytes());
    for o in objs {
        payload.extend_from_slice(&(o.len() as u64).to_le_bytes());
    }
    for o in objs {
        payload.extend_from_slice(o);
    }
    let mut bytes = Vec::with_capacity(HEADER + payload.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&VERSION.to_le_bytes());
    bytes.extend_from_slice(&flags.bits().to_le_bytes());
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&fnv1a(&payload).to_le_bytes());
    bytes.extend_from_slice(&payload);
    let tmp = temp_path(dir, "qobj");
    let r = std::fs::write(&tmp, &bytes).and_then(|_| std::fs::rename(&tmp, entry_path(dir, key)));
    if let Err(e) = r {
        let _ = std::fs::remove_file(&tmp);
        warn(&format!("cannot write an entry in {}: {e}", dir.display()));
        return;
    }
    keep_bounded(dir, bytes.len() as u64);
}

/// Keeps the directory under its byte bound without making a compile pay for it: the
/// eviction walk stats every entry (a cache of tens of thousands of programs costs ~100 ms and
/// disk waits), so it runs on a background thread, once when a process first stores and then
/// whenever this process has written another eighth of the bound since the last walk. One
/// walk at a time per process; an entry written meanwhile is counted towards the next one.
fn keep_bounded(dir: &Path, written: u64) {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    static WALKED: AtomicBool = AtomicBool::new(false);
    static WALKING: AtomicBool = AtomicBool::new(false);
    static SINCE: AtomicU64 = AtomicU64::new(0);
    let bound = max_bytes();
    let since = SINCE.fetch_add(written, Ordering::Relaxed) + written;
    if WALKED.load(Ordering::Relaxed) && since < bound / 8 {
        return;
    }
    if WALKING.swap(true, Ordering::Acquire) {
        return;
    }
    WALKED.store(true, Ordering::Relaxed);
    SINCE.store(0, Ordering::Relaxed);
    let owned = dir.to_path_buf();
    let walk = move || {
        evict(&owned, bound);
        WALKING.store(false, Ordering::Release);
    };
    if std::thread::Builder::new().name("quabla-cache-evict".into()).spawn(walk).is_err() {
        // No thread to be had: walk here (slower, still correct).
        evict(dir, bound);
        WALKING.store(false, Ordering::Release);
    }
}

/// A fresh temporary file name in `dir` (unique per process, thread and call).
pub(crate) fn temp_path(dir: &Path, ext: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    dir.join(format!(".tmp-{}-{n}.{ext}", std::process::id()))
}

/// Deletes the least recently used entries until the directory's entries fit `bound` bytes.
fn evict(dir: &Path, bound: u64) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<(std::time::SystemTime, u64, PathBuf)> = rd
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "qobj"))
        .filter_map(|e| {
            let m = e.metadata().ok()?;
            Some((m.modified().ok()?, m.len(), e.path()))
        })
        .collect();
    let mut total: u64 = entries.iter().map(|e| e.1).sum();
    if total <= bound {
        return;
    }
    entries.sort();
    for (_, len, path) in entries {
        if total <= bound {
            break;
        }
        if std::fs::remove_file(&path).is_ok() {
            total = total.saturating_sub(len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("quabla-objcache-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn entries_round_trip_and_damage_is_a_miss() {
        let d = scratch("rt");
        let k = key(&[b"program", b"O2"]);
        assert_ne!(k, key(&[b"program", b"O3"]));
        assert_ne!(key(&[b"ab", b"c"]), key(&[b"a", b"bc"]));
        assert!(load(&d, &k).is_none());
        let flags = Flags { guarded: true, needs_utils: false };
        store(&d, &k, flags, &[b"\x7fELF object bytes".to_vec()]);
        assert_eq!(load(&d, &k), Some((flags, vec![b"\x7fELF object bytes".to_vec()])));
        // Several objects (the partitions of one program) come back in order.
        let parts = vec![b"first".to_vec(), vec![], b"third object".to_vec()];
        let k3 = key(&[b"program", b"parts"]);
        store(&d, &k3, flags, &parts);
        assert_eq!(load(&d, &k3), Some((flags, parts)));
        // Flip one byte of the object: the checksum rejects it and the entry is deleted.
        let p = entry_path(&d, &k);
        let mut bytes = std::fs::read(&p).unwrap();
        *bytes.last_mut().unwrap() ^= 1;
        std::fs::write(&p, &bytes).unwrap();
        assert!(load(&d, &k).is_none());
        assert!(!p.exists());
        // A truncated or foreign file is a miss too.
        std::fs::write(&p, b"QUABLAO1").unwrap();
        assert!(load(&d, &k).is_none());
        std::fs::write(&p, b"not a cache entry at all, but long enough for a header").unwrap();
        assert!(load(&d, &k).is_none());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn the_directory_stays_under_its_bound() {
        let d = scratch("evict");
        let flags = Flags { guarded: false, needs_utils: true };
        for i in 0..6u8 {
            store(&d, &key(&[&[i]]), flags, &[vec![i; 988]]);
            // Distinct modification times, oldest first.
            let p = entry_path(&d, &key(&[&[i]]));
            let t = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000 + i as u64);
            std::fs::File::options().append(true).open(&p).unwrap().set_modified(t).unwrap();
        }
        evict(&d, 3 * (1000 + HEADER as u64));
        // (each entry: the header, 4 + 8 bytes of object table and 988 bytes of object)
        let left: Vec<bool> = (0..6u8).map(|i| entry_path(&d, &key(&[&[i]])).exists()).collect();
        assert_eq!(left, [false, false, false, true, true, true]);
        let _ = std::fs::remove_dir_all(&d);
    }
}

//! What the kernels' blocking derives from: the host's caches (Linux sysfs).

/// The host's L1 data and L2 cache sizes in bytes (Linux sysfs of cpu0; 32 KB and 1 MB when
/// it does not say).
pub fn caches() -> Caches {
    static C: std::sync::OnceLock<Caches> = std::sync::OnceLock::new();
    *C.get_or_init(|| {
        let mut c = Caches { l1d: 32 << 10, l2: 1 << 20, l1_sets: 64, line: 64 };
        let dir = "/sys/devices/system/cpu/cpu0/cache";
        for i in 0..8 {
            let read = |f: &str| std::fs::read_to_string(format!("{dir}/index{i}/{f}")).ok().map(|s| s.trim().to_string());
            let (Some(level), Some(ty), Some(size)) = (read("level"), read("type"), read("size")) else { continue };
            let bytes = match size.strip_suffix('K') {
                Some(kb) => kb.parse::<i64>().ok().map(|x| x << 10),
                None => size.strip_suffix('M').and_then(|mb| mb.parse::<i64>().ok()).map(|x| x << 20),
            };
            match (level.as_str(), ty.as_str(), bytes) {
                ("1", "Data", Some(b)) => {
                    c.l1d = b;
                    let num = |f: &str| read(f).and_then(|v| v.parse::<i64>().ok());
                    if let (Some(sets), Some(line)) = (num("number_of_sets"), num("coherency_line_size")) {
                        (c.l1_sets, c.line) = (sets.max(1), line.max(1));
                    }
                }
                ("2", "Unified", Some(b)) => c.l2 = b,
                _ => {}
            }
        }
        c
    })
}

/// Per-core cache sizes the blocks derive from (quabla_lowering's `tiling::micro_blocks`,
/// [`crate::gemm::blocks`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caches {
    pub l1d: i64,
    pub l2: i64,
    /// Sets of the L1 data cache and its line size in bytes.
    pub l1_sets: i64,
    pub line: i64,
}


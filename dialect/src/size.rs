//! The one place where element counts and byte sizes of shapes are multiplied. Every product
//! over the extents of a shape (an element count, a stride, a count of rows or lanes, a byte
//! length) is computed here with checked arithmetic, and an overflow or a negative extent is a
//! [`SizeError`] naming the shape, never a wrapped `usize` or a panic. The byte limit of one
//! tensor (`QUABLA_MAX_BYTES`, default the machine's memory) lives here too: [`max_bytes`].
//!
//! Invariant: no crate multiplies shape extents outside this module; the source lint
//! `dialect/tests/size_lint.rs` fails on an unchecked `.product()` (or a hand-written byte
//! size) elsewhere, except at the sites listed, each with its reason, in
//! `dialect/tests/size_lint_allowlist.txt`.
use std::fmt;
use std::sync::OnceLock;

/// A product over a shape that does not fit: an extent is negative, or the product (times the
/// item size, for byte lengths) overflows `usize`/`i64`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizeError {
    /// The extents multiplied.
    pub shape: Vec<i64>,
    /// The item size in bytes for a byte length, 1 for an element count.
    pub item: usize,
}

impl fmt::Display for SizeError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        if let Some(d) = self.shape.iter().find(|&&d| d < 0) {
            write!(f, "shape {:?} has the negative extent {d}", self.shape)
        } else if self.item == 1 {
            write!(f, "the element count of shape {:?} overflows", self.shape)
        } else {
            write!(f, "the byte size of shape {:?} with {}-byte items overflows", self.shape, self.item)
        }
    }
}

impl std::error::Error for SizeError {}

/// The product of `extents` as an element count, checked: `Err` names the shape when an extent
/// is negative or the product exceeds `i64::MAX` (so it is also a valid `i64` and `isize`).
pub fn checked_product(extents: &[i64]) -> Result<usize, SizeError> {
    let err = || SizeError { shape: extents.to_vec(), item: 1 };
    if extents.contains(&0) && extents.iter().all(|&d| d >= 0) {
        return Ok(0);
    }
    let mut n: usize = 1;
    for &d in extents {
        let d = usize::try_from(d).map_err(|_| err())?;
        n = n.checked_mul(d).filter(|&n| i64::try_from(n).is_ok()).ok_or_else(err)?;
    }
    Ok(n)
}

/// [`checked_product`] as an `i64` (the type of MLIR extents and attributes).
pub fn checked_product_i64(extents: &[i64]) -> Result<i64, SizeError> {
    // checked_product bounds the result by i64::MAX.
    checked_product(extents).map(|n| n as i64)
}

/// The product of the extents of `shape` at the positions `dims` (a contraction or reduction
/// size), checked like [`checked_product`]. A position out of range is treated as extent 1.
pub fn checked_product_at(shape: &[i64], dims: impl IntoIterator<Item = usize>) -> Result<usize, SizeError> {
    let picked: Vec<i64> = dims.into_iter().map(|d| shape.get(d).copied().unwrap_or(1)).collect();
    checked_product(&picked)
}

/// The product of `extents` that are (sub-sequences of) the extents of a type that already
/// passed [`crate::TensorType::check_size`], so the product is bounded by that type's element
/// count: a stride, a lane count, a contraction size. It saturates at `i64::MAX` instead of
/// wrapping (and never panics), so a violated precondition fails at the next size check
/// instead of under-allocating. Where the extents come from the user, use
/// [`checked_product`].
pub fn saturating_product(extents: impl IntoIterator<Item = i64>) -> i64 {
    extents.into_iter().fold(1i64, |n, d| n.saturating_mul(d))
}

/// The byte length of a row-major buffer of `shape` with `item`-byte elements, checked: `Err`
/// when an extent is negative or the size exceeds `i64::MAX` bytes.
pub fn byte_len(shape: &[i64], item: usize) -> Result<usize, SizeError> {
    let err = || SizeError { shape: shape.to_vec(), item };
    checked_product(shape).map_err(|_| err())?.checked_mul(item).filter(|&b| i64::try_from(b).is_ok()).ok_or_else(err)
}

/// Row-major strides (in elements) of `shape`, checked like [`checked_product`] (the first
/// stride is the product of all extents but the first).
pub fn checked_strides(shape: &[i64]) -> Result<Vec<i64>, SizeError> {
    let mut s = vec![1i64; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = checked_product_i64(&[s[i + 1], shape[i + 1]]).map_err(|_| SizeError { shape: shape.to_vec(), item: 1 })?;
    }
    Ok(s)
}

/// Default bound on the byte size of one tensor when the machine's memory is unknown (1 TiB),
/// see [`max_bytes`].
pub const DEFAULT_MAX_BYTES: u64 = 1 << 40;

/// The machine's memory available to this process, in bytes: `MemTotal` of /proc/meminfo,
/// lowered to the cgroup's memory limit (v2 `memory.max`, v1 `memory.limit_in_bytes`) when one
/// is set. `None` when neither can be read (not Linux).
pub fn machine_memory() -> Option<u64> {
    let total = std::fs::read_to_string("/proc/meminfo").ok().and_then(|s| {
        let line = s.lines().find(|l| l.starts_with("MemTotal:"))?;
        let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        kb.checked_mul(1024)
    });
    let cgroup = ["/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"]
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok()?.trim().parse::<u64>().ok())
        .min();
    match (total, cgroup) {
        (Some(t), Some(c)) => Some(t.min(c)),
        (t, c) => t.or(c),
    }
    .filter(|&b| b > 0)
}

/// The largest byte size a tensor may have: `QUABLA_MAX_BYTES` (a decimal byte count) when set
/// to a positive integer, else the machine's memory ([`machine_memory`]; [`DEFAULT_MAX_BYTES`]
/// where unknown). Read once per process. A bound below the machine's memory matters because
/// Linux overcommits: a `malloc` larger than the memory succeeds and the OOM killer ends the
/// process when the pages are touched. Every boundary that creates a tensor type from user
/// input ([`crate::TensorType::check_size`], the shape rules, the importer, host buffers, the
/// interpreter's temporaries, compiled code's heap allocations) rejects larger tensors with a
/// typed error instead of attempting the allocation.
pub fn max_bytes() -> u64 {
    static MAX: OnceLock<u64> = OnceLock::new();
    *MAX.get_or_init(|| {
        std::env::var("QUABLA_MAX_BYTES")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|&v| v > 0)
            .or_else(machine_memory)
            .unwrap_or(DEFAULT_MAX_BYTES)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_are_checked_and_name_the_shape() {
        assert_eq!(checked_product(&[]), Ok(1));
        assert_eq!(checked_product(&[2, 3, 4]), Ok(24));
        assert_eq!(checked_product(&[1 << 62, 1 << 62, 0]), Ok(0));
        let e = checked_product(&[1 << 62, 4]).unwrap_err();
        assert_eq!(e.shape, vec![1 << 62, 4]);
        assert!(e.to_string().contains("[4611686018427387904, 4]") && e.to_string().contains("overflows"), "{e}");
        assert!(checked_product(&[2, -1]).unwrap_err().to_string().contains("negative extent -1"));
        // Exactly i64::MAX fits; one more does not.
        assert_eq!(checked_product_i64(&[i64::MAX]), Ok(i64::MAX));
        assert!(checked_product(&[1 << 32, 1 << 31]).is_err());
        assert_eq!(checked_product_at(&[2, 3, 5], [0, 2]), Ok(10));
        assert_eq!(saturating_product([2, 3, 5]), 30);
        assert_eq!(saturating_product([1 << 62, 4]), i64::MAX);
    }

    #[test]
    fn byte_lengths_and_strides_are_checked() {
        assert_eq!(byte_len(&[3, 4], 8), Ok(96));
        let e = byte_len(&[1 << 61], 8).unwrap_err();
        assert!(e.to_string().contains("8-byte items overflows"), "{e}");
        assert_eq!(checked_strides(&[2, 3, 4]), Ok(vec![12, 4, 1]));
        assert!(checked_strides(&[1, 1 << 40, 1 << 40]).is_err());
    }

    #[test]
    fn the_default_limit_is_the_machine_memory() {
        if std::env::var_os("QUABLA_MAX_BYTES").is_none() {
            assert_eq!(max_bytes(), machine_memory().unwrap_or(DEFAULT_MAX_BYTES));
        }
        if cfg!(target_os = "linux") {
            let m = machine_memory().expect("Linux has /proc/meminfo");
            assert!(m > (1 << 26) && m < (1 << 50), "{m}");
        }
    }
}

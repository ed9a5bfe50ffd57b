//! Source lint for issue 18's "no unchecked multiplication on shapes": outside
//! `dialect/src/size.rs` (the checked helpers), no non-test Rust source of the compiler crates
//! may compute a product over extents with `.product()` / `.product::<T>()`, or a byte size as
//! `num_elements() * ...` / `... * <x>.size()`, except the sites listed with their reason in
//! `size_lint_allowlist.txt` (each proven bounded by an earlier check). Test code (`tests/`
//! directories and the trailing `#[cfg(test)]` module of a file) is exempt.
use std::path::{Path, PathBuf};

const CRATES: &[&str] = &["dialect/src", "interp/src", "runtime/src", "lowering/src", "passes/src", "python/src", "opt/src", "compiler/src"];
const HELPER: &str = "dialect/src/size.rs";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root").to_path_buf()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Whether `line` (code, comments stripped) multiplies shape extents without the helpers.
fn unchecked(line: &str) -> bool {
    let code = line.split("//").next().unwrap_or("");
    let compact: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    compact.contains(".product()")
        || compact.contains(".product::<")
        || compact.contains("num_elements()*")
        || compact.contains(".size()*")
        || (compact.contains("*") && (compact.contains("dtype.size()") || compact.contains("dtype().size()")) && !compact.contains("saturating_mul") && !compact.contains("checked_mul"))
}

fn allowlist() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(root().join("dialect/tests/size_lint_allowlist.txt")).expect("allowlist");
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (path, rest) = l.split_once(" | ").unwrap_or_else(|| panic!("malformed allowlist line `{l}`"));
            let (code, reason) = rest.rsplit_once(" # ").unwrap_or_else(|| panic!("allowlist line without a reason `{l}`"));
            assert!(!reason.trim().is_empty(), "allowlist line without a reason `{l}`");
            (path.trim().to_string(), code.trim().to_string())
        })
        .collect()
}

/// Every unchecked site as (path relative to the root, trimmed line).
fn sites() -> Vec<(String, String)> {
    let root = root();
    let mut files = Vec::new();
    for c in CRATES {
        rust_files(&root.join(c), &mut files);
    }
    let mut out = Vec::new();
    for f in files {
        let rel = f.strip_prefix(&root).expect("under the root").to_string_lossy().replace('\\', "/");
        if rel == HELPER {
            continue;
        }
        let text = std::fs::read_to_string(&f).expect("readable source");
        for line in text.lines() {
            if line.trim() == "#[cfg(test)]" {
                break;
            }
            if unchecked(line) {
                out.push((rel.clone(), line.trim().to_string()));
            }
        }
    }
    out
}

#[test]
fn no_unchecked_shape_products_outside_the_size_module() {
    let allowed = allowlist();
    let found = sites();
    let bad: Vec<String> = found.iter().filter(|s| !allowed.contains(s)).map(|(p, l)| format!("{p}: {l}")).collect();
    assert!(
        bad.is_empty(),
        "unchecked products over shapes (use quabla_dialect::size::{{checked_product, byte_len, saturating_product}}, or list the site with its reason in dialect/tests/size_lint_allowlist.txt):\n{}",
        bad.join("\n")
    );
    let stale: Vec<String> = allowed.iter().filter(|a| !found.contains(a)).map(|(p, l)| format!("{p}: {l}")).collect();
    assert!(stale.is_empty(), "stale allowlist entries (the site changed or is gone):\n{}", stale.join("\n"));
}

#[test]
fn the_lint_sees_the_patterns_it_forbids() {
    assert!(unchecked("let n: i64 = shape.iter().product();"));
    assert!(unchecked("let n = dims.iter().product::<i64>() as usize;"));
    assert!(unchecked("let b = t.num_elements() * 4;"));
    assert!(unchecked("let b = n * ty.dtype.size();"));
    assert!(!unchecked("let n = size::saturating_product(shape.iter().copied());"));
    assert!(!unchecked("let b = n.saturating_mul(ty.dtype.size());"));
    assert!(!unchecked("// a comment about .product()"));
}

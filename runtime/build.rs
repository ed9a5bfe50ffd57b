//! Compiles the CPU executor's C helpers: the allocation guard (csrc/alloc_guard.c, the
//! setjmp/longjmp pair that turns a failed heap allocation inside JIT-compiled code into an
//! error return), `memrefCopy` (csrc/memref_copy.c, so no LLVM library is loaded at run time)
//! the object loader of the persistent compile cache (csrc/objload.c, LLVM-C ORC) and the
//! OpenMP runtime's loader (csrc/openmp.c, for parallel loops) and the LLVM compile path
//! (csrc/llvm_compile.c: translation, passes and code generation without the ExecutionEngine),
//! against the LLVM headers of `MLIR_SYS_220_PREFIX`.
//!
//! It also hashes the crate's own sources (src/ and csrc/) into `QUABLA_RUNTIME_SOURCES`:
//! the executor rewrites the lowered module (tagging, flattening, output views) before LLVM
//! sees it, so the persistent compile cache keys on this hash as well as on the lowered text
//! (`cpu::cache_key`). Any change to the runtime then misses the objects of earlier builds.
use std::path::Path;

/// FNV-1a over every file under `dir`, in name order, with each file's path and length.
fn hash_tree(dir: &Path, h: &mut u64) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect()).unwrap_or_default();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            hash_tree(&path, h);
            continue;
        }
        let Ok(bytes) = std::fs::read(&path) else { continue };
        let name = path.to_string_lossy().into_owned();
        let len = (bytes.len() as u64).to_le_bytes();
        for b in name.as_bytes().iter().chain(&len).chain(&bytes) {
            *h = (*h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

fn main() {
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=csrc");
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    hash_tree(Path::new("src"), &mut h);
    hash_tree(Path::new("csrc"), &mut h);
    println!("cargo:rustc-env=QUABLA_RUNTIME_SOURCES={h:016x}");
    println!("cargo:rerun-if-env-changed=MLIR_SYS_220_PREFIX");
    let prefix = std::env::var("MLIR_SYS_220_PREFIX").unwrap_or_else(|_| "/usr/lib/llvm-22".to_string());
    cc::Build::new()
        .file("csrc/alloc_guard.c")
        .file("csrc/objload.c")
        .file("csrc/memref_copy.c")
        .file("csrc/openmp.c")
        .file("csrc/llvm_compile.c")
        .include(format!("{prefix}/include"))
        .opt_level(2)
        .warnings(true)
        .compile("quabla_runtime_c");
}

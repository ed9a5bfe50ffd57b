//! Compiles the CPU executor's C helpers: the allocation guard (csrc/alloc_guard.c, the
//! setjmp/longjmp pair that turns a failed heap allocation inside JIT-compiled code into an
//! error return), `memrefCopy` (csrc/memref_copy.c, so no LLVM library is loaded at run time)
//! the object loader of the persistent compile cache (csrc/objload.c, LLVM-C ORC) and the
//! OpenMP runtime's loader (csrc/openmp.c, for parallel loops) and the LLVM compile path
//! (csrc/llvm_compile.c: translation, passes and code generation without the ExecutionEngine),
//! against the LLVM headers of `MLIR_SYS_220_PREFIX`.
fn main() {
    println!("cargo:rerun-if-changed=csrc/alloc_guard.c");
    println!("cargo:rerun-if-changed=csrc/objload.c");
    println!("cargo:rerun-if-changed=csrc/memref_copy.c");
    println!("cargo:rerun-if-changed=csrc/openmp.c");
    println!("cargo:rerun-if-changed=csrc/llvm_compile.c");
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

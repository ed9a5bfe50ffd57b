/* Loads object files (a cached program the CPU executor's JIT produced earlier, see
 * runtime/src/objcache.rs, or the partitions of a program compiled on several threads) into one
 * fresh LLVM ORC LLJIT without MLIR and without LLVM code generation: the objects are linked
 * against each other, the process's symbols (libc, libm), the
 * runtime's own quabla_rt_malloc (allocation guard) and memrefCopy (csrc/memref_copy.c), and
 * the extra symbols the caller passes (the linear-algebra kernels). */
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void *quabla_rt_malloc(uint64_t bytes);
void memrefCopy(int64_t elem_size, void *src, void *dst);

static char *take_error(LLVMErrorRef e, const char *what) {
  char *m = LLVMGetErrorMessage(e);
  size_t n = strlen(what) + strlen(m) + 3;
  char *out = malloc(n);
  if (out) {
    strcpy(out, what);
    strcat(out, ": ");
    strcat(out, m);
  }
  LLVMDisposeErrorMessage(m);
  return out;
}

/* Links the `n_objs` objects `objs[i]` (of `lens[i]` bytes) in one LLJIT. Returns the LLJIT
 * (dispose with quabla_orc_dispose) and sets *fn to the address of `entry`; on failure returns
 * NULL and sets *err to a malloc'd message (free with quabla_orc_free). */
void *quabla_orc_load(const char *const *objs, const size_t *lens, size_t n_objs, const char *entry, const char *const *names, void *const *addrs, size_t n_extra,
                      void **fn, char **err) {
  static int initialized = 0;
  if (!initialized) {
    if (LLVMInitializeNativeTarget() || LLVMInitializeNativeAsmPrinter()) {
      *err = strdup("the native target is not available");
      return NULL;
    }
    initialized = 1;
  }
  LLVMOrcLLJITRef jit;
  LLVMErrorRef e = LLVMOrcCreateLLJIT(&jit, NULL);
  if (e) {
    *err = take_error(e, "creating the JIT");
    return NULL;
  }
  LLVMOrcJITDylibRef lib = LLVMOrcLLJITGetMainJITDylib(jit);
  LLVMOrcDefinitionGeneratorRef gen;
  e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen, LLVMOrcLLJITGetGlobalPrefix(jit), NULL, NULL);
  if (e) goto fail_process;
  LLVMOrcJITDylibAddGenerator(lib, gen);
  size_t n = 2 + n_extra;
  LLVMOrcCSymbolMapPair *syms = malloc(n * sizeof *syms);
  if (!syms) {
    *err = strdup("out of memory");
    goto dispose;
  }
  syms[0].Name = LLVMOrcLLJITMangleAndIntern(jit, "quabla_rt_malloc");
  syms[0].Sym.Address = (LLVMOrcExecutorAddress)(uintptr_t)&quabla_rt_malloc;
  syms[1].Name = LLVMOrcLLJITMangleAndIntern(jit, "memrefCopy");
  syms[1].Sym.Address = (LLVMOrcExecutorAddress)(uintptr_t)&memrefCopy;
  for (size_t i = 0; i < n_extra; i++) {
    syms[2 + i].Name = LLVMOrcLLJITMangleAndIntern(jit, names[i]);
    syms[2 + i].Sym.Address = (LLVMOrcExecutorAddress)(uintptr_t)addrs[i];
  }
  for (size_t i = 0; i < n; i++) {
    syms[i].Sym.Flags.GenericFlags = LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable;
    syms[i].Sym.Flags.TargetFlags = 0;
  }
  e = LLVMOrcJITDylibDefine(lib, LLVMOrcAbsoluteSymbols(syms, n));
  free(syms);
  if (e) goto fail_define;
  for (size_t i = 0; i < n_objs; i++) {
    LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(objs[i], lens[i], "quabla-object");
    e = LLVMOrcLLJITAddObjectFile(jit, lib, buf);
    if (e) goto fail_add;
  }
  LLVMOrcExecutorAddress addr = 0;
  e = LLVMOrcLLJITLookup(jit, &addr, entry);
  if (e) goto fail_lookup;
  *fn = (void *)(uintptr_t)addr;
  return jit;

fail_process:
  *err = take_error(e, "process symbols");
  goto dispose;
fail_define:
  *err = take_error(e, "defining the runtime symbols");
  goto dispose;
fail_add:
  *err = take_error(e, "adding the object");
  goto dispose;
fail_lookup:
  *err = take_error(e, "looking up the entry point");
dispose : {
  LLVMErrorRef d = LLVMOrcDisposeLLJIT(jit);
  if (d) LLVMConsumeError(d);
}
  return NULL;
}

void quabla_orc_dispose(void *jit) {
  LLVMErrorRef e = LLVMOrcDisposeLLJIT((LLVMOrcLLJITRef)jit);
  if (e) LLVMConsumeError(e);
}

void quabla_orc_free(char *msg) { free(msg); }

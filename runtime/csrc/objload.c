/* Loads object files (a cached program the CPU executor's JIT produced earlier, see
 * runtime/src/objcache.rs, or the partitions of a program compiled on several threads) into
 * the process's one LLVM ORC LLJIT without MLIR and without LLVM code generation: the objects
 * are linked against each other, the process's symbols (libc, libm), the runtime's own
 * quabla_rt_malloc (allocation guard) and memrefCopy (csrc/memref_copy.c), and the extra
 * symbols the caller passes (the linear-algebra kernels).
 *
 * Each program gets a JITDylib of its own (programs define the same entry names), taken from a
 * free list: a JITDylib keeps the process-symbol generator and the runtime's symbols, and a
 * program's objects go in under a resource tracker of their own, removed (code freed) when
 * the program is. Creating an LLJIT per program (host detection, a target machine, the
 * session) cost 0.45 ms of each compile and of each compile-cache hit. */
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *quabla_rt_malloc(uint64_t bytes);
void memrefCopy(int64_t elem_size, void *src, void *dst);
void quabla_orc_dispose(void *handle);

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

/* The process's LLJIT, its free JITDylibs and how many were made (for unique names). */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static LLVMOrcLLJITRef the_jit;
static LLVMOrcJITDylibRef *free_libs;
static size_t n_free, cap_free, n_made;

/* A loaded program: its JITDylib and the tracker of its objects. */
typedef struct {
  LLVMOrcJITDylibRef lib;
  LLVMOrcResourceTrackerRef rt;
} program;

/* The LLJIT, created on first use (under `lock`). */
static LLVMOrcLLJITRef jit_locked(char **err) {
  if (the_jit) return the_jit;
  if (LLVMInitializeNativeTarget() || LLVMInitializeNativeAsmPrinter()) {
    *err = strdup("the native target is not available");
    return NULL;
  }
  LLVMErrorRef e = LLVMOrcCreateLLJIT(&the_jit, NULL);
  if (e) {
    the_jit = NULL;
    *err = take_error(e, "creating the JIT");
  }
  return the_jit;
}

/* A JITDylib with the process's symbols and the runtime's (under `lock`): a free one, or a new
 * one. The extra symbols are the same for every call of a process (the runtime's kernel
 * table), so a reused JITDylib has them already. */
static LLVMOrcJITDylibRef lib_locked(LLVMOrcLLJITRef jit, const char *const *names, void *const *addrs, size_t n_extra, char **err) {
  if (n_free > 0) return free_libs[--n_free];
  char name[48];
  snprintf(name, sizeof name, "quabla-program-%zu", n_made++);
  LLVMOrcJITDylibRef lib = LLVMOrcExecutionSessionCreateBareJITDylib(LLVMOrcLLJITGetExecutionSession(jit), name);
  LLVMOrcDefinitionGeneratorRef gen;
  LLVMErrorRef e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen, LLVMOrcLLJITGetGlobalPrefix(jit), NULL, NULL);
  if (e) {
    *err = take_error(e, "process symbols");
    return NULL;
  }
  LLVMOrcJITDylibAddGenerator(lib, gen);
  size_t n = 2 + n_extra;
  LLVMOrcCSymbolMapPair *syms = malloc(n * sizeof *syms);
  if (!syms) {
    *err = strdup("out of memory");
    return NULL;
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
  if (e) {
    *err = take_error(e, "defining the runtime symbols");
    return NULL;
  }
  return lib;
}

/* Puts a JITDylib without program objects back on the free list. */
static void give_lib(LLVMOrcJITDylibRef lib) {
  pthread_mutex_lock(&lock);
  if (n_free == cap_free) {
    size_t cap = cap_free ? 2 * cap_free : 16;
    LLVMOrcJITDylibRef *grown = realloc(free_libs, cap * sizeof *grown);
    if (grown) {
      free_libs = grown;
      cap_free = cap;
    }
  }
  /* Without room it stays in the session, unused. */
  if (n_free < cap_free) free_libs[n_free++] = lib;
  pthread_mutex_unlock(&lock);
}

/* The result of a lookup, delivered by ORC's callback. */
typedef struct {
  pthread_mutex_t m;
  pthread_cond_t c;
  int done;
  LLVMOrcExecutorAddress addr;
  char *err;
} lookup_result;

static void on_lookup(LLVMErrorRef e, LLVMOrcCSymbolMapPairs result, size_t n, void *ctx) {
  lookup_result *r = ctx;
  pthread_mutex_lock(&r->m);
  if (e) {
    r->err = take_error(e, "looking up the entry point");
  } else if (n >= 1) {
    r->addr = result[0].Sym.Address;
  }
  r->done = 1;
  pthread_cond_signal(&r->c);
  pthread_mutex_unlock(&r->m);
}

/* Links the `n_objs` objects `objs[i]` (of `lens[i]` bytes) as one program. Returns a handle
 * (release with quabla_orc_dispose) and sets *fn to the address of `entry`; on failure returns
 * NULL and sets *err to a malloc'd message (free with quabla_orc_free). */
void *quabla_orc_load(const char *const *objs, const size_t *lens, size_t n_objs, const char *entry, const char *const *names, void *const *addrs, size_t n_extra,
                      void **fn, char **err) {
  pthread_mutex_lock(&lock);
  LLVMOrcLLJITRef jit = jit_locked(err);
  LLVMOrcJITDylibRef lib = jit ? lib_locked(jit, names, addrs, n_extra, err) : NULL;
  pthread_mutex_unlock(&lock);
  if (!lib) return NULL;
  program *p = malloc(sizeof *p);
  if (!p) {
    *err = strdup("out of memory");
    give_lib(lib);
    return NULL;
  }
  p->lib = lib;
  p->rt = LLVMOrcJITDylibCreateResourceTracker(lib);
  for (size_t i = 0; i < n_objs; i++) {
    LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(objs[i], lens[i], "quabla-object");
    LLVMErrorRef e = LLVMOrcLLJITAddObjectFileWithRT(jit, p->rt, buf);
    if (e) {
      *err = take_error(e, "adding the object");
      quabla_orc_dispose(p);
      return NULL;
    }
  }
  /* The entry, searched in this program's JITDylib only. ORC may call back on another
   * thread: wait for it. */
  lookup_result r = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, NULL};
  LLVMOrcCJITDylibSearchOrderElement order = {lib, LLVMOrcJITDylibLookupFlagsMatchAllSymbols};
  LLVMOrcCLookupSetElement sym = {LLVMOrcLLJITMangleAndIntern(jit, entry), LLVMOrcSymbolLookupFlagsRequiredSymbol};
  LLVMOrcExecutionSessionLookup(LLVMOrcLLJITGetExecutionSession(jit), LLVMOrcLookupKindStatic, &order, 1, &sym, 1, on_lookup, &r);
  pthread_mutex_lock(&r.m);
  while (!r.done) pthread_cond_wait(&r.c, &r.m);
  pthread_mutex_unlock(&r.m);
  if (r.err || !r.addr) {
    *err = r.err ? r.err : strdup("looking up the entry point: no address");
    quabla_orc_dispose(p);
    return NULL;
  }
  *fn = (void *)(uintptr_t)r.addr;
  return p;
}

/* Frees a program's code and puts its JITDylib back on the free list. */
void quabla_orc_dispose(void *handle) {
  program *p = handle;
  if (!p) return;
  LLVMErrorRef e = LLVMOrcResourceTrackerRemove(p->rt);
  LLVMOrcReleaseResourceTracker(p->rt);
  if (e) {
    /* The JITDylib may still hold some of the program's symbols: not reused. */
    LLVMConsumeError(e);
  } else {
    give_lib(p->lib);
  }
  free(p);
}

void quabla_orc_free(char *msg) { free(msg); }

/* Loads the OpenMP runtime into the process for the CPU executor's parallel loops. The CPU
 * pipeline lowers scf.forall loops to the OpenMP dialect, whose LLVM translation calls LLVM's
 * libomp (__kmpc_fork_call, __kmpc_for_static_init_*, ...); the JIT resolves those symbols
 * from the process (MLIR's ExecutionEngine and csrc/objload.c both search it), so libomp is
 * opened once with global symbols before the first parallel program is linked. Tried in
 * order: a libomp the process already has (two copies of libomp in one process abort; one
 * loaded with local symbols is promoted to global), then
 * $QUABLA_LIBOMP, the copy a wheel ships next to the extension (libomp.so.5 in the directory
 * of the shared object this file is linked into), libomp.so.5, libomp.so, and the LLVM 22
 * copy. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *quabla_libomp;

/* The bundled copy's path: libomp.so.5 beside the object that defines this function. */
static const char *bundled(void) {
  static char path[4096];
  Dl_info info;
  if (dladdr((void *)&bundled, &info) == 0 || info.dli_fname == NULL) return NULL;
  const char *slash = strrchr(info.dli_fname, '/');
  if (slash == NULL) return NULL;
  int n = snprintf(path, sizeof path, "%.*s/libomp.so.5", (int)(slash - info.dli_fname), info.dli_fname);
  return n > 0 && (size_t)n < sizeof path ? path : NULL;
}

/* 1 when libomp is (now) loaded, 0 when no candidate could be opened. */
int quabla_omp_load(void) {
  if (quabla_libomp != NULL) return 1;
  if (dlsym(RTLD_DEFAULT, "__kmpc_fork_call") != NULL) {
    quabla_libomp = RTLD_DEFAULT;
    return 1;
  }
  /* A copy loaded with local symbols (another extension's): promote it to global scope. */
  const char *sonames[] = {"libomp.so.5", "libomp.so", "libiomp5.so"};
  for (size_t i = 0; i < sizeof sonames / sizeof sonames[0]; i++) {
    void *h = dlopen(sonames[i], RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
    if (h != NULL && dlsym(h, "__kmpc_fork_call") != NULL) {
      quabla_libomp = h;
      return 1;
    }
    if (h != NULL) dlclose(h);
  }
  const char *names[] = {getenv("QUABLA_LIBOMP"), bundled(), "libomp.so.5", "libomp.so", "/usr/lib/llvm-22/lib/libomp.so"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    if (names[i] == NULL || names[i][0] == '\0') continue;
    void *h = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
    if (h != NULL && dlsym(h, "__kmpc_fork_call") != NULL) {
      quabla_libomp = h;
      return 1;
    }
    if (h != NULL) dlclose(h);
  }
  return 0;
}

/* Loads the OpenMP runtime into the process for the CPU executor's parallel loops. The CPU
 * pipeline lowers scf.forall loops to the OpenMP dialect, whose LLVM translation calls LLVM's
 * libomp (__kmpc_fork_call, __kmpc_for_static_init_*, ...); the JIT resolves those symbols
 * from the process (MLIR's ExecutionEngine and csrc/objload.c both search it), so libomp is
 * opened once with global symbols before the first parallel program is linked. Tried in
 * order: $QUABLA_LIBOMP, libomp.so.5, libomp.so, and the LLVM 22 copy. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>

static void *quabla_libomp;

/* 1 when libomp is (now) loaded, 0 when no candidate could be opened. */
int quabla_omp_load(void) {
  if (quabla_libomp != NULL) return 1;
  const char *names[] = {getenv("QUABLA_LIBOMP"), "libomp.so.5", "libomp.so", "/usr/lib/llvm-22/lib/libomp.so"};
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

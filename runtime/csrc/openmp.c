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

/* A parallel region for the runtime's own kernels (runtime/src/gemm.rs): `body(ctx, thread,
 * threads)` on `threads` threads of libomp's team (the workers the compiled loops use, so the
 * two never oversubscribe the cores), through the same entry points the OpenMP-lowered loops
 * call. Runs `body(ctx, 0, 1)` on the calling thread when libomp is not loaded or one thread
 * is asked for. Inside another parallel region libomp runs the nested one on one thread. */
typedef struct {
  int reserved_1, flags, reserved_2, reserved_3;
  const char *psource;
} quabla_ident;
static quabla_ident quabla_loc = {0, 2, 0, 0, ";quabla;gemm;0;0;;"};
typedef void (*quabla_body)(void *ctx, int thread, int threads);
typedef void (*kmpc_micro)(int *gtid, int *btid, ...);
typedef void (*fork_call_t)(quabla_ident *, int, kmpc_micro, ...);
typedef void (*push_threads_t)(quabla_ident *, int, int);
typedef int (*gtid_t)(quabla_ident *);
typedef void (*barrier_t)(quabla_ident *, int);
typedef int (*omp_int_t)(void);
static fork_call_t fork_call;
static push_threads_t push_threads;
static gtid_t global_thread_num;
static barrier_t kmpc_barrier;
static omp_int_t thread_num, num_threads;

static int resolve(void) {
  if (fork_call) return 1;
  if (!quabla_omp_load()) return 0;
  void *h = quabla_libomp;
  push_threads = (push_threads_t)dlsym(h, "__kmpc_push_num_threads");
  global_thread_num = (gtid_t)dlsym(h, "__kmpc_global_thread_num");
  kmpc_barrier = (barrier_t)dlsym(h, "__kmpc_barrier");
  thread_num = (omp_int_t)dlsym(h, "omp_get_thread_num");
  num_threads = (omp_int_t)dlsym(h, "omp_get_num_threads");
  fork_call_t f = (fork_call_t)dlsym(h, "__kmpc_fork_call");
  if (!push_threads || !global_thread_num || !kmpc_barrier || !thread_num || !num_threads || !f) return 0;
  fork_call = f;
  return 1;
}

static void quabla_micro(int *gtid, int *btid, quabla_body body, void *ctx) {
  (void)gtid;
  (void)btid;
  body(ctx, thread_num(), num_threads());
}

void quabla_omp_run(quabla_body body, void *ctx, int threads) {
  if (threads <= 1 || !resolve()) {
    body(ctx, 0, 1);
    return;
  }
  push_threads(&quabla_loc, global_thread_num(&quabla_loc), threads);
  fork_call(&quabla_loc, 2, (kmpc_micro)quabla_micro, body, ctx);
}

/* The barrier of the team running the calling thread (a no-op outside a region). */
void quabla_omp_barrier(void) {
  if (resolve()) kmpc_barrier(&quabla_loc, global_thread_num(&quabla_loc));
}

static void quabla_noop(void *ctx, int thread, int threads) {
  (void)ctx;
  (void)thread;
  (void)threads;
}

/* Puts the calling thread's OpenMP workers to sleep now instead of letting them spin out
 * their block time (KMP_BLOCKTIME, 200 ms) after the last parallel call: an empty region of
 * `threads` threads (the programs' team) with a block time of 0, then the block time as it
 * was for the regions after it (which wake the workers). Called when a compile starts
 * (runtime/src/cpu.rs): the spinning worker slowed it (a layernorm gradient compiled right
 * after 1000 softmax calls: 80-95 ms, 61-63 ms with KMP_BLOCKTIME=0). libomp's soft pause
 * (omp_pause_resource_all) leaves spinning workers spinning. A no-op when libomp is not
 * loaded (nothing is loaded for it) or the block time is already 0. */
void quabla_omp_quiesce(int threads) {
  typedef int (*get_bt_t)(void);
  typedef void (*set_bt_t)(int);
  if (quabla_libomp == NULL || threads <= 1 || !resolve()) return;
  get_bt_t get_bt = (get_bt_t)dlsym(quabla_libomp, "kmp_get_blocktime");
  set_bt_t set_bt = (set_bt_t)dlsym(quabla_libomp, "kmp_set_blocktime");
  if (!get_bt || !set_bt) return;
  int bt = get_bt();
  if (bt == 0) return;
  set_bt(0);
  quabla_omp_run(quabla_noop, NULL, threads);
  set_bt(bt);
}

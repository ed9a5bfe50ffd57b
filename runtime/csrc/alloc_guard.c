/* The CPU executor's allocation guard. Generated code allocates its temporaries through
 * quabla_rt_malloc (the lowering renames the `malloc` that MLIR's memref lowering calls). When
 * malloc fails, quabla_rt_malloc records the request and longjmps back to the
 * quabla_rt_call that entered the compiled code on this thread, which returns the byte count
 * instead of letting the code write through a null pointer. The compiled code holds no locks
 * and runs no destructors, so unwinding it this way only leaks the temporaries it had
 * already allocated in that call. Called outside quabla_rt_call (never, by construction) a
 * failure aborts rather than returning null. A request over the byte limit (QUABLA_MAX_BYTES,
 * set by quabla_rt_set_limit; default the machine's memory) fails the same way without
 * calling malloc: Linux overcommits, so a malloc larger than the memory would succeed and the
 * OOM killer would end the process when the code touched the pages. */
#include <setjmp.h>
#include <stddef.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdint.h>
#include <stdlib.h>

static _Thread_local jmp_buf *quabla_jmp;
static _Thread_local uint64_t quabla_failed_bytes;
static uint64_t quabla_limit = UINT64_MAX;

/* Sets the largest allocation compiled code may make (the tensor byte limit plus slack for
 * the memref lowering's alignment padding). */
void quabla_rt_set_limit(uint64_t bytes) { quabla_limit = bytes; }

void *quabla_rt_malloc(uint64_t bytes) {
  void *p = bytes > quabla_limit ? NULL : malloc((size_t)bytes);
  if (p == NULL && bytes != 0) {
    quabla_failed_bytes = bytes;
    if (quabla_jmp != NULL) longjmp(*quabla_jmp, 1);
    abort();
  }
  return p;
}

/* Abandons the guarded call in progress as a failed allocation of `bytes` (the runtime's
 * kernels call it when their own fallible allocation fails, with no destructor pending). */
void quabla_rt_fail(uint64_t bytes) {
  quabla_failed_bytes = bytes == 0 ? 1 : bytes;
  if (quabla_jmp != NULL) longjmp(*quabla_jmp, 1);
  abort();
}

/* Keeps large temporaries in the heap between calls (glibc): by default glibc serves blocks
 * above its mmap threshold (128 KiB, rising dynamically) with fresh mappings and trims the
 * heap's free top, so every call of a program with multi-megabyte temporaries (a
 * convolution's patch matrix, packed matmul panels) page-faults and zero-fills them again:
 * measured on a 2-D conv layer, 57% of its time in the kernel, 59 ms per call against 11 ms
 * with the heap reused. Blocks up to 32 MiB (glibc's largest mmap threshold) come from the
 * heap and up to 256 MiB of free heap top is kept. Called once per process. */
void quabla_rt_tune_malloc(void) {
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
  mallopt(M_TRIM_THRESHOLD, 256 * 1024 * 1024);
#endif
}

/* Calls the packed interface `f(args)`; returns 0, or the size of the allocation that failed. */
uint64_t quabla_rt_call(void (*f)(void **), void **args) {
  jmp_buf env;
  jmp_buf *volatile prev = quabla_jmp;
  if (setjmp(env) != 0) {
    quabla_jmp = prev;
    return quabla_failed_bytes == 0 ? 1 : quabla_failed_bytes;
  }
  quabla_jmp = &env;
  f(args);
  quabla_jmp = prev;
  return 0;
}

/* memrefCopy for JIT-compiled code: the one C runner utility MLIR's memref lowering calls
 * (copies between memrefs with non-identity layouts). Provided here so that compiled programs
 * never load libmlir_c_runner_utils.so (which pulls a second copy of libMLIR and libLLVM into
 * the process, ~100 ms, and ties the run time to the LLVM installation).
 *
 * ABI (MLIR's unranked memref): { int64 rank; descriptor* } with the ranked descriptor
 * { void *allocated; void *aligned; int64 offset; int64 sizes[rank]; int64 strides[rank] },
 * strides and offset in elements of `elem_size` bytes. */
#include <stdint.h>
#include <string.h>

typedef struct {
  int64_t rank;
  void *descriptor;
} quabla_unranked_memref;

typedef struct {
  void *allocated;
  char *aligned;
  int64_t offset;
  int64_t sizes_and_strides[];
} quabla_memref_desc;

enum { QUABLA_MAX_COPY_RANK = 64 };

void memrefCopy(int64_t elem_size, quabla_unranked_memref *src_m, quabla_unranked_memref *dst_m) {
  int64_t rank = src_m->rank;
  quabla_memref_desc *src = (quabla_memref_desc *)src_m->descriptor;
  quabla_memref_desc *dst = (quabla_memref_desc *)dst_m->descriptor;
  const int64_t *sizes = src->sizes_and_strides;
  const int64_t *s_str = src->sizes_and_strides + rank;
  const int64_t *d_str = dst->sizes_and_strides + rank;
  char *s = src->aligned + src->offset * elem_size;
  char *d = dst->aligned + dst->offset * elem_size;
  if (rank == 0) {
    memcpy(d, s, (size_t)elem_size);
    return;
  }
  for (int64_t i = 0; i < rank; i++)
    if (sizes[i] == 0) return;
  if (rank > QUABLA_MAX_COPY_RANK) return; /* not produced by Quabla's lowering (ranks <= 8) */
  /* The innermost contiguous run (identity strides from the last dimension inwards) is copied
   * with one memcpy; the outer dimensions are walked with an odometer. */
  int64_t run = 1, inner = rank;
  while (inner > 0 && s_str[inner - 1] == run && d_str[inner - 1] == run) {
    run *= sizes[inner - 1];
    inner--;
  }
  int64_t idx[QUABLA_MAX_COPY_RANK] = {0};
  size_t bytes = (size_t)(run * elem_size);
  for (;;) {
    memcpy(d, s, bytes);
    int64_t k = inner - 1;
    for (; k >= 0; k--) {
      idx[k]++;
      s += s_str[k] * elem_size;
      d += d_str[k] * elem_size;
      if (idx[k] < sizes[k]) break;
      s -= s_str[k] * sizes[k] * elem_size;
      d -= d_str[k] * sizes[k] * elem_size;
      idx[k] = 0;
    }
    if (k < 0) return;
  }
}

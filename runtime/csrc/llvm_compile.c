/* Compiles an LLVM-dialect MLIR module to object code without MLIR's ExecutionEngine (see
 * runtime/src/llvm_compile.rs): translation to LLVM IR (mlirTranslateModuleToLLVMIR, in a fresh
 * LLVM context), the packed-arguments wrapper `_mlir_<f>` the executor calls, LLVM's new pass
 * manager (LLVMRunPasses) and the code generator of a target machine taken from a process-wide
 * pool. The ExecutionEngine built a JIT, two target machines (host CPU detection and feature
 * parsing) and a pass builder per compile; a pooled machine keeps its parsed subtarget. The
 * object is then linked by csrc/objload.c like a cached one. */
#include <llvm-c/BitReader.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/Core.h>
#include <llvm-c/Support.h>
#include <llvm-c/Error.h>
#include <llvm-c/Target.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <mlir-c/Target/LLVMIR.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Target machines kept per LLVM level (0..3): a compile takes one and puts it back, so a
 * machine is used by one thread at a time (LLVM target machines are not thread-safe). */
#define POOL 8
static LLVMTargetMachineRef pool[4][POOL];
static int pooled[4];
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_failed;

static void init_native(void) { init_failed = LLVMInitializeNativeTarget() || LLVMInitializeNativeAsmPrinter(); }

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* A machine for the host CPU and its features at `level`, position-independent, with the JIT's
 * default code model (the ExecutionEngine's choice, so objects are as before). */
static LLVMTargetMachineRef take_machine(int level, char **err) {
  pthread_mutex_lock(&pool_lock);
  LLVMTargetMachineRef tm = pooled[level] > 0 ? pool[level][--pooled[level]] : NULL;
  pthread_mutex_unlock(&pool_lock);
  if (tm) return tm;
  char *triple = LLVMGetDefaultTargetTriple();
  LLVMTargetRef target;
  char *msg = NULL;
  if (LLVMGetTargetFromTriple(triple, &target, &msg)) {
    *err = strdup(msg ? msg : "no target for the host triple");
    LLVMDisposeMessage(msg);
    LLVMDisposeMessage(triple);
    return NULL;
  }
  char *cpu = LLVMGetHostCPUName();
  char *features = LLVMGetHostCPUFeatures();
  static const LLVMCodeGenOptLevel levels[4] = {LLVMCodeGenLevelNone, LLVMCodeGenLevelLess, LLVMCodeGenLevelDefault, LLVMCodeGenLevelAggressive};
  tm = LLVMCreateTargetMachine(target, triple, cpu, features, levels[level], LLVMRelocPIC, LLVMCodeModelJITDefault);
  LLVMDisposeMessage(cpu);
  LLVMDisposeMessage(features);
  LLVMDisposeMessage(triple);
  if (!tm) *err = strdup("cannot create a target machine for the host");
  return tm;
}

/* The module's target triple and data layout: those of `tm`. */
static void set_target(LLVMModuleRef m, LLVMTargetMachineRef tm) {
  char *triple = LLVMGetTargetMachineTriple(tm);
  LLVMSetTarget(m, triple);
  LLVMDisposeMessage(triple);
  LLVMTargetDataRef layout = LLVMCreateTargetDataLayout(tm);
  LLVMSetModuleDataLayout(m, layout);
  LLVMDisposeTargetData(layout);
}

static void give_machine(int level, LLVMTargetMachineRef tm) {
  pthread_mutex_lock(&pool_lock);
  if (pooled[level] < POOL) {
    pool[level][pooled[level]++] = tm;
    tm = NULL;
  }
  pthread_mutex_unlock(&pool_lock);
  if (tm) LLVMDisposeTargetMachine(tm);
}

/* Adds `_mlir_<name>`: void(ptr args) calling `name` with *args[i] as its i-th argument and
 * storing its result (if any) through args[n] — the wrapper MLIR's ExecutionEngine generates
 * (packFunctionArguments), so the entry symbol and the calling convention stay the same.
 * Returns 0 when `name` is not defined in `m`. */
static int add_packed_wrapper(LLVMModuleRef m, LLVMContextRef ctx, const char *name) {
  LLVMValueRef f = LLVMGetNamedFunction(m, name);
  if (!f || LLVMIsDeclaration(f)) return 0;
  LLVMTypeRef fty = LLVMGlobalGetValueType(f);
  unsigned n = LLVMCountParamTypes(fty);
  LLVMTypeRef *params = malloc((n ? n : 1) * sizeof *params);
  LLVMValueRef *args = malloc((n ? n : 1) * sizeof *args);
  if (!params || !args) {
    free(params);
    free(args);
    return 0;
  }
  LLVMGetParamTypes(fty, params);
  LLVMTypeRef ptr = LLVMPointerTypeInContext(ctx, 0), i64 = LLVMInt64TypeInContext(ctx);
  LLVMTypeRef wty = LLVMFunctionType(LLVMVoidTypeInContext(ctx), &ptr, 1, 0);
  size_t len = strlen(name);
  char *wname = malloc(len + 7);
  if (!wname) {
    free(params);
    free(args);
    return 0;
  }
  memcpy(wname, "_mlir_", 6);
  memcpy(wname + 6, name, len + 1);
  LLVMValueRef w = LLVMAddFunction(m, wname, wty);
  free(wname);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(ctx, w, "entry"));
  LLVMValueRef packed = LLVMGetParam(w, 0);
  for (unsigned i = 0; i < n; i++) {
    LLVMValueRef idx = LLVMConstInt(i64, i, 0);
    LLVMValueRef slot = LLVMBuildGEP2(b, ptr, packed, &idx, 1, "");
    LLVMValueRef arg_ptr = LLVMBuildLoad2(b, ptr, slot, "");
    args[i] = LLVMBuildLoad2(b, params[i], arg_ptr, "");
  }
  LLVMValueRef r = LLVMBuildCall2(b, fty, f, args, n, "");
  LLVMTypeRef rty = LLVMGetReturnType(fty);
  if (LLVMGetTypeKind(rty) != LLVMVoidTypeKind) {
    LLVMValueRef idx = LLVMConstInt(i64, n, 0);
    LLVMValueRef slot = LLVMBuildGEP2(b, ptr, packed, &idx, 1, "");
    LLVMBuildStore(b, r, LLVMBuildLoad2(b, ptr, slot, ""));
  }
  LLVMBuildRetVoid(b);
  LLVMDisposeBuilder(b);
  free(params);
  free(args);
  return 1;
}

/* Makes the defined function `f` (or NULL) internal and always inlined: the C-interface
 * wrapper `_mlir_ciface_<f>`, whose only caller is the packed wrapper, so code generation
 * compiles two functions instead of three. The program `<f>` itself stays a function of its
 * own: inlined into its wrapper LLVM optimises its loops differently from the same loops in
 * an OpenMP-outlined body, and one and two threads would no longer give the same bits
 * (tests/rust/cpu_codegen.rs, broadcasts_read_in_place...). */
static void inline_into_wrapper(LLVMValueRef f, LLVMContextRef ctx) {
  if (!f || LLVMIsDeclaration(f)) return;
  unsigned always = LLVMGetEnumAttributeKindForName("alwaysinline", strlen("alwaysinline"));
  unsigned never = LLVMGetEnumAttributeKindForName("noinline", strlen("noinline"));
  if (LLVMGetEnumAttributeAtIndex(f, LLVMAttributeFunctionIndex, never)) return;
  LLVMSetLinkage(f, LLVMInternalLinkage);
  LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(ctx, always, 0));
}

/* The program `<f>` that the C-interface wrapper `wrap` (`_mlir_ciface_<f>`) calls, or NULL. */
static LLVMValueRef wrapped_program(LLVMModuleRef m, const char *wrap) {
  static const char prefix[] = "_mlir_ciface_";
  size_t pl = sizeof prefix - 1;
  if (strncmp(wrap, prefix, pl) != 0) return NULL;
  LLVMValueRef f = LLVMGetNamedFunction(m, wrap + pl);
  return f && !LLVMIsDeclaration(f) ? f : NULL;
}

/* Whether `f` has a loop: a branch to its own block or to one laid out before it (every
 * cycle has such an edge in any order of the blocks). Functions of more than 4096 blocks
 * count as having one (the search is quadratic). */
static int has_loop(LLVMValueRef f) {
  unsigned n = LLVMCountBasicBlocks(f);
  if (n > 4096) return 1;
  LLVMBasicBlockRef *bbs = malloc((n ? n : 1) * sizeof *bbs);
  if (!bbs) return 1;
  LLVMGetBasicBlocks(f, bbs);
  int loop = 0;
  for (unsigned i = 0; i < n && !loop; i++) {
    LLVMValueRef t = LLVMGetBasicBlockTerminator(bbs[i]);
    unsigned ns = t ? LLVMGetNumSuccessors(t) : 0;
    for (unsigned k = 0; k < ns && !loop; k++) {
      LLVMBasicBlockRef succ = LLVMGetSuccessor(t, k);
      for (unsigned j = 0; j <= i; j++)
        if (bbs[j] == succ) loop = 1;
    }
  }
  free(bbs);
  return loop;
}

/* Inlines the program into its C-interface wrapper too when it has no loop (the program of
 * a long function outlined into chunks is a sequence of calls): the bit-identity argument of
 * inline_into_wrapper is about loops, and the call of a program of many parameters (one
 * pointer per buffer, runtime/src/entry_abi.rs) was itself a third of the code generation
 * of a step over 100 parameters. */
static void inline_loop_free_program(LLVMModuleRef m, LLVMContextRef ctx, const char *wrap) {
  LLVMValueRef f = wrapped_program(m, wrap);
  if (f && !has_loop(f)) inline_into_wrapper(f, ctx);
}

/* Passes `args` (space-separated LLVM command-line options, e.g. "-disable-lsr") to LLVM's
 * option parser (QUABLA_LLVM_ARGS); the caller calls it once per process, before the first
 * compile (runtime/src/llvm_compile.rs `set_args`). */
void quabla_llvm_set_args(const char *args) {
  if (!args) return;
  char *copy = strdup(args);
  if (!copy) return;
  const char *argv[64] = {"quabla"};
  int argc = 1;
  for (char *t = strtok(copy, " "); t && argc < 64; t = strtok(NULL, " ")) argv[argc++] = t;
  LLVMParseCommandLineOptions(argc, argv, NULL);
  /* The parsed options keep pointers into `copy`: it is never freed. */
}

/* Optimises `m` with `passes` and compiles it at code generation level `level` with a pooled
 * machine: on success returns 0 and sets *obj (malloc'd) and *len; on failure returns 1 and
 * sets *err (malloc'd). `ms` receives the optimisation and code generation wall times. */
static int optimise_and_emit(LLVMModuleRef m, const char *passes, int level, char **obj, size_t *len, char **err, double ms[2]) {
  LLVMTargetMachineRef tm = take_machine(level, err);
  if (!tm) return 1;
  int rc = 1;
  double t1 = now_ms();
  LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
  /* As MLIR's ExecutionEngine (makeOptimizingTransformer): loop and SLP vectorisation,
   * unrolling and interleaving on. */
  LLVMPassBuilderOptionsSetLoopVectorization(po, 1);
  LLVMPassBuilderOptionsSetSLPVectorization(po, 1);
  LLVMPassBuilderOptionsSetLoopUnrolling(po, 1);
  LLVMPassBuilderOptionsSetLoopInterleaving(po, 1);
  LLVMErrorRef e = LLVMRunPasses(m, passes, tm, po);
  LLVMDisposePassBuilderOptions(po);
  if (e) {
    char *msg = LLVMGetErrorMessage(e);
    *err = strdup(msg);
    LLVMDisposeErrorMessage(msg);
    goto done;
  }
  double t2 = now_ms();
  LLVMMemoryBufferRef buf = NULL;
  char *msg = NULL;
  if (LLVMTargetMachineEmitToMemoryBuffer(tm, m, LLVMObjectFile, &msg, &buf)) {
    *err = strdup(msg ? msg : "code generation failed");
    LLVMDisposeMessage(msg);
    goto done;
  }
  *len = LLVMGetBufferSize(buf);
  *obj = malloc(*len ? *len : 1);
  if (!*obj) {
    *err = strdup("out of memory");
  } else {
    memcpy(*obj, LLVMGetBufferStart(buf), *len);
    rc = 0;
  }
  LLVMDisposeMemoryBuffer(buf);
  ms[0] = t2 - t1;
  ms[1] = now_ms() - t2;
done:
  give_machine(level, tm);
  return rc;
}

/* ---- Split code generation ----
 * A program whose functions are several (the program, its OpenMP-outlined loop bodies, the
 * wrappers) is optimised and compiled in parts, one per thread: every part is the whole
 * module (the first the translated one, the others parsed from its bitcode, each in an LLVM
 * context of its own) in which the functions of the other parts are turned into declarations.
 * The level-2 pipeline runs function passes only (after `always-inline`, whose one inlining,
 * the C-interface wrapper into the packed one, stays in part 0 with the entry), and a
 * function's passes see its callees' declarations with their attributes, so every function
 * compiles to the code it had in one module. Local functions become external so that the
 * parts link into one program (csrc/objload.c puts a program's objects in one JITDylib). Parts
 * after the first run on threads of their own (libomp's team measured the same, and would
 * tie compiling to libomp and to not being inside a parallel region). */

/* The lighter part of a split must have at least this many instructions: a part of fewer
 * saves less than the split's bitcode round trip and the region's wake-up cost. */
#define SPLIT_MIN_PART 50
#define SPLIT_MAX_PARTS 8

typedef struct {
  const char *passes;
  int level;
  const char *bc;
  size_t bclen;
  int nparts;
  LLVMModuleRef m0;
  int nfn;
  char **fname;
  int *fpart;
  char *obj[SPLIT_MAX_PARTS];
  size_t len[SPLIT_MAX_PARTS];
  char *err[SPLIT_MAX_PARTS];
  double ms[SPLIT_MAX_PARTS][2];
} split_t;

static unsigned instructions(LLVMValueRef f) {
  unsigned n = 0;
  for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b))
    for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i)) n++;
  return n;
}

static int is_local(LLVMValueRef g) {
  LLVMLinkage l = LLVMGetLinkage(g);
  return l == LLVMInternalLinkage || l == LLVMPrivateLinkage;
}

static void free_plan(split_t *s) {
  for (int i = 0; i < s->nfn; i++) free(s->fname[i]);
  free(s->fname);
  free(s->fpart);
  s->fname = NULL;
  s->fpart = NULL;
  s->nfn = 0;
}

/* Deals the defined functions of `m` out to at most `parts` parts by instruction count
 * (largest first, to the lightest part; the packed wrapper `_mlir_<wrap>` and `wrap` to part
 * 0), as many parts as keep the lightest at SPLIT_MIN_PART instructions or more. Returns the
 * number of parts (1: no split, nothing allocated): no split when a global is mutable and
 * local or defined and external (the parts would each have a copy), when a function other
 * than `wrap` is to be inlined, or when even two parts would leave one under SPLIT_MIN_PART. */
static int plan_split(LLVMModuleRef m, const char *wrap, int parts, split_t *s) {
  s->nfn = 0;
  if (parts < 2 || !wrap) return 1;
  if (parts > SPLIT_MAX_PARTS) parts = SPLIT_MAX_PARTS;
  /* Every part keeps every global: a mutable local one would be several variables, a
   * defined external one several definitions of one symbol in the program's JITDylib. */
  for (LLVMValueRef g = LLVMGetFirstGlobal(m); g; g = LLVMGetNextGlobal(g)) {
    if (is_local(g) && !LLVMIsGlobalConstant(g)) return 1;
    if (!is_local(g) && !LLVMIsDeclaration(g)) return 1;
  }
  int n = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
    if (!LLVMIsDeclaration(f)) n++;
  if (n < 2) return 1;
  unsigned always = LLVMGetEnumAttributeKindForName("alwaysinline", strlen("alwaysinline"));
  size_t wlen = strlen(wrap);
  LLVMValueRef program = wrapped_program(m, wrap);
  int found = 1;
  s->fname = calloc(n, sizeof *s->fname);
  s->fpart = calloc(n, sizeof *s->fpart);
  unsigned *w = calloc(n, sizeof *w);
  int *entry = calloc(n, sizeof *entry);
  int *done = calloc(n, sizeof *done);
  if (!s->fname || !s->fpart || !w || !entry || !done) goto out;
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
    if (LLVMIsDeclaration(f)) continue;
    size_t len;
    const char *name = LLVMGetValueName2(f, &len);
    int is_wrap = len == wlen && memcmp(name, wrap, wlen) == 0;
    int is_packed = len == wlen + 6 && memcmp(name, "_mlir_", 6) == 0 && memcmp(name + 6, wrap, wlen) == 0;
    /* The program itself when inline_loop_free_program made it always-inline: it goes with
     * the wrapper it is inlined into (a program with loops stays a function of its own). */
    int inlined = LLVMGetEnumAttributeAtIndex(f, LLVMAttributeFunctionIndex, always) != NULL;
    int is_program = inlined && f == program;
    if (!is_wrap && !is_program && inlined) goto out;
    s->fname[s->nfn] = strndup(name, len);
    w[s->nfn] = instructions(f);
    entry[s->nfn] = is_wrap || is_packed || is_program;
    s->nfn++;
  }
  /* The most parts (from `parts` down to 2) whose lightest part has SPLIT_MIN_PART
   * instructions: largest first, each to the lightest part (n is small: a selection each
   * round). */
  for (int p = parts; p >= 2 && found == 1; p--) {
    unsigned load[SPLIT_MAX_PARTS] = {0};
    memset(done, 0, n * sizeof *done);
    for (int i = 0; i < s->nfn; i++) {
      s->fpart[i] = 0;
      if (entry[i]) load[0] += w[i];
    }
    for (int round = 0; round < s->nfn; round++) {
      int best = -1;
      for (int i = 0; i < s->nfn; i++)
        if (!entry[i] && !done[i] && (best < 0 || w[i] > w[best])) best = i;
      if (best < 0) break;
      int light = 0;
      for (int k = 1; k < p; k++)
        if (load[k] < load[light]) light = k;
      s->fpart[best] = light;
      load[light] += w[best];
      done[best] = 1;
    }
    unsigned lightest = load[0];
    for (int k = 1; k < p; k++)
      if (load[k] < lightest) lightest = load[k];
    if (lightest >= SPLIT_MIN_PART) found = p;
  }
out:
  free(done);
  free(w);
  free(entry);
  if (found < 2) free_plan(s);
  return found;
}

/* `f` replaced by a declaration of the same name, type, calling convention and attributes. */
static void to_declaration(LLVMModuleRef m, LLVMValueRef f) {
  size_t len;
  const char *nm = LLVMGetValueName2(f, &len);
  char *name = strndup(nm, len);
  LLVMValueRef d = LLVMAddFunction(m, "", LLVMGlobalGetValueType(f));
  LLVMSetFunctionCallConv(d, LLVMGetFunctionCallConv(f));
  unsigned nparams = LLVMCountParams(f);
  for (unsigned idx = 0; idx <= nparams + 1; idx++) {
    /* The return value (0), the parameters (1..n), then the function. */
    LLVMAttributeIndex at = idx <= nparams ? idx : (LLVMAttributeIndex)LLVMAttributeFunctionIndex;
    unsigned c = LLVMGetAttributeCountAtIndex(f, at);
    if (!c) continue;
    LLVMAttributeRef *a = malloc(c * sizeof *a);
    if (!a) continue;
    LLVMGetAttributesAtIndex(f, at, a);
    for (unsigned j = 0; j < c; j++) LLVMAddAttributeAtIndex(d, at, a[j]);
    free(a);
  }
  LLVMReplaceAllUsesWith(f, d);
  LLVMDeleteFunction(f);
  if (name) LLVMSetValueName2(d, name, len);
  free(name);
}

/* Part k of `s`: its module (part 0: the translated one; else parsed from the bitcode in a
 * context of its own) with the other parts' functions declared, optimised and compiled. */
static void compile_part(split_t *s, int k) {
  LLVMContextRef ctx = NULL;
  LLVMModuleRef m = s->m0;
  if (k > 0) {
    ctx = LLVMContextCreate();
    LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRange(s->bc, s->bclen, "quabla-part", 0);
    m = NULL;
    if (LLVMParseBitcodeInContext2(ctx, buf, &m)) m = NULL;
    LLVMDisposeMemoryBuffer(buf);
    if (!m) {
      s->err[k] = strdup("a part of the split module did not parse");
      LLVMContextDispose(ctx);
      return;
    }
  }
  for (int i = 0; i < s->nfn; i++) {
    LLVMValueRef f = LLVMGetNamedFunction(m, s->fname[i]);
    if (!f) continue;
    if (s->fpart[i] != k) {
      to_declaration(m, f);
    } else if (is_local(f)) {
      LLVMSetLinkage(f, LLVMExternalLinkage);
      LLVMSetVisibility(f, LLVMDefaultVisibility);
    }
  }
  optimise_and_emit(m, s->passes, s->level, &s->obj[k], &s->len[k], &s->err[k], s->ms[k]);
  if (k > 0) {
    LLVMDisposeModule(m);
    LLVMContextDispose(ctx);
  }
}

/* Part `k` of a split on a thread of its own. */
typedef struct {
  split_t *s;
  int k;
} part_arg;

static void *part_thread(void *p) {
  part_arg *a = p;
  compile_part(a->s, a->k);
  return NULL;
}

/* Parts 1.. on threads of their own (each compiled on the calling thread where a thread
 * cannot be created), part 0 on the calling thread. */
static void compile_parts(split_t *s) {
  pthread_t th[SPLIT_MAX_PARTS];
  part_arg args[SPLIT_MAX_PARTS];
  int started[SPLIT_MAX_PARTS] = {0};
  for (int k = 1; k < s->nparts; k++) {
    args[k].s = s;
    args[k].k = k;
    started[k] = pthread_create(&th[k], NULL, part_thread, &args[k]) == 0;
  }
  compile_part(s, 0);
  for (int k = 1; k < s->nparts; k++) {
    if (started[k]) {
      pthread_join(th[k], NULL);
    } else {
      compile_part(s, k);
    }
  }
}

/* Compiles the LLVM-dialect module `op` (an MlirOperation's pointer) to objects, optimised by
 * `passes` (a new-pass-manager pipeline, chosen by the caller) and compiled at code
 * generation level `level` (0..3), in at most `parts` parts on as many threads (see "Split
 * code generation"; `objs` and `lens` have room for `parts`): on success returns 0 and sets
 * objs[0..*nobj) (malloc'd, free with quabla_llvm_free; the first has the entry) and lens;
 * on failure returns 1 and sets *err (malloc'd). `wrap` (or NULL) names the function that
 * gets a packed wrapper (it must be defined in the module). `ms` receives the wall times of
 * translation, optimisation and code generation (of a split: the slowest part's). */
int quabla_llvm_compile(void *op, const char *passes, int level, const char *wrap, int parts, char **objs, size_t *lens, int *nobj, char **err, double ms[3]) {
  pthread_once(&init_once, init_native);
  *nobj = 0;
  if (init_failed) {
    *err = strdup("the native target is not available");
    return 1;
  }
  if (level < 0) level = 0;
  if (level > 3) level = 3;
  double t0 = now_ms();
  LLVMContextRef ctx = LLVMContextCreate();
  MlirOperation mop = {op};
  LLVMModuleRef m = mlirTranslateModuleToLLVMIR(mop, ctx);
  if (!m) {
    LLVMContextDispose(ctx);
    *err = strdup("the LLVM dialect module did not translate to LLVM IR");
    return 1;
  }
  int rc = 1;
  char *tmp_err = NULL;
  LLVMTargetMachineRef tm = take_machine(level, &tmp_err);
  if (!tm) {
    *err = tmp_err;
    goto done;
  }
  set_target(m, tm);
  give_machine(level, tm);
  if (wrap && !add_packed_wrapper(m, ctx, wrap)) {
    size_t n = strlen(wrap) + 64;
    *err = malloc(n);
    if (*err) strcat(strcat(strcpy(*err, "no function "), wrap), " to wrap in the LLVM module");
    goto done;
  }
  if (wrap) {
    inline_into_wrapper(LLVMGetNamedFunction(m, wrap), ctx);
    inline_loop_free_program(m, ctx, wrap);
  }
  split_t s = {.passes = passes, .level = level, .m0 = m};
  /* Level 0 compiles in a few milliseconds (programs of a few thousand element operations). */
  s.nparts = level > 0 ? plan_split(m, wrap, parts, &s) : 1;
  LLVMMemoryBufferRef bc = NULL;
  if (s.nparts > 1) {
    bc = LLVMWriteBitcodeToMemoryBuffer(m);
    if (bc) {
      s.bc = LLVMGetBufferStart(bc);
      s.bclen = LLVMGetBufferSize(bc);
    } else {
      free_plan(&s);
      s.nparts = 1;
    }
  }
  double t1 = now_ms();
  if (s.nparts > 1) {
    compile_parts(&s);
  } else {
    optimise_and_emit(m, passes, level, &s.obj[0], &s.len[0], &s.err[0], s.ms[0]);
  }
  if (bc) LLVMDisposeMemoryBuffer(bc);
  free_plan(&s);
  rc = 0;
  ms[0] = t1 - t0;
  ms[1] = ms[2] = 0;
  for (int k = 0; k < s.nparts; k++) {
    if (s.err[k] && rc == 0) {
      *err = s.err[k];
      s.err[k] = NULL;
      rc = 1;
    }
    free(s.err[k]);
    if (s.ms[k][0] > ms[1]) ms[1] = s.ms[k][0];
    if (s.ms[k][1] > ms[2]) ms[2] = s.ms[k][1];
  }
  for (int k = 0; k < s.nparts; k++) {
    if (rc == 0) {
      objs[k] = s.obj[k];
      lens[k] = s.len[k];
    } else {
      free(s.obj[k]);
    }
  }
  if (rc == 0) *nobj = s.nparts;
done:
  LLVMDisposeModule(m);
  LLVMContextDispose(ctx);
  return rc;
}

void quabla_llvm_free(void *p) { free(p); }

/* What the first compile at code generation level `level` pays once per process, paid ahead
 * (runtime/src/llvm_compile.rs `warm`, on a second thread during the first compile): the pooled target machine of
 * that level (host CPU name and features parsed, its subtarget built) and LLVM's lazily built
 * tables of the optimiser and the instruction selector, by optimising with `passes` and
 * compiling a small vectorisable loop for the host CPU. The machine goes back to the pool. */
void quabla_llvm_warm(const char *passes, int level) {
  static const char ir[] =
      "define void @quabla_warm(ptr noalias %p, i64 %n) {\n"
      "entry:\n  br label %loop\n"
      "loop:\n  %i = phi i64 [0, %entry], [%i1, %loop]\n"
      "  %a = getelementptr float, ptr %p, i64 %i\n  %x = load float, ptr %a\n"
      "  %y = fmul fast float %x, 2.0\n  %z = fadd fast float %y, 1.0\n  store float %z, ptr %a\n"
      "  %i1 = add i64 %i, 1\n  %c = icmp slt i64 %i1, %n\n  br i1 %c, label %loop, label %exit\n"
      "exit:\n  ret void\n}\n";
  pthread_once(&init_once, init_native);
  if (init_failed) return;
  if (level < 0) level = 0;
  if (level > 3) level = 3;
  char *err = NULL;
  LLVMTargetMachineRef tm = take_machine(level, &err);
  if (!tm) {
    free(err);
    return;
  }
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(ir, sizeof ir - 1, "quabla_warm");
  LLVMModuleRef m = NULL;
  char *msg = NULL;
  LLVMBool bad = LLVMParseIRInContext2(ctx, buf, &m, &msg);
  LLVMDisposeMemoryBuffer(buf);
  if (!bad) {
    set_target(m, tm);
    char *cpu = LLVMGetHostCPUName(), *features = LLVMGetHostCPUFeatures();
    LLVMValueRef f = LLVMGetNamedFunction(m, "quabla_warm");
    if (f) {
      LLVMAddTargetDependentFunctionAttr(f, "target-cpu", cpu);
      LLVMAddTargetDependentFunctionAttr(f, "target-features", features);
    }
    LLVMDisposeMessage(cpu);
    LLVMDisposeMessage(features);
    LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
    LLVMPassBuilderOptionsSetLoopVectorization(po, 1);
    LLVMPassBuilderOptionsSetSLPVectorization(po, 1);
    LLVMErrorRef e = LLVMRunPasses(m, passes, tm, po);
    LLVMDisposePassBuilderOptions(po);
    if (e) {
      LLVMConsumeError(e);
    } else {
      LLVMMemoryBufferRef out = NULL;
      char *cmsg = NULL;
      if (!LLVMTargetMachineEmitToMemoryBuffer(tm, m, LLVMObjectFile, &cmsg, &out)) LLVMDisposeMemoryBuffer(out);
      LLVMDisposeMessage(cmsg);
    }
    LLVMDisposeModule(m);
  } else {
    LLVMDisposeMessage(msg);
  }
  LLVMContextDispose(ctx);
  give_machine(level, tm);
}

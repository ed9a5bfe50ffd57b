/* Compiles an LLVM-dialect MLIR module to object code without MLIR's ExecutionEngine (see
 * runtime/src/llvm_compile.rs): translation to LLVM IR (mlirTranslateModuleToLLVMIR, in a fresh
 * LLVM context), the packed-arguments wrapper `_mlir_<f>` the executor calls, LLVM's new pass
 * manager (LLVMRunPasses) and the code generator of a target machine taken from a process-wide
 * pool. The ExecutionEngine built a JIT, two target machines (host CPU detection and feature
 * parsing) and a pass builder per compile; a pooled machine keeps its parsed subtarget. The
 * object is then linked by csrc/objload.c like a cached one. */
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

/* Makes the defined function `name` of `m` internal and always inlined: the C-interface
 * wrapper `_mlir_ciface_<f>`, whose only caller is the packed wrapper, so code generation
 * compiles two functions instead of three. The program `<f>` itself stays a function of its
 * own: inlined into its wrapper LLVM optimises its loops differently from the same loops in
 * an OpenMP-outlined body, and one and two threads would no longer give the same bits
 * (tests/rust/cpu_codegen.rs, broadcasts_read_in_place...). */
static void inline_into_wrapper(LLVMModuleRef m, LLVMContextRef ctx, const char *name) {
  LLVMValueRef f = LLVMGetNamedFunction(m, name);
  if (!f || LLVMIsDeclaration(f)) return;
  unsigned always = LLVMGetEnumAttributeKindForName("alwaysinline", strlen("alwaysinline"));
  unsigned never = LLVMGetEnumAttributeKindForName("noinline", strlen("noinline"));
  if (LLVMGetEnumAttributeAtIndex(f, LLVMAttributeFunctionIndex, never)) return;
  LLVMSetLinkage(f, LLVMInternalLinkage);
  LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(ctx, always, 0));
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

/* Compiles the LLVM-dialect module `op` (an MlirOperation's pointer) to an object, optimised by
 * `passes` (a new-pass-manager pipeline, chosen by the caller) and compiled at code
 * generation level `level` (0..3): on success returns 0 and sets *obj (malloc'd, free with
 * quabla_llvm_free) and *len; on failure returns 1 and sets *err (malloc'd). `wrap` (or NULL)
 * names the function that gets a packed wrapper (it must be defined in the module). `ms`
 * receives the wall times of translation, optimisation and code generation. */
int quabla_llvm_compile(void *op, const char *passes, int level, const char *wrap, char **obj, size_t *len, char **err, double ms[3]) {
  pthread_once(&init_once, init_native);
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
  LLVMTargetMachineRef tm = take_machine(level, err);
  if (!tm) goto done;
  set_target(m, tm);
  if (wrap && !add_packed_wrapper(m, ctx, wrap)) {
    size_t n = strlen(wrap) + 64;
    *err = malloc(n);
    if (*err) strcat(strcat(strcpy(*err, "no function "), wrap), " to wrap in the LLVM module");
    goto done;
  }
  if (wrap) inline_into_wrapper(m, ctx, wrap);
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
  ms[0] = t1 - t0;
  ms[1] = t2 - t1;
  ms[2] = now_ms() - t2;
done:
  if (tm) give_machine(level, tm);
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

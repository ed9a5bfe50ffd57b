/* Loop extraction before LLVM's optimisation pipeline (runtime/src/llvm_compile.rs,
 * `loop_extract`): in every function with at least `min_loops` top-level loops, each top-level
 * loop nest becomes its own internal, noinline function (LLVM's CodeExtractor, as
 * `opt -passes=loop-extract` does, without its extraction of sub-loops from functions that are
 * one loop). Why: ScalarEvolution's guard queries (isBasicBlockEntryGuardedByCond ->
 * isImpliedCond, from IndVarSimplify and Loop Strength Reduction) walk every dominating
 * condition of a block, so in a function of n loop nests one after the other their cost grows
 * like n^2; the chunks quabla outlines from a GPT step hold 30+ loop nests each (IndVarSimplify
 * was 54% of opt there). noinline: otherwise the inliner puts every single-use function back.
 * The C API has no loop information, hence C++ (LLVM's C++ API of the same libLLVM). */
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/CodeExtractor.h>
#include <llvm-c/Core.h>

#include <vector>

using namespace llvm;

/* Returns the number of loops extracted from `mod`. */
extern "C" unsigned quabla_extract_loops(LLVMModuleRef mod, unsigned min_loops) {
  Module *m = unwrap(mod);
  std::vector<Function *> funcs;
  for (Function &f : *m)
    if (!f.isDeclaration() && !f.hasOptNone()) funcs.push_back(&f);
  unsigned extracted = 0;
  for (Function *f : funcs) {
    DominatorTree dt(*f);
    LoopInfo li(dt);
    std::vector<Loop *> top(li.begin(), li.end());
    if (top.size() < min_loops) continue;
    for (Loop *l : top) {
      CodeExtractorAnalysisCache ceac(*f);
      CodeExtractor ce(l->getBlocks(), &dt, /*AggregateArgs=*/false, nullptr, nullptr, nullptr, false, false, nullptr, "loop");
      if (!ce.isEligible()) continue;
      if (Function *g = ce.extractCodeRegion(ceac)) {
        g->addFnAttr(Attribute::NoInline);
        li.erase(l);
        extracted++;
      }
    }
  }
  return extracted;
}

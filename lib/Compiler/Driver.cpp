//===- Driver.cpp - tfm-compile's library ----------------------------------===//

#include "tfm/Compiler/Driver.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::tfm;

std::vector<std::string> mlir::tfm::stageNames(const TargetBackend &target) {
  std::vector<std::string> names{kInputStage.str()};
  for (const LoweringStage &stage : target.stages())
    names.push_back(stage.name);
  return names;
}

LogicalResult mlir::tfm::lowerModule(ModuleOp module,
                                     const TargetBackend &target,
                                     StringRef last,
                                     const LoweringOptions &options,
                                     StringRef first) {
  auto dump = [&](StringRef stage) {
    if (options.dumpStream && options.dumpAfter.count(stage.str()))
      *options.dumpStream << "// ----- IR after stage '" << stage
                          << "' -----\n"
                          << module << "\n";
  };
  if (first == kInputStage)
    dump(kInputStage);
  if (last == first)
    return success();
  bool running = first == kInputStage;
  for (const LoweringStage &stage : target.stages()) {
    if (!running) {
      running = stage.name == first;
      continue;
    }
    PassManager pm(module.getContext());
    stage.build(pm);
    if (failed(pm.run(module)))
      return module.emitError()
             << "lowering failed in stage '" << stage.name << "'";
    dump(stage.name);
    if (stage.name == last)
      return success();
  }
  llvm_unreachable("lowerModule: 'last' is not a stage after 'first'");
}

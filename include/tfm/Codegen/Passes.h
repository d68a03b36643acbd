//===- Passes.h - tfm target code generation passes -------------*- C++ -*-===//

#ifndef TFM_CODEGEN_PASSES_H
#define TFM_CODEGEN_PASSES_H

#include "tfm/Codegen/CPUCodegenOptions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tfm {

#define GEN_PASS_DECL
#include "tfm/Codegen/Passes.h.inc"

/// The CPU passes that form vector code, with `options` (tfm-opt sets them
/// from the pass options of the same names).
std::unique_ptr<Pass>
createTfmCPUFuseViewedEpiloguesPass(const CPUCodegenOptions &options);
std::unique_ptr<Pass>
createTfmCPUFuseSiblingProjectionsPass(const CPUCodegenOptions &options);
std::unique_ptr<Pass>
createTfmCPUTileProjectionsPass(const CPUCodegenOptions &options);
std::unique_ptr<Pass>
createTfmCPUVectorizePass(const CPUCodegenOptions &options);
std::unique_ptr<Pass>
createTfmCPULowerVectorsPass(const CPUCodegenOptions &options);

#define GEN_PASS_REGISTRATION
#include "tfm/Codegen/Passes.h.inc"

} // namespace mlir::tfm

#endif // TFM_CODEGEN_PASSES_H

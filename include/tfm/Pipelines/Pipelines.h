//===- Pipelines.h - tfm lowering pipelines ---------------------*- C++ -*-===//
//
// The only place pass order is written. tfm-compile calls these builders and
// tfm-opt registers them, so `tfm-opt --tfm-lower-to-llvm-pipeline`
// reproduces exactly what the driver runs.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_PIPELINES_PIPELINES_H
#define TFM_PIPELINES_PIPELINES_H

#include "tfm/Codegen/CPUCodegenOptions.h"
#include "tfm/Dialect/Tfm/Transforms/AttentionTilingOptions.h"

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;

namespace tfm {

struct TfmLowerToLLVMPipelineOptions
    : public PassPipelineOptions<TfmLowerToLLVMPipelineOptions> {
#define TFM_ATTENTION_LOWERING_FLAG(field, flag, description)                 \
  PassOptions::Option<bool> field{*this, flag, llvm::cl::desc(description),    \
                                  llvm::cl::init(false)};
#define TFM_ATTENTION_TILING_OPTION(field, flag, value, description)          \
  PassOptions::Option<int64_t> field{*this, flag, llvm::cl::desc(description), \
                                     llvm::cl::init(value)};
#include "tfm/Dialect/Tfm/Transforms/AttentionTilingOptions.def"
  PassOptions::Option<bool> vectorize{
      *this, "vectorize",
      llvm::cl::desc("Tile static linalg ops to register blocks and "
                     "vectorize them (tfm-cpu-vectorize)"),
      llvm::cl::init(true)};
#define TFM_CPU_CODEGEN_OPTION(field, flag, value, description)               \
  PassOptions::Option<int64_t> field{*this, flag, llvm::cl::desc(description), \
                                     llvm::cl::init(value)};
#include "tfm/Codegen/CPUCodegenOptions.def"
  PassOptions::Option<bool> exposeEntryPoints{
      *this, "expose-entry-points",
      llvm::cl::desc("Rewrite public functions into the memref entry-point "
                     "ABI (tfm-expose-entry-points) before bufferization"),
      llvm::cl::init(true)};

  /// The attention lowering options set here.
  AttentionTilingOptions attentionTiling() const;
  void setAttentionTiling(const AttentionTilingOptions &options);
  /// The CPU code generation options set here.
  CPUCodegenOptions cpuCodegen() const;
};

/// The stages of tfm-lower-to-llvm-pipeline, in order. tfm-compile runs
/// them one by one so that it can dump the IR after each.
///   linalg:     tfm ops -> linalg/tensor/arith/math on tensors
///               (target-independent; attention is tiled here into loops of
///               tile-level tfm.online_attention steps)
///   vector:     the tile steps in the CPU's forms; static linalg ops ->
///               register blocks of vector ops (CPU)
///   bufferized: entry-point ABI, one-shot bufferization, deallocation
///   llvm:       vector lowering, loops, threads -> LLVM dialect
void buildTfmToLinalgStage(OpPassManager &pm,
                           const TfmLowerToLLVMPipelineOptions &options);
void buildTfmCPUVectorStage(OpPassManager &pm,
                            const TfmLowerToLLVMPipelineOptions &options);
void buildTfmBufferizationStage(OpPassManager &pm,
                                const TfmLowerToLLVMPipelineOptions &options);
void buildTfmToLLVMDialectStage(OpPassManager &pm,
                                const TfmLowerToLLVMPipelineOptions &options);

/// tfm ops on tensors -> LLVM dialect, through the reference lowering
/// (convert-tfm-to-linalg), one-shot bufferization and loops: the three
/// stages above.
void buildTfmLowerToLLVMPipeline(OpPassManager &pm,
                                 const TfmLowerToLLVMPipelineOptions &options);

/// Registers every tfm pipeline with the global pipeline registry.
void registerTfmPipelines();

} // namespace tfm
} // namespace mlir

#endif // TFM_PIPELINES_PIPELINES_H

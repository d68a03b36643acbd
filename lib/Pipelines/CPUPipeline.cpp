//===- CPUPipeline.cpp - tfm-lower-to-llvm-pipeline ------------------------===//

#include "tfm/Pipelines/Pipelines.h"

#include "tfm/ABI/Passes.h"
#include "tfm/Codegen/Passes.h"
#include "tfm/Conversion/Passes.h"
#include "tfm/Dialect/Tfm/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::tfm;

AttentionTilingOptions
TfmLowerToLLVMPipelineOptions::attentionTiling() const {
  AttentionTilingOptions tiling;
#define TFM_ATTENTION_LOWERING_FLAG(field, flag, description)                 \
  tiling.field = field;
#define TFM_ATTENTION_TILING_OPTION(field, flag, value, description)          \
  tiling.field = field;
#include "tfm/Dialect/Tfm/Transforms/AttentionTilingOptions.def"
  return tiling;
}

CPUCodegenOptions TfmLowerToLLVMPipelineOptions::cpuCodegen() const {
  CPUCodegenOptions codegen;
#define TFM_CPU_CODEGEN_OPTION(field, flag, value, description)               \
  codegen.field = field;
#include "tfm/Codegen/CPUCodegenOptions.def"
  return codegen;
}

void TfmLowerToLLVMPipelineOptions::setAttentionTiling(
    const AttentionTilingOptions &tiling) {
#define TFM_ATTENTION_LOWERING_FLAG(field, flag, description)                 \
  field = tiling.field;
#define TFM_ATTENTION_TILING_OPTION(field, flag, value, description)          \
  field = tiling.field;
#include "tfm/Dialect/Tfm/Transforms/AttentionTilingOptions.def"
}

void mlir::tfm::buildTfmToLinalgStage(OpPassManager &pm,
                                      const AttentionTilingOptions &tiling) {
  // Fold masks-as-data into structure, tile attention, then lower the rest
  // to linalg on tensors.
  pm.addPass(createCanonicalizerPass());
  if (!tiling.referenceAttention)
    pm.addPass(createTfmDecomposePass());
  pm.addPass(createTfmFuseRowSelectionPass());
  if (!tiling.referenceAttention)
    pm.addPass(createTfmTileAttentionPass(tiling));
  pm.addPass(createConvertTfmToLinalgPass());
  pm.addPass(createConvertElementwiseToLinalgPass()); // residual arith.addf
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::tfm::buildTfmToLinalgStage(
    OpPassManager &pm, const TfmLowerToLLVMPipelineOptions &options) {
  buildTfmToLinalgStage(pm, options.attentionTiling());
}

void mlir::tfm::buildTfmCPUVectorStage(
    OpPassManager &pm, const TfmLowerToLLVMPipelineOptions &options) {
  // The ABI first: its checks read the sizes of untiled ops.
  addEntryPointPasses(pm, options.exposeEntryPoints);
  pm.addPass(createTfmCPUDecomposeOnlineAttentionPass());
  if (!options.vectorize)
    return;
  if (options.normProjection)
    pm.addNestedPass<func::FuncOp>(createTfmFuseNormProjectionPass());
  if (options.projectionEpilogues)
    pm.addNestedPass<func::FuncOp>(createTfmCPUFuseProjectionEpiloguesPass());
  if (options.viewedEpilogues)
    pm.addNestedPass<func::FuncOp>(
        createTfmCPUFuseViewedEpiloguesPass(options.cpuCodegen()));
  if (options.siblingProjections)
    pm.addNestedPass<func::FuncOp>(
        createTfmCPUFuseSiblingProjectionsPass(options.cpuCodegen()));
  pm.addNestedPass<func::FuncOp>(
      createTfmCPUTileProjectionsPass(options.cpuCodegen()));
  if (options.prepackWeights)
    pm.addPass(createTfmCPUPrepareWeightsPass());
  pm.addNestedPass<func::FuncOp>(createTfmCPUTileRowsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(
      createTfmCPUVectorizePass(options.cpuCodegen()));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::tfm::addEntryPointPasses(OpPassManager &pm,
                                    bool exposeEntryPoints) {
  // Caller-owned inputs and outputs, and the checks of their sizes and
  // token ids, read from the untiled ops.
  if (!exposeEntryPoints)
    return;
  pm.addPass(createTfmExposeEntryPointsPass());
  pm.addPass(createTfmInsertRuntimeChecksPass());
  pm.addPass(createCanonicalizerPass());
}

void mlir::tfm::addBufferizePasses(OpPassManager &pm) {
  // Everything but the entry point's arguments is allocated by the function
  // and freed by the deallocation pipeline.
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
}

void mlir::tfm::buildTfmBufferizationStage(
    OpPassManager &pm, const TfmLowerToLLVMPipelineOptions &options) {
  addBufferizePasses(pm);
  // Tile scratch buffers: allocated once per tile, on its thread's stack.
  pm.addNestedPass<func::FuncOp>(createTfmCPUPromoteTileBuffersPass());
  bufferization::buildBufferDeallocationPipeline(pm);
  // Results computed in the caller's buffer (the logits) are not copied
  // onto themselves.
  pm.addNestedPass<func::FuncOp>(createTfmDropSelfCopiesPass());
  // Each activation freed after its last use, not when the forward returns.
  pm.addNestedPass<func::FuncOp>(createTfmFreeBuffersEarlyPass());
}

void mlir::tfm::buildHostToLLVMConversion(OpPassManager &pm,
                                          bool genericAllocations) {
  pm.addPass(createTfmResolveDynamicExpandShapesPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  // Math first: libm calls for what LLVM has no intrinsic for (erf, tanh)
  // unroll vectors into vector.extract/insert, which vector-to-llvm lowers,
  // and widen bf16 to f32 around the call.
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  // bf16 arithmetic (a residual add in a bf16 model) in f32, rounded back
  // to bf16; those conversions, the libm calls' and every other become
  // integer code. LLVM would otherwise call compiler-rt's __truncsfbf2,
  // which nothing links, on CPUs without AVX-512 BF16.
  arith::ArithEmulateUnsupportedFloatsOptions emulate;
  emulate.sourceTypeStrs = {"bf16"};
  pm.addPass(arith::createArithEmulateUnsupportedFloats(emulate));
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  vectorToLLVM.reassociateFPReductions = true; // tree-shaped row sums
  vectorToLLVM.x86Vector = true; // AVX-512 BF16 dot products (bf16-dot)
  vectorToLLVM.amx = true;       // AMX tiles (tfm-cpu-lower-amx)
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
  pm.addPass(createArithToLLVMConversionPass());
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = genericAllocations;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::tfm::buildTfmToLLVMDialectStage(
    OpPassManager &pm, const TfmLowerToLLVMPipelineOptions &options) {
  pm.addNestedPass<func::FuncOp>(
      createTfmCPULowerVectorsPass(options.cpuCodegen()));
  pm.addPass(createCanonicalizerPass());
  // bf16 register blocks marked for AMX tiles (amx=1), before the rest of
  // linalg becomes loops.
  pm.addPass(createTfmCPULowerAMXPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  // Parallel tiles (scf.forall) run on OpenMP threads (libomp; the thread
  // count follows OMP_NUM_THREADS, default: every core). The canonicalize
  // after convert-scf-to-openmp is required (memref.alloca_scope bodies).
  pm.addPass(createForallToParallelLoopPass());
  pm.addPass(createConvertSCFToOpenMPPass());
  pm.addPass(createTfmCPUHoistThreadScratchPass());
  // One heap allocation per call: activations and thread scratch become
  // views of a workspace.
  pm.addPass(createTfmCPUPlanWorkspacePass());
  pm.addPass(createTfmCPUDynamicSchedulePass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createConvertVectorToSCFPass(
      VectorTransferToSCFOptions().enableFullUnroll().setTargetRank(1)));
  buildHostToLLVMConversion(pm, options.bufferCache);
  pm.addPass(createCanonicalizerPass());
}

void mlir::tfm::buildTfmLowerToLLVMPipeline(
    OpPassManager &pm, const TfmLowerToLLVMPipelineOptions &options) {
  buildTfmToLinalgStage(pm, options);
  buildTfmCPUVectorStage(pm, options);
  buildTfmBufferizationStage(pm, options);
  buildTfmToLLVMDialectStage(pm, options);
}

void mlir::tfm::registerTfmPipelines() {
  PassPipelineRegistration<TfmLowerToLLVMPipelineOptions>(
      "tfm-lower-to-llvm-pipeline",
      "Lower tfm ops to the LLVM dialect through the reference lowering",
      buildTfmLowerToLLVMPipeline);
  PassPipelineRegistration<TfmLowerToNVVMPipelineOptions>(
      "tfm-lower-to-nvvm-pipeline",
      "Lower tfm ops to host code in the LLVM dialect that launches NVVM "
      "kernels (PTX), through the reference lowering",
      buildTfmLowerToNVVMPipeline);
  PassPipelineRegistration<>(
      "tfm-gpu-emulation-pipeline",
      "The kernels of a module at the cuda target's kernels stage as CPU "
      "functions in the LLVM dialect that a GPU emulator runs",
      buildTfmGPUEmulationPipeline);
}

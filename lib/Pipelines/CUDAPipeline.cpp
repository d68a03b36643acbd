//===- CUDAPipeline.cpp - tfm-lower-to-nvvm-pipeline ----------------------===//

#include "tfm/Pipelines/Pipelines.h"

#include "tfm/Codegen/Passes.h"
#include "tfm/Dialect/Tfm/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::tfm;

void mlir::tfm::buildTfmCUDALinalgStage(
    OpPassManager &pm, const TfmLowerToNVVMPipelineOptions &options) {
  // Masks folded into structure and composite ops expanded first, so that
  // every attention is a tfm.attention the kernel may take.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createTfmDecomposePass());
  if (options.flashAttention)
    pm.addNestedPass<func::FuncOp>(createTfmGPUFlashAttentionPass());
  AttentionTilingOptions reference;
  reference.referenceAttention = true;
  buildTfmToLinalgStage(pm, reference);
  if (options.flashAttention)
    pm.addNestedPass<func::FuncOp>(createTfmGPUFoldAttentionTransposesPass());
  // Sizes read off the ops' sources, so that equal computations (q's and
  // k's RoPE tables) are one.
  pm.addPass(memref::createResolveRankedShapeTypeResultDimsPass());
  pm.addPass(createCSEPass());
}

void mlir::tfm::buildTfmCUDABufferizationStage(
    OpPassManager &pm, const TfmLowerToNVVMPipelineOptions &options) {
  addEntryPointPasses(pm, options.exposeEntryPoints);
  // After the ABI's checks, which read the untouched ops.
  if (options.tensorCoreMatmul)
    pm.addNestedPass<func::FuncOp>(createTfmGPUFuseElementwisePass());
  addBufferizePasses(pm);
  bufferization::buildBufferDeallocationPipeline(pm);
}

void mlir::tfm::buildTfmCUDAKernelStage(
    OpPassManager &pm, const TfmLowerToNVVMPipelineOptions &options) {
  // Loops over sizes the checks made equal get the same bounds.
  pm.addNestedPass<func::FuncOp>(createTfmUnifyCheckedSizesPass());
  // Tensor-core kernels first; what they do not take is mapped generically.
  if (options.tensorCoreMatmul) {
    TfmGPUTensorCoreMatmulPassOptions matmul;
    matmul.tile.assign(options.matmulTile.begin(), options.matmulTile.end());
    // wgmma exists on sm_90a only (the "a" features).
    matmul.warpgroupMma = options.chip == "sm_90a";
    matmul.tma = options.matmulTma;
    matmul.warpSpecialized = options.matmulWarpSpecialized;
    matmul.persistent = options.matmulPersistent;
    matmul.multiprocessors = options.matmulMultiprocessors;
    matmul.fewRows = options.matmulFewRows;
    matmul.normPrologues = options.matmulNormPrologues;
    pm.addPass(createTfmGPUTensorCoreMatmulPass(matmul));
  }
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addPass(createForallToParallelLoopPass());
  pm.addPass(createCanonicalizerPass());
  TfmGPULowerBufferAttentionPassOptions attention;
  attention.warpRows = options.attentionWarpRows;
  attention.keys = options.attentionKeys;
  attention.splitKV = options.attentionSplitKV;
  attention.warpgroupMma = options.attentionWarpgroupMma;
  attention.warpgroupOverlap = options.attentionWarpgroupOverlap;
  attention.tma = options.attentionTma;
  attention.warpSpecialized = options.attentionWarpSpecialized;
  attention.pingpong = options.attentionPingpong;
  pm.addNestedPass<func::FuncOp>(
      createTfmGPULowerBufferAttentionPass(attention));
  TfmGPUMapToKernelsPassOptions map;
  map.blockSize = options.blockSize;
  pm.addNestedPass<func::FuncOp>(createTfmGPUMapToKernelsPass(map));
  // Independent kernels of one shape as one launch, before outlining.
  if (options.mergeLaunches)
    pm.addNestedPass<func::FuncOp>(createTfmGPUMergeLaunchesPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createTfmGPUMergeKernelModulesPass());
  // Each device buffer freed after its last kernel or copy, before the
  // frees join the stream.
  pm.addNestedPass<func::FuncOp>(createTfmFreeBuffersEarlyPass());
  // One stream per call: launches, copies, allocations in order, the host
  // waiting only where it reads a result and at the end.
  pm.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());
  pm.addNestedPass<func::FuncOp>(createTfmGPUSkipTensorMapWaitsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::tfm::buildTfmToNVVMStage(
    OpPassManager &pm, const TfmLowerToNVVMPipelineOptions &options) {
  // Before expand-strided-metadata (llvm#186830).
  pm.addPass(createTfmResolveDynamicExpandShapesPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  // Kernels for the chip, linked with the toolkit's libdevice (their math
  // functions) named explicitly: MLIR would look for it only on PATH.
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = options.optLevel;
  if (!options.cudaToolkit.empty())
    target.linkLibs.push_back(options.cudaToolkit +
                              "/nvvm/libdevice/libdevice.10.bc");
  pm.addPass(createGpuNVVMAttachTarget(target));
  pm.addPass(createLowerAffinePass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Tensor-core kernels: ldmatrix and cp.async (nvgpu) to NVVM first.
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertNVGPUToNVVMPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps());
  pm.addNestedPass<gpu::GPUModuleOp>(
      createTfmNVVMExternDynamicSharedMemoryPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createTfmNVVMRegisterReallocationPass());
  // NVVM ops that lower to inline PTX (wgmma).
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertNVVMToLLVMPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCanonicalizerPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCSEPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createReconcileUnrealizedCastsPass());
  // Host: TMA tensor maps (nvgpu.tma.create.descriptor), then launches,
  // streams and device memory, as mgpu* calls.
  pm.addPass(createConvertNVGPUToNVVMPass());
  pm.addPass(createGpuToLLVMConversionPass());
  // PTX text: the CUDA target assembles it with ptxas when it emits a
  // library (lib/Target/CUDA), and --emit=ptx writes it as it is.
  GpuModuleToBinaryPassOptions binary;
  binary.toolkitPath = options.cudaToolkit;
  binary.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(binary));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::tfm::buildTfmGPUEmulationPipeline(OpPassManager &pm) {
  pm.addPass(createTfmGPUEmulateKernelsPass());
  pm.addPass(createCanonicalizerPass());
  // As the CPU target lowers its own code.
  buildHostToLLVMConversion(pm, /*genericAllocations=*/false);
  pm.addPass(createTfmGPUEmulatedEntryPointsPass());
  pm.addPass(createCanonicalizerPass());
}

void mlir::tfm::buildTfmLowerToNVVMPipeline(
    OpPassManager &pm, const TfmLowerToNVVMPipelineOptions &options) {
  buildTfmCUDALinalgStage(pm, options);
  buildTfmCUDABufferizationStage(pm, options);
  buildTfmCUDAKernelStage(pm, options);
  buildTfmToNVVMStage(pm, options);
}

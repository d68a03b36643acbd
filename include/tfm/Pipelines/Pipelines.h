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
#define TFM_PROJECTION_FUSION(field, name, description)                       \
  PassOptions::Option<bool> field{*this, "fuse-" name,                         \
                                  llvm::cl::desc(description),                 \
                                  llvm::cl::init(true)};
#include "tfm/Codegen/ProjectionFusions.def"
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
  PassOptions::Option<bool> bufferCache{
      *this, "buffer-cache",
      llvm::cl::desc("Allocate heap buffers through "
                     "_mlir_memref_to_llvm_alloc/free, which tfm's CPU "
                     "runtime archive implements as a cache of large "
                     "blocks; otherwise malloc/free"),
      llvm::cl::init(true)};

  /// The attention lowering options set here.
  AttentionTilingOptions attentionTiling() const;
  void setAttentionTiling(const AttentionTilingOptions &options);
  /// The CPU code generation options set here.
  CPUCodegenOptions cpuCodegen() const;
};

/// The target-independent linalg stage of every target: tfm ops ->
/// linalg/tensor/arith/math on tensors, attention tiled (unless
/// `tiling.referenceAttention`) into loops of tfm.online_attention steps.
void buildTfmToLinalgStage(OpPassManager &pm,
                           const AttentionTilingOptions &tiling);

/// The entry-point ABI and its runtime checks (if `exposeEntryPoints`), on
/// tensors, before any target tiles the ops whose sizes the checks read.
void addEntryPointPasses(OpPassManager &pm, bool exposeEntryPoints);

/// One-shot bufferization, at the start of every target's bufferized
/// stage; each target places its scratch buffers and adds the deallocation
/// pipeline after it.
void addBufferizePasses(OpPassManager &pm);

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

/// The CUDA target's pipeline: tfm ops on tensors -> host code in the LLVM
/// dialect that launches NVVM kernels embedded as PTX (`gpu.binary`).
struct TfmLowerToNVVMPipelineOptions
    : public PassPipelineOptions<TfmLowerToNVVMPipelineOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("The GPU architecture (sm_80, sm_90a)"),
      llvm::cl::init("sm_80")};
  PassOptions::Option<std::string> features{
      *this, "features", llvm::cl::desc("PTX features (the PTX ISA version)"),
      llvm::cl::init("+ptx80")};
  PassOptions::Option<unsigned> optLevel{
      *this, "opt-level", llvm::cl::desc("Optimization level of the kernels"),
      llvm::cl::init(3)};
  PassOptions::Option<std::string> cudaToolkit{
      *this, "cuda-toolkit",
      llvm::cl::desc("The CUDA toolkit whose libdevice the kernels link "
                     "(default: none, as MLIR finds it)"),
      llvm::cl::init("")};
  PassOptions::Option<int64_t> blockSize{
      *this, "block-size",
      llvm::cl::desc("Threads per block of the generically mapped kernels "
                     "(tfm-gpu-map-to-kernels)"),
      llvm::cl::init(256)};
  PassOptions::Option<bool> exposeEntryPoints{
      *this, "expose-entry-points",
      llvm::cl::desc("Rewrite public functions into the memref entry-point "
                     "ABI (tfm-expose-entry-points) before bufferization"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> flashAttention{
      *this, "flash-attention",
      llvm::cl::desc("bf16/f16 attention on tensor cores "
                     "(tfm-gpu-flash-attention); off: the reference lowering"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> tensorCoreMatmul{
      *this, "tensor-core-matmul",
      llvm::cl::desc("bf16/f16 projections on tensor cores "
                     "(tfm-gpu-tensor-core-matmul)"),
      llvm::cl::init(true)};
  PassOptions::ListOption<int64_t> matmulTile{
      *this, "matmul-tile",
      llvm::cl::desc("The tensor-core projections' tiling "
                     "(tfm-gpu-tensor-core-matmul's tile; default: chosen "
                     "per projection)")};
  PassOptions::Option<bool> matmulPersistent{
      *this, "matmul-persistent",
      llvm::cl::desc("With matmul-warp-specialized: persistent blocks, as "
                     "many as the GPU's multiprocessors hold, each walking "
                     "its tiles in turn (tfm-gpu-tensor-core-matmul's "
                     "persistent)"),
      llvm::cl::init(false)};
  PassOptions::Option<int64_t> matmulMultiprocessors{
      *this, "matmul-multiprocessors",
      llvm::cl::desc("With matmul-persistent: the grid sized for this many "
                     "multiprocessors; 0: the device's count, asked at run "
                     "time (tfm-gpu-tensor-core-matmul's multiprocessors)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> matmulFewRows{
      *this, "matmul-few-rows",
      llvm::cl::desc("Projections of at most this many rows on the "
                     "few-rows kernel, 0 to 16 (tfm-gpu-tensor-core-matmul's "
                     "few-rows)"),
      llvm::cl::init(8)};
  PassOptions::Option<bool> matmulNormPrologues{
      *this, "matmul-norm-prologues",
      llvm::cl::desc("The few-rows kernels compute the norms of their rows "
                     "(tfm-gpu-tensor-core-matmul's norm-prologues)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> attentionTma{
      *this, "attention-tma",
      llvm::cl::desc("With attention-warpgroup-mma: K and V tiles loaded by "
                     "TMA (tfm-gpu-lower-buffer-attention's tma)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> attentionWarpSpecialized{
      *this, "attention-warp-specialized",
      llvm::cl::desc("With attention-tma: a producer warpgroup issues the "
                     "loads (tfm-gpu-lower-buffer-attention's "
                     "warp-specialized)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> attentionPingpong{
      *this, "attention-pingpong",
      llvm::cl::desc("With attention-warp-specialized and "
                     "attention-warpgroup-overlap: the tile warpgroups take "
                     "turns issuing their products "
                     "(tfm-gpu-lower-buffer-attention's pingpong)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> matmulTma{
      *this, "matmul-tma",
      llvm::cl::desc("On sm_90a: the tensor-core projections' tiles loaded "
                     "by TMA (tfm-gpu-tensor-core-matmul's tma)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> matmulWarpSpecialized{
      *this, "matmul-warp-specialized",
      llvm::cl::desc("With matmul-tma: a producer warpgroup issues the loads "
                     "(tfm-gpu-tensor-core-matmul's warp-specialized)"),
      llvm::cl::init(false)};
  PassOptions::Option<int64_t> attentionWarpRows{
      *this, "attention-warp-rows",
      llvm::cl::desc("Query rows per warp of the tensor-core attention "
                     "kernel, 16 or 32 (tfm-gpu-lower-buffer-attention's "
                     "warp-rows)"),
      llvm::cl::init(16)};
  PassOptions::Option<int64_t> attentionKeys{
      *this, "attention-keys",
      llvm::cl::desc("Keys of a tile of the tensor-core attention kernel, "
                     "64 or with attention-warpgroup-mma 128 "
                     "(tfm-gpu-lower-buffer-attention's keys)"),
      llvm::cl::init(64)};
  PassOptions::Option<bool> mergeLaunches{
      *this, "merge-launches",
      llvm::cl::desc("Independent kernels of one block shape launched as "
                     "one (tfm-gpu-merge-launches)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> attentionSplitKV{
      *this, "attention-split-kv",
      llvm::cl::desc("Decode attention packed per KV head with its keys "
                     "split among blocks (tfm-gpu-lower-buffer-attention's "
                     "split-kv)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> attentionWarpgroupMma{
      *this, "attention-warpgroup-mma",
      llvm::cl::desc("Attention's products as warpgroup MMA, on sm_90a "
                     "(tfm-gpu-lower-buffer-attention's warpgroup-mma)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> attentionWarpgroupOverlap{
      *this, "attention-warpgroup-overlap",
      llvm::cl::desc("With attention-warpgroup-mma: each tile's softmax "
                     "while the last tile's P·V runs "
                     "(tfm-gpu-lower-buffer-attention's warpgroup-overlap)"),
      llvm::cl::init(false)};
};

/// The stages of tfm-lower-to-nvvm-pipeline:
///   linalg:     composite ops decomposed; attention that the tensor-core
///               kernel takes becomes that kernel (tfm-gpu-flash-attention),
///               the rest the reference lowering; linalg on tensors
///   bufferized: entry-point ABI, one-shot bufferization, deallocation
///   kernels:    tensor-core kernels (attention, projections), every other
///               loop nest a GPU kernel (gpu.launch_func), buffers in
///               device memory, launches and copies ordered on one stream
///   nvvm:       kernels -> NVVM -> PTX in a gpu.binary; host -> LLVM
///               dialect calling the mgpu* runtime functions
void buildTfmCUDALinalgStage(OpPassManager &pm,
                             const TfmLowerToNVVMPipelineOptions &options);
void buildTfmCUDABufferizationStage(
    OpPassManager &pm, const TfmLowerToNVVMPipelineOptions &options);
void buildTfmCUDAKernelStage(OpPassManager &pm,
                             const TfmLowerToNVVMPipelineOptions &options);
void buildTfmToNVVMStage(OpPassManager &pm,
                         const TfmLowerToNVVMPipelineOptions &options);

/// The four stages above.
void buildTfmLowerToNVVMPipeline(OpPassManager &pm,
                                 const TfmLowerToNVVMPipelineOptions &options);

/// The CPU's conversion of loops, vectors, memrefs, math and arithmetic to
/// the LLVM dialect (from tfm-resolve-dynamic-expand-shapes to
/// reconcile-unrealized-casts): the end of the CPU target's llvm stage, and
/// of the GPU kernels' emulation on the CPU. `genericAllocations`: memref
/// allocations through the generic functions (the CPU's buffer cache).
void buildHostToLLVMConversion(OpPassManager &pm, bool genericAllocations);

/// The kernels of a module at the kernels stage as CPU functions in the
/// LLVM dialect that call a GPU emulator (tfm-gpu-emulate-kernels), each
/// with a cuLaunchKernel-style entry point: for checking the kernels where
/// there is no GPU.
void buildTfmGPUEmulationPipeline(OpPassManager &pm);

/// Registers every tfm pipeline with the global pipeline registry.
void registerTfmPipelines();

} // namespace tfm
} // namespace mlir

#endif // TFM_PIPELINES_PIPELINES_H

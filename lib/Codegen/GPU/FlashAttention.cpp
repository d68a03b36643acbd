//===- FlashAttention.cpp - tfm.attention on tensor cores -----------------===//
//
// Two passes: tfm-gpu-flash-attention puts a bf16/f16 `tfm.attention` on
// buffers (tfm.buffer_attention) before bufferization, and
// tfm-gpu-lower-buffer-attention replaces that by one FlashAttention-2
// style kernel (AttentionKernel.h) once buffers and their deallocation are
// final. With split-kv, decode packs a KV head's whole group of queries
// into one warp's 16 rows, the blocks split the keys, and a second kernel
// combines their partial results by their log-sum-exp (FlashDecoding).
// Between the two, tfm-gpu-fold-attention-transposes
// (FoldAttentionTransposes.cpp) has the kernel read and write its operands
// through transposed views.
//
//===----------------------------------------------------------------------===//

#include "tfm/Codegen/Passes.h"

#include "AttentionKernel.h"
#include "KernelLaunch.h"

#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/Dialect/Tfm/Utils/AttentionChecks.h"
#include "tfm/Dialect/Tfm/Utils/AttentionDims.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGPUFLASHATTENTIONPASS
#define GEN_PASS_DEF_TFMGPULOWERBUFFERATTENTIONPASS
#include "tfm/Codegen/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::attention;

namespace {

/// Split-KV decode: blocks over a batch's KV range aim at about this many
/// (some 4 a multiprocessor of an H100), each walking at least
/// kMinSplitKeys keys.
constexpr int64_t kTargetBlocks = 512;
constexpr int64_t kMinSplitKeys = 128;

/// tfm.attention -> to_buffer of its operands, tfm.buffer_attention into a
/// new buffer, to_tensor of that buffer.
void bufferize(IRRewriter &rewriter, AttentionOp op) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  RankedTensorType resultType = op.getType();
  auto read = [&](Value tensor) -> Value {
    if (!tensor)
      return nullptr;
    return bufferization::ToBufferOp::create(
        rewriter, loc, bufferType(cast<RankedTensorType>(tensor.getType())),
        tensor, /*readOnly=*/true);
  };
  Value q = read(op.getQuery()), k = read(op.getKey()), v = read(op.getValue());
  Value lengths = read(op.getKvLengths());

  // Sizes the verifier could not compare must agree at run time (asserts
  // that tfm-insert-runtime-checks turns into entry checks).
  assertSameDims(rewriter, loc, op);

  SmallVector<Value> dynamicSizes;
  for (int64_t d : {kBatch, kSeq})
    if (resultType.isDynamicDim(d))
      dynamicSizes.push_back(memref::DimOp::create(rewriter, loc, q, d));
  auto outType =
      MemRefType::get(resultType.getShape(), resultType.getElementType());
  Value out = memref::AllocOp::create(rewriter, loc, outType, dynamicSizes);
  BufferAttentionOp::create(rewriter, loc, q, k, v, lengths, out,
                            op.getMaskAttr(), op.getScaleAttr(),
                            op.getSoftcapAttr());
  rewriter.replaceOp(op, bufferization::ToTensorOp::create(
                             rewriter, loc, resultType, out,
                             /*restrict=*/true, /*writable=*/true));
}

struct TfmGPUFlashAttentionPass
    : tfm::impl::TfmGPUFlashAttentionPassBase<TfmGPUFlashAttentionPass> {
  void runOnOperation() override {
    SmallVector<AttentionOp> ops;
    getOperation().walk([&](AttentionOp op) {
      if (!op.getDenseMask() && !op.getBias() &&
          kernelTakes(op.getQuery().getType(), op.getValue().getType()))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (AttentionOp op : ops)
      bufferize(rewriter, op);
  }
};

/// When the result buffer is a fresh allocation that is only copied into
/// another buffer right after the kernel (an entry point's output, as
/// bufferization leaves it), the kernel writes that buffer instead: no copy.
void writeIntoCopyTarget(BufferAttentionOp op) {
  auto alloc = op.getResult().getDefiningOp<memref::AllocOp>();
  if (!alloc)
    return;
  memref::CopyOp copy;
  memref::DeallocOp dealloc;
  for (Operation *user : alloc->getUsers()) {
    if (user == op)
      continue;
    auto asCopy = dyn_cast<memref::CopyOp>(user);
    auto asDealloc = dyn_cast<memref::DeallocOp>(user);
    if (asCopy && !copy && asCopy.getSource() == alloc.getResult())
      copy = asCopy;
    else if (asDealloc && !dealloc)
      dealloc = asDealloc;
    else
      return;
  }
  if (!copy || copy->getBlock() != op->getBlock() ||
      copy.getTarget().getType() != alloc.getType())
    return;
  // The target exists before the kernel, and nothing between the kernel
  // and the copy touches memory.
  Value target = copy.getTarget();
  Operation *definition = target.getDefiningOp();
  if (definition && (definition->getBlock() != op->getBlock() ||
                     !definition->isBeforeInBlock(op)))
    return;
  if (!isa<BlockArgument>(target) && !definition)
    return;
  for (Operation *between = op->getNextNode(); between != copy;
       between = between->getNextNode())
    if (!isMemoryEffectFree(between))
      return;
  op.getResultMutable().assign(target);
  copy->erase();
  if (dealloc)
    dealloc->erase();
  alloc->erase();
}

/// tfm.buffer_attention -> the kernel's gpu.launch, in the form `requested`
/// names (of any head dim; packed: split-KV decode wanted) where the op
/// allows it. With no batches or no queries its grid is empty, which the
/// runtime skips (mgpuLaunchKernel): no host branch around it, which would
/// make gpu-async-region wait for the stream before and after it.
void launchKernel(IRRewriter &rewriter, BufferAttentionOp op,
                  const RowSplit &requested) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value q = op.getQuery();
  MemRefType queryType = op.getQuery().getType();
  MemRefType resultType = op.getResult().getType();
  int64_t heads = queryType.getDimSize(kHeads);
  int64_t kvHeads = op.getKey().getType().getDimSize(kHeads);
  int64_t queries = queryType.getDimSize(kSeq);
  RowSplit split{requested.warpRows, resultType.getDimSize(kHead)};
  split.packed = requested.packed && !ShapedType::isDynamic(queries) &&
                 queries > 0 && heads / kvHeads * queries <= 16;
  if (split.packed)
    split.warpRows = 16;
  split.warpgroups = requested.warpgroups && !split.packed;
  if (split.warpgroups)
    split.keys = requested.keys;
  // At head dim 64 the warpgroup kernel always overlaps: its sequential
  // form gave wrong results there on an H200 (docs/DESIGN.md, GPU
  // attention), though it passes on the emulator and at head dim 128.
  split.overlap =
      split.warpgroups && (requested.overlap || split.headDim == 64);
  split.tma = split.warpgroups && requested.tma;
  split.specialized = split.tma && requested.specialized;
  split.pingpong = split.specialized && split.overlap && requested.pingpong;
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, value);
  };
  Value batches = memref::DimOp::create(rewriter, loc, q, kBatch);
  // Grid: (query tiles, heads, batches), or packed (key ranges, KV heads,
  // batches) with enough ranges for about kTargetBlocks blocks.
  Value gridX, gridY, ranges, partial, lse;
  if (split.packed) {
    Value keys = memref::DimOp::create(rewriter, loc, op.getKey(), kSeq);
    gridY = constant(kvHeads);
    Value blocks = arith::MaxUIOp::create(
        rewriter, loc,
        arith::MulIOp::create(rewriter, loc, batches, gridY), constant(1));
    ranges = arith::MaxUIOp::create(
        rewriter, loc, constant(1),
        arith::MinUIOp::create(
            rewriter, loc,
            arith::CeilDivUIOp::create(rewriter, loc, keys,
                                       constant(kMinSplitKeys)),
            arith::CeilDivUIOp::create(rewriter, loc,
                                       constant(kTargetBlocks), blocks)));
    gridX = ranges;
    Type f32 = rewriter.getF32Type();
    int64_t dynamic = ShapedType::kDynamic;
    partial = memref::AllocOp::create(
        rewriter, loc,
        MemRefType::get({dynamic, dynamic, heads, queries, split.headDim},
                        f32),
        ValueRange{ranges, batches});
    lse = memref::AllocOp::create(
        rewriter, loc, MemRefType::get({dynamic, dynamic, heads, queries}, f32),
        ValueRange{ranges, batches});
  } else {
    gridX = arith::CeilDivUIOp::create(
        rewriter, loc, memref::DimOp::create(rewriter, loc, q, kSeq),
        constant(kRows));
    gridY = constant(heads);
  }
  // With TMA, K's and V's tensor maps, in boxes of a tile's keys by 64
  // columns.
  Value kMap, vMap;
  if (split.tma) {
    kMap = createTensorMap(rewriter, loc, op.getKey(), {1, 1, split.keys, 64});
    vMap =
        createTensorMap(rewriter, loc, op.getValue(), {1, 1, split.keys, 64});
  }
  // The tiles in dynamic shared memory: K, V and Q tiles of head dim 128
  // pass the 48 KiB of static shared memory.
  gpu::LaunchOp launch;
  Value shared;
  {
    OpBuilder::InsertionGuard guard(rewriter);
    std::tie(launch, shared) =
        createSharedMemoryLaunch(rewriter, loc, {gridX, gridY, batches},
                                 split.threads(), split.sharedBytes());
    auto tile = [&](int64_t rows, int64_t offset) {
      SmallVector<int64_t> shape = {rows, split.headDim};
      if (split.warpgroups)
        shape = {split.headDim / 64, rows, 64};
      if (split.buffers() > 1)
        shape.insert(shape.begin(), split.buffers());
      return sharedView(rewriter, loc, shared, shape,
                        resultType.getElementType(), offset);
    };
    int64_t buffers = split.buffers();
    Value ks = tile(split.keys, 0),
          vs = tile(split.keys, buffers * split.tileBytes());
    // The block's rows of Q, [rows, D] (swizzled chunks, not panels: read
    // by ldmatrix), after the tiles.
    Value qs = split.queryCopied()
                   ? sharedView(rewriter, loc, shared,
                                {split.blockRows(), split.headDim},
                                resultType.getElementType(), split.tilesBytes())
                   : Value();
    Value zeros = split.zeroTile()
                      ? sharedView(rewriter, loc, shared,
                                   {split.headDim / 64, split.keys, 64},
                                   resultType.getElementType(),
                                   2 * buffers * split.tileBytes())
                      : Value();
    Value barriers =
        split.tma ? sharedView(rewriter, loc, shared, {split.barrierObjects()},
                               rewriter.getI64Type(),
                               split.tilesBytes() + split.queryBytes())
                  : Value();
    // The results over the K and V tiles (at least 2 · 64 keys of D, what
    // 128 rows of D take).
    Value staging = split.packed
                        ? Value()
                        : sharedView(rewriter, loc, shared,
                                     {split.blockRows(), split.headDim},
                                     resultType.getElementType(), 0);
    KernelOperands operands{q,
                            op.getKey(),
                            op.getValue(),
                            op.getKvLengths(),
                            op.getResult(),
                            ks,
                            vs,
                            qs,
                            partial,
                            lse,
                            barriers,
                            kMap,
                            vMap,
                            zeros,
                            staging};
    KernelBuilder(rewriter, loc, op, split).build(launch, operands);
  }
  if (split.packed) {
    rewriter.setInsertionPointAfter(launch);
    combineRanges(rewriter, loc, ranges, partial, lse, op.getResult());
    memref::DeallocOp::create(rewriter, loc, partial);
    memref::DeallocOp::create(rewriter, loc, lse);
  }
  rewriter.eraseOp(op);
}

struct TfmGPULowerBufferAttentionPass
    : tfm::impl::TfmGPULowerBufferAttentionPassBase<
          TfmGPULowerBufferAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<BufferAttentionOp> ops;
    getOperation().walk([&](BufferAttentionOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    if (warpRows != 16 && warpRows != 32) {
      getOperation().emitError("tfm-gpu-lower-buffer-attention: warp-rows "
                               "must be 16 or 32, not ")
          << int64_t(warpRows);
      return signalPassFailure();
    }
    if (warpgroupOverlap && !warpgroupMma) {
      getOperation().emitError("tfm-gpu-lower-buffer-attention: "
                               "warpgroup-overlap takes warpgroup-mma");
      return signalPassFailure();
    }
    if (tma && !warpgroupMma) {
      getOperation().emitError("tfm-gpu-lower-buffer-attention: tma takes "
                               "warpgroup-mma");
      return signalPassFailure();
    }
    if (warpSpecialized && !tma) {
      getOperation().emitError("tfm-gpu-lower-buffer-attention: "
                               "warp-specialized takes tma");
      return signalPassFailure();
    }
    if (pingpong && !(warpSpecialized && warpgroupOverlap)) {
      getOperation().emitError("tfm-gpu-lower-buffer-attention: pingpong "
                               "takes warp-specialized and "
                               "warpgroup-overlap");
      return signalPassFailure();
    }
    if (keys != 64 && keys != 128) {
      getOperation().emitError("tfm-gpu-lower-buffer-attention: keys must "
                               "be 64 or 128, not ")
          << int64_t(keys);
      return signalPassFailure();
    }
    if (keys == 128 && !warpgroupMma) {
      getOperation().emitError("tfm-gpu-lower-buffer-attention: keys 128 "
                               "takes warpgroup-mma");
      return signalPassFailure();
    }
    if (warpgroupMma && warpRows != 16) {
      getOperation().emitError("tfm-gpu-lower-buffer-attention: "
                               "warpgroup-mma takes warp-rows 16");
      return signalPassFailure();
    }
    RowSplit requested{warpRows, /*headDim=*/0, keys};
    requested.packed = splitKV;
    requested.warpgroups = warpgroupMma;
    requested.overlap = warpgroupOverlap;
    requested.tma = tma;
    requested.specialized = warpSpecialized;
    requested.pingpong = pingpong;
    for (BufferAttentionOp op : ops) {
      if (!kernelTakes(op.getQuery().getType(), op.getValue().getType())) {
        op.emitOpError("has no GPU kernel for these types: it takes bf16 or "
                       "f16 with head dim 64 or 128");
        return signalPassFailure();
      }
      writeIntoCopyTarget(op);
      launchKernel(rewriter, op, requested);
    }
  }
};

} // namespace

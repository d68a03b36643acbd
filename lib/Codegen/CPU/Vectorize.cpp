//===- Vectorize.cpp - register tiling and vectorization for CPUs ----------===//

#include "ProjectionBlocks.h"

#include "tfm/Codegen/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMCPUVECTORIZEPASS
#include "tfm/Codegen/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {

/// The largest divisor of `size` that is at most `limit`.
int64_t largestDivisor(int64_t size, int64_t limit) {
  for (int64_t d = std::min(size, limit); d > 1; --d)
    if (size % d == 0)
      return d;
  return 1;
}

/// Loop `dim` is the last result of `map`: the operand is contiguous along
/// that loop.
bool isInnermost(AffineMap map, unsigned dim) {
  if (map.getNumResults() == 0)
    return false;
  auto expr = dyn_cast<AffineDimExpr>(map.getResults().back());
  return expr && expr.getPosition() == dim;
}

/// A register tile: sizes per loop, and the order of the tile loops.
struct RegisterTile {
  SmallVector<int64_t> sizes;
  SmallVector<int64_t> order;
  /// Vectorize a contraction to vector.contract (lowered to outer-product
  /// FMAs); otherwise to elementwise ops and reductions.
  bool asContract = false;
};

/// The contraction dims of `op` when it has exactly one M, one N and one K
/// loop (and any batch loops).
std::optional<linalg::ContractionDimensions>
singleContractionDims(linalg::LinalgOp op) {
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.size() != 1 || dims->n.size() != 1 ||
      dims->k.size() != 1)
    return std::nullopt;
  return *dims;
}

/// Rows of the register block for a short M (a decode step), which reads B
/// once per block of rows. Blocks of at least 2 rows that cover whole rows
/// of B read them front to back, as the hardware prefetchers stream best
/// (GQA decode, D = 128: 2x128 is 5-11% faster than 4x64 at Skv = 32768).
/// Otherwise half the rows, where they divide M, leave at least 4 vectors,
/// so B is read in pieces of several cache lines (MQA decode, 8 rows, before
/// whole-row blocks: 4x64 was 20% faster than 8x32).
int64_t shortBlockRows(int64_t m, int64_t n, int64_t vectorWidth,
                       int64_t registerRows) {
  if (n % vectorWidth == 0) {
    int64_t wholeRows = 2 * registerRows / (n / vectorWidth);
    if (wholeRows >= 2)
      return largestDivisor(m, wholeRows);
  }
  if (registerRows >= 2 && m % (registerRows / 2) == 0)
    return registerRows / 2;
  return largestDivisor(m, registerRows);
}

/// MR x NR x 1 (batch dims 1) for C[m, n] += A[m, k] * B[k, n] with C and B
/// contiguous along n: MR is the largest divisor of M up to `registerRows`
/// (`shortBlockRows` for a short M), and NR takes as many vectors of the
/// 2 * registerRows accumulator registers as are left, so a short M (a
/// decode step) reads long rows of B.
/// The n loop is outside the m loop, so that a [K, NR] panel of B stays in
/// L1 while the rows of A stream past it.
std::optional<RegisterTile> contractionTile(linalg::LinalgOp op,
                                            ArrayRef<int64_t> bounds,
                                            int64_t vectorWidth,
                                            int64_t registerRows) {
  std::optional<linalg::ContractionDimensions> dims =
      singleContractionDims(op);
  if (!dims)
    return std::nullopt;
  unsigned m = dims->m[0], n = dims->n[0];
  if (!isInnermost(op.getMatchingIndexingMap(op.getDpsInitOperand(0)), n) ||
      !isInnermost(op.getMatchingIndexingMap(op.getDpsInputOperand(1)), n))
    return std::nullopt;
  int64_t rows =
      bounds[m] <= registerRows
          ? shortBlockRows(bounds[m], bounds[n], vectorWidth, registerRows)
          : largestDivisor(bounds[m], registerRows);
  int64_t columns = 0;
  for (int64_t vectors = 2 * registerRows / rows; vectors > 0; --vectors)
    if (bounds[n] % (vectors * vectorWidth) == 0) {
      columns = vectors * vectorWidth;
      break;
    }
  // Fewer columns than whole vectors (a projection's last columns): one
  // block of them all, in partial vectors, where they fit the accumulators.
  if (!columns && llvm::divideCeil(bounds[n], vectorWidth) * rows <=
                      2 * registerRows)
    columns = bounds[n];
  if (!columns)
    return std::nullopt;
  RegisterTile tile{SmallVector<int64_t>(bounds.size(), 1), {}, true};
  tile.sizes[m] = rows;
  tile.sizes[n] = columns;
  for (unsigned loop = 0; loop < bounds.size(); ++loop)
    if (loop != m && loop != n)
      tile.order.push_back(loop);
  // Batch dims first, then n, m, and the reduction innermost.
  tile.order.insert(tile.order.end() - dims->k.size(), {n, m});
  return tile;
}

/// MR x 1 x 1 x L for lane-wise dot products C[m, n, l] += A[m, k, l] *
/// B[n, k, l], with the batch loop l innermost in every operand: MR rows of
/// A (the largest divisor of M up to `registerRows`) against one row of B,
/// whose k steps are read in order, with vectors along l. The n loop is
/// outermost, so that each row of B is read once. The product is a
/// multiply and an add per vector (fused to an FMA by LLVM's fp-contract):
/// vector.contract has no lowering for a batch loop that is not outermost.
std::optional<RegisterTile> laneContractionTile(linalg::LinalgOp op,
                                                ArrayRef<int64_t> bounds,
                                                int64_t vectorWidth,
                                                int64_t registerRows) {
  std::optional<linalg::ContractionDimensions> dims =
      singleContractionDims(op);
  if (!dims || dims->batch.size() != 1)
    return std::nullopt;
  unsigned lane = dims->batch[0];
  if (bounds[lane] % vectorWidth ||
      !llvm::all_of(op->getOpOperands(), [&](OpOperand &operand) {
        return isInnermost(op.getMatchingIndexingMap(&operand), lane);
      }))
    return std::nullopt;
  RegisterTile tile{SmallVector<int64_t>(bounds.size(), 1), {}};
  unsigned m = dims->m[0], n = dims->n[0];
  tile.sizes[m] = largestDivisor(bounds[m], registerRows);
  // One row of A (a decode step's projection): that many rows of B at once
  // instead, so that the FMAs form independent chains.
  if (tile.sizes[m] == 1)
    tile.sizes[n] = largestDivisor(bounds[n], registerRows);
  tile.sizes[lane] = bounds[lane];
  tile.order = {n, m, dims->k[0], lane};
  return tile;
}

/// Innermost loop in blocks of up to four vectors (or all of it when it is
/// shorter than one), every other loop 1; W x W for transposed reads.
std::optional<RegisterTile> elementwiseTile(linalg::LinalgOp op,
                                            ArrayRef<int64_t> bounds,
                                            int64_t vectorWidth) {
  unsigned inner = bounds.size() - 1;
  RegisterTile result{SmallVector<int64_t>(bounds.size(), 1), {}};
  SmallVector<int64_t> &tile = result.sizes;
  // An operand is read transposed when the innermost loop indexes one of
  // its dims other than the last (broadcast and reduced operands do not
  // use that loop at all).
  bool transposed = llvm::any_of(op->getOpOperands(), [&](OpOperand &operand) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    return map.isFunctionOfDim(inner) && !isInnermost(map, inner);
  });
  if (transposed) {
    if (bounds.size() < 2 || bounds[inner] % vectorWidth ||
        bounds[inner - 1] % vectorWidth)
      return std::nullopt;
    tile[inner] = tile[inner - 1] = vectorWidth;
    // Walk blocks in the order of the transposed operand's memory, so that
    // reading it streams.
    for (unsigned loop = 0; loop < inner - 1; ++loop)
      result.order.push_back(loop);
    result.order.append({inner, inner - 1});
    return result;
  }
  if (bounds[inner] < vectorWidth) {
    tile[inner] = bounds[inner];
    return result;
  }
  for (int64_t vectors : {4, 2, 1})
    if (bounds[inner] % (vectors * vectorWidth) == 0) {
      tile[inner] = vectors * vectorWidth;
      return result;
    }
  return std::nullopt;
}

/// In memory an i1 is a byte, in an LLVM vector a bit: vector transfers of
/// i1 tensors would read and write packed bits, so such ops stay scalar.
bool hasSubByteOperand(linalg::LinalgOp op) {
  return llvm::any_of(op->getOperands(), [](Value operand) {
    Type element = getElementTypeOrSelf(operand.getType());
    return element.isIntOrFloat() && element.getIntOrFloatBitWidth() < 8;
  });
}

/// Steps of k per iteration of a register block's K loop: fewer loop
/// branches and counter updates between the FMAs. On an Intel Xeon (2
/// threads, issue 14's f32 projections, same build with and without, call
/// by call): 4 steps 5-9% faster than 1, 2 and 8 steps 2-5% slower than 4.
constexpr int64_t kKUnroll = 4;

/// A K loop of a register block (after hoisting): its body accumulates a
/// vector.contract into a vector it carries, and its steps divide by
/// kKUnroll.
bool isRegisterBlockKLoop(scf::ForOp loop) {
  std::optional<APInt> trips = loop.getStaticTripCount();
  if (!trips || trips->getSExtValue() % kKUnroll != 0)
    return false;
  return llvm::any_of(loop.getBody()->getOps<vector::ContractionOp>(),
                      [&](vector::ContractionOp contract) {
                        auto carried =
                            dyn_cast<BlockArgument>(contract.getAcc());
                        return carried && carried.getOwner() == loop.getBody();
                      });
}

struct TfmCPUVectorizePass
    : tfm::CPUCodegenPass<
          tfm::impl::TfmCPUVectorizePassBase<TfmCPUVectorizePass>> {

  void runOnOperation() override {
    if (!checkCodegenOptions())
      return;
    // An op with an empty loop (a zero-size dim) computes nothing: it stays
    // a loop that never runs, as register tiles cannot divide its range.
    SmallVector<linalg::LinalgOp> ops;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (op.hasPureTensorSemantics() && op.getNumLoops() > 0 &&
          !op.hasDynamicShape() && !hasSubByteOperand(op) &&
          !op->hasAttr(tfm::projection::kAMXTilesAttr) && // tfm-cpu-lower-amx's
          !llvm::is_contained(op.getStaticLoopRanges(), 0))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops)
      tileAndVectorize(rewriter, op);

    // Fold the tile slices into the vector transfers.
    RewritePatternSet patterns(&getContext());
    tensor::populateFoldTensorSubsetIntoVectorTransferPatterns(patterns);
    vector::TransferReadOp::getCanonicalizationPatterns(patterns,
                                                        &getContext());
    vector::TransferWriteOp::getCanonicalizationPatterns(patterns,
                                                         &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();

    // A register block read and written at the same place in every step of
    // its K loop becomes a vector the loop carries: its accumulators stay in
    // registers even where the block is a view of a larger output, which
    // tfm-cpu-lower-vectors' hoisting of memref transfers cannot see through
    // (projection blocks are slices of a thread's output block).
    getOperation()->walk([&](scf::ForOp loop) {
      hoistLoopInvariantSubsets(rewriter, loop);
    });

    // Then its K loop runs kKUnroll steps per iteration.
    SmallVector<scf::ForOp> kLoops;
    getOperation()->walk([&](scf::ForOp loop) {
      if (isRegisterBlockKLoop(loop))
        kLoops.push_back(loop);
    });
    for (scf::ForOp loop : kLoops)
      (void)loopUnrollByFactor(loop, kKUnroll);
  }

  void tileAndVectorize(IRRewriter &rewriter, linalg::LinalgOp op) {
    SmallVector<int64_t> bounds = op.getStaticLoopRanges();
    std::optional<RegisterTile> tile =
        contractionTile(op, bounds, vectorWidth, registerRows);
    if (!tile)
      tile = laneContractionTile(op, bounds, vectorWidth, registerRows);
    if (!tile && !linalg::isaContractionOpInterface(op))
      tile = elementwiseTile(op, bounds, vectorWidth);
    if (!tile)
      return;

    rewriter.setInsertionPoint(op);
    Operation *block = op;
    if (tile->sizes != bounds) {
      scf::SCFTilingOptions options;
      options.setTileSizes(getAsIndexOpFoldResult(&getContext(), tile->sizes));
      if (!tile->order.empty())
        options.setInterchange(tile->order);
      FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
          rewriter, cast<TilingInterface>(op.getOperation()), options);
      if (failed(tiled) || tiled->tiledOps.size() != 1)
        return;
      rewriter.replaceOp(op, tiled->replacements);
      block = tiled->tiledOps.front();
    }
    // An op the vectorizer does not support stays a (tiled) scalar loop.
    rewriter.setInsertionPoint(block);
    FailureOr<linalg::VectorizationResult> vectorized = linalg::vectorize(
        rewriter, block, /*inputVectorSizes=*/{}, /*inputScalableVecDims=*/{},
        /*vectorizeNDExtract=*/true, /*flatten1DDepthwiseConv=*/false,
        /*assumeDynamicDimsMatchVecSizes=*/false,
        /*createNamedContraction=*/tile->asContract);
    if (succeeded(vectorized))
      rewriter.replaceOp(block, vectorized->replacements);
  }
};

} // namespace

std::unique_ptr<Pass>
mlir::tfm::createTfmCPUVectorizePass(const CPUCodegenOptions &options) {
  auto pass = std::make_unique<TfmCPUVectorizePass>();
  pass->setCodegenOptions(options);
  return pass;
}

//===- TileProjections.cpp - projections as cache-blocked matmuls ----------===//
//
// A projection y[m, n] += a[m, k] * w[n, k] (nn.Linear weights, any number
// of rows m, usually only known at run time) becomes loops whose innermost
// step is a static MR x NR register block, which tfm-cpu-vectorize turns
// into broadcast + FMA code:
//
//   scf.forall (j) in (N / NB)                     // threads over N blocks
//     scf.for k0 = 0 to K step KC                  // a Kᵀ panel per step
//       wt = f32 w[j*NB : +NB, k0 : +KC]ᵀ          // packed [KC, NB]
//       scf.for n1 = 0 to NB step NR               // an L1-sized [KC, NR] panel
//         scf.for m0 = 0 to M - M % MR step MR     // rows stream past it
//           y[m0 : +MR, n1 : +NR] += a[m0 : +MR, k0 : +KC] · wt[:, n1 : +NR]
//         scf.for m0 = M - M % MR to M             // the remaining rows
//           y[m0, n1 : +NR] += a[m0, k0 : +KC] · wt[:, n1 : +NR]
//
// Columns left over by whole NR-blocks (N % NR) get the same loops with
// one narrower block, NR = NB = N % NR.
//
//===----------------------------------------------------------------------===//

#include "tfm/Codegen/Passes.h"
#include "tfm/Dialect/Tfm/Utils/LinalgBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMCPUTILEPROJECTIONSPASS
#include "tfm/Codegen/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {

using Iter = utils::IteratorType;

/// Columns of a thread's block of w: its packed [KC, NB] panel stays in L2
/// while the rows of a stream past it.
constexpr int64_t kMaxBlockColumns = 128;
/// Steps of k per packed panel: a [KC, NR] slice of it (16 KiB with NR = 32)
/// stays in L1 while MR-row blocks of a stream past it.
constexpr int64_t kMaxPanelDepth = 128;

/// The largest multiple of `unit` that divides `size` and is at most
/// `limit`, or 0.
int64_t blockSize(int64_t size, int64_t unit, int64_t limit) {
  for (int64_t block = limit - limit % unit; block >= unit; block -= unit)
    if (size % block == 0)
      return block;
  return 0;
}

/// Whether `op` is y[m, n] += a[m, k] * w[n, k] with static N and K.
bool isProjection(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || op.getNumLoops() != 3 ||
      !linalg::isaContractionOpInterface(op))
    return false;
  MLIRContext *context = op.getContext();
  AffineExpr m, n, k;
  bindDims(context, m, n, k);
  SmallVector<AffineMap> expected{AffineMap::get(3, 0, {m, k}, context),
                                  AffineMap::get(3, 0, {n, k}, context),
                                  AffineMap::get(3, 0, {m, n}, context)};
  auto weights = cast<RankedTensorType>(op.getDpsInputs()[1].getType());
  auto result = cast<RankedTensorType>(op.getDpsInits()[0].getType());
  return op.getIndexingMapsArray() == expected &&
         weights.hasStaticShape() && result.getElementType().isF32();
}

struct Blocking {
  int64_t rows;    // MR
  int64_t columns; // NR
  int64_t block;   // NB
  int64_t depth;   // KC
};

/// A static slice [rows, cols] of a rank-2 tensor at (row, col).
Value slice2D(OpBuilder &b, Location loc, Value source, OpFoldResult row,
              OpFoldResult col, OpFoldResult rows, OpFoldResult cols) {
  OpFoldResult one = b.getIndexAttr(1);
  return tensor::ExtractSliceOp::create(b, loc, source, {row, col},
                                        {rows, cols}, {one, one});
}

/// `tile` [rows, cols] inserted at (row, col) of `dest`: the sizes must be
/// the very values its slice was extracted with, so that bufferization sees
/// the pair as an in-place update.
Value insert2D(OpBuilder &b, Location loc, Value tile, Value dest,
               OpFoldResult row, OpFoldResult col, OpFoldResult rows,
               OpFoldResult cols) {
  OpFoldResult one = b.getIndexAttr(1);
  return tensor::InsertSliceOp::create(b, loc, tile, dest, {row, col},
                                       {rows, cols}, {one, one});
}

/// `y` [M, NR] += a[m0 : M, k0 : +KC] · panel [KC, NR] over rows
/// [begin, end) in steps of `rows` (whose count divides end - begin).
Value rowBlocks(OpBuilder &b, Location loc, Value a, Value panel, Value y,
                Value k0, Value begin, Value end, int64_t rows) {
  int64_t depth = cast<RankedTensorType>(panel.getType()).getDimSize(0);
  int64_t columns = cast<RankedTensorType>(panel.getType()).getDimSize(1);
  Value step = arith::ConstantIndexOp::create(b, loc, rows);
  return scf::ForOp::create(
             b, loc, begin, end, step, ValueRange{y},
             [&](OpBuilder &nb, Location nl, Value m0, ValueRange carried) {
               LinalgBuilder lb(nb, nl);
               Value rowsOfA = lb.tileF32(
                   slice2D(nb, nl, a, m0, k0, nb.getIndexAttr(rows),
                           nb.getIndexAttr(depth)),
                   /*transpose=*/false);
               Value block = slice2D(nb, nl, carried[0], m0, nb.getIndexAttr(0),
                                     nb.getIndexAttr(rows),
                                     nb.getIndexAttr(columns));
               Value product =
                   linalg::MatmulOp::create(nb, nl, ValueRange{rowsOfA, panel},
                                            ValueRange{block})
                       .getResult(0);
               scf::YieldOp::create(
                   nb, nl,
                   insert2D(nb, nl, product, carried[0], m0, nb.getIndexAttr(0),
                            nb.getIndexAttr(rows), nb.getIndexAttr(columns)));
             })
      .getResult(0);
}

/// The loops of the file comment over columns [n0, n0 + count) of `y`
/// (count a multiple of the block): each thread block fills its part of
/// `y` with `fillValue` first, if there is one. Returns the updated `y`.
Value tileColumns(RewriterBase &rewriter, Location loc, Value a, Value w,
                  Value y, Value fillValue, const Blocking &blocking,
                  int64_t n0, int64_t count) {
  int64_t depth = cast<RankedTensorType>(w.getType()).getDimSize(1);
  OpFoldResult rowCount = tensor::getMixedSize(rewriter, loc, a, 0);
  Value rowsValue = getValueOrCreateConstantIndexOp(rewriter, loc, rowCount);
  auto index = [&](OpBuilder &b, Location l, int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, l, value);
  };

  auto forall = scf::ForallOp::create(
      rewriter, loc,
      ArrayRef<OpFoldResult>{rewriter.getIndexAttr(count / blocking.block)},
      ValueRange{y}, std::nullopt);
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(forall.getBody()->getTerminator());
  Value nBlock = arith::AddIOp::create(
      rewriter, loc,
      arith::MulIOp::create(rewriter, loc, forall.getInductionVar(0),
                            index(rewriter, loc, blocking.block)),
      index(rewriter, loc, n0));
  Value yBlock = slice2D(rewriter, loc, forall.getRegionIterArgs()[0],
                         rewriter.getIndexAttr(0), nBlock, rowCount,
                         rewriter.getIndexAttr(blocking.block));
  if (fillValue)
    yBlock = linalg::FillOp::create(rewriter, loc, fillValue, yBlock)
                 .getResult(0);
  // Rows below fullRows come in blocks of MR, the rest one by one.
  Value fullRows = arith::SubIOp::create(
      rewriter, loc, rowsValue,
      arith::RemUIOp::create(rewriter, loc, rowsValue,
                             index(rewriter, loc, blocking.rows)));
  auto kLoop = scf::ForOp::create(
      rewriter, loc, index(rewriter, loc, 0), index(rewriter, loc, depth),
      index(rewriter, loc, blocking.depth), ValueRange{yBlock},
      [&](OpBuilder &b, Location l, Value k0, ValueRange carried) {
        LinalgBuilder lb(b, l);
        Value packed = lb.tileF32(
            slice2D(b, l, w, nBlock, k0, b.getIndexAttr(blocking.block),
                    b.getIndexAttr(blocking.depth)),
            /*transpose=*/true);
        auto nLoop = scf::ForOp::create(
            b, l, index(b, l, 0), index(b, l, blocking.block),
            index(b, l, blocking.columns), carried,
            [&](OpBuilder &nb, Location nl, Value n1, ValueRange inner) {
              Value panel = slice2D(nb, nl, packed, nb.getIndexAttr(0), n1,
                                    nb.getIndexAttr(blocking.depth),
                                    nb.getIndexAttr(blocking.columns));
              Value strip = slice2D(nb, nl, inner[0], nb.getIndexAttr(0), n1,
                                    rowCount,
                                    nb.getIndexAttr(blocking.columns));
              strip = rowBlocks(nb, nl, a, panel, strip, k0, index(nb, nl, 0),
                                fullRows, blocking.rows);
              strip = rowBlocks(nb, nl, a, panel, strip, k0, fullRows,
                                rowsValue, 1);
              scf::YieldOp::create(
                  nb, nl,
                  insert2D(nb, nl, strip, inner[0], nb.getIndexAttr(0), n1,
                           rowCount, nb.getIndexAttr(blocking.columns)));
            });
        scf::YieldOp::create(b, l, nLoop.getResults());
      });
  rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
  OpFoldResult one = rewriter.getIndexAttr(1);
  tensor::ParallelInsertSliceOp::create(
      rewriter, loc, kLoop.getResult(0), forall.getRegionIterArgs()[0],
      ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0), nBlock},
      ArrayRef<OpFoldResult>{rowCount, rewriter.getIndexAttr(blocking.block)},
      ArrayRef<OpFoldResult>{one, one});
  return forall.getResult(0);
}

/// y[m, n0 : +count] += a[m, :] · w[n0 : +count, :]ᵀ for a few rows m,
/// each weight read once from memory, in place: threads over blocks of
/// `block` weight rows; for each row of `a`, f32 lane-wise partial sums
/// p[n, l] = Σ_kc a[m, kc·L + l] · w[n, kc·L + l] (L = `lanes`), which
/// tfm-cpu-vectorize turns into one accumulator per weight row, then
/// y[m, n] += Σ_l p[n, l]. The block's weight rows stay in cache from one
/// row of `a` to the next. Returns the updated `y`.
Value streamColumns(RewriterBase &rewriter, Location loc, Value a, Value w,
                    Value y, Value fillValue, int64_t lanes, int64_t block,
                    int64_t n0, int64_t count) {
  int64_t depth = cast<RankedTensorType>(w.getType()).getDimSize(1);
  int64_t chunks = depth / lanes;
  OpFoldResult rowCount = tensor::getMixedSize(rewriter, loc, a, 0);
  Value rowsValue = getValueOrCreateConstantIndexOp(rewriter, loc, rowCount);
  auto index = [&](OpBuilder &b, Location l, int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, l, value);
  };
  /// [rows, depth] -> [rows, chunks, lanes], a view.
  auto chunked = [&](OpBuilder &b, Location l, Value tile) -> Value {
    auto type = cast<RankedTensorType>(tile.getType());
    return tensor::ExpandShapeOp::create(
        b, l,
        RankedTensorType::get({type.getDimSize(0), chunks, lanes},
                              type.getElementType()),
        tile, SmallVector<ReassociationIndices>{{0}, {1, 2}});
  };

  auto forall = scf::ForallOp::create(
      rewriter, loc, ArrayRef<OpFoldResult>{rewriter.getIndexAttr(count / block)},
      ValueRange{y}, std::nullopt);
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(forall.getBody()->getTerminator());
  Value nBlock = arith::AddIOp::create(
      rewriter, loc,
      arith::MulIOp::create(rewriter, loc, forall.getInductionVar(0),
                            index(rewriter, loc, block)),
      index(rewriter, loc, n0));
  Value weights = chunked(
      rewriter, loc,
      slice2D(rewriter, loc, w, nBlock, rewriter.getIndexAttr(0),
              rewriter.getIndexAttr(block), rewriter.getIndexAttr(depth)));
  Value yBlock = slice2D(rewriter, loc, forall.getRegionIterArgs()[0],
                         rewriter.getIndexAttr(0), nBlock, rowCount,
                         rewriter.getIndexAttr(block));
  if (fillValue)
    yBlock = linalg::FillOp::create(rewriter, loc, fillValue, yBlock)
                 .getResult(0);
  auto rowLoop = scf::ForOp::create(
      rewriter, loc, index(rewriter, loc, 0), rowsValue,
      index(rewriter, loc, 1), ValueRange{yBlock},
      [&](OpBuilder &b, Location l, Value m, ValueRange carried) {
        LinalgBuilder lb(b, l);
        Value row = chunked(b, l,
                            slice2D(b, l, a, m, b.getIndexAttr(0),
                                    b.getIndexAttr(1),
                                    b.getIndexAttr(depth)));
        SmallVector<OpFoldResult> partialSizes{
            b.getIndexAttr(1), b.getIndexAttr(block), b.getIndexAttr(lanes)};
        Value partial = lb.generic(
            {row, weights}, {lb.map(4, {0, 2, 3}), lb.map(4, {1, 2, 3})},
            lb.filledF32(partialSizes, 0.0), lb.map(4, {0, 1, 3}),
            {Iter::parallel, Iter::parallel, Iter::reduction, Iter::parallel},
            [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
              Value product = arith::MulFOp::create(
                  nb, nl, LinalgBuilder::toF32(nb, nl, args[0]),
                  LinalgBuilder::toF32(nb, nl, args[1]));
              return arith::AddFOp::create(nb, nl, args[2], product);
            });
        Value out = slice2D(b, l, carried[0], m, b.getIndexAttr(0),
                            b.getIndexAttr(1), b.getIndexAttr(block));
        Value sums = lb.generic(
            {partial}, {lb.map(3, {0, 1, 2})}, out, lb.map(3, {0, 1}),
            {Iter::parallel, Iter::parallel, Iter::reduction},
            [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
              return arith::AddFOp::create(nb, nl, args[1], args[0]);
            });
        scf::YieldOp::create(
            b, l,
            insert2D(b, l, sums, carried[0], m, b.getIndexAttr(0),
                     b.getIndexAttr(1), b.getIndexAttr(block)));
      });
  rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
  OpFoldResult one = rewriter.getIndexAttr(1);
  tensor::ParallelInsertSliceOp::create(
      rewriter, loc, rowLoop.getResult(0), forall.getRegionIterArgs()[0],
      ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0), nBlock},
      ArrayRef<OpFoldResult>{rowCount, rewriter.getIndexAttr(block)},
      ArrayRef<OpFoldResult>{one, one});
  return forall.getResult(0);
}

/// Replaces the projection `op` by the loops of the file comment: over the
/// columns that whole `main` blocks cover, then, where N has columns left
/// (a vocabulary of 1000 with 32-column blocks), over those with `tail`.
void tileProjection(RewriterBase &rewriter, linalg::GenericOp op,
                    const Blocking &main, std::optional<Blocking> tail,
                    int64_t lanes) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value a = op.getDpsInputs()[0], w = op.getDpsInputs()[1];
  Value y = op.getDpsInits()[0];
  // A filled init is filled block by block, by the thread that owns the
  // block, and the loops write into a buffer of their own: an
  // alloc_tensor, which CSE never merges with another projection's (a
  // shared tensor.empty would make bufferization copy one of them).
  Value fillValue;
  if (auto fill = y.getDefiningOp<linalg::FillOp>()) {
    fillValue = fill.getInputs()[0];
    y = fill.getOutputs()[0];
  }
  if (auto empty = y.getDefiningOp<tensor::EmptyOp>())
    y = bufferization::AllocTensorOp::create(rewriter, loc, empty.getType(),
                                             empty.getDynamicSizes());
  int64_t columns = cast<RankedTensorType>(w.getType()).getDimSize(0);
  int64_t mainColumns = tail ? columns - tail->block : columns;
  auto blocked = [&](OpBuilder &b, Location l) {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(b.getInsertionBlock(), b.getInsertionPoint());
    Value result = y;
    if (mainColumns)
      result = tileColumns(rewriter, l, a, w, result, fillValue, main, 0,
                           mainColumns);
    if (tail)
      result = tileColumns(rewriter, l, a, w, result, fillValue, *tail,
                           mainColumns, tail->block);
    scf::YieldOp::create(rewriter, l, result);
  };
  // Up to 4 register blocks of weight rows per thread iteration: a block
  // stays in L1/L2 across the rows of `a`, and N = 2048 gives 64 of them to
  // share out.
  int64_t streamBlock =
      blockSize(mainColumns, main.rows, 4 * main.rows);
  auto streamed = [&](OpBuilder &b, Location l) {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(b.getInsertionBlock(), b.getInsertionPoint());
    Value result = y;
    if (mainColumns)
      result = streamColumns(rewriter, l, a, w, result, fillValue, lanes,
                             streamBlock, 0, mainColumns);
    if (tail)
      result = streamColumns(rewriter, l, a, w, result, fillValue, lanes,
                             tail->block, mainColumns, tail->block);
    scf::YieldOp::create(rewriter, l, result);
  };
  // Fewer rows than a register block (a decode step) stream the weights
  // instead: packing them would cost more than the products.
  Value rows = tensor::DimOp::create(rewriter, loc, a, 0);
  Value fewRows = arith::CmpIOp::create(
      rewriter, loc, arith::CmpIPredicate::ult, rows,
      arith::ConstantIndexOp::create(rewriter, loc, main.rows));
  auto branch = scf::IfOp::create(rewriter, loc, fewRows, streamed, blocked);
  rewriter.replaceOp(op, branch.getResult(0));
}

struct TfmCPUTileProjectionsPass
    : CPUCodegenPass<
          tfm::impl::TfmCPUTileProjectionsPassBase<TfmCPUTileProjectionsPass>> {

  void runOnOperation() override {
    if (!checkCodegenOptions())
      return;
    SmallVector<linalg::GenericOp> projections;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (isProjection(op))
        projections.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : projections) {
      auto weights = cast<RankedTensorType>(op.getDpsInputs()[1].getType());
      int64_t columns = weights.getDimSize(0);
      // Nothing to block without columns or steps (y = 0, or the bias).
      if (columns == 0 || weights.getDimSize(1) == 0)
        continue;
      Blocking main;
      main.rows = registerRows;
      main.depth =
          blockSize(weights.getDimSize(1), vectorWidth, kMaxPanelDepth);
      // A K that no vector divides stays as it is.
      if (!main.depth)
        continue;
      // NR fills the 2 x register-rows accumulators with MR rows, or half
      // of them where only one vector divides N. Columns that no vector
      // divides (N % vector-width) form one narrower tail block.
      main.columns = columns % (2 * vectorWidth) != 0 &&
                             columns % vectorWidth == 0
                         ? vectorWidth
                         : 2 * vectorWidth;
      int64_t mainColumns = columns - columns % main.columns;
      main.block = blockSize(mainColumns, main.columns,
                             std::max(kMaxBlockColumns, main.columns));
      std::optional<Blocking> tail;
      if (int64_t left = columns - mainColumns) {
        tail = main;
        tail->columns = tail->block = left;
      }
      tileProjection(rewriter, op, main, tail, vectorWidth);
    }
  }
};

} // namespace

std::unique_ptr<Pass>
mlir::tfm::createTfmCPUTileProjectionsPass(const CPUCodegenOptions &options) {
  auto pass = std::make_unique<TfmCPUTileProjectionsPass>();
  pass->setCodegenOptions(options);
  return pass;
}

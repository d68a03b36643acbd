//===- PackedColumnBlock.cpp - a projection's column block, packed --------===//
//
// One [M, NB] column block of a projection over panels of its weights,
// packed per block (to f32, or to bf16 pairs for dot products or AMX
// tiles) or once (prepack-weights): the loops of TileProjections.cpp's
// file comment inside one column block.
//
//===----------------------------------------------------------------------===//

#include "ColumnBlocks.h"
#include "PackedWeights.h"

#include "tfm/Codegen/Projection.h"
#include "tfm/Dialect/Tfm/Utils/LinalgBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::projection;

namespace {

using Iter = utils::IteratorType;

/// Called for each register block, with its first column and row, before
/// each of the `parts` of its panel's steps (part = 0 .. parts - 1).
using PanelBlockHook = function_ref<void(
    OpBuilder &, Location, Value n1, Value m0, int64_t part, int64_t parts)>;

/// Parts of a panel's steps between which a hook runs: the next panel's
/// prefetches spread over the products rather than issued at once.
constexpr int64_t kPrefetchParts = 4;
/// Steps of a part at least, so that the K loop of each part stays long.
constexpr int64_t kMinPartSteps = 64;

/// `y` [M, NB] += a[m0 : M, k0 : +KC] · packed [NB / NR, KC, NR] (its
/// [KC, NR] panels, packScaled) over rows [begin, end) in steps of `rows`
/// (whose count divides end - begin), each register block of rows against
/// every panel in turn, calling `eachBlock` (if any) at every block. Its
/// rows stay in L1 while the panels stream from L2: with the panels outside
/// and the rows inside, 4-8% slower on an Intel Xeon, where the 8 rows
/// (8 KiB apart for K = 2048) compete with a 32 KiB panel for the same L1
/// sets.
Value rowsAcrossPanels(OpBuilder &b, Location loc, Value a, Value packed,
                       Value y, Value k0, Value begin, Value end, int64_t rows,
                       PanelBlockHook eachBlock) {
  auto packedType = cast<RankedTensorType>(packed.getType());
  int64_t depth = packedType.getDimSize(1);
  int64_t columns = packedType.getDimSize(2);
  int64_t parts = eachBlock && depth % (kPrefetchParts * kMinPartSteps) == 0
                      ? kPrefetchParts
                      : 1;
  int64_t partDepth = depth / parts;
  auto panelType = RankedTensorType::get({partDepth, columns}, b.getF32Type());
  Value step = arith::ConstantIndexOp::create(b, loc, rows);
  return scf::ForOp::create(
             b, loc, begin, end, step, ValueRange{y},
             [&](OpBuilder &rb, Location rl, Value m0, ValueRange rowCarried) {
               LinalgBuilder lb(rb, rl);
               Value rowsOfA =
                   lb.tileF32(slice2D(rb, rl, a, m0, k0, rb.getIndexAttr(rows),
                                      rb.getIndexAttr(depth)),
                              /*transpose=*/false);
               auto panels = scf::ForOp::create(
                   rb, rl, arith::ConstantIndexOp::create(rb, rl, 0),
                   arith::ConstantIndexOp::create(rb, rl,
                                                  packedType.getDimSize(0)),
                   arith::ConstantIndexOp::create(rb, rl, 1), rowCarried,
                   [&](OpBuilder &nb, Location nl, Value p,
                       ValueRange carried) {
                     Value n1 = arith::MulIOp::create(
                         nb, nl, p,
                         arith::ConstantIndexOp::create(nb, nl, columns));
                     Value product = slice2D(nb, nl, carried[0], m0, n1,
                                             nb.getIndexAttr(rows),
                                             nb.getIndexAttr(columns));
                     for (int64_t part = 0; part < parts; ++part) {
                       if (eachBlock)
                         eachBlock(nb, nl, n1, m0, part, parts);
                       OpFoldResult k1 = nb.getIndexAttr(part * partDepth);
                       Value partRows =
                           parts == 1
                               ? rowsOfA
                               : slice2D(nb, nl, rowsOfA, nb.getIndexAttr(0),
                                         k1, nb.getIndexAttr(rows),
                                         nb.getIndexAttr(partDepth));
                       OpFoldResult one = nb.getIndexAttr(1);
                       Value panel = tensor::ExtractSliceOp::create(
                           nb, nl, panelType, packed,
                           ArrayRef<OpFoldResult>{p, k1, nb.getIndexAttr(0)},
                           ArrayRef<OpFoldResult>{one,
                                                  nb.getIndexAttr(partDepth),
                                                  nb.getIndexAttr(columns)},
                           ArrayRef<OpFoldResult>{one, one, one});
                       product = linalg::MatmulOp::create(
                                     nb, nl, ValueRange{partRows, panel},
                                     ValueRange{product})
                                     .getResult(0);
                     }
                     scf::YieldOp::create(nb, nl,
                                          insert2D(nb, nl, product, carried[0],
                                                   m0, n1,
                                                   nb.getIndexAttr(rows),
                                                   nb.getIndexAttr(columns)));
                   });
               scf::YieldOp::create(rb, rl, panels.getResult(0));
             })
      .getResult(0);
}

/// Rows left after the f32 register blocks from which one block padded with
/// zero rows (paddedRowBlock) beats them one at a time. Whole f32 model,
/// Intel Xeon, 2 threads, call by call: 1.06x with 7 rows left (S = 135),
/// 1.0x with 3 and 4, 0.95x with 1.
constexpr int64_t kMinPaddedRows = 4;

/// `y` [M, NB] += a[begin : M, k0 : +KC] · packed (packScaled) for the fewer
/// than `rows` rows [begin, M) (at most one block), as rowsAcrossPanels
/// runs one register block: their rows of `a` in a block padded with rows
/// of zeros (copied per panel: at most `rows` x KC values against the
/// block's KC x NB products), summed into a scratch holding their rows of
/// `y`, of which only those rows go back. One row at a time, 7 rows cost an
/// f32 model of 135 positions 19 ms more than 8 in a block (150 ms).
Value paddedRowBlock(OpBuilder &b, Location loc, Value a, Value packed, Value y,
                     Value k0, Value begin, Value count, int64_t rows) {
  int64_t depth = cast<RankedTensorType>(packed.getType()).getDimSize(1);
  auto index = [](OpBuilder &ib, Location il, int64_t value) -> Value {
    return arith::ConstantIndexOp::create(ib, il, value);
  };
  return scf::ForOp::create(
             b, loc, begin, count, index(b, loc, rows), ValueRange{y},
             [&](OpBuilder &rb, Location rl, Value m0, ValueRange carried) {
               Value left = arith::SubIOp::create(rb, rl, count, m0);
               Value padded =
                   zeroPaddedRows(rb, rl, a, m0, k0, left, rows, depth);
               scf::YieldOp::create(
                   rb, rl,
                   sumIntoPaddedRows(
                       rb, rl, carried[0], m0, left, rows,
                       [&](OpBuilder &sb, Location sl, Value scratch) {
                         return rowsAcrossPanels(
                             sb, sl, padded, packed, scratch, index(sb, sl, 0),
                             index(sb, sl, 0), index(sb, sl, rows), rows, {});
                       }));
             })
      .getResult(0);
}

/// Prefetches into L2 what packing the next panel of a column block reads,
/// w[row : +NB, k : +KC] after w[nBlock : +NB, k0 : +KC] (the next step of
/// k, or the first panel of the next column block), while this panel's
/// products run. Packing reads a few lines from each of NB weight rows,
/// which the hardware prefetchers do not follow: without this, the
/// products wait for those reads at every panel (with the weights in L3,
/// about a tenth of a projection of 128 rows). Each register block of rows
/// prefetches its share of the weight rows of its NR columns.
///
/// With the weights packed once (`packed`: w is [ceil(N / NR), K, NR]), the
/// next panels themselves: each NR-column panel's KC steps of NR values
/// (contiguous, but in 4 KiB pages the hardware prefetchers stop at; read
/// without this, f32 projections ran 3-14% slower than packing per call),
/// shared out over the register blocks and the parts of their steps.
class NextPanelPrefetch {
public:
  NextPanelPrefetch(OpBuilder &b, Location loc, Value w, Value fullRows,
                    const Blocking &blocking, int64_t panelDepth, bool packed)
      : blocking(blocking), panelDepth(panelDepth), packed(packed) {
    auto type = cast<RankedTensorType>(w.getType());
    weights = bufferization::ToBufferOp::create(
        b, loc, bufferization::getMemRefTypeWithFullyDynamicLayout(type), w,
        /*readOnly=*/true);
    weightRows =
        packed ? type.getDimSize(0) * type.getDimSize(2) : type.getDimSize(0);
    panelColumns = packed ? type.getDimSize(2) : blocking.columns;
    depth = type.getDimSize(1);
    int64_t elementBytes = type.getElementTypeBitWidth() / 8;
    lineSteps = kCacheLine / elementBytes;
    // Lines per weight row's panel, or per step of a packed panel.
    lines = llvm::divideCeil(
        (packed ? panelColumns : panelDepth) * elementBytes, kCacheLine);
    blocks = arith::MaxSIOp::create(
        b, loc,
        arith::DivUIOp::create(b, loc, fullRows, index(b, loc, blocking.rows)),
        index(b, loc, 1));
    // Weight rows per register block: NR over the blocks (at least one).
    if (!packed)
      rowsPerBlock = arith::CeilDivUIOp::create(
          b, loc, index(b, loc, blocking.columns), blocks);
  }

  /// Which panel follows the one at (nBlock, k0).
  void setPanel(OpBuilder &b, Location loc, Value nBlock, Value k0) {
    Value step = arith::AddIOp::create(b, loc, k0, index(b, loc, panelDepth));
    Value sameBlock = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            step, index(b, loc, depth));
    Value nextBlock = arith::MinSIOp::create(
        b, loc,
        arith::AddIOp::create(b, loc, nBlock, index(b, loc, blocking.block)),
        index(b, loc, weightRows - blocking.block));
    nextRow = arith::SelectOp::create(b, loc, sameBlock, nBlock, nextBlock);
    nextStep =
        arith::SelectOp::create(b, loc, sameBlock, step, index(b, loc, 0));
  }

  /// Part `part` of `parts` of the share of the register block at row m0
  /// of the columns at n1: that part of each of its rows' lines (packed:
  /// of its steps).
  void share(OpBuilder &b, Location loc, Value n1, Value m0, int64_t part = 0,
             int64_t parts = 1) {
    Value block =
        arith::DivUIOp::create(b, loc, m0, index(b, loc, blocking.rows));
    if (packed)
      return packedShare(b, loc, n1, block, part, parts);
    Value first = arith::AddIOp::create(
        b, loc, n1, arith::MulIOp::create(b, loc, block, rowsPerBlock));
    Value last = arith::MinSIOp::create(
        b, loc, arith::AddIOp::create(b, loc, first, rowsPerBlock),
        arith::AddIOp::create(b, loc, n1, index(b, loc, blocking.columns)));
    scf::ForOp::create(
        b, loc, first, last, index(b, loc, 1), ValueRange{},
        [&](OpBuilder &rb, Location rl, Value r, ValueRange) {
          Value row = arith::AddIOp::create(rb, rl, nextRow, r);
          for (int64_t line = part * lines / parts,
                       end = (part + 1) * lines / parts;
               line < end; ++line)
            memref::PrefetchOp::create(
                rb, rl, weights,
                ValueRange{row, arith::AddIOp::create(
                                    rb, rl, nextStep,
                                    index(rb, rl, line * lineSteps))},
                /*isWrite=*/false, /*localityHint=*/2, /*isDataCache=*/true);
          scf::YieldOp::create(rb, rl);
        });
  }

private:
  static constexpr int64_t kCacheLine = 64;
  static Value index(OpBuilder &b, Location loc, int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }

  /// share() of a packed panel: the steps of slot block x parts + part.
  void packedShare(OpBuilder &b, Location loc, Value n1, Value block,
                   int64_t part, int64_t parts) {
    Value panel = arith::DivUIOp::create(
        b, loc, arith::AddIOp::create(b, loc, nextRow, n1),
        index(b, loc, panelColumns));
    Value perSlot = arith::CeilDivUIOp::create(
        b, loc, index(b, loc, panelDepth),
        arith::MulIOp::create(b, loc, blocks, index(b, loc, parts)));
    Value slot = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, block, index(b, loc, parts)),
        index(b, loc, part));
    Value first = arith::MinSIOp::create(
        b, loc, arith::MulIOp::create(b, loc, slot, perSlot),
        index(b, loc, panelDepth));
    Value last = arith::MinSIOp::create(
        b, loc, arith::AddIOp::create(b, loc, first, perSlot),
        index(b, loc, panelDepth));
    scf::ForOp::create(
        b, loc, first, last, index(b, loc, 1), ValueRange{},
        [&](OpBuilder &rb, Location rl, Value r, ValueRange) {
          Value step = arith::AddIOp::create(rb, rl, nextStep, r);
          for (int64_t line = 0; line < lines; ++line)
            memref::PrefetchOp::create(
                rb, rl, weights,
                ValueRange{panel, step, index(rb, rl, line * lineSteps)},
                /*isWrite=*/false, /*localityHint=*/2, /*isDataCache=*/true);
          scf::YieldOp::create(rb, rl);
        });
  }

  const Blocking &blocking;
  int64_t panelDepth, weightRows, depth, lineSteps, lines;
  /// NR of the weights' panels: a tail block's columns are fewer.
  int64_t panelColumns;
  bool packed;
  Value weights, blocks, rowsPerBlock, nextRow, nextStep;
};

} // namespace

Value mlir::tfm::projection::packedColumnBlock(OpBuilder &builder, Location loc,
                                               Value a, Value w, Value scale,
                                               linalg::GenericOp transform,
                                               Value init, Value nBlock,
                                               const Blocking &blocking,
                                               bool pairs, bool amx,
                                               Value amxTail, Value prepacked) {
  int64_t depth = cast<RankedTensorType>(w.getType()).getDimSize(1);
  int64_t panelDepth =
      pairs ? blockSize(depth, 32, kMaxPanelDepth) : blocking.depth;
  // Blocks of 32 rows on AMX tiles, the last padded with rows of zeros;
  // else MR-row blocks, then single rows.
  bool amxTiles =
      pairs && amx && amxTail && canUseAMXTiles(blocking, panelDepth);
  if (amxTiles)
    panelDepth = blockSize(depth, 32, kMaxAMXPanelDepth);
  OpFoldResult rowCount = tensor::getMixedSize(builder, loc, a, 0);
  Value rowsValue = getValueOrCreateConstantIndexOp(builder, loc, rowCount);
  auto index = [&](OpBuilder &b, Location l, int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, l, value);
  };
  // Rows below fullRows come in blocks of MR, the rest one by one.
  Value fullRows = arith::SubIOp::create(
      builder, loc, rowsValue,
      arith::RemUIOp::create(builder, loc, rowsValue,
                             index(builder, loc, blocking.rows)));
  // Rows below amxRows come in whole 32-row blocks.
  Value amxRows;
  if (amxTiles)
    amxRows = arith::SubIOp::create(
        builder, loc, rowsValue,
        arith::RemUIOp::create(builder, loc, rowsValue,
                               index(builder, loc, kAMXBlockRows)));
  NextPanelPrefetch prefetch(builder, loc, prepacked ? prepacked : w, fullRows,
                             blocking, panelDepth,
                             /*packed=*/bool(prepacked));
  auto kLoop = scf::ForOp::create(
      builder, loc, index(builder, loc, 0), index(builder, loc, depth),
      index(builder, loc, panelDepth), ValueRange{init},
      [&](OpBuilder &b, Location l, Value k0, ValueRange carried) {
        prefetch.setPanel(b, l, nBlock, k0);
        // Pairs read rows that are bf16 already: rounded before the column
        // loop with any transform and column scale (roundOnce in
        // tileProjectionGroups), rather than the scale going on every
        // weight as it is packed.
        assert((!pairs || (!scale && !transform &&
                           getElementTypeOrSelf(a.getType()).isBF16())) &&
               "pairs read rows rounded before the column loop");
        assert((!prepacked || !pairs) && "only f32 panels are packed once");
        Value packed;
        if (prepacked) {
          // A tail block reads the first columns of the last panel, which
          // is padded with zeros to NR columns.
          int64_t packedColumns =
              cast<RankedTensorType>(prepacked.getType()).getDimSize(2);
          OpFoldResult one = b.getIndexAttr(1);
          Value firstPanel =
              arith::DivUIOp::create(b, l, nBlock, index(b, l, packedColumns));
          packed = tensor::ExtractSliceOp::create(
              b, l,
              RankedTensorType::get({blocking.block / blocking.columns,
                                     panelDepth, blocking.columns},
                                    b.getF32Type()),
              prepacked,
              ArrayRef<OpFoldResult>{firstPanel, k0, b.getIndexAttr(0)},
              ArrayRef<OpFoldResult>{
                  b.getIndexAttr(blocking.block / blocking.columns),
                  b.getIndexAttr(panelDepth), b.getIndexAttr(blocking.columns)},
              ArrayRef<OpFoldResult>{one, one, one});
        } else {
          packed = pairs
                       ? packBF16Pairs(b, l, w, nBlock, k0, blocking.block,
                                       panelDepth, /*asBF16=*/amxTiles)
                       : packScaled(b, l, w, scale, nBlock, k0, blocking.block,
                                    panelDepth, blocking.columns);
        }
        // The rows the blocks read, and their first step.
        Value rows = a, rowStep = k0;
        if (transform) {
          rows = transformedRows(b, l, transform, b.getIndexAttr(0), rowCount,
                                 k0, panelDepth);
          rowStep = index(b, l, 0);
        }
        // Rows [begin, end) against each [KC, NR] panel in turn.
        auto overPanels = [&](OpBuilder &cb, Location cl, Value y, Value begin,
                              Value end, int64_t blockRows, bool prefetches,
                              bool tiles = false, bool paddedTail = false) {
          if (!tiles && !pairs) {
            auto prefetchShare = [&](OpBuilder &pb, Location pl, Value n1,
                                     Value m0, int64_t part, int64_t parts) {
              prefetch.share(pb, pl, n1, m0, part, parts);
            };
            PanelBlockHook hook;
            if (prefetches)
              hook = prefetchShare;
            return rowsAcrossPanels(cb, cl, rows, packed, y, rowStep, begin,
                                    end, blockRows, hook);
          }
          return scf::ForOp::create(
                     cb, cl, index(cb, cl, 0), index(cb, cl, blocking.block),
                     index(cb, cl, blocking.columns), ValueRange{y},
                     [&](OpBuilder &nb, Location nl, Value n1,
                         ValueRange inner) {
                       Value strip =
                           slice2D(nb, nl, inner[0], nb.getIndexAttr(0), n1,
                                   rowCount, nb.getIndexAttr(blocking.columns));
                       auto prefetchShare = [&](OpBuilder &pb, Location pl,
                                                Value m0) {
                         prefetch.share(pb, pl, n1, m0);
                       };
                       RowBlockHook hook;
                       if (prefetches)
                         hook = prefetchShare;
                       if (paddedTail)
                         strip = amxTailBlock(nb, nl, amxTail, packed, n1,
                                              strip, k0, begin, end);
                       else if (tiles)
                         strip = amxRowBlocks(nb, nl, rows, packed, n1, strip,
                                              rowStep, begin, end, blockRows);
                       else
                         strip = dotRowBlocks(nb, nl, rows, packed, n1,
                                              blocking.columns, strip, rowStep,
                                              begin, end, blockRows, hook);
                       scf::YieldOp::create(
                           nb, nl,
                           insert2D(nb, nl, strip, inner[0], nb.getIndexAttr(0),
                                    n1, rowCount,
                                    nb.getIndexAttr(blocking.columns)));
                     })
              .getResult(0);
        };
        // Whole register blocks of rows in chunks of kMaxChunkRows (for
        // pairs, each chunk against every panel while its rows stay in
        // cache); then the rows left, one by one.
        int64_t chunkBlock = amxTiles ? kAMXBlockRows : blocking.rows;
        int64_t chunkRows =
            std::max(chunkBlock, kMaxChunkRows - kMaxChunkRows % chunkBlock);
        Value chunked = amxTiles ? amxRows : fullRows;
        auto chunkLoop = scf::ForOp::create(
            b, l, index(b, l, 0), chunked, index(b, l, chunkRows), carried,
            [&](OpBuilder &cb, Location cl, Value c0, ValueRange inner) {
              Value end = arith::MinSIOp::create(
                  cb, cl,
                  arith::AddIOp::create(cb, cl, c0, index(cb, cl, chunkRows)),
                  chunked);
              scf::YieldOp::create(
                  cb, cl,
                  overPanels(cb, cl, inner[0], c0, end, chunkBlock,
                             /*prefetches=*/!amxTiles, /*tiles=*/amxTiles));
            });
        Value y = chunkLoop.getResult(0);
        // Fewer rows left than a block: one more block, padded with zero
        // rows (f32 from kMinPaddedRows rows on), or one row at a time.
        if (amxTiles) {
          y = overPanels(b, l, y, amxRows, rowsValue, kAMXBlockRows,
                         /*prefetches=*/false, /*tiles=*/true,
                         /*paddedTail=*/true);
        } else if (pairs) {
          y = overPanels(b, l, y, fullRows, rowsValue, 1,
                         /*prefetches=*/false);
        } else {
          Value padded = arith::CmpIOp::create(
              b, l, arith::CmpIPredicate::uge,
              arith::SubIOp::create(b, l, rowsValue, fullRows),
              index(b, l, kMinPaddedRows));
          Value single =
              arith::SelectOp::create(b, l, padded, fullRows, rowsValue);
          y = overPanels(b, l, y, fullRows, single, 1, /*prefetches=*/false);
          y = paddedRowBlock(b, l, rows, packed, y, rowStep, single, rowsValue,
                             blocking.rows);
        }
        scf::YieldOp::create(b, l, y);
      });
  return kLoop.getResult(0);
}

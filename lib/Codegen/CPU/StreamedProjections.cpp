//===- StreamedProjections.cpp - projections of a few rows ----------------===//
//
// The forms of tfm-cpu-tile-projections for a few rows (a decode step, a
// short prompt) that read the weights in place, each once, rather than
// packing them: dot products along K of rows of `a` with weight rows,
// accumulated in f32 lanes and summed at the end, through f32
// multiply-adds or AVX-512 BF16 dot products (vdpbf16ps).
//
//===----------------------------------------------------------------------===//

#include "ProjectionBlocks.h"

#include "tfm/Codegen/Projection.h"

#include "tfm/Dialect/Tfm/Utils/LinalgBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"

using namespace mlir;
using namespace mlir::tfm;

namespace mlir::tfm::projection {

using Iter = utils::IteratorType;

/// The streamed form for a few rows, each weight read once, in place: for
/// each row m of `a`, f32 lane-wise partial sums p[n, l] = Σ_kc
/// a[m, kc·L + l] · w[n, kc·L + l] (L = `lanes`), which tfm-cpu-vectorize
/// turns into one accumulator per weight row, then y[m, n] += Σ_l p[n, l].
/// The block's weight rows stay in cache from one row of `a` to the next.
/// With a `transform`, each row is transformed first.
Value streamedColumnBlock(OpBuilder &builder, Location loc, Value a, Value w,
                          Value scale, linalg::GenericOp transform, Value init,
                          Value nBlock, int64_t lanes, Value firstRow) {
  int64_t block = cast<RankedTensorType>(init.getType()).getDimSize(1);
  int64_t depth = cast<RankedTensorType>(w.getType()).getDimSize(1);
  int64_t chunks = depth / lanes;
  Value rowsValue = tensor::DimOp::create(builder, loc, a, 0);
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
  Value weights = chunked(
      builder, loc,
      slice2D(builder, loc, w, nBlock, builder.getIndexAttr(0),
              builder.getIndexAttr(block), builder.getIndexAttr(depth)));
  auto rowLoop = scf::ForOp::create(
      builder, loc, firstRow, rowsValue, index(builder, loc, 1),
      ValueRange{init},
      [&](OpBuilder &b, Location l, Value m, ValueRange carried) {
        LinalgBuilder lb(b, l);
        Value row = transform
                        ? transformedRows(b, l, transform, m, b.getIndexAttr(1),
                                          b.getIndexAttr(0), depth)
                        : slice2D(b, l, a, m, b.getIndexAttr(0),
                                  b.getIndexAttr(1), b.getIndexAttr(depth));
        // A column scale multiplies the row once, not every weight row.
        if (scale)
          row = lb.generic(
              {row, scale}, {lb.map(2, {0, 1}), lb.map(2, {1})},
              lb.empty({b.getIndexAttr(1), b.getIndexAttr(depth)}, lb.f32()),
              lb.map(2, {0, 1}), {Iter::parallel, Iter::parallel},
              [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
                return arith::MulFOp::create(
                    nb, nl, LinalgBuilder::toF32(nb, nl, args[0]),
                    LinalgBuilder::toF32(nb, nl, args[1]));
              });
        row = chunked(b, l, row);
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
        scf::YieldOp::create(b, l,
                             insert2D(b, l, sums, carried[0], m,
                                      b.getIndexAttr(0), b.getIndexAttr(1),
                                      b.getIndexAttr(block)));
      });
  return rowLoop.getResult(0);
}

/// A streamed dot step: weight rows read at once for one row of `a` (8
/// accumulators and 8 weight vectors in registers), and for a block of
/// kDotRowBlock rows of `a` (4 x 4 accumulators: each weight vector read
/// serves 4 rows, each row vector 4 weight rows); the bf16 values of a
/// row a step reads.
constexpr int64_t kDotRows = 8;
constexpr int64_t kDotRowBlock = 4;
constexpr int64_t kDotBlockColumns = 4;
constexpr int64_t kDotPairs = 32;
/// f32 lanes of the 4 x 4 blocks: AVX-512's, whose 32 registers hold the
/// 16 accumulators and the 8 vectors a step reads.
constexpr int64_t kFMALanes = 16;

/// Whether the streamed form can use AVX-512 BF16 dot products for a block
/// of `block` rows of `w`.
bool canStreamBF16Dot(Value w, int64_t block) {
  auto type = cast<RankedTensorType>(w.getType());
  return type.getElementType().isBF16() && block % kDotRows == 0 &&
         type.getDimSize(1) % kDotPairs == 0;
}

namespace {

/// The `width` values of row `i` of `source` from step `k`, widened to f32
/// with `widen` (as they are for f32 or bf16 pairs).
Value stepVector(OpBuilder &b, Location l, Value source, Value i, Value k,
                 int64_t width, bool widen) {
  Type element = getElementTypeOrSelf(source.getType());
  Value padding = arith::ConstantOp::create(b, l, b.getZeroAttr(element));
  Value vector = vector::TransferReadOp::create(
      b, l, VectorType::get({width}, element), source, ValueRange{i, k},
      padding, ArrayRef<bool>{true});
  if (!widen || element.isF32())
    return vector;
  return arith::ExtFOp::create(b, l, VectorType::get({width}, b.getF32Type()),
                               vector);
}

/// `out` [rows, block] += `x` [rows, depth] · w[nBlock : +block, :]ᵀ,
/// `columns` weight rows at a time: rows x columns accumulators of f32
/// lanes, then each accumulator's lane sum. With `lanes` = 0, x is bf16
/// and each step adds the products of 32 bf16 pairs per accumulator
/// (vdpbf16ps); else each step is a multiply-add of `lanes` values of x
/// and w widened to f32.
Value dotRows(OpBuilder &builder, Location loc, Value x, Value w, Value nBlock,
              Value out, int64_t rows, int64_t columns, int64_t lanes = 0) {
  int64_t block = cast<RankedTensorType>(out.getType()).getDimSize(1);
  int64_t depth = cast<RankedTensorType>(w.getType()).getDimSize(1);
  Type f32 = builder.getF32Type();
  auto index = [](OpBuilder &b, Location l, int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, l, value);
  };
  bool pairs = lanes == 0;
  int64_t width = pairs ? kDotPairs : lanes;
  auto sumType = VectorType::get({pairs ? kDotPairs / 2 : lanes}, f32);
  Value zeroLanes = arith::ConstantOp::create(
      builder, loc, sumType,
      DenseElementsAttr::get(sumType, builder.getF32FloatAttr(0)));
  // A step's vector of `source` at [i, k], widened to f32 unless pairs.
  auto read = [&](OpBuilder &b, Location l, Value source, Value i,
                  Value k) -> Value {
    return stepVector(b, l, source, i, k, width, !pairs);
  };
  auto groups = scf::ForOp::create(
      builder, loc, index(builder, loc, 0), index(builder, loc, block),
      index(builder, loc, columns), ValueRange{out},
      [&](OpBuilder &gb, Location gl, Value r0, ValueRange groupOut) {
        Value first = arith::AddIOp::create(gb, gl, nBlock, r0);
        auto steps = scf::ForOp::create(
            gb, gl, index(gb, gl, 0), index(gb, gl, depth),
            index(gb, gl, width), SmallVector<Value>(rows * columns, zeroLanes),
            [&](OpBuilder &sb, Location sl, Value k, ValueRange sums) {
              SmallVector<Value> xs, weights;
              for (int64_t i = 0; i < rows; ++i)
                xs.push_back(read(sb, sl, x, index(sb, sl, i), k));
              for (int64_t j = 0; j < columns; ++j) {
                Value n =
                    arith::AddIOp::create(sb, sl, first, index(sb, sl, j));
                weights.push_back(read(sb, sl, w, n, k));
              }
              SmallVector<Value> next;
              for (int64_t i = 0; i < rows; ++i)
                for (int64_t j = 0; j < columns; ++j) {
                  Value sum = sums[i * columns + j];
                  next.push_back(
                      pairs ? x86vector::DotBF16Op::create(sb, sl, sumType, sum,
                                                           xs[i], weights[j])
                                  .getResult()
                            : vector::FMAOp::create(sb, sl, xs[i], weights[j],
                                                    sum)
                                  .getResult());
                }
              scf::YieldOp::create(sb, sl, next);
            });
        Value updated = groupOut[0];
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < columns; ++j) {
            Value total =
                vector::ReductionOp::create(gb, gl, vector::CombiningKind::ADD,
                                            steps.getResult(i * columns + j));
            SmallVector<Value> at{
                index(gb, gl, i),
                arith::AddIOp::create(gb, gl, r0, index(gb, gl, j))};
            Value previous = tensor::ExtractOp::create(gb, gl, updated, at);
            updated = tensor::InsertOp::create(
                gb, gl, arith::AddFOp::create(gb, gl, previous, total), updated,
                at);
          }
        scf::YieldOp::create(gb, gl, updated);
      });
  return groups.getResult(0);
}

} // namespace

/// The streamed form with AVX-512 BF16 dot products (vdpbf16ps), the
/// weights read in place: blocks of kDotRowBlock rows of `a` (bf16, rounded
/// once per call by the caller), then the rows left one by one, each run
/// against every weight row of the column block (dotRows), which stays in
/// L1/L2 for the next.
Value streamedDotColumnBlock(OpBuilder &builder, Location loc, Value a, Value w,
                             Value init, Value nBlock) {
  assert(getElementTypeOrSelf(a.getType()).isBF16() &&
         "dot products read rows rounded to bf16");
  int64_t block = cast<RankedTensorType>(init.getType()).getDimSize(1);
  int64_t depth = cast<RankedTensorType>(w.getType()).getDimSize(1);
  auto index = [](OpBuilder &b, Location l, int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, l, value);
  };
  Value rowCount = tensor::DimOp::create(builder, loc, a, 0);
  auto rowLoop = [&](Value begin, Value end, int64_t rows, int64_t columns,
                     Value y) {
    return scf::ForOp::create(
               builder, loc, begin, end, index(builder, loc, rows),
               ValueRange{y},
               [&](OpBuilder &b, Location l, Value m, ValueRange carried) {
                 Value tile =
                     slice2D(b, l, a, m, b.getIndexAttr(0),
                             b.getIndexAttr(rows), b.getIndexAttr(depth));
                 Value out =
                     slice2D(b, l, carried[0], m, b.getIndexAttr(0),
                             b.getIndexAttr(rows), b.getIndexAttr(block));
                 out = dotRows(b, l, tile, w, nBlock, out, rows, columns);
                 scf::YieldOp::create(
                     b, l,
                     insert2D(b, l, out, carried[0], m, b.getIndexAttr(0),
                              b.getIndexAttr(rows), b.getIndexAttr(block)));
               })
        .getResult(0);
  };
  Value blocked = arith::MulIOp::create(
      builder, loc,
      arith::DivUIOp::create(builder, loc, rowCount,
                             index(builder, loc, kDotRowBlock)),
      index(builder, loc, kDotRowBlock));
  Value y = rowLoop(index(builder, loc, 0), blocked, kDotRowBlock,
                    kDotBlockColumns, init);
  return rowLoop(blocked, rowCount, 1, kDotRows, y);
}

bool canStreamFMA(Value w, int64_t block, int64_t lanes) {
  auto type = cast<RankedTensorType>(w.getType());
  return lanes == kFMALanes && block % kDotBlockColumns == 0 &&
         type.getDimSize(1) % lanes == 0;
}

namespace {

/// `y` with its rows [m, m + rows) plus x[m : +rows, :] · w[nBlock :
/// +NB, :]ᵀ, `columns` weight rows at a time (dotRows through f32
/// multiply-adds).
Value fmaRows(OpBuilder &b, Location l, Value x, Value w, Value y, Value nBlock,
              Value m, int64_t rows, int64_t columns, int64_t lanes) {
  int64_t block = cast<RankedTensorType>(y.getType()).getDimSize(1);
  int64_t depth = cast<RankedTensorType>(w.getType()).getDimSize(1);
  Value out = slice2D(b, l, y, m, b.getIndexAttr(0), b.getIndexAttr(rows),
                      b.getIndexAttr(block));
  Value tile = slice2D(b, l, x, m, b.getIndexAttr(0), b.getIndexAttr(rows),
                       b.getIndexAttr(depth));
  out = dotRows(b, l, tile, w, nBlock, out, rows, columns, lanes);
  return insert2D(b, l, out, y, m, b.getIndexAttr(0), b.getIndexAttr(rows),
                  b.getIndexAttr(block));
}

/// Most 4-row blocks interleavedFMARows takes: streaming stops at
/// kFMAStreamRows.
constexpr int64_t kMaxInterleavedBlocks =
    llvm::divideCeil(kFMAStreamRows - 1, kDotRowBlock);

/// Steps of K per chunk of interleavedFMARows: a group's 4 weight rows of a
/// chunk (4 KiB) and the rows of `x` stay in L1 across the row blocks.
/// Against whole rows (no chunks), 256 ran a 2048 x 2048 projection of 16
/// rows 1.17x faster, 1024 1.13x (Intel Xeon, 2 threads, weights in L3).
constexpr int64_t kInterleavedChunk = 256;

/// `y` + x · w[nBlock : +NB, :]ᵀ for the `rowCount` (at least 4, below
/// kFMAStreamRows) rows of f32 `x`: for each group of 4 weight rows, K in
/// chunks, and in each chunk every block of 4 rows against the group (16
/// accumulators of f32 lanes kept per block in a scratch between chunks),
/// then the lane sums. The group's weights are read from memory during the
/// chunk's first block and from L1 for the others, so the reads spread
/// over the products. The last block's rows past the end read the last row
/// again and their sums are dropped: a whole block costs less than the 1 to
/// 3 rows left in a form of their own, which read the weights once more.
Value interleavedFMARows(OpBuilder &builder, Location loc, Value x, Value w,
                         Value nBlock, Value y, Value rowCount, int64_t lanes) {
  int64_t block = cast<RankedTensorType>(y.getType()).getDimSize(1);
  int64_t depth = cast<RankedTensorType>(w.getType()).getDimSize(1);
  int64_t chunk = blockSize(depth, lanes, kInterleavedChunk);
  constexpr int64_t sums = kDotRowBlock * kDotBlockColumns;
  Type f32 = builder.getF32Type();
  auto lanesType = VectorType::get({lanes}, f32);
  auto index = [](OpBuilder &b, Location l, int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, l, value);
  };
  auto read = [&](OpBuilder &b, Location l, Value source, Value i,
                  Value k) -> Value {
    return stepVector(b, l, source, i, k, lanes, /*widen=*/true);
  };
  Value blocks = arith::CeilDivUIOp::create(builder, loc, rowCount,
                                            index(builder, loc, kDotRowBlock));
  Value lastRow =
      arith::SubIOp::create(builder, loc, rowCount, index(builder, loc, 1));
  return scf::ForOp::create(
             builder, loc, index(builder, loc, 0), index(builder, loc, block),
             index(builder, loc, kDotBlockColumns), ValueRange{y},
             [&](OpBuilder &gb, Location gl, Value r0, ValueRange groupY) {
               Value first = arith::AddIOp::create(gb, gl, nBlock, r0);
               LinalgBuilder glb(gb, gl);
               Value scratch =
                   glb.filledF32({gb.getIndexAttr(kMaxInterleavedBlocks * sums),
                                  gb.getIndexAttr(lanes)},
                                 0.0);
               auto chunks = scf::ForOp::create(
                   gb, gl, index(gb, gl, 0), index(gb, gl, depth),
                   index(gb, gl, chunk), ValueRange{scratch},
                   [&](OpBuilder &cb, Location cl, Value k0,
                       ValueRange chunkAcc) {
                     auto rowBlocks = scf::ForOp::create(
                         cb, cl, index(cb, cl, 0), blocks, index(cb, cl, 1),
                         ValueRange{chunkAcc[0]},
                         [&](OpBuilder &rb, Location rl, Value blockIndex,
                             ValueRange acc) {
                           Value base = arith::MulIOp::create(
                               rb, rl, blockIndex, index(rb, rl, sums));
                           Value row0 = arith::MulIOp::create(
                               rb, rl, blockIndex, index(rb, rl, kDotRowBlock));
                           SmallVector<Value> rows;
                           for (int64_t i = 0; i < kDotRowBlock; ++i)
                             rows.push_back(arith::MinUIOp::create(
                                 rb, rl,
                                 arith::AddIOp::create(rb, rl, row0,
                                                       index(rb, rl, i)),
                                 lastRow));
                           Value zero = index(rb, rl, 0);
                           Value padding = arith::ConstantOp::create(
                               rb, rl, rb.getZeroAttr(f32));
                           SmallVector<Value> start;
                           for (int64_t s = 0; s < sums; ++s)
                             start.push_back(vector::TransferReadOp::create(
                                 rb, rl, lanesType, acc[0],
                                 ValueRange{arith::AddIOp::create(
                                                rb, rl, base, index(rb, rl, s)),
                                            zero},
                                 padding, ArrayRef<bool>{true}));
                           auto steps = scf::ForOp::create(
                               rb, rl, k0,
                               arith::AddIOp::create(rb, rl, k0,
                                                     index(rb, rl, chunk)),
                               index(rb, rl, lanes), start,
                               [&](OpBuilder &sb, Location sl, Value k,
                                   ValueRange carried) {
                                 SmallVector<Value> xs, ws, next;
                                 for (Value row : rows)
                                   xs.push_back(read(sb, sl, x, row, k));
                                 for (int64_t j = 0; j < kDotBlockColumns; ++j)
                                   ws.push_back(read(
                                       sb, sl, w,
                                       arith::AddIOp::create(sb, sl, first,
                                                             index(sb, sl, j)),
                                       k));
                                 for (int64_t i = 0; i < kDotRowBlock; ++i)
                                   for (int64_t j = 0; j < kDotBlockColumns;
                                        ++j)
                                     next.push_back(vector::FMAOp::create(
                                         sb, sl, xs[i], ws[j],
                                         carried[i * kDotBlockColumns + j]));
                                 scf::YieldOp::create(sb, sl, next);
                               });
                           Value updated = acc[0];
                           for (int64_t s = 0; s < sums; ++s)
                             updated = vector::TransferWriteOp::create(
                                           rb, rl, steps.getResult(s), updated,
                                           ValueRange{arith::AddIOp::create(
                                                          rb, rl, base,
                                                          index(rb, rl, s)),
                                                      zero},
                                           ArrayRef<bool>{true})
                                           .getResult();
                           scf::YieldOp::create(rb, rl, updated);
                         });
                     scf::YieldOp::create(cb, cl, rowBlocks.getResults());
                   });
               Value accumulated = chunks.getResult(0);
               auto sumsLoop = scf::ForOp::create(
                   gb, gl, index(gb, gl, 0), blocks, index(gb, gl, 1),
                   ValueRange{groupY[0]},
                   [&](OpBuilder &rb, Location rl, Value blockIndex,
                       ValueRange carriedY) {
                     Value base = arith::MulIOp::create(rb, rl, blockIndex,
                                                        index(rb, rl, sums));
                     Value row0 = arith::MulIOp::create(
                         rb, rl, blockIndex, index(rb, rl, kDotRowBlock));
                     Value padding =
                         arith::ConstantOp::create(rb, rl, rb.getZeroAttr(f32));
                     Value updated = carriedY[0];
                     for (int64_t i = 0; i < kDotRowBlock; ++i) {
                       Value row = arith::AddIOp::create(rb, rl, row0,
                                                         index(rb, rl, i));
                       // Only rows before the end.
                       Value inside = arith::CmpIOp::create(
                           rb, rl, arith::CmpIPredicate::ult, row, rowCount);
                       auto rowSums = scf::IfOp::create(
                           rb, rl, inside,
                           [&](OpBuilder &ib, Location il) {
                             Value rowY = updated;
                             for (int64_t j = 0; j < kDotBlockColumns; ++j) {
                               Value lanesSum = vector::TransferReadOp::create(
                                   ib, il, lanesType, accumulated,
                                   ValueRange{
                                       arith::AddIOp::create(
                                           ib, il, base,
                                           index(ib, il,
                                                 i * kDotBlockColumns + j)),
                                       index(ib, il, 0)},
                                   padding, ArrayRef<bool>{true});
                               Value total = vector::ReductionOp::create(
                                   ib, il, vector::CombiningKind::ADD,
                                   lanesSum);
                               SmallVector<Value> at{
                                   row, arith::AddIOp::create(
                                            ib, il, r0, index(ib, il, j))};
                               Value previous =
                                   tensor::ExtractOp::create(ib, il, rowY, at);
                               rowY = tensor::InsertOp::create(
                                   ib, il,
                                   arith::AddFOp::create(ib, il, previous,
                                                         total),
                                   rowY, at);
                             }
                             scf::YieldOp::create(ib, il, rowY);
                           },
                           [&](OpBuilder &ib, Location il) {
                             scf::YieldOp::create(ib, il, updated);
                           });
                       updated = rowSums.getResult(0);
                     }
                     scf::YieldOp::create(rb, rl, updated);
                   });
               scf::YieldOp::create(gb, gl, sumsLoop.getResults());
             })
      .getResult(0);
}

} // namespace

Value streamedFMAColumnBlock(OpBuilder &builder, Location loc, Value x, Value w,
                             Value init, Value nBlock, int64_t lanes) {
  int64_t block = cast<RankedTensorType>(init.getType()).getDimSize(1);
  Value rowCount = tensor::DimOp::create(builder, loc, x, 0);
  // From 4 rows on, blocks of 4 rows (interleavedFMARows). Fewer: 2 or 3
  // rows as one block against up to 8 weight rows at a time (at most 24
  // accumulators); one row (a decode step) against every weight row of the
  // block at once.
  Value blocks = arith::CmpIOp::create(
      builder, loc, arith::CmpIPredicate::uge, rowCount,
      arith::ConstantIndexOp::create(builder, loc, kDotRowBlock));
  auto form = scf::IfOp::create(
      builder, loc, blocks,
      [&](OpBuilder &b, Location l) {
        scf::YieldOp::create(
            b, l,
            interleavedFMARows(b, l, x, w, nBlock, init, rowCount, lanes));
      },
      [&](OpBuilder &b, Location l) {
        int64_t columns = block % kDotRows == 0 ? kDotRows : kDotBlockColumns;
        Value zero = arith::ConstantIndexOp::create(b, l, 0);
        SmallVector<int64_t> cases{2, 3};
        auto few = scf::IndexSwitchOp::create(b, l, TypeRange{init.getType()},
                                              rowCount, cases, cases.size());
        for (auto [i, rows] : llvm::enumerate(cases)) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(&few.getCaseRegions()[i].emplaceBlock());
          scf::YieldOp::create(
              b, l,
              fmaRows(b, l, x, w, init, nBlock, zero, rows, columns, lanes));
        }
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(&few.getDefaultRegion().emplaceBlock());
          scf::YieldOp::create(b, l,
                               streamedColumnBlock(b, l, x, w, Value(),
                                                   linalg::GenericOp(), init,
                                                   nBlock, lanes, zero));
        }
        scf::YieldOp::create(b, l, few.getResults());
      });
  return form.getResult(0);
}

} // namespace mlir::tfm::projection

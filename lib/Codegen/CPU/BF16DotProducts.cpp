//===- BF16DotProducts.cpp - projections on AVX-512 BF16 dot products ----===//
//
// The forms of tfm-cpu-tile-projections that run bf16 weights through
// x86vector.avx512.dot (vdpbf16ps, 16 lanes each adding the products of a
// pair of bf16 values) instead of widening them to f32: panels packed as
// pairs of k with register blocks over the rows, and on AMX tiles. The
// streamed forms (weights read in place) are in StreamedProjections.cpp.
//
//===----------------------------------------------------------------------===//

#include "ProjectionBlocks.h"

#include "tfm/Codegen/Projection.h"

#include "tfm/Dialect/Tfm/Utils/LinalgBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"

using namespace mlir;
using namespace mlir::tfm;

namespace mlir::tfm::projection {

/// The packed form with AVX-512 BF16 dot products: f32 lanes that each add
/// the products of a bf16 pair, so weights are packed as pairs of
/// consecutive k, one 32-bit element per (k pair, column):
/// packed[kp, n] = (w[n, k0 + 2kp], w[n, k0 + 2kp + 1]). The rows of `a`
/// are rounded to bf16 (as the streamed dot form does) and each row's pair
/// is broadcast to every lane.
constexpr int64_t kPairLanes = 16;

/// Whether a column block of `blocking` over the bf16 weights `w` can take
/// the packed dot form: pairs of 16 whole columns and K in 32-step panels.
bool canPackBF16Dot(Value w, const Blocking &blocking) {
  auto type = cast<RankedTensorType>(w.getType());
  return type.getElementType().isBF16() && type.getDimSize(1) % 32 == 0 &&
         blocking.columns % kPairLanes == 0 && blocking.block % kPairLanes == 0;
}

/// w[row : +rows, k0 : +depth] as the [depth / 2, rows] i32 pairs above:
/// 16 x 32 bf16 reads, bitcast to 16 x 16 pairs and transposed.
Value packBF16Pairs(OpBuilder &builder, Location loc, Value w, Value row,
                    Value k0, int64_t rows, int64_t depth, bool asBF16,
                    bool zeroPastEnd) {
  Type bf16 = builder.getBF16Type(), i32 = builder.getI32Type();
  auto index = [](OpBuilder &b, Location l, int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, l, value);
  };
  auto readType = VectorType::get({kPairLanes, 2 * kPairLanes}, bf16);
  auto pairType = VectorType::get({kPairLanes, kPairLanes}, i32);
  Value packed =
      asBF16 ? tensor::EmptyOp::create(
                   builder, loc,
                   ArrayRef<int64_t>{rows / kAMXBlockColumns, depth / 2,
                                     2 * kAMXBlockColumns},
                   bf16)
             : tensor::EmptyOp::create(builder, loc,
                                       ArrayRef<int64_t>{depth / 2, rows}, i32);
  Value padding = arith::ConstantOp::create(builder, loc,
                                            builder.getZeroAttr(bf16));
  auto columnLoop = scf::ForOp::create(
      builder, loc, index(builder, loc, 0), index(builder, loc, rows),
      index(builder, loc, kPairLanes), ValueRange{packed},
      [&](OpBuilder &cb, Location cl, Value n0, ValueRange columnCarried) {
        auto pairLoop = scf::ForOp::create(
            cb, cl, index(cb, cl, 0), index(cb, cl, depth / 2),
            index(cb, cl, kPairLanes), columnCarried,
            [&](OpBuilder &b, Location l, Value kp0, ValueRange carried) {
              Value k = arith::AddIOp::create(
                  b, l, k0,
                  arith::MulIOp::create(b, l, kp0, index(b, l, 2)));
              Value n = arith::AddIOp::create(b, l, row, n0);
              Value values = vector::TransferReadOp::create(
                  b, l, readType, w, ValueRange{n, k}, padding,
                  ArrayRef<bool>{!zeroPastEnd, true});
              Value pairs = vector::BitCastOp::create(b, l, pairType, values);
              Value transposed = vector::TransposeOp::create(
                  b, l, pairs, ArrayRef<int64_t>{1, 0});
              SmallVector<Value> at{kp0, n0};
              if (asBF16) {
                transposed =
                    vector::BitCastOp::create(b, l, readType, transposed);
                Value width = index(b, l, kAMXBlockColumns);
                at = {arith::DivUIOp::create(b, l, n0, width), kp0,
                      arith::MulIOp::create(
                          b, l, arith::RemUIOp::create(b, l, n0, width),
                          index(b, l, 2))};
              }
              Value written = vector::TransferWriteOp::create(
                                  b, l, transposed, carried[0], at,
                                  ArrayRef<bool>{true, true})
                                  .getResult();
              scf::YieldOp::create(b, l, written);
            });
        scf::YieldOp::create(cb, cl, pairLoop.getResults());
      });
  return columnLoop.getResult(0);
}

/// The [KC/2, 2 x 32] pairs of the 32 columns at n1 of packBF16Pairs'
/// asBF16 form, contiguous.
static Value columnPairs(OpBuilder &b, Location loc, Value packed, Value n1) {
  auto type = cast<RankedTensorType>(packed.getType());
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  Value panel = arith::DivUIOp::create(
      b, loc, n1, arith::ConstantIndexOp::create(b, loc, kAMXBlockColumns));
  return tensor::ExtractSliceOp::create(
      b, loc,
      RankedTensorType::get({type.getDimSize(1), type.getDimSize(2)},
                            type.getElementType()),
      packed, ArrayRef<OpFoldResult>{panel, zero, zero},
      ArrayRef<OpFoldResult>{one, b.getIndexAttr(type.getDimSize(1)),
                             b.getIndexAttr(type.getDimSize(2))},
      ArrayRef<OpFoldResult>{one, one, one});
}

/// `y` [M, NR] += a[m0 : M, k0 : +KC] · the pairs panel[:, n1 : +NR] over
/// rows [begin, end) in steps of `rows`: rows x NR/16 accumulators in
/// registers across the KC / 2 pair steps.
Value dotRowBlocks(OpBuilder &builder, Location loc, Value a, Value packed,
                   Value n1, int64_t columns, Value y, Value k0, Value begin,
                   Value end, int64_t rows, RowBlockHook eachBlock) {
  auto packedType = cast<RankedTensorType>(packed.getType());
  bool packedAsBF16 = packedType.getElementType().isBF16();
  int64_t pairSteps = packedType.getDimSize(packedAsBF16 ? 1 : 0);
  Type bf16 = builder.getBF16Type(), f32 = builder.getF32Type(),
       i32 = builder.getI32Type();
  auto index = [](OpBuilder &b, Location l, int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, l, value);
  };
  auto lanes = VectorType::get({kPairLanes}, f32);
  auto pairVector = VectorType::get({kPairLanes}, i32);
  auto bf16Vector = VectorType::get({2 * kPairLanes}, bf16);
  int64_t vectors = columns / kPairLanes;
  Value panel = packedAsBF16 ? columnPairs(builder, loc, packed, n1) : Value();
  return scf::ForOp::create(
             builder, loc, begin, end, index(builder, loc, rows),
             ValueRange{y},
             [&](OpBuilder &b, Location l, Value m0, ValueRange carried) {
               if (eachBlock)
                 eachBlock(b, l, m0);
               // The rows' steps, [rows, KC].
               Value tile = slice2D(b, l, a, m0, k0, b.getIndexAttr(rows),
                                    b.getIndexAttr(2 * pairSteps));
               Value zeroF32 = arith::ConstantOp::create(b, l,
                                                         b.getZeroAttr(f32));
               Value zeroBF16 = arith::ConstantOp::create(b, l,
                                                          b.getZeroAttr(bf16));
               Value zeroI32 = arith::ConstantOp::create(b, l,
                                                         b.getZeroAttr(i32));
               SmallVector<Value> sums;
               for (int64_t i = 0; i < rows; ++i)
                 for (int64_t j = 0; j < vectors; ++j)
                   sums.push_back(vector::TransferReadOp::create(
                       b, l, lanes, carried[0],
                       ValueRange{arith::AddIOp::create(b, l, m0,
                                                        index(b, l, i)),
                                  index(b, l, j * kPairLanes)},
                       zeroF32, ArrayRef<bool>{true}));
               auto steps = scf::ForOp::create(
                   b, l, index(b, l, 0), index(b, l, pairSteps),
                   index(b, l, 1), sums,
                   [&](OpBuilder &sb, Location sl, Value kp,
                       ValueRange accumulators) {
                     SmallVector<Value> weights;
                     for (int64_t j = 0; j < vectors; ++j) {
                       if (packedAsBF16) { // (packBF16Pairs' asBF16)
                         weights.push_back(vector::TransferReadOp::create(
                             sb, sl, bf16Vector, panel,
                             ValueRange{kp, index(sb, sl, 2 * j * kPairLanes)},
                             zeroBF16, ArrayRef<bool>{true}));
                         continue;
                       }
                       Value column = arith::AddIOp::create(
                           sb, sl, n1, index(sb, sl, j * kPairLanes));
                       weights.push_back(vector::BitCastOp::create(
                           sb, sl, bf16Vector,
                           vector::TransferReadOp::create(
                               sb, sl, pairVector, packed,
                               ValueRange{kp, column}, zeroI32,
                               ArrayRef<bool>{true})));
                     }
                     Value k = arith::MulIOp::create(sb, sl, kp,
                                                     index(sb, sl, 2));
                     SmallVector<Value> next;
                     for (int64_t i = 0; i < rows; ++i) {
                       Value pair = vector::TransferReadOp::create(
                           sb, sl, VectorType::get({2}, bf16), tile,
                           ValueRange{index(sb, sl, i), k}, zeroBF16,
                           ArrayRef<bool>{true});
                       Value word = vector::BitCastOp::create(
                           sb, sl, VectorType::get({1}, i32), pair);
                       Value broadcast = vector::BitCastOp::create(
                           sb, sl, bf16Vector,
                           vector::BroadcastOp::create(sb, sl, pairVector,
                                                       word));
                       for (int64_t j = 0; j < vectors; ++j)
                         next.push_back(x86vector::DotBF16Op::create(
                             sb, sl, lanes, accumulators[i * vectors + j],
                             broadcast, weights[j]));
                     }
                     scf::YieldOp::create(sb, sl, next);
                   });
               Value updated = carried[0];
               for (int64_t i = 0; i < rows; ++i)
                 for (int64_t j = 0; j < vectors; ++j)
                   updated = vector::TransferWriteOp::create(
                                 b, l, steps.getResult(i * vectors + j),
                                 updated,
                                 ValueRange{arith::AddIOp::create(
                                                b, l, m0, index(b, l, i)),
                                            index(b, l, j * kPairLanes)},
                                 ArrayRef<bool>{true})
                                 .getResult();
               scf::YieldOp::create(b, l, updated);
             })
      .getResult(0);
}

Value amxTileBlock(OpBuilder &b, Location loc, Value rowPairs, Value pairs,
                   Value sums) {
  Type f32 = b.getF32Type();
  LinalgBuilder lb(b, loc);
  Value summed = lb.generic(
      {rowPairs, pairs}, {lb.map(4, {0, 2, 3}), lb.map(4, {2, 1, 3})}, sums,
      lb.map(4, {0, 1}),
      {utils::IteratorType::parallel, utils::IteratorType::parallel,
       utils::IteratorType::reduction, utils::IteratorType::reduction},
      [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
        Value product = arith::MulFOp::create(
            nb, nl, arith::ExtFOp::create(nb, nl, f32, args[0]),
            arith::ExtFOp::create(nb, nl, f32, args[1]));
        return arith::AddFOp::create(nb, nl, args[2], product);
      });
  summed.getDefiningOp()->setAttr(kAMXTilesAttr, b.getUnitAttr());
  return summed;
}

bool canUseAMXTiles(const Blocking &blocking, int64_t panelDepth) {
  return blocking.columns == kAMXBlockColumns && panelDepth % 32 == 0;
}

/// sums [R, 32] += rows [R, KC] · the bf16 pairs of the 32 columns at n1
/// of `packed`: both as pairs views ([R, KC/2, 2] and [KC/2, 32, 2]) of
/// one amxTileBlock.
Value amxPanelBlock(OpBuilder &b, Location l, Value rows, Value packed,
                    Value n1, Value sums) {
  auto rowsType = cast<RankedTensorType>(rows.getType());
  int64_t pairSteps = rowsType.getDimSize(1) / 2;
  Type bf16 = b.getBF16Type();
  Value rowPairs = tensor::ExpandShapeOp::create(
      b, l, RankedTensorType::get({rowsType.getDimSize(0), pairSteps, 2}, bf16),
      rows, SmallVector<ReassociationIndices>{{0}, {1, 2}});
  Value pairs = tensor::ExpandShapeOp::create(
      b, l, RankedTensorType::get({pairSteps, kAMXBlockColumns, 2}, bf16),
      columnPairs(b, l, packed, n1),
      SmallVector<ReassociationIndices>{{0}, {1, 2}});
  return amxTileBlock(b, l, rowPairs, pairs, sums);
}

Value amxRowBlocks(OpBuilder &builder, Location loc, Value a, Value packed,
                   Value n1, Value y, Value k0, Value begin, Value end,
                   int64_t blockRows) {
  int64_t pairSteps = cast<RankedTensorType>(packed.getType()).getDimSize(1);
  auto index = [](OpBuilder &b, Location l, int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, l, value);
  };
  return scf::ForOp::create(
             builder, loc, begin, end, index(builder, loc, blockRows),
             ValueRange{y},
             [&](OpBuilder &b, Location l, Value m0, ValueRange carried) {
               Value rows = slice2D(b, l, a, m0, k0, b.getIndexAttr(blockRows),
                                    b.getIndexAttr(2 * pairSteps));
               Value block = slice2D(b, l, carried[0], m0, b.getIndexAttr(0),
                                     b.getIndexAttr(blockRows),
                                     b.getIndexAttr(kAMXBlockColumns));
               Value sums = amxPanelBlock(b, l, rows, packed, n1, block);
               scf::YieldOp::create(b, l,
                                    insert2D(b, l, sums, carried[0], m0,
                                             b.getIndexAttr(0),
                                             b.getIndexAttr(blockRows),
                                             b.getIndexAttr(kAMXBlockColumns)));
             })
      .getResult(0);
}

Value sumIntoPaddedRows(
    OpBuilder &b, Location loc, Value y, Value m0, Value count, int64_t rows,
    function_ref<Value(OpBuilder &, Location, Value scratch)> sum) {
  OpFoldResult origin = b.getIndexAttr(0),
               columns = b.getIndexAttr(
                   cast<RankedTensorType>(y.getType()).getDimSize(1));
  LinalgBuilder lb(b, loc);
  Value scratch =
      insert2D(b, loc, slice2D(b, loc, y, m0, origin, count, columns),
               lb.filledF32({b.getIndexAttr(rows), columns}, 0.0), origin,
               origin, count, columns);
  Value summed = sum(b, loc, scratch);
  return insert2D(b, loc,
                  slice2D(b, loc, summed, origin, origin, count, columns), y,
                  m0, origin, count, columns);
}

Value zeroPaddedRows(OpBuilder &b, Location loc, Value a, Value row0,
                     OpFoldResult k0, Value count, int64_t rows,
                     int64_t depth) {
  Type element = getElementTypeOrSelf(a.getType());
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(element));
  Value zeros = linalg::FillOp::create(
                    b, loc, zero,
                    tensor::EmptyOp::create(
                        b, loc, ArrayRef<int64_t>{rows, depth}, element)
                        .getResult())
                    .getResult(0);
  OpFoldResult k = b.getIndexAttr(depth), origin = b.getIndexAttr(0);
  return insert2D(b, loc, slice2D(b, loc, a, row0, k0, count, k), zeros, origin,
                  origin, count, k);
}

Value paddedTailRows(OpBuilder &b, Location loc, Value a) {
  Value count = tensor::DimOp::create(b, loc, a, 0);
  Value left = arith::RemUIOp::create(
      b, loc, count, arith::ConstantIndexOp::create(b, loc, kAMXBlockRows));
  return zeroPaddedRows(b, loc, a, arith::SubIOp::create(b, loc, count, left),
                        b.getIndexAttr(0), left, kAMXBlockRows,
                        cast<RankedTensorType>(a.getType()).getDimSize(1));
}

Value amxTailBlock(OpBuilder &builder, Location loc, Value tail, Value packed,
                   Value n1, Value y, Value k0, Value begin, Value count) {
  int64_t pairSteps = cast<RankedTensorType>(packed.getType()).getDimSize(1);
  // At most one step.
  return scf::ForOp::create(
             builder, loc, begin, count,
             arith::ConstantIndexOp::create(builder, loc, kAMXBlockRows),
             ValueRange{y},
             [&](OpBuilder &b, Location l, Value m0, ValueRange carried) {
               Value left = arith::SubIOp::create(b, l, count, m0);
               Value rows = slice2D(b, l, tail, b.getIndexAttr(0), k0,
                                    b.getIndexAttr(kAMXBlockRows),
                                    b.getIndexAttr(2 * pairSteps));
               scf::YieldOp::create(
                   b, l,
                   sumIntoPaddedRows(
                       b, l, carried[0], m0, left, kAMXBlockRows,
                       [&](OpBuilder &sb, Location sl, Value scratch) {
                         return amxPanelBlock(sb, sl, rows, packed, n1,
                                              scratch);
                       }));
             })
      .getResult(0);
}

Value preparedRows(OpBuilder &b, Location l, Value a, Value scale,
                   linalg::GenericOp transform, OpFoldResult row0,
                   OpFoldResult rows, OpFoldResult k0, int64_t depth,
                   Type element) {
  LinalgBuilder lb(b, l);
  if (!transform && !scale && getElementTypeOrSelf(a.getType()) == element)
    return slice2D(b, l, a, row0, k0, rows, b.getIndexAttr(depth));
  Value tile =
      transform
          ? transformedRows(b, l, transform, row0, rows, k0, depth)
          : slice2D(b, l, a, row0, k0, rows, b.getIndexAttr(depth));
  SmallVector<Value> inputs{tile};
  SmallVector<AffineMap> maps{lb.map(2, {0, 1})};
  if (scale) {
    inputs.push_back(scaleSteps(b, l, scale, k0, depth));
    maps.push_back(lb.map(2, {1}));
  }
  return lb.elementwise(
      inputs, maps, {rows, b.getIndexAttr(depth)}, element,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value value = LinalgBuilder::toF32(nb, nl, args[0]);
        if (scale)
          value = arith::MulFOp::create(nb, nl, value,
                                        LinalgBuilder::toF32(nb, nl, args[1]));
        if (element.isF32())
          return value;
        return arith::TruncFOp::create(nb, nl, element, value).getResult();
      });
}

} // namespace mlir::tfm::projection

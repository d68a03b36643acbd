//===- BF16DotProducts.cpp - projections on AVX-512 BF16 dot products ----===//
//
// The forms of tfm-cpu-tile-projections that run bf16 weights through
// x86vector.avx512.dot (vdpbf16ps, 16 lanes each adding the products of a
// pair of bf16 values) instead of widening them to f32: panels packed as
// pairs of k with register blocks over the rows (8 rows and more), and
// weights streamed in place (a decode step).
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

/// w[row : +rows, k0 : +depth] (columns times `scale`[k0 : +depth], if
/// any, rounded to bf16 again) as the [depth / 2, rows] i32 pairs above:
/// 16 x 32 bf16 reads, bitcast to 16 x 16 pairs and transposed.
Value packBF16Pairs(OpBuilder &builder, Location loc, Value w, Value scale,
                    Value row, Value k0, int64_t rows, int64_t depth) {
  Type bf16 = builder.getBF16Type(), i32 = builder.getI32Type();
  auto index = [](OpBuilder &b, Location l, int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, l, value);
  };
  auto readType = VectorType::get({kPairLanes, 2 * kPairLanes}, bf16);
  auto pairType = VectorType::get({kPairLanes, kPairLanes}, i32);
  Value packed = tensor::EmptyOp::create(
      builder, loc, ArrayRef<int64_t>{depth / 2, rows}, i32);
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
                  ArrayRef<bool>{true, true});
              if (scale) {
                auto scaleType = VectorType::get(
                    {2 * kPairLanes}, getElementTypeOrSelf(scale.getType()));
                Value factors = vector::TransferReadOp::create(
                    b, l, scaleType, scale, ValueRange{k},
                    arith::ConstantOp::create(
                        b, l, b.getZeroAttr(scaleType.getElementType())),
                    ArrayRef<bool>{true});
                auto wide = [&](Value v, VectorType type) -> Value {
                  auto f32Type = type.clone(b.getF32Type());
                  return type.getElementType().isF32()
                             ? v
                             : arith::ExtFOp::create(b, l, f32Type, v)
                                   .getResult();
                };
                Value product = arith::MulFOp::create(
                    b, l, wide(values, readType),
                    vector::BroadcastOp::create(
                        b, l, readType.clone(b.getF32Type()),
                        wide(factors, scaleType)));
                values = arith::TruncFOp::create(b, l, readType, product);
              }
              Value pairs = vector::BitCastOp::create(b, l, pairType, values);
              Value transposed = vector::TransposeOp::create(
                  b, l, pairs, ArrayRef<int64_t>{1, 0});
              Value written = vector::TransferWriteOp::create(
                                  b, l, transposed, carried[0],
                                  ValueRange{kp0, n0},
                                  ArrayRef<bool>{true, true})
                                  .getResult();
              scf::YieldOp::create(b, l, written);
            });
        scf::YieldOp::create(cb, cl, pairLoop.getResults());
      });
  return columnLoop.getResult(0);
}

/// `y` [M, NR] += a[m0 : M, k0 : +KC] · the pairs panel[:, n1 : +NR] over
/// rows [begin, end) in steps of `rows`: rows x NR/16 accumulators in
/// registers across the KC / 2 pair steps.
Value dotRowBlocks(OpBuilder &builder, Location loc, Value a, Value packed,
                   Value n1, int64_t columns, Value y, Value k0, Value begin,
                   Value end, int64_t rows) {
  int64_t pairSteps = cast<RankedTensorType>(packed.getType()).getDimSize(0);
  Type bf16 = builder.getBF16Type(), f32 = builder.getF32Type(),
       i32 = builder.getI32Type();
  auto index = [](OpBuilder &b, Location l, int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, l, value);
  };
  auto lanes = VectorType::get({kPairLanes}, f32);
  auto pairVector = VectorType::get({kPairLanes}, i32);
  auto bf16Vector = VectorType::get({2 * kPairLanes}, bf16);
  int64_t vectors = columns / kPairLanes;
  return scf::ForOp::create(
             builder, loc, begin, end, index(builder, loc, rows),
             ValueRange{y},
             [&](OpBuilder &b, Location l, Value m0, ValueRange carried) {
               LinalgBuilder lb(b, l);
               // The rows' steps in bf16, [rows, KC].
               Value tile = slice2D(b, l, a, m0, k0, b.getIndexAttr(rows),
                                    b.getIndexAttr(2 * pairSteps));
               if (!getElementTypeOrSelf(tile.getType()).isBF16())
                 tile = lb.elementwise(
                     {tile}, {lb.map(2, {0, 1})}, lb.sizesOf(tile), bf16,
                     [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
                       return arith::TruncFOp::create(
                           nb, nl, nb.getBF16Type(),
                           LinalgBuilder::toF32(nb, nl, args[0]));
                     });
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

/// Weight rows a bf16 dot-product step reads at once (8 accumulators and
/// 8 weight vectors in registers), and the weights of one step of a row.
constexpr int64_t kDotRows = 8;
constexpr int64_t kDotPairs = 32;

/// Whether the streamed form can use AVX-512 BF16 dot products for a block
/// of `block` rows of `w`.
bool canStreamBF16Dot(Value w, int64_t block) {
  auto type = cast<RankedTensorType>(w.getType());
  return type.getElementType().isBF16() && block % kDotRows == 0 &&
         type.getDimSize(1) % kDotPairs == 0;
}

/// The streamed form with AVX-512 BF16 dot products (vdpbf16ps): for each
/// row m of `a`, its values (times the column scale, in f32) rounded to
/// bf16 once, then for every 8 weight rows of the block, 8 accumulators
/// of 16 f32 lanes, each step adding the products of 32 bf16 pairs;
/// y[m, n] += the accumulator's lane sum.
Value streamedDotColumnBlock(OpBuilder &builder, Location loc, Value a,
                             Value w, Value scale, linalg::GenericOp transform,
                             Value init, Value nBlock) {
  int64_t block = cast<RankedTensorType>(init.getType()).getDimSize(1);
  int64_t depth = cast<RankedTensorType>(w.getType()).getDimSize(1);
  Type bf16 = builder.getBF16Type(), f32 = builder.getF32Type();
  auto index = [](OpBuilder &b, Location l, int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, l, value);
  };
  auto pairs = VectorType::get({kDotPairs}, bf16);
  auto lanes = VectorType::get({kDotPairs / 2}, f32);
  Value rowsValue = tensor::DimOp::create(builder, loc, a, 0);
  auto rowLoop = scf::ForOp::create(
      builder, loc, index(builder, loc, 0), rowsValue, index(builder, loc, 1),
      ValueRange{init},
      [&](OpBuilder &b, Location l, Value m, ValueRange carried) {
        LinalgBuilder lb(b, l);
        // The row in bf16: [depth].
        Value row;
        if (transform) {
          row = tensor::CollapseShapeOp::create(
              b, l,
              transformedRows(b, l, transform, m, b.getIndexAttr(1),
                              b.getIndexAttr(0), depth),
              SmallVector<ReassociationIndices>{{0, 1}});
        } else {
          row = tensor::ExtractSliceOp::create(
              b, l,
              RankedTensorType::get({depth},
                                    getElementTypeOrSelf(a.getType())),
              a, ArrayRef<OpFoldResult>{m, b.getIndexAttr(0)},
              ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(depth)},
              ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
        }
        SmallVector<Value> inputs{row};
        SmallVector<AffineMap> maps{lb.map(1, {0})};
        if (scale) {
          inputs.push_back(scale);
          maps.push_back(lb.map(1, {0}));
        }
        Value rounded = lb.elementwise(
            inputs, maps, {b.getIndexAttr(depth)}, bf16,
            [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
              Value value = LinalgBuilder::toF32(nb, nl, args[0]);
              if (scale)
                value = arith::MulFOp::create(
                    nb, nl, value, LinalgBuilder::toF32(nb, nl, args[1]));
              return arith::TruncFOp::create(nb, nl, nb.getBF16Type(), value);
            });
        Value out = slice2D(b, l, carried[0], m, b.getIndexAttr(0),
                            b.getIndexAttr(1), b.getIndexAttr(block));
        Value zeroLanes = arith::ConstantOp::create(
            b, l, lanes, DenseElementsAttr::get(lanes, b.getF32FloatAttr(0)));
        Value padding = arith::ConstantOp::create(b, l, b.getZeroAttr(bf16));
        auto groups = scf::ForOp::create(
            b, l, index(b, l, 0), index(b, l, block), index(b, l, kDotRows),
            ValueRange{out},
            [&](OpBuilder &gb, Location gl, Value r0, ValueRange groupOut) {
              Value first = arith::AddIOp::create(gb, gl, nBlock, r0);
              auto steps = scf::ForOp::create(
                  gb, gl, index(gb, gl, 0), index(gb, gl, depth),
                  index(gb, gl, kDotPairs),
                  SmallVector<Value>(kDotRows, zeroLanes),
                  [&](OpBuilder &sb, Location sl, Value k, ValueRange sums) {
                    Value x = vector::TransferReadOp::create(
                        sb, sl, pairs, rounded, ValueRange{k}, padding,
                        ArrayRef<bool>{true});
                    SmallVector<Value> next;
                    for (int64_t i = 0; i < kDotRows; ++i) {
                      Value n = arith::AddIOp::create(sb, sl, first,
                                                      index(sb, sl, i));
                      Value weights = vector::TransferReadOp::create(
                          sb, sl, pairs, w, ValueRange{n, k}, padding,
                          ArrayRef<bool>{true});
                      next.push_back(x86vector::DotBF16Op::create(
                          sb, sl, lanes, sums[i], x, weights));
                    }
                    scf::YieldOp::create(sb, sl, next);
                  });
              Value updated = groupOut[0];
              Value zero = index(gb, gl, 0);
              for (int64_t i = 0; i < kDotRows; ++i) {
                Value total = vector::ReductionOp::create(
                    gb, gl, vector::CombiningKind::ADD, steps.getResult(i));
                Value column = arith::AddIOp::create(gb, gl, r0,
                                                     index(gb, gl, i));
                Value previous = tensor::ExtractOp::create(
                    gb, gl, updated, ValueRange{zero, column});
                updated = tensor::InsertOp::create(
                    gb, gl, arith::AddFOp::create(gb, gl, previous, total),
                    updated, ValueRange{zero, column});
              }
              scf::YieldOp::create(gb, gl, updated);
            });
        scf::YieldOp::create(
            b, l,
            insert2D(b, l, groups.getResult(0), carried[0], m,
                     b.getIndexAttr(0), b.getIndexAttr(1),
                     b.getIndexAttr(block)));
      });
  return rowLoop.getResult(0);
}

} // namespace mlir::tfm::projection

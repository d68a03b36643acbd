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
// one narrower block, NR = NB = N % NR. With AVX-512 BF16 (bf16-dot), bf16
// weights are packed as pairs of k for vdpbf16ps instead of widened.
//
//===----------------------------------------------------------------------===//

#include "tfm/Codegen/LoopSchedule.h"
#include "tfm/Codegen/Passes.h"
#include "tfm/Codegen/Projection.h"
#include "tfm/Dialect/Tfm/Utils/LinalgBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/RegionUtils.h"

#include <numeric>

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

/// One [M, NB] column block of `projection`: `init` (its initial values)
/// plus a[:, :] · w[nBlock : +NB, :]ᵀ (with w's columns scaled by the
/// projection's column scale, if it has one).
using ColumnBlockFn =
    function_ref<Value(OpBuilder &, Location, Value a,
                       linalg::GenericOp projection, Value init, Value nBlock)>;

/// w[rows, k0 : +depth]ᵀ in f32 [depth, rows], its columns scaled by
/// `scale`[k0 : +depth] when there is a scale (an RMSNorm's weight).
Value packScaled(OpBuilder &b, Location loc, Value w, Value scale, Value row,
                 Value k0, int64_t rows, int64_t depth) {
  LinalgBuilder lb(b, loc);
  Value tile = slice2D(b, loc, w, row, k0, b.getIndexAttr(rows),
                       b.getIndexAttr(depth));
  if (!scale)
    return lb.tileF32(tile, /*transpose=*/true);
  OpFoldResult one = b.getIndexAttr(1);
  Value scaleTile = tensor::ExtractSliceOp::create(
      b, loc, scale, ArrayRef<OpFoldResult>{k0},
      ArrayRef<OpFoldResult>{b.getIndexAttr(depth)}, ArrayRef<OpFoldResult>{one});
  return lb.generic(
      {tile, scaleTile}, {lb.map(2, {1, 0}), lb.map(2, {0})},
      lb.empty({b.getIndexAttr(depth), b.getIndexAttr(rows)}, lb.f32()),
      lb.map(2, {0, 1}), {Iter::parallel, Iter::parallel},
      [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
        return arith::MulFOp::create(nb, nl,
                                     LinalgBuilder::toF32(nb, nl, args[0]),
                                     LinalgBuilder::toF32(nb, nl, args[1]));
      });
}

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

/// The packed form of the file comment for one column block: Kᵀ panels
/// packed to f32, MR x NR register blocks over the rows, then the rows left.
/// With `pairs` (canPackBF16Dot), panels of bf16 pairs for dot products
/// instead, KC the largest multiple of 32 up to 128 that divides K.
Value packedColumnBlock(OpBuilder &builder, Location loc, Value a, Value w,
                        Value scale, Value init, Value nBlock,
                        const Blocking &blocking, bool pairs) {
  int64_t depth = cast<RankedTensorType>(w.getType()).getDimSize(1);
  int64_t panelDepth =
      pairs ? blockSize(depth, 32, kMaxPanelDepth) : blocking.depth;
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
  auto kLoop = scf::ForOp::create(
      builder, loc, index(builder, loc, 0), index(builder, loc, depth),
      index(builder, loc, panelDepth), ValueRange{init},
      [&](OpBuilder &b, Location l, Value k0, ValueRange carried) {
        Value packed =
            pairs ? packBF16Pairs(b, l, w, scale, nBlock, k0, blocking.block,
                                  panelDepth)
                  : packScaled(b, l, w, scale, nBlock, k0, blocking.block,
                               panelDepth);
        auto nLoop = scf::ForOp::create(
            b, l, index(b, l, 0), index(b, l, blocking.block),
            index(b, l, blocking.columns), carried,
            [&](OpBuilder &nb, Location nl, Value n1, ValueRange inner) {
              Value strip = slice2D(nb, nl, inner[0], nb.getIndexAttr(0), n1,
                                    rowCount,
                                    nb.getIndexAttr(blocking.columns));
              auto rowsFrom = [&](Value begin, Value end, int64_t rows) {
                if (pairs)
                  return dotRowBlocks(nb, nl, a, packed, n1, blocking.columns,
                                      strip, k0, begin, end, rows);
                Value panel = slice2D(nb, nl, packed, nb.getIndexAttr(0), n1,
                                      nb.getIndexAttr(panelDepth),
                                      nb.getIndexAttr(blocking.columns));
                return rowBlocks(nb, nl, a, panel, strip, k0, begin, end,
                                 rows);
              };
              strip = rowsFrom(index(nb, nl, 0), fullRows, blocking.rows);
              strip = rowsFrom(fullRows, rowsValue, 1);
              scf::YieldOp::create(
                  nb, nl,
                  insert2D(nb, nl, strip, inner[0], nb.getIndexAttr(0), n1,
                           rowCount, nb.getIndexAttr(blocking.columns)));
            });
        scf::YieldOp::create(b, l, nLoop.getResults());
      });
  return kLoop.getResult(0);
}

/// The streamed form for a few rows, each weight read once, in place: for
/// each row m of `a`, f32 lane-wise partial sums p[n, l] = Σ_kc
/// a[m, kc·L + l] · w[n, kc·L + l] (L = `lanes`), which tfm-cpu-vectorize
/// turns into one accumulator per weight row, then y[m, n] += Σ_l p[n, l].
/// The block's weight rows stay in cache from one row of `a` to the next.
Value streamedColumnBlock(OpBuilder &builder, Location loc, Value a, Value w,
                          Value scale, Value init, Value nBlock,
                          int64_t lanes) {
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
      builder, loc, index(builder, loc, 0), rowsValue, index(builder, loc, 1),
      ValueRange{init},
      [&](OpBuilder &b, Location l, Value m, ValueRange carried) {
        LinalgBuilder lb(b, l);
        Value row = slice2D(b, l, a, m, b.getIndexAttr(0), b.getIndexAttr(1),
                            b.getIndexAttr(depth));
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
        scf::YieldOp::create(
            b, l,
            insert2D(b, l, sums, carried[0], m, b.getIndexAttr(0),
                     b.getIndexAttr(1), b.getIndexAttr(block)));
      });
  return rowLoop.getResult(0);
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
                             Value w, Value scale, Value init, Value nBlock) {
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
        Value row = tensor::ExtractSliceOp::create(
            b, l, RankedTensorType::get({depth},
                                        getElementTypeOrSelf(a.getType())),
            a, ArrayRef<OpFoldResult>{m, b.getIndexAttr(0)},
            ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(depth)},
            ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
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

/// Projections over the same rows and columns, and the elementwise op that
/// alone reads their results (their epilogue): gate and up with
/// act(gate)·up, a projection with its bias and activation, or with the
/// residual it is added to. Without an epilogue, one projection.
struct ProjectionGroup {
  SmallVector<linalg::GenericOp> projections;
  linalg::GenericOp epilogue;

  Value rows() { return projections.front().getDpsInputs()[0]; }
  linalg::GenericOp root() { return epilogue ? epilogue : projections.front(); }
};

/// The value a projection's accumulator starts from: its fill value, or
/// null when it adds to the values of its init.
Value fillValueOf(linalg::GenericOp projection) {
  if (auto fill = projection.getDpsInits()[0].getDefiningOp<linalg::FillOp>())
    return fill.getInputs()[0];
  return Value();
}

/// The [M, NB] block at column nBlock of `group`'s result, with `out` the
/// block of the buffer it is written to: each projection's block (in `out`
/// itself without an epilogue), then the epilogue tiled to it, writing
/// `out`.
Value groupColumnBlock(OpBuilder &b, Location loc, ProjectionGroup &group,
                       Value out, Value nBlock, ColumnBlockFn columnBlock) {
  Value a = group.rows();
  OpFoldResult rowCount = tensor::getMixedSize(b, loc, a, 0);
  int64_t block = cast<RankedTensorType>(out.getType()).getDimSize(1);
  auto initialBlock = [&](linalg::GenericOp projection, Value target) {
    if (Value fillValue = fillValueOf(projection))
      return linalg::FillOp::create(b, loc, fillValue, target).getResult(0);
    return target;
  };
  if (!group.epilogue) {
    linalg::GenericOp projection = group.projections.front();
    return columnBlock(b, loc, a, projection, initialBlock(projection, out),
                       nBlock);
  }

  IRMapping blocks;
  for (linalg::GenericOp projection : group.projections) {
    Value target;
    // Scratch of its own for each projection (CSE would merge two equal
    // tensor.empty + fill, and bufferization then copy one into the other).
    if (fillValueOf(projection)) {
      std::optional<int64_t> staticRows = getConstantIntValue(rowCount);
      SmallVector<Value> dynamicRows;
      if (!staticRows)
        dynamicRows.push_back(cast<Value>(rowCount));
      target = bufferization::AllocTensorOp::create(
          b, loc,
          RankedTensorType::get(
              {staticRows.value_or(ShapedType::kDynamic), block},
              b.getF32Type()),
          dynamicRows);
    }
    else
      target = slice2D(b, loc, projection.getDpsInits()[0],
                       b.getIndexAttr(0), nBlock, rowCount,
                       b.getIndexAttr(block));
    blocks.map(projection->getResult(0),
               columnBlock(b, loc, a, projection,
                           initialBlock(projection, target), nBlock));
  }
  // The epilogue on this block: a copy, tiled, with its reads of the
  // projections' results replaced by their blocks and its output by `out`
  // (the same block of the loops' buffer, which starts as its init).
  Operation *whole = b.clone(*group.epilogue);
  FailureOr<TilingResult> tiled =
      cast<TilingInterface>(whole).getTiledImplementation(
          b, ArrayRef<OpFoldResult>{b.getIndexAttr(0), nBlock},
          ArrayRef<OpFoldResult>{rowCount, b.getIndexAttr(block)});
  whole->erase();
  assert(succeeded(tiled) && "an elementwise linalg op tiles");
  auto tiledEpilogue = cast<linalg::GenericOp>(tiled->tiledOps.front());
  OpOperand *init = tiledEpilogue.getDpsInitOperand(0);
  Operation *initSlice = init->get().getDefiningOp();
  init->set(out);
  if (initSlice && initSlice->use_empty())
    initSlice->erase();
  for (OpOperand &operand : tiledEpilogue->getOpOperands()) {
    auto slice = operand.get().getDefiningOp<tensor::ExtractSliceOp>();
    if (Value projected = slice ? blocks.lookupOrNull(slice.getSource())
                                : Value()) {
      operand.set(projected);
      slice->erase();
    }
  }
  return tiledEpilogue->getResult(0);
}

/// Columns [begin, begin + count) of the loops' buffer: the columns
/// [row0, row0 + count) of `group`'s result (its weight rows).
struct ColumnRange {
  ProjectionGroup *group;
  int64_t begin, count, row0;
};

/// The loops of the file comment over contiguous column ranges of the
/// loops' buffer `shared` (each count a multiple of `block`): threads over
/// column blocks, each computed by `columnBlock` for the group its range
/// names (an scf.index_switch where there are several) and written into
/// its part of `shared`. Returns the updated `shared`.
Value tileColumns(RewriterBase &rewriter, Location loc,
                  ArrayRef<ColumnRange> ranges, Value shared, int64_t block,
                  ColumnBlockFn columnBlock) {
  OpFoldResult rowCount =
      tensor::getMixedSize(rewriter, loc, ranges.front().group->rows(), 0);
  int64_t blocks = 0;
  SmallVector<int64_t> firstBlocks;
  for (const ColumnRange &range : ranges) {
    firstBlocks.push_back(blocks);
    blocks += range.count / block;
  }
  auto index = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, value);
  };
  auto forall = scf::ForallOp::create(
      rewriter, withStaticSchedule(loc),
      ArrayRef<OpFoldResult>{rewriter.getIndexAttr(blocks)}, ValueRange{shared},
      std::nullopt);
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(forall.getBody()->getTerminator());
  Value j = forall.getInductionVar(0);
  Value nShared = arith::AddIOp::create(
      rewriter, loc, arith::MulIOp::create(rewriter, loc, j, index(block)),
      index(ranges.front().begin));
  Value sharedBlock = forall.getRegionIterArgs()[0];
  Value out = slice2D(rewriter, loc, sharedBlock, rewriter.getIndexAttr(0),
                      nShared, rowCount, rewriter.getIndexAttr(block));
  auto blockOf = [&](const ColumnRange &range) {
    Value nBlock = arith::AddIOp::create(rewriter, loc, nShared,
                                         index(range.row0 - range.begin));
    return groupColumnBlock(rewriter, loc, *range.group, out, nBlock,
                            columnBlock);
  };
  Value result;
  if (ranges.size() == 1) {
    result = blockOf(ranges.front());
  } else {
    // The range of block j: how many later ranges start at or before it.
    Value which = index(0);
    for (int64_t i = 1, e = ranges.size(); i < e; ++i) {
      Value reached = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::uge, j, index(firstBlocks[i]));
      which = arith::AddIOp::create(
          rewriter, loc, which,
          arith::SelectOp::create(rewriter, loc, reached, index(1), index(0)));
    }
    SmallVector<int64_t> cases =
        llvm::to_vector(llvm::seq<int64_t>(0, ranges.size() - 1));
    auto choice = scf::IndexSwitchOp::create(
        rewriter, loc, TypeRange{out.getType()}, which, cases, cases.size());
    for (auto [i, range] : llvm::enumerate(ranges)) {
      Region &region = i + 1 < ranges.size() ? choice.getCaseRegions()[i]
                                             : choice.getDefaultRegion();
      rewriter.setInsertionPointToStart(&region.emplaceBlock());
      scf::YieldOp::create(rewriter, loc, blockOf(range));
    }
    rewriter.setInsertionPointAfter(choice);
    result = choice.getResult(0);
  }
  rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
  OpFoldResult one = rewriter.getIndexAttr(1);
  tensor::ParallelInsertSliceOp::create(
      rewriter, loc, result, sharedBlock,
      ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0), nShared},
      ArrayRef<OpFoldResult>{rowCount, rewriter.getIndexAttr(block)},
      ArrayRef<OpFoldResult>{one, one});
  return forall.getResult(0);
}

/// For a result that an entry point writes into its caller's buffer as a
/// [B, S, N] view (the logits), the op that writes it (callerDestination),
/// and the [M, N] view of that buffer (outputView), so that the
/// loops write there directly; else null (the result gets a buffer of its
/// own, which would then be copied out: 65 MB of logits at S = 512).
/// eliminate-empty-tensors does not see through the reshape.
bufferization::MaterializeInDestinationOp
callerDestination(linalg::GenericOp root) {
  Value result = root->getResult(0);
  if (!result.hasOneUse())
    return {};
  auto expand = dyn_cast<tensor::ExpandShapeOp>(*result.getUsers().begin());
  if (!expand || !expand->hasOneUse())
    return {};
  auto materialize = dyn_cast<bufferization::MaterializeInDestinationOp>(
      *expand->getUsers().begin());
  if (!materialize || !materialize.getRestrict() ||
      !materialize.getWritable() ||
      !isa<BlockArgument>(materialize.getDest()) ||
      materialize.getSource() != expand.getResult())
    return {};
  return materialize;
}

Value outputView(RewriterBase &rewriter, linalg::GenericOp root) {
  auto materialize = callerDestination(root);
  if (!materialize)
    return Value();
  auto expand = materialize.getSource().getDefiningOp<tensor::ExpandShapeOp>();
  Location loc = root.getLoc();
  Value caller = bufferization::ToTensorOp::create(
      rewriter, loc, expand.getResultType(), materialize.getDest(),
      /*restrict=*/true, /*writable=*/true);
  return tensor::CollapseShapeOp::create(rewriter, loc, caller,
                                         expand.getReassociationIndices());
}

/// Replaces `groups` by the loops of the file comment. One group: over the
/// columns that whole `main` blocks cover, then, where N has columns left
/// (a vocabulary of 1000 with 32-column blocks), over those with `tail`.
/// Several (siblings over the same rows, without tails): over all their
/// columns in one loop, side by side in one buffer, each group's result a
/// column view of it. For fewer rows than a register block, the streamed
/// form.
void tileProjectionGroups(RewriterBase &rewriter,
                          MutableArrayRef<ProjectionGroup> groups,
                          const Blocking &main, std::optional<Blocking> tail,
                          int64_t lanes, bool bf16Dot) {
  ProjectionGroup &first = groups.front();
  linalg::GenericOp root = first.root();
  Location loc = root.getLoc();
  rewriter.setInsertionPoint(root);
  auto columnsOf = [](ProjectionGroup &group) {
    Value w = group.projections.front().getDpsInputs()[1];
    return cast<RankedTensorType>(w.getType()).getDimSize(0);
  };
  // The loops write into a buffer of their own: an alloc_tensor, which CSE
  // never merges with another projection's (a shared tensor.empty would
  // make bufferization copy one of them). A projection's filled init is
  // filled block by block, by the thread that owns the block.
  auto rootType = cast<RankedTensorType>(root->getResult(0).getType());
  auto allocate = [&](int64_t columns) -> Value {
    SmallVector<Value> rowCount;
    if (rootType.isDynamicDim(0))
      rowCount.push_back(tensor::DimOp::create(rewriter, loc, first.rows(), 0));
    return bufferization::AllocTensorOp::create(
        rewriter, loc, rootType.clone({rootType.getDimSize(0), columns}),
        rowCount);
  };
  Value shared;
  SmallVector<ColumnRange> mainRanges, tailRanges;
  int64_t columns = 0;
  if (groups.size() == 1) {
    columns = columnsOf(first);
    int64_t mainColumns = tail ? columns - tail->block : columns;
    if (mainColumns)
      mainRanges.push_back({&first, 0, mainColumns, 0});
    if (tail)
      tailRanges.push_back({&first, mainColumns, tail->block, mainColumns});
    shared = root.getDpsInits()[0];
    if (!first.epilogue)
      if (auto fill = shared.getDefiningOp<linalg::FillOp>())
        shared = fill.getOutputs()[0];
    if (auto collapse = shared.getDefiningOp<tensor::CollapseShapeOp>())
      if (collapse.getSrc().getDefiningOp<tensor::EmptyOp>())
        shared = collapse.getSrc(); // the [M, N] view of a [B, S, N] epilogue
    if (Value output = outputView(rewriter, root))
      shared = output;
    else if (shared.getDefiningOp<tensor::EmptyOp>())
      shared = allocate(columns);
  } else {
    for (ProjectionGroup &group : groups) {
      mainRanges.push_back({&group, columns, columnsOf(group), 0});
      columns += mainRanges.back().count;
    }
    shared = allocate(columns);
  }

  auto loops = [&](OpBuilder &b, Location l, int64_t mainBlock,
                   int64_t tailBlock, ColumnBlockFn mainFn,
                   ColumnBlockFn tailFn) {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(b.getInsertionBlock(), b.getInsertionPoint());
    Value result = shared;
    if (!mainRanges.empty())
      result = tileColumns(rewriter, l, mainRanges, result, mainBlock, mainFn);
    if (!tailRanges.empty())
      result = tileColumns(rewriter, l, tailRanges, result, tailBlock, tailFn);
    scf::YieldOp::create(rewriter, l, result);
  };
  auto packedWith = [bf16Dot](const Blocking &blocking) {
    return [blocking, bf16Dot](OpBuilder &b, Location l, Value a,
                               linalg::GenericOp projection, Value init,
                               Value nBlock) {
      Value w = projection.getDpsInputs()[1];
      return packedColumnBlock(b, l, a, w, columnScaleOf(projection), init,
                               nBlock, blocking,
                               bf16Dot && canPackBF16Dot(w, blocking));
    };
  };
  auto streamed = [lanes, bf16Dot](OpBuilder &b, Location l, Value a,
                                   linalg::GenericOp projection, Value init,
                                   Value nBlock) {
    Value w = projection.getDpsInputs()[1];
    int64_t block = cast<RankedTensorType>(init.getType()).getDimSize(1);
    if (bf16Dot && canStreamBF16Dot(w, block))
      return streamedDotColumnBlock(b, l, a, w, columnScaleOf(projection),
                                    init, nBlock);
    return streamedColumnBlock(b, l, a, w, columnScaleOf(projection), init,
                               nBlock, lanes);
  };
  auto packedMain = packedWith(main);
  auto packedTail = packedWith(tail ? *tail : main);
  // Up to 4 register blocks of weight rows per thread iteration when
  // streaming: a block stays in L1/L2 across the rows of `a`, and N = 2048
  // gives 64 of them to share out. A register-rows that divides no part of
  // every range (12 against 2048) falls back to the largest divisor.
  int64_t common = 0;
  for (const ColumnRange &range : mainRanges)
    common = std::gcd(common, range.count);
  int64_t streamBlock = blockSize(common, main.rows, 4 * main.rows);
  if (!streamBlock)
    streamBlock = blockSize(common, 1, 4 * main.rows);
  int64_t tailBlock = tail ? tail->block : 0;
  // Fewer rows than a register block (a decode step) stream the weights
  // instead: packing them would cost more than the products.
  Value rows = tensor::DimOp::create(rewriter, loc, first.rows(), 0);
  Value fewRows = arith::CmpIOp::create(
      rewriter, loc, arith::CmpIPredicate::ult, rows,
      arith::ConstantIndexOp::create(rewriter, loc, main.rows));
  auto branch = scf::IfOp::create(
      rewriter, loc, fewRows,
      [&](OpBuilder &b, Location l) {
        loops(b, l, streamBlock, tailBlock, streamed, streamed);
      },
      [&](OpBuilder &b, Location l) {
        loops(b, l, main.block, tailBlock, packedMain, packedTail);
      });
  if (groups.size() == 1) {
    rewriter.replaceOp(root, branch.getResult(0));
  } else {
    for (const ColumnRange &range : mainRanges) {
      OpFoldResult rowCount =
          tensor::getMixedSize(rewriter, loc, branch.getResult(0), 0);
      rewriter.replaceOp(range.group->root(),
                         slice2D(rewriter, loc, branch.getResult(0),
                                 rewriter.getIndexAttr(0),
                                 rewriter.getIndexAttr(range.begin), rowCount,
                                 rewriter.getIndexAttr(range.count)));
    }
  }
  for (ProjectionGroup &group : groups)
    if (group.epilogue)
      for (linalg::GenericOp projection : group.projections)
        rewriter.eraseOp(projection);
}

/// Whether `op` is elementwise over [M, N] with an identity result.
bool isRowColumnElementwise(linalg::GenericOp op) {
  return op.hasPureTensorSemantics() && op.getNumLoops() == 2 &&
         op.getNumDpsInits() == 1 &&
         op.getNumParallelLoops() == op.getNumLoops() &&
         op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity();
}

/// Whether `a` and `b` are the same tensor: one value, or two equal
/// side-effect-free ops on the same operands (the views of the same rows
/// that each projection makes before CSE).
bool sameTensor(Value a, Value b) {
  if (a == b)
    return true;
  Operation *x = a.getDefiningOp(), *y = b.getDefiningOp();
  return x && y && isMemoryEffectFree(x) &&
         OperationEquivalence::isEquivalentTo(
             x, y, OperationEquivalence::IgnoreLocations);
}

/// The group of `projection`: with the elementwise op that alone reads it,
/// if every projection that op reads is read only by it, at an identity
/// map, and shares `projection`'s rows and column count.
ProjectionGroup groupOf(linalg::GenericOp projection,
                        function_ref<bool(linalg::GenericOp)> isTileable) {
  ProjectionGroup single{{projection}, {}};
  Value result = projection->getResult(0);
  if (!result.hasOneUse())
    return single;
  auto epilogue = dyn_cast<linalg::GenericOp>(*result.getUsers().begin());
  if (!epilogue || !isRowColumnElementwise(epilogue))
    return single;
  auto weightsOf = [](linalg::GenericOp op) {
    return cast<RankedTensorType>(op.getDpsInputs()[1].getType());
  };
  ProjectionGroup group{{}, epilogue};
  for (OpOperand *operand : epilogue.getDpsInputOperands()) {
    auto other = operand->get().getDefiningOp<linalg::GenericOp>();
    if (!other || !isTileable(other))
      continue;
    if (!operand->get().hasOneUse() ||
        !epilogue.getMatchingIndexingMap(operand).isIdentity() ||
        !sameTensor(other.getDpsInputs()[0], projection.getDpsInputs()[0]) ||
        weightsOf(other).getDimSize(0) != weightsOf(projection).getDimSize(0))
      return single;
    group.projections.push_back(other);
  }
  if (!llvm::is_contained(group.projections, projection))
    return single;
  return group;
}

/// Whether `operand` of an elementwise op over [B, S, N] is the
/// [B, S, N] view of a projection's [M, N] result, or an elementwise op's
/// result is viewed as [M, N] again: collapsing the op to [M, N] lets the
/// projection's epilogue be tiled with it.
bool collapsesToProjection(OpOperand *operand) {
  Operation *owner = operand->getOwner();
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(owner)) {
    auto producer = collapse.getSrc().getDefiningOp<linalg::GenericOp>();
    return producer && producer.getNumParallelLoops() == producer.getNumLoops();
  }
  auto consumer = dyn_cast<linalg::GenericOp>(owner);
  auto expand = operand->get().getDefiningOp<tensor::ExpandShapeOp>();
  auto projection =
      expand ? expand.getSrc().getDefiningOp<linalg::GenericOp>() : nullptr;
  return consumer &&
         consumer.getNumParallelLoops() == consumer.getNumLoops() &&
         projection && isProjection(projection);
}

/// Whether the elementwise op producing `operand` reads a projection and
/// only this elementwise op reads it: the two become one epilogue (bias,
/// then residual).
bool extendsEpilogue(OpOperand *operand) {
  auto consumer = dyn_cast<linalg::GenericOp>(operand->getOwner());
  auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
  if (!consumer || !producer || !operand->get().hasOneUse() ||
      consumer.getNumParallelLoops() != consumer.getNumLoops() ||
      producer.getNumParallelLoops() != producer.getNumLoops())
    return false;
  return llvm::any_of(producer.getDpsInputs(), [](Value input) {
    auto projection = input.getDefiningOp<linalg::GenericOp>();
    return projection && isProjection(projection);
  });
}

struct TfmCPUTileProjectionsPass
    : CPUCodegenPass<
          tfm::impl::TfmCPUTileProjectionsPassBase<TfmCPUTileProjectionsPass>> {
  TfmCPUTileProjectionsPass() = default;
  explicit TfmCPUTileProjectionsPass(
      const TfmCPUTileProjectionsPassOptions &options)
      : CPUCodegenPass(options) {}

  void runOnOperation() override {
    if (!checkCodegenOptions())
      return;
    if (fuseEpilogues) {
      RewritePatternSet patterns(&getContext());
      linalg::populateFoldReshapeOpsByCollapsingPatterns(patterns,
                                                         collapsesToProjection);
      linalg::populateElementwiseOpsFusionPatterns(patterns, extendsEpilogue);
      // Sizes of the [B, S, N] views, read off their sources, so that the
      // views go when the ops they fed are collapsed.
      memref::populateResolveRankedShapedTypeResultDimsPatterns(patterns);
      tensor::DimOp::getCanonicalizationPatterns(patterns, &getContext());
      if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
        return signalPassFailure();
    }
    SmallVector<linalg::GenericOp> projections;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (isProjection(op) && blockingOf(op))
        projections.push_back(op);
    });
    auto isTileable = [&](linalg::GenericOp op) {
      return llvm::is_contained(projections, op);
    };
    IRRewriter rewriter(&getContext());
    llvm::SmallPtrSet<Operation *, 16> done;
    SmallVector<ProjectionGroup> groups;
    for (linalg::GenericOp op : projections) {
      if (done.contains(op))
        continue;
      groups.push_back(fuseEpilogues ? groupOf(op, isTileable)
                                     : ProjectionGroup{{op}, {}});
      for (linalg::GenericOp projection : groups.back().projections)
        done.insert(projection);
    }
    std::vector<bool> tiled(groups.size());
    for (size_t i = 0; i < groups.size(); ++i) {
      if (tiled[i])
        continue;
      SmallVector<ProjectionGroup> together{groups[i]};
      tiled[i] = true;
      for (size_t j = i + 1; fuseSiblings && j < groups.size(); ++j)
        if (!tiled[j] && areSiblings(groups[i], groups[j]))
          together.push_back(groups[j]);
      if (together.size() > 1)
        together = gatherSiblings(rewriter, std::move(together));
      for (size_t j = i + 1; j < groups.size(); ++j)
        if (llvm::any_of(together, [&](ProjectionGroup &group) {
              return group.root() == groups[j].root();
            }))
          tiled[j] = true;
      auto [main, tail] = *blockingOf(together.front().projections.front());
      if (together.size() > 1)
        main.block = siblingBlock(together, main);
      tileProjectionGroups(rewriter, together, main, tail, vectorWidth,
                           bf16Dot != 0 && vectorWidth == 16);
    }
  }

  /// Whether `a` and `b` can share one parallel loop: projections of the
  /// same rows in the same block, both blocked alike without a column tail,
  /// each writing a buffer of its own that starts empty (so that a column
  /// range of one buffer can take its place), results of one element type.
  bool areSiblings(ProjectionGroup &a, ProjectionGroup &b) const {
    if (a.root()->getBlock() != b.root()->getBlock() ||
        !sameTensor(a.rows(), b.rows()))
      return false;
    auto blockingA = blockingOf(a.projections.front());
    auto blockingB = blockingOf(b.projections.front());
    if (blockingA->second || blockingB->second ||
        blockingA->first.columns != blockingB->first.columns ||
        blockingA->first.depth != blockingB->first.depth)
      return false;
    auto typeA = cast<RankedTensorType>(a.root()->getResult(0).getType());
    auto typeB = cast<RankedTensorType>(b.root()->getResult(0).getType());
    return typeA.getElementType() == typeB.getElementType() &&
           typeA.getDimSize(0) == typeB.getDimSize(0) &&
           startsEmpty(a) && startsEmpty(b);
  }

  /// Whether `group` writes a fresh buffer: a filled empty tensor (a
  /// projection alone), or an empty one its epilogue does not read; not
  /// its caller's.
  static bool startsEmpty(ProjectionGroup &group) {
    linalg::GenericOp root = group.root();
    if (callerDestination(root))
      return false;
    Value init = root.getDpsInits()[0];
    if (!group.epilogue) {
      auto fill = init.getDefiningOp<linalg::FillOp>();
      return fill && fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>();
    }
    if (auto collapse = init.getDefiningOp<tensor::CollapseShapeOp>())
      init = collapse.getSrc();
    return init.getDefiningOp<tensor::EmptyOp>() &&
           !root.payloadUsesValueFromOperand(root.getDpsInitOperand(0));
  }

  /// `siblings` in the order of their roots, with what each reads moved
  /// before the first root, where their loop goes; those whose producers
  /// cannot move (side effects) are left to loops of their own.
  static SmallVector<ProjectionGroup>
  gatherSiblings(RewriterBase &rewriter, SmallVector<ProjectionGroup> siblings) {
    llvm::sort(siblings, [](ProjectionGroup &x, ProjectionGroup &y) {
      return x.root()->isBeforeInBlock(y.root());
    });
    SmallVector<ProjectionGroup> gathered{siblings.front()};
    Operation *first = siblings.front().root();
    for (ProjectionGroup &group : llvm::drop_begin(siblings))
      if (succeeded(moveOperationDependencies(rewriter, group.root(), first)))
        gathered.push_back(group);
    return gathered;
  }

  /// The column block of siblings blocked as `main`: the largest multiple
  /// of NR up to 128 that divides every group's columns.
  static int64_t siblingBlock(MutableArrayRef<ProjectionGroup> siblings,
                              const Blocking &main) {
    int64_t common = 0;
    for (ProjectionGroup &group : siblings) {
      Value w = group.projections.front().getDpsInputs()[1];
      common = std::gcd(common,
                        cast<RankedTensorType>(w.getType()).getDimSize(0));
    }
    return blockSize(common, main.columns,
                     std::max(kMaxBlockColumns, main.columns));
  }

  /// The register, panel and thread blocks of `op`, and those of the
  /// columns whole register blocks leave; none for a projection left alone.
  std::optional<std::pair<Blocking, std::optional<Blocking>>>
  blockingOf(linalg::GenericOp op) const {
    auto weights = cast<RankedTensorType>(op.getDpsInputs()[1].getType());
    int64_t columns = weights.getDimSize(0);
    // Nothing to block without columns or steps (y = 0, or the bias).
    if (columns == 0 || weights.getDimSize(1) == 0)
      return std::nullopt;
    Blocking main;
    main.rows = registerRows;
    main.depth = blockSize(weights.getDimSize(1), vectorWidth, kMaxPanelDepth);
    // A K that no vector divides stays as it is.
    if (!main.depth)
      return std::nullopt;
    // NR fills the 2 x register-rows accumulators with MR rows, or half
    // of them where only one vector divides N. Columns that no vector
    // divides (N % vector-width) form one narrower tail block.
    main.columns =
        columns % (2 * vectorWidth) != 0 && columns % vectorWidth == 0
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
    return std::make_pair(main, tail);
  }
};

} // namespace

std::unique_ptr<Pass>
mlir::tfm::createTfmCPUTileProjectionsPass(const CPUCodegenOptions &options) {
  auto pass = std::make_unique<TfmCPUTileProjectionsPass>();
  pass->setCodegenOptions(options);
  return pass;
}

//===- InPlaceAMX.cpp - a bf16 projection's column block on AMX tiles -----===//
//
// One [M, NB] column block of a bf16 projection of a few rows on AMX
// tiles that read its weights in place, as A tiles, with the rows as B
// tiles in pairs: no packing of the weights, which short prompts do not
// amortize.
//
//===----------------------------------------------------------------------===//

#include "ColumnBlocks.h"

#include "tfm/Codegen/LoopSchedule.h"
#include "tfm/Dialect/Tfm/Utils/LinalgBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::projection;

using Iter = utils::IteratorType;

Value mlir::tfm::projection::inPlaceRowPairs(OpBuilder &builder, Location loc,
                                             Value rows) {
  auto type = cast<RankedTensorType>(rows.getType());
  int64_t depth = type.getDimSize(1);
  auto index = [](OpBuilder &b, Location l, int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, l, value);
  };
  Value count = tensor::DimOp::create(builder, loc, rows, 0);
  Value blocks = arith::CeilDivUIOp::create(builder, loc, count,
                                            index(builder, loc, kAMXBlockRows));
  Value pairs = tensor::EmptyOp::create(
      builder, loc,
      ArrayRef<int64_t>{ShapedType::kDynamic, depth / 2, 2 * kAMXBlockRows},
      builder.getBF16Type(), ValueRange{blocks});
  // Threads over the 32-row blocks.
  auto forall = scf::ForallOp::create(builder, withStaticSchedule(loc),
                                      ArrayRef<OpFoldResult>{blocks},
                                      ValueRange{pairs}, std::nullopt);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(forall.getBody()->getTerminator());
  Value block = forall.getInductionVar(0);
  Value m0 = arith::MulIOp::create(builder, loc, block,
                                   index(builder, loc, kAMXBlockRows));
  Value packed = packBF16Pairs(builder, loc, rows, m0, index(builder, loc, 0),
                               kAMXBlockRows, depth, /*asBF16=*/true,
                               /*zeroPastEnd=*/true);
  builder.setInsertionPointToStart(forall.getTerminator().getBody());
  OpFoldResult zero = builder.getIndexAttr(0), one = builder.getIndexAttr(1);
  tensor::ParallelInsertSliceOp::create(
      builder, loc, packed, forall.getRegionIterArgs()[0],
      ArrayRef<OpFoldResult>{block, zero, zero},
      ArrayRef<OpFoldResult>{one, builder.getIndexAttr(depth / 2),
                             builder.getIndexAttr(2 * kAMXBlockRows)},
      ArrayRef<OpFoldResult>{one, one, one});
  return forall.getResult(0);
}

namespace {

/// y[m0 : +count, n1 : +32] (count <= 32) of a bf16 projection on AMX
/// tiles that read its weights in place: yᵀ[n, m] = Σ w[nBlock + n1 + n, k]
/// · rows[m0 + m, k] summed for 32 rows in an f32 scratch (the weights as A
/// tiles, 16 rows of 32 steps read with stride K; the rows'
/// inPlaceRowPairs as B tiles), whose first `count` columns are added to y
/// transposed.
Value inPlaceAMXBlock(OpBuilder &b, Location loc, Value rowPairs, Value w,
                      Value y, Value nBlock, Value m0, Value n1,
                      OpFoldResult count) {
  int64_t depth = cast<RankedTensorType>(w.getType()).getDimSize(1);
  int64_t panelDepth = blockSize(depth, 32, kMaxAMXPanelDepth);
  Type bf16 = b.getBF16Type();
  auto index = [](OpBuilder &b, Location l, int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, l, value);
  };
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  LinalgBuilder lb(b, loc);
  Value sums = lb.filledF32(
      {b.getIndexAttr(kAMXBlockColumns), b.getIndexAttr(kAMXBlockRows)}, 0.0);
  Value pairBlock =
      arith::DivUIOp::create(b, loc, m0, index(b, loc, kAMXBlockRows));
  Value weightRow = arith::AddIOp::create(b, loc, nBlock, n1);
  auto kLoop = scf::ForOp::create(
      b, loc, index(b, loc, 0), index(b, loc, depth), index(b, loc, panelDepth),
      ValueRange{sums},
      [&](OpBuilder &kb, Location kl, Value k0, ValueRange carried) {
        // [32, KC] weights as [32, KC/2, 2]; [KC/2, 2 x 32] row pairs as
        // [KC/2, 32, 2].
        Value weights =
            slice2D(kb, kl, w, weightRow, k0, kb.getIndexAttr(kAMXBlockColumns),
                    kb.getIndexAttr(panelDepth));
        Value weightPairs = tensor::ExpandShapeOp::create(
            kb, kl,
            RankedTensorType::get({kAMXBlockColumns, panelDepth / 2, 2}, bf16),
            weights, SmallVector<ReassociationIndices>{{0}, {1, 2}});
        Value kp0 = arith::DivUIOp::create(kb, kl, k0, index(kb, kl, 2));
        Value pairs = tensor::ExtractSliceOp::create(
            kb, kl,
            RankedTensorType::get({panelDepth / 2, 2 * kAMXBlockRows}, bf16),
            rowPairs, ArrayRef<OpFoldResult>{pairBlock, kp0, zero},
            ArrayRef<OpFoldResult>{one, kb.getIndexAttr(panelDepth / 2),
                                   kb.getIndexAttr(2 * kAMXBlockRows)},
            ArrayRef<OpFoldResult>{one, one, one});
        Value pairView = tensor::ExpandShapeOp::create(
            kb, kl,
            RankedTensorType::get({panelDepth / 2, kAMXBlockRows, 2}, bf16),
            pairs, SmallVector<ReassociationIndices>{{0}, {1, 2}});
        Value summed = amxTileBlock(kb, kl, weightPairs, pairView, carried[0]);
        scf::YieldOp::create(kb, kl, summed);
      });
  Value out =
      slice2D(b, loc, y, m0, n1, count, b.getIndexAttr(kAMXBlockColumns));
  Value sumsT = slice2D(b, loc, kLoop.getResult(0), zero, zero,
                        b.getIndexAttr(kAMXBlockColumns), count);
  Value added =
      lb.generic({sumsT}, {lb.map(2, {1, 0})}, out, lb.map(2, {0, 1}),
                 {Iter::parallel, Iter::parallel},
                 [](OpBuilder &gb, Location gl, ValueRange args) -> Value {
                   return arith::AddFOp::create(gb, gl, args[1], args[0]);
                 });
  return insert2D(b, loc, added, y, m0, n1, count,
                  b.getIndexAttr(kAMXBlockColumns));
}

} // namespace

Value mlir::tfm::projection::inPlaceAMXColumnBlock(OpBuilder &builder,
                                                   Location loc, Value rows,
                                                   Value rowPairs, Value w,
                                                   Value init, Value nBlock) {
  int64_t block = cast<RankedTensorType>(init.getType()).getDimSize(1);
  auto index = [](OpBuilder &b, Location l, int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, l, value);
  };
  Value count = tensor::DimOp::create(builder, loc, rows, 0);
  Value whole = arith::SubIOp::create(
      builder, loc, count,
      arith::RemUIOp::create(builder, loc, count,
                             index(builder, loc, kAMXBlockRows)));
  return scf::ForOp::create(
             builder, loc, index(builder, loc, 0), index(builder, loc, block),
             index(builder, loc, kAMXBlockColumns), ValueRange{init},
             [&](OpBuilder &b, Location l, Value n1, ValueRange carried) {
               auto rowLoop = scf::ForOp::create(
                   b, l, index(b, l, 0), whole, index(b, l, kAMXBlockRows),
                   carried,
                   [&](OpBuilder &mb, Location ml, Value m0, ValueRange inner) {
                     scf::YieldOp::create(
                         mb, ml,
                         inPlaceAMXBlock(mb, ml, rowPairs, w, inner[0], nBlock,
                                         m0, n1,
                                         mb.getIndexAttr(kAMXBlockRows)));
                   });
               // At most one step: the rows after the whole blocks.
               auto restLoop = scf::ForOp::create(
                   b, l, whole, count, index(b, l, kAMXBlockRows),
                   rowLoop.getResults(),
                   [&](OpBuilder &mb, Location ml, Value m0, ValueRange inner) {
                     Value left = arith::SubIOp::create(mb, ml, count, m0);
                     scf::YieldOp::create(mb, ml,
                                          inPlaceAMXBlock(mb, ml, rowPairs, w,
                                                          inner[0], nBlock, m0,
                                                          n1, left));
                   });
               scf::YieldOp::create(b, l, restLoop.getResults());
             })
      .getResult(0);
}

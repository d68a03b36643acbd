//===- DecomposeOnlineAttention.cpp - the CPU's attention tile body --------===//

#include "tfm/Codegen/Passes.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/Dialect/Tfm/Utils/LinalgBuilder.h"
#include "tfm/Dialect/Tfm/Utils/OnlineSoftmax.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMCPUDECOMPOSEONLINEATTENTIONPASS
#include "tfm/Codegen/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {

using Iter = utils::IteratorType;

/// Lanes of a key-row dot product: a 64-byte line of f32.
constexpr int64_t kDotLanes = 16;
/// Query tiles of at most this many rows (decode: G·Sq) read key rows in
/// place; taller ones pack Kᵀ.
constexpr int64_t kMaxKeyRowTileRows = 8;

/// Whether the scores of `query` [M, D] are dot products along key rows.
bool readsKeyRows(Value query) {
  auto type = cast<RankedTensorType>(query.getType());
  int64_t rows = type.getDimSize(0), headDim = type.getDimSize(1);
  return !ShapedType::isDynamic(rows) && rows <= kMaxKeyRowTileRows &&
         !ShapedType::isDynamic(headDim) && headDim % kDotLanes == 0;
}

/// Raw dot products [M, N], each key row read once, front to back, where it
/// lies: lane-wise products p[m, j, l] = Σ_c q[m, cL + l]·k[j, cL + l] over
/// chunks of L lanes, then s[m, j] = Σ_l p[m, j, l].
Value rowDotScores(LinalgBuilder &lb, Value query, Value key) {
  OpBuilder &b = lb.builder();
  Location loc = lb.location();
  auto lanes = [&](Value tile) {
    auto type = cast<RankedTensorType>(tile.getType());
    return tensor::ExpandShapeOp::create(
        b, loc,
        RankedTensorType::get({type.getDimSize(0),
                               type.getDimSize(1) / kDotLanes, kDotLanes},
                              type.getElementType()),
        tile, SmallVector<ReassociationIndices>{{0}, {1, 2}});
  };
  SmallVector<OpFoldResult> partialSizes{
      lb.sizeOf(query, 0), lb.sizeOf(key, 0), b.getIndexAttr(kDotLanes)};
  Value partial = lb.generic(
      {lanes(lb.tileF32(query, false)), lanes(key)},
      {lb.map(4, {0, 2, 3}), lb.map(4, {1, 2, 3})},
      lb.filledF32(partialSizes, 0.0), lb.map(4, {0, 1, 3}),
      {Iter::parallel, Iter::parallel, Iter::reduction, Iter::parallel},
      [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
        Value product = arith::MulFOp::create(
            nb, nl, args[0], LinalgBuilder::toF32(nb, nl, args[1]));
        return arith::AddFOp::create(nb, nl, args[2], product);
      });
  return lb.generic(
      {partial}, {lb.map(3, {0, 1, 2})},
      lb.filledF32({partialSizes[0], partialSizes[1]}, 0.0), lb.map(3, {0, 1}),
      {Iter::parallel, Iter::parallel, Iter::reduction},
      [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
        return arith::AddFOp::create(nb, nl, args[1], args[0]);
      });
}

/// Raw dot products [M, N] through a packed f32 Kᵀ [D, N], so that the
/// product is a plain matmul whose packing cost is shared by the M rows.
Value packedScores(LinalgBuilder &lb, Value query, Value key) {
  SmallVector<OpFoldResult> sizes{lb.sizeOf(query, 0), lb.sizeOf(key, 0)};
  return linalg::MatmulOp::create(
             lb.builder(), lb.location(),
             ValueRange{lb.tileF32(query, false), lb.tileF32(key, true)},
             ValueRange{lb.filledF32(sizes, 0.0)})
      .getResult(0);
}

OnlineAttentionProducts cpuProducts() {
  OnlineAttentionProducts products;
  products.scores = [](OpBuilder &b, Location loc, Value query, Value key) {
    LinalgBuilder lb(b, loc);
    return readsKeyRows(query) ? rowDotScores(lb, query, key)
                               : packedScores(lb, query, key);
  };
  products.accumulate = [](OpBuilder &b, Location loc, Value probs,
                           Value value, Value acc) {
    LinalgBuilder lb(b, loc);
    return linalg::MatmulOp::create(
               b, loc, ValueRange{probs, lb.tileF32(value, false)},
               ValueRange{acc})
        .getResult(0);
  };
  return products;
}

struct TfmCPUDecomposeOnlineAttentionPass
    : tfm::impl::TfmCPUDecomposeOnlineAttentionPassBase<
          TfmCPUDecomposeOnlineAttentionPass> {
  void runOnOperation() override {
    OnlineAttentionProducts products = cpuProducts();
    IRRewriter rewriter(&getContext());
    getOperation()->walk([&](OnlineAttentionOp op) {
      rewriter.setInsertionPoint(op);
      rewriter.replaceOp(op, decomposeOnlineAttention(rewriter, op, products));
    });
  }
};

} // namespace

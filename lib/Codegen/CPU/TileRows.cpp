//===- TileRows.cpp - run-time sized ops as parallel loops of static rows --===//
//
// A linalg op whose shape depends on the token count (a norm, a residual
// add, RoPE, an activation, a transpose of heads) has dynamic parallel
// loops over static rows. Tiling exactly those loops by 1 into an
// scf.forall leaves a static op per row, which tfm-cpu-vectorize turns into
// vector code, and the rows run on every thread:
//
//   %y = linalg.generic ins(%x : tensor<?x?x2048xf32>) ...
// becomes
//   %y = scf.forall (%b, %s) in (%B, %S) shared_outs(%o = ...) {
//     %row = tensor.extract_slice %x[%b, %s, 0] [1, 1, 2048] [1, 1, 1]
//     %r = linalg.generic ins(%row : tensor<1x1x2048xf32>) ...
//     scf.forall.in_parallel { tensor.parallel_insert_slice %r into %o ... }
//   }
//
//===----------------------------------------------------------------------===//

#include "tfm/Codegen/LoopSchedule.h"
#include "tfm/Codegen/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMCPUTILEROWSPASS
#include "tfm/Codegen/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {

/// Tile sizes for `op`: 1 for each dynamic loop, 0 (untiled) for the static
/// ones; none when a dynamic loop is a reduction (its rows are not
/// independent) or no loop is dynamic.
std::optional<SmallVector<int64_t>> rowTileSizes(linalg::LinalgOp op) {
  SmallVector<int64_t> sizes;
  bool anyDynamic = false;
  for (auto [range, iterator] :
       llvm::zip_equal(op.getStaticLoopRanges(), op.getIteratorTypesArray())) {
    bool dynamic = ShapedType::isDynamic(range);
    if (dynamic && iterator != utils::IteratorType::parallel)
      return std::nullopt;
    anyDynamic |= dynamic;
    sizes.push_back(dynamic ? 1 : 0);
  }
  if (!anyDynamic)
    return std::nullopt;
  return sizes;
}

struct TfmCPUTileRowsPass
    : tfm::impl::TfmCPUTileRowsPassBase<TfmCPUTileRowsPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (op.hasPureTensorSemantics())
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      std::optional<SmallVector<int64_t>> sizes = rowTileSizes(op);
      if (!sizes)
        continue;
      // Ops already inside a loop are tiles of something else (a
      // projection's column block and its epilogue): their rows go
      // sequentially, as parallel loops there would nest OpenMP regions.
      bool nested = op->getParentOfType<LoopLikeOpInterface>() != nullptr;
      scf::SCFTilingOptions options;
      options.setLoopType(nested ? scf::SCFTilingOptions::LoopType::ForOp
                                 : scf::SCFTilingOptions::LoopType::ForallOp);
      options.setTileSizes(getAsIndexOpFoldResult(&getContext(), *sizes));
      rewriter.setInsertionPoint(op);
      FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
          rewriter, cast<TilingInterface>(op.getOperation()), options);
      if (failed(tiled)) {
        op.emitError("could not be tiled by rows");
        return signalPassFailure();
      }
      // Every row costs the same.
      if (!nested)
        for (LoopLikeOpInterface loop : tiled->loops)
          loop->setLoc(tfm::withStaticSchedule(loop->getLoc()));
      rewriter.replaceOp(op, tiled->replacements);
    }
  }
};

} // namespace

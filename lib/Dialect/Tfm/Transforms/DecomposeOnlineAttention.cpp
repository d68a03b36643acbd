//===- DecomposeOnlineAttention.cpp - the generic tile body ----------------===//

#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/Dialect/Tfm/Transforms/Passes.h"
#include "tfm/Dialect/Tfm/Utils/OnlineSoftmax.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMDECOMPOSEONLINEATTENTIONPASS
#include "tfm/Dialect/Tfm/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {

struct TfmDecomposeOnlineAttentionPass
    : tfm::impl::TfmDecomposeOnlineAttentionPassBase<
          TfmDecomposeOnlineAttentionPass> {
  void runOnOperation() override {
    OnlineAttentionProducts products = OnlineAttentionProducts::generic();
    IRRewriter rewriter(&getContext());
    getOperation()->walk([&](OnlineAttentionOp op) {
      rewriter.setInsertionPoint(op);
      rewriter.replaceOp(op, decomposeOnlineAttention(rewriter, op, products));
    });
  }
};

} // namespace

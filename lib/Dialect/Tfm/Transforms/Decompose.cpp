//===- Decompose.cpp - expand composite tfm ops ----------------------------===//

#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/Dialect/Tfm/Transforms/Passes.h"
#include "tfm/Dialect/Tfm/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMDECOMPOSEPASS
#include "tfm/Dialect/Tfm/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {

/// y = linear(merge_heads(attention(rope(split_heads(linear(x, Wq, bq))),
///                                  rope(split_heads(linear(x, Wk, bk))),
///                                  split_heads(linear(x, Wv, bv)))), Wo, bo)
struct DecomposeSelfAttention : OpRewritePattern<SelfAttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SelfAttentionOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType inputType = op.getInput().getType();
    Type elementType = inputType.getElementType();
    int64_t batch = inputType.getDimSize(0), length = inputType.getDimSize(1);
    int64_t headDim = op.getHeadDim();

    // Projects x to `heads` heads: [B, S, heads*D] -> [B, heads, S, D].
    auto projectToHeads = [&](Value weight, Value bias, int64_t heads) {
      auto projected = RankedTensorType::get({batch, length, heads * headDim},
                                             elementType);
      auto split = RankedTensorType::get({batch, heads, length, headDim},
                                         elementType);
      Value linear = LinearOp::create(rewriter, loc, projected, op.getInput(),
                                      weight, bias);
      return SplitHeadsOp::create(rewriter, loc, split, linear).getResult();
    };
    auto applyRope = [&](Value heads) -> Value {
      RopeAttr rope = op.getRopeAttr();
      if (!rope)
        return heads;
      return RopeOp::create(
          rewriter, loc, heads.getType(),
          RopeStyleAttr::get(op.getContext(), rope.getStyle()), heads,
          op.getPositions(),
          rewriter.getF32FloatAttr(rope.getTheta().convertToDouble()),
          rope.getScaling());
    };

    int64_t heads = op.getNumHeads(), kvHeads = op.getNumKvHeads();
    Value query =
        applyRope(projectToHeads(op.getQWeight(), op.getQBias(), heads));
    Value key =
        applyRope(projectToHeads(op.getKWeight(), op.getKBias(), kvHeads));
    Value value = projectToHeads(op.getVWeight(), op.getVBias(), kvHeads);
    Value attention = AttentionOp::create(
        rewriter, loc, query.getType(), query, key, value, op.getKvLengths(),
        /*dense_mask=*/Value(), /*bias=*/Value(), op.getMaskAttr(),
        /*scale=*/FloatAttr(), /*softcap=*/FloatAttr());
    auto merged = RankedTensorType::get({batch, length, heads * headDim},
                                        elementType);
    Value mergedHeads = MergeHeadsOp::create(rewriter, loc, merged, attention);
    rewriter.replaceOpWithNewOp<LinearOp>(op, inputType, mergedHeads,
                                          op.getOWeight(), op.getOBias());
    return success();
  }
};

/// pre:  h = x + Attn(Norm1(x));   y = h + FFN(Norm2(h))
/// post: h = Norm1(x + Attn(x));   y = Norm2(h + FFN(h))
struct DecomposeDecoderBlock : OpRewritePattern<DecoderBlockOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(DecoderBlockOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type type = op.getInput().getType();
    auto norm = [&](Value x, Value weight, Value bias) -> Value {
      if (op.getNorm() == NormKind::rms_norm)
        return RMSNormOp::create(rewriter, loc, type, x, weight,
                                 op.getEpsAttr());
      return LayerNormOp::create(rewriter, loc, type, x, weight, bias,
                                 op.getEpsAttr());
    };
    auto attention = [&](Value x) -> Value {
      return SelfAttentionOp::create(
          rewriter, loc, type, x, op.getQWeight(), op.getQBias(),
          op.getKWeight(), op.getKBias(), op.getVWeight(), op.getVBias(),
          op.getOWeight(), op.getOBias(), op.getPositions(),
          op.getKvLengths(), op.getNumHeadsAttr(), op.getNumKvHeadsAttr(),
          op.getMaskAttr(), op.getRopeAttr());
    };
    auto ffn = [&](Value x) -> Value {
      return FFNOp::create(rewriter, loc, type, op.getFfnAttr(), x,
                           op.getGateWeight(), op.getUpWeight(),
                           op.getUpBias(), op.getDownWeight(),
                           op.getDownBias());
    };
    auto add = [&](Value a, Value b) -> Value {
      return arith::AddFOp::create(rewriter, loc, a, b);
    };

    Value x = op.getInput(), result;
    if (op.getPlacement() == NormPlacement::pre) {
      Value h = add(x, attention(norm(x, op.getAttnNormWeight(),
                                      op.getAttnNormBias())));
      result =
          add(h, ffn(norm(h, op.getFfnNormWeight(), op.getFfnNormBias())));
    } else {
      Value h = norm(add(x, attention(x)), op.getAttnNormWeight(),
                     op.getAttnNormBias());
      result = norm(add(h, ffn(h)), op.getFfnNormWeight(),
                    op.getFfnNormBias());
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct TfmDecomposePass
    : tfm::impl::TfmDecomposePassBase<TfmDecomposePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateTfmDecompositionPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::tfm::populateTfmDecompositionPatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposeSelfAttention, DecomposeDecoderBlock>(
      patterns.getContext());
}

//===- AttentionScores.cpp - attention scores and masks as scalars ---------===//

#include "tfm/Dialect/Tfm/Utils/AttentionScores.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::tfm;

static Value index(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

Value mlir::tfm::buildScaledScore(OpBuilder &b, Location loc, AttentionOp op,
                                  Value dot) {
  auto f32 = [&](double value) -> Value {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
  };
  Value score = arith::MulFOp::create(b, loc, dot, f32(op.getScaleOrDefault()));
  if (std::optional<APFloat> cap = op.getSoftcap()) {
    // score = cap * tanh(score / cap)
    Value c = f32(cap->convertToDouble());
    Value t =
        math::TanhOp::create(b, loc, arith::DivFOp::create(b, loc, score, c));
    score = arith::MulFOp::create(b, loc, t, c);
  }
  return score;
}

Value mlir::tfm::buildIsVisible(OpBuilder &b, Location loc, MaskAttr mask,
                                Value row, Value key, Value offset) {
  Value visible = arith::ConstantIntOp::create(b, loc, 1, 1);
  if (mask.isNone())
    return visible;
  Value position = arith::AddIOp::create(b, loc, row, offset);
  if (mask.getLeft() != MaskAttr::kUnbounded) {
    // key >= position - left
    Value first =
        arith::SubIOp::create(b, loc, position, index(b, loc, mask.getLeft()));
    visible = arith::AndIOp::create(
        b, loc, visible,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, key, first));
  }
  if (mask.getRight() != MaskAttr::kUnbounded) {
    // key <= position + right
    Value last =
        arith::AddIOp::create(b, loc, position, index(b, loc, mask.getRight()));
    visible = arith::AndIOp::create(
        b, loc, visible,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, key, last));
  }
  return visible;
}

std::pair<Value, Value>
mlir::tfm::buildVisibleKeyRange(OpBuilder &b, Location loc, MaskAttr mask,
                                Value firstRow, Value lastRow, Value offset,
                                Value kvLength) {
  Value zero = index(b, loc, 0);
  Value begin = zero, end = kvLength;
  if (mask.getLeft() != MaskAttr::kUnbounded) {
    // The first row sees keys from its position - left on.
    Value first = arith::SubIOp::create(
        b, loc, arith::AddIOp::create(b, loc, firstRow, offset),
        index(b, loc, mask.getLeft()));
    begin = arith::MaxSIOp::create(b, loc, first, zero);
  }
  if (mask.getRight() != MaskAttr::kUnbounded) {
    // The last row sees keys up to its position + right.
    Value last = arith::AddIOp::create(
        b, loc, arith::AddIOp::create(b, loc, lastRow, offset),
        index(b, loc, mask.getRight() + 1));
    end = arith::MinSIOp::create(b, loc, last, kvLength);
  }
  // An empty range is [begin, begin).
  end = arith::MaxSIOp::create(b, loc, end, begin);
  return {begin, end};
}

Value mlir::tfm::buildIsTileFullyVisible(OpBuilder &b, Location loc,
                                         MaskAttr mask, Value firstRow,
                                         Value lastRow, Value keyBegin,
                                         Value keyEnd, Value offset) {
  Value full = arith::ConstantIntOp::create(b, loc, 1, 1);
  if (mask.getLeft() != MaskAttr::kUnbounded) {
    // The last row is the most restricted on the left:
    // keyBegin >= position(lastRow) - left.
    Value first = arith::SubIOp::create(
        b, loc, arith::AddIOp::create(b, loc, lastRow, offset),
        index(b, loc, mask.getLeft()));
    full = arith::AndIOp::create(
        b, loc, full,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, keyBegin,
                              first));
  }
  if (mask.getRight() != MaskAttr::kUnbounded) {
    // The first row is the most restricted on the right:
    // keyEnd - 1 <= position(firstRow) + right.
    Value last = arith::AddIOp::create(
        b, loc, arith::AddIOp::create(b, loc, firstRow, offset),
        index(b, loc, mask.getRight() + 1));
    full = arith::AndIOp::create(
        b, loc, full,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, keyEnd,
                              last));
  }
  return full;
}

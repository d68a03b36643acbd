//===- ProjectionGroups.h - projections and their epilogues -----*- C++ -*-===//
//
// Which projections tfm-cpu-tile-projections computes together, and which
// elementwise ops it runs on their column blocks (their epilogues).
//
//===----------------------------------------------------------------------===//

#ifndef TFM_LIB_CODEGEN_CPU_PROJECTIONGROUPS_H
#define TFM_LIB_CODEGEN_CPU_PROJECTIONGROUPS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::tfm::projection {

/// Projections over the same rows and columns, and the elementwise op that
/// alone reads their results (their epilogue): gate and up with
/// act(gate)·up, a projection with its bias and activation, or with the
/// residual it is added to. Without an epilogue, one projection.
/// After them, a second op can read that result through a view that splits
/// its columns, [M, N] -> [M, C, ...] (RoPE: each head's pairs, [M, H, 2,
/// D/2]), directly or through slices of the dims after C: column blocks of
/// whole units of C (whole heads) are finished by that op alone.
struct ProjectionGroup {
  SmallVector<linalg::GenericOp> projections;
  linalg::GenericOp epilogue;
  tensor::ExpandShapeOp view;
  linalg::GenericOp viewedEpilogue;

  Value rows() { return projections.front().getDpsInputs()[0]; }
  /// The op whose result the group computes.
  linalg::GenericOp root() {
    if (viewedEpilogue)
      return viewedEpilogue;
    return epilogue ? epilogue : projections.front();
  }
  /// The projection or epilogue that the view reads.
  linalg::GenericOp viewed() {
    return epilogue ? epilogue : projections.front();
  }
  /// The columns of one unit of the view's dim C (1 without a view).
  int64_t columnUnit() const {
    tensor::ExpandShapeOp columnView = view;
    return columnView ? ShapedType::getNumElements(
                            columnView.getResultType().getShape().drop_front(2))
                      : 1;
  }
};

/// The group of `projection`: with the elementwise op that alone reads it
/// (and the other projections that op reads, each tileable by
/// `isTileable`), if `plain`; then with the viewed epilogue that reads its
/// result, if `viewed`.
ProjectionGroup groupOf(linalg::GenericOp projection,
                        function_ref<bool(linalg::GenericOp)> isTileable,
                        bool plain, bool viewed);

/// Whether `a` and `b` are the same tensor: one value, or two equal
/// side-effect-free ops on the same operands (the views of the same rows
/// that each projection makes before CSE).
bool sameTensor(Value a, Value b);

/// Whether `operand` of an elementwise op over [B, S, N] is the
/// [B, S, N] view of a projection's [M, N] result, or an elementwise op's
/// result is viewed as [M, N] again: collapsing the op to [M, N] lets the
/// projection's epilogue be tiled with it (a control function of
/// upstream's fold-reshape-by-collapsing patterns).
bool collapsesToProjection(OpOperand *operand);

/// Whether the elementwise op producing `operand` reads a projection and
/// only this elementwise op reads it: the two become one epilogue (bias,
/// then residual; a control function of upstream's elementwise fusion).
bool extendsEpilogue(OpOperand *operand);

} // namespace mlir::tfm::projection

#endif // TFM_LIB_CODEGEN_CPU_PROJECTIONGROUPS_H

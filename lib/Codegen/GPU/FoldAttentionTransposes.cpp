//===- FoldAttentionTransposes.cpp - attention through transposed views --===//
//
// tfm-gpu-fold-attention-transposes, between tfm-gpu-flash-attention and
// tfm-gpu-lower-buffer-attention: the attention kernel reads and writes its
// operands through transposed views (no transposed copies of q, k, v and
// the output), and transposes that move only unit dims become reshapes.
//
//===----------------------------------------------------------------------===//

#include "tfm/Codegen/Passes.h"

#include "AttentionKernel.h"

#include "tfm/Dialect/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGPUFOLDATTENTIONTRANSPOSESPASS
#include "tfm/Codegen/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;
using attention::bufferType;

namespace {

/// Whether `permutation` keeps the innermost dim innermost (a transposed
/// view then still has unit-stride rows).
bool keepsRows(ArrayRef<int64_t> permutation) {
  return !permutation.empty() &&
         permutation.back() == int64_t(permutation.size()) - 1;
}

/// An operand read as to_buffer(linalg.transpose(y)), by kernels alone,
/// becomes the transposed view of to_buffer(y): no transposed copy (q, k
/// and v split into heads, [B, S, H, D] -> [B, H, S, D]).
void readTransposedView(RewriterBase &rewriter,
                        bufferization::ToBufferOp read) {
  auto transpose = read.getTensor().getDefiningOp<linalg::TransposeOp>();
  if (!transpose || !read.getReadOnly() ||
      !keepsRows(transpose.getPermutation()) ||
      !llvm::all_of(read->getUsers(), [](Operation *user) {
        return isa<BufferAttentionOp>(user);
      }))
    return;
  rewriter.setInsertionPoint(read);
  Location loc = read.getLoc();
  Value source = transpose.getInput();
  Value buffer = bufferization::ToBufferOp::create(
      rewriter, loc, bufferType(cast<RankedTensorType>(source.getType())),
      source, /*readOnly=*/true);
  Value view = memref::TransposeOp::create(
      rewriter, loc, buffer,
      AffineMapAttr::get(AffineMap::getPermutationMap(
          transpose.getPermutation(), rewriter.getContext())));
  if (view.getType() != read.getType())
    view = memref::CastOp::create(rewriter, loc, read.getType(), view);
  rewriter.replaceOp(read, view);
}

/// A kernel result read only by a linalg.transpose (attention's heads
/// merged, [B, H, S, D] -> [B, S, H, D]) is written through the transposed
/// view of a buffer in the transpose's layout, which replaces it.
void writeTransposedView(RewriterBase &rewriter, BufferAttentionOp op) {
  auto alloc = op.getResult().getDefiningOp<memref::AllocOp>();
  if (!alloc)
    return;
  bufferization::ToTensorOp read;
  for (Operation *user : alloc->getUsers()) {
    auto asRead = dyn_cast<bufferization::ToTensorOp>(user);
    if (user == op)
      continue;
    if (!asRead || read)
      return;
    read = asRead;
  }
  if (!read || !read->hasOneUse())
    return;
  auto transpose = dyn_cast<linalg::TransposeOp>(*read->getUsers().begin());
  if (!transpose || !keepsRows(transpose.getPermutation()))
    return;
  ArrayRef<int64_t> permutation = transpose.getPermutation();
  rewriter.setInsertionPoint(alloc);
  Location loc = op.getLoc();
  SmallVector<OpFoldResult> sizes = alloc.getMixedSizes();
  SmallVector<OpFoldResult> transposedSizes;
  for (int64_t d : permutation)
    transposedSizes.push_back(sizes[d]);
  SmallVector<int64_t> shape;
  SmallVector<Value> dynamicSizes;
  dispatchIndexOpFoldResults(transposedSizes, dynamicSizes, shape);
  auto type = MemRefType::get(shape, alloc.getType().getElementType());
  Value buffer = memref::AllocOp::create(rewriter, loc, type, dynamicSizes);
  // Dim d of the view is dim inverse[d] of the buffer.
  SmallVector<int64_t> inverse = invertPermutationVector(permutation);
  Value view = memref::TransposeOp::create(
      rewriter, loc, buffer,
      AffineMapAttr::get(
          AffineMap::getPermutationMap(inverse, rewriter.getContext())));
  op.getResultMutable().assign(view);
  rewriter.setInsertionPoint(read);
  rewriter.replaceOp(transpose,
                     bufferization::ToTensorOp::create(
                         rewriter, loc, transpose.getResultTypes()[0], buffer,
                         /*restrict=*/true,
                         /*writable=*/true));
  rewriter.eraseOp(read);
  rewriter.eraseOp(alloc);
}

/// Reassociation indices that group each dim of `shape` that is not 1 with
/// the unit dims before it (those after the last join its group): the
/// collapse of `shape` to its other dims, or their expansion back to it.
SmallVector<ReassociationIndices> unitDimsJoined(ArrayRef<int64_t> shape) {
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices pending;
  for (int64_t d = 0, rank = shape.size(); d < rank; ++d) {
    pending.push_back(d);
    if (shape[d] != 1) {
      groups.push_back(pending);
      pending.clear();
    }
  }
  if (!groups.empty())
    llvm::append_range(groups.back(), pending);
  return groups;
}

/// A transpose that moves only unit dims, the others keeping their order
/// (decode's new k and v, [B, 1, H, D] -> [B, H, 1, D], on their way into
/// the KV caches), is the same data in the same order: a collapse to the
/// other dims and an expansion, views where the transpose was a copy.
void transposeAsReshape(RewriterBase &rewriter, linalg::TransposeOp op) {
  if (!op.hasPureTensorSemantics())
    return;
  auto inType = cast<RankedTensorType>(op.getInput().getType());
  auto outType = cast<RankedTensorType>(op.getResult()[0].getType());
  ArrayRef<int64_t> permutation = op.getPermutation();
  int64_t previous = -1;
  for (int64_t d : permutation) {
    if (inType.getDimSize(d) == 1)
      continue;
    if (d < previous)
      return;
    previous = d;
  }
  SmallVector<ReassociationIndices> inGroups =
      unitDimsJoined(inType.getShape());
  SmallVector<ReassociationIndices> outGroups =
      unitDimsJoined(outType.getShape());
  // Nothing to gain where every dim is 1, or nothing moves.
  if (inGroups.empty() ||
      llvm::equal(permutation, llvm::seq<int64_t>(0, permutation.size())))
    return;
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  Value rows =
      tensor::CollapseShapeOp::create(rewriter, loc, op.getInput(), inGroups);
  SmallVector<OpFoldResult> inSizes =
      tensor::getMixedSizes(rewriter, loc, op.getInput());
  SmallVector<OpFoldResult> outSizes;
  for (int64_t d : permutation)
    outSizes.push_back(inSizes[d]);
  rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(op, outType, rows,
                                                     outGroups, outSizes);
}

struct TfmGPUFoldAttentionTransposesPass
    : tfm::impl::TfmGPUFoldAttentionTransposesPassBase<
          TfmGPUFoldAttentionTransposesPass> {
  void runOnOperation() override {
    SmallVector<bufferization::ToBufferOp> reads;
    SmallVector<BufferAttentionOp> ops;
    getOperation().walk([&](Operation *op) {
      if (auto read = dyn_cast<bufferization::ToBufferOp>(op))
        reads.push_back(read);
      else if (auto attention = dyn_cast<BufferAttentionOp>(op))
        ops.push_back(attention);
    });
    IRRewriter rewriter(&getContext());
    // Views first, where the attention kernel reads or writes a transpose.

    for (bufferization::ToBufferOp read : reads)
      readTransposedView(rewriter, read);
    for (BufferAttentionOp op : ops)
      writeTransposedView(rewriter, op);
    // The rest, where it only moves unit dims.
    SmallVector<linalg::TransposeOp> transposes;
    getOperation().walk([&](linalg::TransposeOp transpose) {
      if (!transpose->use_empty())
        transposes.push_back(transpose);
    });
    for (linalg::TransposeOp transpose : transposes)
      transposeAsReshape(rewriter, transpose);
  }
};

} // namespace

//===- RowPrologue.cpp - a norm the few-rows kernel computes --------------===//

#include "RowPrologue.h"
#include "BufferAccess.h"
#include "ViewedBuffer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace mlir::tfm;

namespace {

bool isAllocation(Value buffer) {
  return buffer.getDefiningOp<memref::AllocOp>() != nullptr;
}

/// The last op before `before`, in its block, that writes allocation
/// `buffer`; null if there is none or some op's access is unknown.
Operation *lastWriter(Value buffer, Operation *before) {
  for (Operation *op = before->getPrevNode(); op; op = op->getPrevNode()) {
    BufferAccess access = accessOf(op);
    if (access.unknown)
      return nullptr;
    if (llvm::is_contained(access.writes, buffer))
      return op;
  }
  return nullptr;
}

/// The kind of an operand of a rank-`rank` loop nest indexed by `map`.
std::optional<RowOperandKind> kindOfMap(AffineMap map, int64_t rank) {
  MLIRContext *context = map.getContext();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, context);
  if (map == identity)
    return RowOperandKind::Element;
  if (map == identity.getMajorSubMap(rank - 1))
    return RowOperandKind::Row;
  if (map == AffineMap::get(rank, 0, getAffineDimExpr(rank - 1, context)))
    return RowOperandKind::Column;
  return std::nullopt;
}

/// Whether the kernel can evaluate `body`, less its terminator and
/// `skipped`, chunk by chunk: ops without memory effects or indices, each
/// elementwise (so that it applies to vectors) or without operands.
bool isElementwiseBody(Block &body, Operation *skipped = nullptr) {
  return llvm::all_of(body.without_terminator(), [&](Operation &op) {
    return &op == skipped ||
           (isMemoryEffectFree(&op) && !isa<linalg::IndexOp>(op) &&
            op.getNumResults() == 1 &&
            (op.getNumOperands() == 0 ||
             OpTrait::hasElementwiseMappableTraits(&op)));
  });
}

/// Whether `op`'s inputs are of a kind and layout the kernel reads: rows
/// and columns of identity layout (an Element operand is collapsed into
/// [M, K], a Row one into [M]), a Column operand of rank 1.
bool hasReadableInputs(linalg::GenericOp op, int64_t rank) {
  for (OpOperand *input : op.getDpsInputOperands()) {
    auto type = dyn_cast<MemRefType>(input->get().getType());
    std::optional<RowOperandKind> kind =
        kindOfMap(op.getMatchingIndexingMap(input), rank);
    if (!type || !kind || !type.getLayout().isIdentity())
      return false;
  }
  return true;
}

bool isAllParallel(linalg::GenericOp op) {
  return op.getNumParallelLoops() == op.getNumLoops();
}

/// `init` of `op`, an allocation of identity layout indexed by
/// `expected`, which the body does not read.
bool isWrittenInit(linalg::GenericOp op, RowOperandKind expected, int64_t rank,
                   bool bodyReadsIt = false) {
  if (op.getNumDpsInits() != 1 || !op.hasPureBufferSemantics())
    return false;
  OpOperand *init = op.getDpsInitOperand(0);
  auto type = cast<MemRefType>(init->get().getType());
  return isAllocation(init->get()) && type.getLayout().isIdentity() &&
         kindOfMap(op.getMatchingIndexingMap(init), rank) == expected &&
         (bodyReadsIt || op.getMatchingBlockArgument(init).use_empty());
}

/// The norm: elementwise over the rows it writes, `rank` loops.
bool isNorm(linalg::GenericOp op, int64_t rank) {
  return op.getNumLoops() == rank && isAllParallel(op) &&
         isWrittenInit(op, RowOperandKind::Element, rank) &&
         hasReadableInputs(op, rank) &&
         isElementwiseBody(op.getRegion().front());
}

/// The `addf` that a row reduction's body yields, `out + e` (or `e + out`)
/// with `out` read there only; null if it is not one.
arith::AddFOp reductionSum(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  Value out = body.getArguments().back();
  auto sum = body.getTerminator()->getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!sum || !out.hasOneUse() || !out.getType().isF32() ||
      (sum.getLhs() != out && sum.getRhs() != out))
    return nullptr;
  return sum;
}

/// A reduction over K of each row: `rank` loops, the last a reduction,
/// into an f32 row value.
bool isRowReduction(linalg::GenericOp op, int64_t rank) {
  auto iterators = op.getIteratorTypesArray();
  if (op.getNumLoops() != rank ||
      iterators.back() != utils::IteratorType::reduction ||
      op.getNumReductionLoops() != 1 ||
      !isWrittenInit(op, RowOperandKind::Row, rank, /*bodyReadsIt=*/true) ||
      !hasReadableInputs(op, rank))
    return false;
  arith::AddFOp sum = reductionSum(op);
  return sum && isElementwiseBody(op.getRegion().front(), sum);
}

/// An elementwise op over row values: `rank - 1` loops, every operand at
/// the identity.
bool isRowMap(linalg::GenericOp op, int64_t rank) {
  return op.getNumLoops() == rank - 1 && isAllParallel(op) &&
         isWrittenInit(op, RowOperandKind::Element, rank - 1) &&
         llvm::all_of(op.getDpsInputOperands(),
                      [&](OpOperand *input) {
                        return kindOfMap(op.getMatchingIndexingMap(input),
                                         rank - 1) == RowOperandKind::Element;
                      }) &&
         isElementwiseBody(op.getRegion().front());
}

/// The constant fill of allocation `buffer` right before `reduction`
/// writes it (its start value).
linalg::FillOp startFill(Value buffer, Operation *reduction) {
  auto fill = dyn_cast_or_null<linalg::FillOp>(lastWriter(buffer, reduction));
  if (!fill || fill.getDpsInits()[0] != buffer ||
      !matchPattern(fill.getDpsInputs()[0], m_Constant()))
    return nullptr;
  return fill;
}

/// Adds to `prologue.chain` the ops computing `op`'s row values, and
/// theirs; false if one is not a fill, a row reduction or a row map.
bool collectChain(RowPrologue &prologue, linalg::GenericOp op) {
  for (OpOperand *input : op.getDpsInputOperands()) {
    if (rowOperandKind(prologue, *input) != RowOperandKind::Row)
      continue;
    Value rowValues = input->get();
    if (!isAllocation(rowValues))
      return false;
    auto writer =
        dyn_cast_or_null<linalg::GenericOp>(lastWriter(rowValues, op));
    if (!writer || writer.getDpsInits()[0] != rowValues)
      return false;
    if (llvm::is_contained(prologue.chain, writer.getOperation()))
      continue;
    if (isRowReduction(writer, prologue.rank)) {
      linalg::FillOp fill = startFill(rowValues, writer);
      if (!fill)
        return false;
      prologue.chain.push_back(fill);
    } else if (!isRowMap(writer, prologue.rank)) {
      return false;
    }
    prologue.chain.push_back(writer);
    if (!collectChain(prologue, writer))
      return false;
  }
  return true;
}

/// Whether allocation `buffer`, written by `writer`, is used by nothing
/// but `allowed` until it is written again (or freed), in its block.
bool usedOnlyBy(Value buffer, Operation *writer,
                const DenseSet<Operation *> &allowed) {
  if (buffer.getDefiningOp()->getBlock() != writer->getBlock())
    return false;
  for (Operation *op = writer->getNextNode(); op; op = op->getNextNode()) {
    if (allowed.contains(op))
      continue;
    bool uses = false;
    op->walk([&](Operation *nested) {
      if (isa<ViewLikeOpInterface, memref::TransposeOp>(nested))
        return;
      uses |= llvm::any_of(nested->getOperands(), [&](Value operand) {
        return isa<MemRefType>(operand.getType()) &&
               viewedBuffer(operand) == buffer;
      });
    });
    if (!uses)
      continue;
    BufferAccess access = accessOf(op);
    if (access.unknown || llvm::is_contained(access.reads, buffer))
      return false;
    // Written again, or freed: what the prologue wrote is dead.
    if (llvm::is_contained(access.writes, buffer))
      return true;
    // A use that neither reads nor writes it (returned, yielded).
    return false;
  }
  return true;
}

} // namespace

RowOperandKind mlir::tfm::rowOperandKind(const RowPrologue &prologue,
                                         OpOperand &operand) {
  if (isa<linalg::FillOp>(operand.getOwner()))
    return RowOperandKind::Row;
  auto op = cast<linalg::GenericOp>(operand.getOwner());
  if (op.getNumLoops() == prologue.rank - 1)
    return RowOperandKind::Row;
  return *kindOfMap(op.getMatchingIndexingMap(&operand), prologue.rank);
}

std::optional<RowPrologue>
mlir::tfm::matchRowPrologue(Value a, linalg::GenericOp contraction,
                            Operation *launchPoint) {
  // A, or its [M, K] view collapsing the rows' dims.
  Value rows = a;
  if (auto collapse = a.getDefiningOp<memref::CollapseShapeOp>()) {
    rows = collapse.getSrc();
    auto groups = collapse.getReassociationIndices();
    int64_t rank = cast<MemRefType>(rows.getType()).getRank();
    if (groups.size() != 2 || groups[1].size() != 1 || groups[1][0] != rank - 1)
      return std::nullopt;
  }
  if (!isAllocation(rows))
    return std::nullopt;
  int64_t rank = cast<MemRefType>(rows.getType()).getRank();
  auto norm =
      dyn_cast_or_null<linalg::GenericOp>(lastWriter(rows, contraction));
  // In a loop, what the norm writes could be read again before it on the
  // next iteration.
  if (!norm || norm.getDpsInits()[0] != rows || !isNorm(norm, rank) ||
      norm->getParentOfType<LoopLikeOpInterface>())
    return std::nullopt;
  RowPrologue prologue{norm, {}, rank, {contraction}};
  if (!collectChain(prologue, norm))
    return std::nullopt;
  llvm::sort(prologue.chain,
             [](Operation *x, Operation *y) { return x->isBeforeInBlock(y); });

  // The kernel reads the rows and columns where it runs: nothing from the
  // first of the ops up to there may write them.
  SmallVector<Value> read;
  auto generics =
      llvm::to_vector(llvm::map_range(prologue.chain, [](Operation *op) {
        return dyn_cast<linalg::GenericOp>(op);
      }));
  generics.push_back(norm);
  for (linalg::GenericOp op : generics) {
    if (!op)
      continue;
    for (OpOperand *input : op.getDpsInputOperands())
      if (rowOperandKind(prologue, *input) != RowOperandKind::Row)
        read.push_back(viewedBuffer(input->get()));
  }
  Operation *first = prologue.chain.empty() ? norm : prologue.chain.front();
  if (first->getBlock() != launchPoint->getBlock() ||
      !first->isBeforeInBlock(launchPoint))
    return std::nullopt;
  for (Operation *op = first; op != launchPoint; op = op->getNextNode()) {
    BufferAccess access = accessOf(op);
    if (access.unknown)
      return std::nullopt;
    for (Value written : access.writes)
      if (llvm::any_of(read, [&](Value r) { return mayAlias(r, written); }))
        return std::nullopt;
  }
  return prologue;
}

bool mlir::tfm::isReadOnlyByPrologue(const RowPrologue &prologue) {
  linalg::GenericOp norm = prologue.norm;
  DenseSet<Operation *> ops(prologue.chain.begin(), prologue.chain.end());
  ops.insert(norm);
  DenseSet<Operation *> readers = ops;
  for (linalg::GenericOp projection : prologue.projections)
    readers.insert(projection);
  if (!usedOnlyBy(norm.getDpsInits()[0], norm, readers))
    return false;
  for (Operation *op : prologue.chain) {
    Value rowValues = cast<DestinationStyleOpInterface>(op).getDpsInits()[0];
    // From its first writer on: a reduction's fill.
    auto generic = dyn_cast<linalg::GenericOp>(op);
    if (generic && generic.getNumReductionLoops() > 0)
      continue;
    if (!usedOnlyBy(rowValues, op, ops))
      return false;
  }
  return true;
}

void mlir::tfm::skipForFewRows(RewriterBase &rewriter,
                               const RowPrologue &prologue, int64_t fewRows) {
  SmallVector<Operation *> ops(prologue.chain);
  ops.push_back(prologue.norm);
  // A static count of few rows: the tile kernel is not built, nothing
  // reads what the ops write.
  linalg::GenericOp norm = prologue.norm;
  ArrayRef<int64_t> shape =
      cast<MemRefType>(norm.getDpsInits()[0].getType()).getShape();
  if (!ShapedType::isDynamicShape(shape.drop_back())) {
    for (Operation *op : llvm::reverse(ops))
      rewriter.eraseOp(op);
    return;
  }
  // One leading size for every subview, from the first op's rows, so that
  // the loops of a reduction and its consumer keep equal bounds.
  auto rowOperands = [&](Operation *op) {
    SmallVector<OpOperand *> operands;
    for (OpOperand &operand : op->getOpOperands())
      if (isa<MemRefType>(operand.get().getType()) &&
          rowOperandKind(prologue, operand) != RowOperandKind::Column)
        operands.push_back(&operand);
    return operands;
  };
  Operation *first = ops.front();
  Location loc = first->getLoc();
  rewriter.setInsertionPoint(first);
  OpOperand *reference = rowOperands(first).front();
  SmallVector<OpFoldResult> sizes =
      memref::getMixedSizes(rewriter, loc, reference->get());
  if (rowOperandKind(prologue, *reference) == RowOperandKind::Element)
    sizes.pop_back();
  Value rows = arith::ConstantIndexOp::create(rewriter, loc, 1);
  for (OpFoldResult size : sizes)
    rows = arith::MulIOp::create(
        rewriter, loc, rows,
        getValueOrCreateConstantIndexOp(rewriter, loc, size));
  Value many = arith::CmpIOp::create(
      rewriter, loc, arith::CmpIPredicate::ugt, rows,
      arith::ConstantIndexOp::create(rewriter, loc, fewRows));
  Value lead = arith::SelectOp::create(
      rewriter, loc, many,
      getValueOrCreateConstantIndexOp(rewriter, loc, sizes.front()),
      arith::ConstantIndexOp::create(rewriter, loc, 0));

  DenseMap<Value, Value> subviews;
  for (Operation *op : ops) {
    rewriter.setInsertionPoint(op);
    for (OpOperand *operand : rowOperands(op)) {
      Value &subview = subviews[operand->get()];
      if (!subview) {
        Value buffer = operand->get();
        SmallVector<OpFoldResult> bufferSizes =
            memref::getMixedSizes(rewriter, op->getLoc(), buffer);
        bufferSizes[0] = lead;
        int64_t bufferRank = bufferSizes.size();
        subview = memref::SubViewOp::create(
            rewriter, op->getLoc(), buffer,
            SmallVector<OpFoldResult>(bufferRank, rewriter.getIndexAttr(0)),
            bufferSizes,
            SmallVector<OpFoldResult>(bufferRank, rewriter.getIndexAttr(1)));
      }
      rewriter.modifyOpInPlace(op, [&] { operand->set(subview); });
    }
  }
}

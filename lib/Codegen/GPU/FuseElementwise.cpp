//===- FuseElementwise.cpp - elementwise ops shaped for GPU kernels -------===//
//
// tfm-gpu-fuse-elementwise, on tensors: the elementwise ops that read a
// projection's f32 sums (its rounding to bf16/f16, the residual added to
// the rounded result, act(gate) · up and its rounding for the next
// projection) become one op, which tfm-gpu-tensor-core-matmul computes in
// the kernel's store; a per-row finishing step (a norm's
// 1/sqrt(mean + eps)) is computed in the op that applies it to the row;
// and an op gets an init of its own: a fill, which a projection's kernel
// turns into zeroed accumulators and a row reduction's into its starting
// value, or, when it does not read from the ops it shares one with, an
// empty tensor, a buffer of its own.
//
//===----------------------------------------------------------------------===//

#include "tfm/Codegen/Passes.h"
#include "tfm/Codegen/Projection.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGPUFUSEELEMENTWISEPASS
#include "tfm/Codegen/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {

bool isElementwise(linalg::GenericOp op) {
  return op.getNumParallelLoops() == op.getNumLoops() &&
         llvm::all_of(op.getIndexingMapsArray(),
                      [](AffineMap map) { return map.isIdentity(); });
}

/// Whether `op` reads the sums of a projection, or their [B, S, N] view.
bool readsProjection(linalg::GenericOp op) {
  return llvm::any_of(op.getDpsInputs(), [](Value input) {
    if (auto view = input.getDefiningOp<tensor::ExpandShapeOp>())
      input = view.getSrc();
    auto producer = input.getDefiningOp<linalg::GenericOp>();
    return producer && isProjection(producer);
  });
}

/// Whether the elementwise op producing `operand` reads a projection and
/// only the elementwise op reading `operand` reads it: the two become one
/// epilogue (a control function of upstream's elementwise fusion). Both
/// must map every operand by the identity, so that nothing is computed
/// twice.
bool extendsEpilogue(OpOperand *operand) {
  auto consumer = dyn_cast<linalg::GenericOp>(operand->getOwner());
  auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
  return consumer && producer && operand->get().hasOneUse() &&
         isElementwise(consumer) && isElementwise(producer) &&
         readsProjection(producer);
}

/// Whether the elementwise op producing `operand` is a per-row finishing
/// step that only the op reading `operand` reads, over fewer dims than that
/// op (a norm's 1/sqrt(mean + eps) of each row, which its scaling
/// broadcasts along the row): a few instructions per element there, rather
/// than a kernel of its own and a round trip through memory (a control
/// function of upstream's elementwise fusion). Only small f32 bodies: a
/// RoPE table's f64 sines stay computed once per position.
bool finishesRows(OpOperand *operand) {
  auto consumer = dyn_cast<linalg::GenericOp>(operand->getOwner());
  auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
  if (!consumer || !producer || !operand->get().hasOneUse() ||
      consumer.getNumParallelLoops() != consumer.getNumLoops() ||
      !isElementwise(producer) ||
      producer.getNumLoops() >= consumer.getNumLoops())
    return false;
  Block &body = producer.getRegion().front();
  auto isF64 = [](Value value) { return value.getType().isF64(); };
  return body.getOperations().size() <= 5 &&
         llvm::none_of(body.without_terminator(), [&](Operation &op) {
           return llvm::any_of(op.getOperands(), isF64) ||
                  llvm::any_of(op.getResults(), isF64);
         });
}

/// The ops whose results `op` reads, directly or not; for a tensor of a
/// buffer's values (`bufferization.to_tensor`, the attention kernel's
/// result), the ops that write the buffer too.
SetVector<Operation *> producersOf(Operation *op) {
  SetVector<Operation *> producers;
  SmallVector<Operation *> worklist = {op};
  auto visit = [&](Operation *producer) {
    if (producer && producers.insert(producer))
      worklist.push_back(producer);
  };
  while (!worklist.empty()) {
    Operation *current = worklist.pop_back_val();
    current->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands()) {
        Operation *producer = operand.getDefiningOp();
        if (producer && !current->isAncestor(producer))
          visit(producer);
      }
    });
    auto toTensor = dyn_cast<bufferization::ToTensorOp>(current);
    if (!toTensor)
      continue;
    // The buffer's users and its views' users.
    SmallVector<Value> views = {toTensor.getBuffer()};
    while (!views.empty())
      for (Operation *user : views.pop_back_val().getUsers()) {
        if (user == current)
          continue;
        visit(user);
        if (isa<ViewLikeOpInterface, memref::TransposeOp>(user))
          views.append(user->result_begin(), user->result_end());
      }
  }
  return producers;
}

/// Gives an op whose init another op also reads an init of its own, right
/// before it: every op that starts from a shared fill (of an empty tensor),
/// and an op that shares an empty tensor with an op it does not read from,
/// directly or not. Bufferized, a shared fill is a fill and a copy per
/// reader, where a fill right before a projection becomes the kernel's
/// zeroed accumulators, and one right before a row reduction its starting
/// value (tfm-gpu-map-to-kernels). A shared empty tensor is one buffer its
/// writers take turns in: that keeps independent ops (k's and v's rounded
/// rows) from running together (tfm-gpu-merge-launches), and costs ops in
/// a chain nothing.
void unshareInits(func::FuncOp function) {
  SmallVector<OpOperand *> shared;
  // For each shared empty tensor, the ops that keep it.
  DenseMap<Operation *, SmallVector<Operation *>> keepers;
  function.walk([&](DestinationStyleOpInterface op) {
    SetVector<Operation *> reads;
    bool readsKnown = false;
    for (OpOperand &init : op.getDpsInitsMutable()) {
      Operation *producer = init.get().getDefiningOp();
      if (!producer || producer->hasOneUse())
        continue;
      if (auto fill = dyn_cast<linalg::FillOp>(producer)) {
        if (fill.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>())
          shared.push_back(&init);
        continue;
      }
      if (!isa<tensor::EmptyOp>(producer))
        continue;
      if (!readsKnown) {
        reads = producersOf(op);
        readsKnown = true;
      }
      SmallVector<Operation *> &keeping = keepers[producer];
      if (llvm::all_of(keeping,
                       [&](Operation *other) { return reads.contains(other); }))
        keeping.push_back(op);
      else
        shared.push_back(&init);
    }
  });
  OpBuilder b(function.getContext());
  for (OpOperand *init : shared) {
    b.setInsertionPoint(init->getOwner());
    auto fill = init->get().getDefiningOp<linalg::FillOp>();
    if (!fill) {
      init->set(b.clone(*init->get().getDefiningOp())->getResult(0));
      continue;
    }
    Operation *empty = b.clone(*fill.getDpsInits()[0].getDefiningOp());
    IRMapping map;
    map.map(fill.getDpsInits()[0], empty->getResult(0));
    init->set(b.clone(*fill, map)->getResult(0));
  }
}

/// `value` with its elements rounded to `element` by a new elementwise op.
Value narrow(OpBuilder &b, Location loc, Value value, Type element) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, value);
  Value empty = tensor::EmptyOp::create(b, loc, sizes, element);
  AffineMap identity = b.getMultiDimIdentityMap(type.getRank());
  return linalg::GenericOp::create(
             b, loc, empty.getType(), ValueRange{value}, ValueRange{empty},
             ArrayRef<AffineMap>{identity, identity},
             SmallVector<utils::IteratorType>(type.getRank(),
                                              utils::IteratorType::parallel),
             [&](OpBuilder &b, Location loc, ValueRange args) {
               linalg::YieldOp::create(
                   b, loc,
                   arith::TruncFOp::create(b, loc, element, args[0])
                       .getResult());
             })
      .getResult(0);
}

/// A projection of f32 rows by bf16/f16 weights (a gated FFN's hidden rows,
/// which the CPU keeps in f32) reads them rounded to the weights' type, as
/// GPU frameworks compute it: the rounding is a new elementwise op on the
/// rows before their [M, K] collapse, which then joins the epilogue of the
/// projections that made them.
void narrowRows(RewriterBase &rewriter, linalg::GenericOp projection) {
  Value rows = projection.getDpsInputs()[0];
  Type element =
      cast<RankedTensorType>(projection.getDpsInputs()[1].getType())
          .getElementType();
  if (!cast<RankedTensorType>(rows.getType()).getElementType().isF32() ||
      !(element.isBF16() || element.isF16()))
    return;
  Location loc = projection.getLoc();
  rewriter.setInsertionPoint(projection);
  Value narrowed;
  if (auto collapse = rows.getDefiningOp<tensor::CollapseShapeOp>()) {
    rewriter.setInsertionPoint(collapse);
    narrowed = tensor::CollapseShapeOp::create(
        rewriter, loc, narrow(rewriter, loc, collapse.getSrc(), element),
        collapse.getReassociationIndices());
    rewriter.setInsertionPoint(projection);
  } else {
    narrowed = narrow(rewriter, loc, rows, element);
  }
  // The same projection on the narrowed rows, widening them as it reads.
  SmallVector<Value> inputs = {narrowed, projection.getDpsInputs()[1]};
  auto widened = linalg::GenericOp::create(
      rewriter, loc, projection.getResultTypes(), inputs,
      projection.getDpsInits(), projection.getIndexingMapsArray(),
      projection.getIteratorTypesArray(),
      [&](OpBuilder &b, Location loc, ValueRange args) {
        Block &body = projection.getRegion().front();
        IRMapping map;
        map.map(body.getArgument(0),
                arith::ExtFOp::create(b, loc, b.getF32Type(), args[0])
                    .getResult());
        map.map(body.getArgument(1), args[1]);
        map.map(body.getArgument(2), args[2]);
        for (Operation &op : body)
          b.clone(op, map);
      });
  rewriter.replaceOp(projection, widened);
  // The f32 rows' collapse, now unread: their producer must have a single
  // reader to take the rounding into its epilogue.
  if (Operation *collapse = rows.getDefiningOp(); collapse && collapse->use_empty())
    rewriter.eraseOp(collapse);
}

struct TfmGPUFuseElementwisePass
    : tfm::impl::TfmGPUFuseElementwisePassBase<
          TfmGPUFuseElementwisePass> {
  void runOnOperation() override {
    unshareInits(getOperation());
    SmallVector<linalg::GenericOp> projections;
    getOperation().walk([&](linalg::GenericOp op) {
      if (isProjection(op))
        projections.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp projection : projections)
      narrowRows(rewriter, projection);
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *operand) {
          return extendsEpilogue(operand) || finishesRows(operand);
        });
    // Sizes read off the ops' sources, so that reading a size is not a use
    // that keeps an op from fusing.
    memref::populateResolveRankedShapedTypeResultDimsPatterns(patterns);
    tensor::DimOp::getCanonicalizationPatterns(patterns, &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

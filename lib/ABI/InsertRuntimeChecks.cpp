//===- InsertRuntimeChecks.cpp - shape and index checks at entry points ----===//

#include "tfm/ABI/Attributes.h"
#include "tfm/ABI/Passes.h"
#include "tfm/ABI/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Analysis/TopologicalSortUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMINSERTRUNTIMECHECKSPASS
#include "tfm/ABI/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {

/// tensor.dim(scf.forall results[i], d) -> tensor.dim(shared_outs[i], d)
/// (scf.forall does not reify its result dims in LLVM 22).
struct DimOfForallResult : OpRewritePattern<tensor::DimOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::DimOp op,
                                PatternRewriter &rewriter) const override {
    auto result = dyn_cast<OpResult>(op.getSource());
    auto forall = result ? dyn_cast<scf::ForallOp>(result.getOwner())
                         : nullptr;
    if (!forall)
      return failure();
    rewriter.replaceOpWithNewOp<tensor::DimOp>(
        op, forall.getOutputs()[result.getResultNumber()], op.getIndex());
    return success();
  }
};

/// A size known at function entry: a constant, or dim `dim` of argument
/// `argument`.
struct EntrySize {
  std::optional<int64_t> constant;
  unsigned argument = 0, dim = 0;

  bool operator==(const EntrySize &other) const {
    return constant == other.constant &&
           (constant || (argument == other.argument && dim == other.dim));
  }
};

/// Two sizes that must be equal, a size that must be at least a constant,
/// or an index input that must lie in [0, bound).
struct Requirement {
  enum Kind { Equal, AtLeast, InRange } kind;
  unsigned lhs, rhs; // probe numbers (rhs only for Equal)
  unsigned indexArgument = 0;
  int64_t minimum = 0; // AtLeast
};

class CheckBuilder {
public:
  explicit CheckBuilder(func::FuncOp func) : func(func) {}
  void run();

private:
  void collectLinalgRequirements();
  void collectGatherRequirements();
  void collectOutputRequirements();
  void collectAssertedRequirements();
  /// Asserts whose condition is computed from the inputs alone (values of
  /// a KV cache's lengths against its capacity): their conditions, to be
  /// evaluated with the checks, and messages.
  void collectInputAsserts();
  /// The condition of `assertion` cloned at `builder`'s insertion point,
  /// or null when it depends on more than the inputs.
  Value cloneInputCondition(OpBuilder &builder, cf::AssertOp assertion);
  /// Adds a probe, tensor.dim / memref.dim of `shaped` at `dim` before the
  /// return, and returns its number.
  unsigned probe(Value shaped, int64_t dim);
  /// Rewrites the probes into sizes of arguments where possible; the
  /// result is indexed by probe number.
  std::vector<std::optional<EntrySize>> resolveProbes();
  std::string describe(const EntrySize &size);
  Value materialize(OpBuilder &builder, const EntrySize &size);
  Value allInRange(OpBuilder &builder, unsigned argument, Value bound);

  func::FuncOp func;
  std::vector<Requirement> requirements;
  SmallVector<Value> probes;
  SmallVector<cf::AssertOp> inputAsserts;
};

unsigned CheckBuilder::probe(Value shaped, int64_t dim) {
  OpBuilder builder(func.getBody().front().getTerminator());
  Location loc = func.getLoc();
  Value probe = isa<MemRefType>(shaped.getType())
                    ? memref::DimOp::create(builder, loc, shaped, dim)
                          .getResult()
                    : tensor::DimOp::create(builder, loc, shaped, dim)
                          .getResult();
  probes.push_back(probe);
  return probes.size() - 1;
}

/// Every dynamic dim an operand maps to a loop must equal the other dims
/// mapped to that loop. Only ops at the top of the function: inside loops
/// (tiled code) operands are slices whose sizes the tiling itself derived.
void CheckBuilder::collectLinalgRequirements() {
  for (auto op : func.getBody().front().getOps<linalg::LinalgOp>()) {
    if (!op.hasPureTensorSemantics())
      continue;
    SmallVector<SmallVector<std::pair<Value, unsigned>>> byLoop(
        op.getNumLoops());
    for (OpOperand &operand : op->getOpOperands()) {
      if (!isa<RankedTensorType>(operand.get().getType()))
        continue;
      AffineMap map = op.getMatchingIndexingMap(&operand);
      for (auto [i, expr] : llvm::enumerate(map.getResults()))
        if (auto dim = dyn_cast<AffineDimExpr>(expr))
          byLoop[dim.getPosition()].push_back({operand.get(), i});
    }
    for (auto &uses : byLoop) {
      for (size_t i = 1; i < uses.size(); ++i) {
        auto [first, firstDim] = uses[0];
        auto [other, otherDim] = uses[i];
        if (!cast<RankedTensorType>(first.getType()).isDynamicDim(firstDim) &&
            !cast<RankedTensorType>(other.getType()).isDynamicDim(otherDim))
          continue;
        requirements.push_back({Requirement::Equal, probe(first, firstDim),
                                probe(other, otherDim)});
      }
    }
  }
}

/// `tensor.extract %table[..., index_cast(%x), ...]` in a linalg body, with
/// %x an element of an input that is a function argument, reads out of
/// bounds unless every element of that argument is in [0, dim(%table)).
void CheckBuilder::collectGatherRequirements() {
  func.walk([&](tensor::ExtractOp extract) {
    auto linalgOp = extract->getParentOfType<linalg::LinalgOp>();
    if (!linalgOp || linalgOp->getBlock() != &func.getBody().front())
      return;
    for (auto [position, index] : llvm::enumerate(extract.getIndices())) {
      Value source = index;
      while (Operation *def = source.getDefiningOp()) {
        if (!isa<arith::IndexCastOp, arith::IndexCastUIOp>(def))
          break;
        source = def->getOperand(0);
      }
      auto element = dyn_cast<BlockArgument>(source);
      if (!element || element.getOwner() != linalgOp.getBlock() ||
          element.getArgNumber() >= linalgOp.getNumDpsInputs())
        continue;
      Value data = linalgOp.getDpsInputOperand(element.getArgNumber())->get();
      auto toTensor = data.getDefiningOp<bufferization::ToTensorOp>();
      auto argument =
          toTensor ? dyn_cast<BlockArgument>(toTensor.getBuffer()) : nullptr;
      if (!argument || argument.getOwner() != &func.getBody().front())
        continue;
      requirements.push_back({Requirement::InRange,
                              probe(extract.getTensor(), position), 0,
                              argument.getArgNumber()});
    }
  });
}

/// `cf.assert(tensor.dim(%a, i) == tensor.dim(%b, j))`: what a transform
/// (attention tiling) assumes about sizes; checked at entry instead.
void CheckBuilder::collectAssertedRequirements() {
  for (auto assertion : llvm::make_early_inc_range(
           func.getBody().front().getOps<cf::AssertOp>())) {
    auto compare = assertion.getArg().getDefiningOp<arith::CmpIOp>();
    if (!compare)
      continue;
    auto lhs = compare.getLhs().getDefiningOp<tensor::DimOp>();
    auto rhs = compare.getRhs().getDefiningOp<tensor::DimOp>();
    std::optional<int64_t> lhsDim = lhs ? lhs.getConstantIndex() : std::nullopt;
    std::optional<int64_t> rhsDim = rhs ? rhs.getConstantIndex() : std::nullopt;
    APInt minimum;
    if (compare.getPredicate() == arith::CmpIPredicate::eq && lhsDim &&
        rhsDim) {
      // dim(a, i) == dim(b, j)
      requirements.push_back({Requirement::Equal,
                              probe(lhs.getSource(), *lhsDim),
                              probe(rhs.getSource(), *rhsDim)});
    } else if (compare.getPredicate() == arith::CmpIPredicate::sge &&
               lhsDim &&
               matchPattern(compare.getRhs(), m_ConstantInt(&minimum))) {
      // dim(a, i) >= constant
      Requirement requirement{Requirement::AtLeast,
                              probe(lhs.getSource(), *lhsDim), 0};
      requirement.minimum = minimum.getSExtValue();
      requirements.push_back(requirement);
    } else {
      continue;
    }
    assertion.erase();
  }
}

/// Output buffers must have the shape of what is materialized into them.
void CheckBuilder::collectOutputRequirements() {
  func.walk([&](bufferization::MaterializeInDestinationOp op) {
    auto type = cast<RankedTensorType>(op.getSource().getType());
    for (int64_t dim = 0; dim < type.getRank(); ++dim)
      requirements.push_back({Requirement::Equal, probe(op.getDest(), dim),
                              probe(op.getSource(), dim)});
  });
}

std::vector<std::optional<EntrySize>> CheckBuilder::resolveProbes() {
  // Keep the probes alive through the rewrite as extra return operands;
  // the rewrite replaces them, so only the return knows their final values.
  Operation *ret = func.getBody().front().getTerminator();
  unsigned first = ret->getNumOperands();
  ret->insertOperands(first, probes);

  RewritePatternSet patterns(func.getContext());
  populateTfmDimResolutionPatterns(patterns);
  (void)applyPatternsGreedily(func, std::move(patterns));

  SmallVector<Value> current(ret->getOperands().drop_front(first));
  ret->eraseOperands(first, current.size());
  probes.clear();
  std::vector<std::optional<EntrySize>> resolved;
  for (Value value : current) {
    EntrySize size;
    APInt constant;
    auto dim = value.getDefiningOp<memref::DimOp>();
    auto argument = dim ? dyn_cast<BlockArgument>(dim.getSource()) : nullptr;
    std::optional<int64_t> index = dim ? dim.getConstantIndex() : std::nullopt;
    if (matchPattern(value, m_ConstantInt(&constant))) {
      size.constant = constant.getSExtValue();
      resolved.push_back(size);
    } else if (argument && argument.getOwner() == &func.getBody().front() &&
               index) {
      size.argument = argument.getArgNumber();
      size.dim = *index;
      resolved.push_back(size);
    } else {
      resolved.push_back(std::nullopt); // not expressible: not checked
    }
  }
  // Drop what only the probes used.
  for (Value value : current)
    if (Operation *op = value.getDefiningOp();
        op && op->use_empty() && isa<tensor::DimOp, memref::DimOp>(op))
      op->erase();
  return resolved;
}

std::string CheckBuilder::describe(const EntrySize &size) {
  if (size.constant)
    return std::to_string(*size.constant);
  auto name = func.getArgAttrOfType<StringAttr>(size.argument, kNameAttr);
  std::string argument =
      name ? name.str() : llvm::formatv("arg{0}", size.argument).str();
  return llvm::formatv("dim {0} of '{1}'", size.dim, argument).str();
}

Value CheckBuilder::materialize(OpBuilder &builder, const EntrySize &size) {
  Location loc = func.getLoc();
  if (size.constant)
    return arith::ConstantIndexOp::create(builder, loc, *size.constant);
  return memref::DimOp::create(builder, loc, func.getArgument(size.argument),
                               size.dim);
}

/// all(0 <= x < bound) over the integer argument `argument`, as an i1.
Value CheckBuilder::allInRange(OpBuilder &builder, unsigned argument,
                               Value bound) {
  Location loc = func.getLoc();
  // The argument's tensor: tfm-expose-entry-points made exactly one
  // `restrict` to_tensor per input, and a second one would break restrict.
  Value buffer = func.getArgument(argument);
  Value data;
  for (auto toTensor : func.getBody().front().getOps<bufferization::ToTensorOp>())
    if (toTensor.getBuffer() == buffer)
      data = toTensor.getResult();
  if (!data)
    return Value();
  auto tensorType = cast<RankedTensorType>(data.getType());
  Value init = tensor::EmptyOp::create(builder, loc, ArrayRef<int64_t>{},
                                       builder.getI1Type());
  Value yes = arith::ConstantIntOp::create(builder, loc, 1, 1);
  init = linalg::FillOp::create(builder, loc, ValueRange{yes}, ValueRange{init})
             .getResult(0);
  unsigned rank = tensorType.getRank();
  SmallVector<AffineMap> maps{
      builder.getMultiDimIdentityMap(rank),
      AffineMap::get(rank, 0, {}, builder.getContext())};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::reduction);
  auto reduce = linalg::GenericOp::create(
      builder, loc, TypeRange{init.getType()}, ValueRange{data},
      ValueRange{init}, maps, iterators,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        Value index =
            arith::IndexCastOp::create(b, loc, b.getIndexType(), args[0]);
        Value zero = arith::ConstantIndexOp::create(b, loc, 0);
        Value ok = arith::AndIOp::create(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, index,
                                  zero),
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, index,
                                  bound));
        linalg::YieldOp::create(b, loc,
                                ValueRange{arith::AndIOp::create(b, loc,
                                                                 args[1], ok)});
      });
  return tensor::ExtractOp::create(builder, loc, reduce.getResult(0),
                                   ValueRange{});
}

void CheckBuilder::collectInputAsserts() {
  for (auto assertion : func.getBody().front().getOps<cf::AssertOp>())
    inputAsserts.push_back(assertion);
}

Value CheckBuilder::cloneInputCondition(OpBuilder &builder,
                                        cf::AssertOp assertion) {
  Block &entry = func.getBody().front();
  // The ops the condition is computed by, down to the inputs' tensors (the
  // to_tensor ops the checks follow) and arguments, including the values
  // their regions use (a reduction's bounds).
  SetVector<Operation *> slice;
  SmallVector<Value> worklist{assertion.getArg()};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    Operation *producer = value.getDefiningOp();
    if (!producer) {
      if (cast<BlockArgument>(value).getOwner() != &entry)
        return Value();
      continue;
    }
    if (isa<bufferization::ToTensorOp>(producer) || slice.contains(producer))
      continue;
    if (producer->getBlock() != &entry || !isMemoryEffectFree(producer))
      return Value();
    slice.insert(producer);
    worklist.append(producer->operand_begin(), producer->operand_end());
    SetVector<Value> captured;
    getUsedValuesDefinedAbove(producer->getRegions(), captured);
    worklist.append(captured.begin(), captured.end());
  }
  IRMapping mapping;
  for (Operation *op : topologicalSort(slice))
    builder.clone(*op, mapping);
  return mapping.lookupOrDefault(assertion.getArg());
}

void CheckBuilder::run() {
  collectAssertedRequirements();
  collectInputAsserts();
  collectLinalgRequirements();
  collectGatherRequirements();
  collectOutputRequirements();
  if (requirements.empty() && inputAsserts.empty())
    return;
  std::vector<std::optional<EntrySize>> resolved = resolveProbes();

  // Checks go right after the inputs are wrapped as tensors (only constants
  // may precede those wrappers).
  Block &entry = func.getBody().front();
  OpBuilder builder(&entry, entry.begin());
  // After the inputs' to_tensor ops (not those of buffers the body makes,
  // such as a GPU kernel's result).
  for (auto toTensor : entry.getOps<bufferization::ToTensorOp>())
    if (isa<BlockArgument>(toTensor.getBuffer()))
      builder.setInsertionPointAfter(toTensor);
  Location loc = func.getLoc();

  SmallVector<std::pair<Value, std::string>> checks;
  SmallVector<std::string> seen;
  for (const Requirement &requirement : requirements) {
    std::optional<EntrySize> lhs = resolved[requirement.lhs];
    if (!lhs)
      continue;
    std::string message;
    Value ok;
    if (requirement.kind == Requirement::Equal) {
      std::optional<EntrySize> rhs = resolved[requirement.rhs];
      if (!rhs || *lhs == *rhs || (lhs->constant && rhs->constant))
        continue;
      // Put an argument's dim first in the message.
      EntrySize a = *lhs, b = *rhs;
      if (a.constant)
        std::swap(a, b);
      message = describe(a) + " must equal " + describe(b);
      if (llvm::is_contained(seen, message))
        continue;
      ok = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::eq,
                                 materialize(builder, a),
                                 materialize(builder, b));
    } else if (requirement.kind == Requirement::AtLeast) {
      if (lhs->constant)
        continue;
      message = llvm::formatv("{0} must be at least {1}", describe(*lhs),
                              requirement.minimum)
                    .str();
      if (llvm::is_contained(seen, message))
        continue;
      ok = arith::CmpIOp::create(
          builder, loc, arith::CmpIPredicate::sge, materialize(builder, *lhs),
          arith::ConstantIndexOp::create(builder, loc, requirement.minimum));
    } else {
      auto name = func.getArgAttrOfType<StringAttr>(requirement.indexArgument,
                                                    kNameAttr);
      message = llvm::formatv(
          "every element of '{0}' must be in [0, {1})",
          name ? name.str()
               : llvm::formatv("arg{0}", requirement.indexArgument).str(),
          describe(*lhs));
      if (llvm::is_contained(seen, message))
        continue;
      ok = allInRange(builder, requirement.indexArgument,
                      materialize(builder, *lhs));
      if (!ok)
        continue;
    }
    seen.push_back(message);
    checks.push_back({ok, message});
  }
  for (cf::AssertOp assertion : inputAsserts) {
    if (Value ok = cloneInputCondition(builder, assertion)) {
      checks.push_back({ok, assertion.getMsg().str()});
      assertion.erase();
    }
  }
  if (checks.empty())
    return;

  // status = first failed check's 1-based index, else 0.
  Value status = arith::ConstantIntOp::create(builder, loc, 0, 32);
  Value allOk = arith::ConstantIntOp::create(builder, loc, 1, 1);
  for (int64_t k = checks.size() - 1; k >= 0; --k) {
    Value code = arith::ConstantIntOp::create(builder, loc, k + 1, 32);
    status = arith::SelectOp::create(builder, loc, checks[k].first, status,
                                     code);
    allOk = arith::AndIOp::create(builder, loc, allOk, checks[k].first);
  }

  // Everything after the checks runs only if they all pass.
  Operation *terminator = entry.getTerminator();
  auto guarded = scf::IfOp::create(builder, loc, allOk, /*withElse=*/false);
  Block *body = guarded.thenBlock();
  for (Operation &op : llvm::make_early_inc_range(llvm::make_range(
           std::next(guarded->getIterator()), terminator->getIterator())))
    op.moveBefore(body->getTerminator());
  terminator->setOperand(0, status);

  SmallVector<Attribute> messages;
  for (auto &[ok, message] : checks)
    messages.push_back(builder.getStringAttr(message));
  func->setAttr(kChecksAttr, builder.getArrayAttr(messages));
}

struct TfmInsertRuntimeChecksPass
    : tfm::impl::TfmInsertRuntimeChecksPassBase<TfmInsertRuntimeChecksPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      ArrayRef<Type> results = func.getFunctionType().getResults();
      bool returnsStatus = results.size() == 1 && results[0].isInteger(32);
      if (func.isPrivate() || func.isExternal() || !returnsStatus ||
          func.getBody().getBlocks().size() != 1)
        continue;
      CheckBuilder(func).run();
    }
  }
};

} // namespace

void mlir::tfm::populateTfmDimResolutionPatterns(RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  memref::populateResolveRankedShapedTypeResultDimsPatterns(patterns);
  memref::populateResolveShapedTypeResultDimsPatterns(patterns);
  tensor::DimOp::getCanonicalizationPatterns(patterns, context);
  memref::DimOp::getCanonicalizationPatterns(patterns, context);
  bufferization::ToTensorOp::getCanonicalizationPatterns(patterns, context);
  patterns.add<DimOfForallResult>(context);
}

//===- PlanWorkspace.cpp - one heap allocation per call --------------------===//
//
// Every heap buffer of an entry point whose lifetime the function's straight-
// line code bounds (its activations, and the per-thread scratch of its
// parallel loops) becomes a view of one workspace, allocated when the
// function starts and freed when it returns. Buffer sizes are products of
// run-time sizes (the token count, the thread count) and constants, so the
// buffers are packed at compile time: one region of the workspace for each
// distinct product, and within it offsets in bytes per unit of that product.
//
//===----------------------------------------------------------------------===//

#include "tfm/Codegen/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/Transforms/BufferViewFlowAnalysis.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/SymbolTable.h"

#include <map>

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMCPUPLANWORKSPACEPASS
#include "tfm/Codegen/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {

constexpr int64_t kAlignment = 64;
constexpr StringLiteral kMaxThreads = "omp_get_max_threads";
constexpr StringLiteral kThreadNum = "omp_get_thread_num";

/// A run-time size the workspace is sized by: the thread count, an index
/// argument of the function, or a dim of a memref argument.
struct Leaf {
  enum Kind { ThreadCount, IndexArgument, ArgumentDim } kind;
  unsigned argument = 0;
  int64_t dim = 0;
  auto key() const { return std::make_tuple(kind, argument, dim); }
  bool operator<(const Leaf &other) const { return key() < other.key(); }
  bool operator==(const Leaf &other) const { return key() == other.key(); }
};

/// A size: a constant times a product of leaves (sorted).
struct Monomial {
  int64_t coefficient = 1;
  SmallVector<Leaf> leaves;

  Monomial &operator*=(const Monomial &other) {
    coefficient *= other.coefficient;
    leaves.append(other.leaves);
    llvm::sort(leaves);
    return *this;
  }
};

using MaybeMonomial = std::optional<Monomial>;

MaybeMonomial product(MaybeMonomial a, const MaybeMonomial &b) {
  if (!a || !b)
    return std::nullopt;
  *a *= *b;
  return a;
}

/// Sizes as monomials of the function's arguments, where the IR computes
/// them from those arguments with products of dims.
class SizeFactoring {
public:
  explicit SizeFactoring(func::FuncOp func) : entry(&func.getBody().front()) {}

  MaybeMonomial of(Value size) const {
    if (std::optional<int64_t> constant = getConstantIntValue(size))
      return Monomial{*constant, {}};
    if (auto argument = dyn_cast<BlockArgument>(size)) {
      if (argument.getOwner() != entry ||
          !argument.getType().isIndex())
        return std::nullopt;
      return Monomial{1, {{Leaf::IndexArgument, argument.getArgNumber()}}};
    }
    Operation *def = size.getDefiningOp();
    if (auto muli = dyn_cast<arith::MulIOp>(def))
      return product(of(muli.getLhs()), of(muli.getRhs()));
    if (auto apply = dyn_cast<affine::AffineApplyOp>(def))
      return ofExpr(apply.getAffineMap().getResult(0), apply);
    if (auto dim = dyn_cast<memref::DimOp>(def)) {
      std::optional<int64_t> index = dim.getConstantIndex();
      return index ? dimOf(dim.getSource(), *index) : std::nullopt;
    }
    return std::nullopt;
  }

  /// The size of dim `index` of `memref`.
  MaybeMonomial dimOf(Value memref, int64_t index) const {
    auto type = cast<MemRefType>(memref.getType());
    if (!type.isDynamicDim(index))
      return Monomial{type.getDimSize(index), {}};
    if (auto argument = dyn_cast<BlockArgument>(memref)) {
      if (argument.getOwner() != entry)
        return std::nullopt;
      return Monomial{
          1, {{Leaf::ArgumentDim, argument.getArgNumber(), index}}};
    }
    Operation *def = memref.getDefiningOp();
    if (auto collapse = dyn_cast_or_null<memref::CollapseShapeOp>(def)) {
      MaybeMonomial size = Monomial{};
      SmallVector<ReassociationIndices> groups =
          collapse.getReassociationIndices();
      for (int64_t source : groups[index])
        size = product(size, dimOf(collapse.getSrc(), source));
      return size;
    }
    if (auto expand = dyn_cast_or_null<memref::ExpandShapeOp>(def))
      return ofFoldResult(expand.getMixedOutputShape()[index]);
    if (auto alloc = dyn_cast_or_null<memref::AllocOp>(def))
      return of(alloc.getDynamicSizes()[type.getDynamicDimIndex(index)]);
    if (auto cast = dyn_cast_or_null<memref::CastOp>(def))
      return dimOf(cast.getSource(), index);
    return std::nullopt;
  }

private:
  MaybeMonomial ofFoldResult(OpFoldResult size) const {
    if (auto value = dyn_cast<Value>(size))
      return of(value);
    return Monomial{*getConstantIntValue(size), {}};
  }

  MaybeMonomial ofExpr(AffineExpr expr, affine::AffineApplyOp apply) const {
    if (auto constant = dyn_cast<AffineConstantExpr>(expr))
      return Monomial{constant.getValue(), {}};
    if (auto dim = dyn_cast<AffineDimExpr>(expr))
      return of(apply.getMapOperands()[dim.getPosition()]);
    if (auto symbol = dyn_cast<AffineSymbolExpr>(expr))
      return of(apply.getMapOperands()[apply.getAffineMap().getNumDims() +
                                       symbol.getPosition()]);
    auto binary = dyn_cast<AffineBinaryOpExpr>(expr);
    if (!binary || binary.getKind() != AffineExprKind::Mul)
      return std::nullopt;
    return product(ofExpr(binary.getLHS(), apply),
                   ofExpr(binary.getRHS(), apply));
  }

  Block *entry; // the function's, whose arguments are leaves
};

int64_t alignUp(int64_t bytes) {
  return llvm::divideCeil(bytes, kAlignment) * kAlignment;
}

/// The bytes of a buffer `alloc` allocates, or nullopt where that is no
/// plain buffer (a layout, a memory space, index or vector elements) or
/// its size is not a monomial.
MaybeMonomial bytesOf(memref::AllocOp alloc, const SizeFactoring &sizes) {
  MemRefType type = alloc.getType();
  Type element = type.getElementType();
  if (!type.getLayout().isIdentity() || type.getMemorySpace() ||
      !element.isIntOrFloat() ||
      alloc.getAlignment().value_or(kAlignment) > kAlignment)
    return std::nullopt;
  // Elements of fewer than 8 bits (i1) take a byte each.
  MaybeMonomial bytes =
      Monomial{llvm::divideCeil(element.getIntOrFloatBitWidth(), 8), {}};
  for (int64_t index = 0; index < type.getRank(); ++index)
    bytes = product(bytes, sizes.dimOf(alloc, index));
  return bytes;
}

/// The one memref.dealloc of `alloc`, in its block.
memref::DeallocOp deallocOf(memref::AllocOp alloc) {
  std::optional<Operation *> dealloc = memref::findDealloc(alloc);
  if (!dealloc || !*dealloc || (*dealloc)->getBlock() != alloc->getBlock())
    return {};
  return dyn_cast<memref::DeallocOp>(*dealloc);
}

/// Buffers that share one span of the function's code and one product of
/// leaves. A thread's buffers of a parallel region form one slot; the
/// region needs one slot per thread.
struct Item {
  SmallVector<memref::AllocOp> allocs;
  SmallVector<int64_t> slotOffsets; // bytes per unit, within the slot
  int64_t slotUnits = 0;            // bytes per unit of one slot
  omp::ParallelOp perThread;        // null: one slot
  SmallVector<Leaf> slotLeaves;     // the slot's product
  int64_t first = 0, last = 0;      // the span, in code positions
  int64_t offset = 0;               // bytes per unit of the group's product
};

class WorkspacePlan {
public:
  WorkspacePlan(func::FuncOp func)
      : func(func), sizes(func), aliases(func) {}

  /// Collects the buffers and packs them; false if there are none.
  bool plan() {
    number(func.getBody().front());
    for (memref::AllocOp alloc : allocs)
      addBuffer(alloc);
    for (omp::ParallelOp parallel : parallels)
      addThreadScratch(parallel);
    for (auto &[leaves, items] : groups)
      peaks[leaves] = pack(items);
    return !groups.empty();
  }

  /// Allocates the workspace and makes each buffer a view of it.
  void rewrite();

private:
  /// Gives the ops of `block` and of the branches of its scf.ifs positions
  /// in the order they can run, and collects the buffers there.
  void number(Block &block) {
    for (Operation &op : block) {
      int64_t position = next++;
      if (auto alloc = dyn_cast<memref::AllocOp>(op))
        allocs.push_back(alloc);
      if (auto parallel = dyn_cast<omp::ParallelOp>(op))
        parallels.push_back(parallel);
      if (isa<scf::IfOp>(op))
        for (Region &region : op.getRegions())
          for (Block &nested : region)
            number(nested);
      span[&op] = {position, next - 1};
    }
  }

  /// A buffer of the numbered code, if its last use and its free are in its
  /// own block.
  void addBuffer(memref::AllocOp alloc) {
    MaybeMonomial bytes = bytesOf(alloc, sizes);
    memref::DeallocOp dealloc = deallocOf(alloc);
    if (!bytes || !dealloc)
      return;
    Block *block = alloc->getBlock();
    int64_t last = span[alloc].second;
    for (Value alias : aliases.resolve(alloc.getResult()))
      for (Operation *user : alias.getUsers()) {
        Operation *ancestor = block->findAncestorOpInBlock(*user);
        if (!ancestor)
          return; // it outlives its block
        if (isa<memref::DeallocOp>(user) && user != dealloc)
          return;
        last = std::max(last, span[ancestor].second);
      }
    Item item;
    item.allocs = {alloc};
    item.slotOffsets = {0};
    item.slotUnits = alignUp(bytes->coefficient);
    item.slotLeaves = bytes->leaves;
    item.first = span[alloc].first;
    item.last = last;
    groups[item.slotLeaves].push_back(std::move(item));
  }

  /// The heap scratch at the start of a parallel region, which each thread
  /// allocates once: one slot per thread, one item per product of leaves.
  void addThreadScratch(omp::ParallelOp parallel) {
    std::map<SmallVector<Leaf>, Item> items;
    for (auto alloc : parallel.getRegion().front().getOps<memref::AllocOp>()) {
      MaybeMonomial bytes = bytesOf(alloc, sizes);
      if (!bytes || !deallocOf(alloc))
        continue;
      Item &item = items[bytes->leaves];
      item.allocs.push_back(alloc);
      item.slotOffsets.push_back(item.slotUnits);
      item.slotUnits += alignUp(bytes->coefficient);
    }
    auto [first, last] = span[parallel];
    for (auto &[leaves, item] : items) {
      item.perThread = parallel;
      item.slotLeaves = leaves;
      item.first = first;
      item.last = last;
      SmallVector<Leaf> groupLeaves = leaves;
      groupLeaves.push_back({Leaf::ThreadCount});
      llvm::sort(groupLeaves);
      groups[groupLeaves].push_back(std::move(item));
    }
  }

  /// Places each item at the lowest offset that no item alive at the same
  /// time occupies, largest first; returns the bytes per unit needed.
  static int64_t pack(MutableArrayRef<Item> items) {
    SmallVector<Item *> order;
    for (Item &item : items)
      order.push_back(&item);
    llvm::sort(order, [](Item *a, Item *b) {
      return std::make_pair(-a->slotUnits, a->first) <
             std::make_pair(-b->slotUnits, b->first);
    });
    SmallVector<Item *> placed;
    int64_t peak = 0;
    for (Item *item : order) {
      SmallVector<Item *> live;
      for (Item *other : placed)
        if (other->first <= item->last && item->first <= other->last)
          live.push_back(other);
      llvm::sort(live, [](Item *a, Item *b) { return a->offset < b->offset; });
      int64_t offset = 0;
      for (Item *other : live) {
        if (offset + item->slotUnits <= other->offset)
          break;
        offset = std::max(offset, other->offset + other->slotUnits);
      }
      item->offset = offset;
      peak = std::max(peak, offset + item->slotUnits);
      placed.push_back(item);
    }
    return peak;
  }

  func::FuncOp func;
  SizeFactoring sizes;
  BufferViewFlowAnalysis aliases;
  int64_t next = 0;
  DenseMap<Operation *, std::pair<int64_t, int64_t>> span;
  SmallVector<memref::AllocOp> allocs; // in the numbered blocks
  SmallVector<omp::ParallelOp> parallels;
  std::map<SmallVector<Leaf>, SmallVector<Item>> groups;
  std::map<SmallVector<Leaf>, int64_t> peaks;
};

/// The declaration of libomp's `name`, an int query of no arguments.
func::FuncOp declareThreadQuery(ModuleOp module, StringRef name) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto type = b.getFunctionType({}, {b.getI32Type()});
  auto declaration = func::FuncOp::create(b, module.getLoc(), name, type);
  declaration.setPrivate();
  return declaration;
}

void WorkspacePlan::rewrite() {
  Block &entry = func.getBody().front();
  Location loc = func.getLoc();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  auto mul = [&](Value lhs, Value rhs) -> Value {
    return b.createOrFold<arith::MulIOp>(loc, lhs, rhs);
  };
  auto add = [&](Value lhs, Value rhs) -> Value {
    return b.createOrFold<arith::AddIOp>(loc, lhs, rhs);
  };
  auto threadQuery = [&](StringRef query) -> Value {
    auto module = func->getParentOfType<ModuleOp>();
    auto call = func::CallOp::create(b, loc, declareThreadQuery(module, query));
    return arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                      call.getResult(0));
  };
  // The products of leaves, computed once at the start of the function.
  Value threads;
  std::map<SmallVector<Leaf>, Value> products;
  auto productOf = [&](const SmallVector<Leaf> &leaves) -> Value {
    Value &product = products[leaves];
    if (product)
      return product;
    product = constant(1);
    for (const Leaf &leaf : leaves) {
      Value size;
      switch (leaf.kind) {
      case Leaf::ThreadCount:
        if (!threads)
          threads = threadQuery(kMaxThreads);
        size = threads;
        break;
      case Leaf::IndexArgument:
        size = entry.getArgument(leaf.argument);
        break;
      case Leaf::ArgumentDim:
        size = memref::DimOp::create(b, loc, entry.getArgument(leaf.argument),
                                     leaf.dim);
        break;
      }
      product = mul(product, size);
    }
    return product;
  };
  // The groups one after the other.
  std::map<SmallVector<Leaf>, Value> bases;
  Value total = constant(0);
  for (auto &[leaves, peak] : peaks) {
    bases[leaves] = total;
    total = add(total, mul(constant(peak), productOf(leaves)));
  }
  for (auto &[leaves, items] : groups)
    for (Item &item : items)
      productOf(item.slotLeaves);
  auto workspace = memref::AllocOp::create(
      b, loc, MemRefType::get({ShapedType::kDynamic}, b.getI8Type()),
      ValueRange{total}, b.getI64IntegerAttr(kAlignment));
  func.walk([&](func::ReturnOp ret) {
    b.setInsertionPoint(ret);
    memref::DeallocOp::create(b, loc, workspace);
  });

  DenseMap<Operation *, Value> threadNumbers; // per parallel region
  for (auto &[leaves, items] : groups) {
    for (Item &item : items) {
      // Where the item's slot starts: the calling thread's, per thread.
      b.setInsertionPoint(item.allocs.front());
      Value slotUnit = productOf(item.slotLeaves);
      Value start =
          add(bases[leaves], mul(constant(item.offset), productOf(leaves)));
      if (item.perThread) {
        Value &thread = threadNumbers[item.perThread];
        if (!thread) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(&item.perThread.getRegion().front());
          thread = threadQuery(kThreadNum);
        }
        start = add(start, mul(thread, mul(constant(item.slotUnits), slotUnit)));
      }
      for (auto [alloc, offset] : llvm::zip(item.allocs, item.slotOffsets)) {
        b.setInsertionPoint(alloc);
        Value shift = add(start, mul(constant(offset), slotUnit));
        Value view =
            memref::ViewOp::create(b, alloc.getLoc(), alloc.getType(),
                                   workspace, shift, alloc.getDynamicSizes());
        deallocOf(alloc)->erase();
        alloc.replaceAllUsesWith(view);
        alloc->erase();
      }
    }
  }
}

struct TfmCPUPlanWorkspacePass
    : tfm::impl::TfmCPUPlanWorkspacePassBase<TfmCPUPlanWorkspacePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> functions;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && func.getBody().hasOneBlock())
        functions.push_back(func);
    for (func::FuncOp func : functions) {
      WorkspacePlan plan(func);
      if (!plan.plan())
        continue;
      plan.rewrite();
    }
  }
};

} // namespace

//===- PackedWeights.cpp - weights as contiguous [KC, NR] panels ----------===//
//
// The packed layout of an f32 projection's weights, made in every call or
// once: an entry-point input `<weight>.packed` holds a weight's first Nm
// columns as [Nm / NR, K, NR] (each NR-column panel transposed and scaled
// by its column scale), and the pass tfm-cpu-prepare-weights builds the
// entry point prepare_weights that makes every such input from the
// weights. The [KC, NR] panels a column block reads are slices of it.
//
//===----------------------------------------------------------------------===//

#include "PackedWeights.h"
#include "ProjectionBlocks.h"

#include "tfm/ABI/Attributes.h"
#include "tfm/Codegen/Passes.h"
#include "tfm/Codegen/Projection.h"
#include "tfm/Dialect/Tfm/Utils/LinalgBuilder.h"
#include "tfm/Runtime/Manifest.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMCPUPREPAREWEIGHTSPASS
#include "tfm/Codegen/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::projection;

Value mlir::tfm::projection::packScaled(OpBuilder &b, Location loc, Value w,
                                        Value scale, Value row, Value k0,
                                        int64_t rows, int64_t depth,
                                        int64_t columns) {
  using Iter = utils::IteratorType;
  LinalgBuilder lb(b, loc);
  Value tile = slice2D(b, loc, w, row, k0, b.getIndexAttr(rows),
                       b.getIndexAttr(depth));
  assert(rows % columns == 0 && "a column block holds whole NR-column panels");
  int64_t panels = rows / columns;
  Value strips = tensor::ExpandShapeOp::create(
      b, loc,
      RankedTensorType::get({panels, columns, depth},
                            getElementTypeOrSelf(w.getType())),
      tile, SmallVector<ReassociationIndices>{{0, 1}, {2}});
  // Loops (panel, step, column).
  SmallVector<Value> inputs{strips};
  SmallVector<AffineMap> maps{lb.map(3, {0, 2, 1})};
  if (scale) {
    inputs.push_back(scaleSteps(b, loc, scale, k0, depth));
    maps.push_back(lb.map(3, {1}));
  }
  return lb.generic(
      inputs, maps,
      lb.empty({b.getIndexAttr(panels), b.getIndexAttr(depth),
                b.getIndexAttr(columns)},
               lb.f32()),
      lb.map(3, {0, 1, 2}), {Iter::parallel, Iter::parallel, Iter::parallel},
      [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
        Value value = LinalgBuilder::toF32(nb, nl, args[0]);
        if (args.size() == 3)
          value = arith::MulFOp::create(nb, nl, value,
                                        LinalgBuilder::toF32(nb, nl, args[1]));
        return value;
      });
}

/// The entry-point input that `tensor` reads whole and read-only (its
/// bufferization.to_tensor), with its name; else null.
static BlockArgument entryInput(Value tensor, func::FuncOp func) {
  auto toTensor = tensor.getDefiningOp<bufferization::ToTensorOp>();
  auto count = func->getAttrOfType<IntegerAttr>(kInputCountAttr);
  if (!toTensor || toTensor.getWritable() || !count)
    return BlockArgument();
  auto argument = dyn_cast<BlockArgument>(toTensor.getBuffer());
  if (!argument || argument.getOwner() != &func.getBody().front() ||
      argument.getArgNumber() >= count.getInt() ||
      !func.getArgAttrOfType<StringAttr>(argument.getArgNumber(), kNameAttr))
    return BlockArgument();
  return argument;
}

static StringAttr nameOf(func::FuncOp func, unsigned argument) {
  return func.getArgAttrOfType<StringAttr>(argument, kNameAttr);
}

Value mlir::tfm::projection::prepackedWeight(RewriterBase &rewriter,
                                             linalg::GenericOp projection,
                                             int64_t columns,
                                             int64_t packedColumns) {
  auto func = projection->getParentOfType<func::FuncOp>();
  Value w = projection.getDpsInputs()[1];
  Value scale = columnScaleOf(projection);
  auto weightType = cast<RankedTensorType>(w.getType());
  BlockArgument weight = func ? entryInput(w, func) : BlockArgument();
  BlockArgument scaleInput = scale ? entryInput(scale, func) : BlockArgument();
  if (!weight || (scale && !scaleInput) || !weightType.getElementType().isF32() ||
      (scale && !getElementTypeOrSelf(scale.getType()).isF32()) ||
      packedColumns <= 0 || packedColumns % columns != 0)
    return Value();

  MLIRContext *context = rewriter.getContext();
  StringAttr weightName = nameOf(func, weight.getArgNumber());
  StringAttr scaleName =
      scaleInput ? nameOf(func, scaleInput.getArgNumber()) : StringAttr();
  auto name = StringAttr::get(context, weightName.strref() + ".packed");
  int64_t depth = weightType.getDimSize(1);
  auto type = MemRefType::get({packedColumns / columns, depth, columns},
                              rewriter.getF32Type());
  unsigned count = func->getAttrOfType<IntegerAttr>(kInputCountAttr).getInt();
  Block &entry = func.getBody().front();
  auto readOf = [&](BlockArgument input) -> Value {
    for (Operation *user : input.getUsers())
      if (auto toTensor = dyn_cast<bufferization::ToTensorOp>(user))
        return toTensor;
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(&entry);
    return bufferization::ToTensorOp::create(
        rewriter, func.getLoc(),
        RankedTensorType::get(type.getShape(), type.getElementType()), input,
        /*restrict=*/true, /*writable=*/false);
  };
  // An input of this name already: this very packing (a second projection
  // of the weight), or something else, which keeps packing per call.
  for (unsigned i = 0; i < count; ++i) {
    if (nameOf(func, i) != name)
      continue;
    bool same =
        func.getArgument(i).getType() == type &&
        func.getArgAttr(i, kPackedWeightAttr) == weightName &&
        func.getArgAttr(i, kPackedScaleAttr) == Attribute(scaleName);
    return same ? readOf(func.getArgument(i)) : Value();
  }
  SmallVector<NamedAttribute> attributes{
      rewriter.getNamedAttr(kNameAttr, name),
      rewriter.getNamedAttr(kPackedWeightAttr, weightName)};
  if (scaleName)
    attributes.push_back(rewriter.getNamedAttr(kPackedScaleAttr, scaleName));
  if (failed(func.insertArgument(count, type,
                                 rewriter.getDictionaryAttr(attributes),
                                 func.getLoc())))
    return Value();
  func->setAttr(kInputCountAttr, rewriter.getI64IntegerAttr(count + 1));
  return readOf(func.getArgument(count));
}

namespace {

/// A packed input as an entry point declares it: what it is made from.
struct Packing {
  MemRefType type;
  StringAttr weight, scale;
  Location loc;
};

struct TfmCPUPrepareWeightsPass
    : tfm::impl::TfmCPUPrepareWeightsPassBase<TfmCPUPrepareWeightsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Every packed input by name, and the inputs they are made from.
    llvm::MapVector<StringAttr, Packing> packings;
    llvm::MapVector<StringAttr, Type> sources;
    for (auto func : module.getOps<func::FuncOp>()) {
      auto count = func->getAttrOfType<IntegerAttr>(kInputCountAttr);
      if (func.isPrivate() || func.isExternal() || !count)
        continue;
      auto source = [&](StringAttr name) -> LogicalResult {
        for (unsigned i = 0, e = count.getInt(); i < e; ++i) {
          if (nameOf(func, i) != name)
            continue;
          Type type = func.getArgument(i).getType();
          auto [it, added] = sources.try_emplace(name, type);
          if (!added && it->second != type)
            return func.emitError() << "input '" << name.strref()
                                    << "' has another type here than in an "
                                       "earlier entry point";
          return success();
        }
        return func.emitError()
               << "no input '" << name.strref() << "' to pack from";
      };
      for (unsigned i = 0, e = count.getInt(); i < e; ++i) {
        auto weight = func.getArgAttrOfType<StringAttr>(i, kPackedWeightAttr);
        if (!weight)
          continue;
        auto scale = func.getArgAttrOfType<StringAttr>(i, kPackedScaleAttr);
        Packing packing{cast<MemRefType>(func.getArgument(i).getType()),
                        weight, scale, func.getLoc()};
        auto [it, added] = packings.try_emplace(nameOf(func, i), packing);
        if (!added && (it->second.type != packing.type ||
                       it->second.weight != weight ||
                       it->second.scale != scale)) {
          func.emitError() << "packed input '" << nameOf(func, i).strref()
                           << "' is made otherwise in an earlier entry point";
          return signalPassFailure();
        }
        if (failed(source(weight)) || (scale && failed(source(scale))))
          return signalPassFailure();
      }
    }
    if (packings.empty())
      return;
    if (module.lookupSymbol(llvm::StringRef(kPrepareWeightsEntry))) {
      module.emitError() << "the module has a symbol '"
                         << llvm::StringRef(kPrepareWeightsEntry)
                         << "' already, the name of the entry point that "
                            "packs the weights";
      return signalPassFailure();
    }

    MLIRContext *context = module.getContext();
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    Location loc = packings.front().second.loc;
    SmallVector<Type> types;
    SmallVector<StringAttr> names;
    for (auto &[name, type] : sources) {
      types.push_back(type);
      names.push_back(name);
    }
    for (auto &[name, packing] : packings) {
      types.push_back(packing.type);
      names.push_back(name);
    }
    auto func = func::FuncOp::create(
        b, loc, llvm::StringRef(kPrepareWeightsEntry),
        FunctionType::get(context, types, {b.getI32Type()}));
    for (auto [i, name] : llvm::enumerate(names))
      func.setArgAttr(i, kNameAttr, name);
    func->setAttr(kInputCountAttr, b.getI64IntegerAttr(sources.size()));
    func->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                  b.getUnitAttr());
    Block *entry = func.addEntryBlock();
    b.setInsertionPointToStart(entry);
    llvm::DenseMap<StringAttr, Value> inputs;
    for (auto [i, name] : llvm::enumerate(llvm::make_first_range(sources))) {
      auto type = cast<MemRefType>(entry->getArgument(i).getType());
      inputs[name] = bufferization::ToTensorOp::create(
          b, loc, RankedTensorType::get(type.getShape(), type.getElementType()),
          entry->getArgument(i), /*restrict=*/true, /*writable=*/false);
    }
    auto index = [&](int64_t value) -> Value {
      return arith::ConstantIndexOp::create(b, loc, value);
    };
    for (auto [i, packing] :
         llvm::enumerate(llvm::make_second_range(packings))) {
      ArrayRef<int64_t> shape = packing.type.getShape();
      int64_t panels = shape[0], depth = shape[1], columns = shape[2];
      Value w = inputs.lookup(packing.weight);
      Value scale = packing.scale ? inputs.lookup(packing.scale) : Value();
      Value init = tensor::EmptyOp::create(b, loc, shape, b.getF32Type());
      // Threads over the panels, each packed whole (K steps of NR columns).
      auto forall = scf::ForallOp::create(
          b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(panels)},
          ValueRange{init}, std::nullopt);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(forall.getBody()->getTerminator());
        Value p = forall.getInductionVar(0);
        Value row = arith::MulIOp::create(b, loc, p, index(columns));
        Value panel =
            packScaled(b, loc, w, scale, row, index(0), columns, depth, columns);
        b.setInsertionPointToStart(forall.getTerminator().getBody());
        OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
        tensor::ParallelInsertSliceOp::create(
            b, loc, panel, forall.getRegionIterArgs()[0],
            ArrayRef<OpFoldResult>{p, zero, zero},
            ArrayRef<OpFoldResult>{one, b.getIndexAttr(depth),
                                   b.getIndexAttr(columns)},
            ArrayRef<OpFoldResult>{one, one, one});
      }
      bufferization::MaterializeInDestinationOp::create(
          b, loc, TypeRange(), forall.getResult(0),
          entry->getArgument(sources.size() + i), /*restrict=*/true,
          /*writable=*/true);
    }
    func::ReturnOp::create(b, loc,
                           ValueRange{arith::ConstantIntOp::create(
                               b, loc, 0, 32)});
  }
};

} // namespace

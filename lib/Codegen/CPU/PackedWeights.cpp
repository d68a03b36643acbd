//===- PackedWeights.cpp - weights as contiguous [KC, NR] panels ----------===//
//
// The packed layout of an f32 projection's weights, made in every call or
// once: an entry-point input `<weight>.packed` holds a weight [N, K] as
// [ceil(N / NR), K, NR] (each NR-column panel transposed and scaled by its
// column scale, the last padded with zero columns), and the pass
// tfm-cpu-prepare-weights builds the entry point prepare_weights that makes
// every such input from the weights, and drops the weights so packed from
// the other entry points. The [KC, NR] panels a column block reads are
// slices of it.
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
#include "mlir/IR/Iterators.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/FormatVariadic.h"

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
                                        int64_t columns, bool transposed) {
  using Iter = utils::IteratorType;
  LinalgBuilder lb(b, loc);
  assert(rows % columns == 0 && "a column block holds whole NR-column panels");
  int64_t panels = rows / columns;
  Type element = getElementTypeOrSelf(w.getType());
  // Loops (panel, step, column).
  Value strips;
  AffineMap stripMap;
  if (transposed) {
    Value tile = slice2D(b, loc, w, k0, row, b.getIndexAttr(depth),
                         b.getIndexAttr(rows));
    strips = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get({depth, panels, columns}, element), tile,
        SmallVector<ReassociationIndices>{{0}, {1, 2}});
    stripMap = lb.map(3, {1, 0, 2});
  } else {
    Value tile = slice2D(b, loc, w, row, k0, b.getIndexAttr(rows),
                         b.getIndexAttr(depth));
    strips = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get({panels, columns, depth}, element), tile,
        SmallVector<ReassociationIndices>{{0, 1}, {2}});
    stripMap = lb.map(3, {0, 2, 1});
  }
  SmallVector<Value> inputs{strips};
  SmallVector<AffineMap> maps{stripMap};
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

namespace {
/// What a projection's weight [N, K] is read from: rows [offset, offset +
/// N) of an entry point's input, as it lies or (`transposed`) of its
/// transpose, the input then being wᵀ.
struct WeightSource {
  BlockArgument input;
  bool transposed = false;
  int64_t offset = 0;
};
} // namespace

static std::optional<WeightSource> weightSource(Value w, func::FuncOp func) {
  WeightSource source;
  if (auto slice = w.getDefiningOp<tensor::ExtractSliceOp>()) {
    ArrayRef<int64_t> offsets = slice.getStaticOffsets();
    ArrayRef<int64_t> sizes = slice.getStaticSizes();
    if (slice.getSourceType().getRank() != 2 || !slice.hasUnitStride() ||
        ShapedType::isDynamic(offsets[0]) || offsets[1] != 0 ||
        sizes[1] != slice.getSourceType().getDimSize(1))
      return std::nullopt;
    source.offset = offsets[0];
    w = slice.getSource();
  }
  if (auto transpose = w.getDefiningOp<linalg::TransposeOp>()) {
    if (transpose.getPermutation() != ArrayRef<int64_t>{1, 0})
      return std::nullopt;
    source.transposed = true;
    w = transpose.getInput();
  }
  source.input = entryInput(w, func);
  if (!source.input)
    return std::nullopt;
  return source;
}

Value mlir::tfm::projection::prepackedWeight(RewriterBase &rewriter,
                                             linalg::GenericOp projection,
                                             int64_t columns) {
  auto func = projection->getParentOfType<func::FuncOp>();
  Value w = projection.getDpsInputs()[1];
  Value scale = columnScaleOf(projection);
  auto weightType = cast<RankedTensorType>(w.getType());
  std::optional<WeightSource> source =
      func ? weightSource(w, func) : std::nullopt;
  BlockArgument scaleInput = scale ? entryInput(scale, func) : BlockArgument();
  if (!source || (scale && !scaleInput) ||
      !weightType.getElementType().isF32() ||
      (scale && !getElementTypeOrSelf(scale.getType()).isF32()) ||
      weightType.getDimSize(0) <= 0)
    return Value();

  StringAttr weightName = nameOf(func, source->input.getArgNumber());
  StringAttr scaleName =
      scaleInput ? nameOf(func, scaleInput.getArgNumber()) : StringAttr();
  int64_t rows = weightType.getDimSize(0), depth = weightType.getDimSize(1);
  int64_t sourceRows = cast<MemRefType>(source->input.getType())
                           .getDimSize(source->transposed ? 1 : 0);
  bool allRows = source->offset == 0 && rows == sourceRows;
  std::string name = weightName.str();
  if (!allRows)
    name += llvm::formatv("[{0}:{1}]", source->offset, source->offset + rows);
  name += ".packed";
  int64_t panels = llvm::divideCeil(rows, columns);
  auto type = MemRefType::get({panels, depth, columns}, rewriter.getF32Type());
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
  SmallVector<NamedAttribute> attributes{
      rewriter.getNamedAttr(kNameAttr, rewriter.getStringAttr(name)),
      rewriter.getNamedAttr(kPackedWeightAttr, weightName)};
  if (scaleName)
    attributes.push_back(rewriter.getNamedAttr(kPackedScaleAttr, scaleName));
  if (source->transposed)
    attributes.push_back(
        rewriter.getNamedAttr(kPackedTransposedAttr, rewriter.getUnitAttr()));
  if (!allRows)
    attributes.push_back(
        rewriter.getNamedAttr(kPackedRowsAttr, rewriter.getDenseI64ArrayAttr(
                                                   {source->offset, rows})));
  DictionaryAttr packing = rewriter.getDictionaryAttr(attributes);
  // An input of this name already: this very packing (a second projection
  // of the weight), or something else, which keeps packing per call.
  for (unsigned i = 0; i < count; ++i) {
    if (nameOf(func, i).strref() != name)
      continue;
    bool same = func.getArgument(i).getType() == type &&
                func.getArgAttrDict(i) == packing;
    return same ? readOf(func.getArgument(i)) : Value();
  }
  if (failed(func.insertArgument(count, type, packing, func.getLoc())))
    return Value();
  func->setAttr(kInputCountAttr, rewriter.getI64IntegerAttr(count + 1));
  return readOf(func.getArgument(count));
}

namespace {

/// A packed input as an entry point declares it: what it is made from
/// (`attributes`: its argument attributes, which say so).
struct Packing {
  MemRefType type;
  DictionaryAttr attributes;
  StringAttr weight, scale;
  bool transposed;
  DenseI64ArrayAttr rows; // [offset, count], or null: all
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
        Packing packing{
            cast<MemRefType>(func.getArgument(i).getType()),
            func.getArgAttrDict(i),
            weight,
            scale,
            func.getArgAttr(i, kPackedTransposedAttr) != nullptr,
            func.getArgAttrOfType<DenseI64ArrayAttr>(i, kPackedRowsAttr),
            func.getLoc()};
        auto [it, added] = packings.try_emplace(nameOf(func, i), packing);
        if (!added && (it->second.type != packing.type ||
                       it->second.attributes != packing.attributes)) {
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
      int64_t depth = shape[1], columns = shape[2];
      Value w = inputs.lookup(packing.weight);
      Value scale = packing.scale ? inputs.lookup(packing.scale) : Value();
      bool transposed = packing.transposed;
      // The rows [first, first + rows) of w, or of wᵀ.
      int64_t first = 0;
      int64_t rows = cast<RankedTensorType>(w.getType())
                         .getDimSize(transposed ? 1 : 0);
      if (packing.rows) {
        first = packing.rows[0];
        rows = packing.rows[1];
      }
      int64_t whole = rows / columns, left = rows % columns;
      OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
      SmallVector<OpFoldResult> ones(3, one);
      auto panelSizes = [&](int64_t width) -> SmallVector<OpFoldResult> {
        return {one, b.getIndexAttr(depth), b.getIndexAttr(width)};
      };
      // Built in the output itself: from a tensor.empty, two packings of
      // the same shape (two tails of 8 columns, say) would share one
      // empty tensor and its zero fill after CSE, and empty-tensor
      // elimination would then write both into one output.
      Value destination = entry->getArgument(sources.size() + i);
      Value packed = bufferization::ToTensorOp::create(
          b, loc, RankedTensorType::get(shape, b.getF32Type()), destination,
          /*restrict=*/true, /*writable=*/true);
      // Threads over the whole panels, each packed whole (K steps of NR
      // columns).
      if (whole) {
        auto forall = scf::ForallOp::create(
            b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(whole)},
            ValueRange{packed}, std::nullopt);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(forall.getBody()->getTerminator());
        Value p = forall.getInductionVar(0);
        Value row = arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, p, index(columns)),
            index(first));
        Value panel = packScaled(b, loc, w, scale, row, index(0), columns,
                                 depth, columns, transposed);
        b.setInsertionPointToStart(forall.getTerminator().getBody());
        tensor::ParallelInsertSliceOp::create(
            b, loc, panel, forall.getRegionIterArgs()[0],
            ArrayRef<OpFoldResult>{p, zero, zero}, panelSizes(columns), ones);
        b.setInsertionPointAfter(forall);
        packed = forall.getResult(0);
      }
      // The rows left by whole panels: the first columns of the last,
      // whose others are zeros.
      if (left) {
        SmallVector<OpFoldResult> last{b.getIndexAttr(whole), zero, zero};
        Value panel = tensor::ExtractSliceOp::create(b, loc, packed, last,
                                                     panelSizes(columns), ones);
        Value zeros = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
        panel = linalg::FillOp::create(b, loc, zeros, panel).getResult(0);
        Value tailPanel =
            packScaled(b, loc, w, scale, index(first + whole * columns),
                       index(0), left, depth, left, transposed);
        panel = tensor::InsertSliceOp::create(
            b, loc, tailPanel, panel, SmallVector<OpFoldResult>(3, zero),
            panelSizes(left), ones);
        packed = tensor::InsertSliceOp::create(b, loc, panel, packed, last,
                                               panelSizes(columns), ones);
      }
      bufferization::MaterializeInDestinationOp::create(
          b, loc, TypeRange(), packed, destination, /*restrict=*/true,
          /*writable=*/true);
    }
    func::ReturnOp::create(b, loc,
                           ValueRange{arith::ConstantIntOp::create(
                               b, loc, 0, 32)});
    for (auto entryPoint : module.getOps<func::FuncOp>())
      if (entryPoint != func)
        dropUnreadWeights(entryPoint);
  }

  /// Drops the inputs of `func` that it packed once and reads no more
  /// (every projection of the weight reads its packed input), so that a
  /// caller need not hold them beside their packed copies, and records
  /// their indices (kDroppedInputsAttr) for the manifest.
  static void dropUnreadWeights(func::FuncOp func) {
    auto count = func->getAttrOfType<IntegerAttr>(kInputCountAttr);
    if (func.isPrivate() || func.isExternal() || !count)
      return;
    llvm::SmallDenseSet<StringAttr> sources;
    for (unsigned i = 0, e = count.getInt(); i < e; ++i)
      for (llvm::StringRef attr : {kPackedWeightAttr, kPackedScaleAttr})
        if (auto name = func.getArgAttrOfType<StringAttr>(i, attr))
          sources.insert(name);
    if (sources.empty())
      return;
    // What the tiling left unused, such as the transpose of a Conv1D weight
    // that every projection now reads packed, reads the weights no more.
    // Users before what they use, nested ops before theirs.
    func.walk<WalkOrder::PostOrder, ReverseIterator>([](Operation *op) {
      if (isOpTriviallyDead(op))
        op->erase();
    });
    llvm::BitVector dropped(func.getNumArguments());
    SmallVector<int64_t> indices;
    for (unsigned i = 0, e = count.getInt(); i < e; ++i) {
      BlockArgument argument = func.getArgument(i);
      if (!sources.contains(nameOf(func, i)) ||
          !llvm::all_of(argument.getUsers(), [](Operation *user) {
            return isa<bufferization::ToTensorOp>(user) && user->use_empty();
          }))
        continue;
      for (Operation *user : llvm::make_early_inc_range(argument.getUsers()))
        user->erase();
      dropped.set(i);
      indices.push_back(i);
    }
    if (indices.empty() || failed(func.eraseArguments(dropped)))
      return;
    OpBuilder b(func);
    func->setAttr(kInputCountAttr,
                  b.getI64IntegerAttr(count.getInt() - indices.size()));
    func->setAttr(kDroppedInputsAttr, b.getDenseI64ArrayAttr(indices));
  }
};

} // namespace

//===- EntryPoints.cpp - manifest and C header of a compiled library -------===//

#include "tfm/Compiler/EntryPoints.h"

#include "tfm/ABI/Attributes.h"
#include "tfm/ABI/Transforms.h"
#include "tfm/Runtime/Manifest.h"
#include "tfm/Support/InputLimits.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <map>

using namespace mlir;
using namespace mlir::tfm;

static std::optional<std::string> dtypeOf(Type type) {
  if (type.isF32())
    return "f32";
  if (type.isF16())
    return "f16";
  if (type.isBF16())
    return "bf16";
  if (type.isInteger(1))
    return "i1";
  if (type.isInteger(32))
    return "i32";
  if (type.isInteger(64))
    return "i64";
  return std::nullopt;
}

/// The signature of a ranked tensor (an entry point before the ABI) or of
/// a memref (after it).
static FailureOr<TensorSignature> signatureOf(func::FuncOp func, Type type,
                                              StringAttr name,
                                              std::string fallback) {
  auto tensor = dyn_cast<ShapedType>(type);
  if (tensor && !tensor.hasRank())
    tensor = nullptr;
  std::optional<std::string> dtype =
      tensor ? dtypeOf(tensor.getElementType()) : std::nullopt;
  if (!dtype)
    return func.emitError() << "entry point '" << func.getSymName()
                            << "' uses unsupported type " << type
                            << " (expected a ranked tensor of f32, f16, bf16, "
                               "i32, i64 or i1)";
  TensorSignature signature;
  signature.name = name ? name.str() : std::move(fallback);
  SmallVector<int64_t> staticDims;
  for (int64_t size : tensor.getShape()) {
    signature.shape.push_back(ShapedType::isDynamic(size) ? -1 : size);
    if (!ShapedType::isDynamic(size))
      staticDims.push_back(size);
  }
  signature.dtype = *dtype;
  // No caller could pass or receive a larger array.
  llvm::Expected<uint64_t> bytes =
      checkedByteSize(staticDims, elementSize(signature.dtype));
  if (!bytes)
    return func.emitError() << "entry point '" << func.getSymName() << "': '"
                            << signature.name << "' (" << type
                            << "): " << llvm::toString(bytes.takeError());
  return signature;
}

FailureOr<std::vector<EntryPoint>>
mlir::tfm::collectEntryPoints(ModuleOp module) {
  std::vector<EntryPoint> entryPoints;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isPrivate() || func.isExternal())
      continue;
    EntryPoint entry;
    entry.name = func.getSymName().str();
    for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
      auto signature =
          signatureOf(func, type, func.getArgAttrOfType<StringAttr>(i, kNameAttr),
                      llvm::formatv("arg{0}", i).str());
      if (failed(signature))
        return failure();
      entry.inputs.push_back(*signature);
    }
    for (auto [i, type] : llvm::enumerate(func.getResultTypes())) {
      // A result written back into an input's array is no output of its own.
      if (auto input = func.getResultAttrOfType<IntegerAttr>(i, kUpdatesAttr)) {
        uint64_t index = input.getValue().getZExtValue();
        if (index >= entry.inputs.size())
          return func.emitError() << "result " << i << " updates input "
                                  << index << ", which does not exist";
        entry.inputs[index].updated = true;
        continue;
      }
      auto signature = signatureOf(
          func, type, func.getResultAttrOfType<StringAttr>(i, kNameAttr),
          llvm::formatv("result{0}", i).str());
      if (failed(signature))
        return failure();
      entry.outputs.push_back(*signature);
    }
    entryPoints.push_back(std::move(entry));
  }
  return entryPoints;
}

void mlir::tfm::resolveOutputDimSources(ModuleOp linalgModule,
                                        std::vector<EntryPoint> &entryPoints) {
  // Work on a copy: the probes below are not part of the program.
  OwningOpRef<ModuleOp> module = linalgModule.clone();
  for (EntryPoint &entry : entryPoints) {
    auto func = module->lookupSymbol<func::FuncOp>(entry.name);
    if (!func || func.getBody().getBlocks().size() != 1)
      continue;
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    OpBuilder builder(ret);
    Location loc = ret.getLoc();
    // One probe per (output, dynamic dim): tensor.dim of the returned value,
    // kept alive as an extra operand of the return (this copy is never
    // verified or run).
    struct Probe {
      TensorSignature *output;
      unsigned dim;
      unsigned operand;
    };
    std::vector<Probe> probes;
    SmallVector<Value> probeValues;
    size_t nextOutput = 0;
    for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
      if (func.getResultAttr(i, kUpdatesAttr))
        continue; // written back into an input
      TensorSignature &output = entry.outputs[nextOutput++];
      output.dimSources.assign(output.shape.size(), std::nullopt);
      for (auto [dim, size] : llvm::enumerate(output.shape)) {
        if (size >= 0)
          continue;
        probeValues.push_back(tensor::DimOp::create(builder, loc, value, dim));
        probes.push_back({&output, static_cast<unsigned>(dim),
                          ret.getNumOperands() +
                              static_cast<unsigned>(probeValues.size()) - 1});
      }
    }
    ret->insertOperands(ret.getNumOperands(), probeValues);
    RewritePatternSet patterns(module->getContext());
    populateTfmDimResolutionPatterns(patterns);
    (void)applyPatternsGreedily(func, std::move(patterns));
    for (Probe &probe : probes) {
      auto dim = ret->getOperand(probe.operand).getDefiningOp<tensor::DimOp>();
      auto argument = dim ? dyn_cast<BlockArgument>(dim.getSource()) : nullptr;
      std::optional<int64_t> index = dim ? dim.getConstantIndex() : std::nullopt;
      if (argument && index)
        probe.output->dimSources[probe.dim] =
            DimSource{argument.getArgNumber(), static_cast<unsigned>(*index)};
    }
  }
}

LogicalResult
mlir::tfm::collectPreparedInputs(ModuleOp module,
                                 std::vector<EntryPoint> &entryPoints) {
  auto inputCount = [](func::FuncOp func) -> unsigned {
    auto count = func->getAttrOfType<IntegerAttr>(kInputCountAttr);
    return count ? count.getInt() : 0;
  };
  auto argument = [](func::FuncOp func, unsigned i, llvm::StringRef fallback) {
    return signatureOf(func, func.getArgument(i).getType(),
                       func.getArgAttrOfType<StringAttr>(i, kNameAttr),
                       llvm::formatv("{0}{1}", fallback, i).str());
  };
  bool prepared = false;
  for (EntryPoint &entry : entryPoints) {
    auto func = module.lookupSymbol<func::FuncOp>(entry.name);
    prepared |= entry.name == kPrepareWeightsEntry;
    if (!func)
      continue;
    // The inputs it no longer takes (weights it reads packed) go; the
    // others keep their order, the packed inputs come after them.
    llvm::SmallDenseSet<int64_t> dropped;
    if (auto indices =
            func->getAttrOfType<DenseI64ArrayAttr>(kDroppedInputsAttr))
      dropped.insert(indices.asArrayRef().begin(), indices.asArrayRef().end());
    std::vector<TensorSignature> inputs;
    std::vector<std::optional<unsigned>> newIndex;
    for (auto [i, input] : llvm::enumerate(entry.inputs)) {
      newIndex.push_back(dropped.contains(i)
                             ? std::nullopt
                             : std::optional<unsigned>(inputs.size()));
      if (!dropped.contains(i))
        inputs.push_back(std::move(input));
    }
    for (unsigned i = inputs.size(), e = inputCount(func); i < e; ++i) {
      auto signature = argument(func, i, "arg");
      if (failed(signature))
        return failure();
      inputs.push_back(*signature);
    }
    entry.inputs = std::move(inputs);
    for (TensorSignature &output : entry.outputs)
      for (auto [dim, source] : llvm::enumerate(output.dimSources)) {
        if (!source)
          continue;
        std::optional<unsigned> input = newIndex[source->input];
        if (!input && output.shape[dim] < 0)
          return func.emitError()
                 << "output '" << output.name << "' takes a dim from input "
                 << source->input << ", which the entry point no longer takes";
        source = input ? std::optional<DimSource>(
                             DimSource{*input, source->dim})
                       : std::nullopt;
      }
  }
  auto func =
      module.lookupSymbol<func::FuncOp>(llvm::StringRef(kPrepareWeightsEntry));
  if (!func || prepared)
    return success();
  EntryPoint entry;
  entry.name = std::string(kPrepareWeightsEntry);
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    bool input = i < inputCount(func);
    auto signature = argument(func, i, input ? "arg" : "result");
    if (failed(signature))
      return failure();
    signature->dimSources.assign(signature->shape.size(), std::nullopt);
    (input ? entry.inputs : entry.outputs).push_back(*signature);
  }
  entryPoints.push_back(std::move(entry));
  return success();
}

void mlir::tfm::collectRuntimeChecks(ModuleOp module,
                                     std::vector<EntryPoint> &entryPoints) {
  for (EntryPoint &entry : entryPoints) {
    auto func = module.lookupSymbol<func::FuncOp>(entry.name);
    auto checks = func ? func->getAttrOfType<ArrayAttr>(kChecksAttr)
                       : ArrayAttr();
    entry.checks.clear();
    for (auto message : checks ? checks.getAsRange<StringAttr>()
                               : ArrayAttr::get(module.getContext(), {})
                                     .getAsRange<StringAttr>())
      entry.checks.push_back(message.str());
  }
}

static llvm::StringRef cElementType(llvm::StringRef dtype) {
  return llvm::StringSwitch<llvm::StringRef>(dtype)
      .Case("f32", "float")
      .Cases({"f16", "bf16"}, "uint16_t") // raw bits
      .Case("i32", "int32_t")
      .Case("i64", "int64_t")
      .Default("uint8_t"); // i1: one byte per element
}

static std::string descriptorName(const TensorSignature &tensor) {
  return llvm::formatv("tfm_memref_{0}_{1}d", tensor.dtype,
                       tensor.shape.size());
}

/// "[?, ?, 101] f32", or for outputs "[input_ids[0], input_ids[1], 101] f32"
/// when the dynamic dims are known to follow inputs.
static std::string formatShape(const TensorSignature &tensor,
                               const EntryPoint &entry) {
  std::string text = "[";
  for (auto [i, size] : llvm::enumerate(tensor.shape)) {
    text += i ? ", " : "";
    if (size >= 0)
      text += std::to_string(size);
    else if (i < tensor.dimSources.size() && tensor.dimSources[i])
      text += llvm::formatv("{0}[{1}]",
                            entry.inputs[tensor.dimSources[i]->input].name,
                            tensor.dimSources[i]->dim)
                  .str();
    else
      text += "?";
  }
  return text + "] " + tensor.dtype;
}

std::string
mlir::tfm::formatCHeader(const std::vector<EntryPoint> &entryPoints,
                         llvm::StringRef libraryName) {
  std::string guard = "TFM_" + libraryName.upper() + "_H";
  for (char &c : guard)
    if (!llvm::isAlnum(c))
      c = '_';
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "/* Generated by tfm-compile: entry points of " << libraryName
     << ".\n *\n"
     << " * Each entry point takes one memref descriptor per input, then one "
        "per output,\n"
     << " * in the order listed. The caller allocates every buffer; inputs "
        "and outputs\n"
     << " * must not alias. f16 and bf16 elements are passed as raw 16-bit "
        "patterns.\n"
     << " * It returns 0 on success, or 1 + k when check k failed (nothing "
        "is computed). */\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include <stdint.h>\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";

  std::map<std::string, const TensorSignature *> descriptors;
  for (const EntryPoint &entry : entryPoints) {
    for (const TensorSignature &t : entry.inputs)
      descriptors.emplace(descriptorName(t), &t);
    for (const TensorSignature &t : entry.outputs)
      descriptors.emplace(descriptorName(t), &t);
  }
  for (auto &[name, tensor] : descriptors) {
    llvm::StringRef element = cElementType(tensor->dtype);
    os << "typedef struct {\n  " << element << " *allocated;\n  " << element
       << " *aligned;\n  int64_t offset;\n";
    if (!tensor->shape.empty())
      os << "  int64_t sizes[" << tensor->shape.size() << "];\n  int64_t strides["
         << tensor->shape.size() << "];\n";
    os << "} " << name << ";\n\n";
  }

  for (const EntryPoint &entry : entryPoints) {
    os << "/* " << entry.name << "\n";
    for (const TensorSignature &t : entry.inputs)
      os << " *   " << (t.updated ? "in/out (updated in place) " : "in  ")
         << t.name << ": " << formatShape(t, entry) << "\n";
    for (const TensorSignature &t : entry.outputs)
      os << " *   out " << t.name << ": " << formatShape(t, entry) << "\n";
    for (auto [k, check] : llvm::enumerate(entry.checks))
      os << " *   status " << k + 1 << " if violated: " << check << "\n";
    os << " */\nint32_t _mlir_ciface_" << entry.name << "(";
    bool first = true;
    auto parameter = [&](const TensorSignature &t, size_t index) {
      os << (first ? "\n    " : ",\n    ") << descriptorName(t) << " *p"
         << index;
      first = false;
    };
    size_t index = 0;
    for (const TensorSignature &t : entry.inputs)
      parameter(t, index++);
    for (const TensorSignature &t : entry.outputs)
      parameter(t, index++);
    os << ");\n\n";
  }
  os << "#ifdef __cplusplus\n}\n#endif\n\n#endif /* " << guard << " */\n";
  return text;
}

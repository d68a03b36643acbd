//===- ModelDescription.cpp - JSON model descriptions to tfm ops -----------===//

#include "tfm/Compiler/ModelDescription.h"

#include "tfm/ABI/Attributes.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/Support/InputLimits.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <cmath>
#include <limits>
#include <set>

using namespace mlir;
using namespace mlir::tfm;

namespace {

/// A validated model description (docs/ModelDescription.md).
struct ModelConfig {
  std::string name = "model";
  int64_t vocabSize = 0, dModel = 0, numLayers = 0, numHeads = 0,
          numKvHeads = 0, dFF = 0;
  NormKind norm = NormKind::rms_norm;
  NormPlacement placement = NormPlacement::pre;
  double eps = 1e-5;
  FFNKind ffn = FFNKind::swiglu;
  bool rope = true;
  double ropeTheta = 10000.0;
  RopeStyle ropeStyle = RopeStyle::half;
  int64_t maxPositions = 0; // learned positions only
  int64_t slidingWindow = 0; // 0: causal
  bool tieEmbeddings = false, attentionBias = false, mlpBias = false,
       finalNorm = true;
  std::string dtype = "f32";
  /// Parameter names and layouts: Hugging Face LLaMA/Mistral, or GPT-2
  /// (fused c_attn, Conv1D [in, out] weights).
  bool gpt2Naming = false;
  /// Logits of every position, or of the last one only (a prompt before
  /// generation): [B, 1, vocab].
  bool lastLogitsOnly = false;
};

/// More layers than any model has; the compile time grows with each.
constexpr int64_t kMaxLayers = 1024;

llvm::Error fieldError(const llvm::Twine &message) {
  return llvm::createStringError("model description: " + message);
}

/// Reads the fields of the description object, rejecting unknown ones.
class FieldReader {
public:
  explicit FieldReader(const llvm::json::Object &object) : object(object) {}

  llvm::Error integer(llvm::StringRef key, int64_t &out, bool required,
                      int64_t minimum = 1,
                      int64_t maximum = std::numeric_limits<int32_t>::max()) {
    used.insert(key.str());
    const llvm::json::Value *value = object.get(key);
    if (!value)
      return required ? fieldError("missing required field '" + key + "'")
                      : llvm::Error::success();
    std::optional<int64_t> number = value->getAsInteger();
    if (!number)
      return fieldError("'" + key + "' must be an integer");
    if (*number < minimum)
      return fieldError(llvm::formatv("'{0}' must be at least {1}, got {2}",
                                      key, minimum, *number));
    if (*number > maximum)
      return fieldError(llvm::formatv("'{0}' must be at most {1}, got {2}",
                                      key, maximum, *number));
    out = *number;
    return llvm::Error::success();
  }

  /// A number that the compiled code uses as an f32: the checks hold for
  /// its f32 value (1e-50 is positive, its f32 is not).
  llvm::Error number(llvm::StringRef key, double &out, bool positive) {
    used.insert(key.str());
    const llvm::json::Value *value = object.get(key);
    if (!value)
      return llvm::Error::success();
    std::optional<double> number = value->getAsNumber();
    if (!number)
      return fieldError("'" + key + "' must be a number");
    float single = static_cast<float>(*number);
    if ((positive ? !(single > 0) : !(single >= 0)) || std::isinf(single))
      return fieldError(llvm::formatv(
          "'{0}' must be {1} and finite as a 32-bit float, got {2:e}", key,
          positive ? "positive" : "non-negative", *number));
    out = *number;
    return llvm::Error::success();
  }

  llvm::Error boolean(llvm::StringRef key, bool &out) {
    used.insert(key.str());
    const llvm::json::Value *value = object.get(key);
    if (!value)
      return llvm::Error::success();
    std::optional<bool> flag = value->getAsBoolean();
    if (!flag)
      return fieldError("'" + key + "' must be true or false");
    out = *flag;
    return llvm::Error::success();
  }

  /// A string field that must be one of `choices`.
  llvm::Error choice(llvm::StringRef key, std::string &out,
                     llvm::ArrayRef<llvm::StringRef> choices) {
    used.insert(key.str());
    const llvm::json::Value *value = object.get(key);
    if (!value)
      return llvm::Error::success();
    std::optional<llvm::StringRef> text = value->getAsString();
    if (text && llvm::is_contained(choices, *text)) {
      out = text->str();
      return llvm::Error::success();
    }
    return fieldError("'" + key + "' must be one of " +
                      llvm::join(choices, ", "));
  }

  const llvm::json::Value *raw(llvm::StringRef key) {
    used.insert(key.str());
    return object.get(key);
  }

  llvm::Error rejectUnknown() {
    for (const auto &entry : object)
      if (!used.count(entry.first.str()))
        return fieldError("unknown field '" + entry.first.str() + "'");
    return llvm::Error::success();
  }

private:
  const llvm::json::Object &object;
  std::set<std::string> used;
};

/// Weights of one layer's projections and FFN (norms and biases aside).
double layerMatrixWeights(const ModelConfig &config) {
  double d = config.dModel, headDim = d / config.numHeads;
  double kvRows = config.numKvHeads * headDim;
  double ffnWeights = (isGatedFFN(config.ffn) ? 3 : 2) * d * config.dFF;
  return 2 * d * d + 2 * kvRows * d + ffnWeights;
}

/// Fails when the weights could not fit in the memory of any machine, naming
/// the fields that make them so large. In doubles: the fields are below 2^31,
/// so nothing overflows.
llvm::Error checkWeightBytes(const ModelConfig &config) {
  double d = config.dModel, elementBytes = config.dtype == "f32" ? 4 : 2;
  double vectors = 4 * d + 2 * config.dFF; // norms and biases, at most
  std::pair<double, const char *> terms[] = {
      {(config.tieEmbeddings ? 1 : 2) * config.vocabSize * d,
       "'vocab_size' x 'd_model'"},
      {config.maxPositions * d, "'max_positions' x 'd_model'"},
      {config.numLayers * (layerMatrixWeights(config) + vectors),
       "'num_layers' x the layer weights ('d_model', 'd_ff')"}};
  double total = 0;
  for (auto [weights, fields] : terms)
    total += weights * elementBytes;
  if (total <= static_cast<double>(kMaxArrayBytes))
    return llvm::Error::success();
  auto largest = *llvm::max_element(
      terms, [](auto a, auto b) { return a.first < b.first; });
  return fieldError(llvm::formatv(
      "the weights would take {0:e2} bytes, more than a process can address "
      "(2^47); most of them come from {1}",
      total, largest.second));
}

llvm::Expected<ModelConfig> parseConfig(llvm::StringRef json) {
  llvm::Expected<llvm::json::Value> parsed = parseJSON(json);
  if (!parsed)
    return fieldError("invalid JSON: " + llvm::toString(parsed.takeError()));
  const llvm::json::Object *object = parsed->getAsObject();
  if (!object)
    return fieldError("the top level must be a JSON object");

  ModelConfig config;
  FieldReader reader(*object);
  std::string norm = "rms_norm", placement = "pre", ffn = "swiglu",
              dtype = "f32", mask = "causal";
  if (const llvm::json::Value *name = reader.raw("name")) {
    if (!name->getAsString())
      return fieldError("'name' must be a string");
    config.name = name->getAsString()->str();
  }
  if (auto error = reader.integer("vocab_size", config.vocabSize, true))
    return std::move(error);
  if (auto error = reader.integer("d_model", config.dModel, true))
    return std::move(error);
  if (auto error = reader.integer("num_layers", config.numLayers, true,
                                  /*minimum=*/1, kMaxLayers))
    return std::move(error);
  if (auto error = reader.integer("num_heads", config.numHeads, true))
    return std::move(error);
  config.numKvHeads = config.numHeads;
  if (auto error = reader.integer("num_kv_heads", config.numKvHeads, false))
    return std::move(error);
  if (auto error = reader.integer("d_ff", config.dFF, true))
    return std::move(error);
  if (auto error = reader.choice("norm", norm, {"rms_norm", "layer_norm"}))
    return std::move(error);
  if (auto error = reader.choice("norm_placement", placement, {"pre", "post"}))
    return std::move(error);
  if (auto error = reader.number("norm_eps", config.eps, false))
    return std::move(error);
  if (auto error = reader.choice(
          "ffn", ffn, {"swiglu", "geglu", "gelu", "gelu_tanh", "relu", "silu"}))
    return std::move(error);
  if (auto error = reader.choice("dtype", dtype, {"f32", "f16", "bf16"}))
    return std::move(error);
  if (auto error = reader.boolean("tie_embeddings", config.tieEmbeddings))
    return std::move(error);
  if (auto error = reader.boolean("attention_bias", config.attentionBias))
    return std::move(error);
  if (auto error = reader.boolean("mlp_bias", config.mlpBias))
    return std::move(error);
  config.finalNorm = placement == "pre";
  if (auto error = reader.boolean("final_norm", config.finalNorm))
    return std::move(error);
  std::string naming = "llama";
  if (auto error = reader.choice("naming", naming, {"llama", "gpt2"}))
    return std::move(error);
  config.gpt2Naming = naming == "gpt2";
  std::string logits = "all";
  if (auto error = reader.choice("logits", logits, {"all", "last"}))
    return std::move(error);
  config.lastLogitsOnly = logits == "last";

  // "positions": {"kind": "rope", "theta": 10000.0, "style": "half"} or
  //              {"kind": "learned", "max_positions": 1024}
  if (const llvm::json::Value *positions = reader.raw("positions")) {
    const llvm::json::Object *object = positions->getAsObject();
    if (!object)
      return fieldError("'positions' must be an object");
    FieldReader positionReader(*object);
    std::string kind = "rope", style = "half";
    if (auto error = positionReader.choice("kind", kind, {"rope", "learned"}))
      return std::move(error);
    config.rope = kind == "rope";
    if (config.rope) {
      if (auto error = positionReader.number("theta", config.ropeTheta, true))
        return std::move(error);
      if (auto error =
              positionReader.choice("style", style, {"half", "interleaved"}))
        return std::move(error);
      config.ropeStyle = *symbolizeRopeStyle(style);
    } else if (auto error = positionReader.integer(
                   "max_positions", config.maxPositions, true)) {
      return std::move(error);
    }
    if (auto error = positionReader.rejectUnknown())
      return std::move(error);
  }

  // "mask": "causal" or {"sliding_window": W}
  if (const llvm::json::Value *maskValue = reader.raw("mask")) {
    if (const llvm::json::Object *window = maskValue->getAsObject()) {
      FieldReader maskReader(*window);
      if (auto error = maskReader.integer("sliding_window",
                                          config.slidingWindow, true))
        return std::move(error);
      if (auto error = maskReader.rejectUnknown())
        return std::move(error);
    } else if (maskValue->getAsString() != std::optional<llvm::StringRef>(
                                               "causal")) {
      return fieldError(
          "'mask' must be \"causal\" or {\"sliding_window\": W}");
    }
  }
  if (auto error = reader.rejectUnknown())
    return std::move(error);

  if (config.numHeads % config.numKvHeads != 0)
    return fieldError(llvm::formatv(
        "'num_kv_heads' ({0}) must divide 'num_heads' ({1})",
        config.numKvHeads, config.numHeads));
  if (config.dModel % config.numHeads != 0)
    return fieldError(llvm::formatv(
        "'num_heads' ({0}) must divide 'd_model' ({1})", config.numHeads,
        config.dModel));
  if (config.rope && (config.dModel / config.numHeads) % 2 != 0)
    return fieldError(llvm::formatv("rope needs an even head dim, got {0}",
                                    config.dModel / config.numHeads));
  config.norm = *symbolizeNormKind(norm);
  config.placement = *symbolizeNormPlacement(placement);
  config.ffn = *symbolizeFFNKind(ffn);
  config.dtype = dtype;
  if (config.mlpBias && isGatedFFN(config.ffn))
    return fieldError("'mlp_bias' is only supported with plain FFN kinds");
  if (auto error = checkWeightBytes(config))
    return std::move(error);
  if (config.gpt2Naming) {
    // A GPT-2 checkpoint has exactly this structure.
    std::string mismatch =
        config.norm != NormKind::layer_norm ? "'norm': \"layer_norm\""
        : config.rope                       ? "learned 'positions'"
        : isGatedFFN(config.ffn)            ? "a plain 'ffn' kind"
        : config.numKvHeads != config.numHeads
            ? "'num_kv_heads' equal to 'num_heads'"
        : !config.attentionBias || !config.mlpBias
            ? "'attention_bias' and 'mlp_bias'"
        : !config.tieEmbeddings ? "'tie_embeddings'"
                                : "";
    if (!mismatch.empty())
      return fieldError("'naming': \"gpt2\" needs " + mismatch);
  }
  return config;
}

/// The operands of one tfm.decoder_block (absent ones are null).
struct BlockWeights {
  Value attnNormW, attnNormB, qW, qB, kW, kB, vW, vB, oW, oB, ffnNormW,
      ffnNormB, gateW, upW, upB, downW, downB;
};

/// Builds @forward, adding parameters as named arguments as it goes.
class ModelBuilder {
public:
  ModelBuilder(const ModelConfig &config, MLIRContext *context)
      : config(config), b(context), loc(b.getUnknownLoc()) {
    if (config.dtype == "f16")
      element = b.getF16Type();
    else if (config.dtype == "bf16")
      element = b.getBF16Type();
    else
      element = b.getF32Type();
  }

  OwningOpRef<ModuleOp> build();

private:
  RankedTensorType tensor(ArrayRef<int64_t> shape, Type type = {}) {
    return RankedTensorType::get(shape, type ? type : element);
  }

  /// A new named function argument.
  Value parameter(const llvm::Twine &name, ArrayRef<int64_t> shape,
                  Type type = {}) {
    Block &entry = func.getBody().front();
    Value value = entry.addArgument(tensor(shape, type), loc);
    names.push_back(b.getStringAttr(name));
    return value;
  }

  /// Norm weight (and bias for LayerNorm) named `<prefix>.weight/.bias`.
  std::pair<Value, Value> normParameters(const llvm::Twine &prefix) {
    Value weight = parameter(prefix + ".weight", {config.dModel});
    Value bias = config.norm == NormKind::layer_norm
                     ? parameter(prefix + ".bias", {config.dModel})
                     : Value();
    return {weight, bias};
  }

  BlockWeights llamaBlockWeights(int64_t layer);
  BlockWeights gpt2BlockWeights(int64_t layer);
  Value transposed(Value weight);
  Value rows(Value value, int64_t offset, int64_t count);
  Value decoderBlock(int64_t layer, Value x, Value positions);
  Value lastPosition(Value logits, Value ids);

  const ModelConfig &config;
  OpBuilder b;
  Location loc;
  Type element;
  func::FuncOp func;
  SmallVector<Attribute> names;
};

/// A [rows, cols] Conv1D weight as the [cols, rows] nn.Linear weight.
Value ModelBuilder::transposed(Value weight) {
  auto type = cast<RankedTensorType>(weight.getType());
  Value init = tensor::EmptyOp::create(
      b, loc, ArrayRef<int64_t>{type.getDimSize(1), type.getDimSize(0)},
      element);
  return linalg::TransposeOp::create(b, loc, weight, init,
                                     ArrayRef<int64_t>{1, 0})
      .getResult()[0];
}

/// Rows [offset, offset + count) of a rank-1 or rank-2 tensor.
Value ModelBuilder::rows(Value value, int64_t offset, int64_t count) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes, strides(type.getRank(), b.getIndexAttr(1));
  for (int64_t size : type.getShape())
    sizes.push_back(b.getIndexAttr(size));
  offsets[0] = b.getIndexAttr(offset);
  sizes[0] = b.getIndexAttr(count);
  return tensor::ExtractSliceOp::create(b, loc, value, offsets, sizes, strides);
}

/// logits[:, S-1 : S, :], for ids of S >= 1 positions (a runtime check).
/// Written after the LM head; tfm-fuse-row-selection moves the selection
/// before every row-wise op it follows, the LM head first.
Value ModelBuilder::lastPosition(Value logits, Value ids) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value length = tensor::DimOp::create(b, loc, ids, 1);
  Value nonEmpty = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                         length, one);
  cf::AssertOp::create(b, loc, nonEmpty,
                       "'logits': \"last\" needs at least one position");
  Value last = arith::SubIOp::create(b, loc, length, one);
  OpFoldResult zero = b.getIndexAttr(0), unit = b.getIndexAttr(1);
  SmallVector<OpFoldResult> offsets{zero, last, zero};
  // The batch size read off the ids: the selection must be the logits'
  // only user for tfm-fuse-row-selection to move it.
  SmallVector<OpFoldResult> sizes{tensor::getMixedSize(b, loc, ids, 0), unit,
                                  b.getIndexAttr(config.vocabSize)};
  return tensor::ExtractSliceOp::create(
      b, loc, tensor({ShapedType::kDynamic, 1, config.vocabSize}), logits,
      offsets, sizes, SmallVector<OpFoldResult>(3, unit));
}

/// GPT-2 names and layouts: fused c_attn [D, 3D] split into q/k/v, Conv1D
/// [in, out] weights transposed into nn.Linear layout (in the compiled code,
/// so a checkpoint needs no conversion).
BlockWeights ModelBuilder::gpt2BlockWeights(int64_t layer) {
  std::string prefix = llvm::formatv("transformer.h.{0}.", layer).str();
  int64_t d = config.dModel, dFF = config.dFF;
  BlockWeights w;
  std::tie(w.attnNormW, w.attnNormB) = normParameters(prefix + "ln_1");
  Value qkv = transposed(parameter(prefix + "attn.c_attn.weight", {d, 3 * d}));
  Value qkvBias = parameter(prefix + "attn.c_attn.bias", {3 * d});
  w.qW = rows(qkv, 0, d);
  w.kW = rows(qkv, d, d);
  w.vW = rows(qkv, 2 * d, d);
  w.qB = rows(qkvBias, 0, d);
  w.kB = rows(qkvBias, d, d);
  w.vB = rows(qkvBias, 2 * d, d);
  w.oW = transposed(parameter(prefix + "attn.c_proj.weight", {d, d}));
  w.oB = parameter(prefix + "attn.c_proj.bias", {d});
  std::tie(w.ffnNormW, w.ffnNormB) = normParameters(prefix + "ln_2");
  w.upW = transposed(parameter(prefix + "mlp.c_fc.weight", {d, dFF}));
  w.upB = parameter(prefix + "mlp.c_fc.bias", {dFF});
  w.downW = transposed(parameter(prefix + "mlp.c_proj.weight", {dFF, d}));
  w.downB = parameter(prefix + "mlp.c_proj.bias", {d});
  return w;
}

/// Hugging Face LLaMA/Mistral names, nn.Linear layouts.
BlockWeights ModelBuilder::llamaBlockWeights(int64_t layer) {
  std::string prefix = llvm::formatv("model.layers.{0}.", layer).str();
  int64_t headDim = config.dModel / config.numHeads;
  int64_t kvRows = config.numKvHeads * headDim;
  auto projection = [&](llvm::StringRef name, int64_t rows, int64_t cols,
                        bool bias) -> std::pair<Value, Value> {
    Value w = parameter(prefix + name + ".weight", {rows, cols});
    Value bv = bias ? parameter(prefix + name + ".bias", {rows}) : Value();
    return {w, bv};
  };

  BlockWeights w;
  std::tie(w.attnNormW, w.attnNormB) =
      normParameters(prefix + "input_layernorm");
  bool qkvBias = config.attentionBias;
  std::tie(w.qW, w.qB) = projection("self_attn.q_proj", config.dModel,
                                    config.dModel, qkvBias);
  std::tie(w.kW, w.kB) =
      projection("self_attn.k_proj", kvRows, config.dModel, qkvBias);
  std::tie(w.vW, w.vB) =
      projection("self_attn.v_proj", kvRows, config.dModel, qkvBias);
  std::tie(w.oW, w.oB) = projection("self_attn.o_proj", config.dModel,
                                    config.dModel, qkvBias);
  std::tie(w.ffnNormW, w.ffnNormB) =
      normParameters(prefix + "post_attention_layernorm");
  if (isGatedFFN(config.ffn))
    w.gateW =
        projection("mlp.gate_proj", config.dFF, config.dModel, false).first;
  std::tie(w.upW, w.upB) =
      projection("mlp.up_proj", config.dFF, config.dModel, config.mlpBias);
  std::tie(w.downW, w.downB) =
      projection("mlp.down_proj", config.dModel, config.dFF, config.mlpBias);
  return w;
}

Value ModelBuilder::decoderBlock(int64_t layer, Value x, Value positions) {
  BlockWeights w = config.gpt2Naming ? gpt2BlockWeights(layer)
                                     : llamaBlockWeights(layer);
  MLIRContext *context = b.getContext();
  MaskAttr mask = config.slidingWindow
                      ? MaskAttr::getSlidingWindow(context, config.slidingWindow)
                      : MaskAttr::getCausal(context);
  RopeAttr rope = config.rope ? RopeAttr::get(context,
                                              llvm::APFloat(config.ropeTheta),
                                              config.ropeStyle)
                              : RopeAttr();
  return DecoderBlockOp::create(
      b, loc, x.getType(), x, w.attnNormW, w.attnNormB, w.qW, w.qB, w.kW,
      w.kB, w.vW, w.vB, w.oW, w.oB, w.ffnNormW, w.ffnNormB, w.gateW, w.upW,
      w.upB, w.downW, w.downB,
      config.rope ? positions : Value(), /*kv_lengths=*/Value(),
      NormPlacementAttr::get(context, config.placement),
      NormKindAttr::get(context, config.norm), b.getF32FloatAttr(config.eps),
      b.getI64IntegerAttr(config.numHeads),
      b.getI64IntegerAttr(config.numKvHeads),
      FFNKindAttr::get(context, config.ffn), mask, rope);
}

OwningOpRef<ModuleOp> ModelBuilder::build() {
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc, config.name);
  b.setInsertionPointToEnd(module->getBody());
  int64_t dyn = ShapedType::kDynamic;
  func = func::FuncOp::create(b, loc, "forward", b.getFunctionType({}, {}));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);

  Type i32 = b.getI32Type();
  Value ids = parameter("input_ids", {dyn, dyn}, i32);
  Value positions = parameter("position_ids", {dyn, dyn}, i32);
  auto hidden = tensor({dyn, dyn, config.dModel});

  bool gpt2 = config.gpt2Naming;
  Value embed = parameter(gpt2 ? "transformer.wte.weight"
                               : "model.embed_tokens.weight",
                          {config.vocabSize, config.dModel});
  Value h = EmbeddingOp::create(b, loc, hidden, ids, embed);
  if (!config.rope) {
    Value table = parameter(gpt2 ? "transformer.wpe.weight"
                                 : "model.embed_positions.weight",
                            {config.maxPositions, config.dModel});
    Value learned = EmbeddingOp::create(b, loc, hidden, positions, table);
    h = arith::AddFOp::create(b, loc, h, learned);
  }
  for (int64_t layer = 0; layer < config.numLayers; ++layer)
    h = decoderBlock(layer, h, positions);
  if (config.finalNorm) {
    auto [weight, bias] =
        normParameters(gpt2 ? "transformer.ln_f" : "model.norm");
    FloatAttr eps = b.getF32FloatAttr(config.eps);
    h = config.norm == NormKind::rms_norm
            ? RMSNormOp::create(b, loc, hidden, h, weight, eps).getResult()
            : LayerNormOp::create(b, loc, hidden, h, weight, bias, eps)
                  .getResult();
  }
  Value head = config.tieEmbeddings
                   ? embed
                   : parameter("lm_head.weight",
                               {config.vocabSize, config.dModel});
  Value logits = LinearOp::create(b, loc, tensor({dyn, dyn, config.vocabSize}),
                                  h, head, Value());
  if (config.lastLogitsOnly)
    logits = lastPosition(logits, ids);
  func::ReturnOp::create(b, loc, logits);

  func.setFunctionType(b.getFunctionType(entry->getArgumentTypes(),
                                         {logits.getType()}));
  for (auto [i, name] : llvm::enumerate(names))
    func.setArgAttr(i, kNameAttr, name);
  func.setResultAttr(0, kNameAttr, b.getStringAttr("logits"));
  return module;
}

} // namespace

/// 2 FLOPs per weight per token for every projection, FFN and the LM head;
/// per visible (query, key) pair 2·D for QKᵀ and 2·D for PV in every head.
static FlopModel flopsOf(const ModelConfig &config) {
  double d = config.dModel, headDim = d / config.numHeads;
  FlopModel flops;
  flops.perToken = 2 * (config.numLayers * layerMatrixWeights(config) +
                        config.vocabSize * d);
  flops.perVisiblePair = 4.0 * headDim * config.numHeads * config.numLayers;
  flops.slidingWindow = config.slidingWindow;
  return flops;
}

llvm::Expected<ModelModule>
mlir::tfm::buildModelFromJSON(llvm::StringRef json, MLIRContext *context) {
  llvm::Expected<ModelConfig> config = parseConfig(json);
  if (!config)
    return config.takeError();
  context->loadDialect<TfmDialect, func::FuncDialect, arith::ArithDialect,
                       cf::ControlFlowDialect, linalg::LinalgDialect,
                       tensor::TensorDialect>();
  OwningOpRef<ModuleOp> module = ModelBuilder(*config, context).build();
  if (failed(verify(*module)))
    return llvm::createStringError(
        "internal error: the model expanded into invalid IR");
  return ModelModule{std::move(module), flopsOf(*config)};
}

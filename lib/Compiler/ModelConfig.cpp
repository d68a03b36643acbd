//===- ModelConfig.cpp - parsing and validating model descriptions ---------===//

#include "ModelConfig.h"

#include "tfm/Support/InputLimits.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <cmath>
#include <limits>
#include <set>

using namespace mlir;
using namespace mlir::tfm;

namespace {

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

} // namespace

double mlir::tfm::layerMatrixWeights(const ModelConfig &config) {
  double d = config.dModel;
  double qRows = static_cast<double>(config.numHeads) * config.headDim;
  double kvRows = static_cast<double>(config.numKvHeads) * config.headDim;
  double ffnWeights = (isGatedFFN(config.ffn) ? 3 : 2) * d * config.dFF;
  return 2 * qRows * d + 2 * kvRows * d + ffnWeights;
}

namespace {

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

} // namespace

llvm::Expected<ModelConfig> mlir::tfm::parseModelConfig(llvm::StringRef json) {
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
  if (auto error = reader.integer("head_dim", config.headDim, false))
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
  if (auto error = reader.boolean("qkv_bias", config.qkvBias))
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
  if (auto error = reader.boolean("generation", config.generation))
    return std::move(error);

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
      if (const llvm::json::Value *scaling = positionReader.raw("scaling")) {
        // {"type": "llama3", "factor": 8, "low_freq_factor": 1,
        //  "high_freq_factor": 4, "original_max_positions": 8192}
        const llvm::json::Object *scalingObject = scaling->getAsObject();
        if (!scalingObject)
          return fieldError("'scaling' must be an object");
        FieldReader scalingReader(*scalingObject);
        std::string type;
        ModelConfig::RopeScaling parsed{};
        if (auto error = scalingReader.choice("type", type, {"llama3"}))
          return std::move(error);
        if (type.empty())
          return fieldError("'scaling' needs \"type\": \"llama3\"");
        if (auto error = scalingReader.number("factor", parsed.factor, true))
          return std::move(error);
        if (auto error = scalingReader.number("low_freq_factor",
                                              parsed.lowFreqFactor, true))
          return std::move(error);
        if (auto error = scalingReader.number("high_freq_factor",
                                              parsed.highFreqFactor, true))
          return std::move(error);
        if (auto error = scalingReader.integer("original_max_positions",
                                               parsed.originalMaxPositions,
                                               true))
          return std::move(error);
        if (auto error = scalingReader.rejectUnknown())
          return std::move(error);
        if (!(parsed.factor > 0 && parsed.lowFreqFactor > 0))
          return fieldError("'scaling' needs 'factor', 'low_freq_factor' "
                            "and 'high_freq_factor'");
        if (!(parsed.highFreqFactor > parsed.lowFreqFactor))
          return fieldError("'scaling': 'high_freq_factor' must be larger "
                            "than 'low_freq_factor'");
        config.ropeScaling = parsed;
      }
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
  if (!config.headDim) {
    if (config.dModel % config.numHeads != 0)
      return fieldError(llvm::formatv(
          "'num_heads' ({0}) must divide 'd_model' ({1}), or give 'head_dim'",
          config.numHeads, config.dModel));
    config.headDim = config.dModel / config.numHeads;
  }
  if (config.rope && config.headDim % 2 != 0)
    return fieldError(llvm::formatv("rope needs an even head dim, got {0}",
                                    config.headDim));
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
        : config.headDim * config.numHeads != config.dModel
            ? "'head_dim' equal to 'd_model' / 'num_heads'"
        : !config.attentionBias || !config.mlpBias
            ? "'attention_bias' and 'mlp_bias'"
        : !config.tieEmbeddings ? "'tie_embeddings'"
                                : "";
    if (!mismatch.empty())
      return fieldError("'naming': \"gpt2\" needs " + mismatch);
  }
  return config;
}

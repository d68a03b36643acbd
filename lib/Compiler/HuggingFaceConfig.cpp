//===- HuggingFaceConfig.cpp - config.json to a model description ----------===//

#include "tfm/Compiler/HuggingFaceConfig.h"

#include "tfm/Support/InputLimits.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace mlir::tfm;
namespace json = llvm::json;

namespace {

llvm::Error configError(const llvm::Twine &message) {
  return llvm::createStringError("Hugging Face config: " + message);
}

/// Builds the description from the config's fields, remembering which it
/// has read: a field that is neither read nor known to be irrelevant to a
/// forward pass is an error at the end.
class Converter {
public:
  explicit Converter(const json::Object &config) : config(config) {}

  /// `field` copied as `key` (when present, or `required`).
  llvm::Error copy(llvm::StringRef field, llvm::StringRef key,
                   bool required = false) {
    read.insert(field);
    const json::Value *value = config.get(field);
    if (!value || value->kind() == json::Value::Null)
      return required ? configError("missing '" + field + "'")
                      : llvm::Error::success();
    description[key] = *value;
    return llvm::Error::success();
  }

  /// The field's value, marked as read (null when absent).
  const json::Value *take(llvm::StringRef field) {
    read.insert(field);
    const json::Value *value = config.get(field);
    return value && value->kind() != json::Value::Null ? value : nullptr;
  }

  /// Fields that change nothing in a forward pass (token ids, training
  /// settings, bookkeeping).
  void ignore(std::initializer_list<llvm::StringRef> fields) {
    for (llvm::StringRef field : fields)
      read.insert(field);
  }

  /// `field` may be absent or hold `expected` only.
  llvm::Error require(llvm::StringRef field, const json::Value &expected,
                      llvm::StringRef why) {
    const json::Value *value = take(field);
    if (value && *value != expected)
      return configError(llvm::formatv("'{0}' = {1} is not supported: {2}",
                                       field, *value, why));
    return llvm::Error::success();
  }

  llvm::Expected<std::string> finish() {
    for (const auto &entry : config)
      if (!read.contains(entry.first))
        return configError("'" + entry.first.str() +
                           "' is not supported (tfm does not know what it "
                           "changes)");
    return llvm::formatv("{0}", json::Value(std::move(description))).str();
  }

  json::Object description;

private:
  const json::Object &config;
  llvm::StringSet<> read;
};

enum class LlamaFamily { Llama, Mistral, Qwen2 };

llvm::Error convertLlama(Converter &c, LlamaFamily family) {
  for (auto [field, key] : {std::pair{"vocab_size", "vocab_size"},
                            {"hidden_size", "d_model"},
                            {"num_hidden_layers", "num_layers"},
                            {"num_attention_heads", "num_heads"},
                            {"intermediate_size", "d_ff"}})
    if (auto error = c.copy(field, key, /*required=*/true))
      return error;
  if (auto error = c.copy("num_key_value_heads", "num_kv_heads"))
    return error;
  if (auto error = c.copy("rms_norm_eps", "norm_eps"))
    return error;
  if (auto error = c.copy("tie_word_embeddings", "tie_embeddings"))
    return error;
  if (auto error = c.copy("attention_bias", "attention_bias"))
    return error;
  json::Object positions{{"kind", "rope"}, {"style", "half"}};
  if (const json::Value *theta = c.take("rope_theta"))
    positions["theta"] = *theta;
  if (const json::Value *scaling = c.take("rope_scaling")) {
    // Llama 3.1/3.2's frequency scaling; other kinds are not in tfm.
    const json::Object *object = scaling->getAsObject();
    std::optional<llvm::StringRef> type =
        object ? object->getString("rope_type") : std::nullopt;
    if (!type)
      type = object ? object->getString("type") : std::nullopt;
    if (type != "llama3")
      return configError(llvm::formatv(
          "'rope_scaling' = {0} is not supported: tfm has Llama 3's "
          "\"rope_type\": \"llama3\" only",
          *scaling));
    json::Object ours{{"type", "llama3"}};
    for (auto [theirs, key] :
         {std::pair{"factor", "factor"},
          {"low_freq_factor", "low_freq_factor"},
          {"high_freq_factor", "high_freq_factor"},
          {"original_max_position_embeddings", "original_max_positions"}}) {
      const json::Value *value = object->get(theirs);
      if (!value)
        return configError(llvm::formatv(
            "'rope_scaling' of type llama3 needs '{0}'", theirs));
      ours[key] = *value;
    }
    static const llvm::StringRef known[] = {
        "rope_type", "type", "factor", "low_freq_factor", "high_freq_factor",
        "original_max_position_embeddings"};
    for (const auto &entry : *object)
      if (!llvm::is_contained(known, llvm::StringRef(entry.first)))
        return configError("'rope_scaling': '" + entry.first.str() +
                           "' is not supported");
    positions["scaling"] = std::move(ours);
  }
  c.description["positions"] = std::move(positions);
  if (family == LlamaFamily::Mistral)
    if (const json::Value *window = c.take("sliding_window"))
      c.description["mask"] = json::Object{{"sliding_window", *window}};
  if (family == LlamaFamily::Qwen2) {
    // Biases on q, k and v only; a window only from max_window_layers on,
    // and only with use_sliding_window.
    c.description["qkv_bias"] = true;
    if (auto error = c.require("use_sliding_window", false,
                               "Qwen2 windows only its layers from "
                               "max_window_layers on"))
      return error;
    c.ignore({"sliding_window", "max_window_layers"});
  }
  if (auto error = c.require("hidden_act", "silu", "the gated FFN is SwiGLU"))
    return error;
  if (auto error = c.require("mlp_bias", false,
                             "gated FFNs take no biases in tfm"))
    return error;
  if (auto error = c.require("pretraining_tp", 1,
                             "it changes the order of the matmuls' sums"))
    return error;
  // Llama 3 / Mistral Nemo: q_proj is [heads * head_dim, hidden_size].
  if (auto error = c.copy("head_dim", "head_dim"))
    return error;
  c.ignore({"attention_dropout", "max_position_embeddings"});
  return llvm::Error::success();
}

llvm::Error convertGPT2(Converter &c) {
  for (auto [field, key] : {std::pair{"vocab_size", "vocab_size"},
                            {"n_embd", "d_model"},
                            {"n_layer", "num_layers"},
                            {"n_head", "num_heads"}})
    if (auto error = c.copy(field, key, /*required=*/true))
      return error;
  if (auto error = c.copy("layer_norm_epsilon", "norm_eps"))
    return error;
  std::optional<int64_t> width = c.description["d_model"].getAsInteger();
  const json::Value *inner = c.take("n_inner");
  c.description["d_ff"] =
      inner ? *inner : json::Value(width ? 4 * *width : 0);
  const json::Value *positions = c.take("n_positions");
  c.description["positions"] = json::Object{
      {"kind", "learned"},
      {"max_positions", positions ? *positions : json::Value(1024)}};
  const json::Value *activation = c.take("activation_function");
  std::optional<llvm::StringRef> name =
      activation ? activation->getAsString() : std::optional<llvm::StringRef>("gelu_new");
  if (name == "gelu_new" || name == "gelu_pytorch_tanh")
    c.description["ffn"] = "gelu_tanh";
  else if (name == "gelu")
    c.description["ffn"] = "gelu";
  else
    return configError("'activation_function' must be gelu_new, "
                       "gelu_pytorch_tanh or gelu");
  for (auto [key, value] : {std::pair{"norm", "layer_norm"},
                            {"naming", "gpt2"}})
    c.description[key] = value;
  for (llvm::StringRef flag : {"attention_bias", "mlp_bias", "tie_embeddings"})
    c.description[flag] = true;
  if (auto error = c.require("scale_attn_weights", true,
                             "tfm scales scores by 1/sqrt(head dim)"))
    return error;
  if (auto error = c.require("scale_attn_by_inverse_layer_idx", false,
                             "tfm scales every layer alike"))
    return error;
  if (auto error = c.require("reorder_and_upcast_attn", false,
                             "tfm's scores are f32 already"))
    return error;
  if (auto error = c.require("tie_word_embeddings", true,
                             "GPT-2 checkpoints tie the LM head"))
    return error;
  c.ignore({"n_ctx", "resid_pdrop", "embd_pdrop", "attn_pdrop",
            "summary_type", "summary_use_proj", "summary_activation",
            "summary_proj_to_labels", "summary_first_dropout",
            "task_specific_params"});
  return llvm::Error::success();
}

} // namespace

llvm::Expected<std::string>
mlir::tfm::descriptionFromHuggingFace(llvm::StringRef text) {
  llvm::Expected<json::Value> parsed = parseJSON(text);
  if (!parsed)
    return configError("invalid JSON: " + llvm::toString(parsed.takeError()));
  const json::Object *config = parsed->getAsObject();
  if (!config)
    return configError("the top level must be a JSON object");
  Converter c(*config);
  const json::Value *architectures = c.take("architectures");
  const json::Array *list = architectures ? architectures->getAsArray() : nullptr;
  std::optional<llvm::StringRef> architecture =
      list && list->size() == 1 ? (*list)[0].getAsString() : std::nullopt;
  llvm::Error error = llvm::Error::success();
  if (architecture == "LlamaForCausalLM")
    error = convertLlama(c, LlamaFamily::Llama);
  else if (architecture == "MistralForCausalLM")
    error = convertLlama(c, LlamaFamily::Mistral);
  else if (architecture == "Qwen2ForCausalLM")
    error = convertLlama(c, LlamaFamily::Qwen2);
  else if (architecture == "GPT2LMHeadModel")
    error = convertGPT2(c);
  else
    return configError("'architectures' must be [\"LlamaForCausalLM\"], "
                       "[\"MistralForCausalLM\"], [\"Qwen2ForCausalLM\"] or "
                       "[\"GPT2LMHeadModel\"]");
  if (error)
    return std::move(error);
  if (const json::Value *dtype = c.take("torch_dtype")) {
    std::optional<llvm::StringRef> name = dtype->getAsString();
    if (name == "float32" || name == "float16" || name == "bfloat16")
      c.description["dtype"] = name == "float32"   ? "f32"
                               : name == "float16" ? "f16"
                                                   : "bf16";
    else
      return configError("'torch_dtype' must be float32, float16 or bfloat16");
  }
  c.ignore({"model_type", "_name_or_path", "transformers_version",
            "bos_token_id", "eos_token_id", "pad_token_id",
            "initializer_range", "use_cache"});
  return c.finish();
}

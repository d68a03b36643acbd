//===- ModelConfig.h - a validated model description ------------*- C++ -*-===//
//
// The fields of a JSON model description (docs/ModelDescription.md) after
// validation: what ModelBuilder expands into tfm ops.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_LIB_COMPILER_MODELCONFIG_H
#define TFM_LIB_COMPILER_MODELCONFIG_H

#include "tfm/Dialect/Tfm/IR/TfmOps.h"

#include "llvm/Support/Error.h"

#include <string>

namespace mlir::tfm {

/// A validated model description (docs/ModelDescription.md).
struct ModelConfig {
  std::string name = "model";
  int64_t vocabSize = 0, dModel = 0, numLayers = 0, numHeads = 0,
          numKvHeads = 0, dFF = 0;
  /// Width of one attention head: d_model / num_heads unless given (Llama 3,
  /// Mistral Nemo: q_proj is [num_heads * head_dim, d_model]).
  int64_t headDim = 0;
  NormKind norm = NormKind::rms_norm;
  NormPlacement placement = NormPlacement::pre;
  double eps = 1e-5;
  FFNKind ffn = FFNKind::swiglu;
  bool rope = true;
  double ropeTheta = 10000.0;
  RopeStyle ropeStyle = RopeStyle::half;
  /// Llama 3's scaling of the RoPE frequencies (#tfm.rope_scaling).
  struct RopeScaling {
    double factor, lowFreqFactor, highFreqFactor;
    int64_t originalMaxPositions;
  };
  std::optional<RopeScaling> ropeScaling;
  int64_t maxPositions = 0; // learned positions only
  int64_t slidingWindow = 0; // 0: causal
  bool tieEmbeddings = false, attentionBias = false, mlpBias = false,
       finalNorm = true;
  /// Biases on the q, k and v projections only (Qwen2).
  bool qkvBias = false;
  std::string dtype = "f32";
  /// Parameter names and layouts: Hugging Face LLaMA/Mistral, or GPT-2
  /// (fused c_attn, Conv1D [in, out] weights).
  bool gpt2Naming = false;
  /// Logits of every position, or of the last one only (a prompt before
  /// generation): [B, 1, vocab].
  bool lastLogitsOnly = false;
  /// Also @prefill and @decode, which keep the keys and values of past
  /// positions in caller-owned caches (KVCacheEntryPoints.cpp).
  bool generation = true;
};

/// Parses and validates a model description; errors name the field.
llvm::Expected<ModelConfig> parseModelConfig(llvm::StringRef json);

/// Weights of one layer's projections and FFN (norms and biases aside).
double layerMatrixWeights(const ModelConfig &config);

} // namespace mlir::tfm

#endif // TFM_LIB_COMPILER_MODELCONFIG_H

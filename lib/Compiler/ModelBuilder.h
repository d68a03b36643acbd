//===- ModelBuilder.h - model descriptions expanded into tfm ops -*- C++ -*-===//
//
// Builds the entry points of a model description: @forward (embedding ->
// tfm.decoder_block per layer -> final norm -> LM head), and for generation
// @prefill and @decode, which write each layer's keys and values into
// caller-owned caches (KVCacheEntryPoints.cpp). Parameters are named
// function arguments, added as the layers that use them are built.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_LIB_COMPILER_MODELBUILDER_H
#define TFM_LIB_COMPILER_MODELBUILDER_H

#include "ModelConfig.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <tuple>

namespace mlir::tfm {

/// The operands of one tfm.decoder_block (absent ones are null).
struct BlockWeights {
  Value attnNormW, attnNormB, qW, qB, kW, kB, vW, vB, oW, oB, ffnNormW,
      ffnNormB, gateW, upW, upB, downW, downB;
};

class ModelBuilder {
public:
  ModelBuilder(const ModelConfig &config, MLIRContext *context);

  OwningOpRef<ModuleOp> build();

private:
  RankedTensorType tensor(ArrayRef<int64_t> shape, Type type = {}) {
    return RankedTensorType::get(shape, type ? type : element);
  }

  /// Starts entry point `name` at the end of `module`.
  void beginEntryPoint(ModuleOp module, StringRef name);
  /// Returns `results` from the entry point being built: each named, and
  /// written back into an input's array where `updates` gives its number.
  void endEntryPoint(ArrayRef<Value> results, ArrayRef<std::string> resultNames,
                     ArrayRef<std::optional<unsigned>> updates);

  /// A new named function argument of the entry point being built.
  Value parameter(const llvm::Twine &name, ArrayRef<int64_t> shape,
                  Type type = {});
  /// Norm weight (and bias for LayerNorm) named `<prefix>.weight/.bias`.
  std::pair<Value, Value> normParameters(const llvm::Twine &prefix);

  BlockWeights llamaBlockWeights(int64_t layer);
  BlockWeights gpt2BlockWeights(int64_t layer);
  BlockWeights blockWeights(int64_t layer) {
    return config.gpt2Naming ? gpt2BlockWeights(layer)
                             : llamaBlockWeights(layer);
  }
  Value transposed(Value weight);
  Value rows(Value value, int64_t offset, int64_t count);
  MaskAttr maskAttr();
  /// The model's #tfm.rope_scaling, or null.
  RopeScalingAttr ropeScaling();

  /// The token embedding of `ids` (plus the learned position embedding of
  /// `positions`); `table` is the token table, which a tied LM head reuses.
  Value embed(Value ids, Value positions, Value &table);
  /// Final norm and LM head of hidden states `h`.
  Value logits(Value h, Value table);
  Value decoderBlock(int64_t layer, Value x, Value positions);
  Value lastPosition(Value logits, Value ids);
  void buildForward(ModuleOp module);

  // KVCacheEntryPoints.cpp.
  /// What a layer's attention reads for the keys and values computed from
  /// its new tokens: (keys, values, kv_lengths or null).
  using CacheUpdate =
      function_ref<std::tuple<Value, Value, Value>(int64_t, Value, Value)>;
  /// Rows of a [B, S, N] tensor that the rest of a layer needs (each row's
  /// last prompt token: [B, 1, N]).
  using RowSelection = function_ref<Value(Value)>;
  /// A layer over cached keys and values; with `select`, the rows after
  /// attention (the output projection, residuals and FFN) are only the
  /// selected ones.
  Value cachedLayer(int64_t layer, Value x, Value positions, MaskAttr mask,
                    CacheUpdate update, RowSelection select = nullptr);
  SmallVector<Value> cacheArguments();
  /// The inputs @prefill and @decode share: ids and positions [B, length],
  /// per-row lengths, then the caches (checked to share the ids' batch and
  /// the first cache's capacity).
  struct CachedInputs {
    Value ids, positions, lengths;
    SmallVector<Value> caches;
  };
  CachedInputs beginCachedEntryPoint(ModuleOp module, StringRef name,
                                     int64_t length, StringRef lengthsName);
  /// Returns the logits and the caches, each written back into its input.
  void endWithCaches(Value logits, ArrayRef<Value> caches);
  void buildPrefill(ModuleOp module);
  void buildDecode(ModuleOp module);

  const ModelConfig &config;
  OpBuilder b;
  Location loc;
  Type element;
  func::FuncOp func;
  SmallVector<Attribute> names;
};

} // namespace mlir::tfm

#endif // TFM_LIB_COMPILER_MODELBUILDER_H

//===- ModelBuilder.cpp - the forward pass of a model description ----------===//

#include "ModelBuilder.h"

#include "tfm/ABI/Attributes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::tfm;

ModelBuilder::ModelBuilder(const ModelConfig &config, MLIRContext *context)
    : config(config), b(context), loc(b.getUnknownLoc()) {
  if (config.dtype == "f16")
    element = b.getF16Type();
  else if (config.dtype == "bf16")
    element = b.getBF16Type();
  else
    element = b.getF32Type();
}

void ModelBuilder::beginEntryPoint(ModuleOp module, StringRef name) {
  b.setInsertionPointToEnd(module.getBody());
  func = func::FuncOp::create(b, loc, name, b.getFunctionType({}, {}));
  b.setInsertionPointToStart(func.addEntryBlock());
  names.clear();
}

void ModelBuilder::endEntryPoint(ArrayRef<Value> results,
                                 ArrayRef<std::string> resultNames,
                                 ArrayRef<std::optional<unsigned>> updates) {
  func::ReturnOp::create(b, loc, results);
  Block &entry = func.getBody().front();
  func.setFunctionType(b.getFunctionType(entry.getArgumentTypes(),
                                         ValueRange(results).getTypes()));
  // Every argument's attributes at once: one setArgAttr per argument
  // would unique a new array of all of them each time, quadratic in the
  // arguments (2.9 GB for a description of 1024 layers).
  SmallVector<Attribute> argAttrs(entry.getNumArguments(),
                                  b.getDictionaryAttr({}));
  for (auto [i, name] : llvm::enumerate(names))
    argAttrs[i] = b.getDictionaryAttr(b.getNamedAttr(kNameAttr, name));
  func.setAllArgAttrs(argAttrs);
  for (auto [i, name] : llvm::enumerate(resultNames)) {
    func.setResultAttr(i, kNameAttr, b.getStringAttr(name));
    if (i < updates.size() && updates[i])
      func.setResultAttr(i, kUpdatesAttr, b.getI64IntegerAttr(*updates[i]));
  }
}

Value ModelBuilder::parameter(const llvm::Twine &name, ArrayRef<int64_t> shape,
                              Type type) {
  Block &entry = func.getBody().front();
  Value value = entry.addArgument(tensor(shape, type), loc);
  names.push_back(b.getStringAttr(name));
  return value;
}

std::pair<Value, Value> ModelBuilder::normParameters(const llvm::Twine &prefix) {
  Value weight = parameter(prefix + ".weight", {config.dModel});
  Value bias = config.norm == NormKind::layer_norm
                   ? parameter(prefix + ".bias", {config.dModel})
                   : Value();
  return {weight, bias};
}

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
  int64_t qRows = config.numHeads * config.headDim;
  int64_t kvRows = config.numKvHeads * config.headDim;
  auto projection = [&](llvm::StringRef name, int64_t rows, int64_t cols,
                        bool bias) -> std::pair<Value, Value> {
    Value w = parameter(prefix + name + ".weight", {rows, cols});
    Value bv = bias ? parameter(prefix + name + ".bias", {rows}) : Value();
    return {w, bv};
  };

  BlockWeights w;
  std::tie(w.attnNormW, w.attnNormB) =
      normParameters(prefix + "input_layernorm");
  bool qkvBias = config.attentionBias || config.qkvBias;
  std::tie(w.qW, w.qB) =
      projection("self_attn.q_proj", qRows, config.dModel, qkvBias);
  std::tie(w.kW, w.kB) =
      projection("self_attn.k_proj", kvRows, config.dModel, qkvBias);
  std::tie(w.vW, w.vB) =
      projection("self_attn.v_proj", kvRows, config.dModel, qkvBias);
  std::tie(w.oW, w.oB) = projection("self_attn.o_proj", config.dModel, qRows,
                                    config.attentionBias);
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

RopeScalingAttr ModelBuilder::ropeScaling() {
  if (!config.ropeScaling)
    return RopeScalingAttr();
  const ModelConfig::RopeScaling &s = *config.ropeScaling;
  return RopeScalingAttr::get(b.getContext(), llvm::APFloat(s.factor),
                              llvm::APFloat(s.lowFreqFactor),
                              llvm::APFloat(s.highFreqFactor),
                              s.originalMaxPositions);
}

MaskAttr ModelBuilder::maskAttr() {
  return config.slidingWindow
             ? MaskAttr::getSlidingWindow(b.getContext(), config.slidingWindow)
             : MaskAttr::getCausal(b.getContext());
}

Value ModelBuilder::decoderBlock(int64_t layer, Value x, Value positions) {
  BlockWeights w = blockWeights(layer);
  MLIRContext *context = b.getContext();
  MaskAttr mask = maskAttr();
  RopeAttr rope = config.rope ? RopeAttr::get(context,
                                              llvm::APFloat(config.ropeTheta),
                                              config.ropeStyle, ropeScaling())
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

Value ModelBuilder::embed(Value ids, Value positions, Value &table) {
  auto idsType = cast<RankedTensorType>(ids.getType());
  auto hidden = tensor({idsType.getDimSize(0), idsType.getDimSize(1),
                        config.dModel});
  bool gpt2 = config.gpt2Naming;
  table = parameter(gpt2 ? "transformer.wte.weight" : "model.embed_tokens.weight",
                    {config.vocabSize, config.dModel});
  Value h = EmbeddingOp::create(b, loc, hidden, ids, table);
  if (!config.rope) {
    Value learnedTable = parameter(gpt2 ? "transformer.wpe.weight"
                                        : "model.embed_positions.weight",
                                   {config.maxPositions, config.dModel});
    Value learned = EmbeddingOp::create(b, loc, hidden, positions, learnedTable);
    h = arith::AddFOp::create(b, loc, h, learned);
  }
  return h;
}

Value ModelBuilder::logits(Value h, Value table) {
  auto hidden = cast<RankedTensorType>(h.getType());
  if (config.finalNorm) {
    auto [weight, bias] =
        normParameters(config.gpt2Naming ? "transformer.ln_f" : "model.norm");
    FloatAttr eps = b.getF32FloatAttr(config.eps);
    h = config.norm == NormKind::rms_norm
            ? RMSNormOp::create(b, loc, hidden, h, weight, eps).getResult()
            : LayerNormOp::create(b, loc, hidden, h, weight, bias, eps)
                  .getResult();
  }
  Value head = config.tieEmbeddings
                   ? table
                   : parameter("lm_head.weight",
                               {config.vocabSize, config.dModel});
  return LinearOp::create(b, loc,
                          tensor({hidden.getDimSize(0), hidden.getDimSize(1),
                                  config.vocabSize}),
                          h, head, Value());
}

void ModelBuilder::buildForward(ModuleOp module) {
  int64_t dyn = ShapedType::kDynamic;
  beginEntryPoint(module, "forward");
  Type i32 = b.getI32Type();
  Value ids = parameter("input_ids", {dyn, dyn}, i32);
  Value positions = parameter("position_ids", {dyn, dyn}, i32);
  Value table;
  Value h = embed(ids, positions, table);
  for (int64_t layer = 0; layer < config.numLayers; ++layer)
    h = decoderBlock(layer, h, positions);
  Value result = logits(h, table);
  if (config.lastLogitsOnly)
    result = lastPosition(result, ids);
  endEntryPoint({result}, {"logits"}, {});
}

OwningOpRef<ModuleOp> ModelBuilder::build() {
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc, config.name);
  buildForward(*module);
  if (config.generation) {
    buildPrefill(*module);
    buildDecode(*module);
  }
  return module;
}

//===- KVCacheEntryPoints.cpp - @prefill and @decode of a model ------------===//
//
// Generation keeps each layer's keys and values (after RoPE) in caches that
// the caller owns, one pair per layer, [B, Hkv, C, D] in the model's dtype,
// updated in place (results marked tfm.updates: nothing of the caches' size
// is copied per token):
//
//   prefill(input_ids [B, S], position_ids [B, S], prompt_lengths [B],
//           caches..., parameters...) -> logits [B, 1, vocab], caches
//     the prompts (right-padded to S; row b has prompt_lengths[b] tokens)
//     through every layer, writing their keys and values at positions
//     [0, S) of the caches; the logits of each row's last prompt token
//     (the last layer computes only those rows after its attention).
//   decode(input_ids [B, 1], position_ids [B, 1], cache_lengths [B],
//          caches..., parameters...) -> logits [B, 1, vocab], caches
//     one new token per row, whose keys and values go to position
//     cache_lengths[b]; attention reads the cache through kv_lengths.
//
// A sliding-window model keeps only the last W positions: its caches have
// C = W and are rings, position p at slot p mod W (attention is blind to
// the order of keys; RoPE was applied before caching).
//
//===----------------------------------------------------------------------===//

#include "ModelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::tfm;

namespace {

using Iter = utils::IteratorType;

/// Builds small tensor computations on the lengths of an entry point.
struct LengthOps {
  OpBuilder &b;
  Location loc;

  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  Value dim(Value tensor, int64_t d) {
    return tensor::DimOp::create(b, loc, tensor, d);
  }
  /// Element `i` of an i32 tensor, as an index.
  Value element(Value tensor, Value i) {
    Value value = tensor::ExtractOp::create(b, loc, tensor, ValueRange{i});
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), value);
  }

  /// f(lengths[b]) for every b, as i32: [B] -> [B].
  Value map(Value lengths, function_ref<Value(OpBuilder &, Location, Value)> f) {
    Value init = tensor::EmptyOp::create(
        b, loc, ArrayRef<OpFoldResult>{tensor::getMixedSize(b, loc, lengths, 0)},
        b.getI32Type());
    AffineMap identity = b.getMultiDimIdentityMap(1);
    return linalg::GenericOp::create(
               b, loc, TypeRange{init.getType()}, ValueRange{lengths},
               ValueRange{init}, ArrayRef<AffineMap>{identity, identity},
               ArrayRef<Iter>{Iter::parallel},
               [&](OpBuilder &nb, Location nl, ValueRange args) {
                 linalg::YieldOp::create(nb, nl, f(nb, nl, args[0]));
               })
        .getResult(0);
  }

  /// Asserts lo <= lengths[b] < hi for every b (hi null: unbounded); the
  /// assert only reads the inputs, so it becomes a runtime check before
  /// anything runs (tfm-insert-runtime-checks).
  void assertInRange(Value lengths, Value lo, Value hi, const Twine &message) {
    Value init = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{},
                                         b.getI1Type());
    Value yes = arith::ConstantIntOp::create(b, loc, 1, 1);
    init = linalg::FillOp::create(b, loc, ValueRange{yes}, ValueRange{init})
               .getResult(0);
    SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(1),
                                AffineMap::get(1, 0, {}, b.getContext())};
    Value all = linalg::GenericOp::create(
                    b, loc, TypeRange{init.getType()}, ValueRange{lengths},
                    ValueRange{init}, maps, ArrayRef<Iter>{Iter::reduction},
                    [&](OpBuilder &nb, Location nl, ValueRange args) {
                      Value n = arith::IndexCastOp::create(
                          nb, nl, nb.getIndexType(), args[0]);
                      Value ok = arith::CmpIOp::create(
                          nb, nl, arith::CmpIPredicate::sge, n, lo);
                      if (hi)
                        ok = arith::AndIOp::create(
                            nb, nl, ok,
                            arith::CmpIOp::create(
                                nb, nl, arith::CmpIPredicate::slt, n, hi));
                      linalg::YieldOp::create(
                          nb, nl,
                          ValueRange{arith::AndIOp::create(nb, nl, args[1], ok)});
                    })
                    .getResult(0);
    Value ok = tensor::ExtractOp::create(b, loc, all, ValueRange{});
    cf::AssertOp::create(b, loc, ok, message.str());
  }

  /// Asserts dim(a, i) == dim(b, j) (a runtime check).
  void assertSameDim(Value a, int64_t i, Value other, int64_t j) {
    Value same = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                       dim(a, i), dim(other, j));
    cf::AssertOp::create(b, loc, same, "cache sizes differ");
  }

  /// `source` [1, H, n, D] written into `cache` [B, H, C, D] at (row, slot).
  Value write(Value cache, Value source, Value row, Value slot) {
    auto type = cast<RankedTensorType>(source.getType());
    OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
    SmallVector<OpFoldResult> sizes{one, b.getIndexAttr(type.getDimSize(1)),
                                    tensor::getMixedSize(b, loc, source, 2),
                                    b.getIndexAttr(type.getDimSize(3))};
    return tensor::InsertSliceOp::create(
        b, loc, source, cache, ArrayRef<OpFoldResult>{row, zero, slot, zero},
        sizes, SmallVector<OpFoldResult>(4, one));
  }

  /// `body` for each row of the batch of `k` [B, ...], threading `caches`
  /// (key, value) through: the caches after the last row.
  SmallVector<Value> overRows(
      Value k, ValueRange caches,
      function_ref<SmallVector<Value>(LengthOps &, Value row, ValueRange)>
          body) {
    auto rows = scf::ForOp::create(
        b, loc, index(0), dim(k, 0), index(1), caches,
        [&](OpBuilder &rb, Location rl, Value row, ValueRange rowCaches) {
          LengthOps rowOps{rb, rl};
          scf::YieldOp::create(rb, rl, body(rowOps, row, rowCaches));
        });
    return rows.getResults();
  }

  /// Row `row`, positions [at, at + count) of the new keys `k` and values
  /// `v` [B, H, S, D], written into `caches` (key, value) at (row, slot).
  SmallVector<Value> writeRow(ValueRange caches, Value k, Value v, Value row,
                              Value at, OpFoldResult count, Value slot) {
    return {write(caches[0], take(k, row, at, count), row, slot),
            write(caches[1], take(v, row, at, count), row, slot)};
  }

  /// Rows [row, row + 1) and positions [at, at + count) of `x` [B, H, S, D].
  Value take(Value x, Value row, Value at, OpFoldResult count) {
    auto type = cast<RankedTensorType>(x.getType());
    OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
    std::optional<int64_t> staticCount = getConstantIntValue(count);
    auto sliceType = RankedTensorType::get(
        {1, type.getDimSize(1), staticCount.value_or(ShapedType::kDynamic),
         type.getDimSize(3)},
        type.getElementType());
    return tensor::ExtractSliceOp::create(
        b, loc, sliceType, x, ArrayRef<OpFoldResult>{row, zero, at, zero},
        ArrayRef<OpFoldResult>{one, b.getIndexAttr(type.getDimSize(1)), count,
                               b.getIndexAttr(type.getDimSize(3))},
        SmallVector<OpFoldResult>(4, one));
  }
};

} // namespace

ModelBuilder::CachedInputs
ModelBuilder::beginCachedEntryPoint(ModuleOp module, StringRef name,
                                    int64_t length, StringRef lengthsName) {
  int64_t dyn = ShapedType::kDynamic;
  beginEntryPoint(module, name);
  Type i32 = b.getI32Type();
  CachedInputs inputs;
  inputs.ids = parameter("input_ids", {dyn, length}, i32);
  inputs.positions = parameter("position_ids", {dyn, length}, i32);
  inputs.lengths = parameter(lengthsName, {dyn}, i32);
  inputs.caches = cacheArguments();
  // Checked before anything runs: every cache has the ids' batch and the
  // first cache's capacity.
  LengthOps ops{b, loc};
  for (Value cache : inputs.caches) {
    ops.assertSameDim(cache, 0, inputs.ids, 0);
    ops.assertSameDim(cache, 2, inputs.caches[0], 2);
  }
  return inputs;
}

SmallVector<Value> ModelBuilder::cacheArguments() {
  int64_t dyn = ShapedType::kDynamic;
  int64_t headDim = config.headDim;
  // A window model's cache holds exactly the window: a ring.
  int64_t capacity = config.slidingWindow ? config.slidingWindow : dyn;
  SmallVector<Value> caches;
  for (int64_t layer = 0; layer < config.numLayers; ++layer)
    for (llvm::StringRef kind : {"key", "value"})
      caches.push_back(
          parameter(llvm::formatv("cache.{0}.{1}", layer, kind),
                    {dyn, config.numKvHeads, capacity, headDim}));
  return caches;
}

Value ModelBuilder::cachedLayer(int64_t layer, Value x, Value positions,
                                MaskAttr mask, CacheUpdate update,
                                RowSelection select) {
  BlockWeights w = blockWeights(layer);
  auto type = cast<RankedTensorType>(x.getType());
  int64_t batch = type.getDimSize(0), length = type.getDimSize(1);
  int64_t headDim = config.headDim;
  auto norm = [&](Value v, Value weight, Value bias) -> Value {
    FloatAttr eps = b.getF32FloatAttr(config.eps);
    if (config.norm == NormKind::rms_norm)
      return RMSNormOp::create(b, loc, v.getType(), v, weight, eps);
    return LayerNormOp::create(b, loc, v.getType(), v, weight, bias, eps);
  };
  // [B, S, heads*D] -> [B, heads, S, D], RoPE'd if `rotate`.
  auto heads = [&](Value h, Value weight, Value bias, int64_t count,
                   bool rotate) -> Value {
    Value projected = LinearOp::create(
        b, loc, tensor({batch, length, count * headDim}), h, weight, bias);
    Value split = SplitHeadsOp::create(
        b, loc, tensor({batch, count, length, headDim}), projected);
    if (!rotate || !config.rope)
      return split;
    return RopeOp::create(b, loc, split.getType(),
                          RopeStyleAttr::get(b.getContext(), config.ropeStyle),
                          split, positions, b.getF32FloatAttr(config.ropeTheta),
                          ropeScaling());
  };
  // x + Attn(h): the residual add of attention's output projection, on the
  // rows `select` keeps (all without it).
  auto attentionResidual = [&](Value h) -> Value {
    Value q = heads(h, w.qW, w.qB, config.numHeads, true);
    Value k = heads(h, w.kW, w.kB, config.numKvHeads, true);
    Value v = heads(h, w.vW, w.vB, config.numKvHeads, false);
    auto [keys, values, kvLengths] = update(layer, k, v);
    Value o = AttentionOp::create(b, loc, q.getType(), q, keys, values,
                                  kvLengths, /*dense_mask=*/Value(),
                                  /*bias=*/Value(), mask, FloatAttr(),
                                  FloatAttr());
    Value merged = MergeHeadsOp::create(
        b, loc, tensor({batch, length, config.numHeads * headDim}), o);
    Value residual = x;
    if (select) {
      merged = select(merged);
      residual = select(residual);
    }
    return arith::AddFOp::create(
        b, loc, residual,
        LinearOp::create(b, loc, residual.getType(), merged, w.oW, w.oB));
  };
  auto ffn = [&](Value h) -> Value {
    return FFNOp::create(b, loc, h.getType(),
                         FFNKindAttr::get(b.getContext(), config.ffn), h,
                         w.gateW, w.upW, w.upB, w.downW, w.downB);
  };
  auto add = [&](Value a, Value c) -> Value {
    return arith::AddFOp::create(b, loc, a, c);
  };
  // As tfm.decoder_block: pre-norm h = x + Attn(Norm1(x)), y = h +
  // FFN(Norm2(h)); post-norm h = Norm1(x + Attn(x)), y = Norm2(h + FFN(h)).
  if (config.placement == NormPlacement::pre) {
    Value h = attentionResidual(norm(x, w.attnNormW, w.attnNormB));
    return add(h, ffn(norm(h, w.ffnNormW, w.ffnNormB)));
  }
  Value h = norm(attentionResidual(x), w.attnNormW, w.attnNormB);
  return norm(add(h, ffn(h)), w.ffnNormW, w.ffnNormB);
}

void ModelBuilder::endWithCaches(Value logits, ArrayRef<Value> caches) {
  // Inputs: ids, positions, lengths, then the caches.
  unsigned firstCache = 3;
  SmallVector<Value> results{logits};
  SmallVector<std::string> resultNames{"logits"};
  SmallVector<std::optional<unsigned>> updates{std::nullopt};
  for (auto [i, cache] : llvm::enumerate(caches)) {
    results.push_back(cache);
    resultNames.push_back(
        llvm::formatv("cache.{0}.{1}", i / 2, i % 2 ? "value" : "key"));
    updates.push_back(firstCache + i);
  }
  endEntryPoint(results, resultNames, updates);
}

void ModelBuilder::buildPrefill(ModuleOp module) {
  int64_t dyn = ShapedType::kDynamic;
  CachedInputs inputs =
      beginCachedEntryPoint(module, "prefill", dyn, "prompt_lengths");
  Value ids = inputs.ids, positions = inputs.positions,
        lengths = inputs.lengths;
  SmallVector<Value> &caches = inputs.caches;
  LengthOps ops{b, loc};

  // Checked before anything runs: the caches hold the prompt (a ring only
  // needs to hold its window), and every row has 1 to S prompt tokens.
  Value length = ops.dim(ids, 1);
  if (!config.slidingWindow) {
    Value holds = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                        ops.dim(caches[0], 2), length);
    cf::AssertOp::create(
        b, loc, holds,
        "dim 2 of 'cache.0.key' must be at least dim 1 of 'input_ids'");
  }
  ops.assertInRange(lengths, ops.index(1),
                    arith::AddIOp::create(b, loc, length, ops.index(1)),
                    "every element of 'prompt_lengths' must be in [1, dim 1 "
                    "of 'input_ids']");

  // The new keys and values go into the caches; attention reads them
  // directly, with the model's mask. Causal models write every position
  // (padding included: decode overwrites it); a ring takes each row's last
  // W prompt positions, position p at slot p mod W.
  auto update = [&](int64_t layer, Value k, Value v)
      -> std::tuple<Value, Value, Value> {
    Value &keyCache = caches[2 * layer], &valueCache = caches[2 * layer + 1];
    if (!config.slidingWindow) {
      OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
      auto type = cast<RankedTensorType>(k.getType());
      SmallVector<OpFoldResult> sizes{
          tensor::getMixedSize(b, loc, k, 0), b.getIndexAttr(type.getDimSize(1)),
          tensor::getMixedSize(b, loc, k, 2), b.getIndexAttr(type.getDimSize(3))};
      SmallVector<OpFoldResult> offsets(4, zero), strides(4, one);
      keyCache = tensor::InsertSliceOp::create(b, loc, k, keyCache, offsets,
                                               sizes, strides);
      valueCache = tensor::InsertSliceOp::create(b, loc, v, valueCache,
                                                 offsets, sizes, strides);
      return {k, v, Value()};
    }
    Value window = ops.index(config.slidingWindow);
    SmallVector<Value> updated = ops.overRows(
        k, {keyCache, valueCache},
        [&](LengthOps &rowOps, Value row, ValueRange rowCaches) {
          OpBuilder &rb = rowOps.b;
          Location rl = rowOps.loc;
          Value end = rowOps.element(lengths, row);
          Value begin = arith::MaxSIOp::create(
              rb, rl, arith::SubIOp::create(rb, rl, end, window),
              rowOps.index(0));
          auto steps = scf::ForOp::create(
              rb, rl, begin, end, rowOps.index(1), rowCaches,
              [&](OpBuilder &pb, Location pl, Value position,
                  ValueRange stepCaches) {
                Value slot = arith::RemUIOp::create(pb, pl, position, window);
                scf::YieldOp::create(
                    pb, pl,
                    LengthOps{pb, pl}.writeRow(stepCaches, k, v, row, position,
                                               pb.getIndexAttr(1), slot));
              });
          return SmallVector<Value>(steps.getResults());
        });
    keyCache = updated[0];
    valueCache = updated[1];
    return {k, v, Value()};
  };

  // Each row's last prompt token: v[b, prompt_lengths[b] - 1, :]. Only
  // those rows go on after the last layer's attention (its output
  // projection, residuals and FFN), as for the logits.
  auto lastTokens = [&](Value v) -> Value {
    auto type = cast<RankedTensorType>(v.getType());
    Value init = tensor::EmptyOp::create(
        b, loc, RankedTensorType::get({dyn, 1, type.getDimSize(2)},
                                      type.getElementType()),
        ValueRange{ops.dim(ids, 0)});
    return linalg::GenericOp::create(
               b, loc, TypeRange{init.getType()}, ValueRange{lengths},
               ValueRange{init},
               ArrayRef<AffineMap>{
                   AffineMap::get(3, 0, {b.getAffineDimExpr(0)},
                                  b.getContext()),
                   b.getMultiDimIdentityMap(3)},
               SmallVector<Iter>(3, Iter::parallel),
               [&](OpBuilder &nb, Location nl, ValueRange args) {
                 LengthOps rowOps{nb, nl};
                 Value row = linalg::IndexOp::create(nb, nl, 0);
                 Value feature = linalg::IndexOp::create(nb, nl, 2);
                 Value position = arith::SubIOp::create(
                     nb, nl,
                     arith::IndexCastOp::create(nb, nl, nb.getIndexType(),
                                                args[0]),
                     rowOps.index(1));
                 Value value = tensor::ExtractOp::create(
                     nb, nl, v, ValueRange{row, position, feature});
                 linalg::YieldOp::create(nb, nl, value);
               })
        .getResult(0);
  };
  Value table;
  Value h = embed(ids, positions, table);
  for (int64_t layer = 0; layer < config.numLayers; ++layer)
    h = cachedLayer(layer, h, positions, maskAttr(), update,
                    layer + 1 == config.numLayers ? RowSelection(lastTokens)
                                                  : nullptr);
  endWithCaches(logits(h, table), caches);
}

void ModelBuilder::buildDecode(ModuleOp module) {
  CachedInputs inputs =
      beginCachedEntryPoint(module, "decode", 1, "cache_lengths");
  Value ids = inputs.ids, positions = inputs.positions,
        lengths = inputs.lengths;
  SmallVector<Value> &caches = inputs.caches;
  LengthOps ops{b, loc};

  // Checked before anything runs: each row's new position fits (a ring
  // takes any length: it overwrites its oldest).
  Value capacity = ops.dim(caches[0], 2);
  ops.assertInRange(
      lengths, ops.index(0), config.slidingWindow ? Value() : capacity,
      config.slidingWindow
          ? "every element of 'cache_lengths' must be non-negative"
          : "every element of 'cache_lengths' must be in [0, dim 2 of "
            "'cache.0.key')");

  // Keys visible to each row: its cached ones and the new one.
  Value kvLengths = ops.map(lengths, [&](OpBuilder &nb, Location nl, Value n) {
    Value next = arith::AddIOp::create(
        nb, nl, n, arith::ConstantIntOp::create(nb, nl, nb.getI32Type(), 1));
    if (!config.slidingWindow)
      return next;
    return arith::MinSIOp::create(
               nb, nl, next,
               arith::ConstantIntOp::create(nb, nl, nb.getI32Type(),
                                            config.slidingWindow))
        .getResult();
  });

  // Row b's new key and value go to slot cache_lengths[b] (mod W in a
  // ring); attention then reads the whole cache, bounded by kv_lengths.
  auto update = [&](int64_t layer, Value k, Value v)
      -> std::tuple<Value, Value, Value> {
    Value &keyCache = caches[2 * layer], &valueCache = caches[2 * layer + 1];
    SmallVector<Value> updated = ops.overRows(
        k, {keyCache, valueCache},
        [&](LengthOps &rowOps, Value row, ValueRange rowCaches) {
          Value slot = rowOps.element(lengths, row);
          if (config.slidingWindow)
            slot = arith::RemUIOp::create(rowOps.b, rowOps.loc, slot,
                                          rowOps.index(config.slidingWindow));
          return rowOps.writeRow(rowCaches, k, v, row, rowOps.index(0),
                                 rowOps.b.getIndexAttr(1), slot);
        });
    keyCache = updated[0];
    valueCache = updated[1];
    return {keyCache, valueCache, kvLengths};
  };

  Value table;
  Value h = embed(ids, positions, table);
  for (int64_t layer = 0; layer < config.numLayers; ++layer)
    h = cachedLayer(layer, h, positions, MaskAttr::getNone(b.getContext()),
                    update);
  endWithCaches(logits(h, table), caches);
}

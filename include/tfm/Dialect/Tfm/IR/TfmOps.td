//===- TfmOps.td - tfm operations --------------------------*- tablegen -*-===//

#ifndef TFM_DIALECT_TFM_IR_TFMOPS_TD
#define TFM_DIALECT_TFM_IR_TFMOPS_TD

include "tfm/Dialect/Tfm/IR/TfmAttrs.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/TilingInterface.td"

def Tfm_FloatTensor : RankedTensorOf<[F32, F16, BF16]>;
def Tfm_IntTensor : RankedTensorOf<[I32, I64]>;
def Tfm_BoolTensor : RankedTensorOf<[I1]>;

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

def Tfm_AttentionOp : Tfm_Op<"attention", [Pure, AttrSizedOperandSegments]> {
  let summary = "scaled dot-product attention (MHA, GQA, MQA)";
  let description = [{
    Computes `softmax(scale * Q Kᵀ + bias, masked) V` per batch and query
    head.

    | operand | shape |
    | --- | --- |
    | `query` | `[B, Hq, Sq, D]` |
    | `key` | `[B, Hkv, Skv, D]` |
    | `value` | `[B, Hkv, Skv, Dv]` |
    | result | `[B, Hq, Sq, Dv]` |

    `Hkv` must divide `Hq`: query head `h` reads key/value head
    `h / (Hq / Hkv)`, which covers multi-head (`Hq == Hkv`), grouped-query
    and multi-query (`Hkv == 1`) attention. `B`, `Sq` and `Skv` may be
    dynamic; head counts and head dims are static.

    Which keys a query sees is the conjunction of:
    - `mask`: a structured `#tfm.mask` (causal, sliding window, band),
      aligned bottom-right when `Sq != Skv`; absent means `none`;
    - `kv_lengths`: per-batch number of valid keys `[B]` (padding): key `j`
      of batch `b` is visible iff `j < kv_lengths[b]`;
    - `dense_mask`: an `i1` tensor broadcastable (NumPy rules) to
      `[B, Hq, Sq, Skv]`, `true` meaning attend.

    `bias` is an additive float tensor broadcastable the same way (ALiBi and
    friends). `scale` defaults to `1/sqrt(D)`. With `softcap = c`, scores
    become `c * tanh(s / c)` before masking. A query row that sees no key
    produces zeros, never NaN.

    Example (grouped-query, causal):

    ```mlir
    %o = tfm.attention %q, %k, %v {mask = #tfm.mask<causal>}
        : (tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>,
           tensor<1x2x16x64xf32>) -> tensor<1x8x16x64xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$query,
                       Tfm_FloatTensor:$key,
                       Tfm_FloatTensor:$value,
                       Optional<Tfm_IntTensor>:$kv_lengths,
                       Optional<Tfm_BoolTensor>:$dense_mask,
                       Optional<Tfm_FloatTensor>:$bias,
                       OptionalAttr<Tfm_MaskAttr>:$mask,
                       OptionalAttr<F32Attr>:$scale,
                       OptionalAttr<F32Attr>:$softcap);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value
    (`kv_lengths` `(` $kv_lengths^ `)`)?
    (`dense_mask` `(` $dense_mask^ `)`)?
    (`bias` `(` $bias^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
  let extraClassDeclaration = [{
    /// The structured mask, `none` when the attribute is absent.
    MaskAttr getMaskOrNone();
    /// The softmax scale, `1/sqrt(D)` when the attribute is absent.
    double getScaleOrDefault();
  }];
}

def Tfm_FloatMemRef : MemRefRankOf<[F32, F16, BF16], [4]>;

def Tfm_BufferAttentionOp : Tfm_Op<"buffer_attention", [
    AllElementTypesMatch<["query", "key", "value", "result"]>]> {
  let summary = "tfm.attention on buffers, written into a result buffer";
  let description = [{
    The computation of `tfm.attention` (same layouts, structured `mask`,
    `kv_lengths`, `scale`, `softcap`; no dense mask or bias) on memrefs: it
    reads `query`, `key`, `value` and `kv_lengths` and writes every element
    of `result` (`[B, Hq, Sq, Dv]`).

    A code generator's form, not an input form: `tfm-gpu-flash-attention`
    puts it between the `bufferization.to_buffer`s of an attention's
    operands and a `to_tensor` of its result, so that bufferization and
    buffer deallocation see one op with declared reads and writes, and
    `tfm-gpu-lower-buffer-attention` turns it into the tensor-core kernel
    once the buffers are final.

    ```mlir
    tfm.buffer_attention %q, %k, %v into %o {mask = #tfm.mask<causal>}
        : memref<?x8x?x64xbf16>, memref<?x2x?x64xbf16>,
          memref<?x2x?x64xbf16> into memref<?x8x?x64xbf16>
    ```
  }];
  let arguments = (ins Arg<Tfm_FloatMemRef, "", [MemRead]>:$query,
                       Arg<Tfm_FloatMemRef, "", [MemRead]>:$key,
                       Arg<Tfm_FloatMemRef, "", [MemRead]>:$value,
                       Arg<Optional<MemRefRankOf<[I32, I64], [1]>>, "",
                           [MemRead]>:$kv_lengths,
                       Arg<Tfm_FloatMemRef, "", [MemWrite]>:$result,
                       OptionalAttr<Tfm_MaskAttr>:$mask,
                       OptionalAttr<F32Attr>:$scale,
                       OptionalAttr<F32Attr>:$softcap);
  let assemblyFormat = [{
    $query `,` $key `,` $value
    (`kv_lengths` `(` $kv_lengths^ `:` type($kv_lengths) `)`)?
    `into` $result attr-dict `:` type($query) `,` type($key) `,`
    type($value) `into` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The structured mask, `none` when the attribute is absent.
    MaskAttr getMaskOrNone();
    /// The softmax scale, `1/sqrt(D)` when the attribute is absent.
    double getScaleOrDefault();
  }];
}

//===----------------------------------------------------------------------===//
// Masks
//===----------------------------------------------------------------------===//

class Tfm_SquareMaskOp<string mnemonic> : Tfm_Op<mnemonic, [Pure]> {
  let results = (outs Tfm_BoolTensor:$result);
  let hasVerifier = 1;
}

def Tfm_CausalMaskOp : Tfm_SquareMaskOp<"causal_mask"> {
  let summary = "materializes a causal mask as an i1 tensor";
  let description = [{
    Produces an `[Sq, Skv]` tensor where element `(i, j)` is `true` iff
    `j <= i + Skv - Sq` (bottom-right aligned). Dynamic sizes are given as
    index operands, one per `?` in the result type.

    Feeding it to `tfm.attention` as `dense_mask` is canonicalized into the
    structured `#tfm.mask<causal>` attribute.

    ```mlir
    %m = tfm.causal_mask : tensor<16x16xi1>
    %d = tfm.causal_mask(%sq, %skv) : tensor<?x?xi1>
    ```
  }];
  let arguments = (ins Variadic<Index>:$dynamic_sizes);
  let assemblyFormat = [{
    (`(` $dynamic_sizes^ `)`)? attr-dict `:` type($result)
  }];
}

def Tfm_SlidingWindowMaskOp : Tfm_SquareMaskOp<"sliding_window_mask"> {
  let summary = "materializes a sliding-window mask as an i1 tensor";
  let description = [{
    Produces an `[Sq, Skv]` tensor where element `(i, j)` is `true` iff
    `p - window < j <= p` with `p = i + Skv - Sq`: the last `window` keys up
    to and including the query's own position.

    Feeding it to `tfm.attention` as `dense_mask` is canonicalized into the
    structured `#tfm.mask<sliding_window<W>>` attribute.

    ```mlir
    %m = tfm.sliding_window_mask window(4) : tensor<16x16xi1>
    ```
  }];
  let arguments = (ins I64Attr:$window, Variadic<Index>:$dynamic_sizes);
  let assemblyFormat = [{
    `window` `(` $window `)` (`(` $dynamic_sizes^ `)`)? attr-dict
    `:` type($result)
  }];
}

def Tfm_PaddingMaskOp : Tfm_Op<"padding_mask", [Pure]> {
  let summary = "materializes a key-padding mask as an i1 tensor";
  let description = [{
    Given per-batch valid key counts `lengths : [B]`, produces a
    `[B, 1, 1, Skv]` tensor where element `(b, 0, 0, j)` is `true` iff
    `j < lengths[b]`. A dynamic `Skv` is given as an index operand.

    Feeding it to `tfm.attention` as `dense_mask` is canonicalized into the
    attention's `kv_lengths` operand.

    ```mlir
    %m = tfm.padding_mask %lengths : tensor<2xi32> -> tensor<2x1x1x16xi1>
    %d = tfm.padding_mask %lengths, %skv : tensor<?xi32> -> tensor<?x1x1x?xi1>
    ```
  }];
  let arguments = (ins Tfm_IntTensor:$lengths, Optional<Index>:$kv_length);
  let results = (outs Tfm_BoolTensor:$result);
  let assemblyFormat = [{
    $lengths (`,` $kv_length^)? attr-dict `:` type($lengths) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Norms
//===----------------------------------------------------------------------===//

def Tfm_RMSNormOp : Tfm_Op<"rms_norm", [Pure]> {
  let summary = "root-mean-square normalization over the last dimension";
  let description = [{
    `y = x / sqrt(mean(x², last dim) + eps) * weight`, with `weight` of the
    size of the last dimension of `x`. `eps` must be non-negative.

    ```mlir
    %y = tfm.rms_norm %x, %w eps(1.0e-06)
        : (tensor<2x7x64xf32>, tensor<64xf32>) -> tensor<2x7x64xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input, Tfm_FloatTensor:$weight,
                       F32Attr:$eps);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight `eps` `(` $eps `)` attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Tfm_LayerNormOp : Tfm_Op<"layer_norm", [Pure]> {
  let summary = "layer normalization over the last dimension";
  let description = [{
    `y = (x - mean) / sqrt(var + eps) * weight + bias` over the last
    dimension, with the biased variance (divided by `n`, as PyTorch does).
    `bias` is optional; `eps` must be non-negative.

    ```mlir
    %y = tfm.layer_norm %x, %w, %b eps(1.0e-05)
        : (tensor<2x7x64xf32>, tensor<64xf32>, tensor<64xf32>)
        -> tensor<2x7x64xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input, Tfm_FloatTensor:$weight,
                       Optional<Tfm_FloatTensor>:$bias, F32Attr:$eps);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? `eps` `(` $eps `)` attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Projections and feed-forward networks
//===----------------------------------------------------------------------===//

def Tfm_LinearOp : Tfm_Op<"linear", [Pure]> {
  let summary = "affine projection with a PyTorch nn.Linear weight layout";
  let description = [{
    `y = x · weightᵀ + bias` with `x : [..., in]`, `weight : [out, in]`,
    optional `bias : [out]` and `y : [..., out]`.

    ```mlir
    %y = tfm.linear %x, %w, %b
        : (tensor<2x7x64xf32>, tensor<96x64xf32>, tensor<96xf32>)
        -> tensor<2x7x96xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input, Tfm_FloatTensor:$weight,
                       Optional<Tfm_FloatTensor>:$bias);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Tfm_FFNOp : Tfm_Op<"ffn", [Pure, AttrSizedOperandSegments]> {
  let summary = "position-wise feed-forward network";
  let description = [{
    With `x : [..., d_model]` and weights in `nn.Linear` layout:

    - gated kinds (`swiglu`, `geglu`) take `gate`, `up` and `down` weights
      and compute `down(act(x · gateᵀ) ⊙ (x · upᵀ))` with `act` = SiLU or
      GELU (erf); they take no biases;
    - plain kinds (`gelu` (erf), `gelu_tanh`, `relu`, `silu`) take `up` and
      `down` weights with optional biases and compute
      `down(act(x · upᵀ + up_bias)) + down_bias`.

    `gate` and `up` are `[d_ff, d_model]`, `down` is `[d_model, d_ff]`.

    ```mlir
    %y = tfm.ffn swiglu %x gate(%wg) up(%wu) down(%wd)
        : (tensor<2x7x64xf32>, tensor<172x64xf32>, tensor<172x64xf32>,
           tensor<64x172xf32>) -> tensor<2x7x64xf32>
    %z = tfm.ffn gelu %x up(%w1, %b1) down(%w2, %b2)
        : (tensor<2x7x64xf32>, tensor<256x64xf32>, tensor<256xf32>,
           tensor<64x256xf32>, tensor<64xf32>) -> tensor<2x7x64xf32>
    ```
  }];
  let arguments = (ins Tfm_FFNKind:$kind,
                       Tfm_FloatTensor:$input,
                       Optional<Tfm_FloatTensor>:$gate_weight,
                       Tfm_FloatTensor:$up_weight,
                       Optional<Tfm_FloatTensor>:$up_bias,
                       Tfm_FloatTensor:$down_weight,
                       Optional<Tfm_FloatTensor>:$down_bias);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = [{
    $kind $input
    (`gate` `(` $gate_weight^ `)`)?
    `up` `(` $up_weight (`,` $up_bias^)? `)`
    `down` `(` $down_weight (`,` $down_bias^)? `)`
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Positions, heads and embeddings
//===----------------------------------------------------------------------===//

def Tfm_RopeOp : Tfm_Op<"rope", [Pure]> {
  let summary = "rotary position embedding";
  let description = [{
    Rotates pairs of features of `x : [B, H, S, D]` by angle
    `pos * theta^(-2k/D)` for pair `k` in `[0, D/2)`, where `pos` comes from
    `positions : [S]` or `[B, S]` (integers). `D` must be even and `theta`
    positive.

    - `half` pairs feature `k` with `k + D/2` (rotate-half, Hugging Face
      LLaMA);
    - `interleaved` pairs `2k` with `2k + 1` (RoFormer, original Meta LLaMA).

    With `scaling` (`#tfm.rope_scaling`, Llama 3.1/3.2), each pair's
    inverse frequency `theta^(-2k/D)` is scaled as that attribute says.

    ```mlir
    %y = tfm.rope half %x, %pos theta(1.0e+04)
        : (tensor<1x8x16x64xf32>, tensor<16xi32>) -> tensor<1x8x16x64xf32>
    %z = tfm.rope half %x, %pos theta(5.0e+05) scaling(#tfm.rope_scaling<llama3,
             factor = 8.0, low_freq_factor = 1.0, high_freq_factor = 4.0,
             original_max_positions = 8192>)
        : (tensor<1x8x16x64xf32>, tensor<16xi32>) -> tensor<1x8x16x64xf32>
    ```
  }];
  let arguments = (ins Tfm_RopeStyle:$style, Tfm_FloatTensor:$input,
                       Tfm_IntTensor:$positions, F32Attr:$theta,
                       OptionalAttr<Tfm_RopeScalingAttr>:$scaling);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = [{
    $style $input `,` $positions `theta` `(` $theta `)`
    (`scaling` `(` $scaling^ `)`)? attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Tfm_SplitHeadsOp : Tfm_Op<"split_heads", [Pure]> {
  let summary = "splits the feature dimension into heads";
  let description = [{
    Reshapes and transposes `[B, S, H·D]` into `[B, H, S, D]`; the result
    type gives `H` and `D`.

    ```mlir
    %h = tfm.split_heads %x : tensor<2x7x64xf32> -> tensor<2x4x7x16xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tfm_MergeHeadsOp : Tfm_Op<"merge_heads", [Pure]> {
  let summary = "merges heads back into the feature dimension";
  let description = [{
    Transposes and reshapes `[B, H, S, D]` into `[B, S, H·D]`: the inverse
    of `tfm.split_heads`.

    ```mlir
    %x = tfm.merge_heads %h : tensor<2x4x7x16xf32> -> tensor<2x7x64xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tfm_EmbeddingOp : Tfm_Op<"embedding", [Pure]> {
  let summary = "token embedding lookup";
  let description = [{
    Gathers rows of `table : [V, Dmodel]` for `ids : [B, S]`, giving
    `[B, S, Dmodel]`.

    ```mlir
    %e = tfm.embedding %ids, %table
        : (tensor<2x7xi32>, tensor<1000x64xf32>) -> tensor<2x7x64xf32>
    ```
  }];
  let arguments = (ins Tfm_IntTensor:$ids, Tfm_FloatTensor:$table);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = [{
    $ids `,` $table attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Composite ops
//===----------------------------------------------------------------------===//

def Tfm_SelfAttentionOp
    : Tfm_Op<"self_attention", [Pure, AttrSizedOperandSegments]> {
  let summary = "multi-head self-attention with projections";
  let description = [{
    The whole attention sublayer on `x : [B, S, Dmodel]`:

    ```
    q = split_heads(linear(x, q_weight, q_bias))      // [B, Hq, S, D]
    k = split_heads(linear(x, k_weight, k_bias))      // [B, Hkv, S, D]
    v = split_heads(linear(x, v_weight, v_bias))      // [B, Hkv, S, D]
    q, k = rope(q, positions), rope(k, positions)     // if `rope` is set
    o = attention(q, k, v, kv_lengths) {mask}
    y = linear(merge_heads(o), o_weight, o_bias)      // [B, S, Dmodel]
    ```

    `heads(Hq, Hkv)` gives the query and key/value head counts; the head
    dim is `rows(q_weight) / Hq`. `positions` is required exactly when
    `rope` is set. `tfm-decompose` expands the op into the ops above.

    ```mlir
    %y = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo)
        positions(%pos)
        {mask = #tfm.mask<causal>, rope = #tfm.rope<theta = 1.0e+04, style = half>}
        : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
           tensor<16x64xf32>, tensor<64x64xf32>, tensor<16xi32>)
        -> tensor<1x16x64xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input,
                       Tfm_FloatTensor:$q_weight,
                       Optional<Tfm_FloatTensor>:$q_bias,
                       Tfm_FloatTensor:$k_weight,
                       Optional<Tfm_FloatTensor>:$k_bias,
                       Tfm_FloatTensor:$v_weight,
                       Optional<Tfm_FloatTensor>:$v_bias,
                       Tfm_FloatTensor:$o_weight,
                       Optional<Tfm_FloatTensor>:$o_bias,
                       Optional<Tfm_IntTensor>:$positions,
                       Optional<Tfm_IntTensor>:$kv_lengths,
                       I64Attr:$num_heads,
                       I64Attr:$num_kv_heads,
                       OptionalAttr<Tfm_MaskAttr>:$mask,
                       OptionalAttr<Tfm_RopeAttr>:$rope);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = [{
    $input `heads` `(` $num_heads `,` $num_kv_heads `)`
    `q` `(` $q_weight (`,` $q_bias^)? `)`
    `k` `(` $k_weight (`,` $k_bias^)? `)`
    `v` `(` $v_weight (`,` $v_bias^)? `)`
    `o` `(` $o_weight (`,` $o_bias^)? `)`
    (`positions` `(` $positions^ `)`)?
    (`kv_lengths` `(` $kv_lengths^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Width of one attention head: rows(q_weight) / num_heads.
    int64_t getHeadDim();
  }];
}

def Tfm_DecoderBlockOp
    : Tfm_Op<"decoder_block", [Pure, AttrSizedOperandSegments]> {
  let summary = "a whole transformer decoder block";
  let description = [{
    A residual attention sublayer followed by a residual FFN sublayer on
    `x : [B, S, Dmodel]`, with `norm` (`rms_norm` or `layer_norm`) placed
    either before each sublayer (`pre`, LLaMA/GPT-2) or after each residual
    add (`post`, the original Transformer):

    ```
    pre:  h = x + Attn(Norm1(x));   y = h + FFN(Norm2(h))
    post: h = Norm1(x + Attn(x));   y = Norm2(h + FFN(h))
    ```

    `Attn` is `tfm.self_attention` (heads, biases, positions, kv_lengths,
    mask and rope as there) and `FFN` is `tfm.ffn` of kind `ffn`. Norm
    biases are only allowed with `layer_norm`. `tfm-decompose` expands the
    op into those ops and `arith.addf` residuals.

    ```mlir
    %y = tfm.decoder_block pre rms_norm %x heads(8, 2) eps(1.0e-05)
        attn_norm(%g1) q(%wq) k(%wk) v(%wv) o(%wo)
        ffn_norm(%g2) swiglu gate(%wg) up(%wu) down(%wd) positions(%pos)
        {mask = #tfm.mask<causal>, rope = #tfm.rope<theta = 1.0e+04, style = half>}
        : (...) -> tensor<1x16x64xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input,
                       Tfm_FloatTensor:$attn_norm_weight,
                       Optional<Tfm_FloatTensor>:$attn_norm_bias,
                       Tfm_FloatTensor:$q_weight,
                       Optional<Tfm_FloatTensor>:$q_bias,
                       Tfm_FloatTensor:$k_weight,
                       Optional<Tfm_FloatTensor>:$k_bias,
                       Tfm_FloatTensor:$v_weight,
                       Optional<Tfm_FloatTensor>:$v_bias,
                       Tfm_FloatTensor:$o_weight,
                       Optional<Tfm_FloatTensor>:$o_bias,
                       Tfm_FloatTensor:$ffn_norm_weight,
                       Optional<Tfm_FloatTensor>:$ffn_norm_bias,
                       Optional<Tfm_FloatTensor>:$gate_weight,
                       Tfm_FloatTensor:$up_weight,
                       Optional<Tfm_FloatTensor>:$up_bias,
                       Tfm_FloatTensor:$down_weight,
                       Optional<Tfm_FloatTensor>:$down_bias,
                       Optional<Tfm_IntTensor>:$positions,
                       Optional<Tfm_IntTensor>:$kv_lengths,
                       Tfm_NormPlacement:$placement,
                       Tfm_NormKind:$norm,
                       F32Attr:$eps,
                       I64Attr:$num_heads,
                       I64Attr:$num_kv_heads,
                       Tfm_FFNKind:$ffn,
                       OptionalAttr<Tfm_MaskAttr>:$mask,
                       OptionalAttr<Tfm_RopeAttr>:$rope);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = [{
    $placement $norm $input `heads` `(` $num_heads `,` $num_kv_heads `)`
    `eps` `(` $eps `)`
    `attn_norm` `(` $attn_norm_weight (`,` $attn_norm_bias^)? `)`
    `q` `(` $q_weight (`,` $q_bias^)? `)`
    `k` `(` $k_weight (`,` $k_bias^)? `)`
    `v` `(` $v_weight (`,` $v_bias^)? `)`
    `o` `(` $o_weight (`,` $o_bias^)? `)`
    `ffn_norm` `(` $ffn_norm_weight (`,` $ffn_norm_bias^)? `)`
    $ffn (`gate` `(` $gate_weight^ `)`)?
    `up` `(` $up_weight (`,` $up_bias^)? `)`
    `down` `(` $down_weight (`,` $down_bias^)? `)`
    (`positions` `(` $positions^ `)`)?
    (`kv_lengths` `(` $kv_lengths^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Width of one attention head: rows(q_weight) / num_heads.
    int64_t getHeadDim();
  }];
}

//===----------------------------------------------------------------------===//
// Tile-level ops
//===----------------------------------------------------------------------===//

def Tfm_OnlineAttentionOp : Tfm_Op<"online_attention", [
    RecursiveMemoryEffects, RecursivelySpeculatable, SingleBlock,
    DestinationStyleOpInterface,
    AllTypesMatch<["max", "new_max"]>, AllTypesMatch<["sum", "new_sum"]>,
    AllTypesMatch<["acc", "new_acc"]>,
    DeclareOpInterfaceMethods<TilingInterface, [
        "getIterationDomain", "getLoopIteratorTypes",
        "getTiledImplementation", "getResultTilePosition"]>]> {
  let summary = "one online-softmax step of attention over a key tile";
  let description = [{
    The tile-level form of attention that `tfm-tile-attention` builds its
    loops around (FlashAttention-2's inner step, IREE's `online_attention`).
    For `M` query rows, a tile of `N` keys and the running state of those
    rows, it computes

    ```
    s[m, j] = body(Σ_d query[m, d]·key[j, d], m, j)
    max'[m] = max(max[m], max_j s[m, j])
    p[m, j] = exp(s[m, j] - max'[m]);  α[m] = exp(max[m] - max'[m])
    sum'[m] = α[m]·sum[m] + Σ_j p[m, j]
    acc'[m, e] = α[m]·acc[m, e] + Σ_j p[m, j]·value[j, e]
    ```

    | operand | shape | element type |
    | --- | --- | --- |
    | `query` | `[M, D]` | f32, f16 or bf16 |
    | `key` | `[N, D]` | f32, f16 or bf16 |
    | `value` | `[N, Dv]` | f32, f16 or bf16 |
    | `max`, `sum` (outs) | `[M]` | f32 |
    | `acc` (outs) | `[M, Dv]` | f32 |

    Inputs keep their element types; products accumulate in f32. Where
    `max` is `-inf` (a row that has seen no visible key) the step gives
    `p = 0` and `α = 0`, so rows that see nothing keep `sum = 0`.

    The body turns a raw f32 dot product and its row and key index within
    the tile into the final score: scale, softcap, bias and masks (`-inf`
    where a key is not visible). It may use values defined above.

    The op is a destination-style op whose iteration domain is its query
    rows (`TilingInterface`: tiling over `M` slices `query`, the state and
    the body's row index). Targets decompose it their own way (the CPU into
    packed-Kᵀ or key-row dot products, `tfm-cpu-decompose-online-attention`);
    `convert-tfm-to-linalg` lowers whatever is left target-independently.

    ```mlir
    %m, %l, %acc = tfm.online_attention
        ins(%q, %k, %v : tensor<8x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>)
        outs(%m0, %l0, %acc0 : tensor<8xf32>, tensor<8xf32>, tensor<8x64xf32>) {
    ^bb0(%dot: f32, %row: index, %key: index):
      %s = arith.mulf %dot, %scale : f32
      tfm.yield %s : f32
    } -> tensor<8xf32>, tensor<8xf32>, tensor<8x64xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$query,
                       Tfm_FloatTensor:$key,
                       Tfm_FloatTensor:$value,
                       RankedTensorOf<[F32]>:$max,
                       RankedTensorOf<[F32]>:$sum,
                       RankedTensorOf<[F32]>:$acc);
  let results = (outs RankedTensorOf<[F32]>:$new_max,
                      RankedTensorOf<[F32]>:$new_sum,
                      RankedTensorOf<[F32]>:$new_acc);
  let regions = (region SizedRegion<1>:$score_body);
  let assemblyFormat = [{
    `ins` `(` $query `,` $key `,` $value `:` type($query) `,` type($key) `,`
        type($value) `)`
    `outs` `(` $max `,` $sum `,` $acc `:` type($max) `,` type($sum) `,`
        type($acc) `)`
    $score_body attr-dict `->` type($new_max) `,` type($new_sum) `,` type($new_acc)
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    // The body is built by `scoreBuilder(builder, loc, dot, row, key)`,
    // which returns the score to yield.
    OpBuilder<(ins "::mlir::Value":$query, "::mlir::Value":$key,
                   "::mlir::Value":$value, "::mlir::ValueRange":$state,
                   "::llvm::function_ref<::mlir::Value(::mlir::OpBuilder &, "
                   "::mlir::Location, ::mlir::Value, ::mlir::Value, "
                   "::mlir::Value)>":$scoreBuilder)>
  ];
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return ::mlir::MutableOperandRange(*this, 3, 3);
    }
    /// The body's arguments: the raw dot product, the row, the key.
    ::mlir::Value getDotArgument() { return getBody()->getArgument(0); }
    ::mlir::Value getRowArgument() { return getBody()->getArgument(1); }
    ::mlir::Value getKeyArgument() { return getBody()->getArgument(2); }
    /// The score the body yields.
    ::mlir::Value getScore();
  }];
}

def Tfm_FusedProjectionsOp : Tfm_Op<"fused_projections", [
    RecursiveMemoryEffects, RecursivelySpeculatable,
    SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "projections and the ops that read them, computed together "
                "column block by column block";
  let description = [{
    A region of projections (`linalg.generic` contractions `y[m, n] +=
    a[m, k] * w[n, k]`, the tokens' rows against nn.Linear weights) and the
    elementwise ops that read their results, which a CPU fusion pass has
    decided to compute together: each thread computes one block of columns
    of every projection in the region and then the ops on that block, so
    that no `[M, N]` result of a projection inside is stored. What the
    region yields are the results used after it.

    The fusion passes form it (`tfm-cpu-fuse-projection-epilogues`,
    `tfm-cpu-fuse-viewed-epilogues`, `tfm-cpu-fuse-sibling-projections`,
    each growing or merging the regions of the one before), and
    `tfm-cpu-tile-projections` consumes it: it computes the projections
    inside together where their blocking allows, and those that it cannot
    apart. Without the passes, every projection is computed alone. The
    region reads values defined above it; its ops run in order, so it
    means what its body would mean inlined.

    ```mlir
    %y = tfm.fused_projections -> tensor<?x512xf32> {
      %gate = linalg.generic ... // x · w_gateᵀ
      %up = linalg.generic ...   // x · w_upᵀ
      %h = linalg.generic ins(%gate, %up ...) ... // silu(gate) · up
      tfm.yield %h : tensor<?x512xf32>
    }
    ```
  }];
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "(`->` type($results)^)? $body attr-dict";
  let hasRegionVerifier = 1;
}

def Tfm_YieldOp : Tfm_Op<"yield", [Pure, Terminator,
    ParentOneOf<["OnlineAttentionOp", "FusedProjectionsOp"]>]> {
  let summary = "yields the values of a tfm region: the score of a "
                "tfm.online_attention body, the results of a "
                "tfm.fused_projections";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
  let builders = [OpBuilder<(ins), [{ /* nothing yielded */ }]>];
}

#endif // TFM_DIALECT_TFM_IR_TFMOPS_TD

// RUN: tfm-opt %s --split-input-file --verify-diagnostics

// Verifier diagnostics of tfm.attention and the mask ops (causal_mask,
// sliding_window_mask, padding_mask): one case per distinct message per op.
// Attribute parse/verify errors are in invalid-attrs.mlir.

//===----------------------------------------------------------------------===//
// tfm.attention
//===----------------------------------------------------------------------===//

func.func @attention_query_rank(%q: tensor<8x16x64xf32>,
    %k: tensor<1x2x16x64xf32>, %v: tensor<1x2x16x64xf32>)
    -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'tfm.attention' op expected query to have rank 4 [B, Hq, Sq, D], got rank 3}}
  %r = tfm.attention %q, %k, %v
      : (tensor<8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>)
      -> tensor<1x8x16x64xf32>
  return %r : tensor<1x8x16x64xf32>
}

// -----

func.func @attention_key_rank(%q: tensor<1x8x16x64xf32>,
    %k: tensor<2x16x64xf32>, %v: tensor<1x2x16x64xf32>)
    -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'tfm.attention' op expected key to have rank 4 [B, Hkv, Skv, D], got rank 3}}
  %r = tfm.attention %q, %k, %v
      : (tensor<1x8x16x64xf32>, tensor<2x16x64xf32>, tensor<1x2x16x64xf32>)
      -> tensor<1x8x16x64xf32>
  return %r : tensor<1x8x16x64xf32>
}

// -----

func.func @attention_value_rank(%q: tensor<1x8x16x64xf32>,
    %k: tensor<1x2x16x64xf32>, %v: tensor<1x2x16x64x1xf32>)
    -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'tfm.attention' op expected value to have rank 4 [B, Hkv, Skv, Dv], got rank 5}}
  %r = tfm.attention %q, %k, %v
      : (tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64x1xf32>)
      -> tensor<1x8x16x64xf32>
  return %r : tensor<1x8x16x64xf32>
}

// -----

func.func @attention_dynamic_query_heads(%q: tensor<1x?x16x64xf32>,
    %k: tensor<1x2x16x64xf32>, %v: tensor<1x2x16x64xf32>)
    -> tensor<1x?x16x64xf32> {
  // expected-error @+1 {{'tfm.attention' op expected query head count to be static}}
  %r = tfm.attention %q, %k, %v
      : (tensor<1x?x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>)
      -> tensor<1x?x16x64xf32>
  return %r : tensor<1x?x16x64xf32>
}

// -----

func.func @attention_dynamic_key_heads(%q: tensor<1x8x16x64xf32>,
    %k: tensor<1x?x16x64xf32>, %v: tensor<1x?x16x64xf32>)
    -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'tfm.attention' op expected key head count to be static}}
  %r = tfm.attention %q, %k, %v
      : (tensor<1x8x16x64xf32>, tensor<1x?x16x64xf32>, tensor<1x?x16x64xf32>)
      -> tensor<1x8x16x64xf32>
  return %r : tensor<1x8x16x64xf32>
}

// -----

func.func @attention_dynamic_query_head_dim(%q: tensor<1x8x16x?xf32>,
    %k: tensor<1x2x16x?xf32>, %v: tensor<1x2x16x64xf32>)
    -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'tfm.attention' op expected query head dim to be static}}
  %r = tfm.attention %q, %k, %v
      : (tensor<1x8x16x?xf32>, tensor<1x2x16x?xf32>, tensor<1x2x16x64xf32>)
      -> tensor<1x8x16x64xf32>
  return %r : tensor<1x8x16x64xf32>
}

// -----

func.func @attention_dynamic_value_head_dim(%q: tensor<1x8x16x64xf32>,
    %k: tensor<1x2x16x64xf32>, %v: tensor<1x2x16x?xf32>)
    -> tensor<1x8x16x?xf32> {
  // expected-error @+1 {{'tfm.attention' op expected value head dim to be static}}
  %r = tfm.attention %q, %k, %v
      : (tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x?xf32>)
      -> tensor<1x8x16x?xf32>
  return %r : tensor<1x8x16x?xf32>
}

// -----

func.func @attention_key_batch_mismatch(%q: tensor<1x8x16x64xf32>,
    %k: tensor<2x2x16x64xf32>, %v: tensor<1x2x16x64xf32>)
    -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'tfm.attention' op expected key batch (2) to match query batch (1)}}
  %r = tfm.attention %q, %k, %v
      : (tensor<1x8x16x64xf32>, tensor<2x2x16x64xf32>, tensor<1x2x16x64xf32>)
      -> tensor<1x8x16x64xf32>
  return %r : tensor<1x8x16x64xf32>
}

// -----

func.func @attention_value_batch_mismatch(%q: tensor<1x8x16x64xf32>,
    %k: tensor<1x2x16x64xf32>, %v: tensor<2x2x16x64xf32>)
    -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'tfm.attention' op expected value batch (2) to match query batch (1)}}
  %r = tfm.attention %q, %k, %v
      : (tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<2x2x16x64xf32>)
      -> tensor<1x8x16x64xf32>
  return %r : tensor<1x8x16x64xf32>
}

// -----

func.func @attention_value_head_count_mismatch(%q: tensor<1x8x16x64xf32>,
    %k: tensor<1x2x16x64xf32>, %v: tensor<1x4x16x64xf32>)
    -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'tfm.attention' op expected value head count (4) to match key head count (2)}}
  %r = tfm.attention %q, %k, %v
      : (tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x4x16x64xf32>)
      -> tensor<1x8x16x64xf32>
  return %r : tensor<1x8x16x64xf32>
}

// -----

func.func @attention_value_length_mismatch(%q: tensor<1x8x16x64xf32>,
    %k: tensor<1x2x16x64xf32>, %v: tensor<1x2x32x64xf32>)
    -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'tfm.attention' op expected value length (32) to match key length (16)}}
  %r = tfm.attention %q, %k, %v
      : (tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x32x64xf32>)
      -> tensor<1x8x16x64xf32>
  return %r : tensor<1x8x16x64xf32>
}

// -----

func.func @attention_mismatched_head_dims(%q: tensor<1x8x16x64xf32>,
    %k: tensor<1x2x16x32xf32>, %v: tensor<1x2x16x64xf32>)
    -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'tfm.attention' op expected key head dim (32) to match query head dim (64)}}
  %r = tfm.attention %q, %k, %v
      : (tensor<1x8x16x64xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x64xf32>)
      -> tensor<1x8x16x64xf32>
  return %r : tensor<1x8x16x64xf32>
}

// -----

func.func @attention_kv_heads_do_not_divide(%q: tensor<1x8x16x64xf32>,
    %k: tensor<1x3x16x64xf32>, %v: tensor<1x3x16x64xf32>)
    -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'tfm.attention' op expected key head count (3) to divide query head count (8)}}
  %r = tfm.attention %q, %k, %v
      : (tensor<1x8x16x64xf32>, tensor<1x3x16x64xf32>, tensor<1x3x16x64xf32>)
      -> tensor<1x8x16x64xf32>
  return %r : tensor<1x8x16x64xf32>
}

// -----

func.func @attention_zero_kv_heads(%q: tensor<1x8x16x64xf32>,
    %k: tensor<1x0x16x64xf32>, %v: tensor<1x0x16x64xf32>)
    -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'tfm.attention' op expected key head count to be positive, got 0}}
  %r = tfm.attention %q, %k, %v
      : (tensor<1x8x16x64xf32>, tensor<1x0x16x64xf32>, tensor<1x0x16x64xf32>)
      -> tensor<1x8x16x64xf32>
  return %r : tensor<1x8x16x64xf32>
}

// -----

func.func @attention_zero_head_dim(%q: tensor<1x8x16x0xf32>,
    %k: tensor<1x2x16x0xf32>, %v: tensor<1x2x16x64xf32>)
    -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'tfm.attention' op expected query head dim to be positive, got 0}}
  %r = tfm.attention %q, %k, %v
      : (tensor<1x8x16x0xf32>, tensor<1x2x16x0xf32>, tensor<1x2x16x64xf32>)
      -> tensor<1x8x16x64xf32>
  return %r : tensor<1x8x16x64xf32>
}

// -----

func.func @attention_key_element_type(%q: tensor<1x8x16x64xf32>,
    %k: tensor<1x2x16x64xf16>, %v: tensor<1x2x16x64xf32>)
    -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'tfm.attention' op expected key element type ('f16') to match query element type ('f32')}}
  %r = tfm.attention %q, %k, %v
      : (tensor<1x8x16x64xf32>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf32>)
      -> tensor<1x8x16x64xf32>
  return %r : tensor<1x8x16x64xf32>
}

// -----

func.func @attention_value_element_type(%q: tensor<1x8x16x64xf32>,
    %k: tensor<1x2x16x64xf32>, %v: tensor<1x2x16x64xbf16>)
    -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'tfm.attention' op expected value element type ('bf16') to match query element type ('f32')}}
  %r = tfm.attention %q, %k, %v
      : (tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xbf16>)
      -> tensor<1x8x16x64xf32>
  return %r : tensor<1x8x16x64xf32>
}

// -----

func.func @attention_result_element_type(%q: tensor<1x8x16x64xf32>,
    %k: tensor<1x2x16x64xf32>, %v: tensor<1x2x16x64xf32>)
    -> tensor<1x8x16x64xf16> {
  // expected-error @+1 {{'tfm.attention' op expected result element type ('f16') to match query element type ('f32')}}
  %r = tfm.attention %q, %k, %v
      : (tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>)
      -> tensor<1x8x16x64xf16>
  return %r : tensor<1x8x16x64xf16>
}

// -----

func.func @attention_result_shape(%q: tensor<1x8x16x64xf32>,
    %k: tensor<1x2x16x64xf32>, %v: tensor<1x2x16x64xf32>)
    -> tensor<1x8x16x32xf32> {
  // expected-error @+1 {{'tfm.attention' op expected result shape [1, 8, 16, 32] to match [1, 8, 16, 64]}}
  %r = tfm.attention %q, %k, %v
      : (tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>)
      -> tensor<1x8x16x32xf32>
  return %r : tensor<1x8x16x32xf32>
}

// -----

func.func @attention_result_shape_dynamic_batch(%q: tensor<?x8x16x64xf32>,
    %k: tensor<?x2x16x64xf32>, %v: tensor<?x2x16x64xf32>)
    -> tensor<2x8x8x64xf32> {
  // expected-error @+1 {{'tfm.attention' op expected result shape [2, 8, 8, 64] to match [?, 8, 16, 64]}}
  %r = tfm.attention %q, %k, %v
      : (tensor<?x8x16x64xf32>, tensor<?x2x16x64xf32>, tensor<?x2x16x64xf32>)
      -> tensor<2x8x8x64xf32>
  return %r : tensor<2x8x8x64xf32>
}

// -----

func.func @attention_result_rank(%q: tensor<1x8x16x64xf32>,
    %k: tensor<1x2x16x64xf32>, %v: tensor<1x2x16x64xf32>)
    -> tensor<8x16x64xf32> {
  // expected-error @+1 {{'tfm.attention' op expected result shape [8, 16, 64] to match [1, 8, 16, 64]}}
  %r = tfm.attention %q, %k, %v
      : (tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>)
      -> tensor<8x16x64xf32>
  return %r : tensor<8x16x64xf32>
}

// -----

func.func @attention_kv_lengths_rank(%q: tensor<1x8x16x64xf32>,
    %k: tensor<1x2x16x64xf32>, %v: tensor<1x2x16x64xf32>,
    %lens: tensor<1x1xi32>) -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'tfm.attention' op expected kv_lengths to have rank 1 [B], got rank 2}}
  %r = tfm.attention %q, %k, %v kv_lengths(%lens)
      : (tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>,
      tensor<1x1xi32>) -> tensor<1x8x16x64xf32>
  return %r : tensor<1x8x16x64xf32>
}

// -----

func.func @attention_kv_lengths_size(%q: tensor<1x8x16x64xf32>,
    %k: tensor<1x2x16x64xf32>, %v: tensor<1x2x16x64xf32>, %lens: tensor<2xi32>)
    -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'tfm.attention' op expected kv_lengths size (2) to match batch (1)}}
  %r = tfm.attention %q, %k, %v kv_lengths(%lens)
      : (tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>,
      tensor<2xi32>) -> tensor<1x8x16x64xf32>
  return %r : tensor<1x8x16x64xf32>
}

// -----

func.func @attention_dense_mask_rank(%q: tensor<1x8x16x64xf32>,
    %k: tensor<1x2x16x64xf32>, %v: tensor<1x2x16x64xf32>,
    %mask: tensor<1x1x1x16x16xi1>) -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'tfm.attention' op expected dense_mask rank (5) to be at most 4}}
  %r = tfm.attention %q, %k, %v dense_mask(%mask)
      : (tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>,
      tensor<1x1x1x16x16xi1>) -> tensor<1x8x16x64xf32>
  return %r : tensor<1x8x16x64xf32>
}

// -----

func.func @attention_dense_mask_not_broadcastable(%q: tensor<1x8x16x64xf32>,
    %k: tensor<1x2x16x64xf32>, %v: tensor<1x2x16x64xf32>,
    %mask: tensor<16x8xi1>) -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'tfm.attention' op expected dense_mask dim 1 (8) to be 1 or match key length (16)}}
  %r = tfm.attention %q, %k, %v dense_mask(%mask)
      : (tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>,
      tensor<16x8xi1>) -> tensor<1x8x16x64xf32>
  return %r : tensor<1x8x16x64xf32>
}

// -----

func.func @attention_bias_element_type(%q: tensor<1x8x16x64xf32>,
    %k: tensor<1x2x16x64xf32>, %v: tensor<1x2x16x64xf32>,
    %bias: tensor<16x16xf16>) -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'tfm.attention' op expected bias element type ('f16') to match query element type ('f32')}}
  %r = tfm.attention %q, %k, %v bias(%bias)
      : (tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>,
      tensor<16x16xf16>) -> tensor<1x8x16x64xf32>
  return %r : tensor<1x8x16x64xf32>
}

// -----

func.func @attention_bias_rank(%q: tensor<1x8x16x64xf32>,
    %k: tensor<1x2x16x64xf32>, %v: tensor<1x2x16x64xf32>,
    %bias: tensor<1x1x1x16x16xf32>) -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'tfm.attention' op expected bias rank (5) to be at most 4}}
  %r = tfm.attention %q, %k, %v bias(%bias)
      : (tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>,
      tensor<1x1x1x16x16xf32>) -> tensor<1x8x16x64xf32>
  return %r : tensor<1x8x16x64xf32>
}

// -----

func.func @attention_bias_not_broadcastable(%q: tensor<1x8x16x64xf32>,
    %k: tensor<1x2x16x64xf32>, %v: tensor<1x2x16x64xf32>,
    %bias: tensor<1x4x16x16xf32>) -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'tfm.attention' op expected bias dim 1 (4) to be 1 or match query head count (8)}}
  %r = tfm.attention %q, %k, %v bias(%bias)
      : (tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>,
      tensor<1x4x16x16xf32>) -> tensor<1x8x16x64xf32>
  return %r : tensor<1x8x16x64xf32>
}

// -----

func.func @attention_zero_scale(%q: tensor<1x8x16x64xf32>,
    %k: tensor<1x2x16x64xf32>, %v: tensor<1x2x16x64xf32>)
    -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'tfm.attention' op expected scale to be positive, got 0.000000e+00}}
  %r = tfm.attention %q, %k, %v {scale = 0.0 : f32}
      : (tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>)
      -> tensor<1x8x16x64xf32>
  return %r : tensor<1x8x16x64xf32>
}

// -----

func.func @attention_infinite_scale(%q: tensor<1x8x16x64xf32>,
    %k: tensor<1x2x16x64xf32>, %v: tensor<1x2x16x64xf32>)
    -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'tfm.attention' op expected scale to be finite}}
  %r = tfm.attention %q, %k, %v {scale = 0x7F800000 : f32}
      : (tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>)
      -> tensor<1x8x16x64xf32>
  return %r : tensor<1x8x16x64xf32>
}

// -----

func.func @attention_negative_softcap(%q: tensor<1x8x16x64xf32>,
    %k: tensor<1x2x16x64xf32>, %v: tensor<1x2x16x64xf32>)
    -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'tfm.attention' op expected softcap to be positive, got -3.000000e+01}}
  %r = tfm.attention %q, %k, %v {softcap = -30.0 : f32}
      : (tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>)
      -> tensor<1x8x16x64xf32>
  return %r : tensor<1x8x16x64xf32>
}

// -----

func.func @attention_infinite_softcap(%q: tensor<1x8x16x64xf32>,
    %k: tensor<1x2x16x64xf32>, %v: tensor<1x2x16x64xf32>)
    -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'tfm.attention' op expected softcap to be finite}}
  %r = tfm.attention %q, %k, %v {softcap = 0x7F800000 : f32}
      : (tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>)
      -> tensor<1x8x16x64xf32>
  return %r : tensor<1x8x16x64xf32>
}

// -----

//===----------------------------------------------------------------------===//
// tfm.causal_mask
//===----------------------------------------------------------------------===//

func.func @causal_mask_result_rank() -> tensor<1x16x16xi1> {
  // expected-error @+1 {{'tfm.causal_mask' op expected result to have rank 2 [Sq, Skv], got rank 3}}
  %r = tfm.causal_mask : tensor<1x16x16xi1>
  return %r : tensor<1x16x16xi1>
}

// -----

func.func @causal_mask_missing_dynamic_size(%s0: index) -> tensor<?x?xi1> {
  // expected-error @+1 {{'tfm.causal_mask' op expected one size operand per dynamic dim (2), got 1}}
  %r = tfm.causal_mask(%s0) : tensor<?x?xi1>
  return %r : tensor<?x?xi1>
}

// -----

func.func @causal_mask_extra_dynamic_size(%s0: index) -> tensor<16x16xi1> {
  // expected-error @+1 {{'tfm.causal_mask' op expected one size operand per dynamic dim (0), got 1}}
  %r = tfm.causal_mask(%s0) : tensor<16x16xi1>
  return %r : tensor<16x16xi1>
}

// -----

//===----------------------------------------------------------------------===//
// tfm.sliding_window_mask
//===----------------------------------------------------------------------===//

func.func @sliding_window_mask_zero_window() -> tensor<16x16xi1> {
  // expected-error @+1 {{'tfm.sliding_window_mask' op expected window to be at least 1, got 0}}
  %r = tfm.sliding_window_mask window(0) : tensor<16x16xi1>
  return %r : tensor<16x16xi1>
}

// -----

func.func @sliding_window_mask_negative_window() -> tensor<16x16xi1> {
  // expected-error @+1 {{'tfm.sliding_window_mask' op expected window to be at least 1, got -4}}
  %r = tfm.sliding_window_mask window(-4) : tensor<16x16xi1>
  return %r : tensor<16x16xi1>
}

// -----

func.func @sliding_window_mask_result_rank() -> tensor<16xi1> {
  // expected-error @+1 {{'tfm.sliding_window_mask' op expected result to have rank 2 [Sq, Skv], got rank 1}}
  %r = tfm.sliding_window_mask window(4) : tensor<16xi1>
  return %r : tensor<16xi1>
}

// -----

func.func @sliding_window_mask_missing_dynamic_size() -> tensor<16x?xi1> {
  // expected-error @+1 {{'tfm.sliding_window_mask' op expected one size operand per dynamic dim (1), got 0}}
  %r = tfm.sliding_window_mask window(4) : tensor<16x?xi1>
  return %r : tensor<16x?xi1>
}

// -----

func.func @sliding_window_mask_extra_dynamic_size(%s0: index, %s1: index)
    -> tensor<?x16xi1> {
  // expected-error @+1 {{'tfm.sliding_window_mask' op expected one size operand per dynamic dim (1), got 2}}
  %r = tfm.sliding_window_mask window(4)(%s0, %s1) : tensor<?x16xi1>
  return %r : tensor<?x16xi1>
}

// -----

//===----------------------------------------------------------------------===//
// tfm.padding_mask
//===----------------------------------------------------------------------===//

func.func @padding_mask_lengths_rank(%lengths: tensor<2x1xi32>)
    -> tensor<2x1x1x16xi1> {
  // expected-error @+1 {{'tfm.padding_mask' op expected lengths to have rank 1 [B], got rank 2}}
  %r = tfm.padding_mask %lengths : tensor<2x1xi32> -> tensor<2x1x1x16xi1>
  return %r : tensor<2x1x1x16xi1>
}

// -----

func.func @padding_mask_result_rank(%lengths: tensor<2xi32>)
    -> tensor<2x16xi1> {
  // expected-error @+1 {{'tfm.padding_mask' op expected result to have rank 4 [B, 1, 1, Skv], got rank 2}}
  %r = tfm.padding_mask %lengths : tensor<2xi32> -> tensor<2x16xi1>
  return %r : tensor<2x16xi1>
}

// -----

func.func @padding_mask_result_head_dim(%lengths: tensor<2xi32>)
    -> tensor<2x4x1x16xi1> {
  // expected-error @+1 {{'tfm.padding_mask' op expected result dims 1 and 2 to be 1, got 4 and 1}}
  %r = tfm.padding_mask %lengths : tensor<2xi32> -> tensor<2x4x1x16xi1>
  return %r : tensor<2x4x1x16xi1>
}

// -----

func.func @padding_mask_result_dynamic_query_dim(%lengths: tensor<2xi32>)
    -> tensor<2x1x?x16xi1> {
  // expected-error @+1 {{'tfm.padding_mask' op expected result dims 1 and 2 to be 1, got 1 and ?}}
  %r = tfm.padding_mask %lengths : tensor<2xi32> -> tensor<2x1x?x16xi1>
  return %r : tensor<2x1x?x16xi1>
}

// -----

func.func @padding_mask_result_batch(%lengths: tensor<2xi32>)
    -> tensor<3x1x1x16xi1> {
  // expected-error @+1 {{'tfm.padding_mask' op expected result batch (3) to match lengths size (2)}}
  %r = tfm.padding_mask %lengths : tensor<2xi32> -> tensor<3x1x1x16xi1>
  return %r : tensor<3x1x1x16xi1>
}

// -----

func.func @padding_mask_missing_kv_length(%lengths: tensor<2xi32>)
    -> tensor<2x1x1x?xi1> {
  // expected-error @+1 {{'tfm.padding_mask' op expected a kv_length operand exactly when the key length is dynamic}}
  %r = tfm.padding_mask %lengths : tensor<2xi32> -> tensor<2x1x1x?xi1>
  return %r : tensor<2x1x1x?xi1>
}

// -----

func.func @padding_mask_unexpected_kv_length(%lengths: tensor<2xi32>,
    %skv: index) -> tensor<2x1x1x16xi1> {
  // expected-error @+1 {{'tfm.padding_mask' op expected a kv_length operand exactly when the key length is dynamic}}
  %r = tfm.padding_mask %lengths, %skv : tensor<2xi32> -> tensor<2x1x1x16xi1>
  return %r : tensor<2x1x1x16xi1>
}

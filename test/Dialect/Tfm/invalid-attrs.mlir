// RUN: tfm-opt %s --split-input-file --verify-diagnostics

// Parse and verify errors of the #tfm.mask and #tfm.rope attributes. They are
// reported at the attribute (its `<`; a bad sliding window at the `<` before
// W), on the line that spells it; parsing stops at the first one, so each
// split holds one error.

//===----------------------------------------------------------------------===//
// #tfm.mask
//===----------------------------------------------------------------------===//

func.func @mask_unknown_kind(%q: tensor<1x8x16x64xf32>,
    %k: tensor<1x2x16x64xf32>) -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{expected mask kind 'none', 'causal', 'sliding_window' or 'band', got 'diagonal'}}
  %r = tfm.attention %q, %k, %k {mask = #tfm.mask<diagonal>}
      : (tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>)
      -> tensor<1x8x16x64xf32>
  return %r : tensor<1x8x16x64xf32>
}

// -----

// expected-error @+1 {{expected mask kind 'none', 'causal', 'sliding_window' or 'band', got 'Causal'}}
#mask_alias_unknown_kind = #tfm.mask<Causal>

// -----

func.func @mask_sliding_window_zero(%q: tensor<1x8x16x64xf32>,
    %k: tensor<1x2x16x64xf32>) -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{sliding window size must be at least 1, got 0}}
  %r = tfm.attention %q, %k, %k {mask = #tfm.mask<sliding_window<0>>}
      : (tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>)
      -> tensor<1x8x16x64xf32>
  return %r : tensor<1x8x16x64xf32>
}

// -----

// expected-error @+1 {{sliding window size must be at least 1, got -3}}
#mask_alias_negative_window = #tfm.mask<sliding_window<-3>>

// -----

// INT64_MIN: rejected while parsing, before `window - 1` could overflow.
// expected-error @+1 {{sliding window size must be at least 1, got -9223372036854775808}}
#mask_alias_int64_min_window = #tfm.mask<sliding_window<-9223372036854775808>>

// -----

func.func @mask_band_negative_left(%q: tensor<1x8x16x64xf32>,
    %k: tensor<1x2x16x64xf32>) -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{band extents must be non-negative, got <-1, 2>}}
  %r = tfm.attention %q, %k, %k {mask = #tfm.mask<band<-1, 2>>}
      : (tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>)
      -> tensor<1x8x16x64xf32>
  return %r : tensor<1x8x16x64xf32>
}

// -----

func.func @mask_band_negative_right(%q: tensor<1x8x16x64xf32>,
    %k: tensor<1x2x16x64xf32>) -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{band extents must be non-negative, got <4, -2>}}
  %r = tfm.attention %q, %k, %k {mask = #tfm.mask<band<4, -2>>}
      : (tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>)
      -> tensor<1x8x16x64xf32>
  return %r : tensor<1x8x16x64xf32>
}

// -----

func.func @mask_on_self_attention_sliding_window_zero(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>,
    %wo: tensor<64x64xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+2 {{sliding window size must be at least 1, got 0}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo)
      {mask = #tfm.mask<sliding_window<0>>}
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
         tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

//===----------------------------------------------------------------------===//
// #tfm.rope
//===----------------------------------------------------------------------===//

func.func @rope_zero_theta(%x: tensor<1x16x64xf32>, %wq: tensor<64x64xf32>,
    %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>, %wo: tensor<64x64xf32>,
    %pos: tensor<16xi32>) -> tensor<1x16x64xf32> {
  // expected-error @+2 {{rope theta must be positive and finite as an f32, got 0.000000e+00}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo)
      positions(%pos) {rope = #tfm.rope<theta = 0.0, style = half>}
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
         tensor<16x64xf32>, tensor<64x64xf32>, tensor<16xi32>)
      -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

// expected-error @+1 {{rope theta must be positive and finite as an f32, got -1.000000e+04}}
#rope_alias_negative_theta = #tfm.rope<theta = -1.0e+04, style = interleaved>

// -----

// NaN fails `theta > 0` too.
// expected-error @+1 {{rope theta must be positive and finite as an f32, got nan}}
#rope_alias_nan_theta = #tfm.rope<theta = 0x7FF8000000000000, style = half>

// -----

// expected-error @+1 {{rope theta must be positive and finite as an f32, got INF}}
#rope_alias_infinite_theta = #tfm.rope<theta = 0x7FF0000000000000, style = half>

// -----

// Positive as a double, 0 as the f32 that passes apply.
// expected-error @+1 {{rope theta must be positive and finite as an f32, got 1.000000e-50}}
#rope_alias_theta_underflows_f32 = #tfm.rope<theta = 1.0e-50, style = half>

// -----

// Finite as a double, infinite as an f32.
// expected-error @+1 {{rope theta must be positive and finite as an f32, got 1.000000e+39}}
#rope_alias_theta_overflows_f32 = #tfm.rope<theta = 1.0e+39, style = half>

// -----

func.func @rope_unknown_style(%x: tensor<1x16x64xf32>, %wq: tensor<64x64xf32>,
    %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>, %wo: tensor<64x64xf32>,
    %pos: tensor<16xi32>) -> tensor<1x16x64xf32> {
  // expected-error @+2 {{expected rope style 'half' or 'interleaved', got 'neox'}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo)
      positions(%pos) {rope = #tfm.rope<theta = 1.0e+04, style = neox>}
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
         tensor<16x64xf32>, tensor<64x64xf32>, tensor<16xi32>)
      -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @rope_unknown_style_on_decoder_block(%x: tensor<1x16x64xf32>,
    %g1: tensor<64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>,
    %wv: tensor<16x64xf32>, %wo: tensor<64x64xf32>, %g2: tensor<64xf32>,
    %wg: tensor<172x64xf32>, %wu: tensor<172x64xf32>, %wd: tensor<64x172xf32>,
    %pos: tensor<16xi32>) -> tensor<1x16x64xf32> {
  // expected-error @+4 {{expected rope style 'half' or 'interleaved', got 'Half'}}
  %r = tfm.decoder_block pre rms_norm %x heads(8, 2) eps(1.0e-05)
      attn_norm(%g1) q(%wq) k(%wk) v(%wv) o(%wo)
      ffn_norm(%g2) swiglu gate(%wg) up(%wu) down(%wd) positions(%pos)
      {rope = #tfm.rope<theta = 1.0e+04, style = Half>}
      : (tensor<1x16x64xf32>, tensor<64xf32>, tensor<64x64xf32>,
         tensor<16x64xf32>, tensor<16x64xf32>, tensor<64x64xf32>,
         tensor<64xf32>, tensor<172x64xf32>, tensor<172x64xf32>,
         tensor<64x172xf32>, tensor<16xi32>) -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

// #tfm.rope_scaling

// expected-error @+1 {{rope scaling factor must be positive and finite, got 0.000000e+00}}
#scaling_zero_factor = #tfm.rope_scaling<llama3, factor = 0.0, low_freq_factor = 1.0, high_freq_factor = 4.0, original_max_positions = 8192>

// -----

// expected-error @+1 {{rope scaling needs 0 < low_freq_factor < high_freq_factor (finite), got 4.000000e+00 and 1.000000e+00}}
#scaling_inverted_bounds = #tfm.rope_scaling<llama3, factor = 8.0, low_freq_factor = 4.0, high_freq_factor = 1.0, original_max_positions = 8192>

// -----

// expected-error @+1 {{rope scaling original_max_positions must be positive, got 0}}
#scaling_no_context = #tfm.rope_scaling<llama3, factor = 8.0, low_freq_factor = 1.0, high_freq_factor = 4.0, original_max_positions = 0>

// -----

// expected-error @+1 {{expected 'llama3'}}
#scaling_unknown_kind = #tfm.rope_scaling<linear, factor = 8.0, low_freq_factor = 1.0, high_freq_factor = 4.0, original_max_positions = 8192>

// RUN: tfm-opt %s --split-input-file --verify-diagnostics

// Verifier diagnostics of the single-layer tfm ops (norms, linear, ffn, rope,
// split/merge heads, embedding): one case per distinct message per op.

//===----------------------------------------------------------------------===//
// tfm.rms_norm
//===----------------------------------------------------------------------===//

func.func @rms_norm_scalar_input(%x: tensor<f32>, %w: tensor<64xf32>)
    -> tensor<f32> {
  // expected-error @+1 {{'tfm.rms_norm' op expected input to have rank at least 1}}
  %r = tfm.rms_norm %x, %w eps(1.0e-05)
      : (tensor<f32>, tensor<64xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

func.func @rms_norm_weight_rank(%x: tensor<2x7x64xf32>, %w: tensor<1x64xf32>)
    -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.rms_norm' op expected weight to have rank 1 [features], got rank 2}}
  %r = tfm.rms_norm %x, %w eps(1.0e-05)
      : (tensor<2x7x64xf32>, tensor<1x64xf32>) -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @rms_norm_weight_element_type(%x: tensor<2x7x64xf32>,
    %w: tensor<64xf16>) -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.rms_norm' op expected weight element type ('f16') to match input element type ('f32')}}
  %r = tfm.rms_norm %x, %w eps(1.0e-05)
      : (tensor<2x7x64xf32>, tensor<64xf16>) -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @rms_norm_weight_size(%x: tensor<2x7x64xf32>, %w: tensor<32xf32>)
    -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.rms_norm' op expected weight size (32) to match input feature size (64)}}
  %r = tfm.rms_norm %x, %w eps(1.0e-05)
      : (tensor<2x7x64xf32>, tensor<32xf32>) -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @rms_norm_result_element_type(%x: tensor<2x7x64xf32>,
    %w: tensor<64xf32>) -> tensor<2x7x64xf16> {
  // expected-error @+1 {{'tfm.rms_norm' op expected result element type ('f16') to match input element type ('f32')}}
  %r = tfm.rms_norm %x, %w eps(1.0e-05)
      : (tensor<2x7x64xf32>, tensor<64xf32>) -> tensor<2x7x64xf16>
  return %r : tensor<2x7x64xf16>
}

// -----

func.func @rms_norm_result_shape(%x: tensor<2x7x64xf32>, %w: tensor<64xf32>)
    -> tensor<2x7x32xf32> {
  // expected-error @+1 {{'tfm.rms_norm' op expected result shape [2, 7, 32] to match [2, 7, 64]}}
  %r = tfm.rms_norm %x, %w eps(1.0e-05)
      : (tensor<2x7x64xf32>, tensor<64xf32>) -> tensor<2x7x32xf32>
  return %r : tensor<2x7x32xf32>
}

// -----

func.func @rms_norm_negative_eps(%x: tensor<2x7x64xf32>, %w: tensor<64xf32>)
    -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.rms_norm' op expected eps to be non-negative, got -1.000000e+00}}
  %r = tfm.rms_norm %x, %w eps(-1.0)
      : (tensor<2x7x64xf32>, tensor<64xf32>) -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @rms_norm_nan_eps(%x: tensor<2x7x64xf32>, %w: tensor<64xf32>)
    -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.rms_norm' op expected eps to be non-negative, got nan}}
  %r = tfm.rms_norm %x, %w eps(0x7FC00000)
      : (tensor<2x7x64xf32>, tensor<64xf32>) -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @rms_norm_infinite_eps(%x: tensor<2x7x64xf32>, %w: tensor<64xf32>)
    -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.rms_norm' op expected eps to be finite}}
  %r = tfm.rms_norm %x, %w eps(0x7F800000)
      : (tensor<2x7x64xf32>, tensor<64xf32>) -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

//===----------------------------------------------------------------------===//
// tfm.layer_norm
//===----------------------------------------------------------------------===//

func.func @layer_norm_scalar_input(%x: tensor<f32>, %w: tensor<64xf32>,
    %b: tensor<64xf32>) -> tensor<f32> {
  // expected-error @+1 {{'tfm.layer_norm' op expected input to have rank at least 1}}
  %r = tfm.layer_norm %x, %w, %b eps(1.0e-05)
      : (tensor<f32>, tensor<64xf32>, tensor<64xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

func.func @layer_norm_weight_rank(%x: tensor<2x7x64xf32>, %w: tensor<1x64xf32>,
    %b: tensor<64xf32>) -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.layer_norm' op expected weight to have rank 1 [features], got rank 2}}
  %r = tfm.layer_norm %x, %w, %b eps(1.0e-05)
      : (tensor<2x7x64xf32>, tensor<1x64xf32>, tensor<64xf32>)
      -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @layer_norm_weight_element_type(%x: tensor<2x7x64xf32>,
    %w: tensor<64xf16>, %b: tensor<64xf32>) -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.layer_norm' op expected weight element type ('f16') to match input element type ('f32')}}
  %r = tfm.layer_norm %x, %w, %b eps(1.0e-05)
      : (tensor<2x7x64xf32>, tensor<64xf16>, tensor<64xf32>)
      -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @layer_norm_weight_size(%x: tensor<2x7x64xf32>, %w: tensor<32xf32>,
    %b: tensor<64xf32>) -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.layer_norm' op expected weight size (32) to match input feature size (64)}}
  %r = tfm.layer_norm %x, %w, %b eps(1.0e-05)
      : (tensor<2x7x64xf32>, tensor<32xf32>, tensor<64xf32>)
      -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @layer_norm_bias_rank(%x: tensor<2x7x64xf32>, %w: tensor<64xf32>,
    %b: tensor<f32>) -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.layer_norm' op expected bias to have rank 1 [features], got rank 0}}
  %r = tfm.layer_norm %x, %w, %b eps(1.0e-05)
      : (tensor<2x7x64xf32>, tensor<64xf32>, tensor<f32>) -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @layer_norm_bias_element_type(%x: tensor<2x7x64xf32>,
    %w: tensor<64xf32>, %b: tensor<64xbf16>) -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.layer_norm' op expected bias element type ('bf16') to match input element type ('f32')}}
  %r = tfm.layer_norm %x, %w, %b eps(1.0e-05)
      : (tensor<2x7x64xf32>, tensor<64xf32>, tensor<64xbf16>)
      -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @layer_norm_bias_size(%x: tensor<2x7x64xf32>, %w: tensor<64xf32>,
    %b: tensor<65xf32>) -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.layer_norm' op expected bias size (65) to match input feature size (64)}}
  %r = tfm.layer_norm %x, %w, %b eps(1.0e-05)
      : (tensor<2x7x64xf32>, tensor<64xf32>, tensor<65xf32>)
      -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @layer_norm_result_element_type(%x: tensor<2x7x64xf32>,
    %w: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<2x7x64xf16> {
  // expected-error @+1 {{'tfm.layer_norm' op expected result element type ('f16') to match input element type ('f32')}}
  %r = tfm.layer_norm %x, %w, %b eps(1.0e-05)
      : (tensor<2x7x64xf32>, tensor<64xf32>, tensor<64xf32>)
      -> tensor<2x7x64xf16>
  return %r : tensor<2x7x64xf16>
}

// -----

func.func @layer_norm_result_shape(%x: tensor<2x7x64xf32>, %w: tensor<64xf32>,
    %b: tensor<64xf32>) -> tensor<2x7x32xf32> {
  // expected-error @+1 {{'tfm.layer_norm' op expected result shape [2, 7, 32] to match [2, 7, 64]}}
  %r = tfm.layer_norm %x, %w, %b eps(1.0e-05)
      : (tensor<2x7x64xf32>, tensor<64xf32>, tensor<64xf32>)
      -> tensor<2x7x32xf32>
  return %r : tensor<2x7x32xf32>
}

// -----

func.func @layer_norm_negative_eps(%x: tensor<2x7x64xf32>, %w: tensor<64xf32>,
    %b: tensor<64xf32>) -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.layer_norm' op expected eps to be non-negative, got -1.000000e+00}}
  %r = tfm.layer_norm %x, %w, %b eps(-1.0)
      : (tensor<2x7x64xf32>, tensor<64xf32>, tensor<64xf32>)
      -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @layer_norm_nan_eps(%x: tensor<2x7x64xf32>, %w: tensor<64xf32>,
    %b: tensor<64xf32>) -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.layer_norm' op expected eps to be non-negative, got nan}}
  %r = tfm.layer_norm %x, %w, %b eps(0x7FC00000)
      : (tensor<2x7x64xf32>, tensor<64xf32>, tensor<64xf32>)
      -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @layer_norm_infinite_eps(%x: tensor<2x7x64xf32>, %w: tensor<64xf32>,
    %b: tensor<64xf32>) -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.layer_norm' op expected eps to be finite}}
  %r = tfm.layer_norm %x, %w, %b eps(0x7F800000)
      : (tensor<2x7x64xf32>, tensor<64xf32>, tensor<64xf32>)
      -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

//===----------------------------------------------------------------------===//
// tfm.linear
//===----------------------------------------------------------------------===//

func.func @linear_scalar_input(%x: tensor<f32>, %w: tensor<96x64xf32>,
    %b: tensor<96xf32>) -> tensor<f32> {
  // expected-error @+1 {{'tfm.linear' op expected input to have rank at least 1}}
  %r = tfm.linear %x, %w, %b
      : (tensor<f32>, tensor<96x64xf32>, tensor<96xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

func.func @linear_weight_rank(%x: tensor<2x7x64xf32>, %w: tensor<96x64x1xf32>,
    %b: tensor<96xf32>) -> tensor<2x7x96xf32> {
  // expected-error @+1 {{'tfm.linear' op expected weight to have rank 2 [out, in], got rank 3}}
  %r = tfm.linear %x, %w, %b
      : (tensor<2x7x64xf32>, tensor<96x64x1xf32>, tensor<96xf32>)
      -> tensor<2x7x96xf32>
  return %r : tensor<2x7x96xf32>
}

// -----

func.func @linear_weight_element_type(%x: tensor<2x7x64xf32>,
    %w: tensor<96x64xf16>, %b: tensor<96xf32>) -> tensor<2x7x96xf32> {
  // expected-error @+1 {{'tfm.linear' op expected weight element type ('f16') to match input element type ('f32')}}
  %r = tfm.linear %x, %w, %b
      : (tensor<2x7x64xf32>, tensor<96x64xf16>, tensor<96xf32>)
      -> tensor<2x7x96xf32>
  return %r : tensor<2x7x96xf32>
}

// -----

func.func @linear_weight_input_size(%x: tensor<2x7x64xf32>,
    %w: tensor<96x32xf32>, %b: tensor<96xf32>) -> tensor<2x7x96xf32> {
  // expected-error @+1 {{'tfm.linear' op expected weight input size (32) to match input feature size (64)}}
  %r = tfm.linear %x, %w, %b
      : (tensor<2x7x64xf32>, tensor<96x32xf32>, tensor<96xf32>)
      -> tensor<2x7x96xf32>
  return %r : tensor<2x7x96xf32>
}

// -----

func.func @linear_bias_rank(%x: tensor<2x7x64xf32>, %w: tensor<96x64xf32>,
    %b: tensor<1x96xf32>) -> tensor<2x7x96xf32> {
  // expected-error @+1 {{'tfm.linear' op expected bias to have rank 1 [features], got rank 2}}
  %r = tfm.linear %x, %w, %b
      : (tensor<2x7x64xf32>, tensor<96x64xf32>, tensor<1x96xf32>)
      -> tensor<2x7x96xf32>
  return %r : tensor<2x7x96xf32>
}

// -----

func.func @linear_bias_element_type(%x: tensor<2x7x64xf32>,
    %w: tensor<96x64xf32>, %b: tensor<96xf16>) -> tensor<2x7x96xf32> {
  // expected-error @+1 {{'tfm.linear' op expected bias element type ('f16') to match input element type ('f32')}}
  %r = tfm.linear %x, %w, %b
      : (tensor<2x7x64xf32>, tensor<96x64xf32>, tensor<96xf16>)
      -> tensor<2x7x96xf32>
  return %r : tensor<2x7x96xf32>
}

// -----

func.func @linear_bias_size(%x: tensor<2x7x64xf32>, %w: tensor<96x64xf32>,
    %b: tensor<64xf32>) -> tensor<2x7x96xf32> {
  // expected-error @+1 {{'tfm.linear' op expected bias size (64) to match output feature size (96)}}
  %r = tfm.linear %x, %w, %b
      : (tensor<2x7x64xf32>, tensor<96x64xf32>, tensor<64xf32>)
      -> tensor<2x7x96xf32>
  return %r : tensor<2x7x96xf32>
}

// -----

func.func @linear_result_element_type(%x: tensor<2x7x64xf32>,
    %w: tensor<96x64xf32>, %b: tensor<96xf32>) -> tensor<2x7x96xbf16> {
  // expected-error @+1 {{'tfm.linear' op expected result element type ('bf16') to match input element type ('f32')}}
  %r = tfm.linear %x, %w, %b
      : (tensor<2x7x64xf32>, tensor<96x64xf32>, tensor<96xf32>)
      -> tensor<2x7x96xbf16>
  return %r : tensor<2x7x96xbf16>
}

// -----

func.func @linear_result_shape(%x: tensor<2x7x64xf32>, %w: tensor<96x64xf32>,
    %b: tensor<96xf32>) -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.linear' op expected result shape [2, 7, 64] to match [2, 7, 96]}}
  %r = tfm.linear %x, %w, %b
      : (tensor<2x7x64xf32>, tensor<96x64xf32>, tensor<96xf32>)
      -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

//===----------------------------------------------------------------------===//
// tfm.ffn
//===----------------------------------------------------------------------===//

func.func @ffn_scalar_input(%x: tensor<f32>, %wg: tensor<172x64xf32>,
    %wu: tensor<172x64xf32>, %wd: tensor<64x172xf32>) -> tensor<f32> {
  // expected-error @+1 {{'tfm.ffn' op expected input to have rank at least 1}}
  %r = tfm.ffn swiglu %x gate(%wg) up(%wu) down(%wd)
      : (tensor<f32>, tensor<172x64xf32>, tensor<172x64xf32>,
      tensor<64x172xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

func.func @ffn_gated_missing_gate(%x: tensor<2x7x64xf32>,
    %wu: tensor<172x64xf32>, %wd: tensor<64x172xf32>) -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.ffn' op expected a gate weight for gated kind 'swiglu'}}
  %r = tfm.ffn swiglu %x up(%wu) down(%wd)
      : (tensor<2x7x64xf32>, tensor<172x64xf32>, tensor<64x172xf32>)
      -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @ffn_gated_with_bias(%x: tensor<2x7x64xf32>, %wg: tensor<172x64xf32>,
    %wu: tensor<172x64xf32>, %bu: tensor<172xf32>, %wd: tensor<64x172xf32>)
    -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.ffn' op expected no biases for gated kind 'geglu'}}
  %r = tfm.ffn geglu %x gate(%wg) up(%wu, %bu) down(%wd)
      : (tensor<2x7x64xf32>, tensor<172x64xf32>, tensor<172x64xf32>,
      tensor<172xf32>, tensor<64x172xf32>) -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @ffn_gated_with_down_bias(%x: tensor<2x7x64xf32>,
    %wg: tensor<172x64xf32>, %wu: tensor<172x64xf32>, %wd: tensor<64x172xf32>,
    %bd: tensor<64xf32>) -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.ffn' op expected no biases for gated kind 'swiglu'}}
  %r = tfm.ffn swiglu %x gate(%wg) up(%wu) down(%wd, %bd)
      : (tensor<2x7x64xf32>, tensor<172x64xf32>, tensor<172x64xf32>,
      tensor<64x172xf32>, tensor<64xf32>) -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @ffn_plain_with_gate(%x: tensor<2x7x64xf32>, %wg: tensor<256x64xf32>,
    %wu: tensor<256x64xf32>, %bu: tensor<256xf32>, %wd: tensor<64x256xf32>,
    %bd: tensor<64xf32>) -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.ffn' op expected no gate weight for plain kind 'relu'}}
  %r = tfm.ffn relu %x gate(%wg) up(%wu, %bu) down(%wd, %bd)
      : (tensor<2x7x64xf32>, tensor<256x64xf32>, tensor<256x64xf32>,
      tensor<256xf32>, tensor<64x256xf32>, tensor<64xf32>) -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @ffn_up_weight_rank(%x: tensor<2x7x64xf32>, %wu: tensor<256xf32>,
    %bu: tensor<256xf32>, %wd: tensor<64x256xf32>, %bd: tensor<64xf32>)
    -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.ffn' op expected up weight to have rank 2 [out, in], got rank 1}}
  %r = tfm.ffn gelu %x up(%wu, %bu) down(%wd, %bd)
      : (tensor<2x7x64xf32>, tensor<256xf32>, tensor<256xf32>,
      tensor<64x256xf32>, tensor<64xf32>) -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @ffn_up_weight_element_type(%x: tensor<2x7x64xf32>,
    %wu: tensor<256x64xf16>, %bu: tensor<256xf32>, %wd: tensor<64x256xf32>,
    %bd: tensor<64xf32>) -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.ffn' op expected up weight element type ('f16') to match input element type ('f32')}}
  %r = tfm.ffn gelu %x up(%wu, %bu) down(%wd, %bd)
      : (tensor<2x7x64xf32>, tensor<256x64xf16>, tensor<256xf32>,
      tensor<64x256xf32>, tensor<64xf32>) -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @ffn_up_weight_input_size(%x: tensor<2x7x64xf32>,
    %wu: tensor<256x32xf32>, %bu: tensor<256xf32>, %wd: tensor<64x256xf32>,
    %bd: tensor<64xf32>) -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.ffn' op expected up weight input size (32) to match model width (64)}}
  %r = tfm.ffn gelu %x up(%wu, %bu) down(%wd, %bd)
      : (tensor<2x7x64xf32>, tensor<256x32xf32>, tensor<256xf32>,
      tensor<64x256xf32>, tensor<64xf32>) -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @ffn_gate_weight_rank(%x: tensor<2x7x64xf32>,
    %wg: tensor<1x172x64xf32>, %wu: tensor<172x64xf32>, %wd: tensor<64x172xf32>)
    -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.ffn' op expected gate weight to have rank 2 [out, in], got rank 3}}
  %r = tfm.ffn swiglu %x gate(%wg) up(%wu) down(%wd)
      : (tensor<2x7x64xf32>, tensor<1x172x64xf32>, tensor<172x64xf32>,
      tensor<64x172xf32>) -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @ffn_gate_weight_element_type(%x: tensor<2x7x64xf32>,
    %wg: tensor<172x64xbf16>, %wu: tensor<172x64xf32>, %wd: tensor<64x172xf32>)
    -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.ffn' op expected gate weight element type ('bf16') to match input element type ('f32')}}
  %r = tfm.ffn swiglu %x gate(%wg) up(%wu) down(%wd)
      : (tensor<2x7x64xf32>, tensor<172x64xbf16>, tensor<172x64xf32>,
      tensor<64x172xf32>) -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @ffn_gate_weight_input_size(%x: tensor<2x7x64xf32>,
    %wg: tensor<172x128xf32>, %wu: tensor<172x64xf32>, %wd: tensor<64x172xf32>)
    -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.ffn' op expected gate weight input size (128) to match model width (64)}}
  %r = tfm.ffn swiglu %x gate(%wg) up(%wu) down(%wd)
      : (tensor<2x7x64xf32>, tensor<172x128xf32>, tensor<172x64xf32>,
      tensor<64x172xf32>) -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @ffn_gate_weight_rows(%x: tensor<2x7x64xf32>, %wg: tensor<128x64xf32>,
    %wu: tensor<172x64xf32>, %wd: tensor<64x172xf32>) -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.ffn' op expected gate weight rows (128) to match up weight rows (172)}}
  %r = tfm.ffn geglu %x gate(%wg) up(%wu) down(%wd)
      : (tensor<2x7x64xf32>, tensor<128x64xf32>, tensor<172x64xf32>,
      tensor<64x172xf32>) -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @ffn_down_weight_rank(%x: tensor<2x7x64xf32>, %wg: tensor<172x64xf32>,
    %wu: tensor<172x64xf32>, %wd: tensor<172xf32>) -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.ffn' op expected down weight to have rank 2 [out, in], got rank 1}}
  %r = tfm.ffn swiglu %x gate(%wg) up(%wu) down(%wd)
      : (tensor<2x7x64xf32>, tensor<172x64xf32>, tensor<172x64xf32>,
      tensor<172xf32>) -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @ffn_down_weight_element_type(%x: tensor<2x7x64xf32>,
    %wg: tensor<172x64xf32>, %wu: tensor<172x64xf32>, %wd: tensor<64x172xf16>)
    -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.ffn' op expected down weight element type ('f16') to match input element type ('f32')}}
  %r = tfm.ffn swiglu %x gate(%wg) up(%wu) down(%wd)
      : (tensor<2x7x64xf32>, tensor<172x64xf32>, tensor<172x64xf32>,
      tensor<64x172xf16>) -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @ffn_down_weight_input_size(%x: tensor<2x7x64xf32>,
    %wu: tensor<256x64xf32>, %bu: tensor<256xf32>, %wd: tensor<64x128xf32>,
    %bd: tensor<64xf32>) -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.ffn' op expected down weight input size (128) to match hidden width (256)}}
  %r = tfm.ffn gelu %x up(%wu, %bu) down(%wd, %bd)
      : (tensor<2x7x64xf32>, tensor<256x64xf32>, tensor<256xf32>,
      tensor<64x128xf32>, tensor<64xf32>) -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @ffn_down_weight_rows(%x: tensor<2x7x64xf32>, %wu: tensor<256x64xf32>,
    %bu: tensor<256xf32>, %wd: tensor<32x256xf32>, %bd: tensor<64xf32>)
    -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.ffn' op expected down weight rows (32) to match model width (64)}}
  %r = tfm.ffn relu %x up(%wu, %bu) down(%wd, %bd)
      : (tensor<2x7x64xf32>, tensor<256x64xf32>, tensor<256xf32>,
      tensor<32x256xf32>, tensor<64xf32>) -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @ffn_up_bias_rank(%x: tensor<2x7x64xf32>, %wu: tensor<256x64xf32>,
    %bu: tensor<1x256xf32>, %wd: tensor<64x256xf32>, %bd: tensor<64xf32>)
    -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.ffn' op expected up bias to have rank 1 [features], got rank 2}}
  %r = tfm.ffn gelu %x up(%wu, %bu) down(%wd, %bd)
      : (tensor<2x7x64xf32>, tensor<256x64xf32>, tensor<1x256xf32>,
      tensor<64x256xf32>, tensor<64xf32>) -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @ffn_up_bias_element_type(%x: tensor<2x7x64xf32>,
    %wu: tensor<256x64xf32>, %bu: tensor<256xf16>, %wd: tensor<64x256xf32>,
    %bd: tensor<64xf32>) -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.ffn' op expected up bias element type ('f16') to match input element type ('f32')}}
  %r = tfm.ffn gelu %x up(%wu, %bu) down(%wd, %bd)
      : (tensor<2x7x64xf32>, tensor<256x64xf32>, tensor<256xf16>,
      tensor<64x256xf32>, tensor<64xf32>) -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @ffn_up_bias_size(%x: tensor<2x7x64xf32>, %wu: tensor<256x64xf32>,
    %bu: tensor<128xf32>, %wd: tensor<64x256xf32>, %bd: tensor<64xf32>)
    -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.ffn' op expected up bias size (128) to match hidden width (256)}}
  %r = tfm.ffn gelu_tanh %x up(%wu, %bu) down(%wd, %bd)
      : (tensor<2x7x64xf32>, tensor<256x64xf32>, tensor<128xf32>,
      tensor<64x256xf32>, tensor<64xf32>) -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @ffn_down_bias_rank(%x: tensor<2x7x64xf32>, %wu: tensor<256x64xf32>,
    %bu: tensor<256xf32>, %wd: tensor<64x256xf32>, %bd: tensor<f32>)
    -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.ffn' op expected down bias to have rank 1 [features], got rank 0}}
  %r = tfm.ffn gelu %x up(%wu, %bu) down(%wd, %bd)
      : (tensor<2x7x64xf32>, tensor<256x64xf32>, tensor<256xf32>,
      tensor<64x256xf32>, tensor<f32>) -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @ffn_down_bias_element_type(%x: tensor<2x7x64xf32>,
    %wu: tensor<256x64xf32>, %bu: tensor<256xf32>, %wd: tensor<64x256xf32>,
    %bd: tensor<64xbf16>) -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.ffn' op expected down bias element type ('bf16') to match input element type ('f32')}}
  %r = tfm.ffn gelu %x up(%wu, %bu) down(%wd, %bd)
      : (tensor<2x7x64xf32>, tensor<256x64xf32>, tensor<256xf32>,
      tensor<64x256xf32>, tensor<64xbf16>) -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @ffn_down_bias_size(%x: tensor<2x7x64xf32>, %wu: tensor<256x64xf32>,
    %bu: tensor<256xf32>, %wd: tensor<64x256xf32>, %bd: tensor<32xf32>)
    -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.ffn' op expected down bias size (32) to match model width (64)}}
  %r = tfm.ffn silu %x up(%wu, %bu) down(%wd, %bd)
      : (tensor<2x7x64xf32>, tensor<256x64xf32>, tensor<256xf32>,
      tensor<64x256xf32>, tensor<32xf32>) -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @ffn_result_element_type(%x: tensor<2x7x64xf32>,
    %wg: tensor<172x64xf32>, %wu: tensor<172x64xf32>, %wd: tensor<64x172xf32>)
    -> tensor<2x7x64xf16> {
  // expected-error @+1 {{'tfm.ffn' op expected result element type ('f16') to match input element type ('f32')}}
  %r = tfm.ffn swiglu %x gate(%wg) up(%wu) down(%wd)
      : (tensor<2x7x64xf32>, tensor<172x64xf32>, tensor<172x64xf32>,
      tensor<64x172xf32>) -> tensor<2x7x64xf16>
  return %r : tensor<2x7x64xf16>
}

// -----

func.func @ffn_result_shape(%x: tensor<2x7x64xf32>, %wg: tensor<172x64xf32>,
    %wu: tensor<172x64xf32>, %wd: tensor<64x172xf32>) -> tensor<2x64xf32> {
  // expected-error @+1 {{'tfm.ffn' op expected result shape [2, 64] to match [2, 7, 64]}}
  %r = tfm.ffn swiglu %x gate(%wg) up(%wu) down(%wd)
      : (tensor<2x7x64xf32>, tensor<172x64xf32>, tensor<172x64xf32>,
      tensor<64x172xf32>) -> tensor<2x64xf32>
  return %r : tensor<2x64xf32>
}

// -----

//===----------------------------------------------------------------------===//
// tfm.rope
//===----------------------------------------------------------------------===//

func.func @rope_input_rank(%x: tensor<8x16x64xf32>, %pos: tensor<16xi32>)
    -> tensor<8x16x64xf32> {
  // expected-error @+1 {{'tfm.rope' op expected input to have rank 4 [B, H, S, D], got rank 3}}
  %r = tfm.rope half %x, %pos theta(1.0e+04)
      : (tensor<8x16x64xf32>, tensor<16xi32>) -> tensor<8x16x64xf32>
  return %r : tensor<8x16x64xf32>
}

// -----

func.func @rope_dynamic_head_dim(%x: tensor<1x8x16x?xf32>, %pos: tensor<16xi32>)
    -> tensor<1x8x16x?xf32> {
  // expected-error @+1 {{'tfm.rope' op expected head dim to be static}}
  %r = tfm.rope half %x, %pos theta(1.0e+04)
      : (tensor<1x8x16x?xf32>, tensor<16xi32>) -> tensor<1x8x16x?xf32>
  return %r : tensor<1x8x16x?xf32>
}

// -----

func.func @rope_odd_head_dim(%x: tensor<1x8x16x63xf32>, %pos: tensor<16xi32>)
    -> tensor<1x8x16x63xf32> {
  // expected-error @+1 {{'tfm.rope' op expected head dim (63) to be even}}
  %r = tfm.rope interleaved %x, %pos theta(1.0e+04)
      : (tensor<1x8x16x63xf32>, tensor<16xi32>) -> tensor<1x8x16x63xf32>
  return %r : tensor<1x8x16x63xf32>
}

// -----

func.func @rope_positions_batch(%x: tensor<1x8x16x64xf32>,
    %pos: tensor<2x16xi32>) -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'tfm.rope' op expected positions batch (2) to match input batch (1)}}
  %r = tfm.rope half %x, %pos theta(1.0e+04)
      : (tensor<1x8x16x64xf32>, tensor<2x16xi32>) -> tensor<1x8x16x64xf32>
  return %r : tensor<1x8x16x64xf32>
}

// -----

func.func @rope_positions_rank(%x: tensor<1x8x16x64xf32>,
    %pos: tensor<1x1x16xi32>) -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'tfm.rope' op expected positions to have rank 1 [S] or 2 [B, S], got rank 3}}
  %r = tfm.rope half %x, %pos theta(1.0e+04)
      : (tensor<1x8x16x64xf32>, tensor<1x1x16xi32>) -> tensor<1x8x16x64xf32>
  return %r : tensor<1x8x16x64xf32>
}

// -----

func.func @rope_scalar_positions(%x: tensor<1x8x16x64xf32>, %pos: tensor<i32>)
    -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'tfm.rope' op expected positions to have rank 1 [S] or 2 [B, S], got rank 0}}
  %r = tfm.rope half %x, %pos theta(1.0e+04)
      : (tensor<1x8x16x64xf32>, tensor<i32>) -> tensor<1x8x16x64xf32>
  return %r : tensor<1x8x16x64xf32>
}

// -----

func.func @rope_positions_length(%x: tensor<1x8x16x64xf32>, %pos: tensor<8xi64>)
    -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'tfm.rope' op expected positions length (8) to match input length (16)}}
  %r = tfm.rope half %x, %pos theta(1.0e+04)
      : (tensor<1x8x16x64xf32>, tensor<8xi64>) -> tensor<1x8x16x64xf32>
  return %r : tensor<1x8x16x64xf32>
}

// -----

func.func @rope_zero_theta(%x: tensor<1x8x16x64xf32>, %pos: tensor<16xi32>)
    -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'tfm.rope' op expected theta to be positive, got 0.000000e+00}}
  %r = tfm.rope half %x, %pos theta(0.0)
      : (tensor<1x8x16x64xf32>, tensor<16xi32>) -> tensor<1x8x16x64xf32>
  return %r : tensor<1x8x16x64xf32>
}

// -----

func.func @rope_infinite_theta(%x: tensor<1x8x16x64xf32>, %pos: tensor<16xi32>)
    -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'tfm.rope' op expected theta to be finite}}
  %r = tfm.rope half %x, %pos theta(0x7F800000)
      : (tensor<1x8x16x64xf32>, tensor<16xi32>) -> tensor<1x8x16x64xf32>
  return %r : tensor<1x8x16x64xf32>
}

// -----

func.func @rope_result_element_type(%x: tensor<1x8x16x64xf32>,
    %pos: tensor<16xi32>) -> tensor<1x8x16x64xf16> {
  // expected-error @+1 {{'tfm.rope' op expected result element type ('f16') to match input element type ('f32')}}
  %r = tfm.rope half %x, %pos theta(1.0e+04)
      : (tensor<1x8x16x64xf32>, tensor<16xi32>) -> tensor<1x8x16x64xf16>
  return %r : tensor<1x8x16x64xf16>
}

// -----

func.func @rope_result_shape(%x: tensor<1x8x16x64xf32>, %pos: tensor<16xi32>)
    -> tensor<1x8x16x32xf32> {
  // expected-error @+1 {{'tfm.rope' op expected result shape [1, 8, 16, 32] to match [1, 8, 16, 64]}}
  %r = tfm.rope half %x, %pos theta(1.0e+04)
      : (tensor<1x8x16x64xf32>, tensor<16xi32>) -> tensor<1x8x16x32xf32>
  return %r : tensor<1x8x16x32xf32>
}

// -----

//===----------------------------------------------------------------------===//
// tfm.split_heads
//===----------------------------------------------------------------------===//

func.func @split_heads_input_rank(%x: tensor<2x4x7x16xf32>)
    -> tensor<2x4x7x16xf32> {
  // expected-error @+1 {{'tfm.split_heads' op expected input to have rank 3 [B, S, H*D], got rank 4}}
  %r = tfm.split_heads %x : tensor<2x4x7x16xf32> -> tensor<2x4x7x16xf32>
  return %r : tensor<2x4x7x16xf32>
}

// -----

func.func @split_heads_result_rank(%x: tensor<2x7x64xf32>)
    -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.split_heads' op expected result to have rank 4 [B, H, S, D], got rank 3}}
  %r = tfm.split_heads %x : tensor<2x7x64xf32> -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @split_heads_result_element_type(%x: tensor<2x7x64xf32>)
    -> tensor<2x4x7x16xf16> {
  // expected-error @+1 {{'tfm.split_heads' op expected result element type ('f16') to match input element type ('f32')}}
  %r = tfm.split_heads %x : tensor<2x7x64xf32> -> tensor<2x4x7x16xf16>
  return %r : tensor<2x4x7x16xf16>
}

// -----

func.func @split_heads_dynamic_head_count(%x: tensor<2x7x64xf32>)
    -> tensor<2x?x7x16xf32> {
  // expected-error @+1 {{'tfm.split_heads' op expected head count to be static}}
  %r = tfm.split_heads %x : tensor<2x7x64xf32> -> tensor<2x?x7x16xf32>
  return %r : tensor<2x?x7x16xf32>
}

// -----

func.func @split_heads_dynamic_head_dim(%x: tensor<2x7x64xf32>)
    -> tensor<2x4x7x?xf32> {
  // expected-error @+1 {{'tfm.split_heads' op expected head dim to be static}}
  %r = tfm.split_heads %x : tensor<2x7x64xf32> -> tensor<2x4x7x?xf32>
  return %r : tensor<2x4x7x?xf32>
}

// -----

func.func @split_heads_batch_mismatch(%x: tensor<2x7x64xf32>)
    -> tensor<3x4x7x16xf32> {
  // expected-error @+1 {{'tfm.split_heads' op expected result batch (3) to match input batch (2)}}
  %r = tfm.split_heads %x : tensor<2x7x64xf32> -> tensor<3x4x7x16xf32>
  return %r : tensor<3x4x7x16xf32>
}

// -----

func.func @split_heads_length_mismatch(%x: tensor<2x7x64xf32>)
    -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'tfm.split_heads' op expected result length (8) to match input length (7)}}
  %r = tfm.split_heads %x : tensor<2x7x64xf32> -> tensor<2x4x8x16xf32>
  return %r : tensor<2x4x8x16xf32>
}

// -----

func.func @split_heads_feature_size_mismatch(%x: tensor<2x7x64xf32>)
    -> tensor<2x4x7x8xf32> {
  // expected-error @+1 {{'tfm.split_heads' op expected head count x head dim (4 x 8) to match input feature size (64)}}
  %r = tfm.split_heads %x : tensor<2x7x64xf32> -> tensor<2x4x7x8xf32>
  return %r : tensor<2x4x7x8xf32>
}

// -----

//===----------------------------------------------------------------------===//
// tfm.merge_heads
//===----------------------------------------------------------------------===//

func.func @merge_heads_result_rank(%x: tensor<2x4x7x16xf32>)
    -> tensor<2x4x7x16xf32> {
  // expected-error @+1 {{'tfm.merge_heads' op expected result to have rank 3 [B, S, H*D], got rank 4}}
  %r = tfm.merge_heads %x : tensor<2x4x7x16xf32> -> tensor<2x4x7x16xf32>
  return %r : tensor<2x4x7x16xf32>
}

// -----

func.func @merge_heads_input_rank(%x: tensor<2x7x64xf32>)
    -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.merge_heads' op expected input to have rank 4 [B, H, S, D], got rank 3}}
  %r = tfm.merge_heads %x : tensor<2x7x64xf32> -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @merge_heads_result_element_type(%x: tensor<2x4x7x16xf32>)
    -> tensor<2x7x64xbf16> {
  // expected-error @+1 {{'tfm.merge_heads' op expected result element type ('bf16') to match input element type ('f32')}}
  %r = tfm.merge_heads %x : tensor<2x4x7x16xf32> -> tensor<2x7x64xbf16>
  return %r : tensor<2x7x64xbf16>
}

// -----

func.func @merge_heads_dynamic_head_count(%x: tensor<2x?x7x16xf32>)
    -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.merge_heads' op expected head count to be static}}
  %r = tfm.merge_heads %x : tensor<2x?x7x16xf32> -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @merge_heads_dynamic_head_dim(%x: tensor<2x4x7x?xf32>)
    -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.merge_heads' op expected head dim to be static}}
  %r = tfm.merge_heads %x : tensor<2x4x7x?xf32> -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @merge_heads_batch_mismatch(%x: tensor<3x4x7x16xf32>)
    -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.merge_heads' op expected input batch (3) to match result batch (2)}}
  %r = tfm.merge_heads %x : tensor<3x4x7x16xf32> -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @merge_heads_length_mismatch(%x: tensor<2x4x8x16xf32>)
    -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.merge_heads' op expected input length (8) to match result length (7)}}
  %r = tfm.merge_heads %x : tensor<2x4x8x16xf32> -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @merge_heads_feature_size_mismatch(%x: tensor<2x4x7x16xf32>)
    -> tensor<2x7x32xf32> {
  // expected-error @+1 {{'tfm.merge_heads' op expected head count x head dim (4 x 16) to match result feature size (32)}}
  %r = tfm.merge_heads %x : tensor<2x4x7x16xf32> -> tensor<2x7x32xf32>
  return %r : tensor<2x7x32xf32>
}

// -----

//===----------------------------------------------------------------------===//
// tfm.embedding
//===----------------------------------------------------------------------===//

func.func @embedding_ids_rank(%ids: tensor<14xi64>, %table: tensor<1000x64xf32>)
    -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.embedding' op expected ids to have rank 2 [B, S], got rank 1}}
  %r = tfm.embedding %ids, %table
      : (tensor<14xi64>, tensor<1000x64xf32>) -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @embedding_table_rank(%ids: tensor<2x7xi32>,
    %table: tensor<1000x64x1xf32>) -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'tfm.embedding' op expected table to have rank 2 [V, Dmodel], got rank 3}}
  %r = tfm.embedding %ids, %table
      : (tensor<2x7xi32>, tensor<1000x64x1xf32>) -> tensor<2x7x64xf32>
  return %r : tensor<2x7x64xf32>
}

// -----

func.func @embedding_result_element_type(%ids: tensor<2x7xi32>,
    %table: tensor<1000x64xf32>) -> tensor<2x7x64xf16> {
  // expected-error @+1 {{'tfm.embedding' op expected result element type ('f16') to match table element type ('f32')}}
  %r = tfm.embedding %ids, %table
      : (tensor<2x7xi32>, tensor<1000x64xf32>) -> tensor<2x7x64xf16>
  return %r : tensor<2x7x64xf16>
}

// -----

func.func @embedding_result_shape(%ids: tensor<2x7xi32>,
    %table: tensor<1000x64xf32>) -> tensor<2x7x32xf32> {
  // expected-error @+1 {{'tfm.embedding' op expected result shape [2, 7, 32] to match [2, 7, 64]}}
  %r = tfm.embedding %ids, %table
      : (tensor<2x7xi32>, tensor<1000x64xf32>) -> tensor<2x7x32xf32>
  return %r : tensor<2x7x32xf32>
}

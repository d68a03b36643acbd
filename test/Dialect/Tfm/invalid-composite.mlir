// RUN: tfm-opt %s --split-input-file --verify-diagnostics

// Verifier diagnostics of tfm.self_attention and tfm.decoder_block. Both run
// the same attention-sublayer checks: every sublayer message is covered under
// tfm.self_attention; tfm.decoder_block has its own messages (norm
// parameters, eps) and a few representative sublayer and FFN cases (all FFN
// messages are covered under tfm.ffn in invalid-layers.mlir).

//===----------------------------------------------------------------------===//
// tfm.self_attention
//===----------------------------------------------------------------------===//

func.func @self_attention_input_rank(%x: tensor<16x64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>,
    %wo: tensor<64x64xf32>) -> tensor<16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected input to have rank 3 [B, S, Dmodel], got rank 2}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo)
      : (tensor<16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
      tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}

// -----

func.func @self_attention_dynamic_model_width(%x: tensor<1x16x?xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>,
    %wo: tensor<64x64xf32>) -> tensor<1x16x?xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected model width to be static}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo)
      : (tensor<1x16x?xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
      tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<1x16x?xf32>
  return %r : tensor<1x16x?xf32>
}

// -----

func.func @self_attention_zero_heads(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>,
    %wo: tensor<64x64xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected positive head counts, got (0, 2)}}
  %r = tfm.self_attention %x heads(0, 2) q(%wq) k(%wk) v(%wv) o(%wo)
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
      tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_negative_kv_heads(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>,
    %wo: tensor<64x64xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected positive head counts, got (8, -2)}}
  %r = tfm.self_attention %x heads(8, -2) q(%wq) k(%wk) v(%wv) o(%wo)
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
      tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_kv_heads_do_not_divide(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>,
    %wo: tensor<64x64xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected key head count (3) to divide query head count (8)}}
  %r = tfm.self_attention %x heads(8, 3) q(%wq) k(%wk) v(%wv) o(%wo)
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
      tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_q_weight_rank(%x: tensor<1x16x64xf32>,
    %wq: tensor<64xf32>, %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>,
    %wo: tensor<64x64xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected q_weight to have rank 2 [out, in], got rank 1}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo)
      : (tensor<1x16x64xf32>, tensor<64xf32>, tensor<16x64xf32>,
      tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_q_weight_element_type(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf16>, %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>,
    %wo: tensor<64x64xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected q_weight element type ('f16') to match input element type ('f32')}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo)
      : (tensor<1x16x64xf32>, tensor<64x64xf16>, tensor<16x64xf32>,
      tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_q_weight_input_size(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x32xf32>, %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>,
    %wo: tensor<64x64xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected q_weight input size (32) to match model width (64)}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo)
      : (tensor<1x16x64xf32>, tensor<64x32xf32>, tensor<16x64xf32>,
      tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_dynamic_q_weight_rows(%x: tensor<1x16x64xf32>,
    %wq: tensor<?x64xf32>, %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>,
    %wo: tensor<64x64xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected q_weight rows to be static}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo)
      : (tensor<1x16x64xf32>, tensor<?x64xf32>, tensor<16x64xf32>,
      tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_q_rows_not_multiple_of_heads(%x: tensor<1x16x64xf32>,
    %wq: tensor<60x64xf32>, %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>,
    %wo: tensor<64x64xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected q_weight rows (60) to be a multiple of query head count (8)}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo)
      : (tensor<1x16x64xf32>, tensor<60x64xf32>, tensor<16x64xf32>,
      tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_k_weight_rank(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<1x16x64xf32>, %wv: tensor<16x64xf32>,
    %wo: tensor<64x64xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected k_weight to have rank 2 [out, in], got rank 3}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo)
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<1x16x64xf32>,
      tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_k_weight_element_type(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<16x64xbf16>, %wv: tensor<16x64xf32>,
    %wo: tensor<64x64xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected k_weight element type ('bf16') to match input element type ('f32')}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo)
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xbf16>,
      tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_k_weight_input_size(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<16x63xf32>, %wv: tensor<16x64xf32>,
    %wo: tensor<64x64xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected k_weight input size (63) to match model width (64)}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo)
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x63xf32>,
      tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_v_weight_rank(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>, %wv: tensor<16xf32>,
    %wo: tensor<64x64xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected v_weight to have rank 2 [out, in], got rank 1}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo)
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
      tensor<16xf32>, tensor<64x64xf32>) -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

// Both k_weight and v_weight are malformed: one error, for k_weight.
func.func @self_attention_k_and_v_weight_rank(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<16xf32>, %wv: tensor<16xf32>,
    %wo: tensor<64x64xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected k_weight to have rank 2 [out, in], got rank 1}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo)
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16xf32>, tensor<16xf32>,
      tensor<64x64xf32>) -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_v_weight_element_type(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>, %wv: tensor<16x64xf16>,
    %wo: tensor<64x64xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected v_weight element type ('f16') to match input element type ('f32')}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo)
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
      tensor<16x64xf16>, tensor<64x64xf32>) -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_v_weight_input_size(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>, %wv: tensor<16x16xf32>,
    %wo: tensor<64x64xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected v_weight input size (16) to match model width (64)}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo)
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
      tensor<16x16xf32>, tensor<64x64xf32>) -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_k_weight_rows(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<64x64xf32>, %wv: tensor<16x64xf32>,
    %wo: tensor<64x64xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected k_weight rows (64) to match key head count x head dim (2 x 8)}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo)
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>,
      tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_dynamic_k_weight_rows(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<?x64xf32>, %wv: tensor<16x64xf32>,
    %wo: tensor<64x64xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected k_weight rows (?) to match key head count x head dim (2 x 8)}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo)
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<?x64xf32>,
      tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_v_weight_rows(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>, %wv: tensor<8x64xf32>,
    %wo: tensor<64x64xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected v_weight rows (8) to match key head count x head dim (2 x 8)}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo)
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
      tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_o_weight_rank(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>,
    %wo: tensor<64xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected o_weight to have rank 2 [out, in], got rank 1}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo)
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
      tensor<16x64xf32>, tensor<64xf32>) -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_o_weight_element_type(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>,
    %wo: tensor<64x64xf16>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected o_weight element type ('f16') to match input element type ('f32')}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo)
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
      tensor<16x64xf32>, tensor<64x64xf16>) -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_o_weight_input_size(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>,
    %wo: tensor<64x32xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected o_weight input size (32) to match query head count x head dim (64)}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo)
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
      tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_o_weight_rows(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>,
    %wo: tensor<32x64xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected o_weight rows (32) to match model width (64)}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo)
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
      tensor<16x64xf32>, tensor<32x64xf32>) -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_q_bias_rank(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %bq: tensor<1x64xf32>, %wk: tensor<16x64xf32>,
    %wv: tensor<16x64xf32>, %wo: tensor<64x64xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected q_bias to have rank 1 [features], got rank 2}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq, %bq) k(%wk) v(%wv) o(%wo)
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<1x64xf32>,
      tensor<16x64xf32>, tensor<16x64xf32>, tensor<64x64xf32>)
      -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_q_bias_element_type(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %bq: tensor<64xf16>, %wk: tensor<16x64xf32>,
    %wv: tensor<16x64xf32>, %wo: tensor<64x64xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected q_bias element type ('f16') to match input element type ('f32')}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq, %bq) k(%wk) v(%wv) o(%wo)
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<64xf16>,
      tensor<16x64xf32>, tensor<16x64xf32>, tensor<64x64xf32>)
      -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_q_bias_size(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %bq: tensor<8xf32>, %wk: tensor<16x64xf32>,
    %wv: tensor<16x64xf32>, %wo: tensor<64x64xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected q_bias size (8) to match q_weight rows (64)}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq, %bq) k(%wk) v(%wv) o(%wo)
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<8xf32>,
      tensor<16x64xf32>, tensor<16x64xf32>, tensor<64x64xf32>)
      -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_k_bias_rank(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>, %bk: tensor<1x16xf32>,
    %wv: tensor<16x64xf32>, %wo: tensor<64x64xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected k_bias to have rank 1 [features], got rank 2}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk, %bk) v(%wv) o(%wo)
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
      tensor<1x16xf32>, tensor<16x64xf32>, tensor<64x64xf32>)
      -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_k_bias_element_type(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>, %bk: tensor<16xf16>,
    %wv: tensor<16x64xf32>, %wo: tensor<64x64xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected k_bias element type ('f16') to match input element type ('f32')}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk, %bk) v(%wv) o(%wo)
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
      tensor<16xf16>, tensor<16x64xf32>, tensor<64x64xf32>)
      -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_k_bias_size(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>, %bk: tensor<8xf32>,
    %wv: tensor<16x64xf32>, %wo: tensor<64x64xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected k_bias size (8) to match k_weight rows (16)}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk, %bk) v(%wv) o(%wo)
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
      tensor<8xf32>, tensor<16x64xf32>, tensor<64x64xf32>)
      -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_v_bias_rank(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>,
    %bv: tensor<1x16xf32>, %wo: tensor<64x64xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected v_bias to have rank 1 [features], got rank 2}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv, %bv) o(%wo)
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
      tensor<16x64xf32>, tensor<1x16xf32>, tensor<64x64xf32>)
      -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_v_bias_element_type(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>,
    %bv: tensor<16xf16>, %wo: tensor<64x64xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected v_bias element type ('f16') to match input element type ('f32')}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv, %bv) o(%wo)
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
      tensor<16x64xf32>, tensor<16xf16>, tensor<64x64xf32>)
      -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_v_bias_size(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>,
    %bv: tensor<8xf32>, %wo: tensor<64x64xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected v_bias size (8) to match v_weight rows (16)}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv, %bv) o(%wo)
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
      tensor<16x64xf32>, tensor<8xf32>, tensor<64x64xf32>)
      -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_o_bias_rank(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>,
    %wo: tensor<64x64xf32>, %bo: tensor<1x64xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected o_bias to have rank 1 [features], got rank 2}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo, %bo)
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
      tensor<16x64xf32>, tensor<64x64xf32>, tensor<1x64xf32>)
      -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_o_bias_element_type(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>,
    %wo: tensor<64x64xf32>, %bo: tensor<64xf16>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected o_bias element type ('f16') to match input element type ('f32')}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo, %bo)
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
      tensor<16x64xf32>, tensor<64x64xf32>, tensor<64xf16>)
      -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_o_bias_size(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>,
    %wo: tensor<64x64xf32>, %bo: tensor<8xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected o_bias size (8) to match model width (64)}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo, %bo)
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
      tensor<16x64xf32>, tensor<64x64xf32>, tensor<8xf32>)
      -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_positions_without_rope(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>,
    %wo: tensor<64x64xf32>, %pos: tensor<16xi32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected a rope attribute when positions are given}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo)
      positions(%pos)
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
      tensor<16x64xf32>, tensor<64x64xf32>, tensor<16xi32>)
      -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_positions_batch(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>,
    %wo: tensor<64x64xf32>, %pos: tensor<2x16xi32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected positions batch (2) to match input batch (1)}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo)
      positions(%pos) {rope = #tfm.rope<theta = 1.0e+04, style = half>}
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
      tensor<16x64xf32>, tensor<64x64xf32>, tensor<2x16xi32>)
      -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_positions_rank(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>,
    %wo: tensor<64x64xf32>, %pos: tensor<1x1x16xi32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected positions to have rank 1 [S] or 2 [B, S], got rank 3}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo)
      positions(%pos) {rope = #tfm.rope<theta = 1.0e+04, style = half>}
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
      tensor<16x64xf32>, tensor<64x64xf32>, tensor<1x1x16xi32>)
      -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_positions_length(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>,
    %wo: tensor<64x64xf32>, %pos: tensor<1x8xi64>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected positions length (8) to match input length (16)}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo)
      positions(%pos) {rope = #tfm.rope<theta = 1.0e+04, style = half>}
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
      tensor<16x64xf32>, tensor<64x64xf32>, tensor<1x8xi64>)
      -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_rope_without_positions(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>,
    %wo: tensor<64x64xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected positions when rope is set}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo)
      {rope = #tfm.rope<theta = 1.0e+04, style = half>}
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
      tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_odd_head_dim_for_rope(%x: tensor<1x16x64xf32>,
    %wq: tensor<56x64xf32>, %wk: tensor<14x64xf32>, %wv: tensor<14x64xf32>,
    %wo: tensor<64x56xf32>, %pos: tensor<16xi32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected head dim (7) to be even for rope}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo)
      positions(%pos) {rope = #tfm.rope<theta = 1.0e+04, style = half>}
      : (tensor<1x16x64xf32>, tensor<56x64xf32>, tensor<14x64xf32>,
      tensor<14x64xf32>, tensor<64x56xf32>, tensor<16xi32>)
      -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_kv_lengths_rank(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>,
    %wo: tensor<64x64xf32>, %lens: tensor<i32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected kv_lengths to have rank 1 [B], got rank 0}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo)
      kv_lengths(%lens)
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
      tensor<16x64xf32>, tensor<64x64xf32>, tensor<i32>) -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_kv_lengths_size(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>,
    %wo: tensor<64x64xf32>, %lens: tensor<4xi64>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected kv_lengths size (4) to match batch (1)}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo)
      kv_lengths(%lens)
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
      tensor<16x64xf32>, tensor<64x64xf32>, tensor<4xi64>)
      -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @self_attention_result_element_type(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>,
    %wo: tensor<64x64xf32>) -> tensor<1x16x64xf16> {
  // expected-error @+1 {{'tfm.self_attention' op expected result element type ('f16') to match input element type ('f32')}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo)
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
      tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<1x16x64xf16>
  return %r : tensor<1x16x64xf16>
}

// -----

func.func @self_attention_result_shape(%x: tensor<1x16x64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>,
    %wo: tensor<64x64xf32>) -> tensor<1x16x32xf32> {
  // expected-error @+1 {{'tfm.self_attention' op expected result shape [1, 16, 32] to match [1, 16, 64]}}
  %r = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo)
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
      tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<1x16x32xf32>
  return %r : tensor<1x16x32xf32>
}

// -----

//===----------------------------------------------------------------------===//
// tfm.decoder_block: norm parameters and eps
//===----------------------------------------------------------------------===//

func.func @decoder_block_attn_norm_weight_rank(%x: tensor<1x16x64xf32>,
    %g1: tensor<1x64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>,
    %wv: tensor<16x64xf32>, %wo: tensor<64x64xf32>, %g2: tensor<64xf32>,
    %wg: tensor<172x64xf32>, %wu: tensor<172x64xf32>, %wd: tensor<64x172xf32>)
    -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.decoder_block' op expected attn_norm weight to have rank 1 [features], got rank 2}}
  %r = tfm.decoder_block pre rms_norm %x heads(8, 2) eps(1.0e-05) attn_norm(%g1)
      q(%wq) k(%wk) v(%wv) o(%wo) ffn_norm(%g2) swiglu gate(%wg) up(%wu)
      down(%wd)
      : (tensor<1x16x64xf32>, tensor<1x64xf32>, tensor<64x64xf32>,
      tensor<16x64xf32>, tensor<16x64xf32>, tensor<64x64xf32>, tensor<64xf32>,
      tensor<172x64xf32>, tensor<172x64xf32>, tensor<64x172xf32>)
      -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @decoder_block_attn_norm_weight_element_type(%x: tensor<1x16x64xf32>,
    %g1: tensor<64xf16>, %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>,
    %wv: tensor<16x64xf32>, %wo: tensor<64x64xf32>, %g2: tensor<64xf32>,
    %wg: tensor<172x64xf32>, %wu: tensor<172x64xf32>, %wd: tensor<64x172xf32>)
    -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.decoder_block' op expected attn_norm weight element type ('f16') to match input element type ('f32')}}
  %r = tfm.decoder_block pre rms_norm %x heads(8, 2) eps(1.0e-05) attn_norm(%g1)
      q(%wq) k(%wk) v(%wv) o(%wo) ffn_norm(%g2) swiglu gate(%wg) up(%wu)
      down(%wd)
      : (tensor<1x16x64xf32>, tensor<64xf16>, tensor<64x64xf32>,
      tensor<16x64xf32>, tensor<16x64xf32>, tensor<64x64xf32>, tensor<64xf32>,
      tensor<172x64xf32>, tensor<172x64xf32>, tensor<64x172xf32>)
      -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @decoder_block_attn_norm_weight_size(%x: tensor<1x16x64xf32>,
    %g1: tensor<32xf32>, %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>,
    %wv: tensor<16x64xf32>, %wo: tensor<64x64xf32>, %g2: tensor<64xf32>,
    %wg: tensor<172x64xf32>, %wu: tensor<172x64xf32>, %wd: tensor<64x172xf32>)
    -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.decoder_block' op expected attn_norm weight size (32) to match model width (64)}}
  %r = tfm.decoder_block pre rms_norm %x heads(8, 2) eps(1.0e-05) attn_norm(%g1)
      q(%wq) k(%wk) v(%wv) o(%wo) ffn_norm(%g2) swiglu gate(%wg) up(%wu)
      down(%wd)
      : (tensor<1x16x64xf32>, tensor<32xf32>, tensor<64x64xf32>,
      tensor<16x64xf32>, tensor<16x64xf32>, tensor<64x64xf32>, tensor<64xf32>,
      tensor<172x64xf32>, tensor<172x64xf32>, tensor<64x172xf32>)
      -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @decoder_block_attn_norm_bias_with_rms_norm(%x: tensor<1x16x64xf32>,
    %g1: tensor<64xf32>, %b1: tensor<64xf32>, %wq: tensor<64x64xf32>,
    %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>, %wo: tensor<64x64xf32>,
    %g2: tensor<64xf32>, %wg: tensor<172x64xf32>, %wu: tensor<172x64xf32>,
    %wd: tensor<64x172xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.decoder_block' op expected no attn_norm bias with rms_norm}}
  %r = tfm.decoder_block post rms_norm %x heads(8, 2) eps(1.0e-05)
      attn_norm(%g1, %b1) q(%wq) k(%wk) v(%wv) o(%wo) ffn_norm(%g2) swiglu
      gate(%wg) up(%wu) down(%wd)
      : (tensor<1x16x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>,
      tensor<16x64xf32>, tensor<16x64xf32>, tensor<64x64xf32>, tensor<64xf32>,
      tensor<172x64xf32>, tensor<172x64xf32>, tensor<64x172xf32>)
      -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @decoder_block_attn_norm_bias_rank(%x: tensor<1x16x64xf32>,
    %g1: tensor<64xf32>, %b1: tensor<1x64xf32>, %wq: tensor<64x64xf32>,
    %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>, %wo: tensor<64x64xf32>,
    %g2: tensor<64xf32>, %b2: tensor<64xf32>, %wg: tensor<172x64xf32>,
    %wu: tensor<172x64xf32>, %wd: tensor<64x172xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.decoder_block' op expected attn_norm bias to have rank 1 [features], got rank 2}}
  %r = tfm.decoder_block pre layer_norm %x heads(8, 2) eps(1.0e-05)
      attn_norm(%g1, %b1) q(%wq) k(%wk) v(%wv) o(%wo) ffn_norm(%g2, %b2) swiglu
      gate(%wg) up(%wu) down(%wd)
      : (tensor<1x16x64xf32>, tensor<64xf32>, tensor<1x64xf32>,
      tensor<64x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>,
      tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<172x64xf32>,
      tensor<172x64xf32>, tensor<64x172xf32>) -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @decoder_block_attn_norm_bias_element_type(%x: tensor<1x16x64xf32>,
    %g1: tensor<64xf32>, %b1: tensor<64xbf16>, %wq: tensor<64x64xf32>,
    %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>, %wo: tensor<64x64xf32>,
    %g2: tensor<64xf32>, %b2: tensor<64xf32>, %wg: tensor<172x64xf32>,
    %wu: tensor<172x64xf32>, %wd: tensor<64x172xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.decoder_block' op expected attn_norm bias element type ('bf16') to match input element type ('f32')}}
  %r = tfm.decoder_block pre layer_norm %x heads(8, 2) eps(1.0e-05)
      attn_norm(%g1, %b1) q(%wq) k(%wk) v(%wv) o(%wo) ffn_norm(%g2, %b2) swiglu
      gate(%wg) up(%wu) down(%wd)
      : (tensor<1x16x64xf32>, tensor<64xf32>, tensor<64xbf16>,
      tensor<64x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>,
      tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<172x64xf32>,
      tensor<172x64xf32>, tensor<64x172xf32>) -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @decoder_block_attn_norm_bias_size(%x: tensor<1x16x64xf32>,
    %g1: tensor<64xf32>, %b1: tensor<128xf32>, %wq: tensor<64x64xf32>,
    %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>, %wo: tensor<64x64xf32>,
    %g2: tensor<64xf32>, %b2: tensor<64xf32>, %wg: tensor<172x64xf32>,
    %wu: tensor<172x64xf32>, %wd: tensor<64x172xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.decoder_block' op expected attn_norm bias size (128) to match model width (64)}}
  %r = tfm.decoder_block pre layer_norm %x heads(8, 2) eps(1.0e-05)
      attn_norm(%g1, %b1) q(%wq) k(%wk) v(%wv) o(%wo) ffn_norm(%g2, %b2) swiglu
      gate(%wg) up(%wu) down(%wd)
      : (tensor<1x16x64xf32>, tensor<64xf32>, tensor<128xf32>,
      tensor<64x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>,
      tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<172x64xf32>,
      tensor<172x64xf32>, tensor<64x172xf32>) -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @decoder_block_ffn_norm_weight_rank(%x: tensor<1x16x64xf32>,
    %g1: tensor<64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>,
    %wv: tensor<16x64xf32>, %wo: tensor<64x64xf32>, %g2: tensor<1x64xf32>,
    %wg: tensor<172x64xf32>, %wu: tensor<172x64xf32>, %wd: tensor<64x172xf32>)
    -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.decoder_block' op expected ffn_norm weight to have rank 1 [features], got rank 2}}
  %r = tfm.decoder_block pre rms_norm %x heads(8, 2) eps(1.0e-05) attn_norm(%g1)
      q(%wq) k(%wk) v(%wv) o(%wo) ffn_norm(%g2) swiglu gate(%wg) up(%wu)
      down(%wd)
      : (tensor<1x16x64xf32>, tensor<64xf32>, tensor<64x64xf32>,
      tensor<16x64xf32>, tensor<16x64xf32>, tensor<64x64xf32>, tensor<1x64xf32>,
      tensor<172x64xf32>, tensor<172x64xf32>, tensor<64x172xf32>)
      -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @decoder_block_ffn_norm_weight_element_type(%x: tensor<1x16x64xf32>,
    %g1: tensor<64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>,
    %wv: tensor<16x64xf32>, %wo: tensor<64x64xf32>, %g2: tensor<64xf16>,
    %wg: tensor<172x64xf32>, %wu: tensor<172x64xf32>, %wd: tensor<64x172xf32>)
    -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.decoder_block' op expected ffn_norm weight element type ('f16') to match input element type ('f32')}}
  %r = tfm.decoder_block pre rms_norm %x heads(8, 2) eps(1.0e-05) attn_norm(%g1)
      q(%wq) k(%wk) v(%wv) o(%wo) ffn_norm(%g2) swiglu gate(%wg) up(%wu)
      down(%wd)
      : (tensor<1x16x64xf32>, tensor<64xf32>, tensor<64x64xf32>,
      tensor<16x64xf32>, tensor<16x64xf32>, tensor<64x64xf32>, tensor<64xf16>,
      tensor<172x64xf32>, tensor<172x64xf32>, tensor<64x172xf32>)
      -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @decoder_block_ffn_norm_weight_size(%x: tensor<1x16x64xf32>,
    %g1: tensor<64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>,
    %wv: tensor<16x64xf32>, %wo: tensor<64x64xf32>, %g2: tensor<32xf32>,
    %wg: tensor<172x64xf32>, %wu: tensor<172x64xf32>, %wd: tensor<64x172xf32>)
    -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.decoder_block' op expected ffn_norm weight size (32) to match model width (64)}}
  %r = tfm.decoder_block pre rms_norm %x heads(8, 2) eps(1.0e-05) attn_norm(%g1)
      q(%wq) k(%wk) v(%wv) o(%wo) ffn_norm(%g2) swiglu gate(%wg) up(%wu)
      down(%wd)
      : (tensor<1x16x64xf32>, tensor<64xf32>, tensor<64x64xf32>,
      tensor<16x64xf32>, tensor<16x64xf32>, tensor<64x64xf32>, tensor<32xf32>,
      tensor<172x64xf32>, tensor<172x64xf32>, tensor<64x172xf32>)
      -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @decoder_block_ffn_norm_bias_with_rms_norm(%x: tensor<1x16x64xf32>,
    %g1: tensor<64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>,
    %wv: tensor<16x64xf32>, %wo: tensor<64x64xf32>, %g2: tensor<64xf32>,
    %b2: tensor<64xf32>, %wg: tensor<172x64xf32>, %wu: tensor<172x64xf32>,
    %wd: tensor<64x172xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.decoder_block' op expected no ffn_norm bias with rms_norm}}
  %r = tfm.decoder_block post rms_norm %x heads(8, 2) eps(1.0e-05)
      attn_norm(%g1) q(%wq) k(%wk) v(%wv) o(%wo) ffn_norm(%g2, %b2) swiglu
      gate(%wg) up(%wu) down(%wd)
      : (tensor<1x16x64xf32>, tensor<64xf32>, tensor<64x64xf32>,
      tensor<16x64xf32>, tensor<16x64xf32>, tensor<64x64xf32>, tensor<64xf32>,
      tensor<64xf32>, tensor<172x64xf32>, tensor<172x64xf32>,
      tensor<64x172xf32>) -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @decoder_block_ffn_norm_bias_rank(%x: tensor<1x16x64xf32>,
    %g1: tensor<64xf32>, %b1: tensor<64xf32>, %wq: tensor<64x64xf32>,
    %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>, %wo: tensor<64x64xf32>,
    %g2: tensor<64xf32>, %b2: tensor<1x64xf32>, %wg: tensor<172x64xf32>,
    %wu: tensor<172x64xf32>, %wd: tensor<64x172xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.decoder_block' op expected ffn_norm bias to have rank 1 [features], got rank 2}}
  %r = tfm.decoder_block pre layer_norm %x heads(8, 2) eps(1.0e-05)
      attn_norm(%g1, %b1) q(%wq) k(%wk) v(%wv) o(%wo) ffn_norm(%g2, %b2) swiglu
      gate(%wg) up(%wu) down(%wd)
      : (tensor<1x16x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>,
      tensor<16x64xf32>, tensor<16x64xf32>, tensor<64x64xf32>, tensor<64xf32>,
      tensor<1x64xf32>, tensor<172x64xf32>, tensor<172x64xf32>,
      tensor<64x172xf32>) -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @decoder_block_ffn_norm_bias_element_type(%x: tensor<1x16x64xf32>,
    %g1: tensor<64xf32>, %b1: tensor<64xf32>, %wq: tensor<64x64xf32>,
    %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>, %wo: tensor<64x64xf32>,
    %g2: tensor<64xf32>, %b2: tensor<64xbf16>, %wg: tensor<172x64xf32>,
    %wu: tensor<172x64xf32>, %wd: tensor<64x172xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.decoder_block' op expected ffn_norm bias element type ('bf16') to match input element type ('f32')}}
  %r = tfm.decoder_block pre layer_norm %x heads(8, 2) eps(1.0e-05)
      attn_norm(%g1, %b1) q(%wq) k(%wk) v(%wv) o(%wo) ffn_norm(%g2, %b2) swiglu
      gate(%wg) up(%wu) down(%wd)
      : (tensor<1x16x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>,
      tensor<16x64xf32>, tensor<16x64xf32>, tensor<64x64xf32>, tensor<64xf32>,
      tensor<64xbf16>, tensor<172x64xf32>, tensor<172x64xf32>,
      tensor<64x172xf32>) -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @decoder_block_ffn_norm_bias_size(%x: tensor<1x16x64xf32>,
    %g1: tensor<64xf32>, %b1: tensor<64xf32>, %wq: tensor<64x64xf32>,
    %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>, %wo: tensor<64x64xf32>,
    %g2: tensor<64xf32>, %b2: tensor<128xf32>, %wg: tensor<172x64xf32>,
    %wu: tensor<172x64xf32>, %wd: tensor<64x172xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.decoder_block' op expected ffn_norm bias size (128) to match model width (64)}}
  %r = tfm.decoder_block pre layer_norm %x heads(8, 2) eps(1.0e-05)
      attn_norm(%g1, %b1) q(%wq) k(%wk) v(%wv) o(%wo) ffn_norm(%g2, %b2) swiglu
      gate(%wg) up(%wu) down(%wd)
      : (tensor<1x16x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>,
      tensor<16x64xf32>, tensor<16x64xf32>, tensor<64x64xf32>, tensor<64xf32>,
      tensor<128xf32>, tensor<172x64xf32>, tensor<172x64xf32>,
      tensor<64x172xf32>) -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @decoder_block_negative_eps(%x: tensor<1x16x64xf32>,
    %g1: tensor<64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>,
    %wv: tensor<16x64xf32>, %wo: tensor<64x64xf32>, %g2: tensor<64xf32>,
    %wg: tensor<172x64xf32>, %wu: tensor<172x64xf32>, %wd: tensor<64x172xf32>)
    -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.decoder_block' op expected eps to be non-negative, got -1.000000e-01}}
  %r = tfm.decoder_block pre rms_norm %x heads(8, 2) eps(-0.1) attn_norm(%g1)
      q(%wq) k(%wk) v(%wv) o(%wo) ffn_norm(%g2) swiglu gate(%wg) up(%wu)
      down(%wd)
      : (tensor<1x16x64xf32>, tensor<64xf32>, tensor<64x64xf32>,
      tensor<16x64xf32>, tensor<16x64xf32>, tensor<64x64xf32>, tensor<64xf32>,
      tensor<172x64xf32>, tensor<172x64xf32>, tensor<64x172xf32>)
      -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @decoder_block_infinite_eps(%x: tensor<1x16x64xf32>,
    %g1: tensor<64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>,
    %wv: tensor<16x64xf32>, %wo: tensor<64x64xf32>, %g2: tensor<64xf32>,
    %wg: tensor<172x64xf32>, %wu: tensor<172x64xf32>, %wd: tensor<64x172xf32>)
    -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.decoder_block' op expected eps to be finite}}
  %r = tfm.decoder_block pre rms_norm %x heads(8, 2) eps(0x7F800000)
      attn_norm(%g1) q(%wq) k(%wk) v(%wv) o(%wo) ffn_norm(%g2) swiglu gate(%wg)
      up(%wu) down(%wd)
      : (tensor<1x16x64xf32>, tensor<64xf32>, tensor<64x64xf32>,
      tensor<16x64xf32>, tensor<16x64xf32>, tensor<64x64xf32>, tensor<64xf32>,
      tensor<172x64xf32>, tensor<172x64xf32>, tensor<64x172xf32>)
      -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

//===----------------------------------------------------------------------===//
// tfm.decoder_block: FFN weights (a sample; all under tfm.ffn)
//===----------------------------------------------------------------------===//

func.func @decoder_block_gated_missing_gate(%x: tensor<1x16x64xf32>,
    %g1: tensor<64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>,
    %wv: tensor<16x64xf32>, %wo: tensor<64x64xf32>, %g2: tensor<64xf32>,
    %wu: tensor<172x64xf32>, %wd: tensor<64x172xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.decoder_block' op expected a gate weight for gated kind 'swiglu'}}
  %r = tfm.decoder_block pre rms_norm %x heads(8, 2) eps(1.0e-05) attn_norm(%g1)
      q(%wq) k(%wk) v(%wv) o(%wo) ffn_norm(%g2) swiglu up(%wu) down(%wd)
      : (tensor<1x16x64xf32>, tensor<64xf32>, tensor<64x64xf32>,
      tensor<16x64xf32>, tensor<16x64xf32>, tensor<64x64xf32>, tensor<64xf32>,
      tensor<172x64xf32>, tensor<64x172xf32>) -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @decoder_block_up_weight_input_size(%x: tensor<1x16x64xf32>,
    %g1: tensor<64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>,
    %wv: tensor<16x64xf32>, %wo: tensor<64x64xf32>, %g2: tensor<64xf32>,
    %wu: tensor<256x32xf32>, %bu: tensor<256xf32>, %wd: tensor<64x256xf32>,
    %bd: tensor<64xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.decoder_block' op expected up weight input size (32) to match model width (64)}}
  %r = tfm.decoder_block pre rms_norm %x heads(8, 2) eps(1.0e-05) attn_norm(%g1)
      q(%wq) k(%wk) v(%wv) o(%wo) ffn_norm(%g2) gelu up(%wu, %bu) down(%wd, %bd)
      : (tensor<1x16x64xf32>, tensor<64xf32>, tensor<64x64xf32>,
      tensor<16x64xf32>, tensor<16x64xf32>, tensor<64x64xf32>, tensor<64xf32>,
      tensor<256x32xf32>, tensor<256xf32>, tensor<64x256xf32>, tensor<64xf32>)
      -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @decoder_block_down_bias_size(%x: tensor<1x16x64xf32>,
    %g1: tensor<64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>,
    %wv: tensor<16x64xf32>, %wo: tensor<64x64xf32>, %g2: tensor<64xf32>,
    %wu: tensor<256x64xf32>, %bu: tensor<256xf32>, %wd: tensor<64x256xf32>,
    %bd: tensor<32xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.decoder_block' op expected down bias size (32) to match model width (64)}}
  %r = tfm.decoder_block pre rms_norm %x heads(8, 2) eps(1.0e-05) attn_norm(%g1)
      q(%wq) k(%wk) v(%wv) o(%wo) ffn_norm(%g2) silu up(%wu, %bu) down(%wd, %bd)
      : (tensor<1x16x64xf32>, tensor<64xf32>, tensor<64x64xf32>,
      tensor<16x64xf32>, tensor<16x64xf32>, tensor<64x64xf32>, tensor<64xf32>,
      tensor<256x64xf32>, tensor<256xf32>, tensor<64x256xf32>, tensor<32xf32>)
      -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

//===----------------------------------------------------------------------===//
// tfm.decoder_block: attention sublayer (a sample; all under tfm.self_attention)
//===----------------------------------------------------------------------===//

func.func @decoder_block_kv_heads_do_not_divide(%x: tensor<1x16x64xf32>,
    %g1: tensor<64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>,
    %wv: tensor<16x64xf32>, %wo: tensor<64x64xf32>, %g2: tensor<64xf32>,
    %wg: tensor<172x64xf32>, %wu: tensor<172x64xf32>, %wd: tensor<64x172xf32>)
    -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.decoder_block' op expected key head count (3) to divide query head count (8)}}
  %r = tfm.decoder_block pre rms_norm %x heads(8, 3) eps(1.0e-05) attn_norm(%g1)
      q(%wq) k(%wk) v(%wv) o(%wo) ffn_norm(%g2) swiglu gate(%wg) up(%wu)
      down(%wd)
      : (tensor<1x16x64xf32>, tensor<64xf32>, tensor<64x64xf32>,
      tensor<16x64xf32>, tensor<16x64xf32>, tensor<64x64xf32>, tensor<64xf32>,
      tensor<172x64xf32>, tensor<172x64xf32>, tensor<64x172xf32>)
      -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @decoder_block_positions_without_rope(%x: tensor<1x16x64xf32>,
    %g1: tensor<64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>,
    %wv: tensor<16x64xf32>, %wo: tensor<64x64xf32>, %g2: tensor<64xf32>,
    %wg: tensor<172x64xf32>, %wu: tensor<172x64xf32>, %wd: tensor<64x172xf32>,
    %pos: tensor<16xi32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{'tfm.decoder_block' op expected a rope attribute when positions are given}}
  %r = tfm.decoder_block pre rms_norm %x heads(8, 2) eps(1.0e-05) attn_norm(%g1)
      q(%wq) k(%wk) v(%wv) o(%wo) ffn_norm(%g2) swiglu gate(%wg) up(%wu)
      down(%wd) positions(%pos)
      : (tensor<1x16x64xf32>, tensor<64xf32>, tensor<64x64xf32>,
      tensor<16x64xf32>, tensor<16x64xf32>, tensor<64x64xf32>, tensor<64xf32>,
      tensor<172x64xf32>, tensor<172x64xf32>, tensor<64x172xf32>,
      tensor<16xi32>) -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

func.func @decoder_block_result_shape(%x: tensor<1x16x64xf32>,
    %g1: tensor<64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>,
    %wv: tensor<16x64xf32>, %wo: tensor<64x64xf32>, %g2: tensor<64xf32>,
    %wg: tensor<172x64xf32>, %wu: tensor<172x64xf32>, %wd: tensor<64x172xf32>)
    -> tensor<1x16x32xf32> {
  // expected-error @+1 {{'tfm.decoder_block' op expected result shape [1, 16, 32] to match [1, 16, 64]}}
  %r = tfm.decoder_block pre rms_norm %x heads(8, 2) eps(1.0e-05) attn_norm(%g1)
      q(%wq) k(%wk) v(%wv) o(%wo) ffn_norm(%g2) swiglu gate(%wg) up(%wu)
      down(%wd)
      : (tensor<1x16x64xf32>, tensor<64xf32>, tensor<64x64xf32>,
      tensor<16x64xf32>, tensor<16x64xf32>, tensor<64x64xf32>, tensor<64xf32>,
      tensor<172x64xf32>, tensor<172x64xf32>, tensor<64x172xf32>)
      -> tensor<1x16x32xf32>
  return %r : tensor<1x16x32xf32>
}

// RUN: tfm-opt %s --verify-roundtrip | FileCheck %s
// RUN: tfm-opt %s --mlir-print-op-generic | tfm-opt | FileCheck %s

// CHECK-LABEL: func.func @attention_mha_no_mask
func.func @attention_mha_no_mask(%q: tensor<2x4x7x16xf32>, %k: tensor<2x4x9x16xf32>,
                                 %v: tensor<2x4x9x8xf32>) -> tensor<2x4x7x8xf32> {
  // CHECK: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} : (tensor<2x4x7x16xf32>, tensor<2x4x9x16xf32>, tensor<2x4x9x8xf32>) -> tensor<2x4x7x8xf32>
  %o = tfm.attention %q, %k, %v
      : (tensor<2x4x7x16xf32>, tensor<2x4x9x16xf32>, tensor<2x4x9x8xf32>) -> tensor<2x4x7x8xf32>
  return %o : tensor<2x4x7x8xf32>
}

// CHECK-LABEL: func.func @attention_gqa_4_to_1_causal
func.func @attention_gqa_4_to_1_causal(%q: tensor<1x8x16x64xbf16>, %k: tensor<1x2x16x64xbf16>,
                                       %v: tensor<1x2x16x64xbf16>) -> tensor<1x8x16x64xbf16> {
  // CHECK: tfm.attention {{.+}} {mask = #tfm.mask<causal>}
  %o = tfm.attention %q, %k, %v {mask = #tfm.mask<causal>}
      : (tensor<1x8x16x64xbf16>, tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>) -> tensor<1x8x16x64xbf16>
  return %o : tensor<1x8x16x64xbf16>
}

// CHECK-LABEL: func.func @attention_mqa_sliding_window_dynamic
func.func @attention_mqa_sliding_window_dynamic(%q: tensor<?x8x?x64xf16>, %k: tensor<?x1x?x64xf16>,
                                                %v: tensor<?x1x?x64xf16>) -> tensor<?x8x?x64xf16> {
  // CHECK: tfm.attention {{.+}} {mask = #tfm.mask<sliding_window<4096>>, scale = 1.250000e-01 : f32, softcap = 5.000000e+01 : f32} : (tensor<?x8x?x64xf16>, tensor<?x1x?x64xf16>, tensor<?x1x?x64xf16>) -> tensor<?x8x?x64xf16>
  %o = tfm.attention %q, %k, %v {mask = #tfm.mask<sliding_window<4096>>, scale = 0.125 : f32, softcap = 50.0 : f32}
      : (tensor<?x8x?x64xf16>, tensor<?x1x?x64xf16>, tensor<?x1x?x64xf16>) -> tensor<?x8x?x64xf16>
  return %o : tensor<?x8x?x64xf16>
}

// CHECK-LABEL: func.func @attention_band_lengths_mask_bias
func.func @attention_band_lengths_mask_bias(%q: tensor<2x4x7x16xf32>, %k: tensor<2x4x7x16xf32>,
                                            %v: tensor<2x4x7x16xf32>, %lengths: tensor<2xi32>,
                                            %mask: tensor<2x1x7x7xi1>, %alibi: tensor<4x7x7xf32>)
    -> tensor<2x4x7x16xf32> {
  // CHECK: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} kv_lengths(%{{.+}}) dense_mask(%{{.+}}) bias(%{{.+}}) {mask = #tfm.mask<band<2, 3>>}
  %o = tfm.attention %q, %k, %v kv_lengths(%lengths) dense_mask(%mask) bias(%alibi)
      {mask = #tfm.mask<band<2, 3>>}
      : (tensor<2x4x7x16xf32>, tensor<2x4x7x16xf32>, tensor<2x4x7x16xf32>, tensor<2xi32>,
         tensor<2x1x7x7xi1>, tensor<4x7x7xf32>) -> tensor<2x4x7x16xf32>
  return %o : tensor<2x4x7x16xf32>
}

// CHECK-LABEL: func.func @attention_explicit_none_mask
func.func @attention_explicit_none_mask(%q: tensor<1x1x1x8xf32>, %k: tensor<1x1x5x8xf32>,
                                        %v: tensor<1x1x5x8xf32>) -> tensor<1x1x1x8xf32> {
  // CHECK: {mask = #tfm.mask<none>}
  %o = tfm.attention %q, %k, %v {mask = #tfm.mask<none>}
      : (tensor<1x1x1x8xf32>, tensor<1x1x5x8xf32>, tensor<1x1x5x8xf32>) -> tensor<1x1x1x8xf32>
  return %o : tensor<1x1x1x8xf32>
}

// CHECK-LABEL: func.func @mask_ops
func.func @mask_ops(%sq: index, %skv: index, %lengths: tensor<?xi64>)
    -> (tensor<16x16xi1>, tensor<?x?xi1>, tensor<8x12xi1>, tensor<?x1x1x?xi1>, tensor<3x1x1x5xi1>) {
  // CHECK: tfm.causal_mask : tensor<16x16xi1>
  %c = tfm.causal_mask : tensor<16x16xi1>
  // CHECK: tfm.causal_mask(%{{.+}}, %{{.+}}) : tensor<?x?xi1>
  %cd = tfm.causal_mask(%sq, %skv) : tensor<?x?xi1>
  // CHECK: tfm.sliding_window_mask window(4) : tensor<8x12xi1>
  %w = tfm.sliding_window_mask window(4) : tensor<8x12xi1>
  // CHECK: tfm.padding_mask %{{.+}}, %{{.+}} : tensor<?xi64> -> tensor<?x1x1x?xi1>
  %p = tfm.padding_mask %lengths, %skv : tensor<?xi64> -> tensor<?x1x1x?xi1>
  %l3 = arith.constant dense<[1, 5, 3]> : tensor<3xi32>
  // CHECK: tfm.padding_mask %{{.+}} : tensor<3xi32> -> tensor<3x1x1x5xi1>
  %ps = tfm.padding_mask %l3 : tensor<3xi32> -> tensor<3x1x1x5xi1>
  return %c, %cd, %w, %p, %ps
      : tensor<16x16xi1>, tensor<?x?xi1>, tensor<8x12xi1>, tensor<?x1x1x?xi1>, tensor<3x1x1x5xi1>
}

// CHECK-LABEL: func.func @norms
func.func @norms(%x: tensor<?x7x64xf32>, %w: tensor<64xf32>, %b: tensor<64xf32>)
    -> (tensor<?x7x64xf32>, tensor<?x7x64xf32>, tensor<?x7x64xf32>) {
  // CHECK: tfm.rms_norm %{{.+}}, %{{.+}} eps(9.99999997E-7) : (tensor<?x7x64xf32>, tensor<64xf32>) -> tensor<?x7x64xf32>
  %r = tfm.rms_norm %x, %w eps(1.0e-06) : (tensor<?x7x64xf32>, tensor<64xf32>) -> tensor<?x7x64xf32>
  // CHECK: tfm.layer_norm %{{.+}}, %{{.+}}, %{{.+}} eps(9.99999974E-6)
  %l = tfm.layer_norm %x, %w, %b eps(1.0e-05)
      : (tensor<?x7x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x7x64xf32>
  // CHECK: tfm.layer_norm %{{.+}}, %{{.+}} eps(0.000000e+00) : (tensor<?x7x64xf32>, tensor<64xf32>)
  %n = tfm.layer_norm %x, %w eps(0.0) : (tensor<?x7x64xf32>, tensor<64xf32>) -> tensor<?x7x64xf32>
  return %r, %l, %n : tensor<?x7x64xf32>, tensor<?x7x64xf32>, tensor<?x7x64xf32>
}

// CHECK-LABEL: func.func @linear_with_and_without_bias
func.func @linear_with_and_without_bias(%x: tensor<2x?x64xbf16>, %w: tensor<96x64xbf16>,
                                        %b: tensor<96xbf16>, %x2: tensor<64xbf16>)
    -> (tensor<2x?x96xbf16>, tensor<96xbf16>) {
  // CHECK: tfm.linear %{{.+}}, %{{.+}}, %{{.+}} : (tensor<2x?x64xbf16>, tensor<96x64xbf16>, tensor<96xbf16>) -> tensor<2x?x96xbf16>
  %y = tfm.linear %x, %w, %b : (tensor<2x?x64xbf16>, tensor<96x64xbf16>, tensor<96xbf16>) -> tensor<2x?x96xbf16>
  // CHECK: tfm.linear %{{.+}}, %{{.+}} : (tensor<64xbf16>, tensor<96x64xbf16>) -> tensor<96xbf16>
  %z = tfm.linear %x2, %w : (tensor<64xbf16>, tensor<96x64xbf16>) -> tensor<96xbf16>
  return %y, %z : tensor<2x?x96xbf16>, tensor<96xbf16>
}

// CHECK-LABEL: func.func @ffn_kinds
func.func @ffn_kinds(%x: tensor<2x7x64xf32>, %wg: tensor<172x64xf32>, %wu: tensor<172x64xf32>,
                     %wd: tensor<64x172xf32>, %bu: tensor<172xf32>, %bd: tensor<64xf32>)
    -> (tensor<2x7x64xf32>, tensor<2x7x64xf32>, tensor<2x7x64xf32>, tensor<2x7x64xf32>,
        tensor<2x7x64xf32>, tensor<2x7x64xf32>) {
  // CHECK: tfm.ffn swiglu %{{.+}} gate(%{{.+}}) up(%{{.+}}) down(%{{.+}}) :
  %a = tfm.ffn swiglu %x gate(%wg) up(%wu) down(%wd)
      : (tensor<2x7x64xf32>, tensor<172x64xf32>, tensor<172x64xf32>, tensor<64x172xf32>) -> tensor<2x7x64xf32>
  // CHECK: tfm.ffn geglu %{{.+}} gate(%{{.+}}) up(%{{.+}}) down(%{{.+}}) :
  %b = tfm.ffn geglu %x gate(%wg) up(%wu) down(%wd)
      : (tensor<2x7x64xf32>, tensor<172x64xf32>, tensor<172x64xf32>, tensor<64x172xf32>) -> tensor<2x7x64xf32>
  // CHECK: tfm.ffn gelu %{{.+}} up(%{{.+}}, %{{.+}}) down(%{{.+}}, %{{.+}}) :
  %c = tfm.ffn gelu %x up(%wu, %bu) down(%wd, %bd)
      : (tensor<2x7x64xf32>, tensor<172x64xf32>, tensor<172xf32>, tensor<64x172xf32>, tensor<64xf32>) -> tensor<2x7x64xf32>
  // CHECK: tfm.ffn gelu_tanh %{{.+}} up(%{{.+}}) down(%{{.+}}, %{{.+}}) :
  %d = tfm.ffn gelu_tanh %x up(%wu) down(%wd, %bd)
      : (tensor<2x7x64xf32>, tensor<172x64xf32>, tensor<64x172xf32>, tensor<64xf32>) -> tensor<2x7x64xf32>
  // CHECK: tfm.ffn relu %{{.+}} up(%{{.+}}, %{{.+}}) down(%{{.+}}) :
  %e = tfm.ffn relu %x up(%wu, %bu) down(%wd)
      : (tensor<2x7x64xf32>, tensor<172x64xf32>, tensor<172xf32>, tensor<64x172xf32>) -> tensor<2x7x64xf32>
  // CHECK: tfm.ffn silu %{{.+}} up(%{{.+}}) down(%{{.+}}) :
  %f = tfm.ffn silu %x up(%wu) down(%wd)
      : (tensor<2x7x64xf32>, tensor<172x64xf32>, tensor<64x172xf32>) -> tensor<2x7x64xf32>
  return %a, %b, %c, %d, %e, %f : tensor<2x7x64xf32>, tensor<2x7x64xf32>, tensor<2x7x64xf32>,
                                  tensor<2x7x64xf32>, tensor<2x7x64xf32>, tensor<2x7x64xf32>
}

// CHECK-LABEL: func.func @rope_styles
func.func @rope_styles(%x: tensor<1x8x16x64xf32>, %pos: tensor<16xi32>, %bpos: tensor<1x16xi64>)
    -> (tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>) {
  // CHECK: tfm.rope half %{{.+}}, %{{.+}} theta(1.000000e+04) : (tensor<1x8x16x64xf32>, tensor<16xi32>) -> tensor<1x8x16x64xf32>
  %a = tfm.rope half %x, %pos theta(1.0e+04) : (tensor<1x8x16x64xf32>, tensor<16xi32>) -> tensor<1x8x16x64xf32>
  // CHECK: tfm.rope interleaved %{{.+}}, %{{.+}} theta(5.000000e+05) : (tensor<1x8x16x64xf32>, tensor<1x16xi64>)
  %b = tfm.rope interleaved %x, %bpos theta(5.0e+05) : (tensor<1x8x16x64xf32>, tensor<1x16xi64>) -> tensor<1x8x16x64xf32>
  // CHECK: tfm.rope half %{{.+}}, %{{.+}} theta(5.000000e+05) scaling(<llama3, factor = 8.000000e+00, low_freq_factor = 1.000000e+00, high_freq_factor = 4.000000e+00, original_max_positions = 8192>)
  %scaled = tfm.rope half %x, %pos theta(5.0e+05) scaling(#tfm.rope_scaling<llama3, factor = 8.0, low_freq_factor = 1.0, high_freq_factor = 4.0, original_max_positions = 8192>) : (tensor<1x8x16x64xf32>, tensor<16xi32>) -> tensor<1x8x16x64xf32>
  return %a, %b : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>
}

// CHECK-LABEL: func.func @heads_and_embedding
func.func @heads_and_embedding(%ids: tensor<?x?xi32>, %table: tensor<1000x64xf32>)
    -> tensor<?x?x64xf32> {
  // CHECK: tfm.embedding %{{.+}}, %{{.+}} : (tensor<?x?xi32>, tensor<1000x64xf32>) -> tensor<?x?x64xf32>
  %e = tfm.embedding %ids, %table : (tensor<?x?xi32>, tensor<1000x64xf32>) -> tensor<?x?x64xf32>
  // CHECK: tfm.split_heads %{{.+}} : tensor<?x?x64xf32> -> tensor<?x4x?x16xf32>
  %h = tfm.split_heads %e : tensor<?x?x64xf32> -> tensor<?x4x?x16xf32>
  // CHECK: tfm.merge_heads %{{.+}} : tensor<?x4x?x16xf32> -> tensor<?x?x64xf32>
  %m = tfm.merge_heads %h : tensor<?x4x?x16xf32> -> tensor<?x?x64xf32>
  return %m : tensor<?x?x64xf32>
}

// CHECK-LABEL: func.func @self_attention_gqa_rope
func.func @self_attention_gqa_rope(%x: tensor<1x16x64xf32>, %wq: tensor<64x64xf32>,
                                   %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>,
                                   %wo: tensor<64x64xf32>, %pos: tensor<16xi32>,
                                   %lengths: tensor<1xi32>) -> tensor<1x16x64xf32> {
  // CHECK: tfm.self_attention %{{.+}} heads(8, 2) q(%{{.+}}) k(%{{.+}}) v(%{{.+}}) o(%{{.+}}) positions(%{{.+}}) kv_lengths(%{{.+}}) {mask = #tfm.mask<causal>, rope = #tfm.rope<theta = 1.000000e+04, style = half>}
  %y = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo) positions(%pos) kv_lengths(%lengths)
      {mask = #tfm.mask<causal>, rope = #tfm.rope<theta = 1.0e+04, style = half>}
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>,
         tensor<64x64xf32>, tensor<16xi32>, tensor<1xi32>) -> tensor<1x16x64xf32>
  // Llama 3's scaled frequencies.
  // CHECK: rope = #tfm.rope<theta = 5.000000e+05, style = half, scaling = #tfm.rope_scaling<llama3, factor = 3.200000e+01, low_freq_factor = 1.000000e+00, high_freq_factor = 4.000000e+00, original_max_positions = 8192>>
  %z = tfm.self_attention %y heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo) positions(%pos)
      {mask = #tfm.mask<causal>, rope = #tfm.rope<theta = 5.0e+05, style = half, scaling = #tfm.rope_scaling<llama3, factor = 32.0, low_freq_factor = 1.0, high_freq_factor = 4.0, original_max_positions = 8192>>}
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>,
         tensor<64x64xf32>, tensor<16xi32>) -> tensor<1x16x64xf32>
  return %z : tensor<1x16x64xf32>
}

// CHECK-LABEL: func.func @self_attention_mha_biases
func.func @self_attention_mha_biases(%x: tensor<?x?x32xf32>, %w: tensor<32x32xf32>,
                                     %b: tensor<32xf32>) -> tensor<?x?x32xf32> {
  // CHECK: tfm.self_attention %{{.+}} heads(4, 4) q(%{{.+}}, %{{.+}}) k(%{{.+}}, %{{.+}}) v(%{{.+}}, %{{.+}}) o(%{{.+}}, %{{.+}}) {mask = #tfm.mask<causal>}
  %y = tfm.self_attention %x heads(4, 4) q(%w, %b) k(%w, %b) v(%w, %b) o(%w, %b)
      {mask = #tfm.mask<causal>}
      : (tensor<?x?x32xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<32x32xf32>, tensor<32xf32>,
         tensor<32x32xf32>, tensor<32xf32>, tensor<32x32xf32>, tensor<32xf32>) -> tensor<?x?x32xf32>
  return %y : tensor<?x?x32xf32>
}

// CHECK-LABEL: func.func @decoder_block_pre_rms_swiglu
func.func @decoder_block_pre_rms_swiglu(%x: tensor<1x16x64xf32>, %g: tensor<64xf32>,
                                        %wq: tensor<64x64xf32>, %wkv: tensor<16x64xf32>,
                                        %wo: tensor<64x64xf32>, %wg: tensor<172x64xf32>,
                                        %wu: tensor<172x64xf32>, %wd: tensor<64x172xf32>,
                                        %pos: tensor<16xi32>) -> tensor<1x16x64xf32> {
  // CHECK: tfm.decoder_block pre rms_norm %{{.+}} heads(8, 2) eps(9.99999974E-6) attn_norm(%{{.+}}) q(%{{.+}}) k(%{{.+}}) v(%{{.+}}) o(%{{.+}}) ffn_norm(%{{.+}}) swiglu gate(%{{.+}}) up(%{{.+}}) down(%{{.+}}) positions(%{{.+}}) {mask = #tfm.mask<sliding_window<8>>, rope = #tfm.rope<theta = 5.000000e+05, style = interleaved>}
  %y = tfm.decoder_block pre rms_norm %x heads(8, 2) eps(1.0e-05)
      attn_norm(%g) q(%wq) k(%wkv) v(%wkv) o(%wo)
      ffn_norm(%g) swiglu gate(%wg) up(%wu) down(%wd) positions(%pos)
      {mask = #tfm.mask<sliding_window<8>>, rope = #tfm.rope<theta = 5.0e+05, style = interleaved>}
      : (tensor<1x16x64xf32>, tensor<64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
         tensor<16x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<172x64xf32>,
         tensor<172x64xf32>, tensor<64x172xf32>, tensor<16xi32>) -> tensor<1x16x64xf32>
  return %y : tensor<1x16x64xf32>
}

// CHECK-LABEL: func.func @decoder_block_post_layer_norm_gelu
func.func @decoder_block_post_layer_norm_gelu(%x: tensor<2x?x32xf16>, %g: tensor<32xf16>,
                                              %w: tensor<32x32xf16>, %b: tensor<32xf16>,
                                              %wu: tensor<128x32xf16>, %bu: tensor<128xf16>,
                                              %wd: tensor<32x128xf16>, %wd_k: tensor<16x32xf16>,
                                              %lengths: tensor<2xi64>)
    -> tensor<2x?x32xf16> {
  // CHECK: tfm.decoder_block post layer_norm %{{.+}} heads(2, 1) eps(9.99999974E-6) attn_norm(%{{.+}}, %{{.+}}) q(%{{.+}}, %{{.+}}) k(%{{.+}}) v(%{{.+}}) o(%{{.+}}, %{{.+}}) ffn_norm(%{{.+}}, %{{.+}}) gelu up(%{{.+}}, %{{.+}}) down(%{{.+}}, %{{.+}}) kv_lengths(%{{.+}})
  %y = tfm.decoder_block post layer_norm %x heads(2, 1) eps(1.0e-05)
      attn_norm(%g, %b) q(%w, %b) k(%wd_k) v(%wd_k) o(%w, %b)
      ffn_norm(%g, %b) gelu up(%wu, %bu) down(%wd, %b) kv_lengths(%lengths)
      : (tensor<2x?x32xf16>, tensor<32xf16>, tensor<32xf16>, tensor<32x32xf16>, tensor<32xf16>,
         tensor<16x32xf16>, tensor<16x32xf16>, tensor<32x32xf16>, tensor<32xf16>,
         tensor<32xf16>, tensor<32xf16>, tensor<128x32xf16>, tensor<128xf16>,
         tensor<32x128xf16>, tensor<32xf16>, tensor<2xi64>) -> tensor<2x?x32xf16>
  return %y : tensor<2x?x32xf16>
}

// The tile-level step: inputs keep their element types, the state is f32,
// and the body may read values from above.
// CHECK-LABEL: func.func @online_attention_step
func.func @online_attention_step(%q: tensor<8x64xbf16>, %k: tensor<32x64xbf16>,
                                 %v: tensor<32x48xbf16>, %m: tensor<8xf32>,
                                 %l: tensor<8xf32>, %acc: tensor<8x48xf32>,
                                 %end: index)
    -> (tensor<8xf32>, tensor<8xf32>, tensor<8x48xf32>) {
  %scale = arith.constant 0.125 : f32
  %hidden = arith.constant 0xFF800000 : f32
  // CHECK: %{{.+}}, %{{.+}}, %{{.+}} = tfm.online_attention ins(%{{.+}}, %{{.+}}, %{{.+}} : tensor<8x64xbf16>, tensor<32x64xbf16>, tensor<32x48xbf16>) outs(%{{.+}}, %{{.+}}, %{{.+}} : tensor<8xf32>, tensor<8xf32>, tensor<8x48xf32>) {
  // CHECK: ^bb0(%{{.+}}: f32, %{{.+}}: index, %{{.+}}: index):
  // CHECK:   tfm.yield %{{.+}} : f32
  // CHECK: } -> tensor<8xf32>, tensor<8xf32>, tensor<8x48xf32>
  %r:3 = tfm.online_attention
      ins(%q, %k, %v : tensor<8x64xbf16>, tensor<32x64xbf16>, tensor<32x48xbf16>)
      outs(%m, %l, %acc : tensor<8xf32>, tensor<8xf32>, tensor<8x48xf32>) {
  ^bb0(%dot: f32, %row: index, %key: index):
    %s = arith.mulf %dot, %scale : f32
    %visible = arith.cmpi slt, %key, %end : index
    %masked = arith.select %visible, %s, %hidden : f32
    tfm.yield %masked : f32
  } -> tensor<8xf32>, tensor<8xf32>, tensor<8x48xf32>
  return %r#0, %r#1, %r#2 : tensor<8xf32>, tensor<8xf32>, tensor<8x48xf32>
}

// Dynamic rows and keys (a tile of TilingInterface's making).
// CHECK-LABEL: func.func @online_attention_dynamic
func.func @online_attention_dynamic(%q: tensor<?x16xf32>, %k: tensor<?x16xf32>,
                                    %v: tensor<?x16xf32>, %m: tensor<?xf32>,
                                    %l: tensor<?xf32>, %acc: tensor<?x16xf32>)
    -> tensor<?x16xf32> {
  // CHECK: tfm.online_attention
  %r:3 = tfm.online_attention
      ins(%q, %k, %v : tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>)
      outs(%m, %l, %acc : tensor<?xf32>, tensor<?xf32>, tensor<?x16xf32>) {
  ^bb0(%dot: f32, %row: index, %key: index):
    tfm.yield %dot : f32
  } -> tensor<?xf32>, tensor<?xf32>, tensor<?x16xf32>
  return %r#2 : tensor<?x16xf32>
}

// CHECK-LABEL: func.func @buffer_attention
func.func @buffer_attention(%q: memref<?x8x?x64xbf16>,
    %k: memref<?x2x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>,
    %v: memref<?x2x?x64xbf16>, %o: memref<?x8x?x64xbf16>) {
  // CHECK: tfm.buffer_attention %{{.+}}, %{{.+}}, %{{.+}} into %{{.+}} {mask = #tfm.mask<causal>, softcap = 3.000000e+01 : f32} : memref<?x8x?x64xbf16>, memref<?x2x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x2x?x64xbf16> into memref<?x8x?x64xbf16>
  tfm.buffer_attention %q, %k, %v into %o {mask = #tfm.mask<causal>, softcap = 30.0 : f32}
      : memref<?x8x?x64xbf16>, memref<?x2x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>,
        memref<?x2x?x64xbf16> into memref<?x8x?x64xbf16>
  return
}

// CHECK-LABEL: func.func @buffer_attention_kv_lengths
func.func @buffer_attention_kv_lengths(%q: memref<3x4x1x128xf16>, %k: memref<3x1x100x128xf16>,
    %v: memref<3x1x100x128xf16>, %lengths: memref<3xi32>, %o: memref<3x4x1x128xf16>) {
  // CHECK: tfm.buffer_attention %{{.+}}, %{{.+}}, %{{.+}} kv_lengths(%{{.+}} : memref<3xi32>) into %{{.+}} {scale = 5.000000e-01 : f32} : memref<3x4x1x128xf16>, memref<3x1x100x128xf16>, memref<3x1x100x128xf16> into memref<3x4x1x128xf16>
  tfm.buffer_attention %q, %k, %v kv_lengths(%lengths : memref<3xi32>) into %o {scale = 0.5 : f32}
      : memref<3x4x1x128xf16>, memref<3x1x100x128xf16>, memref<3x1x100x128xf16>
        into memref<3x4x1x128xf16>
  return
}

// CHECK-LABEL: func.func @fused_projections
func.func @fused_projections(%x: tensor<?x64xf32>, %wg: tensor<128x64xf32>,
    %wu: tensor<128x64xf32>, %init: tensor<?x128xf32>) -> tensor<?x128xf32> {
  // CHECK: %[[H:.+]] = tfm.fused_projections -> tensor<?x128xf32> {
  // CHECK: linalg.matmul
  // CHECK: linalg.matmul
  // CHECK: %[[S:.+]] = arith.addf
  // CHECK: tfm.yield %[[S]] : tensor<?x128xf32>
  // CHECK-NEXT: }
  // CHECK: return %[[H]]
  %h = tfm.fused_projections -> tensor<?x128xf32> {
    %g = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                        affine_map<(m, n, k) -> (n, k)>,
                                        affine_map<(m, n, k) -> (m, n)>]
        ins(%x, %wg : tensor<?x64xf32>, tensor<128x64xf32>)
        outs(%init : tensor<?x128xf32>) -> tensor<?x128xf32>
    %u = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                        affine_map<(m, n, k) -> (n, k)>,
                                        affine_map<(m, n, k) -> (m, n)>]
        ins(%x, %wu : tensor<?x64xf32>, tensor<128x64xf32>)
        outs(%init : tensor<?x128xf32>) -> tensor<?x128xf32>
    %s = arith.addf %g, %u : tensor<?x128xf32>
    tfm.yield %s : tensor<?x128xf32>
  }
  return %h : tensor<?x128xf32>
}

// A region with no results: its terminator is implicit.
// CHECK-LABEL: func.func @fused_projections_no_results
// CHECK: tfm.fused_projections {
// CHECK-NEXT: }
func.func @fused_projections_no_results() {
  tfm.fused_projections {
  }
  return
}

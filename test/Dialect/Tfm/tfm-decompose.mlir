// RUN: tfm-opt %s --tfm-decompose --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @self_attention_gqa_rope
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x16x64xf32>, %[[WQ:[^:]+]]: tensor<64x64xf32>, %[[WK:[^:]+]]: tensor<16x64xf32>, %[[WV:[^:]+]]: tensor<16x64xf32>, %[[WO:[^:]+]]: tensor<64x64xf32>, %[[POS:[^:]+]]: tensor<16xi32>, %[[LEN:[^:]+]]: tensor<1xi32>)
// CHECK-NOT: tfm.self_attention
// CHECK-DAG: %[[Q:.+]] = tfm.linear %[[X]], %[[WQ]] : {{.+}} -> tensor<1x16x64xf32>
// CHECK-DAG: %[[K:.+]] = tfm.linear %[[X]], %[[WK]] : {{.+}} -> tensor<1x16x16xf32>
// CHECK-DAG: %[[V:.+]] = tfm.linear %[[X]], %[[WV]] : {{.+}} -> tensor<1x16x16xf32>
// CHECK-DAG: %[[QH:.+]] = tfm.split_heads %[[Q]] : tensor<1x16x64xf32> -> tensor<1x8x16x8xf32>
// CHECK-DAG: %[[KH:.+]] = tfm.split_heads %[[K]] : tensor<1x16x16xf32> -> tensor<1x2x16x8xf32>
// CHECK-DAG: %[[VH:.+]] = tfm.split_heads %[[V]] : tensor<1x16x16xf32> -> tensor<1x2x16x8xf32>
// CHECK-DAG: %[[QR:.+]] = tfm.rope half %[[QH]], %[[POS]] theta(1.000000e+04)
// CHECK-DAG: %[[KR:.+]] = tfm.rope half %[[KH]], %[[POS]] theta(1.000000e+04)
// CHECK: %[[O:.+]] = tfm.attention %[[QR]], %[[KR]], %[[VH]] kv_lengths(%[[LEN]]) {mask = #tfm.mask<causal>} : {{.+}} -> tensor<1x8x16x8xf32>
// CHECK: %[[M:.+]] = tfm.merge_heads %[[O]] : tensor<1x8x16x8xf32> -> tensor<1x16x64xf32>
// CHECK: %[[Y:.+]] = tfm.linear %[[M]], %[[WO]] : {{.+}} -> tensor<1x16x64xf32>
// CHECK: return %[[Y]]
func.func @self_attention_gqa_rope(%x: tensor<1x16x64xf32>, %wq: tensor<64x64xf32>,
                                   %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>,
                                   %wo: tensor<64x64xf32>, %pos: tensor<16xi32>,
                                   %lengths: tensor<1xi32>) -> tensor<1x16x64xf32> {
  %y = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo) positions(%pos) kv_lengths(%lengths)
      {mask = #tfm.mask<causal>, rope = #tfm.rope<theta = 1.0e+04, style = half>}
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>,
         tensor<64x64xf32>, tensor<16xi32>, tensor<1xi32>) -> tensor<1x16x64xf32>
  return %y : tensor<1x16x64xf32>
}

// -----

// Biases go to their projections; no rope without the attribute; dynamic
// batch and length carry through.
// CHECK-LABEL: func.func @self_attention_biases_dynamic
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x?x32xf32>, %[[W:[^:]+]]: tensor<32x32xf32>, %[[B:[^:]+]]: tensor<32xf32>)
// CHECK-NOT: tfm.rope
// CHECK-COUNT-3: tfm.linear %[[X]], %[[W]], %[[B]] : (tensor<?x?x32xf32>, tensor<32x32xf32>, tensor<32xf32>) -> tensor<?x?x32xf32>
// CHECK: tfm.attention {{.+}} : (tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32>) -> tensor<?x4x?x8xf32>
// CHECK-NOT: mask =
// CHECK: %[[M:.+]] = tfm.merge_heads
// CHECK: tfm.linear %[[M]], %[[W]], %[[B]]
func.func @self_attention_biases_dynamic(%x: tensor<?x?x32xf32>, %w: tensor<32x32xf32>,
                                         %b: tensor<32xf32>) -> tensor<?x?x32xf32> {
  %y = tfm.self_attention %x heads(4, 4) q(%w, %b) k(%w, %b) v(%w, %b) o(%w, %b)
      : (tensor<?x?x32xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<32x32xf32>, tensor<32xf32>,
         tensor<32x32xf32>, tensor<32xf32>, tensor<32x32xf32>, tensor<32xf32>) -> tensor<?x?x32xf32>
  return %y : tensor<?x?x32xf32>
}

// -----

// Pre-norm: h = x + Attn(Norm1(x)); y = h + FFN(Norm2(h)).
// CHECK-LABEL: func.func @decoder_block_pre_rms_swiglu
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x16x64xf32>, %[[G1:[^:]+]]: tensor<64xf32>, %[[G2:[^:]+]]: tensor<64xf32>
// CHECK-NOT: tfm.decoder_block
// CHECK-NOT: tfm.self_attention
// CHECK: %[[N1:.+]] = tfm.rms_norm %[[X]], %[[G1]] eps(9.99999974E-6)
// CHECK: tfm.linear %[[N1]]
// CHECK: tfm.attention {{.+}} {mask = #tfm.mask<sliding_window<8>>}
// CHECK: %[[A:.+]] = tfm.linear
// CHECK: %[[H:.+]] = arith.addf %[[X]], %[[A]] : tensor<1x16x64xf32>
// CHECK: %[[N2:.+]] = tfm.rms_norm %[[H]], %[[G2]] eps(9.99999974E-6)
// CHECK: %[[F:.+]] = tfm.ffn swiglu %[[N2]] gate({{.+}}) up({{.+}}) down({{.+}})
// CHECK: %[[Y:.+]] = arith.addf %[[H]], %[[F]] : tensor<1x16x64xf32>
// CHECK: return %[[Y]]
func.func @decoder_block_pre_rms_swiglu(%x: tensor<1x16x64xf32>, %g1: tensor<64xf32>, %g2: tensor<64xf32>,
                                        %wq: tensor<64x64xf32>, %wkv: tensor<16x64xf32>,
                                        %wo: tensor<64x64xf32>, %wg: tensor<172x64xf32>,
                                        %wu: tensor<172x64xf32>, %wd: tensor<64x172xf32>,
                                        %pos: tensor<16xi32>) -> tensor<1x16x64xf32> {
  %y = tfm.decoder_block pre rms_norm %x heads(8, 2) eps(1.0e-05)
      attn_norm(%g1) q(%wq) k(%wkv) v(%wkv) o(%wo)
      ffn_norm(%g2) swiglu gate(%wg) up(%wu) down(%wd) positions(%pos)
      {mask = #tfm.mask<sliding_window<8>>, rope = #tfm.rope<theta = 1.0e+04, style = interleaved>}
      : (tensor<1x16x64xf32>, tensor<64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
         tensor<16x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<172x64xf32>,
         tensor<172x64xf32>, tensor<64x172xf32>, tensor<16xi32>) -> tensor<1x16x64xf32>
  return %y : tensor<1x16x64xf32>
}

// -----

// Post-norm: h = Norm1(x + Attn(x)); y = Norm2(h + FFN(h)).
// CHECK-LABEL: func.func @decoder_block_post_layer_norm_gelu
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x?x32xf32>, %[[G:[^:]+]]: tensor<32xf32>, %[[B:[^:]+]]: tensor<32xf32>
// CHECK-NOT: tfm.layer_norm %[[X]]
// CHECK: tfm.linear %[[X]]
// CHECK: tfm.attention {{.+}} kv_lengths
// CHECK: %[[A:.+]] = tfm.linear
// CHECK: %[[R1:.+]] = arith.addf %[[X]], %[[A]]
// CHECK: %[[H:.+]] = tfm.layer_norm %[[R1]], %[[G]], %[[B]] eps(9.99999974E-6)
// CHECK: %[[F:.+]] = tfm.ffn gelu %[[H]] up({{.+}}, {{.+}}) down({{.+}}, {{.+}})
// CHECK: %[[R2:.+]] = arith.addf %[[H]], %[[F]]
// CHECK: %[[Y:.+]] = tfm.layer_norm %[[R2]], %[[G]], %[[B]]
// CHECK: return %[[Y]]
func.func @decoder_block_post_layer_norm_gelu(%x: tensor<2x?x32xf32>, %g: tensor<32xf32>,
                                              %b: tensor<32xf32>, %w: tensor<32x32xf32>,
                                              %wkv: tensor<16x32xf32>, %wu: tensor<128x32xf32>,
                                              %bu: tensor<128xf32>, %wd: tensor<32x128xf32>,
                                              %lengths: tensor<2xi64>) -> tensor<2x?x32xf32> {
  %y = tfm.decoder_block post layer_norm %x heads(2, 1) eps(1.0e-05)
      attn_norm(%g, %b) q(%w, %b) k(%wkv) v(%wkv) o(%w, %b)
      ffn_norm(%g, %b) gelu up(%wu, %bu) down(%wd, %b) kv_lengths(%lengths)
      {mask = #tfm.mask<causal>}
      : (tensor<2x?x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x32xf32>, tensor<32xf32>,
         tensor<16x32xf32>, tensor<16x32xf32>, tensor<32x32xf32>, tensor<32xf32>,
         tensor<32xf32>, tensor<32xf32>, tensor<128x32xf32>, tensor<128xf32>,
         tensor<32x128xf32>, tensor<32xf32>, tensor<2xi64>) -> tensor<2x?x32xf32>
  return %y : tensor<2x?x32xf32>
}

// -----

// Primitive ops are left alone.
// CHECK-LABEL: func.func @primitives_untouched
// CHECK: tfm.attention
// CHECK: tfm.rms_norm
func.func @primitives_untouched(%q: tensor<1x1x4x8xf32>, %w: tensor<8xf32>) -> tensor<1x1x4x8xf32> {
  %o = tfm.attention %q, %q, %q : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  %n = tfm.rms_norm %o, %w eps(1.0e-06) : (tensor<1x1x4x8xf32>, tensor<8xf32>) -> tensor<1x1x4x8xf32>
  return %n : tensor<1x1x4x8xf32>
}

// A LLaMA-style pre-norm decoder block (RMSNorm, grouped-query attention with
// 8 query and 2 key/value heads, rotary embeddings, causal mask, SwiGLU FFN)
// on dynamic batch and sequence sizes. Parameters are function arguments, as
// they will be runtime inputs of the compiled model.
//
// Lower it with:  scripts/run-example.sh
// or by hand:     build/bin/tfm-opt examples/llama_block.mlir --tfm-decompose

func.func @llama_block(
    %x: tensor<?x?x256xf32>, %positions: tensor<?x?xi32>,
    %input_layernorm: tensor<256xf32>,
    %q_proj: tensor<256x256xf32>, %k_proj: tensor<64x256xf32>,
    %v_proj: tensor<64x256xf32>, %o_proj: tensor<256x256xf32>,
    %post_attention_layernorm: tensor<256xf32>,
    %gate_proj: tensor<688x256xf32>, %up_proj: tensor<688x256xf32>,
    %down_proj: tensor<256x688xf32>) -> tensor<?x?x256xf32> {
  %y = tfm.decoder_block pre rms_norm %x heads(8, 2) eps(1.0e-05)
      attn_norm(%input_layernorm)
      q(%q_proj) k(%k_proj) v(%v_proj) o(%o_proj)
      ffn_norm(%post_attention_layernorm)
      swiglu gate(%gate_proj) up(%up_proj) down(%down_proj)
      positions(%positions)
      {mask = #tfm.mask<causal>, rope = #tfm.rope<theta = 1.0e+04, style = half>}
      : (tensor<?x?x256xf32>, tensor<256xf32>, tensor<256x256xf32>,
         tensor<64x256xf32>, tensor<64x256xf32>, tensor<256x256xf32>,
         tensor<256xf32>, tensor<688x256xf32>, tensor<688x256xf32>,
         tensor<256x688xf32>, tensor<?x?xi32>) -> tensor<?x?x256xf32>
  return %y : tensor<?x?x256xf32>
}

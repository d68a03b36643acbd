// RUN: %mlir_opt %s --load-dialect-plugin=%tfm_libs/TfmPlugin%shlibext \
// RUN:   --load-pass-plugin=%tfm_libs/TfmPlugin%shlibext \
// RUN:   --pass-pipeline="builtin.module(tfm-decompose,canonicalize)" | FileCheck %s

// Stock mlir-opt runs tfm passes (and upstream ones on tfm IR) through the plugin.
// CHECK-LABEL: func.func @self_attention_through_plugin
// CHECK-NOT: tfm.self_attention
// CHECK: tfm.attention {{.+}} {mask = #tfm.mask<causal>}
// CHECK: tfm.merge_heads
func.func @self_attention_through_plugin(%x: tensor<1x16x64xf32>, %wq: tensor<64x64xf32>,
                                         %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>,
                                         %wo: tensor<64x64xf32>) -> tensor<1x16x64xf32> {
  %y = tfm.self_attention %x heads(8, 2) q(%wq) k(%wk) v(%wv) o(%wo) {mask = #tfm.mask<causal>}
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>,
         tensor<64x64xf32>) -> tensor<1x16x64xf32>
  return %y : tensor<1x16x64xf32>
}

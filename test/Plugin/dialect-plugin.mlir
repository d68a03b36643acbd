// RUN: %mlir_opt %s --load-dialect-plugin=%tfm_libs/TfmPlugin%shlibext | FileCheck %s

// Stock mlir-opt parses, verifies and prints tfm IR through the plugin.
// CHECK-LABEL: func.func @gqa_causal_through_plugin
// CHECK: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} {mask = #tfm.mask<causal>}
func.func @gqa_causal_through_plugin(%q: tensor<1x8x16x64xf32>, %k: tensor<1x2x16x64xf32>,
                                     %v: tensor<1x2x16x64xf32>) -> tensor<1x8x16x64xf32> {
  %o = tfm.attention %q, %k, %v {mask = #tfm.mask<causal>}
      : (tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>) -> tensor<1x8x16x64xf32>
  return %o : tensor<1x8x16x64xf32>
}

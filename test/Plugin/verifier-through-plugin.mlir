// RUN: not %mlir_opt %s --load-dialect-plugin=%tfm_libs/TfmPlugin%shlibext 2>&1 | FileCheck %s

// The plugin's verifiers run inside stock mlir-opt too.
// CHECK: error: 'tfm.attention' op expected key head count (3) to divide query head count (8)
func.func @gqa_bad_group_through_plugin(%q: tensor<1x8x4x16xf32>, %kv: tensor<1x3x4x16xf32>)
    -> tensor<1x8x4x16xf32> {
  %o = tfm.attention %q, %kv, %kv
      : (tensor<1x8x4x16xf32>, tensor<1x3x4x16xf32>, tensor<1x3x4x16xf32>) -> tensor<1x8x4x16xf32>
  return %o : tensor<1x8x4x16xf32>
}

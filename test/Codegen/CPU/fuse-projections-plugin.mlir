// RUN: %mlir_opt %s --load-dialect-plugin=%tfm_libs/TfmPlugin%shlibext \
// RUN:   --load-pass-plugin=%tfm_libs/TfmPlugin%shlibext \
// RUN:   --pass-pipeline='builtin.module(convert-tfm-to-linalg,canonicalize,func.func(tfm-cpu-fuse-projection-epilogues,tfm-cpu-fuse-viewed-epilogues,tfm-cpu-fuse-sibling-projections),canonicalize,cse)' \
// RUN:   | FileCheck %s
// mlir-opt cannot load an instrumented plugin (test/lit.cfg.py).
// UNSUPPORTED: asan

// The fusion passes and tfm.fused_projections in stock mlir-opt, through
// the plugin. Gate, up and silu(gate) * up form one group; as it reads the
// same rows as q, k and v, blocked alike, all four groups share one region
// (one parallel loop). down_proj reads the FFN's product: it stays apart.
// CHECK-LABEL: func.func @qkv_and_ffn
// CHECK: %[[R:.+]]:4 = tfm.fused_projections -> tensor<?x128xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x256xf32> {
// CHECK: math.exp
// CHECK: tfm.yield
// CHECK-NOT: tfm.fused_projections
// CHECK: linalg.generic {{.+}} ins(%[[R]]#3,
func.func @qkv_and_ffn(%x: tensor<?x?x64xf32>, %wq: tensor<128x64xf32>, %wk: tensor<64x64xf32>,
    %wv: tensor<64x64xf32>, %g: tensor<256x64xf32>, %u: tensor<256x64xf32>, %d: tensor<64x256xf32>)
    -> (tensor<?x?x128xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) {
  %q = tfm.linear %x, %wq : (tensor<?x?x64xf32>, tensor<128x64xf32>) -> tensor<?x?x128xf32>
  %k = tfm.linear %x, %wk : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
  %v = tfm.linear %x, %wv : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
  %y = tfm.ffn swiglu %x gate(%g) up(%u) down(%d) : (tensor<?x?x64xf32>, tensor<256x64xf32>, tensor<256x64xf32>, tensor<64x256xf32>) -> tensor<?x?x64xf32>
  return %q, %k, %v, %y : tensor<?x?x128xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>
}

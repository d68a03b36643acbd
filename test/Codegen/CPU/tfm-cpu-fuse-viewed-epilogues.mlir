// RUN: tfm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tfm-to-linalg,canonicalize,func.func(tfm-cpu-fuse-projection-epilogues,tfm-cpu-fuse-viewed-epilogues),canonicalize,cse)' | FileCheck %s
// RUN: tfm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tfm-to-linalg,canonicalize,func.func(tfm-cpu-fuse-viewed-epilogues),canonicalize,cse)' | FileCheck %s --check-prefix=ALONE
// RUN: not tfm-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tfm-cpu-fuse-viewed-epilogues{vector-width=0}))' 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: vector-width and register-rows must be positive, got vector-width=0 register-rows=8

// RoPE of a projection's 4 heads (head dim 64): the [M, 4, 2, 32] view of
// the projection's result, the slices of each pair's two members and the
// rotation join the projection in one region. The cos and sin tables (one
// row per token) are computed before it.
// CHECK-LABEL: func.func @rope
// CHECK-SAME: %[[X:[^:]+]]: tensor<?x?x64xf32>, %[[W:[^:]+]]: tensor<256x64xf32>
// CHECK: %[[TABLES:.+]]:2 = linalg.generic
// CHECK: %[[R:.+]] = tfm.fused_projections -> tensor<?x4x2x32xf32> {
// CHECK-NEXT: %[[P:.+]] = linalg.generic {{.+}} ins(%{{.+}}, %[[W]] :
// CHECK-NEXT: ^bb0
// CHECK: %[[V:.+]] = tensor.expand_shape %[[P]] {{\[\[}}0], [1, 2, 3]]
// CHECK-NEXT: %[[LO:.+]] = tensor.extract_slice %[[V]][0, 0, 0, 0]
// CHECK-NEXT: %[[HI:.+]] = tensor.extract_slice %[[V]][0, 0, 1, 0]
// CHECK-NEXT: %[[ROT:.+]] = linalg.generic {{.+}} ins(%[[LO]], %[[HI]], %[[TABLES]]#0, %[[TABLES]]#1 :
// CHECK: tfm.yield %[[ROT]] : tensor<?x4x2x32xf32>
// CHECK-NEXT: }
// CHECK-NEXT: tensor.collapse_shape %[[R]]
// ALONE-LABEL: func.func @rope
// ALONE: tfm.fused_projections -> tensor<?x4x2x32xf32>
func.func @rope(%x: tensor<?x?x64xf32>, %w: tensor<256x64xf32>, %pos: tensor<?x?xi32>) -> tensor<?x4x?x64xf32> {
  %p = tfm.linear %x, %w : (tensor<?x?x64xf32>, tensor<256x64xf32>) -> tensor<?x?x256xf32>
  %h = tfm.split_heads %p : tensor<?x?x256xf32> -> tensor<?x4x?x64xf32>
  %r = tfm.rope half %h, %pos theta(1.0e+04) : (tensor<?x4x?x64xf32>, tensor<?x?xi32>) -> tensor<?x4x?x64xf32>
  return %r : tensor<?x4x?x64xf32>
}

// -----

// The rotation reads the projection through its bias: it joins the region
// that tfm-cpu-fuse-projection-epilogues formed of the projection and the
// bias. Without that pass, the bias stands between them and nothing is
// fused.
// CHECK-LABEL: func.func @bias_then_rope
// CHECK: tfm.fused_projections -> tensor<?x4x2x32xf32> {
// CHECK-NEXT: %[[P:.+]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: %[[B:.+]] = linalg.generic {{.+}} ins(%[[P]], %{{.+}} : tensor<?x256xf32>, tensor<256xf32>)
// CHECK: tensor.expand_shape %[[B]]
// CHECK: tfm.yield
// ALONE-LABEL: func.func @bias_then_rope
// ALONE-NOT: tfm.fused_projections
// ALONE: return
func.func @bias_then_rope(%x: tensor<?x?x64xf32>, %w: tensor<256x64xf32>, %b: tensor<256xf32>, %pos: tensor<?x?xi32>) -> tensor<?x4x?x64xf32> {
  %p = tfm.linear %x, %w, %b : (tensor<?x?x64xf32>, tensor<256x64xf32>, tensor<256xf32>) -> tensor<?x?x256xf32>
  %h = tfm.split_heads %p : tensor<?x?x256xf32> -> tensor<?x4x?x64xf32>
  %r = tfm.rope half %h, %pos theta(1.0e+04) : (tensor<?x4x?x64xf32>, tensor<?x?xi32>) -> tensor<?x4x?x64xf32>
  return %r : tensor<?x4x?x64xf32>
}

// -----

// 3 heads of 20 columns: 60 columns leave a tail of 28 past a 32-column
// register block, and column blocks of whole heads cannot cover them. The
// rotation stays apart.
// CHECK-LABEL: func.func @column_tail
// CHECK-NOT: tfm.fused_projections
// CHECK: return
func.func @column_tail(%x: tensor<?x?x64xf32>, %w: tensor<60x64xf32>, %pos: tensor<?x?xi32>) -> tensor<?x3x?x20xf32> {
  %p = tfm.linear %x, %w : (tensor<?x?x64xf32>, tensor<60x64xf32>) -> tensor<?x?x60xf32>
  %h = tfm.split_heads %p : tensor<?x?x60xf32> -> tensor<?x3x?x20xf32>
  %r = tfm.rope half %h, %pos theta(1.0e+04) : (tensor<?x3x?x20xf32>, tensor<?x?xi32>) -> tensor<?x3x?x20xf32>
  return %r : tensor<?x3x?x20xf32>
}

// RUN: tfm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tfm-to-linalg,canonicalize,func.func(tfm-cpu-fuse-projection-epilogues,tfm-cpu-fuse-viewed-epilogues,tfm-cpu-fuse-sibling-projections),canonicalize,cse)' | FileCheck %s
// RUN: tfm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tfm-to-linalg,canonicalize,func.func(tfm-cpu-fuse-sibling-projections),canonicalize,cse)' | FileCheck %s --check-prefix=ALONE
// RUN: not tfm-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tfm-cpu-fuse-sibling-projections{register-rows=0}))' 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: vector-width and register-rows must be positive, got vector-width=16 register-rows=0

// q, k and v of the same rows, blocked alike (32-column register blocks,
// 64-step panels, no column tail): one region, which yields the three
// results; their weights stay three operands.
// CHECK-LABEL: func.func @qkv
// CHECK-SAME: %[[X:[^:]+]]: tensor<?x?x64xf32>, %[[WQ:[^:]+]]: tensor<128x64xf32>, %[[WK:[^:]+]]: tensor<64x64xf32>, %[[WV:[^:]+]]: tensor<64x64xf32>
// CHECK: %[[ROWS:.+]] = tensor.collapse_shape %[[X]]
// CHECK: %[[R:.+]]:3 = tfm.fused_projections -> tensor<?x128xf32>, tensor<?x64xf32>, tensor<?x64xf32> {
// CHECK-NEXT: %[[Q:.+]] = linalg.generic {{.+}} ins(%[[ROWS]], %[[WQ]] :
// CHECK: %[[K:.+]] = linalg.generic {{.+}} ins(%[[ROWS]], %[[WK]] :
// CHECK: %[[V:.+]] = linalg.generic {{.+}} ins(%[[ROWS]], %[[WV]] :
// CHECK: tfm.yield %[[Q]], %[[K]], %[[V]]
// CHECK: tensor.expand_shape %[[R]]#0
// CHECK: tensor.expand_shape %[[R]]#1
// CHECK: tensor.expand_shape %[[R]]#2
func.func @qkv(%x: tensor<?x?x64xf32>, %wq: tensor<128x64xf32>, %wk: tensor<64x64xf32>, %wv: tensor<64x64xf32>) -> (tensor<?x?x128xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) {
  %q = tfm.linear %x, %wq : (tensor<?x?x64xf32>, tensor<128x64xf32>) -> tensor<?x?x128xf32>
  %k = tfm.linear %x, %wk : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
  %v = tfm.linear %x, %wv : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
  return %q, %k, %v : tensor<?x?x128xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>
}

// -----

// q and k with RoPE in their regions (tfm-cpu-fuse-viewed-epilogues), and
// v: the regions merge into one, which yields the rotated q and k and v.
// The sibling pass alone merges the three projections, the rotations
// outside.
// CHECK-LABEL: func.func @qk_rope_v
// CHECK: tfm.fused_projections -> tensor<?x2x2x32xf32>, tensor<?x1x2x32xf32>, tensor<?x64xf32> {
// CHECK-COUNT-2: tensor.expand_shape
// CHECK: tfm.yield
// CHECK-NOT: tfm.fused_projections
// CHECK: return
// ALONE-LABEL: func.func @qk_rope_v
// ALONE: tfm.fused_projections -> tensor<?x128xf32>, tensor<?x64xf32>, tensor<?x64xf32> {
// ALONE-NOT: tensor.expand_shape
// ALONE: tfm.yield
func.func @qk_rope_v(%x: tensor<?x?x64xf32>, %wq: tensor<128x64xf32>, %wk: tensor<64x64xf32>, %wv: tensor<64x64xf32>, %pos: tensor<?x?xi32>) -> (tensor<?x2x?x64xf32>, tensor<?x1x?x64xf32>, tensor<?x?x64xf32>) {
  %q = tfm.linear %x, %wq : (tensor<?x?x64xf32>, tensor<128x64xf32>) -> tensor<?x?x128xf32>
  %qh = tfm.split_heads %q : tensor<?x?x128xf32> -> tensor<?x2x?x64xf32>
  %qr = tfm.rope half %qh, %pos theta(1.0e+04) : (tensor<?x2x?x64xf32>, tensor<?x?xi32>) -> tensor<?x2x?x64xf32>
  %k = tfm.linear %x, %wk : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
  %kh = tfm.split_heads %k : tensor<?x?x64xf32> -> tensor<?x1x?x64xf32>
  %kr = tfm.rope half %kh, %pos theta(1.0e+04) : (tensor<?x1x?x64xf32>, tensor<?x?xi32>) -> tensor<?x1x?x64xf32>
  %v = tfm.linear %x, %wv : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
  return %qr, %kr, %v : tensor<?x2x?x64xf32>, tensor<?x1x?x64xf32>, tensor<?x?x64xf32>
}

// -----

// Projections of different rows are no siblings.
// CHECK-LABEL: func.func @other_rows
// CHECK-NOT: tfm.fused_projections
// CHECK: return
func.func @other_rows(%x: tensor<?x64xf32>, %y: tensor<?x64xf32>, %wq: tensor<128x64xf32>, %wk: tensor<64x64xf32>) -> (tensor<?x128xf32>, tensor<?x64xf32>) {
  %q = tfm.linear %x, %wq : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
  %k = tfm.linear %y, %wk : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  return %q, %k : tensor<?x128xf32>, tensor<?x64xf32>
}

// -----

// 101 columns leave a tail past whole register blocks: no shared loop.
// CHECK-LABEL: func.func @column_tail
// CHECK-NOT: tfm.fused_projections
// CHECK: return
func.func @column_tail(%x: tensor<?x64xf32>, %wq: tensor<128x64xf32>, %wk: tensor<101x64xf32>) -> (tensor<?x128xf32>, tensor<?x101xf32>) {
  %q = tfm.linear %x, %wq : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
  %k = tfm.linear %x, %wk : (tensor<?x64xf32>, tensor<101x64xf32>) -> tensor<?x101xf32>
  return %q, %k : tensor<?x128xf32>, tensor<?x101xf32>
}

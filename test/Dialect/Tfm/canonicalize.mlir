// RUN: tfm-opt %s --canonicalize="test-convergence" --split-input-file | FileCheck %s

// A causal mask built as data becomes the structured attribute.
// CHECK-LABEL: func.func @causal_mask_folds_into_attribute
// CHECK-NOT: tfm.causal_mask
// CHECK: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} {mask = #tfm.mask<causal>} : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32>
func.func @causal_mask_folds_into_attribute(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>,
                                            %v: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %m = tfm.causal_mask : tensor<8x8xi1>
  %o = tfm.attention %q, %k, %v dense_mask(%m)
      : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<8x8xi1>) -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

// A sliding window intersected with an existing causal attribute is the window.
// CHECK-LABEL: func.func @sliding_window_mask_intersects_causal
// CHECK-NOT: tfm.sliding_window_mask
// CHECK: tfm.attention {{.+}} {mask = #tfm.mask<sliding_window<3>>}
func.func @sliding_window_mask_intersects_causal(%q: tensor<1x4x5x16xf32>, %k: tensor<1x4x9x16xf32>,
                                                 %v: tensor<1x4x9x16xf32>) -> tensor<1x4x5x16xf32> {
  %m = tfm.sliding_window_mask window(3) : tensor<5x9xi1>
  %o = tfm.attention %q, %k, %v dense_mask(%m) {mask = #tfm.mask<causal>}
      : (tensor<1x4x5x16xf32>, tensor<1x4x9x16xf32>, tensor<1x4x9x16xf32>, tensor<5x9xi1>) -> tensor<1x4x5x16xf32>
  return %o : tensor<1x4x5x16xf32>
}

// -----

// A causal mask intersected with a band keeps the band's left extent.
// CHECK-LABEL: func.func @causal_mask_intersects_band
// CHECK: tfm.attention {{.+}} {mask = #tfm.mask<sliding_window<3>>}
func.func @causal_mask_intersects_band(%q: tensor<1x1x6x8xf32>, %k: tensor<1x1x6x8xf32>,
                                       %v: tensor<1x1x6x8xf32>) -> tensor<1x1x6x8xf32> {
  %m = tfm.causal_mask : tensor<6x6xi1>
  %o = tfm.attention %q, %k, %v dense_mask(%m) {mask = #tfm.mask<band<2, 4>>}
      : (tensor<1x1x6x8xf32>, tensor<1x1x6x8xf32>, tensor<1x1x6x8xf32>, tensor<6x6xi1>) -> tensor<1x1x6x8xf32>
  return %o : tensor<1x1x6x8xf32>
}

// -----

// Dynamic mask sizes fold when they are the attention's own lengths.
// CHECK-LABEL: func.func @dynamic_causal_mask_folds
// CHECK-NOT: tfm.causal_mask
// CHECK: tfm.attention {{.+}} {mask = #tfm.mask<causal>} : (tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32>
func.func @dynamic_causal_mask_folds(%q: tensor<?x2x?x16xf32>, %k: tensor<?x2x?x16xf32>,
                                     %v: tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32> {
  %c2 = arith.constant 2 : index
  %sq = tensor.dim %q, %c2 : tensor<?x2x?x16xf32>
  %skv = tensor.dim %k, %c2 : tensor<?x2x?x16xf32>
  %m = tfm.causal_mask(%sq, %skv) : tensor<?x?xi1>
  %o = tfm.attention %q, %k, %v dense_mask(%m)
      : (tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x?xi1>) -> tensor<?x2x?x16xf32>
  return %o : tensor<?x2x?x16xf32>
}

// -----

// A mask whose sizes cannot be proven to be the attention's stays data: its
// bottom-right alignment could differ.
// CHECK-LABEL: func.func @unrelated_dynamic_mask_stays
// CHECK: %[[MASK:.+]] = tfm.causal_mask
// CHECK: tfm.attention {{.+}} dense_mask(%[[MASK]])
func.func @unrelated_dynamic_mask_stays(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>,
                                        %v: tensor<1x2x?x16xf32>, %n: index) -> tensor<1x2x?x16xf32> {
  %m = tfm.causal_mask(%n, %n) : tensor<?x?xi1>
  %o = tfm.attention %q, %k, %v dense_mask(%m)
      : (tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<?x?xi1>) -> tensor<1x2x?x16xf32>
  return %o : tensor<1x2x?x16xf32>
}

// -----

// A padding mask becomes the kv_lengths operand.
// CHECK-LABEL: func.func @padding_mask_becomes_kv_lengths
// CHECK-SAME: %{{.+}}: tensor<1x2x7x16xf32>, %{{.+}}: tensor<1x2x7x16xf32>, %{{.+}}: tensor<1x2x7x16xf32>, %[[LENGTHS:.+]]: tensor<1xi32>
// CHECK-NOT: tfm.padding_mask
// CHECK: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} kv_lengths(%[[LENGTHS]]) {mask = #tfm.mask<causal>}
func.func @padding_mask_becomes_kv_lengths(%q: tensor<1x2x7x16xf32>, %k: tensor<1x2x7x16xf32>,
                                           %v: tensor<1x2x7x16xf32>, %lengths: tensor<1xi32>)
    -> tensor<1x2x7x16xf32> {
  %m = tfm.padding_mask %lengths : tensor<1xi32> -> tensor<1x1x1x7xi1>
  %o = tfm.attention %q, %k, %v dense_mask(%m) {mask = #tfm.mask<causal>}
      : (tensor<1x2x7x16xf32>, tensor<1x2x7x16xf32>, tensor<1x2x7x16xf32>, tensor<1x1x1x7xi1>) -> tensor<1x2x7x16xf32>
  return %o : tensor<1x2x7x16xf32>
}

// -----

// Existing, different kv_lengths would need an elementwise min: no fold.
// CHECK-LABEL: func.func @padding_mask_with_other_lengths_stays
// CHECK: tfm.padding_mask
// CHECK: tfm.attention {{.+}} kv_lengths({{.+}}) dense_mask({{.+}})
func.func @padding_mask_with_other_lengths_stays(%q: tensor<2x2x7x16xf32>, %k: tensor<2x2x7x16xf32>,
                                                 %v: tensor<2x2x7x16xf32>, %a: tensor<2xi32>,
                                                 %b: tensor<2xi32>) -> tensor<2x2x7x16xf32> {
  %m = tfm.padding_mask %a : tensor<2xi32> -> tensor<2x1x1x7xi1>
  %o = tfm.attention %q, %k, %v kv_lengths(%b) dense_mask(%m)
      : (tensor<2x2x7x16xf32>, tensor<2x2x7x16xf32>, tensor<2x2x7x16xf32>, tensor<2xi32>, tensor<2x1x1x7xi1>) -> tensor<2x2x7x16xf32>
  return %o : tensor<2x2x7x16xf32>
}

// -----

// An all-true constant mask masks nothing.
// CHECK-LABEL: func.func @all_true_mask_is_dropped
// CHECK-NOT: dense_mask
// CHECK: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} : (tensor<1x1x3x8xf32>, tensor<1x1x3x8xf32>, tensor<1x1x3x8xf32>) -> tensor<1x1x3x8xf32>
func.func @all_true_mask_is_dropped(%q: tensor<1x1x3x8xf32>, %k: tensor<1x1x3x8xf32>,
                                    %v: tensor<1x1x3x8xf32>) -> tensor<1x1x3x8xf32> {
  %m = arith.constant dense<true> : tensor<3x3xi1>
  %o = tfm.attention %q, %k, %v dense_mask(%m)
      : (tensor<1x1x3x8xf32>, tensor<1x1x3x8xf32>, tensor<1x1x3x8xf32>, tensor<3x3xi1>) -> tensor<1x1x3x8xf32>
  return %o : tensor<1x1x3x8xf32>
}

// -----

// split_heads and merge_heads cancel.
// CHECK-LABEL: func.func @split_merge_heads_cancel
// CHECK-SAME: (%[[X:.+]]: tensor<2x7x64xf32>, %[[H:.+]]: tensor<2x4x7x16xf32>)
// CHECK-NOT: tfm.split_heads
// CHECK-NOT: tfm.merge_heads
// CHECK: return %[[X]], %[[H]]
func.func @split_merge_heads_cancel(%x: tensor<2x7x64xf32>, %h: tensor<2x4x7x16xf32>)
    -> (tensor<2x7x64xf32>, tensor<2x4x7x16xf32>) {
  %s = tfm.split_heads %x : tensor<2x7x64xf32> -> tensor<2x4x7x16xf32>
  %m = tfm.merge_heads %s : tensor<2x4x7x16xf32> -> tensor<2x7x64xf32>
  %m2 = tfm.merge_heads %h : tensor<2x4x7x16xf32> -> tensor<2x7x64xf32>
  %s2 = tfm.split_heads %m2 : tensor<2x7x64xf32> -> tensor<2x4x7x16xf32>
  return %m, %s2 : tensor<2x7x64xf32>, tensor<2x4x7x16xf32>
}

// RUN: tfm-opt %s --split-input-file --tfm-fuse-row-selection | FileCheck %s

// The last position's logits: the selection moves before the LM head and
// the final norm, onto the hidden rows.
// CHECK-LABEL: func.func @last_position_lm_head
// CHECK-SAME: (%[[H:.+]]: tensor<?x?x64xf32>, %[[G:.+]]: tensor<64xf32>, %[[W:.+]]: tensor<1000x64xf32>, %[[LAST:.+]]: index, %[[B:.+]]: index)
// CHECK: %[[ROWS:.+]] = tensor.extract_slice %[[H]][0, %[[LAST]], 0] [%[[B]], 1, 64] [1, 1, 1] : tensor<?x?x64xf32> to tensor<?x1x64xf32>
// CHECK: %[[N:.+]] = tfm.rms_norm %[[ROWS]], %[[G]] eps(9.99999974E-6) : (tensor<?x1x64xf32>, tensor<64xf32>) -> tensor<?x1x64xf32>
// CHECK: %[[L:.+]] = tfm.linear %[[N]], %[[W]] : (tensor<?x1x64xf32>, tensor<1000x64xf32>) -> tensor<?x1x1000xf32>
// CHECK: return %[[L]]
func.func @last_position_lm_head(%h: tensor<?x?x64xf32>, %g: tensor<64xf32>,
                                 %w: tensor<1000x64xf32>, %last: index,
                                 %b: index) -> tensor<?x1x1000xf32> {
  %n = tfm.rms_norm %h, %g eps(1.0e-05) : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  %l = tfm.linear %n, %w : (tensor<?x?x64xf32>, tensor<1000x64xf32>) -> tensor<?x?x1000xf32>
  %s = tensor.extract_slice %l[0, %last, 0] [%b, 1, 1000] [1, 1, 1] : tensor<?x?x1000xf32> to tensor<?x1x1000xf32>
  return %s : tensor<?x1x1000xf32>
}

// -----

// Through a residual add, an FFN and a LayerNorm, down to the embedding's
// ids. %x has two users that select the same rows: one slice serves both.
// CHECK-LABEL: func.func @through_residual_ffn_and_embedding
// CHECK-SAME: (%[[IDS:.+]]: tensor<2x9xi32>, %[[TABLE:.+]]: tensor<50x16xf32>, %[[G:.+]]: tensor<16xf32>, %[[B:.+]]: tensor<16xf32>, %[[UP:.+]]: tensor<32x16xf32>, %[[DOWN:.+]]: tensor<16x32xf32>)
// CHECK: %[[IDS_ROWS:.+]] = tensor.extract_slice %[[IDS]][0, 8] [2, 1] [1, 1] : tensor<2x9xi32> to tensor<2x1xi32>
// CHECK: %[[X:.+]] = tfm.embedding %[[IDS_ROWS]], %[[TABLE]] : (tensor<2x1xi32>, tensor<50x16xf32>) -> tensor<2x1x16xf32>
// CHECK: %[[N:.+]] = tfm.layer_norm %[[X]], %[[G]], %[[B]]
// CHECK-SAME: -> tensor<2x1x16xf32>
// CHECK: %[[F:.+]] = tfm.ffn relu %[[N]] up(%[[UP]]) down(%[[DOWN]])
// CHECK-SAME: -> tensor<2x1x16xf32>
// CHECK: %[[Y:.+]] = arith.addf %[[X]], %[[F]] : tensor<2x1x16xf32>
// CHECK: return %[[Y]]
func.func @through_residual_ffn_and_embedding(
    %ids: tensor<2x9xi32>, %table: tensor<50x16xf32>, %g: tensor<16xf32>,
    %bias: tensor<16xf32>, %up: tensor<32x16xf32>, %down: tensor<16x32xf32>)
    -> tensor<2x1x16xf32> {
  %x = tfm.embedding %ids, %table : (tensor<2x9xi32>, tensor<50x16xf32>) -> tensor<2x9x16xf32>
  %n = tfm.layer_norm %x, %g, %bias eps(1.0e-05) : (tensor<2x9x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x9x16xf32>
  %f = tfm.ffn relu %n up(%up) down(%down) : (tensor<2x9x16xf32>, tensor<32x16xf32>, tensor<16x32xf32>) -> tensor<2x9x16xf32>
  %y = arith.addf %x, %f : tensor<2x9x16xf32>
  %s = tensor.extract_slice %y[0, 8, 0] [2, 1, 16] [1, 1, 1] : tensor<2x9x16xf32> to tensor<2x1x16xf32>
  return %s : tensor<2x1x16xf32>
}

// -----

// A value that is also used whole stays whole: selecting before it would
// compute the op twice.
// CHECK-LABEL: func.func @other_user_stops
// CHECK: %[[N:.+]] = tfm.rms_norm %{{.+}} -> tensor<4x8x32xf32>
// CHECK: %[[L:.+]] = tfm.linear %[[N]], %{{.+}} -> tensor<4x8x10xf32>
// CHECK: %[[R:.+]] = tensor.extract_slice %[[N]][0, 7, 0] [4, 1, 32]
// CHECK: tfm.linear %[[R]]
// CHECK-SAME: -> tensor<4x1x10xf32>
func.func @other_user_stops(%x: tensor<4x8x32xf32>, %g: tensor<32xf32>,
                            %w: tensor<10x32xf32>, %v: tensor<10x32xf32>)
    -> (tensor<4x8x10xf32>, tensor<4x1x10xf32>) {
  %n = tfm.rms_norm %x, %g eps(1.0e-05) : (tensor<4x8x32xf32>, tensor<32xf32>) -> tensor<4x8x32xf32>
  %all = tfm.linear %n, %w : (tensor<4x8x32xf32>, tensor<10x32xf32>) -> tensor<4x8x10xf32>
  %l = tfm.linear %n, %v : (tensor<4x8x32xf32>, tensor<10x32xf32>) -> tensor<4x8x10xf32>
  %s = tensor.extract_slice %l[0, 7, 0] [4, 1, 10] [1, 1, 1] : tensor<4x8x10xf32> to tensor<4x1x10xf32>
  return %all, %s : tensor<4x8x10xf32>, tensor<4x1x10xf32>
}

// -----

// Rows mix in attention, and a slice of part of the last dim selects
// columns: both stay.
// CHECK-LABEL: func.func @attention_and_columns_stay
// CHECK: %[[A:.+]] = tfm.attention
// CHECK: tensor.extract_slice %[[A]][0, 0, 3, 0] [1, 2, 1, 8]
// CHECK: %[[L:.+]] = tfm.linear
// CHECK: tensor.extract_slice %[[L]][0, 0, 0] [1, 4, 5]
func.func @attention_and_columns_stay(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>,
                                      %v: tensor<1x2x4x8xf32>, %x: tensor<1x4x8xf32>,
                                      %w: tensor<10x8xf32>)
    -> (tensor<1x2x1x8xf32>, tensor<1x4x5xf32>) {
  %a = tfm.attention %q, %k, %v : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %s = tensor.extract_slice %a[0, 0, 3, 0] [1, 2, 1, 8] [1, 1, 1, 1] : tensor<1x2x4x8xf32> to tensor<1x2x1x8xf32>
  %l = tfm.linear %x, %w : (tensor<1x4x8xf32>, tensor<10x8xf32>) -> tensor<1x4x10xf32>
  %c = tensor.extract_slice %l[0, 0, 0] [1, 4, 5] [1, 1, 1] : tensor<1x4x10xf32> to tensor<1x4x5xf32>
  return %s, %c : tensor<1x2x1x8xf32>, tensor<1x4x5xf32>
}

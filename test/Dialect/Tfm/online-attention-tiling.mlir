// RUN: tfm-opt %s --transform-interpreter --canonicalize | FileCheck %s

// tfm.online_attention implements TilingInterface over its query rows:
// tiling by 4 slices the query rows and the running state, keeps the whole
// key and value tiles, and shifts the body's row index by the tile's offset.
// CHECK-LABEL: func.func @tile_rows
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<10x16xbf16>, %[[K:[^:]+]]: tensor<32x16xbf16>, %[[V:[^:]+]]: tensor<32x8xbf16>, %[[M:[^:]+]]: tensor<10xf32>, %[[L:[^:]+]]: tensor<10xf32>, %[[ACC:[^:]+]]: tensor<10x8xf32>)
// CHECK: scf.for %[[I:.+]] = %c0 to %c10 step %c4 iter_args(%[[M_IT:.+]] = %[[M]], %[[L_IT:.+]] = %[[L]], %[[ACC_IT:.+]] = %[[ACC]])
// CHECK:   %[[SIZE:.+]] = affine.min
// CHECK:   %[[QT:.+]] = tensor.extract_slice %[[Q]][%[[I]], 0] [%[[SIZE]], 16] [1, 1] : tensor<10x16xbf16> to tensor<?x16xbf16>
// CHECK:   %[[MT:.+]] = tensor.extract_slice %[[M_IT]][%[[I]]] [%[[SIZE]]] [1]
// CHECK:   %[[LT:.+]] = tensor.extract_slice %[[L_IT]][%[[I]]] [%[[SIZE]]] [1]
// CHECK:   %[[ACCT:.+]] = tensor.extract_slice %[[ACC_IT]][%[[I]], 0] [%[[SIZE]], 8] [1, 1]
// CHECK:   tfm.online_attention ins(%[[QT]], %[[K]], %[[V]] : tensor<?x16xbf16>, tensor<32x16xbf16>, tensor<32x8xbf16>) outs(%[[MT]], %[[LT]], %[[ACCT]] : tensor<?xf32>, tensor<?xf32>, tensor<?x8xf32>)
// CHECK:   ^bb0(%{{.+}}: f32, %[[ROW:.+]]: index, %[[KEY:.+]]: index):
// CHECK:     %[[SHIFTED:.+]] = arith.addi %[[ROW]], %[[I]] : index
// CHECK:     arith.cmpi sle, %[[KEY]], %[[SHIFTED]]
// CHECK:   tensor.insert_slice %{{.+}} into %{{.+}}[%[[I]]] [%[[SIZE]]] [1]
// CHECK:   tensor.insert_slice %{{.+}} into %{{.+}}[%[[I]]] [%[[SIZE]]] [1]
// CHECK:   tensor.insert_slice %{{.+}} into %{{.+}}[%[[I]], 0] [%[[SIZE]], 8] [1, 1]
func.func @tile_rows(%q: tensor<10x16xbf16>, %k: tensor<32x16xbf16>, %v: tensor<32x8xbf16>,
                     %m: tensor<10xf32>, %l: tensor<10xf32>, %acc: tensor<10x8xf32>) -> (tensor<10xf32>, tensor<10xf32>, tensor<10x8xf32>) {
  %hidden = arith.constant 0xFF800000 : f32
  %r:3 = tfm.online_attention
      ins(%q, %k, %v : tensor<10x16xbf16>, tensor<32x16xbf16>, tensor<32x8xbf16>)
      outs(%m, %l, %acc : tensor<10xf32>, tensor<10xf32>, tensor<10x8xf32>) {
  ^bb0(%dot: f32, %row: index, %key: index):
    %visible = arith.cmpi sle, %key, %row : index
    %s = arith.select %visible, %dot, %hidden : f32
    tfm.yield %s : f32
  } -> tensor<10xf32>, tensor<10xf32>, tensor<10x8xf32>
  return %r#0, %r#1, %r#2 : tensor<10xf32>, tensor<10xf32>, tensor<10x8xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %step = transform.structured.match ops{["tfm.online_attention"]} in %root
        : (!transform.any_op) -> !transform.any_op
    %tiled, %loop = transform.structured.tile_using_for %step tile_sizes [4]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

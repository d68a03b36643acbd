// RUN: tfm-opt %s --tfm-decompose-online-attention --canonicalize --cse | FileCheck %s

// The target-independent body of one step: contractions that widen each
// element to f32 as they read it (no packed copies), the body on every
// score, and the running state updated in place. Shapes may be dynamic.
// CHECK-LABEL: func.func @generic_step
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<?x16xbf16>, %[[K:[^:]+]]: tensor<32x16xbf16>, %[[V:[^:]+]]: tensor<32x8xbf16>, %[[M:[^:]+]]: tensor<?xf32>, %[[L:[^:]+]]: tensor<?xf32>, %[[ACC:[^:]+]]: tensor<?x8xf32>)
// CHECK: %[[DOTS:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[Q]], %[[K]] : tensor<?x16xbf16>, tensor<32x16xbf16>) outs(%{{.+}} : tensor<?x32xf32>)
// CHECK:   arith.extf %{{.+}} : bf16 to f32
// CHECK:   arith.extf %{{.+}} : bf16 to f32
// CHECK:   arith.mulf
// CHECK:   arith.addf
// CHECK: %[[SCORES:.+]] = linalg.generic {{.+}} ins(%[[DOTS]] : tensor<?x32xf32>)
// CHECK:   %[[ROW:.+]] = linalg.index 0 : index
// CHECK:   %[[KEY:.+]] = linalg.index 1 : index
// CHECK:   arith.cmpi sle, %[[KEY]], %[[ROW]]
// CHECK: %[[NEW_MAX:.+]] = linalg.generic {{.+}} outs(%[[M]] : tensor<?xf32>)
// CHECK: linalg.generic {{.+}} outs(%[[L]] : tensor<?xf32>)
// CHECK: %[[SCALED_ACC:.+]] = linalg.generic {{.+}} outs(%[[ACC]] : tensor<?x8xf32>)
// CHECK: %[[NEW_ACC:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.+}}, %[[V]] : tensor<?x32xf32>, tensor<32x8xbf16>) outs(%[[SCALED_ACC]] : tensor<?x8xf32>)
// CHECK:   arith.extf %{{.+}} : bf16 to f32
// CHECK-NOT: tfm.online_attention
func.func @generic_step(%q: tensor<?x16xbf16>, %k: tensor<32x16xbf16>, %v: tensor<32x8xbf16>,
                        %m: tensor<?xf32>, %l: tensor<?xf32>, %acc: tensor<?x8xf32>)
    -> (tensor<?xf32>, tensor<?xf32>, tensor<?x8xf32>) {
  %hidden = arith.constant 0xFF800000 : f32
  %r:3 = tfm.online_attention
      ins(%q, %k, %v : tensor<?x16xbf16>, tensor<32x16xbf16>, tensor<32x8xbf16>)
      outs(%m, %l, %acc : tensor<?xf32>, tensor<?xf32>, tensor<?x8xf32>) {
  ^bb0(%dot: f32, %row: index, %key: index):
    %visible = arith.cmpi sle, %key, %row : index
    %s = arith.select %visible, %dot, %hidden : f32
    tfm.yield %s : f32
  } -> tensor<?xf32>, tensor<?xf32>, tensor<?x8xf32>
  return %r#0, %r#1, %r#2 : tensor<?xf32>, tensor<?xf32>, tensor<?x8xf32>
}

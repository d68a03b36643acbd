// RUN: tfm-opt %s --tfm-cpu-decompose-online-attention --canonicalize --cse --split-input-file | FileCheck %s

// A decode tile (4 rows, head dim 64): each key row is read once, in place:
// lane-wise products over 16-lane chunks of D, then a sum over the lanes. No
// Kᵀ is packed, and the f32 V tile is read in place by the P·V matmul. The
// running state is updated in place.
// CHECK-LABEL: func.func @decode_rows
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<4x64xf32>, %[[K:[^:]+]]: tensor<32x64xf32>, %[[V:[^:]+]]: tensor<32x64xf32>, %[[M:[^:]+]]: tensor<4xf32>, %[[L:[^:]+]]: tensor<4xf32>, %[[ACC:[^:]+]]: tensor<4x64xf32>)
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 1.250000e-01 : f32
// CHECK-DAG: %[[QLANES:.+]] = tensor.expand_shape %[[Q]] {{.+}} into tensor<4x4x16xf32>
// CHECK-DAG: %[[KLANES:.+]] = tensor.expand_shape %[[K]] {{.+}} into tensor<32x4x16xf32>
// CHECK: %[[LANES:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%[[QLANES]], %[[KLANES]] : tensor<4x4x16xf32>, tensor<32x4x16xf32>) outs(%{{.+}} : tensor<4x32x16xf32>)
// CHECK:   arith.mulf
// CHECK:   arith.addf
// CHECK: %[[DOTS:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[LANES]] : tensor<4x32x16xf32>) outs(%{{.+}} : tensor<4x32xf32>)
// The body, applied to every dot product.
// CHECK: %[[SCORES:.+]] = linalg.generic {{.+}} ins(%[[DOTS]] : tensor<4x32xf32>)
// CHECK:   arith.mulf %{{.+}}, %[[SCALE]] : f32
// CHECK: %[[ROWMAX:.+]] = linalg.generic {{.+}} ins(%[[SCORES]] : tensor<4x32xf32>) outs(%{{.+}} : tensor<4xf32>)
// CHECK:   arith.maximumf
// CHECK: %[[ALPHA:.+]] = linalg.generic {{.+}} ins(%[[M]], %[[ROWMAX]] :
// CHECK:   math.exp
// CHECK: %[[NEW_MAX:.+]] = linalg.generic {{.+}} ins(%[[ROWMAX]] : tensor<4xf32>) outs(%[[M]] : tensor<4xf32>)
// CHECK: %[[P:.+]] = linalg.generic {{.+}} ins(%[[SCORES]], %[[NEW_MAX]] :
// CHECK:   math.exp
// CHECK: %[[SCALED_L:.+]] = linalg.generic {{.+}} ins(%[[ALPHA]] : tensor<4xf32>) outs(%[[L]] : tensor<4xf32>)
// CHECK: %[[NEW_SUM:.+]] = linalg.generic {{.+}} ins(%[[P]] : tensor<4x32xf32>) outs(%[[SCALED_L]] : tensor<4xf32>)
// CHECK: %[[SCALED_ACC:.+]] = linalg.generic {{.+}} ins(%[[ALPHA]] : tensor<4xf32>) outs(%[[ACC]] : tensor<4x64xf32>)
// CHECK: %[[NEW_ACC:.+]] = linalg.matmul ins(%[[P]], %[[V]] : tensor<4x32xf32>, tensor<32x64xf32>) outs(%[[SCALED_ACC]] : tensor<4x64xf32>)
// CHECK: return %[[NEW_MAX]], %[[NEW_SUM]], %[[NEW_ACC]]
func.func @decode_rows(%q: tensor<4x64xf32>, %k: tensor<32x64xf32>, %v: tensor<32x64xf32>,
                       %m: tensor<4xf32>, %l: tensor<4xf32>, %acc: tensor<4x64xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4x64xf32>) {
  %scale = arith.constant 0.125 : f32
  %r:3 = tfm.online_attention
      ins(%q, %k, %v : tensor<4x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>)
      outs(%m, %l, %acc : tensor<4xf32>, tensor<4xf32>, tensor<4x64xf32>) {
  ^bb0(%dot: f32, %row: index, %key: index):
    %s = arith.mulf %dot, %scale : f32
    tfm.yield %s : f32
  } -> tensor<4xf32>, tensor<4xf32>, tensor<4x64xf32>
  return %r#0, %r#1, %r#2 : tensor<4xf32>, tensor<4xf32>, tensor<4x64xf32>
}

// -----

// A prefill tile (256 rows): Kᵀ packed once into an f32 [D, N] tile whose
// cost the 256 rows share, then a plain matmul. The body reads the tile's
// row and key indices as linalg.index.
// CHECK-LABEL: func.func @prefill_packed_keys
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<256x64xf32>, %[[K:[^:]+]]: tensor<32x64xf32>
// CHECK: %[[KT:.+]] = linalg.generic {{.+}} ins(%[[K]] : tensor<32x64xf32>) outs(%{{.+}} : tensor<64x32xf32>)
// CHECK: %[[DOTS:.+]] = linalg.matmul ins(%[[Q]], %[[KT]] : tensor<256x64xf32>, tensor<64x32xf32>)
// CHECK: linalg.generic {{.+}} ins(%[[DOTS]] : tensor<256x32xf32>)
// CHECK:   %[[ROW:.+]] = linalg.index 0 : index
// CHECK:   %[[KEY:.+]] = linalg.index 1 : index
// CHECK:   arith.cmpi sle, %[[KEY]], %[[ROW]] : index
// CHECK:   arith.select
func.func @prefill_packed_keys(%q: tensor<256x64xf32>, %k: tensor<32x64xf32>,
                               %v: tensor<32x64xf32>, %m: tensor<256xf32>,
                               %l: tensor<256xf32>, %acc: tensor<256x64xf32>)
    -> tensor<256x64xf32> {
  %hidden = arith.constant 0xFF800000 : f32
  %r:3 = tfm.online_attention
      ins(%q, %k, %v : tensor<256x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>)
      outs(%m, %l, %acc : tensor<256xf32>, tensor<256xf32>, tensor<256x64xf32>) {
  ^bb0(%dot: f32, %row: index, %key: index):
    %visible = arith.cmpi sle, %key, %row : index
    %s = arith.select %visible, %dot, %hidden : f32
    tfm.yield %s : f32
  } -> tensor<256xf32>, tensor<256xf32>, tensor<256x64xf32>
  return %r#2 : tensor<256x64xf32>
}

// -----

// bf16 tiles are widened to f32 for the CPU's products (Q, the packed Kᵀ
// and V); the state stays f32.
// CHECK-LABEL: func.func @bf16_widened
// CHECK: %[[Q32:.+]] = linalg.generic {{.+}} ins(%{{.+}} : tensor<128x32xbf16>) outs(%{{.+}} : tensor<128x32xf32>)
// CHECK:   arith.extf %{{.+}} : bf16 to f32
// CHECK: %[[KT:.+]] = linalg.generic {{.+}} ins(%{{.+}} : tensor<32x32xbf16>) outs(%{{.+}} : tensor<32x32xf32>)
// CHECK:   arith.extf %{{.+}} : bf16 to f32
// CHECK: linalg.matmul ins(%[[Q32]], %[[KT]] : tensor<128x32xf32>, tensor<32x32xf32>)
// CHECK: %[[V32:.+]] = linalg.generic {{.+}} ins(%{{.+}} : tensor<32x32xbf16>) outs(%{{.+}} : tensor<32x32xf32>)
// CHECK: linalg.matmul ins(%{{.+}}, %[[V32]] : tensor<128x32xf32>, tensor<32x32xf32>)
func.func @bf16_widened(%q: tensor<128x32xbf16>, %k: tensor<32x32xbf16>,
                        %v: tensor<32x32xbf16>, %m: tensor<128xf32>,
                        %l: tensor<128xf32>, %acc: tensor<128x32xf32>)
    -> tensor<128x32xf32> {
  %r:3 = tfm.online_attention
      ins(%q, %k, %v : tensor<128x32xbf16>, tensor<32x32xbf16>, tensor<32x32xbf16>)
      outs(%m, %l, %acc : tensor<128xf32>, tensor<128xf32>, tensor<128x32xf32>) {
  ^bb0(%dot: f32, %row: index, %key: index):
    tfm.yield %dot : f32
  } -> tensor<128xf32>, tensor<128xf32>, tensor<128x32xf32>
  return %r#2 : tensor<128x32xf32>
}

// -----

// A decode tile whose head dim (40) is not a whole number of 16-lane
// chunks: the key-row form needs whole chunks, so Kᵀ is packed.
// CHECK-LABEL: func.func @decode_head_dim_40
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {{.+}} outs(%{{.+}} : tensor<40x32xf32>)
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<4x40xf32>, tensor<40x32xf32>)
func.func @decode_head_dim_40(%q: tensor<4x40xf32>, %k: tensor<32x40xf32>,
                              %v: tensor<32x40xf32>, %m: tensor<4xf32>,
                              %l: tensor<4xf32>, %acc: tensor<4x40xf32>)
    -> tensor<4x40xf32> {
  %r:3 = tfm.online_attention
      ins(%q, %k, %v : tensor<4x40xf32>, tensor<32x40xf32>, tensor<32x40xf32>)
      outs(%m, %l, %acc : tensor<4xf32>, tensor<4xf32>, tensor<4x40xf32>) {
  ^bb0(%dot: f32, %row: index, %key: index):
    tfm.yield %dot : f32
  } -> tensor<4xf32>, tensor<4xf32>, tensor<4x40xf32>
  return %r#2 : tensor<4x40xf32>
}

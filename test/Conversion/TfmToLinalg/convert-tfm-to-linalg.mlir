// RUN: tfm-opt %s --convert-tfm-to-linalg --canonicalize --cse --split-input-file | FileCheck %s

// GQA groups query heads under their key/value head: no repeated K/V, scores
// in f32, masks as -inf, max-subtracted exp, empty rows guarded.
// CHECK-DAG: #[[Q5:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>
// CHECK-DAG: #[[K5:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5)>
// CHECK-DAG: #[[LEN:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0)>
// CHECK-LABEL: func.func @gqa_causal_padded
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<?x8x?x16xf32>, %[[K:[^:]+]]: tensor<?x2x?x16xf32>, %[[V:[^:]+]]: tensor<?x2x?x16xf32>, %[[LENGTHS:[^:]+]]: tensor<?xi32>)
// CHECK-DAG: %[[NEG_INF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 2.500000e-01 : f32
// CHECK: %[[GROUPED:.+]] = tensor.expand_shape %[[Q]] {{\[}}[0], [1, 2], [3], [4]] output_shape [%{{.+}}, 2, 4, %{{.+}}, 16] : tensor<?x8x?x16xf32> into tensor<?x2x4x?x16xf32>
// CHECK: %[[DOTS:.+]] = linalg.generic {indexing_maps = [#[[Q5]], #[[K5]], {{.+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[GROUPED]], %[[K]] : {{.+}}) outs({{.+}} : tensor<?x2x4x?x?xf32>)
// CHECK: %[[SCORES:.+]] = linalg.generic {{.+}} ins(%[[DOTS]], %[[LENGTHS]] : tensor<?x2x4x?x?xf32>, tensor<?xi32>)
// CHECK:   arith.mulf %{{.+}}, %[[SCALE]] : f32
// CHECK:   arith.cmpi sle
// CHECK:   arith.cmpi slt
// CHECK:   arith.select %{{.+}}, %{{.+}}, %[[NEG_INF]] : f32
// CHECK: %[[MAX:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[SCORES]] : tensor<?x2x4x?x?xf32>)
// CHECK:   arith.maximumf
// CHECK: %[[PROBS:.+]] = linalg.generic {{.+}} ins(%[[SCORES]], %[[MAX]] :
// CHECK:   arith.cmpf oeq, %{{.+}}, %[[NEG_INF]] : f32
// CHECK:   math.exp
// CHECK: %[[SUM:.+]] = linalg.generic {{.+}} ins(%[[PROBS]] :
// CHECK: %[[PV:.+]] = linalg.generic {{.+}} ins(%[[PROBS]], %[[V]] : tensor<?x2x4x?x?xf32>, tensor<?x2x?x16xf32>)
// CHECK: %[[OUT:.+]] = linalg.generic {{.+}} ins(%[[PV]], %[[SUM]] :
// CHECK:   arith.divf
// CHECK: %[[COLLAPSED:.+]] = tensor.collapse_shape %[[OUT]] {{\[}}[0], [1, 2], [3], [4]] : tensor<?x2x4x?x16xf32> into tensor<?x8x?x16xf32>
// CHECK: return %[[COLLAPSED]]
// CHECK-NOT: tfm.
func.func @gqa_causal_padded(%q: tensor<?x8x?x16xf32>, %k: tensor<?x2x?x16xf32>,
                             %v: tensor<?x2x?x16xf32>, %lengths: tensor<?xi32>)
    -> tensor<?x8x?x16xf32> {
  %o = tfm.attention %q, %k, %v kv_lengths(%lengths) {mask = #tfm.mask<causal>}
      : (tensor<?x8x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?xi32>)
      -> tensor<?x8x?x16xf32>
  return %o : tensor<?x8x?x16xf32>
}

// -----

// bf16 norms accumulate in f32 and round once.
// CHECK-LABEL: func.func @rms_norm_bf16
// CHECK: %[[SUMSQ:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]} ins(%{{.+}} : tensor<4x64xbf16>) outs(%{{.+}} : tensor<4xf32>)
// CHECK:   arith.extf %{{.+}} : bf16 to f32
// CHECK: linalg.generic {{.+}} ins(%{{.+}}, %[[SUMSQ]], %{{.+}} : tensor<4x64xbf16>, tensor<4xf32>, tensor<64xbf16>) outs(%{{.+}} : tensor<4x64xbf16>)
// CHECK:   math.rsqrt
// CHECK:   arith.truncf %{{.+}} : f32 to bf16
func.func @rms_norm_bf16(%x: tensor<4x64xbf16>, %w: tensor<64xbf16>) -> tensor<4x64xbf16> {
  %y = tfm.rms_norm %x, %w eps(1.0e-06) : (tensor<4x64xbf16>, tensor<64xbf16>) -> tensor<4x64xbf16>
  return %y : tensor<4x64xbf16>
}

// -----

// nn.Linear layout: the weight is read transposed, no copy.
// CHECK-DAG: #[[X:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[W:.+]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-LABEL: func.func @linear_with_bias
// CHECK: linalg.generic {indexing_maps = [#[[X]], #[[W]], {{.+}}], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK-NOT: linalg.transpose
func.func @linear_with_bias(%x: tensor<2x7x64xf32>, %w: tensor<96x64xf32>, %b: tensor<96xf32>)
    -> tensor<2x7x96xf32> {
  %y = tfm.linear %x, %w, %b : (tensor<2x7x64xf32>, tensor<96x64xf32>, tensor<96xf32>) -> tensor<2x7x96xf32>
  return %y : tensor<2x7x96xf32>
}

// -----

// Composite ops are decomposed and lowered in one go.
// CHECK-LABEL: func.func @self_attention_lowers_completely
// CHECK-NOT: tfm.
// CHECK: return
func.func @self_attention_lowers_completely(%x: tensor<1x4x32xf32>, %w: tensor<32x32xf32>,
                                            %wkv: tensor<8x32xf32>) -> tensor<1x4x32xf32> {
  %y = tfm.self_attention %x heads(4, 1) q(%w) k(%wkv) v(%wkv) o(%w) {mask = #tfm.mask<causal>}
      : (tensor<1x4x32xf32>, tensor<32x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>,
         tensor<32x32xf32>) -> tensor<1x4x32xf32>
  return %y : tensor<1x4x32xf32>
}

// -----

// A result type more static than the operands gets a tensor.cast (which
// canonicalization moves onto the input).
// CHECK-LABEL: func.func @static_result_from_dynamic_input
// CHECK: tensor.cast %{{.+}} : tensor<?x64xf32> to tensor<3x64xf32>
// CHECK: linalg.generic
func.func @static_result_from_dynamic_input(%x: tensor<?x64xf32>, %w: tensor<64xf32>)
    -> tensor<3x64xf32> {
  %y = tfm.rms_norm %x, %w eps(1.0e-06) : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<3x64xf32>
  return %y : tensor<3x64xf32>
}

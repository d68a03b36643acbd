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

// bf16 norms accumulate in f32 and round once. RMSNorm is x · r · w, with
// the row scale r = 1/sqrt(mean(x²) + eps) computed once per row.
// CHECK-LABEL: func.func @rms_norm_bf16
// CHECK: %[[SUMSQ:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]} ins(%{{.+}} : tensor<4x64xbf16>) outs(%{{.+}} : tensor<4xf32>)
// CHECK:   arith.extf %{{.+}} : bf16 to f32
// CHECK: %[[SCALE:.+]] = linalg.generic {{.+}} ins(%[[SUMSQ]] : tensor<4xf32>) outs(%{{.+}} : tensor<4xf32>)
// CHECK:   math.rsqrt
// CHECK: linalg.generic {{.+}} ins(%{{.+}}, %[[SCALE]], %{{.+}} : tensor<4x64xbf16>, tensor<4xf32>, tensor<64xbf16>) outs(%{{.+}} : tensor<4x64xbf16>)
// CHECK:   arith.mulf
// CHECK:   arith.mulf
// CHECK:   arith.truncf %{{.+}} : f32 to bf16
func.func @rms_norm_bf16(%x: tensor<4x64xbf16>, %w: tensor<64xbf16>) -> tensor<4x64xbf16> {
  %y = tfm.rms_norm %x, %w eps(1.0e-06) : (tensor<4x64xbf16>, tensor<64xbf16>) -> tensor<4x64xbf16>
  return %y : tensor<4x64xbf16>
}

// -----

// nn.Linear layout: the weight is read transposed, no copy; the leading
// dims are one row dim (a view), so every projection is one 2-D form.
// CHECK-DAG: #[[X:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[W:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @linear_with_bias
// CHECK: %[[ROWS:.+]] = tensor.collapse_shape %{{.+}} {{\[\[}}0, 1], [2]] : tensor<2x7x64xf32> into tensor<14x64xf32>
// CHECK: %[[Y:.+]] = linalg.generic {indexing_maps = [#[[X]], #[[W]], {{.+}}], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[ROWS]], %{{.+}} : tensor<14x64xf32>, tensor<96x64xf32>)
// CHECK: tensor.expand_shape %[[Y]] {{\[\[}}0, 1], [2]] output_shape [2, 7, 96] : tensor<14x96xf32> into tensor<2x7x96xf32>
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

// -----

// Masks as data, aligned bottom-right (key j of 6 is visible to query i of
// 4 when j <= i + 2).
// CHECK-LABEL: func.func @causal_mask_as_data
// CHECK-DAG: %[[OFFSET:.+]] = arith.constant 2 : index
// CHECK: linalg.generic {{.+}} outs(%{{.+}} : tensor<4x6xi1>)
// CHECK:   %[[ROW:.+]] = linalg.index 0 : index
// CHECK:   %[[COL:.+]] = linalg.index 1 : index
// CHECK:   %[[LAST:.+]] = arith.addi %[[ROW]], %[[OFFSET]] : index
// CHECK:   %[[VISIBLE:.+]] = arith.cmpi sle, %[[COL]], %[[LAST]] : index
// CHECK:   linalg.yield %[[VISIBLE]] : i1
func.func @causal_mask_as_data() -> tensor<4x6xi1> {
  %m = tfm.causal_mask : tensor<4x6xi1>
  return %m : tensor<4x6xi1>
}

// -----

// A window of 3 keys ending at the causal limit: i <= j <= i + 2.
// CHECK-LABEL: func.func @sliding_window_mask_as_data
// CHECK-DAG: %[[OFFSET:.+]] = arith.constant 2 : index
// CHECK:   %[[ROW:.+]] = linalg.index 0 : index
// CHECK:   %[[COL:.+]] = linalg.index 1 : index
// CHECK:   %[[LAST:.+]] = arith.addi %[[ROW]], %[[OFFSET]] : index
// CHECK:   %[[AFTER_FIRST:.+]] = arith.cmpi sge, %[[COL]], %[[ROW]] : index
// CHECK:   %[[BEFORE_LAST:.+]] = arith.cmpi sle, %[[COL]], %[[LAST]] : index
// CHECK:   %[[VISIBLE:.+]] = arith.andi %[[AFTER_FIRST]], %[[BEFORE_LAST]] : i1
// CHECK:   linalg.yield %[[VISIBLE]] : i1
func.func @sliding_window_mask_as_data() -> tensor<4x6xi1> {
  %m = tfm.sliding_window_mask window(3) : tensor<4x6xi1>
  return %m : tensor<4x6xi1>
}

// -----

// Key j of batch row b is visible when j < lengths[b].
// CHECK-DAG: #[[BATCH:.+]] = affine_map<(d0, d1, d2, d3) -> (d0)>
// CHECK-LABEL: func.func @padding_mask_from_lengths
// CHECK-SAME: (%[[LENGTHS:.+]]: tensor<3xi32>)
// CHECK: linalg.generic {indexing_maps = [#[[BATCH]], {{.+}}]{{.+}} ins(%[[LENGTHS]] : tensor<3xi32>) outs(%{{.+}} : tensor<3x1x1x5xi1>)
// CHECK: ^bb0(%[[LENGTH:.+]]: i32, %{{.+}}: i1):
// CHECK:   %[[LIMIT:.+]] = arith.index_cast %[[LENGTH]] : i32 to index
// CHECK:   %[[KEY:.+]] = linalg.index 3 : index
// CHECK:   %[[VISIBLE:.+]] = arith.cmpi slt, %[[KEY]], %[[LIMIT]] : index
// CHECK:   linalg.yield %[[VISIBLE]] : i1
func.func @padding_mask_from_lengths(%lengths: tensor<3xi32>) -> tensor<3x1x1x5xi1> {
  %m = tfm.padding_mask %lengths : tensor<3xi32> -> tensor<3x1x1x5xi1>
  return %m : tensor<3x1x1x5xi1>
}

// -----

// LayerNorm: the mean, then the biased variance of (x - mean) in a second
// pass (no E[x²] - E[x]² cancellation), the row scale r = rsqrt(var + eps)
// once per row, then ((x - mean)·r)·w + b (the form tfm-fuse-norm-projection
// folds into the projections that read it).
// CHECK-LABEL: func.func @layer_norm_with_bias
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x64xf32>, %[[W:[^:]+]]: tensor<64xf32>, %[[B:[^:]+]]: tensor<64xf32>)
// CHECK-DAG: %[[EPS:.+]] = arith.constant 9.99999974E-6 : f32
// CHECK-DAG: %[[WIDTH:.+]] = arith.constant 6.400000e+01 : f32
// CHECK: %[[SUM:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<4x64xf32>)
// CHECK:   arith.addf
// CHECK: %[[MEAN:.+]] = linalg.generic {{.+}} ins(%[[SUM]] : tensor<4xf32>)
// CHECK:   arith.divf %{{.+}}, %[[WIDTH]] : f32
// CHECK: %[[SQUARES:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]} ins(%[[X]], %[[MEAN]] : tensor<4x64xf32>, tensor<4xf32>)
// CHECK:   arith.subf
// CHECK:   arith.mulf
// CHECK: %[[SCALE:.+]] = linalg.generic {{.+}} ins(%[[SQUARES]] : tensor<4xf32>)
// CHECK:   arith.divf %{{.+}}, %[[WIDTH]] : f32
// CHECK:   arith.addf %{{.+}}, %[[EPS]] : f32
// CHECK:   math.rsqrt
// CHECK: linalg.generic {{.+}} ins(%[[X]], %[[MEAN]], %[[SCALE]], %[[W]], %[[B]] :
// CHECK:   arith.subf
// CHECK:   arith.mulf
// CHECK:   arith.mulf
// CHECK:   arith.addf
func.func @layer_norm_with_bias(%x: tensor<4x64xf32>, %w: tensor<64xf32>, %b: tensor<64xf32>)
    -> tensor<4x64xf32> {
  %y = tfm.layer_norm %x, %w, %b eps(1.0e-05)
      : (tensor<4x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

// -----

// SwiGLU: up and gate projections read their [d_ff, d_model] weights in
// place, silu(gate)·up in one elementwise op, then the down projection.
// CHECK-DAG: #[[X:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[W:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @ffn_swiglu
// CHECK-SAME: (%[[IN:[^:]+]]: tensor<2x5x32xf32>, %[[GATE_W:[^:]+]]: tensor<48x32xf32>, %[[UP_W:[^:]+]]: tensor<48x32xf32>, %[[DOWN_W:[^:]+]]: tensor<32x48xf32>)
// CHECK: %[[ROWS:.+]] = tensor.collapse_shape %[[IN]] {{.+}} into tensor<10x32xf32>
// CHECK: %[[UP_ROWS:.+]] = linalg.generic {indexing_maps = [#[[X]], #[[W]], {{.+}}]{{.+}} ins(%[[ROWS]], %[[UP_W]] :
// CHECK: %[[UP:.+]] = tensor.expand_shape %[[UP_ROWS]]
// CHECK: %[[GATE_ROWS:.+]] = linalg.generic {indexing_maps = [#[[X]], #[[W]], {{.+}}]{{.+}} ins(%[[ROWS]], %[[GATE_W]] :
// CHECK: %[[GATE:.+]] = tensor.expand_shape %[[GATE_ROWS]]
// CHECK: %[[HIDDEN:.+]] = linalg.generic {{.+}} ins(%[[GATE]], %[[UP]] : tensor<2x5x48xf32>, tensor<2x5x48xf32>)
// CHECK:   arith.negf
// CHECK:   math.exp
// CHECK:   arith.divf
// CHECK:   arith.mulf
// CHECK: %[[HIDDEN_ROWS:.+]] = tensor.collapse_shape %[[HIDDEN]]
// CHECK: %[[OUT:.+]] = linalg.generic {indexing_maps = [#[[X]], #[[W]], {{.+}}]{{.+}} ins(%[[HIDDEN_ROWS]], %[[DOWN_W]] :
// CHECK: %[[RESULT:.+]] = tensor.expand_shape %[[OUT]]
// CHECK: return %[[RESULT]]
func.func @ffn_swiglu(%x: tensor<2x5x32xf32>, %g: tensor<48x32xf32>, %u: tensor<48x32xf32>,
                      %d: tensor<32x48xf32>) -> tensor<2x5x32xf32> {
  %y = tfm.ffn swiglu %x gate(%g) up(%u) down(%d)
      : (tensor<2x5x32xf32>, tensor<48x32xf32>, tensor<48x32xf32>, tensor<32x48xf32>)
      -> tensor<2x5x32xf32>
  return %y : tensor<2x5x32xf32>
}

// -----

// RoPE, half pairing: lane d < D/2 pairs with d + D/2. cos and sin of the
// angles pos·theta^(-2k/D) are tables [B, S, D/2] computed in f64 once per
// position and pair; the rotation reads the pairs' two members as slices of
// the [..., 2, D/2] view (no gathers) and computes in f32.
// CHECK-DAG: #[[POSITION:.+]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-DAG: #[[TABLE:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[MEMBER:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, 0, d4)>
// CHECK-DAG: #[[READ_TABLE:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d4)>
// CHECK-LABEL: func.func @rope_half
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x2x5x16xf32>, %[[POS:[^:]+]]: tensor<5xi32>)
// CHECK: %[[TABLES:.+]]:2 = linalg.generic {indexing_maps = [#[[POSITION]], #[[TABLE]], #[[TABLE]]]
// CHECK-SAME: ins(%[[POS]] : tensor<5xi32>) outs({{.+}} : tensor<1x5x8xf32>, tensor<1x5x8xf32>)
// CHECK:   math.exp %{{.+}} : f64
// CHECK:   math.cos %{{.+}} : f64
// CHECK:   math.sin %{{.+}} : f64
// CHECK: %[[PAIRS:.+]] = tensor.expand_shape %[[X]] {{\[}}[0], [1], [2], [3, 4]] {{.+}} into tensor<1x2x5x2x8xf32>
// CHECK: %[[FIRST:.+]] = tensor.extract_slice %[[PAIRS]][0, 0, 0, 0, 0] [1, 2, 5, 1, 8]
// CHECK: %[[SECOND:.+]] = tensor.extract_slice %[[PAIRS]][0, 0, 0, 1, 0] [1, 2, 5, 1, 8]
// CHECK: %[[ROTATED:.+]] = linalg.generic {indexing_maps = [#[[MEMBER]], #[[MEMBER]], #[[READ_TABLE]], #[[READ_TABLE]], {{.+}}]
// CHECK-SAME: ins(%[[FIRST]], %[[SECOND]], %[[TABLES]]#0, %[[TABLES]]#1
// CHECK-NOT: tensor.extract
// CHECK:   linalg.index 3 : index
// CHECK:   arith.subf
// CHECK:   arith.addf
// CHECK:   arith.select
// CHECK: tensor.collapse_shape %[[ROTATED]] {{\[}}[0], [1], [2], [3, 4]] : tensor<1x2x5x2x8xf32> into tensor<1x2x5x16xf32>
func.func @rope_half(%x: tensor<1x2x5x16xf32>, %pos: tensor<5xi32>) -> tensor<1x2x5x16xf32> {
  %y = tfm.rope half %x, %pos theta(1.0e+04)
      : (tensor<1x2x5x16xf32>, tensor<5xi32>) -> tensor<1x2x5x16xf32>
  return %y : tensor<1x2x5x16xf32>
}

// -----

// Interleaved pairs (2k, 2k + 1): the view is [..., D/2, 2], the members
// its last dim.
// CHECK-DAG: #[[MEMBER:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, 0)>
// CHECK-DAG: #[[READ_TABLE:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3)>
// CHECK-LABEL: func.func @rope_interleaved
// CHECK: %[[PAIRS:.+]] = tensor.expand_shape %{{.+}} {{\[}}[0], [1], [2], [3, 4]] {{.+}} into tensor<2x2x5x8x2xf32>
// CHECK: tensor.extract_slice %[[PAIRS]][0, 0, 0, 0, 0] [2, 2, 5, 8, 1]
// CHECK: tensor.extract_slice %[[PAIRS]][0, 0, 0, 0, 1] [2, 2, 5, 8, 1]
// CHECK: linalg.generic {indexing_maps = [#[[MEMBER]], #[[MEMBER]], #[[READ_TABLE]], #[[READ_TABLE]], {{.+}}]
// CHECK:   linalg.index 4 : index
func.func @rope_interleaved(%x: tensor<2x2x5x16xf32>, %pos: tensor<2x5xi32>) -> tensor<2x2x5x16xf32> {
  %y = tfm.rope interleaved %x, %pos theta(1.0e+04)
      : (tensor<2x2x5x16xf32>, tensor<2x5xi32>) -> tensor<2x2x5x16xf32>
  return %y : tensor<2x2x5x16xf32>
}

// -----

// RoPE of split heads (q and k): the rotation runs on the projection's rows
// [B·S, H, D] before the heads are transposed, so that the projection can
// rotate its column blocks as it finishes them (tfm-cpu-tile-projections).
// CHECK-LABEL: func.func @rope_of_split_heads
// CHECK-SAME: (%[[ROWS:[^:]+]]: tensor<2x5x32xf32>
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %[[ROWS]] {{\[}}[0, 1], [2]] : tensor<2x5x32xf32> into tensor<10x32xf32>
// CHECK: %[[PAIRS:.+]] = tensor.expand_shape %[[FLAT]] {{\[}}[0], [1, 2, 3]] {{.+}} into tensor<10x2x2x8xf32>
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.+}} : tensor<10x2x2x8xf32>)
// CHECK: %[[HEADS:.+]] = tensor.expand_shape %{{.+}} {{\[}}[0, 1], [2], [3]] {{.+}} into tensor<2x5x2x16xf32>
// CHECK: linalg.transpose ins(%[[HEADS]] : tensor<2x5x2x16xf32>) {{.+}} permutation = [0, 2, 1, 3]
func.func @rope_of_split_heads(%rows: tensor<2x5x32xf32>, %pos: tensor<2x5xi32>) -> tensor<2x2x5x16xf32> {
  %q = tfm.split_heads %rows : tensor<2x5x32xf32> -> tensor<2x2x5x16xf32>
  %y = tfm.rope half %q, %pos theta(1.0e+04)
      : (tensor<2x2x5x16xf32>, tensor<2x5xi32>) -> tensor<2x2x5x16xf32>
  return %y : tensor<2x2x5x16xf32>
}

// -----

// RoPE with Llama 3's scaling: the scaled frequencies are a table of f64
// constants computed at compile time, read per pair (no exp). With
// original_max_positions = 64 and head dim 16, pair 0 (wavelength 2π) keeps
// theta^0 = 1, pair 7 is divided by the factor.
// CHECK-LABEL: func.func @rope_llama3_scaling
// CHECK: %[[TABLE:.+]] = arith.constant dense<[1.000000e+00, {{.+}}]> : tensor<8xf64>
// CHECK: linalg.generic
// CHECK-NOT: math.exp
// CHECK:   tensor.extract %[[TABLE]][%{{.+}}] : tensor<8xf64>
// CHECK:   math.cos %{{.+}} : f64
func.func @rope_llama3_scaling(%x: tensor<1x2x5x16xf32>, %pos: tensor<5xi32>) -> tensor<1x2x5x16xf32> {
  %y = tfm.rope half %x, %pos theta(5.0e+05) scaling(#tfm.rope_scaling<llama3, factor = 8.0, low_freq_factor = 1.0, high_freq_factor = 4.0, original_max_positions = 64>)
      : (tensor<1x2x5x16xf32>, tensor<5xi32>) -> tensor<1x2x5x16xf32>
  return %y : tensor<1x2x5x16xf32>
}

// -----

// CHECK-LABEL: func.func @split_heads
// CHECK: %[[HEADS:.+]] = tensor.expand_shape %{{.+}} {{\[}}[0], [1], [2, 3]] output_shape [2, 5, 4, 12] : tensor<2x5x48xf32> into tensor<2x5x4x12xf32>
// CHECK: linalg.transpose ins(%[[HEADS]] : tensor<2x5x4x12xf32>) outs(%{{.+}} : tensor<2x4x5x12xf32>) permutation = [0, 2, 1, 3]
func.func @split_heads(%x: tensor<2x5x48xf32>) -> tensor<2x4x5x12xf32> {
  %y = tfm.split_heads %x : tensor<2x5x48xf32> -> tensor<2x4x5x12xf32>
  return %y : tensor<2x4x5x12xf32>
}

// -----

// CHECK-LABEL: func.func @merge_heads
// CHECK: %[[TOKENS:.+]] = linalg.transpose ins(%{{.+}} : tensor<2x4x5x12xf32>) outs(%{{.+}} : tensor<2x5x4x12xf32>) permutation = [0, 2, 1, 3]
// CHECK: tensor.collapse_shape %[[TOKENS]] {{\[}}[0], [1], [2, 3]] : tensor<2x5x4x12xf32> into tensor<2x5x48xf32>
func.func @merge_heads(%x: tensor<2x4x5x12xf32>) -> tensor<2x5x48xf32> {
  %y = tfm.merge_heads %x : tensor<2x4x5x12xf32> -> tensor<2x5x48xf32>
  return %y : tensor<2x5x48xf32>
}

// -----

// A gather: each output element reads table[id, column].
// CHECK-LABEL: func.func @embedding
// CHECK-SAME: (%[[IDS:[^:]+]]: tensor<2x5xi32>, %[[TABLE:[^:]+]]: tensor<50x24xf32>)
// CHECK: linalg.generic {{.+}} ins(%[[IDS]] : tensor<2x5xi32>) outs(%{{.+}} : tensor<2x5x24xf32>)
// CHECK: ^bb0(%[[ID:.+]]: i32, %{{.+}}: f32):
// CHECK:   %[[ROW:.+]] = arith.index_cast %[[ID]] : i32 to index
// CHECK:   %[[COL:.+]] = linalg.index 2 : index
// CHECK:   %[[VALUE:.+]] = tensor.extract %[[TABLE]][%[[ROW]], %[[COL]]] : tensor<50x24xf32>
// CHECK:   linalg.yield %[[VALUE]] : f32
func.func @embedding(%ids: tensor<2x5xi32>, %table: tensor<50x24xf32>) -> tensor<2x5x24xf32> {
  %y = tfm.embedding %ids, %table : (tensor<2x5xi32>, tensor<50x24xf32>) -> tensor<2x5x24xf32>
  return %y : tensor<2x5x24xf32>
}

// -----

// The whole block (norms, projections, RoPE, GQA attention with a window,
// SwiGLU, residuals) lowers without a tfm op left.
// CHECK-LABEL: func.func @decoder_block_lowers_completely
// CHECK-NOT: tfm.
// CHECK: math.sin
// CHECK-NOT: tfm.
// CHECK: return
func.func @decoder_block_lowers_completely(%x: tensor<1x16x64xf32>, %g: tensor<64xf32>,
    %wq: tensor<64x64xf32>, %wkv: tensor<16x64xf32>, %wo: tensor<64x64xf32>,
    %wg: tensor<172x64xf32>, %wu: tensor<172x64xf32>, %wd: tensor<64x172xf32>,
    %pos: tensor<16xi32>) -> tensor<1x16x64xf32> {
  %y = tfm.decoder_block pre rms_norm %x heads(8, 2) eps(1.0e-05)
      attn_norm(%g) q(%wq) k(%wkv) v(%wkv) o(%wo)
      ffn_norm(%g) swiglu gate(%wg) up(%wu) down(%wd) positions(%pos)
      {mask = #tfm.mask<sliding_window<8>>, rope = #tfm.rope<theta = 5.0e+05, style = half>}
      : (tensor<1x16x64xf32>, tensor<64xf32>, tensor<64x64xf32>, tensor<16x64xf32>,
         tensor<16x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<172x64xf32>,
         tensor<172x64xf32>, tensor<64x172xf32>, tensor<16xi32>) -> tensor<1x16x64xf32>
  return %y : tensor<1x16x64xf32>
}

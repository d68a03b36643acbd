// RUN: tfm-opt %s --tfm-tile-attention="tile-size-q=64 tile-size-kv=32" --canonicalize --cse --split-input-file | FileCheck %s

// Causal GQA 4:1 over 1024 positions: parallel over (kv head, query tile),
// a key loop bounded by the band, the element mask only on boundary tiles,
// one K/V tile shared by the 4 query heads of a group (their 4 x 64 query
// rows stacked into one 256-row tile), static tile shapes, and no 1024x1024
// tensor anywhere.
// CHECK-LABEL: func.func @gqa_causal_1024
// CHECK-NOT: 1024x1024
// CHECK-DAG: %[[C32:.+]] = arith.constant 32 : index
// CHECK-DAG: %[[NEG_INF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: scf.forall (%[[H:.+]], %[[T:.+]]) in (2, 16) shared_outs(%[[OUT:.+]] = %{{.+}}) -> (tensor<1x8x1024x64xf32>)
// CHECK:   %[[Q0:.+]] = arith.muli %[[T]], %c64
// The query rows of the group's 4 heads, packed once per query tile; rows
// past the sequence repeat the last one.
// CHECK:   %[[QPACK:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<4x64x64xf32>)
// CHECK:     arith.minsi
// CHECK:     tensor.extract %{{.+}} : tensor<1x8x1024x64xf32>
// CHECK:   %[[QTILE:.+]] = tensor.collapse_shape %[[QPACK]] {{.+}} into tensor<256x64xf32>
// Causal: keys end after the tile's last row; they start at 0.
// CHECK:   arith.minsi %{{.+}}, %c1024
// CHECK:   %[[STATE:.+]]:3 = scf.for %[[K0:.+]] = %c0 to %{{.+}} step %[[C32]] iter_args(%{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) -> (tensor<256xf32>, tensor<256xf32>, tensor<256x64xf32>)
// A full key tile is a transposed copy of a static slice; only the last,
// partial one reads clamped key indices.
// CHECK:     %[[COMPLETE:.+]] = arith.cmpi sle
// CHECK:     %[[KTILE:.+]] = scf.if %[[COMPLETE]] -> (tensor<64x32xf32>) {
// CHECK:       tensor.extract_slice %{{.+}}[0, %[[H]], %[[K0]], 0] [1, 1, 32, 64] {{.+}} to tensor<32x64xf32>
// CHECK:     } else {
// CHECK:       arith.minsi
// CHECK:     }
// CHECK:     linalg.matmul ins(%[[QTILE]], %[[KTILE]] : tensor<256x64xf32>, tensor<64x32xf32>)
// CHECK:     scf.if %{{.+}} -> (tensor<256x32xf32>) {
// CHECK-NOT:   arith.select
// CHECK:     } else {
// CHECK:       arith.cmpi sle
// CHECK:       arith.select %{{.+}}, %{{.+}}, %[[NEG_INF]] : f32
// CHECK:     }
// CHECK:     arith.maximumf
// CHECK:     math.exp
// A full V tile is read in place.
// CHECK:     scf.if %[[COMPLETE]] -> (tensor<256x64xf32>) {
// CHECK:       %[[VTILE:.+]] = tensor.extract_slice %{{.+}}[0, %[[H]], %[[K0]], 0] [1, 1, 32, 64] {{.+}} to tensor<32x64xf32>
// CHECK:       linalg.matmul ins(%{{.+}}, %[[VTILE]] : tensor<256x32xf32>, tensor<32x64xf32>)
// CHECK:     } else {
// CHECK:     scf.yield
// CHECK:   arith.divf
// The group's 4 query heads are rows 4h .. 4h+3 of the result.
// CHECK:   %[[HEAD:.+]] = arith.muli %[[H]], %c4
// CHECK:   scf.forall.in_parallel {
// CHECK:     tensor.parallel_insert_slice %{{.+}} into %[[OUT]][0, %[[HEAD]], %[[Q0]], 0] [1, 4, %{{.+}}, 64]
func.func @gqa_causal_1024(%q: tensor<1x8x1024x64xf32>, %k: tensor<1x2x1024x64xf32>,
                           %v: tensor<1x2x1024x64xf32>) -> tensor<1x8x1024x64xf32> {
  %o = tfm.attention %q, %k, %v {mask = #tfm.mask<causal>}
      : (tensor<1x8x1024x64xf32>, tensor<1x2x1024x64xf32>, tensor<1x2x1024x64xf32>)
      -> tensor<1x8x1024x64xf32>
  return %o : tensor<1x8x1024x64xf32>
}

// -----

// A sliding window bounds the key loop on both sides: the first visited
// tile starts at floor((q0 - W + 1) / TK) * TK.
// CHECK-LABEL: func.func @sliding_window_bounds
// CHECK: scf.forall
// CHECK:   %[[FIRST:.+]] = arith.subi %{{.+}}, %c127
// CHECK:   %[[BEGIN:.+]] = arith.maxsi %[[FIRST]], %c0
// CHECK:   %[[TILE:.+]] = arith.divsi %[[BEGIN]], %c32
// CHECK:   %[[START:.+]] = arith.muli %[[TILE]], %c32
// CHECK:   scf.for %{{.+}} = %[[START]] to
func.func @sliding_window_bounds(%q: tensor<1x1x4096x64xf32>, %k: tensor<1x1x4096x64xf32>,
                                 %v: tensor<1x1x4096x64xf32>) -> tensor<1x1x4096x64xf32> {
  %o = tfm.attention %q, %k, %v {mask = #tfm.mask<sliding_window<128>>}
      : (tensor<1x1x4096x64xf32>, tensor<1x1x4096x64xf32>, tensor<1x1x4096x64xf32>)
      -> tensor<1x1x4096x64xf32>
  return %o : tensor<1x1x4096x64xf32>
}

// -----

// kv_lengths bound the key loop; without a structured mask only the last,
// partial key tile needs an element mask (the key range).
// CHECK-LABEL: func.func @padded_without_mask
// CHECK: scf.forall (%[[B:.+]], %{{.+}}, %{{.+}}) in
// CHECK:   %[[LEN:.+]] = tensor.extract %{{.+}}[%[[B]]] : tensor<?xi32>
// CHECK:   %[[LENGTH:.+]] = arith.index_cast %[[LEN]] : i32 to index
// CHECK:   scf.for
// CHECK:     %[[COMPLETE:.+]] = arith.cmpi sle
// CHECK:     linalg.matmul
// CHECK:     scf.if %[[COMPLETE]] -> (tensor<64x32xf32>)
// CHECK:   scf.yield
func.func @padded_without_mask(%q: tensor<?x2x?x16xf32>, %k: tensor<?x2x?x16xf32>,
                               %v: tensor<?x2x?x16xf32>, %lengths: tensor<?xi32>)
    -> tensor<?x2x?x16xf32> {
  %o = tfm.attention %q, %k, %v kv_lengths(%lengths)
      : (tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?xi32>)
      -> tensor<?x2x?x16xf32>
  return %o : tensor<?x2x?x16xf32>
}

// -----

// Decode with one kv head: (batch, kv head) alone is 2 work items, so the
// key range splits (flash-decoding) into 16 runs of 2 tiles. Each writes its
// normalized rows and their log-sum-exp m + log(l); a merge weights them by
// exp(lse - max lse).
// CHECK-LABEL: func.func @mqa_decode_split_keys
// CHECK-NOT: 1000x1000
// CHECK-DAG: %[[NEG_INF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[PARTS:.+]]:2 = scf.forall (%[[B:.+]], %[[S:.+]]) in (2, 16) shared_outs(%[[LSE:.+]] = %{{.+}}, %[[PART:.+]] = %{{.+}}) -> (tensor<2x1x16x8xf32>, tensor<2x1x16x8x64xf32>)
// CHECK:   tensor.collapse_shape %{{.+}} into tensor<8x64xf32>
// CHECK:   %[[BEGIN:.+]] = arith.muli %[[S]], %c64
// CHECK:   %[[NEXT:.+]] = arith.addi %[[BEGIN]], %c64
// CHECK:   %[[END:.+]] = arith.minsi %[[NEXT]], %c1000
// CHECK:   %[[STATE:.+]]:3 = scf.for %[[K0:.+]] = %[[BEGIN]] to %[[END]] step %c32
// The 8 query rows read each key row once, in place: lane-wise products over
// 16-lane chunks of D, then a sum over the lanes. No Kᵀ is packed.
// CHECK:     %[[QLANES:.+]] = tensor.expand_shape %{{.+}} into tensor<8x4x16xf32>
// CHECK:     scf.if %{{.+}} -> (tensor<8x32xf32>) {
// CHECK:       %[[KROWS:.+]] = tensor.extract_slice %{{.+}}[%[[B]], 0, %[[K0]], 0] [1, 1, 32, 64] {{.+}} to tensor<32x64xf32>
// CHECK:       %[[KLANES:.+]] = tensor.expand_shape %[[KROWS]] {{.+}} into tensor<32x4x16xf32>
// CHECK:       %[[LANES:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%[[QLANES]], %[[KLANES]] : tensor<8x4x16xf32>, tensor<32x4x16xf32>) outs(%{{.+}} : tensor<8x32x16xf32>)
// CHECK:         arith.mulf
// CHECK:         arith.addf
// CHECK:       linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[LANES]] : tensor<8x32x16xf32>) outs(%{{.+}} : tensor<8x32xf32>)
// CHECK:     } else {
// CHECK:       arith.minsi
// CHECK:     }
// CHECK-NOT: tensor<64x32xf32>
// CHECK:     math.exp
// lse = l == 0 ? -inf : m + log(l)
// CHECK:   %[[SPLIT_LSE:.+]] = linalg.generic {{.+}} ins(%[[STATE]]#0, %[[STATE]]#1 : tensor<8xf32>, tensor<8xf32>)
// CHECK:     math.log
// CHECK:     arith.select %{{.+}}, %[[NEG_INF]]
// CHECK:   %[[SPLIT_OUT:.+]] = linalg.generic {{.+}} ins(%[[STATE]]#2, %[[STATE]]#1 : tensor<8x64xf32>, tensor<8xf32>)
// CHECK:     arith.divf
// CHECK:   scf.forall.in_parallel
// CHECK:     tensor.parallel_insert_slice %[[SPLIT_LSE]] into %[[LSE]][%[[B]], 0, %[[S]], 0] [1, 1, 1, 8]
// CHECK:     tensor.parallel_insert_slice %[[SPLIT_OUT]] into %[[PART]][%[[B]], 0, %[[S]], 0, 0] [1, 1, 1, 8, 64]
// M = max over splits
// CHECK: %[[MAX:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[PARTS]]#0 : tensor<2x1x16x8xf32>) outs(%{{.+}} : tensor<2x1x8xf32>)
// CHECK:   arith.maximumf
// w = exp(lse - M), 0 for splits that saw no key
// CHECK: %[[W:.+]] = linalg.generic {{.+}} ins(%[[PARTS]]#0, %[[MAX]] : tensor<2x1x16x8xf32>, tensor<2x1x8xf32>)
// CHECK:   arith.cmpf oeq, %{{.+}}, %[[NEG_INF]]
// CHECK:   math.exp
// CHECK: %[[SUM:.+]] = linalg.generic {{.+}} ins(%[[W]] : tensor<2x1x16x8xf32>) outs(%{{.+}} : tensor<2x1x8xf32>)
// CHECK: %[[NUM:.+]] = linalg.generic {{.+}} ins(%[[W]], %[[PARTS]]#1 : {{.+}}) outs(%{{.+}} : tensor<2x1x8x64xf32>)
// CHECK: %[[OUT:.+]] = linalg.generic {{.+}} ins(%[[NUM]], %[[SUM]] : {{.+}}) outs(%{{.+}} : tensor<2x1x8x1x64xf32>)
// CHECK:   arith.cmpf oeq, %{{.+}}, %[[ZERO]]
// CHECK:   arith.divf
// CHECK: tensor.collapse_shape %[[OUT]] {{.+}} into tensor<2x8x1x64xf32>
func.func @mqa_decode_split_keys(%q: tensor<2x8x1x64xf32>, %k: tensor<2x1x1000x64xf32>,
                                 %v: tensor<2x1x1000x64xf32>) -> tensor<2x8x1x64xf32> {
  %o = tfm.attention %q, %k, %v {mask = #tfm.mask<causal>}
      : (tensor<2x8x1x64xf32>, tensor<2x1x1000x64xf32>, tensor<2x1x1000x64xf32>)
      -> tensor<2x8x1x64xf32>
  return %o : tensor<2x8x1x64xf32>
}

// -----

// Softcap, bias and a dense mask shape the score tile, in that order:
// cap·tanh(scale·s / cap) + bias, then -inf where the mask (or the end of
// the keys) hides a key. Bias and mask are read at the tile's rows and keys.
// CHECK-LABEL: func.func @dense_mask_bias_softcap
// CHECK-SAME: %[[MASK:[^:]+]]: tensor<1x2x48x80xi1>, %[[BIAS:[^:]+]]: tensor<1x2x48x80xf32>)
// CHECK-DAG: %[[CAP:.+]] = arith.constant 3.000000e+01 : f32
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 0.176776692 : f32
// CHECK-DAG: %[[NEG_INF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: scf.for
// CHECK:   linalg.matmul
// CHECK:   linalg.generic
// CHECK:     %[[SCALED:.+]] = arith.mulf %{{.+}}, %[[SCALE]] : f32
// CHECK:     %[[RATIO:.+]] = arith.divf %[[SCALED]], %[[CAP]] : f32
// CHECK:     %[[TANH:.+]] = math.tanh %[[RATIO]] : f32
// CHECK:     %[[CAPPED:.+]] = arith.mulf %[[TANH]], %[[CAP]] : f32
// CHECK:     %[[B:.+]] = tensor.extract %[[BIAS]]
// CHECK:     %[[BIASED:.+]] = arith.addf %[[CAPPED]], %[[B]] : f32
// CHECK:     %[[M:.+]] = tensor.extract %[[MASK]]
// CHECK:     %[[VISIBLE:.+]] = arith.andi %{{.+}}, %[[M]] : i1
// CHECK:     arith.select %[[VISIBLE]], %[[BIASED]], %[[NEG_INF]] : f32
func.func @dense_mask_bias_softcap(%q: tensor<1x2x48x32xf32>, %k: tensor<1x2x80x32xf32>,
    %v: tensor<1x2x80x32xf32>, %mask: tensor<1x2x48x80xi1>, %bias: tensor<1x2x48x80xf32>)
    -> tensor<1x2x48x32xf32> {
  %o = tfm.attention %q, %k, %v dense_mask(%mask) bias(%bias) {softcap = 3.0e+01 : f32}
      : (tensor<1x2x48x32xf32>, tensor<1x2x80x32xf32>, tensor<1x2x80x32xf32>,
         tensor<1x2x48x80xi1>, tensor<1x2x48x80xf32>) -> tensor<1x2x48x32xf32>
  return %o : tensor<1x2x48x32xf32>
}

// -----

// bf16 inputs: Q, K and V tiles are widened to f32 for the matmuls and the
// online softmax, and the result is rounded to bf16 once, at the end.
// CHECK-LABEL: func.func @bf16_causal
// CHECK: arith.extf %{{.+}} : bf16 to f32
// CHECK: scf.for
// CHECK:   linalg.generic {{.+}} ins(%{{.+}} : tensor<32x32xbf16>) outs(%{{.+}} : tensor<32x32xf32>)
// CHECK:     arith.extf %{{.+}} : bf16 to f32
// CHECK:   linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<128x32xf32>, tensor<32x32xf32>)
// CHECK: linalg.generic {{.+}} outs(%{{.+}} : tensor<1x2x2x64x32xbf16>)
// CHECK:   arith.truncf %{{.+}} : f32 to bf16
// CHECK-NOT: arith.truncf
// CHECK: return
func.func @bf16_causal(%q: tensor<1x4x64x32xbf16>, %k: tensor<1x2x64x32xbf16>,
    %v: tensor<1x2x64x32xbf16>) -> tensor<1x4x64x32xbf16> {
  %o = tfm.attention %q, %k, %v {mask = #tfm.mask<causal>}
      : (tensor<1x4x64x32xbf16>, tensor<1x2x64x32xbf16>, tensor<1x2x64x32xbf16>)
      -> tensor<1x4x64x32xbf16>
  return %o : tensor<1x4x64x32xbf16>
}

// -----

// A decode step whose head dim (40) is not a whole number of 16-lane chunks:
// the keys are split (2 kv heads x 8 splits), the 4 query heads of a group
// form a 4-row tile against a packed Kᵀ tile (the key-row form needs whole
// chunks), and the splits are merged by log-sum-exp.
// CHECK-LABEL: func.func @decode_head_dim_40
// CHECK: %[[PARTS:.+]]:2 = scf.forall (%{{.+}}, %{{.+}}) in (2, 8) {{.+}} -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4x40xf32>)
// CHECK:   tensor.collapse_shape %{{.+}} into tensor<4x40xf32>
// CHECK:   scf.for
// CHECK:     linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<4x40xf32>, tensor<40x32xf32>)
// CHECK: %[[MAX:.+]] = linalg.generic {{.+}} ins(%[[PARTS]]#0 : tensor<1x2x8x4xf32>)
// CHECK:   arith.maximumf
// CHECK: %[[WEIGHTS:.+]] = linalg.generic {{.+}} ins(%[[PARTS]]#0, %[[MAX]] :
// CHECK:   math.exp
// CHECK: %[[TOTAL:.+]] = linalg.generic {{.+}} ins(%[[WEIGHTS]] : tensor<1x2x8x4xf32>)
// CHECK: %[[MERGED:.+]] = linalg.generic {{.+}} ins(%[[WEIGHTS]], %[[PARTS]]#1 : tensor<1x2x8x4xf32>, tensor<1x2x8x4x40xf32>)
// CHECK: linalg.generic {{.+}} ins(%[[MERGED]], %[[TOTAL]] :
// CHECK:   arith.divf
func.func @decode_head_dim_40(%q: tensor<1x8x1x40xf32>, %k: tensor<1x2x300x40xf32>,
    %v: tensor<1x2x300x40xf32>) -> tensor<1x8x1x40xf32> {
  %o = tfm.attention %q, %k, %v
      : (tensor<1x8x1x40xf32>, tensor<1x2x300x40xf32>, tensor<1x2x300x40xf32>)
      -> tensor<1x8x1x40xf32>
  return %o : tensor<1x8x1x40xf32>
}

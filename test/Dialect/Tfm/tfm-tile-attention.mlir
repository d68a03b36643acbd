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
// The query rows of the group's 4 heads, gathered once per query tile in
// their element type; rows past the sequence repeat the last one.
// CHECK:   %[[QPACK:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<4x64x64xf32>)
// CHECK:     arith.minsi
// CHECK:     tensor.extract %{{.+}} : tensor<1x8x1024x64xf32>
// CHECK:   %[[QTILE:.+]] = tensor.collapse_shape %[[QPACK]] {{.+}} into tensor<256x64xf32>
// Causal: keys end after the tile's last row; they start at 0.
// CHECK:   arith.minsi %{{.+}}, %c1024
// CHECK:   %[[KEY_END:.+]] = arith.maxsi
// Complete key tiles run in the loop, read in place; a band-cut tile gets
// the element mask in its step's body.
// CHECK:   %[[FULL_END:.+]] = arith.muli %{{.+}}, %[[C32]]
// CHECK:   %[[LOOP_END:.+]] = arith.minsi %{{.+}}, %[[FULL_END]]
// CHECK:   %[[STATE:.+]]:3 = scf.for %[[K0:.+]] = %c0 to %[[LOOP_END]] step %[[C32]] iter_args(%{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) -> (tensor<256xf32>, tensor<256xf32>, tensor<256x64xf32>)
// CHECK:     %[[KTILE:.+]] = tensor.extract_slice %{{.+}}[0, %[[H]], %[[K0]], 0] [1, 1, 32, 64] {{.+}} to tensor<32x64xf32>
// CHECK:     %[[VTILE:.+]] = tensor.extract_slice %{{.+}}[0, %[[H]], %[[K0]], 0] [1, 1, 32, 64] {{.+}} to tensor<32x64xf32>
// CHECK:     scf.if %{{.+}} -> (tensor<256xf32>, tensor<256xf32>, tensor<256x64xf32>) {
// CHECK:       tfm.online_attention ins(%[[QTILE]], %[[KTILE]], %[[VTILE]] : tensor<256x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>) outs(%{{.+}} : tensor<256xf32>, tensor<256xf32>, tensor<256x64xf32>) {
// CHECK-NEXT:  ^bb0(%{{.+}}: f32, %{{.+}}: index, %{{.+}}: index):
// CHECK-NEXT:    %[[SCORE:.+]] = arith.mulf
// CHECK-NEXT:    tfm.yield %[[SCORE]] : f32
// CHECK:     } else {
// CHECK:       tfm.online_attention ins(%[[QTILE]], %[[KTILE]], %[[VTILE]]
// CHECK:         arith.cmpi sle
// CHECK:         arith.select %{{.+}}, %{{.+}}, %[[NEG_INF]] : f32
// CHECK:     }
// The last, partial tile, peeled: K and V rows gathered at clamped indices.
// CHECK:   %[[PARTIAL:.+]] = arith.cmpi slt, %[[FULL_END]], %[[KEY_END]]
// CHECK:   scf.if
// CHECK:     %[[KPART:.+]] = linalg.generic
// CHECK:       arith.minsi
// CHECK:       tensor.extract
// CHECK:     %[[VPART:.+]] = linalg.generic
// CHECK:     tfm.online_attention ins(%[[QTILE]], %[[KPART]], %[[VPART]] : {{.+}}) outs(%[[STATE]]#0, %[[STATE]]#1, %[[STATE]]#2 :
// CHECK:       arith.select %{{.+}}, %{{.+}}, %[[NEG_INF]] : f32
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

// kv_lengths bound the key loop; without a structured mask complete tiles
// need no element mask, and only the peeled partial tile masks the keys
// past the length.
// CHECK-LABEL: func.func @padded_without_mask
// CHECK: scf.forall (%[[B:.+]], %{{.+}}, %{{.+}}) in
// CHECK:   %[[LEN:.+]] = tensor.extract %{{.+}}[%[[B]]] : tensor<?xi32>
// CHECK:   %[[LENGTH:.+]] = arith.index_cast %[[LEN]] : i32 to index
// CHECK:   scf.for
// CHECK-NOT: scf.if
// CHECK:     tfm.online_attention
// CHECK-NOT: arith.select
// CHECK:       tfm.yield
// CHECK:   scf.if
// CHECK:     tfm.online_attention
// CHECK:       arith.cmpi slt
// CHECK:       arith.select
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
// CHECK:   %[[QTILE:.+]] = tensor.collapse_shape %{{.+}} into tensor<8x64xf32>
// CHECK:   %[[BEGIN:.+]] = arith.muli %[[S]], %c64
// CHECK:   %[[NEXT:.+]] = arith.addi %[[BEGIN]], %c64
// CHECK:   %[[END:.+]] = arith.minsi %[[NEXT]], %c1000
// Complete tiles end at 992; the tile [992, 1000) is peeled.
// CHECK:   %[[LOOP_END:.+]] = arith.minsi %[[END]], %c992
// CHECK:   %[[LOOP:.+]]:3 = scf.for %[[K0:.+]] = %[[BEGIN]] to %[[LOOP_END]] step %c32
// CHECK:     tensor.extract_slice %{{.+}}[%[[B]], 0, %[[K0]], 0] [1, 1, 32, 64] {{.+}} to tensor<32x64xf32>
// CHECK:     tfm.online_attention ins(%[[QTILE]], %{{.+}}, %{{.+}} : tensor<8x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>)
// CHECK:   %[[FROM:.+]] = arith.cmpi sle, %[[BEGIN]], %c992
// CHECK:   %[[TO:.+]] = arith.cmpi sgt, %[[END]], %c992
// CHECK:   %[[HOLDS:.+]] = arith.andi %[[FROM]], %[[TO]]
// CHECK:   %[[STATE:.+]]:3 = scf.if %[[HOLDS]]
// CHECK:     tfm.online_attention ins(%[[QTILE]], %{{.+}}, %{{.+}}) outs(%[[LOOP]]#0, %[[LOOP]]#1, %[[LOOP]]#2
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

// Softcap, bias and a dense mask shape the score in the step's body, in
// that order: cap·tanh(scale·s / cap) + bias, then -inf where the mask (or
// the end of the keys) hides a key. Bias and mask are read at the tile's
// rows and keys. A dense mask cuts every tile: one masked step per tile.
// CHECK-LABEL: func.func @dense_mask_bias_softcap
// CHECK-SAME: %[[MASK:[^:]+]]: tensor<1x2x48x80xi1>, %[[BIAS:[^:]+]]: tensor<1x2x48x80xf32>)
// CHECK-DAG: %[[CAP:.+]] = arith.constant 3.000000e+01 : f32
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 0.176776692 : f32
// CHECK-DAG: %[[NEG_INF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: scf.for
// CHECK-NOT: scf.if
// CHECK:   tfm.online_attention
// CHECK:   ^bb0(%[[DOT:.+]]: f32, %{{.+}}: index, %{{.+}}: index):
// CHECK:     %[[SCALED:.+]] = arith.mulf %[[DOT]], %[[SCALE]] : f32
// CHECK:     %[[RATIO:.+]] = arith.divf %[[SCALED]], %[[CAP]] : f32
// CHECK:     %[[TANH:.+]] = math.tanh %[[RATIO]] : f32
// CHECK:     %[[CAPPED:.+]] = arith.mulf %[[TANH]], %[[CAP]] : f32
// CHECK:     %[[B:.+]] = tensor.extract %[[BIAS]]
// CHECK:     %[[BIASED:.+]] = arith.addf %[[CAPPED]], %[[B]] : f32
// CHECK:     %[[M:.+]] = tensor.extract %[[MASK]]
// CHECK:     %[[VISIBLE:.+]] = arith.andi %{{.+}}, %[[M]] : i1
// CHECK:     %[[SCORE:.+]] = arith.select %[[VISIBLE]], %[[BIASED]], %[[NEG_INF]] : f32
// CHECK:     tfm.yield %[[SCORE]] : f32
func.func @dense_mask_bias_softcap(%q: tensor<1x2x48x32xf32>, %k: tensor<1x2x80x32xf32>,
    %v: tensor<1x2x80x32xf32>, %mask: tensor<1x2x48x80xi1>, %bias: tensor<1x2x48x80xf32>)
    -> tensor<1x2x48x32xf32> {
  %o = tfm.attention %q, %k, %v dense_mask(%mask) bias(%bias) {softcap = 3.0e+01 : f32}
      : (tensor<1x2x48x32xf32>, tensor<1x2x80x32xf32>, tensor<1x2x80x32xf32>,
         tensor<1x2x48x80xi1>, tensor<1x2x48x80xf32>) -> tensor<1x2x48x32xf32>
  return %o : tensor<1x2x48x32xf32>
}

// -----

// bf16 inputs: the query, key and value tiles stay bf16 into the step (a
// target widens them as its products need); the state is f32 and the
// result is rounded to bf16 once, at the end.
// CHECK-LABEL: func.func @bf16_causal
// CHECK-NOT: arith.extf
// CHECK: tensor.collapse_shape %{{.+}} into tensor<128x32xbf16>
// CHECK: scf.for
// CHECK:   tfm.online_attention ins(%{{.+}}, %{{.+}}, %{{.+}} : tensor<128x32xbf16>, tensor<32x32xbf16>, tensor<32x32xbf16>) outs(%{{.+}} : tensor<128xf32>, tensor<128xf32>, tensor<128x32xf32>)
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

// A decode step with 2 kv heads: the keys are split (2 kv heads x 8 splits)
// and the 4 query heads of a group form one 4-row tile.
// CHECK-LABEL: func.func @decode_head_dim_40
// CHECK: %[[PARTS:.+]]:2 = scf.forall (%{{.+}}, %{{.+}}) in (2, 8) {{.+}} -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4x40xf32>)
// CHECK:   tensor.collapse_shape %{{.+}} into tensor<4x40xf32>
// CHECK:   scf.for
// CHECK:     tfm.online_attention ins(%{{.+}}, %{{.+}}, %{{.+}} : tensor<4x40xf32>, tensor<32x40xf32>, tensor<32x40xf32>)
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

// RUN: tfm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tfm-to-linalg,canonicalize,tfm-expose-entry-points,func.func(tfm-fuse-norm-projection,tfm-cpu-tile-projections{prepack-weights=1}),tfm-cpu-prepare-weights,canonicalize,cse)' -verify-diagnostics | FileCheck %s
// RUN: tfm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tfm-to-linalg,canonicalize,tfm-expose-entry-points,func.func(tfm-fuse-norm-projection,tfm-cpu-tile-projections),tfm-cpu-prepare-weights,canonicalize,cse)' -verify-diagnostics | FileCheck %s --check-prefix=PER-CALL
// RUN: not tfm-opt %s --pass-pipeline='builtin.module(func.func(tfm-cpu-tile-projections{prepack-weights=2}))' 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: prepack-weights must be 0 or 1, got 2

// Weights packed once (tfm-cpu-tile-projections with prepack-weights, then
// tfm-cpu-prepare-weights). An RMSNorm folded into the projection
// (tfm-fuse-norm-projection) scales the weight's steps: the entry point
// gains an input w.packed, [ceil(101 / 32), 64, 32], made from w and g,
// and no longer takes w and g, which nothing else reads (their indices
// recorded in tfm.dropped_inputs). The register blocks read its [64, 32]
// panels in place, for any number of rows (no streamed form): no packing,
// no read of w. The 5 columns past the whole panels read the first 5 of
// the last, padded one.
// CHECK-LABEL: func.func @norm_then_projection
// CHECK-SAME: (%{{[^:]+}}: memref<?x64xf32> {tfm.name = "x"}, %[[PACKED:[^:]+]]: memref<4x64x32xf32> {tfm.name = "w.packed", tfm.packed_scale = "g", tfm.packed_weight = "w"}, %{{[^:]+}}: memref<?x101xf32> {tfm.name = "y"})
// CHECK-SAME: attributes {{{.*}}tfm.dropped_inputs = array<i64: 1, 2>, tfm.input_count = 2 : i64}
// CHECK-NOT: scf.if
// CHECK: %[[PANELS:.+]] = bufferization.to_tensor %[[PACKED]] restrict : memref<4x64x32xf32> to tensor<4x64x32xf32>
// CHECK-NOT: bufferization.to_buffer
// CHECK: %[[WHOLE:.+]] = tensor.extract_slice %[[PANELS]][0, 0, 0] [3, 64, 32] [1, 1, 1] : tensor<4x64x32xf32> to tensor<3x64x32xf32>
// CHECK: tensor.extract_slice %[[WHOLE]][%{{.+}}, 0, 0] [1, 64, 32] [1, 1, 1] : tensor<3x64x32xf32> to tensor<64x32xf32>
// CHECK: tensor.extract_slice %[[PANELS]][3, 0, 0] [1, 64, 5] [1, 1, 1] : tensor<4x64x32xf32> to tensor<1x64x5xf32>
// CHECK: return
//
// The entry point that makes it: the weights and scales as inputs, the
// packed weights as outputs, built in place in the output; threads over
// the whole 32-column panels, each transposed to [64, 32] and scaled by g;
// then the last 5 columns into a panel of zeros.
// CHECK-LABEL: func.func @prepare_weights
// CHECK-SAME: (%[[PW:.+]]: memref<101x64xf32> {tfm.name = "w"}, %[[PG:.+]]: memref<64xf32> {tfm.name = "g"}, %[[POUT:.+]]: memref<4x64x32xf32> {tfm.name = "w.packed"}) -> i32
// CHECK-SAME: attributes {llvm.emit_c_interface, tfm.input_count = 2 : i64}
// CHECK: %[[TW:.+]] = bufferization.to_tensor %[[PW]] restrict
// CHECK: %[[TG:.+]] = bufferization.to_tensor %[[PG]] restrict
// CHECK: %[[DEST:.+]] = bufferization.to_tensor %[[POUT]] restrict writable
// CHECK: %[[ALL:.+]] = scf.forall (%[[P:.+]]) in (3) shared_outs(%[[O:.+]] = %[[DEST]]) -> (tensor<4x64x32xf32>)
// CHECK:   %[[ROW:.+]] = arith.muli %[[P]], %c32
// CHECK:   %[[STRIP:.+]] = tensor.extract_slice %[[TW]][%[[ROW]], 0] [32, 64] [1, 1]
// CHECK:   %[[STRIPS:.+]] = tensor.expand_shape %[[STRIP]]
// CHECK:   %[[PANEL:.+]] = linalg.generic {{.+}} ins(%[[STRIPS]], %[[TG]] : tensor<1x32x64xf32>, tensor<64xf32>) outs(%{{.+}} : tensor<1x64x32xf32>)
// CHECK:     arith.mulf
// CHECK:   tensor.parallel_insert_slice %[[PANEL]] into %[[O]][%[[P]], 0, 0] [1, 64, 32] [1, 1, 1]
// CHECK: %[[LAST:.+]] = tensor.extract_slice %[[ALL]][3, 0, 0] [1, 64, 32] [1, 1, 1]
// CHECK: %[[ZEROS:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[LAST]] : tensor<1x64x32xf32>)
// CHECK: tensor.extract_slice %[[TW]][96, 0] [5, 64] [1, 1]
// CHECK: %[[TAIL:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<1x64x5xf32>)
// CHECK: %[[PADDED:.+]] = tensor.insert_slice %[[TAIL]] into %[[ZEROS]][0, 0, 0] [1, 64, 5] [1, 1, 1]
// CHECK: %[[MADE:.+]] = tensor.insert_slice %[[PADDED]] into %[[ALL]][3, 0, 0] [1, 64, 32] [1, 1, 1]
// CHECK: bufferization.materialize_in_destination %[[MADE]] in restrict writable %[[POUT]]
// CHECK: return %c0_i32
//
// Without the option, nothing changes and nothing is made.
// PER-CALL-LABEL: func.func @norm_then_projection
// PER-CALL-NOT: packed
// PER-CALL: bufferization.to_buffer
// PER-CALL-NOT: @prepare_weights
func.func @norm_then_projection(%x: tensor<?x64xf32> {tfm.name = "x"}, %g: tensor<64xf32> {tfm.name = "g"}, %w: tensor<101x64xf32> {tfm.name = "w"}) -> (tensor<?x101xf32> {tfm.name = "y"}) {
  %n = tfm.rms_norm %x, %g eps(1.0e-05) : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %y = tfm.linear %n, %w : (tensor<?x64xf32>, tensor<101x64xf32>) -> tensor<?x101xf32>
  return %y : tensor<?x101xf32>
}

// -----

// Two entry points read the same packed input, made once; so do two
// projections of one weight. A weight that is not an entry point's input
// (here computed) and a bf16 weight (widened as it is packed) are packed
// per call, from what they are; an entry point that reads v otherwise
// (@second computes a weight from it) keeps taking it.
// CHECK-LABEL: func.func @first
// CHECK-SAME: (%{{[^:]+}}: memref<?x64xf32> {tfm.name = "x"}, %{{[^:]+}}: memref<2x64x32xf32> {tfm.name = "v.packed", tfm.packed_weight = "v"}, %{{[^:]+}}: memref<?x64xf32> {tfm.name = "y"})
// CHECK-SAME: tfm.dropped_inputs = array<i64: 1>, tfm.input_count = 2 : i64
// CHECK-LABEL: func.func @second
// CHECK-SAME: %{{[^:]+}}: memref<64x64xf32> {tfm.name = "v"}
// CHECK-SAME: %{{[^:]+}}: memref<64x64xbf16> {tfm.name = "b"}, %[[VP:[^:]+]]: memref<2x64x32xf32> {tfm.name = "v.packed", tfm.packed_weight = "v"}, %{{[^:]+}}: memref<?x64xf32> {tfm.name = "y"}
// CHECK-NOT: tfm.dropped_inputs
// CHECK-SAME: tfm.input_count = 5 : i64
// CHECK: bufferization.to_tensor %[[VP]]
// CHECK-NOT: bufferization.to_tensor %[[VP]]
// CHECK-LABEL: func.func @prepare_weights
// CHECK-SAME: (%{{[^:]+}}: memref<64x64xf32> {tfm.name = "v"}, %{{[^:]+}}: memref<2x64x32xf32> {tfm.name = "v.packed"}) -> i32
func.func @first(%x: tensor<?x64xf32> {tfm.name = "x"}, %v: tensor<64x64xf32> {tfm.name = "v"}) -> (tensor<?x64xf32> {tfm.name = "y"}) {
  %y = tfm.linear %x, %v : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
func.func @second(%x: tensor<?x64xf32> {tfm.name = "x"}, %v: tensor<64x64xf32> {tfm.name = "v"}, %xb: tensor<?x64xbf16> {tfm.name = "xb"}, %b: tensor<64x64xbf16> {tfm.name = "b"}) -> (tensor<?x64xf32> {tfm.name = "y"}, tensor<?x64xbf16> {tfm.name = "z"}) {
  %y = tfm.linear %x, %v : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  %y2 = tfm.linear %y, %v : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  %vv = arith.addf %v, %v : tensor<64x64xf32>
  %y3 = tfm.linear %y2, %vv : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  %z = tfm.linear %xb, %b : (tensor<?x64xbf16>, tensor<64x64xbf16>) -> tensor<?x64xbf16>
  return %y3, %z : tensor<?x64xf32>, tensor<?x64xbf16>
}

// -----

// Conv1D weights [K, N] (GPT-2's), read through linalg.transpose and, for
// the fused c_attn, in row slices of the transpose: each projection's
// weight is packed from the input's columns as they lie (no transpose in
// any call), one packed input per slice, named by its rows
// (tfm.packed_rows [offset, count]). Neither the input nor the transpose
// remains.
// CHECK-LABEL: func.func @conv1d
// CHECK-SAME: (%{{[^:]+}}: memref<?x64xf32> {tfm.name = "x"}, %{{[^:]+}}: memref<1x64x32xf32> {tfm.name = "c[32:64].packed", tfm.packed_rows = array<i64: 32, 32>, tfm.packed_transposed, tfm.packed_weight = "c"}, %{{[^:]+}}: memref<1x64x32xf32> {tfm.name = "c[64:96].packed", tfm.packed_rows = array<i64: 64, 32>, tfm.packed_transposed, tfm.packed_weight = "c"}, %{{[^:]+}}: memref<?x32xf32> {tfm.name = "k"}, %{{[^:]+}}: memref<?x32xf32> {tfm.name = "v"})
// CHECK-SAME: tfm.dropped_inputs = array<i64: 1>, tfm.input_count = 3 : i64
// CHECK-NOT: linalg.transpose
// CHECK-LABEL: func.func @prepare_weights
// CHECK-SAME: (%[[C:[^:]+]]: memref<64x96xf32> {tfm.name = "c"}, %[[K:[^:]+]]: memref<1x64x32xf32> {tfm.name = "c[32:64].packed"}, %[[V:[^:]+]]: memref<1x64x32xf32> {tfm.name = "c[64:96].packed"})
// CHECK: %[[TC:.+]] = bufferization.to_tensor %[[C]] restrict
// CHECK: %[[KS:.+]] = tensor.extract_slice %[[TC]][0, 32] [64, 32] [1, 1] : tensor<64x96xf32> to tensor<64x32xf32>
// CHECK: %[[KE:.+]] = tensor.expand_shape %[[KS]] {{\[\[}}0], [1, 2]] output_shape [64, 1, 32]
// CHECK: %[[KP:.+]] = linalg.generic {{.+}} ins(%[[KE]] : tensor<64x1x32xf32>) outs(%{{.+}} : tensor<1x64x32xf32>)
// CHECK: bufferization.materialize_in_destination %{{.+}} in restrict writable %[[K]]
// CHECK: tensor.extract_slice %[[TC]][0, 64] [64, 32] [1, 1]
// CHECK: bufferization.materialize_in_destination %{{.+}} in restrict writable %[[V]]
func.func @conv1d(%x: tensor<?x64xf32> {tfm.name = "x"}, %c: tensor<64x96xf32> {tfm.name = "c"}) -> (tensor<?x32xf32> {tfm.name = "k"}, tensor<?x32xf32> {tfm.name = "v"}) {
  %e = tensor.empty() : tensor<96x64xf32>
  %t = linalg.transpose ins(%c : tensor<64x96xf32>) outs(%e : tensor<96x64xf32>) permutation = [1, 0]
  %wk = tensor.extract_slice %t[32, 0] [32, 64] [1, 1] : tensor<96x64xf32> to tensor<32x64xf32>
  %wv = tensor.extract_slice %t[64, 0] [32, 64] [1, 1] : tensor<96x64xf32> to tensor<32x64xf32>
  %k = tfm.linear %x, %wk : (tensor<?x64xf32>, tensor<32x64xf32>) -> tensor<?x32xf32>
  %v = tfm.linear %x, %wv : (tensor<?x64xf32>, tensor<32x64xf32>) -> tensor<?x32xf32>
  return %k, %v : tensor<?x32xf32>, tensor<?x32xf32>
}

// -----

// Two weights of 8 columns, each no whole panel (an MQA model's k and v):
// each packed in its own output. (Built from one tensor.empty, CSE merged
// their zero fills and both were written into one output.)
// CHECK-LABEL: func.func @prepare_weights
// CHECK-SAME: (%[[K:.+]]: memref<8x32xf32> {tfm.name = "k"}, %[[V:.+]]: memref<8x32xf32> {tfm.name = "v"}, %[[KOUT:.+]]: memref<1x32x32xf32> {tfm.name = "k.packed"}, %[[VOUT:.+]]: memref<1x32x32xf32> {tfm.name = "v.packed"})
// CHECK-DAG: %[[TK:.+]] = bufferization.to_tensor %[[K]] restrict
// CHECK-DAG: %[[TV:.+]] = bufferization.to_tensor %[[V]] restrict
// CHECK: %[[KDEST:.+]] = bufferization.to_tensor %[[KOUT]] restrict writable
// CHECK: %[[KZEROS:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[KDEST]] : tensor<1x32x32xf32>)
// CHECK: tensor.expand_shape %[[TK]]
// CHECK: %[[KMADE:.+]] = tensor.insert_slice %{{.+}} into %[[KZEROS]][0, 0, 0] [1, 32, 8] [1, 1, 1]
// CHECK: bufferization.materialize_in_destination %[[KMADE]] in restrict writable %[[KOUT]]
// CHECK: %[[VDEST:.+]] = bufferization.to_tensor %[[VOUT]] restrict writable
// CHECK: %[[VZEROS:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[VDEST]] : tensor<1x32x32xf32>)
// CHECK: tensor.expand_shape %[[TV]]
// CHECK: %[[VMADE:.+]] = tensor.insert_slice %{{.+}} into %[[VZEROS]][0, 0, 0] [1, 32, 8] [1, 1, 1]
// CHECK: bufferization.materialize_in_destination %[[VMADE]] in restrict writable %[[VOUT]]
func.func @narrow_siblings(%x: tensor<?x32xf32> {tfm.name = "x"}, %k: tensor<8x32xf32> {tfm.name = "k"}, %v: tensor<8x32xf32> {tfm.name = "v"}) -> (tensor<?x8xf32> {tfm.name = "yk"}, tensor<?x8xf32> {tfm.name = "yv"}) {
  %yk = tfm.linear %x, %k : (tensor<?x32xf32>, tensor<8x32xf32>) -> tensor<?x8xf32>
  %yv = tfm.linear %x, %v : (tensor<?x32xf32>, tensor<8x32xf32>) -> tensor<?x8xf32>
  return %yk, %yv : tensor<?x8xf32>, tensor<?x8xf32>
}

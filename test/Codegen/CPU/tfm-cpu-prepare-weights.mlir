// RUN: tfm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tfm-to-linalg,canonicalize,tfm-expose-entry-points,func.func(tfm-fuse-norm-projection,tfm-cpu-tile-projections{prepack-weights=1}),tfm-cpu-prepare-weights,canonicalize,cse)' -verify-diagnostics | FileCheck %s
// RUN: tfm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tfm-to-linalg,canonicalize,tfm-expose-entry-points,func.func(tfm-fuse-norm-projection,tfm-cpu-tile-projections),tfm-cpu-prepare-weights,canonicalize,cse)' -verify-diagnostics | FileCheck %s --check-prefix=PER-CALL
// RUN: not tfm-opt %s --pass-pipeline='builtin.module(func.func(tfm-cpu-tile-projections{prepack-weights=2}))' 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: prepack-weights must be 0 or 1, got 2

// Weights packed once (tfm-cpu-tile-projections with prepack-weights, then
// tfm-cpu-prepare-weights). An RMSNorm folded into the projection
// (tfm-fuse-norm-projection) scales the weight's steps: the entry point
// gains an input w.packed, [96 / 32, 64, 32] (the 96 columns of whole
// 32-column blocks; the 5 left are packed per call from w), made from w
// and g. The register blocks read its [64, 32] panels in place: no
// packing, and no prefetch of the next panel's weights.
// CHECK-LABEL: func.func @norm_then_projection
// CHECK-SAME: %[[W:[^:]+]]: memref<101x64xf32> {tfm.name = "w"}
// CHECK-SAME: %[[PACKED:[^:]+]]: memref<3x64x32xf32> {tfm.name = "w.packed", tfm.packed_scale = "g", tfm.packed_weight = "w"}
// CHECK-SAME: %{{[^:]+}}: memref<?x101xf32> {tfm.name = "y"}
// CHECK-SAME: attributes {{{.*}}tfm.input_count = 4 : i64}
// CHECK: %[[PANELS:.+]] = bufferization.to_tensor %[[PACKED]] restrict : memref<3x64x32xf32> to tensor<3x64x32xf32>
// CHECK: %[[WT:.+]] = bufferization.to_tensor %[[W]] restrict
// CHECK: scf.forall
// CHECK: tensor.extract_slice %[[PANELS]][%{{.+}}, 0, 0] [1, 64, 32] [1, 1, 1] : tensor<3x64x32xf32> to tensor<64x32xf32>
// CHECK: tensor.extract_slice %[[WT]]
// CHECK: return
//
// The entry point that makes it: the weights and scales as inputs, the
// packed weights as outputs, threads over the 32-column panels, each
// transposed to [64, 32] and scaled by g.
// CHECK-LABEL: func.func @prepare_weights
// CHECK-SAME: (%[[PW:.+]]: memref<101x64xf32> {tfm.name = "w"}, %[[PG:.+]]: memref<64xf32> {tfm.name = "g"}, %[[POUT:.+]]: memref<3x64x32xf32> {tfm.name = "w.packed"}) -> i32
// CHECK-SAME: attributes {llvm.emit_c_interface, tfm.input_count = 2 : i64}
// CHECK: %[[TW:.+]] = bufferization.to_tensor %[[PW]] restrict
// CHECK: %[[TG:.+]] = bufferization.to_tensor %[[PG]] restrict
// CHECK: %[[ALL:.+]] = scf.forall (%[[P:.+]]) in (3) shared_outs(%[[O:.+]] = %{{.+}}) -> (tensor<3x64x32xf32>)
// CHECK:   %[[ROW:.+]] = arith.muli %[[P]], %c32
// CHECK:   %[[STRIP:.+]] = tensor.extract_slice %[[TW]][%[[ROW]], 0] [32, 64] [1, 1]
// CHECK:   %[[STRIPS:.+]] = tensor.expand_shape %[[STRIP]]
// CHECK:   %[[PANEL:.+]] = linalg.generic {{.+}} ins(%[[STRIPS]], %[[TG]] : tensor<1x32x64xf32>, tensor<64xf32>) outs(%{{.+}} : tensor<1x64x32xf32>)
// CHECK:     arith.mulf
// CHECK:   tensor.parallel_insert_slice %[[PANEL]] into %[[O]][%[[P]], 0, 0] [1, 64, 32] [1, 1, 1]
// CHECK: bufferization.materialize_in_destination %[[ALL]] in restrict writable %[[POUT]]
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
// per call, from what they are.
// CHECK-LABEL: func.func @first
// CHECK-SAME: %{{[^:]+}}: memref<2x64x32xf32> {tfm.name = "v.packed", tfm.packed_weight = "v"}, %{{[^:]+}}: memref<?x64xf32> {tfm.name = "y"}
// CHECK-SAME: tfm.input_count = 3 : i64
// CHECK-LABEL: func.func @second
// CHECK-SAME: %{{[^:]+}}: memref<64x64xbf16> {tfm.name = "b"}, %[[VP:[^:]+]]: memref<2x64x32xf32> {tfm.name = "v.packed", tfm.packed_weight = "v"}, %{{[^:]+}}: memref<?x64xf32> {tfm.name = "y"}
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

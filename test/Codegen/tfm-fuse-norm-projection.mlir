// RUN: tfm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tfm-to-linalg,canonicalize,cse,func.func(tfm-fuse-norm-projection),canonicalize,cse)' | FileCheck %s

// An RMSNorm read by two projections (q and k): each projects the rows
// themselves with the norm's weight as a column scale, and multiplies its
// product by the row scale, computed once; the normalized rows are gone.
// CHECK-LABEL: func.func @rms_norm_then_projections
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x?x64xf32>, %[[G:[^:]+]]: tensor<64xf32>, %[[WQ:[^:]+]]: tensor<64x64xf32>, %[[WK:[^:]+]]: tensor<32x64xf32>)
// CHECK: %[[SUMSQ:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]] : tensor<?x?x64xf32>)
// CHECK: %[[SCALE:.+]] = linalg.generic {{.+}} ins(%[[SUMSQ]] : tensor<?x?xf32>)
// CHECK:   math.rsqrt
// CHECK-NOT: ins(%[[X]], %[[SCALE]], %[[G]]
// CHECK: %[[ROWS:.+]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1], [2]]
// CHECK: %[[ROW_SCALE:.+]] = tensor.collapse_shape %[[SCALE]] {{\[\[}}0, 1]]
// CHECK: %[[Q:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[ROWS]], %[[WQ]], %[[G]] : tensor<?x64xf32>, tensor<64x64xf32>, tensor<64xf32>)
// CHECK:   arith.mulf
// CHECK:   arith.mulf
// CHECK:   arith.addf
// CHECK: linalg.generic {{.+}} ins(%[[Q]], %[[ROW_SCALE]] : tensor<?x64xf32>, tensor<?xf32>)
// CHECK:   arith.mulf
// CHECK: %[[K:.+]] = linalg.generic {{.+}} ins(%[[ROWS]], %[[WK]], %[[G]] : tensor<?x64xf32>, tensor<32x64xf32>, tensor<64xf32>)
// CHECK: linalg.generic {{.+}} ins(%[[K]], %[[ROW_SCALE]] : tensor<?x32xf32>, tensor<?xf32>)
func.func @rms_norm_then_projections(%x: tensor<?x?x64xf32>, %g: tensor<64xf32>,
                                     %wq: tensor<64x64xf32>, %wk: tensor<32x64xf32>)
    -> (tensor<?x?x64xf32>, tensor<?x?x32xf32>) {
  %n = tfm.rms_norm %x, %g eps(1.0e-05) : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  %q = tfm.linear %n, %wq : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
  %k = tfm.linear %n, %wk : (tensor<?x?x64xf32>, tensor<32x64xf32>) -> tensor<?x?x32xf32>
  return %q, %k : tensor<?x?x64xf32>, tensor<?x?x32xf32>
}

// -----

// Normalized rows that something else reads too stay, and the projection
// still reads the rows themselves.
// CHECK-LABEL: func.func @normalized_rows_also_returned
// CHECK-SAME: (%[[X:[^:]+]]: tensor<8x64xf32>, %[[G:[^:]+]]: tensor<64xf32>, %[[W:[^:]+]]: tensor<16x64xf32>)
// CHECK: %[[N:.+]] = linalg.generic {{.+}} ins(%[[X]], %{{.+}}, %[[G]] : tensor<8x64xf32>, tensor<8xf32>, tensor<64xf32>)
// CHECK: linalg.generic {{.+}} ins(%[[X]], %[[W]], %[[G]] : tensor<8x64xf32>, tensor<16x64xf32>, tensor<64xf32>)
// CHECK: return %[[N]]
func.func @normalized_rows_also_returned(%x: tensor<8x64xf32>, %g: tensor<64xf32>, %w: tensor<16x64xf32>)
    -> (tensor<8x64xf32>, tensor<8x16xf32>) {
  %n = tfm.rms_norm %x, %g eps(1.0e-05) : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  %y = tfm.linear %n, %w : (tensor<8x64xf32>, tensor<16x64xf32>) -> tensor<8x16xf32>
  return %n, %y : tensor<8x64xf32>, tensor<8x16xf32>
}

// -----

// A LayerNorm folds into its projections as a row transform: each
// projection reads the rows themselves with the mean and row scale (per
// row) and the norm's weight and bias (per step), and normalizes them as it
// reads them, ((x - mean)·r)·g + b, in f32; the normalized rows are gone.
// CHECK-DAG: #[[ROWS_MAP:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[WEIGHTS_MAP:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[PER_ROW:.+]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-DAG: #[[PER_STEP:.+]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func.func @layer_norm_then_projections
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x?x64xbf16>, %[[G:[^:]+]]: tensor<64xbf16>, %[[B:[^:]+]]: tensor<64xbf16>, %[[WQ:[^:]+]]: tensor<64x64xbf16>, %[[WK:[^:]+]]: tensor<32x64xbf16>)
// CHECK: %[[MEAN:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "parallel"]} ins(%{{[0-9]+}} : tensor<?x?xf32>)
// CHECK: %[[SCALE:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "parallel"]} ins(%{{[0-9]+}} : tensor<?x?xf32>)
// CHECK:   math.rsqrt
// CHECK-NOT: ins(%[[X]], %[[MEAN]], %[[SCALE]]
// CHECK: %[[ROWS:.+]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1], [2]]
// CHECK: %[[ROW_MEAN:.+]] = tensor.collapse_shape %[[MEAN]] {{\[\[}}0, 1]]
// CHECK: %[[ROW_SCALE:.+]] = tensor.collapse_shape %[[SCALE]] {{\[\[}}0, 1]]
// CHECK: linalg.generic {indexing_maps = [#[[ROWS_MAP]], #[[WEIGHTS_MAP]], #[[PER_ROW]], #[[PER_ROW]], #[[PER_STEP]], #[[PER_STEP]], {{.+}}], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[ROWS]], %[[WQ]], %[[ROW_MEAN]], %[[ROW_SCALE]], %[[G]], %[[B]] :
// CHECK:   arith.extf
// CHECK:   arith.subf
// CHECK:   arith.mulf
// CHECK:   arith.mulf
// CHECK:   arith.addf
// CHECK-NOT: arith.truncf
// CHECK:   arith.mulf
// CHECK:   arith.addf
// CHECK: linalg.generic {{.+}} ins(%[[ROWS]], %[[WK]], %[[ROW_MEAN]], %[[ROW_SCALE]], %[[G]], %[[B]] :
func.func @layer_norm_then_projections(%x: tensor<?x?x64xbf16>, %g: tensor<64xbf16>, %b: tensor<64xbf16>,
                                       %wq: tensor<64x64xbf16>, %wk: tensor<32x64xbf16>)
    -> (tensor<?x?x64xbf16>, tensor<?x?x32xbf16>) {
  %n = tfm.layer_norm %x, %g, %b eps(1.0e-05) : (tensor<?x?x64xbf16>, tensor<64xbf16>, tensor<64xbf16>) -> tensor<?x?x64xbf16>
  %q = tfm.linear %n, %wq : (tensor<?x?x64xbf16>, tensor<64x64xbf16>) -> tensor<?x?x64xbf16>
  %k = tfm.linear %n, %wk : (tensor<?x?x64xbf16>, tensor<32x64xbf16>) -> tensor<?x?x32xbf16>
  return %q, %k : tensor<?x?x64xbf16>, tensor<?x?x32xbf16>
}

// -----

// Without a bias: the same, one operand fewer.
// CHECK-LABEL: func.func @layer_norm_without_bias
// CHECK: linalg.generic {{.+}} ins(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : tensor<8x64xf32>, tensor<16x64xf32>, tensor<8xf32>, tensor<8xf32>, tensor<64xf32>)
// CHECK-NOT: linalg.generic
func.func @layer_norm_without_bias(%x: tensor<8x64xf32>, %g: tensor<64xf32>, %w: tensor<16x64xf32>)
    -> tensor<8x16xf32> {
  %n = tfm.layer_norm %x, %g eps(1.0e-05) : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  %y = tfm.linear %n, %w : (tensor<8x64xf32>, tensor<16x64xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

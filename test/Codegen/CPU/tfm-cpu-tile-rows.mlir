// RUN: tfm-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tfm-cpu-tile-rows),canonicalize,cse)' | FileCheck %s
// RUN: tfm-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tfm-cpu-tile-rows),canonicalize,cse)' --mlir-print-debuginfo --mlir-print-local-scope | FileCheck %s --check-prefix=SCHEDULE
// Rows cost the same: their loop keeps OpenMP's static schedule
// (tfm-cpu-dynamic-schedule).
// SCHEDULE: } loc(fused<"tfm.static_schedule">

// A row reduction (RMSNorm's sum of squares) over a run-time batch and
// sequence: one scf.forall over both dynamic loops, each iteration a static
// 1 x 1 x 256 op over its row.
// CHECK-LABEL: func.func @row_reduction
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x256xf32>, %[[INIT:.+]]: tensor<?x?xf32>)
// CHECK-DAG: %[[B:.+]] = tensor.dim %[[X]], %c0
// CHECK-DAG: %[[S:.+]] = tensor.dim %[[X]], %c1
// CHECK: scf.forall (%[[I:.+]], %[[J:.+]]) in (%[[B]], %[[S]]) shared_outs(%[[OUT:.+]] = %[[INIT]])
// CHECK:   %[[ROW:.+]] = tensor.extract_slice %[[X]][%[[I]], %[[J]], 0] [1, 1, 256] [1, 1, 1] : tensor<?x?x256xf32> to tensor<1x1x256xf32>
// CHECK:   %[[ACC:.+]] = tensor.extract_slice %[[OUT]][%[[I]], %[[J]]] [1, 1] [1, 1]
// CHECK:   %[[SUM:.+]] = linalg.generic
// CHECK-SAME: ins(%[[ROW]] : tensor<1x1x256xf32>) outs(%[[ACC]] : tensor<1x1xf32>)
// CHECK:   scf.forall.in_parallel
// CHECK:     tensor.parallel_insert_slice %[[SUM]] into %[[OUT]][%[[I]], %[[J]]] [1, 1] [1, 1]
#rows = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#sums = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @row_reduction(%x: tensor<?x?x256xf32>, %init: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = linalg.generic {indexing_maps = [#rows, #sums], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<?x?x256xf32>) outs(%init : tensor<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %sum = arith.addf %sq, %out : f32
    linalg.yield %sum : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// -----

// A transpose of heads, [B, S, H, D] -> [B, H, S, D]: only the dynamic
// loops are tiled; the heads and the head dim stay whole.
// CHECK-LABEL: func.func @transpose_heads
// CHECK: scf.forall (%[[I:.+]], %[[J:.+]]) in
// CHECK:   tensor.extract_slice %{{.+}}[%[[I]], %[[J]], 0, 0] [1, 1, 8, 32]
// CHECK:   linalg.transpose ins(%{{.+}} : tensor<1x1x8x32xf32>) outs(%{{.+}} : tensor<1x8x1x32xf32>)
func.func @transpose_heads(%x: tensor<?x?x8x32xf32>, %init: tensor<?x8x?x32xf32>) -> tensor<?x8x?x32xf32> {
  %t = linalg.transpose ins(%x : tensor<?x?x8x32xf32>) outs(%init : tensor<?x8x?x32xf32>) permutation = [0, 2, 1, 3]
  return %t : tensor<?x8x?x32xf32>
}

// -----

// Left alone: a dynamic reduction loop (rows are not independent along
// it) and static shapes. Ops inside a loop (tiles of something else: a
// projection's column block and its epilogue) take their rows in a
// sequential loop, not a parallel one (nested OpenMP regions).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: scf.forall
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK: linalg.fill {{.+}} -> tensor<4x256xf32>
// CHECK: scf.for
// CHECK:   scf.for
// CHECK:     linalg.fill {{.+}} -> tensor<1x256xf32>
#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>
func.func @left_alone(%x: tensor<8x?xf32>, %init: tensor<8xf32>, %n: index, %e: tensor<?x256xf32>) -> (tensor<8xf32>, tensor<4x256xf32>, tensor<?x256xf32>) {
  %r = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x?xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.addf %in, %o : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x256xf32>
  %static = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x256xf32>) -> tensor<4x256xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %loop = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %e) -> tensor<?x256xf32> {
    %f = linalg.fill ins(%zero : f32) outs(%acc : tensor<?x256xf32>) -> tensor<?x256xf32>
    scf.yield %f : tensor<?x256xf32>
  }
  return %r, %static, %loop : tensor<8xf32>, tensor<4x256xf32>, tensor<?x256xf32>
}

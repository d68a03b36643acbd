// RUN: tfm-opt %s --tfm-expose-entry-points --tfm-insert-runtime-checks --split-input-file | FileCheck %s

// Dims that index the same loop must agree, gathered ids must be in range,
// and the output buffer must fit the result: all checked before computing.
// CHECK-LABEL: func.func @embedding_then_rope
// CHECK-SAME: (%[[IDS:[^:]+]]: memref<?x?xi32> {tfm.name = "ids"}, %[[POS:[^:]+]]: memref<?x?xi32> {tfm.name = "positions"}, %[[TABLE:[^:]+]]: memref<10x8xf32> {tfm.name = "table"}, %[[OUT:[^:]+]]: memref<?x1x?x8xf32> {tfm.name = "out"}) -> i32
// CHECK-SAME: tfm.checks = ["dim 0 of 'ids' must equal dim 0 of 'positions'", "dim 1 of 'ids' must equal dim 1 of 'positions'", "every element of 'ids' must be in [0, 10)", "dim 0 of 'out' must equal dim 0 of 'ids'", "dim 2 of 'out' must equal dim 1 of 'ids'"]
// CHECK-DAG: %[[IDS_B:.+]] = memref.dim %[[IDS]], %c0
// CHECK-DAG: %[[POS_B:.+]] = memref.dim %[[POS]], %c0
// CHECK: %[[SAME_B:.+]] = arith.cmpi eq, %[[IDS_B]], %[[POS_B]] : index
// CHECK: %[[IN_RANGE:.+]] = linalg.generic {{.+}} iterator_types = ["reduction", "reduction"]
// CHECK:   arith.cmpi sge
// CHECK:   arith.cmpi slt
// CHECK: } -> tensor<i1>
// CHECK: tensor.extract %[[IN_RANGE]][] : tensor<i1>
// CHECK: scf.if %{{.+}} {
// CHECK:   linalg.generic
// CHECK:   bufferization.materialize_in_destination
// CHECK: }
// CHECK: return %{{.+}} : i32
func.func @embedding_then_rope(%ids: tensor<?x?xi32> {tfm.name = "ids"},
                               %positions: tensor<?x?xi32> {tfm.name = "positions"},
                               %table: tensor<10x8xf32> {tfm.name = "table"})
    -> (tensor<?x1x?x8xf32> {tfm.name = "out"}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %ids, %c0 : tensor<?x?xi32>
  %s = tensor.dim %ids, %c1 : tensor<?x?xi32>
  %init = tensor.empty(%b, %s) : tensor<?x?x8xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(b, s, d) -> (b, s)>, affine_map<(b, s, d) -> (b, s, d)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ids : tensor<?x?xi32>) outs(%init : tensor<?x?x8xf32>) {
  ^bb0(%id: i32, %out: f32):
    %row = arith.index_cast %id : i32 to index
    %col = linalg.index 2 : index
    %v = tensor.extract %table[%row, %col] : tensor<10x8xf32>
    linalg.yield %v : f32
  } -> tensor<?x?x8xf32>
  %h = tensor.expand_shape %e [[0], [1, 2], [3]] output_shape [%b, 1, %s, 8]
      : tensor<?x?x8xf32> into tensor<?x1x?x8xf32>
  %init2 = tensor.empty(%b, %s) : tensor<?x1x?x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(b, h, s, d) -> (b, h, s, d)>, affine_map<(b, h, s, d) -> (b, s)>, affine_map<(b, h, s, d) -> (b, h, s, d)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%h, %positions : tensor<?x1x?x8xf32>, tensor<?x?xi32>) outs(%init2 : tensor<?x1x?x8xf32>) {
  ^bb0(%x: f32, %p: i32, %out: f32):
    %pf = arith.sitofp %p : i32 to f32
    %y = arith.mulf %x, %pf : f32
    linalg.yield %y : f32
  } -> tensor<?x1x?x8xf32>
  return %r : tensor<?x1x?x8xf32>
}

// -----

// Fully static shapes need no check.
// CHECK-LABEL: func.func @static_needs_no_checks
// CHECK-NOT: tfm.checks
// CHECK-NOT: scf.if
func.func @static_needs_no_checks(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %init = tensor.empty() : tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Asserted sizes become checks too, and the asserts go: two dims that must
// be equal (what tiling assumes) and a dim with a lower bound (a model's
// last position).
// CHECK-LABEL: func.func @asserted_sizes
// CHECK-SAME: tfm.checks = ["dim 0 of 'x' must equal dim 0 of 'y'", "dim 1 of 'x' must be at least 1"
// CHECK-NOT: cf.assert
// CHECK: %[[ROWS:.+]] = memref.dim %{{.+}}, %c1
// CHECK: arith.cmpi sge, %[[ROWS]], %c1
// CHECK: scf.if
func.func @asserted_sizes(%x: tensor<?x?xf32> {tfm.name = "x"},
                          %y: tensor<?x?xf32> {tfm.name = "y"})
    -> (tensor<?x1xf32> {tfm.name = "out"}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bx = tensor.dim %x, %c0 : tensor<?x?xf32>
  %by = tensor.dim %y, %c0 : tensor<?x?xf32>
  %same = arith.cmpi eq, %bx, %by : index
  cf.assert %same, "rows of x and y"
  %s = tensor.dim %x, %c1 : tensor<?x?xf32>
  %nonempty = arith.cmpi sge, %s, %c1 : index
  cf.assert %nonempty, "a last column"
  %last = arith.subi %s, %c1 : index
  %r = tensor.extract_slice %x[0, %last] [%bx, 1] [1, 1] : tensor<?x?xf32> to tensor<?x1xf32>
  return %r : tensor<?x1xf32>
}

// -----

// An assert computed from the inputs alone (a reduction over an index
// input, bounded by a dim of another input) becomes a check with its own
// message, evaluated before anything runs.
// CHECK-LABEL: func.func @input_values_asserted
// CHECK-SAME: tfm.checks = [{{.*}}"every length must be below the capacity"]
// CHECK-NOT: cf.assert
// CHECK: %[[ALL:.+]] = linalg.generic {{.+}} iterator_types = ["reduction"]
// CHECK:   arith.cmpi slt
// CHECK: %[[OK:.+]] = tensor.extract %[[ALL]][]
// CHECK: arith.andi {{.*}}%[[OK]]
// CHECK: scf.if
func.func @input_values_asserted(%lengths: tensor<?xi32> {tfm.name = "lengths"},
                                 %cache: tensor<?x4xf32> {tfm.name = "cache"})
    -> (tensor<?x4xf32> {tfm.name = "out"}) {
  %c0 = arith.constant 0 : index
  %capacity = tensor.dim %cache, %c0 : tensor<?x4xf32>
  %true = arith.constant true
  %init = tensor.empty() : tensor<i1>
  %filled = linalg.fill ins(%true : i1) outs(%init : tensor<i1>) -> tensor<i1>
  %all = linalg.generic {indexing_maps = [affine_map<(b) -> (b)>, affine_map<(b) -> ()>],
                         iterator_types = ["reduction"]}
      ins(%lengths : tensor<?xi32>) outs(%filled : tensor<i1>) {
  ^bb0(%n: i32, %acc: i1):
    %i = arith.index_cast %n : i32 to index
    %below = arith.cmpi slt, %i, %capacity : index
    %both = arith.andi %acc, %below : i1
    linalg.yield %both : i1
  } -> tensor<i1>
  %ok = tensor.extract %all[] : tensor<i1>
  cf.assert %ok, "every length must be below the capacity"
  %twice = arith.addf %cache, %cache : tensor<?x4xf32>
  return %twice : tensor<?x4xf32>
}

// RUN: tfm-opt %s --split-input-file --tfm-cpu-lower-amx | FileCheck %s

// A 32 x 32 block marked by tfm-cpu-tile-projections (amx=1), on buffers:
// where the CPU runtime says AMX state was granted, 2 x 2 accumulator tiles
// loaded from the output block, per 32 steps of k (KC = 64: two steps,
// unrolled) two 16-row tiles of the rows and two 16-column tiles of pairs
// and four tile products, then the stores; otherwise the generic itself,
// unmarked.
// CHECK-LABEL: func.func private @tfm_cpu_amx_ready() -> i1
// CHECK-LABEL: func.func @block
// CHECK-SAME: (%[[A:.+]]: memref<32x64xbf16, strided<[?, 1], offset: ?>>, %[[P:.+]]: memref<32x64xbf16, strided<[?, 1], offset: ?>>, %[[Y:.+]]: memref<32x32xf32, strided<[?, 1], offset: ?>>)
// CHECK-NEXT: %[[READY:.+]] = call @tfm_cpu_amx_ready() : () -> i1
// CHECK: scf.if %[[READY]] {
// CHECK:   %[[Y00:.+]] = amx.tile_load %[[Y]][%c0, %c0] : {{.+}} into !amx.tile<16x16xf32>
// CHECK:   %[[Y01:.+]] = amx.tile_load %[[Y]][%c0, %c16]
// CHECK:   %[[Y10:.+]] = amx.tile_load %[[Y]][%c16, %c0]
// CHECK:   %[[Y11:.+]] = amx.tile_load %[[Y]][%c16, %c16]
// CHECK:   %[[A0:.+]] = amx.tile_load %[[A]][%c0, %c0] : {{.+}} into !amx.tile<16x32xbf16>
// CHECK:   %[[A1:.+]] = amx.tile_load %[[A]][%c16, %c0]
// CHECK:   %[[P0:.+]] = amx.tile_load %[[P]][%c0, %c0]
// CHECK:   %[[P1:.+]] = amx.tile_load %[[P]][%c0, %c32]
// CHECK:   %[[S00:.+]] = amx.tile_mulf %[[A0]], %[[P0]], %[[Y00]]
// CHECK:   %[[S01:.+]] = amx.tile_mulf %[[A0]], %[[P1]], %[[Y01]]
// CHECK:   %[[S10:.+]] = amx.tile_mulf %[[A1]], %[[P0]], %[[Y10]]
// CHECK:   %[[S11:.+]] = amx.tile_mulf %[[A1]], %[[P1]], %[[Y11]]
// CHECK:   %[[B0:.+]] = amx.tile_load %[[A]][%c0, %c32]
// CHECK:   %[[B1:.+]] = amx.tile_load %[[A]][%c16, %c32]
// CHECK:   %[[Q0:.+]] = amx.tile_load %[[P]][%c16, %c0]
// CHECK:   %[[Q1:.+]] = amx.tile_load %[[P]][%c16, %c32]
// CHECK:   %[[T00:.+]] = amx.tile_mulf %[[B0]], %[[Q0]], %[[S00]]
// CHECK:   %[[T01:.+]] = amx.tile_mulf %[[B0]], %[[Q1]], %[[S01]]
// CHECK:   %[[T10:.+]] = amx.tile_mulf %[[B1]], %[[Q0]], %[[S10]]
// CHECK:   %[[T11:.+]] = amx.tile_mulf %[[B1]], %[[Q1]], %[[S11]]
// CHECK:   amx.tile_store %[[Y]][%c0, %c0], %[[T00]]
// CHECK:   amx.tile_store %[[Y]][%c0, %c16], %[[T01]]
// CHECK:   amx.tile_store %[[Y]][%c16, %c0], %[[T10]]
// CHECK:   amx.tile_store %[[Y]][%c16, %c16], %[[T11]]
// CHECK: } else {
// CHECK:   linalg.generic
// CHECK-NOT: tfm.amx_tiles
// CHECK: }
// CHECK-NOT: linalg.generic
// CHECK: return
#rows = affine_map<(m, n, kp, t) -> (m, kp, t)>
#pairs = affine_map<(m, n, kp, t) -> (kp, n, t)>
#sums = affine_map<(m, n, kp, t) -> (m, n)>
func.func @block(%a: memref<32x64xbf16, strided<[?, 1], offset: ?>>, %p: memref<32x64xbf16, strided<[?, 1], offset: ?>>, %y: memref<32x32xf32, strided<[?, 1], offset: ?>>) {
  %ra = memref.expand_shape %a [[0], [1, 2]] output_shape [32, 32, 2] : memref<32x64xbf16, strided<[?, 1], offset: ?>> into memref<32x32x2xbf16, strided<[?, 2, 1], offset: ?>>
  %rp = memref.expand_shape %p [[0], [1, 2]] output_shape [32, 32, 2] : memref<32x64xbf16, strided<[?, 1], offset: ?>> into memref<32x32x2xbf16, strided<[?, 2, 1], offset: ?>>
  linalg.generic {indexing_maps = [#rows, #pairs, #sums], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%ra, %rp : memref<32x32x2xbf16, strided<[?, 2, 1], offset: ?>>, memref<32x32x2xbf16, strided<[?, 2, 1], offset: ?>>)
      outs(%y : memref<32x32xf32, strided<[?, 1], offset: ?>>) attrs = {tfm.amx_tiles} {
  ^bb0(%x: bf16, %w: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %wf = arith.extf %w : bf16 to f32
    %prod = arith.mulf %xf, %wf : f32
    %sum = arith.addf %acc, %prod : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

// Blocks in a loop ask once, at the function's entry: LLVM would load the
// tile configuration again after a call in the loop.
// CHECK-LABEL: func.func @blocks_in_a_loop
// CHECK-NEXT: %[[READY:.+]] = call @tfm_cpu_amx_ready() : () -> i1
// CHECK-NOT: call @tfm_cpu_amx_ready
// CHECK: scf.for
// CHECK:   scf.if %[[READY]] {
// CHECK-NOT: call @tfm_cpu_amx_ready
// CHECK:   scf.if %[[READY]] {
// CHECK-NOT: call @tfm_cpu_amx_ready
// CHECK: return
#rows = affine_map<(m, n, kp, t) -> (m, kp, t)>
#pairs = affine_map<(m, n, kp, t) -> (kp, n, t)>
#sums = affine_map<(m, n, kp, t) -> (m, n)>
func.func @blocks_in_a_loop(%a: memref<32x32xbf16, strided<[?, 1], offset: ?>>, %p: memref<16x64xbf16, strided<[?, 1], offset: ?>>, %y: memref<32x32xf32, strided<[?, 1], offset: ?>>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ra = memref.expand_shape %a [[0], [1, 2]] output_shape [32, 16, 2] : memref<32x32xbf16, strided<[?, 1], offset: ?>> into memref<32x16x2xbf16, strided<[?, 2, 1], offset: ?>>
  %rp = memref.expand_shape %p [[0], [1, 2]] output_shape [16, 32, 2] : memref<16x64xbf16, strided<[?, 1], offset: ?>> into memref<16x32x2xbf16, strided<[?, 2, 1], offset: ?>>
  scf.for %i = %c0 to %n step %c1 {
    linalg.generic {indexing_maps = [#rows, #pairs, #sums], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
        ins(%ra, %rp : memref<32x16x2xbf16, strided<[?, 2, 1], offset: ?>>, memref<16x32x2xbf16, strided<[?, 2, 1], offset: ?>>)
        outs(%y : memref<32x32xf32, strided<[?, 1], offset: ?>>) attrs = {tfm.amx_tiles} {
    ^bb0(%x: bf16, %w: bf16, %acc: f32):
      %xf = arith.extf %x : bf16 to f32
      %wf = arith.extf %w : bf16 to f32
      %prod = arith.mulf %xf, %wf : f32
      %sum = arith.addf %acc, %prod : f32
      linalg.yield %sum : f32
    }
    linalg.generic {indexing_maps = [#rows, #pairs, #sums], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
        ins(%ra, %rp : memref<32x16x2xbf16, strided<[?, 2, 1], offset: ?>>, memref<16x32x2xbf16, strided<[?, 2, 1], offset: ?>>)
        outs(%y : memref<32x32xf32, strided<[?, 1], offset: ?>>) attrs = {tfm.amx_tiles} {
    ^bb0(%x: bf16, %w: bf16, %acc: f32):
      %xf = arith.extf %x : bf16 to f32
      %wf = arith.extf %w : bf16 to f32
      %prod = arith.mulf %xf, %wf : f32
      %sum = arith.addf %acc, %prod : f32
      linalg.yield %sum : f32
    }
  }
  return
}

// -----

// Views that are not the ones amxRowBlocks forms (here the rows are not an
// expand_shape of 32 unit-stride rows): the generic stays, unmarked, and
// nothing is declared.
// CHECK-NOT: tfm_cpu_amx_ready
// CHECK-LABEL: func.func @other_views
// CHECK-NOT: amx.
// CHECK: linalg.generic
// CHECK-NOT: tfm.amx_tiles
#rows = affine_map<(m, n, kp, t) -> (m, kp, t)>
#pairs = affine_map<(m, n, kp, t) -> (kp, n, t)>
#sums = affine_map<(m, n, kp, t) -> (m, n)>
func.func @other_views(%ra: memref<32x32x2xbf16>, %p: memref<32x64xbf16>, %y: memref<32x32xf32>) {
  %rp = memref.expand_shape %p [[0], [1, 2]] output_shape [32, 32, 2] : memref<32x64xbf16> into memref<32x32x2xbf16>
  linalg.generic {indexing_maps = [#rows, #pairs, #sums], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%ra, %rp : memref<32x32x2xbf16>, memref<32x32x2xbf16>)
      outs(%y : memref<32x32xf32>) attrs = {tfm.amx_tiles} {
  ^bb0(%x: bf16, %w: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %wf = arith.extf %w : bf16 to f32
    %prod = arith.mulf %xf, %wf : f32
    %sum = arith.addf %acc, %prod : f32
    linalg.yield %sum : f32
  }
  return
}

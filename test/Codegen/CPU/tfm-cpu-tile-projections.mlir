// RUN: tfm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tfm-to-linalg,canonicalize,func.func(tfm-cpu-fuse-projection-epilogues,tfm-cpu-fuse-viewed-epilogues,tfm-cpu-fuse-sibling-projections,tfm-cpu-tile-projections),canonicalize,cse)' | FileCheck %s
// RUN: not tfm-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tfm-cpu-tile-projections{register-rows=0}))' 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: tfm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tfm-to-linalg,canonicalize,func.func(tfm-cpu-tile-projections),canonicalize,cse)' | FileCheck %s --check-prefix=NOFUSE
// RUN: tfm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tfm-to-linalg,canonicalize,func.func(tfm-cpu-fuse-projection-epilogues,tfm-cpu-fuse-viewed-epilogues,tfm-cpu-fuse-sibling-projections,tfm-cpu-tile-projections),canonicalize,cse)' --mlir-print-debuginfo --mlir-print-local-scope | FileCheck %s --check-prefix=SCHEDULE
// Column blocks cost the same: their loop keeps OpenMP's static schedule
// (tfm-cpu-dynamic-schedule).
// SCHEDULE: } loc(fused<"tfm.static_schedule">
// RUN: tfm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tfm-to-linalg,canonicalize,func.func(tfm-cpu-fuse-projection-epilogues,tfm-cpu-fuse-viewed-epilogues{bf16-dot=1},tfm-cpu-fuse-sibling-projections{bf16-dot=1},tfm-cpu-tile-projections{bf16-dot=1}),canonicalize,cse)' | FileCheck %s --check-prefix=DOT
// BAD: error: vector-width and register-rows must be positive, got vector-width=16 register-rows=0
// RUN: not tfm-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tfm-cpu-tile-projections{bf16-dot=2}))' 2>&1 | FileCheck %s --check-prefix=BAD-DOT
// BAD-DOT: error: bf16-dot must be 0 or 1, got 2
// RUN: tfm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tfm-to-linalg,canonicalize,func.func(tfm-cpu-fuse-projection-epilogues,tfm-cpu-fuse-viewed-epilogues{register-rows=12},tfm-cpu-fuse-sibling-projections{register-rows=12},tfm-cpu-tile-projections{register-rows=12}),canonicalize,cse)' | FileCheck %s --check-prefix=ROWS12
// RUN: tfm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tfm-to-linalg,canonicalize,func.func(tfm-cpu-fuse-projection-epilogues,tfm-cpu-fuse-viewed-epilogues{bf16-dot=1 amx=1},tfm-cpu-fuse-sibling-projections{bf16-dot=1 amx=1},tfm-cpu-tile-projections{bf16-dot=1 amx=1}),canonicalize,cse)' | FileCheck %s --check-prefix=AMX
// RUN: not tfm-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tfm-cpu-tile-projections{amx=1}))' 2>&1 | FileCheck %s --check-prefix=BAD-AMX
// BAD-AMX: error: amx=1 needs bf16-dot=1 (the rows AMX blocks leave run through dot products)
// RUN: tfm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tfm-to-linalg,canonicalize,func.func(tfm-cpu-fuse-projection-epilogues,tfm-cpu-fuse-viewed-epilogues,tfm-cpu-tile-projections),canonicalize,cse)' | FileCheck %s --check-prefix=SEPARATE
// RUN: tfm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tfm-to-linalg,canonicalize,func.func(tfm-cpu-fuse-projection-epilogues,tfm-cpu-fuse-sibling-projections,tfm-cpu-tile-projections),canonicalize,cse)' | FileCheck %s --check-prefix=APART

// A projection over a run-time number of rows: fewer rows than a register
// block (a decode step) stream the weights (next case); otherwise threads
// over blocks of 128 output columns, Kᵀ panels of 256 steps packed once per
// block (as 4 contiguous [256, 32] panels, one per 32 columns), chunks of
// up to 128 rows that pass every [256, 32] panel in turn
// in 8 x 32 register blocks of static shape, then the remaining rows: 4 or
// more as one more register block of rows padded with zeros (copied per
// panel), into a scratch holding their rows of the output block, of which
// only theirs go back; fewer one at a time. The output block is filled by the thread that owns it, inside
// a buffer of the projection's own. Each register block prefetches its
// share (32 weight rows over the blocks) of what packing the next panel
// reads: the next k step of the column block, or after the last one the
// first panel of the next block (at most the last), a quarter of each row's
// lines before each quarter of the panel's 256 steps.
// CHECK-LABEL: func.func @dynamic_rows
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x512xf32>, %[[W:.+]]: tensor<512x512xf32>)
// CHECK: %[[ROWS:.+]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : tensor<?x?x512xf32> into tensor<?x512xf32>
// CHECK: %[[M:.+]] = tensor.dim %[[ROWS]], %c0
// CHECK: %[[OUT:.+]] = bufferization.alloc_tensor(%[[M]]) : tensor<?x512xf32>
// CHECK: %[[FEW:.+]] = arith.cmpi ult, %[[M]], %c40
// CHECK: %[[RESULT:.+]] = scf.if %[[FEW]]
// CHECK: } else {
// CHECK: scf.forall (%[[J:.+]]) in (4) shared_outs(%[[SHARED:.+]] = %[[OUT]])
// CHECK:   %[[N0:.+]] = arith.muli %[[J]], %c128
// CHECK:   %[[BLOCK:.+]] = tensor.extract_slice %[[SHARED]][0, %[[N0]]] [%[[M]], 128]
// CHECK:   %[[ZERO:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[BLOCK]] : tensor<?x128xf32>)
// CHECK:   %[[TAIL:.+]] = arith.remui %[[M]], %c8
// CHECK:   %[[FULL:.+]] = arith.subi %[[M]], %[[TAIL]]
// CHECK:   %[[WBUF:.+]] = bufferization.to_buffer %[[W]] read_only
// CHECK:   %[[BLOCKS:.+]] = arith.divui %[[FULL]], %c8
// CHECK:   %[[SOME:.+]] = arith.maxsi %[[BLOCKS]], %c1
// CHECK:   %[[SHARE:.+]] = arith.ceildivui %c32, %[[SOME]]
// CHECK:   scf.for %[[K0:.+]] = %c0 to %c512 step %c256 iter_args(%{{.+}} = %[[ZERO]])
// CHECK:     %[[STEP:.+]] = arith.addi %[[K0]], %c256
// CHECK:     %[[SAME:.+]] = arith.cmpi ult, %[[STEP]], %c512
// CHECK:     %[[AFTER:.+]] = arith.addi %[[N0]], %c128
// CHECK:     %[[NEXTBLOCK:.+]] = arith.minsi %[[AFTER]], %c384
// CHECK:     %[[NEXTROW:.+]] = arith.select %[[SAME]], %[[N0]], %[[NEXTBLOCK]]
// CHECK:     %[[NEXTK:.+]] = arith.select %[[SAME]], %[[STEP]], %c0
// CHECK:     %[[WSLICE:.+]] = tensor.extract_slice %[[W]][%[[N0]], %[[K0]]] [128, 256]
// CHECK:     %[[STRIPS:.+]] = tensor.expand_shape %[[WSLICE]] {{\[\[}}0, 1], [2]] output_shape [4, 32, 256]
// CHECK:     %[[PACKED:.+]] = linalg.generic {{.+}} ins(%[[STRIPS]] : tensor<4x32x256xf32>) outs(%{{.+}} : tensor<4x256x32xf32>)
// CHECK:     %[[CHUNKS:.+]] = scf.for %[[C0:.+]] = %c0 to %[[FULL]] step %c128
// CHECK:       %[[CHUNK_AFTER:.+]] = arith.addi %[[C0]], %c128
// CHECK:       %[[CHUNK_END:.+]] = arith.minsi %[[CHUNK_AFTER]], %[[FULL]]
// CHECK:       scf.for %[[M0:.+]] = %[[C0]] to %[[CHUNK_END]] step %c8
// CHECK:         %[[A:.+]] = tensor.extract_slice %[[ROWS]][%[[M0]], %[[K0]]] [8, 256]
// CHECK:         scf.for %[[P:.+]] = %c0 to %c4 step %c1
// CHECK:           %[[N1:.+]] = arith.muli %[[P]], %c32
// CHECK:           %[[BLOCK:.+]] = arith.divui %[[M0]], %c8
// CHECK:           %[[OFFSET:.+]] = arith.muli %[[BLOCK]], %[[SHARE]]
// CHECK:           %[[FIRST:.+]] = arith.addi %[[N1]], %[[OFFSET]]
// CHECK:           %[[END:.+]] = arith.addi %[[FIRST]], %[[SHARE]]
// CHECK:           %[[STRIPEND:.+]] = arith.addi %[[N1]], %c32
// CHECK:           %[[LAST:.+]] = arith.minsi %[[END]], %[[STRIPEND]]
// CHECK:           scf.for %[[R:.+]] = %[[FIRST]] to %[[LAST]] step %c1
// CHECK:             %[[WROW:.+]] = arith.addi %[[NEXTROW]], %[[R]]
// CHECK:             memref.prefetch %[[WBUF]][%[[WROW]], %[[NEXTK]]], read, locality<2>, data
// CHECK-COUNT-3:     memref.prefetch %[[WBUF]][%[[WROW]], %{{.+}}], read, locality<2>, data
// CHECK-NOT:         memref.prefetch
// CHECK:           %[[A0:.+]] = tensor.extract_slice %[[A]][0, 0] [8, 64]
// CHECK:           %[[PANEL0:.+]] = tensor.extract_slice %[[PACKED]][%[[P]], 0, 0] [1, 64, 32] [1, 1, 1] : tensor<4x256x32xf32> to tensor<64x32xf32>
// CHECK:           %[[PART0:.+]] = linalg.matmul ins(%[[A0]], %[[PANEL0]] : tensor<8x64xf32>, tensor<64x32xf32>) outs(%{{.+}} : tensor<8x32xf32>)
// CHECK:           scf.for
// CHECK-COUNT-4:     memref.prefetch %[[WBUF]]
// CHECK:           %[[A1:.+]] = tensor.extract_slice %[[A]][0, 64] [8, 64]
// CHECK:           %[[PANEL1:.+]] = tensor.extract_slice %[[PACKED]][%[[P]], 64, 0] [1, 64, 32]
// CHECK:           %[[PART1:.+]] = linalg.matmul ins(%[[A1]], %[[PANEL1]] : tensor<8x64xf32>, tensor<64x32xf32>) outs(%[[PART0]] : tensor<8x32xf32>)
// CHECK:           scf.for
// CHECK-COUNT-4:     memref.prefetch %[[WBUF]]
// CHECK:           %[[PART2:.+]] = linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<8x64xf32>, tensor<64x32xf32>) outs(%[[PART1]] : tensor<8x32xf32>)
// CHECK:           scf.for
// CHECK-COUNT-4:     memref.prefetch %[[WBUF]]
// CHECK:           %[[A3:.+]] = tensor.extract_slice %[[A]][0, 192] [8, 64]
// CHECK:           %[[PANEL3:.+]] = tensor.extract_slice %[[PACKED]][%[[P]], 192, 0] [1, 64, 32]
// CHECK:           linalg.matmul ins(%[[A3]], %[[PANEL3]] : tensor<8x64xf32>, tensor<64x32xf32>) outs(%[[PART2]] : tensor<8x32xf32>)
// CHECK-NOT:       memref.prefetch
// CHECK:     %[[LEFT_ROWS:.+]] = arith.subi %[[M]], %[[FULL]]
// CHECK:     %[[PAD:.+]] = arith.cmpi uge, %[[LEFT_ROWS]], %c4
// CHECK:     %[[SINGLE:.+]] = arith.select %[[PAD]], %[[FULL]], %[[M]]
// CHECK:     %[[ONES:.+]] = scf.for %{{.+}} = %[[FULL]] to %[[SINGLE]] step %c1 iter_args(%{{.+}} = %[[CHUNKS]])
// CHECK:       linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<1x256xf32>, tensor<256x32xf32>) outs(%{{.+}} : tensor<1x32xf32>)
// CHECK:     scf.for %[[M1:.+]] = %[[SINGLE]] to %[[M]] step %c8 iter_args(%{{.+}} = %[[ONES]])
// CHECK:       %[[LEFT:.+]] = arith.subi %[[M]], %[[M1]]
// CHECK:       %[[LAST:.+]] = tensor.extract_slice %[[ROWS]][%[[M1]], %[[K0]]] [%[[LEFT]], 256]
// CHECK:       %[[PADDED:.+]] = tensor.insert_slice %[[LAST]] into %{{.+}}[0, 0] [%[[LEFT]], 256] [1, 1] : tensor<?x256xf32> into tensor<8x256xf32>
// CHECK:       %[[SCRATCH:.+]] = tensor.insert_slice %{{.+}} into %{{.+}}[0, 0] [%[[LEFT]], 128] [1, 1] : tensor<?x128xf32> into tensor<8x128xf32>
// CHECK:       %[[SUMS:.+]] = scf.for %[[Q:.+]] = %c0 to %c4 step %c1 iter_args(%{{.+}} = %[[SCRATCH]])
// CHECK:         %[[PANEL:.+]] = tensor.extract_slice %[[PACKED]][%[[Q]], 0, 0] [1, 256, 32]
// CHECK:         linalg.matmul ins(%[[PADDED]], %[[PANEL]] : tensor<8x256xf32>, tensor<256x32xf32>) outs(%{{.+}} : tensor<8x32xf32>)
// CHECK:       tensor.extract_slice %[[SUMS]][0, 0] [%[[LEFT]], 128]
// CHECK:   scf.forall.in_parallel
// CHECK:     tensor.parallel_insert_slice %{{.+}} into %[[SHARED]][0, %[[N0]]] [%[[M]], 128]
// CHECK: tensor.expand_shape %[[RESULT]] {{\[\[}}0, 1], [2]] output_shape [%{{.+}}, %{{.+}}, 512]
// Chunks of whole register blocks: 120 rows with 12-row blocks.
// ROWS12-LABEL: func.func @dynamic_rows
// ROWS12: scf.for %[[C0:.+]] = %c0 to %{{.+}} step %c120
// ROWS12:   arith.addi %[[C0]], %c120
// ROWS12:   scf.for %{{.+}} = %[[C0]] to %{{.+}} step %c12
func.func @dynamic_rows(%x: tensor<?x?x512xf32>, %w: tensor<512x512xf32>) -> tensor<?x?x512xf32> {
  %y = tfm.linear %x, %w : (tensor<?x?x512xf32>, tensor<512x512xf32>) -> tensor<?x?x512xf32>
  return %y : tensor<?x?x512xf32>
}

// -----

// The streamed form of a decode step or a short prompt (fewer than 40
// rows): threads over blocks of 32 weight rows (4 register blocks), read in
// place. From 4 rows on, for each group of 4 weight rows, K in chunks of up
// to 256 steps (here one), and in each chunk every block of 4 rows of x
// against the group: 16 accumulators of 16 lanes, loaded from and stored
// to a scratch of 10 blocks' accumulators between chunks; then their lane
// sums. The last block's rows past the end read the last row again and
// their sums are dropped. 2 or 3 rows: one block against 8 weight rows at
// a time; one row (a decode step): 16-lane partial dot products with every
// weight row of the block, then their lane sums.
// With 12 register rows, no multiple of 12 up to 48 divides N = 512: the
// streamed blocks take the largest divisor up to 48 instead.
// ROWS12-LABEL: func.func @few_rows_stream_weights
// ROWS12: arith.cmpi ult, %{{.+}}, %c40
// ROWS12: scf.forall (%[[J:.+]]) in (16)
// ROWS12: arith.muli %[[J]], %c32
// CHECK-LABEL: func.func @few_rows_stream_weights
// CHECK-SAME: (%[[X:.+]]: tensor<?x256xf32>, %[[W:.+]]: tensor<512x256xf32>)
// CHECK: %[[M:.+]] = tensor.dim %[[X]], %c0
// CHECK: scf.if
// CHECK:   scf.forall (%[[J:.+]]) in (16) shared_outs(%[[SHARED:.+]] = %{{.+}})
// CHECK:     %[[N0:.+]] = arith.muli %[[J]], %c32
// CHECK:     %[[ENOUGH:.+]] = arith.cmpi uge, %[[M]], %c4
// CHECK:     scf.if %[[ENOUGH]]
// CHECK:       %[[BLOCKS:.+]] = arith.ceildivui %[[M]], %c4
// CHECK:       %[[LAST:.+]] = arith.subi %[[M]], %c1
// CHECK:       scf.for %{{.+}} = %c0 to %c32 step %c4
// CHECK:         %[[ACC:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<160x16xf32>)
// CHECK:         %[[SUMS:.+]] = scf.for %{{.+}} = %c0 to %[[BLOCKS]] step %c1 iter_args(%{{.+}} = %[[ACC]])
// CHECK-COUNT-4:   arith.minui %{{.+}}, %[[LAST]]
// CHECK-COUNT-16:  vector.transfer_read {{.+}} : tensor<160x16xf32>, vector<16xf32>
// CHECK:           scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c16 iter_args({{.+}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK-COUNT-4:     vector.transfer_read {{.+}} : tensor<?x256xf32>, vector<16xf32>
// CHECK-COUNT-4:     vector.transfer_read %[[W]]
// CHECK-COUNT-16:    vector.fma
// CHECK-COUNT-16:  vector.transfer_write {{.+}} : vector<16xf32>, tensor<160x16xf32>
// CHECK:         scf.for %{{.+}} = %c0 to %[[BLOCKS]] step %c1
// CHECK:           %[[INSIDE:.+]] = arith.cmpi ult, %{{.+}}, %[[M]]
// CHECK:           scf.if %[[INSIDE]]
// CHECK-COUNT-4:     vector.reduction <add>
// CHECK:       } else {
// CHECK:         scf.index_switch %[[M]]
// CHECK:         case 2 {
// CHECK:           scf.for %{{.+}} = %c0 to %c32 step %c8
// CHECK-COUNT-16:    vector.fma
// CHECK:         case 3 {
// CHECK:           scf.for %{{.+}} = %c0 to %c32 step %c8
// CHECK-COUNT-24:    vector.fma
// CHECK:         default {
// CHECK:           %[[WROWS:.+]] = tensor.extract_slice %[[W]][%[[N0]], 0] [32, 256]
// CHECK:           %[[WCHUNKS:.+]] = tensor.expand_shape %[[WROWS]] {{\[\[}}0], [1, 2]] output_shape [32, 16, 16]
// CHECK:           scf.for %[[ROW_INDEX:.+]] = %c0 to %[[M]] step %c1
// CHECK:             %[[ROW:.+]] = tensor.extract_slice %{{.+}}[%[[ROW_INDEX]], 0] [1, 256]
// CHECK:             %[[CHUNKS:.+]] = tensor.expand_shape %[[ROW]]
// CHECK:             %[[PARTIAL:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%[[CHUNKS]], %[[WCHUNKS]] : tensor<1x16x16xf32>, tensor<32x16x16xf32>) outs(%{{.+}} : tensor<1x32x16xf32>)
// CHECK:             linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[PARTIAL]] : tensor<1x32x16xf32>) outs(%{{.+}} : tensor<1x32xf32>)
// CHECK: } else {
func.func @few_rows_stream_weights(%x: tensor<?x256xf32>, %w: tensor<512x256xf32>) -> tensor<?x512xf32> {
  %y = tfm.linear %x, %w : (tensor<?x256xf32>, tensor<512x256xf32>) -> tensor<?x512xf32>
  return %y : tensor<?x512xf32>
}

// -----

// bf16 weights are widened to f32 as they are packed, and bf16 rows of the
// input as each register block reads them.
// CHECK-LABEL: func.func @bf16_weights
// CHECK: linalg.generic {{.+}} ins(%{{.+}} : tensor<3x32x64xbf16>) outs(%{{.+}} : tensor<3x64x32xf32>)
// CHECK:   arith.extf
// CHECK: linalg.generic {{.+}} ins(%{{.+}} : tensor<8x64xbf16>) outs(%{{.+}} : tensor<8x64xf32>)
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<8x64xf32>, tensor<64x32xf32>)
// With bf16-dot (AVX-512 BF16), fewer than 64 bf16 rows (a decode step, a
// short prompt; here already bf16: no rounding) stream the weights through
// dot products of 32 pairs: blocks of 4 rows against 4 weight rows at a
// time (16 accumulators), then the rows left one by one against 8. The
// packed form packs the weights as pairs of k, one i32 per (pair, column),
// and keeps 8 x 2 accumulators across the 32 pair steps of K = 64, each
// step a row's pair broadcast to every lane; the rows left take 1 x 2.
// (One column block and one panel: no thread or K loop; the prefetches,
// 2 lines of 64 bf16 steps per weight row, fetch that panel again.)
// DOT-LABEL: func.func @bf16_weights
// DOT: %[[FEW:.+]] = arith.cmpi ult, %{{.+}}, %c64 : index
// DOT: scf.if %[[FEW]]
// DOT: scf.forall
// DOT: %[[BLOCKS:.+]] = arith.divui %{{.+}}, %c4 : index
// DOT: %[[BLOCKED:.+]] = arith.muli %[[BLOCKS]], %c4 : index
// DOT: scf.for {{.+}} = %c0 to %[[BLOCKED]] step %c4
// DOT: scf.for {{.+}} = %c0 to %c32 step %c4
// DOT: scf.for {{.+}} step %c32 iter_args
// DOT-COUNT-4: vector.transfer_read %{{.+}} : tensor<4x64xbf16>, vector<32xbf16>
// DOT-COUNT-4: vector.transfer_read %{{.+}} : tensor<96x64xbf16>, vector<32xbf16>
// DOT-COUNT-16: x86vector.avx512.dot {{.+}} : vector<32xbf16> -> vector<16xf32>
// DOT-COUNT-16: vector.reduction <add>
// DOT: scf.for {{.+}} = %[[BLOCKED]] to %{{.+}} step %c1
// DOT: scf.for {{.+}} = %c0 to %c32 step %c8
// DOT: scf.for {{.+}} step %c32 iter_args
// DOT-COUNT-8: x86vector.avx512.dot {{.+}} : vector<32xbf16> -> vector<16xf32>
// DOT-COUNT-8: vector.reduction <add>
// DOT: } else {
// DOT: %[[PAIRS:.+]] = scf.for {{.+}} -> (tensor<32x96xi32>)
// DOT: vector.transfer_read %{{.+}} : tensor<96x64xbf16>, vector<16x32xbf16>
// DOT: vector.bitcast %{{.+}} : vector<16x32xbf16> to vector<16x16xi32>
// DOT: vector.transpose %{{.+}}, [1, 0] : vector<16x16xi32> to vector<16x16xi32>
// DOT: scf.for {{.+}} step %c32 iter_args
// DOT: scf.for {{.+}} step %c8 iter_args
// DOT-COUNT-2: memref.prefetch {{.+}} : memref<96x64xbf16, strided<[?, ?], offset: ?>>
// DOT-NOT: memref.prefetch
// DOT: scf.for {{.+}} = %c0 to %c32 step %c1 iter_args({{.+}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// DOT: vector.transfer_read %[[PAIRS]]{{.+}} : tensor<32x96xi32>, vector<16xi32>
// DOT: vector.bitcast %{{.+}} : vector<2xbf16> to vector<1xi32>
// DOT: vector.broadcast %{{.+}} : vector<1xi32> to vector<16xi32>
// DOT-COUNT-16: x86vector.avx512.dot
// DOT: scf.for {{.+}} step %c1 iter_args
// DOT: scf.for {{.+}} = %c0 to %c32 step %c1 iter_args(%{{[^,]+}}, %{{[^,]+}}) -> (vector<16xf32>, vector<16xf32>)
// DOT-COUNT-2: x86vector.avx512.dot
// DOT: return
func.func @bf16_weights(%x: tensor<?x64xbf16>, %w: tensor<96x64xbf16>) -> tensor<?x96xbf16> {
  %y = tfm.linear %x, %w : (tensor<?x64xbf16>, tensor<96x64xbf16>) -> tensor<?x96xbf16>
  return %y : tensor<?x96xbf16>
}

// -----

// N = 48 takes one-vector (16-column) register blocks, its weights packed
// as 3 panels of 16 columns.
// CHECK-LABEL: func.func @one_vector_columns
// CHECK: linalg.generic {{.+}} ins(%{{.+}} : tensor<3x16x64xf32>) outs(%{{.+}} : tensor<3x64x16xf32>)
// CHECK: scf.for %{{.+}} = %c0 to %c3 step %c1
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<8x64xf32>, tensor<64x16xf32>)
func.func @one_vector_columns(%x: tensor<?x64xf32>, %w: tensor<48x64xf32>) -> tensor<?x48xf32> {
  %y = tfm.linear %x, %w : (tensor<?x64xf32>, tensor<48x64xf32>) -> tensor<?x48xf32>
  return %y : tensor<?x48xf32>
}

// -----

// Columns that no register block divides (N = 101): 96 in 32-column blocks
// (one thread block here, so canonicalize drops its scf.forall), then the
// last 5 with the same loops in one 5-column block. Both fill their own
// columns of one output.
// CHECK-LABEL: func.func @odd_columns
// CHECK-SAME: (%[[X:.+]]: tensor<?x64xf32>, %[[W:.+]]: tensor<101x64xf32>)
// CHECK: %[[OUT:.+]] = bufferization.alloc_tensor(%{{.+}}) : tensor<?x101xf32>
// CHECK: %[[MAIN:.+]] = tensor.extract_slice %[[OUT]][0, 0] [%{{.+}}, 96]
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[MAIN]] : tensor<?x96xf32>)
// CHECK: tensor.extract_slice %[[W]][0, 0] [96, 64]
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<8x64xf32>, tensor<64x32xf32>)
// CHECK: tensor.insert_slice %{{.+}} : tensor<?x64xf32> into tensor<8x64xf32>
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<8x64xf32>, tensor<64x32xf32>)
// CHECK: %[[WITH_MAIN:.+]] = tensor.insert_slice %{{.+}} into %[[OUT]][0, 0] [%{{.+}}, 96]
// CHECK: %[[TAIL:.+]] = tensor.extract_slice %[[WITH_MAIN]][0, 96] [%{{.+}}, 5]
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[TAIL]] : tensor<?x5xf32>)
// CHECK: tensor.extract_slice %[[W]][96, 0] [5, 64]
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<8x64xf32>, tensor<64x5xf32>) outs(%{{.+}} : tensor<8x5xf32>)
// CHECK: tensor.insert_slice %{{.+}} : tensor<?x64xf32> into tensor<8x64xf32>
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<8x64xf32>, tensor<64x5xf32>) outs(%{{.+}} : tensor<8x5xf32>)
// CHECK: tensor.insert_slice %{{.+}} into %[[WITH_MAIN]][0, 96] [%{{.+}}, 5]
func.func @odd_columns(%x: tensor<?x64xf32>, %w: tensor<101x64xf32>) -> tensor<?x101xf32> {
  %y = tfm.linear %x, %w : (tensor<?x64xf32>, tensor<101x64xf32>) -> tensor<?x101xf32>
  return %y : tensor<?x101xf32>
}

// -----

// Fewer columns than a register block (N = 8): only the narrow block.
// CHECK-LABEL: func.func @narrow_columns
// CHECK-NOT: tensor<64x32xf32>
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<8x64xf32>, tensor<64x8xf32>) outs(%{{.+}} : tensor<8x8xf32>)
// CHECK: tensor.insert_slice %{{.+}} : tensor<?x64xf32> into tensor<8x64xf32>
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<8x64xf32>, tensor<64x8xf32>) outs(%{{.+}} : tensor<8x8xf32>)
func.func @narrow_columns(%x: tensor<?x64xf32>, %w: tensor<8x64xf32>) -> tensor<?x8xf32> {
  %y = tfm.linear %x, %w : (tensor<?x64xf32>, tensor<8x64xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

// A gated FFN's gate and up share their column blocks, and act(gate) · up is
// computed on each pair of blocks: no [M, d_ff] gate or up tensor exists.
// Each thread computes a 128-column block of both projections into scratch
// of the block's size, then the epilogue writes its block of the hidden
// activation (the [B, S, d_ff] epilogue is first collapsed to [M, d_ff]).
// CHECK-LABEL: func.func @swiglu_gate_up_epilogue
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x64xf32>, %[[G:.+]]: tensor<256x64xf32>, %[[U:.+]]: tensor<256x64xf32>, %[[D:.+]]: tensor<64x256xf32>)
// CHECK-NOT: ins(%{{.+}}, %[[G]] : tensor<?x64xf32>, tensor<256x64xf32>)
// CHECK: %[[HIDDEN:.+]] = bufferization.alloc_tensor(%{{.+}}) : tensor<?x256xf32>
// CHECK: } else {
// CHECK: scf.forall (%[[J:.+]]) in (2) shared_outs(%[[SHARED:.+]] = %[[HIDDEN]])
// CHECK:   %[[N0:.+]] = arith.muli %[[J]], %c128
// CHECK:   %[[OUT:.+]] = tensor.extract_slice %[[SHARED]][0, %[[N0]]] [%{{.+}}, 128]
// CHECK:   %[[GATE_INIT:.+]] = bufferization.alloc_tensor(%{{.+}}) : tensor<?x128xf32>
// CHECK:   %[[GATE_ZERO:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[GATE_INIT]] : tensor<?x128xf32>)
// CHECK:   tensor.extract_slice %[[G]][%[[N0]], 0] [128, 64]
// CHECK:   %[[GATE_CHUNKS:.+]] = scf.for {{.+}} iter_args(%{{.+}} = %[[GATE_ZERO]])
// CHECK:     linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<8x64xf32>, tensor<64x32xf32>)
// CHECK:   %[[GATE_ROWS:.+]] = scf.for {{.+}} iter_args(%{{.+}} = %[[GATE_CHUNKS]])
// CHECK:     linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<1x64xf32>, tensor<64x32xf32>)
// CHECK:   %[[GATE:.+]] = scf.for {{.+}} iter_args(%{{.+}} = %[[GATE_ROWS]])
// CHECK:     tensor.insert_slice %{{.+}} : tensor<?x64xf32> into tensor<8x64xf32>
// CHECK:     linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<8x64xf32>, tensor<64x32xf32>)
// CHECK:   tensor.extract_slice %[[U]][%[[N0]], 0] [128, 64]
// CHECK:   scf.for
// CHECK:     linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<8x64xf32>, tensor<64x32xf32>)
// CHECK:   scf.for
// CHECK:     linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<1x64xf32>, tensor<64x32xf32>)
// CHECK:   %[[UP:.+]] = scf.for
// CHECK:     tensor.insert_slice %{{.+}} : tensor<?x64xf32> into tensor<8x64xf32>
// CHECK:     linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<8x64xf32>, tensor<64x32xf32>)
// CHECK:   %[[ACT:.+]] = linalg.generic {{.+}} ins(%[[GATE]], %[[UP]] : tensor<?x128xf32>, tensor<?x128xf32>) outs(%[[OUT]] : tensor<?x128xf32>)
// CHECK:     math.exp
// CHECK:   tensor.parallel_insert_slice %[[ACT]] into %[[SHARED]][0, %[[N0]]] [%{{.+}}, 128]
// NOFUSE-LABEL: func.func @swiglu_gate_up_epilogue
// NOFUSE: linalg.generic {{.+}} ins(%{{.+}}, %{{.+}} : tensor<?x?x256xf32>, tensor<?x?x256xf32>)
// NOFUSE:   math.exp
func.func @swiglu_gate_up_epilogue(%x: tensor<?x?x64xf32>, %g: tensor<256x64xf32>, %u: tensor<256x64xf32>, %d: tensor<64x256xf32>) -> tensor<?x?x64xf32> {
  %y = tfm.ffn swiglu %x gate(%g) up(%u) down(%d) : (tensor<?x?x64xf32>, tensor<256x64xf32>, tensor<256x64xf32>, tensor<64x256xf32>) -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// GeGLU pairs gate and up the same way, gelu(gate) · up (the erf form) in
// the epilogue of each pair of column blocks.
// CHECK-LABEL: func.func @geglu_gate_up_epilogue
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x64xf32>, %[[G:.+]]: tensor<256x64xf32>, %[[U:.+]]: tensor<256x64xf32>, %[[D:.+]]: tensor<64x256xf32>)
// CHECK: %[[HIDDEN:.+]] = bufferization.alloc_tensor(%{{.+}}) : tensor<?x256xf32>
// CHECK: } else {
// CHECK: scf.forall (%[[J:.+]]) in (2) shared_outs(%[[SHARED:.+]] = %[[HIDDEN]])
// CHECK:   tensor.extract_slice %[[G]][%{{.+}}, 0] [128, 64]
// CHECK:   tensor.extract_slice %[[U]][%{{.+}}, 0] [128, 64]
// CHECK:   %[[ACT:.+]] = linalg.generic {{.+}} ins(%{{.+}}, %{{.+}} : tensor<?x128xf32>, tensor<?x128xf32>) outs(%{{.+}} : tensor<?x128xf32>)
// CHECK:     math.erf
// CHECK:   tensor.parallel_insert_slice %[[ACT]] into %[[SHARED]]
// NOFUSE-LABEL: func.func @geglu_gate_up_epilogue
// NOFUSE: linalg.generic {{.+}} ins(%{{.+}}, %{{.+}} : tensor<?x?x256xf32>, tensor<?x?x256xf32>)
// NOFUSE:   math.erf
func.func @geglu_gate_up_epilogue(%x: tensor<?x?x64xf32>, %g: tensor<256x64xf32>, %u: tensor<256x64xf32>, %d: tensor<64x256xf32>) -> tensor<?x?x64xf32> {
  %y = tfm.ffn geglu %x gate(%g) up(%u) down(%d) : (tensor<?x?x64xf32>, tensor<256x64xf32>, tensor<256x64xf32>, tensor<64x256xf32>) -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// A plain FFN: up's bias and the activation in the epilogue of up's column
// blocks (no [M, d_ff] tensor before the activation), down's bias in
// down's.
// CHECK-LABEL: func.func @gelu_bias_epilogue
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x64xf32>, %[[U:.+]]: tensor<256x64xf32>, %[[BU:.+]]: tensor<256xf32>, %[[D:.+]]: tensor<64x256xf32>, %[[BD:.+]]: tensor<64xf32>)
// CHECK: } else {
// CHECK: scf.forall (%[[J:.+]]) in (2) shared_outs(%[[SHARED:.+]] = %{{.+}}) -> (tensor<?x256xf32>)
// CHECK:   %[[BIAS:.+]] = tensor.extract_slice %[[BU]][%{{.+}}] [128] [1]
// CHECK:   %[[ACT:.+]] = linalg.generic {{.+}} ins(%{{.+}}, %[[BIAS]] : tensor<?x128xf32>, tensor<128xf32>) outs(%{{.+}} : tensor<?x128xf32>)
// CHECK:     arith.addf
// CHECK:     math.erf
// CHECK:   tensor.parallel_insert_slice %[[ACT]] into %[[SHARED]]
// CHECK: } else {
// CHECK: linalg.generic {{.+}} ins(%{{.+}}, %[[BD]] : tensor<?x64xf32>, tensor<64xf32>)
// NOFUSE-LABEL: func.func @gelu_bias_epilogue
// NOFUSE: linalg.generic {{.+}} ins(%{{.+}}, %{{.+}} : tensor<?x?x256xf32>, tensor<256xf32>)
// NOFUSE:   math.erf
func.func @gelu_bias_epilogue(%x: tensor<?x?x64xf32>, %u: tensor<256x64xf32>, %bu: tensor<256xf32>, %d: tensor<64x256xf32>, %bd: tensor<64xf32>) -> tensor<?x?x64xf32> {
  %y = tfm.ffn gelu %x up(%u, %bu) down(%d, %bd) : (tensor<?x?x64xf32>, tensor<256x64xf32>, tensor<256xf32>, tensor<64x256xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// A residual added to a projection: the add is computed on each column
// block of the projection, into a buffer of its own (its init is not read,
// so it does not write into the residual).
// CHECK-LABEL: func.func @residual_epilogue
// CHECK-SAME: (%[[X:.+]]: tensor<?x64xf32>, %[[W:.+]]: tensor<64x64xf32>, %[[R:.+]]: tensor<?x64xf32>)
// CHECK: %[[OUT:.+]] = bufferization.alloc_tensor(%{{.+}}) : tensor<?x64xf32>
// CHECK: } else {
// CHECK:   %[[OUT_BLOCK:.+]] = tensor.extract_slice %[[OUT]][0, 0] [%{{.+}}, 64]
// CHECK:   scf.for
// CHECK:     linalg.matmul
// CHECK:   scf.for
// CHECK:     linalg.matmul
// CHECK:   %[[BLOCK:.+]] = scf.for
// CHECK:     linalg.matmul
// CHECK:   %[[RESIDUAL:.+]] = tensor.extract_slice %[[R]][0, 0] [%{{.+}}, 64]
// CHECK:   linalg.generic {{.+}} ins(%[[RESIDUAL]], %[[BLOCK]] : tensor<?x64xf32>, tensor<?x64xf32>) outs(%[[OUT_BLOCK]] : tensor<?x64xf32>)
// CHECK:     arith.addf

#rows_columns = affine_map<(m, n) -> (m, n)>
func.func @residual_epilogue(%x: tensor<?x64xf32>, %w: tensor<64x64xf32>, %r: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %p = tfm.linear %x, %w : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  %y = linalg.generic {indexing_maps = [#rows_columns, #rows_columns, #rows_columns], iterator_types = ["parallel", "parallel"]}
      ins(%r, %p : tensor<?x64xf32>, tensor<?x64xf32>) outs(%r : tensor<?x64xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %sum = arith.addf %a, %b : f32
    linalg.yield %sum : f32
  } -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

// A bias, then a residual: the two elementwise ops become one epilogue.
// CHECK-LABEL: func.func @bias_then_residual_epilogue
// CHECK: } else {
// CHECK:   scf.for
// CHECK:     linalg.matmul
// CHECK:   scf.for
// CHECK:     linalg.matmul
// CHECK:   %[[BLOCK:.+]] = scf.for
// CHECK:     linalg.matmul
// CHECK:   linalg.generic {{.+}} ins(%[[BLOCK]], %{{.+}}, %{{.+}} : tensor<?x64xf32>, tensor<64xf32>, tensor<?x64xf32>)
// CHECK:     arith.addf
// CHECK:     arith.addf
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @bias_then_residual_epilogue(%x: tensor<?x64xf32>, %w: tensor<64x64xf32>, %b: tensor<64xf32>, %r: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %p = tfm.linear %x, %w, %b : (tensor<?x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%p, %r : tensor<?x64xf32>, tensor<?x64xf32>) outs(%r : tensor<?x64xf32>) {
  ^bb0(%a: f32, %c: f32, %out: f32):
    %sum = arith.addf %a, %c : f32
    linalg.yield %sum : f32
  } -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

// A projection with a column scale (an RMSNorm's weight folded in by
// tfm-fuse-norm-projection): the scale multiplies the weights as they are
// packed, and the rows once per call, before the column loop, when they
// stream past the weights (an [M, K] scratch that every column block and
// every block of rows in it reads).
// CHECK-LABEL: func.func @column_scaled_projection
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x64xf32>, %[[W:[^:]+]]: tensor<64x64xf32>, %[[G:[^:]+]]: tensor<64xf32>
// CHECK: scf.if
// CHECK:   %[[ROWS:.+]] = tensor.extract_slice %[[X]][0, 0] [%{{.+}}, 64]
// CHECK:   %[[SCALED:.+]] = linalg.generic {{.+}} ins(%[[ROWS]], %[[G]] : tensor<?x64xf32>, tensor<64xf32>) outs(%{{.+}} : tensor<?x64xf32>)
// CHECK:     arith.mulf
// CHECK:   scf.forall
// CHECK-NOT:   arith.mulf
// CHECK:     vector.transfer_read %[[SCALED]]
// CHECK:     scf.index_switch
// CHECK:     default {
// CHECK:       tensor.extract_slice %[[SCALED]]{{.+}} [1, 64]
// CHECK: } else {
// CHECK:   linalg.generic {{.+}} ins(%{{.+}}, %[[G]] : tensor<2x32x64xf32>, tensor<64xf32>) outs(%{{.+}} : tensor<2x64x32xf32>)
// CHECK:     arith.mulf
// CHECK:   linalg.matmul
#rows = affine_map<(m, n, k) -> (m, k)>
#weights = affine_map<(m, n, k) -> (n, k)>
#scale = affine_map<(m, n, k) -> (k)>
#out = affine_map<(m, n, k) -> (m, n)>
func.func @column_scaled_projection(%x: tensor<?x64xf32>, %w: tensor<64x64xf32>, %g: tensor<64xf32>,
                                    %init: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %cst = arith.constant 0.0 : f32
  %zero = linalg.fill ins(%cst : f32) outs(%init : tensor<?x64xf32>) -> tensor<?x64xf32>
  %y = linalg.generic {indexing_maps = [#rows, #weights, #scale, #out],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w, %g : tensor<?x64xf32>, tensor<64x64xf32>, tensor<64xf32>) outs(%zero : tensor<?x64xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %acc: f32):
    %bc = arith.mulf %b, %c : f32
    %t = arith.mulf %a, %bc : f32
    %s = arith.addf %acc, %t : f32
    linalg.yield %s : f32
  } -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

// With bf16-dot, the packed form takes the scale on the rows instead: the
// rows times the scale, rounded to bf16 once, before the loop over column
// blocks (not in each of them: a 32000-column LM head rounded the same rows
// 250 times), and the weights packed into pairs as they are (scaling them
// too cost a widening, a product and a rounding per weight, about a
// quarter of an LM head at M = 128). The streamed form of a few rows
// reads them so rounded too, made once before its column blocks.
// DOT-LABEL: func.func @column_scaled_bf16_projection
// DOT-SAME: (%[[X:[^:]+]]: tensor<?x64xbf16>, %[[W:[^:]+]]: tensor<256x64xbf16>, %[[G:[^:]+]]: tensor<64xbf16>
// DOT: scf.if
// DOT:   %[[FEWROWS:.+]] = tensor.extract_slice %[[X]][0, 0] [%{{.+}}, 64]
// DOT:   %[[FEWSCALED:.+]] = linalg.generic {{.+}} ins(%[[FEWROWS]], %[[G]] : tensor<?x64xbf16>, tensor<64xbf16>) outs(%{{.+}} : tensor<?x64xbf16>)
// DOT:     arith.mulf
// DOT:     arith.truncf
// DOT:   scf.forall (%{{.+}}) in (8)
// DOT-NOT: arith.truncf
// DOT:     tensor.extract_slice %[[FEWSCALED]]
// DOT:     x86vector.avx512.dot
// DOT-NOT: arith.truncf
// DOT: } else {
// DOT:   %[[PANEL:.+]] = tensor.extract_slice %[[X]][0, 0] [%{{.+}}, 64]
// DOT:   %[[SCALED:.+]] = linalg.generic {{.+}} ins(%[[PANEL]], %[[G]] : tensor<?x64xbf16>, tensor<64xbf16>) outs(%{{.+}} : tensor<?x64xbf16>)
// DOT:     arith.mulf
// DOT:     arith.truncf
// DOT:   scf.forall (%{{.+}}) in (2)
// DOT-NOT: arith.truncf
// DOT:     vector.transfer_read %[[W]]{{.+}} : tensor<256x64xbf16>, vector<16x32xbf16>
// DOT-NEXT: vector.bitcast
// DOT-NEXT: vector.transpose
// DOT:     tensor.extract_slice %[[SCALED]]
// DOT:     x86vector.avx512.dot
#rows = affine_map<(m, n, k) -> (m, k)>
#weights = affine_map<(m, n, k) -> (n, k)>
#scale = affine_map<(m, n, k) -> (k)>
#out = affine_map<(m, n, k) -> (m, n)>
func.func @column_scaled_bf16_projection(%x: tensor<?x64xbf16>, %w: tensor<256x64xbf16>, %g: tensor<64xbf16>,
                                         %init: tensor<?x256xf32>) -> tensor<?x256xf32> {
  %cst = arith.constant 0.0 : f32
  %zero = linalg.fill ins(%cst : f32) outs(%init : tensor<?x256xf32>) -> tensor<?x256xf32>
  %y = linalg.generic {indexing_maps = [#rows, #weights, #scale, #out],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w, %g : tensor<?x64xbf16>, tensor<256x64xbf16>, tensor<64xbf16>) outs(%zero : tensor<?x256xf32>) {
  ^bb0(%a: bf16, %b: bf16, %c: bf16, %acc: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %cf = arith.extf %c : bf16 to f32
    %bc = arith.mulf %bf, %cf : f32
    %t = arith.mulf %af, %bc : f32
    %s = arith.addf %acc, %t : f32
    linalg.yield %s : f32
  } -> tensor<?x256xf32>
  return %y : tensor<?x256xf32>
}

// -----

// Projections of the same rows (q, k and v; fuse-siblings) take one loop
// over all their column blocks, side by side in one [M, 256] buffer: 64-
// column blocks 0-1 from wq, 2 from wk and 3 from wv (an scf.index_switch
// picks the weights), and each result is a column view of the buffer. The
// streamed form shares 32-row blocks the same way.
// CHECK-LABEL: func.func @qkv_one_loop
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x64xf32>, %[[WQ:.+]]: tensor<128x64xf32>, %[[WK:.+]]: tensor<64x64xf32>, %[[WV:.+]]: tensor<64x64xf32>)
// CHECK: %[[JOINT:.+]] = bufferization.alloc_tensor(%{{.+}}) : tensor<?x256xf32>
// CHECK: scf.forall (%{{.+}}) in (8) shared_outs(%{{.+}} = %[[JOINT]])
// CHECK:   scf.index_switch
// CHECK: } else {
// CHECK: scf.forall (%[[J:.+]]) in (4) shared_outs(%[[SHARED:.+]] = %[[JOINT]])
// CHECK:   %[[N:.+]] = arith.muli %[[J]], %c64
// CHECK:   %[[PAST_Q:.+]] = arith.cmpi uge, %[[J]], %c2
// CHECK:   arith.select %[[PAST_Q]], %c1, %c0
// CHECK:   %[[PAST_K:.+]] = arith.cmpi uge, %[[J]], %c3
// CHECK:   arith.select %[[PAST_K]], %c1, %c0
// CHECK:   %[[BLOCK:.+]] = scf.index_switch %{{.+}} -> tensor<?x64xf32>
// CHECK:   case 0 {
// CHECK:     tensor.extract_slice %[[WQ]][%[[N]], 0] [64, 64]
// CHECK:   case 1 {
// CHECK:     %[[NK:.+]] = arith.addi %[[N]], %c-128
// CHECK:     tensor.extract_slice %[[WK]][%[[NK]], 0] [64, 64]
// CHECK:   default {
// CHECK:     %[[NV:.+]] = arith.addi %[[N]], %c-192
// CHECK:     tensor.extract_slice %[[WV]][%[[NV]], 0] [64, 64]
// CHECK:   tensor.parallel_insert_slice %[[BLOCK]] into %[[SHARED]][0, %[[N]]] [%{{.+}}, 64]
// CHECK: %[[Q:.+]] = tensor.extract_slice %[[RESULT:.+]][0, 0] [%{{.+}}, 128]
// CHECK: %[[K:.+]] = tensor.extract_slice %[[RESULT]][0, 128] [%{{.+}}, 64]
// CHECK: %[[V:.+]] = tensor.extract_slice %[[RESULT]][0, 192] [%{{.+}}, 64]
// Without it, three buffers and three sets of loops (no switch over the
// weights: its case 0 picks wq).
// SEPARATE-LABEL: func.func @qkv_one_loop
// SEPARATE-NOT: case 0 {
// SEPARATE: bufferization.alloc_tensor(%{{.+}}) : tensor<?x128xf32>
// SEPARATE-NOT: case 0 {
// SEPARATE: bufferization.alloc_tensor(%{{.+}}) : tensor<?x64xf32>
// SEPARATE-NOT: case 0 {
// SEPARATE: bufferization.alloc_tensor(%{{.+}}) : tensor<?x64xf32>
// SEPARATE-NOT: case 0 {
// SEPARATE: return
func.func @qkv_one_loop(%x: tensor<?x?x64xf32>, %wq: tensor<128x64xf32>, %wk: tensor<64x64xf32>, %wv: tensor<64x64xf32>) -> (tensor<?x?x128xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) {
  %q = tfm.linear %x, %wq : (tensor<?x?x64xf32>, tensor<128x64xf32>) -> tensor<?x?x128xf32>
  %k = tfm.linear %x, %wk : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
  %v = tfm.linear %x, %wv : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
  return %q, %k, %v : tensor<?x?x128xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>
}

// -----

// RoPE of a projection's heads (head dim 64) rotates each column block as
// it finishes: column blocks of whole heads (128 packed, 64 streamed) are
// computed into scratch, then the rotation reads that block's [M, heads, 2,
// 32] view (the pairs' two members as slices) and writes the same view of
// the result. The angles' cos and sin are one table per row, read whole.
// CHECK-LABEL: func.func @rope_epilogue
// CHECK: %[[TABLES:.+]]:2 = linalg.generic
// CHECK:   math.cos
// CHECK: %[[RESULT:.+]] = bufferization.alloc_tensor(%{{.+}}) : tensor<?x256xf32>
// CHECK: scf.forall (%{{.+}}) in (4) shared_outs(%{{.+}} = %[[RESULT]])
// CHECK:   %[[SCRATCH:.+]] = bufferization.alloc_tensor(%{{.+}}) : tensor<?x64xf32>
// CHECK:   tensor.expand_shape %{{.+}} {{\[}}[0], [1, 2, 3]] {{.+}} into tensor<?x1x2x32xf32>
// CHECK:   linalg.generic {{.+}} ins(%{{.+}}, %{{.+}}, %[[TABLES]]#0, %[[TABLES]]#1 : tensor<?x1x1x32xf32>, tensor<?x1x1x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>) outs(%{{.+}} : tensor<?x1x2x32xf32>)
// CHECK: } else {
// CHECK: scf.forall (%[[J:.+]]) in (2) shared_outs(%[[SHARED:.+]] = %[[RESULT]])
// CHECK:   %[[OUT:.+]] = tensor.extract_slice %[[SHARED]][0, %{{.+}}] [%{{.+}}, 128]
// CHECK:   %[[BLOCK:.+]] = bufferization.alloc_tensor(%{{.+}}) : tensor<?x128xf32>
// CHECK:   linalg.matmul
// CHECK:   %[[PAIRS:.+]] = tensor.expand_shape %{{.+}} {{\[}}[0], [1, 2, 3]] {{.+}} into tensor<?x2x2x32xf32>
// CHECK:   %[[FIRST:.+]] = tensor.extract_slice %[[PAIRS]][0, 0, 0, 0] [%{{.+}}, 2, 1, 32]
// CHECK:   %[[SECOND:.+]] = tensor.extract_slice %[[PAIRS]][0, 0, 1, 0] [%{{.+}}, 2, 1, 32]
// CHECK:   %[[OUT_PAIRS:.+]] = tensor.expand_shape %[[OUT]] {{\[}}[0], [1, 2, 3]] {{.+}} into tensor<?x2x2x32xf32>
// CHECK:   %[[ROTATED:.+]] = linalg.generic {{.+}} ins(%[[FIRST]], %[[SECOND]], %[[TABLES]]#0, %[[TABLES]]#1 : {{.+}}) outs(%[[OUT_PAIRS]] : tensor<?x2x2x32xf32>)
// CHECK:   %[[ROTATED_BLOCK:.+]] = tensor.collapse_shape %[[ROTATED]] {{\[}}[0], [1, 2, 3]] : tensor<?x2x2x32xf32> into tensor<?x128xf32>
// CHECK:   tensor.parallel_insert_slice %[[ROTATED_BLOCK]] into %[[SHARED]]
// CHECK: tensor.expand_shape %{{.+}} {{\[}}[0, 1], [2, 3]] {{.+}} into tensor<?x?x4x64xf32>
// CHECK: linalg.transpose
// Without viewed epilogues, the rotation is an op of its own, on the
// projection's result.
// APART-LABEL: func.func @rope_epilogue
// APART: %[[P:.+]] = scf.if
// APART: %[[PAIRS:.+]] = tensor.expand_shape %[[P]] {{\[}}[0], [1, 2, 3]] {{.+}} into tensor<?x4x2x32xf32>
// APART: tensor.extract_slice %[[PAIRS]]
// APART: tensor.extract_slice %[[PAIRS]]
// APART: linalg.generic {{.+}} outs(%{{.+}} : tensor<?x4x2x32xf32>)
func.func @rope_epilogue(%x: tensor<?x?x64xf32>, %w: tensor<256x64xf32>, %pos: tensor<?x?xi32>) -> tensor<?x4x?x64xf32> {
  %p = tfm.linear %x, %w : (tensor<?x?x64xf32>, tensor<256x64xf32>) -> tensor<?x?x256xf32>
  %h = tfm.split_heads %p : tensor<?x?x256xf32> -> tensor<?x4x?x64xf32>
  %r = tfm.rope half %h, %pos theta(1.0e+04) : (tensor<?x4x?x64xf32>, tensor<?x?xi32>) -> tensor<?x4x?x64xf32>
  return %r : tensor<?x4x?x64xf32>
}

// -----

// A projection that adds to values of its init (not zeros) computes its
// column blocks in place, not in scratch: a rotation that reads it through a
// column-splitting view stays apart.
// CHECK-LABEL: func.func @viewed_epilogue_accumulates
// CHECK: %[[P:.+]] = scf.if
// CHECK:   scf.forall (%{{.+}}) in (8) shared_outs(%{{.+}} = %arg2)
// CHECK: } else {
// CHECK:   scf.forall (%{{.+}}) in (2) shared_outs(%{{.+}} = %arg2)
// CHECK: %[[PAIRS:.+]] = tensor.expand_shape %[[P]] {{\[}}[0], [1, 2, 3]] {{.+}} into tensor<?x4x2x32xf32>
// CHECK: tensor.extract_slice %[[PAIRS]]
// CHECK: tensor.extract_slice %[[PAIRS]]
// CHECK: linalg.generic {{.+}} outs(%{{.+}} : tensor<?x4x2x32xf32>)
func.func @viewed_epilogue_accumulates(%x: tensor<?x64xf32>, %w: tensor<256x64xf32>, %acc: tensor<?x256xf32>, %cos: tensor<?x32xf32>, %sin: tensor<?x32xf32>) -> tensor<?x4x2x32xf32> {
  %c0 = arith.constant 0 : index
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<?x64xf32>, tensor<256x64xf32>) outs(%acc : tensor<?x256xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in, %in_0 : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<?x256xf32>
  %m = tensor.dim %x, %c0 : tensor<?x64xf32>
  %pairs = tensor.expand_shape %p [[0], [1, 2, 3]] output_shape [%m, 4, 2, 32] : tensor<?x256xf32> into tensor<?x4x2x32xf32>
  %first = tensor.extract_slice %pairs[0, 0, 0, 0] [%m, 4, 1, 32] [1, 1, 1, 1] : tensor<?x4x2x32xf32> to tensor<?x4x1x32xf32>
  %second = tensor.extract_slice %pairs[0, 0, 1, 0] [%m, 4, 1, 32] [1, 1, 1, 1] : tensor<?x4x2x32xf32> to tensor<?x4x1x32xf32>
  %empty = tensor.empty(%m) : tensor<?x4x2x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%first, %second, %cos, %sin : tensor<?x4x1x32xf32>, tensor<?x4x1x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>) outs(%empty : tensor<?x4x2x32xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %s: f32, %out: f32):
    %0 = arith.mulf %a, %c : f32
    %1 = arith.mulf %b, %s : f32
    %2 = arith.subf %0, %1 : f32
    linalg.yield %2 : f32
  } -> tensor<?x4x2x32xf32>
  return %r : tensor<?x4x2x32xf32>
}

// -----

// A projection that reads its rows transformed (a LayerNorm folded in by
// tfm-fuse-norm-projection): the packed form transforms each [M, KC] panel
// of the rows once per column block, and its register blocks read that
// panel; the streamed form transforms every row once per call, before
// the column loop.
// CHECK-LABEL: func.func @transformed_rows
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x64xf32>, %[[W:[^:]+]]: tensor<256x64xf32>, %[[MEAN:[^:]+]]: tensor<?xf32>, %[[SCALE:[^:]+]]: tensor<?xf32>, %[[G:[^:]+]]: tensor<64xf32>)
// CHECK: scf.if
// CHECK:   %[[ROWS:.+]] = tensor.extract_slice %[[X]][0, 0] [%{{.+}}, 64]
// CHECK:   %[[ROW_MEAN:.+]] = tensor.extract_slice %[[MEAN]][0] [%{{.+}}]
// CHECK:   %[[ROW_SCALE:.+]] = tensor.extract_slice %[[SCALE]][0] [%{{.+}}]
// CHECK:   %[[NORMED:.+]] = linalg.generic {{.+}} ins(%[[ROWS]], %[[ROW_MEAN]], %[[ROW_SCALE]], %[[G]] : tensor<?x64xf32>, tensor<?xf32>, tensor<?xf32>, tensor<64xf32>) outs(%{{.+}} : tensor<?x64xf32>)
// CHECK:     arith.subf
// CHECK:     arith.mulf
// CHECK:     arith.mulf
// CHECK:   scf.forall (%{{.+}}) in (8)
// CHECK-NOT:   arith.subf
// CHECK:     vector.transfer_read %[[NORMED]]
// CHECK-COUNT-16: vector.fma
// CHECK: } else {
// CHECK: scf.forall (%{{.+}}) in (2)
// CHECK:   %[[PANEL:.+]] = linalg.generic {{.+}} ins(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : tensor<?x64xf32>, tensor<?xf32>, tensor<?xf32>, tensor<64xf32>) outs(%{{.+}} : tensor<?x64xf32>)
// CHECK:   scf.for
// CHECK:     scf.for %[[M0:[^ ]+]] =
// CHECK:       %[[BLOCK_ROWS:.+]] = tensor.extract_slice %[[PANEL]][%[[M0]], 0] [8, 64]
// CHECK:       scf.for
// CHECK:         linalg.matmul ins(%[[BLOCK_ROWS]], %{{.+}} : tensor<8x64xf32>, tensor<64x32xf32>)
#rows = affine_map<(d0, d1, d2) -> (d0, d2)>
#weights = affine_map<(d0, d1, d2) -> (d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0)>
#step = affine_map<(d0, d1, d2) -> (d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @transformed_rows(%x: tensor<?x64xf32>, %w: tensor<256x64xf32>, %mean: tensor<?xf32>, %scale: tensor<?xf32>, %g: tensor<64xf32>) -> tensor<?x256xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %m = tensor.dim %x, %c0 : tensor<?x64xf32>
  %e = tensor.empty(%m) : tensor<?x256xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<?x256xf32>) -> tensor<?x256xf32>
  %y = linalg.generic {indexing_maps = [#rows, #weights, #row, #row, #step, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w, %mean, %scale, %g : tensor<?x64xf32>, tensor<256x64xf32>, tensor<?xf32>, tensor<?xf32>, tensor<64xf32>) outs(%init : tensor<?x256xf32>) {
  ^bb0(%a: f32, %wv: f32, %mu: f32, %r: f32, %gv: f32, %acc: f32):
    %centered = arith.subf %a, %mu : f32
    %scaled = arith.mulf %centered, %r : f32
    %normed = arith.mulf %scaled, %gv : f32
    %term = arith.mulf %normed, %wv : f32
    %sum = arith.addf %acc, %term : f32
    linalg.yield %sum : f32
  } -> tensor<?x256xf32>
  return %y : tensor<?x256xf32>
}

// -----

// bf16 with AMX (amx=1). From 2 up to 64 rows, the tiles read the weights
// in place: the rows in pairs of k ([ceil(M/32), K/2, 2 x 32], threads over
// the 32-row blocks, the last padded with rows of zeros: reads past the
// last row are not in bounds), then per 32 weight rows and 32-row block a
// generic marked for tfm-cpu-lower-amx with the weights as its "rows"
// ([32, KC/2, 2]) and the row pairs as its "pairs" ([KC/2, 32, 2]) into a
// 32 x 32 f32 scratch (yᵀ), added to y transposed; the rows after the whole
// blocks as one more such block, of which only those rows are added.
// AMX-LABEL: func.func @bf16_amx_blocks
// AMX-SAME: (%[[X:.+]]: tensor<?x256xbf16>, %[[W:.+]]: tensor<256x256xbf16>)
// AMX: %[[M:.+]] = tensor.dim %[[X]], %c0
// AMX: arith.cmpi ult, %[[M]], %c2
// AMX: } else {
// AMX:   %[[FITS:.+]] = arith.cmpi ule, %[[M]], %c64
// AMX:   scf.if %[[FITS]]
// AMX:     %[[BLOCKS:.+]] = arith.ceildivui %[[M]], %c32
// AMX:     %[[ROW_PAIRS:.+]] = scf.forall (%{{.+}}) in (%[[BLOCKS]]) shared_outs(%{{.+}}) -> (tensor<?x128x64xbf16>)
// AMX:       vector.transfer_read %[[X]]{{.+}} {in_bounds = [false, true]} : tensor<?x256xbf16>, vector<16x32xbf16>
// AMX:       vector.transpose %{{.+}}, [1, 0] : vector<16x16xi32> to vector<16x16xi32>
// AMX:     scf.forall (%[[J:.+]]) in (2)
// AMX:       %[[N0:.+]] = arith.muli %[[J]], %c128
// AMX:       %[[LEFT32:.+]] = arith.remui %[[M]], %c32
// AMX:       %[[WHOLE:.+]] = arith.subi %[[M]], %[[LEFT32]]
// AMX:       scf.for %[[N1:.+]] = %c0 to %c128 step %c32
// AMX:         scf.for %[[M0:.+]] = %c0 to %[[WHOLE]] step %c32
// AMX:           %[[SUMS:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<32x32xf32>)
// AMX:           %[[BLOCK:.+]] = arith.divui %[[M0]], %c32
// AMX:           %[[WROW:.+]] = arith.addi %[[N0]], %[[N1]]
// AMX:           %[[WSLICE:.+]] = tensor.extract_slice %[[W]][%[[WROW]], 0] [32, 256]
// AMX:           %[[WPAIRS:.+]] = tensor.expand_shape %[[WSLICE]] {{\[}}[0], [1, 2]] output_shape [32, 128, 2]
// AMX:           %[[RSLICE:.+]] = tensor.extract_slice %[[ROW_PAIRS]][%[[BLOCK]], 0, 0] [1, 128, 64]
// AMX:           %[[RPAIRS:.+]] = tensor.expand_shape %[[RSLICE]] {{\[}}[0], [1, 2]] output_shape [128, 32, 2]
// AMX:           %[[YT:.+]] = linalg.generic {{.+}} ins(%[[WPAIRS]], %[[RPAIRS]] : tensor<32x128x2xbf16>, tensor<128x32x2xbf16>) outs(%[[SUMS]] : tensor<32x32xf32>) attrs = {tfm.amx_tiles}
// AMX:           %[[OUT:.+]] = tensor.extract_slice %{{.+}}[%[[M0]], %[[N1]]] [32, 32]
// AMX:           linalg.generic {{.+}} ins(%[[YT]] : tensor<32x32xf32>) outs(%[[OUT]] : tensor<32x32xf32>)
// AMX:         scf.for %[[R0:.+]] = %[[WHOLE]] to %[[M]] step %c32
// AMX:           %[[LEFT:.+]] = arith.subi %[[M]], %[[R0]]
// AMX:           %[[RYT:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<32x32xf32>) attrs = {tfm.amx_tiles}
// AMX:           %[[ROUT:.+]] = tensor.extract_slice %{{.+}}[%[[R0]], %[[N1]]] [%[[LEFT]], 32]
// AMX:           %[[RSUMS:.+]] = tensor.extract_slice %[[RYT]][0, 0] [32, %[[LEFT]]]
// AMX:           linalg.generic {{.+}} ins(%[[RSUMS]] : tensor<32x?xf32>) outs(%[[ROUT]] : tensor<?x32xf32>)
// Past 64 rows, the weights are packed as pairs of k in bf16 [NB/32,
// KC/2, 2 x 32] panels (an AMX tile's layout, each 32-column panel
// contiguous); chunks of 128 rows pass each 32-column panel in blocks of 32
// rows, each a generic on pairs views marked for tfm-cpu-lower-amx (no
// prefetches); the rows left take one more block, read from a copy padded
// with rows of zeros (made once, before the column loop), summed into a
// 32 x 32 scratch that holds their rows of y, of which those rows go back.
// AMX:   } else {
// AMX:   %[[PLEFT32:.+]] = arith.remui %[[M]], %c32
// AMX:   %[[FULL32:.+]] = arith.subi %[[M]], %[[PLEFT32]]
// AMX:   %[[ZEROS:.+]] = linalg.fill ins(%{{.+}} : bf16) outs(%{{.+}} : tensor<32x256xbf16>)
// AMX:   %[[LAST:.+]] = tensor.extract_slice %[[X]][%[[FULL32]], 0] [%[[PLEFT32]], 256]
// AMX:   %[[PADDED:.+]] = tensor.insert_slice %[[LAST]] into %[[ZEROS]][0, 0] [%[[PLEFT32]], 256]
// AMX:   scf.forall
// AMX:   %[[PAIRS:.+]] = tensor.empty() : tensor<4x128x64xbf16>
// AMX:   %[[PACKED:.+]] = scf.for {{.+}} iter_args(%{{.+}} = %[[PAIRS]]) -> (tensor<4x128x64xbf16>)
// AMX:   %[[CHUNKS:.+]] = scf.for %[[C0:.+]] = %c0 to %[[FULL32]] step %c128
// AMX:     scf.for %[[N1:.+]] = %c0 to %c128 step %c32
// AMX:       scf.for %[[M0:.+]] = %[[C0]] to %{{.+}} step %c32
// AMX-NOT:       memref.prefetch
// AMX:         %[[ROWS:.+]] = tensor.extract_slice %[[X]][%[[M0]], 0] [32, 256]
// AMX:         %[[ROW_PAIRS:.+]] = tensor.expand_shape %[[ROWS]] {{\[}}[0], [1, 2]] output_shape [32, 128, 2]
// AMX:         %[[PANEL:.+]] = arith.divui %[[N1]], %c32
// AMX:         %[[COLUMNS:.+]] = tensor.extract_slice %[[PACKED]][%[[PANEL]], 0, 0] [1, 128, 64] [1, 1, 1] : tensor<4x128x64xbf16> to tensor<128x64xbf16>
// AMX:         %[[COLUMN_PAIRS:.+]] = tensor.expand_shape %[[COLUMNS]] {{\[}}[0], [1, 2]] output_shape [128, 32, 2]
// AMX:         linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%[[ROW_PAIRS]], %[[COLUMN_PAIRS]] : tensor<32x128x2xbf16>, tensor<128x32x2xbf16>) outs(%{{.+}} : tensor<32x32xf32>) attrs = {tfm.amx_tiles}
// AMX:   scf.for %{{.+}} = %c0 to %c128 step %c32 iter_args(%{{.+}} = %[[CHUNKS]])
// AMX:     scf.for %[[T0:.+]] = %[[FULL32]] to %[[M]] step %c32
// AMX:       %[[LEFT:.+]] = arith.subi %[[M]], %[[T0]]
// AMX:       %[[YROWS:.+]] = tensor.extract_slice %{{.+}}[%[[T0]], 0] [%[[LEFT]], 32]
// AMX:       %[[SCRATCH:.+]] = tensor.insert_slice %[[YROWS]] into %{{.+}}[0, 0] [%[[LEFT]], 32]
// AMX:       %[[TAIL_PAIRS:.+]] = tensor.expand_shape %[[PADDED]] {{\[}}[0], [1, 2]] output_shape [32, 128, 2]
// AMX:       %[[TSUMS:.+]] = linalg.generic {{.+}} ins(%[[TAIL_PAIRS]], %{{.+}} : tensor<32x128x2xbf16>, tensor<128x32x2xbf16>) outs(%[[SCRATCH]] : tensor<32x32xf32>) attrs = {tfm.amx_tiles}
// AMX:       %[[BACK:.+]] = tensor.extract_slice %[[TSUMS]][0, 0] [%[[LEFT]], 32]
// AMX:       tensor.insert_slice %[[BACK]] into %{{.+}}[%[[T0]], 0] [%[[LEFT]], 32]
// AMX-NOT: x86vector.avx512.dot
// AMX: return
func.func @bf16_amx_blocks(%x: tensor<?x256xbf16>, %w: tensor<256x256xbf16>) -> tensor<?x256xbf16> {
  %y = tfm.linear %x, %w : (tensor<?x256xbf16>, tensor<256x256xbf16>) -> tensor<?x256xbf16>
  return %y : tensor<?x256xbf16>
}

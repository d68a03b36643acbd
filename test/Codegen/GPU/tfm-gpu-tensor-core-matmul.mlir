// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(tfm-gpu-tensor-core-matmul)" | FileCheck %s
// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(tfm-gpu-tensor-core-matmul{tile=64,128,64,3,32,64})" | FileCheck %s --check-prefix=TILE
// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(tfm-gpu-tensor-core-matmul{warpgroup-mma=true})" | FileCheck %s --check-prefix=WGMMA
// RUN: not tfm-opt %s --split-input-file --pass-pipeline="builtin.module(tfm-gpu-tensor-core-matmul{warpgroup-mma=true tile=128,128,64,2,64,128})" 2>&1 | FileCheck %s --check-prefix=WGMMA-STAGES
// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(tfm-gpu-tensor-core-matmul{warpgroup-mma=true tma=true})" | FileCheck %s --check-prefix=TMA
// RUN: not tfm-opt %s --split-input-file --pass-pipeline="builtin.module(tfm-gpu-tensor-core-matmul{tma=true})" 2>&1 | FileCheck %s --check-prefix=TMA-MMA
// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(tfm-gpu-tensor-core-matmul{warpgroup-mma=true tma=true warp-specialized=true})" | FileCheck %s --check-prefix=WS
// RUN: not tfm-opt %s --split-input-file --pass-pipeline="builtin.module(tfm-gpu-tensor-core-matmul{warpgroup-mma=true warp-specialized=true})" 2>&1 | FileCheck %s --check-prefix=WS-TMA
// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(tfm-gpu-tensor-core-matmul{warpgroup-mma=true tma=true warp-specialized=true tile=128,256,64,4,64,256})" | FileCheck %s --check-prefix=WS-TILE
// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(tfm-gpu-tensor-core-matmul{warpgroup-mma=true tma=true warp-specialized=true tile=128,256,64,4,64,256 persistent=true multiprocessors=132})" | FileCheck %s --check-prefix=PERSIST
// RUN: not tfm-opt %s --split-input-file --pass-pipeline="builtin.module(tfm-gpu-tensor-core-matmul{warpgroup-mma=true tma=true persistent=true})" 2>&1 | FileCheck %s --check-prefix=PERSIST-WS
// RUN: not tfm-opt %s --split-input-file --pass-pipeline="builtin.module(tfm-gpu-tensor-core-matmul{warpgroup-mma=true tma=true warp-specialized=true persistent=true multiprocessors=-1})" 2>&1 | FileCheck %s --check-prefix=PERSIST-NEGATIVE
// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(tfm-gpu-tensor-core-matmul{warpgroup-mma=true tma=true warp-specialized=true tile=128,128,64,3,64,128 persistent=true multiprocessors=3})" | FileCheck %s --check-prefix=PERSIST-REGS
// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(tfm-gpu-tensor-core-matmul{warpgroup-mma=true tma=true warp-specialized=true persistent=true multiprocessors=3})" | FileCheck %s --check-prefix=PERSIST-TWO
// RUN: not tfm-opt %s --split-input-file --pass-pipeline="builtin.module(tfm-gpu-tensor-core-matmul{warpgroup-mma=true tma=true warp-specialized=true multiprocessors=3})" 2>&1 | FileCheck %s --check-prefix=PERSIST-ALONE
// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(tfm-gpu-tensor-core-matmul{warpgroup-mma=true tma=true warp-specialized=true persistent=true})" | FileCheck %s --check-prefix=PERSIST-DEVICE
// RUN: not tfm-opt %s --split-input-file --pass-pipeline="builtin.module(tfm-gpu-tensor-core-matmul{warpgroup-mma=true tma=true tile=64,512,64,3,64,256})" 2>&1 | FileCheck %s --check-prefix=TMA-BOX
// RUN: not tfm-opt %s --split-input-file --pass-pipeline="builtin.module(tfm-gpu-tensor-core-matmul{tile=128,128,48,3,64,64})" 2>&1 | FileCheck %s --check-prefix=STEP
// RUN: not tfm-opt %s --split-input-file --pass-pipeline="builtin.module(tfm-gpu-tensor-core-matmul{tile=256,256,64,4,64,64})" 2>&1 | FileCheck %s --check-prefix=SMEM
// RUN: not tfm-opt %s --split-input-file --pass-pipeline="builtin.module(tfm-gpu-tensor-core-matmul{tile=128,128,32})" 2>&1 | FileCheck %s --check-prefix=COUNT
// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(tfm-gpu-tensor-core-matmul{few-rows=0})" | FileCheck %s --check-prefix=NOFEW
// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(tfm-gpu-tensor-core-matmul{few-rows=16})" | FileCheck %s --check-prefix=FEW16
// RUN: not tfm-opt %s --split-input-file --pass-pipeline="builtin.module(tfm-gpu-tensor-core-matmul{few-rows=17})" 2>&1 | FileCheck %s --check-prefix=FEW17

// WGMMA-STAGES: tile 128,128,64,2,64,128 cannot tile a kernel: warpgroup MMA needs at least 3 stages
// TMA-MMA: error: tfm-gpu-tensor-core-matmul: tma needs warpgroup-mma
// WS-TMA: error: tfm-gpu-tensor-core-matmul: warp-specialized needs tma
// PERSIST-WS: error: tfm-gpu-tensor-core-matmul: persistent needs warp-specialized
// PERSIST-NEGATIVE: error: tfm-gpu-tensor-core-matmul: multiprocessors must not be negative, not -1
// PERSIST-ALONE: error: tfm-gpu-tensor-core-matmul: multiprocessors sizes persistent grids: it needs persistent
// Blocks a multiprocessor holds: 128x128 tiles of 2 warpgroups in 96 KiB
// of stages would fit twice by shared memory, but moving registers takes
// the whole register file, so 3 multiprocessors take 3 blocks; the default
// 64x128 tiles of one warpgroup (96 KiB) fit twice, 6 blocks.
// PERSIST-REGS-LABEL: func.func @projection
// PERSIST-REGS: arith.minui %{{.*}}, %c3 :
// PERSIST-REGS: nvvm.setmaxregister  decrease 40
// PERSIST-TWO-LABEL: func.func @projection
// PERSIST-TWO: arith.minui %{{.*}}, %c6 :
// PERSIST-TWO-NOT: nvvm.setmaxregister
// PERSIST-TWO-LABEL: func.func @not_taken
// Without multiprocessors, the host asks the runtime for the device's count
// before the launch.
// PERSIST-DEVICE: func.func private @tfmCudaMultiprocessors() -> i32
// PERSIST-DEVICE-LABEL: func.func @projection
// PERSIST-DEVICE: %[[ASKED:.*]] = call @tfmCudaMultiprocessors() : () -> i32
// PERSIST-DEVICE: %[[MPS:.*]] = arith.index_castui %[[ASKED]] : i32 to index
// PERSIST-DEVICE: %[[MOST:.*]] = arith.muli %[[MPS]], %c2
// PERSIST-DEVICE: arith.minui %{{.*}}, %[[MOST]] :
// PERSIST-DEVICE: gpu.launch
// TMA-BOX: tile 64,512,64,3,64,256 cannot tile a kernel: a TMA load brings at most 256 rows of A or B
// STEP: error: tfm-gpu-tensor-core-matmul: tile 128,128,48,3,64,64 cannot tile a kernel: its step must be 32 or 64
// SMEM: tile 256,256,64,4,64,64 cannot tile a kernel: its stages need 262144 bytes of shared memory, more than a block has (166912)
// COUNT: error: tfm-gpu-tensor-core-matmul: tile takes 6 numbers (block rows, block columns, step, stages, warp rows, warp columns), not 3
// FEW17: error: tfm-gpu-tensor-core-matmul: few-rows must be in [0, 16], not 17

// A bf16 projection as convert-tfm-to-linalg lowers it (a zero fill, then
// out += extf(x) * extf(w) with w in nn.Linear's [N, K] layout), N at most
// 512: one launch of 128-thread blocks (4 warps of 32x32), one per 64x64
// tile of C, with no host branch around it (zero rows make an empty grid,
// which the runtime skips); each block finds its tile in the grouped
// order; 4 stages of [64, 32] A and B tiles in 32 KiB of dynamic shared
// memory; cp.async three steps ahead; ldmatrix and mma.sync in the K loop;
// C stored two floats at a time inside its bounds. Its grid is empty for 8
// rows or fewer: those go to the few-rows kernel after it, blocks of 4
// warps, a pair of columns each (13 blocks for 100 columns), whose grid is
// empty otherwise; its lanes load 8 elements of K of each of W's two rows
// and of each row of X (16-byte loads), multiply-add them in f32, sum them
// across the warp, and lane 0 stores each row's pair. The fill goes.
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @projection
// CHECK-SAME: (%[[X:.*]]: memref<?x256xbf16>, %[[W:.*]]: memref<100x256xbf16>, %[[C:.*]]: memref<?x100xf32>)
// CHECK-NOT: linalg.fill
// CHECK: %[[M:.*]] = memref.dim %[[X]], %c0
// CHECK-NOT: scf.if
// CHECK: %[[COLUMN_BLOCKS:.*]] = arith.ceildivui %{{.*}}, %c64
// CHECK: %[[ROW_BLOCKS:.*]] = arith.ceildivui %[[M]], %c64
// CHECK: %[[BLOCKS:.*]] = arith.muli %[[COLUMN_BLOCKS]], %[[ROW_BLOCKS]]
// CHECK: %[[MANY:.*]] = arith.cmpi ugt, %[[M]], %c8
// CHECK: %[[TILED:.*]] = arith.select %[[MANY]], %[[BLOCKS]], %c0
// CHECK: %[[BYTES:.*]] = arith.constant 32768 : i32
// CHECK: gpu.launch blocks(%[[BX:.*]], %[[BY:.*]], %{{.*}}) in (%{{.*}} = %[[TILED]], %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads(%{{.*}}) in (%{{.*}} = %c128{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) dynamic_shared_memory_size %[[BYTES]]
// CHECK: %[[DYNAMIC:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK: %[[AS:.*]] = memref.view %[[DYNAMIC]][%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4x64x32xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[BS:.*]] = memref.view %[[DYNAMIC]][%c16384][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4x64x32xbf16, #gpu.address_space<workgroup>>
// Groups of 16 row blocks (of 2 column blocks: 32 tiles).
// CHECK: arith.divui %[[BX]], %c32
// CHECK-COUNT-2: nvgpu.device_async_copy %[[X]]
// CHECK-COUNT-2: nvgpu.device_async_copy %[[W]]
// CHECK: nvvm.cp.async.commit.group
// CHECK-COUNT-2: nvgpu.device_async_copy %[[X]]
// CHECK: nvvm.cp.async.commit.group
// CHECK-COUNT-2: nvgpu.device_async_copy %[[X]]
// CHECK: nvvm.cp.async.commit.group
// CHECK: scf.for {{.*}} iter_args
// CHECK:   nvvm.cp.async.wait.group 2
// CHECK:   gpu.barrier
// CHECK:   scf.if
// CHECK:     nvgpu.device_async_copy %[[X]]
// CHECK:     nvgpu.device_async_copy %[[W]]
// CHECK:   nvvm.cp.async.commit.group
// CHECK:   nvgpu.ldmatrix %[[AS]]
// CHECK:   nvgpu.ldmatrix %[[BS]]
// CHECK:   nvvm.mma.sync
// CHECK:   scf.yield
// CHECK: scf.if
// CHECK:   vector.store %{{.*}}, %[[C]][%{{.*}}, %{{.*}}] : memref<?x100xf32>, vector<2xf32>
// CHECK: gpu.terminator
// CHECK: %[[LESS:.*]] = arith.subi %[[M]], %c1
// CHECK: %[[FEW:.*]] = arith.cmpi ult, %[[LESS]], %c8
// CHECK: %[[FEW_BLOCKS:.*]] = arith.select %[[FEW]], %c13, %c0
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %[[FEW_BLOCKS]], %{{.*}}) threads({{.*}}) in (%{{.*}} = %c128{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) {
// CHECK:   scf.for
// CHECK:     vector.load %[[W]]{{.*}} {alignment = 16 : i64} : memref<100x256xbf16>, vector<8xbf16>
// CHECK:     vector.load %[[W]]
// CHECK-COUNT-8: vector.load %[[X]]{{.*}} {alignment = 16 : i64} : memref<?x256xbf16>, vector<8xbf16>
// CHECK:   gpu.shuffle xor
// CHECK:   scf.if
// CHECK-COUNT-8: vector.store %{{.*}}, %[[C]][%{{.*}}, %{{.*}}] : memref<?x100xf32>, vector<2xf32>
// CHECK-NOT: linalg.generic

// With tile=64,128,64,3,32,64: 4 warps of 32x64 over 64x128 tiles, 3
// stages of 64 columns (72 KiB).
// TILE-LABEL: func.func @projection
// TILE: %[[BYTES:.*]] = arith.constant 73728 : i32
// TILE: gpu.launch {{.*}} threads(%{{.*}}) in (%{{.*}} = %c128{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) dynamic_shared_memory_size %[[BYTES]]
// TILE: memref.view {{.*}} to memref<3x64x64xbf16, #gpu.address_space<workgroup>>
// TILE: memref.view {{.*}} to memref<3x128x64xbf16, #gpu.address_space<workgroup>>
// TILE: nvvm.cp.async.wait.group 1

// With warpgroup MMA (sm_90a), N at most 512: one warpgroup (128 threads)
// per 64x128 tile, 4 stages of 64 columns (96 KiB). Copies run two steps
// ahead; each step fences the copies for the async proxy, then issues one
// wgmma per 16 columns on descriptors of the shared tiles and leaves them
// running while the next step begins; the results are waited for once,
// after the loop.
// WGMMA-LABEL: func.func @projection
// WGMMA: %[[BYTES:.*]] = arith.constant 98304 : i32
// WGMMA: gpu.launch {{.*}} threads(%{{.*}}) in (%{{.*}} = %c128{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) dynamic_shared_memory_size %[[BYTES]]
// WGMMA: %[[AS:.*]] = memref.view {{.*}} to memref<4x64x64xbf16, #gpu.address_space<workgroup>>
// WGMMA: %[[BS:.*]] = memref.view {{.*}} to memref<4x128x64xbf16, #gpu.address_space<workgroup>>
// WGMMA: scf.for
// WGMMA:   nvvm.cp.async.wait.group 1
// WGMMA:   nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// WGMMA:   gpu.barrier
// WGMMA:   nvvm.wgmma.fence.aligned
// WGMMA:   memref.extract_aligned_pointer_as_index %[[AS]]
// WGMMA:   memref.extract_aligned_pointer_as_index %[[BS]]
// WGMMA:   nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// WGMMA-COUNT-3: nvvm.wgmma.mma_async
// WGMMA:   nvvm.wgmma.commit.group.sync.aligned
// WGMMA:   nvvm.wgmma.wait.group.sync.aligned 1
// WGMMA: nvvm.wgmma.wait.group.sync.aligned 0
// WGMMA: vector.store

// With TMA too: the host makes a tensor map of X in 64x64 boxes and one of
// W in 128x64 boxes (128-byte swizzle, zeros outside), which the kernel
// takes as pointers; 4 barrier objects follow the stages (98304 + 32
// bytes). Thread 0 initializes them, then issues steps 0 and 1: each
// stage's barrier expects 24576 bytes, and two TMA loads bring X's and
// W's tiles at (k, first row). In the loop, after a block barrier, thread
// 0 issues step + 2, every thread waits on this step's barrier (parity
// step / 4 mod 2), and the warpgroup's products run; no cp.async.
// TMA-LABEL: func.func @projection
// TMA-SAME: (%[[X:.*]]: memref<?x256xbf16>, %[[W:.*]]: memref<100x256xbf16>
// TMA: %[[XU:.*]] = memref.cast %[[X]] : memref<?x256xbf16> to memref<*xbf16>
// TMA: %[[XMAP:.*]] = nvgpu.tma.create.descriptor %[[XU]] box[%{{.*}}, %{{.*}}] : memref<*xbf16> -> <tensor = memref<64x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_256b, oob = zero, interleave = none>
// TMA: %[[XPTR:.*]] = builtin.unrealized_conversion_cast %[[XMAP]] : {{.*}} to !llvm.ptr
// TMA: %[[WU:.*]] = memref.cast %[[W]] : memref<100x256xbf16> to memref<*xbf16>
// TMA: %[[WMAP:.*]] = nvgpu.tma.create.descriptor %[[WU]] box[%{{.*}}, %{{.*}}] : memref<*xbf16> -> <tensor = memref<128x64xbf16, #gpu.address_space<workgroup>>
// TMA: %[[WPTR:.*]] = builtin.unrealized_conversion_cast %[[WMAP]] : {{.*}} to !llvm.ptr
// TMA: gpu.launch {{.*}} dynamic_shared_memory_size %c98336_i32
// TMA: memref.view {{.*}}[%c98304{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4xi64, #gpu.address_space<workgroup>>
// TMA: scf.if
// TMA-COUNT-4: nvvm.mbarrier.init %{{.*}}, %c1_i32
// TMA: nvvm.fence.mbarrier.init
// TMA: gpu.barrier
// TMA: scf.if
// TMA: nvvm.mbarrier.arrive.expect_tx %[[BAR:.*]], %c24576_i32
// TMA: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[XPTR]], %[[BAR]], box[%{{.*}}, %{{.*}}] : !llvm.ptr<7>, !llvm.ptr
// TMA: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[WPTR]], %[[BAR]], box[%{{.*}}, %{{.*}}] : !llvm.ptr<7>, !llvm.ptr
// TMA: nvvm.mbarrier.arrive.expect_tx
// TMA-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global
// TMA: scf.for
// TMA-NOT: nvgpu.device_async_copy
// TMA:   gpu.barrier
// TMA:   scf.if
// TMA:     scf.if
// TMA:       nvvm.mbarrier.arrive.expect_tx
// TMA-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global
// TMA:   nvvm.mbarrier.try_wait
// TMA:   nvvm.wgmma.fence.aligned
// TMA-COUNT-4: nvvm.wgmma.mma_async
// TMA:   nvvm.wgmma.wait.group.sync.aligned 1
// TMA: nvvm.wgmma.wait.group.sync.aligned 0
// TMA: vector.store

// Warp-specialized: a warpgroup more (256 threads), 8 barrier objects (4
// stages' landed ones, then 4 freed ones waiting for the tile's one
// warpgroup), and no block barrier after the one that publishes them.
// Warpgroup 0 (its index shuffled from lane 0, uniform to ptxas) has
// thread 0 load every step, waiting from step 4 on for the stage's freed
// object (the parity of its use before); the others compute, waiting for
// each step's tiles, and after a step's products one thread a warpgroup
// frees the stage of the step before.
// A tiling given for the specialized form: 2 tile warpgroups and the
// producer (no cp.async, so no share of copies for 384 threads to divide),
// 4 stages of 128x64 A and 256x64 B tiles (196608 bytes) and 8 barrier
// objects.
// WS-TILE-LABEL: func.func @projection
// WS-TILE: gpu.launch {{.*}} threads(%{{.*}}) in (%{{.*}} = %c384{{.*}}, {{.*}} dynamic_shared_memory_size %c196672_i32
// WS-LABEL: func.func @projection
// WS: gpu.launch {{.*}} threads(%{{.*}}) in (%{{.*}} = %c256{{.*}}, {{.*}} dynamic_shared_memory_size %c98368_i32
// WS: memref.view {{.*}}[%c98304][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<8xi64, #gpu.address_space<workgroup>>
// WS-COUNT-8: nvvm.mbarrier.init %{{.*}}, %c1_i32
// WS: gpu.barrier
// WS-NOT: gpu.barrier
// WS: gpu.shuffle  idx
// WS: scf.if
// WS: scf.if
// WS: scf.for
// WS: arith.cmpi uge
// WS: nvvm.mbarrier.try_wait
// WS: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c24576_i32
// WS-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global
// WS: } else {
// WS: scf.for
// WS: nvvm.mbarrier.try_wait
// WS: nvvm.wgmma.fence.aligned
// WS: nvvm.wgmma.wait.group.sync.aligned 1
// WS: scf.if
// WS: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// WS: nvvm.wgmma.wait.group.sync.aligned 0
// WS: vector.store
// Persistent (at most 132 blocks of the tiling above): the grid is the
// tile count capped at 132, and block b walks tiles b, b + grid size, ...
// in both roles. The producer (its registers given to the 2 tile
// warpgroups) counts steps over the block's tiles (4 a tile: K = 256), so
// that each stage's phases go on from tile to tile; the tile warpgroups
// start each tile from zero, wait on the same counts, and once the tile's
// products are done free its last stage too before they store it.
// PERSIST-LABEL: func.func @projection
// PERSIST: %[[TILES:.*]] = arith.muli
// PERSIST: %[[CAPPED:.*]] = arith.minui %[[TILES]], %c132
// PERSIST: %[[GRID:.*]] = arith.select %{{.*}}, %[[CAPPED]], %c0
// PERSIST: gpu.launch blocks(%[[BX:[^,]*]], %{{.*}}, %{{.*}}) in (%[[GX:[^ ]*]] = %[[GRID]], {{.*}} threads(%{{.*}}) in (%{{.*}} = %c384
// PERSIST: gpu.shuffle  idx
// PERSIST: scf.if
// PERSIST: nvvm.setmaxregister  decrease 40
// PERSIST: scf.if
// PERSIST: scf.for %[[T:.*]] = %[[BX]] to %{{.*}} step %[[GX]] {
// PERSIST: %[[BEFORE:.*]] = arith.subi %[[T]], %[[BX]]
// PERSIST: %[[NTH:.*]] = arith.divui %[[BEFORE]], %[[GX]]
// PERSIST: %[[FIRST:.*]] = arith.muli %[[NTH]], %c4
// PERSIST: scf.for %[[S:.*]] = %c0{{.*}} to %c4{{.*}} step %c1
// PERSIST: %[[NUM:.*]] = arith.addi %[[FIRST]], %[[S]]
// PERSIST: arith.cmpi uge, %[[NUM]], %c4
// PERSIST: nvvm.mbarrier.try_wait
// PERSIST: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c49152_i32
// PERSIST-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global
// PERSIST: } else {
// PERSIST: nvvm.setmaxregister  increase 232
// PERSIST: scf.for %[[T2:.*]] = %[[BX]] to %{{.*}} step %[[GX]] {
// PERSIST: %[[NTH2:.*]] = arith.divui %{{.*}}, %[[GX]]
// PERSIST: %[[FIRST2:.*]] = arith.muli %[[NTH2]], %c4
// PERSIST: scf.for %[[S2:.*]] = %c0{{.*}} to %c4{{.*}} step %c1{{.*}} iter_args(%{{.*}} = %cst
// PERSIST: arith.addi %[[FIRST2]], %[[S2]]
// PERSIST: nvvm.mbarrier.try_wait
// PERSIST: nvvm.wgmma.wait.group.sync.aligned 1
// PERSIST: nvvm.mbarrier.arrive
// PERSIST: nvvm.wgmma.wait.group.sync.aligned 0
// PERSIST: arith.addi %[[FIRST2]], %c3
// PERSIST: nvvm.mbarrier.arrive
// PERSIST: vector.store
func.func @projection(%x: memref<?x256xbf16>, %w: memref<100x256xbf16>, %c: memref<?x100xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<?x100xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x256xbf16>, memref<100x256xbf16>) outs(%c : memref<?x100xf32>) {
  ^bb0(%in: bf16, %in_0: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    %1 = arith.extf %in_0 : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

// Not taken: f32 operands, K not a multiple of 8 (rows of whole 16-byte
// chunks).
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @not_taken
// CHECK-NOT: gpu.launch
// CHECK-COUNT-2: linalg.generic
func.func @not_taken(%x: memref<8x64xf32>, %w: memref<16x64xf32>, %y: memref<8x36xbf16>,
    %v: memref<16x36xbf16>, %c: memref<8x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<8x16xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<8x64xf32>, memref<16x64xf32>) outs(%c : memref<8x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %2 = arith.mulf %in, %in_0 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.fill ins(%zero : f32) outs(%c : memref<8x16xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%y, %v : memref<8x36xbf16>, memref<16x36xbf16>) outs(%c : memref<8x16xf32>) {
  ^bb0(%in: bf16, %in_0: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    %1 = arith.extf %in_0 : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

// C holding a bias already: the accumulators start from its values.
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @accumulates
// CHECK: gpu.launch
// CHECK-COUNT-16: vector.load %{{.*}} : memref<?x64xf32>, vector<2xf32>
// CHECK: scf.for
func.func @accumulates(%x: memref<?x64xf16>, %w: memref<64x64xf16>, %c: memref<?x64xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x64xf16>, memref<64x64xf16>) outs(%c : memref<?x64xf32>) {
  ^bb0(%in: f16, %in_0: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    %1 = arith.extf %in_0 : f16 to f32
    %2 = arith.mulf %1, %0 : f32
    %3 = arith.addf %2, %out : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

// f32 rows against bf16 weights are not taken: the CUDA pipeline rounds
// them first (tfm-gpu-fuse-elementwise).
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @f32_rows
// CHECK-NOT: gpu.launch
// CHECK: linalg.generic
func.func @f32_rows(%h: memref<130x352xf32>, %w: memref<128x352xbf16>, %c: memref<130x128xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<130x128xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%h, %w : memref<130x352xf32>, memref<128x352xbf16>) outs(%c : memref<130x128xf32>) {
  ^bb0(%in: f32, %in_0: bf16, %out: f32):
    %0 = arith.extf %in_0 : bf16 to f32
    %1 = arith.mulf %in, %0 : f32
    %2 = arith.addf %out, %1 : f32
    linalg.yield %2 : f32
  }
  return
}

// -----

// The f32 result read only by its rounding to bf16 (through a view, as a
// projection of [B, S, K] rows leaves it): the kernel writes the rounded
// values into the [M, N] view of the output; the rounding and C's buffer
// go. N is a multiple of 8, so the tile's sums go through shared memory
// (over the stages, once no copy is in flight and every warp is past its
// products): each thread stores its accumulator pairs, then rounds 8 sums
// of a row at a time (4 chunks a thread) and stores them as one 16-byte
// vector where the output's rows start on 16 bytes (asked at run time),
// element by element otherwise.
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @rounded
// CHECK-SAME: %[[OUT:[^:]*]]: memref<2x?x64xbf16>)
// CHECK-NOT: memref.alloc
// CHECK: %[[VIEW:.*]] = memref.collapse_shape %[[OUT]] {{\[}}[0, 1], [2]] : memref<2x?x64xbf16> into memref<?x64xbf16>
// CHECK: gpu.launch
// CHECK:   %[[STAGING:.*]] = memref.view %{{.*}}[%c0{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x72xf32, #gpu.address_space<workgroup>>
// CHECK:   scf.for
// CHECK:   nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-16: vector.store %{{.*}}, %[[STAGING]][%{{.*}}, %{{.*}}] {alignment = 8 : i64} : memref<64x72xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK-NEXT: gpu.barrier
// CHECK:   %[[START:.*]] = memref.extract_aligned_pointer_as_index %[[VIEW]]
// CHECK:   %[[ALIGNED:.*]] = arith.cmpi eq
// CHECK-COUNT-4: vector.load %[[STAGING]][%{{.*}}, %{{.*}}] {alignment = 32 : i64} : memref<64x72xf32, #gpu.address_space<workgroup>>, vector<8xf32>
// CHECK-NEXT: vector.extract
// CHECK:     scf.if %[[ALIGNED]] {
// CHECK-COUNT-8: arith.truncf %{{.*}} : f32 to bf16
// CHECK:       %[[CHUNK:.*]] = vector.from_elements {{.*}} : vector<8xbf16>
// CHECK:       vector.store %[[CHUNK]], %[[VIEW]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<?x64xbf16>, vector<8xbf16>
// CHECK:     } else {
// CHECK:       vector.store %{{.*}}, %[[VIEW]][%{{.*}}, %{{.*}}] : memref<?x64xbf16>, vector<8xbf16>
// CHECK: gpu.terminator
// CHECK-NOT: linalg.generic
// CHECK-NOT: memref.expand_shape
// With a producer warpgroup, the tile's warpgroup (64x128 tiles) meets at
// a named barrier of its 128 threads, which the producer does not join.
// WS-LABEL: func.func @rounded
// WS: %[[STAGING:.*]] = memref.view %{{.*}}[%c0{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x136xf32, #gpu.address_space<workgroup>>
// WS: nvvm.wgmma.wait.group.sync.aligned 0
// WS-NEXT: %[[ID:.*]] = arith.constant 1 : i32
// WS-NEXT: %[[THREADS:.*]] = arith.constant 128 : i32
// WS-NEXT: nvvm.barrier id = %[[ID]] number_of_threads = %[[THREADS]]
// WS: vector.store %{{.*}}, %[[STAGING]]
// WS: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// WS: vector.store %{{.*}} {alignment = 16 : i64} : memref<?x64xbf16>, vector<8xbf16>
// CHECK-NOT: memref.dealloc
func.func @rounded(%x: memref<?x64xbf16>, %w: memref<64x64xbf16>, %s: index, %result: memref<2x?x64xbf16>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %x, %c0 : memref<?x64xbf16>
  %c = memref.alloc(%m) : memref<?x64xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<?x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x64xbf16>, memref<64x64xbf16>) outs(%c : memref<?x64xf32>) {
  ^bb0(%in: bf16, %in_0: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    %1 = arith.extf %in_0 : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  }
  %e = memref.expand_shape %c [[0, 1], [2]] output_shape [2, %s, 64] : memref<?x64xf32> into memref<2x?x64xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%e : memref<2x?x64xf32>) outs(%result : memref<2x?x64xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %0 = arith.truncf %in : f32 to bf16
    linalg.yield %0 : bf16
  }
  memref.dealloc %c : memref<?x64xf32>
  return
}

// -----

// K = 40: the second step of 32 reads 8 columns and zeros past them.
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @partial_step
// CHECK: gpu.launch
// CHECK: arith.cmpi slt, %{{.*}}, %c40
// CHECK: nvgpu.device_async_copy %{{.*}}, %{{.*}}, 8, %{{.*}} {bypassL1}
func.func @partial_step(%x: memref<?x40xbf16>, %w: memref<64x40xbf16>, %c: memref<?x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<?x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x40xbf16>, memref<64x40xbf16>) outs(%c : memref<?x64xf32>) {
  ^bb0(%in: bf16, %in_0: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    %1 = arith.extf %in_0 : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

// N above 512: 128-thread blocks (4 warps of 64x64) over 128x128 tiles, 3
// stages of 64 columns (96 KiB).
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @wide
// CHECK: %[[BYTES:.*]] = arith.constant 98304 : i32
// CHECK: gpu.launch {{.*}} threads(%{{.*}}) in (%{{.*}} = %c128{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) dynamic_shared_memory_size %[[BYTES]]
// CHECK: memref.view {{.*}} to memref<3x128x64xbf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<3x128x64xbf16, #gpu.address_space<workgroup>>
func.func @wide(%x: memref<?x64xbf16>, %w: memref<1536x64xbf16>, %c: memref<?x1536xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<?x1536xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x64xbf16>, memref<1536x64xbf16>) outs(%c : memref<?x1536xf32>) {
  ^bb0(%in: bf16, %in_0: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    %1 = arith.extf %in_0 : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

// o_proj's epilogue, the residual added to the rounded result, over [B, S,
// N] views, its output allocated after the projection: the kernel runs
// where the epilogue was, reads the residual two values at a time through
// its [M, N] view, and writes the sum's [M, N] view; the few-rows kernel
// evaluates the same epilogue in its stores.
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @residual
// CHECK-SAME: %[[X:[^:]*]]: memref<2x?x64xbf16>)
// CHECK: %[[SUM:.*]] = memref.alloc(%{{.*}}) : memref<2x?x64xbf16>
// CHECK-DAG: %[[XS:.*]] = memref.collapse_shape %[[X]] {{\[}}[0, 1], [2]]
// CHECK-DAG: %[[SUMS:.*]] = memref.collapse_shape %[[SUM]] {{\[}}[0, 1], [2]]
// The residual's rows are asked too, and read 8 at a time.
// CHECK: gpu.launch
// CHECK:   memref.extract_aligned_pointer_as_index %[[SUMS]]
// CHECK:   memref.extract_aligned_pointer_as_index %[[XS]]
// CHECK:   %[[CHUNK:.*]] = vector.load %[[XS]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<?x64xbf16>, vector<8xbf16>
// CHECK:   vector.extract %[[CHUNK]][0]
// CHECK:   arith.truncf %{{.*}} : f32 to bf16
// CHECK:   arith.addf %{{.*}} : bf16
// CHECK:   vector.extract %[[CHUNK]][1]
// CHECK:   vector.store %{{.*}}, %[[SUMS]]{{.*}} {alignment = 16 : i64}
// CHECK: gpu.terminator
// CHECK: gpu.launch
// CHECK:   gpu.shuffle xor
// CHECK:   vector.load %[[XS]][%{{.*}}, %{{.*}}] : memref<?x64xbf16>, vector<2xbf16>
// CHECK:   arith.addf %{{.*}} : bf16
// CHECK:   vector.store %{{.*}}, %[[SUMS]]
// CHECK-NOT: linalg.generic
// CHECK: return %[[SUM]]
func.func @residual(%a: memref<?x64xbf16>, %w: memref<64x64xbf16>, %s: index, %x: memref<2x?x64xbf16>) -> memref<2x?x64xbf16> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %a, %c0 : memref<?x64xbf16>
  %c = memref.alloc(%m) : memref<?x64xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<?x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<?x64xbf16>, memref<64x64xbf16>) outs(%c : memref<?x64xf32>) {
  ^bb0(%in: bf16, %in_0: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    %1 = arith.extf %in_0 : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  }
  %e = memref.expand_shape %c [[0, 1], [2]] output_shape [2, %s, 64] : memref<?x64xf32> into memref<2x?x64xf32>
  %sum = memref.alloc(%s) : memref<2x?x64xbf16>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %e : memref<2x?x64xbf16>, memref<2x?x64xf32>) outs(%sum : memref<2x?x64xbf16>) {
  ^bb0(%in: bf16, %in_0: f32, %o: bf16):
    %0 = arith.truncf %in_0 : f32 to bf16
    %1 = arith.addf %in, %0 : bf16
    linalg.yield %1 : bf16
  }
  memref.dealloc %c : memref<?x64xf32>
  return %sum : memref<2x?x64xbf16>
}

// -----

// A gated FFN's gate and up: the epilogue act(gate) · up, rounded, reads
// both projections' sums. The later one (up) computes it as it stores and
// reads gate's stored sums; gate stores its sums.
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(d0, d1) -> (d0, d1)>
// For few rows, up's few-rows kernel computes gate's sums too (gate has no
// few-rows kernel): each lane loads up's two rows of weights and gate's at
// each step of K (two steps at a time rather than four), each row's chunk
// of X once for the four, and lane 0 evaluates act(gate) · up on the four
// sums; gate's f32 sums are neither stored nor read.
// CHECK-LABEL: func.func @gated
// CHECK-SAME: (%[[X:[^:]*]]: memref<?x64xbf16>, %[[WG:[^:]*]]: memref<128x64xbf16>, %[[WU:[^:]*]]: memref<128x64xbf16>
// CHECK: %[[GATE:.*]] = memref.alloc(%{{.*}}) : memref<?x128xf32>
// CHECK: gpu.launch {{.*}} dynamic_shared_memory_size
// CHECK:   vector.store %{{.*}}, %[[GATE]]{{.*}} {alignment = 16 : i64} : memref<?x128xf32>, vector<8xf32>
// CHECK: gpu.launch {{.*}} dynamic_shared_memory_size
// CHECK:   vector.load %[[GATE]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<?x128xf32>, vector<8xf32>
// CHECK:   math.exp
// CHECK:   arith.truncf %{{.*}} : f32 to bf16
// CHECK:   vector.store %{{[^,]*}}, %[[H:[^\[]*]]
// CHECK: gpu.launch
// CHECK-NOT: %[[GATE]]
// CHECK:   %[[SUMS:.*]]:32 = scf.for
// CHECK:     vector.load %[[WU]]
// CHECK:     vector.load %[[WU]]
// CHECK:     vector.load %[[WG]]
// CHECK:     vector.load %[[WG]]
// CHECK:     scf.if %{{.*}} -> (f32, f32, f32, f32)
// CHECK:       vector.load %[[X]][%c0
// CHECK-COUNT-4: vector.reduction <add>
// CHECK:   gpu.shuffle xor %[[SUMS]]#0,
// CHECK-COUNT-4: gpu.shuffle xor
// CHECK-NEXT: %[[UP0:.*]] = arith.addf
// CHECK:   gpu.shuffle xor %[[SUMS]]#2,
// CHECK-COUNT-4: gpu.shuffle xor
// CHECK-NEXT: %[[GATE0:.*]] = arith.addf
// CHECK:   arith.negf %[[GATE0]]
// CHECK:   arith.divf %[[GATE0]]
// CHECK:   arith.mulf %{{.*}}, %[[UP0]]
// CHECK:   vector.store %{{.*}}, %[[H]]
// CHECK-NOT: gpu.launch
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @gated(%x: memref<?x64xbf16>, %wg: memref<128x64xbf16>, %wu: memref<128x64xbf16>, %h: memref<?x128xbf16>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %m = memref.dim %x, %c0 : memref<?x64xbf16>
  %gate = memref.alloc(%m) : memref<?x128xf32>
  linalg.fill ins(%zero : f32) outs(%gate : memref<?x128xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %wg : memref<?x64xbf16>, memref<128x64xbf16>) outs(%gate : memref<?x128xf32>) {
  ^bb0(%in: bf16, %in_0: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    %1 = arith.extf %in_0 : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  }
  %up = memref.alloc(%m) : memref<?x128xf32>
  linalg.fill ins(%zero : f32) outs(%up : memref<?x128xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %wu : memref<?x64xbf16>, memref<128x64xbf16>) outs(%up : memref<?x128xf32>) {
  ^bb0(%in: bf16, %in_0: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    %1 = arith.extf %in_0 : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%gate, %up : memref<?x128xf32>, memref<?x128xf32>) outs(%h : memref<?x128xbf16>) {
  ^bb0(%g: f32, %u: f32, %o: bf16):
    %0 = arith.negf %g : f32
    %1 = math.exp %0 : f32
    %2 = arith.addf %1, %one : f32
    %3 = arith.divf %g, %2 : f32
    %4 = arith.mulf %3, %u : f32
    %5 = arith.truncf %4 : f32 to bf16
    linalg.yield %5 : bf16
  }
  memref.dealloc %gate : memref<?x128xf32>
  memref.dealloc %up : memref<?x128xf32>
  return
}

// -----

// Gate and up of different rows: each keeps its few-rows kernel, and up's
// epilogue reads gate's sums from memory.
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @not_siblings
// CHECK-SAME: (%{{[^:]*}}: memref<?x64xbf16>, %{{[^:]*}}: memref<?x64xbf16>, %[[WG:[^:]*]]: memref<128x64xbf16>
// CHECK: %[[GATE:.*]] = memref.alloc(%{{.*}}) : memref<?x128xf32>
// CHECK: gpu.launch {{.*}} dynamic_shared_memory_size
// CHECK: gpu.launch
// CHECK:   vector.load %[[WG]]
// CHECK:   vector.store %{{.*}}, %[[GATE]]
// CHECK: gpu.launch {{.*}} dynamic_shared_memory_size
// CHECK: gpu.launch
// CHECK:   vector.load %[[GATE]]
// CHECK:   math.exp
// CHECK: return
func.func @not_siblings(%x: memref<?x64xbf16>, %y: memref<?x64xbf16>, %wg: memref<128x64xbf16>, %wu: memref<128x64xbf16>, %h: memref<?x128xbf16>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %m = memref.dim %x, %c0 : memref<?x64xbf16>
  %gate = memref.alloc(%m) : memref<?x128xf32>
  linalg.fill ins(%zero : f32) outs(%gate : memref<?x128xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %wg : memref<?x64xbf16>, memref<128x64xbf16>) outs(%gate : memref<?x128xf32>) {
  ^bb0(%in: bf16, %in_0: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    %1 = arith.extf %in_0 : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  }
  %up = memref.alloc(%m) : memref<?x128xf32>
  linalg.fill ins(%zero : f32) outs(%up : memref<?x128xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%y, %wu : memref<?x64xbf16>, memref<128x64xbf16>) outs(%up : memref<?x128xf32>) {
  ^bb0(%in: bf16, %in_0: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    %1 = arith.extf %in_0 : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%gate, %up : memref<?x128xf32>, memref<?x128xf32>) outs(%h : memref<?x128xbf16>) {
  ^bb0(%g: f32, %u: f32, %o: bf16):
    %0 = arith.negf %g : f32
    %1 = math.exp %0 : f32
    %2 = arith.addf %1, %one : f32
    %3 = arith.divf %g, %2 : f32
    %4 = arith.mulf %3, %u : f32
    %5 = arith.truncf %4 : f32 to bf16
    linalg.yield %5 : bf16
  }
  memref.dealloc %gate : memref<?x128xf32>
  memref.dealloc %up : memref<?x128xf32>
  return
}

// -----

// Not an epilogue: an op that writes memory between the projection and the
// op reading its sums (it could write what the op reads), and an op
// reading the sums at another index (a transpose).
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func.func @not_epilogues
// CHECK: gpu.launch
// CHECK:   vector.store %{{.*}}, %[[C1:[^\[]*]]
// CHECK: memref.copy
// CHECK: linalg.generic
// CHECK: gpu.launch
// CHECK:   vector.store %{{.*}}, %[[C2:[^\[]*]]
// CHECK: linalg.generic
func.func @not_epilogues(%x: memref<64x64xbf16>, %w: memref<64x64xbf16>, %r: memref<64x64xbf16>, %s: memref<64x64xbf16>, %y: memref<64x64xbf16>, %z: memref<64x64xbf16>) {
  %zero = arith.constant 0.0 : f32
  %c1 = memref.alloc() : memref<64x64xf32>
  linalg.fill ins(%zero : f32) outs(%c1 : memref<64x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<64x64xbf16>, memref<64x64xbf16>) outs(%c1 : memref<64x64xf32>) {
  ^bb0(%in: bf16, %in_0: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    %1 = arith.extf %in_0 : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  }
  memref.copy %s, %r : memref<64x64xbf16> to memref<64x64xbf16>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c1, %r : memref<64x64xf32>, memref<64x64xbf16>) outs(%y : memref<64x64xbf16>) {
  ^bb0(%in: f32, %in_0: bf16, %o: bf16):
    %0 = arith.truncf %in : f32 to bf16
    %1 = arith.addf %0, %in_0 : bf16
    linalg.yield %1 : bf16
  }
  %c2 = memref.alloc() : memref<64x64xf32>
  linalg.fill ins(%zero : f32) outs(%c2 : memref<64x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<64x64xbf16>, memref<64x64xbf16>) outs(%c2 : memref<64x64xf32>) {
  ^bb0(%in: bf16, %in_0: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    %1 = arith.extf %in_0 : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c2 : memref<64x64xf32>) outs(%z : memref<64x64xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %0 = arith.truncf %in : f32 to bf16
    linalg.yield %0 : bf16
  }
  memref.dealloc %c1 : memref<64x64xf32>
  memref.dealloc %c2 : memref<64x64xf32>
  return
}

// -----

// A static row count builds one kernel: 4 rows the few-rows kernel alone
// (K = 40: the lanes past K in the one step add nothing), 16 rows the
// tiles alone. C's values (a bias) are the starting sums, added to the
// warp's sums before the store.
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @few_rows_static
// CHECK-SAME: %[[C:[^:]*]]: memref<4x64xf32>)
// CHECK-NOT: dynamic_shared_memory_size
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c8{{.*}}, %{{.*}}) threads({{.*}}) in (%{{.*}} = %c128
// CHECK:   scf.for
// CHECK:     arith.cmpi slt, %{{.*}}, %c40
// CHECK:     scf.if
// CHECK:       vector.reduction <add>
// CHECK:   %[[START:.*]] = vector.load %[[C]]{{.*}} : memref<4x64xf32>, vector<2xf32>
// CHECK:   vector.extract %[[START]][0]
// CHECK:   vector.store %{{.*}}, %[[C]]
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @few_rows_static(%x: memref<4x40xbf16>, %w: memref<64x40xbf16>, %c: memref<4x64xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<4x40xbf16>, memref<64x40xbf16>) outs(%c : memref<4x64xf32>) {
  ^bb0(%in: bf16, %in_0: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    %1 = arith.extf %in_0 : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  }
  return
}
// few-rows=0: the tiles alone, even for 4 rows; few-rows=16: the few-rows
// kernel for 16 rows too, each row's sums in registers.
// NOFEW-LABEL: func.func @few_rows_static
// NOFEW: gpu.launch {{.*}} dynamic_shared_memory_size
// NOFEW-NOT: gpu.launch
// NOFEW: return
// FEW16-LABEL: func.func @many_rows_static
// FEW16-NOT: dynamic_shared_memory_size
// FEW16: gpu.launch
// FEW16-COUNT-16: vector.store
// FEW16-NOT: gpu.launch
// FEW16: return
// CHECK-LABEL: func.func @many_rows_static
// CHECK: gpu.launch {{.*}} dynamic_shared_memory_size
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @many_rows_static(%x: memref<16x64xbf16>, %w: memref<64x64xbf16>, %c: memref<16x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<16x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<16x64xbf16>, memref<64x64xbf16>) outs(%c : memref<16x64xf32>) {
  ^bb0(%in: bf16, %in_0: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    %1 = arith.extf %in_0 : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-gpu-lower-buffer-attention))" --verify-diagnostics | FileCheck %s
// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-gpu-lower-buffer-attention{warp-rows=32}))" --verify-diagnostics | FileCheck %s --check-prefix=ROWS32
// RUN: not tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-gpu-lower-buffer-attention{warp-rows=48}))" 2>&1 | FileCheck %s --check-prefix=ROWS48
// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-gpu-lower-buffer-attention{split-kv=true}))" --verify-diagnostics | FileCheck %s --check-prefix=SPLIT
// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-gpu-lower-buffer-attention{warpgroup-mma=true}))" --verify-diagnostics | FileCheck %s --check-prefix=WGMMA
// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-gpu-lower-buffer-attention{warpgroup-mma=true split-kv=true}))" --verify-diagnostics | FileCheck %s --check-prefix=WGSPLIT
// RUN: not tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-gpu-lower-buffer-attention{warpgroup-mma=true warp-rows=32}))" 2>&1 | FileCheck %s --check-prefix=WG32
// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-gpu-lower-buffer-attention{warpgroup-mma=true warpgroup-overlap=true}))" --verify-diagnostics | FileCheck %s --check-prefix=OVERLAP
// RUN: not tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-gpu-lower-buffer-attention{warpgroup-overlap=true}))" 2>&1 | FileCheck %s --check-prefix=OVERLAP-ALONE
// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-gpu-lower-buffer-attention{warpgroup-mma=true tma=true}))" --verify-diagnostics | FileCheck %s --check-prefix=TMA
// RUN: not tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-gpu-lower-buffer-attention{tma=true}))" 2>&1 | FileCheck %s --check-prefix=TMA-ALONE
// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-gpu-lower-buffer-attention{warpgroup-mma=true warpgroup-overlap=true tma=true}))" --verify-diagnostics | FileCheck %s --check-prefix=OVERLAP-TMA
// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-gpu-lower-buffer-attention{warpgroup-mma=true tma=true warp-specialized=true}))" --verify-diagnostics | FileCheck %s --check-prefix=WS
// RUN: not tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-gpu-lower-buffer-attention{warpgroup-mma=true warp-specialized=true}))" 2>&1 | FileCheck %s --check-prefix=WS-ALONE
// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-gpu-lower-buffer-attention{warpgroup-mma=true warpgroup-overlap=true tma=true warp-specialized=true}))" --verify-diagnostics | FileCheck %s --check-prefix=OVERLAP-WS
// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-gpu-lower-buffer-attention{warpgroup-mma=true warpgroup-overlap=true tma=true warp-specialized=true pingpong=true}))" --verify-diagnostics | FileCheck %s --check-prefix=PINGPONG
// RUN: not tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-gpu-lower-buffer-attention{warpgroup-mma=true tma=true warp-specialized=true pingpong=true}))" 2>&1 | FileCheck %s --check-prefix=PINGPONG-ALONE
// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-gpu-lower-buffer-attention{warpgroup-mma=true keys=128}))" --verify-diagnostics | FileCheck %s --check-prefix=KEYS128
// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-gpu-lower-buffer-attention{warpgroup-mma=true warpgroup-overlap=true tma=true warp-specialized=true pingpong=true keys=128}))" --verify-diagnostics | FileCheck %s --check-prefix=PINGPONG128
// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-gpu-lower-buffer-attention{warpgroup-mma=true split-kv=true keys=128}))" --verify-diagnostics | FileCheck %s --check-prefix=WGSPLIT
// RUN: not tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-gpu-lower-buffer-attention{warpgroup-mma=true keys=96}))" 2>&1 | FileCheck %s --check-prefix=KEYS96
// RUN: not tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-gpu-lower-buffer-attention{keys=128}))" 2>&1 | FileCheck %s --check-prefix=KEYS-ALONE

// The kernel of a causal GQA attention with kv lengths, with no host branch
// around it (an empty grid is the runtime's to skip); blocks of 256 threads over (query tiles of 128, heads,
// batch), the last tiles first; two [64, D] shared tiles for K and V; Q
// read once from global memory into registers;
// a loop over key tiles that copies V (then the next K) with cp.async,
// multiplies on tensor cores through ldmatrix, masks only the tiles the
// mask cuts, and keeps the softmax state in registers; the result
// staged over the K and V tiles (each lane's pairs, 16-byte chunks
// swizzled by row), then stored 16 bytes at a time along rows where the
// output's rows start on 16 bytes (asked at run time), element by element
// otherwise.
// TMA-ALONE: error: tfm-gpu-lower-buffer-attention: tma takes warpgroup-mma
// WS-ALONE: error: tfm-gpu-lower-buffer-attention: warp-specialized takes tma
// PINGPONG-ALONE: error: tfm-gpu-lower-buffer-attention: pingpong takes warp-specialized and warpgroup-overlap
// KEYS96: error: tfm-gpu-lower-buffer-attention: keys must be 64 or 128, not 96
// KEYS-ALONE: error: tfm-gpu-lower-buffer-attention: keys 128 takes warpgroup-mma

// CHECK-LABEL: func.func @kernel
// CHECK-SAME: (%[[Q:.*]]: memref<?x8x?x64xbf16>, %[[K:.*]]: memref<?x2x?x64xbf16>, %[[V:.*]]: memref<?x2x?x64xbf16>, %[[L:.*]]: memref<?xi32>, %[[O:.*]]: memref<?x8x?x64xbf16>)
// CHECK: %[[B:.*]] = memref.dim %[[Q]], %c0
// CHECK: %[[S:.*]] = memref.dim %[[Q]], %c2
// CHECK-NOT: scf.if
// CHECK:   %[[TILES:.*]] = arith.ceildivui %[[S]], %c128
// CHECK:   gpu.launch blocks(%[[BX:.*]], %[[BY:.*]], %[[BZ:.*]]) in (%[[GX:.*]] = %[[TILES]], %{{.*}} = %c8{{.*}}, %{{.*}} = %[[B]]) threads(%{{.*}}) in (%{{.*}} = %c256{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) dynamic_shared_memory_size %c16384_i32
// CHECK:     %[[SHARED:.*]] = gpu.dynamic_shared_memory
// CHECK:     %[[KS:.*]] = memref.view %[[SHARED]][%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x64xbf16, #gpu.address_space<workgroup>>
// CHECK:     %[[VS:.*]] = memref.view %[[SHARED]][%c8192][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x64xbf16, #gpu.address_space<workgroup>>
// CHECK:     %[[STAGING:.*]] = memref.view %[[SHARED]][%c0{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<128x64xbf16, #gpu.address_space<workgroup>>
// CHECK:     arith.subi %[[GX]], %[[BX]]
// CHECK:     memref.load %[[L]][%[[BZ]]]
// CHECK-COUNT-16: vector.load %[[Q]][%[[BZ]], %[[BY]], {{.*}}] : memref<?x8x?x64xbf16>, vector<2xbf16>
// CHECK:     scf.if
// CHECK:       nvgpu.device_async_copy %[[K]]{{.*}}, %[[KS]][{{.*}}], 8 {bypassL1}
// CHECK:       nvvm.cp.async.commit.group
// CHECK:     scf.for
// CHECK:       nvvm.cp.async.wait.group 0
// CHECK:       gpu.barrier
// CHECK:       nvgpu.device_async_copy %[[V]]{{.*}}, %[[VS]]
// CHECK:       nvgpu.ldmatrix %[[KS]]{{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK:       nvvm.mma.sync {{.*}} {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>}
// CHECK:       scf.if {{.*}} -> (f32,
// CHECK:         arith.select
// CHECK:       gpu.shuffle  xor
// CHECK:       math.exp2
// CHECK:       arith.truncf {{.*}} : vector<2xf32> to vector<2xbf16>
// CHECK:       nvgpu.device_async_copy %[[K]]
// CHECK:       nvgpu.ldmatrix %[[VS]]{{.*}} {numTiles = 4 : i32, transpose = true}
// CHECK:       nvvm.mma.sync
// CHECK:       scf.yield
// CHECK:     nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-16: vector.store {{.*}}, %[[STAGING]][{{.*}}] {alignment = 4 : i64} : memref<128x64xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
// CHECK-NEXT: gpu.barrier
// CHECK:     memref.extract_aligned_pointer_as_index %[[O]]
// CHECK:     %[[ALIGNED:.*]] = arith.cmpi eq
// CHECK:     vector.load %[[STAGING]][{{.*}}] {alignment = 16 : i64} : memref<128x64xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK:     scf.if %[[ALIGNED]] {
// CHECK:       vector.store {{.*}}, %[[O]][%[[BZ]], %[[BY]], {{.*}}] {alignment = 16 : i64} : memref<?x8x?x64xbf16>, vector<8xbf16>
// CHECK:     } else {
// CHECK:       vector.store {{.*}}, %[[O]][%[[BZ]], %[[BY]], {{.*}}] : memref<?x8x?x64xbf16>, vector<8xbf16>
// 32 rows a warp: 4 warps, each holding two row tiles of Q in registers
// (head dim 64); each ldmatrix of K and of V feeds both.
// ROWS32-LABEL: func.func @kernel
// ROWS32-SAME: (%[[Q:.*]]: memref<?x8x?x64xbf16>,
// ROWS32: gpu.launch {{.*}} threads(%{{.*}}) in (%{{.*}} = %c128{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) dynamic_shared_memory_size %c16384_i32
// ROWS32: %[[KS:.*]] = memref.view {{.*}} to memref<64x64xbf16, #gpu.address_space<workgroup>>
// ROWS32: %[[VS:.*]] = memref.view {{.*}} to memref<64x64xbf16, #gpu.address_space<workgroup>>
// ROWS32-COUNT-32: vector.load %[[Q]]
// ROWS32-NOT: vector.load %[[Q]]
// ROWS32: scf.for
// ROWS32: nvgpu.ldmatrix %[[KS]]
// ROWS32-NOT: nvgpu.ldmatrix
// ROWS32: nvvm.mma.sync
// ROWS32-NOT: nvgpu.ldmatrix
// ROWS32: nvvm.mma.sync
// ROWS32-NOT: nvgpu.ldmatrix
// ROWS32: nvvm.mma.sync
// ROWS32-NOT: nvgpu.ldmatrix
// ROWS32: nvvm.mma.sync
// ROWS32: nvgpu.ldmatrix %[[VS]]{{.*}}transpose = true
// ROWS32-NOT: nvgpu.ldmatrix
// ROWS32: nvvm.mma.sync
// ROWS32-NOT: nvgpu.ldmatrix
// ROWS32: nvvm.mma.sync
// ROWS32-NOT: nvgpu.ldmatrix
// ROWS32: nvvm.mma.sync
// ROWS32-NOT: nvgpu.ldmatrix
// ROWS32: nvvm.mma.sync
// ROWS32-COUNT-4: scf.if
// ROWS48: tfm-gpu-lower-buffer-attention: warp-rows must be 16 or 32, not 48
// A dynamic query length is not packed, even with split-kv.
// SPLIT-LABEL: func.func @kernel
// SPLIT-NOT: memref.alloc
// SPLIT: gpu.launch {{.*}} threads(%{{.*}}) in (%{{.*}} = %c256
func.func @kernel(%q: memref<?x8x?x64xbf16>, %k: memref<?x2x?x64xbf16>,
    %v: memref<?x2x?x64xbf16>, %l: memref<?xi32>, %o: memref<?x8x?x64xbf16>) {
  tfm.buffer_attention %q, %k, %v kv_lengths(%l : memref<?xi32>) into %o {mask = #tfm.mask<causal>}
      : memref<?x8x?x64xbf16>, memref<?x2x?x64xbf16>, memref<?x2x?x64xbf16>
        into memref<?x8x?x64xbf16>
  return
}

// -----

// The warpgroup forms without the overlap, at head dim 128 (at 64 the
// kernel always overlaps: docs/DESIGN.md, GPU attention).
// With warpgroup MMA and TMA loads, the host makes tensor maps of K and V in
// boxes of 1x1x64x64 (128-byte swizzle, zeros outside), which the kernel
// takes as pointers; two barrier objects follow the tiles (32768 + 16
// bytes). Thread 0 initializes them, then loads the first K tile (16384
// bytes expected, a box per panel of 64 columns). Per tile,
// after a block barrier thread 0 loads V and every thread waits for K
// (parity: the tile's index mod 2), QKᵀ; after another barrier thread 0
// loads the next K, every thread waits for V, and in a tile the kv length
// cuts, V's rows past it are zeroed and fenced before P·V; no cp.async.
// TMA-LABEL: func.func @sequential_d128
// TMA-SAME: (%[[Q:.*]]: memref<?x8x?x128xbf16>, %[[K:.*]]: memref<?x2x?x128xbf16>, %[[V:.*]]: memref<?x2x?x128xbf16>
// TMA: %[[KU:.*]] = memref.cast %[[K]] : memref<?x2x?x128xbf16> to memref<*xbf16>
// TMA: %[[KMAP:.*]] = nvgpu.tma.create.descriptor %[[KU]] box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<*xbf16> -> <tensor = memref<1x1x64x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_256b, oob = zero, interleave = none>
// TMA: %[[KPTR:.*]] = builtin.unrealized_conversion_cast %[[KMAP]]
// TMA: %[[VU:.*]] = memref.cast %[[V]]
// TMA: %[[VMAP:.*]] = nvgpu.tma.create.descriptor %[[VU]]
// TMA: %[[VPTR:.*]] = builtin.unrealized_conversion_cast %[[VMAP]]
// TMA: gpu.launch {{.*}} dynamic_shared_memory_size %c65552_i32
// TMA: %[[VS:.*]] = memref.view {{.*}}[%c16384][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x64x64xbf16, #gpu.address_space<workgroup>>
// TMA: %[[QS:.*]] = memref.view {{.*}}[%c32768][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<128x128xbf16, #gpu.address_space<workgroup>>
// TMA: memref.view {{.*}}[%c65536][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2xi64, #gpu.address_space<workgroup>>
// With TMA, each warp copies its 16 rows of Q into shared memory (16-byte
// chunks along rows, 8 a lane), and ldmatrix reads them into registers once
// they have landed, rather than gathering them from global memory.
// TMA-COUNT-8: nvgpu.device_async_copy %[[Q]]{{.*}}, %[[QS]]
// TMA-NEXT: nvvm.cp.async.commit.group
// TMA-COUNT-2: nvvm.mbarrier.init
// TMA: nvvm.fence.mbarrier.init
// TMA: gpu.barrier
// TMA: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c16384_i32
// TMA: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[KPTR]], %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : !llvm.ptr<7>, !llvm.ptr
// TMA: nvvm.cp.async.wait.group 0
// TMA-NEXT: gpu.barrier
// TMA-COUNT-8: nvgpu.ldmatrix %[[QS]]
// TMA: scf.for
// TMA-NOT: nvgpu.device_async_copy
// TMA: gpu.barrier
// TMA: nvvm.mbarrier.arrive.expect_tx
// TMA: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[VPTR]]
// TMA: nvvm.mbarrier.try_wait
// TMA: nvvm.wgmma.fence.aligned
// TMA: nvvm.wgmma.wait.group.sync.aligned 0
// TMA: gpu.barrier
// TMA: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[KPTR]]
// TMA: nvvm.mbarrier.try_wait
// TMA: scf.if
// TMA: vector.store %{{.*}}, %[[VS]]
// TMA: vector.store %{{.*}}, %[[VS]]
// TMA: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// TMA-NEXT: gpu.barrier
// TMA: nvvm.wgmma.fence.aligned
// TMA: nvvm.wgmma.wait.group.sync.aligned 0
// TMA-NOT: nvgpu.device_async_copy
// TMA: return
// Warp-specialized: 384 threads, K and V double-buffered (64 KiB) and
// eight barrier objects: K and V landed (one arrival each), then K and V
// freed (one arrival of each tile warpgroup). The roles branch on the
// warpgroup index shuffled from lane 0. The producer gives up registers and
// its thread 0 loops over the tiles: a buffer's reuse waits for it to be
// freed, then the tile's K and V boxes go to it. The tile warpgroups take
// the registers; per tile, with no block barrier, each waits for K, frees
// it once QKᵀ is done, waits for V, zeroes V's rows past the kv length
// (published by its own 128-thread barrier), frees V after P·V.
// WS-LABEL: func.func @sequential_d128
// WS: gpu.launch {{.*}} in (%{{.*}} = %c384, {{.*}} dynamic_shared_memory_size %c98368_i32
// WS: memref.view {{.*}}[%c32768][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x2x64x64xbf16, #gpu.address_space<workgroup>>
// WS: memref.view {{.*}}[%c98304][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<8xi64, #gpu.address_space<workgroup>>
// WS-COUNT-4: nvvm.mbarrier.init %{{.*}}, %c1_i32{{.*}} : !llvm.ptr<3>, i32
// WS-COUNT-4: nvvm.mbarrier.init %{{.*}}, %c2_i32{{.*}} : !llvm.ptr<3>, i32
// WS: nvvm.fence.mbarrier.init
// WS: gpu.barrier
// WS: gpu.shuffle idx
// WS: scf.if
// WS-NEXT: nvvm.setmaxregister decrease 40
// WS: scf.for
// WS: nvvm.mbarrier.try_wait
// WS: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c16384_i32
// WS: nvvm.cp.async.bulk.tensor.shared.cluster.global
// WS: nvvm.mbarrier.try_wait
// WS: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c16384_i32
// WS: nvvm.cp.async.bulk.tensor.shared.cluster.global
// WS: nvvm.setmaxregister increase 232
// WS-NOT: gpu.barrier
// The tile warpgroups copy their rows of Q and meet at their own barriers
// (of their 128 threads) before ldmatrix reads them.
// WS: nvgpu.device_async_copy
// WS: nvvm.cp.async.wait.group 0
// WS: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// WS: nvgpu.ldmatrix
// WS-NOT: gpu.barrier
// WS: scf.for
// WS-NOT: gpu.barrier
// WS: nvvm.mbarrier.try_wait
// WS-NOT: gpu.barrier
// WS: nvvm.wgmma.wait.group.sync.aligned 0
// WS-NOT: gpu.barrier
// WS: nvvm.mbarrier.arrive %
// WS-NOT: gpu.barrier
// WS: nvvm.mbarrier.try_wait
// WS-NOT: gpu.barrier
// WS: vector.store %{{.*}} : memref<2x2x64x64xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// WS-NOT: gpu.barrier
// WS: nvvm.fence.proxy
// WS: nvvm.barrier id = %{{.*}} number_of_threads = %c128_i32
// WS-NOT: gpu.barrier
// WS: nvvm.wgmma.wait.group.sync.aligned 0
// WS-NOT: gpu.barrier
// WS: nvvm.mbarrier.arrive %
// WS-NOT: gpu.barrier
// WS: return
func.func @sequential_d128(%q: memref<?x8x?x128xbf16>, %k: memref<?x2x?x128xbf16>,
    %v: memref<?x2x?x128xbf16>, %l: memref<?xi32>, %o: memref<?x8x?x128xbf16>) {
  tfm.buffer_attention %q, %k, %v kv_lengths(%l : memref<?xi32>) into %o {mask = #tfm.mask<causal>}
      : memref<?x8x?x128xbf16>, memref<?x2x?x128xbf16>, memref<?x2x?x128xbf16>
        into memref<?x8x?x128xbf16>
  return
}

// -----

// f16 operands are typed as pairs of halves; D = 128: 8 groups of Q
// registers. With 32 rows a warp, each warp copies its rows of Q into
// shared memory before the first K tile, and ldmatrix reads them from
// there per key tile.
// CHECK-LABEL: func.func @f16_d128
// CHECK: dynamic_shared_memory_size %c32768_i32
// CHECK: memref.view {{.*}} to memref<64x128xf16, #gpu.address_space<workgroup>>
// ROWS32-LABEL: func.func @f16_d128
// ROWS32-SAME: (%[[Q:[^:]*]]: memref<1x4x100x128xf16>
// ROWS32: dynamic_shared_memory_size %c65536_i32
// ROWS32: %[[KS:.*]] = memref.view {{.*}} to memref<64x128xf16, #gpu.address_space<workgroup>>
// ROWS32: memref.view {{.*}}[%c16384][] {{.*}} to memref<64x128xf16, #gpu.address_space<workgroup>>
// ROWS32: %[[QS:.*]] = memref.view {{.*}}[%c32768][] {{.*}} to memref<128x128xf16, #gpu.address_space<workgroup>>
// ROWS32-NOT: vector.load %[[Q]]
// ROWS32: nvgpu.device_async_copy %[[Q]]{{.*}}, %[[QS]]
// ROWS32: nvvm.cp.async.commit.group
// ROWS32: scf.if
// ROWS32: nvgpu.device_async_copy %{{.*}}, %[[KS]]
// ROWS32: nvvm.cp.async.wait.group 0
// ROWS32-NEXT: gpu.barrier
// ROWS32-NOT: nvgpu.ldmatrix %[[QS]]
// ROWS32: scf.for
// ROWS32: nvgpu.ldmatrix %[[QS]]
// CHECK-COUNT-32: vector.load
// CHECK: nvvm.mma.sync {{.*}} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// With warpgroup MMA, the K and V tiles are panels of 64 columns; each
// wait for tiles fences cp.async's writes for wgmma's reads; QKᵀ is 8
// wgmma m64n64k16 (one per 16 columns of D, K-major K: 16-byte leading
// offset, 1024-byte stride, 128-byte swizzle), P·V 4 wgmma m64n128k16
// (N-major V: panels 8192 bytes apart), each batch fenced, committed and
// waited for; no ldmatrix.
// WGMMA-LABEL: func.func @f16_d128
// WGMMA: dynamic_shared_memory_size %c32768_i32
// WGMMA: %[[KS:.*]] = memref.view {{.*}} to memref<2x64x64xf16, #gpu.address_space<workgroup>>
// WGMMA: %[[VS:.*]] = memref.view {{.*}}[%c16384][] {{.*}} to memref<2x64x64xf16, #gpu.address_space<workgroup>>
// WGMMA-NOT: nvgpu.ldmatrix
// WGMMA: nvgpu.device_async_copy {{.*}}, %[[KS]][
// WGMMA: scf.for
// WGMMA: nvvm.cp.async.wait.group 0
// WGMMA-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// WGMMA-NEXT: gpu.barrier
// WGMMA: memref.extract_aligned_pointer_as_index %[[KS]]
// WGMMA-COUNT-8: arith.constant 4611686293305360384 : i64
// WGMMA: nvvm.wgmma.fence.aligned
// WGMMA-COUNT-8: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {$0, {{.*}}, $31}, {$64, $65, $66, $67}, $68, p, 1, 1, 0;
// WGMMA: nvvm.wgmma.commit.group.sync.aligned
// WGMMA-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// WGMMA: math.exp2
// WGMMA: nvvm.fence.proxy
// WGMMA: memref.extract_aligned_pointer_as_index %[[VS]]
// WGMMA-COUNT-4: arith.constant 4611686293338849280 : i64
// WGMMA: nvvm.wgmma.fence.aligned
// WGMMA-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {$0, {{.*}}, $63}, {$128, $129, $130, $131}, $132, p, 1, 1, 1;
// WGMMA: nvvm.wgmma.commit.group.sync.aligned
// WGMMA-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// WGMMA-NOT: nvgpu.ldmatrix
// WGMMA: return
// With 128 keys a tile (FlashAttention-3's at head dim 128): [2, 128, 64]
// panels, QKᵀ as 8 wgmma m64n128k16 over D, P·V as 8 over the keys (the
// descriptors' panels 16 KiB apart).
// KEYS128-LABEL: func.func @f16_d128
// KEYS128: dynamic_shared_memory_size %c65536_i32
// KEYS128: %[[KS:.*]] = memref.view {{.*}} to memref<2x128x64xf16, #gpu.address_space<workgroup>>
// KEYS128: %[[VS:.*]] = memref.view {{.*}}[%c32768][] {{.*}} to memref<2x128x64xf16, #gpu.address_space<workgroup>>
// KEYS128: scf.for
// KEYS128: memref.extract_aligned_pointer_as_index %[[KS]]
// KEYS128: nvvm.wgmma.fence.aligned
// KEYS128-COUNT-8: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {$0, {{.*}}, $63}, {$128, $129, $130, $131}, $132, p, 1, 1, 0;
// KEYS128: nvvm.wgmma.commit.group.sync.aligned
// KEYS128: math.exp2
// KEYS128: memref.extract_aligned_pointer_as_index %[[VS]]
// KEYS128-COUNT-8: arith.constant 4611686293372403712 : i64
// KEYS128: nvvm.wgmma.fence.aligned
// KEYS128-COUNT-8: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {$0, {{.*}}, $63}, {$128, $129, $130, $131}, $132, p, 1, 1, 1;
// KEYS128: nvvm.wgmma.commit.group.sync.aligned
// KEYS128: return
// With warpgroup-overlap, K and V are double-buffered (64 KiB); V buffer 1
// is zeroed with the first K copy; per tile, V of the tile and K of the
// next go to the buffers of the tile before; QKᵀ (buffer n mod 2) and the
// last tile's P·V (the other buffer, from the P in the loop state) are two
// groups with every descriptor computed before the fence; the scores are
// waited for (group 1), the softmax runs, then the P·V (group 0), after
// which P is packed and O rescaled; the last tile's P·V follows the loop.
// With TMA loads too: four barrier objects (K and V buffers 0 and 1)
// behind the 64 KiB of tiles; V buffer 1 zeroed and fenced before thread 0
// loads the first K (16384 bytes: two boxes, a panel each). Per tile,
// after a block barrier, thread 0 loads V into this tile's buffer and the
// next K into the other; every thread waits for this tile's K and, past
// the first tile, the last tile's V; after the loop, for the last V.
// With kv lengths, after the loop the last tile's V, once it has landed,
// has its rows past the length zeroed in its buffer, fenced, before its
// P·V.
// Warp-specialized with the overlap: a zeroed tile after the K and V
// buffers (8 KiB at D = 64), zeroed by each tile warpgroup before its loop
// and published by its own barrier; per tile, it waits for K and (past the
// first tile) the last tile's V, reads the zeroed tile in place of the
// last V at the first tile, frees K once its scores are done (group 1) and
// the last V once its P·V is (group 0, past the first tile); after the
// loop, the last V.
// OVERLAP-WS-LABEL: func.func @kernel
// OVERLAP-WS: gpu.launch {{.*}} in (%{{.*}} = %c384, {{.*}} dynamic_shared_memory_size %c57408_i32
// OVERLAP-WS: %[[ZEROS:.*]] = memref.view {{.*}}[%c32768][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<1x64x64xbf16, #gpu.address_space<workgroup>>
// OVERLAP-WS: memref.view {{.*}}[%c57344][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<8xi64, #gpu.address_space<workgroup>>
// OVERLAP-WS: nvvm.setmaxregister decrease 40
// OVERLAP-WS: nvvm.setmaxregister increase 232
// OVERLAP-WS: vector.store %{{.*}}, %[[ZEROS]]
// OVERLAP-WS: nvvm.fence.proxy
// OVERLAP-WS: nvvm.barrier id = %{{.*}} number_of_threads = %c128_i32
// OVERLAP-WS: %[[ZEROADDR:.*]] = memref.extract_aligned_pointer_as_index %[[ZEROS]]
// OVERLAP-WS-NOT: gpu.barrier
// OVERLAP-WS: scf.for
// OVERLAP-WS: nvvm.mbarrier.try_wait
// OVERLAP-WS: scf.if
// OVERLAP-WS: nvvm.mbarrier.try_wait
// OVERLAP-WS: arith.select %{{.*}}, %[[ZEROADDR]], %{{.*}} : index
// OVERLAP-WS: nvvm.wgmma.wait.group.sync.aligned 1
// OVERLAP-WS: nvvm.mbarrier.arrive
// OVERLAP-WS: nvvm.wgmma.wait.group.sync.aligned 0
// OVERLAP-WS: scf.if
// OVERLAP-WS: nvvm.mbarrier.arrive
// OVERLAP-WS-NOT: gpu.barrier
// OVERLAP-WS: nvvm.mbarrier.try_wait
// OVERLAP-WS-NOT: gpu.barrier
// OVERLAP-WS: nvvm.wgmma.wait.group.sync.aligned 0
// OVERLAP-WS-NOT: gpu.barrier
// OVERLAP-WS: return
// Ping-pong: tile warpgroup 0 arrives at its own turn barrier (id 3) before
// the loop; per tile, each waits for its turn (3 + its index, 256 threads)
// before issuing its two groups and passes the turn (4 - its index) after
// them, before waiting for the scores.
// PINGPONG-LABEL: func.func @kernel
// PINGPONG: nvvm.setmaxregister increase 232
// PINGPONG: scf.if
// PINGPONG-NEXT: %[[ZERO:.*]] = arith.constant 0 : i32
// PINGPONG-NEXT: %[[THREE:.*]] = arith.constant 3 : i32
// PINGPONG-NEXT: %[[FIRST:.*]] = arith.addi %[[ZERO]], %[[THREE]] : i32
// PINGPONG-NEXT: %[[ALL:.*]] = arith.constant 256 : i32
// PINGPONG-NEXT: nvvm.barrier.arrive id = %[[FIRST]] number_of_threads = %[[ALL]]
// PINGPONG: scf.for
// PINGPONG: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// PINGPONG-NEXT: nvvm.wgmma.fence.aligned
// PINGPONG: nvvm.wgmma.commit.group.sync.aligned
// PINGPONG: nvvm.wgmma.commit.group.sync.aligned
// PINGPONG: nvvm.barrier.arrive id = %{{.*}} number_of_threads = %{{.*}}
// PINGPONG-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// The staged results: the tile warpgroups meet at barrier 5 of their 256
// threads (not the producer's) before and after staging.
// PINGPONG: %[[TILES:.*]] = arith.constant 5 : i32
// PINGPONG-NEXT: %[[THREADS:.*]] = arith.constant 256 : i32
// PINGPONG-NEXT: nvvm.barrier id = %[[TILES]] number_of_threads = %[[THREADS]]
// PINGPONG: vector.store {{.*}} : memref<128x64xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
// PINGPONG: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// PINGPONG: vector.store {{.*}} {alignment = 16 : i64} : memref<?x8x?x64xbf16>, vector<8xbf16>
// PINGPONG: return
// With 128 keys a tile: boxes, buffers and the zeroed tile of 128 rows, and
// 16 KiB a load.
// PINGPONG128-LABEL: func.func @kernel
// PINGPONG128: nvgpu.tma.create.descriptor {{.*}} -> <tensor = memref<1x1x128x64xbf16, #gpu.address_space<workgroup>>
// PINGPONG128: nvgpu.tma.create.descriptor {{.*}} -> <tensor = memref<1x1x128x64xbf16, #gpu.address_space<workgroup>>
// PINGPONG128: gpu.launch {{.*}} in (%{{.*}} = %c384, {{.*}} dynamic_shared_memory_size %c98368_i32
// PINGPONG128: memref.view {{.*}}[%c0{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x1x128x64xbf16, #gpu.address_space<workgroup>>
// PINGPONG128: memref.view {{.*}}[%c32768][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x1x128x64xbf16, #gpu.address_space<workgroup>>
// PINGPONG128: memref.view {{.*}}[%c65536][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<1x128x64xbf16, #gpu.address_space<workgroup>>
// PINGPONG128: memref.view {{.*}}[%c98304][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<8xi64, #gpu.address_space<workgroup>>
// PINGPONG128: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c16384_i32
// PINGPONG128: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c16384_i32
// PINGPONG128-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// PINGPONG128: nvvm.wgmma.commit.group.sync.aligned
// PINGPONG128-COUNT-8: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// PINGPONG128: nvvm.wgmma.commit.group.sync.aligned
// PINGPONG128: return
// OVERLAP-TMA-LABEL: func.func @kernel
// OVERLAP-TMA: scf.for
// OVERLAP-TMA: arith.ceildivui
// OVERLAP-TMA: %[[LAST:.*]] = arith.subi %{{.*}}, %c1
// OVERLAP-TMA: %[[BUFFER:.*]] = arith.remui %[[LAST]], %c2
// OVERLAP-TMA: nvvm.mbarrier.try_wait
// OVERLAP-TMA: scf.if
// OVERLAP-TMA: vector.store %{{.*}}, %{{.*}}[%[[BUFFER]], {{.*}}] : memref<2x1x64x64xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// OVERLAP-TMA: vector.store %{{.*}}, %{{.*}}[%[[BUFFER]], {{.*}}] : memref<2x1x64x64xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// OVERLAP-TMA: nvvm.fence.proxy
// OVERLAP-TMA-NEXT: gpu.barrier
// OVERLAP-TMA: nvvm.wgmma.wait.group.sync.aligned 0
// OVERLAP-TMA-LABEL: func.func @f16_d128
// OVERLAP-TMA: nvgpu.tma.create.descriptor
// OVERLAP-TMA: nvgpu.tma.create.descriptor
// OVERLAP-TMA: dynamic_shared_memory_size %c98336_i32
// OVERLAP-TMA: memref.view {{.*}}[%c98304][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4xi64, #gpu.address_space<workgroup>>
// OVERLAP-TMA-COUNT-4: nvvm.mbarrier.init
// OVERLAP-TMA: gpu.barrier
// OVERLAP-TMA-COUNT-4: vector.store
// OVERLAP-TMA-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// OVERLAP-TMA: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c16384_i32
// OVERLAP-TMA-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global
// OVERLAP-TMA: scf.for
// OVERLAP-TMA-NOT: nvgpu.device_async_copy
// OVERLAP-TMA: gpu.barrier
// OVERLAP-TMA: nvvm.mbarrier.arrive.expect_tx
// OVERLAP-TMA-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global
// OVERLAP-TMA: scf.if
// OVERLAP-TMA: nvvm.mbarrier.arrive.expect_tx
// OVERLAP-TMA-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global
// OVERLAP-TMA: nvvm.mbarrier.try_wait
// OVERLAP-TMA: arith.cmpi ugt
// OVERLAP-TMA-NEXT: scf.if
// OVERLAP-TMA: nvvm.mbarrier.try_wait
// OVERLAP-TMA: nvvm.wgmma.wait.group.sync.aligned 1
// OVERLAP-TMA: nvvm.wgmma.wait.group.sync.aligned 0
// OVERLAP-TMA: nvvm.mbarrier.try_wait
// OVERLAP-TMA: nvvm.wgmma.wait.group.sync.aligned 0
// OVERLAP-TMA-NOT: nvgpu.device_async_copy
// OVERLAP-TMA: return
// OVERLAP-LABEL: func.func @f16_d128
// OVERLAP: dynamic_shared_memory_size %c65536_i32
// OVERLAP: %[[KS:.*]] = memref.view {{.*}}[%c0{{.*}}][] {{.*}} to memref<2x2x64x64xf16, #gpu.address_space<workgroup>>
// OVERLAP: %[[VS:.*]] = memref.view {{.*}}[%c32768][] {{.*}} to memref<2x2x64x64xf16, #gpu.address_space<workgroup>>
// OVERLAP: scf.if
// OVERLAP-COUNT-4: vector.store %{{.*}}, %[[VS]][%c1{{.*}}] : memref<2x2x64x64xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// OVERLAP: nvgpu.device_async_copy {{.*}}, %[[KS]][%c0
// OVERLAP: scf.for {{.*}} iter_args({{.*}}%c0_i32{{.*}}) -> ({{.*}}f32, i32{{.*}}) {
// OVERLAP: nvvm.fence.proxy
// OVERLAP: nvgpu.device_async_copy {{.*}}, %[[VS]][
// OVERLAP: nvgpu.device_async_copy {{.*}}, %[[KS]][
// OVERLAP-COUNT-8: arith.constant 4611686293305360384 : i64
// OVERLAP-COUNT-4: arith.constant 4611686293338849280 : i64
// OVERLAP: nvvm.wgmma.fence.aligned
// OVERLAP-COUNT-8: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// OVERLAP: nvvm.wgmma.commit.group.sync.aligned
// OVERLAP-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{.*}}, p, 1, 1, 1;
// OVERLAP: nvvm.wgmma.commit.group.sync.aligned
// OVERLAP-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// OVERLAP: math.exp2
// OVERLAP: nvvm.wgmma.wait.group.sync.aligned 0
// OVERLAP: arith.truncf {{.*}} : vector<2xf32> to vector<2xf16>
// OVERLAP: arith.mulf
// OVERLAP: scf.yield
// OVERLAP-NEXT: }
// OVERLAP-NEXT: arith.cmpi slt
// OVERLAP-NEXT: %{{.*}}:64 = scf.if
// OVERLAP-NEXT: nvvm.cp.async.wait.group 0
// OVERLAP-NEXT: nvvm.fence.proxy
// OVERLAP: arith.ceildivui
// OVERLAP: nvvm.wgmma.fence.aligned
// OVERLAP-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// OVERLAP: nvvm.wgmma.wait.group.sync.aligned 0
// OVERLAP: return
func.func @f16_d128(%q: memref<1x4x100x128xf16>, %k: memref<1x4x100x128xf16>,
    %v: memref<1x4x100x128xf16>, %o: memref<1x4x100x128xf16>) {
  tfm.buffer_attention %q, %k, %v into %o
      : memref<1x4x100x128xf16>, memref<1x4x100x128xf16>, memref<1x4x100x128xf16>
        into memref<1x4x100x128xf16>
  return
}

// -----

func.func @f32(%q: memref<1x4x100x64xf32>, %o: memref<1x4x100x64xf32>) {
  // expected-error @+1 {{'tfm.buffer_attention' op has no GPU kernel for these types: it takes bf16 or f16 with head dim 64 or 128}}
  tfm.buffer_attention %q, %q, %q into %o
      : memref<1x4x100x64xf32>, memref<1x4x100x64xf32>, memref<1x4x100x64xf32>
        into memref<1x4x100x64xf32>
  return
}

// -----

// A result copied into another buffer right after the kernel (an entry
// point's output) is written there directly: no allocation, no copy.
// CHECK-LABEL: func.func @into_output
// CHECK-SAME: %[[OUT:[^:]*]]: memref<?x4x?x64xbf16>)
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch
// CHECK: vector.store {{.*}}, %[[OUT]]
// CHECK-NOT: memref.copy
// CHECK-NOT: memref.dealloc
func.func @into_output(%q: memref<?x4x?x64xbf16>, %out: memref<?x4x?x64xbf16>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %b = memref.dim %q, %c0 : memref<?x4x?x64xbf16>
  %s = memref.dim %q, %c2 : memref<?x4x?x64xbf16>
  %alloc = memref.alloc(%b, %s) : memref<?x4x?x64xbf16>
  tfm.buffer_attention %q, %q, %q into %alloc
      : memref<?x4x?x64xbf16>, memref<?x4x?x64xbf16>, memref<?x4x?x64xbf16>
        into memref<?x4x?x64xbf16>
  memref.copy %alloc, %out : memref<?x4x?x64xbf16> to memref<?x4x?x64xbf16>
  memref.dealloc %alloc : memref<?x4x?x64xbf16>
  return
}

// -----

// A result read by something else keeps its buffer.
// CHECK-LABEL: func.func @result_read_again
// CHECK: memref.alloc
// CHECK: gpu.launch
// CHECK: memref.copy
func.func @result_read_again(%q: memref<1x4x8x64xbf16>, %out: memref<1x4x8x64xbf16>) -> f32 {
  %c0 = arith.constant 0 : index
  %alloc = memref.alloc() : memref<1x4x8x64xbf16>
  tfm.buffer_attention %q, %q, %q into %alloc
      : memref<1x4x8x64xbf16>, memref<1x4x8x64xbf16>, memref<1x4x8x64xbf16>
        into memref<1x4x8x64xbf16>
  memref.copy %alloc, %out : memref<1x4x8x64xbf16> to memref<1x4x8x64xbf16>
  %x = memref.load %alloc[%c0, %c0, %c0, %c0] : memref<1x4x8x64xbf16>
  %y = arith.extf %x : bf16 to f32
  return %y : f32
}

// -----

// Decode (Sq = 1, 4 query heads a KV head): the usual kernel by default;
// with split-kv, one warp holds the 4 queries of a KV head's group, the
// blocks go over (key ranges, KV heads, batch) with enough ranges for
// about 512 blocks of at least 128 keys, each range writes its f32 rows
// and their log2 sums, and a block of 64 threads per (query, head, batch)
// combines them (none when there is one range: the first kernel then
// stores the result itself).
// CHECK-LABEL: func.func @decode
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch {{.*}} threads(%{{.*}}) in (%{{.*}} = %c256
// CHECK-NOT: gpu.launch
// CHECK: return
// SPLIT-LABEL: func.func @decode
// SPLIT-SAME: (%[[Q:.*]]: memref<?x8x1x64xbf16>, %[[K:.*]]: memref<?x2x?x64xbf16>, %{{.*}}: memref<?x2x?x64xbf16>, %[[L:.*]]: memref<?xi32>, %[[O:.*]]: memref<?x8x1x64xbf16>)
// SPLIT-DAG: %[[B:.*]] = memref.dim %[[Q]], %c0
// SPLIT-DAG: %[[S:.*]] = memref.dim %[[K]], %c2
// SPLIT: %[[BLOCKS:.*]] = arith.maxui
// SPLIT: %[[MOST:.*]] = arith.ceildivui %[[S]], %c128
// SPLIT: %[[WANTED:.*]] = arith.ceildivui %c512{{.*}}, %[[BLOCKS]]
// SPLIT: %[[FEWER:.*]] = arith.minui %[[MOST]], %[[WANTED]]
// SPLIT: %[[RANGES:.*]] = arith.maxui %c1{{.*}}, %[[FEWER]]
// SPLIT: %[[PARTIAL:.*]] = memref.alloc(%[[RANGES]], %[[B]]) : memref<?x?x8x1x64xf32>
// SPLIT: %[[LSE:.*]] = memref.alloc(%[[RANGES]], %[[B]]) : memref<?x?x8x1xf32>
// SPLIT: gpu.launch blocks(%[[X:.*]], %{{.*}}, %[[Z:.*]]) in (%[[GX:.*]] = %[[RANGES]], %{{.*}} = %c2{{.*}}, %{{.*}} = %[[B]]) threads(%{{.*}}) in (%{{.*}} = %c32{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) dynamic_shared_memory_size %c16384_i32
// SPLIT:   memref.load %[[L]][%[[Z]]]
// SPLIT:   arith.ceildivui %{{.*}}, %[[GX]]
// SPLIT-COUNT-16: vector.load %[[Q]]
// SPLIT:   scf.for
// SPLIT:     nvvm.mma.sync
// SPLIT:   arith.cmpi eq, %[[GX]], %c1
// SPLIT:   vector.store {{.*}}, %[[O]]{{.*}} : memref<?x8x1x64xbf16>, vector<2xbf16>
// SPLIT:   } else {
// SPLIT:   vector.store {{.*}}, %[[PARTIAL]][%[[X]], %[[Z]], {{.*}}] : memref<?x?x8x1x64xf32>, vector<2xf32>
// SPLIT:   math.log2
// SPLIT:   memref.store {{.*}}, %[[LSE]][%[[X]], %[[Z]], {{.*}}] : memref<?x?x8x1xf32>
// SPLIT: %[[SEVERAL:.*]] = arith.cmpi ugt, %[[RANGES]], %c1
// SPLIT: %[[QUERIES:.*]] = arith.select %[[SEVERAL]], %c1{{.*}}, %c0
// SPLIT: gpu.launch blocks({{.*}}) in (%{{.*}} = %[[QUERIES]], %{{.*}} = %c8{{.*}}, %{{.*}}) threads(%{{.*}}) in (%{{.*}} = %c64
// SPLIT:   scf.for {{.*}} to %[[RANGES]]
// SPLIT:     memref.load %[[LSE]]
// SPLIT:     arith.maximumf
// SPLIT:   scf.for {{.*}} to %[[RANGES]]
// SPLIT:     math.exp2
// SPLIT:     memref.load %[[PARTIAL]]
// SPLIT:   arith.divf
// SPLIT:   arith.truncf {{.*}} : f32 to bf16
// SPLIT:   memref.store {{.*}}, %[[O]]
// SPLIT: memref.dealloc %[[PARTIAL]]
// SPLIT: memref.dealloc %[[LSE]]
// Decode's packed split keeps mma.sync under warpgroup-mma.
// WGSPLIT-LABEL: func.func @decode
// WGSPLIT: gpu.launch {{.*}} threads(%{{.*}}) in (%{{.*}} = %c32
// WGSPLIT-NOT: wgmma
// WGSPLIT: nvvm.mma.sync
// WGSPLIT-NOT: wgmma
// WGSPLIT: return
func.func @decode(%q: memref<?x8x1x64xbf16>, %k: memref<?x2x?x64xbf16>,
    %v: memref<?x2x?x64xbf16>, %l: memref<?xi32>, %o: memref<?x8x1x64xbf16>) {
  tfm.buffer_attention %q, %k, %v kv_lengths(%l : memref<?xi32>) into %o
      : memref<?x8x1x64xbf16>, memref<?x2x?x64xbf16>, memref<?x2x?x64xbf16>
        into memref<?x8x1x64xbf16>
  return
}

// -----

// 5 queries of 4 heads a KV head are 20 rows, more than a warp's 16: not
// packed.
// SPLIT-LABEL: func.func @rows_past_a_warp
// SPLIT-NOT: memref.alloc
// SPLIT: gpu.launch {{.*}} threads(%{{.*}}) in (%{{.*}} = %c256
// SPLIT-NOT: gpu.launch
func.func @rows_past_a_warp(%q: memref<1x8x5x128xbf16>, %k: memref<1x2x300x128xbf16>,
    %o: memref<1x8x5x128xbf16>) {
  tfm.buffer_attention %q, %k, %k into %o {mask = #tfm.mask<causal>}
      : memref<1x8x5x128xbf16>, memref<1x2x300x128xbf16>, memref<1x2x300x128xbf16>
        into memref<1x8x5x128xbf16>
  return
}

// WG32: tfm-gpu-lower-buffer-attention: warpgroup-mma takes warp-rows 16
// OVERLAP-ALONE: tfm-gpu-lower-buffer-attention: warpgroup-overlap takes warpgroup-mma

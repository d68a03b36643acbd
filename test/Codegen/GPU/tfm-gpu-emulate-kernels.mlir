// RUN: tfm-opt %s --split-input-file --tfm-gpu-emulate-kernels | FileCheck %s
// RUN: tfm-opt %s --split-input-file --tfm-gpu-emulation-pipeline | FileCheck %s --check-prefix=ENTRY

// The host code goes; each kernel becomes a func.func of the same name and
// arguments, its ids, barrier and shuffles calls of the emulator, its
// dynamic shared memory the emulator's window, without memory spaces.
// CHECK-NOT: func.func @host
// CHECK-NOT: gpu.module
// CHECK-DAG: memref.global "public" @tfm_emu_shared : memref<262144xi8> = uninitialized {alignment = 262144 : i64}
// CHECK-DAG: func.func private @tfm_emu_id(i32) -> i64
// CHECK-DAG: func.func private @tfm_emu_barrier()
// CHECK-DAG: func.func private @tfm_emu_shuffle(i32, i32, i32, i32) -> i64
// CHECK-LABEL: func.func @sum(%{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>) attributes {tfm.emulated_kernel}
// CHECK: %[[KIND:.*]] = arith.constant 0 : i32
// CHECK: %[[ID:.*]] = call @tfm_emu_id(%[[KIND]]) : (i32) -> i64
// CHECK: %[[TID:.*]] = arith.index_cast %[[ID]] : i64 to index
// CHECK: %[[BLOCK:.*]] = arith.constant 3 : i32
// CHECK: call @tfm_emu_id(%[[BLOCK]])
// CHECK: %[[WINDOW:.*]] = memref.get_global @tfm_emu_shared : memref<262144xi8>
// CHECK: %[[SHARED:.*]] = memref.cast %[[WINDOW]] : memref<262144xi8> to memref<?xi8>
// CHECK: memref.view %[[SHARED]][%{{.*}}][] : memref<?xi8> to memref<256xf32>
// CHECK: %[[BITS:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK: %[[MODE:.*]] = arith.constant 0 : i32
// CHECK: %[[PAIR:.*]] = call @tfm_emu_shuffle(%[[BITS]], %{{.*}}, %{{.*}}, %[[MODE]])
// CHECK: %[[LOW:.*]] = arith.trunci %[[PAIR]] : i64 to i32
// CHECK: arith.bitcast %[[LOW]] : i32 to f32
// CHECK: call @tfm_emu_barrier() : () -> ()
// CHECK: return
// The entry point: each of the kernel's 10 arguments (two memrefs' fields)
// through its pointer in cuLaunchKernel's parameters.
// ENTRY: llvm.func @sum_emulated(%[[PARAMS:.*]]: !llvm.ptr)
// ENTRY: %[[P0:.*]] = llvm.load %[[PARAMS]] : !llvm.ptr -> !llvm.ptr
// ENTRY: %[[A0:.*]] = llvm.load %[[P0]] : !llvm.ptr -> !llvm.ptr
// ENTRY: %[[S9:.*]] = llvm.getelementptr %[[PARAMS]][9] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// ENTRY: %[[P9:.*]] = llvm.load %[[S9]] : !llvm.ptr -> !llvm.ptr
// ENTRY: %[[A9:.*]] = llvm.load %[[P9]] : !llvm.ptr -> i64
// ENTRY: llvm.call @sum(%[[A0]], {{.*}}, %[[A9]]) : (!llvm.ptr, !llvm.ptr, i64, i64, i64, !llvm.ptr, !llvm.ptr, i64, i64, i64) -> ()
module attributes {gpu.container_module} {
  func.func @host(%a: memref<?xf32>, %b: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@sum blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<?xf32>, %b : memref<?xf32>)
    return
  }
  gpu.module @kernels {
    gpu.func @sum(%in: memref<?xf32>, %out: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c16 = arith.constant 16 : i32
      %c32 = arith.constant 32 : i32
      %t = gpu.thread_id x
      %b = gpu.block_id x
      %i = arith.addi %t, %b : index
      %shared = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %tile = memref.view %shared[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<256xf32, #gpu.address_space<workgroup>>
      %v = memref.load %in[%i] : memref<?xf32>
      %s, %valid = gpu.shuffle xor %v, %c16, %c32 : f32
      memref.store %s, %tile[%t] : memref<256xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %w = memref.load %tile[%c0] : memref<256xf32, #gpu.address_space<workgroup>>
      memref.store %w, %out[%i] : memref<?xf32>
      gpu.return
    }
  }
}

// -----

// Tensor-core operations: ldmatrix and mma.sync through scratch memory at
// the function's entry; cp.async, its commit and its wait as calls.
// CHECK-LABEL: func.func @tiles
// CHECK: %[[MMA_OUT:.*]] = llvm.alloca %{{.*}} x i8 {alignment = 16 : i64}
// CHECK: %[[LD_OUT:.*]] = llvm.alloca %{{.*}} x i8 {alignment = 16 : i64}
// CHECK: call @tfm_emu_cp_async(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, i64, i64) -> ()
// CHECK: call @tfm_emu_cp_async_commit() : () -> ()
// CHECK: %[[NEWEST:.*]] = arith.constant 0 : i32
// CHECK: call @tfm_emu_cp_async_wait(%[[NEWEST]]) : (i32) -> ()
// CHECK: call @tfm_emu_ldmatrix(%{{.*}}, %{{.*}}, %{{.*}}, %[[LD_OUT]])
// CHECK: %[[WORDS:.*]] = llvm.load %[[LD_OUT]] : !llvm.ptr -> vector<4xi32>
// CHECK: %[[HALVES:.*]] = vector.bitcast %[[WORDS]] : vector<4xi32> to vector<8xbf16>
// CHECK: vector.shape_cast %[[HALVES]] : vector<8xbf16> to vector<4x2xbf16>
// CHECK: call @tfm_emu_mma({{.*}}, %[[MMA_OUT]]) : (i32, i32, i32, i32, i32, i32, f32, f32, f32, f32, i32, !llvm.ptr) -> ()
// CHECK: llvm.load %[[MMA_OUT]] : !llvm.ptr -> !llvm.struct<(f32, f32, f32, f32)>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @tiles(%a: memref<?x64xbf16>, %i: i32, %c: f32) kernel {
      %c0 = arith.constant 0 : index
      %shared = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %tile = memref.view %shared[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x64xbf16, #gpu.address_space<workgroup>>
      %token = nvgpu.device_async_copy %a[%c0, %c0], %tile[%c0, %c0], 8 {bypassL1} : memref<?x64xbf16> to memref<16x64xbf16, #gpu.address_space<workgroup>>
      nvvm.cp.async.commit.group
      nvvm.cp.async.wait.group 0
      %frag = nvgpu.ldmatrix %tile[%c0, %c0] {numTiles = 4 : i32, transpose = false} : memref<16x64xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
      %d = nvvm.mma.sync A[%i, %i, %i, %i] B[%i, %i] C[%c, %c, %c, %c] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
      gpu.return
    }
  }
}


// -----

// sm_90a: wgmma (the NVVM op, from shared memory; the inline PTX, A from
// registers, B transposed) through the accumulators in scratch memory;
// barrier objects, a TMA load and named barriers as calls; fences, commits,
// waits and register moves dropped; pointers without address spaces.
// CHECK-LABEL: func.func @hopper
// CHECK-DAG: %[[INLINE_REGS:.*]] = llvm.alloca %{{.*}} x i8 {alignment = 16 : i64}
// CHECK-DAG: %[[INLINE_ACC:.*]] = llvm.alloca %{{.*}} x i8 {alignment = 16 : i64}
// CHECK-DAG: %[[ACC:.*]] = llvm.alloca %{{.*}} x i8 {alignment = 16 : i64}
// CHECK-NOT: nvvm.
// CHECK: call @tfm_emu_mbarrier_init(%{{.*}}, %{{.*}}) : (!llvm.ptr, i32) -> ()
// CHECK: call @tfm_emu_mbarrier_arrive(%{{.*}}, %{{.*}}) : (!llvm.ptr, i32) -> ()
// CHECK: call @tfm_emu_tma_load(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, i32, i32, i32, i32, i32) -> ()
// CHECK: %[[DONE:.*]] = call @tfm_emu_mbarrier_try_wait(%{{.*}}, %{{.*}}) : (!llvm.ptr, i32) -> i32
// CHECK: arith.cmpi ne, %[[DONE]], %{{.*}} : i32
// CHECK: %[[NO_REGS:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: %[[FLAGS:.*]] = arith.constant 0 : i32
// CHECK: call @tfm_emu_wgmma(%[[ACC]], %{{.*}}, %[[NO_REGS]], %{{.*}}, %{{.*}}, %[[FLAGS]]) : (!llvm.ptr, i32, !llvm.ptr, i64, i64, i32) -> ()
// CHECK: llvm.load %[[ACC]] : !llvm.ptr -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
// CHECK: %[[TRANSPOSED:.*]] = arith.constant 4 : i32
// CHECK: call @tfm_emu_wgmma(%[[INLINE_ACC]], %{{.*}}, %[[INLINE_REGS]], %{{.*}}, %{{.*}}, %[[TRANSPOSED]])
// CHECK: %[[WAIT:.*]] = arith.constant 1 : i32
// CHECK: call @tfm_emu_named_barrier(%{{.*}}, %{{.*}}, %[[WAIT]]) : (i32, i32, i32) -> ()
// CHECK: %[[NO_WAIT:.*]] = arith.constant 0 : i32
// CHECK: call @tfm_emu_named_barrier(%{{.*}}, %{{.*}}, %[[NO_WAIT]]) : (i32, i32, i32) -> ()
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @hopper(%map: !llvm.ptr, %desc: i64, %acc: !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>, %r: i32, %x: i32) kernel {
      %c1 = arith.constant 1 : i32
      %c128 = arith.constant 128 : i32
      %c4096 = arith.constant 4096 : i32
      %address = arith.constant 1024 : i64
      %bar = llvm.inttoptr %address : i64 to !llvm.ptr<3>
      %tile = llvm.inttoptr %address : i64 to !llvm.ptr<3>
      %dst = llvm.addrspacecast %tile : !llvm.ptr<3> to !llvm.ptr<7>
      nvvm.mbarrier.init %bar, %c1 : !llvm.ptr<3>, i32
      nvvm.fence.mbarrier.init
      nvvm.mbarrier.arrive.expect_tx %bar, %c4096 : !llvm.ptr<3>, i32
      nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %map, %bar, box[%x, %x] : !llvm.ptr<7>, !llvm.ptr
      %done = nvvm.mbarrier.try_wait %bar, %x, %c1 : !llvm.ptr<3>, i32, i32 -> i1
      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
      nvvm.setmaxregister increase 232
      nvvm.wgmma.fence.aligned
      %d = nvvm.wgmma.mma_async %desc, %desc, %acc, <m = 64, n = 16, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      nvvm.wgmma.commit.group.sync.aligned
      nvvm.wgmma.wait.group.sync.aligned 0
      %f = llvm.extractvalue %d[0] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      %e = llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;\0Asetp.ne.b32 p, 1, 0;\0Awgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {$0, $1, $2, $3}, {$8, $9, $10, $11}, $12, p, 1, 1, 1;\0A}", "=f,=f,=f,=f,0,1,2,3,r,r,r,r,l" %f, %f, %f, %f, %r, %r, %r, %r, %desc : (f32, f32, f32, f32, i32, i32, i32, i32, i64) -> !llvm.struct<(f32, f32, f32, f32)>
      nvvm.barrier id = %c1 number_of_threads = %c128
      nvvm.barrier.arrive id = %c1 number_of_threads = %c128
      gpu.return
    }
  }
}

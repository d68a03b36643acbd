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
// the function's entry, cp.async copied at once (its commits and waits
// dropped).
// CHECK-LABEL: func.func @tiles
// CHECK: %[[MMA_OUT:.*]] = llvm.alloca %{{.*}} x i8 {alignment = 16 : i64}
// CHECK: %[[LD_OUT:.*]] = llvm.alloca %{{.*}} x i8 {alignment = 16 : i64}
// CHECK: call @tfm_emu_copy(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, i64, i64) -> ()
// CHECK-NOT: nvvm.cp.async
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


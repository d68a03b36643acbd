// RUN: tfm-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tfm-free-buffers-early))' | FileCheck %s

// Each buffer is freed right after the last op that uses it or a view of
// it (an op whose regions use it counts), not at the end of the block.
// CHECK-LABEL: func.func @freed_after_last_use
// CHECK: %[[A:.+]] = memref.alloc(%{{.+}}) : memref<?x64xf32>
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[A]] : memref<?x64xf32>)
// CHECK: %[[B:.+]] = memref.alloc(%{{.+}}) : memref<?x64xf32>
// CHECK: scf.forall
// CHECK:   memref.subview %[[A]]
// CHECK: }
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK: memref.copy %[[B]], %{{.+}}
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: return
func.func @freed_after_last_use(%n: index, %out: memref<?x64xf32>) {
  %c = arith.constant 1.0 : f32
  %a = memref.alloc(%n) : memref<?x64xf32>
  linalg.fill ins(%c : f32) outs(%a : memref<?x64xf32>)
  %b = memref.alloc(%n) : memref<?x64xf32>
  scf.forall (%i) in (%n) {
    %row = memref.subview %a[%i, 0] [1, 64] [1, 1] : memref<?x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    %dst = memref.subview %b[%i, 0] [1, 64] [1, 1] : memref<?x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    memref.copy %row, %dst : memref<1x64xf32, strided<[64, 1], offset: ?>> to memref<1x64xf32, strided<[64, 1], offset: ?>>
  }
  memref.copy %b, %out : memref<?x64xf32> to memref<?x64xf32>
  memref.dealloc %a : memref<?x64xf32>
  memref.dealloc %b : memref<?x64xf32>
  return
}

// -----

// A buffer freed in another block than the one that allocates it stays
// where the deallocation pipeline put it.
// CHECK-LABEL: func.func @other_block_stays
// CHECK: scf.if
// CHECK:   memref.dealloc
// CHECK: }
// CHECK-NEXT: return
func.func @other_block_stays(%n: index, %flag: i1) {
  %a = memref.alloc(%n) : memref<?xf32>
  scf.if %flag {
    memref.dealloc %a : memref<?xf32>
  }
  return
}

// -----

// Device buffers before gpu-async-region (the CUDA pipeline): freed after
// their last kernel or copy. A runtime check's flag, read back through a
// copy, is freed before the host reads the copy.
// CHECK-LABEL: func.func @device_buffers
// CHECK: %[[FLAG:.+]] = gpu.alloc () : memref<i1>
// CHECK: gpu.launch_func @kernels::@check {{.*}}args(%[[FLAG]] : memref<i1>)
// CHECK: gpu.memcpy %[[HOST:.+]], %[[FLAG]]
// CHECK-NEXT: gpu.dealloc %[[FLAG]]
// CHECK-NEXT: memref.load %[[HOST]]
// CHECK: %[[A:.+]] = gpu.alloc (%{{.+}}) : memref<?xf32>
// CHECK: gpu.launch_func @kernels::@fill {{.*}}args(%[[A]] : memref<?xf32>)
// CHECK: %[[B:.+]] = gpu.alloc (%{{.+}}) : memref<?xf32>
// CHECK: gpu.launch_func @kernels::@copy {{.*}}args(%[[A]] : memref<?xf32>, %[[B]] : memref<?xf32>)
// CHECK-NEXT: gpu.dealloc %[[A]]
// CHECK: gpu.launch_func @kernels::@copy {{.*}}args(%[[B]] : memref<?xf32>, %{{.+}} : memref<?xf32>)
// CHECK-NEXT: gpu.dealloc %[[B]]
// CHECK-NEXT: return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @check(%flag: memref<i1>) kernel { gpu.return }
    gpu.func @fill(%a: memref<?xf32>) kernel { gpu.return }
    gpu.func @copy(%a: memref<?xf32>, %b: memref<?xf32>) kernel { gpu.return }
  }
  func.func @device_buffers(%n: index, %out: memref<?xf32>) -> i1 {
    %c1 = arith.constant 1 : index
    %flag = gpu.alloc () : memref<i1>
    gpu.launch_func @kernels::@check blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%flag : memref<i1>)
    %host = memref.alloca() : memref<i1>
    gpu.memcpy %host, %flag : memref<i1>, memref<i1>
    %ok = memref.load %host[] : memref<i1>
    %a = gpu.alloc (%n) : memref<?xf32>
    gpu.launch_func @kernels::@fill blocks in (%n, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<?xf32>)
    %b = gpu.alloc (%n) : memref<?xf32>
    gpu.launch_func @kernels::@copy blocks in (%n, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<?xf32>, %b : memref<?xf32>)
    gpu.launch_func @kernels::@copy blocks in (%n, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<?xf32>, %out : memref<?xf32>)
    gpu.dealloc %flag : memref<i1>
    gpu.dealloc %a : memref<?xf32>
    gpu.dealloc %b : memref<?xf32>
    return %ok : i1
  }
}

// -----

// A buffer a kernel reads through a TMA tensor map (cast to a pointer for
// the launch) is freed after that kernel, not after the map's creation.
// CHECK-LABEL: func.func @through_tensor_map
// CHECK: %[[A:.+]] = gpu.alloc () : memref<64x64xbf16>
// CHECK: nvgpu.tma.create.descriptor
// CHECK: gpu.launch_func @kernels::@other
// CHECK: gpu.launch_func @kernels::@load
// CHECK-NEXT: gpu.dealloc %[[A]]
// CHECK-NEXT: gpu.launch_func @kernels::@other
// CHECK-NEXT: return
!map = !nvgpu.tensormap.descriptor<tensor = memref<64x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @other() kernel { gpu.return }
    gpu.func @load(%map: !llvm.ptr) kernel { gpu.return }
  }
  func.func @through_tensor_map() {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %a = gpu.alloc () : memref<64x64xbf16>
    %cast = memref.cast %a : memref<64x64xbf16> to memref<*xbf16>
    %map = nvgpu.tma.create.descriptor %cast box[%c64, %c64] : memref<*xbf16> -> !map
    %pointer = builtin.unrealized_conversion_cast %map : !map to !llvm.ptr
    gpu.launch_func @kernels::@other blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @kernels::@load blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%pointer : !llvm.ptr)
    gpu.launch_func @kernels::@other blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.dealloc %a : memref<64x64xbf16>
    return
  }
}

// -----

// Frees already in a stream (after gpu-async-region) stay: moving one
// would break the chain of tokens.
// CHECK-LABEL: func.func @async_stays
// CHECK: gpu.launch_func async [%{{.+}}] @kernels::@use
// CHECK-NEXT: gpu.launch_func async [%{{.+}}] @kernels::@other
// CHECK-NEXT: gpu.dealloc async
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @use(%a: memref<64xf32>) kernel { gpu.return }
    gpu.func @other() kernel { gpu.return }
  }
  func.func @async_stays() {
    %c1 = arith.constant 1 : index
    %t0 = gpu.wait async
    %a, %t1 = gpu.alloc async [%t0] () : memref<64xf32>
    %t2 = gpu.launch_func async [%t1] @kernels::@use blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<64xf32>)
    %t3 = gpu.launch_func async [%t2] @kernels::@other blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    %t4 = gpu.dealloc async [%t3] %a : memref<64xf32>
    gpu.wait [%t4]
    return
  }
}

// -----

// A transposed view counts as a use of the buffer (LLVM 22's view analysis
// does not follow memref.transpose).
// CHECK-LABEL: func.func @through_transpose
// CHECK: linalg.fill
// CHECK-NEXT: memref.copy %{{.+}}, %{{.+}} : memref<8x4xf32, strided<[1, 8]>>
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: linalg.fill
func.func @through_transpose(%out: memref<8x4xf32, strided<[1, 8]>>, %other: memref<16xf32>) {
  %a = memref.alloc() : memref<4x8xf32>
  %t = memref.transpose %a (d0, d1) -> (d1, d0) : memref<4x8xf32> to memref<8x4xf32, strided<[1, 8]>>
  %c = arith.constant 1.0 : f32
  linalg.fill ins(%c : f32) outs(%a : memref<4x8xf32>)
  memref.copy %t, %out : memref<8x4xf32, strided<[1, 8]>> to memref<8x4xf32, strided<[1, 8]>>
  linalg.fill ins(%c : f32) outs(%other : memref<16xf32>)
  memref.dealloc %a : memref<4x8xf32>
  return
}

// -----

// An address taken as an index (then cast to a pointer for a launch), and
// a cast the analysis does not know (to an LLVM struct, then a field of
// it): what is made of them uses the buffer. A use inside an scf.if
// counts as the if's.
// CHECK-LABEL: func.func @through_addresses
// CHECK: gpu.launch_func @kernels::@take {{.*}}args(%{{.+}} : !llvm.ptr)
// CHECK-NEXT: gpu.dealloc %[[A:.+]] : memref<64xf32>
// CHECK: gpu.launch_func @kernels::@take {{.*}}args(%{{.+}} : !llvm.ptr)
// CHECK-NEXT: gpu.dealloc %[[B:.+]] : memref<64xf32>
// CHECK: scf.if
// CHECK: }
// CHECK-NEXT: gpu.dealloc %[[C:.+]] : memref<64xf32>
// CHECK-NEXT: gpu.launch_func @kernels::@other
// CHECK-NEXT: return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @take(%p: !llvm.ptr) kernel { gpu.return }
    gpu.func @use(%a: memref<64xf32>) kernel { gpu.return }
    gpu.func @other() kernel { gpu.return }
  }
  func.func @through_addresses(%flag: i1) {
    %c1 = arith.constant 1 : index
    %a = gpu.alloc () : memref<64xf32>
    %index = memref.extract_aligned_pointer_as_index %a : memref<64xf32> -> index
    %i64 = arith.index_cast %index : index to i64
    %p = llvm.inttoptr %i64 : i64 to !llvm.ptr
    gpu.launch_func @kernels::@other blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @kernels::@take blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%p : !llvm.ptr)
    %b = gpu.alloc () : memref<64xf32>
    %s = builtin.unrealized_conversion_cast %b : memref<64xf32> to !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
    %q = llvm.extractvalue %s[1] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
    gpu.launch_func @kernels::@other blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @kernels::@take blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%q : !llvm.ptr)
    %c = gpu.alloc () : memref<64xf32>
    scf.if %flag {
      gpu.launch_func @kernels::@use blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%c : memref<64xf32>)
    }
    gpu.launch_func @kernels::@other blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.dealloc %a : memref<64xf32>
    gpu.dealloc %b : memref<64xf32>
    gpu.dealloc %c : memref<64xf32>
    return
  }
}

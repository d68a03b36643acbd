// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-gpu-skip-tensor-map-waits))" | FileCheck %s

// The host wait gpu-async-region put before two tensor maps goes: the
// launch after them goes on from the first launch's token, on its stream.
// CHECK-LABEL: func.func @maps
// CHECK: %[[FIRST:.*]] = gpu.launch_func async [%{{.*}}] @kernels::@fill
// CHECK-NOT: gpu.wait
// CHECK: nvgpu.tma.create.descriptor
// CHECK: nvgpu.tma.create.descriptor
// CHECK-NOT: gpu.wait
// CHECK: %[[SECOND:.*]] = gpu.launch_func async [%[[FIRST]]] @kernels::@read
// CHECK: gpu.wait [%[[SECOND]]]
// CHECK-NEXT: return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @fill(%a: memref<?x64xbf16>) kernel { gpu.return }
    gpu.func @read(%a: memref<?x64xbf16>, %map: !llvm.ptr) kernel { gpu.return }
  }
  func.func @maps(%a: memref<?x64xbf16>, %b: memref<128x64xbf16>) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %0 = gpu.wait async
    %1 = gpu.launch_func async [%0] @kernels::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<?x64xbf16>)
    %cast = memref.cast %a : memref<?x64xbf16> to memref<*xbf16>
    gpu.wait [%1]
    %2 = nvgpu.tma.create.descriptor %cast box[%c64, %c64] : memref<*xbf16> -> <tensor = memref<64x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_256b, oob = zero, interleave = none>
    %3 = builtin.unrealized_conversion_cast %2 : !nvgpu.tensormap.descriptor<tensor = memref<64x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_256b, oob = zero, interleave = none> to !llvm.ptr
    %cast_b = memref.cast %b : memref<128x64xbf16> to memref<*xbf16>
    %4 = nvgpu.tma.create.descriptor %cast_b box[%c64, %c64] : memref<*xbf16> -> <tensor = memref<64x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_256b, oob = zero, interleave = none>
    %5 = gpu.wait async
    %6 = gpu.launch_func async [%5] @kernels::@read blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<?x64xbf16>, %3 : !llvm.ptr)
    gpu.wait [%6]
    return
  }
}

// -----

// A host read of device memory between the wait and the maps keeps it
// (the host needs the stream's result), as does a wait before no map.
// CHECK-LABEL: func.func @host_read
// CHECK: gpu.wait [%{{.*}}]
// CHECK-NEXT: memref.load
// CHECK: %[[NEW:.*]] = gpu.wait async
// CHECK-NEXT: gpu.launch_func async [%[[NEW]]]
// CHECK-LABEL: func.func @no_map
// CHECK: gpu.wait [%{{.*}}]
// CHECK-NEXT: arith.addi
// CHECK-NEXT: %[[NEW2:.*]] = gpu.wait async
// CHECK-NEXT: gpu.launch_func async [%[[NEW2]]]
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @fill(%a: memref<?x64xbf16>) kernel { gpu.return }
  }
  func.func @host_read(%a: memref<?x64xbf16>, %flag: memref<i1>) -> i1 {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %0 = gpu.wait async
    %1 = gpu.launch_func async [%0] @kernels::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<?x64xbf16>)
    %cast = memref.cast %a : memref<?x64xbf16> to memref<*xbf16>
    gpu.wait [%1]
    %read = memref.load %flag[] : memref<i1>
    %2 = nvgpu.tma.create.descriptor %cast box[%c64, %c64] : memref<*xbf16> -> <tensor = memref<64x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_256b, oob = zero, interleave = none>
    %3 = gpu.wait async
    %4 = gpu.launch_func async [%3] @kernels::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<?x64xbf16>)
    gpu.wait [%4]
    return %read : i1
  }
  func.func @no_map(%a: memref<?x64xbf16>, %n: index) -> index {
    %c1 = arith.constant 1 : index
    %0 = gpu.wait async
    %1 = gpu.launch_func async [%0] @kernels::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<?x64xbf16>)
    gpu.wait [%1]
    %sum = arith.addi %n, %c1 : index
    %2 = gpu.wait async
    %3 = gpu.launch_func async [%2] @kernels::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<?x64xbf16>)
    gpu.wait [%3]
    return %sum : index
  }
}

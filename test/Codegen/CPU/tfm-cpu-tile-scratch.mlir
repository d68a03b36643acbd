// RUN: tfm-opt %s -allow-unregistered-dialect --pass-pipeline="builtin.module(func.func(tfm-cpu-promote-tile-buffers))" | FileCheck %s --check-prefix=PROMOTE
// RUN: %mlir_opt %s -allow-unregistered-dialect --load-dialect-plugin=%tfm_libs/TfmPlugin%shlibext \
// RUN:   --load-pass-plugin=%tfm_libs/TfmPlugin%shlibext \
// RUN:   --pass-pipeline="builtin.module(func.func(tfm-cpu-promote-tile-buffers),scf-forall-to-parallel,convert-scf-to-openmp,tfm-cpu-hoist-thread-scratch)" \
// RUN:   | FileCheck %s --check-prefix=HOIST

// A fixed-size buffer of a parallel tile moves to the stack; a large one, a
// dynamic one and one in a sequential loop stay on the heap.
// PROMOTE-LABEL: func.func @tile_scratch
// PROMOTE:         scf.forall
// PROMOTE-NEXT:      memref.alloca() {alignment = 64 : i64} : memref<256x64xf32>
// PROMOTE-NEXT:      memref.alloc() : memref<1024x1024xf32>
// PROMOTE-NEXT:      memref.alloc(%{{.+}}) : memref<?xf32>
// PROMOTE:           scf.for
// PROMOTE-NEXT:        memref.alloc() : memref<16xf32>

// Once OpenMP owns the loop, each thread allocates the stack buffer once,
// before the worksharing loop.
// HOIST-LABEL: func.func @tile_scratch
// HOIST:         omp.parallel {
// HOIST-NEXT:      memref.alloca() {alignment = 64 : i64} : memref<256x64xf32>
// HOIST:           omp.wsloop
func.func @tile_scratch(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.forall (%i) in (8) {
    %tile = memref.alloc() {alignment = 64 : i64} : memref<256x64xf32>
    %big = memref.alloc() : memref<1024x1024xf32>
    %dynamic = memref.alloc(%n) : memref<?xf32>
    scf.for %j = %c0 to %c4 step %c1 {
      %loop = memref.alloc() : memref<16xf32>
      "test.use"(%loop) : (memref<16xf32>) -> ()
      memref.dealloc %loop : memref<16xf32>
    }
    "test.use"(%tile, %big, %dynamic) : (memref<256x64xf32>, memref<1024x1024xf32>, memref<?xf32>) -> ()
    memref.dealloc %big : memref<1024x1024xf32>
    memref.dealloc %dynamic : memref<?xf32>
  }
  return
}

// RUN: tfm-opt %s -allow-unregistered-dialect --pass-pipeline="builtin.module(func.func(tfm-cpu-promote-tile-buffers))" | FileCheck %s --check-prefix=PROMOTE
// RUN: %mlir_opt %s -allow-unregistered-dialect --load-dialect-plugin=%tfm_libs/TfmPlugin%shlibext \
// RUN:   --load-pass-plugin=%tfm_libs/TfmPlugin%shlibext \
// RUN:   --pass-pipeline="builtin.module(func.func(tfm-cpu-promote-tile-buffers),scf-forall-to-parallel,convert-scf-to-openmp,tfm-cpu-hoist-thread-scratch)" \
// RUN:   | FileCheck %s --check-prefix=HOIST
// Stock mlir-opt cannot load the sanitizer build's plugin.
// UNSUPPORTED: asan

// Fixed-size buffers of a parallel tile move to the stack at the start of the
// tile, also from the key loop and its branches when no iteration passes
// them on. A large one, a dynamic one, one the loop carries to its next
// iteration and one already deallocated stay on the heap.
// PROMOTE-LABEL: func.func @tile_scratch
// PROMOTE:         scf.forall
// PROMOTE-DAG:       %[[TILE:.+]] = memref.alloca() {alignment = 64 : i64} : memref<256x64xf32>
// PROMOTE-DAG:       %[[STEP:.+]] = memref.alloca() : memref<16xf32>
// PROMOTE-DAG:       %[[BRANCH:.+]] = memref.alloca() : memref<8xf32>
// PROMOTE-DAG:       memref.alloc() : memref<1024x1024xf32>
// PROMOTE-DAG:       memref.alloc(%{{.+}}) : memref<?xf32>
// PROMOTE:           scf.for
// PROMOTE-NEXT:        "test.use"(%[[STEP]])
// PROMOTE:             scf.if
// PROMOTE-NEXT:          "test.use"(%[[BRANCH]])
// PROMOTE:           scf.for
// PROMOTE-NEXT:        memref.alloc() : memref<4xf32>
// PROMOTE:           scf.for
// PROMOTE-NEXT:        memref.alloc() : memref<2xf32>
// PROMOTE-NEXT:        memref.dealloc

// Once OpenMP owns the loop, each thread allocates the stack buffers once,
// before the worksharing loop.
// HOIST-LABEL: func.func @tile_scratch
// HOIST:         omp.parallel {
// HOIST-COUNT-3:   memref.alloca()
// HOIST:           omp.wsloop
func.func @tile_scratch(%n: index, %init: memref<4xf32>, %flag: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.forall (%i) in (8) {
    %tile = memref.alloc() {alignment = 64 : i64} : memref<256x64xf32>
    %big = memref.alloc() : memref<1024x1024xf32>
    %dynamic = memref.alloc(%n) : memref<?xf32>
    scf.for %j = %c0 to %c4 step %c1 {
      %step = memref.alloc() : memref<16xf32>
      "test.use"(%step) : (memref<16xf32>) -> ()
      %chosen = scf.if %flag -> (memref<8xf32>) {
        %branch = memref.alloc() : memref<8xf32>
        "test.use"(%branch) : (memref<8xf32>) -> ()
        scf.yield %branch : memref<8xf32>
      } else {
        %other = memref.alloc() : memref<8xf32>
        scf.yield %other : memref<8xf32>
      }
      "test.use"(%chosen) : (memref<8xf32>) -> ()
    }
    %carried = scf.for %j = %c0 to %c4 step %c1 iter_args(%state = %init) -> (memref<4xf32>) {
      %next = memref.alloc() : memref<4xf32>
      "test.use"(%state, %next) : (memref<4xf32>, memref<4xf32>) -> ()
      scf.yield %next : memref<4xf32>
    }
    scf.for %j = %c0 to %c4 step %c1 {
      %freed = memref.alloc() : memref<2xf32>
      memref.dealloc %freed : memref<2xf32>
    }
    "test.use"(%tile, %big, %dynamic, %carried) : (memref<256x64xf32>, memref<1024x1024xf32>, memref<?xf32>, memref<4xf32>) -> ()
  }
  return
}

// -----

// Outside any parallel tile, a buffer of a sequential loop iteration moves to
// the start of the function; one outside loops stays on the heap.
// PROMOTE-LABEL: func.func @sequential_loop
// PROMOTE-NEXT:    memref.alloca() : memref<64xf32>
// PROMOTE:         memref.alloc() : memref<32xf32>
// PROMOTE:         scf.for
// PROMOTE-NOT:       memref.alloc
func.func @sequential_loop() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %once = memref.alloc() : memref<32xf32>
  "test.use"(%once) : (memref<32xf32>) -> ()
  scf.for %j = %c0 to %c4 step %c1 {
    %step = memref.alloc() : memref<64xf32>
    "test.use"(%step) : (memref<64xf32>) -> ()
  }
  return
}

// -----

// Heap buffers of a run-time size that an iteration frees itself (a
// projection's [M, NB] epilogue blocks): each thread allocates them once,
// before the worksharing loop, and frees them after it. One whose size the
// iteration computes, and one freed in another block, stay in the loop.
// PROMOTE-LABEL: func.func @iteration_heap_scratch
// HOIST-LABEL: func.func @iteration_heap_scratch
// HOIST-SAME:    (%[[ROWS:.+]]: index, %{{.+}}: i1)
// HOIST:         omp.parallel {
// HOIST-NEXT:      %[[BLOCK:.+]] = memref.alloc(%[[ROWS]]) : memref<?x128xf32>
// HOIST-NEXT:      %[[PANEL:.+]] = memref.alloc(%[[ROWS]]) : memref<?x64xf32>
// HOIST-NEXT:      omp.wsloop
// HOIST:             "test.use"(%[[BLOCK]])
// HOIST:             memref.alloc(%{{.+}}) : memref<?xf32>
// HOIST:             "test.use"(%[[PANEL]])
// HOIST:             memref.alloc(%[[ROWS]]) : memref<?x32xf32>
// HOIST:             scf.if
// HOIST:               memref.dealloc
// HOIST:           memref.dealloc %[[PANEL]]
// HOIST-NEXT:      memref.dealloc %[[BLOCK]]
// HOIST-NEXT:      omp.terminator
func.func @iteration_heap_scratch(%rows: index, %flag: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.forall (%i) in (8) {
    %block = memref.alloc(%rows) : memref<?x128xf32>
    "test.use"(%block) : (memref<?x128xf32>) -> ()
    memref.dealloc %block : memref<?x128xf32>
    %size = arith.addi %rows, %i : index
    %sized = memref.alloc(%size) : memref<?xf32>
    "test.use"(%sized) : (memref<?xf32>) -> ()
    memref.dealloc %sized : memref<?xf32>
    scf.for %k = %c0 to %c4 step %c1 {
      %panel = memref.alloc(%rows) : memref<?x64xf32>
      "test.use"(%panel) : (memref<?x64xf32>) -> ()
      memref.dealloc %panel : memref<?x64xf32>
    }
    %kept = memref.alloc(%rows) : memref<?x32xf32>
    "test.use"(%kept) : (memref<?x32xf32>) -> ()
    scf.if %flag {
      memref.dealloc %kept : memref<?x32xf32>
    }
  }
  return
}

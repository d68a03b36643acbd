// RUN: tfm-opt %s --pass-pipeline="builtin.module(func.func(tfm-gpu-map-to-kernels{block-size=128}),cse)" | FileCheck %s
// (cse, not canonicalize: that would drop the synchronous gpu.wait, which
// gpu-async-region turns into a wait for the stream in the pipeline.)

// A parallel loop: one thread per point, flattened with the last dim
// fastest, in blocks of 128 threads, guarded against the rounded-up grid.
// Its nested parallel loop runs sequentially in the thread; its scratch
// buffer becomes a thread-local alloca.
// CHECK-LABEL: func.func @elementwise
// CHECK-SAME: (%[[X:.*]]: memref<?x64xf32>, %[[Y:.*]]: memref<?x64xf32>)
// CHECK: %[[TOTAL:.*]] = arith.muli %{{.*}}, %[[COLS:.*]] : index
// CHECK: %[[C128:.*]] = arith.constant 128 : index
// CHECK: %[[GRID:.*]] = arith.ceildivui %[[TOTAL]], %[[C128]] : index
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[GRID]], %{{.*}} = %[[C1:.*]], %{{.*}} = %[[C1]]) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C128]], %{{.*}} = %[[C1]], %{{.*}} = %[[C1]])
// CHECK:   %[[BASE:.*]] = arith.muli %[[BX]], %[[C128]] : index
// CHECK:   %[[ID:.*]] = arith.addi %[[BASE]], %[[TX]] : index
// CHECK:   %[[IN:.*]] = arith.cmpi ult, %[[ID]], %[[TOTAL]] : index
// CHECK:   scf.if %[[IN]] {
// CHECK:     arith.remui %[[ID]], %[[COLS]] : index
// CHECK:     arith.divui %[[ID]], %[[COLS]] : index
// CHECK:     %[[SCRATCH:.*]] = memref.alloca() : memref<4xf32>
// CHECK:     scf.for
// CHECK:       memref.store %{{.*}}, %[[SCRATCH]]
// CHECK:     memref.load %[[X]]
// CHECK:     math.exp
// CHECK:     memref.store %{{.*}}, %[[Y]]
// CHECK:   gpu.terminator
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func @elementwise(%x: memref<?x64xf32>, %y: memref<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %cst = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?x64xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c64) step (%c1, %c1) {
    %scratch = memref.alloc() : memref<4xf32>
    scf.parallel (%k) = (%c0) to (%c4) step (%c1) {
      memref.store %cst, %scratch[%k] : memref<4xf32>
    }
    %v = memref.load %x[%i, %j] : memref<?x64xf32>
    %e = math.exp %v : f32
    memref.store %e, %y[%i, %j] : memref<?x64xf32>
    memref.dealloc %scratch : memref<4xf32>
  }
  return
}

// Host buffers become device buffers; a copy becomes a copy kernel; a
// host-level sequential loop (a reduction over every element) runs in a
// one-thread kernel; a host read of its verdict is copied back after the
// device has finished.
// CHECK-LABEL: func.func @check
// CHECK: %[[FLAG:.*]] = gpu.alloc () : memref<i1>
// CHECK: gpu.launch blocks(%{{.*}}) in (%{{.*}} = %[[C1:.*]], %{{.*}} = %[[C1]], %{{.*}} = %[[C1]]) threads(%{{.*}}) in (%{{.*}} = %[[C1]], %{{.*}} = %[[C1]], %{{.*}} = %[[C1]])
// CHECK:   memref.store %{{.*}}, %[[FLAG]][]
// CHECK: gpu.launch blocks(%{{.*}}) in (%{{.*}} = %[[C1]], %{{.*}} = %[[C1]], %{{.*}} = %[[C1]]) threads(%{{.*}}) in (%{{.*}} = %[[C1]], %{{.*}} = %[[C1]], %{{.*}} = %[[C1]])
// CHECK:   scf.for
// CHECK: %[[HOST:.*]] = memref.alloca() : memref<i1>
// CHECK: gpu.memcpy %[[HOST]], %[[FLAG]] : memref<i1>, memref<i1>
// CHECK: gpu.wait
// CHECK: %[[OK:.*]] = memref.load %[[HOST]][] : memref<i1>
// CHECK: scf.if %[[OK]]
// CHECK:   %[[TMP:.*]] = gpu.alloc (%{{.*}}) : memref<?xi32>
// CHECK:   gpu.launch
// CHECK:     memref.load %{{.*}} : memref<?xi32, strided<[2]>>
// CHECK:     memref.store %{{.*}}, %[[TMP]]
// CHECK:   gpu.dealloc %[[TMP]] : memref<?xi32>
// CHECK: gpu.dealloc %[[FLAG]] : memref<i1>
func.func @check(%ids: memref<?xi32>, %out: memref<?xi32>) -> i1 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %true = arith.constant true
  %limit = arith.constant 1000 : i32
  %n = memref.dim %ids, %c0 : memref<?xi32>
  %flag = memref.alloc() : memref<i1>
  memref.store %true, %flag[] : memref<i1>
  scf.for %i = %c0 to %n step %c1 {
    %id = memref.load %ids[%i] : memref<?xi32>
    %in = arith.cmpi slt, %id, %limit : i32
    %old = memref.load %flag[] : memref<i1>
    %new = arith.andi %old, %in : i1
    memref.store %new, %flag[] : memref<i1>
  }
  %ok = memref.load %flag[] : memref<i1>
  scf.if %ok {
    %half = arith.divui %n, %c2 : index
    %even = memref.subview %ids[0] [%half] [2] : memref<?xi32> to memref<?xi32, strided<[2]>>
    %tmp = memref.alloc(%half) : memref<?xi32>
    memref.copy %even, %tmp : memref<?xi32, strided<[2]>> to memref<?xi32>
    memref.dealloc %tmp : memref<?xi32>
  }
  memref.dealloc %flag : memref<i1>
  return %ok : i1
}

// A constant table read by a kernel is read from inside it (outlining then
// copies the global into device memory), not through a host address.
// CHECK-LABEL: func.func @reads_global
// CHECK: gpu.launch
// CHECK:   memref.get_global @inverse_frequencies
// CHECK:   scf.if
// CHECK:     memref.load
memref.global "private" constant @inverse_frequencies : memref<4xf32> = dense<[1.0, 0.5, 0.25, 0.125]>
func.func @reads_global(%y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %table = memref.get_global @inverse_frequencies : memref<4xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %v = memref.load %table[%i] : memref<4xf32>
    memref.store %v, %y[%i] : memref<4xf32>
  }
  return
}

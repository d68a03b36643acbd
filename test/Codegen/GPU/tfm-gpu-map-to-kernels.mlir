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
// host-level store runs in a one-thread kernel; a sequential loop that
// folds a predicate of every element into one flag with andi (an input
// check) gets a thread per element, which stores false when its element
// fails (no thread reads the flag); a host read of the verdict is copied
// back into a host buffer made at the function's entry, and read after
// the device has finished.
// CHECK-LABEL: func.func @check
// CHECK: %[[HOST:.*]] = memref.alloca() : memref<i1>
// CHECK: %[[FLAG:.*]] = gpu.alloc () : memref<i1>
// CHECK: gpu.launch blocks(%{{.*}}) in (%{{.*}} = %[[C1:.*]], %{{.*}} = %[[C1]], %{{.*}} = %[[C1]]) threads(%{{.*}}) in (%{{.*}} = %[[C1]], %{{.*}} = %[[C1]], %{{.*}} = %[[C1]])
// CHECK:   memref.store %{{.*}}, %[[FLAG]][]
// CHECK: %[[GRID:.*]] = arith.ceildivui %{{.*}}, %c128
// CHECK: gpu.launch blocks(%{{.*}}) in (%{{.*}} = %[[GRID]], %{{.*}} = %[[C1]], %{{.*}} = %[[C1]]) threads(%{{.*}}) in (%{{.*}} = %c128, %{{.*}} = %[[C1]], %{{.*}} = %[[C1]])
// CHECK:   scf.if
// CHECK:     %[[IN:.*]] = arith.cmpi slt
// CHECK:     %[[FAILS:.*]] = arith.cmpi eq, %[[IN]], %false
// CHECK:     scf.if %[[FAILS]] {
// CHECK-NEXT:  memref.store %[[IN]], %[[FLAG]][]
// CHECK-NOT: scf.for
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

// Two host reads (two input checks): each copy is issued where its read
// was, and the reads wait once, where the first of their values is needed.
// CHECK-LABEL: func.func @two_checks
// CHECK-COUNT-2: memref.alloca() : memref<i1>
// CHECK: gpu.memcpy %[[HOST_A:.*]], %{{.*}} : memref<i1>, memref<i1>
// CHECK-NOT: gpu.wait
// CHECK: gpu.launch
// CHECK-NOT: gpu.wait
// CHECK: gpu.memcpy %[[HOST_B:.*]], %{{.*}} : memref<i1>, memref<i1>
// CHECK: gpu.wait
// CHECK-NEXT: %[[A:.*]] = memref.load %[[HOST_A]][]
// CHECK-NEXT: %[[B:.*]] = memref.load %[[HOST_B]][]
// CHECK-NEXT: %[[BOTH:.*]] = arith.andi %[[A]], %[[B]]
// CHECK-NEXT: return %[[BOTH]]
func.func @two_checks(%a: memref<?xi32>, %b: memref<?xi32>) -> i1 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %true = arith.constant true
  %limit = arith.constant 1000 : i32
  %na = memref.dim %a, %c0 : memref<?xi32>
  %nb = memref.dim %b, %c0 : memref<?xi32>
  %flag_a = memref.alloc() : memref<i1>
  memref.store %true, %flag_a[] : memref<i1>
  scf.for %i = %c0 to %na step %c1 {
    %x = memref.load %a[%i] : memref<?xi32>
    %in = arith.cmpi slt, %x, %limit : i32
    %old = memref.load %flag_a[] : memref<i1>
    %new = arith.andi %old, %in : i1
    memref.store %new, %flag_a[] : memref<i1>
  }
  %ok_a = memref.load %flag_a[] : memref<i1>
  memref.dealloc %flag_a : memref<i1>
  %flag_b = memref.alloc() : memref<i1>
  memref.store %true, %flag_b[] : memref<i1>
  scf.for %i = %c0 to %nb step %c1 {
    %x = memref.load %b[%i] : memref<?xi32>
    %in = arith.cmpi slt, %x, %limit : i32
    %old = memref.load %flag_b[] : memref<i1>
    %new = arith.andi %old, %in : i1
    memref.store %new, %flag_b[] : memref<i1>
  }
  %ok_b = memref.load %flag_b[] : memref<i1>
  memref.dealloc %flag_b : memref<i1>
  %ok = arith.andi %ok_a, %ok_b : i1
  return %ok : i1
}

// The same over a nest of loops with ori ("any element negative"): a
// thread per point of the nest, storing true when its element has it.
// CHECK-LABEL: func.func @any_negative
// CHECK: gpu.launch
// CHECK:   scf.if
// CHECK:     %[[NEG:.*]] = arith.cmpf olt
// CHECK:     %[[HAS:.*]] = arith.cmpi eq, %[[NEG]], %true
// CHECK:     scf.if %[[HAS]] {
// CHECK-NEXT:  memref.store %[[NEG]], %{{.*}}[%c0] : memref<1xi1>
// CHECK-NOT: scf.for
func.func @any_negative(%x: memref<?x33xf32>, %flag: memref<1xi1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c33 = arith.constant 33 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?x33xf32>
  scf.for %i = %c0 to %n step %c1 {
    scf.for %j = %c0 to %c33 step %c1 {
      %v = memref.load %x[%i, %j] : memref<?x33xf32>
      %neg = arith.cmpf olt, %v, %zero : f32
      %old = memref.load %flag[%c0] : memref<1xi1>
      %new = arith.ori %old, %neg : i1
      memref.store %new, %flag[%c0] : memref<1xi1>
    }
  }
  return
}

// A fold that reads its flag for anything but the fold is not a
// predicate fold: one thread runs the loop.
// CHECK-LABEL: func.func @flag_read_twice
// CHECK: gpu.launch blocks(%{{.*}}) in (%{{.*}} = %[[C1:.*]], %{{.*}} = %[[C1]], %{{.*}} = %[[C1]]) threads(%{{.*}}) in (%{{.*}} = %[[C1]], %{{.*}} = %[[C1]], %{{.*}} = %[[C1]])
// CHECK:   scf.for
func.func @flag_read_twice(%x: memref<?xi32>, %flag: memref<i1>, %copy: memref<?xi1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0 : i32
  %n = memref.dim %x, %c0 : memref<?xi32>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xi32>
    %pos = arith.cmpi sgt, %v, %zero : i32
    %old = memref.load %flag[] : memref<i1>
    %new = arith.andi %old, %pos : i1
    memref.store %new, %flag[] : memref<i1>
    %again = memref.load %flag[] : memref<i1>
    memref.store %again, %copy[%i] : memref<?xi1>
  }
  return
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

// A row reduction as linalg lowers it (the sequential loop folds into one
// element of the output): a warp per row. Each lane folds every 32nd
// element from 0, the lanes are combined by xor shuffles, and lane 0 folds
// the result into the output element.
// CHECK-LABEL: func.func @row_sums
// CHECK: %[[POINTS:.*]] = arith.maxsi
// CHECK: %[[THREADS:.*]] = arith.muli %[[POINTS]], %c32
// CHECK: gpu.launch
// CHECK:   %[[ROW:.*]] = arith.divui %{{.*}}, %c32
// CHECK:   %[[LANE:.*]] = arith.remui %{{.*}}, %c32
// CHECK:   arith.cmpi ult, %[[ROW]], %[[POINTS]]
// CHECK:   arith.muli %[[LANE]], %c1
// CHECK:   %[[PART:.*]] = scf.for %[[K:.*]] = %{{.*}} to %c100 step %{{.*}} iter_args(%[[ACC:.*]] = %cst{{.*}}) -> (f32)
// CHECK:     memref.load %{{.*}}[%[[ROW]], %[[K]]]
// CHECK:     arith.addf %[[ACC]]
// CHECK:   gpu.shuffle  xor %[[PART]]
// CHECK-COUNT-4: gpu.shuffle  xor
// CHECK:   arith.cmpi eq, %[[LANE]], %c0
// CHECK:   scf.if
// CHECK:     memref.load %{{.*}}[%[[ROW]]]
// CHECK:     memref.store
func.func @row_sums(%x: memref<?x100xf32>, %sums: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c100 = arith.constant 100 : index
  %n = memref.dim %x, %c0 : memref<?x100xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %k = %c0 to %c100 step %c1 {
      %v = memref.load %x[%i, %k] : memref<?x100xf32>
      %s = memref.load %sums[%i] : memref<?xf32>
      %sq = arith.mulf %v, %v : f32
      %t = arith.addf %s, %sq : f32
      memref.store %t, %sums[%i] : memref<?xf32>
    }
  }
  return
}

// A row reduction right after a loop that fills its output with the
// fold's neutral element (a norm's zeroed sums of squares, 1 x n here, as
// canonicalization leaves a unit dim): the fill goes, and lane 0 stores the
// warp's fold without reading the output. A fill of another value stays.
// CHECK-LABEL: func.func @filled_row_sums
// CHECK-SAME: (%[[X:[^:]*]]: memref<?x100xf32>, %[[SUMS:[^:]*]]: memref<1x?xf32>, %[[MAXES:[^:]*]]: memref<?xf32>)
// CHECK: gpu.launch
// CHECK:   gpu.shuffle  xor
// CHECK:   scf.if
// CHECK-NOT: memref.load
// CHECK:     memref.store %{{.*}}, %[[SUMS]][%c0{{.*}}, %{{.*}}]
// CHECK: gpu.launch
// CHECK:   memref.store %{{.*}}, %[[MAXES]]
// CHECK: gpu.launch
// CHECK:   gpu.shuffle  xor
// CHECK:   scf.if
// CHECK:     memref.load %[[MAXES]]
// CHECK:     arith.maximumf
// CHECK:     memref.store %{{.*}}, %[[MAXES]]
func.func @filled_row_sums(%x: memref<?x100xf32>, %sums: memref<1x?xf32>, %maxes: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c100 = arith.constant 100 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?x100xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %zero, %sums[%c0, %i] : memref<1x?xf32>
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %k = %c0 to %c100 step %c1 {
      %v = memref.load %x[%i, %k] : memref<?x100xf32>
      %s = memref.load %sums[%c0, %i] : memref<1x?xf32>
      %sq = arith.mulf %v, %v : f32
      %t = arith.addf %s, %sq : f32
      memref.store %t, %sums[%c0, %i] : memref<1x?xf32>
    }
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %zero, %maxes[%i] : memref<?xf32>
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %k = %c0 to %c100 step %c1 {
      %v = memref.load %x[%i, %k] : memref<?x100xf32>
      %m = memref.load %maxes[%i] : memref<?xf32>
      %t = arith.maximumf %m, %v : f32
      memref.store %t, %maxes[%i] : memref<?xf32>
    }
  }
  return
}

// A row reduction from its neutral element, then the loop that applies
// each row's fold to the row (a norm: sums of squares, then each element
// scaled by 1/sqrt(mean + eps)) into a new buffer: one kernel, a block of
// 128 threads (4 warps) per row. Each thread folds every 128th element,
// each warp combines its lanes (xor shuffles), lane 0 of each warp writes
// the warp's fold to shared memory, and after a barrier every thread
// combines the 4 in the same order; thread 0 stores the sum, and every
// thread scales every 128th element of the row with it, without reading
// the sums back.
// CHECK-LABEL: func.func @norm_rows
// CHECK-SAME: (%[[X:[^:]*]]: memref<?x200xf32>, %[[W:[^:]*]]: memref<200xf32>, %[[SUMS:[^:]*]]: memref<?xf32>)
// CHECK: %[[Y:.*]] = gpu.alloc
// CHECK: %[[ROWS:.*]] = arith.maxsi
// CHECK: %[[THREADS:.*]] = arith.muli %[[ROWS]], %c128
// CHECK: %[[GRID:.*]] = arith.ceildivui %[[THREADS]], %c128
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %[[GRID]], {{.*}} threads({{.*}}) in (%{{.*}} = %c128{{.*}} dynamic_shared_memory_size %c16_i32
// CHECK:   %[[SHARED:.*]] = gpu.dynamic_shared_memory
// CHECK:   %[[ROW:.*]] = arith.divui %{{.*}}, %c128
// CHECK:   %[[THREAD:.*]] = arith.remui %{{.*}}, %c128
// CHECK:   arith.cmpi ult, %[[ROW]], %[[ROWS]]
// CHECK:   %[[START:.*]] = arith.addi %c0{{.*}}, %{{.*}} : index
// CHECK:   %[[STRIDE:.*]] = arith.muli %c1{{.*}}, %c128 : index
// CHECK:   %[[PART:.*]] = scf.for %[[K:.*]] = %[[START]] to %c200 step %[[STRIDE]] iter_args(%[[ACC:.*]] = %cst{{.*}}) -> (f32)
// CHECK:     memref.load %[[X]][%[[ROW]], %[[K]]]
// CHECK:     arith.addf %[[ACC]]
// CHECK:   gpu.shuffle  xor %[[PART]]
// CHECK-COUNT-4: gpu.shuffle  xor
// CHECK:   %[[WARP:.*]] = arith.divui %[[THREAD]], %c32
// CHECK:   %[[LANE:.*]] = arith.remui %[[THREAD]], %c32
// CHECK:   %[[FOLDS:.*]] = memref.view %[[SHARED]][%c0{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4xf32, #gpu.address_space<workgroup>>
// CHECK:   arith.cmpi eq, %[[LANE]], %c0
// CHECK:   scf.if
// CHECK:     memref.store %{{.*}}, %[[FOLDS]][%[[WARP]]]
// CHECK:   gpu.barrier
// CHECK:   %[[F0:.*]] = memref.load %[[FOLDS]][%c0
// CHECK:   %[[F1:.*]] = memref.load %[[FOLDS]][%c1
// CHECK:   %[[S1:.*]] = arith.addf %[[F0]], %[[F1]]
// CHECK:   %[[F2:.*]] = memref.load %[[FOLDS]][%c2
// CHECK:   %[[S2:.*]] = arith.addf %[[S1]], %[[F2]]
// CHECK:   %[[F3:.*]] = memref.load %[[FOLDS]][%c3
// CHECK:   %[[TOTAL:.*]] = arith.addf %[[S2]], %[[F3]]
// CHECK:   arith.cmpi eq, %[[THREAD]], %c0
// CHECK:   scf.if
// CHECK-NOT: memref.load
// CHECK:     memref.store %[[TOTAL]], %[[SUMS]][%[[ROW]]]
// CHECK:   scf.for %[[J:.*]] = %[[START]] to %c200 step %[[STRIDE]] {
// CHECK-NOT: memref.load %[[SUMS]]
// CHECK:     math.rsqrt %[[TOTAL]]
// CHECK:     memref.load %[[X]][%[[ROW]], %[[J]]]
// CHECK:     memref.load %[[W]][%[[J]]]
// CHECK:     memref.store %{{.*}}, %[[Y]][%[[ROW]], %[[J]]]
// CHECK-NOT: gpu.launch
// CHECK: return %[[Y]]
func.func @norm_rows(%x: memref<?x200xf32>, %w: memref<200xf32>, %sums: memref<?xf32>) -> memref<?x200xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c200 = arith.constant 200 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?x200xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %zero, %sums[%i] : memref<?xf32>
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %k = %c0 to %c200 step %c1 {
      %v = memref.load %x[%i, %k] : memref<?x200xf32>
      %s = memref.load %sums[%i] : memref<?xf32>
      %sq = arith.mulf %v, %v : f32
      %t = arith.addf %s, %sq : f32
      memref.store %t, %sums[%i] : memref<?xf32>
    }
  }
  %y = memref.alloc(%n) : memref<?x200xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c200) step (%c1, %c1) {
    %s = memref.load %sums[%i] : memref<?xf32>
    %r = math.rsqrt %s : f32
    %v = memref.load %x[%i, %j] : memref<?x200xf32>
    %g = memref.load %w[%j] : memref<200xf32>
    %a = arith.mulf %v, %r : f32
    %b = arith.mulf %a, %g : f32
    memref.store %b, %y[%i, %j] : memref<?x200xf32>
  }
  return %y : memref<?x200xf32>
}

// The same with the sums in a buffer of the function's own that nothing
// else reads: the kernel does not store them, and the buffer goes.
// CHECK-LABEL: func.func @norm_rows_local
// CHECK-SAME: (%[[X:[^:]*]]: memref<?x200xf32>)
// CHECK-NOT: gpu.alloc{{.*}}memref<?xf32>
// CHECK: %[[Y:.*]] = gpu.alloc{{.*}}memref<?x200xf32>
// CHECK-NOT: gpu.alloc
// CHECK: gpu.launch
// CHECK:   gpu.barrier
// CHECK:   scf.for
// CHECK-NOT: memref.store %{{.*}} : memref<?xf32>
// CHECK:     math.rsqrt
// CHECK:     memref.store %{{.*}}, %[[Y]]
// CHECK-NOT: gpu.dealloc
// CHECK: return %[[Y]]
func.func @norm_rows_local(%x: memref<?x200xf32>) -> memref<?x200xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c200 = arith.constant 200 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?x200xf32>
  %sums = memref.alloc(%n) : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %zero, %sums[%i] : memref<?xf32>
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %k = %c0 to %c200 step %c1 {
      %v = memref.load %x[%i, %k] : memref<?x200xf32>
      %s = memref.load %sums[%i] : memref<?xf32>
      %sq = arith.mulf %v, %v : f32
      %t = arith.addf %s, %sq : f32
      memref.store %t, %sums[%i] : memref<?xf32>
    }
  }
  %y = memref.alloc(%n) : memref<?x200xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c200) step (%c1, %c1) {
    %s = memref.load %sums[%i] : memref<?xf32>
    %r = math.rsqrt %s : f32
    %v = memref.load %x[%i, %j] : memref<?x200xf32>
    %a = arith.mulf %v, %r : f32
    memref.store %a, %y[%i, %j] : memref<?x200xf32>
  }
  memref.dealloc %sums : memref<?xf32>
  return %y : memref<?x200xf32>
}

// The row's loop stays a kernel of its own where the other kernel could
// not run it right after the row's fold: it stores into an argument (which
// may be a view of what the reduction reads), reads another row's fold, or
// the reduction does not start from the neutral element.
// CHECK-LABEL: func.func @norm_rows_apart
// CHECK-COUNT-6: gpu.launch
// CHECK-NOT: gpu.launch
// CHECK-NOT: gpu.barrier
// CHECK: return
func.func @norm_rows_apart(%x: memref<?x200xf32>, %sums: memref<?xf32>, %y: memref<?x200xf32>) -> memref<?x200xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c200 = arith.constant 200 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?x200xf32>
  // Into an argument.
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %zero, %sums[%i] : memref<?xf32>
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %k = %c0 to %c200 step %c1 {
      %v = memref.load %x[%i, %k] : memref<?x200xf32>
      %s = memref.load %sums[%i] : memref<?xf32>
      %t = arith.addf %s, %v : f32
      memref.store %t, %sums[%i] : memref<?xf32>
    }
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c200) step (%c1, %c1) {
    %s = memref.load %sums[%i] : memref<?xf32>
    %v = memref.load %x[%i, %j] : memref<?x200xf32>
    %a = arith.mulf %v, %s : f32
    memref.store %a, %y[%i, %j] : memref<?x200xf32>
  }
  // Another row's fold.
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %zero, %sums[%i] : memref<?xf32>
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %k = %c0 to %c200 step %c1 {
      %v = memref.load %x[%i, %k] : memref<?x200xf32>
      %s = memref.load %sums[%i] : memref<?xf32>
      %t = arith.addf %s, %v : f32
      memref.store %t, %sums[%i] : memref<?xf32>
    }
  }
  %z = memref.alloc(%n) : memref<?x200xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c200) step (%c1, %c1) {
    %s = memref.load %sums[%c0] : memref<?xf32>
    %v = memref.load %x[%i, %j] : memref<?x200xf32>
    %a = arith.mulf %v, %s : f32
    memref.store %a, %z[%i, %j] : memref<?x200xf32>
  }
  // Not from the neutral element: the sums fold into what they hold.
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %k = %c0 to %c200 step %c1 {
      %v = memref.load %x[%i, %k] : memref<?x200xf32>
      %s = memref.load %sums[%i] : memref<?xf32>
      %t = arith.addf %s, %v : f32
      memref.store %t, %sums[%i] : memref<?xf32>
    }
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c200) step (%c1, %c1) {
    %s = memref.load %sums[%i] : memref<?xf32>
    %v = memref.load %x[%i, %j] : memref<?x200xf32>
    %a = arith.mulf %v, %s : f32
    memref.store %a, %z[%i, %j] : memref<?x200xf32>
  }
  return %z : memref<?x200xf32>
}

// A fold whose element moves with the sequential loop is no row
// reduction: one thread per point.
// CHECK-LABEL: func.func @prefix_not_reduction
// CHECK-NOT: gpu.shuffle
// CHECK: return
func.func @prefix_not_reduction(%x: memref<?x100xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c100 = arith.constant 100 : index
  %n = memref.dim %x, %c0 : memref<?x100xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %k = %c1 to %c100 step %c1 {
      %km1 = arith.subi %k, %c1 : index
      %p = memref.load %x[%i, %km1] : memref<?x100xf32>
      %v = memref.load %x[%i, %k] : memref<?x100xf32>
      %t = arith.addf %v, %p : f32
      memref.store %t, %x[%i, %k] : memref<?x100xf32>
    }
  }
  return
}

// A KV cache's update, one row of the batch at a time (row r of each cache
// at position lengths[r]): the iterations write disjoint rows, so the
// copies become a kernel with a thread per (row, element), each reading its
// row's position, not a kernel of one thread walking rows and elements.
// The K and V copies are over the same points and write different
// buffers: one kernel, each thread copying its element of both.
// CHECK-LABEL: func.func @cache_rows
// CHECK-SAME: (%[[LENGTHS:[^:]*]]: memref<?xi32>, %[[K:[^:]*]]: memref<?x4x1x64xbf16>, %[[KC:[^:]*]]: memref<?x4x?x64xbf16>, %[[V:[^:]*]]: memref<?x4x1x64xbf16>, %[[VC:[^:]*]]: memref<?x4x?x64xbf16>)
// CHECK-NOT: scf.for
// CHECK: gpu.launch
// CHECK:   memref.load %[[LENGTHS]][%[[ROW:.*]]]
// CHECK-NOT: memref.load %[[LENGTHS]]
// CHECK:   %[[KROW:.*]] = memref.subview %[[KC]][%[[ROW]], 0, %{{.*}}, 0] [1, 4, 1, 64]
// CHECK:   %[[VROW:.*]] = memref.subview %[[VC]][%[[ROW]], 0, %{{.*}}, 0] [1, 4, 1, 64]
// CHECK-NOT: scf.for
// CHECK:   memref.store %{{.*}}, %[[KROW]]
// CHECK:   memref.store %{{.*}}, %[[VROW]]
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @cache_rows(%lengths: memref<?xi32>, %k: memref<?x4x1x64xbf16>, %kc: memref<?x4x?x64xbf16>,
                      %v: memref<?x4x1x64xbf16>, %vc: memref<?x4x?x64xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %k, %c0 : memref<?x4x1x64xbf16>
  scf.for %r = %c0 to %rows step %c1 {
    %length = memref.load %lengths[%r] : memref<?xi32>
    %at = arith.index_cast %length : i32 to index
    %ks = memref.subview %k[%r, 0, 0, 0] [1, 4, 1, 64] [1, 1, 1, 1] : memref<?x4x1x64xbf16> to memref<1x4x1x64xbf16, strided<[256, 64, 64, 1], offset: ?>>
    %kd = memref.subview %kc[%r, 0, %at, 0] [1, 4, 1, 64] [1, 1, 1, 1] : memref<?x4x?x64xbf16> to memref<1x4x1x64xbf16, strided<[?, ?, 64, 1], offset: ?>>
    memref.copy %ks, %kd : memref<1x4x1x64xbf16, strided<[256, 64, 64, 1], offset: ?>> to memref<1x4x1x64xbf16, strided<[?, ?, 64, 1], offset: ?>>
    %vs = memref.subview %v[%r, 0, 0, 0] [1, 4, 1, 64] [1, 1, 1, 1] : memref<?x4x1x64xbf16> to memref<1x4x1x64xbf16, strided<[256, 64, 64, 1], offset: ?>>
    %vd = memref.subview %vc[%r, 0, %at, 0] [1, 4, 1, 64] [1, 1, 1, 1] : memref<?x4x?x64xbf16> to memref<1x4x1x64xbf16, strided<[?, ?, 64, 1], offset: ?>>
    memref.copy %vs, %vd : memref<1x4x1x64xbf16, strided<[256, 64, 64, 1], offset: ?>> to memref<1x4x1x64xbf16, strided<[?, ?, 64, 1], offset: ?>>
  }
  return
}

// Copies in a row loop stay kernels of their own where one would race or
// cover other points: two writing the same buffer (the second must win),
// and two over different points (a row of 64, then one of 32).
// CHECK-LABEL: func.func @cache_rows_apart
// CHECK-COUNT-3: gpu.launch
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @cache_rows_apart(%lengths: memref<?xi32>, %k: memref<?x64xbf16>, %v: memref<?x64xbf16>,
                            %kc: memref<?x?x64xbf16>, %h: memref<?x32xbf16>, %hc: memref<?x?x32xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %k, %c0 : memref<?x64xbf16>
  scf.for %r = %c0 to %rows step %c1 {
    %length = memref.load %lengths[%r] : memref<?xi32>
    %at = arith.index_cast %length : i32 to index
    %ks = memref.subview %k[%r, 0] [1, 64] [1, 1] : memref<?x64xbf16> to memref<1x64xbf16, strided<[64, 1], offset: ?>>
    %kd = memref.subview %kc[%r, %at, 0] [1, 1, 64] [1, 1, 1] : memref<?x?x64xbf16> to memref<1x64xbf16, strided<[?, 1], offset: ?>>
    memref.copy %ks, %kd : memref<1x64xbf16, strided<[64, 1], offset: ?>> to memref<1x64xbf16, strided<[?, 1], offset: ?>>
    %vs = memref.subview %v[%r, 0] [1, 64] [1, 1] : memref<?x64xbf16> to memref<1x64xbf16, strided<[64, 1], offset: ?>>
    %vd = memref.subview %kc[%r, %at, 0] [1, 1, 64] [1, 1, 1] : memref<?x?x64xbf16> to memref<1x64xbf16, strided<[?, 1], offset: ?>>
    memref.copy %vs, %vd : memref<1x64xbf16, strided<[64, 1], offset: ?>> to memref<1x64xbf16, strided<[?, 1], offset: ?>>
    %hs = memref.subview %h[%r, 0] [1, 32] [1, 1] : memref<?x32xbf16> to memref<1x32xbf16, strided<[32, 1], offset: ?>>
    %hd = memref.subview %hc[%r, %at, 0] [1, 1, 32] [1, 1, 1] : memref<?x?x32xbf16> to memref<1x32xbf16, strided<[?, 1], offset: ?>>
    memref.copy %hs, %hd : memref<1x32xbf16, strided<[32, 1], offset: ?>> to memref<1x32xbf16, strided<[?, 1], offset: ?>>
  }
  return
}

// Rows that may overlap stay in one thread, in order: a loop writing row
// r + 1 (not its own), one reading a buffer it writes, and one writing
// row r of a buffer and row r of a view of it shifted by a row (row r + 1
// of the buffer, which the next iteration writes again).
// CHECK-LABEL: func.func @overlapping_rows
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{.*}}, {{.*}}) threads({{.*}}) in ({{.*}} = %c1{{.*}}, {{.*}})
// CHECK:   scf.for
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{.*}}, {{.*}}) threads({{.*}}) in ({{.*}} = %c1{{.*}}, {{.*}})
// CHECK:   scf.for
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{.*}}, {{.*}}) threads({{.*}}) in ({{.*}} = %c1{{.*}}, {{.*}})
// CHECK:   scf.for
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @overlapping_rows(%k: memref<?x64xbf16>, %kc: memref<?x64xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %k, %c0 : memref<?x64xbf16>
  %last = arith.subi %rows, %c1 : index
  %shifted = memref.subview %kc[1, 0] [%last, 64] [1, 1] : memref<?x64xbf16> to memref<?x64xbf16, strided<[64, 1], offset: 64>>
  scf.for %r = %c0 to %last step %c1 {
    %ks = memref.subview %k[%r, 0] [1, 64] [1, 1] : memref<?x64xbf16> to memref<1x64xbf16, strided<[64, 1], offset: ?>>
    %here = memref.subview %kc[%r, 0] [1, 64] [1, 1] : memref<?x64xbf16> to memref<1x64xbf16, strided<[64, 1], offset: ?>>
    memref.copy %ks, %here : memref<1x64xbf16, strided<[64, 1], offset: ?>> to memref<1x64xbf16, strided<[64, 1], offset: ?>>
    %next = memref.subview %shifted[%r, 0] [1, 64] [1, 1] : memref<?x64xbf16, strided<[64, 1], offset: 64>> to memref<1x64xbf16, strided<[64, 1], offset: ?>>
    memref.copy %ks, %next : memref<1x64xbf16, strided<[64, 1], offset: ?>> to memref<1x64xbf16, strided<[64, 1], offset: ?>>
  }
  scf.for %r = %c0 to %last step %c1 {
    %next = arith.addi %r, %c1 : index
    %ks = memref.subview %k[%r, 0] [1, 64] [1, 1] : memref<?x64xbf16> to memref<1x64xbf16, strided<[64, 1], offset: ?>>
    %kd = memref.subview %kc[%next, 0] [1, 64] [1, 1] : memref<?x64xbf16> to memref<1x64xbf16, strided<[64, 1], offset: ?>>
    memref.copy %ks, %kd : memref<1x64xbf16, strided<[64, 1], offset: ?>> to memref<1x64xbf16, strided<[64, 1], offset: ?>>
  }
  scf.for %r = %c0 to %last step %c1 {
    %ks = memref.subview %kc[%r, 0] [1, 64] [1, 1] : memref<?x64xbf16> to memref<1x64xbf16, strided<[64, 1], offset: ?>>
    %kd = memref.subview %kc[%r, 0] [1, 64] [1, 1] : memref<?x64xbf16> to memref<1x64xbf16, strided<[64, 1], offset: ?>>
    memref.copy %ks, %kd : memref<1x64xbf16, strided<[64, 1], offset: ?>> to memref<1x64xbf16, strided<[64, 1], offset: ?>>
  }
  return
}

// Row r of a buffer written from column r of it, read through
// memref.transpose (which is no ViewLikeOpInterface): each iteration reads
// what the others write, so the loop runs in order, in one thread.
// CHECK-LABEL: func.func @rows_from_transposed_view
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{.*}}, {{.*}}) threads({{.*}}) in ({{.*}} = %c1{{.*}}, {{.*}})
// CHECK:   scf.for
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @rows_from_transposed_view(%kc: memref<64x64xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %columns = memref.transpose %kc (d0, d1) -> (d1, d0) : memref<64x64xbf16> to memref<64x64xbf16, strided<[1, 64]>>
  scf.for %r = %c0 to %c64 step %c1 {
    %column = memref.subview %columns[%r, 0] [1, 64] [1, 1] : memref<64x64xbf16, strided<[1, 64]>> to memref<1x64xbf16, strided<[1, 64], offset: ?>>
    %row = memref.subview %kc[%r, 0] [1, 64] [1, 1] : memref<64x64xbf16> to memref<1x64xbf16, strided<[64, 1], offset: ?>>
    memref.copy %column, %row : memref<1x64xbf16, strided<[1, 64], offset: ?>> to memref<1x64xbf16, strided<[64, 1], offset: ?>>
  }
  return
}

// RUN: tfm-opt %s -allow-unregistered-dialect --pass-pipeline="builtin.module(tfm-cpu-plan-workspace,canonicalize)" | FileCheck %s

// Buffers of M = B*S rows share the workspace's M-sized region: %x (256
// bytes per row) and %y (400, rounded up to 448) are alive at once, %z (128)
// only after %x is freed, so %z takes %x's bytes. The i1
// buffer has a region of its own, of 64 bytes, first.
// CHECK-LABEL: func.func @activations
// CHECK-DAG:     %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG:     %[[C64:.+]] = arith.constant 64 : index
// CHECK-DAG:     %[[C448:.+]] = arith.constant 448 : index
// CHECK-DAG:     %[[C704:.+]] = arith.constant 704 : index
// CHECK:         %[[B:.+]] = memref.dim %arg0, %{{.+}} : memref<?x?xi32>
// CHECK:         %[[S:.+]] = memref.dim %arg0, %{{.+}} : memref<?x?xi32>
// CHECK:         %[[M:.+]] = arith.muli %[[B]], %[[S]] : index
// CHECK:         %[[ROWS:.+]] = arith.muli %[[M]], %[[C704]] : index
// CHECK:         %[[BYTES:.+]] = arith.addi %[[ROWS]], %[[C64]] : index
// CHECK:         %[[WS:.+]] = memref.alloc(%[[BYTES]]) {alignment = 64 : i64} : memref<?xi8>
// CHECK:         %[[XOFF:.+]] = arith.muli %[[M]], %[[C448]] : index
// CHECK:         %[[XAT:.+]] = arith.addi %[[XOFF]], %[[C64]] : index
// CHECK:         %[[X:.+]] = memref.view %[[WS]][%[[XAT]]][%{{.+}}] : memref<?xi8> to memref<?x64xf32>
// CHECK:         memref.view %[[WS]][%[[C64]]][%{{.+}}] : memref<?xi8> to memref<?x100xf32>
// CHECK:         %[[ZOFF:.+]] = arith.muli %[[M]], %[[C448]] : index
// CHECK:         %[[ZAT:.+]] = arith.addi %[[ZOFF]], %[[C64]] : index
// CHECK:         memref.view %[[WS]][%[[ZAT]]][%{{.+}}] : memref<?xi8> to memref<?x32xf32>
// CHECK:         memref.view %[[WS]][%[[C0]]][] : memref<?xi8> to memref<i1>
// CHECK-NOT:     memref.dealloc
// CHECK:         memref.dealloc %[[WS]] : memref<?xi8>
// CHECK-NEXT:    return
func.func @activations(%ids: memref<?x?xi32>, %out: memref<?x?x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = memref.dim %ids, %c0 : memref<?x?xi32>
  %s = memref.dim %ids, %c1 : memref<?x?xi32>
  %m = affine.apply affine_map<()[s0, s1] -> (s0 * s1)>()[%b, %s]
  %x = memref.alloc(%m) {alignment = 64 : i64} : memref<?x64xf32>
  "test.use"(%x) : (memref<?x64xf32>) -> ()
  %y = memref.alloc(%m) {alignment = 64 : i64} : memref<?x100xf32>
  "test.use"(%x, %y) : (memref<?x64xf32>, memref<?x100xf32>) -> ()
  memref.dealloc %x : memref<?x64xf32>
  %e = memref.expand_shape %y [[0, 1], [2]] output_shape [%b, %s, 100] : memref<?x100xf32> into memref<?x?x100xf32>
  %dm = memref.dim %e, %c1 : memref<?x?x100xf32>
  %bm = arith.muli %b, %dm : index
  %z = memref.alloc(%bm) {alignment = 64 : i64} : memref<?x32xf32>
  "test.use"(%e, %z) : (memref<?x?x100xf32>, memref<?x32xf32>) -> ()
  // %y is used through %e after this free of %y: it lives until then.
  memref.dealloc %y : memref<?x100xf32>
  "test.use"(%z) : (memref<?x32xf32>) -> ()
  memref.dealloc %z : memref<?x32xf32>
  %ok = memref.alloc() : memref<i1>
  "test.use"(%ok) : (memref<i1>) -> ()
  memref.dealloc %ok : memref<i1>
  return
}

// The branches of an scf.if share bytes. A buffer that a branch returns,
// one of a loop body and one whose size is a sum stay as they are.
// CHECK-LABEL: func.func @branches
// CHECK-DAG:     %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG:     %[[C64:.+]] = arith.constant 64 : index
// CHECK:         %[[S:.+]] = memref.dim %arg0, %{{.+}} : memref<?x?xi32>
// CHECK:         %[[BYTES:.+]] = arith.muli %[[S]], %[[C64]] : index
// CHECK:         %[[WS:.+]] = memref.alloc(%[[BYTES]]) {alignment = 64 : i64} : memref<?xi8>
// CHECK:         scf.if
// CHECK-NEXT:      memref.view %[[WS]][%[[C0]]][%{{.+}}] : memref<?xi8> to memref<?xf32>
// CHECK:           memref.alloc(%{{.+}}) : memref<?xf32>
// CHECK:         } else {
// CHECK-NEXT:      memref.view %[[WS]][%[[C0]]][%{{.+}}] : memref<?xi8> to memref<?x2xf32>
// CHECK:           memref.alloc(%{{.+}}) : memref<?xf32>
// CHECK:         scf.for
// CHECK-NEXT:      memref.alloc(%{{.+}}) : memref<?xf32>
// CHECK:         %[[SUM:.+]] = arith.addi
// CHECK-NEXT:    memref.alloc(%[[SUM]]) : memref<?xf32>
// CHECK:         memref.dealloc %[[WS]] : memref<?xi8>
// CHECK-NEXT:    return
func.func @branches(%ids: memref<?x?xi32>, %cond: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = memref.dim %ids, %c0 : memref<?x?xi32>
  %s = memref.dim %ids, %c1 : memref<?x?xi32>
  %r = scf.if %cond -> memref<?xf32> {
    %t = memref.alloc(%s) : memref<?xf32>
    "test.use"(%t) : (memref<?xf32>) -> ()
    memref.dealloc %t : memref<?xf32>
    %k = memref.alloc(%s) : memref<?xf32>
    scf.yield %k : memref<?xf32>
  } else {
    %f = memref.alloc(%s) : memref<?x2xf32>
    "test.use"(%f) : (memref<?x2xf32>) -> ()
    memref.dealloc %f : memref<?x2xf32>
    %k = memref.alloc(%s) : memref<?xf32>
    scf.yield %k : memref<?xf32>
  }
  "test.use"(%r) : (memref<?xf32>) -> ()
  memref.dealloc %r : memref<?xf32>
  scf.for %i = %c0 to %b step %c1 {
    %l = memref.alloc(%s) : memref<?xf32>
    "test.use"(%l) : (memref<?xf32>) -> ()
    memref.dealloc %l : memref<?xf32>
  }
  %sum = arith.addi %b, %s : index
  %p = memref.alloc(%sum) : memref<?xf32>
  "test.use"(%p) : (memref<?xf32>) -> ()
  memref.dealloc %p : memref<?xf32>
  return
}

// A parallel region's scratch (as tfm-cpu-hoist-thread-scratch leaves it):
// omp_get_max_threads() slots for each product, the thread's found with
// omp_get_thread_num(). Per thread: 448 bytes of static scratch (a region
// of its own, first), and 64 + 64 bytes per row of %a and %u.
// CHECK-LABEL: func.func @thread_scratch
// CHECK-DAG:     %[[C64:.+]] = arith.constant 64 : index
// CHECK-DAG:     %[[C128:.+]] = arith.constant 128 : index
// CHECK-DAG:     %[[C448:.+]] = arith.constant 448 : index
// CHECK:         %[[MAX:.+]] = call @omp_get_max_threads() : () -> i32
// CHECK:         %[[T:.+]] = arith.index_cast %[[MAX]] : i32 to index
// CHECK:         %[[STATIC:.+]] = arith.muli %[[T]], %[[C448]] : index
// CHECK:         %[[S:.+]] = memref.dim %arg0, %{{.+}} : memref<?x?xi32>
// CHECK:         %[[TS:.+]] = arith.muli %[[T]], %[[S]] : index
// CHECK:         %[[ROWS:.+]] = arith.muli %[[TS]], %[[C128]] : index
// CHECK:         %[[BYTES:.+]] = arith.addi %[[STATIC]], %[[ROWS]] : index
// CHECK:         %[[S2:.+]] = memref.dim %arg0, %{{.+}} : memref<?x?xi32>
// CHECK:         %[[WS:.+]] = memref.alloc(%[[BYTES]]) {alignment = 64 : i64} : memref<?xi8>
// CHECK:         omp.parallel {
// CHECK-NEXT:      %[[NUM:.+]] = func.call @omp_get_thread_num() : () -> i32
// CHECK-NEXT:      %[[I:.+]] = arith.index_cast %[[NUM]] : i32 to index
// CHECK-NEXT:      %[[SLOT:.+]] = arith.muli %[[S2]], %[[C128]] : index
// CHECK-NEXT:      %[[MINE:.+]] = arith.muli %[[I]], %[[SLOT]] : index
// CHECK-NEXT:      %[[A:.+]] = arith.addi %[[STATIC]], %[[MINE]] : index
// CHECK-NEXT:      memref.view %[[WS]][%[[A]]][%{{.+}}] : memref<?xi8> to memref<?x16xf32>
// CHECK-NEXT:      %[[TAT:.+]] = arith.muli %[[I]], %[[C448]] : index
// CHECK-NEXT:      memref.view %[[WS]][%[[TAT]]][] : memref<?xi8> to memref<1x100xf32>
// CHECK-NEXT:      %[[USKIP:.+]] = arith.muli %[[S2]], %[[C64]] : index
// CHECK-NEXT:      %[[UAT:.+]] = arith.addi %[[A]], %[[USKIP]] : index
// CHECK-NEXT:      memref.view %[[WS]][%[[UAT]]][%{{.+}}] : memref<?xi8> to memref<?x8xbf16>
// CHECK-NEXT:      omp.wsloop
// CHECK-NOT:       memref.dealloc
// CHECK:           omp.terminator
// CHECK:         memref.dealloc %[[WS]] : memref<?xi8>
// CHECK-NEXT:    return
func.func @thread_scratch(%ids: memref<?x?xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %s = memref.dim %ids, %c1 : memref<?x?xi32>
  omp.parallel {
    %a = memref.alloc(%s) {alignment = 64 : i64} : memref<?x16xf32>
    %t = memref.alloc() {alignment = 64 : i64} : memref<1x100xf32>
    %u = memref.alloc(%s) {alignment = 64 : i64} : memref<?x8xbf16>
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%c8) step (%c1) {
        "test.use"(%a, %t, %u) : (memref<?x16xf32>, memref<1x100xf32>, memref<?x8xbf16>) -> ()
        omp.yield
      }
    }
    memref.dealloc %u : memref<?x8xbf16>
    memref.dealloc %t : memref<1x100xf32>
    memref.dealloc %a : memref<?x16xf32>
    omp.terminator
  }
  return
}

// A size read off a collapsed argument: the product of the dims it collapses
// (32 bytes per row, rounded up to 64).
// CHECK-LABEL: func.func @collapsed_size
// CHECK-DAG:     %[[C64:.+]] = arith.constant 64 : index
// CHECK-DAG:     %[[D0:.+]] = memref.dim %arg0, %c0 : memref<?x?x8xf32>
// CHECK-DAG:     %[[D1:.+]] = memref.dim %arg0, %c1 : memref<?x?x8xf32>
// CHECK:         %[[ROWS:.+]] = arith.muli %[[D0]], %[[D1]] : index
// CHECK:         %[[BYTES:.+]] = arith.muli %[[ROWS]], %[[C64]] : index
// CHECK:         %[[WS:.+]] = memref.alloc(%[[BYTES]]) {alignment = 64 : i64} : memref<?xi8>
// CHECK:         memref.view %[[WS]][%{{.+}}][%{{.+}}] : memref<?xi8> to memref<?x8xf32>
func.func @collapsed_size(%x: memref<?x?x8xf32>) {
  %c0 = arith.constant 0 : index
  %flat = memref.collapse_shape %x [[0, 1], [2]] : memref<?x?x8xf32> into memref<?x8xf32>
  %m = memref.dim %flat, %c0 : memref<?x8xf32>
  %a = memref.alloc(%m) : memref<?x8xf32>
  "test.use"(%a) : (memref<?x8xf32>) -> ()
  memref.dealloc %a : memref<?x8xf32>
  return
}

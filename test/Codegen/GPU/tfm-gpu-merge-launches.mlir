// RUN: tfm-opt %s --split-input-file --allow-unregistered-dialect \
// RUN:   --tfm-gpu-merge-launches | FileCheck %s

// Two independent kernels of one shape (k's and v's rows from the same x):
// one launch of both grids, the second kernel's blocks after the first's,
// each body seeing its own block index and grid size. The second kernel's
// output buffer is allocated before the launch.
// CHECK-LABEL: func.func @independent
// CHECK-SAME: %[[X:[^:]*]]: memref<8x64xf32>
// CHECK-SAME: %[[G1:[^:]*]]: index, %[[G2:[^:]*]]: index
// CHECK: %[[A:.*]] = memref.alloc() : memref<8x64xf32>
// CHECK: %[[B:.*]] = memref.alloc() : memref<8x64xf32>
// CHECK: %[[N:.*]] = arith.addi %[[G1]], %[[G2]] : index
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[N]], %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads
// CHECK-NOT: gpu.launch
// CHECK: %[[FIRST:.*]] = arith.cmpi ult, %[[BX]], %[[G1]] : index
// CHECK: scf.if %[[FIRST]] {
// CHECK:   memref.load %[[X]][%[[BX]], %{{.*}}]
// CHECK:   memref.store %{{.*}}, %[[A]][%[[BX]], %{{.*}}]
// CHECK:   "test.grid"(%[[G1]])
// CHECK: } else {
// CHECK:   %[[SHIFTED:.*]] = arith.subi %[[BX]], %[[G1]] : index
// CHECK:   memref.load %[[X]][%[[SHIFTED]], %{{.*}}]
// CHECK:   memref.store %{{.*}}, %[[B]][%[[SHIFTED]], %{{.*}}]
// CHECK:   "test.grid"(%[[G2]])
// CHECK: }
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: return %[[A]], %[[B]]
func.func @independent(%x: memref<8x64xf32>, %g1: index, %g2: index)
    -> (memref<8x64xf32>, memref<8x64xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %a = memref.alloc() : memref<8x64xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %g1, %gy = %c1, %gz = %c1)
      threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%bx, %tx] : memref<8x64xf32>
    memref.store %v, %a[%bx, %tx] : memref<8x64xf32>
    "test.grid"(%gx) : (index) -> ()
    gpu.terminator
  }
  %b = memref.alloc() : memref<8x64xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %g2, %gy = %c1, %gz = %c1)
      threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%bx, %tx] : memref<8x64xf32>
    memref.store %v, %b[%bx, %tx] : memref<8x64xf32>
    "test.grid"(%gx) : (index) -> ()
    gpu.terminator
  }
  return %a, %b : memref<8x64xf32>, memref<8x64xf32>
}

// -----

// The second reads what the first writes (through a view): they stay two
// launches. So do kernels of different threads, and of different dynamic
// shared memory.
// CHECK-LABEL: func.func @dependent
// CHECK-COUNT-4: gpu.launch
// CHECK-NOT: gpu.launch
// CHECK-NOT: arith.addi
func.func @dependent(%x: memref<8x64xf32>, %g: index) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c0_i32 = arith.constant 0 : i32
  %c128_i32 = arith.constant 128 : i32
  %a = memref.alloc() : memref<8x64xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %g, %gy = %c1, %gz = %c1)
      threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%bx, %tx] : memref<8x64xf32>
    memref.store %v, %a[%bx, %tx] : memref<8x64xf32>
    gpu.terminator
  }
  %view = memref.transpose %a (d0, d1) -> (d1, d0)
      : memref<8x64xf32> to memref<64x8xf32, strided<[1, 64]>>
  %b = memref.alloc() : memref<8x64xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %g, %gy = %c1, %gz = %c1)
      threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %view[%tx, %bx] : memref<64x8xf32, strided<[1, 64]>>
    memref.store %v, %b[%bx, %tx] : memref<8x64xf32>
    gpu.terminator
  }
  %c = memref.alloc() : memref<8x64xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %g, %gy = %c1, %gz = %c1)
      threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%bx, %tx] : memref<8x64xf32>
    memref.store %v, %c[%bx, %tx] : memref<8x64xf32>
    gpu.terminator
  }
  %d = memref.alloc() : memref<8x64xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %g, %gy = %c1, %gz = %c1)
      threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
      dynamic_shared_memory_size %c128_i32 {
    %v = memref.load %x[%bx, %tx] : memref<8x64xf32>
    memref.store %v, %d[%bx, %tx] : memref<8x64xf32>
    gpu.terminator
  }
  return
}

// -----

// A projection's tile and few-rows kernels both write its rows; k's
// few-rows kernel joins q's, and k's tile kernel (of another shape), which
// must run before it and does not depend on q's few-rows kernel, moves
// before the merged launch, with the ops that make what it uses. q's RoPE
// (another shape too) stays after it.
// CHECK-LABEL: func.func @moves_dependencies
// CHECK: memref.alloc() {tile_q}
// CHECK: "test.tile"(%[[Q:[^)]*]])
// CHECK: memref.alloc() {tile_k}
// CHECK: arith.muli
// CHECK: "test.tile"(%[[K:[^)]*]])
// CHECK: %[[N:.*]] = arith.addi
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %[[N]],
// CHECK: scf.if
// CHECK:   "test.few"(%[[Q]])
// CHECK: } else {
// CHECK:   "test.few"(%[[K]])
// CHECK: memref.alloc() {rope}
// CHECK: "test.rope"(%[[Q]]
func.func @moves_dependencies(%g: index) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %c1024_i32 = arith.constant 1024 : i32
  %c2048_i32 = arith.constant 2048 : i32
  %q = memref.alloc() {tile_q} : memref<8x64xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %g, %gy = %c1, %gz = %c1)
      threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1)
      dynamic_shared_memory_size %c1024_i32 {
    "test.tile"(%q) : (memref<8x64xf32>) -> ()
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %g, %gy = %c1, %gz = %c1)
      threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    "test.few"(%q) : (memref<8x64xf32>) -> ()
    gpu.terminator
  }
  %r = memref.alloc() {rope} : memref<8x64xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %g, %gy = %c1, %gz = %c1)
      threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    "test.rope"(%q, %r) : (memref<8x64xf32>, memref<8x64xf32>) -> ()
    gpu.terminator
  }
  %k = memref.alloc() {tile_k} : memref<8x64xf32>
  %gk = arith.muli %g, %c64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %gk, %gy = %c1, %gz = %c1)
      threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1)
      dynamic_shared_memory_size %c2048_i32 {
    "test.tile"(%k) : (memref<8x64xf32>) -> ()
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %g, %gy = %c1, %gz = %c1)
      threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    "test.few"(%k) : (memref<8x64xf32>) -> ()
    gpu.terminator
  }
  return
}

// -----

// Arguments of an entry point (tfm-expose-entry-points' functions, with
// their C wrapper) are different memory where one is written: a kernel
// writing one and a kernel writing another merge. Another function's
// arguments may be the same buffer: its kernels stay apart.
// CHECK-LABEL: func.func @entry_point
// CHECK: gpu.launch
// CHECK-NOT: gpu.launch
// CHECK: scf.if
// CHECK-LABEL: func.func @helper
// CHECK-COUNT-2: gpu.launch
func.func @entry_point(%x: memref<64xf32>, %y: memref<64xf32>)
    attributes {llvm.emit_c_interface} {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %cst = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
      threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    memref.store %cst, %x[%tx] : memref<64xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
      threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    memref.store %cst, %y[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}
func.func @helper(%x: memref<64xf32>, %y: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %cst = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
      threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    memref.store %cst, %x[%tx] : memref<64xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
      threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    memref.store %cst, %y[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}

// -----

// What stays apart: a kernel reading its block through gpu.block_id (not
// remapped), one of two rows of blocks, and two with a host op of unknown
// effects between them.
// CHECK-LABEL: func.func @not_mergeable
// CHECK-COUNT-4: gpu.launch
// CHECK-NOT: gpu.launch
// CHECK-NOT: scf.if
func.func @not_mergeable(%x: memref<64xf32>, %y: memref<64xf32>, %z: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %cst = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
      threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    memref.store %cst, %x[%tx] : memref<64xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
      threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %b = gpu.block_id x
    memref.store %cst, %y[%b] : memref<64xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c2, %gz = %c1)
      threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    memref.store %cst, %z[%tx] : memref<64xf32>
    gpu.terminator
  }
  "test.unknown"() : () -> ()
  %a = memref.alloc() : memref<64xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
      threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    memref.store %cst, %a[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}

// RUN: tfm-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tfm-unify-checked-sizes))' | FileCheck %s

// The runtime checks' verdict: the batch of the lengths equals that of the
// ids, and the ids' length equals the positions'. Where it holds, each
// size reads the one of its class defined first; before the check, and
// where it fails, nothing changes. A size only compared by `slt`, or
// only compared as an i32, keeps its value. An if below the top level
// is no check: its condition's equalities stay apart.
// CHECK-LABEL: func.func @checked
// CHECK-SAME: (%[[IDS:[^:]*]]: memref<?x?xi32>, %[[POS:[^:]*]]: memref<?x?xi32>, %[[LENGTHS:[^:]*]]: memref<?xi32>, %[[CACHE:[^:]*]]: memref<?x64xf32>
// CHECK: %[[B:.*]] = memref.dim %[[IDS]], %c0
// CHECK: %[[S:.*]] = memref.dim %[[IDS]], %c1
// CHECK: %[[PS:.*]] = memref.dim %[[POS]], %c1
// CHECK: %[[LB:.*]] = memref.dim %[[LENGTHS]], %c0
// CHECK: %[[CB:.*]] = memref.dim %[[CACHE]], %c0
// CHECK: memref.alloc(%[[LB]], %[[PS]])
// CHECK: scf.if
// CHECK-NEXT: memref.alloc(%[[B]], %[[S]])
// CHECK-NEXT: memref.alloc(%[[B]], %[[S]])
// CHECK-NEXT: memref.alloc(%[[CB]])
// CHECK-NEXT: scf.if
// CHECK-NEXT: memref.alloc(%[[B]], %[[S]])
// CHECK-NEXT: }
// CHECK-NEXT: arith.cmpi eq, %[[CB]], %[[S]]
// CHECK-NEXT: scf.if
// CHECK-NEXT: memref.alloc(%[[CB]])
// CHECK-NEXT: }
// CHECK-NEXT: } else {
// CHECK-NEXT: memref.alloc(%[[LB]], %[[PS]])
func.func @checked(%ids: memref<?x?xi32>, %pos: memref<?x?xi32>, %lengths: memref<?xi32>, %cache: memref<?x64xf32>, %n: i32, %m: i32) -> i1 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = memref.dim %ids, %c0 : memref<?x?xi32>
  %s = memref.dim %ids, %c1 : memref<?x?xi32>
  %ps = memref.dim %pos, %c1 : memref<?x?xi32>
  %lb = memref.dim %lengths, %c0 : memref<?xi32>
  %cb = memref.dim %cache, %c0 : memref<?x64xf32>
  %before = memref.alloc(%lb, %ps) : memref<?x?xf32>
  %same_batch = arith.cmpi eq, %lb, %b : index
  %same_length = arith.cmpi eq, %s, %ps : index
  %fits = arith.cmpi slt, %cb, %b : index
  %same_i32 = arith.cmpi eq, %n, %m : i32
  %a1 = arith.andi %same_batch, %same_length : i1
  %a2 = arith.andi %a1, %fits : i1
  %ok = arith.andi %a2, %same_i32 : i1
  scf.if %ok {
    %x = memref.alloc(%lb, %ps) : memref<?x?xf32>
    %y = memref.alloc(%b, %s) : memref<?x?xf32>
    %z = memref.alloc(%cb) : memref<?xf32>
    // Nested regions are inside too.
    scf.if %ok {
      %w = memref.alloc(%lb, %ps) : memref<?x?xf32>
    }
    %inner = arith.cmpi eq, %cb, %s : index
    scf.if %inner {
      %v = memref.alloc(%cb) : memref<?xf32>
    }
  } else {
    %x = memref.alloc(%lb, %ps) : memref<?x?xf32>
  }
  return %ok : i1
}

// -----

// A size checked equal to a constant reads the constant (a constant wins
// over an argument, and stays one).
// CHECK-LABEL: func.func @constant
// CHECK-SAME: (%[[N:[^:]*]]: index, %[[M:[^:]*]]: memref<?xf32>)
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: scf.if
// CHECK-NEXT: memref.alloc(%[[C4]])
// CHECK-NEXT: memref.load %[[M]][%[[C4]]]
func.func @constant(%n: index, %m: memref<?xf32>) -> i1 {
  %c4 = arith.constant 4 : index
  %ok = arith.cmpi eq, %n, %c4 : index
  scf.if %ok {
    %x = memref.alloc(%n) : memref<?xf32>
    %y = memref.load %m[%n] : memref<?xf32>
  }
  return %ok : i1
}

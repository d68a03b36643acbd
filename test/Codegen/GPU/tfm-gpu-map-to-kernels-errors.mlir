// RUN: tfm-opt %s --split-input-file --verify-diagnostics --pass-pipeline="builtin.module(func.func(tfm-gpu-map-to-kernels))"
// RUN: not tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-gpu-map-to-kernels{block-size=2048}))" 2>&1 | FileCheck %s --check-prefix=BLOCK

// BLOCK: block-size must be in [1, 1024]

func.func @dynamic_scratch(%x: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    // expected-error @below {{of a dynamic size inside a GPU kernel is not supported}}
    %scratch = memref.alloc(%n) : memref<?xf32>
    memref.dealloc %scratch : memref<?xf32>
  }
  return
}

// -----

func.func @reduction(%x: memref<?xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @below {{with reductions has no GPU mapping yet}}
  %sum = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%zero) -> f32 {
    %v = memref.load %x[%i] : memref<?xf32>
    scf.reduce(%v : f32) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  }
  return %sum : f32
}

// -----

func.func @host_region(%x: memref<4xf32>) {
  // expected-error @below {{at host level has no GPU mapping}}
  memref.alloca_scope {
    %c0 = arith.constant 0 : index
  }
  return
}

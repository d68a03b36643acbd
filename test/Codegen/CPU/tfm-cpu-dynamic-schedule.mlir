// RUN: %mlir_opt %s --load-dialect-plugin=%tfm_libs/TfmPlugin%shlibext \
// RUN:   --load-pass-plugin=%tfm_libs/TfmPlugin%shlibext \
// RUN:   --split-input-file --pass-pipeline="builtin.module(convert-scf-to-openmp,tfm-cpu-dynamic-schedule)" \
// RUN:   | FileCheck %s
// Stock mlir-opt cannot load the sanitizer build's plugin.
// UNSUPPORTED: asan

// A parallel tile loop becomes a work-sharing loop that hands its iterations
// out one at a time.
// CHECK-LABEL: func.func @tiles
// CHECK:         omp.parallel
// CHECK:           omp.wsloop schedule(dynamic) {
// CHECK:             omp.loop_nest
func.func @tiles(%out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    memref.store %cst, %out[%i] : memref<64xf32>
    scf.reduce
  }
  return
}

// -----

// A loop whose iterations cost the same (marked in its location) stays on
// the static schedule.
// CHECK-LABEL: func.func @uniform
// CHECK:         omp.wsloop {
func.func @uniform(%out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    memref.store %cst, %out[%i] : memref<64xf32>
    scf.reduce
  } loc(fused<"tfm.static_schedule">["projection.mlir":1:1])
  return
}

// -----

// A loop that already has a schedule keeps it.
// CHECK-LABEL: func.func @scheduled
// CHECK:         omp.wsloop schedule(static) {
func.func @scheduled(%out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 1.0 : f32
  omp.parallel {
    omp.wsloop schedule(static) {
      omp.loop_nest (%i) : index = (%c0) to (%c64) step (%c1) {
        memref.store %cst, %out[%i] : memref<64xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

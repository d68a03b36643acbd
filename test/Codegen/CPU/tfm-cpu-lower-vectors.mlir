// RUN: tfm-opt %s --pass-pipeline="builtin.module(func.func(tfm-cpu-lower-vectors))" --split-input-file | FileCheck %s
// RUN: not tfm-opt %s --pass-pipeline="builtin.module(func.func(tfm-cpu-lower-vectors{vector-width=-8}))" --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: vector-width and register-rows must be positive, got vector-width=-8 register-rows=8

// The output block of a rank-1-update loop is read before the loop and
// written after it (it lives in registers), and each update is a broadcast
// of one left element times a row of the right operand.
// CHECK-LABEL: func.func @register_block
// CHECK:       vector.transfer_read %{{.+}} : memref<8x32xf32>, vector<8x32xf32>
// CHECK:       scf.for
// CHECK-NOT:     vector.transfer_write
// CHECK-COUNT-8: vector.fma {{.+}} : vector<32xf32>
// CHECK:       }
// CHECK:       vector.transfer_write %{{.+}} : vector<8x32xf32>, memref<8x32xf32>
#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#acc = affine_map<(m, n, k) -> (m, n)>
func.func @register_block(%a: memref<8x128xf32>, %b: memref<128x32xf32>,
                          %c: memref<8x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %pad = arith.constant 0.0 : f32
  scf.for %k = %c0 to %c128 step %c1 {
    %l = vector.transfer_read %a[%c0, %k], %pad {in_bounds = [true, true]} : memref<8x128xf32>, vector<8x1xf32>
    %r = vector.transfer_read %b[%k, %c0], %pad {in_bounds = [true, true]} : memref<128x32xf32>, vector<1x32xf32>
    %o = vector.transfer_read %c[%c0, %c0], %pad {in_bounds = [true, true]} : memref<8x32xf32>, vector<8x32xf32>
    %p = vector.contract {indexing_maps = [#lhs, #rhs, #acc],
                          iterator_types = ["parallel", "parallel", "reduction"],
                          kind = #vector.kind<add>} %l, %r, %o
        : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
    vector.transfer_write %p, %c[%c0, %c0] {in_bounds = [true, true]} : vector<8x32xf32>, memref<8x32xf32>
  }
  return
}

// -----

// f32 exp becomes a polynomial: no math.exp (a libm call) is left.
// CHECK-LABEL: func.func @exp
// CHECK-NOT:   math.exp
// CHECK:       math.fma
// CHECK-NOT:   math.exp
func.func @exp(%x: vector<64xf32>) -> vector<64xf32> {
  %0 = math.exp %x : vector<64xf32>
  return %0 : vector<64xf32>
}

// -----

// An f32 read of a row longer than one register becomes one read per
// register, in address order; bf16 reads and blocks of several rows stay
// whole.
// CHECK-LABEL: func.func @row_read
// CHECK-DAG:   %[[C16:.+]] = arith.constant 16 : index
// CHECK-DAG:   %[[C32:.+]] = arith.constant 32 : index
// CHECK-DAG:   %[[C48:.+]] = arith.constant 48 : index
// CHECK:       vector.transfer_read %{{.+}}[%{{.+}}, %c0]{{.+}} : memref<8x64xf32>, vector<1x16xf32>
// CHECK-NEXT:  vector.insert_strided_slice
// CHECK-NEXT:  vector.transfer_read %{{.+}}[%{{.+}}, %[[C16]]]{{.+}} : memref<8x64xf32>, vector<1x16xf32>
// CHECK-NEXT:  vector.insert_strided_slice
// CHECK-NEXT:  vector.transfer_read %{{.+}}[%{{.+}}, %[[C32]]]{{.+}} : memref<8x64xf32>, vector<1x16xf32>
// CHECK-NEXT:  vector.insert_strided_slice
// CHECK-NEXT:  vector.transfer_read %{{.+}}[%{{.+}}, %[[C48]]]{{.+}} : memref<8x64xf32>, vector<1x16xf32>
// CHECK:       vector.transfer_read {{.+}} : memref<8x64xbf16>, vector<1x64xbf16>
// CHECK:       vector.transfer_read {{.+}} : memref<8x64xf32>, vector<2x32xf32>
func.func @row_read(%a: memref<8x64xf32>, %b: memref<8x64xbf16>, %i: index)
    -> (vector<1x64xf32>, vector<1x64xbf16>, vector<2x32xf32>) {
  %c0 = arith.constant 0 : index
  %f = arith.constant 0.0 : f32
  %h = arith.constant 0.0 : bf16
  %0 = vector.transfer_read %a[%i, %c0], %f {in_bounds = [true, true]} : memref<8x64xf32>, vector<1x64xf32>
  %1 = vector.transfer_read %b[%i, %c0], %h {in_bounds = [true, true]} : memref<8x64xbf16>, vector<1x64xbf16>
  %2 = vector.transfer_read %a[%i, %c0], %f {in_bounds = [true, true]} : memref<8x64xf32>, vector<2x32xf32>
  return %0, %1, %2 : vector<1x64xf32>, vector<1x64xbf16>, vector<2x32xf32>
}

// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-gpu-flash-attention))" | FileCheck %s

// A bf16 attention the kernel takes: its operands read in place as buffers
// (any strides, unit innermost), the sizes the verifier could not compare
// asserted, the result written into a new buffer handed on as a tensor.
// CHECK-LABEL: func.func @taken
// CHECK-SAME: (%[[Q:.*]]: tensor<?x8x?x64xbf16>, %[[K:.*]]: tensor<?x2x?x64xbf16>, %[[V:.*]]: tensor<?x2x?x64xbf16>, %[[L:.*]]: tensor<?xi32>)
// CHECK: %[[QB:.*]] = bufferization.to_buffer %[[Q]] read_only : tensor<?x8x?x64xbf16> to memref<?x8x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
// CHECK: %[[KB:.*]] = bufferization.to_buffer %[[K]] read_only
// CHECK: %[[VB:.*]] = bufferization.to_buffer %[[V]] read_only
// CHECK: %[[LB:.*]] = bufferization.to_buffer %[[L]] read_only : tensor<?xi32> to memref<?xi32, strided<[1], offset: ?>>
// CHECK-COUNT-4: cf.assert %{{.*}}, "attention operand sizes differ"
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x8x?x64xbf16>
// CHECK: tfm.buffer_attention %[[QB]], %[[KB]], %[[VB]] kv_lengths(%[[LB]] : memref<?xi32, strided<[1], offset: ?>>) into %[[OUT]] {mask = #tfm.mask<causal>, softcap = 5.000000e+01 : f32}
// CHECK: %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
// CHECK: return %[[R]]
func.func @taken(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>,
    %v: tensor<?x2x?x64xbf16>, %l: tensor<?xi32>) -> tensor<?x8x?x64xbf16> {
  %o = tfm.attention %q, %k, %v kv_lengths(%l) {mask = #tfm.mask<causal>, softcap = 50.0 : f32}
      : (tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?xi32>)
      -> tensor<?x8x?x64xbf16>
  return %o : tensor<?x8x?x64xbf16>
}

// -----

// Static sizes: nothing to assert.
// CHECK-LABEL: func.func @static_f16_d128
// CHECK-NOT: cf.assert
// CHECK: tfm.buffer_attention
// CHECK-SAME: into memref<1x4x100x128xf16>
func.func @static_f16_d128(%q: tensor<1x4x100x128xf16>, %k: tensor<1x4x100x128xf16>,
    %v: tensor<1x4x100x128xf16>) -> tensor<1x4x100x128xf16> {
  %o = tfm.attention %q, %k, %v {mask = #tfm.mask<sliding_window<70>>}
      : (tensor<1x4x100x128xf16>, tensor<1x4x100x128xf16>, tensor<1x4x100x128xf16>)
      -> tensor<1x4x100x128xf16>
  return %o : tensor<1x4x100x128xf16>
}

// -----

// What the kernel does not take keeps tfm.attention: f32, a head dim other
// than 64 or 128, a dense mask, a bias.
// CHECK-LABEL: func.func @not_taken
// CHECK-NOT: buffer_attention
// CHECK-COUNT-4: tfm.attention
func.func @not_taken(%q32: tensor<1x2x8x64xf32>, %q: tensor<1x2x8x32xbf16>,
    %q64: tensor<1x2x8x64xbf16>, %m: tensor<1x1x8x8xi1>, %b: tensor<1x2x8x8xbf16>)
    -> (tensor<1x2x8x64xf32>, tensor<1x2x8x32xbf16>, tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>) {
  %0 = tfm.attention %q32, %q32, %q32
      : (tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>) -> tensor<1x2x8x64xf32>
  %1 = tfm.attention %q, %q, %q
      : (tensor<1x2x8x32xbf16>, tensor<1x2x8x32xbf16>, tensor<1x2x8x32xbf16>) -> tensor<1x2x8x32xbf16>
  %2 = tfm.attention %q64, %q64, %q64 dense_mask(%m)
      : (tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>, tensor<1x1x8x8xi1>)
      -> tensor<1x2x8x64xbf16>
  %3 = tfm.attention %q64, %q64, %q64 bias(%b)
      : (tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>, tensor<1x2x8x8xbf16>)
      -> tensor<1x2x8x64xbf16>
  return %0, %1, %2, %3 : tensor<1x2x8x64xf32>, tensor<1x2x8x32xbf16>, tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>
}

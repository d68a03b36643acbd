// RUN: tfm-opt %s --split-input-file --verify-diagnostics

// Verifier diagnostics of tfm.fused_projections, one case per message.

func.func @result_types(%x: tensor<4x8xf32>) -> tensor<4x8xf16> {
  // expected-error @+1 {{'tfm.fused_projections' op expected the body to yield values of the result types, in order}}
  %r = tfm.fused_projections -> tensor<4x8xf16> {
    tfm.yield %x : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf16>
}

// -----

func.func @result_count(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'tfm.fused_projections' op expected the body to yield values of the result types, in order}}
  %r = tfm.fused_projections -> tensor<4x8xf32> {
    tfm.yield %x, %x : tensor<4x8xf32>, tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

// The body ends with tfm.yield (implicit where nothing is yielded).
func.func @terminator() {
  "tfm.fused_projections"() ({
    // expected-error @+1 {{block with no terminator}}
    %c = "arith.constant"() <{value = 0 : i32}> : () -> i32
  }) : () -> ()
  return
}

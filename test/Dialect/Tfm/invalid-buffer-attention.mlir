// RUN: tfm-opt %s --split-input-file --verify-diagnostics

// Verifier diagnostics of tfm.buffer_attention, one case per message.

func.func @element_types(%q: memref<1x2x4x64xbf16>, %k: memref<1x2x4x64xf16>,
    %v: memref<1x2x4x64xbf16>, %o: memref<1x2x4x64xbf16>) {
  // expected-error @+1 {{'tfm.buffer_attention' op failed to verify that all of {query, key, value, result} have same element type}}
  tfm.buffer_attention %q, %k, %v into %o
      : memref<1x2x4x64xbf16>, memref<1x2x4x64xf16>, memref<1x2x4x64xbf16> into memref<1x2x4x64xbf16>
  return
}

// -----

func.func @query_rank(%q: memref<2x4x64xbf16>, %k: memref<1x2x4x64xbf16>,
    %v: memref<1x2x4x64xbf16>, %o: memref<1x2x4x64xbf16>) {
  // expected-error @+1 {{'tfm.buffer_attention' op operand #0 must be 4D memref of 32-bit float or 16-bit float or bfloat16 type values}}
  tfm.buffer_attention %q, %k, %v into %o
      : memref<2x4x64xbf16>, memref<1x2x4x64xbf16>, memref<1x2x4x64xbf16> into memref<1x2x4x64xbf16>
  return
}

// -----

func.func @dynamic_heads(%q: memref<1x?x4x64xbf16>, %k: memref<1x2x4x64xbf16>,
    %v: memref<1x2x4x64xbf16>, %o: memref<1x2x4x64xbf16>) {
  // expected-error @+1 {{'tfm.buffer_attention' op expected query head count to be static}}
  tfm.buffer_attention %q, %k, %v into %o
      : memref<1x?x4x64xbf16>, memref<1x2x4x64xbf16>, memref<1x2x4x64xbf16> into memref<1x2x4x64xbf16>
  return
}

// -----

func.func @heads_do_not_divide(%q: memref<1x3x4x64xbf16>, %k: memref<1x2x4x64xbf16>,
    %v: memref<1x2x4x64xbf16>, %o: memref<1x3x4x64xbf16>) {
  // expected-error @+1 {{'tfm.buffer_attention' op expected key head count (2) to divide query head count (3)}}
  tfm.buffer_attention %q, %k, %v into %o
      : memref<1x3x4x64xbf16>, memref<1x2x4x64xbf16>, memref<1x2x4x64xbf16> into memref<1x3x4x64xbf16>
  return
}

// -----

func.func @value_length(%q: memref<1x2x4x64xbf16>, %k: memref<1x2x4x64xbf16>,
    %v: memref<1x2x5x64xbf16>, %o: memref<1x2x4x64xbf16>) {
  // expected-error @+1 {{'tfm.buffer_attention' op expected value length (5) to match key length (4)}}
  tfm.buffer_attention %q, %k, %v into %o
      : memref<1x2x4x64xbf16>, memref<1x2x4x64xbf16>, memref<1x2x5x64xbf16> into memref<1x2x4x64xbf16>
  return
}

// -----

func.func @result_length(%q: memref<1x2x4x64xbf16>, %k: memref<1x2x4x64xbf16>,
    %v: memref<1x2x4x64xbf16>, %o: memref<1x2x3x64xbf16>) {
  // expected-error @+1 {{'tfm.buffer_attention' op expected result length (3) to match query length (4)}}
  tfm.buffer_attention %q, %k, %v into %o
      : memref<1x2x4x64xbf16>, memref<1x2x4x64xbf16>, memref<1x2x4x64xbf16> into memref<1x2x3x64xbf16>
  return
}

// -----

func.func @result_head_dim(%q: memref<1x2x4x64xbf16>, %k: memref<1x2x4x64xbf16>,
    %v: memref<1x2x4x32xbf16>, %o: memref<1x2x4x64xbf16>) {
  // expected-error @+1 {{'tfm.buffer_attention' op expected result head dim (64) to match value head dim (32)}}
  tfm.buffer_attention %q, %k, %v into %o
      : memref<1x2x4x64xbf16>, memref<1x2x4x64xbf16>, memref<1x2x4x32xbf16> into memref<1x2x4x64xbf16>
  return
}

// -----

func.func @kv_lengths_size(%q: memref<2x2x4x64xbf16>, %k: memref<2x2x4x64xbf16>,
    %v: memref<2x2x4x64xbf16>, %l: memref<3xi32>, %o: memref<2x2x4x64xbf16>) {
  // expected-error @+1 {{'tfm.buffer_attention' op expected kv_lengths size (3) to match batch (2)}}
  tfm.buffer_attention %q, %k, %v kv_lengths(%l : memref<3xi32>) into %o
      : memref<2x2x4x64xbf16>, memref<2x2x4x64xbf16>, memref<2x2x4x64xbf16> into memref<2x2x4x64xbf16>
  return
}

// -----

func.func @softcap(%q: memref<1x2x4x64xbf16>, %k: memref<1x2x4x64xbf16>,
    %v: memref<1x2x4x64xbf16>, %o: memref<1x2x4x64xbf16>) {
  // expected-error @+1 {{'tfm.buffer_attention' op expected softcap to be positive, got 0}}
  tfm.buffer_attention %q, %k, %v into %o {softcap = 0.0 : f32}
      : memref<1x2x4x64xbf16>, memref<1x2x4x64xbf16>, memref<1x2x4x64xbf16> into memref<1x2x4x64xbf16>
  return
}

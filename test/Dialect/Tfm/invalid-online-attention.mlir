// RUN: tfm-opt %s --split-input-file --verify-diagnostics

// Verifier diagnostics of tfm.online_attention, one case per message.

func.func @query_rank(%q: tensor<8xf32>, %k: tensor<32x64xf32>, %v: tensor<32x64xf32>,
    %m: tensor<8xf32>, %l: tensor<8xf32>, %acc: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'tfm.online_attention' op expected query to have rank 2 [M, D], got rank 1}}
  %r:3 = tfm.online_attention ins(%q, %k, %v : tensor<8xf32>, tensor<32x64xf32>, tensor<32x64xf32>)
      outs(%m, %l, %acc : tensor<8xf32>, tensor<8xf32>, tensor<8x64xf32>) {
  ^bb0(%dot: f32, %row: index, %key: index):
    tfm.yield %dot : f32
  } -> tensor<8xf32>, tensor<8xf32>, tensor<8x64xf32>
  return %r#2 : tensor<8x64xf32>
}

// -----

func.func @key_rank(%q: tensor<8x64xf32>, %k: tensor<1x32x64xf32>, %v: tensor<32x64xf32>,
    %m: tensor<8xf32>, %l: tensor<8xf32>, %acc: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'tfm.online_attention' op expected key to have rank 2 [N, D], got rank 3}}
  %r:3 = tfm.online_attention ins(%q, %k, %v : tensor<8x64xf32>, tensor<1x32x64xf32>, tensor<32x64xf32>)
      outs(%m, %l, %acc : tensor<8xf32>, tensor<8xf32>, tensor<8x64xf32>) {
  ^bb0(%dot: f32, %row: index, %key: index):
    tfm.yield %dot : f32
  } -> tensor<8xf32>, tensor<8xf32>, tensor<8x64xf32>
  return %r#2 : tensor<8x64xf32>
}

// -----

func.func @value_rank(%q: tensor<8x64xf32>, %k: tensor<32x64xf32>, %v: tensor<32xf32>,
    %m: tensor<8xf32>, %l: tensor<8xf32>, %acc: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'tfm.online_attention' op expected value to have rank 2 [N, Dv], got rank 1}}
  %r:3 = tfm.online_attention ins(%q, %k, %v : tensor<8x64xf32>, tensor<32x64xf32>, tensor<32xf32>)
      outs(%m, %l, %acc : tensor<8xf32>, tensor<8xf32>, tensor<8x64xf32>) {
  ^bb0(%dot: f32, %row: index, %key: index):
    tfm.yield %dot : f32
  } -> tensor<8xf32>, tensor<8xf32>, tensor<8x64xf32>
  return %r#2 : tensor<8x64xf32>
}

// -----

func.func @max_rank(%q: tensor<8x64xf32>, %k: tensor<32x64xf32>, %v: tensor<32x64xf32>,
    %m: tensor<8x1xf32>, %l: tensor<8xf32>, %acc: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'tfm.online_attention' op expected max to have rank 1 [M], got rank 2}}
  %r:3 = tfm.online_attention ins(%q, %k, %v : tensor<8x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>)
      outs(%m, %l, %acc : tensor<8x1xf32>, tensor<8xf32>, tensor<8x64xf32>) {
  ^bb0(%dot: f32, %row: index, %key: index):
    tfm.yield %dot : f32
  } -> tensor<8x1xf32>, tensor<8xf32>, tensor<8x64xf32>
  return %r#2 : tensor<8x64xf32>
}

// -----

func.func @sum_rank(%q: tensor<8x64xf32>, %k: tensor<32x64xf32>, %v: tensor<32x64xf32>,
    %m: tensor<8xf32>, %l: tensor<8x1xf32>, %acc: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'tfm.online_attention' op expected sum to have rank 1 [M], got rank 2}}
  %r:3 = tfm.online_attention ins(%q, %k, %v : tensor<8x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>)
      outs(%m, %l, %acc : tensor<8xf32>, tensor<8x1xf32>, tensor<8x64xf32>) {
  ^bb0(%dot: f32, %row: index, %key: index):
    tfm.yield %dot : f32
  } -> tensor<8xf32>, tensor<8x1xf32>, tensor<8x64xf32>
  return %r#2 : tensor<8x64xf32>
}

// -----

func.func @acc_rank(%q: tensor<8x64xf32>, %k: tensor<32x64xf32>, %v: tensor<32x64xf32>,
    %m: tensor<8xf32>, %l: tensor<8xf32>, %acc: tensor<512xf32>) -> tensor<512xf32> {
  // expected-error @+1 {{'tfm.online_attention' op expected acc to have rank 2 [M, Dv], got rank 1}}
  %r:3 = tfm.online_attention ins(%q, %k, %v : tensor<8x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>)
      outs(%m, %l, %acc : tensor<8xf32>, tensor<8xf32>, tensor<512xf32>) {
  ^bb0(%dot: f32, %row: index, %key: index):
    tfm.yield %dot : f32
  } -> tensor<8xf32>, tensor<8xf32>, tensor<512xf32>
  return %r#2 : tensor<512xf32>
}

// -----

func.func @key_dim(%q: tensor<8x64xf32>, %k: tensor<32x48xf32>, %v: tensor<32x64xf32>,
    %m: tensor<8xf32>, %l: tensor<8xf32>, %acc: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'tfm.online_attention' op expected key dim (48) to match query dim (64)}}
  %r:3 = tfm.online_attention ins(%q, %k, %v : tensor<8x64xf32>, tensor<32x48xf32>, tensor<32x64xf32>)
      outs(%m, %l, %acc : tensor<8xf32>, tensor<8xf32>, tensor<8x64xf32>) {
  ^bb0(%dot: f32, %row: index, %key: index):
    tfm.yield %dot : f32
  } -> tensor<8xf32>, tensor<8xf32>, tensor<8x64xf32>
  return %r#2 : tensor<8x64xf32>
}

// -----

func.func @value_rows(%q: tensor<8x64xf32>, %k: tensor<32x64xf32>, %v: tensor<16x64xf32>,
    %m: tensor<8xf32>, %l: tensor<8xf32>, %acc: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'tfm.online_attention' op expected value rows (16) to match key rows (32)}}
  %r:3 = tfm.online_attention ins(%q, %k, %v : tensor<8x64xf32>, tensor<32x64xf32>, tensor<16x64xf32>)
      outs(%m, %l, %acc : tensor<8xf32>, tensor<8xf32>, tensor<8x64xf32>) {
  ^bb0(%dot: f32, %row: index, %key: index):
    tfm.yield %dot : f32
  } -> tensor<8xf32>, tensor<8xf32>, tensor<8x64xf32>
  return %r#2 : tensor<8x64xf32>
}

// -----

func.func @max_rows(%q: tensor<8x64xf32>, %k: tensor<32x64xf32>, %v: tensor<32x64xf32>,
    %m: tensor<4xf32>, %l: tensor<8xf32>, %acc: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'tfm.online_attention' op expected max rows (4) to match query rows (8)}}
  %r:3 = tfm.online_attention ins(%q, %k, %v : tensor<8x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>)
      outs(%m, %l, %acc : tensor<4xf32>, tensor<8xf32>, tensor<8x64xf32>) {
  ^bb0(%dot: f32, %row: index, %key: index):
    tfm.yield %dot : f32
  } -> tensor<4xf32>, tensor<8xf32>, tensor<8x64xf32>
  return %r#2 : tensor<8x64xf32>
}

// -----

func.func @sum_rows(%q: tensor<8x64xf32>, %k: tensor<32x64xf32>, %v: tensor<32x64xf32>,
    %m: tensor<8xf32>, %l: tensor<4xf32>, %acc: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'tfm.online_attention' op expected sum rows (4) to match query rows (8)}}
  %r:3 = tfm.online_attention ins(%q, %k, %v : tensor<8x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>)
      outs(%m, %l, %acc : tensor<8xf32>, tensor<4xf32>, tensor<8x64xf32>) {
  ^bb0(%dot: f32, %row: index, %key: index):
    tfm.yield %dot : f32
  } -> tensor<8xf32>, tensor<4xf32>, tensor<8x64xf32>
  return %r#2 : tensor<8x64xf32>
}

// -----

func.func @acc_rows(%q: tensor<8x64xf32>, %k: tensor<32x64xf32>, %v: tensor<32x64xf32>,
    %m: tensor<8xf32>, %l: tensor<8xf32>, %acc: tensor<4x64xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{'tfm.online_attention' op expected acc rows (4) to match query rows (8)}}
  %r:3 = tfm.online_attention ins(%q, %k, %v : tensor<8x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>)
      outs(%m, %l, %acc : tensor<8xf32>, tensor<8xf32>, tensor<4x64xf32>) {
  ^bb0(%dot: f32, %row: index, %key: index):
    tfm.yield %dot : f32
  } -> tensor<8xf32>, tensor<8xf32>, tensor<4x64xf32>
  return %r#2 : tensor<4x64xf32>
}

// -----

func.func @acc_width(%q: tensor<8x64xf32>, %k: tensor<32x64xf32>, %v: tensor<32x48xf32>,
    %m: tensor<8xf32>, %l: tensor<8xf32>, %acc: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'tfm.online_attention' op expected acc width (64) to match value width (48)}}
  %r:3 = tfm.online_attention ins(%q, %k, %v : tensor<8x64xf32>, tensor<32x64xf32>, tensor<32x48xf32>)
      outs(%m, %l, %acc : tensor<8xf32>, tensor<8xf32>, tensor<8x64xf32>) {
  ^bb0(%dot: f32, %row: index, %key: index):
    tfm.yield %dot : f32
  } -> tensor<8xf32>, tensor<8xf32>, tensor<8x64xf32>
  return %r#2 : tensor<8x64xf32>
}

// -----

func.func @body_arguments(%q: tensor<8x64xf32>, %k: tensor<32x64xf32>, %v: tensor<32x64xf32>,
    %m: tensor<8xf32>, %l: tensor<8xf32>, %acc: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'tfm.online_attention' op expected the body's arguments to be (f32, index, index): the dot product, its row and its key}}
  %r:3 = tfm.online_attention ins(%q, %k, %v : tensor<8x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>)
      outs(%m, %l, %acc : tensor<8xf32>, tensor<8xf32>, tensor<8x64xf32>) {
  ^bb0(%dot: f32, %row: i32, %key: index):
    tfm.yield %dot : f32
  } -> tensor<8xf32>, tensor<8xf32>, tensor<8x64xf32>
  return %r#2 : tensor<8x64xf32>
}

// -----

func.func @yield_outside(%x: f32) -> f32 {
  // expected-error @+1 {{'tfm.yield' op expects parent op to be one of 'tfm.online_attention, tfm.fused_projections'}}
  tfm.yield %x : f32
}

// -----

func.func @score_type(%q: tensor<8x64xf32>, %k: tensor<32x64xf32>, %v: tensor<32x64xf32>,
    %m: tensor<8xf32>, %l: tensor<8xf32>, %acc: tensor<8x64xf32>, %x: f16) -> tensor<8x64xf32> {
  // expected-error @+1 {{'tfm.online_attention' op expected the body to yield one f32 score}}
  %r:3 = tfm.online_attention ins(%q, %k, %v : tensor<8x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>)
      outs(%m, %l, %acc : tensor<8xf32>, tensor<8xf32>, tensor<8x64xf32>) {
  ^bb0(%dot: f32, %row: index, %key: index):
    tfm.yield %x : f16
  } -> tensor<8xf32>, tensor<8xf32>, tensor<8x64xf32>
  return %r#2 : tensor<8x64xf32>
}

// -----

func.func @score_count(%q: tensor<8x64xf32>, %k: tensor<32x64xf32>, %v: tensor<32x64xf32>,
    %m: tensor<8xf32>, %l: tensor<8xf32>, %acc: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'tfm.online_attention' op expected the body to yield one f32 score}}
  %r:3 = tfm.online_attention ins(%q, %k, %v : tensor<8x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>)
      outs(%m, %l, %acc : tensor<8xf32>, tensor<8xf32>, tensor<8x64xf32>) {
  ^bb0(%dot: f32, %row: index, %key: index):
    tfm.yield %dot, %dot : f32, f32
  } -> tensor<8xf32>, tensor<8xf32>, tensor<8x64xf32>
  return %r#2 : tensor<8x64xf32>
}

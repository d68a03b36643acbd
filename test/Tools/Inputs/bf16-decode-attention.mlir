// Decode attention (one query a head) with a KV cache: bf16 GQA with
// kv_lengths at head dim 64, f16 causal with a softcap at 128.
func.func @decode64(%q: tensor<?x32x1x64xbf16>, %k: tensor<?x4x?x64xbf16>,
    %v: tensor<?x4x?x64xbf16>, %l: tensor<?xi32>) -> tensor<?x32x1x64xbf16> {
  %o = tfm.attention %q, %k, %v kv_lengths(%l)
      : (tensor<?x32x1x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?xi32>)
      -> tensor<?x32x1x64xbf16>
  return %o : tensor<?x32x1x64xbf16>
}
func.func @decode128(%q: tensor<?x32x1x128xf16>, %k: tensor<?x8x?x128xf16>,
    %v: tensor<?x8x?x128xf16>) -> tensor<?x32x1x128xf16> {
  %o = tfm.attention %q, %k, %v {mask = #tfm.mask<causal>, softcap = 30.0 : f32}
      : (tensor<?x32x1x128xf16>, tensor<?x8x?x128xf16>, tensor<?x8x?x128xf16>)
      -> tensor<?x32x1x128xf16>
  return %o : tensor<?x32x1x128xf16>
}

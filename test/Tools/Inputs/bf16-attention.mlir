func.func @attention(%q: tensor<?x8x?x128xbf16>, %k: tensor<?x2x?x128xbf16>,
    %v: tensor<?x2x?x128xbf16>) -> tensor<?x8x?x128xbf16> {
  %o = tfm.attention %q, %k, %v {mask = #tfm.mask<causal>}
      : (tensor<?x8x?x128xbf16>, tensor<?x2x?x128xbf16>, tensor<?x2x?x128xbf16>)
      -> tensor<?x8x?x128xbf16>
  return %o : tensor<?x8x?x128xbf16>
}

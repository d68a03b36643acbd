//===- Passes.td - tfm transformation passes ---------------*- tablegen -*-===//

#ifndef TFM_DIALECT_TFM_TRANSFORMS_PASSES_TD
#define TFM_DIALECT_TFM_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TfmDecomposePass : Pass<"tfm-decompose"> {
  let summary = "expand composite tfm ops into primitive tfm ops";
  let description = [{
    Rewrites `tfm.decoder_block` into norms, `tfm.self_attention`,
    `tfm.ffn` and `arith.addf` residuals, and `tfm.self_attention` into
    `tfm.linear`, `tfm.split_heads`, `tfm.rope`, `tfm.attention` and
    `tfm.merge_heads`. Primitive ops are left alone.

    Before:

    ```mlir
    %y = tfm.self_attention %x heads(4, 2) q(%wq) k(%wk) v(%wv) o(%wo)
        {mask = #tfm.mask<causal>}
        : (tensor<2x7x64xf32>, tensor<64x64xf32>, tensor<32x64xf32>,
           tensor<32x64xf32>, tensor<64x64xf32>) -> tensor<2x7x64xf32>
    ```

    After:

    ```mlir
    %q = tfm.linear %x, %wq : (...) -> tensor<2x7x64xf32>
    %k = tfm.linear %x, %wk : (...) -> tensor<2x7x32xf32>
    %v = tfm.linear %x, %wv : (...) -> tensor<2x7x32xf32>
    %qh = tfm.split_heads %q : tensor<2x7x64xf32> -> tensor<2x4x7x16xf32>
    %kh = tfm.split_heads %k : tensor<2x7x32xf32> -> tensor<2x2x7x16xf32>
    %vh = tfm.split_heads %v : tensor<2x7x32xf32> -> tensor<2x2x7x16xf32>
    %o = tfm.attention %qh, %kh, %vh {mask = #tfm.mask<causal>} : (...)
        -> tensor<2x4x7x16xf32>
    %m = tfm.merge_heads %o : tensor<2x4x7x16xf32> -> tensor<2x7x64xf32>
    %y = tfm.linear %m, %wo : (...) -> tensor<2x7x64xf32>
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def TfmTileAttentionPass : Pass<"tfm-tile-attention"> {
  let summary = "tile tfm.attention into loops with online softmax";
  let description = [{
    Rewrites every `tfm.attention` into FlashAttention-2-style loops on
    tensors, target-independently (vectorization and threads are the
    target pipelines' job):

    ```
    scf.forall (b, kv head h, query tile t) {        // independent tiles
      q = f32 [G*TQ, D]: the TQ query rows of tile t for each of the G
          query heads of group h, stacked (rows past Sq repeat the last)
      [kBegin, kEnd) = keys any row of the tile can see (mask band and
                       kv_lengths[b]): fully masked tiles are never visited
      m = -inf, l = 0, acc = 0                        // f32 [G*TQ], [G*TQ, Dv]
      scf.for k0 = floor(kBegin, TK) to kEnd step TK {
        kt = f32 K[k0:k0+TK]ᵀ [D, TK]                 // one K tile for all G heads
        s = scale * q · kt (+ softcap, bias)          // linalg.matmul
        s = element mask, only on tiles the band cuts or the last, partial
            tile (scf.if)
        m' = max(m, rowmax(s));  p = exp(s - m');  α = exp(m - m')
        l = α·l + rowsum(p);     acc = α·acc + p · V[k0:k0+TK]
      }
      out[b, group h, tile t] = l == 0 ? 0 : acc / l
    }
    ```

    Every tile has a static shape: the last, partial key tile reads clamped
    key indices and masks the padding, so the score and value products are
    plain static `linalg.matmul`s that a target can tile to registers. A
    full f32 V tile is read in place. A static query shorter than
    `tile-size-q` (decode) gets a tile of its own length.

    Such a short query, whose (batch, kv head) tiles alone may leave threads
    idle, is also split along the keys (flash-decoding): the forall runs
    over (b, h, split s), each split attends to its own run of the visible
    key tiles and writes its normalized rows `o_s` and their log-sum-exp
    `lse_s = m_s + log(l_s)`, and a merge combines them:

    ```
    M = max_s lse_s;  w_s = exp(lse_s - M) (0 where lse_s = -inf: no key)
    out = Σ_s w_s·o_s / Σ_s w_s          (0 where the sum is 0)
    ```

    No `Sq x Skv` tensor exists: the largest is the `[G*TQ, TK]` score
    tile. Rows that see no key produce zeros; a growing max rescales by
    `exp(m - m')`, so `|scores|` up to 1e4 cannot overflow. Dynamic sizes
    the loops rely on (key vs value length, batch of every operand, mask and
    bias dims) are asserted with `cf.assert`, which
    `tfm-insert-runtime-checks` turns into entry-point status checks.
  }];
  let options = [
    Option<"tileSizeQ", "tile-size-q", "int64_t", /*default=*/"64",
           "Query rows per tile">,
    Option<"tileSizeKv", "tile-size-kv", "int64_t", /*default=*/"64",
           "Keys per tile">,
    Option<"kvSplits", "kv-splits", "int64_t", /*default=*/"0",
           "Key-range splits of a static query that fits one tile "
           "(flash-decoding): 0 picks enough for 16 (batch, kv head, split) "
           "work items at batch 1, 1 disables splitting">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::cf::ControlFlowDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // TFM_DIALECT_TFM_TRANSFORMS_PASSES_TD

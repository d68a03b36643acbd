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

def TfmFuseRowSelectionPass : Pass<"tfm-fuse-row-selection"> {
  let summary = "select rows before the row-wise ops that produce them";
  let description = [{
    A `tensor.extract_slice` that selects rows (leading dims; unit strides,
    the last dim whole) of the result of a row-wise op becomes the same op
    on the selected rows of its row-wise operands, repeatedly: the input of
    `tfm.linear`, `tfm.rms_norm`, `tfm.layer_norm` and `tfm.ffn`, the ids of
    `tfm.embedding`, and every operand of an elementwise op (`arith.addf`
    residuals). It stops at ops whose rows mix (attention) and at values
    used other than through the same selection, which would then be
    computed twice. A model description with `"logits": "last"` selects the
    last position after its LM head; this pass moves the selection before
    the LM head, the final norm and, in a pre-norm model, the last layer's
    FFN, its residual adds and its output projection.

    Before:

    ```mlir
    %n = tfm.rms_norm %h, %g eps(1.0e-05) : (...) -> tensor<?x?x64xf32>
    %l = tfm.linear %n, %w : (...) -> tensor<?x?x1000xf32>
    %last = tensor.extract_slice %l[0, %s1, 0] [%b, 1, 1000] [1, 1, 1]
        : tensor<?x?x1000xf32> to tensor<?x1x1000xf32>
    ```

    After:

    ```mlir
    %h1 = tensor.extract_slice %h[0, %s1, 0] [%b, 1, 64] [1, 1, 1]
        : tensor<?x?x64xf32> to tensor<?x1x64xf32>
    %n = tfm.rms_norm %h1, %g eps(1.0e-05) : (...) -> tensor<?x1x64xf32>
    %last = tfm.linear %n, %w : (...) -> tensor<?x1x1000xf32>
    ```
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def TfmTileAttentionPass : Pass<"tfm-tile-attention"> {
  let summary = "tile tfm.attention into loops of tfm.online_attention steps";
  let description = [{
    Rewrites every `tfm.attention` into FlashAttention-2-style loops on
    tensors around `tfm.online_attention`, the tile-level step that each
    target decomposes its own way (on the CPU,
    `tfm-cpu-decompose-online-attention`):

    ```
    scf.forall (b, kv head h, query tile t) {        // independent tiles
      q = [G*TQ, D]: the TQ query rows of tile t for each of the G query
          heads of group h, stacked (rows past Sq repeat the last)
      [kBegin, kEnd) = keys any row of the tile can see (mask band and
                       kv_lengths[b]): fully masked tiles are never visited
      m = -inf, l = 0, acc = 0                        // f32 [G*TQ], [G*TQ, Dv]
      scf.for k0 = floor(kBegin, TK) to the last complete tile step TK {
        m, l, acc = tfm.online_attention(q, K[k0:k0+TK], V[k0:k0+TK])
                    // one K/V tile for all G heads, read in place; the
                    // element mask only on tiles the band cuts (scf.if)
      }
      if the key range ends in a partial tile:        // peeled
        m, l, acc = tfm.online_attention(q, K and V rows gathered at
                    clamped key indices, padding masked)
      out[b, group h, tile t] = l == 0 ? 0 : acc / l
    }
    ```

    Tiles keep the element types of the operands (bf16 stays bf16); the
    state is f32. Every tile has a static shape. A static query shorter than
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
    tile. Rows that see no key produce zeros. Dynamic sizes the loops rely
    on (key vs value length, batch of every operand, mask and bias dims) are
    asserted with `cf.assert`, which `tfm-insert-runtime-checks` turns into
    entry-point status checks.

    Options (one definition, `AttentionTilingOptions.def`, shared with the
    pipeline and tfm-compile): `tile-size-q`, `tile-size-kv`, `kv-splits`
    (0: enough splits for `work-items` independent tiles at batch 1; 1: no
    splitting) and `work-items`.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::cf::ControlFlowDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def TfmDecomposeOnlineAttentionPass
    : Pass<"tfm-decompose-online-attention"> {
  let summary = "decompose tfm.online_attention into linalg on tensors";
  let description = [{
    The target-independent decomposition of the tile-level attention step:
    the score and value products as `linalg.generic` contractions that
    convert each element to f32 as they read it, the body applied to every
    score, and the online-softmax update of the running state in place.
    Targets with their own forms of the products run their own
    decomposition first (the CPU: `tfm-cpu-decompose-online-attention`).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // TFM_DIALECT_TFM_TRANSFORMS_PASSES_TD

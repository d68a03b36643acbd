//===- Passes.td - tfm target code generation passes -------*- tablegen -*-===//
//
// Target-specific passes run after the target-independent tfm passes. The
// CPU passes decompose the tile-level tfm ops into the CPU's forms and take
// linalg on tensors to register-sized vector code.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_CODEGEN_PASSES_TD
#define TFM_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

def TfmResolveDynamicExpandShapesPass
    : Pass<"tfm-resolve-dynamic-expand-shapes"> {
  let summary = "rewrite memref.expand_shape with several dynamic dims per "
                "group into memref.reinterpret_cast";
  let description = [{
    LLVM 22's `expand-strided-metadata` crashes on a `memref.expand_shape`
    with more than one dynamic dim in a reassociation group
    (llvm/llvm-project#186830, fixed for LLVM 23), such as the
    `[M, N] -> [B, S, N]` view of a projection's result. Runs before it and
    rewrites exactly those into a `memref.reinterpret_cast` of the source's
    base buffer: the output_shape as sizes, strides built from the source
    dim's stride outward. Other expand_shapes are left to upstream.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def TfmCPUDecomposeOnlineAttentionPass
    : Pass<"tfm-cpu-decompose-online-attention"> {
  let summary = "decompose tfm.online_attention into the CPU's tile products";
  let description = [{
    The CPU's form of the tile-level attention step (the online-softmax
    update itself is the generic one, `tfm-decompose-online-attention`).
    Its products are plain f32 matmuls and lane-wise dot products, which
    `tfm-cpu-vectorize` turns into register blocks:

    - scores of a tile of at most 8 query rows (decode: `G·Sq`) whose head
      dim is a multiple of 16: each key row read once, in place, front to
      back: lane-wise products over 16-lane chunks (a 64-byte line of f32),
      then a sum over the lanes. Packing Kᵀ reads the key tile 16 rows at a
      time, which streams from memory at about two thirds of the rate of
      reading rows in order (bench/kv_streams.sh); that matters only where
      the scores are cheap next to the key reads;
    - other scores: `Kᵀ` packed into an f32 `[D, N]` tile, then a matmul of
      the (f32) query tile with it, so the packing cost is shared by the
      `M` rows;
    - `P·V`: a matmul with the value tile read in place when it is f32,
      else with an f32 copy of it.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
}

def TfmFuseNormProjectionPass
    : Pass<"tfm-fuse-norm-projection", "::mlir::func::FuncOp"> {
  let summary = "fold an RMSNorm or a LayerNorm into the projections of "
                "its rows";
  let description = [{
    A projection of RMSNorm'd rows (convert-tfm-to-linalg's form
    `n = x · r[row] · g[k]`, its row scale `r = 1/sqrt(mean(x²) + eps)`
    computed once per row) becomes a projection of the rows themselves
    whose weights carry the norm's weight, and the row scale an epilogue:

        y[m, n] = Σ_k n[m, k] · w[n, k] = r[m] · Σ_k x[m, k] · (w[n, k] · g[k])

    `tfm-cpu-tile-projections` multiplies `g` into the weights as it packs
    them in f32 (into each `[M, KC]` panel of the rows with bf16 dot
    products, into each row as it streams), and fuses the row scale into the
    projection's epilogue, so no normalized copy of the rows is stored. The
    norm's statistics serve every projection of the same rows (q, k and v;
    gate and up; the LM head). The normalized rows stay only where
    something else reads them (a post-norm model's residual). In f32 the
    products are the same up to the order of the rounding; a bf16 model's
    normalized rows are no longer rounded to bf16 before the projection.

    Before:

    ```mlir
    %r = linalg.generic ... // 1/sqrt(mean(x²) + eps), [M]
    %n = linalg.generic ins(%x, %r, %g) ... // x · r · g, [M, K]
    %y = linalg.generic ins(%n, %w) ... // Σ_k n · w, [M, N]
    ```

    After:

    ```mlir
    %p = linalg.generic ins(%x, %w, %g) ... // Σ_k x · (w · g)
    %y = linalg.generic ins(%p, %r) ... // p · r
    ```

    A projection of LayerNorm'd rows (`n = ((x - μ[row]) · r[row]) · g[k]
    + b[k]`, mean and row scale computed once per row) becomes a projection
    that reads the rows themselves and normalizes them as it reads them (a
    row transform, `transformsRows` in `tfm/Codegen/Projection.h`):

        y[m, n] = Σ_k (((x[m, k] - μ[m]) · r[m]) · g[k] + b[k]) · w[n, k]

    `tfm-cpu-tile-projections` normalizes each `[M, KC]` panel of the rows
    once per column block (each row once per call when streaming below 40
    rows; bf16 pairs read the normalized rows rounded to bf16 once per
    call). The
    mean stays in the rows: moving it out, `r · (Σ x·g·w - μ · Σ g·w) +
    Σ b·w`, would need two sums over the weights per call (a second pass
    over them, twice a decode step's traffic) and cancel digits where the
    mean is large against the deviation. The arithmetic is the unfused
    norm's, in the same order; a bf16 model's normalized rows are no longer
    rounded to bf16.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def TfmCPUFuseProjectionEpiloguesPass
    : Pass<"tfm-cpu-fuse-projection-epilogues", "::mlir::func::FuncOp"> {
  let summary = "put projections and the elementwise op that alone reads "
                "them in one tfm.fused_projections";
  let description = [{
    An elementwise op that alone reads one or more projections of the same
    rows and column count (each at an identity map) joins them in a
    `tfm.fused_projections`, which `tfm-cpu-tile-projections` computes
    column block by column block: the projections' `[M, N]` results are
    then never stored.

    - gate and up of a gated FFN with `act(gate) ⊙ up` (no `[M, d_ff]` gate
      or up tensor);
    - a projection with its bias and activation (plain FFN kinds, biased
      linears);
    - `o_proj` and `down_proj` with the residual added to them.

    First, elementwise ops over `[B, S, N]` views of a projection's result
    are collapsed to `[M, N]` (upstream's fold-reshape-by-collapsing
    patterns, limited to those ops), and an elementwise op that alone reads
    another one reading a projection is fused into it (the bias, then the
    residual), so that one op is the epilogue.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::tfm::TfmDialect"];
}

def TfmCPUFuseViewedEpiloguesPass
    : Pass<"tfm-cpu-fuse-viewed-epilogues", "::mlir::func::FuncOp"> {
  let summary = "put RoPE (an op reading a projection through a view that "
                "splits its columns into heads) with the projection";
  let description = [{
    An elementwise op that alone reads a projection's result (or that of
    its fused epilogue) through a view splitting its columns, `[M, N] ->
    [M, C, ...]`, directly or through slices of the dims after `C`, and
    whose other operands and indices do not depend on `C`, joins the
    projection's `tfm.fused_projections` (or forms one with it), with the
    view and the slices: RoPE of q and k (`convert-tfm-to-linalg` rotates
    the rows `[M, H, 2, D/2]` of split heads, each pair's members slices of
    the view, with per-row tables of cos and sin). Only where column blocks
    of whole units of `C` (whole heads) divide `N` under the blocking of
    `tfm-cpu-tile-projections` (the same options): a projection with a
    column tail keeps the op apart. Elementwise ops over `[B, S, N]` views
    of a projection's result are first collapsed to `[M, N]`, as in
    `tfm-cpu-fuse-projection-epilogues`.

    Options: `vector-width`, `register-rows`, `bf16-dot` and `amx`, those of
    `tfm-cpu-tile-projections` (`CPUCodegenOptions.def`).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::tfm::TfmDialect"];
}

def TfmCPUFuseSiblingProjectionsPass
    : Pass<"tfm-cpu-fuse-sibling-projections", "::mlir::func::FuncOp"> {
  let summary = "put projections of the same rows (q, k and v) in one "
                "tfm.fused_projections";
  let description = [{
    Projections (with their fused epilogues) of the same rows, blocked
    alike without a column tail, each writing a fresh buffer (q, k and v;
    their RMSNorm row scale), go into one `tfm.fused_projections`, which
    `tfm-cpu-tile-projections` computes as one parallel loop over all their
    column blocks. One parallel loop instead of three: with more threads
    than `k`'s or `v`'s blocks (2 at `N` = 256), separate loops left the
    other threads idle. What the later siblings read is moved before the
    first one, where the loop goes; a sibling whose producers have side
    effects stays apart.

    Options: `vector-width`, `register-rows`, `bf16-dot` and `amx`, those of
    `tfm-cpu-tile-projections` (`CPUCodegenOptions.def`).
  }];
  let dependentDialects = ["::mlir::tfm::TfmDialect"];
}

def TfmCPUTileProjectionsPass
    : Pass<"tfm-cpu-tile-projections", "::mlir::func::FuncOp"> {
  let summary = "block projections into cache-sized panels and register "
                "blocks, over any number of rows";
  let description = [{
    A projection `y[m, n] += a[m, k] * w[n, k]` (nn.Linear weights, static
    `N` and `K`; the rows `M`, the tokens, usually dynamic) becomes loops
    whose innermost step is a static `MR x NR` block (`MR` =
    `register-rows`, `NR` = 2 vectors or 1), which `tfm-cpu-vectorize` turns into
    broadcast + FMA code:

    ```
    scf.forall (j) in (N / NB)                     // threads over N blocks
      scf.for k0 = 0 to K step KC
        wt = f32 w[j*NB : +NB, k0 : +KC]ᵀ          // [NB/NR, KC, NR] (L2)
        scf.for c0 = 0 to M - M % MR step MC       // chunks of rows (L2)
          scf.for m0 = c0 to c0 + MC step MR       // the chunk's rows
            scf.for n1 = 0 to NB step NR           // each [KC, NR] panel
              y[m0 : +MR, n1 : +NR] += a[m0 : +MR, k0 : +KC] · wt[n1 / NR]
        // the M % MR rows left, from 4 on: one MR-row block of them padded
        // with zero rows (copied per panel), summed into a scratch holding
        // their rows of y, of which only theirs go back; fewer:
        scf.for m0 = M - M % MR to M               // one at a time
          scf.for n1 = 0 to NB step NR
            y[m0, n1 : +NR] += a[m0, k0 : +KC] · wt[n1 / NR]
    ```

    `NR` is 2 vectors, or 1 where only one divides `N` (`d_ff` = 688).
    `NB` is the largest multiple of `NR` up to 128 that divides the
    columns whole `NR` blocks cover; the columns left (`N % NR`, a
    vocabulary of 1000) get the same loops with one block of that width,
    in partial vectors. `KC` is the largest multiple of a vector up to 256
    that divides `K`; a projection without one is left alone. `MC` is 128
    rows rounded down to a multiple of `MR`: a chunk's rows of `a` and of
    `y` stay in L2 while it passes every panel of the column block. Weights
    of any float type are widened to f32 as they are packed, and row blocks
    of a non-f32 `a` as they are read.

    With `bf16-dot` (the CPU target sets it where the CPU has AVX-512 BF16),
    bf16 weights are packed as pairs instead, where `NR` is a whole number
    of vectors and `K` of 32-step panels: `wt[kp, n]` holds w[n, k0 + 2kp]
    and w[n, k0 + 2kp + 1] in one 32-bit element (16 x 32 reads, bitcast and
    transposed), `KC` the largest multiple of 32 up to 256 that divides
    `K`. The `MR x NR` block keeps `MR x NR/16` accumulators across the
    `KC/2` pair steps; each step broadcasts a row's pair of `a` to every
    lane and adds the products of 16 pairs per accumulator with one
    `x86vector.avx512.dot` (`vdpbf16ps`): twice the multiply-adds of an f32
    FMA, and half the packed bytes. The rows are bf16 as they are, or they
    are rounded to bf16 once, before the loop over column blocks (an `[M,
    K]` bf16 tensor per projection, shared by siblings with the same column
    scale and no transform), after the projection's transform and times its
    column scale where it has them: the weights are packed as they are.

    With `amx` too (the CPU target sets it where the CPU has AMX-BF16), the
    pairs are packed as a bf16 `[NB/32, KC/2, 2 x 32]` tensor (AMX tiles of
    pairs, each 32-column panel contiguous so that it spreads over all of
    L1's sets) from 16 rows on, and where `NR` is 32 the chunks take blocks of 32 rows
    instead: each a `linalg.generic` y[m, n] += Σ a[m, kp, t] · wt[kp, n, t]
    over `[32, KC/2, 2]` and `[KC/2, 32, 2]` views, marked `tfm.amx_tiles`
    for `tfm-cpu-lower-amx`; the rows whole 32-row blocks leave take one
    more block, read from a `[32, K]` copy padded with rows of zeros (made
    once, before the column loop) and summed into a 32 x 32 scratch of
    which only their rows go back to the output. From 2 up to 64 rows, where whole 32-column blocks cover
    `N`, the tiles read the weights in place instead, with no packing: the
    rows rounded to bf16 in pairs (`[ceil(M/32), K/2, 2 x 32]`, the last
    32-row block padded with rows of zeros) are the B operand, 32 weight
    rows (16-row tiles loaded with stride `K`) the A operand of the same
    marked generic, into a 32 x 32 f32 scratch of `yᵀ` added to `y`
    transposed (only the real rows of the last block).

    A few rows (a decode step or a short prompt, known only at run time:
    an `scf.if` picks the form) stream the weights instead, in place, each
    read once: threads over blocks of up to `4 MR` weight rows. Every row
    is prepared once per call (times a column scale, or transformed, into
    an `[M, K]` f32 scratch; plain f32 rows as they are); then for each
    group of 4 weight rows, `K` in chunks of up to 256 steps, and in each
    chunk every block of 4 rows against the group (16 accumulators of `L`
    f32 lanes, `vector.fma` of vectors read along `K`, loaded from and
    stored to a scratch between chunks: the group's chunk of weights comes
    from memory once and from L1 for the other blocks), then their lane
    sums, the last block's rows past `M` reading the last row and their
    sums dropped. Below 4 rows, 2 or 3 as one block against 8 weight rows
    at a time (an `scf.index_switch` on the count); one (a decode step):
    lane-wise partial dot products with every weight row of the block
    (`[1, K/L, L] x [NB, K/L, L] -> [1, NB, L]`, one accumulator per weight
    row), then their lane sums. Up to 39 rows packing would cost more than
    the products (`kFMAStreamRows`; where 4-row blocks do not apply, AVX2's
    16 registers or weight blocks not of whole groups of 4, up to `MR - 1`).
    With `bf16-dot` (the CPU target sets it where the CPU has
    AVX-512 BF16), bf16 weights stream through `x86vector.avx512.dot`
    (`vdpbf16ps`, 32 weights a step) instead, against rows rounded to bf16
    once per call, before the loop over column blocks (as the packed
    pairs read them): the widening shifts go, and the products of a bf16 model's rows
    are those a bf16 matmul would form. Such weights stream for up to 63
    rows: blocks of 4 rows against 4 weight rows, the rows left one by one
    against 8; reading the weights in place beats packing them into pairs
    there. With `amx` as well, tiles that read the weights in place (above)
    take every row count from 2 on where they apply.
    A projection with no columns or no steps (`N` or `K` = 0) is left alone.

    Each `MR`-row block of the packed form prefetches into L2 its share of
    the weight rows that packing the next panel reads (the next `k` step,
    or the next column block's first panel): `memref.prefetch` on a
    `read_only` `bufferization.to_buffer` of the weights, `NR` rows shared
    out over the row blocks, every line of a row's `KC` steps; from 256
    steps on, a quarter of the lines before each quarter of the steps.

    A projection that reads its rows transformed (a LayerNorm folded in by
    `tfm-fuse-norm-projection`) transforms each `[M, KC]` panel of them
    into f32 scratch once per column block, which the register blocks then
    read (and each row once per block in the streamed form); for bf16
    pairs, once per call, rounded, as above.

    Fused projections. The projections inside a `tfm.fused_projections`
    (which the fusion passes below form) and the elementwise ops there that
    read them are computed together, block by block; the region is
    inlined. Projections outside one are computed alone, and so is what a
    region holds that its blocking does not allow together (a view whose
    units do not divide the column blocks, siblings blocked differently):

    - an epilogue (`tfm-cpu-fuse-projection-epilogues`): each thread
      computes the `[M, NB]` blocks of the projections the op reads into
      scratch tensors of the block's size, then the op on them, writing the
      op's block; the projections' `[M, N]` results are never stored;
    - a viewed epilogue (`tfm-cpu-fuse-viewed-epilogues`): `NB` (and the
      streamed block) is a multiple of the view's unit (a head, `D`
      columns); the block goes to scratch first (RoPE reads both members
      of a pair), and the op runs on the block's `[M, NB / D, ...]` view,
      writing the same view of the result;
    - siblings (`tfm-cpu-fuse-sibling-projections`): the blocks lie side
      by side in one `[M, N_q + N_k + N_v]` buffer, an `scf.index_switch`
      on the block picks the weights (no run-time concatenation of them),
      and each result is a column view of the buffer. `NB` is the largest
      multiple of `NR` up to 128 that divides every `N`.

    Weights packed once (`prepack-weights`). An f32 projection whose
    weight is an entry point's input (through its
    `bufferization.to_tensor`), as is its column scale if it has one, reads
    its `[KC, NR]` panels from an input of its own instead of packing them
    in every call: `[ceil(N / NR), K, NR]` f32 (each `NR`-column panel
    transposed and scaled, contiguous, as `packScaled` makes it; the tail
    columns' panel padded with zero columns, of which the tail block reads
    the first), inserted after the other inputs (`tfm.input_count`), named
    `<weight>.packed`, with `tfm.packed_weight` and `tfm.packed_scale`
    naming what it is made from. The weight may be rows of an input (a
    static `tensor.extract_slice`), its `linalg.transpose` (a Conv1D weight
    `[K, N]`, packed as it lies), or both: `tfm.packed_rows` and
    `tfm.packed_transposed` say so, and the name is `<weight>[a:b].packed`
    for rows `a` to `b`. The register blocks prefetch the next
    panels themselves into L2 (each its share of their steps), as they
    prefetch the weight rows that packing reads otherwise. Where every
    projection of the loops reads packed panels, there is no streamed form
    (the packed form serves any number of rows) and the weights are read no
    more. `tfm-cpu-prepare-weights` then builds the entry point that makes
    these inputs. Inputs are matched by name across entry points: one name
    is one array.

    Options: `vector-width`, `register-rows`, `bf16-dot` and
    `prepack-weights`, defined once for the CPU passes that form vector
    code (`CPUCodegenOptions.def`).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::x86vector::X86VectorDialect"];
}

def TfmCPUPrepareWeightsPass
    : Pass<"tfm-cpu-prepare-weights", "::mlir::ModuleOp"> {
  let summary = "the entry point that packs the weights read packed";
  let description = [{
    Builds the public function `prepare_weights` from the inputs that
    `tfm-cpu-tile-projections` (with `prepack-weights`) added to the entry
    points: one output per distinct packed input (by name), made from the
    weight and scale inputs its attributes name, in the entry-point ABI of
    `tfm-expose-entry-points` (memref inputs, then outputs, `i32` status):

    ```
    func.func @prepare_weights(%w: memref<N x K x f32> {tfm.name = "w"},
        %g: memref<K x f32> {tfm.name = "g"},
        %p: memref<ceil(N/NR) x K x NR x f32> {tfm.name = "w.packed"}) -> i32
      // %p[j, k, c] = w[j * NR + c, k] * g[k], threads over the panels j
    ```

    The panels past `N / NR` whole ones are padded with zero columns.
    Then every entry point loses the weight and scale inputs that it packed
    and reads no more (nothing but a dead `bufferization.to_tensor` uses
    them), so that a caller holds each weight once; `tfm.dropped_inputs`
    records their indices among the inputs it had, for the manifest.

    A library calls it once, when its parameters are bound (Python's
    `Library.prepare`, `tfm-run`), and passes its outputs to the other
    entry points in place of the weights. Two packed inputs of one name
    that are made differently, or a module that has a `prepare_weights`
    already, are errors. Without packed inputs it does nothing.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def TfmCPUTileRowsPass : Pass<"tfm-cpu-tile-rows", "::mlir::func::FuncOp"> {
  let summary = "run-time sized ops as parallel loops over static rows";
  let description = [{
    A linalg op on tensors whose dynamic loops are all parallel (a norm,
    an elementwise op, RoPE or a transpose over a run-time token count) is
    tiled by 1 along exactly those loops into an `scf.forall`:

    ```
    %y = scf.forall (%b, %s) in (%B, %S) shared_outs(%o = %init) {
      %row = tensor.extract_slice %x[%b, %s, 0] [1, 1, 2048] [1, 1, 1]
      %r = linalg.generic ins(%row : tensor<1x1x2048xf32>) ...
      scf.forall.in_parallel { tensor.parallel_insert_slice %r into %o ... }
    }
    ```

    Each row is then a static op that `tfm-cpu-vectorize` turns into
    vector code, and the rows run on OpenMP threads. Ops inside loops
    (tiles of something else: a projection block's epilogue or row
    transform) get an `scf.for` instead: a parallel loop there would nest
    OpenMP regions. Ops with a dynamic reduction loop are left alone. Runs
    after the entry-point checks are inserted: they read the sizes of
    untiled ops.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def TfmCPUVectorizePass : Pass<"tfm-cpu-vectorize", "::mlir::func::FuncOp"> {
  let summary = "tile static linalg ops to register blocks and vectorize them";
  let description = [{
    Every linalg op on tensors whose loop bounds are static is tiled with
    `scf.for` to a register-sized block and the block is vectorized
    (`linalg::vectorize`):

    - matmul-like contractions whose output and right operand are contiguous
      along N: `MR x NR` blocks of the output (`MR` the largest divisor of M
      up to `register-rows`; when M is no larger (a decode step), at least
      2 rows that cover whole rows of the right operand with the
      `2 x register-rows` accumulators, else half of `register-rows` where
      that divides M; `NR` as many vectors as fill the
      `2 x register-rows` accumulators, or all of a shorter N in partial
      vectors where they fit) and one step of K, i.e. a rank-1
      update per step, the K loop unrolled to 4 steps per iteration where
      they divide it; `tfm-cpu-lower-vectors` keeps the block in
      registers across the K loop and lowers it to broadcast + FMA;
    - lane-wise dot products `C[m, n, l] += A[m, k, l] * B[n, k, l]` (a batch
      loop innermost in every operand): `MR` rows of A against one row of B
      per step of K, vectors along `l`, the N loop outermost so that B is
      read once, row by row; a multiply and an add per vector (one FMA
      once LLVM contracts them);
    - ops that read an operand transposed: `W x W` blocks (`W` =
      `vector-width`), lowered to in-register transposes;
    - everything else (elementwise, row reductions, fills): the innermost
      loop in blocks of up to 4 vectors, every outer loop 1.

    Ops with dynamic bounds, or whose innermost size does not divide into
    vectors, are left alone and become scalar loops.
    Options: `vector-width` and `register-rows`, defined once for the CPU
    passes that form vector code (`CPUCodegenOptions.def`).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::vector::VectorDialect"];
}

def TfmCPUPromoteTileBuffersPass
    : Pass<"tfm-cpu-promote-tile-buffers", "::mlir::func::FuncOp"> {
  let summary = "put the fixed-size scratch buffers of parallel tiles on the "
                "stack";
  let description = [{
    Runs after bufferization, before deallocation: a `memref.alloc` of
    static shape and at most `max-bytes` bytes that belongs to one tile (it
    is in an `scf.forall` body, possibly inside `scf.if`s and `scf.for`s
    whose iterations do not pass it on) becomes one `memref.alloca` at the
    start of the `scf.forall` body, instead of a `malloc` per tile or per
    key step. Above glibc's mmap threshold, a malloc touches fresh pages on
    every call. `tfm-cpu-hoist-thread-scratch` later gives each thread one
    copy. Such a buffer in a sequential loop outside any `scf.forall` moves
    to the start of the function. A buffer that a loop carries to its next
    iteration (its `scf.yield` or results alias it) stays where it is:
    iterations would share it; so does one already freed by a
    `memref.dealloc`.
  }];
  let options = [
    Option<"maxBytes", "max-bytes", "int64_t", /*default=*/"524288",
           "Largest buffer moved to the stack">,
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def TfmFreeBuffersEarlyPass
    : Pass<"tfm-free-buffers-early", "::mlir::func::FuncOp"> {
  let summary = "free each buffer right after its last use";
  let description = [{
    Runs after the buffer deallocation pipeline, which frees every buffer
    at the end of the block that allocates it: in an entry point, every
    activation of a forward pass would live until the function returns.
    A `memref.dealloc` of a `memref.alloc` of the same block, or a
    synchronous `gpu.dealloc` of a synchronous `gpu.alloc` (the CUDA
    pipeline runs it before `gpu-async-region`), moves to right after the
    last op of that block that uses the buffer or any view of it
    (`BufferViewFlowAnalysis`, and any memref an op makes of it: the
    analysis does not follow `memref.transpose`; an op whose regions use
    it counts as a use, and so does a use of any value an op makes of it
    other than its sizes and values loaded from it, which may carry its
    address on: a pointer extracted as an index, a TMA tensor map).

    With the CPU libraries' buffer cache, a freed block then serves the
    next layer's request, so a forward holds about one layer's activations
    instead of all of them. On a GPU, the free joins the call's stream
    right after the last kernel or copy that uses the buffer, and the
    driver's stream-ordered pool serves the next allocation from it. A
    buffer read back on the host (a runtime check's verdict) is freed
    before the host waits for the copy, not in a stream of its own at the
    end of the call. Conditional frees (of buffers whose ownership is
    decided at run time) stay where they are.

    Before:

    ```mlir
    %a = memref.alloc(%n) : memref<?xf32>
    linalg.fill ins(%c : f32) outs(%a : memref<?xf32>)
    %b = memref.alloc(%n) : memref<?xf32>
    ...
    memref.dealloc %a : memref<?xf32>
    memref.dealloc %b : memref<?xf32>
    ```

    After:

    ```mlir
    %a = memref.alloc(%n) : memref<?xf32>
    linalg.fill ins(%c : f32) outs(%a : memref<?xf32>)
    memref.dealloc %a : memref<?xf32>
    %b = memref.alloc(%n) : memref<?xf32>
    ...
    memref.dealloc %b : memref<?xf32>
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def TfmDropSelfCopiesPass
    : Pass<"tfm-drop-self-copies", "::mlir::func::FuncOp"> {
  let summary = "drop copies of a buffer onto itself";
  let description = [{
    Runs after bufferization: a `memref.copy` whose source is its target,
    or its target collapsed and expanded back along the same dims, copies
    nothing and goes. `tfm-cpu-tile-projections` computes the logits in
    the caller's buffer through an `[M, N]` view of it; bufferization then
    copies the `[B, S, N]` view of the result into that same buffer, and
    upstream's folds keep the view because its sizes are read off another
    argument (the token ids), which the runtime checks made equal.

    ```mlir
    %c = memref.collapse_shape %out [[0, 1], [2]]
        : memref<?x?x256xf32> into memref<?x256xf32>
    ...                                   // computed into %c
    %e = memref.expand_shape %c [[0, 1], [2]] output_shape [%b, %s, 256]
        : memref<?x256xf32> into memref<?x?x256xf32>
    memref.copy %e, %out : memref<?x?x256xf32> to memref<?x?x256xf32>  // goes
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def TfmUnifyCheckedSizesPass
    : Pass<"tfm-unify-checked-sizes", "::mlir::func::FuncOp"> {
  let summary = "one SSA value per size the runtime checks made equal";
  let description = [{
    Inside the `then` region of an `scf.if` at the top level of a function
    whose condition is a tree of `arith.andi` over `arith.cmpi eq` of
    indices (the verdict of `tfm-insert-runtime-checks`, which guards
    everything an entry point computes), each set of indices the checks
    made equal is replaced by one of them: a constant if there is one,
    else an argument, else the one defined first. Sizes read off different arguments (the
    batch of `input_ids` and of `cache_lengths`) then bound loops by the
    same value, and loops over equal iteration spaces can be recognised as
    such: the CUDA target runs a norm's reduction and its scaling in one
    kernel only when their bounds match.

    ```mlir
    %ok = arith.cmpi eq, %rows_of_lengths, %rows_of_ids : index
    scf.if %ok {
      %a = memref.alloc(%rows_of_lengths) : memref<?x128xbf16>  // %rows_of_ids
      ...
    }
    ```
  }];
}

def TfmCPUHoistThreadScratchPass : Pass<"tfm-cpu-hoist-thread-scratch"> {
  let summary = "allocate a parallel loop's scratch once per thread";
  let description = [{
    Runs after `convert-scf-to-openmp`: a static `memref.alloca` at the top
    level of an `omp.loop_nest` body (inside its `memref.alloca_scope`)
    moves to the start of the enclosing `omp.parallel` region. Each thread
    then allocates its scratch once and reuses it for every iteration it
    runs. So does a heap `memref.alloc` anywhere in the body whose sizes
    are known before the region and that one `memref.dealloc` in its own
    block frees (a projection's `[M, NB]` epilogue blocks, its `[M, KC]`
    transformed rows): the dealloc moves to the end of the region, so a
    thread allocates the buffer once per loop instead of once per
    iteration. Legal because such buffers come from `tensor.empty`: no
    iteration reads what another left in them.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def TfmCPUPlanWorkspacePass
    : Pass<"tfm-cpu-plan-workspace", "::mlir::ModuleOp"> {
  let summary = "make a function's heap buffers views of one workspace";
  let description = [{
    Runs after `tfm-cpu-hoist-thread-scratch`: each function allocates one
    workspace when it starts and frees it when it returns, and its heap
    buffers become `memref.view`s of it:

    - every `memref.alloc` in the function's straight-line code (its body
      and the branches of `scf.if`s in it, not loops) that one
      `memref.dealloc` in its own block frees and that no view outlives
      that block: the buffer lives from its allocation to the last use of
      it or its views (`BufferViewFlowAnalysis`);
    - every thread's scratch at the start of an `omp.parallel` region
      there (what `tfm-cpu-hoist-thread-scratch` hoisted): one slot per
      thread, `omp_get_max_threads()` slots, the thread's found with
      `omp_get_thread_num()`; the slots live for the whole region.

    Sizes must be constants times products of run-time sizes that the
    function's arguments give (dims of memref arguments, index arguments,
    through `memref.dim`, `arith.muli`, products in `affine.apply`,
    collapsed and expanded shapes): a forward's activations are multiples
    of its token count. Buffers are grouped by that product; each group has
    its own region of the workspace, in which the buffers are packed at
    compile time in bytes per unit of the product (first fit, largest
    first; two buffers share bytes only if their lifetimes are disjoint),
    each offset a multiple of 64 bytes. Other buffers stay as they are.

    The buffer cache of the CPU runtime serves the workspace from the
    second call on, so a call allocates nothing but this once. Before:

    ```mlir
    %m = arith.muli %b, %s : index
    %x = memref.alloc(%m) : memref<?x256xf32>
    ...
    memref.dealloc %x : memref<?x256xf32>
    %y = memref.alloc(%m) : memref<?x256xf32>
    ...
    memref.dealloc %y : memref<?x256xf32>
    ```

    After (both at offset 0: their lifetimes are disjoint):

    ```mlir
    %bytes = ...                            // 1024 * %b * %s
    %ws = memref.alloc(%bytes) {alignment = 64 : i64} : memref<?xi8>
    %x = memref.view %ws[%c0][%m] : memref<?xi8> to memref<?x256xf32>
    ...
    %y = memref.view %ws[%c0][%m] : memref<?xi8> to memref<?x256xf32>
    ...
    memref.dealloc %ws : memref<?xi8>
    return
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
}

def TfmCPUDynamicSchedulePass : Pass<"tfm-cpu-dynamic-schedule"> {
  let summary = "hand out a parallel loop's iterations to threads one by one";
  let description = [{
    Runs after `convert-scf-to-openmp`: every `omp.wsloop` without a
    schedule gets `schedule(dynamic)` (chunks of one iteration), so a thread
    that finishes an iteration takes the next one left. Tile iterations
    differ in cost: causal query tiles near the end see the most keys, and
    key splits past a `kv_lengths` bound are empty. The default static
    schedule gives each thread one contiguous run, which for a one-head
    causal attention on 2 threads means 1/4 of the work for one and 3/4 for
    the other. A tile iteration runs for microseconds or more, so taking
    iterations one at a time costs little.

    Loops whose iterations all cost the same say so in their location
    (`fused<"tfm.static_schedule">`, tfm/Codegen/LoopSchedule.h: projection
    column blocks, row tiles) and keep the static schedule: contiguous runs,
    and no dispatch per iteration, which in Debian's libomp 22 formats trace
    strings every time (7% of a decode step was spent in printf).
  }];
  let dependentDialects = ["::mlir::omp::OpenMPDialect"];
}

def TfmCPULowerVectorsPass
    : Pass<"tfm-cpu-lower-vectors", "::mlir::func::FuncOp"> {
  let summary = "lower vectorized, bufferized code to CPU-friendly vector ops";
  let description = [{
    Runs after bufferization, on what `tfm-cpu-vectorize` produced:

    - hoists the read/write of a contraction's output block out of its K
      loop (`linalg::hoistRedundantVectorTransfers`), so it stays in
      registers;
    - lowers `vector.contract` to outer products and those to `vector.fma`
      (a broadcast of the left element times a row of the right operand);
    - lowers transposes (16x16 shuffles for 16-lane targets), multi-dim
      reductions, broadcasts and permuted transfers;
    - replaces f32 `math.exp` by a polynomial approximation, so no libm call
      is left in a vectorized loop;
    - splits f32 reads of a row longer than one register into one read per
      register, in address order: LLVM may issue the pieces of one wide load
      out of order, which the hardware prefetchers stream worse (a decode
      step's 2x128 P·V block ran 12% slower).
    Options: `vector-width` and `register-rows`, defined once for the CPU
    passes that form vector code (`CPUCodegenOptions.def`).
  }];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def TfmCPULowerAMXPass : Pass<"tfm-cpu-lower-amx", "::mlir::ModuleOp"> {
  let summary = "run the bf16 register blocks marked for AMX on AMX tiles";
  let description = [{
    Runs after bufferization, on the `linalg.generic`s marked
    `tfm.amx_tiles` that `tfm-cpu-tile-projections` forms with `amx=1`:
    y[m, n] += Σ a[m, kp, t] · p[kp, n, t] over a 32 x 32 f32 block of the
    output, `a` a [32, KC/2, 2] view of 32 bf16 rows and `p` a [KC/2, 32, 2]
    view of a panel of weights packed as pairs of k (the layout of an AMX
    tile of pairs). Each becomes 2 x 2 accumulator tiles of 16 x 16 f32
    (`amx.tile_load` of the output block), then per 32 steps of k two
    16-row tiles of the rows, two 16-column tiles of pairs and four
    `amx.tile_mulf` (`tdpbf16ps`), fully unrolled, then the four stores.

    Linux hands out AMX state only to a process that asked for it
    (`arch_prctl(ARCH_REQ_XCOMP_PERM)`): each block runs on tiles where
    `tfm_cpu_amx_ready()` (the CPU runtime, lib/Runtime/CPU/AMX.cpp; it asks
    once) says the request was granted, and as the generic (scalar loops,
    same sums) otherwise, never a fault. The answer is asked for once, at
    the entry of the function: LLVM loads the tile configuration again
    after every call. A marked op whose views are not
    the ones above (no unit-stride rows, other shapes) stays the generic.
  }];
  let dependentDialects = ["::mlir::amx::AMXDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::scf::SCFDialect"];
}

def TfmGPUFlashAttentionPass
    : Pass<"tfm-gpu-flash-attention", "::mlir::func::FuncOp"> {
  let summary = "put the bf16/f16 tfm.attention ops that the tensor-core "
                "kernel computes on buffers";
  let description = [{
    Runs on tfm ops (tensors), before `convert-tfm-to-linalg`. Each
    `tfm.attention` whose q, k, v and result are all bf16 or all f16, with
    head dim 64 or 128 for keys and values and neither a dense mask nor a
    bias (any structured mask, `kv_lengths`, `scale`, `softcap`), becomes a
    `tfm.buffer_attention` reading `bufferization.to_buffer`s of its
    operands (any strides, unit innermost) into a new buffer, which a
    `to_tensor` hands on. Run-time sizes the verifier could not compare are
    asserted. Bufferization and buffer deallocation then treat the kernel
    as one op with declared reads and writes;
    `tfm-gpu-lower-buffer-attention` builds it once buffers are final. The
    other attention ops keep the reference lowering.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::cf::ControlFlowDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::tensor::TensorDialect"];
}

def TfmGPUFoldAttentionTransposesPass
    : Pass<"tfm-gpu-fold-attention-transposes", "::mlir::func::FuncOp"> {
  let summary = "read and write the attention kernel's operands through "
                "transposed views rather than transposed copies";
  let description = [{
    Runs on tensors after `convert-tfm-to-linalg`, which lowers splitting
    and merging heads to `linalg.transpose` (copies on the GPU). A
    `tfm.buffer_attention` operand read as
    `bufferization.to_buffer(linalg.transpose(y))`, by attention ops alone,
    becomes the `memref.transpose` view of `to_buffer(y)` (q, k and v:
    `[B, S, H, D]` rows viewed as `[B, H, S, D]`); a result read only by a
    `linalg.transpose` (merged heads) is written through the transposed
    view of a new buffer in the transpose's layout, which replaces the
    transpose. Only permutations that keep the innermost dim (the kernel
    reads and writes unit-stride rows). Then any other transpose that moves
    only unit dims, the others keeping their order (decode's new k and v,
    `[B, 1, H, D]` to `[B, H, 1, D]`, on their way into the KV caches),
    becomes a `tensor.collapse_shape` to the other dims and a
    `tensor.expand_shape`: views, where the transpose was a copy kernel.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect"];
}

def TfmGPULowerBufferAttentionPass
    : Pass<"tfm-gpu-lower-buffer-attention", "::mlir::func::FuncOp"> {
  let summary = "lower tfm.buffer_attention to a FlashAttention-2 kernel on "
                "tensor cores";
  let description = [{
    Replaces each `tfm.buffer_attention` (bf16 or f16, head dim 64 or 128)
    by a `gpu.launch`, skipped when the batch or query length is 0. When its
    result buffer is a fresh allocation only copied into another buffer
    right after it (an entry point's output, as bufferization leaves it),
    the kernel writes that buffer and the copy goes.

    - one block per (batch, query head, 128 query rows), the last query
      tiles first (under a causal mask they have the most keys); query
      head h reads kv head h / (Hq / Hkv);
    - `warp-rows` 16 (default): 8 warps of 16 rows, each reading its rows
      of Q once, from global memory straight into the A operand registers
      it keeps for the whole key loop; 32 (FlashAttention-2's split): 4
      warps of 32 rows, so that each K and V fragment a warp reads from
      shared memory feeds two row tiles; Q as before at head dim 64, and at
      128 brought into shared memory with the first K tile and read from
      there per key tile (registers would not hold it beside 128
      accumulators);
    - the tiles in dynamic shared memory;
    - the key range the block's rows see under the structured mask and
      `kv_lengths` is walked in tiles of 64 keys, brought into shared
      memory by `cp.async` (V of a tile while its scores are computed, K of
      the next tile while P·V runs);
    - QKᵀ and P·V on tensor cores (`mma.sync` m16n8k16, f32 accumulators,
      operands through `ldmatrix`, V transposed by it); P goes from the
      score accumulators to A operands without leaving registers;
    - the online softmax in registers (exp2, a row's max and sum across the
      4 lanes of a quad); mask checks only in tiles the mask cuts; a row
      that sees no key gives zeros;
    - shared rows swizzled (16-byte chunk index XOR row mod 8), so that
      ldmatrix reads are free of bank conflicts.

    With `split-kv` (FlashDecoding), attention whose query length is static
    and whose queries of a KV head's group fit in 16 rows (group · Sq <= 16:
    decode) is packed instead: a block of one warp holds every query of a
    group, so each K and V tile is read once for the group, and the blocks
    go over (key ranges, KV heads, batch). The ranges are whole 64-key
    tiles, as many as give about 512 blocks with at least 128 keys each
    (chosen at run time from the key length). With several ranges, each
    block writes its rows in f32, divided by their own sums, and the log2
    of those sums to a workspace, and a second kernel (a block of D threads
    per query, head and batch) combines them, weighting each range by
    2^(lse - max); with one range the block stores the result itself.

    With `warpgroup-mma` (sm_90a; warp-rows 16), the block's 8 warps are 2
    warpgroups of 64 rows, and QKᵀ and P·V are warpgroup MMA (`wgmma`
    m64nNk16, f32 accumulators): A in registers (each warp's Q, then its P,
    in the layouts mma.sync uses), B read from shared memory through
    descriptors (K K-major, V N-major), each batch waited for before the
    softmax reads it. The K and V tiles are then stored as panels of 64
    columns of D (128-byte rows, chunk c of row r at c ^ (r mod 8): wgmma's
    128-byte swizzle), and cp.async's writes are fenced for the async proxy
    before wgmma reads them. MLIR's `nvvm.wgmma.mma_async` takes A only
    through a descriptor, so the products are the PTX instruction inline.
    Decode's packed split keeps mma.sync.

    With `warpgroup-overlap` as well (FlashAttention-3's intra-warpgroup
    overlap), K and V are double-buffered (tile n in buffer n mod 2) and
    each tile's QKᵀ is issued with the previous tile's P·V as two wgmma
    groups: the tile's softmax runs once the first is done, while the
    second runs, and O is rescaled after it. The previous tile's P is loop
    state; before the first tile it is zeros, against a zeroed V buffer;
    the last tile's P·V follows the loop.

    With `tma` (and `warpgroup-mma`, with or without `warpgroup-overlap`),
    K and V tiles are loaded by TMA: the host makes a tensor map of K and
    of V (boxes of 64 keys by 64 columns, 128-byte swizzle, zeros past the
    cache), thread 0 issues a box per panel of D, and a barrier object per
    K and V buffer (`mbarrier`, a phase per tile it holds) tells every
    thread when a tile has landed. A cache's rows between the kv length
    and the tile's end are zeroed in V's tile once it lands (TMA reads them
    whole; a NaN there would survive its probability of 0), then fenced
    for wgmma.

    With `warp-specialized` (and `tma`, with or without
    `warpgroup-overlap`: FlashAttention-3's warp specialization), a producer warpgroup of its
    own (threads 0-127) runs ahead of the block's 2 tile warpgroups: its
    thread 0 issues every K and V load into double buffers, each once both
    tile warpgroups have freed the buffer's use before (a second barrier
    object per buffer, on which one thread of each arrives once its wgmma
    that read the buffer are done). No block barrier per tile: each tile
    warpgroup waits only for its data and runs on its own. The producer
    gives up registers (`setmaxnreg` 40) that the tile warpgroups take
    (232). V's rows past the kv length are zeroed by each tile warpgroup,
    published by a barrier of its own 128 threads. With the overlap, the
    producer may fill both V buffers before the first tile's P·V of "the
    tile before" has read one, so that P·V reads a zeroed tile of its own
    (after the K and V buffers), and a tile warpgroup frees K once a
    tile's scores are done and the last tile's V once its P·V is.

    With `pingpong` as well (and `warpgroup-overlap`: FlashAttention-3's
    ping-pong), the two tile warpgroups take turns issuing a tile's
    products (a named barrier per warpgroup, which it syncs on and the
    other arrives at once it has issued its own), so that one warpgroup's
    softmax runs while the other's products do.

    With `keys` 128 (and `warpgroup-mma`, in any of its forms:
    FlashAttention-3's tile at head dim 128), the key tiles are 128 keys
    instead of 64: QKᵀ is wgmma m64n128k16, P·V takes 8 steps of 16 keys,
    and the K and V buffers, TMA boxes and the zeroed tile have 128 rows.
    Half as many tiles means half the rescaling of O, of the barrier waits
    and of the loop's overhead per key, for 64 score registers a thread
    instead of 32. Decode's packed split keeps 64.

    Any other element type or head dim is an error.
  }];
  let options = [
    Option<"warpRows", "warp-rows", "int64_t", /*default=*/"16",
           "Query rows per warp: 16 (8 warps a block) or 32 (4 warps)">,
    Option<"keys", "keys", "int64_t", /*default=*/"64",
           "Keys of a tile: 64, or with warpgroup-mma 128">,
    Option<"splitKV", "split-kv", "bool", /*default=*/"false",
           "Decode (group · Sq <= 16 rows, Sq static) packed into one warp "
           "per KV head with the keys split among blocks">,
    Option<"warpgroupMma", "warpgroup-mma", "bool", /*default=*/"false",
           "QKᵀ and P·V as warpgroup MMA (wgmma, sm_90a; warp-rows 16)">,
    Option<"warpgroupOverlap", "warpgroup-overlap", "bool",
           /*default=*/"false",
           "With warpgroup-mma: each tile's softmax while the last tile's "
           "P·V runs (K and V double-buffered)">,
    Option<"tma", "tma", "bool", /*default=*/"false",
           "With warpgroup-mma: K and V tiles loaded by TMA through "
           "tensor maps the host makes">,
    Option<"warpSpecialized", "warp-specialized", "bool",
           /*default=*/"false",
           "With tma: a producer warpgroup issues the loads, the tile "
           "warpgroups free each buffer through barrier objects">,
    Option<"pingpong", "pingpong", "bool", /*default=*/"false",
           "With warp-specialized and warpgroup-overlap: the tile "
           "warpgroups take turns issuing their products">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def TfmGPUFuseElementwisePass
    : Pass<"tfm-gpu-fuse-elementwise", "::mlir::func::FuncOp"> {
  let summary = "shape elementwise ops for the GPU's kernels: projection "
                "epilogues, per-row finishing steps, a zero fill per "
                "projection";
  let description = [{
    Runs on tensors, before bufferization. An elementwise op (identity
    maps, every loop parallel) that reads a projection's f32 sums, or their
    `[B, S, N]` view, and whose result only another elementwise op reads,
    is fused into that op (upstream's elementwise fusion), so that one op
    computes the projection's result from its sums:

    - the rounding to bf16/f16, then the residual added to it (`o_proj`,
      `down_proj`);
    - `act(gate) · up`, then its rounding (a gated FFN): the down
      projection's f32 rows (as the CPU keeps them) are first rounded to
      the weights' type by a new elementwise op before their `[M, K]`
      collapse, as GPU frameworks compute it, and the projection widens
      them as it reads.

    `tfm-gpu-tensor-core-matmul` computes that op in the kernel's store, so
    the f32 sums are never stored.

    A per-row finishing step (an elementwise op over fewer dims whose
    result only one op reads, with a small f32 body: a norm's
    `1/sqrt(mean(x²) + eps)`) is fused into the op that broadcasts it along
    the row (the norm's scaling): a few instructions per element rather
    than a kernel and a trip through memory. Other ops over broadcasts are
    left apart (a RoPE table's f64 sines, computed once per position).

    An op whose init other ops also read (`convert-tfm-to-linalg` and CSE
    leave one zero fill for k and v, and for gate and up, and one empty
    tensor for k's and v's rounded rows) gets one of its own right before
    it: every op that starts from a shared fill, since bufferized, a shared
    fill is a fill and a copy per reader, where a fill right before a
    projection becomes the kernel's zeroed accumulators; and an op that
    shares an empty tensor with an op it does not read from, directly or
    not, since a shared empty tensor is one buffer that its writers take
    turns in, which keeps independent kernels from running together
    (`tfm-gpu-merge-launches`). Ops in a chain keep sharing one.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def TfmGPUTensorCoreMatmulPass
    : Pass<"tfm-gpu-tensor-core-matmul", "::mlir::ModuleOp"> {
  let summary = "run bf16/f16 projections on tensor cores";
  let description = [{
    Runs on buffers, before the generic mapping. A projection as
    `convert-tfm-to-linalg` lowers it, a `linalg.generic` computing
    `C[m, n] += extf(A[m, k]) * extf(B[n, k])` (nn.Linear's weight layout)
    into an f32 `C`, with A and B bf16 (or both f16), K a static multiple
    of 8, N static and even, and rows contiguous, becomes one `gpu.launch`
    (no launch when A has no rows). When a `linalg.fill` with 0 right
    before it zeroes C, the accumulators start at zero and the fill goes;
    otherwise they start from C's values (a broadcast bias). When C is
    read only by an elementwise op (identity maps, directly or through an
    `expand_shape` to `[B, S, N]`) whose other operands and result have
    C's shape and identity layouts,
    and nothing between the two writes memory, the kernel runs where that
    op was and computes it as it stores, from its sums and the other
    operands' values at the same index (`tfm-gpu-fuse-elementwise`
    makes these: the rounding to bf16/f16, the residual added, act(gate) ·
    up); C's buffer then goes. Otherwise C gets the f32 sums:

    - `tile` = block rows, block columns, step, stages, warp rows, warp
      columns: blocks compute tiles of C, each warp a tile of its block's
      (default: 128x128 tiles of 4 warps of 64x64, steps of 64, 3 stages;
      when N is at most 512, 64x64 tiles of 4 warps of 32x32, steps of 32,
      4 stages, so that narrow projections still fill the GPU);
    - with `warpgroup-mma` (sm_90a), the products are wgmma m64nNk16 on
      descriptors of the shared tiles (128-byte swizzle, K-major), a
      warpgroup's tile 64 rows by the tile's warp columns (default:
      128x256 tiles of 2 warpgroups, steps of 64, 4 stages; 64x128 tiles
      of one warpgroup when N is at most 512), one step's group left
      running while the next is issued;
    - with `tma` too, one thread loads each step's A and B tiles with
      `cp.async.bulk.tensor` (TMA) through tensor maps the host makes
      (`nvgpu.tma.create.descriptor`; zeros past M, N and K), and a
      barrier object per stage (`mbarrier`) tells every thread when they
      have landed; boxes of at most 256 rows;
    - with `warp-specialized` too, the block has a warpgroup more, first,
      whose thread 0 runs the loads (a producer), and each stage a second
      barrier object on which each of the tile's warpgroups arrives once
      its products have read it (after the next step's `wgmma.wait_group
      1`), which the producer waits on before refilling it: no block
      barrier per step, the loads up to `stages` steps ahead;
    - with `persistent` too, a grid of at most G blocks, as many as the
      GPU's multiprocessors hold at once (by shared memory and threads:
      one block of the 128x256 tiles, two of the 64x128; one whenever two
      tile warpgroups take the producer's registers), block b computing
      tiles b, b + G, b + 2G, ... in turn: its producer goes on to the
      next tile's steps while the warpgroups finish and store the last
      one's (a stage's uses counted over the block's tiles), instead of
      each tile's block filling the stages anew. The host asks the
      device for its multiprocessor count (`tfmCudaMultiprocessors`, in
      the CUDA runtime) before each launch, unless `multiprocessors`
      fixes one; any count is correct, the device's balances the grid;
    - a one-dimensional grid of a block per tile, in groups of 16 row
      blocks that walk the columns together (their B tiles shared in L2,
      the group's A rows kept there);
    - K is walked in steps through the stages, in dynamic shared memory
      filled by `cp.async` stages - 1 steps ahead (one commit group per
      step; zeros past K);
    - products are `mma.sync` m16n8k16 fed by `ldmatrix`, accumulated in f32
      registers; C is written once, two floats at a time, inside its
      bounds (rows past M and columns past N read clamped rows and are not
      stored);
    - chunk c (16 bytes) of shared row r is stored at
      c ^ ((r / rows-per-128-bytes) mod chunks-per-row), so that ldmatrix
      reads are free of bank conflicts.

    A projection of 1 to `few-rows` rows (default 8; decode: a row a
    sequence) goes to a second kernel instead, which streams B through every multiprocessor
    (the tiles would give it N / 128 or N / 256 blocks): blocks of 4
    warps, a pair of columns each; a lane loads 16 bytes of K of the two
    rows of B and of each row of A at a time (B's for 4 steps before any
    product), multiplies and adds them in f32, the warp's sums are reduced
    by shuffles, and lane 0 stores each row's pair, or the epilogue's
    values. With a dynamic row count both kernels are launched, each with
    an empty grid when the rows are the other's (the runtime skips those;
    no host branch); a static count builds only its kernel.

    Where A is a norm's output that nothing but projections reads (RMSNorm
    or LayerNorm: row reductions over K, elementwise ops of their row
    values, and the elementwise norm of the rows with its weight and bias;
    `norm-prologues`), the few-rows kernel reads the norm's input instead:
    each warp sums each row's values over K itself (the rows are read by
    every warp anyway), then computes each 8-element chunk of A with the
    norm's own ops, lanewise, as it reads it. The norm's ops then run over
    a subview of their leading dim that is empty for 1 to `few-rows` rows,
    so that a decode step launches no norm kernel; with more rows they
    compute A for the tile kernel as before.

    The few-rows kernel of a projection whose epilogue reads another
    projection's sums (up's `act(gate) · up`) computes those sums too,
    where the other is of the same rows, K and N, zero-filled, and read by
    nothing else: its lanes load both projections' weights (two steps of
    K at a time rather than four), each row's chunk of A once for both,
    and the epilogue takes the other's sums from registers; the other has
    no few-rows kernel, and its f32 sums are stored only by its tile
    kernel.

    Other contractions keep the generic mapping.
  }];
  let options = [
    ListOption<"tile", "tile", "int64_t",
               "The kernel's tiling: block rows, block columns, step, "
               "stages, warp rows, warp columns (warpgroup rows and "
               "columns with warpgroup-mma; default: chosen by N)">,
    Option<"warpgroupMma", "warpgroup-mma", "bool", /*default=*/"false",
           "Products as warpgroup MMA (wgmma, sm_90a) rather than mma.sync">,
    Option<"tma", "tma", "bool", /*default=*/"false",
           "With warpgroup-mma: each step's tiles loaded by TMA (tensor "
           "maps made by the host) rather than by every thread's cp.async">,
    Option<"warpSpecialized", "warp-specialized", "bool",
           /*default=*/"false",
           "With tma: a producer warpgroup of its own issues the loads, and "
           "the tile's warpgroups free each stage through barrier objects "
           "(no block barrier per step)">,
    Option<"persistent", "persistent", "bool", /*default=*/"false",
           "With warp-specialized: persistent blocks, as many as the GPU's "
           "multiprocessors hold at once, each walking its tiles in turn">,
    Option<"multiprocessors", "multiprocessors", "int64_t",
           /*default=*/"0",
           "With persistent: size the grid for this many multiprocessors "
           "(0: the device's count, asked at run time)">,
    Option<"fewRows", "few-rows", "int64_t", /*default=*/"8",
           "Projections of at most this many rows (0 to 16; 0: none) on "
           "the few-rows kernel rather than tensor-core tiles">,
    Option<"normPrologues", "norm-prologues", "bool", /*default=*/"true",
           "The few-rows kernel computes the norm whose output is its A "
           "from the norm's input, and the norm's kernels run for more "
           "rows only">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def TfmGPUMapToKernelsPass
    : Pass<"tfm-gpu-map-to-kernels", "::mlir::func::FuncOp"> {
  let summary = "run a bufferized host function's loops as GPU kernels and "
                "its buffers in device memory";
  let description = [{
    The GPU target's generic mapping, for every op that has no dedicated
    GPU kernel yet: it runs on memrefs whose loops are `scf.parallel`
    (`convert-linalg-to-parallel-loops`, `scf-forall-to-parallel`) and
    leaves the function as host code that only launches kernels and moves
    descriptors:

    - each outermost `scf.parallel` becomes a `gpu.launch` with one thread
      per point of its iteration space, flattened with the last dim
      fastest (consecutive threads touch consecutive elements), in blocks
      of `block-size` threads; parallel loops nested in it run
      sequentially in that thread;
    - except when its body ends in a sequential loop that folds values into
      one element of a buffer (`M[idx] = combine(M[idx], x(k))`, f32
      add/max/min: a linalg reduction such as a norm's sum of squares or a
      softmax's max): then each point gets a warp, whose lanes fold every
      32nd step from the neutral element (reading consecutive elements),
      combine their folds by xor shuffles, and lane 0 folds the result into
      the element (the sum is reassociated, as GPU libraries do); when the
      host loop right before it fills every such element with the fold's
      neutral element (a norm's zeroed sums), that loop goes and lane 0
      stores the fold without reading the element;
    - and when such a reduction starts from the neutral element and the
      host loop right after it applies each point's fold to a row (its
      dims are the reduction's points and one more, it reads the fold only
      at its own point, and it stores only into allocations the reduction
      does not read: a norm's scaling), the two are one kernel with a
      block per point: its threads fold every `block-size`-th step, each
      warp combines its lanes by xor shuffles, every thread combines the
      warps' folds through shared memory in the same order (the same value
      in each), thread 0 stores it (not when nothing else reads the
      buffer, which then goes: a norm's sums), and every thread applies it
      to every `block-size`-th element of the row;
    - a host-level nest of sequential loops that folds a predicate of
      every point into one i1 element with `andi` or `ori` (an input
      check: every token id in range) gets a thread per point, which
      stores the absorbing value (false for `andi`, true for `ori`) when
      its predicate has it: the folds are idempotent, so order and races
      do not matter, and no thread reads the element;
    - a host-level sequential loop whose iterations write disjoint rows
      (its body only reads memory and runs parallel loops that store into
      views of row `iv` of buffers defined outside it, which nothing in
      the loop reads: a KV cache's update, one row of the batch at a
      time) becomes, per parallel loop in it, a kernel with a thread per
      (row, point), each point evaluating the loads and views it reads
      for its row; consecutive parallel loops over the same points that
      write different buffers share a kernel (a cache's K and V rows);
    - any other host-level sequential loop, or a store, runs in a
      one-thread kernel;
    - a host-level load (a check's verdict) is copied where it was to a
      host buffer made at the function's entry, and read after the device
      has finished (`gpu.wait`) where its value is first needed: the
      copies of several reads share one wait (a wait with no GPU work
      issued since the previous one goes);
    - `memref.copy` becomes a parallel loop first, so strided views copy
      on the device too;
    - constants and constant globals (tables computed at compile time)
      that a kernel uses, the dedicated kernels' included, are cloned into
      it: a constant stays a constant in the kernel (a division by 32 is a
      shift, not a division by a kernel argument), and outlining moves a
      global's copy into device memory;
    - host `memref.alloc`/`dealloc` become `gpu.alloc`/`gpu.dealloc`; an
      allocation inside a kernel must have a static size and becomes a
      `memref.alloca` (thread-local scratch).

    Regions of `scf.if` at host level are host code too. Anything else with
    a region at host level is an error that names the op.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block of the generated kernels">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def TfmGPUMergeLaunchesPass
    : Pass<"tfm-gpu-merge-launches", "::mlir::func::FuncOp"> {
  let summary = "launch independent kernels of the same block shape as one";
  let description = [{
    Runs on `gpu.launch` ops, before outlining. Each launch, in order, joins
    the nearest earlier launch in its block when:

    - both are a row of blocks (grid y and z 1) of the same threads (a row
      too) and the same dynamic shared memory, and neither has workgroup
      or private attributions, clusters, static shared memory or calls;
      their bodies read their block's place through the launch's
      arguments only;
    - neither writes a buffer the other reads or writes (buffers compared
      as the allocations, entry-point arguments and globals they are views
      of: different allocations are different memory, and so are an entry
      point's arguments where one is written, as its ABI requires;
      anything else may be any buffer);
    - the ops between the two that the later launch depends on, directly
      or not (what it uses, the earlier writers and readers of its
      buffers: a projection's tile kernel before its few-rows kernel, the
      allocation of its output), do not depend on the earlier launch:
      they move before it, in order.

    The merged launch has both grids' blocks: those below the first
    kernel's count run its body, the others the second's, with the block
    index less that count. A kernel whose memory accesses cannot be
    bounded (raw pointers, tensor maps) merges with none, and so does a
    kernel of warpgroup MMA (ptxas serializes the wgmma of a kernel that
    holds two wgmma pipelines) or of warp specialization (setmaxnreg).

    Why: each launch costs the host microseconds, and a decode step of a
    small batch is mostly launches. q's, k's and v's few-rows kernels (and
    their tile kernels where these use mma.sync), and q's and k's RoPE,
    become one launch each; the merged grid also fills more
    multiprocessors than k's or v's alone. tfm-compile's
    `--gpu-separate-launches` leaves the pass out.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect"];
}

def TfmGPUMergeKernelModulesPass
    : Pass<"tfm-gpu-merge-kernel-modules", "::mlir::ModuleOp"> {
  let summary = "gather the outlined kernels into one gpu.module";
  let description = [{
    `gpu-kernel-outlining` puts each kernel into a `gpu.module` of its own,
    which would become one binary, one PTX file and one module load per
    kernel (a model has hundreds). This moves every kernel into a single
    `gpu.module @tfm_kernels`, named after the module it came from, and
    points the launches at it, with one copy of the constant globals the
    kernels read (outlining copies each into every module that reads it).
    Modules holding anything else are left as they are.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def TfmGPUSkipTensorMapWaitsPass
    : Pass<"tfm-gpu-skip-tensor-map-waits", "::mlir::func::FuncOp"> {
  let summary = "keep a call's stream going through the tensor maps it "
                "makes";
  let description = [{
    Runs after `gpu-async-region`, which makes the host wait for the
    stream (`gpu.wait [%t]`: synchronize it, then start a new one) before
    every host op that may touch memory, among them
    `nvgpu.tma.create.descriptor`: each projection or attention whose tiles
    TMA loads made the host wait for all the GPU work before it, and the
    GPU then idled while the next launches came. A tensor map only reads
    the memref's address, sizes and strides on the host, which are known
    without waiting. Where a host wait is followed, in the same block, by
    tensor maps and ops free of memory effects only, and then by the new
    stream's `gpu.wait async` (no dependencies), the wait goes and the
    chain goes on from the old token, on the same stream.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def TfmNVVMExternDynamicSharedMemoryPass
    : Pass<"tfm-nvvm-extern-dynamic-shared-memory",
           "::mlir::gpu::GPUModuleOp"> {
  let summary = "declare a kernel module's dynamic shared memory extern";
  let description = [{
    Runs on a `gpu.module` lowered to the LLVM dialect
    (`convert-gpu-to-nvvm`), which turns `gpu.dynamic_shared_memory` into
    an internal zero-length array in shared memory. LLVM's NVPTX back end
    demotes an internal shared variable that one kernel reads into a
    variable of that kernel, which for a zero-length array is one byte:
    every kernel would then index past it. This makes each such array an
    external declaration, as CUDA C++ declares
    `extern __shared__ char memory[]`: PTX's `.extern .shared` array, which
    starts where the launch's dynamic shared memory does.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def TfmNVVMRegisterReallocationPass
    : Pass<"tfm-nvvm-register-reallocation", "::mlir::gpu::GPUModuleOp"> {
  let summary = "one block a multiprocessor for kernels that move registers "
                "between warpgroups";
  let description = [{
    Runs on a `gpu.module` lowered to the LLVM dialect. A kernel with
    `nvvm.setmaxregister` (PTX `setmaxnreg`: a producer warpgroup gives up
    registers that the others take) gets `nvvm.minctasm = 1` (PTX
    `.minnctapersm 1`), as CUTLASS's and FlashAttention-3's launch bounds
    give theirs. Without it ptxas may start such a kernel with fewer
    registers than its `.maxntid` share, cannot tell how many each
    warpgroup has at entry, and drops every `setmaxnreg` (note C7508).
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def TfmGPUEmulateKernelsPass
    : Pass<"tfm-gpu-emulate-kernels", "::mlir::ModuleOp"> {
  let summary = "the kernels of a module at the cuda target's kernels stage "
                "as CPU functions that a GPU emulator runs";
  let description = [{
    For checking the GPU kernels where there is no GPU: keeps only the
    module's `gpu.module` bodies and makes each `gpu.func` a `func.func` of
    the same name and arguments (a kernel marked `tfm.emulated_kernel`),
    without GPU memory spaces. What only a GPU has becomes a call into the
    emulator, which runs each thread of a block as a fiber
    (`test/Runtime/Inputs/fake-cuda-kernels.c`):
    - `gpu.thread_id`, `block_id`, `block_dim`, `grid_dim`, `lane_id`:
      `tfm_emu_id(i32 which) -> i64`;
    - `gpu.barrier`: `tfm_emu_barrier()`;
    - `gpu.shuffle` of 32-bit values: `tfm_emu_shuffle(value, offset,
      width, mode) -> i64` (the valid bit at bit 32);
    - `nvgpu.ldmatrix`: `tfm_emu_ldmatrix(row, tiles, transpose, out)`;
    - `nvvm.mma.sync` m16n8k16 (bf16 or f16, f32 sums):
      `tfm_emu_mma(a0..a3, b0, b1, c0..c3, type, out)`;
    - `nvgpu.device_async_copy` (cp.async), `nvvm.cp.async.commit.group`
      and `wait.group`: `tfm_emu_cp_async(dst, src, dstBytes, srcBytes)`,
      `tfm_emu_cp_async_commit()`, `tfm_emu_cp_async_wait(n)` (a copy lands
      at the latest moment PTX allows: the wait on its group);
    - sm_90a: `nvvm.wgmma.mma_async`, and the wgmma that
      TensorCoreBuilder writes as inline PTX (A from registers):
      `tfm_emu_wgmma(acc, n, aRegisters, aDescriptor, bDescriptor, flags)`
      with the accumulators in scratch memory, done when issued, so its
      fences, commits and waits go; barrier objects (`nvvm.mbarrier.init`,
      `arrive`, `arrive.expect_tx`, `try_wait` on a parity); TMA loads
      (`nvvm.cp.async.bulk.tensor.shared.cluster.global`:
      `tfm_emu_tma_load`); named barriers (`nvvm.barrier`,
      `nvvm.barrier.arrive`); proxy fences and `setmaxnreg` go, and
      pointers lose their address spaces.
    Dynamic shared memory is the global `tfm_emu_shared` (256 KiB, aligned
    to its size), which the emulator gives each block in turn. An op of a
    GPU dialect that has no emulated form is an error.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::memref::MemRefDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def TfmGPUEmulatedEntryPointsPass
    : Pass<"tfm-gpu-emulated-entry-points", "::mlir::ModuleOp"> {
  let summary = "a cuLaunchKernel-style entry point for each emulated "
                "kernel";
  let description = [{
    Runs after the emulated kernels (`tfm-gpu-emulate-kernels`) are lowered
    to the LLVM dialect. For each `llvm.func` marked
    `tfm.emulated_kernel`, adds `<name>_emulated(ptr params)`, which loads
    each argument through its pointer in `params` (the `kernelParams` of
    `cuLaunchKernel`: the host passes memrefs as their expanded
    descriptors, as the kernel takes them) and calls the kernel.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // TFM_CODEGEN_PASSES_TD

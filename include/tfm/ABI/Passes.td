//===- Passes.td - entry-point ABI passes ------------------*- tablegen -*-===//
//
// The passes that turn public functions into the C-callable entry points a
// compiled library exports (docs/DESIGN.md, entry-point ABI). They touch no
// tfm op: they work on func, tensor, linalg and bufferization.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_ABI_PASSES_TD
#define TFM_ABI_PASSES_TD

include "mlir/Pass/PassBase.td"

def TfmExposeEntryPointsPass
    : Pass<"tfm-expose-entry-points", "::mlir::ModuleOp"> {
  let summary = "rewrite public functions into the C-callable entry-point ABI";
  let description = [{
    Rewrites every public function with a body from
    `(tensor inputs) -> (tensor results)` into
    `(memref inputs, memref outputs) -> i32` carrying
    `llvm.emit_c_interface`, so a caller passes memref descriptors to
    `_mlir_ciface_<name>` and owns every buffer (docs/DESIGN.md, entry-point
    ABI). The result is a status, 0 for success; this pass always returns 0
    and `tfm-insert-runtime-checks` adds the failure codes. Inputs are read through `bufferization.to_tensor ... restrict`;
    results are written into the output buffers with
    `bufferization.materialize_in_destination ... restrict writable`, so
    bufferization computes them in place and no copy or hidden allocation
    crosses the boundary. Input and output buffers must not alias.

    A result with `tfm.updates = N` (a KV cache) gets no output buffer: it is
    written back into input `N`'s buffer, which is read through
    `to_tensor ... restrict writable`, so an `insert_slice` of the new rows
    into it is done in place and nothing else of it is copied. The result
    must have input `N`'s type.

    Before:

    ```mlir
    func.func @f(%x: tensor<?x64xf32>) -> tensor<?x64xf32>
    ```

    After:

    ```mlir
    func.func @f(%x: memref<?x64xf32>, %out: memref<?x64xf32>) -> i32
        attributes {llvm.emit_c_interface} {
      %t = bufferization.to_tensor %x restrict : memref<?x64xf32> to tensor<?x64xf32>
      ...
      bufferization.materialize_in_destination %r in restrict writable %out
          : (tensor<?x64xf32>, memref<?x64xf32>) -> ()
      %ok = arith.constant 0 : i32
      return %ok : i32
    }
    ```

    Arguments and results that are not ranked tensors are rejected.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect"];
}

def TfmInsertRuntimeChecksPass
    : Pass<"tfm-insert-runtime-checks", "::mlir::ModuleOp"> {
  let summary = "check runtime shapes and gather indices before computing";
  let description = [{
    Runs on entry points after `tfm-expose-entry-points`, on linalg on
    tensors. It derives what the computation assumes about its inputs and
    checks it at the top of the function, before anything is read:

    - every pair of dynamic dims that index the same loop of a linalg op
      must be equal (e.g. `position_ids` and `input_ids` lengths);
    - every `cf.assert` of `tensor.dim == tensor.dim` (how tiling states what
      its loops assume) or of `tensor.dim >= constant` (a model's last
      position needs one) holds; such asserts are removed;
    - every other top-level `cf.assert` whose condition is computed from the
      inputs alone (sizes, values: a KV cache's lengths against its
      capacity) holds, with the assert's message: its computation is cloned
      before the checks, and the assert is removed;
    - every output buffer must have the shape of the result written to it;
    - every integer input used as a gather index (`tfm.embedding` ids) must
      lie in `[0, rows)`.

    Dims of intermediate values are expressed through input dims first;
    a requirement that cannot be expressed that way is not checked. When a
    check fails the function returns `1 + k` (k: the failed check's index)
    without computing anything; otherwise it computes and returns 0. The
    checks' messages are listed, in order, in the function attribute
    `tfm.checks`, which tfm-compile copies into the library's manifest.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // TFM_ABI_PASSES_TD

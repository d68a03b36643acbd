//===- EntryPoints.h - what a compiled library exports ----------*- C++ -*-===//
//
// The signatures of a module's public functions, captured before lowering
// (names come from `tfm.name` argument and result attributes), and the two
// descriptions generated from them: the JSON manifest embedded in every
// compiled library (symbol `tfm_manifest`) and the C header.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_COMPILER_ENTRYPOINTS_H
#define TFM_COMPILER_ENTRYPOINTS_H

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace mlir::tfm {

/// The attribute naming a function argument or result (e.g. the Hugging Face
/// parameter name "model.layers.0.self_attn.q_proj.weight").
constexpr llvm::StringLiteral kNameAttr = "tfm.name";

/// Dim `dim` of input `input`.
struct DimSource {
  unsigned input;
  unsigned dim;
};

struct TensorSignature {
  std::string name;
  std::vector<int64_t> shape; // -1 for a dynamic dim
  std::string dtype;          // f32, f16, bf16, i32, i64, i1
  /// Outputs only: for each dynamic dim, the input dim it equals, when the
  /// compiler can tell (callers size output buffers from it).
  std::vector<std::optional<DimSource>> dimSources;
};

struct EntryPoint {
  std::string name;
  std::vector<TensorSignature> inputs;
  std::vector<TensorSignature> outputs;
};

/// The public functions of `module`, which must take and return ranked
/// tensors of supported element types.
FailureOr<std::vector<EntryPoint>> collectEntryPoints(ModuleOp module);

/// Fills the `dimSources` of every output from `module` lowered to the
/// linalg stage, where result dims can be expressed through input dims.
void resolveOutputDimSources(ModuleOp linalgModule,
                             std::vector<EntryPoint> &entryPoints);

/// {"entry_points": [{"name", "inputs": [{"name", "shape", "dtype"}],
/// "outputs": [{..., "dim_sources": [[input, dim] or null per dim]}]}]}
std::string formatManifest(const std::vector<EntryPoint> &entryPoints);

/// A C header declaring `_mlir_ciface_<name>` for every entry point with
/// typed memref descriptors and the argument order spelled out.
std::string formatCHeader(const std::vector<EntryPoint> &entryPoints,
                          llvm::StringRef libraryName);

} // namespace mlir::tfm

#endif // TFM_COMPILER_ENTRYPOINTS_H

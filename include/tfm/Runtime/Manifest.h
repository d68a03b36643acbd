//===- Manifest.h - the entry points a compiled library exports -*- C++ -*-===//
//
// Every library built by tfm-compile embeds a JSON manifest (the exported
// NUL-terminated string `tfm_manifest`) describing its entry points: names,
// shapes and dtypes of inputs and outputs, which input dims size each
// dynamic output dim, and the runtime checks. For each entry point `name` it
// also exports `int32_t tfm_entry_<name>(void **descriptors)`, which takes
// the memref descriptor pointers of the inputs then the outputs as one array
// and returns the entry point's status (0, or 1 + index of a failed check).
//
// This header has no LLVM or MLIR dependency: the runtime library
// (tfm-c/Runtime.h), which runs where neither is installed, reads manifests
// through it; the compiler writes them.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_RUNTIME_MANIFEST_H
#define TFM_RUNTIME_MANIFEST_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlir::tfm {

/// The entry point of a library compiled with prepacked weights
/// (tfm-compile --prepack-weights) that makes, from the weights, the inputs
/// `<weight>.packed` that the other entry points read too: a caller runs it
/// once, when it binds the weights.
inline constexpr std::string_view kPrepareWeightsEntry = "prepare_weights";

/// Dim `dim` of input `input`.
struct DimSource {
  unsigned input;
  unsigned dim;
};

struct TensorSignature {
  std::string name;
  std::vector<int64_t> shape; // -1 for a dynamic dim
  std::string dtype;          // f32, f16, bf16, i32, i64, i1
  /// Outputs only: for each dim, the input dim it equals when the compiler
  /// can tell (callers size output buffers from it).
  std::vector<std::optional<DimSource>> dimSources;
  /// Inputs only: the entry point writes the updated value back into the
  /// caller's array (a KV cache), which must then be writable and stay
  /// where it is.
  bool updated = false;
};

struct EntryPoint {
  std::string name;
  std::vector<TensorSignature> inputs;
  std::vector<TensorSignature> outputs;
  /// What the entry point checks before computing; it returns 0 on success
  /// or 1 + the index of the first failed check.
  std::vector<std::string> checks;
};

/// Work of a language model compiled from a description, as a function of
/// batch B and sequence S (entry point inputs 0 and 1, `input_ids`):
/// `B*S*perToken + B*visiblePairs(S)*perVisiblePair`, where a causal mask
/// sees S(S+1)/2 (query, key) pairs and a sliding window fewer.
struct FlopModel {
  double perToken = 0;       // 2 x every projection/FFN/LM-head weight
  double perVisiblePair = 0; // 4 x head dim x query heads x layers
  int64_t slidingWindow = 0; // 0: causal
  double count(int64_t batch, int64_t length) const;
};

struct Manifest {
  /// Where the entry points' kernels run ("cpu"): a host runs a library
  /// only for a device it drives.
  std::string device = "cpu";
  std::vector<EntryPoint> entryPoints;
  std::optional<FlopModel> flops;
};

/// {"device": "cpu", "entry_points": [{"name", "inputs": [{"name", "shape", "dtype",
///  "updated" (only when true)}],
///  "outputs": [{..., "dim_sources": [[input, dim] or null per dim]}],
///  "checks": ["message", ...]}],
///  "flops": {"per_token", "per_visible_pair", "sliding_window"}}
/// (lib/Runtime/ManifestWriter.cpp, with llvm::json: the compiler's side.)
std::string formatManifest(const Manifest &manifest);
/// The manifest `json` holds, or nullopt with `error` saying what is wrong
/// ("malformed tfm_manifest: ..."). Read as strictly as the compiler reads
/// JSON: a library file is untrusted input.
std::optional<Manifest> parseManifest(std::string_view json,
                                      std::string &error);

/// Bytes per element of `dtype` (i1 is one byte).
size_t elementSize(std::string_view dtype);

} // namespace mlir::tfm

#endif // TFM_RUNTIME_MANIFEST_H

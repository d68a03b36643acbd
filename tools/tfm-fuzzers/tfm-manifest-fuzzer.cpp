//===- tfm-manifest-fuzzer.cpp - fuzz the manifest reader ------------------===//
//
// A library file is untrusted input: the runtime reads its embedded
// manifest with this reader (lib/Runtime/Manifest.cpp), which must reject
// malformed JSON and manifests that name input dims that do not exist.

#include "tfm/Runtime/Manifest.h"

#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string error;
  std::optional<mlir::tfm::Manifest> manifest = mlir::tfm::parseManifest(
      std::string_view(reinterpret_cast<const char *>(data), size), error);
  if (!manifest)
    return 0;
  // Every dim source of an accepted manifest names an existing input dim.
  for (const mlir::tfm::EntryPoint &entry : manifest->entryPoints)
    for (const mlir::tfm::TensorSignature &output : entry.outputs)
      for (const auto &source : output.dimSources)
        if (source)
          (void)entry.inputs.at(source->input).shape.at(source->dim);
  return 0;
}

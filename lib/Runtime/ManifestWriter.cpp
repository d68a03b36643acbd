//===- ManifestWriter.cpp - the JSON manifest a compiled library embeds ----===//

#include "tfm/Runtime/Manifest.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace mlir::tfm;
namespace json = llvm::json;

static json::Array toJSON(const std::vector<TensorSignature> &tensors) {
  json::Array array;
  for (const TensorSignature &tensor : tensors) {
    json::Object object{{"name", tensor.name},
                        {"shape", json::Array(tensor.shape)},
                        {"dtype", tensor.dtype}};
    if (tensor.updated)
      object["updated"] = true;
    if (!tensor.dimSources.empty()) {
      json::Array sources;
      for (const std::optional<DimSource> &source : tensor.dimSources)
        sources.push_back(source ? json::Value(json::Array{source->input,
                                                           source->dim})
                                 : json::Value(nullptr));
      object["dim_sources"] = std::move(sources);
    }
    array.push_back(std::move(object));
  }
  return array;
}

std::string mlir::tfm::formatManifest(const Manifest &manifest) {
  json::Array entries;
  for (const EntryPoint &entry : manifest.entryPoints)
    entries.push_back(json::Object{{"name", entry.name},
                                   {"inputs", toJSON(entry.inputs)},
                                   {"outputs", toJSON(entry.outputs)},
                                   {"checks", json::Array(entry.checks)}});
  json::Object root{{"device", manifest.device},
                    {"entry_points", std::move(entries)}};
  if (manifest.flops)
    root["flops"] = json::Object{
        {"per_token", manifest.flops->perToken},
        {"per_visible_pair", manifest.flops->perVisiblePair},
        {"sliding_window", manifest.flops->slidingWindow}};
  return llvm::formatv("{0}", json::Value(std::move(root)));
}

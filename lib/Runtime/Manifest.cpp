//===- Manifest.cpp - the JSON manifest of a compiled library --------------===//

#include "tfm/Runtime/Manifest.h"
#include "tfm/Support/InputLimits.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <algorithm>

using namespace mlir::tfm;
namespace json = llvm::json;

size_t mlir::tfm::elementSize(llvm::StringRef dtype) {
  return llvm::StringSwitch<size_t>(dtype)
      .Cases({"f32", "i32"}, 4)
      .Cases({"f16", "bf16"}, 2)
      .Case("i64", 8)
      .Default(1);
}

double FlopModel::count(int64_t batch, int64_t length) const {
  // Query i (0-based) sees min(i + 1, window) keys.
  double pairs = 0;
  for (int64_t i = 0; i < length; ++i)
    pairs += slidingWindow > 0 ? std::min<int64_t>(i + 1, slidingWindow)
                               : i + 1;
  return batch * (length * perToken + pairs * perVisiblePair);
}

static json::Array toJSON(const std::vector<TensorSignature> &tensors) {
  json::Array array;
  for (const TensorSignature &tensor : tensors) {
    json::Object object{{"name", tensor.name},
                        {"shape", json::Array(tensor.shape)},
                        {"dtype", tensor.dtype}};
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

static llvm::Error malformed(const llvm::Twine &what) {
  return llvm::createStringError("malformed tfm_manifest: " + what);
}

static llvm::Expected<std::vector<TensorSignature>>
parseTensors(const json::Array *array) {
  if (!array)
    return malformed("expected an array of tensors");
  std::vector<TensorSignature> tensors;
  for (const json::Value &value : *array) {
    const json::Object *object = value.getAsObject();
    const json::Array *shape = object ? object->getArray("shape") : nullptr;
    std::optional<llvm::StringRef> name =
        object ? object->getString("name") : std::nullopt;
    std::optional<llvm::StringRef> dtype =
        object ? object->getString("dtype") : std::nullopt;
    if (!shape || !name || !dtype)
      return malformed("a tensor needs name, shape and dtype");
    TensorSignature tensor{name->str(), {}, dtype->str(), {}};
    for (const json::Value &size : *shape) {
      std::optional<int64_t> dim = size.getAsInteger();
      if (!dim || *dim < -1)
        return malformed("a dim must be an integer, -1 when dynamic");
      tensor.shape.push_back(*dim);
    }
    if (const json::Array *sources = object->getArray("dim_sources")) {
      for (const json::Value &source : *sources) {
        const json::Array *pair = source.getAsArray();
        if (pair && pair->size() == 2 && (*pair)[0].getAsInteger() &&
            (*pair)[1].getAsInteger())
          tensor.dimSources.push_back(
              DimSource{static_cast<unsigned>(*(*pair)[0].getAsInteger()),
                        static_cast<unsigned>(*(*pair)[1].getAsInteger())});
        else
          tensor.dimSources.push_back(std::nullopt);
      }
    }
    tensors.push_back(std::move(tensor));
  }
  return tensors;
}

llvm::Expected<Manifest> mlir::tfm::parseManifest(llvm::StringRef text) {
  llvm::Expected<json::Value> root = parseJSON(text);
  if (!root)
    return malformed(llvm::toString(root.takeError()));
  const json::Object *object = root->getAsObject();
  const json::Array *entries =
      object ? object->getArray("entry_points") : nullptr;
  if (!entries)
    return malformed("no entry_points");
  Manifest manifest;
  std::optional<llvm::StringRef> device = object->getString("device");
  if (!device)
    return malformed("no device");
  manifest.device = device->str();
  for (const json::Value &value : *entries) {
    const json::Object *entry = value.getAsObject();
    std::optional<llvm::StringRef> name =
        entry ? entry->getString("name") : std::nullopt;
    if (!name)
      return malformed("an entry point needs a name");
    auto inputs = parseTensors(entry->getArray("inputs"));
    if (!inputs)
      return inputs.takeError();
    auto outputs = parseTensors(entry->getArray("outputs"));
    if (!outputs)
      return outputs.takeError();
    for (const TensorSignature &output : *outputs)
      for (const std::optional<DimSource> &source : output.dimSources)
        if (source && (source->input >= inputs->size() ||
                       source->dim >= (*inputs)[source->input].shape.size()))
          return malformed("output '" + output.name +
                           "' is sized from an input dim that does not exist");
    std::vector<std::string> checks;
    if (const json::Array *list = entry->getArray("checks"))
      for (const json::Value &check : *list)
        checks.push_back(check.getAsString().value_or("").str());
    manifest.entryPoints.push_back({name->str(), std::move(*inputs),
                                    std::move(*outputs), std::move(checks)});
  }
  if (const json::Object *flops = object->getObject("flops")) {
    FlopModel model;
    model.perToken = flops->getNumber("per_token").value_or(0);
    model.perVisiblePair = flops->getNumber("per_visible_pair").value_or(0);
    model.slidingWindow = flops->getInteger("sliding_window").value_or(0);
    manifest.flops = model;
  }
  return manifest;
}

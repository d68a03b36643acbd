//===- Manifest.cpp - reading the manifest of a compiled library -----------===//
//
// No LLVM here: the runtime library reads manifests where it is not
// installed.
//
//===----------------------------------------------------------------------===//

#include "tfm/Runtime/Manifest.h"

#include "JsonReader.h"

#include <algorithm>

using namespace mlir::tfm;
using json_reader::Value;

size_t mlir::tfm::elementSize(std::string_view dtype) {
  if (dtype == "f32" || dtype == "i32")
    return 4;
  if (dtype == "f16" || dtype == "bf16")
    return 2;
  if (dtype == "i64")
    return 8;
  return 1;
}

double FlopModel::count(int64_t batch, int64_t length) const {
  // Query i (0-based) sees min(i + 1, window) keys.
  double pairs = 0;
  for (int64_t i = 0; i < length; ++i)
    pairs += slidingWindow > 0 ? std::min<int64_t>(i + 1, slidingWindow)
                               : i + 1;
  return batch * (length * perToken + pairs * perVisiblePair);
}

namespace {

bool isDtype(const std::string &dtype) {
  for (const char *known : {"f32", "f16", "bf16", "i32", "i64", "i1"})
    if (dtype == known)
      return true;
  return false;
}

/// The tensors of `array` into `tensors`, or false with `error` set.
bool parseTensors(const std::vector<Value> *array,
                  std::vector<TensorSignature> &tensors, std::string &error) {
  if (!array) {
    error = "expected an array of tensors";
    return false;
  }
  for (const Value &value : *array) {
    const std::string *name = value.findString("name");
    const std::string *dtype = value.findString("dtype");
    const std::vector<Value> *shape = value.findArray("shape");
    if (!name || !dtype || !shape) {
      error = "a tensor needs name, shape and dtype";
      return false;
    }
    if (!isDtype(*dtype)) {
      error = "tensor '" + *name + "' has an unknown dtype '" + *dtype + "'";
      return false;
    }
    TensorSignature tensor{*name, {}, *dtype, {}};
    if (const Value *updated = value.find("updated")) {
      if (updated->kind != Value::Kind::Bool) {
        error = "tensor '" + *name + "': 'updated' must be true or false";
        return false;
      }
      tensor.updated = updated->boolean;
    }
    for (const Value &size : *shape) {
      if (!size.integer || *size.integer < -1) {
        error = "a dim must be an integer, -1 when dynamic";
        return false;
      }
      tensor.shape.push_back(*size.integer);
    }
    if (const std::vector<Value> *sources = value.findArray("dim_sources")) {
      if (sources->size() != tensor.shape.size()) {
        error = "tensor '" + *name + "' needs one dim source per dim";
        return false;
      }
      for (const Value &source : *sources) {
        const std::vector<Value> &pair = source.array;
        bool valid = source.kind == Value::Kind::Array && pair.size() == 2 &&
                     pair[0].integer && pair[1].integer &&
                     *pair[0].integer >= 0 && *pair[1].integer >= 0;
        if (valid)
          tensor.dimSources.push_back(
              DimSource{static_cast<unsigned>(*pair[0].integer),
                        static_cast<unsigned>(*pair[1].integer)});
        else
          tensor.dimSources.push_back(std::nullopt);
      }
    }
    tensors.push_back(std::move(tensor));
  }
  return true;
}

/// The manifest `root` describes, or false with `error` set.
bool parseRoot(const Value &root, Manifest &manifest, std::string &error) {
  const std::vector<Value> *entries = root.findArray("entry_points");
  if (!entries) {
    error = "no entry_points";
    return false;
  }
  const std::string *device = root.findString("device");
  if (!device) {
    error = "no device";
    return false;
  }
  manifest.device = *device;
  for (const Value &value : *entries) {
    const std::string *name = value.findString("name");
    if (!name) {
      error = "an entry point needs a name";
      return false;
    }
    EntryPoint entry{*name, {}, {}, {}};
    if (!parseTensors(value.findArray("inputs"), entry.inputs, error) ||
        !parseTensors(value.findArray("outputs"), entry.outputs, error))
      return false;
    for (const TensorSignature &output : entry.outputs)
      if (output.updated) {
        error = "output '" + output.name + "' cannot be 'updated'";
        return false;
      }
    for (const TensorSignature &output : entry.outputs)
      for (const std::optional<DimSource> &source : output.dimSources)
        if (source && (source->input >= entry.inputs.size() ||
                       source->dim >=
                           entry.inputs[source->input].shape.size())) {
          error = "output '" + output.name +
                  "' is sized from an input dim that does not exist";
          return false;
        }
    if (const std::vector<Value> *checks = value.findArray("checks"))
      for (const Value &check : *checks)
        entry.checks.push_back(check.string);
    manifest.entryPoints.push_back(std::move(entry));
  }
  if (const Value *flops = root.find("flops")) {
    FlopModel model;
    auto number = [&](const char *key) {
      const Value *member = flops->find(key);
      return member && member->kind == Value::Kind::Number ? member->number
                                                           : 0.0;
    };
    model.perToken = number("per_token");
    model.perVisiblePair = number("per_visible_pair");
    const Value *window = flops->find("sliding_window");
    model.slidingWindow = window && window->integer ? *window->integer : 0;
    manifest.flops = model;
  }
  return true;
}

} // namespace

std::optional<Manifest> mlir::tfm::parseManifest(std::string_view text,
                                                 std::string &error) {
  std::string why;
  std::optional<Value> root = json_reader::parse(text, why);
  Manifest manifest;
  if (!root || !parseRoot(*root, manifest, why)) {
    error = "malformed tfm_manifest: " + why;
    return std::nullopt;
  }
  return manifest;
}

//===- tfm-run.cpp - run a compiled tfm library on .npy inputs -------------===//
//
// tfm-run LIB.so [--entry=NAME] [--input NAME=FILE.npy]... [--params FILE]
//        [--random-params=SEED] [--output NAME=FILE.npy]... [--output-dir DIR]
//        [--check NAME=REF.npy]... [--rtol R] [--atol A] [--bench N] [--list]
//
// Inputs are bound by name from the library's manifest (tfm/Runtime/
// Manifest.h): --input files first, then tensors of a .safetensors file, then
// random parameters. Every dtype and shape is checked before anything runs.
//
//===----------------------------------------------------------------------===//

#include "tfm/Runtime/HostArray.h"
#include "tfm/Runtime/Manifest.h"
#include "tfm/Support/Version.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <dlfcn.h>
#include <map>
#include <random>

using namespace mlir::tfm;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory category("tfm-run options");
cl::opt<std::string> libraryPath(cl::Positional, cl::Required,
                                 cl::desc("<library.so>"), cl::cat(category));
cl::opt<std::string> entryName("entry", cl::desc("Entry point (default: the "
                                                 "only one)"),
                               cl::cat(category));
cl::list<std::string> inputs("input", cl::desc("NAME=FILE.npy"),
                             cl::cat(category));
cl::list<std::string> paramsPaths(
    "params",
    cl::desc("Inputs by name from a .safetensors file, or from the shards "
             "a *.safetensors.index.json lists; repeat for the shards of "
             "one checkpoint"),
    cl::value_desc("file"), cl::cat(category));
cl::opt<int64_t> randomSeed(
    "random-params", cl::desc("Fill the float inputs not given otherwise "
                              "with random parameters from this seed"),
    cl::init(-1), cl::cat(category));
cl::list<std::string> outputs("output", cl::desc("NAME=FILE.npy"),
                              cl::cat(category));
cl::opt<std::string> outputDir("output-dir",
                               cl::desc("Write every output as NAME.npy here"),
                               cl::cat(category));
cl::list<std::string> checks("check",
                             cl::desc("NAME=REF.npy: compare an output"),
                             cl::cat(category));
// --check passes iff max|out - ref| <= atol + rtol * max|ref|: the
// max-norm relative error the project states its tolerances in.
cl::opt<double> relativeTolerance("rtol", cl::desc("Relative tolerance of --check"),
                     cl::init(1e-5), cl::cat(category));
cl::opt<double> absoluteTolerance("atol", cl::desc("Absolute tolerance of --check"),
                     cl::init(1e-6), cl::cat(category));
cl::opt<unsigned> benchRuns("bench",
                            cl::desc("Time N runs; print the median"),
                            cl::init(0), cl::cat(category));
cl::opt<bool> list("list", cl::desc("Print the entry points and exit"),
                   cl::cat(category));

int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "tfm-run") << message << "\n";
  return 1;
}

std::string describe(const TensorSignature &tensor) {
  std::string text = "[";
  for (size_t i = 0; i < tensor.shape.size(); ++i)
    text += (i ? ", " : "") +
            (tensor.shape[i] < 0 ? "?" : std::to_string(tensor.shape[i]));
  return text + "] " + tensor.dtype;
}

/// Splits NAME=VALUE.
llvm::Expected<std::pair<std::string, std::string>>
splitAssignment(llvm::StringRef flag, llvm::StringRef text) {
  auto [name, value] = text.rsplit('=');
  if (name.empty() || value.empty() || !text.contains('='))
    return llvm::createStringError("--" + flag + " expects NAME=FILE, got '" +
                                   text + "'");
  return std::make_pair(name.str(), value.str());
}

/// The index of the tensor called `name` in `tensors`, or -1.
int findTensor(const std::vector<TensorSignature> &tensors,
               llvm::StringRef name) {
  for (auto [i, tensor] : llvm::enumerate(tensors))
    if (tensor.name == name)
      return i;
  return -1;
}

/// A --input/--output/--check NAME=FILE flag naming an input (or output) of
/// `entry`: the tensor's index and the file.
llvm::Expected<std::pair<int, std::string>>
bindFlag(llvm::StringRef flag, llvm::StringRef text, const EntryPoint &entry,
         bool output) {
  auto assignment = splitAssignment(flag, text);
  if (!assignment)
    return assignment.takeError();
  int index = findTensor(output ? entry.outputs : entry.inputs,
                         assignment->first);
  if (index < 0)
    return llvm::createStringError(
        "entry point '" + entry.name + "' has no " +
        (output ? "output" : "input") + " '" + assignment->first +
        "' (see --list)");
  return std::make_pair(index, assignment->second);
}

/// Random parameters: N(0, 1/fan_in) matrices, ones for norm weights, small
/// values for other vectors.
llvm::Expected<HostArray> randomArray(const TensorSignature &spec,
                                      std::mt19937_64 &rng) {
  llvm::Expected<HostArray> made = makeArray(spec.dtype, spec.shape);
  if (!made)
    return made.takeError();
  HostArray &array = *made;
  bool normWeight = llvm::StringRef(spec.name).ends_with("norm.weight");
  double scale = spec.shape.size() >= 2 ? 1.0 / std::sqrt(spec.shape.back())
                                        : 0.1;
  std::normal_distribution<double> normal(0.0, 1.0);
  for (int64_t i = 0, e = array.numElements(); i < e; ++i) {
    float value = normWeight ? 1.0f + 0.1f * normal(rng) : scale * normal(rng);
    uint8_t *out = array.bytes.data() + i * elementSize(spec.dtype);
    uint32_t bits;
    std::memcpy(&bits, &value, 4);
    if (spec.dtype == "f32") {
      std::memcpy(out, &value, 4);
    } else if (spec.dtype == "bf16") {
      uint16_t truncated = (bits + 0x7fff + ((bits >> 16) & 1)) >> 16;
      std::memcpy(out, &truncated, 2);
    } else { // f16 via _Float16
      _Float16 half = static_cast<_Float16>(value);
      std::memcpy(out, &half, 2);
    }
  }
  return made;
}

/// The memref descriptor {allocated, aligned, offset, sizes, strides} of a
/// contiguous array, as 64-bit words. The strides cannot overflow: a
/// HostArray's size was checked when it was made.
std::vector<int64_t> descriptorOf(HostArray &array) {
  int64_t rank = array.shape.size();
  std::vector<int64_t> words(3 + 2 * rank);
  auto address = reinterpret_cast<int64_t>(array.bytes.data());
  words[0] = words[1] = address;
  words[2] = 0;
  int64_t stride = 1;
  for (int64_t i = rank - 1; i >= 0; --i) {
    words[3 + i] = array.shape[i];
    words[3 + rank + i] = stride;
    stride *= array.shape[i];
  }
  return words;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  setToolVersionPrinter("tfm-run");
  cl::ParseCommandLineOptions(argc, argv,
                              "tfm-run: run a compiled tfm library\n");

  std::string absolute = libraryPath;
  if (!llvm::sys::path::is_absolute(absolute) &&
      !llvm::StringRef(absolute).contains('/'))
    absolute = "./" + absolute; // dlopen searches the system path otherwise
  void *library = dlopen(absolute.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library)
    return fail(llvm::Twine("cannot load '") + libraryPath + "': " + dlerror());
  auto *manifestText =
      reinterpret_cast<const char *>(dlsym(library, "tfm_manifest"));
  if (!manifestText)
    return fail("'" + libraryPath +
                "' has no tfm_manifest: was it built by tfm-compile?");
  llvm::Expected<Manifest> manifest = parseManifest(manifestText);
  if (!manifest)
    return fail(llvm::toString(manifest.takeError()));
  if (manifest->device != "cpu")
    return fail("'" + libraryPath + "' runs on device '" + manifest->device +
                "'; tfm-run runs cpu libraries");

  if (list) {
    for (const EntryPoint &entry : manifest->entryPoints) {
      llvm::outs() << entry.name << "\n";
      for (const TensorSignature &t : entry.inputs)
        llvm::outs() << "  in  " << t.name << ": " << describe(t) << "\n";
      for (const TensorSignature &t : entry.outputs)
        llvm::outs() << "  out " << t.name << ": " << describe(t) << "\n";
    }
    return 0;
  }

  const EntryPoint *entry = nullptr;
  for (const EntryPoint &candidate : manifest->entryPoints)
    if (entryName.empty() ? manifest->entryPoints.size() == 1
                          : candidate.name == entryName)
      entry = &candidate;
  if (!entry)
    return fail(entryName.empty()
                    ? "the library has several entry points: pass --entry"
                    : "no entry point '" + entryName + "' (see --list)");

  // Bind inputs: --input files, then the params file, then random.
  std::vector<std::optional<HostArray>> bound(entry->inputs.size());
  std::vector<std::string> origin(entry->inputs.size());
  for (const std::string &flag : inputs) {
    auto binding = bindFlag("input", flag, *entry, /*output=*/false);
    if (!binding)
      return fail(llvm::toString(binding.takeError()));
    auto [index, path] = *binding;
    auto array = readNpy(path);
    if (!array)
      return fail(llvm::toString(array.takeError()));
    bound[index] = std::move(*array);
    origin[index] = path;
  }
  if (!paramsPaths.empty()) {
    auto tensors = readCheckpoint(paramsPaths);
    if (!tensors)
      return fail(llvm::toString(tensors.takeError()));
    std::vector<bool> inCheckpoint(entry->inputs.size());
    for (auto &[name, tensor] : *tensors) {
      int index = findTensor(entry->inputs, name);
      // GPT-2 checkpoints saved from the base model lack the prefix.
      if (index < 0)
        index = findTensor(entry->inputs, "transformer." + name);
      if (index < 0)
        continue;
      if (inCheckpoint[index])
        return fail("input '" + entry->inputs[index].name +
                    "' is in the checkpoint twice, with and without the "
                    "'transformer.' prefix");
      inCheckpoint[index] = true;
      if (!bound[index]) { // --input files come first
        bound[index] = std::move(tensor.array);
        origin[index] = tensor.file;
      }
    }
  }
  std::mt19937_64 rng(randomSeed < 0 ? 0 : randomSeed);
  for (auto [i, spec] : llvm::enumerate(entry->inputs)) {
    bool isFloat = spec.dtype == "f32" || spec.dtype == "f16" ||
                   spec.dtype == "bf16";
    bool isStatic = llvm::all_of(spec.shape, [](int64_t s) { return s >= 0; });
    if (!bound[i] && randomSeed >= 0 && isFloat && isStatic) {
      llvm::Expected<HostArray> array = randomArray(spec, rng);
      if (!array)
        return fail("input '" + spec.name + "': " +
                    llvm::toString(array.takeError()));
      bound[i] = std::move(*array);
      origin[i] = "--random-params";
    }
    if (!bound[i])
      return fail("missing input '" + spec.name + "' " + describe(spec) +
                  ": give --input " + spec.name + "=FILE.npy" +
                  (isFloat && isStatic
                       ? ", a --params file holding it, or --random-params"
                       : ""));
    if (spec.dtype == "i32" && bound[i]->dtype == "i64") {
      // Token ids as NumPy and PyTorch make them.
      llvm::Expected<HostArray> narrow = narrowToInt32(*bound[i]);
      if (!narrow)
        return fail("input '" + spec.name + "' from '" + origin[i] +
                    "': " + llvm::toString(narrow.takeError()));
      bound[i] = std::move(*narrow);
    }
    const HostArray &array = *bound[i];
    bool shapeOk = array.shape.size() == spec.shape.size();
    for (size_t d = 0; shapeOk && d < spec.shape.size(); ++d)
      shapeOk = spec.shape[d] < 0 || spec.shape[d] == array.shape[d];
    if (array.dtype != spec.dtype || !shapeOk)
      return fail("input '" + spec.name + "' must be " + describe(spec) +
                  ", got " + array.describe() + " from '" + origin[i] + "'");
  }

  // Allocate outputs from the manifest's dim sources.
  std::vector<HostArray> results;
  for (const TensorSignature &spec : entry->outputs) {
    std::vector<int64_t> shape;
    for (auto [d, size] : llvm::enumerate(spec.shape)) {
      if (size >= 0) {
        shape.push_back(size);
        continue;
      }
      if (d >= spec.dimSources.size() || !spec.dimSources[d])
        return fail("cannot size output '" + spec.name +
                    "': its dim " + std::to_string(d) +
                    " does not follow an input dim");
      const DimSource &source = *spec.dimSources[d];
      shape.push_back(bound[source.input]->shape[source.dim]);
    }
    llvm::Expected<HostArray> array = makeArray(spec.dtype, shape);
    if (!array)
      return fail("output '" + spec.name + "': " +
                  llvm::toString(array.takeError()));
    results.push_back(std::move(*array));
  }

  // One descriptor per input then output, passed as a pointer array.
  std::vector<std::vector<int64_t>> descriptors;
  for (auto &array : bound)
    descriptors.push_back(descriptorOf(*array));
  for (HostArray &array : results)
    descriptors.push_back(descriptorOf(array));
  std::vector<void *> pointers;
  for (auto &words : descriptors)
    pointers.push_back(words.data());
  using PackedEntry = int32_t (*)(void **);
  auto function = reinterpret_cast<PackedEntry>(
      dlsym(library, ("tfm_entry_" + entry->name).c_str()));
  if (!function)
    return fail("'" + libraryPath + "' lacks tfm_entry_" + entry->name);

  if (int32_t status = function(pointers.data())) {
    std::string what = status > 0 && size_t(status) <= entry->checks.size()
                           ? entry->checks[status - 1]
                           : "unknown check";
    return fail(llvm::formatv("'{0}' refused its inputs (status {1}): {2}",
                              entry->name, status, what));
  }
  if (benchRuns > 0) {
    std::vector<double> seconds;
    for (unsigned run = 0; run < benchRuns; ++run) {
      auto start = std::chrono::steady_clock::now();
      function(pointers.data());
      seconds.push_back(std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - start)
                            .count());
    }
    std::sort(seconds.begin(), seconds.end());
    double median = seconds[seconds.size() / 2];
    llvm::outs() << llvm::formatv("{0}: median {1:F3} ms over {2} runs",
                                  entry->name, median * 1e3, benchRuns);
    if (manifest->flops && bound.size() >= 1 && bound[0]->shape.size() == 2) {
      double flops =
          manifest->flops->count(bound[0]->shape[0], bound[0]->shape[1]);
      llvm::outs() << llvm::formatv(", {0:F2} GFLOP/s ({1:F3} GFLOP)",
                                    flops / median * 1e-9, flops * 1e-9);
    }
    llvm::outs() << "\n";
  }

  // Outputs.
  for (const std::string &flag : outputs) {
    auto binding = bindFlag("output", flag, *entry, /*output=*/true);
    if (!binding)
      return fail(llvm::toString(binding.takeError()));
    if (auto error = writeNpy(binding->second, results[binding->first]))
      return fail(llvm::toString(std::move(error)));
  }
  if (!outputDir.empty()) {
    if (std::error_code code = llvm::sys::fs::create_directories(outputDir))
      return fail("cannot create '" + outputDir + "': " + code.message());
    for (auto [i, spec] : llvm::enumerate(entry->outputs)) {
      llvm::SmallString<128> path(outputDir);
      llvm::sys::path::append(path, spec.name + ".npy");
      if (auto error = writeNpy(path, results[i]))
        return fail(llvm::toString(std::move(error)));
    }
  }

  int status = 0;
  for (const std::string &flag : checks) {
    auto binding = bindFlag("check", flag, *entry, /*output=*/true);
    if (!binding)
      return fail(llvm::toString(binding.takeError()));
    auto [index, path] = *binding;
    const std::string &name = entry->outputs[index].name;
    auto reference = readNpy(path);
    if (!reference)
      return fail(llvm::toString(reference.takeError()));
    const HostArray &actual = results[index];
    if (reference->shape != actual.shape)
      return fail("reference '" + path + "' is " + reference->describe() +
                  " but output '" + name + "' is " + actual.describe());
    double maxError = 0, maxReference = 0;
    for (int64_t i = 0, e = actual.numElements(); i < e; ++i) {
      double a = actual.at(i), b = reference->at(i);
      // NaN never compares <=, so a NaN output fails below.
      double error = std::isnan(a) != std::isnan(b) ? NAN : std::fabs(a - b);
      maxError = std::isnan(error) ? error : std::max(maxError, error);
      maxReference = std::max(maxReference, std::fabs(b));
    }
    double bound = absoluteTolerance + relativeTolerance * maxReference;
    bool ok = maxError <= bound;
    status |= !ok;
    llvm::outs() << llvm::formatv(
        "check {0}: max abs error {1:e} (relative to max |reference| "
        "{2:e}: {3:e}), bound atol + rtol * max|reference| = {4:e}: {5}\n",
        name, maxError, maxReference,
        maxError / std::max(maxReference, 1e-300), bound,
        ok ? "PASS" : "FAIL");
  }
  return status;
}

//===- tfm-run.cpp - run a compiled tfm library on .npy inputs ------------===//
//
// tfm-run LIB.so [--entry=NAME] [--input NAME=FILE.npy]... [--params FILE]
//        [--random-params=SEED] [--output NAME=FILE.npy]... [--output-dir DIR]
//        [--check NAME=REF.npy]... [--rtol R] [--atol A] [--bench N] [--list]
//        [--device=cpu|cuda|cuda:N]
// tfm-run LIB.so --generate N --prompt 1,5,7|IDS.npy... [--temperature T]
//        [--top-k K] [--top-p P] [--seed S] [--eos ID] [--params FILE]...
//        [--prompt-text TEXT]... [--prompt-file PATH]... [--tokenizer PATH]
//
// Inputs are bound by name from the library's manifest: --input files first,
// then tensors of a checkpoint, then random parameters. The runtime library
// (tfm-c/Runtime.h) loads the library, checks every dtype and shape before
// anything runs, sizes the outputs and calls the entry point; this tool
// reads and writes the files.
//
// A --target=cuda library runs on arrays in GPU memory (DeviceArray.h):
// inputs are uploaded once and outputs downloaded once, so that --bench
// times the calls alone, and the kernels alone; the copies are reported
// apart.
//
//===----------------------------------------------------------------------===//

#include "DeviceArray.h"
#include "Generate.h"

#include "tfm-c/Runtime.h"
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
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
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
cl::opt<std::string> deviceFlag(
    "device",
    cl::desc("Where the library runs: cpu, or cuda (cuda:N for GPU N; "
             "default: where it was compiled for). It must match the "
             "library's --target"),
    cl::value_desc("cpu|cuda|cuda:N"), cl::cat(category));
cl::opt<bool> list("list", cl::desc("Print the entry points and exit"),
                   cl::cat(category));
cl::opt<unsigned> generateTokens(
    "generate",
    cl::desc("Generate N tokens after each --prompt with the prefill and "
             "decode entry points (KV caches); prints them and the rates"),
    cl::init(0), cl::value_desc("N"), cl::cat(category));
cl::list<std::string> promptFlags(
    "prompt",
    cl::desc("Token ids of a prompt for --generate: 1,5,7 or a .npy file of "
             "int32/int64 ids (1-D, or 2-D: one prompt per row); repeat for "
             "a batch"),
    cl::cat(category));
cl::list<std::string> promptTexts(
    "prompt-text",
    cl::desc("Text of a prompt for --generate, encoded with the tokenizer "
             "(--tokenizer, or the one beside the first --params file); "
             "repeat for a batch. The new tokens are printed as text too"),
    cl::cat(category));
cl::list<std::string> promptFiles(
    "prompt-file",
    cl::desc("As --prompt-text, with the text of a file (used as it is, "
             "line breaks included)"),
    cl::value_desc("PATH"), cl::cat(category));
cl::opt<std::string> tokenizerPath(
    "tokenizer",
    cl::desc("tokenizer.json (byte-level BPE), tokenizer.model "
             "(SentencePiece) or a model directory holding one"),
    cl::value_desc("PATH"), cl::cat(category));
cl::opt<double> temperature("temperature",
                            cl::desc("Sampling temperature (default 0: "
                                     "greedy)"),
                            cl::init(0.0), cl::cat(category));
cl::opt<int64_t> topK("top-k", cl::desc("Sample from the K likeliest tokens"),
                      cl::init(0), cl::cat(category));
cl::opt<double> topP("top-p",
                     cl::desc("Sample from the likeliest tokens whose "
                              "probabilities reach P"),
                     cl::init(1.0), cl::cat(category));
cl::opt<uint64_t> samplingSeed("seed", cl::desc("Seed of the sampling"),
                               cl::init(0), cl::cat(category));
cl::opt<int64_t> eosTokenId("eos", cl::desc("Stop once every prompt has "
                                            "generated this token id"),
                            cl::init(-1), cl::cat(category));

/// The tokenizer of --tokenizer, else the one in the directory of the first
/// --params file (a model directory), if any; an error only where
/// --prompt-text needs one.
llvm::Expected<std::unique_ptr<Tokenizer>> findTokenizer() {
  std::string path = tokenizerPath;
  if (path.empty() && !paramsPaths.empty()) {
    llvm::StringRef params = paramsPaths.front();
    llvm::StringRef directory = llvm::sys::fs::is_directory(params)
                                    ? params
                                    : llvm::sys::path::parent_path(params);
    if (hasTokenizer(directory.empty() ? "." : directory))
      path = directory.empty() ? "." : directory.str();
  }
  if (path.empty()) {
    if (!promptTexts.empty() || !promptFiles.empty())
      return llvm::createStringError(
          "a prompt as text needs a tokenizer: give --tokenizer, or --params "
          "from a model directory with a tokenizer.json or tokenizer.model");
    return nullptr;
  }
  return loadTokenizer(path);
}

/// The prompts of --prompt, --prompt-text and --prompt-file in command-line
/// order; text is encoded with `tokenizer` and its ids and pieces printed.
llvm::Expected<std::vector<std::vector<int64_t>>>
readPrompts(const Tokenizer *tokenizer) {
  enum Kind { Ids, Text, File };
  std::vector<std::tuple<unsigned, Kind, std::string>> flags;
  // (cl::list's operator& gives its std::vector.)
  using FlagList = cl::list<std::string>;
  for (auto [list, kind] :
       {std::pair<FlagList *, Kind>{std::addressof(promptFlags), Ids},
        {std::addressof(promptTexts), Text},
        {std::addressof(promptFiles), File}})
    for (unsigned i = 0; i < list->size(); ++i)
      flags.emplace_back(list->getPosition(i), kind, (*list)[i]);
  llvm::sort(flags);

  std::vector<std::vector<int64_t>> prompts;
  for (const auto &[position, kind, value] : flags) {
    if (kind == Ids) {
      llvm::Expected<std::vector<std::vector<int64_t>>> ids =
          readPromptIds(value);
      if (!ids)
        return ids.takeError();
      prompts.insert(prompts.end(), ids->begin(), ids->end());
      continue;
    }
    std::string text = value;
    if (kind == File) {
      llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
          llvm::MemoryBuffer::getFile(value, /*IsText=*/true);
      if (!file)
        return llvm::createStringError("--prompt-file: cannot read '" + value +
                                       "': " + file.getError().message());
      text = (*file)->getBuffer().str();
    }
    llvm::Expected<std::vector<int64_t>> ids = tokenizer->encode(text);
    if (!ids)
      return llvm::createStringError("prompt text: " +
                                     llvm::toString(ids.takeError()));
    // The ids, then each token's text: where the tokenizer cut.
    llvm::outs() << "prompt " << prompts.size() << " (text): " << joinIds(*ids)
                 << "\npieces " << prompts.size() << ":";
    for (int64_t id : *ids) {
      llvm::Expected<std::string> piece = tokenizer->decode(id);
      if (!piece)
        return piece.takeError();
      llvm::outs() << " \"";
      llvm::outs().write_escaped(*piece) << "\"";
    }
    llvm::outs() << "\n";
    prompts.push_back(std::move(*ids));
  }
  if (prompts.empty())
    return llvm::createStringError(
        "--generate needs a --prompt, --prompt-text or --prompt-file");
  for (const std::vector<int64_t> &prompt : prompts)
    if (prompt.empty())
      return llvm::createStringError("every prompt needs at least one token");
  return prompts;
}

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

/// The arrays of `entry`'s inputs but those marked in `skip` or `made`,
/// from the --input files, then the --params checkpoint, then
/// --random-params.
llvm::Expected<std::vector<Input>> collectGiven(const EntryPoint &entry,
                                                const std::vector<bool> &skip,
                                                const std::vector<bool> &made) {
  std::vector<std::optional<HostArray>> bound(entry.inputs.size());
  std::vector<std::string> origin(entry.inputs.size());
  for (const std::string &flag : inputs) {
    auto binding = bindFlag("input", flag, entry, /*output=*/false);
    if (!binding)
      return binding.takeError();
    auto [index, path] = *binding;
    if (skip[index])
      return llvm::createStringError("input '" + entry.inputs[index].name +
                                     "' is given by --generate");
    if (made[index])
      return llvm::createStringError(
          "input '" + entry.inputs[index].name + "' is made by the entry "
          "point " + std::string(kPrepareWeightsEntry) + " from the weights");
    auto array = readNpy(path);
    if (!array)
      return array.takeError();
    bound[index] = std::move(*array);
    origin[index] = path;
  }
  if (!paramsPaths.empty()) {
    auto tensors = readCheckpoint(paramsPaths);
    if (!tensors)
      return tensors.takeError();
    std::vector<bool> inCheckpoint(entry.inputs.size());
    for (auto &[name, tensor] : *tensors) {
      int index = findTensor(entry.inputs, name);
      // GPT-2 checkpoints saved from the base model lack the prefix.
      if (index < 0)
        index = findTensor(entry.inputs, "transformer." + name);
      if (index < 0 || skip[index] || made[index])
        continue;
      if (inCheckpoint[index])
        return llvm::createStringError(
            "input '" + entry.inputs[index].name +
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
  std::vector<Input> collected(entry.inputs.size());
  for (auto [i, spec] : llvm::enumerate(entry.inputs)) {
    if (skip[i] || made[i])
      continue;
    bool isFloat = spec.dtype == "f32" || spec.dtype == "f16" ||
                   spec.dtype == "bf16";
    bool isStatic = llvm::all_of(spec.shape, [](int64_t s) { return s >= 0; });
    if (!bound[i] && randomSeed >= 0 && isFloat && isStatic) {
      llvm::Expected<HostArray> array = randomArray(spec, rng);
      if (!array)
        return llvm::createStringError("input '" + spec.name + "': " +
                                       llvm::toString(array.takeError()));
      bound[i] = std::move(*array);
      origin[i] = "--random-params";
    }
    if (!bound[i])
      return llvm::createStringError(
          "missing input '" + spec.name + "' " + describe(spec) +
          ": give --input " + spec.name + "=FILE.npy" +
          (isFloat && isStatic
               ? ", a --params file holding it, or --random-params"
               : ""));
    collected[i] = {std::move(*bound[i]), origin[i]};
  }
  return collected;
}

/// Checks --device against the library's device ("cpu" or "cuda") and
/// selects the GPU of cuda:N.
llvm::Error selectDevice(llvm::StringRef library, llvm::StringRef device) {
  if (deviceFlag.empty())
    return llvm::Error::success();
  auto [kind, ordinal] = llvm::StringRef(deviceFlag).split(':');
  unsigned index;
  if ((kind != "cpu" && kind != "cuda") ||
      (kind == "cpu" && deviceFlag != "cpu") ||
      (deviceFlag.find(':') != std::string::npos &&
       (ordinal.empty() || ordinal.getAsInteger(10, index))))
    return llvm::createStringError("--device must be cpu, cuda or cuda:N, "
                                   "got '" +
                                   deviceFlag + "'");
  if (kind != device)
    return llvm::createStringError(
        "--device=" + deviceFlag + ": '" + library + "' runs on " +
        (device == "cpu" ? "the CPU" : device) +
        "; compile it with tfm-compile --target=" + kind + " to run it there");
  // Read by the runtime when it first talks to the driver (later).
  if (!ordinal.empty())
    setenv("TFM_CUDA_DEVICE", ordinal.str().c_str(), /*overwrite=*/1);
  return llvm::Error::success();
}

struct LibraryCloser {
  void operator()(TfmLibrary *library) const { tfmLibraryClose(library); }
};
struct CallDestroyer {
  void operator()(TfmCall *call) const { tfmCallDestroy(call); }
};
using CallPtr = std::unique_ptr<TfmCall, CallDestroyer>;

/// A call of `entry` (null: the only one), or null after reporting why.
CallPtr createCall(TfmLibrary *library, const char *entry) {
  TfmCall *call = nullptr;
  if (tfmCallCreate(library, entry, &call) != TFM_OK) {
    fail(llvm::Twine(tfmLastError()) +
         (entry ? " (see --list)" : "; pass --entry"));
    return nullptr;
  }
  return CallPtr(call);
}

/// The arrays of `entry`'s inputs but those marked in `skip`
/// (collectGiven's), where the inputs that the library's prepare_weights
/// makes (weights packed once) are made by it, from the others.
llvm::Expected<std::vector<Input>> collectInputs(TfmLibrary *library,
                                                 const EntryPoint &entry,
                                                 std::vector<bool> skip) {
  std::vector<bool> made(entry.inputs.size());
  CallPtr prepare;
  EntryPoint prepareEntry;
  for (int i = 0, e = tfmLibraryEntryCount(library); i < e; ++i)
    if (tfmLibraryEntryName(library, i) == kPrepareWeightsEntry &&
        entry.name != kPrepareWeightsEntry) {
      TfmCall *call = nullptr;
      if (tfmCallCreate(library, tfmLibraryEntryName(library, i), &call) !=
          TFM_OK)
        return llvm::createStringError(tfmLastError());
      prepare.reset(call);
      prepareEntry = describeCall(call);
    }
  for (auto [i, spec] : llvm::enumerate(entry.inputs))
    made[i] = prepare && !skip[i] && findTensor(prepareEntry.outputs, spec.name) >= 0;
  if (llvm::none_of(made, [](bool m) { return m; }))
    return collectGiven(entry, skip, made);
  // The weights packed once are inputs of prepare_weights only: collected
  // with the entry point's, and let go once packed.
  EntryPoint given = entry;
  for (const TensorSignature &spec : prepareEntry.inputs)
    if (findTensor(entry.inputs, spec.name) < 0) {
      given.inputs.push_back(spec);
      skip.push_back(false);
      made.push_back(false);
    }
  llvm::Expected<std::vector<Input>> collected =
      collectGiven(given, skip, made);
  if (!collected)
    return collected;
  auto failed = [&](const llvm::Twine &what) {
    return llvm::createStringError(std::string(kPrepareWeightsEntry) + ": " +
                                   what.str());
  };
  for (auto [i, spec] : llvm::enumerate(prepareEntry.inputs)) {
    int index = findTensor(given.inputs, spec.name);
    if (skip[index] || made[index])
      return failed("it needs input '" + spec.name +
                    "', which is not a weight of entry point '" + entry.name +
                    "'");
    const HostArray &array = (*collected)[index].array;
    if (tfmCallSetInput(prepare.get(), i, array.dtype.c_str(),
                        array.shape.size(), array.shape.data(),
                        array.bytes.data()) != TFM_OK)
      return failed(llvm::Twine(tfmLastError()) + " (from '" +
                    (*collected)[index].origin + "')");
  }
  std::vector<HostArray> packed;
  for (auto [i, spec] : llvm::enumerate(prepareEntry.outputs)) {
    llvm::Expected<HostArray> array = makeArray(spec.dtype, spec.shape);
    if (!array)
      return failed("output '" + spec.name + "': " +
                    llvm::toString(array.takeError()));
    packed.push_back(std::move(*array));
    HostArray &out = packed.back();
    if (tfmCallSetOutput(prepare.get(), i, out.dtype.c_str(), out.shape.size(),
                         out.shape.data(), out.bytes.data()) != TFM_OK)
      return failed(tfmLastError());
  }
  if (tfmCallInvoke(prepare.get(), nullptr) != TFM_OK)
    return failed(tfmLastError());
  collected->resize(entry.inputs.size());
  for (auto [i, spec] : llvm::enumerate(entry.inputs))
    if (made[i])
      (*collected)[i] = {
          std::move(packed[findTensor(prepareEntry.outputs, spec.name)]),
          std::string(kPrepareWeightsEntry)};
  return collected;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  setToolVersionPrinter("tfm-run");
  cl::ParseCommandLineOptions(argc, argv,
                              "tfm-run: run a compiled tfm library\n");

  TfmLibrary *opened = nullptr;
  if (tfmLibraryOpen(libraryPath.c_str(), &opened) != TFM_OK)
    return fail(tfmLastError());
  std::unique_ptr<TfmLibrary, LibraryCloser> library(opened);
  const bool onGPU = llvm::StringRef(tfmLibraryDevice(library.get())) == "cuda";
  if (llvm::Error error =
          selectDevice(libraryPath, tfmLibraryDevice(library.get())))
    return fail(llvm::toString(std::move(error)));

  if (list) {
    for (int i = 0, e = tfmLibraryEntryCount(library.get()); i < e; ++i) {
      CallPtr call =
          createCall(library.get(), tfmLibraryEntryName(library.get(), i));
      if (!call)
        return 1;
      llvm::outs() << tfmCallEntryName(call.get()) << "\n";
      EntryPoint entry = describeCall(call.get());
      for (const TensorSignature &t : entry.inputs)
        llvm::outs() << (t.updated ? "  in/out (updated in place) " : "  in  ")
                     << t.name << ": " << describe(t) << "\n";
      for (const TensorSignature &t : entry.outputs)
        llvm::outs() << "  out " << t.name << ": " << describe(t) << "\n";
    }
    return 0;
  }

  if (generateTokens > 0 || !promptFlags.empty() || !promptTexts.empty() ||
      !promptFiles.empty()) {
    if (generateTokens == 0)
      return fail("--prompt, --prompt-text and --prompt-file need --generate "
                  "N");
    GenerationOptions options;
    options.newTokens = generateTokens;
    llvm::Expected<std::unique_ptr<Tokenizer>> tokenizer = findTokenizer();
    if (!tokenizer)
      return fail(llvm::toString(tokenizer.takeError()));
    options.tokenizer = tokenizer->get();
    llvm::Expected<std::vector<std::vector<int64_t>>> prompts =
        readPrompts(tokenizer->get());
    if (!prompts)
      return fail(llvm::toString(prompts.takeError()));
    options.prompts = std::move(*prompts);
    options.temperature = temperature;
    if (topK.getNumOccurrences())
      options.topK = topK;
    if (topP.getNumOccurrences())
      options.topP = topP;
    options.seed = samplingSeed;
    if (eosTokenId.getNumOccurrences())
      options.eosTokenId = eosTokenId;
    auto collect = [&](const EntryPoint &entry, const std::vector<bool> &skip) {
      return collectInputs(library.get(), entry, skip);
    };
    if (llvm::Error error = generate(library.get(), options, collect))
      return fail(llvm::toString(std::move(error)));
    return 0;
  }

  CallPtr call = createCall(library.get(),
                            entryName.empty() ? nullptr : entryName.c_str());
  if (!call)
    return 1;
  const EntryPoint entry = describeCall(call.get());

  llvm::Expected<std::vector<Input>> collected =
      collectInputs(library.get(), entry,
                    std::vector<bool>(entry.inputs.size()));
  if (!collected)
    return fail(llvm::toString(collected.takeError()));
  std::vector<Input> &bound = *collected;
  using Clock = std::chrono::steady_clock;
  auto secondsSince = [](Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  // A cuda library's arrays live on the GPU across calls; inputs of another
  // dtype than the entry's (int64 token ids) are narrowed and copied by
  // the runtime at each call.
  std::vector<DeviceArray> onDevice;
  uint64_t uploadedBytes = 0;
  double uploadSeconds = 0;
  for (auto [i, input] : llvm::enumerate(bound)) {
    tfm_status status;
    if (onGPU && input.array.dtype == entry.inputs[i].dtype) {
      auto start = Clock::now();
      llvm::Expected<DeviceArray> array =
          DeviceArray::mirror(input.array, /*copy=*/true);
      if (!array)
        return fail("input '" + entry.inputs[i].name +
                    "': " + llvm::toString(array.takeError()));
      uploadSeconds += secondsSince(start);
      uploadedBytes += array->bytes();
      onDevice.push_back(std::move(*array));
      status = onDevice.back().bind(call.get(), 0, i);
    } else {
      status = tfmCallSetInput(
          call.get(), i, input.array.dtype.c_str(), input.array.shape.size(),
          input.array.shape.data(), input.array.bytes.data());
    }
    if (status != TFM_OK)
      return fail(llvm::Twine(tfmLastError()) + " (from '" + input.origin +
                  "')");
  }

  // Outputs, sized from the inputs.
  std::vector<HostArray> results;
  std::vector<size_t> deviceResults; // indices into onDevice, per output
  for (auto [i, spec] : llvm::enumerate(entry.outputs)) {
    std::vector<int64_t> shape(spec.shape.size());
    if (tfmCallOutputShape(call.get(), i, shape.data()) != TFM_OK)
      return fail(tfmLastError());
    llvm::Expected<HostArray> array = makeArray(spec.dtype, shape);
    if (!array)
      return fail("output '" + spec.name + "': " +
                  llvm::toString(array.takeError()));
    results.push_back(std::move(*array));
    HostArray &result = results.back();
    tfm_status status;
    if (onGPU) {
      llvm::Expected<DeviceArray> device =
          DeviceArray::mirror(result, /*copy=*/false);
      if (!device)
        return fail("output '" + spec.name +
                    "': " + llvm::toString(device.takeError()));
      deviceResults.push_back(onDevice.size());
      onDevice.push_back(std::move(*device));
      status = onDevice.back().bind(call.get(), 1, i);
    } else {
      status = tfmCallSetOutput(call.get(), i, result.dtype.c_str(),
                                result.shape.size(), result.shape.data(),
                                result.bytes.data());
    }
    if (status != TFM_OK)
      return fail(tfmLastError());
  }

  if (tfmCallInvoke(call.get(), nullptr) != TFM_OK)
    return fail(tfmLastError());
  if (benchRuns > 0) {
    // The first call above loaded the kernels: it is not timed.
    std::vector<double> seconds, kernelSeconds;
    for (unsigned run = 0; run < benchRuns; ++run) {
      auto start = Clock::now();
      if (tfmCallInvoke(call.get(), nullptr) != TFM_OK)
        return fail(tfmLastError());
      seconds.push_back(secondsSince(start));
      double kernels;
      if (onGPU) {
        if (tfmCallKernelSeconds(call.get(), &kernels) != TFM_OK)
          return fail(tfmLastError());
        kernelSeconds.push_back(kernels);
      }
    }
    auto median = [](std::vector<double> &values) {
      std::sort(values.begin(), values.end());
      return values[values.size() / 2];
    };
    double callMedian = median(seconds);
    llvm::outs() << llvm::formatv("{0}: median {1:F3} ms over {2} runs",
                                  entry.name, callMedian * 1e3, benchRuns);
    if (onGPU)
      llvm::outs() << llvm::formatv(" (kernels {0:F3} ms)",
                                    median(kernelSeconds) * 1e3);
    double flops;
    if (bound.size() >= 1 && bound[0].array.shape.size() == 2 &&
        tfmLibraryFlops(library.get(), bound[0].array.shape[0],
                        bound[0].array.shape[1], &flops) == TFM_OK)
      llvm::outs() << llvm::formatv(", {0:F2} GFLOP/s ({1:F3} GFLOP)",
                                    flops / callMedian * 1e-9, flops * 1e-9);
    llvm::outs() << "\n";
  }
  if (onGPU) {
    auto start = Clock::now();
    uint64_t downloadedBytes = 0;
    for (auto [i, result] : llvm::enumerate(results)) {
      if (llvm::Error error = onDevice[deviceResults[i]].download(result))
        return fail("output '" + entry.outputs[i].name +
                    "': " + llvm::toString(std::move(error)));
      downloadedBytes += result.bytes.size();
    }
    double downloadSeconds = secondsSince(start);
    auto rate = [](uint64_t bytes, double seconds) {
      return llvm::formatv("{0:F1} MiB in {1:F3} ms, {2:F2} GB/s",
                           bytes / 1048576.0, seconds * 1e3,
                           bytes / std::max(seconds, 1e-12) * 1e-9)
          .str();
    };
    if (benchRuns > 0)
      llvm::outs() << "copies (once, not in the times above): to the GPU "
                   << rate(uploadedBytes, uploadSeconds) << "; back "
                   << rate(downloadedBytes, downloadSeconds) << "\n";
  }

  // Outputs.
  for (const std::string &flag : outputs) {
    auto binding = bindFlag("output", flag, entry, /*output=*/true);
    if (!binding)
      return fail(llvm::toString(binding.takeError()));
    if (auto error = writeNpy(binding->second, results[binding->first]))
      return fail(llvm::toString(std::move(error)));
  }
  if (!outputDir.empty()) {
    if (std::error_code code = llvm::sys::fs::create_directories(outputDir))
      return fail("cannot create '" + outputDir + "': " + code.message());
    for (auto [i, spec] : llvm::enumerate(entry.outputs)) {
      llvm::SmallString<128> path(outputDir);
      llvm::sys::path::append(path, spec.name + ".npy");
      if (auto error = writeNpy(path, results[i]))
        return fail(llvm::toString(std::move(error)));
    }
  }

  int status = 0;
  for (const std::string &flag : checks) {
    auto binding = bindFlag("check", flag, entry, /*output=*/true);
    if (!binding)
      return fail(llvm::toString(binding.takeError()));
    auto [index, path] = *binding;
    const std::string &name = entry.outputs[index].name;
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

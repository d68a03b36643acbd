//===- Generate.cpp - tfm-run --generate -----------------------------------===//

#include "Generate.h"

#include "DeviceArray.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

using namespace mlir::tfm;

EntryPoint mlir::tfm::describeCall(const TfmCall *call) {
  EntryPoint entry{tfmCallEntryName(call), {}, {}, {}};
  for (int output = 0; output < 2; ++output)
    for (int i = 0, e = tfmCallTensorCount(call, output); i < e; ++i) {
      const int64_t *shape = tfmCallTensorShape(call, output, i);
      (output ? entry.outputs : entry.inputs)
          .push_back({tfmCallTensorName(call, output, i),
                      {shape, shape + tfmCallTensorRank(call, output, i)},
                      tfmCallTensorDtype(call, output, i),
                      {},
                      tfmCallTensorUpdated(call, output, i) != 0});
    }
  return entry;
}

std::string mlir::tfm::joinIds(llvm::ArrayRef<int64_t> ids) {
  return llvm::join(
      llvm::map_range(ids, [](int64_t id) { return std::to_string(id); }),
      " ");
}

llvm::Expected<std::vector<std::vector<int64_t>>>
mlir::tfm::readPromptIds(llvm::StringRef flag) {
  std::vector<std::vector<int64_t>> prompts;
  if (flag.ends_with(".npy")) {
    llvm::Expected<HostArray> ids = readNpy(flag);
    if (!ids)
      return ids.takeError();
    if ((ids->dtype != "i32" && ids->dtype != "i64") || ids->shape.empty() ||
        ids->shape.size() > 2)
      return llvm::createStringError(
          "--prompt " + flag + ": expected a 1-D or 2-D array of int32 or "
          "int64 token ids, got " + ids->describe());
    int64_t rows = ids->shape.size() == 2 ? ids->shape[0] : 1;
    int64_t length = ids->shape.back();
    for (int64_t row = 0; row < rows; ++row) {
      std::vector<int64_t> prompt;
      for (int64_t i = 0; i < length; ++i)
        prompt.push_back(static_cast<int64_t>(ids->at(row * length + i)));
      prompts.push_back(std::move(prompt));
    }
    return prompts;
  }
  std::vector<int64_t> prompt;
  llvm::SmallVector<llvm::StringRef> items;
  flag.split(items, ',');
  for (llvm::StringRef item : items) {
    int64_t id;
    if (item.trim().getAsInteger(10, id))
      return llvm::createStringError(
          "--prompt expects token ids like 1,5,7 or a .npy file, got '" +
          flag + "'");
    prompt.push_back(id);
  }
  prompts.push_back(std::move(prompt));
  return prompts;
}

namespace {

/// The next token from one row of logits: the argmax, or a draw from the
/// tempered distribution restricted to the top-k tokens and the smallest
/// set whose probabilities reach top-p (Hugging Face's order). Only what
/// the filters need is ordered: the top k are selected in linear time, and
/// top-p sorts the leading candidates in growing chunks until their mass
/// reaches it, not the whole vocabulary per token.
int64_t sample(const std::vector<double> &logits,
               const GenerationOptions &options, std::mt19937_64 &rng) {
  if (options.temperature == 0)
    return std::max_element(logits.begin(), logits.end()) - logits.begin();
  auto before = [&](int64_t a, int64_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  };
  std::vector<int64_t> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  if (options.topK && *options.topK < static_cast<int64_t>(order.size())) {
    std::nth_element(order.begin(), order.begin() + *options.topK, order.end(),
                     before);
    order.resize(*options.topK);
  }
  double top = logits[*std::min_element(order.begin(), order.end(), before)] /
               options.temperature;
  auto weight = [&](int64_t id) {
    return std::exp(logits[id] / options.temperature - top);
  };
  double total = 0;
  for (int64_t id : order)
    total += weight(id);
  size_t keep = order.size();
  if (options.topP) {
    double mass = 0;
    size_t kept = 0, sorted = 0;
    while (kept < keep && mass < *options.topP * total) {
      if (kept == sorted) {
        size_t next = std::min(keep, std::max<size_t>(64, 4 * sorted));
        std::partial_sort(order.begin() + sorted, order.begin() + next,
                          order.end(), before);
        sorted = next;
      }
      mass += weight(order[kept++]);
    }
    keep = std::max<size_t>(kept, 1);
  }
  std::vector<double> probabilities(keep);
  for (size_t i = 0; i < keep; ++i)
    probabilities[i] = weight(order[i]);
  std::discrete_distribution<size_t> draw(probabilities.begin(),
                                          probabilities.end());
  return order[draw(rng)];
}

/// Row `row` of [B, 1, vocab] logits, as doubles.
std::vector<double> logitsRow(const HostArray &logits, int64_t row) {
  int64_t vocab = logits.shape.back();
  std::vector<double> values(vocab);
  for (int64_t i = 0; i < vocab; ++i)
    values[i] = logits.at(row * vocab + i);
  return values;
}

llvm::Error lastError() { return llvm::createStringError(tfmLastError()); }

/// Binds `array` to input `index` (or output) of `call`.
llvm::Error bind(TfmCall *call, int output, int index, HostArray &array) {
  tfm_status status =
      output ? tfmCallSetOutput(call, index, array.dtype.c_str(),
                                array.shape.size(), array.shape.data(),
                                array.bytes.data())
             : tfmCallSetInput(call, index, array.dtype.c_str(),
                               array.shape.size(), array.shape.data(),
                               array.bytes.data());
  if (status != TFM_OK)
    return lastError();
  return llvm::Error::success();
}

void setI32(HostArray &array, int64_t i, int64_t value) {
  int32_t narrow = static_cast<int32_t>(value);
  std::memcpy(array.bytes.data() + 4 * i, &narrow, 4);
}

struct CallDeleter {
  void operator()(TfmCall *call) const { tfmCallDestroy(call); }
};

} // namespace

llvm::Error mlir::tfm::generate(TfmLibrary *library,
                                const GenerationOptions &options,
                                const InputCollector &collect) {
  if (options.topK && *options.topK < 1)
    return llvm::createStringError("--top-k must be at least 1");
  if (options.topP && !(*options.topP > 0 && *options.topP <= 1))
    return llvm::createStringError("--top-p must be in (0, 1]");
  if (!(options.temperature >= 0))
    return llvm::createStringError("--temperature must be non-negative");
  TfmCall *rawPrefill = nullptr, *rawDecode = nullptr;
  if (tfmCallCreate(library, "prefill", &rawPrefill) != TFM_OK ||
      tfmCallCreate(library, "decode", &rawDecode) != TFM_OK) {
    tfmCallDestroy(rawPrefill);
    return llvm::createStringError(
        "--generate needs the prefill and decode entry points of a model "
        "description compiled with generation (see --list)");
  }
  std::unique_ptr<TfmCall, CallDeleter> prefill(rawPrefill), decode(rawDecode);
  EntryPoint prefillEntry = describeCall(prefill.get());
  EntryPoint decodeEntry = describeCall(decode.get());

  // Ids, positions and lengths come first; the caches are the updated
  // inputs; the rest are parameters, shared by both entry points by name.
  std::vector<bool> generated(prefillEntry.inputs.size());
  for (auto [i, spec] : llvm::enumerate(prefillEntry.inputs))
    generated[i] = i < 3 || spec.updated;
  llvm::Expected<std::vector<Input>> params = collect(prefillEntry, generated);
  if (!params)
    return params.takeError();

  const std::vector<std::vector<int64_t>> &prompts = options.prompts;
  int64_t batch = prompts.size(), length = 0;
  for (const std::vector<int64_t> &prompt : prompts)
    length = std::max<int64_t>(length, prompt.size());
  auto array = [](llvm::StringRef dtype, std::vector<int64_t> shape) {
    llvm::Expected<HostArray> made = makeArray(dtype, std::move(shape));
    return made;
  };
  llvm::Expected<HostArray> ids = array("i32", {batch, length});
  llvm::Expected<HostArray> positions = array("i32", {batch, length});
  llvm::Expected<HostArray> lengths = array("i32", {batch});
  if (!ids || !positions || !lengths)
    return llvm::createStringError("the prompts are too large");
  for (int64_t b = 0; b < batch; ++b) {
    setI32(*lengths, b, prompts[b].size());
    for (int64_t s = 0; s < length; ++s) {
      setI32(*ids, b * length + s,
             s < int64_t(prompts[b].size()) ? prompts[b][s] : 0);
      setI32(*positions, b * length + s, s);
    }
  }
  // Caches of the prompt and every new token (a ring: its window).
  std::map<std::string, HostArray> caches;
  for (const TensorSignature &spec : prefillEntry.inputs) {
    if (!spec.updated)
      continue;
    std::vector<int64_t> shape = spec.shape;
    shape[0] = batch;
    if (shape[2] < 0)
      shape[2] = length + options.newTokens;
    llvm::Expected<HostArray> cache = array(spec.dtype, shape);
    if (!cache)
      return llvm::createStringError("cache '" + spec.name + "': " +
                                     llvm::toString(cache.takeError()));
    caches.emplace(spec.name, std::move(*cache));
  }

  // A cuda library keeps the parameters and caches on the GPU across calls
  // (but parameters of another dtype than the entry's, which the runtime
  // converts at each call); ids, positions and logits are copied.
  std::map<std::string, DeviceArray> onDevice;
  if (llvm::StringRef(tfmLibraryDevice(library)) == "cuda") {
    auto mirror = [&](const std::string &name,
                      const HostArray &host) -> llvm::Error {
      llvm::Expected<DeviceArray> array =
          DeviceArray::mirror(host, /*copy=*/true);
      if (!array)
        return llvm::createStringError(
            "'" + name + "': " + llvm::toString(array.takeError()));
      onDevice.emplace(name, std::move(*array));
      return llvm::Error::success();
    };
    for (auto [j, spec] : llvm::enumerate(prefillEntry.inputs))
      if (!generated[j] && (*params)[j].array.dtype == spec.dtype)
        if (llvm::Error error = mirror(spec.name, (*params)[j].array))
          return error;
    for (auto &[name, cache] : caches)
      if (llvm::Error error = mirror(name, cache))
        return error;
  }

  // Binds the inputs of `call` (whose leading three are `leading`) and its
  // logits output.
  auto bindAll = [&](TfmCall *call, const EntryPoint &entry,
                     std::array<HostArray *, 3> leading,
                     HostArray &logits) -> llvm::Error {
    for (auto [i, spec] : llvm::enumerate(entry.inputs)) {
      if (auto device = onDevice.find(spec.name);
          i >= 3 && device != onDevice.end()) {
        if (device->second.bind(call, 0, i) != TFM_OK)
          return lastError();
        continue;
      }
      HostArray *bound = i < 3 ? leading[i] : nullptr;
      if (spec.updated)
        bound = &caches.at(spec.name);
      for (auto [j, other] : llvm::enumerate(prefillEntry.inputs))
        if (!bound && !generated[j] && other.name == spec.name)
          bound = &(*params)[j].array;
      if (!bound)
        return llvm::createStringError("entry point '" + entry.name +
                                       "' has an unexpected input '" +
                                       spec.name + "'");
      if (llvm::Error error = bind(call, 0, i, *bound))
        return error;
    }
    return bind(call, 1, 0, logits);
  };
  int64_t vocab = prefillEntry.outputs[0].shape.back();
  llvm::Expected<HostArray> logits =
      array(prefillEntry.outputs[0].dtype, {batch, 1, vocab});
  llvm::Expected<HostArray> newIds = array("i32", {batch, 1});
  llvm::Expected<HostArray> newPositions = array("i32", {batch, 1});
  llvm::Expected<HostArray> cacheLengths = array("i32", {batch});
  if (!logits || !newIds || !newPositions || !cacheLengths)
    return llvm::createStringError("the batch is too large");
  if (llvm::Error error = bindAll(prefill.get(), prefillEntry,
                                  {&*ids, &*positions, &*lengths}, *logits))
    return error;
  if (llvm::Error error =
          bindAll(decode.get(), decodeEntry,
                  {&*newIds, &*newPositions, &*cacheLengths}, *logits))
    return error;

  using Clock = std::chrono::steady_clock;
  std::mt19937_64 rng(options.seed);
  std::vector<std::vector<int64_t>> tokens(batch);
  std::vector<bool> finished(batch);
  auto pick = [&]() {
    bool all = true;
    for (int64_t b = 0; b < batch; ++b) {
      tokens[b].push_back(sample(logitsRow(*logits, b), options, rng));
      finished[b] = finished[b] || tokens[b].back() == options.eosTokenId;
      all = all && finished[b];
    }
    return all;
  };
  auto start = Clock::now();
  if (options.newTokens && tfmCallInvoke(prefill.get(), nullptr) != TFM_OK)
    return lastError();
  double prefillSeconds =
      std::chrono::duration<double>(Clock::now() - start).count();
  bool done = options.newTokens == 0 || pick();
  unsigned steps = 0;
  start = Clock::now();
  while (!done && tokens[0].size() < options.newTokens) {
    for (int64_t b = 0; b < batch; ++b) {
      int64_t cached = prompts[b].size() + tokens[b].size() - 1;
      setI32(*newIds, b, tokens[b].back());
      setI32(*newPositions, b, cached);
      setI32(*cacheLengths, b, cached);
    }
    if (tfmCallInvoke(decode.get(), nullptr) != TFM_OK)
      return lastError();
    ++steps;
    done = pick();
  }
  double decodeSeconds =
      std::chrono::duration<double>(Clock::now() - start).count();

  for (int64_t b = 0; b < batch; ++b) {
    llvm::outs() << "prompt " << b << " (" << prompts[b].size()
                 << " tokens): " << joinIds(tokens[b]) << "\n";
    if (!options.tokenizer)
      continue;
    // A model's vocabulary may be padded past its tokenizer's: such ids
    // have no text, but the generation stands.
    llvm::Expected<std::string> text = options.tokenizer->decode(tokens[b]);
    llvm::outs() << "text " << b << ": ";
    if (text)
      llvm::outs().write_escaped(*text) << "\n";
    else
      llvm::outs() << "(no text: " << llvm::toString(text.takeError())
                   << ")\n";
  }
  llvm::outs() << llvm::formatv(
      "prefill: {0} tokens in {1:F2} ms ({2:F1} tokens/s)\n",
      batch * length, prefillSeconds * 1e3,
      batch * length / std::max(prefillSeconds, 1e-12));
  if (steps)
    llvm::outs() << llvm::formatv(
        "decode: {0} steps of {1} tokens, {2:F2} ms per step ({3:F1} "
        "tokens/s)\n",
        steps, batch, decodeSeconds / steps * 1e3,
        steps * batch / std::max(decodeSeconds, 1e-12));
  return llvm::Error::success();
}

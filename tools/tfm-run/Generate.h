//===- Generate.h - tfm-run --generate -------------------------*- C++ -*-===//
//
// Token generation with a library's prefill and decode entry points: the
// prompts prefilled in one call, then one decode call per new token, the
// KV caches updated in place between them.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_TOOLS_TFM_RUN_GENERATE_H
#define TFM_TOOLS_TFM_RUN_GENERATE_H

#include "tfm-c/Runtime.h"
#include "tfm/Runtime/HostArray.h"
#include "tfm/Tokenizer/Tokenizer.h"

#include <functional>
#include <optional>

namespace mlir::tfm {

/// An input array and where it came from (a file, --random-params).
struct Input {
  HostArray array;
  std::string origin;
};

/// The arrays of an entry point's inputs but the skipped ones (tfm-run's
/// --input, --params and --random-params).
using InputCollector = std::function<llvm::Expected<std::vector<Input>>(
    const EntryPoint &, const std::vector<bool> &skip)>;

struct GenerationOptions {
  unsigned newTokens = 0;
  /// Token ids of each prompt (rows of one batch).
  std::vector<std::vector<int64_t>> prompts;
  double temperature = 0; // 0: greedy
  std::optional<int64_t> topK;
  std::optional<double> topP;
  uint64_t seed = 0;
  std::optional<int64_t> eosTokenId;
  /// When set, the new tokens are also printed as text.
  const Tokenizer *tokenizer = nullptr;
};

/// The entry point `call` runs: its name and its inputs' and outputs'
/// signatures, from the runtime's C API.
EntryPoint describeCall(const TfmCall *call);

/// "1 5 7"
std::string joinIds(llvm::ArrayRef<int64_t> ids);

/// The prompts of a --prompt flag: ids inline ("1,5,7") or a .npy file of
/// int32 or int64 ids, one prompt per 1-D file or per row of a 2-D one.
llvm::Expected<std::vector<std::vector<int64_t>>>
readPromptIds(llvm::StringRef flag);

/// Generates `options.newTokens` tokens after each prompt and prints them
/// and the prefill and decode rates.
llvm::Error generate(TfmLibrary *library, const GenerationOptions &options,
                     const InputCollector &collect);

} // namespace mlir::tfm

#endif // TFM_TOOLS_TFM_RUN_GENERATE_H

//===- tfm-tokenizer-fuzzer.cpp - fuzz the tokenizer.json reader -----------===//
//
// Input: a tokenizer.json, optionally followed by a NUL byte and a text.
// A tokenizer that loads must encode the text (or fail cleanly, e.g. on
// invalid UTF-8), decode every id it gave, and decode or refuse any id.
//
//===----------------------------------------------------------------------===//

#include "tfm/Tokenizer/Tokenizer.h"

#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  auto [json, text] = input.split('\0');
  if (text.empty())
    text = "The cat's 123 café  \n\n hi!";
  llvm::Expected<std::unique_ptr<mlir::tfm::Tokenizer>> tokenizer =
      mlir::tfm::parseByteLevelBPE(json);
  if (!tokenizer) {
    llvm::consumeError(tokenizer.takeError());
    return 0;
  }
  llvm::Expected<std::vector<int64_t>> ids = (*tokenizer)->encode(text);
  if (!ids) {
    llvm::consumeError(ids.takeError());
    return 0;
  }
  llvm::Expected<std::string> decoded = (*tokenizer)->decode(*ids);
  if (!decoded) {
    // Every id encode gives is in the vocabulary.
    llvm::errs() << llvm::toString(decoded.takeError()) << "\n";
    std::abort();
  }
  for (int64_t id = 0; id < std::min<int64_t>((*tokenizer)->vocabularySize(), 4096); ++id)
    llvm::consumeError((*tokenizer)->decode(id).takeError());
  return 0;
}

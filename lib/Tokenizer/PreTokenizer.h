//===- PreTokenizer.h - the splits byte-level BPE merges within -*- C++ -*-===//
//
// Byte-level BPE tokenizers split text with a regular expression before
// merging, and tokens never cross the splits. tfm has no regex engine: it
// knows the expressions of the tokenizers it supports by their text and
// matches each with a hand-written scanner that follows the expression's
// alternatives in order (the first that matches wins, as in a regex).
//
//===----------------------------------------------------------------------===//

#ifndef TFM_LIB_TOKENIZER_PRETOKENIZER_H
#define TFM_LIB_TOKENIZER_PRETOKENIZER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace mlir::tfm {

enum class SplitPattern {
  /// GPT-2's:
  /// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  GPT2,
  /// Llama 3's (as tiktoken's cl100k_base):
  /// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
  ///  ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
  Llama3,
  /// Qwen2's: Llama 3's with \p{N} instead of \p{N}{1,3}.
  Qwen2,
};

/// The pattern whose regular expression is `regex` (as a tokenizer.json
/// writes it), if tfm knows it.
std::optional<SplitPattern> recognizeSplitPattern(llvm::StringRef regex);

/// The pieces of `codePoints` as [begin, end) code point ranges that cover
/// it in order.
std::vector<std::pair<size_t, size_t>>
splitText(llvm::ArrayRef<uint32_t> codePoints, SplitPattern pattern);

} // namespace mlir::tfm

#endif // TFM_LIB_TOKENIZER_PRETOKENIZER_H

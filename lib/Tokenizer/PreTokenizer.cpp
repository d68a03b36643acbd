//===- PreTokenizer.cpp - the splits byte-level BPE merges within ----------===//

#include "PreTokenizer.h"

#include "Unicode.h"

#include <algorithm>

using namespace mlir::tfm;
using namespace mlir::tfm::unicode;

std::optional<SplitPattern>
mlir::tfm::recognizeSplitPattern(llvm::StringRef regex) {
  if (regex == R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)")
    return SplitPattern::GPT2;
  if (regex == R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)")
    return SplitPattern::Llama3;
  if (regex == R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)")
    return SplitPattern::Qwen2;
  return std::nullopt;
}

namespace {

/// Matches one piece at a time; each `match` returns the end of the piece
/// that starts at `i` (always past `i`).
class Scanner {
public:
  explicit Scanner(llvm::ArrayRef<uint32_t> text) : text(text) {}

  size_t matchGPT2(size_t i) const {
    if (size_t end = contraction(i, /*ignoreCase=*/false))
      return end;
    // ` ?\p{L}+`, ` ?\p{N}+`, ` ?[^\s\p{L}\p{N}]+`
    size_t j = text[i] == ' ' ? i + 1 : i;
    if (j < text.size()) {
      if (isLetter(text[j]))
        return run(j, isLetter);
      if (isNumber(text[j]))
        return run(j, isNumber);
      if (isOther(text[j]))
        return run(j, isOther);
    }
    return whitespace(i);
  }

  /// Llama 3's expression, or Qwen2's with at most `digits` digits a piece.
  size_t matchLlama3(size_t i, size_t digits) const {
    if (size_t end = contraction(i, /*ignoreCase=*/true))
      return end;
    // `[^\r\n\p{L}\p{N}]?\p{L}+`
    if (isLetter(text[i]))
      return run(i, isLetter);
    if (!isLineBreak(text[i]) && !isNumber(text[i]) && i + 1 < text.size() &&
        isLetter(text[i + 1]))
      return run(i + 1, isLetter);
    // `\p{N}{1,3}` or `\p{N}`
    if (isNumber(text[i]))
      return std::min(run(i, isNumber), i + digits);
    // ` ?[^\s\p{L}\p{N}]+[\r\n]*`
    size_t j = text[i] == ' ' ? i + 1 : i;
    if (j < text.size() && isOther(text[j]))
      return run(run(j, isOther), isLineBreak);
    // `\s*[\r\n]+`: through the last line break of the whitespace run.
    size_t end = run(i, isWhitespace);
    for (size_t p = end; p > i; --p)
      if (isLineBreak(text[p - 1]))
        return p;
    return whitespace(i);
  }

private:
  static bool isOther(uint32_t cp) {
    return !isWhitespace(cp) && !isLetter(cp) && !isNumber(cp);
  }
  static bool isLineBreak(uint32_t cp) { return cp == '\r' || cp == '\n'; }

  /// The end of the run of `inClass` code points from `i`.
  size_t run(size_t i, bool (*inClass)(uint32_t)) const {
    while (i < text.size() && inClass(text[i]))
      ++i;
    return i;
  }

  /// `'s|'t|'re|'ve|'m|'ll|'d`: the end of the match at `i`, or 0.
  size_t contraction(size_t i, bool ignoreCase) const {
    if (text[i] != '\'')
      return 0;
    auto at = [&](size_t k) -> uint32_t {
      if (k >= text.size())
        return 0;
      uint32_t cp = text[k];
      return ignoreCase && cp >= 'A' && cp <= 'Z' ? cp + ('a' - 'A') : cp;
    };
    uint32_t first = at(i + 1), second = at(i + 2);
    if (first == 's' || first == 't' || first == 'm' || first == 'd')
      return i + 2;
    if ((first == 'r' && second == 'e') || (first == 'v' && second == 'e') ||
        (first == 'l' && second == 'l'))
      return i + 3;
    return 0;
  }

  /// `\s+(?!\S)|\s+` at whitespace `i`: the run, less its last code point
  /// when a word follows (it goes with the word) and more than one is left.
  size_t whitespace(size_t i) const {
    size_t end = run(i, isWhitespace);
    if (end == text.size() || end - 1 == i)
      return end;
    return end - 1;
  }

  llvm::ArrayRef<uint32_t> text;
};

} // namespace

std::vector<std::pair<size_t, size_t>>
mlir::tfm::splitText(llvm::ArrayRef<uint32_t> codePoints,
                     SplitPattern pattern) {
  Scanner scanner(codePoints);
  std::vector<std::pair<size_t, size_t>> pieces;
  for (size_t i = 0; i < codePoints.size();) {
    size_t end = pattern == SplitPattern::GPT2 ? scanner.matchGPT2(i)
                 : pattern == SplitPattern::Llama3
                     ? scanner.matchLlama3(i, 3)
                     : scanner.matchLlama3(i, 1);
    end = std::max(end, i + 1); // the classes cover every code point
    pieces.emplace_back(i, end);
    i = end;
  }
  return pieces;
}

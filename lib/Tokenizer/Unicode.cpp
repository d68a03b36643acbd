//===- Unicode.cpp - code points and the classes pre-tokenizers use --------===//

#include "Unicode.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace mlir::tfm;

namespace {
struct CodePointRange {
  uint32_t first, last;
};
#include "UnicodeClasses.inc"

template <size_t N>
bool inRanges(const CodePointRange (&ranges)[N], uint32_t cp) {
  const CodePointRange *end = ranges + N;
  const CodePointRange *range = std::upper_bound(
      ranges, end, cp,
      [](uint32_t value, const CodePointRange &r) { return value < r.first; });
  return range != ranges && cp <= range[-1].last;
}
} // namespace

llvm::Expected<unicode::DecodedText>
unicode::decodeUTF8(llvm::StringRef text) {
  DecodedText decoded;
  const auto *bytes = reinterpret_cast<const unsigned char *>(text.data());
  size_t size = text.size();
  for (size_t i = 0; i < size;) {
    unsigned char lead = bytes[i];
    size_t length = lead < 0x80 ? 1 : (lead >> 5) == 6 ? 2
                                    : (lead >> 4) == 14 ? 3
                                    : (lead >> 3) == 30 ? 4
                                                        : 0;
    uint32_t cp = length == 1 ? lead : lead & (0x7F >> length);
    bool valid = length != 0 && i + length <= size;
    for (size_t k = 1; valid && k < length; ++k) {
      valid = (bytes[i + k] & 0xC0) == 0x80;
      cp = (cp << 6) | (bytes[i + k] & 0x3F);
    }
    // Overlong forms, surrogates and code points past U+10FFFF.
    static constexpr uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
    valid = valid && cp >= kSmallest[length] && cp <= 0x10FFFF &&
            !(cp >= 0xD800 && cp <= 0xDFFF);
    if (!valid)
      return llvm::createStringError(
          llvm::formatv("the text is not valid UTF-8 (at byte {0})", i));
    decoded.codePoints.push_back(cp);
    decoded.offsets.push_back(i);
    i += length;
  }
  decoded.offsets.push_back(size);
  return decoded;
}

void unicode::appendUTF8(uint32_t cp, std::string &out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
    return;
  }
  int length = cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  static constexpr unsigned char kLead[] = {0, 0, 0xC0, 0xE0, 0xF0};
  out += static_cast<char>(kLead[length] | (cp >> (6 * (length - 1))));
  for (int k = length - 2; k >= 0; --k)
    out += static_cast<char>(0x80 | ((cp >> (6 * k)) & 0x3F));
}

bool unicode::isLetter(uint32_t cp) { return inRanges(kLetterRanges, cp); }
bool unicode::isNumber(uint32_t cp) { return inRanges(kNumberRanges, cp); }

bool unicode::isWhitespace(uint32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 ||
         cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
         cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
         cp == 0x3000;
}

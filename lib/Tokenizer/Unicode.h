//===- Unicode.h - code points and the classes pre-tokenizers use -*- C++ -*-=//

#ifndef TFM_LIB_TOKENIZER_UNICODE_H
#define TFM_LIB_TOKENIZER_UNICODE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::tfm::unicode {

/// The code points of UTF-8 `text` and the byte offset of each, plus one
/// final offset (text.size()); malformed UTF-8 is an error.
struct DecodedText {
  std::vector<uint32_t> codePoints;
  std::vector<size_t> offsets;
};
llvm::Expected<DecodedText> decodeUTF8(llvm::StringRef text);

/// `cp` appended to `out` as UTF-8.
void appendUTF8(uint32_t cp, std::string &out);

/// General category L (\p{L}), N (\p{N}), and the White_Space property (\s).
bool isLetter(uint32_t cp);
bool isNumber(uint32_t cp);
bool isWhitespace(uint32_t cp);

} // namespace mlir::tfm::unicode

#endif // TFM_LIB_TOKENIZER_UNICODE_H

//===- Tokenizer.h - text to token ids and back -----------------*- C++ -*-===//
//
// The tokenizers of Hugging Face model directories, for tfm-run's
// --prompt-text: byte-level BPE from a `tokenizer.json` (GPT-2, Llama 3,
// Qwen2) and SentencePiece from a `tokenizer.model` (Llama 1/2, Mistral)
// through libsentencepiece when tfm was built with it.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_TOKENIZER_TOKENIZER_H
#define TFM_TOKENIZER_TOKENIZER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mlir::tfm {

class Tokenizer {
public:
  virtual ~Tokenizer() = default;
  /// The ids of `text` (UTF-8) as the model's tokenizer gives them,
  /// special tokens its template adds (e.g. BOS) included.
  virtual llvm::Expected<std::vector<int64_t>>
  encode(llvm::StringRef text) const = 0;
  /// The text of `ids`; an id outside the vocabulary is an error.
  virtual llvm::Expected<std::string>
  decode(llvm::ArrayRef<int64_t> ids) const = 0;
  virtual int64_t vocabularySize() const = 0;
};

/// A byte-level BPE tokenizer from the text of a `tokenizer.json`.
llvm::Expected<std::unique_ptr<Tokenizer>>
parseByteLevelBPE(llvm::StringRef json);

/// A SentencePiece model file; BOS is prepended when `addBos`.
llvm::Expected<std::unique_ptr<Tokenizer>>
loadSentencePiece(llvm::StringRef path, bool addBos);

/// The tokenizer at `path`: a `tokenizer.json`, a `tokenizer.model`, or a
/// model directory holding one of them (tokenizer.json first). For a
/// SentencePiece model, the directory's `tokenizer_config.json` says
/// whether to add BOS (`add_bos_token`, true when absent, as in Llama).
llvm::Expected<std::unique_ptr<Tokenizer>> loadTokenizer(llvm::StringRef path);

/// Whether `directory` holds a tokenizer loadTokenizer can read.
bool hasTokenizer(llvm::StringRef directory);

} // namespace mlir::tfm

#endif // TFM_TOKENIZER_TOKENIZER_H

//===- SentencePiece.cpp - tokenizer.model through libsentencepiece --------===//
//
// Llama 1/2 and Mistral ship a SentencePiece model; Debian's
// libsentencepiece reads it. Built without it (TFM_HAVE_SENTENCEPIECE
// unset), loading one is an error that says so.
//
//===----------------------------------------------------------------------===//

#include "tfm/Tokenizer/Tokenizer.h"

#include "llvm/Support/FormatVariadic.h"

#ifdef TFM_HAVE_SENTENCEPIECE
#include <sentencepiece_processor.h>
#endif

using namespace mlir::tfm;

#ifdef TFM_HAVE_SENTENCEPIECE
namespace {

class SentencePiece : public Tokenizer {
public:
  SentencePiece(bool addBos) : addBos(addBos) {}

  llvm::Error load(llvm::StringRef path) {
    sentencepiece::util::Status status = processor.Load(path.str());
    if (!status.ok())
      return llvm::createStringError(path + ": " + status.ToString());
    if (addBos && processor.bos_id() < 0)
      return llvm::createStringError(
          path + ": the model has no BOS token, and the tokenizer's config "
                 "asks for one ('add_bos_token')");
    return llvm::Error::success();
  }

  llvm::Expected<std::vector<int64_t>>
  encode(llvm::StringRef text) const override {
    std::vector<int> pieces;
    sentencepiece::util::Status status =
        processor.Encode(std::string_view(text.data(), text.size()), &pieces);
    if (!status.ok())
      return llvm::createStringError("SentencePiece: " + status.ToString());
    std::vector<int64_t> ids;
    if (addBos)
      ids.push_back(processor.bos_id());
    ids.insert(ids.end(), pieces.begin(), pieces.end());
    return ids;
  }

  llvm::Expected<std::string>
  decode(llvm::ArrayRef<int64_t> ids) const override {
    std::vector<int> pieces;
    for (int64_t id : ids) {
      if (id < 0 || id >= vocabularySize())
        return llvm::createStringError(
            llvm::formatv("token id {0} is not in the vocabulary", id));
      pieces.push_back(static_cast<int>(id));
    }
    std::string text;
    sentencepiece::util::Status status = processor.Decode(pieces, &text);
    if (!status.ok())
      return llvm::createStringError("SentencePiece: " + status.ToString());
    return text;
  }

  int64_t vocabularySize() const override {
    return processor.GetPieceSize();
  }

private:
  sentencepiece::SentencePieceProcessor processor;
  bool addBos;
};

} // namespace
#endif

llvm::Expected<std::unique_ptr<Tokenizer>>
mlir::tfm::loadSentencePiece(llvm::StringRef path, bool addBos) {
#ifdef TFM_HAVE_SENTENCEPIECE
  auto tokenizer = std::make_unique<SentencePiece>(addBos);
  if (llvm::Error error = tokenizer->load(path))
    return std::move(error);
  return std::unique_ptr<Tokenizer>(std::move(tokenizer));
#else
  (void)addBos;
  return llvm::createStringError(
      path + ": tfm was built without libsentencepiece (install Debian's "
             "libsentencepiece-dev and rebuild)");
#endif
}

//===- Tokenizer.cpp - the tokenizer of a model directory ------------------===//

#include "tfm/Tokenizer/Tokenizer.h"

#include "tfm/Support/InputLimits.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace mlir::tfm;

static llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readFile(const llvm::Twine &path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError(buffer.getError(),
                                   "cannot read '" + path + "': " +
                                       buffer.getError().message());
  return std::move(*buffer);
}

/// tokenizer_config.json's `add_bos_token` beside `model`: true when the
/// file or the field is absent (Hugging Face's LlamaTokenizer default).
static llvm::Expected<bool> addsBos(llvm::StringRef model) {
  llvm::SmallString<256> config = llvm::sys::path::parent_path(model);
  llvm::sys::path::append(config, "tokenizer_config.json");
  if (!llvm::sys::fs::exists(config))
    return true;
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      readFile(config);
  if (!buffer)
    return buffer.takeError();
  llvm::Expected<llvm::json::Value> parsed = parseJSON((*buffer)->getBuffer());
  if (!parsed)
    return llvm::createStringError(config + ": " +
                                   llvm::toString(parsed.takeError()));
  const llvm::json::Object *object = parsed->getAsObject();
  const llvm::json::Value *add = object ? object->get("add_bos_token") : nullptr;
  if (!add || add->kind() == llvm::json::Value::Null)
    return true;
  if (!add->getAsBoolean())
    return llvm::createStringError(config +
                                   ": 'add_bos_token' must be true or false");
  return *add->getAsBoolean();
}

/// The tokenizer file in `directory` (tokenizer.json first), or "".
static std::string tokenizerIn(llvm::StringRef directory) {
  for (const char *name : {"tokenizer.json", "tokenizer.model"}) {
    llvm::SmallString<256> path = directory;
    llvm::sys::path::append(path, name);
    if (llvm::sys::fs::is_regular_file(path))
      return path.str().str();
  }
  return "";
}

bool mlir::tfm::hasTokenizer(llvm::StringRef directory) {
  return !tokenizerIn(directory).empty();
}

llvm::Expected<std::unique_ptr<Tokenizer>>
mlir::tfm::loadTokenizer(llvm::StringRef path) {
  if (!llvm::sys::fs::exists(path))
    return llvm::createStringError("tokenizer '" + path + "' does not exist");
  std::string file = path.str();
  if (llvm::sys::fs::is_directory(path)) {
    file = tokenizerIn(path);
    if (file.empty())
      return llvm::createStringError(
          "'" + path + "' holds no tokenizer.json or tokenizer.model");
  }
  if (llvm::StringRef(file).ends_with(".model")) {
    llvm::Expected<bool> bos = addsBos(file);
    if (!bos)
      return bos.takeError();
    return loadSentencePiece(file, *bos);
  }
  if (!llvm::StringRef(file).ends_with(".json"))
    return llvm::createStringError(
        "'" + file + "' is neither a tokenizer.json nor a tokenizer.model");
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> buffer = readFile(file);
  if (!buffer)
    return buffer.takeError();
  llvm::Expected<std::unique_ptr<Tokenizer>> tokenizer =
      parseByteLevelBPE((*buffer)->getBuffer());
  if (!tokenizer)
    return llvm::createStringError(file + ": " +
                                   llvm::toString(tokenizer.takeError()));
  return tokenizer;
}

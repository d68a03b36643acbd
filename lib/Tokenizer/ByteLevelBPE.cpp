//===- ByteLevelBPE.cpp - tokenizer.json's byte-level BPE -------------------===//
//
// The byte-level BPE of Hugging Face's `tokenizers` as a tokenizer.json
// describes it (GPT-2, Llama 3, Qwen2): special ("added") tokens matched in
// the raw text first, then a split of the rest (PreTokenizer.h), each piece's
// UTF-8 bytes mapped to GPT-2's printable byte characters and merged pair by
// pair, lowest merge rank first; a template (e.g. Llama 3's BOS) around the
// result. Everything the file says that tfm does not implement is an error
// that names it, never a silently different tokenization.
//
//===----------------------------------------------------------------------===//

#include "PreTokenizer.h"
#include "Unicode.h"
#include "tfm/Support/InputLimits.h"
#include "tfm/Tokenizer/Tokenizer.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <array>

using namespace mlir::tfm;
namespace json = llvm::json;

namespace {

/// Ids above this are refused: a vocabulary of 16M tokens is far past any
/// model's, and the tables are sized by the largest id.
constexpr int64_t kMaxTokenId = (int64_t(1) << 24) - 1;

llvm::Error tokenizerError(const llvm::Twine &message) {
  return llvm::createStringError(message);
}

/// GPT-2's bijection of the 256 byte values onto printable code points:
/// printable Latin-1 bytes map to themselves, the others to U+0100 on.
struct ByteCharacters {
  std::array<uint32_t, 256> ofByte;
  llvm::DenseMap<uint32_t, uint8_t> toByte;

  ByteCharacters() {
    uint32_t next = 256;
    for (unsigned byte = 0; byte < 256; ++byte) {
      bool printable = (byte >= '!' && byte <= '~') ||
                       (byte >= 0xA1 && byte <= 0xAC) || byte >= 0xAE;
      ofByte[byte] = printable ? byte : next++;
      toByte[ofByte[byte]] = byte;
    }
  }
};

const ByteCharacters &byteCharacters() {
  static const ByteCharacters characters;
  return characters;
}

/// `what` as the type of a tokenizer.json component object, or "".
std::string typeOf(const json::Value *value) {
  const json::Object *object = value ? value->getAsObject() : nullptr;
  std::optional<llvm::StringRef> type =
      object ? object->getString("type") : std::nullopt;
  return type ? type->str() : "";
}

bool isNull(const json::Value *value) {
  return !value || value->kind() == json::Value::Null;
}

class ByteLevelBPE : public Tokenizer {
public:
  llvm::Error load(const json::Object &root);

  llvm::Expected<std::vector<int64_t>>
  encode(llvm::StringRef text) const override;
  llvm::Expected<std::string>
  decode(llvm::ArrayRef<int64_t> ids) const override;
  int64_t vocabularySize() const override { return tokens.size(); }

private:
  llvm::Error loadNormalizer(const json::Value *normalizer);
  llvm::Error loadPreTokenizer(const json::Value *preTokenizer);
  llvm::Error loadModel(const json::Object *model);
  llvm::Error loadAddedTokens(const json::Value *addedTokens);
  llvm::Error loadPostProcessor(const json::Value *processor);
  llvm::Error setToken(int64_t id, llvm::StringRef text, bool added);

  llvm::Error encodeText(llvm::StringRef text,
                         std::vector<int64_t> &ids) const;
  llvm::Error encodePiece(llvm::StringRef bytes,
                          std::vector<int64_t> &ids) const;

  /// Token text by id ("" where no token has the id) and whether it is an
  /// added token, whose text is raw rather than byte characters.
  std::vector<std::string> tokens;
  std::vector<bool> added;
  llvm::StringMap<int64_t> vocabulary;
  /// (left id << 32 | right id) -> (rank, merged id).
  llvm::DenseMap<uint64_t, std::pair<int64_t, int64_t>> merges;
  /// Added tokens, longest first: matched leftmost-longest in the text.
  std::vector<std::pair<std::string, int64_t>> addedTokens;
  std::optional<SplitPattern> split;
  bool addPrefixSpace = false;
  bool ignoreMerges = false;
  /// An NFC normalizer: the identity on ASCII, unsupported beyond it.
  bool nfcNormalizer = false;
  std::optional<int64_t> unknown;
  /// The "single" template: ids, with -1 where the text's ids go.
  std::vector<int64_t> singleTemplate{-1};
};

llvm::Error ByteLevelBPE::setToken(int64_t id, llvm::StringRef text,
                                   bool isAdded) {
  if (id < 0 || id > kMaxTokenId)
    return tokenizerError(llvm::formatv(
        "token '{0}' has id {1}, outside [0, {2}]", text, id, kMaxTokenId));
  if (text.empty())
    return tokenizerError(llvm::formatv("token {0} is empty", id));
  if (id >= static_cast<int64_t>(tokens.size())) {
    tokens.resize(id + 1);
    added.resize(id + 1);
  }
  // An added token may repeat a vocabulary entry with the same text.
  if (!tokens[id].empty() && (tokens[id] != text || added[id] == isAdded))
    return tokenizerError(llvm::formatv("tokens '{0}' and '{1}' share id {2}",
                                        tokens[id], text, id));
  tokens[id] = text.str();
  added[id] = isAdded;
  return llvm::Error::success();
}

llvm::Error ByteLevelBPE::loadNormalizer(const json::Value *normalizer) {
  if (isNull(normalizer))
    return llvm::Error::success();
  if (typeOf(normalizer) == "NFC") {
    nfcNormalizer = true;
    return llvm::Error::success();
  }
  return tokenizerError("a normalizer of type '" + typeOf(normalizer) +
                        "' is not supported (tfm has none, and NFC on "
                        "ASCII text)");
}

llvm::Error ByteLevelBPE::loadPreTokenizer(const json::Value *preTokenizer) {
  std::vector<const json::Object *> steps;
  std::string type = typeOf(preTokenizer);
  if (type == "Sequence") {
    const json::Array *list =
        preTokenizer->getAsObject()->getArray("pretokenizers");
    if (!list || list->empty())
      return tokenizerError("a Sequence pre-tokenizer needs 'pretokenizers'");
    for (const json::Value &step : *list)
      steps.push_back(step.getAsObject());
  } else {
    steps.push_back(preTokenizer ? preTokenizer->getAsObject() : nullptr);
  }
  bool byteLevel = false;
  for (const json::Object *step : steps) {
    std::optional<llvm::StringRef> stepType =
        step ? step->getString("type") : std::nullopt;
    if (stepType == "Split" && !split) {
      const json::Object *pattern = step->getObject("pattern");
      std::optional<llvm::StringRef> regex =
          pattern ? pattern->getString("Regex") : std::nullopt;
      split = regex ? recognizeSplitPattern(*regex) : std::nullopt;
      if (!split)
        return tokenizerError(
            "the Split pre-tokenizer's pattern is not one tfm knows (GPT-2's, "
            "Llama 3's and Qwen2's regular expressions)");
      if (step->getString("behavior") != "Isolated" ||
          step->getBoolean("invert").value_or(false))
        return tokenizerError("a Split pre-tokenizer must have \"behavior\": "
                              "\"Isolated\" and no \"invert\"");
      continue;
    }
    if (stepType == "ByteLevel" && !byteLevel) {
      byteLevel = true;
      addPrefixSpace = step->getBoolean("add_prefix_space").value_or(false);
      if (step->getBoolean("use_regex").value_or(true)) {
        if (split)
          return tokenizerError("a Split pre-tokenizer followed by a "
                                "ByteLevel one with \"use_regex\" is not "
                                "supported");
        split = SplitPattern::GPT2;
      }
      continue;
    }
    return tokenizerError(
        "pre-tokenizer '" + (stepType ? stepType->str() : "null") +
        "' is not supported here (tfm reads an optional Split then a "
        "ByteLevel pre-tokenizer)");
  }
  if (!byteLevel)
    return tokenizerError("tfm reads byte-level BPE only: the pre-tokenizer "
                          "must be ByteLevel or end with it");
  return llvm::Error::success();
}

llvm::Error ByteLevelBPE::loadModel(const json::Object *model) {
  std::optional<llvm::StringRef> type =
      model ? model->getString("type") : std::nullopt;
  if (type != "BPE")
    return tokenizerError("model type '" + (type ? type->str() : "none") +
                          "' is not supported (tfm reads byte-level BPE)");
  if (model->getBoolean("byte_fallback").value_or(false))
    return tokenizerError("'byte_fallback' BPE is not supported");
  for (llvm::StringRef affix : {"continuing_subword_prefix",
                                "end_of_word_suffix"})
    if (std::optional<llvm::StringRef> text = model->getString(affix);
        text && !text->empty())
      return tokenizerError("'" + affix + "' is not supported");
  if (std::optional<double> dropout = model->getNumber("dropout");
      dropout && *dropout != 0)
    return tokenizerError("BPE dropout is not supported");
  ignoreMerges = model->getBoolean("ignore_merges").value_or(false);

  const json::Object *vocab = model->getObject("vocab");
  if (!vocab)
    return tokenizerError("the model has no 'vocab' object");
  for (const auto &[token, value] : *vocab) {
    std::optional<int64_t> id = value.getAsInteger();
    if (!id)
      return tokenizerError("the id of token '" + token.str() +
                            "' is not an integer");
    if (llvm::Error error = setToken(*id, token, /*added=*/false))
      return error;
    vocabulary[token] = *id;
  }

  const json::Array *mergeList = model->getArray("merges");
  if (!mergeList)
    return tokenizerError("the model has no 'merges' array");
  for (auto [rank, merge] : llvm::enumerate(*mergeList)) {
    // "left right" (tokenizers < 0.20) or ["left", "right"].
    std::optional<llvm::StringRef> left, right;
    if (std::optional<llvm::StringRef> text = merge.getAsString()) {
      auto [l, r] = text->split(' ');
      if (text->count(' ') == 1)
        left = l, right = r;
    } else if (const json::Array *pair = merge.getAsArray();
               pair && pair->size() == 2) {
      left = (*pair)[0].getAsString();
      right = (*pair)[1].getAsString();
    }
    if (!left || !right)
      return tokenizerError(llvm::formatv(
          "merge {0} is not \"left right\" or [\"left\", \"right\"]", rank));
    auto l = vocabulary.find(*left), r = vocabulary.find(*right),
         m = vocabulary.find((*left + *right).str());
    if (l == vocabulary.end() || r == vocabulary.end() ||
        m == vocabulary.end())
      return tokenizerError(llvm::formatv(
          "merge {0} ('{1}' '{2}') names a token not in the vocabulary", rank,
          *left, *right));
    uint64_t key = uint64_t(l->second) << 32 | uint64_t(r->second);
    merges.try_emplace(key, rank, m->second);
  }

  if (const json::Value *unk = model->get("unk_token"); !isNull(unk)) {
    std::optional<llvm::StringRef> name = unk->getAsString();
    auto found = name ? vocabulary.find(*name) : vocabulary.end();
    if (found == vocabulary.end())
      return tokenizerError("'unk_token' is not in the vocabulary");
    unknown = found->second;
  }
  return llvm::Error::success();
}

llvm::Error ByteLevelBPE::loadAddedTokens(const json::Value *value) {
  if (isNull(value))
    return llvm::Error::success();
  const json::Array *list = value->getAsArray();
  if (!list)
    return tokenizerError("'added_tokens' must be an array");
  for (const json::Value &entry : *list) {
    const json::Object *token = entry.getAsObject();
    std::optional<int64_t> id = token ? token->getInteger("id") : std::nullopt;
    std::optional<llvm::StringRef> content =
        token ? token->getString("content") : std::nullopt;
    if (!id || !content)
      return tokenizerError("every added token needs an integer 'id' and a "
                            "'content' string");
    for (llvm::StringRef flag : {"single_word", "lstrip", "rstrip"})
      if (token->getBoolean(flag).value_or(false))
        return tokenizerError("added token '" + *content + "' has '" + flag +
                              "', which is not supported");
    if (llvm::Error error = setToken(*id, *content, /*added=*/true))
      return error;
    addedTokens.emplace_back(content->str(), *id);
  }
  llvm::sort(addedTokens, [](const auto &a, const auto &b) {
    return a.first.size() > b.first.size();
  });
  return llvm::Error::success();
}

llvm::Error ByteLevelBPE::loadPostProcessor(const json::Value *processor) {
  if (isNull(processor))
    return llvm::Error::success();
  std::string type = typeOf(processor);
  if (type == "ByteLevel") // offsets only
    return llvm::Error::success();
  if (type == "Sequence") {
    const json::Array *list = processor->getAsObject()->getArray("processors");
    if (!list)
      return tokenizerError("a Sequence post-processor needs 'processors'");
    for (const json::Value &step : *list)
      if (llvm::Error error = loadPostProcessor(&step))
        return error;
    return llvm::Error::success();
  }
  if (type != "TemplateProcessing")
    return tokenizerError("post-processor '" + type +
                          "' is not supported (tfm reads ByteLevel and "
                          "TemplateProcessing)");
  const json::Object *object = processor->getAsObject();
  const json::Array *single = object->getArray("single");
  const json::Object *special = object->getObject("special_tokens");
  if (!single)
    return tokenizerError("TemplateProcessing needs a 'single' template");
  singleTemplate.clear();
  for (const json::Value &piece : *single) {
    const json::Object *item = piece.getAsObject();
    if (item && item->getObject("Sequence")) {
      singleTemplate.push_back(-1);
      continue;
    }
    const json::Object *token = item ? item->getObject("SpecialToken") : nullptr;
    std::optional<llvm::StringRef> name =
        token ? token->getString("id") : std::nullopt;
    const json::Object *entry =
        name && special ? special->getObject(*name) : nullptr;
    const json::Array *ids = entry ? entry->getArray("ids") : nullptr;
    if (!ids)
      return tokenizerError("a template piece names no special token with "
                            "'ids' in 'special_tokens'");
    for (const json::Value &id : *ids) {
      std::optional<int64_t> value = id.getAsInteger();
      if (!value || *value < 0 || *value >= vocabularySize() ||
          tokens[*value].empty())
        return tokenizerError("special token '" + *name +
                              "' has an id outside the vocabulary");
      singleTemplate.push_back(*value);
    }
  }
  if (llvm::count(singleTemplate, -1) != 1)
    return tokenizerError("the 'single' template must hold the sequence once");
  return llvm::Error::success();
}

llvm::Error ByteLevelBPE::load(const json::Object &root) {
  if (llvm::Error error = loadNormalizer(root.get("normalizer")))
    return error;
  if (llvm::Error error = loadPreTokenizer(root.get("pre_tokenizer")))
    return error;
  if (llvm::Error error = loadModel(root.getObject("model")))
    return error;
  if (llvm::Error error = loadAddedTokens(root.get("added_tokens")))
    return error;
  if (llvm::Error error = loadPostProcessor(root.get("post_processor")))
    return error;
  if (typeOf(root.get("decoder")) != "ByteLevel")
    return tokenizerError("the decoder must be ByteLevel");
  return llvm::Error::success();
}

llvm::Error ByteLevelBPE::encodePiece(llvm::StringRef bytes,
                                      std::vector<int64_t> &ids) const {
  const ByteCharacters &characters = byteCharacters();
  std::string mapped;
  std::vector<int64_t> symbols;
  for (unsigned char byte : bytes) {
    std::string character;
    unicode::appendUTF8(characters.ofByte[byte], character);
    mapped += character;
    auto found = vocabulary.find(character);
    if (found != vocabulary.end())
      symbols.push_back(found->second);
    else if (unknown)
      symbols.push_back(*unknown);
    else
      return tokenizerError(llvm::formatv(
          "byte {0:x2} has no token and there is no 'unk_token'", byte));
  }
  if (ignoreMerges) {
    if (auto whole = vocabulary.find(mapped); whole != vocabulary.end()) {
      ids.push_back(whole->second);
      return llvm::Error::success();
    }
  }
  // Merge the adjacent pair of lowest rank until none is left.
  while (symbols.size() > 1) {
    size_t best = 0;
    std::pair<int64_t, int64_t> bestMerge{-1, -1};
    for (size_t k = 0; k + 1 < symbols.size(); ++k) {
      auto found = merges.find(uint64_t(symbols[k]) << 32 |
                               uint64_t(symbols[k + 1]));
      if (found != merges.end() &&
          (bestMerge.first < 0 || found->second.first < bestMerge.first)) {
        best = k;
        bestMerge = found->second;
      }
    }
    if (bestMerge.first < 0)
      break;
    symbols[best] = bestMerge.second;
    symbols.erase(symbols.begin() + best + 1);
  }
  ids.insert(ids.end(), symbols.begin(), symbols.end());
  return llvm::Error::success();
}

llvm::Error ByteLevelBPE::encodeText(llvm::StringRef text,
                                     std::vector<int64_t> &ids) const {
  std::string prefixed;
  if (addPrefixSpace && !text.starts_with(" ")) {
    prefixed = " " + text.str();
    text = prefixed;
  }
  llvm::Expected<unicode::DecodedText> decoded = unicode::decodeUTF8(text);
  if (!decoded)
    return decoded.takeError();
  std::vector<std::pair<size_t, size_t>> pieces{
      {0, decoded->codePoints.size()}};
  if (split)
    pieces = splitText(decoded->codePoints, *split);
  for (auto [begin, end] : pieces) {
    size_t from = decoded->offsets[begin], to = decoded->offsets[end];
    if (llvm::Error error = encodePiece(text.slice(from, to), ids))
      return error;
  }
  return llvm::Error::success();
}

llvm::Expected<std::vector<int64_t>>
ByteLevelBPE::encode(llvm::StringRef text) const {
  if (nfcNormalizer && !llvm::all_of(text, [](unsigned char c) {
        return c < 0x80;
      }))
    return tokenizerError("its NFC normalizer is supported on ASCII text "
                          "only, and the text is not ASCII");
  std::vector<int64_t> sequence;
  // Added tokens first, leftmost and then longest; the text between them
  // goes through the split and the merges.
  size_t start = 0;
  for (size_t at = 0; at < text.size();) {
    const std::pair<std::string, int64_t> *match = nullptr;
    for (const auto &token : addedTokens)
      if (text.substr(at).starts_with(token.first)) {
        match = &token;
        break;
      }
    if (!match) {
      ++at;
      continue;
    }
    if (llvm::Error error = encodeText(text.slice(start, at), sequence))
      return std::move(error);
    sequence.push_back(match->second);
    at += match->first.size();
    start = at;
  }
  if (start < text.size())
    if (llvm::Error error = encodeText(text.substr(start), sequence))
      return std::move(error);

  std::vector<int64_t> ids;
  for (int64_t piece : singleTemplate) {
    if (piece < 0)
      ids.insert(ids.end(), sequence.begin(), sequence.end());
    else
      ids.push_back(piece);
  }
  return ids;
}

llvm::Expected<std::string>
ByteLevelBPE::decode(llvm::ArrayRef<int64_t> ids) const {
  const ByteCharacters &characters = byteCharacters();
  std::string text;
  for (int64_t id : ids) {
    if (id < 0 || id >= vocabularySize() || tokens[id].empty())
      return tokenizerError(
          llvm::formatv("token id {0} is not in the vocabulary", id));
    if (added[id]) {
      text += tokens[id];
      continue;
    }
    llvm::Expected<unicode::DecodedText> decoded =
        unicode::decodeUTF8(tokens[id]);
    if (!decoded)
      return decoded.takeError();
    for (uint32_t cp : decoded->codePoints) {
      auto byte = characters.toByte.find(cp);
      if (byte != characters.toByte.end())
        text += static_cast<char>(byte->second);
      else
        unicode::appendUTF8(cp, text);
    }
  }
  return text;
}

} // namespace

llvm::Expected<std::unique_ptr<Tokenizer>>
mlir::tfm::parseByteLevelBPE(llvm::StringRef text) {
  llvm::Expected<json::Value> parsed = parseJSON(text);
  if (!parsed)
    return tokenizerError(llvm::toString(parsed.takeError()));
  const json::Object *root = parsed->getAsObject();
  if (!root)
    return tokenizerError("the top level must be an object");
  auto tokenizer = std::make_unique<ByteLevelBPE>();
  if (llvm::Error error = tokenizer->load(*root))
    return std::move(error);
  return std::unique_ptr<Tokenizer>(std::move(tokenizer));
}

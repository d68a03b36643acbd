//===- InputLimits.cpp - checked sizes and limits for untrusted input ------===//

#include "tfm/Support/InputLimits.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir::tfm;
namespace json = llvm::json;

llvm::Expected<uint64_t> mlir::tfm::checkedByteSize(llvm::ArrayRef<int64_t> shape,
                                                    uint64_t elementBytes) {
  auto shapeText = [&] {
    return "[" +
           llvm::join(llvm::map_range(shape,
                                      [](int64_t d) { return std::to_string(d); }),
                      ", ") +
           "]";
  };
  int64_t bytes = static_cast<int64_t>(elementBytes);
  bool empty = false;
  for (int64_t dim : shape) {
    if (dim < 0)
      return llvm::createStringError("shape " + shapeText() +
                                     " has a negative dim");
    if (dim == 0) {
      empty = true;
      continue;
    }
    if (llvm::MulOverflow(bytes, dim, bytes) ||
        static_cast<uint64_t>(bytes) > kMaxArrayBytes)
      return llvm::createStringError(llvm::formatv(
          "an array of shape {0} with {1}-byte elements would take more than "
          "2^47 bytes",
          shapeText(), elementBytes));
  }
  return empty ? 0 : static_cast<uint64_t>(bytes);
}

/// The end of the JSON string token that starts with the quote at `begin`
/// (one past its closing quote), or npos when it is unterminated.
static size_t stringTokenEnd(llvm::StringRef text, size_t begin) {
  for (size_t i = begin + 1; i < text.size(); ++i) {
    if (text[i] == '\\')
      ++i;
    else if (text[i] == '"')
      return i + 1;
  }
  return llvm::StringRef::npos;
}

llvm::Expected<json::Value> mlir::tfm::parseJSON(llvm::StringRef text,
                                                 const JSONLimits &limits) {
  // A scan of the tokens before llvm::json::parse, which recurses once per
  // level and keeps the last of duplicated keys. Text the scan cannot follow
  // (an unterminated string) is left to the parser to report.
  struct Level {
    bool object;
    bool expectKey;
    llvm::StringSet<> keys;
  };
  llvm::SmallVector<Level> levels;
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (c == '"') {
      size_t end = stringTokenEnd(text, i);
      if (end == llvm::StringRef::npos)
        break;
      if (!levels.empty() && levels.back().object && levels.back().expectKey) {
        levels.back().expectKey = false;
        llvm::Expected<json::Value> key = json::parse(text.slice(i, end));
        if (!key) {
          llvm::consumeError(key.takeError());
          break;
        }
        if (!levels.back().keys.insert(*key->getAsString()).second)
          return llvm::createStringError("duplicate key \"" +
                                         *key->getAsString() + "\"");
      }
      i = end;
      continue;
    }
    if (c == '-' || llvm::isDigit(c)) {
      size_t end = text.find_first_not_of("0123456789+-.eE", i);
      llvm::StringRef number = text.slice(i, end);
      if (limits.unsignedIntegersOnly &&
          number.find_first_not_of("0123456789") != llvm::StringRef::npos)
        return llvm::createStringError("expected a non-negative integer, got " +
                                       number);
      i = std::min(end, text.size());
      continue;
    }
    if (c == '{' || c == '[') {
      if (levels.size() >= limits.maxDepth)
        return llvm::createStringError(llvm::formatv(
            "JSON nested deeper than {0} levels", limits.maxDepth));
      levels.push_back({c == '{', c == '{', {}});
    } else if ((c == '}' || c == ']') && !levels.empty()) {
      levels.pop_back();
    } else if (c == ',' && !levels.empty() && levels.back().object) {
      levels.back().expectKey = true;
    }
    ++i;
  }
  return json::parse(text);
}

/// Whether the text after `keyword` at `begin` is `= [` followed by a list
/// of integers and `]`, or no `= [` at all (another syntax, which the parser
/// checks itself).
static bool isIntegerListOrOther(llvm::StringRef source, size_t begin) {
  llvm::StringRef rest = source.substr(begin).ltrim();
  if (!rest.consume_front("="))
    return true;
  rest = rest.ltrim();
  if (!rest.consume_front("["))
    return true;
  size_t end = rest.find(']');
  if (end == llvm::StringRef::npos)
    return false;
  llvm::StringRef list = rest.take_front(end).trim();
  if (list.empty())
    return true;
  llvm::SmallVector<llvm::StringRef> items;
  list.split(items, ',');
  return llvm::all_of(items, [](llvm::StringRef item) {
    item = item.trim();
    item.consume_front("-");
    return !item.empty() && llvm::all_of(item, llvm::isDigit);
  });
}

llvm::Error mlir::tfm::checkMLIRSource(llvm::StringRef source,
                                       unsigned maxDepth) {
  unsigned depth = 0, line = 1;
  for (size_t i = 0; i < source.size(); ++i) {
    char c = source[i];
    if (c == '\n') {
      ++line;
    } else if (c == '"') {
      size_t end = stringTokenEnd(source, i);
      if (end == llvm::StringRef::npos)
        return llvm::Error::success(); // the parser reports it
      line += source.slice(i, end).count('\n');
      i = end - 1;
    } else if (source.substr(i).starts_with("//")) {
      i = std::min(source.find('\n', i), source.size()) - 1;
    } else if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (++depth > maxDepth)
        return llvm::createStringError(llvm::formatv(
            "line {0}: brackets nest deeper than {1} levels", line, maxDepth));
    } else if ((c == ')' || c == ']' || c == '}' ||
                (c == '>' && (i == 0 || source[i - 1] != '-'))) &&
               depth > 0) {
      --depth; // `->` is an arrow, not a bracket
    } else if (llvm::isAlpha(c) &&
               (i == 0 || !(llvm::isAlnum(source[i - 1]) ||
                            source[i - 1] == '_' || source[i - 1] == '.'))) {
      for (llvm::StringRef keyword : {"permutation", "dimensions"}) {
        size_t after = i + keyword.size();
        if (!source.substr(i).starts_with(keyword) ||
            (after < source.size() &&
             (llvm::isAlnum(source[after]) || source[after] == '_')))
          continue;
        if (!isIntegerListOrOther(source, after))
          return llvm::createStringError(llvm::formatv(
              "line {0}: '{1} = [...]' must list integers", line, keyword));
      }
    }
  }
  return llvm::Error::success();
}

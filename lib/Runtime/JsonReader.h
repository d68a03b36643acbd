//===- JsonReader.h - a strict JSON reader without LLVM ---------*- C++ -*-===//
//
// The runtime library reads manifests where LLVM is not installed, so it
// cannot use llvm::json. This reader accepts exactly RFC 8259 JSON, nested
// at most kMaxJsonDepth deep, and refuses duplicate object keys, as the
// compiler's parseJSON (tfm/Support/InputLimits.h) does.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_LIB_RUNTIME_JSONREADER_H
#define TFM_LIB_RUNTIME_JSONREADER_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mlir::tfm::json_reader {

constexpr int kMaxJsonDepth = 64;

struct Value {
  enum class Kind { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  bool boolean = false;
  double number = 0;
  /// Numbers written without fraction or exponent that fit int64.
  std::optional<int64_t> integer;
  std::string string;
  std::vector<Value> array;
  std::vector<std::pair<std::string, Value>> members;

  /// The member called `key` of an object, or null.
  const Value *find(std::string_view key) const;
  /// The member `key` if it is a string (array), else null.
  const std::string *findString(std::string_view key) const;
  const std::vector<Value> *findArray(std::string_view key) const;
};

/// The value `text` holds, or nullopt with `error` saying where and why.
std::optional<Value> parse(std::string_view text, std::string &error);

} // namespace mlir::tfm::json_reader

#endif // TFM_LIB_RUNTIME_JSONREADER_H

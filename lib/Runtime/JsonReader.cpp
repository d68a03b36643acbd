//===- JsonReader.cpp - a strict JSON reader without LLVM ------------------===//

#include "JsonReader.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>

using namespace mlir::tfm::json_reader;

namespace {

class Parser {
public:
  explicit Parser(std::string_view text) : text(text) {}

  std::optional<Value> parseDocument(std::string &error) {
    Value value;
    skipSpace();
    if (parseValue(value, 0)) {
      skipSpace();
      if (pos == text.size())
        return value;
      fail("unexpected text after the value");
    }
    error = message;
    return std::nullopt;
  }

private:
  std::string_view text;
  size_t pos = 0;
  std::string message;

  bool fail(const std::string &why) {
    if (message.empty())
      message = why + " at offset " + std::to_string(pos);
    return false;
  }

  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }

  bool consume(char c) {
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }

  bool literal(std::string_view word) {
    if (text.substr(pos, word.size()) != word)
      return fail("invalid literal");
    pos += word.size();
    return true;
  }

  bool parseValue(Value &value, int depth) {
    if (depth > kMaxJsonDepth)
      return fail("nested deeper than " + std::to_string(kMaxJsonDepth));
    if (pos >= text.size())
      return fail("unexpected end of input");
    switch (text[pos]) {
    case '{':
      return parseObject(value, depth);
    case '[':
      return parseArray(value, depth);
    case '"':
      value.kind = Value::Kind::String;
      return parseString(value.string);
    case 't':
      value.kind = Value::Kind::Bool;
      value.boolean = true;
      return literal("true");
    case 'f':
      value.kind = Value::Kind::Bool;
      return literal("false");
    case 'n':
      return literal("null");
    default:
      return parseNumber(value);
    }
  }

  bool parseObject(Value &value, int depth) {
    value.kind = Value::Kind::Object;
    ++pos; // {
    skipSpace();
    if (consume('}'))
      return true;
    while (true) {
      skipSpace();
      std::string key;
      if (pos >= text.size() || text[pos] != '"')
        return fail("expected a string key");
      if (!parseString(key))
        return false;
      if (value.find(key))
        return fail("duplicate key '" + key + "'");
      skipSpace();
      if (!consume(':'))
        return fail("expected ':'");
      skipSpace();
      Value member;
      if (!parseValue(member, depth + 1))
        return false;
      value.members.emplace_back(std::move(key), std::move(member));
      skipSpace();
      if (consume('}'))
        return true;
      if (!consume(','))
        return fail("expected ',' or '}'");
    }
  }

  bool parseArray(Value &value, int depth) {
    value.kind = Value::Kind::Array;
    ++pos; // [
    skipSpace();
    if (consume(']'))
      return true;
    while (true) {
      skipSpace();
      Value element;
      if (!parseValue(element, depth + 1))
        return false;
      value.array.push_back(std::move(element));
      skipSpace();
      if (consume(']'))
        return true;
      if (!consume(','))
        return fail("expected ',' or ']'");
    }
  }

  bool hex4(uint32_t &code) {
    if (pos + 4 > text.size())
      return fail("truncated \\u escape");
    code = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text[pos++];
      int digit = c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                         : -1;
      if (digit < 0)
        return fail("invalid \\u escape");
      code = code * 16 + digit;
    }
    return true;
  }

  static void appendUtf8(std::string &out, uint32_t code) {
    if (code < 0x80) {
      out += char(code);
    } else if (code < 0x800) {
      out += char(0xC0 | code >> 6);
      out += char(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += char(0xE0 | code >> 12);
      out += char(0x80 | (code >> 6 & 0x3F));
      out += char(0x80 | (code & 0x3F));
    } else {
      out += char(0xF0 | code >> 18);
      out += char(0x80 | (code >> 12 & 0x3F));
      out += char(0x80 | (code >> 6 & 0x3F));
      out += char(0x80 | (code & 0x3F));
    }
  }

  bool parseString(std::string &out) {
    ++pos; // "
    while (true) {
      if (pos >= text.size())
        return fail("unterminated string");
      unsigned char c = text[pos++];
      if (c == '"')
        return true;
      if (c < 0x20)
        return fail("control character in a string");
      if (c != '\\') {
        out += char(c);
        continue;
      }
      if (pos >= text.size())
        return fail("unterminated string");
      char escape = text[pos++];
      switch (escape) {
      case '"': case '\\': case '/': out += escape; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        uint32_t code;
        if (!hex4(code))
          return false;
        if (code >= 0xD800 && code < 0xDC00) { // a surrogate pair
          uint32_t low;
          if (!consume('\\') || !consume('u') || !hex4(low) || low < 0xDC00 ||
              low >= 0xE000)
            return fail("unpaired surrogate");
          code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
        } else if (code >= 0xDC00 && code < 0xE000) {
          return fail("unpaired surrogate");
        }
        appendUtf8(out, code);
        break;
      }
      default:
        return fail("invalid escape");
      }
    }
  }

  bool parseNumber(Value &value) {
    size_t start = pos;
    bool integral = true;
    consume('-');
    if (consume('0')) {
    } else if (pos < text.size() && text[pos] >= '1' && text[pos] <= '9') {
      while (pos < text.size() && std::isdigit((unsigned char)text[pos]))
        ++pos;
    } else {
      return fail("invalid value");
    }
    if (consume('.')) {
      integral = false;
      if (pos >= text.size() || !std::isdigit((unsigned char)text[pos]))
        return fail("invalid number");
      while (pos < text.size() && std::isdigit((unsigned char)text[pos]))
        ++pos;
    }
    if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
      integral = false;
      ++pos;
      if (!consume('+'))
        consume('-');
      if (pos >= text.size() || !std::isdigit((unsigned char)text[pos]))
        return fail("invalid number");
      while (pos < text.size() && std::isdigit((unsigned char)text[pos]))
        ++pos;
    }
    std::string digits(text.substr(start, pos - start));
    value.kind = Value::Kind::Number;
    value.number = std::strtod(digits.c_str(), nullptr);
    if (integral) {
      errno = 0;
      long long parsed = std::strtoll(digits.c_str(), nullptr, 10);
      if (errno == 0)
        value.integer = parsed;
    }
    return true;
  }
};

} // namespace

const Value *Value::find(std::string_view key) const {
  for (const auto &[name, member] : members)
    if (name == key)
      return &member;
  return nullptr;
}

const std::string *Value::findString(std::string_view key) const {
  const Value *member = find(key);
  return member && member->kind == Kind::String ? &member->string : nullptr;
}

const std::vector<Value> *Value::findArray(std::string_view key) const {
  const Value *member = find(key);
  return member && member->kind == Kind::Array ? &member->array : nullptr;
}

std::optional<Value> mlir::tfm::json_reader::parse(std::string_view text,
                                                   std::string &error) {
  return Parser(text).parseDocument(error);
}

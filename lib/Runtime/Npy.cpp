//===- Npy.cpp - HostArray and the .npy format -----------------------------===//

#include "tfm/Runtime/HostArray.h"
#include "tfm/Runtime/Manifest.h"
#include "tfm/Support/InputLimits.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <set>

using namespace mlir::tfm;

std::string HostArray::describe() const {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "] " + dtype;
}

static float halfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exponent = (h >> 10) & 0x1f,
           mantissa = h & 0x3ff;
  if (exponent == 0) { // zero or subnormal
    float value = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -value : value;
  }
  uint32_t bits = exponent == 31
                      ? sign | 0x7f800000u | (mantissa << 13)
                      : sign | ((exponent + 112) << 23) | (mantissa << 13);
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}

double HostArray::at(int64_t i) const {
  const uint8_t *p = bytes.data() + i * elementSize(dtype);
  if (dtype == "f32") {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  if (dtype == "f16") {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return halfToFloat(h);
  }
  if (dtype == "bf16") {
    uint16_t h;
    std::memcpy(&h, p, 2);
    uint32_t bits = static_cast<uint32_t>(h) << 16;
    float v;
    std::memcpy(&v, &bits, 4);
    return v;
  }
  if (dtype == "i32") {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  if (dtype == "i64") {
    int64_t v;
    std::memcpy(&v, p, 8);
    return static_cast<double>(v);
  }
  return *p ? 1.0 : 0.0;
}


/// NumPy descr <-> dtype (little-endian only).
static const std::pair<llvm::StringLiteral, llvm::StringLiteral> kDescrs[] = {
    {"<f4", "f32"}, {"<f2", "f16"}, {"<u2", "bf16"},
    {"<i4", "i32"}, {"<i8", "i64"}, {"|b1", "i1"}};

/// NumPy refuses longer headers unless told that the file is trusted.
constexpr size_t kMaxNpyHeaderBytes = 10000;

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
mlir::tfm::readFile(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return llvm::createStringError("cannot read '" + path +
                                   "': " + buffer.getError().message());
  return std::move(*buffer);
}

llvm::Expected<HostArray> mlir::tfm::makeArray(llvm::StringRef dtype,
                                               std::vector<int64_t> shape) {
  llvm::Expected<uint64_t> bytes = checkedByteSize(shape, elementSize(dtype));
  if (!bytes)
    return bytes.takeError();
  HostArray array{dtype.str(), std::move(shape), {}};
  array.bytes.assign(*bytes, 0);
  return array;
}

namespace {

/// The header of a .npy file: the Python literal of a dict with exactly the
/// keys 'descr', 'fortran_order' and 'shape', as NumPy writes and accepts it.
struct NpyHeader {
  std::string dtype;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
};

/// A strict reader of that one dict literal.
class NpyHeaderParser {
public:
  explicit NpyHeaderParser(llvm::StringRef text) : rest(text) {}

  llvm::Expected<NpyHeader> parse() {
    NpyHeader header;
    std::set<std::string> seen;
    if (!consume("{"))
      return fail("expected a dict");
    while (!consume("}")) {
      std::optional<llvm::StringRef> key = string();
      if (!key || !consume(":"))
        return fail("expected 'key': value");
      if (!seen.insert(key->str()).second)
        return fail("duplicate key '" + *key + "'");
      if (llvm::Error error = value(*key, header))
        return std::move(error);
      if (!consume(",") && !rest.ltrim().starts_with("}"))
        return fail("expected ',' or '}'");
    }
    if (!rest.trim().empty())
      return fail("unexpected text after the dict");
    if (seen.size() != 3)
      return fail("the dict must have exactly the keys 'descr', "
                  "'fortran_order' and 'shape'");
    return header;
  }

private:
  llvm::Error fail(const llvm::Twine &why) {
    return llvm::createStringError("header: " + why);
  }

  bool consume(llvm::StringRef token) {
    rest = rest.ltrim();
    return rest.consume_front(token);
  }

  /// A Python string literal without escapes: 'text' or "text".
  std::optional<llvm::StringRef> string() {
    rest = rest.ltrim();
    if (rest.empty() || (rest[0] != '\'' && rest[0] != '"'))
      return std::nullopt;
    size_t end = rest.find(rest[0], 1);
    if (end == llvm::StringRef::npos || rest.slice(1, end).contains('\\'))
      return std::nullopt;
    llvm::StringRef text = rest.slice(1, end);
    rest = rest.drop_front(end + 1);
    return text;
  }

  /// A non-negative decimal Python int.
  std::optional<int64_t> integer() {
    rest = rest.ltrim();
    llvm::StringRef digits = rest.take_while(llvm::isDigit);
    int64_t value;
    if (digits.empty() || (digits.size() > 1 && digits[0] == '0') ||
        digits.getAsInteger(10, value))
      return std::nullopt;
    rest = rest.drop_front(digits.size());
    return value;
  }

  llvm::Error value(llvm::StringRef key, NpyHeader &header) {
    if (key == "descr") {
      std::optional<llvm::StringRef> descr = string();
      if (!descr)
        return fail("'descr' must be a string");
      for (auto [numpy, dtype] : kDescrs)
        if (*descr == numpy)
          header.dtype = dtype.str();
      if (header.dtype.empty())
        return fail("unsupported element type '" + *descr +
                    "' (supported: little-endian float32, float16, int32, "
                    "int64, bool, uint16 as bf16)");
      return llvm::Error::success();
    }
    if (key == "fortran_order") {
      if (consume("True"))
        header.fortranOrder = true;
      else if (!consume("False"))
        return fail("'fortran_order' must be True or False");
      return llvm::Error::success();
    }
    if (key == "shape") {
      // A tuple: (), (n,), (n, m) or (n, m,).
      if (!consume("("))
        return fail("'shape' must be a tuple of non-negative ints");
      while (!consume(")")) {
        std::optional<int64_t> size = integer();
        if (!size)
          return fail("'shape' must be a tuple of non-negative ints");
        header.shape.push_back(*size);
        if (!consume(",")) {
          if (header.shape.size() == 1 || !consume(")"))
            return fail("'shape' must be a tuple of non-negative ints");
          break;
        }
      }
      return llvm::Error::success();
    }
    return fail("unexpected key '" + key + "'");
  }

  llvm::StringRef rest;
};

/// Reorders the elements of a Fortran-ordered (column-major) array into the
/// row-major order HostArray holds.
std::vector<uint8_t> toRowMajor(llvm::ArrayRef<uint8_t> columnMajor,
                                llvm::ArrayRef<int64_t> shape,
                                size_t elementBytes) {
  size_t rank = shape.size();
  std::vector<uint8_t> rowMajor(columnMajor.size());
  if (columnMajor.empty())
    return rowMajor;
  // Column-major strides (in elements) and a row-major walk over the index.
  std::vector<int64_t> strides(rank, 1), index(rank, 0);
  for (size_t d = 1; d < rank; ++d)
    strides[d] = strides[d - 1] * shape[d - 1];
  int64_t offset = 0;
  for (size_t out = 0; out < rowMajor.size(); out += elementBytes) {
    std::memcpy(&rowMajor[out], &columnMajor[offset * elementBytes],
                elementBytes);
    for (size_t d = rank; d-- > 0;) {
      offset += strides[d];
      if (++index[d] < shape[d])
        break;
      offset -= strides[d] * shape[d];
      index[d] = 0;
    }
  }
  return rowMajor;
}

} // namespace

llvm::Expected<HostArray> mlir::tfm::readNpy(llvm::StringRef path) {
  auto buffer = readFile(path);
  if (!buffer)
    return buffer.takeError();
  return parseNpy((*buffer)->getBuffer(), path);
}

llvm::Expected<HostArray> mlir::tfm::parseNpy(llvm::StringRef data,
                                              llvm::StringRef name) {
  auto bad = [&](const llvm::Twine &why) {
    return llvm::createStringError("'" + name + "' is not a supported .npy "
                                   "file: " + why);
  };
  if (data.size() < 10 || !data.starts_with("\x93NUMPY"))
    return bad("missing the NUMPY magic");
  // Versions 1.0, 2.0 and 3.0 differ in the width of the header length (2 or
  // 4 bytes) and in the header's encoding (3.0: UTF-8, which the keys and
  // values tfm accepts do not use).
  unsigned major = static_cast<uint8_t>(data[6]),
           minor = static_cast<uint8_t>(data[7]);
  if (major < 1 || major > 3 || minor != 0)
    return bad(llvm::formatv("format version {0}.{1} (NumPy writes and reads "
                             "1.0, 2.0 and 3.0)",
                             major, minor));
  size_t lengthBytes = major == 1 ? 2 : 4;
  if (data.size() < 8 + lengthBytes)
    return bad("truncated header");
  size_t headerLength = 0;
  for (size_t i = 0; i < lengthBytes; ++i)
    headerLength |= static_cast<size_t>(static_cast<uint8_t>(data[8 + i]))
                    << (8 * i);
  size_t headerStart = 8 + lengthBytes;
  if (headerLength > kMaxNpyHeaderBytes)
    return bad(llvm::formatv("header of {0} bytes (at most {1})", headerLength,
                             kMaxNpyHeaderBytes));
  if (data.size() - headerStart < headerLength)
    return bad("truncated header");
  llvm::Expected<NpyHeader> header =
      NpyHeaderParser(data.substr(headerStart, headerLength)).parse();
  if (!header)
    return bad(llvm::toString(header.takeError()));

  HostArray array{header->dtype, header->shape, {}};
  llvm::Expected<uint64_t> expected =
      checkedByteSize(array.shape, elementSize(array.dtype));
  if (!expected)
    return bad(llvm::toString(expected.takeError()));
  llvm::StringRef payload = data.drop_front(headerStart + headerLength);
  if (payload.size() != *expected)
    return bad(llvm::formatv("expected {0} data bytes for {1}, found {2}",
                             *expected, array.describe(), payload.size()));
  array.bytes.assign(payload.bytes_begin(), payload.bytes_end());
  if (header->fortranOrder) {
    std::vector<uint8_t> rowMajor =
        toRowMajor(array.bytes, array.shape, elementSize(array.dtype));
    array.bytes.assign(rowMajor.begin(), rowMajor.end());
  }
  return array;
}

llvm::Error mlir::tfm::writeNpy(llvm::StringRef path, const HostArray &array) {
  llvm::StringRef descr;
  for (auto [numpy, dtype] : kDescrs)
    if (dtype == array.dtype)
      descr = numpy;
  std::string shape = "(";
  for (int64_t size : array.shape)
    shape += std::to_string(size) + ",";
  if (array.shape.size() > 1)
    shape.pop_back();
  shape += ")";
  std::string header = "{'descr': '" + descr.str() +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad so that the data starts on a 64-byte boundary; end with a newline.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::error_code error;
  llvm::raw_fd_ostream os(path, error);
  if (error)
    return llvm::createStringError("cannot write '" + path +
                                   "': " + error.message());
  os << "\x93NUMPY" << char(1) << char(0) << char(header.size() & 0xff)
     << char(header.size() >> 8) << header;
  os.write(reinterpret_cast<const char *>(array.bytes.data()),
           array.bytes.size());
  return llvm::Error::success();
}

//===- Npy.cpp - HostArray and the .npy format -----------------------------===//

#include "tfm/Runtime/HostArray.h"
#include "tfm/Runtime/Manifest.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>

using namespace mlir::tfm;

int64_t HostArray::numElements() const {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  return count;
}

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

HostArray mlir::tfm::makeArray(llvm::StringRef dtype,
                               std::vector<int64_t> shape) {
  HostArray array{dtype.str(), std::move(shape), {}};
  array.bytes.assign(array.numElements() * elementSize(dtype), 0);
  return array;
}

/// NumPy descr <-> dtype (little-endian only).
static const std::pair<llvm::StringLiteral, llvm::StringLiteral> kDescrs[] = {
    {"<f4", "f32"}, {"<f2", "f16"}, {"<u2", "bf16"},
    {"<i4", "i32"}, {"<i8", "i64"}, {"|b1", "i1"}};

/// The value text of `'key': value` in a .npy header dict.
static std::optional<llvm::StringRef> headerField(llvm::StringRef header,
                                                  llvm::StringRef key) {
  size_t at = header.find(("'" + key + "'").str());
  if (at == llvm::StringRef::npos)
    return std::nullopt;
  llvm::StringRef rest = header.drop_front(at + key.size() + 2).ltrim();
  if (!rest.consume_front(":"))
    return std::nullopt;
  return rest.ltrim();
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
mlir::tfm::readFile(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return llvm::createStringError("cannot read '" + path +
                                   "': " + buffer.getError().message());
  return std::move(*buffer);
}

llvm::Expected<HostArray> mlir::tfm::readNpy(llvm::StringRef path) {
  auto buffer = readFile(path);
  if (!buffer)
    return buffer.takeError();
  llvm::StringRef data = (*buffer)->getBuffer();
  auto bad = [&](const llvm::Twine &why) {
    return llvm::createStringError("'" + path + "' is not a supported .npy "
                                   "file: " + why);
  };
  if (data.size() < 10 || !data.starts_with("\x93NUMPY"))
    return bad("missing the NUMPY magic");
  unsigned major = static_cast<uint8_t>(data[6]);
  size_t headerLength, headerStart;
  if (major == 1) {
    headerLength = static_cast<uint8_t>(data[8]) |
                   static_cast<uint8_t>(data[9]) << 8;
    headerStart = 10;
  } else {
    if (data.size() < 12)
      return bad("truncated header");
    headerLength = 0;
    for (int i = 0; i < 4; ++i)
      headerLength |= static_cast<size_t>(static_cast<uint8_t>(data[8 + i]))
                      << (8 * i);
    headerStart = 12;
  }
  if (data.size() < headerStart + headerLength)
    return bad("truncated header");
  llvm::StringRef header = data.substr(headerStart, headerLength);

  std::optional<llvm::StringRef> descr = headerField(header, "descr");
  std::optional<llvm::StringRef> fortran = headerField(header, "fortran_order");
  std::optional<llvm::StringRef> shapeText = headerField(header, "shape");
  if (!descr || !fortran || !shapeText)
    return bad("header lacks descr, fortran_order or shape");
  if (fortran->starts_with("True"))
    return bad("Fortran-ordered arrays are not supported");
  HostArray array;
  for (auto [numpy, dtype] : kDescrs)
    if (descr->starts_with(("'" + numpy + "'").str()))
      array.dtype = dtype.str();
  if (array.dtype.empty())
    return bad("element type " + descr->take_until([](char c) {
      return c == ',';
    }) + " (supported: float32, float16, int32, int64, bool, uint16 as bf16)");
  llvm::StringRef dims = shapeText->drop_front().take_until(
      [](char c) { return c == ')'; });
  for (llvm::StringRef dim : llvm::split(dims, ',')) {
    dim = dim.trim();
    if (dim.empty())
      continue;
    int64_t size;
    if (dim.getAsInteger(10, size) || size < 0)
      return bad("shape " + dims);
    array.shape.push_back(size);
  }
  size_t expected = array.numElements() * elementSize(array.dtype);
  llvm::StringRef payload = data.drop_front(headerStart + headerLength);
  if (payload.size() != expected)
    return bad(llvm::formatv("expected {0} data bytes for {1}, found {2}",
                             expected, array.describe(), payload.size()));
  array.bytes.assign(payload.bytes_begin(), payload.bytes_end());
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

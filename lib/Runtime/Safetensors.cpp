//===- Safetensors.cpp - read .safetensors files ---------------------------===//
//
// Format: an 8-byte little-endian header size, a JSON header mapping tensor
// names to {"dtype", "shape", "data_offsets": [begin, end]} (offsets into the
// data that follows the header), and an optional "__metadata__" entry.
//
//===----------------------------------------------------------------------===//

#include "tfm/Runtime/HostArray.h"
#include "tfm/Runtime/Manifest.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir::tfm;
namespace json = llvm::json;

llvm::Expected<std::map<std::string, HostArray>>
mlir::tfm::readSafetensors(llvm::StringRef path) {
  auto buffer = readFile(path);
  if (!buffer)
    return buffer.takeError();
  llvm::StringRef data = (*buffer)->getBuffer();
  auto bad = [&](const llvm::Twine &why) {
    return llvm::createStringError("'" + path +
                                   "' is not a valid .safetensors file: " +
                                   why);
  };
  if (data.size() < 8)
    return bad("shorter than its 8-byte header size");
  uint64_t headerSize = 0;
  for (int i = 0; i < 8; ++i)
    headerSize |= static_cast<uint64_t>(static_cast<uint8_t>(data[i]))
                  << (8 * i);
  if (headerSize > data.size() - 8)
    return bad("header size exceeds the file");
  llvm::Expected<json::Value> header =
      json::parse(data.substr(8, headerSize));
  if (!header)
    return bad(llvm::toString(header.takeError()));
  const json::Object *entries = header->getAsObject();
  if (!entries)
    return bad("the header is not a JSON object");
  llvm::StringRef payload = data.drop_front(8 + headerSize);

  std::map<std::string, HostArray> tensors;
  for (const auto &[key, value] : *entries) {
    if (key == "__metadata__")
      continue;
    const json::Object *entry = value.getAsObject();
    std::optional<llvm::StringRef> dtype =
        entry ? entry->getString("dtype") : std::nullopt;
    const json::Array *shape = entry ? entry->getArray("shape") : nullptr;
    const json::Array *offsets =
        entry ? entry->getArray("data_offsets") : nullptr;
    if (!dtype || !shape || !offsets || offsets->size() != 2)
      return bad("tensor '" + key.str() + "' lacks dtype, shape or offsets");
    std::string ours = llvm::StringSwitch<std::string>(*dtype)
                           .Case("F32", "f32")
                           .Case("F16", "f16")
                           .Case("BF16", "bf16")
                           .Case("I32", "i32")
                           .Case("I64", "i64")
                           .Case("BOOL", "i1")
                           .Default("");
    if (ours.empty())
      return bad("tensor '" + key.str() + "' has unsupported dtype " + *dtype);
    HostArray array{ours, {}, {}};
    for (const json::Value &size : *shape) {
      std::optional<int64_t> dim = size.getAsInteger();
      if (!dim || *dim < 0)
        return bad("tensor '" + key.str() + "' has a bad shape");
      array.shape.push_back(*dim);
    }
    std::optional<int64_t> begin = (*offsets)[0].getAsInteger(),
                           end = (*offsets)[1].getAsInteger();
    size_t expected = array.numElements() * elementSize(ours);
    if (!begin || !end || *begin < 0 || *end < *begin ||
        static_cast<uint64_t>(*end) > payload.size() ||
        static_cast<size_t>(*end - *begin) != expected)
      return bad(llvm::formatv("tensor '{0}' ({1}) has data offsets that do "
                               "not fit it or the file",
                               key.str(), array.describe()));
    llvm::StringRef bytes = payload.substr(*begin, *end - *begin);
    array.bytes.assign(bytes.bytes_begin(), bytes.bytes_end());
    tensors.emplace(key.str(), std::move(array));
  }
  return tensors;
}

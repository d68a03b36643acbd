//===- Safetensors.cpp - read .safetensors files ---------------------------===//
//
// Format: an 8-byte little-endian header size, a JSON header mapping tensor
// names to {"dtype", "shape", "data_offsets": [begin, end]} (offsets into the
// data that follows the header), and an optional "__metadata__" entry. The
// tensors' ranges tile the data exactly; names are unique.
//
//===----------------------------------------------------------------------===//

#include "tfm/Runtime/HostArray.h"
#include "tfm/Runtime/Manifest.h"
#include "tfm/Support/InputLimits.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <set>
#include <tuple>

using namespace mlir::tfm;
namespace json = llvm::json;

/// The reference implementation refuses larger headers.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

llvm::Expected<std::map<std::string, HostArray>>
mlir::tfm::readSafetensors(llvm::StringRef path) {
  auto buffer = readFile(path);
  if (!buffer)
    return buffer.takeError();
  return parseSafetensors((*buffer)->getBuffer(), path);
}

llvm::Expected<std::map<std::string, HostArray>>
mlir::tfm::parseSafetensors(llvm::StringRef data, llvm::StringRef name) {
  auto bad = [&](const llvm::Twine &why) {
    return llvm::createStringError("'" + name +
                                   "' is not a valid .safetensors file: " +
                                   why);
  };
  if (data.size() < 8)
    return bad("shorter than its 8-byte header size");
  uint64_t headerSize = 0;
  for (int i = 0; i < 8; ++i)
    headerSize |= static_cast<uint64_t>(static_cast<uint8_t>(data[i]))
                  << (8 * i);
  if (headerSize > kMaxHeaderBytes)
    return bad(llvm::formatv("header of {0} bytes (at most {1})", headerSize,
                             kMaxHeaderBytes));
  if (headerSize > data.size() - 8)
    return bad("header size exceeds the file");
  llvm::StringRef headerText = data.substr(8, headerSize);
  if (!headerText.starts_with("{"))
    return bad("the header does not start with '{'");
  // Shapes and offsets are unsigned integers: 2.0 or -1 is not one.
  llvm::Expected<json::Value> header =
      parseJSON(headerText, {kMaxNestingDepth, /*unsignedIntegersOnly=*/true});
  if (!header)
    return bad("header: " + llvm::toString(header.takeError()));
  const json::Object *entries = header->getAsObject();
  if (!entries)
    return bad("the header is not a JSON object");
  llvm::StringRef payload = data.drop_front(8 + headerSize);

  std::map<std::string, HostArray> tensors;
  // Data ranges {begin, end, tensor}: sorted, they must tile the payload.
  std::vector<std::tuple<uint64_t, uint64_t, std::string>> ranges;
  for (const auto &[key, value] : *entries) {
    std::string tensor = key.str();
    if (tensor == "__metadata__") {
      const json::Object *metadata = value.getAsObject();
      if (!metadata || llvm::any_of(*metadata, [](const auto &entry) {
            return !entry.second.getAsString();
          }))
        return bad("__metadata__ must map strings to strings");
      continue;
    }
    const json::Object *entry = value.getAsObject();
    std::optional<llvm::StringRef> dtype =
        entry ? entry->getString("dtype") : std::nullopt;
    const json::Array *shape = entry ? entry->getArray("shape") : nullptr;
    const json::Array *offsets =
        entry ? entry->getArray("data_offsets") : nullptr;
    if (!dtype || !shape || !offsets || offsets->size() != 2 ||
        entry->size() != 3)
      return bad("tensor '" + tensor +
                 "' must have exactly dtype, shape and data_offsets");
    std::string ours = llvm::StringSwitch<std::string>(*dtype)
                           .Case("F32", "f32")
                           .Case("F16", "f16")
                           .Case("BF16", "bf16")
                           .Case("I32", "i32")
                           .Case("I64", "i64")
                           .Case("BOOL", "i1")
                           .Default("");
    if (ours.empty())
      return bad("tensor '" + tensor + "' has unsupported dtype " + *dtype);
    HostArray array{ours, {}, {}};
    for (const json::Value &size : *shape) {
      std::optional<int64_t> dim = size.getAsInteger();
      if (!dim)
        return bad("tensor '" + tensor + "' has a bad shape");
      array.shape.push_back(*dim);
    }
    llvm::Expected<uint64_t> expected =
        checkedByteSize(array.shape, elementSize(ours));
    if (!expected)
      return bad("tensor '" + tensor + "': " +
                 llvm::toString(expected.takeError()));
    std::optional<int64_t> begin = (*offsets)[0].getAsInteger(),
                           end = (*offsets)[1].getAsInteger();
    if (!begin || !end || *end < *begin ||
        static_cast<uint64_t>(*end - *begin) != *expected)
      return bad(llvm::formatv("tensor '{0}' ({1}) has data offsets that do "
                               "not fit its size",
                               tensor, array.describe()));
    ranges.emplace_back(*begin, *end, tensor);
    tensors.emplace(tensor, std::move(array));
  }
  llvm::sort(ranges);
  uint64_t covered = 0;
  for (const auto &[begin, end, tensor] : ranges) {
    if (begin != covered)
      return bad(llvm::formatv("tensor '{0}' starts at data offset {1}, not "
                               "where the previous one ends ({2}): tensors "
                               "must cover the data without gaps or overlaps",
                               tensor, begin, covered));
    covered = end;
  }
  if (covered != payload.size())
    return bad(llvm::formatv("the tensors cover {0} data bytes, the file "
                             "holds {1}",
                             covered, payload.size()));
  for (const auto &[begin, end, tensor] : ranges) {
    llvm::StringRef bytes = payload.slice(begin, end);
    tensors[tensor].bytes.assign(bytes.bytes_begin(), bytes.bytes_end());
  }
  return tensors;
}

/// Adds the tensors of `file` to `checkpoint`, refusing names seen before.
static llvm::Error addTensors(std::map<std::string, CheckpointTensor> &checkpoint,
                              std::map<std::string, HostArray> tensors,
                              llvm::StringRef file) {
  for (auto &[name, array] : tensors) {
    auto [it, added] =
        checkpoint.try_emplace(name, CheckpointTensor{std::move(array), file.str()});
    if (!added)
      return llvm::createStringError("tensor '" + name + "' is in both '" +
                                     it->second.file + "' and '" + file + "'");
  }
  return llvm::Error::success();
}

/// The shards an index file maps tensors to, each with the tensors it must
/// hold exactly.
static llvm::Expected<std::map<std::string, std::set<std::string>>>
readIndex(llvm::StringRef path) {
  auto buffer = readFile(path);
  if (!buffer)
    return buffer.takeError();
  auto bad = [&](const llvm::Twine &why) {
    return llvm::createStringError("'" + path +
                                   "' is not a valid checkpoint index: " + why);
  };
  llvm::Expected<json::Value> index = parseJSON((*buffer)->getBuffer());
  if (!index)
    return bad(llvm::toString(index.takeError()));
  const json::Object *root = index->getAsObject();
  const json::Object *weightMap = root ? root->getObject("weight_map") : nullptr;
  if (!weightMap)
    return bad("no \"weight_map\" object");
  llvm::SmallString<128> directory = llvm::sys::path::parent_path(path);
  std::map<std::string, std::set<std::string>> shards;
  for (const auto &[name, shard] : *weightMap) {
    std::optional<llvm::StringRef> file = shard.getAsString();
    if (!file || file->empty() || llvm::sys::path::is_absolute(*file) ||
        llvm::is_contained(llvm::make_range(llvm::sys::path::begin(*file),
                                            llvm::sys::path::end(*file)),
                           ".."))
      return bad("tensor '" + name.str() +
                 "' must map to a shard file beside the index");
    llvm::SmallString<128> shardPath = directory;
    llvm::sys::path::append(shardPath, *file);
    shards[shardPath.str().str()].insert(name.str());
  }
  return shards;
}

llvm::Expected<std::map<std::string, CheckpointTensor>>
mlir::tfm::readCheckpoint(llvm::ArrayRef<std::string> paths) {
  std::map<std::string, CheckpointTensor> checkpoint;
  for (const std::string &path : paths) {
    if (!llvm::StringRef(path).ends_with(".json")) {
      auto tensors = readSafetensors(path);
      if (!tensors)
        return tensors.takeError();
      if (auto error = addTensors(checkpoint, std::move(*tensors), path))
        return std::move(error);
      continue;
    }
    auto shards = readIndex(path);
    if (!shards)
      return shards.takeError();
    for (auto &[shard, names] : *shards) {
      auto tensors = readSafetensors(shard);
      if (!tensors)
        return tensors.takeError();
      for (const std::string &name : names)
        if (!tensors->count(name))
          return llvm::createStringError("'" + path + "' maps tensor '" + name +
                                         "' to '" + shard +
                                         "', which does not hold it");
      for (const auto &[name, array] : *tensors)
        if (!names.count(name))
          return llvm::createStringError("'" + shard + "' holds tensor '" +
                                         name + "', which '" + path +
                                         "' does not list");
      if (auto error = addTensors(checkpoint, std::move(*tensors), shard))
        return std::move(error);
    }
  }
  return checkpoint;
}

//===- InputLimits.h - checked sizes and limits for untrusted input -*- C++ -*-//
//
// Every size, count or nesting level that comes from a file a user hands tfm
// (.npy, .safetensors, JSON model descriptions, MLIR text) goes through these
// checks before it is used: overflow-checked arithmetic with a sane upper
// bound, and a nesting limit that keeps recursive parsers off the end of the
// stack. They depend on LLVM Support only.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_SUPPORT_INPUTLIMITS_H
#define TFM_SUPPORT_INPUTLIMITS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>

namespace mlir::tfm {

/// The largest array, in bytes, that tfm reads, allocates or compiles for:
/// 2^47, the user address space of x86-64 and AArch64 Linux.
constexpr uint64_t kMaxArrayBytes = uint64_t(1) << 47;

/// The deepest nesting of brackets accepted in JSON and MLIR text.
constexpr unsigned kMaxNestingDepth = 256;

/// The byte size of a `shape` array of `elementBytes`-byte elements, or an
/// error saying why no such array can exist (a negative dim, or more than
/// kMaxArrayBytes). As in NumPy, the non-zero dims alone must fit, so that
/// every stride of the array fits too.
llvm::Expected<uint64_t> checkedByteSize(llvm::ArrayRef<int64_t> shape,
                                         uint64_t elementBytes);

/// How strict `parseJSON` is beyond the JSON grammar.
struct JSONLimits {
  unsigned maxDepth = kMaxNestingDepth;
  /// Reject numbers written with a fraction, an exponent or a sign (every
  /// number is then a non-negative integer, as in a safetensors header).
  bool unsignedIntegersOnly = false;
};

/// Parses JSON, rejecting nesting deeper than `limits.maxDepth` and
/// duplicated keys in an object (llvm::json::parse keeps the last silently).
llvm::Expected<llvm::json::Value> parseJSON(llvm::StringRef text,
                                            const JSONLimits &limits = {});

/// Fails on MLIR source text that LLVM 22's parser would crash on instead
/// of reporting an error:
/// - brackets (outside strings and comments) nested deeper than `maxDepth`:
///   the recursive-descent parser would run off the end of the stack long
///   before such input means anything;
/// - `permutation = [...]` or `dimensions = [...]` (the custom syntax of
///   linalg.transpose, linalg.broadcast and linalg.reduce) holding anything
///   but integers: their parser stores the null attribute of a failed parse
///   and dereferences it.
llvm::Error checkMLIRSource(llvm::StringRef source,
                            unsigned maxDepth = kMaxNestingDepth);

} // namespace mlir::tfm

#endif // TFM_SUPPORT_INPUTLIMITS_H

//===- HuggingFaceConfig.h - config.json to a model description -*- C++ -*-===//
//
// tfm-compile MODEL_DIR reads the directory's Hugging Face config.json and
// compiles the model description it describes (docs/ModelDescription.md,
// "Hugging Face model directories"). Every field is either honoured, known
// to have no effect on a forward pass, or an error that names it.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_COMPILER_HUGGINGFACECONFIG_H
#define TFM_COMPILER_HUGGINGFACECONFIG_H

#include "llvm/Support/Error.h"

#include <string>

namespace mlir::tfm {

/// The model description (JSON text) of a Hugging Face config.json for
/// LlamaForCausalLM, MistralForCausalLM or GPT2LMHeadModel.
llvm::Expected<std::string> descriptionFromHuggingFace(llvm::StringRef config);

} // namespace mlir::tfm

#endif // TFM_COMPILER_HUGGINGFACECONFIG_H

//===- tfm-compile.cpp - compile tfm IR or a model description -------------===//
//
// tfm-compile INPUT [-o OUTPUT] [--target=cpu|cuda] [--emit=KIND]
//             [--stage=STAGE] [--dump-after=STAGE,...] [--mcpu=CPU]
//             [--mattr=FEATURES] [--gpu-arch=SM] [-O N] [--header=PATH]
//
// INPUT is tfm MLIR (.mlir, or - for stdin), a model description (.json) or
// a Hugging Face model directory (its config.json).
// See README.md and docs/DESIGN.md for what each output contains.
//
//===----------------------------------------------------------------------===//

#include "tfm/Compiler/Driver.h"
#include "tfm/Compiler/EntryPoints.h"
#include "tfm/Compiler/HuggingFaceConfig.h"
#include "tfm/Compiler/ModelDescription.h"
#include "tfm/InitTfm.h"
#include "tfm/Support/InputLimits.h"
#include "tfm/Support/Version.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;
using namespace mlir::tfm;
namespace cl = llvm::cl;

namespace {

enum class Emit {
  Library,
  Object,
  Assembly,
  LLVMIR,
  PTX,
  EmulatedKernels,
  MLIR,
  Header
};

cl::OptionCategory category("tfm-compile options");

cl::opt<std::string> inputPath(cl::Positional,
                               cl::desc("<input .mlir, .json or Hugging Face "
                                        "model directory>"),
                               cl::cat(category));
cl::opt<bool> printStagesFlag(
    "print-stages",
    cl::desc("Print the target's stages and their passes (docs/Stages.md) "
             "and exit"),
    cl::cat(category));
cl::opt<std::string> outputPath("o", cl::desc("Output file (default: from "
                                              "the input name; - is stdout)"),
                                cl::value_desc("path"), cl::cat(category));
cl::opt<Emit> emit(
    "emit", cl::desc("What to produce"), cl::init(Emit::Library),
    cl::values(clEnumValN(Emit::Library, "lib", "shared library (default)"),
               clEnumValN(Emit::Object, "obj", "object file"),
               clEnumValN(Emit::Assembly, "asm", "assembly"),
               clEnumValN(Emit::LLVMIR, "llvm-ir", "optimized LLVM IR"),
               clEnumValN(Emit::PTX, "ptx", "the kernels' PTX (cuda)"),
               clEnumValN(Emit::EmulatedKernels, "emulated-kernels",
                          "the kernels as a host library for the tests' GPU "
                          "emulator (cuda; docs/DESIGN.md)"),
               clEnumValN(Emit::MLIR, "mlir", "MLIR after --stage"),
               clEnumValN(Emit::Header, "header",
                          "C header of the entry points")),
    cl::cat(category));
cl::opt<std::string> targetName(
    "target",
    cl::desc("What the code runs on: cpu (default) or cuda (NVIDIA GPUs)"),
    cl::init("cpu"), cl::cat(category));
cl::opt<std::string> stageOption(
    "stage",
    cl::desc("With --emit=mlir: the stage to stop after (default: the "
             "last; cpu: tfm, linalg, vector, bufferized or llvm; cuda: tfm, "
             "linalg, bufferized, kernels or nvvm)"),
    cl::cat(category));
cl::list<std::string> dumpAfter(
    "dump-after", cl::CommaSeparated,
    cl::desc("Print the IR after these stages (or all) to stderr"),
    cl::cat(category));
cl::opt<std::string> cpu("mcpu", cl::desc("Target CPU (default: the host)"),
                         cl::init("native"), cl::cat(category));
cl::opt<std::string> features("mattr",
                              cl::desc("Target features, e.g. -avx512f"),
                              cl::cat(category));
cl::opt<std::string> gpuArch(
    "gpu-arch",
    cl::desc("With --target=cuda: the GPU architecture, sm_80 (default), "
             "sm_86, sm_89, sm_90 or sm_90a"),
    cl::cat(category));
cl::list<int64_t> gpuMatmulTile(
    "gpu-matmul-tile",
    cl::desc("With --target=cuda: the tensor-core projections' tiling, "
             "block rows, block columns, K step, stages, warp rows, warp "
             "columns (default: chosen per projection)"),
    cl::CommaSeparated, cl::value_desc("R,C,K,S,WR,WC"), cl::cat(category));
cl::opt<int64_t> gpuAttentionWarpRows(
    "gpu-attention-warp-rows",
    cl::desc("With --target=cuda: query rows per warp of the tensor-core "
             "attention kernel, 16 (default: 8 warps a block) or 32 (4 "
             "warps, FlashAttention-2's split)"),
    cl::init(0), cl::cat(category));
cl::opt<int64_t> gpuAttentionKeys(
    "gpu-attention-keys",
    cl::desc("With --target=cuda: keys of a tile of the tensor-core "
             "attention kernel, 64 (default) or 128 (with its warpgroup "
             "MMA forms, FlashAttention-3's tile)"),
    cl::init(0), cl::cat(category));
cl::opt<int64_t> gpuMultiprocessors(
    "gpu-multiprocessors",
    cl::desc("With --gpu-matmul-persistent: size the persistent grids for "
             "N multiprocessors rather than the device's count, which is "
             "asked at run time (default 0); for tests and tuning"),
    cl::value_desc("N"), cl::init(0), cl::cat(category));
cl::opt<int64_t> gpuFewRows(
    "gpu-few-rows",
    cl::desc("With --target=cuda: projections of at most this many rows "
             "(0 to 16; default 8, 0: none) on the few-rows kernel, which "
             "streams the weights through every multiprocessor, rather "
             "than on tensor-core tiles"),
    cl::init(-1), cl::cat(category));
cl::opt<bool> gpuAttentionSplitKV(
    "gpu-attention-split-kv",
    cl::desc("With --target=cuda: decode attention (a KV head's queries in "
             "16 rows or fewer) packed into one warp per KV head, its keys "
             "split among blocks and the parts combined (FlashDecoding; "
             "default true, =false: a block per query head walks every "
             "key)"),
    cl::cat(category));
#define TFM_GPU_FLAG(field, flag, description)                                 \
  cl::opt<bool> field(flag, cl::desc(description), cl::cat(category));
#include "tfm/Target/GPUFlags.def"
cl::opt<unsigned> optLevel("O", cl::desc("Optimization level 0-3"),
                           cl::init(3), cl::Prefix, cl::cat(category));
#define TFM_ATTENTION_LOWERING_FLAG(field, flag, description)                 \
  cl::opt<bool> field(flag, cl::desc(description), cl::cat(category));
#define TFM_ATTENTION_TILING_OPTION(field, flag, value, description)          \
  cl::opt<int64_t> field(flag, cl::desc(description), cl::init(value),         \
                         cl::cat(category));
#include "tfm/Dialect/Tfm/Transforms/AttentionTilingOptions.def"
cl::opt<std::string> noFuse(
    "no-fuse",
    cl::desc("CPU: leave out these projection fusions, comma-separated: "
             "norm-projection, projection-epilogues, viewed-epilogues, "
             "sibling-projections, or all (each projection alone)"),
    cl::value_desc("fusions"), cl::cat(category));
cl::opt<bool> prepackWeights(
    "prepack-weights",
    cl::desc("CPU: f32 weights packed once, by the library's "
             "prepare_weights entry point, into inputs of their own "
             "(NAME.packed) that the other entry points read in place of "
             "packing them in every call (default true; "
             "--prepack-weights=false: the entry points take the weights)"),
    cl::init(true), cl::cat(category));
cl::opt<std::string> headerPath(
    "header", cl::desc("Also write the C header of the entry points here"),
    cl::value_desc("path"), cl::cat(category));

int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "tfm-compile") << message << "\n";
  return 1;
}

/// The artifact a target emits for `kind` (none for MLIR and headers).
std::optional<Artifact> artifactOf(Emit kind) {
  switch (kind) {
  case Emit::Library:
    return Artifact::Library;
  case Emit::Object:
    return Artifact::Object;
  case Emit::Assembly:
    return Artifact::Assembly;
  case Emit::LLVMIR:
    return Artifact::LLVMIR;
  case Emit::PTX:
    return Artifact::PTX;
  case Emit::EmulatedKernels:
    return Artifact::EmulatedKernels;
  case Emit::MLIR:
  case Emit::Header:
    return std::nullopt;
  }
  llvm_unreachable("unknown emit kind");
}

std::string defaultOutput(const TargetBackend &target) {
  std::optional<Artifact> artifact = artifactOf(emit);
  llvm::StringRef extension = artifact      ? target.extension(*artifact)
                              : emit == Emit::Header ? ".h"
                                                     : "";
  if (extension.empty() || inputPath == "-")
    return "-";
  llvm::SmallString<128> path(
      llvm::sys::path::filename(llvm::StringRef(inputPath).rtrim('/')));
  llvm::sys::path::replace_extension(path, extension);
  return path.str().str();
}

/// Writes `text` to `path`, keeping the file only on success.
int writeText(llvm::StringRef path, llvm::StringRef text) {
  std::string error;
  auto file = openOutputFile(path, &error);
  if (!file)
    return fail(error);
  file->os() << text;
  file->keep();
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  setToolVersionPrinter("tfm-compile");
  cl::ParseCommandLineOptions(
      argc, argv, "tfm-compile: tfm IR or a model description -> binaries\n");

  TargetOptions targetOptions;
  targetOptions.cpu = cpu;
  targetOptions.features = features;
  targetOptions.gpuArch = gpuArch;
  targetOptions.gpuMatmulTile.assign(gpuMatmulTile.begin(),
                                     gpuMatmulTile.end());
  targetOptions.gpuAttentionWarpRows = gpuAttentionWarpRows;
  targetOptions.gpuAttentionKeys = gpuAttentionKeys;
#define TFM_GPU_FLAG(field, flag, description) targetOptions.field = field;
#include "tfm/Target/GPUFlags.def"
  if (gpuAttentionSplitKV.getNumOccurrences())
    targetOptions.gpuAttentionSplitKV = gpuAttentionSplitKV;
  targetOptions.gpuMultiprocessors = gpuMultiprocessors;
  targetOptions.gpuFewRows = gpuFewRows;
  targetOptions.optLevel = optLevel;
  targetOptions.prepackWeights = prepackWeights;
  if (std::string error = targetOptions.fusions.disable(noFuse);
      !error.empty())
    return fail("--no-fuse: " + error);
#define TFM_ATTENTION_LOWERING_FLAG(field, flag, description)                 \
  targetOptions.attention.field = field;
#define TFM_ATTENTION_TILING_OPTION(field, flag, value, description)          \
  targetOptions.attention.field = field;
#include "tfm/Dialect/Tfm/Transforms/AttentionTilingOptions.def"
  if (std::string error = targetOptions.attention.validate();
      !error.empty())
    return fail("--" + error);
  auto target = createTargetBackend(targetName, targetOptions);
  if (!target)
    return fail(llvm::toString(target.takeError()));

  if (printStagesFlag) {
    printStages(**target, llvm::outs());
    return 0;
  }
  if (std::optional<Artifact> artifact = artifactOf(emit);
      artifact && (*target)->extension(*artifact).empty())
    return fail("target '" + (*target)->name() +
                "' has no such output (--emit=ptx and --emit=emulated-kernels "
                "need --target=cuda)");
  if (inputPath.empty())
    return fail("no input file (a .mlir or .json file, or - for stdin)");

  std::vector<std::string> stages = stageNames(**target);
  auto stageIndex = [&](llvm::StringRef name) {
    return llvm::find(stages, name) - stages.begin();
  };
  auto knownStage = [&](llvm::StringRef name) {
    return llvm::is_contained(stages, name);
  };
  std::string stageList =
      llvm::join(llvm::ArrayRef(stages).drop_back(), ", ") + " or " +
      stages.back();
  if (stageOption.empty())
    stageOption = stages.back();
  if (!knownStage(stageOption))
    return fail("unknown --stage '" + stageOption + "' for target '" +
                (*target)->name() + "' (expected " + stageList + ")");
  LoweringOptions lowering;
  for (const std::string &name : dumpAfter) {
    if (name == "all") {
      lowering.dumpAfter.insert(stages.begin(), stages.end());
      continue;
    }
    if (!knownStage(name))
      return fail("unknown --dump-after stage '" + name + "' (expected " +
                  stageList + " or all)");
    lowering.dumpAfter.insert(name);
  }
  lowering.dumpStream = &llvm::errs();

  DialectRegistry registry;
  registerTfmDialects(registry);
  MLIRContext context(registry);

  // A directory is a Hugging Face model directory: its config.json.
  bool huggingFace = llvm::sys::fs::is_directory(inputPath);
  llvm::SmallString<128> sourcePath(inputPath);
  if (huggingFace)
    llvm::sys::path::append(sourcePath, "config.json");
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input = openInputFile(sourcePath, &error);
  if (!input)
    return fail(error);

  // Alive for the whole compilation, so that every later diagnostic (entry
  // points, passes) points into the source too.
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module;
  Manifest manifest;
  manifest.device = (*target)->device().str();
  if (huggingFace || llvm::sys::path::extension(inputPath) == ".json") {
    std::string description = input->getBuffer().str();
    if (huggingFace) {
      auto converted = descriptionFromHuggingFace(description);
      if (!converted)
        return fail(sourcePath + ": " + llvm::toString(converted.takeError()));
      description = std::move(*converted);
    }
    auto model = buildModelFromJSON(description, &context);
    if (!model)
      return fail(sourcePath + ": " + llvm::toString(model.takeError()));
    module = std::move(model->module);
    manifest.flops = model->flops;
  } else {
    if (llvm::Error nesting = checkMLIRSource(input->getBuffer()))
      return fail(inputPath + ": " + llvm::toString(std::move(nesting)));
    sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
    module = parseSourceFile<ModuleOp>(sourceMgr, &context);
    if (!module)
      return 1; // the parser reported why
  }

  // Entry-point signatures, before lowering erases them.
  FailureOr<std::vector<EntryPoint>> collected = collectEntryPoints(*module);
  if (failed(collected))
    return 1;
  std::vector<EntryPoint> &entryPoints = manifest.entryPoints;
  entryPoints = std::move(*collected);
  std::string output = outputPath.empty() ? defaultOutput(**target) : outputPath;
  std::string libraryName =
      llvm::sys::path::stem(output == "-" ? inputPath : output).str();

  // The manifest and header read output dims at the linalg stage and the
  // runtime checks at the bufferized stage: on the way, when the module is
  // lowered that far, else from a copy (MLIR of an earlier stage).
  std::string last = emit == Emit::MLIR ? stageOption.getValue()
                     : artifactOf(emit)
                         ? (*target)->artifactStage(*artifactOf(emit)).str()
                         : stages.back();
  std::string reached = kInputStage.str();
  if (emit != Emit::MLIR || !headerPath.empty()) {
    bool onTheWay = stageIndex(last) >= stageIndex("bufferized");
    OwningOpRef<ModuleOp> copy = onTheWay ? nullptr : module->clone();
    ModuleOp work = onTheWay ? *module : *copy;
    LoweringOptions quiet; // a copy's stages are not dumped
    const LoweringOptions &options = onTheWay ? lowering : quiet;
    if (failed(lowerModule(work, **target, "linalg", options)))
      return 1;
    resolveOutputDimSources(work, entryPoints);
    if (failed(lowerModule(work, **target, "bufferized", options, "linalg")))
      return 1;
    if (failed(collectPreparedInputs(work, entryPoints)))
      return 1;
    collectRuntimeChecks(work, entryPoints);
    if (onTheWay)
      reached = "bufferized";
  }
  if (!headerPath.empty() &&
      writeText(headerPath, formatCHeader(entryPoints, libraryName)))
    return 1;
  if (emit == Emit::Header)
    return writeText(output, formatCHeader(entryPoints, libraryName));

  if (failed(lowerModule(*module, **target, last, lowering, reached)))
    return 1;
  if (emit == Emit::MLIR) {
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os);
    return writeText(output, text);
  }
  if (llvm::Error error =
          (*target)->emit(*module, manifest, *artifactOf(emit), output))
    return fail(llvm::toString(std::move(error)));
  return 0;
}

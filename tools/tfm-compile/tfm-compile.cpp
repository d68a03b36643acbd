//===- tfm-compile.cpp - compile tfm IR or a model description -------------===//
//
// tfm-compile INPUT [-o OUTPUT] [--emit=KIND] [--stage=STAGE]
//             [--dump-after=STAGE,...] [--mcpu=CPU] [--mattr=FEATURES] [-O N]
//             [--header=PATH]
//
// INPUT is tfm MLIR (.mlir, or - for stdin) or a model description (.json).
// See README.md and docs/DESIGN.md for what each output contains.
//
//===----------------------------------------------------------------------===//

#include "tfm/Compiler/Driver.h"
#include "tfm/Compiler/EntryPoints.h"
#include "tfm/Compiler/ModelDescription.h"
#include "tfm/InitTfm.h"
#include "tfm/Support/InputLimits.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;
using namespace mlir::tfm;
namespace cl = llvm::cl;

namespace {

enum class Emit { Library, Object, Assembly, LLVMIR, MLIR, Header };

cl::OptionCategory category("tfm-compile options");

cl::opt<std::string> inputPath(cl::Positional, cl::Required,
                               cl::desc("<input .mlir or .json>"),
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
               clEnumValN(Emit::MLIR, "mlir", "MLIR after --stage"),
               clEnumValN(Emit::Header, "header",
                          "C header of the entry points")),
    cl::cat(category));
cl::opt<std::string> stageOption(
    "stage",
    cl::desc("With --emit=mlir: tfm, linalg, vector, bufferized or llvm"),
    cl::init("llvm"), cl::cat(category));
cl::list<std::string> dumpAfter(
    "dump-after", cl::CommaSeparated,
    cl::desc("Print the IR after these stages (tfm, linalg, vector, bufferized, "
             "llvm, or all) to stderr"),
    cl::cat(category));
cl::opt<std::string> cpu("mcpu", cl::desc("Target CPU (default: the host)"),
                         cl::init("native"), cl::cat(category));
cl::opt<std::string> features("mattr",
                              cl::desc("Target features, e.g. -avx512f"),
                              cl::cat(category));
cl::opt<unsigned> optLevel("O", cl::desc("Optimization level 0-3"),
                           cl::init(3), cl::Prefix, cl::cat(category));
cl::opt<bool> referenceAttention(
    "reference-attention",
    cl::desc("Lower tfm.attention with the untiled reference lowering"),
    cl::cat(category));
cl::opt<int64_t> tileSizeQ("tile-size-q",
                           cl::desc("Query rows per attention tile"),
                           cl::init(64), cl::cat(category));
cl::opt<int64_t> tileSizeKv("tile-size-kv", cl::desc("Keys per attention tile"),
                            cl::init(64), cl::cat(category));
cl::opt<int64_t> kvSplits(
    "kv-splits",
    cl::desc("Key-range splits of a short static query (flash-decoding); "
             "0 picks a count, 1 disables"),
    cl::init(0), cl::cat(category));
cl::opt<std::string> headerPath(
    "header", cl::desc("Also write the C header of the entry points here"),
    cl::value_desc("path"), cl::cat(category));

int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "tfm-compile") << message << "\n";
  return 1;
}

std::string defaultOutput() {
  llvm::StringRef extension = emit == Emit::Library    ? ".so"
                              : emit == Emit::Object   ? ".o"
                              : emit == Emit::Assembly ? ".s"
                              : emit == Emit::LLVMIR   ? ".ll"
                              : emit == Emit::Header   ? ".h"
                                                       : "";
  if (extension.empty() || inputPath == "-")
    return "-";
  llvm::SmallString<128> path(llvm::sys::path::filename(inputPath));
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
  cl::ParseCommandLineOptions(
      argc, argv, "tfm-compile: tfm IR or a model description -> binaries\n");

  std::optional<Stage> stage = parseStage(stageOption);
  if (!stage)
    return fail("unknown --stage '" + stageOption +
                "' (expected tfm, linalg, vector, bufferized or llvm)");
  LoweringOptions lowering;
  for (const std::string &name : dumpAfter) {
    if (name == "all") {
      lowering.dumpAfter = {Stage::Tfm, Stage::Linalg, Stage::Vector,
                            Stage::Bufferized, Stage::LLVMDialect};
      continue;
    }
    std::optional<Stage> dump = parseStage(name);
    if (!dump)
      return fail("unknown --dump-after stage '" + name + "'");
    lowering.dumpAfter.insert(*dump);
  }
  lowering.dumpStream = &llvm::errs();
  if (tileSizeQ < 1 || tileSizeKv < 1)
    return fail("--tile-size-q and --tile-size-kv must be positive");
  if (kvSplits < 0)
    return fail("--kv-splits must be 0 (auto) or positive");
  if (optLevel > 3)
    return fail("-O must be 0, 1, 2 or 3");
  auto target = createTargetMachine(cpu, features, optLevel);
  if (!target)
    return fail(llvm::toString(target.takeError()));
  auto configure = [&](TfmLowerToLLVMPipelineOptions &pipeline) {
    pipeline.tileAttention = !referenceAttention;
    pipeline.tileSizeQ = tileSizeQ;
    pipeline.tileSizeKv = tileSizeKv;
    pipeline.kvSplits = kvSplits;
    configureForTarget(pipeline, **target);
  };
  configure(lowering.pipeline);

  DialectRegistry registry;
  registerTfmDialects(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerOpenMPDialectTranslation(registry);
  MLIRContext context(registry);

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input = openInputFile(inputPath, &error);
  if (!input)
    return fail(error);

  // Alive for the whole compilation, so that every later diagnostic (entry
  // points, passes) points into the source too.
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module;
  Manifest manifest;
  if (llvm::sys::path::extension(inputPath) == ".json") {
    auto model = buildModelFromJSON(input->getBuffer(), &context);
    if (!model)
      return fail(inputPath + ": " + llvm::toString(model.takeError()));
    module = std::move(model->module);
    manifest.flops = model->flops;
  } else {
    if (llvm::Error error = checkSourceNesting(input->getBuffer()))
      return fail(inputPath + ": " + llvm::toString(std::move(error)));
    sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
    module = parseSourceFile<ModuleOp>(sourceMgr, &context);
    if (!module)
      return 1; // the parser reported why
  }

  // Entry-point signatures, before lowering erases them.
  FailureOr<std::vector<EntryPoint>> collected = collectEntryPoints(*module);
  if (failed(collected))
    return 1;
  std::vector<EntryPoint> *entryPoints = &manifest.entryPoints;
  *entryPoints = std::move(*collected);
  std::string output = outputPath.empty() ? defaultOutput() : outputPath;
  std::string libraryName =
      llvm::sys::path::stem(output == "-" ? inputPath : output).str();

  // What the manifest and header say beyond signatures comes from a copy
  // lowered to the linalg stage (output dims) and the bufferized stage
  // (runtime checks).
  if (emit != Emit::MLIR || !headerPath.empty()) {
    OwningOpRef<ModuleOp> copy = module->clone();
    LoweringOptions quiet; // same pipeline, no dumps
    configure(quiet.pipeline);
    if (failed(lowerModule(*copy, Stage::Linalg, quiet)))
      return 1;
    resolveOutputDimSources(*copy, *entryPoints);
    if (failed(lowerModule(*copy, Stage::Bufferized, quiet, Stage::Linalg)))
      return 1;
    collectRuntimeChecks(*copy, *entryPoints);
  }
  if (!headerPath.empty() &&
      writeText(headerPath, formatCHeader(*entryPoints, libraryName)))
    return 1;
  if (emit == Emit::Header)
    return writeText(output, formatCHeader(*entryPoints, libraryName));

  Stage last = emit == Emit::MLIR ? *stage : Stage::LLVMDialect;
  if (failed(lowerModule(*module, last, lowering)))
    return 1;
  if (emit == Emit::MLIR) {
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os);
    return writeText(output, text);
  }

  llvm::LLVMContext llvmContext;
  auto llvmModule =
      translateToLLVMIR(*module, llvmContext, **target, optLevel, manifest);
  if (!llvmModule)
    return fail(llvm::toString(llvmModule.takeError()));

  if (emit == Emit::LLVMIR) {
    std::string text;
    llvm::raw_string_ostream os(text);
    (*llvmModule)->print(os, nullptr);
    return writeText(output, text);
  }
  if (emit == Emit::Assembly || emit == Emit::Object) {
    auto file = openOutputFile(output, &error);
    if (!file)
      return fail(error);
    if (auto err = emitMachineCode(**llvmModule, **target,
                                   emit == Emit::Assembly
                                       ? llvm::CodeGenFileType::AssemblyFile
                                       : llvm::CodeGenFileType::ObjectFile,
                                   file->os()))
      return fail(llvm::toString(std::move(err)));
    file->keep();
    return 0;
  }

  // Shared library: an object in a temporary file, then clang + lld.
  if (output == "-")
    return fail("a shared library cannot be written to stdout; use -o");
  llvm::SmallString<128> objectPath;
  if (auto code = llvm::sys::fs::createTemporaryFile("tfm", "o", objectPath))
    return fail("cannot create a temporary object file: " + code.message());
  llvm::FileRemover removeObject(objectPath);
  {
    auto file = openOutputFile(objectPath, &error);
    if (!file)
      return fail(error);
    if (auto err = emitMachineCode(**llvmModule, **target,
                                   llvm::CodeGenFileType::ObjectFile,
                                   file->os()))
      return fail(llvm::toString(std::move(err)));
    file->keep();
  }
  if (auto err = linkSharedLibrary(objectPath, output))
    return fail(llvm::toString(std::move(err)));
  return 0;
}

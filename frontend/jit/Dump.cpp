// jit::dump: a traced program written to a file. The recording is copied into a fresh
// context (so the blobs made here neither pile up in the trace's context nor get names
// that depend on earlier dumps), its large constants become dense_resource blobs, its
// inputs and outputs get names, and the file is written atomically.
#include <bit>
#include <cstdio>
#include <optional>
#include <exception>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "dialect/KilnOps.h"
#include "frontend/jit/Context.h"
#include "frontend/jit/Dump.h"
#include "bridge/OpBridge.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"
#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Parser/Parser.h"
#include "support/BinaryFile.h"

namespace kiln::jit {

using mlir::kiln::KilnDialect;

namespace {

// Constants with more elements than this are written as blobs; smaller ones (and splats,
// which print as one value) stay inline, where they read best.
constexpr int64_t kMaxInlineElements = 16;

// Streams what MLIR writes into an AtomicFileWriter. MLIR is built without exceptions, so
// a failed write is held, later bytes are dropped, and check() rethrows it.
class AtomicFileStream final : public llvm::raw_ostream {
 public:
  explicit AtomicFileStream(support::AtomicFileWriter& file) : file_(file) {}
  ~AtomicFileStream() override { flush(); }

  void check() {
    flush();
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void write_impl(const char* data, size_t size) override {
    written_ += size;
    if (error_) return;
    try {
      file_.write(data, size);
    } catch (...) {
      error_ = std::current_exception();
    }
  }
  uint64_t current_pos() const override { return written_; }

  support::AtomicFileWriter& file_;
  uint64_t written_ = 0;
  std::exception_ptr error_;
};

// A copy of `module` in `context`, through an in-memory bytecode round trip (MLIR cannot
// clone across contexts).
mlir::OwningOpRef<mlir::ModuleOp> copyInto(mlir::MLIRContext& context, mlir::ModuleOp module,
                                           const SourceLoc& loc) {
  std::string bytes;
  llvm::raw_string_ostream out(bytes);
  if (mlir::failed(mlir::writeBytecodeToFile(module, out)))
    throw CompileError::make(loc, "dump", "the recorded program cannot be written as bytecode");
  mlir::ParserConfig config(&context);
  auto copy = mlir::parseSourceString<mlir::ModuleOp>(bytes, config);
  if (!copy)
    throw CompileError::make(loc, "dump", "the recorded program does not read back (a Kiln bug)");
  return copy;
}

// The one function of a recording; its results must all be outputs (a dumped graph has no
// state to write back). Its arguments are all inputs: TracedCore::dump checked
// capture_as_const.
mlir::func::FuncOp onlyFunction(mlir::ModuleOp module, const SourceLoc& loc) {
  auto funcs = module.getOps<mlir::func::FuncOp>();
  if (std::distance(funcs.begin(), funcs.end()) != 1)
    throw CompileError::make(loc, "dump", "a recording holds one function (a Kiln bug)");
  mlir::func::FuncOp func = *funcs.begin();
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    if (!func.getResultAttr(i, KilnDialect::getOutputAttrName())) {
      mlir::DictionaryAttr attrs = func.getResultAttrDict(i);
      std::string what = attrs && !attrs.empty() ? attrs.begin()->getName().str() : "no kind";
      throw TraceError::make(loc, "dump", "'", func.getName().str(),
                             "' returns more than its outputs (result ", i, " is ", what,
                             "); a dumped graph has no state to write back, so dump a function "
                             "that only returns values");
    }
  return func;
}

// The names to give `count` inputs (or outputs): `given`, or prefix0, prefix1, ....
// kiln-run turns them into --input flags and file names, so they must be unique, non-empty
// and free of '/' and '='.
std::vector<std::string> namesFor(const std::vector<std::string>& given, size_t count,
                                  const char* what, const char* prefix, const SourceLoc& loc) {
  if (given.empty()) {
    std::vector<std::string> names;
    for (size_t i = 0; i < count; ++i) names.push_back(prefix + std::to_string(i));
    return names;
  }
  if (given.size() != count)
    throw TraceError::make(loc, "dump", what, "_names has ", given.size(),
                           " names but the graph has ", count, " ", what, "s");
  std::set<std::string> seen;
  for (const std::string& name : given) {
    if (!isUsableName(name))
      throw TraceError::make(loc, "dump", what, " name '", name, "' ", kUnusableName);
    if (!seen.insert(name).second)
      throw TraceError::make(loc, "dump", what, " name '", name, "' is given twice");
  }
  return given;
}

void nameInputsAndOutputs(mlir::func::FuncOp func, const DumpOptions& options,
                          const SourceLoc& loc) {
  mlir::Builder b(func.getContext());
  std::vector<std::string> inputs =
      namesFor(options.input_names, func.getNumArguments(), "input", "x", loc);
  std::vector<std::string> outputs =
      namesFor(options.output_names, func.getNumResults(), "output", "y", loc);
  for (unsigned i = 0; i < inputs.size(); ++i)
    func.setArgAttr(i, KilnDialect::getNameAttrName(), b.getStringAttr(inputs[i]));
  for (unsigned i = 0; i < outputs.size(); ++i)
    func.setResultAttr(i, KilnDialect::getNameAttrName(), b.getStringAttr(outputs[i]));
}

// Large dense constants become dense_resource blobs, which the text form prints once, in
// hex, in its resource section, and bytecode stores aligned.
void moveConstantsToBlobs(mlir::ModuleOp module, const SourceLoc& loc) {
  std::vector<mlir::kiln::ConstantOp> large;
  module.walk([&](mlir::kiln::ConstantOp op) {
    auto dense = llvm::dyn_cast<mlir::DenseElementsAttr>(op.getValue());
    if (dense && !dense.isSplat() && dense.getNumElements() > kMaxInlineElements)
      large.push_back(op);
  });
  for (size_t k = 0; k < large.size(); ++k) {
    mlir::kiln::ConstantOp op = large[k];
    mlir::OpBuilder builder(op);
    Tensor value = bridge::tensorFromElements(op.getValue(), loc);
    mlir::Value blob =
        bridge::buildResourceConstant(builder, op.getLoc(), value, "constant_" + std::to_string(k), loc);
    op.getResult().replaceAllUsesWith(blob);
    op.erase();
  }
}

void stripLocations(mlir::ModuleOp module) {
  mlir::Location unknown = mlir::UnknownLoc::get(module.getContext());
  module->walk([&](mlir::Operation* op) {
    op->setLoc(unknown);
    for (mlir::Region& region : op->getRegions())
      for (mlir::Block& block : region)
        for (mlir::BlockArgument arg : block.getArguments()) arg.setLoc(unknown);
  });
}

void write(mlir::ModuleOp module, const std::string& path, const DumpOptions& options,
           const SourceLoc& loc) {
  support::AtomicFileWriter file(path, "dump", loc);
  {
    AtomicFileStream out(file);
    if (options.format == DumpOptions::Format::Bytecode) {
      std::string bytes;
      llvm::raw_string_ostream buffer(bytes);
      mlir::BytecodeWriterConfig config(kBytecodeProducer);
      if (mlir::failed(mlir::writeBytecodeToFile(module, buffer, config)))
        throw CompileError::make(loc, "dump", path, ": the program cannot be written as bytecode");
      buffer.flush();
      stampBytecode(bytes);
      out << bytes;
    } else {
      // A top-level module prints its resource section (the blobs, never elided here).
      mlir::OpPrintingFlags flags;
      flags.enableDebugInfo(options.locations, /*prettyForm=*/false);
      module.print(out, flags);
    }
    out.check();
  }
  file.commit();
}

}  // namespace

namespace {

constexpr std::string_view kBytecodeMagic("ML\xefR", 4);

// MLIR bytecode's header: the magic, the version as a prefix varint, the producer string
// with its NUL. The offset of the producer and of the byte after its NUL, or nullopt.
std::optional<std::pair<size_t, size_t>> producerSpan(std::string_view bytes) {
  if (!bytes.starts_with(kBytecodeMagic)) return std::nullopt;
  size_t at = kBytecodeMagic.size();
  if (at >= bytes.size()) return std::nullopt;
  const auto first = uint8_t(bytes[at]);
  // A prefix varint: the count of trailing zero bits of the first byte is the count of
  // bytes that follow it (8 for a first byte of 0).
  const size_t length = first == 0 ? 9 : size_t(std::countr_zero(first)) + 1;
  at += length;
  const size_t end = bytes.find('\0', at);
  if (at > bytes.size() || end == std::string_view::npos) return std::nullopt;
  return std::make_pair(at, end + 1);
}

std::string hexHash(std::string_view bytes) {
  char digits[17];
  std::snprintf(digits, sizeof digits, "%016llx",
                static_cast<unsigned long long>(llvm::xxh3_64bits(llvm::StringRef(bytes.data(), bytes.size()))));
  return digits;
}

constexpr std::string_view kHashPrefix = "Kiln xxh3=";

}  // namespace

void stampBytecode(std::string& bytes) {
  const auto span = producerSpan(bytes);
  if (!span || std::string_view(bytes).substr(span->first, span->second - 1 - span->first) !=
                   kBytecodeProducer)
    throw CompileError::make(SourceLoc::current(), "dump",
                             "the bytecode writer's header is not where Kiln expects it");
  const std::string hash = hexHash(std::string_view(bytes).substr(span->second));
  bytes.replace(span->first + kHashPrefix.size(), hash.size(), hash);
}

BytecodeCheck checkBytecode(std::string_view bytes, std::string& producer) {
  if (!bytes.starts_with(kBytecodeMagic)) return BytecodeCheck::NotBytecode;
  const auto span = producerSpan(bytes);
  if (!span) return BytecodeCheck::Corrupt;
  producer = std::string(bytes.substr(span->first, span->second - 1 - span->first));
  if (!producer.starts_with(kHashPrefix)) return BytecodeCheck::Unstamped;
  if (producer.size() != kBytecodeProducer.size()) return BytecodeCheck::Corrupt;
  return producer.substr(kHashPrefix.size()) == hexHash(bytes.substr(span->second))
             ? BytecodeCheck::Verified
             : BytecodeCheck::Corrupt;
}

bool isUsableName(std::string_view name) {
  return !name.empty() && name.find_first_of(std::string_view("/=\0", 3)) == std::string_view::npos;
}

void dumpModule(mlir::ModuleOp module, const std::string& path, const DumpOptions& options,
                const SourceLoc& loc) {
  std::unique_ptr<mlir::MLIRContext> context = makeContext();
  mlir::OwningOpRef<mlir::ModuleOp> copy = copyInto(*context, module, loc);
  mlir::func::FuncOp func = onlyFunction(*copy, loc);
  nameInputsAndOutputs(func, options, loc);
  moveConstantsToBlobs(*copy, loc);
  if (!options.locations) stripLocations(*copy);
  write(*copy, path, options, loc);
}

}  // namespace kiln::jit

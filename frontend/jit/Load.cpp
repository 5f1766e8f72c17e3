// jit::load: a file written by dump() read back, checked to be a graph a caller can run
// (one function, inputs and outputs only, no host callbacks), and run compiled for the CPU
// (KILN_JIT_BACKEND, static input shapes) or on the reference interpreter.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "dialect/KilnOps.h"
#include "frontend/jit/Backend.h"
#include "frontend/jit/Check.h"
#include "frontend/jit/Context.h"
#include "frontend/jit/Dump.h"
#include "bridge/OpBridge.h"
#include "kiln/jit/Trace.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "support/BinaryFile.h"

namespace kiln::jit {

using mlir::kiln::KilnDialect;

struct LoadedGraph::Impl {
  std::string path;
  SourceLoc loc;  // where the user loaded it: errors of later calls point there
  // Members are destroyed bottom-up: the module before the buffer its blobs may point
  // into, and both before their context.
  std::unique_ptr<mlir::MLIRContext> context;
  std::shared_ptr<llvm::SourceMgr> source;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::func::FuncOp func;
  std::vector<std::string> inputNames;
  std::vector<std::string> outputNames;
  std::vector<TensorMeta> inputs;
  std::shared_ptr<const runtime::Program> program;
  runtime::BackendSelection backend;
  CompileOptions options;
  bool check = false;  // KILN_CHECK: compiled calls run beside the interpreter
};

namespace {

// What a load failure reads like: "kiln::load: <path>: <what is wrong>".
class LoadCheck {
 public:
  LoadCheck(const std::string& path, const SourceLoc& loc) : path_(path), loc_(loc) {}

  template <class... Args>
  [[noreturn]] void fail(const Args&... args) const {
    throw IOError::make(loc_, "load", path_, ": ", args...);
  }

 private:
  const std::string& path_;
  const SourceLoc& loc_;
};

std::string oneLine(std::string text) {
  for (char& c : text)
    if (c == '\n') c = ' ';
  return text;
}

// The whole file, null-terminated (the text parser needs it) and aligned for the blobs
// the bytecode reader may reference in place.
std::shared_ptr<llvm::SourceMgr> readFile(const std::string& path, const SourceLoc& loc) {
  support::FileReader file(path, "load", loc);
  std::unique_ptr<llvm::WritableMemoryBuffer> buffer =
      llvm::WritableMemoryBuffer::getNewUninitMemBuffer(file.size(), path, llvm::Align(64));
  if (!buffer) LoadCheck(path, loc).fail("cannot allocate ", file.size(), " bytes to read it");
  file.read(0, buffer->getBufferStart(), file.size());
  auto source = std::make_shared<llvm::SourceMgr>();
  source->AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  return source;
}

// MLIR's bytecode reader trusts the counts a file holds (a damaged file can make it abort
// or allocate gigabytes; docs/FUZZING.md), so load reads only bytecode it can check: what
// dump() wrote, whose hash matches. Other bytecode (kiln-opt --emit-bytecode, mlir-opt) is
// read only with KILN_TRUST_BYTECODE=1; text always (its parser checks as it goes).
void checkBytecodeBeforeParsing(const LoadedGraph::Impl& g, const LoadCheck& check) {
  const llvm::MemoryBuffer* buffer = g.source->getMemoryBuffer(g.source->getMainFileID());
  std::string producer;
  switch (checkBytecode(buffer->getBuffer(), producer)) {
    case BytecodeCheck::NotBytecode:
    case BytecodeCheck::Verified: return;
    case BytecodeCheck::Corrupt:
      check.fail("damaged bytecode: its header or its hash does not match what dump() wrote "
                 "(a truncated or altered file?)");
    case BytecodeCheck::Unstamped: {
      const char* trust = std::getenv("KILN_TRUST_BYTECODE");
      if (trust && std::string_view(trust) == "1") return;
      if (producer.size() > 40) producer = producer.substr(0, 40) + "...";
      for (char& c : producer)
        if (!std::isprint(static_cast<unsigned char>(c))) c = '?';
      check.fail("bytecode from another writer (producer '", producer,
                 "') has no hash Kiln can check, and MLIR's bytecode reader trusts what a file "
                 "says; convert it to text (kiln-opt FILE -o FILE.mlir) or, for a file you "
                 "trust, set KILN_TRUST_BYTECODE=1");
    }
  }
}

// Parses (bytecode or text, told apart by the bytecode magic); the first error MLIR
// reports, with its line and column for text, becomes the IOError.
mlir::OwningOpRef<mlir::ModuleOp> parse(LoadedGraph::Impl& g, const LoadCheck& check) {
  std::string firstError;
  mlir::ScopedDiagnosticHandler handler(g.context.get(), [&](mlir::Diagnostic& diag) {
    if (diag.getSeverity() != mlir::DiagnosticSeverity::Error || !firstError.empty())
      return mlir::success();
    if (auto at = llvm::dyn_cast<mlir::FileLineColLoc>(diag.getLocation()); at && at.getLine() > 0)
      firstError =
          "line " + std::to_string(at.getLine()) + ":" + std::to_string(at.getColumn()) + ": ";
    firstError += oneLine(diag.str());
    return mlir::success();
  });
  checkBytecodeBeforeParsing(g, check);
  mlir::ParserConfig config(g.context.get());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(g.source, config);
  if (!module)
    check.fail("not a valid kiln graph: ", firstError.empty() ? "it does not parse" : firstError);
  return module;
}

// The one function of a dumped graph, with only inputs and outputs.
mlir::func::FuncOp onlyFunction(mlir::ModuleOp module, const LoadCheck& check) {
  size_t ops = 0, funcs = 0;
  for (mlir::Operation& op : module.getBody()->getOperations()) {
    ++ops;
    funcs += llvm::isa<mlir::func::FuncOp>(op);
  }
  if (ops != 1 || funcs != 1)
    check.fail("holds ", funcs, " functions and ", ops - funcs,
               " other top-level ops; a dumped graph holds one func.func");
  auto func = llvm::cast<mlir::func::FuncOp>(module.getBody()->front());
  if (func.isExternal()) check.fail("function '", func.getName().str(), "' has no body");
  std::string callback;
  func.walk([&](mlir::kiln::CallbackOp op) { callback = bridge::formatLocation(op.getLoc()); });
  if (!callback.empty())
    check.fail("calls host code (kiln.callback at ", callback,
               "), which a file cannot hold; dump a trace without exclude_from_trace");
  return func;
}

// The name in `attrs` (kiln.name), else prefix + index; checks the kind attribute
// (kiln.input / kiln.output = index) that dump() wrote.
std::string nameOf(mlir::DictionaryAttr attrs, llvm::StringRef kind, unsigned index,
                   const char* what, const char* prefix, const LoadCheck& check) {
  if (attrs)
    if (auto state = attrs.getAs<mlir::StringAttr>(KilnDialect::getStateAttrName()))
      check.fail(what, " ", index, " is state '", state.getValue().str(),
                 "' bound by reference; dump the trace with capture_as_const");
  auto number = attrs ? attrs.getAs<mlir::IntegerAttr>(kind) : mlir::IntegerAttr();
  if (!number || number.getInt() != int64_t(index))
    check.fail(what, " ", index, " is not marked ", kind.str(), " = ", index,
               " (not a graph written by jit::dump)");
  auto name = attrs.getAs<mlir::StringAttr>(KilnDialect::getNameAttrName());
  if (!name) return prefix + std::to_string(index);
  // Checked again here: kiln-run writes DIR/<name>.npy, and a file is not always dump()'s.
  if (!isUsableName(name.getValue()))
    check.fail(what, " ", index, " is named '", name.getValue().str(), "', which ", kUnusableName);
  return name.getValue().str();
}

void checkUnique(const std::vector<std::string>& names, const char* what, const LoadCheck& check) {
  std::set<std::string> seen;
  for (const std::string& name : names)
    if (!seen.insert(name).second) check.fail(what, " name '", name, "' is used twice");
}

void readSignature(LoadedGraph::Impl& g, const LoadCheck& check) {
  mlir::func::FuncOp func = g.func;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    g.inputNames.push_back(
        nameOf(func.getArgAttrDict(i), KilnDialect::getInputAttrName(), i, "argument", "x", check));
    try {
      g.inputs.push_back(bridge::metaFor(func.getArgumentTypes()[i], g.loc));
    } catch (const Error& e) {
      check.fail("input '", g.inputNames.back(), "': ", e.message());
    }
  }
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    g.outputNames.push_back(nameOf(func.getResultAttrDict(i), KilnDialect::getOutputAttrName(), i,
                                   "result", "y", check));
  checkUnique(g.inputNames, "input", check);
  checkUnique(g.outputNames, "output", check);
}

// A shape the graph accepts: equal dims, any size where the graph's dim is dynamic.
bool accepts(const Shape& graph, const Shape& given) {
  if (graph.size() != given.size()) return false;
  for (size_t d = 0; d < graph.size(); ++d)
    if (graph[d] != mlir::ShapedType::kDynamic && graph[d] != given[d]) return false;
  return true;
}

}  // namespace

LoadedGraph load(const std::string& path, const SourceLoc& loc) { return load(path, {}, loc); }

LoadedGraph load(const std::string& path, const CompileOptions& options, const SourceLoc& loc) {
  const runtime::BackendSelection backend = selectedBackend(options, "load", loc);
  auto g = std::make_shared<LoadedGraph::Impl>();
  g->path = path;
  g->loc = loc;
  g->backend = backend;
  g->options = options;
  g->check = checkEnabled({}, "load", loc);
  LoadCheck check(g->path, g->loc);
  g->context = makeContext();
  g->source = readFile(path, loc);
  g->module = parse(*g, check);
  g->func = onlyFunction(*g->module, check);
  readSignature(*g, check);
  g->program = compileFor(backend, g->func, /*callbacks=*/nullptr, "load", "graph " + path, loc,
                          options, Device{});
  return LoadedGraph(std::move(g));
}

LoadedGraph::LoadedGraph(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

std::vector<Tensor> LoadedGraph::operator()(const std::vector<Tensor>& inputs) const {
  const Impl& g = *impl_;
  if (inputs.size() != g.inputs.size()) {
    std::string names;
    for (const std::string& name : g.inputNames) names += (names.empty() ? "" : ", ") + name;
    throw Error::make(g.loc, "LoadedGraph", g.path, ": the graph takes ", g.inputs.size(),
                      " inputs (", names, ") but was given ", inputs.size());
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& x = inputs[i];
    const TensorMeta& want = g.inputs[i];
    if (!x.defined())
      throw Error::make(g.loc, "LoadedGraph", g.path, ": input '", g.inputNames[i],
                        "' is undefined");
    if (!accepts(want.shape, x.sizes()))
      throw ShapeError::make(g.loc, "LoadedGraph", g.path, ": input '", g.inputNames[i],
                             "' has shape ", x.sizes(), " but the graph takes ", want.shape);
    if (x.dtype() != want.dtype)
      throw TypeError::make(g.loc, "LoadedGraph", g.path, ": input '", g.inputNames[i], "' is ",
                            x.dtype(), " but the graph takes ", want.dtype);
  }
  if (g.check && g.program->compiled()) {
    const CheckedProgram program{
        g.func, nullptr, "graph " + g.path, {}, [&g](mlir::func::FuncOp probe) {
          return compileFor(g.backend, probe, nullptr, "check",
                            "the check probe of graph " + g.path, g.loc, g.options);
        }};
    return runChecked(program, inputs,
                      [&g](std::span<const Tensor> args) { return g.program->run(args, g.loc); },
                      g.loc);
  }
  return g.program->run(inputs, g.loc);
}

const std::vector<std::string>& LoadedGraph::input_names() const { return impl_->inputNames; }

const std::vector<std::string>& LoadedGraph::output_names() const { return impl_->outputNames; }

std::string LoadedGraph::str() const {
  std::string text;
  llvm::raw_string_ostream out(text);
  impl_->module->print(out);
  return text;
}

}  // namespace kiln::jit

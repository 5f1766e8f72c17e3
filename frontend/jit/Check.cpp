#include "frontend/jit/Check.h"

#include <cmath>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <utility>

#include "bridge/OpBridge.h"
#include "dialect/KilnOps.h"
#include "kiln/core/Autograd.h"
#include "kiln/core/Collective.h"
#include "kiln/core/Dispatcher.h"
#include "kiln/core/Ops.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "passes/SpecializeShapes.h"
#include "runtime/Backend.h"
#include "runtime/DynamicProgram.h"
#include "runtime/interp/Interpreter.h"

namespace kiln::jit {

bool checkEnabled(const CheckOptions& options, std::string_view op, const SourceLoc& loc) {
  if (options.enabled) return true;
  const char* env = std::getenv("KILN_CHECK");
  std::string_view value = env ? env : "";
  if (value.empty() || value == "0") return false;
  if (value == "1") return true;
  throw Error::make(loc, op, "KILN_CHECK must be 0 or 1, got '", value, "'");
}

Tolerance toleranceFor(DType dtype, const CheckOptions& options) {
  Tolerance t;
  switch (dtype) {
    case DType::Float32: t = {1e-4, 1e-5}; break;
    case DType::Float64: t = {1e-9, 1e-12}; break;
    case DType::Float16:
    case DType::BFloat16: t = {1e-2, 1e-3}; break;
    case DType::Int32:
    case DType::Int64:
    case DType::Bool: return {0, 0};  // exact, whatever the options say
  }
  if (options.rtol >= 0) t.rtol = options.rtol;
  if (options.atol >= 0) t.atol = options.atol;
  return t;
}

namespace {

// Fresh copies that share no storage with `tensors` (undefined stays undefined).
std::vector<Tensor> copies(std::span<const Tensor> tensors, const SourceLoc& loc) {
  std::vector<Tensor> out;
  for (const Tensor& t : tensors) out.push_back(t.defined() ? t.clone(loc) : Tensor());
  return out;
}

std::vector<double> valuesOf(const Tensor& t) {
  Tensor wide = t.to(kFloat64).contiguous();
  const double* data = static_cast<const double*>(wide.rawData());
  return std::vector<double>(data, data + wide.numel());
}

std::string indexOf(int64_t flat, const Shape& shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  std::ostringstream out;
  out << "[";
  for (size_t d = 0; d < index.size(); ++d) out << (d ? ", " : "") << index[d];
  out << "]";
  return out.str();
}

std::string number(double value) {
  std::ostringstream out;
  out.precision(9);
  out << value;
  return out.str();
}

// How a compiled result differs from the interpreter's: the first element beyond
// tolerance, both values, and how many elements differ.
struct Difference {
  std::string text;
};

// `precision`: the loosest floating dtype in the value's history (see precisions()); none
// for a value computed from integers only, which must agree exactly.
std::optional<Difference> compare(const Tensor& compiled, const Tensor& interpreted,
                                  std::optional<DType> precision, const CheckOptions& options) {
  if (!compiled.defined() || !interpreted.defined()) {
    if (compiled.defined() == interpreted.defined()) return std::nullopt;
    return Difference{std::string(compiled.defined() ? "the interpreter" : "the compiled run") +
                      " returned no tensor"};
  }
  if (compiled.sizes() != interpreted.sizes() || compiled.dtype() != interpreted.dtype()) {
    std::ostringstream out;
    out << "the compiled run returned " << compiled.dtype() << " " << compiled.sizes()
        << ", the interpreter " << interpreted.dtype() << " " << interpreted.sizes();
    return Difference{out.str()};
  }
  const Tolerance tol = precision ? toleranceFor(*precision, options) : Tolerance{};
  const std::vector<double> got = valuesOf(compiled), want = valuesOf(interpreted);
  double scale = 1;
  for (double w : want)
    if (std::isfinite(w)) scale = std::max(scale, std::abs(w));
  int64_t first = -1, count = 0;
  double largest = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    if (std::isnan(g) && std::isnan(w)) continue;
    if (g == w) continue;  // also equal infinities
    const double diff = std::abs(g - w);  // NaN or inf where only one side is
    if (!std::isnan(diff) && std::isfinite(diff) && diff <= tol.atol * scale + tol.rtol * std::abs(w))
      continue;
    if (first < 0) first = int64_t(i);
    ++count;
    if (std::isnan(diff) || diff > largest) largest = std::isnan(diff) ? NAN : diff;
  }
  if (first < 0) return std::nullopt;
  std::ostringstream out;
  out << "at " << indexOf(first, interpreted.sizes()) << " of " << interpreted.dtype() << " "
      << interpreted.sizes() << ": compiled " << number(got[size_t(first)]) << ", interpreter "
      << number(want[size_t(first)]) << " (" << count << " of " << got.size()
      << " elements differ, by up to " << number(largest) << "; tolerance rtol " << tol.rtol
      << ", atol " << tol.atol << ")";
  return Difference{out.str()};
}

// How loose a floating dtype's rounding is: float64 < float32 < float16 < bfloat16; -1 for
// integers and bool.
int looseness(mlir::Type type) {
  auto tensor = llvm::dyn_cast<mlir::ShapedType>(type);
  auto element = llvm::dyn_cast<mlir::FloatType>(tensor ? tensor.getElementType() : type);
  if (!element) return -1;
  if (element.getWidth() >= 64) return 0;
  if (element.getWidth() == 32) return 1;
  return element.isBF16() ? 3 : 2;
}

constexpr DType kByLooseness[] = {DType::Float64, DType::Float32, DType::Float16, DType::BFloat16};

// Per value of `func`'s body, the loosest floating dtype among it and everything it is
// computed from: a float64 value converted from float32 carries float32's rounding, so it
// is held to float32's tolerance (found by kiln-fuzz seed 109737: a float32 batch_norm
// converted to float64).
llvm::DenseMap<mlir::Value, int> precisions(mlir::func::FuncOp func) {
  llvm::DenseMap<mlir::Value, int> loosest;
  mlir::Block& body = func.getBody().front();
  for (mlir::BlockArgument arg : body.getArguments()) loosest[arg] = looseness(arg.getType());
  for (mlir::Operation& op : body.without_terminator()) {
    int from = -1;
    for (mlir::Value operand : op.getOperands()) from = std::max(from, loosest.lookup(operand));
    for (mlir::Value result : op.getResults())
      loosest[result] = std::max(from, looseness(result.getType()));
  }
  return loosest;
}

std::optional<DType> precisionOf(const llvm::DenseMap<mlir::Value, int>& loosest, mlir::Value v) {
  const int rank = loosest.lookup(v);
  if (rank < 0) return std::nullopt;
  return kByLooseness[rank];
}

// The recorded module with every op's tensor results also returned by `main`, in program
// order after the original results.
struct Probe {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::func::FuncOp func;
  size_t numOriginal = 0;
  std::vector<std::pair<mlir::Operation*, unsigned>> extras;  // op, result number
};

Probe makeProbe(mlir::func::FuncOp main) {
  Probe probe;
  auto parent = main->getParentOfType<mlir::ModuleOp>();
  probe.module = mlir::OwningOpRef<mlir::ModuleOp>(parent.clone());
  probe.func = probe.module->lookupSymbol<mlir::func::FuncOp>(main.getSymName());
  mlir::Block& body = probe.func.getBody().front();
  mlir::Operation* ret = body.getTerminator();
  std::vector<mlir::Value> results(ret->getOperands().begin(), ret->getOperands().end());
  probe.numOriginal = results.size();
  for (mlir::Operation& op : body.without_terminator()) {
    if (op.hasTrait<mlir::OpTrait::ConstantLike>()) continue;  // nothing computed
    // The other ranks write a started all-reduce's buffer until its wait: not a value.
    if (mlir::isa<mlir::kiln::AllReduceStartOp>(op)) continue;
    for (mlir::OpResult result : op.getResults()) {
      if (!llvm::isa<mlir::RankedTensorType>(result.getType())) continue;
      results.push_back(result);
      probe.extras.emplace_back(&op, result.getResultNumber());
    }
  }
  ret->setOperands(results);
  std::vector<mlir::Type> types;
  for (mlir::Value v : results) types.push_back(v.getType());
  mlir::MLIRContext* ctx = probe.func.getContext();
  probe.func.setType(mlir::FunctionType::get(ctx, probe.func.getArgumentTypes(), types));
  if (mlir::ArrayAttr attrs = probe.func.getResAttrsAttr()) {
    std::vector<mlir::Attribute> padded(attrs.begin(), attrs.end());
    padded.resize(results.size(), mlir::DictionaryAttr::get(ctx, {}));
    probe.func.setResAttrsAttr(mlir::ArrayAttr::get(ctx, padded));
  }
  return probe;
}

// Whether `main` communicates with the other ranks of an MPI job (kiln.all_reduce, started
// or not): then every rank must run the same programs, probes included.
bool hasCollectives(mlir::func::FuncOp main) {
  return main
      .walk([](mlir::Operation* op) {
        return mlir::isa<mlir::kiln::AllReduceOp, mlir::kiln::AllReduceStartOp>(op)
                   ? mlir::WalkResult::interrupt()
                   : mlir::WalkResult::advance();
      })
      .wasInterrupted();
}

// Whether any rank's `mine` is true (an all-reduce over the job).
bool anyRank(bool mine, const SourceLoc& loc) {
  return all_reduce_op(full({1}, mine ? 1.0 : 0.0, TensorOptions(kInt32), loc), "max", loc)
             .item<int32_t>() != 0;
}

std::string describe(mlir::Operation* op, unsigned result) {
  std::string text = "'" + op->getName().getStringRef().str() + "'";
  if (op->getNumResults() > 1) text += " (result " + std::to_string(result) + ")";
  return text + " at " + bridge::formatLocation(op->getLoc());
}

}  // namespace

std::vector<Tensor> runChecked(
    const CheckedProgram& checked, std::span<const Tensor> arguments,
    const std::function<std::vector<Tensor>(std::span<const Tensor>)>& runCompiled,
    const SourceLoc& loc) {
  // A program with ? dims is checked as the static program it is for these arguments.
  CheckedProgram program = checked;
  mlir::OwningOpRef<mlir::ModuleOp> specialized;
  if (mlir::kiln::hasDynamicShapes(checked.main)) {
    std::vector<Shape> shapes;
    for (const Tensor& argument : arguments) shapes.push_back(argument.sizes());
    specialized = runtime::specializedCopy(checked.main, shapes, "check", checked.what, loc);
    program.main = *specialized->getOps<mlir::func::FuncOp>().begin();
  }
  NoGradGuard noGrad;
  DispatchHookGuard noHook(nullptr);
  // The arguments as they were: the compiled run may update state in place.
  const std::vector<Tensor> pristine = copies(arguments, loc);
  const std::vector<Tensor> interpreted =
      interp::interpretVerified(program.main, copies(pristine, loc), program.callbacks, loc);
  std::vector<Tensor> compiled = runCompiled(arguments);

  mlir::func::FuncOp main = program.main;
  mlir::Operation* ret = main.getBody().front().getTerminator();
  const llvm::DenseMap<mlir::Value, int> loosest = precisions(main);
  size_t bad = 0;
  std::optional<Difference> difference;
  for (; bad < compiled.size() && bad < interpreted.size() && bad < ret->getNumOperands(); ++bad)
    if ((difference = compare(compiled[bad], interpreted[bad],
                              precisionOf(loosest, ret->getOperand(unsigned(bad))), program.options)))
      break;
  // In an MPI job, a rank that localizes runs the probe's collectives: all ranks do, when
  // any found a difference, or the others would wait for them until the timeout.
  const bool collectives = hasCollectives(program.main);
  const bool localize = collectives ? anyRank(difference.has_value(), loc) : difference.has_value();
  if (!localize || (!difference && !collectives)) {
    if (compiled.size() == interpreted.size()) return compiled;
    throw CheckError::make(loc, "check", program.what, ": the compiled run returned ",
                           compiled.size(), " results, the interpreter ", interpreted.size());
  }

  // Localize: every intermediate, compiled and interpreted from the same arguments.
  Probe probe = makeProbe(program.main);
  std::shared_ptr<const runtime::Program> executable;
  try {
    executable = program.compileProbe(probe.func);
  } catch (const Error&) {
    executable = nullptr;  // reported below as not localized
  }
  if (executable && !executable->compiled()) executable = nullptr;  // the default's fallback
  if (executable) {
    const std::vector<Tensor> want =
        interp::interpretVerified(probe.func, copies(pristine, loc), program.callbacks, loc);
    const std::vector<Tensor> got = executable->run(copies(pristine, loc), loc);
    if (!difference) return compiled;  // another rank's difference: its probe ran here too
    const llvm::DenseMap<mlir::Value, int> probeLoosest = precisions(probe.func);
    for (size_t k = 0; k < probe.extras.size(); ++k) {
      const size_t at = probe.numOriginal + k;
      auto [op, result] = probe.extras[k];
      if (std::optional<Difference> d =
              compare(got.at(at), want.at(at), precisionOf(probeLoosest, op->getResult(result)),
                      program.options)) {
        throw CheckError::make(loc, "check", program.what, ": ", describe(op, result),
                               " computes another value compiled than in the reference "
                               "interpreter, ", d->text,
                               "; every earlier op agrees, so its operands do");
      }
    }
  }
  if (!difference) return compiled;  // another rank's difference (not localized there either)
  // Not localized: name the result and the op that produced it.
  mlir::Value value = ret->getOperand(unsigned(bad));
  std::string producer = "is argument " +
      (llvm::isa<mlir::BlockArgument>(value)
           ? std::to_string(llvm::cast<mlir::BlockArgument>(value).getArgNumber())
           : std::string("?"));
  if (mlir::Operation* op = value.getDefiningOp())
    producer = "comes from " + describe(op, llvm::cast<mlir::OpResult>(value).getResultNumber());
  throw CheckError::make(
      loc, "check", program.what, ": result ", bad, " (which ", producer,
      ") differs from the reference interpreter's, ", difference->text, "; ",
      executable ? "with every intermediate kept as a result, the compiled program agrees with "
                   "the interpreter, so the difference comes from how the compiler combined "
                   "ops (try CompileOptions::fuse = false)"
                 : "the program with every intermediate kept as a result did not compile, so "
                   "the op is not localized");
}

}  // namespace kiln::jit

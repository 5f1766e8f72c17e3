// The reference interpreter (see Interpreter.h): walks a function's block, dispatching each
// kiln op's table entry eagerly and keeping every value until its last use.
#include "runtime/interp/Interpreter.h"

#include <string>

#include "bridge/OpBridge.h"
#include "dialect/KilnOps.h"
#include "kiln/core/Autograd.h"
#include "kiln/core/Dispatcher.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln::interp {

using runtime::CallbackTable;
using runtime::HostCallback;

namespace {

constexpr std::string_view kOpName = "interpret";

template <class T>
std::string printed(const T& thing) {
  std::string text;
  llvm::raw_string_ostream os(text);
  thing.print(os);
  return text;
}

// "'kiln.add' at model.mlir:3:5: "
std::string where(mlir::Operation* op) {
  return "'" + op->getName().getStringRef().str() + "' at " + bridge::formatLocation(op->getLoc()) + ": ";
}

// Whether `value` has the shape and dtype `type` describes (`?` dims match any size).
bool hasType(const Tensor& value, mlir::Type type) {
  auto ranked = llvm::dyn_cast<mlir::RankedTensorType>(type);
  if (!ranked || ranked.getRank() != value.dim()) return false;
  try {
    if (bridge::dtypeFor(ranked.getElementType()) != value.dtype()) return false;
  } catch (const TypeError&) {
    return false;
  }
  for (int64_t d = 0; d < ranked.getRank(); ++d)
    if (!ranked.isDynamicDim(d) && ranked.getDimSize(d) != value.sizes()[d]) return false;
  return true;
}

std::string describe(const Tensor& value) { return detail::concat(value.dtype(), " ", value.sizes()); }

// The first error the verifier reports, as "file:line:col: message".
std::string verifierMessage(mlir::func::FuncOp main) {
  std::string first;
  mlir::ScopedDiagnosticHandler handler(main.getContext(), [&](mlir::Diagnostic& d) {
    if (first.empty() && d.getSeverity() == mlir::DiagnosticSeverity::Error)
      first = bridge::formatLocation(d.getLocation()) + ": " + d.str();
    return mlir::success();
  });
  if (mlir::succeeded(mlir::verify(main))) return "";
  return first.empty() ? "the verifier failed" : first;
}

class Interpreter {
 public:
  Interpreter(const CallbackTable* callbacks, Device device, const SourceLoc& loc)
      : callbacks_(callbacks), device_(device), loc_(loc) {}

  // Runs `block` with its arguments bound to `arguments`; returns its terminator's operands.
  std::vector<Tensor> runBlock(mlir::Block& block, std::span<const Tensor> arguments) {
    for (auto [argument, value] : llvm::zip_equal(block.getArguments(), arguments)) values_[argument] = value;
    noteLastUses(block);
    for (mlir::Operation& op : block) {
      if (op.hasTrait<mlir::OpTrait::IsTerminator>()) return operandsOf(&op);
      std::vector<Tensor> results = run(&op);
      checkResults(&op, results);
      for (auto [result, value] : llvm::zip_equal(op.getResults(), results))
        if (!result.use_empty()) values_[result] = std::move(value);
      release(&op);
    }
    fail(block.getParentOp(), "its body has no terminator");
  }

 private:
  std::vector<Tensor> run(mlir::Operation* op) {
    if (auto constant = llvm::dyn_cast<mlir::kiln::ConstantOp>(op)) {
      try {
        Tensor value = bridge::tensorFromElements(constant.getValue(), loc_);
        return {device_.isCPU() ? value : value.to(device_, loc_)};
      } catch (const Error& e) {
        fail(op, e.message());
      }
    }
    if (auto fusion = llvm::dyn_cast<mlir::kiln::FusionOp>(op)) {
      std::vector<Tensor> inputs = operandsOf(op);
      return runBlock(fusion.getBody().front(), inputs);
    }
    if (auto callback = llvm::dyn_cast<mlir::kiln::CallbackOp>(op)) return runCallback(callback);
    return runTableCall(op);
  }

  std::vector<Tensor> runTableCall(mlir::Operation* op) {
    bridge::TableCall call;
    try {
      call = bridge::tableCallFor(op, loc_);
    } catch (const Error& e) {
      throw Error(kOpName, e.message(), loc_);  // already names the op and its location
    }
    try {
      return dispatch(*call.op, operandsOf(op), call.attrs, loc_);
    } catch (const ShapeError& e) {
      throw ShapeError(kOpName, where(op) + e.op() + ": " + e.message(), loc_);
    } catch (const TypeError& e) {
      throw TypeError(kOpName, where(op) + e.op() + ": " + e.message(), loc_);
    } catch (const TraceError& e) {
      throw TraceError(kOpName, where(op) + e.op() + ": " + e.message(), loc_);
    } catch (const Error& e) {
      throw Error(kOpName, where(op) + e.op() + ": " + e.message(), loc_);
    }
  }

  std::vector<Tensor> runCallback(mlir::kiln::CallbackOp op) {
    const auto callee = static_cast<int64_t>(op.getCallee());
    const HostCallback* callback = callbacks_ ? callbacks_->find(callee) : nullptr;
    if (!callback)
      fail(op, detail::concat("callee ", callee, " is not in the callback table (",
                              callbacks_ ? callbacks_->size() : 0, " entries)"));
    std::vector<Tensor> inputs = operandsOf(op);
    std::vector<Tensor> results = (*callback)(inputs);
    if (results.size() != op->getNumResults())
      fail(op, detail::concat("callee ", callee, " returned ", results.size(), " tensors but the op has ",
                              op->getNumResults(), " results"));
    return results;
  }

  // Every result must have its declared type: a callback returning something else, or an
  // eager rule that disagrees with the dialect's, would silently change later ops.
  void checkResults(mlir::Operation* op, const std::vector<Tensor>& results) {
    if (results.size() != op->getNumResults())
      fail(op, detail::concat("computed ", results.size(), " results but the op has ", op->getNumResults()));
    for (auto [i, value] : llvm::enumerate(results)) {
      mlir::Type type = op->getResult(unsigned(i)).getType();
      if (!value.defined() || !hasType(value, type))
        fail(op, detail::concat("result ", i, " is ", value.defined() ? describe(value) : "undefined",
                                " but the op's type is ", printed(type)));
    }
  }

  std::vector<Tensor> operandsOf(mlir::Operation* op) {
    std::vector<Tensor> inputs;
    inputs.reserve(op->getNumOperands());
    for (mlir::Value operand : op->getOperands()) {
      auto found = values_.find(operand);
      if (found == values_.end()) fail(op, "an operand has no value (defined outside the function?)");
      inputs.push_back(found->second);
    }
    return inputs;
  }

  // Frees each value after the op that uses it last, so peak memory follows liveness.
  void noteLastUses(mlir::Block& block) {
    for (mlir::Operation& op : block)
      for (mlir::Value operand : op.getOperands()) lastUser_[operand] = &op;
  }

  void release(mlir::Operation* op) {
    for (mlir::Value operand : op->getOperands()) {
      auto last = lastUser_.find(operand);
      if (last != lastUser_.end() && last->second == op) values_.erase(operand);
    }
  }

  [[noreturn]] void fail(mlir::Operation* op, const std::string& what) {
    throw Error(kOpName, where(op) + what, loc_);
  }

  const CallbackTable* callbacks_;
  Device device_;
  const SourceLoc& loc_;
  llvm::DenseMap<mlir::Value, Tensor> values_;
  llvm::DenseMap<mlir::Value, mlir::Operation*> lastUser_;
};

std::string where(mlir::func::FuncOp main) {
  return "'func.func @" + main.getSymName().str() + "' at " + bridge::formatLocation(main.getLoc()) +
         ": ";
}

void checkArguments(mlir::func::FuncOp main, std::span<const Tensor> arguments, const SourceLoc& loc) {
  const std::string at = where(main);
  if (main.isExternal()) throw Error(kOpName, at + "has no body", loc);
  if (!main.getBody().hasOneBlock())
    throw Error(kOpName, at + detail::concat("has ", main.getBody().getBlocks().size(),
                                             " blocks; only single-block functions run"), loc);
  mlir::FunctionType type = main.getFunctionType();
  if (arguments.size() != type.getNumInputs())
    throw Error(kOpName, at + detail::concat("takes ", type.getNumInputs(), " arguments but was given ",
                                             arguments.size()), loc);
  for (auto [i, value] : llvm::enumerate(arguments)) {
    if (!value.defined())
      throw Error(kOpName, at + detail::concat("argument ", i, " is an undefined tensor"), loc);
    if (value.is_placeholder())
      throw TraceError(kOpName, at + detail::concat("argument ", i, " is a symbolic trace placeholder"), loc);
    if (!hasType(value, type.getInput(unsigned(i))))
      throw Error(kOpName, at + detail::concat("argument ", i, " is ", describe(value), " but the function takes ",
                                               printed(type.getInput(unsigned(i)))), loc);
  }
}

}  // namespace

std::vector<Tensor> interpret(mlir::func::FuncOp main, std::span<const Tensor> arguments,
                              const CallbackTable* callbacks, const SourceLoc& loc) {
  if (!main.isExternal())
    if (std::string problem = verifierMessage(main); !problem.empty())
      throw Error(kOpName, where(main) + "does not verify: " + problem, loc);
  return interpretVerified(main, arguments, callbacks, loc);
}

std::vector<Tensor> interpretVerified(mlir::func::FuncOp main, std::span<const Tensor> arguments,
                                      const CallbackTable* callbacks, const SourceLoc& loc) {
  checkArguments(main, arguments, loc);
  NoGradGuard noGrad;
  DispatchHookGuard noHook(nullptr);
  // A program on a CUDA device computes there: its constants are copied to the device of
  // its arguments, and what ops create from nothing (iota, rng) is created there too. State
  // kept on the CPU (an optimizer's lr, the generator's key) is copied there for the call,
  // as ScheduledProgram does; the caller writes updates back into the state.
  Device device = kCPU;
  for (const Tensor& argument : arguments)
    if (argument.defined() && !argument.device().isCPU()) {
      device = argument.device();
      break;
    }
  std::vector<Tensor> onDeviceArguments(arguments.begin(), arguments.end());
  if (!device.isCPU())
    for (Tensor& argument : onDeviceArguments)
      if (argument.defined() && argument.device().isCPU()) argument = argument.to(device, loc);
  detail::FactoryDeviceGuard onDevice(device);
  return Interpreter(callbacks, device, loc).runBlock(main.getBody().front(), onDeviceArguments);
}

}  // namespace kiln::interp

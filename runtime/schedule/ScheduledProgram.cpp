// ScheduledProgram (see ScheduledProgram.h): the schedule read from the planned host
// function by kiln-lower-host's rules, and run on buffers of one device.
#include "runtime/schedule/ScheduledProgram.h"

#include "dialect/KilnOps.h"
#include "kiln/core/Autograd.h"
#include "kiln/core/Dispatcher.h"
#include "llvm/ADT/DenseMap.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "passes/Passes.h"
#include "runtime/interp/Interpreter.h"

namespace kiln::runtime {

using mlir::kiln::HostStep;
using mlir::kiln::KilnDialect;
using mlir::kiln::ResultPlacement;

ScheduledProgram::~ScheduledProgram() = default;

std::shared_ptr<const ScheduledProgram> ScheduledProgram::create(
    mlir::OwningOpRef<mlir::ModuleOp> planned, const std::string& name, Kernels kernels,
    const CallbackTable* callbacks, Device device, std::string backend, std::string_view op,
    const SourceLoc& loc) {
  std::shared_ptr<ScheduledProgram> program(new ScheduledProgram());
  program->name_ = name;
  program->backend_ = std::move(backend);
  program->device_ = device;
  program->callbacks_ = callbacks;
  program->kernels_ = std::move(kernels);
  program->plan(*planned, op, loc);
  program->module_ = std::move(planned);
  return program;
}

void ScheduledProgram::plan(mlir::ModuleOp planned, std::string_view op, const SourceLoc& loc) {
  PlannedHost read = readPlannedHost(planned, name_, op, loc);
  mlir::func::FuncOp host = read.host;
  arenaBytes_ = read.arenaBytes;
  arguments_ = std::move(read.arguments);
  results_ = std::move(read.results);
  inPlaceArgument_ = std::move(read.inPlaceArgument);
  const llvm::SmallVector<mlir::kiln::HostResult> placements = mlir::kiln::hostResults(host);

  mlir::Block& body = host.getBody().front();
  llvm::DenseMap<mlir::Value, Address> at;
  llvm::DenseMap<mlir::Value, size_t> slot;  // the result each value is written to directly
  for (mlir::BlockArgument argument : body.getArguments())
    at[argument] = {Address::Argument, int64_t(argument.getArgNumber())};
  for (auto [k, value] : llvm::enumerate(body.getTerminator()->getOperands()))
    if (placements[k].placement != ResultPlacement::Copied) slot[mlir::kiln::bufferOwner(value)] = k;

  auto placeResult = [&](mlir::Operation* step, mlir::OpResult value) -> Address {
    auto offsets = step->getAttrOfType<mlir::DenseI64ArrayAttr>(KilnDialect::getOffsetsAttrName());
    if (!offsets || offsets.size() != int64_t(step->getNumResults()))
      throw CompileError::make(loc, op, where(step), " has no memory plan");
    const int64_t offset = offsets[value.getResultNumber()];
    if (offset >= 0) return {Address::Arena, offset};
    auto found = slot.find(value);
    if (found == slot.end())
      throw CompileError::make(loc, op, where(step), ": result ", value.getResultNumber(),
                               " is planned off the arena (", offset,
                               ") but is no result the function can write");
    const mlir::kiln::HostResult& placement = placements[found->second];
    if (placement.placement == ResultPlacement::InPlace)
      return {Address::Argument, placement.stateArgument};
    return {Address::Result, int64_t(found->second)};
  };

  for (mlir::Operation& operation : body) {
    mlir::Operation* step = &operation;
    switch (mlir::kiln::hostStepOf(step)) {
      case HostStep::Constant: {
        Tensor value =
            bridge::tensorFromElements(llvm::cast<mlir::kiln::ConstantOp>(step).getValue(), loc);
        at[step->getResult(0)] = {Address::Constant, int64_t(constants_.size())};
        constants_.push_back(device_.isCPU() ? value : value.to(device_, loc));
        break;
      }
      case HostStep::Alias:
        at[step->getResult(0)] = at.lookup(step->getOperand(0));
        break;
      case HostStep::Kernel:
      case HostStep::Runtime: {
        Step next;
        for (mlir::Value operand : step->getOperands()) next.operands.push_back(at.lookup(operand));
        for (mlir::OpResult result : step->getResults()) {
          at[result] = placeResult(step, result);
          next.results.push_back(at[result]);
        }
        if (mlir::kiln::hostStepOf(step) == HostStep::Kernel) {
          auto callee = llvm::cast<mlir::func::CallOp>(step).getCallee().str();
          auto kernel = kernels_.find(callee);
          if (kernel == kernels_.end() || !kernel->second)
            throw CompileError::make(loc, op, "@", name_, " calls fused kernel @", callee,
                                     ", which no generator compiled");
          next.kind = Step::Kernel;
          next.kernel = kernel->second.get();
        } else {
          next.kind = Step::Host;
          next.hostOp = hostOps_.size();
          hostOps_.push_back(hostOpFor(step, loc, {}));
        }
        steps_.push_back(std::move(next));
        break;
      }
      case HostStep::Return:
        for (auto [k, value] : llvm::enumerate(step->getOperands())) {
          if (placements[k].placement != ResultPlacement::Copied) continue;
          Step copy;
          copy.kind = Step::Copy;
          copy.operands.push_back(at.lookup(value));
          copy.results.push_back({Address::Result, int64_t(k)});
          copy.meta = bridge::metaFor(value.getType());
          steps_.push_back(std::move(copy));
        }
        break;
    }
  }
}

Tensor ScheduledProgram::takeArena(const SourceLoc& loc) const {
  if (device_.isCPU()) {
    std::lock_guard lock(arenaMutex_);
    if (!idleArenas_.empty()) {
      Tensor arena = std::move(idleArenas_.back());
      idleArenas_.pop_back();
      return arena;
    }
  }
  // From the device's allocator; int64 elements keep it 8-byte aligned, and the allocators
  // align it further. (A device's caching allocator makes this a lookup.)
  return detail::emptyTensor({std::max<int64_t>(1, (arenaBytes_ + 7) / 8)}, kInt64, device_,
                             /*placeholder=*/false, loc);
}

void ScheduledProgram::giveBack(Tensor arena) const {
  if (!device_.isCPU()) return;
  std::lock_guard lock(arenaMutex_);
  idleArenas_.push_back(std::move(arena));
}

ScheduledProgram::Census ScheduledProgram::census() const {
  Census census;
  for (const Step& step : steps_)
    ++(step.kind == Step::Kernel ? census.kernels : step.kind == Step::Host ? census.hostOps : census.copies);
  return census;
}

std::vector<Tensor> ScheduledProgram::run(std::span<const Tensor> arguments, const SourceLoc& loc,
                                          std::span<const Tensor> /*reuse*/) const {
  constexpr std::string_view kOp = "run compiled";
  if (arguments.size() != arguments_.size())
    throw Error::make(loc, kOp, "@", name_, " takes ", arguments_.size(), " arguments but was given ",
                      arguments.size());
  std::vector<Tensor> dense;  // contiguous arguments, kept alive for the call
  for (size_t i = 0; i < arguments.size(); ++i) {
    const Tensor& value = arguments[i];
    if (!hasMeta(value, arguments_[i]))
      throw Error::make(loc, kOp, "@", name_, " argument ", i, " is ",
                        value.defined() ? detail::concat(value.dtype(), " ", value.sizes()) : "undefined",
                        " but the program takes ", arguments_[i].dtype, " ", arguments_[i].shape);
    if (value.device() == device_) {
      dense.push_back(value.contiguous());
    } else if (value.device().isCPU()) {
      // State kept on the CPU (an optimizer's lr, the generator's key) joins a device
      // program as a CPU scalar joins a device op in eager mode: copied in for the call;
      // an update is written into the copy, which the caller (jit::trace's writeBack)
      // copies back. The recorder lets only state be here.
      dense.push_back(value.to(device_, loc).contiguous());
    } else {
      throw Error::make(loc, kOp, "@", name_, " argument ", i, " is on ", value.device().str(),
                        " but the program was compiled for ", device_.str());
    }
  }
  std::vector<Tensor> results;
  for (size_t k = 0; k < results_.size(); ++k) {
    const int64_t state = inPlaceArgument_[k];
    if (state >= 0 && !arguments[size_t(state)].is_contiguous())
      throw Error::make(loc, kOp, "@", name_, " updates argument ", state,
                        " in place, which must be contiguous");
    // An update of CPU state is written into its device copy (the caller copies it back).
    results.push_back(state >= 0 ? (arguments[size_t(state)].device() == device_ ? arguments[size_t(state)]
                                                                               : dense[size_t(state)])
                                 : detail::emptyTensor(results_[k].shape, results_[k].dtype, device_,
                                                       /*placeholder=*/false, loc));
  }
  NoGradGuard noGrad;
  DispatchHookGuard noHook(nullptr);
  detail::FactoryDeviceGuard onDevice(device_);
  struct Lease {  // the arena goes back when the call ends, by return or by exception
    const ScheduledProgram& program;
    Tensor arena;
    ~Lease() { program.giveBack(std::move(arena)); }
  } lease{*this, takeArena(loc)};
  char* base = static_cast<char*>(lease.arena.rawData());
  auto pointer = [&](const Address& address) -> void* {
    switch (address.kind) {
      case Address::Argument: return dense[size_t(address.index)].rawData();
      case Address::Result: return results[size_t(address.index)].rawData();
      case Address::Constant: return constants_[size_t(address.index)].rawData();
      case Address::Arena: return base + address.index;
    }
    return nullptr;
  };
  std::vector<void*> operands, outputs;
  for (const Step& step : steps_) {
    operands.clear();
    outputs.clear();
    for (const Address& address : step.operands) operands.push_back(pointer(address));
    for (const Address& address : step.results) outputs.push_back(pointer(address));
    switch (step.kind) {
      case Step::Kernel:
        step.kernel->run(operands.data(), outputs.data());
        break;
      case Step::Host:
        runHostOp(hostOps_[step.hostOp], operands.data(), outputs.data(), dense, callbacks_, device_);
        break;
      case Step::Copy:
        wrapBuffer(outputs[0], step.meta, device_).copy_(wrapBuffer(operands[0], step.meta, device_));
        break;
    }
  }
  for (size_t k = 0; k < results.size(); ++k)
    if (inPlaceArgument_[k] >= 0) markWritten(results[k]);
  return results;
}

namespace {

class InterpretedKernel final : public ExternalKernel {
 public:
  InterpretedKernel(mlir::func::FuncOp kernel, Device device)
      : kernel_(kernel), device_(device), name_(kernel.getSymName().str()),
        operands_(metasOf(kernel.getArgumentTypes())), results_(metasOf(kernel.getResultTypes())) {}

  void run(void* const* operands, void* const* results) const override {
    std::vector<Tensor> inputs;
    for (size_t i = 0; i < operands_.size(); ++i) inputs.push_back(wrapBuffer(operands[i], operands_[i], device_));
    std::vector<Tensor> outputs = interp::interpretVerified(kernel_, inputs);
    // A result that views an operand (a reshape) is read before any result is written,
    // since a result may be written over an operand (a state updated in place).
    for (Tensor& output : outputs)
      for (const Tensor& input : inputs)
        if (output.impl()->storage == input.impl()->storage) output = output.clone();
    for (size_t k = 0; k < results_.size(); ++k)
      wrapBuffer(results[k], results_[k], device_).copy_(outputs[k]);
  }
  std::string describe() const override { return "@" + name_ + ": interpreted (eager kernels)"; }
  std::string lowered() const override { return ""; }

 private:
  mlir::func::FuncOp kernel_;
  Device device_;
  std::string name_;
  std::vector<TensorMeta> operands_, results_;
};

}  // namespace

std::shared_ptr<const ExternalKernel> interpretedKernel(mlir::func::FuncOp kernel, Device device) {
  return std::make_shared<InterpretedKernel>(kernel, device);
}

}  // namespace kiln::runtime

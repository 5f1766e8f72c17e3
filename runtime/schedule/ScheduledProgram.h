// ScheduledProgram: a planned host schedule run step by step from C++ (docs/ARCHITECTURE.md,
// "Traced programs on the GPU"). On a CUDA device the host side of a program cannot be
// compiled into the kernels' code: the runtime walks the schedule kiln-plan-memory left
// (the same one kiln-lower-host compiles for the CPU) and, per step, launches a fused
// kernel (an ExternalKernel given device addresses), runs a host op eagerly on tensors
// over the same memory (library kernels, callbacks), or copies a result. Buffers are the
// caller's arguments and results, constants uploaded once, and one arena per call taken
// from the device's caching allocator; everything is queued on the device's one stream.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "kiln/core/Device.h"
#include "kiln/core/Error.h"
#include "kiln/core/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "runtime/Backend.h"
#include "runtime/HostCallbacks.h"
#include "runtime/HostPlan.h"
#include "runtime/KernelCodegen.h"

namespace kiln::runtime {

class ScheduledProgram final : public Program {
 public:
  using Kernels = std::map<std::string, std::shared_ptr<const ExternalKernel>>;

  // The host function `name` of `planned` (a module kiln-plan-memory planned, which the
  // program keeps) made runnable on `device`: `kernels` must hold an ExternalKernel for
  // every fusion kernel the host calls. A schedule it cannot follow (no memory plan, a
  // kernel without an ExternalKernel) is a CompileError naming `op`.
  static std::shared_ptr<const ScheduledProgram> create(mlir::OwningOpRef<mlir::ModuleOp> planned,
                                                        const std::string& name, Kernels kernels,
                                                        const CallbackTable* callbacks, Device device,
                                                        std::string backend, std::string_view op,
                                                        const SourceLoc& loc);
  ~ScheduledProgram() override;

  // Arguments must live on the program's device, typed as the function takes them.
  // Results are fresh tensors on that device, or a state argument updated in place.
  std::vector<Tensor> run(std::span<const Tensor> arguments,
                          const SourceLoc& loc = SourceLoc::current(),
                          std::span<const Tensor> reuse = {}) const override;
  std::string_view backend() const override { return backend_; }
  bool compiled() const override { return true; }

  int64_t arenaBytes() const { return arenaBytes_; }
  // Steps per call: fused kernels, host ops, result copies.
  struct Census {
    size_t kernels = 0, hostOps = 0, copies = 0;
  };
  Census census() const;

 private:
  ScheduledProgram() = default;

  // Where a step's buffer is at run time.
  struct Address {
    enum Kind { Argument, Result, Arena, Constant } kind = Arena;
    int64_t index = 0;  // the argument, result or constant number, or the arena offset
  };
  struct Step {
    enum Kind { Kernel, Host, Copy } kind = Host;
    std::vector<Address> operands, results;
    const ExternalKernel* kernel = nullptr;  // Kernel
    size_t hostOp = 0;                       // Host: index into hostOps_
    TensorMeta meta;                         // Copy: the value copied
  };

  void plan(mlir::ModuleOp planned, std::string_view op, const SourceLoc& loc);
  // A call's arena: on the CPU one a finished call gave back where there is one (as
  // Executable keeps its arenas), else a new one from the device's allocator.
  Tensor takeArena(const SourceLoc& loc) const;
  void giveBack(Tensor arena) const;

  mlir::OwningOpRef<mlir::ModuleOp> module_;
  std::string name_, backend_;
  Device device_;
  const CallbackTable* callbacks_ = nullptr;
  Kernels kernels_;
  std::vector<TensorMeta> arguments_, results_;
  std::vector<int64_t> inPlaceArgument_;  // per result: the state argument it is, or -1
  std::vector<Tensor> constants_;         // on device_
  std::vector<HostOp> hostOps_;
  std::vector<Step> steps_;
  int64_t arenaBytes_ = 0;
  // CPU arenas of finished calls. An arena between glibc's mmap threshold and the CPU
  // block cache's 1 MiB was mapped, faulted in page by page and unmapped at every call:
  // 0.25-0.3 ms of a 0.8 ms MLP step at batch 210-242 (docs/BENCHMARKS.md, "Dynamic shapes").
  mutable std::mutex arenaMutex_;
  mutable std::vector<Tensor> idleArenas_;
};

// A fused kernel run by the reference interpreter: its ops, eagerly, on tensors over the
// buffers it is given, on `device` (the device's own eager kernels). What runs a kernel no
// GPU generator takes, so every program runs; its results are bitwise the eager ones.
std::shared_ptr<const ExternalKernel> interpretedKernel(mlir::func::FuncOp kernel, Device device);

}  // namespace kiln::runtime

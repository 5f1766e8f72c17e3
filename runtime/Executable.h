// Executable: a traced program compiled for the CPU (docs/ARCHITECTURE.md §7): host schedule and
// kernels in one JIT object, the arena plan, constants, and the host ops the runtime runs.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "kiln/core/Error.h"
#include "kiln/core/OpDef.h"
#include "kiln/core/ProfileEvents.h"
#include "kiln/core/Tensor.h"
#include "passes/Passes.h"
#include "runtime/Backend.h"
#include "runtime/HostCallbacks.h"
#include "runtime/KernelCodegen.h"
#include "runtime/cache/DiskCache.h"

namespace mlir {
class ArrayAttr;
class ModuleOp;
}  // namespace mlir
namespace mlir::func {
class FuncOp;
}  // namespace mlir::func

namespace kiln::runtime {

class JitEngine;
struct HostOp;

// The MLIR CPU backend's Program (runtime/cpu/MlirBackend.h).
class Executable final : public Program {
 public:
  // Compiles `main` (a traced kiln function; left unchanged) with kiln-cpu-pipeline for
  // this machine's CPU, or takes its code from a program with the same key compiled
  // earlier in this process and still alive, or loads it from `cache`
  // (DiskCache::global() if null). The key is the function's canonical bytecode
  // (runtime/cache/ProgramKey.h: not its name, locations or state names), the host
  // target, the pipeline and this build of Kiln; a program that reuses another's code
  // still names its own source lines in errors.
  // Callbacks are looked up in `callbacks` when the program runs, so the table must
  // outlive the Executable. Failures are CompileErrors naming `op`, the failing pass and
  // its first diagnostic, and the file the IR was dumped to. KILN_DUMP_IR=<dir> writes
  // the IR after each stage there; KILN_LOG=compile prints the stages' times.
  // `options` shape the pipeline and are part of the cache key. With `kernels` (HALIDE),
  // every fused kernel it takes is compiled by it and called through the runtime; the
  // ones it declines, and everything else, are compiled as without it.
  static std::shared_ptr<const Executable> compile(
      mlir::func::FuncOp main, const runtime::CallbackTable* callbacks, std::string_view op,
      const SourceLoc& loc, const DiskCache* cache = nullptr,
      const mlir::kiln::CpuPipelineOptions& options = {},
      const KernelCodegen* kernels = nullptr);

  ~Executable() override;

  // Runs the program on `arguments` (in order and typed as interpret() takes them) and
  // returns its results in order. A state update written in place is returned as that
  // state argument itself. Each call has its own arena, so calls from several threads
  // at once are safe. `reuse[k]`, where defined, is memory the caller gives up for result
  // k (last step's gradient, say): the result is written into it and it is returned, if it
  // is contiguous, of result k's type and shares no storage with an argument.
  std::vector<Tensor> run(std::span<const Tensor> arguments,
                          const SourceLoc& loc = SourceLoc::current(),
                          std::span<const Tensor> reuse = {}) const override;

  std::string_view backend() const override { return backend_; }
  bool compiled() const override { return true; }

  // Bytes of the arena each call uses (the memory plan's peak).
  int64_t arenaBytes() const { return arenaBytes_; }

  // Where compile() found the program's code.
  enum class Origin {
    Compiled,  // compiled by this call
    Shared,    // a live program of the same key in this process (one JIT session for both)
    DiskCache, // loaded from the disk cache
  };
  Origin origin() const { return origin_; }
  bool loadedFromCache() const { return origin_ == Origin::DiskCache; }

  // Runs host op `id` on raw buffers: what compiled code's kiln_rt_host_op calls reach.
  // `arguments` are the call's (contiguous) arguments, which operands that are arguments
  // are read through.
  void runHostOp(int64_t id, void* const* operands, void* const* results,
                 std::span<const Tensor> arguments) const;
  // Records fusion kernel call `id` (block order) as a profiler "kernel" event: what the
  // kiln_rt_kernel_end hook of a program compiled while the profiler records reaches.
  void recordKernel(int64_t id, profiler::Clock::time_point begin,
                    profiler::Clock::time_point end) const;

 private:
  Executable();

  // Takes the plan of a program with the same key (`planned`, its bytecode) for this one:
  // its locations become this program's (`traced`: sourceLocations of main), then its
  // kernels and plan are read as compile() reads its own. False if it does not parse.
  bool adopt(std::string_view planned, mlir::ArrayAttr traced, const KernelCodegen* kernels,
             const DiskCache& cache, std::string_view op, const SourceLoc& loc);
  // Reads what run() needs from the planned module: types, arena size, result
  // placements, constants and the host ops.
  void readPlan(mlir::ModuleOp planned, std::string_view op, const SourceLoc& loc);
  // Compiles the planned module's fused kernels with `kernels` (which may keep them in
  // `cache`), marking each it takes kiln.kernel = "external"; returns one line per kernel
  // it declined, with the reason.
  std::string takeKernels(mlir::ModuleOp planned, const KernelCodegen& kernels,
                          const DiskCache& cache);
  // Compiles (or loads from `cache`) the kernels a cached plan marks "external"
  // (CompileError if one is declined).
  void retakeKernels(mlir::ModuleOp planned, const KernelCodegen& kernels, const DiskCache& cache,
                     std::string_view op, const SourceLoc& loc);
  // KILN_LOG=compile: how many kernels `kernels` compiled, then one line for each.
  void logKernels(const KernelCodegen* kernels) const;
  // Links the compiled object and finds the entry point.
  void link(std::string_view object, std::string_view op, const SourceLoc& loc);
  // Finds the entry point in engine_.
  void findEntry();

  struct Arena;  // a 64-byte aligned block of arenaBytes_, reused across calls
  std::unique_ptr<Arena> takeArena() const;
  void giveBack(std::unique_ptr<Arena> arena) const;

  std::string name_;
  std::string backend_ = "MLIR";
  // Kernels compiled by a KernelCodegen, by kernel function name.
  std::map<std::string, std::shared_ptr<const ExternalKernel>> externalKernels_;
  std::vector<TensorMeta> arguments_;
  std::vector<TensorMeta> results_;
  std::vector<int64_t> inPlaceArgument_;  // per result: the state it is, or -1
  std::vector<Tensor> constants_;
  std::vector<void*> constantPointers_;
  std::vector<HostOp> hostOps_;
  // Per fusion kernel call of the host schedule, in block order: the profiler's names.
  struct KernelCall {
    std::string name;
    std::vector<TensorMeta> operands, results;
  };
  std::vector<KernelCall> kernelCalls_;
  const runtime::CallbackTable* callbacks_ = nullptr;
  int64_t arenaBytes_ = 0;
  Origin origin_ = Origin::Compiled;
  std::shared_ptr<const JitEngine> engine_;
  using Entry = void (*)(void* const*, void* const*, void*, void* const*, void*);
  Entry entry_ = nullptr;
  mutable std::mutex arenaMutex_;
  mutable std::vector<std::unique_ptr<Arena>> arenas_;
};

}  // namespace kiln::runtime

// Halide 14's runtime under Kiln's kernels, and the two ways a kernel's code gets into
// the process: Halide's own JIT (CPU kernels with KILN_CACHE_DIR=off), or an object file
// compiled ahead of time, kept in the disk cache and linked by Kiln's ORC JIT
// (runtime/JitEngine.h) beside Halide's standalone runtime for its target (the CPU's, or
// the CPU's with Halide's CUDA runtime), itself one object in the disk cache. Either way
// errors go to one handler and parallel loops run on Kiln's thread pool; CUDA kernels run
// in Kiln's context for the device, on its stream.
#pragma once

#include <Halide.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "runtime/JitEngine.h"
#include "runtime/cache/DiskCache.h"

namespace kiln::runtime::halide {

// The message of the last Halide runtime error on this thread.
std::string& lastError();

// The host as Halide 14 sees it, less AVX512_SapphireRapids, with StrictFloat: the target
// of every CPU kernel, JIT-compiled or not (HalideRuntime.cpp says why).
const Halide::Target& cpuTarget();

// Halide's CUDA target for ahead-of-time compiling (no device needed): cpuTarget()'s host
// features with CUDA at compute capability 8.0 (HalideKernels.cpp says why 8.0).
const Halide::Target& cudaTarget();

// Which standalone runtime a kernel object links against.
enum class RuntimeTarget { Cpu, Cuda };

// What identifies Halide's code generator and Kiln's translation to it in cache keys: the
// files (libHalide, the Kiln binary or library holding this code) and the target.
std::string compilerIdentity();

// A compiled pipeline's code: `entry` is its argv function (`int f(const void** buffers)`).
struct KernelCode {
  std::optional<Halide::Internal::JITModule> jit;  // Halide's JIT: the module
  std::shared_ptr<const JitEngine> runtime;        // loaded: the standalone runtime it calls
  std::unique_ptr<JitEngine> object;               // loaded: the kernel's object
  int (*entry)(const void**) = nullptr;
};

// `module` (compiled for cpuTarget()) by Halide's JIT, linked to its shared JIT runtime.
KernelCode jitCode(const Halide::Module& module, const std::string& function);

// `module` compiled for cpuTarget() without a runtime, as an object file's bytes.
std::string objectOf(const Halide::Module& module);

// `object` (from objectOf) linked by Kiln's JIT, its calls into Halide's runtime resolved to
// the standalone runtime for `target`, which is loaded from `cache` or compiled there on
// first use.
KernelCode objectCode(std::string_view object, const std::string& function, const DiskCache& cache,
                      RuntimeTarget target = RuntimeTarget::Cpu);

// The CUDA runtime's device interface (halide_cuda_device_interface()) of a kernel linked
// for RuntimeTarget::Cuda: what a halide_buffer_t holding a device address names.
const halide_device_interface_t* cudaInterface(const KernelCode& code);

// While one is alive on this thread, Halide's CUDA runtime (RuntimeTarget::Cuda) runs in
// `context` (made current for each call, as Halide does with its own) on `stream`: Kiln's
// primary context and stream for the device, so Halide's kernels are ordered with the rest
// of the device's work and read and write Kiln's device memory.
class CudaScope {
 public:
  CudaScope(void* context, void* stream);
  ~CudaScope();
  CudaScope(const CudaScope&) = delete;
  CudaScope& operator=(const CudaScope&) = delete;

 private:
  void* previousContext_;
  void* previousStream_;
};

// For tests: how many standalone runtimes Halide compiled in this process, and dropping the
// process's runtime so that the next objectCode loads it again (kernels keep theirs).
int64_t runtimesCompiled();
void forgetStandaloneRuntime();

}  // namespace kiln::runtime::halide

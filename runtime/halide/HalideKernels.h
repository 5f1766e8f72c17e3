// HALIDE's kernel generator (runtime/KernelCodegen.h): each fused kernel of kiln-fuse as one
// Halide 14 pipeline (elementwise ops as Funcs, broadcasts and transposes as index maps,
// reductions as RDoms, row reductions computed per row of their consumer), vectorized to
// the host's width, parallel over rows on Kiln's thread pool, cached in memory by kernel
// text. With the disk cache, each is compiled to an object kept there (beside Halide's
// standalone runtime) and linked by Kiln's JIT, so another process loads it without
// Halide; with KILN_CACHE_DIR=off, Halide's JIT compiles it. A kernel with an op or type it
// does not translate is declined (MLIR lowers it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/core/Device.h"
#include "runtime/KernelCodegen.h"

namespace kiln::runtime::halide {

const KernelCodegen& halideKernels();

// For tests, in this process: kernels Halide compiled, kernels loaded from the disk cache,
// and standalone runtimes Halide compiled.
struct HalideCounts {
  int64_t compiled = 0;
  int64_t loaded = 0;
  int64_t runtimesCompiled = 0;
};
HalideCounts halideCounts();
// For tests: forgets the kernels cached in memory and the process's standalone runtime, so
// the next compile goes to the disk cache as a new process would.
void forgetHalideKernels();

// HALIDE on CUDA. The same Funcs as the CPU pipeline, scheduled for the GPU
// (gpu_blocks/gpu_threads: a thread per element, a block per row where there are row
// reductions) and compiled ahead of time for Halide 14's `host-cuda-cuda_capability_80`
// target, which needs no GPU: a host object (the pipeline's loops on the host, its device
// code as PTX inside) linked by Kiln's JIT beside Halide's standalone CUDA runtime.
//
// `kernel` for CUDA device `device`, run on device buffers in Kiln's context and stream for
// it (HalideRuntime.h, CudaScope); the object is kept in `cache` where it is enabled. Null
// with `why` set where the generator declines it (as on the CPU, and bf16) or Halide fails.
// Compiling needs no device; running does.
std::shared_ptr<const ExternalKernel> cudaKernel(mlir::func::FuncOp kernel, bool inPlace, Device device,
                                                 const DiskCache& cache, std::string& why);

// Whether a program HALIDE compiles for CUDA may have a result of a kernel of several
// results written in place (CudaKernelCodegen::severalResultsInPlace): no. Such a kernel is
// declined (Halide takes buffers not to alias) and would run interpreted on the device, so
// compileForCuda's plan writes none in place and HALIDE takes them. On the CPU they stay in
// place and MLIR compiles them (halideKernels() keeps the default): measured faster there.
inline constexpr bool kCudaSeveralResultsInPlace = false;

// What the PTX of `kernel` is, for tests that assemble it without a device.
struct HalideCudaKernel {
  std::string name;                  // the pipeline's host function, kiln_halide_<kernel>
  std::string ptx;                   // every device kernel of the pipeline: one PTX module
  std::vector<std::string> entries;  // its .entry names, one per GPU loop nest
  std::string schedule;              // as KILN_LOG=compile describes a kernel
  size_t loopNests = 0;              // output Funcs (results of different shapes)
};

// `kernel` (as KernelCodegen::compile takes it) compiled to PTX; nullopt with `why` set where
// the generator declines it (as on the CPU) or Halide fails.
std::optional<HalideCudaKernel> compileForCuda(mlir::func::FuncOp kernel, bool inPlace, std::string& why);

}  // namespace kiln::runtime::halide

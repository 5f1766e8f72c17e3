// CUDA C kernels compiled at run time: NVRTC (loaded with dlopen from the toolkit) turns
// generated source into a cubin for the device's compute capability; cubins are kept in
// memory and in $KILN_CACHE_DIR/cuda (DESIGN.md §10).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "frontend/core/cuda/Driver.h"

namespace kiln::cuda {

// Why NVRTC cannot be used ("" when it can). Searched: $KILN_CUDA_HOME/lib64,
// $CUDA_HOME/lib64, /usr/local/cuda/lib64, then the loader's path.
const std::string& nvrtcUnavailableReason();

// "13.0".
std::string nvrtcVersion();

// Compiles `source` for `arch`: "compute_90" gives PTX, "sm_90" a cubin. kiln::Error with
// NVRTC's log (naming `op`) when the source does not compile.
std::string compile(const std::string& source, const std::string& arch, std::string_view op,
                    const SourceLoc& loc);

// The kernel `name` of `source`, compiled for device `index` on first use (or read from the
// disk cache) and loaded into its context.
CUfunction kernel(int index, const std::string& source, const std::string& name,
                  std::string_view op, const SourceLoc& loc);

// The same, looked up by `name` alone, which must determine the source: `source` is only
// called (and the source generated) the first time `name` is asked for on the device. The
// eager ops call this on every launch, so a hit costs a hash lookup, not a generation.
CUfunction kernel(int index, const std::string& name, const std::function<std::string()>& source,
                  std::string_view op, const SourceLoc& loc);

// The kernel `name` of a PTX module (text) or cubin `image` made elsewhere (the MLIR GPU
// pipeline's gpu.binary), loaded into device `index`'s context on first use (the driver
// compiles PTX for the device) and kept for the process.
CUfunction imageKernel(int index, const std::string& image, const std::string& name,
                       std::string_view op, const SourceLoc& loc);

// Launch geometry; the arguments are pointers to each kernel parameter, as cuLaunchKernel takes them.
struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};
void launch(int index, CUfunction function, Dim3 grid, Dim3 block, size_t sharedBytes,
            void** args, std::string_view op, const SourceLoc& loc);

}  // namespace kiln::cuda

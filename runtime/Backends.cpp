// The registry: every backend of this build, one line each. Adding a backend is its folder
// under runtime/, one line here and one dependency in runtime/BUILD.bazel (:backends).
#include <array>
#include <vector>

#include "runtime/Backend.h"
#include "runtime/cpu/MlirBackend.h"
#include "runtime/halide/HalideBackend.h"
#include "runtime/interp/InterpBackend.h"
#include "runtime/nvrtc/NvrtcBackend.h"

namespace kiln::runtime {

namespace {

std::vector<const Backend*>& registry() {
  static std::vector<const Backend*> list = {
      &interp::interpBackend(),  // INTERP: the reference interpreter
      &cpu::mlirBackend(),       // MLIR: kiln-cpu-pipeline, LLVM ORC JIT
      &halide::halideBackend(),  // HALIDE: fused kernels by Halide 14
      &nvrtc::nvrtcBackend(),    // NVRTC: fused kernels as CUDA C (cuda only)
  };
  return list;
}

}  // namespace

std::span<const Backend* const> backends() { return registry(); }

void addBackendForTesting(const Backend& backend) { registry().push_back(&backend); }

std::span<const std::string_view> unbuiltBackends() {
  return {};
}

}  // namespace kiln::runtime

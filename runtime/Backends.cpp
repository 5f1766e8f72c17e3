// The registry: every backend of this build, one line each. Adding a backend is its folder
// under runtime/, one line here and one dependency in runtime/BUILD.bazel (:backends).
#include <array>
#include <vector>

#include "runtime/Backend.h"
#include "runtime/cpu/MlirBackend.h"
#ifdef KILN_WITH_HALIDE
#include "runtime/halide/HalideBackend.h"
#endif
#include "runtime/interp/InterpBackend.h"
#include "runtime/nvrtc/NvrtcBackend.h"

namespace kiln::runtime {

namespace {

std::vector<const Backend*>& registry() {
  static std::vector<const Backend*> list = {
      &interp::interpBackend(),  // INTERP: the reference interpreter
      &cpu::mlirBackend(),       // MLIR: kiln-cpu-pipeline, LLVM ORC JIT
#ifdef KILN_WITH_HALIDE
      &halide::halideBackend(),  // HALIDE: fused kernels by Halide 14
#endif
      &nvrtc::nvrtcBackend(),    // NVRTC: fused kernels as CUDA C (cuda only)
  };
  return list;
}

}  // namespace

std::span<const Backend* const> backends() { return registry(); }

void addBackendForTesting(const Backend& backend) { registry().push_back(&backend); }

std::span<const std::string_view> unbuiltBackends() {
#ifdef KILN_WITH_HALIDE
  return {};
#else
  static const std::array<std::string_view, 1> names = {"HALIDE"};  // --define kiln_halide=off
  return names;
#endif
}

}  // namespace kiln::runtime

// The registry: every backend of this build, one line each. Adding a backend is its folder
// under runtime/, one line here and one dependency in runtime/BUILD.bazel (:backends).
#include <array>

#include "runtime/Backend.h"
#include "runtime/cpu/MlirBackend.h"
#include "runtime/halide/HalideBackend.h"
#include "runtime/interp/InterpBackend.h"

namespace kiln::runtime {

std::span<const Backend* const> backends() {
  static const std::array<const Backend*, 3> list = {
      &interp::interpBackend(),  // INTERP: the reference interpreter
      &cpu::mlirBackend(),       // MLIR: kiln-cpu-pipeline, LLVM ORC JIT
      &halide::halideBackend(),  // HALIDE: fused kernels by Halide 14
  };
  return list;
}

std::span<const std::string_view> unbuiltBackends() {
  static const std::array<std::string_view, 1> names = {"NVRTC"};
  return names;
}

}  // namespace kiln::runtime

// What the tests that assemble generated GPU code share: where ptxas is, running it, and
// how a planned program's fused kernels are keyed and checked for in-place results.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace kiln::gpu_test {

// The CUDA toolkit's ptxas: $KILN_CUDA_HOME/bin, $CUDA_HOME/bin, else /usr/local/cuda/bin.
std::string ptxas();

// Runs `command` through the shell; its exit status, with stdout and stderr in `log`.
int run(const std::string& command, std::string& log);

// Whether a call of `kernel` in `planned` writes a result over a state argument (as
// Executable's takeKernels asks before handing a kernel to a generator).
bool writesInPlace(mlir::ModuleOp planned, mlir::func::FuncOp kernel);

// A kernel's text without its name, so the same kernel in many graphs is compiled once.
std::string keyOf(mlir::func::FuncOp kernel, bool inPlace);

// The e2e graphs, each by value and symbolically: every case of the compiled parity suite
// (test/e2e/OpCases.cpp, "<case> (by value)"), the training steps of TrainingParityTest
// ("training mlp_sgd_momentum (symbolic)"), and the fuzzer's programs of seeds 1 to
// kFuzzPrograms with its default options ("fuzz seed 7 (by value)"), recorded and planned by
// the CPU planning pipeline as the compiled backends plan them; `onKernel` sees each
// kiln.kernel = "fusion" function, named by its graph, with whether a call writes a result
// in place. `severalResultsInPlace`: kiln-plan-memory's option, as the generator under test
// has it planned (KernelCodegen::severalResultsInPlace).
inline constexpr uint64_t kFuzzPrograms = 100;
struct PlannedGraphs {
  int graphs = 0, interpreted = 0, kernels = 0;
  std::vector<std::string> problems;  // graphs that failed to record, parse or plan
};
// The same graphs as recorded text, before planning: ("<case> (by value)", text) for every
// graph the compiled backends compile (not those they hand to the interpreter).
using GraphVisitor = std::function<void(const std::string& graph, const std::string& text,
                                        mlir::ModuleOp module)>;
PlannedGraphs forEachCompiledGraph(const GraphVisitor& onGraph);

using KernelVisitor =
    std::function<void(const std::string& graph, mlir::func::FuncOp kernel, bool inPlace)>;
PlannedGraphs forEachPlannedKernel(const KernelVisitor& onKernel, bool severalResultsInPlace = true);

}  // namespace kiln::gpu_test

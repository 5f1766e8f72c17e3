// Shared pieces of the GPU assembly tests (see Assemble.h).
#include "test/gpu/Assemble.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <utility>

#include "dialect/KilnDialect.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "passes/Passes.h"
#include "runtime/HostPlan.h"
#include "runtime/cpu/MlirBackend.h"
#include "test/e2e/Parity.h"
#include "test/e2e/Training.h"
#include "tools/kiln-fuzz/Generator.h"
#include "tools/kiln-fuzz/Runner.h"

namespace kiln::gpu_test {

std::string ptxas() {
  for (const char* env : {"KILN_CUDA_HOME", "CUDA_HOME"})
    if (const char* dir = std::getenv(env); dir && *dir) return std::string(dir) + "/bin/ptxas";
  return "/usr/local/cuda/bin/ptxas";
}

int run(const std::string& command, std::string& log) {
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return -1;
  char buffer[4096];
  while (size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) log.append(buffer, n);
  return ::pclose(pipe);
}

bool writesInPlace(mlir::ModuleOp planned, mlir::func::FuncOp kernel) {
  return runtime::writesInPlace(planned, kernel);
}

std::string keyOf(mlir::func::FuncOp kernel, bool inPlace) {
  std::string text = inPlace ? "in place\n" : "\n";
  llvm::raw_string_ostream out(text);
  out << kernel.getFunctionType() << "\n";
  for (mlir::Operation& op : kernel.getBody().front())
    op.print(out, mlir::OpPrintingFlags().printGenericOpForm().elideLargeElementsAttrs(0));
  return text;
}

PlannedGraphs forEachCompiledGraph(const GraphVisitor& onGraph) {
  PlannedGraphs census;
  mlir::DialectRegistry registry;
  mlir::kiln::registerCpuPipelineDependencies(registry);
  mlir::MLIRContext context(registry);
  context.loadDialect<mlir::kiln::KilnDialect, mlir::func::FuncDialect>();
  auto visit = [&](const std::string& what, const std::function<std::string()>& record) {
    std::string text;
    try {
      text = record();
    } catch (const std::exception& e) {
      census.problems.push_back(what + ": recording throws: " + e.what());
      return;
    }
    mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
    if (!module) {
      census.problems.push_back(what + ": the recording does not parse:\n" + text);
      return;
    }
    ++census.graphs;
    // What the compiled backends hand to the interpreter (a limitation of the host
    // schedule, such as dynamic dims) has no kernels to take.
    bool interpreted = false;
    for (auto main : module->getOps<mlir::func::FuncOp>())
      interpreted = interpreted || !runtime::cpu::mlirBackend().unsupported(main).empty();
    if (interpreted) {
      ++census.interpreted;
      return;
    }
    onGraph(what, text, *module);
  };
  for (bool symbolic : {false, true}) {
    const std::string mode = symbolic ? " (symbolic)" : " (by value)";
    for (const e2e::OpCase& c : e2e::allCases())
      visit(c.name + mode, [&] { return e2e::recordedGraph(c, symbolic); });
    std::vector<std::pair<std::string, std::string>> training;
    try {
      training = e2e::recordedTrainingGraphs(symbolic);
    } catch (const std::exception& e) {
      census.problems.push_back(std::string("training steps") + mode + ": recording throws: " + e.what());
    }
    for (const auto& [name, text] : training) visit("training " + name, [&] { return text; });
    for (uint64_t seed = 1; seed <= kFuzzPrograms; ++seed)
      visit("fuzz seed " + std::to_string(seed) + mode,
            [&] { return fuzz::recordedGraph(fuzz::generate(seed, fuzz::GenOptions{}), symbolic); });
  }
  return census;
}

PlannedGraphs forEachPlannedKernel(const KernelVisitor& onKernel, bool severalResultsInPlace) {
  std::vector<std::string> failures;
  int kernels = 0;
  PlannedGraphs census = forEachCompiledGraph([&](const std::string& what, const std::string&,
                                                  mlir::ModuleOp module) {
    mlir::PassManager planning(module.getContext());
    mlir::kiln::buildCpuPlanningPipeline(planning, {.severalResultsInPlace = severalResultsInPlace});
    if (mlir::failed(planning.run(module))) {
      failures.push_back(what + ": the CPU planning pipeline fails");
      return;
    }
    for (auto kernel : module.getOps<mlir::func::FuncOp>()) {
      auto kind = kernel->getAttrOfType<mlir::StringAttr>(mlir::kiln::KilnDialect::getKernelAttrName());
      if (!kind || kind.getValue() != "fusion") continue;
      ++kernels;
      onKernel(what, kernel, writesInPlace(module, kernel));
    }
  });
  census.kernels = kernels;
  census.problems.insert(census.problems.end(), failures.begin(), failures.end());
  return census;
}

}  // namespace kiln::gpu_test

// Every e2e graph (test/gpu/Assemble.h: the compiled parity suite, TrainingParityTest's
// training steps and the fuzzer's programs, traced by value and symbolically) through
// kiln-gpu-pipeline (passes/pipelines/GpuPipeline.cpp) for sm_80 and
// sm_90, in a context holding only what registerGpuPipelineDependencies registers (what the
// runtime will use): every gpu.binary's PTX, deduplicated, assembled by ptxas for its chip
// with no errors. Prints how many graphs, kernels, launches and distinct PTX modules there
// were, and every graph the pipeline fails on with its first diagnostic; the set of such
// graphs must be exactly kKnownFailures (empty: every graph compiles), so a new failure is
// caught. Graphs the compiled backends hand to the interpreter (dynamic dims) have no
// kernels and are counted apart. SKIPPED without ptxas; no GPU needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "dialect/KilnDialect.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "passes/Passes.h"
#include "runtime/Backend.h"
#include "runtime/cpu/MlirBackend.h"
#include "runtime/gpu/MlirGpuKernels.h"
#include "test/e2e/Parity.h"
#include "test/gpu/Assemble.h"

namespace kiln {
namespace {

using gpu_test::ptxas;
using gpu_test::run;

// Graphs ("<case> (by value)" / "<case> (symbolic)") kiln-gpu-pipeline cannot compile yet,
// each with the reason (docs/ARCHITECTURE.md, kiln-gpu-pipeline). Empty: all compile.
const std::map<std::string, std::string>& knownFailures() {
  static const std::map<std::string, std::string> known = {};
  return known;
}

struct Graph {
  std::string name;  // "<case> (by value)" or "<case> (symbolic)"
  std::string text;  // the recording
};

struct Census {
  int graphs = 0, interpreted = 0;
  std::map<std::string, int> kernels, launches, binaries, planned;  // per chip
  std::map<std::string, std::string> failed;               // graph -> first diagnostic
  std::map<std::string, std::set<std::string>> ptx;        // chip -> distinct PTX modules
  std::vector<std::string> problems;
};

// Records every case, by value and symbolically, and drops what the compiled backends
// would interpret.
std::vector<Graph> recordAll(Census& census) {
  std::vector<Graph> graphs;
  const gpu_test::PlannedGraphs recorded = gpu_test::forEachCompiledGraph(
      [&](const std::string& name, const std::string& text, mlir::ModuleOp) { graphs.push_back({name, text}); });
  census.graphs = recorded.graphs;
  census.interpreted = recorded.interpreted;
  census.problems = recorded.problems;
  return graphs;
}

// Every graph through kiln-gpu-pipeline for `chip`, its PTX collected.
void compileAll(const std::vector<Graph>& graphs, const std::string& chip, Census& census) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::kiln::KilnDialect, mlir::func::FuncDialect>();
  mlir::kiln::registerGpuPipelineDependencies(registry);
  mlir::MLIRContext context(registry);
  // Graphs are compiled one after another on this machine's few cores; the pass
  // manager's threads would only contend with ptxas.
  context.disableMultithreading();
  for (const Graph& graph : graphs) {
    mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceString<mlir::ModuleOp>(graph.text, &context);
    if (!module) {
      census.problems.push_back(graph.name + ": does not parse in the GPU pipeline's context");
      continue;
    }
    std::string first;
    mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic& d) {
      if (d.getSeverity() == mlir::DiagnosticSeverity::Error && first.empty()) {
        llvm::raw_string_ostream out(first);
        out << d.getLocation() << ": " << d;
        for (const mlir::Diagnostic& note : d.getNotes()) out << "\n  note: " << note;
      }
      return mlir::success();
    });
    mlir::PassManager pm(&context);
    mlir::kiln::GpuPipelineOptions options;
    options.chip = chip;
    mlir::kiln::buildGpuPipeline(pm, options);
    if (mlir::failed(pm.run(*module))) {
      std::string& why = census.failed[graph.name];
      if (why.empty()) why = first.empty() ? "(no diagnostic)" : first;
      continue;
    }
    module->walk([&](mlir::func::FuncOp func) {
      auto kind = func->getAttrOfType<mlir::StringAttr>(mlir::kiln::KilnDialect::getKernelAttrName());
      if (kind && kind.getValue() == "fusion" && !func.isExternal()) ++census.kernels[chip];
    });
    module->walk([&](mlir::gpu::LaunchFuncOp) { ++census.launches[chip]; });
    // What the runtime launches (runtime/gpu/MlirGpuKernels.h): a plan for every kernel,
    // each launch passing as many parameters as its PTX entry takes.
    const runtime::gpu::GpuKernels plans = runtime::gpu::readLaunchPlans(*module);
    census.planned[chip] += int(plans.plans.size());
    for (const auto& [kernel, why] : plans.declined)
      census.problems.push_back(graph.name + ": @" + kernel + " has no launch plan: " + why);
    for (const auto& [kernel, plan] : plans.plans)
      for (const runtime::gpu::Launch& launch : plan.launches) {
        const size_t entry = launch.image.find(".entry " + launch.entry + "(");
        const size_t close = entry == std::string::npos ? entry : launch.image.find(')', entry);
        size_t params = 0;
        for (size_t at = entry; close != std::string::npos && (at = launch.image.find(".param", at + 1)) < close;)
          ++params;
        if (entry == std::string::npos || params != launch.params.size())
          census.problems.push_back(graph.name + ": @" + kernel + " launches " + launch.entry + " with " +
                                    std::to_string(launch.params.size()) + " parameters; its PTX entry takes " +
                                    (entry == std::string::npos ? "(not found)" : std::to_string(params)));
      }
    module->walk([&](mlir::gpu::BinaryOp binary) {
      for (mlir::Attribute attr : binary.getObjects()) {
        auto object = mlir::cast<mlir::gpu::ObjectAttr>(attr);
        ++census.binaries[chip];
        if (object.getFormat() != mlir::gpu::CompilationTarget::Assembly) {
          census.problems.push_back(graph.name + ": " + binary.getSymName().str() + " is not PTX text");
          continue;
        }
        census.ptx[chip].insert(object.getObject().getValue().str());
      }
    });
  }
}

TEST(GpuPipelineAssemble, EveryE2eGraphForSm80AndSm90) {
  if (!std::filesystem::exists(ptxas()))
    GTEST_SKIP() << "SKIPPED: no ptxas at " << ptxas() << " (set KILN_CUDA_HOME to the CUDA toolkit)";
  using Clock = std::chrono::steady_clock;
  auto seconds = [](Clock::time_point from) { return std::chrono::duration<double>(Clock::now() - from).count(); };
  Census census;
  Clock::time_point start = Clock::now();
  const std::vector<Graph> graphs = recordAll(census);
  const double recording = seconds(start);
  const std::vector<std::string> chips = {"sm_80", "sm_90"};
  start = Clock::now();
  for (const std::string& chip : chips) compileAll(graphs, chip, census);
  const double compiling = seconds(start);
  for (const std::string& p : census.problems) ADD_FAILURE() << p;

  // One .ptx per distinct module, ptxas (which takes one input) run on them by a few threads.
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "kiln-gpu-pipeline-e2e";
  std::filesystem::create_directories(dir);
  struct Job {
    std::string chip;
    const std::string* ptx;
    std::filesystem::path file;
    int status = -1;
    std::string log;
  };
  std::vector<Job> jobs;
  for (const std::string& chip : chips) {
    for (const std::string& ptx : census.ptx[chip]) {
      Job job{chip, &ptx, dir / (chip + "_" + std::to_string(jobs.size()) + ".ptx"), -1, ""};
      std::ofstream(job.file) << ptx;
      if (ptx.find(".target " + chip) == std::string::npos) ADD_FAILURE() << job.file << " is not for " << chip;
      jobs.push_back(std::move(job));
    }
  }
  start = Clock::now();
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < jobs.size();) {
      Job& job = jobs[i];
      job.status = run(ptxas() + " -arch=" + job.chip + " -o /dev/null " + job.file.string(), job.log);
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < std::max(2u, std::thread::hardware_concurrency()); ++t) pool.emplace_back(worker);
  for (std::thread& t : pool) t.join();
  const double assembling = seconds(start);
  std::map<std::string, int> assembled;
  for (const Job& job : jobs) {
    EXPECT_EQ(job.status, 0) << "ptxas -arch=" << job.chip << " " << job.file << ":\n" << job.log << "\n" << *job.ptx;
    if (job.status == 0) ++assembled[job.chip];
  }

  std::printf("kiln-gpu-pipeline: %d e2e graphs (%d run by the interpreter, %zu compiled per chip)\n",
              census.graphs, census.interpreted, graphs.size());
  for (const std::string& chip : chips)
    std::printf("  %s: %d fusion kernels (%d with launch plans), %d launches (gpu.binary: %d), %zu distinct PTX "
                "modules, %d assembled\n",
                chip.c_str(), census.kernels[chip], census.planned[chip], census.launches[chip],
                census.binaries[chip], census.ptx[chip].size(), assembled[chip]);
  std::printf("  seconds: recording %.1f, kiln-gpu-pipeline (both chips) %.1f, ptxas (%zu runs) %.1f\n", recording,
              compiling, jobs.size(), assembling);
  std::printf("  graphs the pipeline fails on: %zu\n", census.failed.size());
  for (const auto& [graph, why] : census.failed) {
    auto known = knownFailures().find(graph);
    std::printf("    %s%s: %s\n", graph.c_str(),
                known == knownFailures().end() ? " (NEW)" : (" (known: " + known->second + ")").c_str(),
                why.c_str());
  }

  std::set<std::string> failed, expected;
  for (const auto& [graph, why] : census.failed) failed.insert(graph);
  for (const auto& [graph, why] : knownFailures()) expected.insert(graph);
  EXPECT_EQ(failed, expected) << "the graphs kiln-gpu-pipeline fails on are not the known ones";
  for (const std::string& chip : chips) {
    EXPECT_GT(census.ptx[chip].size(), 0u) << chip;
    EXPECT_EQ(census.planned[chip], census.kernels[chip]) << chip;
    EXPECT_EQ(assembled[chip], int(census.ptx[chip].size())) << chip;
  }
}

}  // namespace
}  // namespace kiln

// Every fused kernel of the e2e graphs (test/gpu/Assemble.h: the compiled parity suite,
// TrainingParityTest's training steps and the fuzzer's programs, traced by value and
// symbolically) through NVRTC's generator (runtime/nvrtc): each graph recorded,
// planned by the CPU planning pipeline (kiln-fuse, kiln-outline-kernels, kiln-plan-memory)
// as the compiled backends plan it, each kiln.kernel = "fusion" function generated as CUDA
// C, compiled by NVRTC to PTX for compute_80 and compute_90 and assembled by ptxas for sm_80
// and sm_90 with no errors. Prints how many kernels were taken and why the others were
// declined (a declined kernel runs interpreted on the device). CudaTraceTest runs them on a
// GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "dialect/KilnDialect.h"
#include "frontend/core/cuda/Codegen.h"
#include "frontend/core/cuda/Nvrtc.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "passes/Passes.h"
#include "runtime/Backend.h"
#include "runtime/cpu/MlirBackend.h"
#include "runtime/nvrtc/NvrtcKernels.h"
#include "test/e2e/Parity.h"
#include "test/gpu/Assemble.h"

namespace kiln {
namespace {

using gpu_test::ptxas;
using gpu_test::run;
using gpu_test::keyOf;

using runtime::nvrtc::CudaKernel;

struct Census {
  int graphs = 0, interpreted = 0, kernels = 0, taken = 0;
  std::map<std::string, int> declined;        // why -> kernels
  std::map<std::string, std::string> example; // why -> the first case and kernel declined so
  std::map<std::string, CudaKernel> unique;   // by kernel text, renamed k0, k1, ...
  std::vector<std::string> problems;
};

// Records, plans and generates every case's kernels.
Census generateAll() {
  Census census;
  const gpu_test::PlannedGraphs planned =
      gpu_test::forEachPlannedKernel([&](const std::string& what, mlir::func::FuncOp kernel, bool inPlace) {
    std::string why;
    std::optional<CudaKernel> k = runtime::nvrtc::generate(kernel, inPlace, why);
    if (!k) {
      if (census.declined[why]++ == 0) {
        std::string text;
        llvm::raw_string_ostream out(text);
        kernel.print(out);
        census.example[why] = what + ":\n" + text;
      }
      return;
    }
    ++census.taken;
    const std::string key = keyOf(kernel, inPlace);
    if (census.unique.count(key)) return;
    // Unique entry names, so that many kernels compile as one translation unit.
    const std::string name = "kiln_nvrtc_k" + std::to_string(census.unique.size());
    for (size_t at; (at = k->source.find(k->name + "(")) != std::string::npos;)
      k->source.replace(at, k->name.size(), name);
    k->name = name;
    census.unique.emplace(key, std::move(*k));
  });
  census.graphs = planned.graphs;
  census.interpreted = planned.interpreted;
  census.kernels = planned.kernels;
  census.problems = planned.problems;
  return census;
}

TEST(NvrtcKernelsAssemble, EveryE2eGraphsKernelsForSm80AndSm90) {
  if (!cuda::nvrtcUnavailableReason().empty())
    GTEST_SKIP() << "SKIPPED: " << cuda::nvrtcUnavailableReason();
  if (!std::filesystem::exists(ptxas())) GTEST_SKIP() << "SKIPPED: no ptxas at " << ptxas();
  Census census = generateAll();
  for (const std::string& p : census.problems) ADD_FAILURE() << p;
  EXPECT_GT(census.taken, 0);

  // Batches of kernels, each one translation unit (the prelude once) and one ptxas run.
  const std::string& prelude = cuda::prelude();
  std::vector<const CudaKernel*> kernels;
  for (const auto& [key, k] : census.unique) {
    ASSERT_EQ(k.source.compare(0, prelude.size(), prelude), 0) << k.name << " does not start with the prelude";
    kernels.push_back(&k);
  }
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "kiln-nvrtc-ptx";
  std::filesystem::create_directories(dir);
  constexpr size_t kBatch = 64;
  int assembled = 0;
  for (const char* arch : {"80", "90"}) {
    for (size_t first = 0; first < kernels.size(); first += kBatch) {
      const size_t last = std::min(kernels.size(), first + kBatch);
      std::string source = prelude;
      for (size_t i = first; i < last; ++i) source += kernels[i]->source.substr(prelude.size());
      std::string ptx;
      try {
        ptx = cuda::compile(source, std::string("compute_") + arch, "NVRTC e2e kernels", SourceLoc::current());
      } catch (const std::exception& e) {
        // Find which kernels do not compile, one at a time.
        for (size_t i = first; i < last; ++i) {
          try {
            runtime::nvrtc::compileToPtx(*kernels[i], std::string("compute_") + arch);
          } catch (const std::exception& one) {
            ADD_FAILURE() << kernels[i]->name << " does not compile for compute_" << arch << ": " << one.what()
                          << "\n" << kernels[i]->source.substr(prelude.size());
          }
        }
        continue;
      }
      for (size_t i = first; i < last; ++i)
        EXPECT_NE(ptx.find(".entry " + kernels[i]->name + "("), std::string::npos) << kernels[i]->name;
      const std::filesystem::path file = dir / ("batch" + std::to_string(first) + "_" + arch + ".ptx");
      std::ofstream(file) << ptx.c_str();
      std::string log;
      const int status = run(ptxas() + " -arch=sm_" + arch + " -o " + (dir / "out.cubin").string() + " " + file.string(), log);
      EXPECT_EQ(status, 0) << "ptxas -arch=sm_" << arch << " " << file << ":\n" << log;
      if (status == 0) assembled += int(last - first);
    }
  }
  EXPECT_EQ(assembled, 2 * int(kernels.size()));

  std::printf("NVRTC %s: %d graphs (%d run by the interpreter), %d fused kernels: %d taken (%zu distinct, "
              "%d assembled for sm_80 and sm_90), %d declined\n",
              cuda::nvrtcVersion().c_str(), census.graphs, census.interpreted, census.kernels, census.taken,
              census.unique.size(), assembled / 2, census.kernels - census.taken);
  for (const auto& [why, count] : census.declined)
    std::printf("  declined %d: %s; the first, in %s\n", count, why.c_str(), census.example[why].c_str());
}

}  // namespace
}  // namespace kiln

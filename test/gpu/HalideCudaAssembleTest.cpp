// Every fused kernel of the e2e graphs (test/gpu/Assemble.h: the compiled parity suite,
// TrainingParityTest's training steps and the fuzzer's programs, traced by value and
// symbolically) through HALIDE's generator scheduled for CUDA (runtime/halide,
// compileForCuda): each graph recorded, planned by the CPU planning pipeline (kiln-fuse,
// kiln-outline-kernels, kiln-plan-memory) as compileForCuda plans it for HALIDE (no result
// of a kernel of several results in place), each kiln.kernel
// = "fusion" function built as a Halide pipeline with the GPU schedule, compiled ahead of
// time for host-cuda-cuda_capability_80, its PTX taken from the host module and assembled by
// ptxas for sm_80 and sm_90 with no errors. Prints how many kernels were taken and why the
// others were declined. CudaTraceTest runs them on a GPU (the HALIDE bundle, docs/GPU.md).
// KILN_TEST_TRACE=1 prints each kernel before Halide compiles it (LLVM's NVPTX backend
// aborts the process on what it cannot select, as it did on bf16). Single kernels' PTX shows
// which divisions are approximate (div.approx.f32) and which stay IEEE.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "dialect/KilnDialect.h"
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
#include "runtime/halide/HalideKernels.h"
#include "test/e2e/Parity.h"
#include "test/gpu/Assemble.h"

namespace kiln {
namespace {

using gpu_test::ptxas;
using gpu_test::run;
using gpu_test::keyOf;

using runtime::halide::HalideCudaKernel;

struct Census {
  int graphs = 0, interpreted = 0, kernels = 0, taken = 0;
  std::map<std::string, int> declined;               // why -> kernels
  std::map<std::string, std::string> example;        // why -> the first case and kernel declined so
  std::map<std::string, HalideCudaKernel> unique;    // by kernel text
  std::vector<std::string> problems;
};

// Records, plans and compiles every case's kernels for CUDA.
Census generateAll() {
  Census census;
  const gpu_test::PlannedGraphs planned =
      gpu_test::forEachPlannedKernel([&](const std::string& what, mlir::func::FuncOp kernel, bool inPlace) {
    const std::string key = keyOf(kernel, inPlace);
    std::string why;
    std::optional<HalideCudaKernel> k;
    if (auto seen = census.unique.find(key); seen != census.unique.end()) k = seen->second;
    else {
      if (std::getenv("KILN_TEST_TRACE")) {
        std::string text;
        llvm::raw_string_ostream out(text);
        kernel.print(out);
        std::fprintf(stderr, "%s:\n%s\n", what.c_str(), text.c_str());
      }
      k = runtime::halide::compileForCuda(kernel, inPlace, why);
    }
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
    census.unique.emplace(key, std::move(*k));
  }, runtime::halide::kCudaSeveralResultsInPlace);
  census.graphs = planned.graphs;
  census.interpreted = planned.interpreted;
  census.kernels = planned.kernels;
  census.problems = planned.problems;
  return census;
}

TEST(HalideCudaAssemble, EveryE2eGraphsKernelsForSm80AndSm90) {
  if (!std::filesystem::exists(ptxas())) GTEST_SKIP() << "SKIPPED: no ptxas at " << ptxas();
  Census census = generateAll();
  for (const std::string& p : census.problems) ADD_FAILURE() << p;
  EXPECT_GT(census.taken, 0);

  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "kiln-halide-cuda-ptx";
  std::filesystem::create_directories(dir);
  std::map<std::string, int> versions;  // PTX ISA .version -> distinct kernels
  int assembled = 0, entries = 0, index = 0;
  for (const auto& [key, k] : census.unique) {
    // Halide 14 writes PTX ISA 7.0 for .target sm_80 (its cuda_capability_80).
    const size_t at = k.ptx.find(".version ");
    versions[at == std::string::npos ? "none" : k.ptx.substr(at + 9, k.ptx.find('\n', at) - at - 9)]++;
    EXPECT_NE(k.ptx.find(".target sm_80"), std::string::npos) << k.name;
    EXPECT_FALSE(k.entries.empty()) << k.name << ":\n" << k.ptx;
    entries += int(k.entries.size());
    const std::filesystem::path file = dir / ("k" + std::to_string(index++) + ".ptx");
    std::ofstream(file) << k.ptx;
    bool all = true;
    for (const char* arch : {"80", "90"}) {
      std::string log;
      const int status = run(ptxas() + " -arch=sm_" + arch + " -o " + (dir / "out.cubin").string() + " " + file.string(), log);
      EXPECT_EQ(status, 0) << "ptxas -arch=sm_" << arch << " " << file << " (" << k.name << ", " << k.schedule
                           << "):\n" << log;
      all = all && status == 0;
    }
    if (all) ++assembled;
  }
  EXPECT_EQ(assembled, int(census.unique.size()));
  // The reasons known for declining (a kernel without results, and bf16); a new one fails
  // here. Kernels of several results are planned out of place for HALIDE (as compileForCuda
  // plans them), so none is declined for writing one over an operand.
  for (const auto& [why, count] : census.declined)
    EXPECT_TRUE(why == "a kernel without results" ||
                why == "bf16 on Halide 14's CUDA target (LLVM 14's NVPTX backend aborts on it)")
        << count << " declined: " << why << "; the first, in " << census.example[why];
  EXPECT_EQ(versions.size(), 1u);
  EXPECT_EQ(versions.begin()->first, "7.0");

  std::printf("HALIDE on CUDA (Halide 14, host-cuda-cuda_capability_80): %d graphs (%d run by the interpreter), "
              "%d fused kernels: %d taken (%zu distinct, %d device kernels; %d assembled for sm_80 and sm_90), "
              "%d declined\n",
              census.graphs, census.interpreted, census.kernels, census.taken, census.unique.size(), entries,
              assembled, census.kernels - census.taken);
  for (const auto& [version, count] : versions) std::printf("  PTX ISA %s: %d kernels\n", version.c_str(), count);
  std::map<std::string, int> schedules;
  for (const auto& [key, k] : census.unique) schedules[k.schedule]++;
  for (const auto& [schedule, count] : schedules) std::printf("  schedule \"%s\": %d distinct\n", schedule.c_str(), count);
  for (const auto& [why, count] : census.declined)
    std::printf("  declined %d: %s; the first, in %s\n", count, why.c_str(), census.example[why].c_str());
}

// The PTX of one kernel, in kiln's text, through HALIDE's generator scheduled for CUDA.
std::string cudaPtxOf(const char* source) {
  mlir::MLIRContext context;
  context.loadDialect<mlir::kiln::KilnDialect, mlir::func::FuncDialect>();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
  if (!module) return "(the kernel did not parse)";
  std::string why;
  std::optional<HalideCudaKernel> k =
      runtime::halide::compileForCuda(*module->getOps<mlir::func::FuncOp>().begin(), /*inPlace=*/false, why);
  return k ? k->ptx : "(declined: " + why + ")";
}

// The approximations' own divisions are PTX's div.approx.f32 on CUDA, as kiln-gpu-pipeline
// has MLIR's (kiln-approximate-math's approximate-division): tanh's, which gelu's tanh form
// computes (the traced gelu chain of bench/CudaStep.cpp, bias + scale + tanh GELU + scale, ran
// under HALIDE on an H200 at 0.40-0.43 of the copy's bandwidth with tanh's division IEEE,
// div.rn.f32, a long instruction sequence), and gelu's erf form's (Halide 14's erf divides by
// P(x)^16).
TEST(HalideCudaAssemble, ApproximationsOwnDivisionsAreApproximate) {
  const std::string tanhPtx = cudaPtxOf(R"mlir(
    func.func private @bias_tanh(%x: tensor<8x1024xf32>, %b: tensor<1024xf32>) -> tensor<8x1024xf32>
        attributes {kiln.kernel = "fusion"} {
      %bb = kiln.broadcast_in_dim %b, dims = [1], shape = [8, 1024] : tensor<1024xf32>
      %s = kiln.add %x, %bb : tensor<8x1024xf32>
      %t = kiln.tanh %s : tensor<8x1024xf32>
      return %t : tensor<8x1024xf32>
    })mlir");
  const std::string erfPtx = cudaPtxOf(R"mlir(
    func.func private @gelu_erf(%x: tensor<1024xf32>) -> tensor<1024xf32> attributes {kiln.kernel = "fusion"} {
      %g = kiln.gelu %x : tensor<1024xf32>
      return %g : tensor<1024xf32>
    })mlir");
  // IEEE divisions are div.rn.f32, and rcp.rn.f32 where the dividend is 1 (erf's).
  for (const std::string* ptx : {&tanhPtx, &erfPtx}) {
    EXPECT_EQ(ptx->find("div.rn.f32"), std::string::npos) << *ptx;
    EXPECT_EQ(ptx->find("rcp.rn.f32"), std::string::npos) << *ptx;
    EXPECT_NE(ptx->find("div.approx.f32"), std::string::npos) << *ptx;
  }
}

// A user's division stays IEEE beside tanh's approximate one.
TEST(HalideCudaAssemble, UsersDivisionStaysIeee) {
  const std::string ptx = cudaPtxOf(R"mlir(
    func.func private @tanh_over(%a: tensor<1024xf32>, %b: tensor<1024xf32>) -> tensor<1024xf32>
        attributes {kiln.kernel = "fusion"} {
      %t = kiln.tanh %a : tensor<1024xf32>
      %q = kiln.div %t, %b : tensor<1024xf32>
      return %q : tensor<1024xf32>
    })mlir");
  EXPECT_NE(ptx.find("div.rn.f32"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("div.approx.f32"), std::string::npos) << ptx;
}

}  // namespace
}  // namespace kiln

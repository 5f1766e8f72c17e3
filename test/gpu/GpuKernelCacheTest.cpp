// The MLIR GPU generator's disk cache (runtime/gpu/GpuCompile.h, mlirGpuKernels): a planned
// program's kernels compiled by kiln-gpu-pipeline once, stored, and parsed back by the next
// compile with the same planned module and chip, giving the same launch plans (entries,
// PTX, grids, parameters, scratch); a different chip misses; a corrupted entry is reported,
// dropped and rebuilt with the same plans. No GPU is needed (PTX is not assembled here).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "dialect/KilnDialect.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "passes/Passes.h"
#include "runtime/CompileStages.h"
#include "runtime/cache/DiskCache.h"
#include "runtime/gpu/GpuCompile.h"

namespace kiln::runtime::gpu {
namespace {

// softmax rows and a scaled tanh: a row kernel with a reduction and an elementwise one.
constexpr const char* kProgram = R"mlir(
func.func @main(%x: tensor<64x100xf32> {kiln.input = 0 : i64}) -> (tensor<64x100xf32>, tensor<64x100xf32>) {
  %m = kiln.reduce max %x, dims = [1] keep_dims : tensor<64x100xf32>
  %b = kiln.broadcast_in_dim %m, dims = [0, 1], shape = [64, 100] : tensor<64x1xf32>
  %d = kiln.sub %x, %b : tensor<64x100xf32>
  %e = kiln.exp %d : tensor<64x100xf32>
  %s = kiln.reduce sum %e, dims = [1] keep_dims : tensor<64x100xf32>
  %sb = kiln.broadcast_in_dim %s, dims = [0, 1], shape = [64, 100] : tensor<64x1xf32>
  %y = kiln.div %e, %sb : tensor<64x100xf32>
  %t = kiln.tanh %x : tensor<64x100xf32>
  %t2 = kiln.mul %t, %t : tensor<64x100xf32>
  return %y, %t2 : tensor<64x100xf32>, tensor<64x100xf32>
})mlir";

bool samePlans(const GpuKernels& a, const GpuKernels& b, std::string& why) {
  if (a.plans.size() != b.plans.size() || a.declined != b.declined) {
    why = "different kernels";
    return false;
  }
  for (const auto& [name, plan] : a.plans) {
    auto other = b.plans.find(name);
    if (other == b.plans.end() || other->second.launches.size() != plan.launches.size() ||
        other->second.scratchBytes != plan.scratchBytes || other->second.operands != plan.operands) {
      why = "@" + name + " differs";
      return false;
    }
    for (size_t l = 0; l < plan.launches.size(); ++l) {
      const Launch &x = plan.launches[l], &y = other->second.launches[l];
      bool same = x.entry == y.entry && x.image == y.image && x.params.size() == y.params.size();
      for (int d = 0; d < 3; ++d) same = same && x.grid[d] == y.grid[d] && x.block[d] == y.block[d];
      for (size_t p = 0; same && p < x.params.size(); ++p)
        same = x.params[p].kind == y.params[p].kind && x.params[p].buffer == y.params[p].buffer &&
               x.params[p].bytes == y.params[p].bytes;
      if (!same) {
        why = "@" + name + " launch " + std::to_string(l) + " differs";
        return false;
      }
    }
  }
  return true;
}

// kProgram parsed in a context with the GPU pipeline's dependencies, planned as the runtime
// plans it.
class GpuKernelCache : public ::testing::Test {
 protected:
  void SetUp() override {
    mlir::DialectRegistry registry;
    registry.insert<mlir::kiln::KilnDialect, mlir::func::FuncDialect>();
    mlir::kiln::registerGpuPipelineDependencies(registry);
    context.appendDialectRegistry(registry);
    module = mlir::parseSourceString<mlir::ModuleOp>(kProgram, &context);
    ASSERT_TRUE(module);
    mlir::PassManager planning(&context);
    mlir::kiln::buildCpuPlanningPipeline(planning);
    ASSERT_TRUE(mlir::succeeded(planning.run(*module)));
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

TEST_F(GpuKernelCache, ASecondCompileParsesTheStoredKernelsAndGetsTheSamePlans) {

  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "kiln-gpu-kernel-cache";
  std::filesystem::remove_all(dir);
  DiskCache cache(dir.string());
  IrDumps dumps("main");
  mlir::kiln::GpuPipelineOptions sm90;
  bool fromCache = true;
  const GpuKernels first = mlirGpuKernels(*module, sm90, cache, dumps, fromCache, "test", SourceLoc::current());
  EXPECT_FALSE(fromCache);
  ASSERT_GE(first.plans.size(), 2u);
  EXPECT_TRUE(first.declined.empty());

  const GpuKernels second = mlirGpuKernels(*module, sm90, cache, dumps, fromCache, "test", SourceLoc::current());
  EXPECT_TRUE(fromCache);
  std::string why;
  EXPECT_TRUE(samePlans(first, second, why)) << why;

  mlir::kiln::GpuPipelineOptions sm80 = sm90;
  sm80.chip = "sm_80";
  const GpuKernels other = mlirGpuKernels(*module, sm80, cache, dumps, fromCache, "test", SourceLoc::current());
  EXPECT_FALSE(fromCache) << "an entry for sm_90 served sm_80";
  for (const auto& [name, plan] : other.plans)
    for (const Launch& launch : plan.launches) EXPECT_NE(launch.image.find(".target sm_80"), std::string::npos);

  // Corrupt every entry: each is reported, dropped and rebuilt with the same plans.
  int corrupted = 0;
  for (const auto& file : std::filesystem::recursive_directory_iterator(dir)) {
    if (!file.is_regular_file()) continue;
    std::fstream f(file.path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(std::streamoff(file.file_size() / 2));
    f.put('\x5a').put('\xa5');
    ++corrupted;
  }
  EXPECT_GE(corrupted, 2);
  const GpuKernels rebuilt = mlirGpuKernels(*module, sm90, cache, dumps, fromCache, "test", SourceLoc::current());
  EXPECT_FALSE(fromCache);
  EXPECT_TRUE(samePlans(first, rebuilt, why)) << why;
  const GpuKernels reloaded = mlirGpuKernels(*module, sm90, cache, dumps, fromCache, "test", SourceLoc::current());
  EXPECT_TRUE(fromCache);
  EXPECT_TRUE(samePlans(first, reloaded, why)) << why;
}

// KILN_DUMP_IR: a compile writes the GPU-pipelined module and each GPU module's NVVM IR
// (LLVM IR for nvptx64, libdevice linked, the kernel's entry an nvvm kernel).
TEST_F(GpuKernelCache, DumpingWritesEachGpuModulesNvvmIr) {

  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "kiln-gpu-dumps";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  setenv("KILN_DUMP_IR", dir.c_str(), 1);
  IrDumps dumps("main");
  unsetenv("KILN_DUMP_IR");
  DiskCache off("");
  bool fromCache = true;
  const GpuKernels kernels =
      mlirGpuKernels(*module, mlir::kiln::GpuPipelineOptions{}, off, dumps, fromCache, "test", SourceLoc::current());
  EXPECT_FALSE(fromCache);
  int nvvm = 0, gpu = 0;
  for (const auto& file : std::filesystem::directory_iterator(dir)) {
    const std::string name = file.path().filename().string();
    std::ifstream in(file.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (name.ends_with("-gpu.mlir")) ++gpu;
    if (name.find("-nvvm-") == std::string::npos || !name.ends_with(".ll")) continue;
    ++nvvm;
    EXPECT_NE(text.find("target triple = \"nvptx64-nvidia-cuda\""), std::string::npos) << name << ":\n" << text;
    EXPECT_NE(text.find("define ptx_kernel void @"), std::string::npos) << name << ":\n" << text;
  }
  EXPECT_EQ(gpu, 1);
  int launches = 0;
  for (const auto& [name, plan] : kernels.plans) launches += int(plan.launches.size());
  EXPECT_EQ(nvvm, launches) << "one GPU module a launch";
}

}  // namespace
}  // namespace kiln::runtime::gpu

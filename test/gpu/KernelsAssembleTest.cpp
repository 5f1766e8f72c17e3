// Every CUDA kernel the eager ops generate compiles with NVRTC to PTX for compute_80 and
// compute_90, and ptxas assembles that PTX for sm_80 and sm_90: the GPU check that needs
// no GPU (CI runs it wherever the CUDA toolkit is installed).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "frontend/core/cuda/Kernels.h"
#include "frontend/core/cuda/Nvrtc.h"

namespace kiln {
namespace {

std::string ptxas() {
  for (const char* env : {"KILN_CUDA_HOME", "CUDA_HOME"})
    if (const char* dir = std::getenv(env); dir && *dir) return std::string(dir) + "/bin/ptxas";
  return "/usr/local/cuda/bin/ptxas";
}

TEST(KernelsAssemble, EveryGeneratedKernelIsDistinctAndNamed) {
  std::set<std::string> names;
  for (const cuda::KernelSource& k : cuda::allKernelSources()) {
    EXPECT_TRUE(names.insert(k.name).second) << k.name << " is generated twice";
    EXPECT_NE(k.source.find(k.name), std::string::npos) << k.what;
  }
  EXPECT_GT(names.size(), 300u);
}

TEST(KernelsAssemble, ForSm80AndSm90) {
  if (!cuda::nvrtcUnavailableReason().empty())
    GTEST_SKIP() << "SKIPPED: " << cuda::nvrtcUnavailableReason();
  if (!std::filesystem::exists(ptxas())) GTEST_SKIP() << "SKIPPED: no ptxas at " << ptxas();
  const std::vector<cuda::KernelSource> kernels = cuda::allKernelSources();
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "kiln-ptx";
  std::filesystem::create_directories(dir);
  int assembled = 0;
  for (const char* arch : {"80", "90"}) {
    // One PTX file per arch holding every kernel keeps ptxas to two runs.
    std::string all;
    for (const cuda::KernelSource& k : kernels) {
      SCOPED_TRACE(k.what);
      std::string ptx;
      ASSERT_NO_THROW(ptx = cuda::compile(k.source, std::string("compute_") + arch, k.what,
                                          SourceLoc::current()));
      ASSERT_NE(ptx.find(".entry " + k.name), std::string::npos) << ptx.substr(0, 2000);
      const std::filesystem::path file = dir / (k.name + "_" + arch + ".ptx");
      std::ofstream(file) << ptx.c_str();
      const std::string cmd = ptxas() + " -arch=sm_" + arch + " -o " + (dir / "out.cubin").string() + " " +
                              file.string() + " 2>&1";
      FILE* pipe = ::popen(cmd.c_str(), "r");
      ASSERT_NE(pipe, nullptr);
      char buffer[4096];
      std::string log;
      while (size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) log.append(buffer, n);
      EXPECT_EQ(::pclose(pipe), 0) << k.name << " for sm_" << arch << ":\n" << log;
      ++assembled;
    }
  }
  EXPECT_EQ(assembled, 2 * int(kernels.size()));
  std::printf("assembled %d kernels for sm_80 and sm_90 with NVRTC %s\n", int(kernels.size()),
              cuda::nvrtcVersion().c_str());
}

}  // namespace
}  // namespace kiln

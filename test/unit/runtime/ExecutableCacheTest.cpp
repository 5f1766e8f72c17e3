// Executable with the disk cache, IR dumps and pipeline failures: a second compile of the
// same function loads it, a corrupt entry is rebuilt, KILN_DUMP_IR writes every stage, and
// a failing pass is a CompileError naming it and the file holding its IR.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "dialect/KilnDialect.h"
#include "kiln/core/Ops.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "runtime/Executable.h"
#include "test/unit/runtime/RuntimeTestSupport.h"

namespace kiln::runtime {
namespace {

constexpr const char* kProgram = R"mlir(
func.func @main(%x: tensor<4x8xf32> {kiln.input = 0 : i64}) -> (tensor<4x8xf32> {kiln.output = 0 : i64}) {
  %m = kiln.reduce max %x, dims = [1] : tensor<4x8xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0], shape = [4, 8] : tensor<4xf32>
  %s = kiln.sub %x, %mb : tensor<4x8xf32>
  %e = kiln.exp %s : tensor<4x8xf32>
  return %e : tensor<4x8xf32>
}
)mlir";

std::string freshDirectory(const std::string& name) {
  std::string dir = std::string(::testing::TempDir()) + "/" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

// Parses `source` into its own context, as a new process would.
struct Parsed {
  explicit Parsed(const char* source) {
    context.loadDialect<mlir::kiln::KilnDialect, mlir::func::FuncDialect>();
    module = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
  }
  mlir::func::FuncOp main() { return *module->getOps<mlir::func::FuncOp>().begin(); }
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

std::shared_ptr<const Executable> compile(const char* source, const DiskCache& cache) {
  Parsed parsed(source);
  return Executable::compile(parsed.main(), nullptr, "test", SourceLoc::current(), &cache);
}

TEST(ExecutableCacheTest, ASecondCompileLoadsFromTheDiskCache) {
  DiskCache cache(freshDirectory("warm"));
  auto cold = compile(kProgram, cache);
  EXPECT_FALSE(cold->loadedFromCache());
  auto warm = compile(kProgram, cache);
  EXPECT_TRUE(warm->loadedFromCache());
  Tensor x = randn({4, 8});
  EXPECT_TRUE(equal(cold->run(std::vector<Tensor>{x})[0], warm->run(std::vector<Tensor>{x})[0]));
  EXPECT_EQ(cold->arenaBytes(), warm->arenaBytes());
}

TEST(ExecutableCacheTest, ACorruptEntryIsReportedAndRebuilt) {
  DiskCache cache(freshDirectory("corrupt"));
  compile(kProgram, cache);
  std::string entry;
  for (const auto& f : std::filesystem::directory_iterator(cache.directory())) entry = f.path();
  ASSERT_FALSE(entry.empty());
  std::filesystem::resize_file(entry, std::filesystem::file_size(entry) / 2);
  ::testing::internal::CaptureStderr();
  auto rebuilt = compile(kProgram, cache);
  std::string report = ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(rebuilt->loadedFromCache());
  EXPECT_NE(report.find("is corrupt"), std::string::npos) << report;
  Tensor x = randn({4, 8});
  EXPECT_TRUE(allclose(rebuilt->run(std::vector<Tensor>{x})[0], exp(sub(x, amax(x, {1}, true))), 1e-5, 1e-6));
  EXPECT_TRUE(compile(kProgram, cache)->loadedFromCache()) << "the rebuild stored a good entry";
}

TEST(ExecutableCacheTest, KilnDumpIrWritesEveryStage) {
  const std::string dir = freshDirectory("dumps");
  setenv("KILN_DUMP_IR", dir.c_str(), 1);
  compile(kProgram, DiskCache(""));
  unsetenv("KILN_DUMP_IR");
  std::vector<std::string> names;
  for (const auto& f : std::filesystem::directory_iterator(dir)) names.push_back(f.path().filename());
  std::sort(names.begin(), names.end());
  ASSERT_EQ(names.size(), 4u);
  EXPECT_NE(names[0].find("-traced.mlir"), std::string::npos) << names[0];
  EXPECT_NE(names[1].find("-planned.mlir"), std::string::npos) << names[1];
  EXPECT_NE(names[2].find("-lowered.mlir"), std::string::npos) << names[2];
  EXPECT_NE(names[3].find("-llvm.ll"), std::string::npos) << names[3];
  std::ifstream llvm(dir + "/" + names[3]);
  std::string text((std::istreambuf_iterator<char>(llvm)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("define void @kiln_main"), std::string::npos);

  // A second program of the same name in the same process writes files of its own.
  setenv("KILN_DUMP_IR", dir.c_str(), 1);
  compile(kProgram, DiskCache(""));
  unsetenv("KILN_DUMP_IR");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 8);
}

// The runtime's lowered IR for `source` (its KILN_DUMP_IR "-lowered.mlir" file).
std::string loweredIrOf(const char* source, const std::string& name) {
  const std::string dir = freshDirectory(name);
  setenv("KILN_DUMP_IR", dir.c_str(), 1);
  compile(source, DiskCache(""));
  unsetenv("KILN_DUMP_IR");
  for (const auto& f : std::filesystem::directory_iterator(dir))
    if (f.path().string().ends_with("-lowered.mlir")) {
      std::ifstream in(f.path());
      return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    }
  return "";
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A fused elementwise kernel computes straight into the buffer the host planned for its
// result: no allocation and no copy in the lowered code. (The runtime's context has only
// the external models the pipeline registers; with a missing one, bufferization fell
// back to a temporary and a copy that no pass reported.)
TEST(ExecutableCacheTest, FusedKernelsWriteStraightIntoTheirResults) {
  const std::string text = loweredIrOf(R"mlir(
func.func @main(%x: tensor<64x128xf32> {kiln.input = 0 : i64}, %b: tensor<128xf32> {kiln.input = 1 : i64})
    -> (tensor<64x128xf32> {kiln.output = 0 : i64}) {
  %bb = kiln.broadcast_in_dim %b, dims = [1], shape = [64, 128] : tensor<128xf32>
  %a = kiln.add %x, %bb : tensor<64x128xf32>
  %t = kiln.tanh %a : tensor<64x128xf32>
  return %t : tensor<64x128xf32>
}
)mlir", "in-place");
  EXPECT_NE(text.find("llvm.func @main_kernel_0"), std::string::npos);
  EXPECT_EQ(text.find("@malloc"), std::string::npos) << text;
  EXPECT_EQ(text.find("memcpy"), std::string::npos) << text;
}

// Scratch a kernel allocates (a sum's f64 accumulators) is freed before it returns, also
// in the runtime's context (whose deallocation models the pipeline must register).
TEST(ExecutableCacheTest, KernelScratchIsFreed) {
  const std::string text = loweredIrOf(R"mlir(
func.func @main(%x: tensor<64x128xf32> {kiln.input = 0 : i64}) -> (tensor<64xf32> {kiln.output = 0 : i64}) {
  %s = kiln.reduce sum %x, dims = [1] : tensor<64x128xf32>
  return %s : tensor<64xf32>
}
)mlir", "scratch");
  EXPECT_GE(count(text, "llvm.call @malloc("), 1u) << text;
  EXPECT_EQ(count(text, "llvm.call @malloc("), count(text, "llvm.call @free(")) << text;
}

TEST(ExecutableCacheTest, AFailingPassNamesItselfAndItsIr) {
  // Reductions over dynamic dims do not lower to linalg yet.
  const char* dynamic = R"mlir(
func.func @main(%x: tensor<?x8xf32> {kiln.input = 0 : i64}) -> (tensor<?xf32> {kiln.output = 0 : i64}) {
  %m = kiln.reduce max %x, dims = [1] : tensor<?x8xf32>
  return %m : tensor<?xf32>
}
)mlir";
  const std::string dir = freshDirectory("failure");
  setenv("KILN_DUMP_IR", dir.c_str(), 1);
  try {
    compile(dynamic, DiskCache(""));
    unsetenv("KILN_DUMP_IR");
    FAIL() << "a dynamic reduction compiled";
  } catch (const CompileError& e) {
    unsetenv("KILN_DUMP_IR");
    const std::string what = e.what();
    EXPECT_NE(what.find("failed in pass 'kiln-convert-to-linalg'"), std::string::npos) << what;
    EXPECT_NE(what.find("dynamic dimensions"), std::string::npos) << what;
    const size_t at = what.find("the IR is in ");
    ASSERT_NE(at, std::string::npos) << what;
    std::string path = what.substr(at + 13, what.find(" (at ", at) - at - 13);
    EXPECT_TRUE(std::filesystem::exists(path)) << path;
  }
}

}  // namespace
}  // namespace kiln::runtime

// runtime/cpu/GenericProgram with the disk cache: a `?` program compiled once for all sizes
// is stored (plan and kernels' object), and a later compile of the same program under
// another name, in a fresh context as a new process would have, loads it instead of
// compiling, runs every size as the first did, and names its own source lines in errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "dialect/KilnDialect.h"
#include "kiln/core/Error.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "runtime/cpu/GenericProgram.h"
#include "test/unit/runtime/RuntimeTestSupport.h"

namespace kiln::runtime {
namespace {

// Softmax-like rows of x + y, with the sum's line named LINE.
constexpr const char* kProgram = R"mlir(
func.func @NAME(%x: tensor<?x8xf32> {kiln.input = 0 : i64}, %y: tensor<?x8xf32> {kiln.input = 1 : i64}) -> (tensor<?x8xf32> {kiln.output = 0 : i64}) {
  %s = kiln.add %x, %y : tensor<?x8xf32> loc("user.cpp":LINE:5)
  %m = kiln.reduce max %s, dims = [1] : tensor<?x8xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %s, %c0 : tensor<?x8xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0], shape = [%n, 8] : tensor<?xf32>
  %d = kiln.sub %s, %mb : tensor<?x8xf32>
  %e = kiln.exp %d : tensor<?x8xf32>
  return %e : tensor<?x8xf32>
}
)mlir";

std::string program(const std::string& name, int line) {
  std::string text = kProgram;
  text.replace(text.find("NAME"), 4, name);
  text.replace(text.find("LINE"), 4, std::to_string(line));
  return text;
}

// A program parsed into its own context, as a new process would, and compiled for all sizes.
struct Generic {
  Generic(const std::string& source, const DiskCache& cache) {
    context.loadDialect<mlir::kiln::KilnDialect, mlir::func::FuncDialect, mlir::arith::ArithDialect,
                        mlir::tensor::TensorDialect>();
    module = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
    auto main = *module->getOps<mlir::func::FuncOp>().begin();
    std::string why;
    ::testing::internal::CaptureStderr();
    setenv("KILN_LOG", "compile", 1);
    compiled = cpu::compileGeneric(main, nullptr, {}, "test", SourceLoc::current(), why, &cache);
    unsetenv("KILN_LOG");
    log = ::testing::internal::GetCapturedStderr();
    EXPECT_TRUE(compiled) << why;
  }
  Tensor run(const Tensor& x, const Tensor& y) const {
    auto instance = compiled->instantiate({x.sizes(), y.sizes()}, "test", "the program",
                                          SourceLoc::current());
    EXPECT_TRUE(instance);
    return instance->run(std::vector<Tensor>{x, y})[0];
  }
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::shared_ptr<const ShapeGenericProgram> compiled;
  std::string log;
};

std::string freshDirectory(const std::string& name) {
  std::string dir = std::string(::testing::TempDir()) + "/" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

size_t entries(const DiskCache& cache) {
  return size_t(std::distance(std::filesystem::directory_iterator(cache.directory()), {}));
}

TEST(GenericProgramTest, ASecondCompileUnderAnotherNameLoadsFromTheDiskCache) {
  DiskCache cache(freshDirectory("generic"));
  std::vector<int64_t> rows = {1, 3, 17, 64};
  std::vector<Tensor> xs, ys, first;
  {
    Generic cold(program("first", 11), cache);
    EXPECT_NE(cold.log.find("kiln: compiled @first once for all sizes"), std::string::npos) << cold.log;
    for (int64_t n : rows) {
      xs.push_back(randn({n, 8}));
      ys.push_back(randn({n, 8}));
      first.push_back(cold.run(xs.back(), ys.back()));
      Tensor s = add(xs.back(), ys.back());
      EXPECT_TRUE(allclose(first.back(), exp(sub(s, amax(s, {1}, true))), 1e-5, 1e-6)) << n;
    }
  }
  EXPECT_EQ(entries(cache), 1u);

  Generic warm(program("second", 42), cache);
  EXPECT_NE(warm.log.find("kiln: loaded @second for all sizes from the disk cache"),
            std::string::npos)
      << warm.log;
  EXPECT_EQ(warm.log.find("kiln: compiled"), std::string::npos) << warm.log;
  for (size_t k = 0; k < rows.size(); ++k) EXPECT_TRUE(equal(warm.run(xs[k], ys[k]), first[k])) << rows[k];
  EXPECT_EQ(entries(cache), 1u);

  // Sizes that do not fit name the loading program's line, not the one that compiled it.
  try {
    warm.run(randn({3, 8}), randn({4, 8}));
    ADD_FAILURE() << "mismatched rows ran";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("user.cpp:42"), std::string::npos) << what;
    EXPECT_EQ(what.find("user.cpp:11"), std::string::npos) << what;
  }
}

// Calls reuse the arenas finished calls give back; calls at once from several threads each
// get an arena of their own (a shared one would mix their rows).
TEST(GenericProgramTest, ConcurrentCallsNeverShareAnArena) {
  Generic generic(program("rows", 7), DiskCache(""));
  auto instance = generic.compiled->instantiate({{200, 8}, {200, 8}}, "test", "the program",
                                                SourceLoc::current());
  ASSERT_TRUE(instance);
  constexpr int kThreads = 4, kCalls = 40;
  std::vector<std::thread> threads;
  std::vector<int> wrong(kThreads, 0);
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      Tensor x = full({200, 8}, double(t)), y = randn({200, 8});
      Tensor s = add(x, y);
      const Tensor expected = exp(sub(s, amax(s, {1}, true)));
      for (int k = 0; k < kCalls; ++k)
        wrong[size_t(t)] += !allclose(instance->run(std::vector<Tensor>{x, y})[0], expected, 1e-5, 1e-6);
    });
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong, std::vector<int>(kThreads, 0));
}

TEST(GenericProgramTest, WithoutADiskCacheEachCompileCompiles) {
  DiskCache off("");
  Generic one(program("one", 1), off), two(program("one", 1), off);
  EXPECT_NE(two.log.find("kiln: compiled @one once for all sizes"), std::string::npos) << two.log;
  Tensor x = randn({5, 8}), y = randn({5, 8});
  EXPECT_TRUE(equal(one.run(x, y), two.run(x, y)));
}

}  // namespace
}  // namespace kiln::runtime

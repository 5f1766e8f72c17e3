// Executable with the disk cache, IR dumps and pipeline failures: a second compile of the
// same function loads it, programs that differ only in names and lines share one compiled
// code in memory and on disk, a corrupt entry is rebuilt, KILN_DUMP_IR writes every stage, and
// a failing pass is a CompileError naming it and the file holding its IR; HALIDE's kernels
// and runtime are objects in the cache, loaded by a later process without Halide.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "dialect/KilnDialect.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "runtime/Executable.h"
#include "runtime/halide/HalideKernels.h"
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

std::shared_ptr<const Executable> compile(const std::string& source, const DiskCache& cache,
                                          const KernelCodegen* kernels = nullptr) {
  Parsed parsed(source.c_str());
  return Executable::compile(parsed.main(), nullptr, "test", SourceLoc::current(), &cache, {},
                             kernels);
}

TEST(ExecutableCacheTest, ASecondCompileLoadsFromTheDiskCache) {
  DiskCache cache(freshDirectory("warm"));
  auto cold = compile(kProgram, cache);
  EXPECT_EQ(cold->origin(), Executable::Origin::Compiled);
  Tensor x = randn({4, 8});
  const Tensor expected = cold->run(std::vector<Tensor>{x})[0];
  const int64_t arenaBytes = cold->arenaBytes();
  cold.reset();  // as in a new process: nothing compiled is alive to share
  auto warm = compile(kProgram, cache);
  EXPECT_TRUE(warm->loadedFromCache());
  EXPECT_TRUE(equal(warm->run(std::vector<Tensor>{x})[0], expected));
  EXPECT_EQ(warm->arenaBytes(), arenaBytes);
}

// `source` with its function called `name`.
std::string named(const char* source, const std::string& name) {
  std::string text = source;
  text.replace(text.find("@main"), 5, "@" + name);
  return text;
}

// stderr of `compile` with KILN_LOG=compile.
template <class Compile>
std::string compileLog(Compile compile) {
  ::testing::internal::CaptureStderr();
  setenv("KILN_LOG", "compile", 1);
  compile();
  unsetenv("KILN_LOG");
  return ::testing::internal::GetCapturedStderr();
}

// Two programs that differ only in their names (nn::Graph's TrainGraph_0_step and
// TrainGraph_1_step) compile once: the second runs the first's code while the first is
// alive, and a third, after both are gone, loads the entry the first stored.
TEST(ExecutableCacheTest, ProgramsThatDifferOnlyInNameCompileOnce) {
  DiskCache cache(freshDirectory("names"));
  Tensor x = randn({4, 8});
  const Tensor expected = exp(sub(x, amax(x, {1}, true)));
  std::shared_ptr<const Executable> first, second;
  compileLog([&] { first = compile(named(kProgram, "first"), cache); });
  const std::string log = compileLog([&] { second = compile(named(kProgram, "second"), cache); });
  EXPECT_EQ(first->origin(), Executable::Origin::Compiled);
  EXPECT_EQ(second->origin(), Executable::Origin::Shared);
  EXPECT_NE(log.find("kiln: reused @first's code for @second"), std::string::npos) << log;
  EXPECT_EQ(log.find("kiln: compiled"), std::string::npos) << log;
  EXPECT_TRUE(allclose(second->run(std::vector<Tensor>{x})[0], expected, 1e-5, 1e-6));
  EXPECT_TRUE(allclose(first->run(std::vector<Tensor>{x})[0], expected, 1e-5, 1e-6));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(cache.directory()), {}), 1);

  first.reset();
  second.reset();
  auto third = compile(named(kProgram, "third"), cache);
  EXPECT_EQ(third->origin(), Executable::Origin::DiskCache);
  EXPECT_TRUE(allclose(third->run(std::vector<Tensor>{x})[0], expected, 1e-5, 1e-6));
}

// State names are not part of the program either: a graph's modules registered under other
// names make the same key.
TEST(ExecutableCacheTest, StateNamesAreNotPartOfTheKey) {
  constexpr const char* kSgd = R"mlir(
func.func @main(%g: tensor<16xf32> {kiln.input = 0 : i64}, %w: tensor<16xf32> {kiln.state = "{W}"})
    -> (tensor<16xf32> {kiln.state_update = "{W}"}) {
  %lr = kiln.constant dense<0.5> : tensor<16xf32>
  %step = kiln.mul %g, %lr : tensor<16xf32>
  %new = kiln.sub %w, %step : tensor<16xf32>
  return %new : tensor<16xf32>
}
)mlir";
  auto withState = [&](const std::string& name) {
    std::string text = kSgd;
    for (size_t at; (at = text.find("{W}")) != std::string::npos;) text.replace(at, 3, name);
    return text;
  };
  DiskCache cache("");
  auto first = compile(withState("model.weight"), cache);
  auto second = compile(withState("net.weight"), cache);
  EXPECT_EQ(second->origin(), Executable::Origin::Shared);
  Tensor w = full({16}, 3.0);
  std::vector<Tensor> results = second->run(std::vector<Tensor>{ones({16}), w});
  EXPECT_EQ(results[0].rawData(), w.rawData()) << "the update is still in place";
  EXPECT_TRUE(equal(w, full({16}, 2.5)));
}

// KILN_LLVM_OPT picks LLVM's level for the programs compiled after it is set, and is part
// of the key: the same program at another level is compiled again, and computes the same.
TEST(ExecutableCacheTest, KilnLlvmOptPicksTheLevelAndKeysTheCache) {
  DiskCache cache("");
  Tensor x = randn({4, 8});
  auto standard = compile(kProgram, cache);
  setenv("KILN_LLVM_OPT", "0", 1);
  auto o0 = compile(kProgram, cache);
  setenv("KILN_LLVM_OPT", "fast", 1);
  try {
    compile(kProgram, cache);
    FAIL() << "KILN_LLVM_OPT=fast was taken";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("KILN_LLVM_OPT is 'fast'; it takes 0, 1, 2 or 3"),
              std::string::npos) << e.what();
  }
  unsetenv("KILN_LLVM_OPT");
  EXPECT_EQ(o0->origin(), Executable::Origin::Compiled);
  EXPECT_TRUE(allclose(o0->run(std::vector<Tensor>{x})[0], standard->run(std::vector<Tensor>{x})[0],
                       1e-5, 1e-6));
  EXPECT_EQ(compile(kProgram, cache)->origin(), Executable::Origin::Shared);
}

// A program with a callback at `line` of `file`; the callback's result has the wrong shape,
// which is an error naming the callback's line.
constexpr const char* kCallbackProgram = R"mlir(
func.func @main(%x: tensor<2xf32> {kiln.input = 0 : i64}) -> (tensor<2xf32> {kiln.output = 0 : i64}) {
  %cb = kiln.callback(%x) callee = 0 : (tensor<2xf32>) -> tensor<2xf32> loc("{FILE}":{LINE}:5)
  %e = kiln.exp %cb : tensor<2xf32> loc("{FILE}":{LINE}:9)
  return %e : tensor<2xf32>
}
)mlir";

std::string runError(const Executable& program) {
  try {
    program.run(std::vector<Tensor>{ones({2})});
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// Errors of a program that reuses another's code (in memory or from the disk cache) name
// the lines of its own source, not of the program that compiled the code.
TEST(ExecutableCacheTest, AReusedProgramNamesItsOwnLines) {
  CallbackTable callbacks;
  callbacks.add([](std::span<const Tensor>) { return std::vector<Tensor>{ones({3})}; });
  auto at = [](const std::string& file, int line) {
    std::string text = kCallbackProgram;
    for (size_t k; (k = text.find("{FILE}")) != std::string::npos;) text.replace(k, 6, file);
    for (size_t k; (k = text.find("{LINE}")) != std::string::npos;) text.replace(k, 6, std::to_string(line));
    return text;
  };
  auto compileAt = [&](const std::string& file, int line, const DiskCache& cache) {
    Parsed parsed(at(file, line).c_str());
    return Executable::compile(parsed.main(), &callbacks, "test", SourceLoc::current(), &cache);
  };
  DiskCache cache(freshDirectory("lines"));
  auto first = compileAt("first.cc", 3, cache);
  auto second = compileAt("second.cc", 7, cache);
  EXPECT_EQ(second->origin(), Executable::Origin::Shared);
  EXPECT_NE(runError(*first).find("'kiln.callback' at first.cc:3:5"), std::string::npos) << runError(*first);
  EXPECT_NE(runError(*second).find("'kiln.callback' at second.cc:7:5"), std::string::npos) << runError(*second);

  first.reset();
  second.reset();
  auto third = compileAt("third.cc", 11, cache);
  EXPECT_EQ(third->origin(), Executable::Origin::DiskCache);
  EXPECT_NE(runError(*third).find("'kiln.callback' at third.cc:11:5"), std::string::npos) << runError(*third);
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
  rebuilt.reset();
  EXPECT_TRUE(compile(kProgram, cache)->loadedFromCache()) << "the rebuild stored a good entry";
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Fused kernels for HALIDE: a softmax's row kernels and an elementwise chain.
constexpr const char* kHalideProgram = R"mlir(
func.func @main(%x: tensor<64x40xf32> {kiln.input = 0 : i64}, %w: tensor<40xf32> {kiln.input = 1 : i64})
    -> (tensor<64x40xf32> {kiln.output = 0 : i64}, tensor<64x40xf32> {kiln.output = 1 : i64}) {
  %m = kiln.reduce max %x, dims = [1] keep_dims : tensor<64x40xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0, 1], shape = [64, 40] : tensor<64x1xf32>
  %e = kiln.exp %x : tensor<64x40xf32>
  %d = kiln.sub %x, %mb : tensor<64x40xf32>
  %ed = kiln.exp %d : tensor<64x40xf32>
  %s = kiln.reduce sum %ed, dims = [1] keep_dims : tensor<64x40xf32>
  %sb = kiln.broadcast_in_dim %s, dims = [0, 1], shape = [64, 40] : tensor<64x1xf32>
  %p = kiln.div %ed, %sb : tensor<64x40xf32>
  %wb = kiln.broadcast_in_dim %w, dims = [1], shape = [64, 40] : tensor<40xf32>
  %t = kiln.tanh %e : tensor<64x40xf32>
  %u = kiln.mul %t, %wb : tensor<64x40xf32>
  return %p, %u : tensor<64x40xf32>, tensor<64x40xf32>
}
)mlir";

// The program's results on fixed inputs, with NaN and infinity among them.
std::vector<Tensor> halideResults(const std::shared_ptr<const Executable>& program) {
  manual_seed(7);
  Tensor x = randn({64, 40}), w = randn({40});
  x.data_ptr<float>()[3 * 40 + 5] = std::numeric_limits<float>::quiet_NaN();
  x.data_ptr<float>()[9 * 40 + 1] = std::numeric_limits<float>::infinity();
  return program->run(std::vector<Tensor>{x, w});
}

// Bit for bit (NaN matching NaN), every result.
void expectIdentical(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) EXPECT_TRUE(equal(a[k], b[k])) << "result " << k;
}

// Entries of `cache` whose bytes hold `marker`: HALIDE's kernels or its runtime.
std::vector<std::string> entriesHolding(const DiskCache& cache, const std::string& marker) {
  std::vector<std::string> paths;
  for (const auto& f : std::filesystem::directory_iterator(cache.directory())) {
    std::ifstream in(f.path(), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.find(marker) != std::string::npos) paths.push_back(f.path());
  }
  return paths;
}

// Flips a byte near the end of `path` (in the object), leaving its size as it was.
void flipAByte(const std::string& path) {
  std::fstream file(path, std::ios::binary | std::ios::in | std::ios::out);
  file.seekg(-100, std::ios::end);
  char byte = 0;
  file.get(byte);
  file.seekp(-100, std::ios::end);
  file.put(char(byte ^ 0x5a));
}

// A second process (here: the same one, its in-memory kernels and Halide runtime forgotten)
// compiling the program again with the same KILN_CACHE_DIR loads HALIDE's objects and runs
// no Halide compile; results are the first process's and Halide's JIT's, bit for bit.
TEST(ExecutableCacheTest, HalideKernelsAreLoadedFromTheDiskCacheWithoutHalide) {
  DiskCache cache(freshDirectory("halide-warm"));
  halide::forgetHalideKernels();
  const halide::HalideCounts start = halide::halideCounts();
  auto cold = compile(kHalideProgram, cache, &halide::halideKernels());
  const std::vector<Tensor> first = halideResults(cold);
  cold.reset();  // nothing compiled is alive to share, as in a second process
  const halide::HalideCounts compiled = halide::halideCounts();
  const int64_t kernels = compiled.compiled - start.compiled;
  EXPECT_GE(kernels, 2);
  EXPECT_EQ(compiled.loaded, start.loaded);
  EXPECT_EQ(entriesHolding(cache, "kiln-halide-kernel/1").size(), size_t(kernels));
  EXPECT_EQ(entriesHolding(cache, "kiln-halide-runtime/1").size(), 1u);

  halide::forgetHalideKernels();
  ::testing::internal::CaptureStderr();
  setenv("KILN_LOG", "compile", 1);
  auto warm = compile(kHalideProgram, cache, &halide::halideKernels());
  unsetenv("KILN_LOG");
  const std::string log = ::testing::internal::GetCapturedStderr();
  const halide::HalideCounts loaded = halide::halideCounts();
  EXPECT_TRUE(warm->loadedFromCache());
  EXPECT_EQ(loaded.compiled, compiled.compiled) << "a warm start ran Halide's compiler";
  EXPECT_EQ(loaded.runtimesCompiled, compiled.runtimesCompiled);
  EXPECT_EQ(loaded.loaded - compiled.loaded, kernels);
  EXPECT_EQ(count(log, "(object from the disk cache)"), size_t(kernels)) << log;
  expectIdentical(halideResults(warm), first);
  warm.reset();

  // KILN_CACHE_DIR=off: Halide's JIT compiles the same pipelines.
  auto jit = compile(kHalideProgram, DiskCache(""), &halide::halideKernels());
  expectIdentical(halideResults(jit), first);
}

// A corrupt kernel object or runtime in the cache is reported, Halide compiles it again, and
// the results are the same.
TEST(ExecutableCacheTest, ACorruptHalideObjectIsRecompiled) {
  DiskCache cache(freshDirectory("halide-corrupt"));
  halide::forgetHalideKernels();
  const std::vector<Tensor> first = halideResults(compile(kHalideProgram, cache, &halide::halideKernels()));
  const std::vector<std::string> objects = entriesHolding(cache, "kiln-halide-kernel/1");
  const int64_t kernels = int64_t(objects.size());
  EXPECT_GE(kernels, 2);
  for (const std::string& path : objects) flipAByte(path);
  for (const std::string& path : entriesHolding(cache, "kiln-halide-runtime/1")) flipAByte(path);

  halide::forgetHalideKernels();
  const halide::HalideCounts before = halide::halideCounts();
  ::testing::internal::CaptureStderr();
  auto rebuilt = compile(kHalideProgram, cache, &halide::halideKernels());
  const std::string report = ::testing::internal::GetCapturedStderr();
  const halide::HalideCounts after = halide::halideCounts();
  EXPECT_TRUE(rebuilt->loadedFromCache()) << "the plan's own entry was not touched";
  EXPECT_EQ(after.compiled - before.compiled, kernels);
  EXPECT_EQ(after.runtimesCompiled - before.runtimesCompiled, 1);
  EXPECT_EQ(after.loaded, before.loaded);
  EXPECT_EQ(count(report, "checksum mismatch"), size_t(kernels) + 1) << report;
  expectIdentical(halideResults(rebuilt), first);

  halide::forgetHalideKernels();
  compile(kHalideProgram, cache, &halide::halideKernels());
  EXPECT_EQ(halide::halideCounts().loaded - after.loaded, kernels) << "the rebuild stored good entries";
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

// Scratch a kernel allocates (a sum's f64 accumulators, 4 KiB each for 512 rows: more
// than kiln-hoist-scratch puts on the stack) is freed before it returns, also in the
// runtime's context (whose deallocation models the pipeline must register).
TEST(ExecutableCacheTest, KernelScratchIsFreed) {
  const std::string text = loweredIrOf(R"mlir(
func.func @main(%x: tensor<512x128xf32> {kiln.input = 0 : i64}) -> (tensor<512xf32> {kiln.output = 0 : i64}) {
  %s = kiln.reduce sum %x, dims = [1] : tensor<512x128xf32>
  return %s : tensor<512xf32>
}
)mlir", "scratch");
  EXPECT_GE(count(text, "llvm.call @malloc("), 1u) << text;
  EXPECT_EQ(count(text, "llvm.call @malloc("), count(text, "llvm.call @free(")) << text;
}

TEST(ExecutableCacheTest, AFailingPassNamesItselfAndItsIr) {
  // Executable compiles static programs (a `?` one goes to runtime/cpu/GenericProgram): with
  // bare pointers a `?` kernel is never converted to LLVM, which kiln-merge-kernels reports.
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
    FAIL() << "a dynamic program compiled as a static one";
  } catch (const CompileError& e) {
    unsetenv("KILN_DUMP_IR");
    const std::string what = e.what();
    EXPECT_NE(what.find("failed in pass 'kiln-merge-kernels'"), std::string::npos) << what;
    EXPECT_NE(what.find("is still in the kernels module after lowering"), std::string::npos) << what;
    const size_t at = what.find("the IR is in ");
    ASSERT_NE(at, std::string::npos) << what;
    std::string path = what.substr(at + 13, what.find(" (at ", at) - at - 13);
    EXPECT_TRUE(std::filesystem::exists(path)) << path;
  }
}

}  // namespace
}  // namespace kiln::runtime

// jit dump and load: a traced model written in both formats, loaded back and run bitwise
// as the trace; names, blobs and locations in the file; and every error of both sides
// (what dump refuses, file-system failures without a torn or leftover file, bad files,
// wrong inputs to a loaded graph).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <tuple>
#include <vector>

#include "kiln/core/Functional.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"
#include "kiln/jit/Trace.h"
#include "test/unit/frontend/core/ExpectError.h"
#include "test/unit/jit/TraceTestSupport.h"

namespace kiln {
namespace {

using testing::sameBits;
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using Format = jit::DumpOptions::Format;

Tensor input(Shape shape, uint64_t seed) { return testing::seededInput(std::move(shape), seed); }

// A small classifier: its weights have more than 16 elements (blobs in a dump), its bias
// fewer (inline).
struct Classifier {
  Tensor w1 = input({4, 8}, 1);
  Tensor b1 = input({8}, 2);
  Tensor w2 = input({8, 3}, 3);
  std::tuple<Tensor, Tensor> operator()(const Tensor& x, const Tensor& shift) const {
    Tensor logits = add(matmul(relu(add(matmul(x, w1), b1)), w2), shift);
    return {logits, softmax(logits, 1)};
  }
};

// A fresh directory per test under the test's temporary directory.
fs::path scratch() {
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  fs::path dir = fs::path(::testing::TempDir()) / "DumpTest" /
                 (std::string(test->test_suite_name()) + "." + test->name());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string readText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void writeText(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// The names of the files in `dir`, to see that nothing (a temporary) was left behind.
std::vector<std::string> filesIn(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

auto traceClassifier(const Classifier& model) {
  return jit::trace([&](Tensor x, Tensor shift) { return model(x, shift); },
                    {.capture_as_const = true});
}

class DumpFormats : public ::testing::TestWithParam<Format> {};

TEST_P(DumpFormats, LoadedGraphRunsBitwiseAsTheTrace) {
  Classifier model;
  auto traced = traceClassifier(model);
  Tensor x = input({5, 4}, 10), shift = input({3}, 11);
  traced(x, shift);                         // records
  auto [logits, probs] = traced(x, shift);  // runs the recording in process
  fs::path path = scratch() / "classifier";
  traced.dump(
      path,
      {.format = GetParam(), .input_names = {"x", "shift"}, .output_names = {"logits", "probs"}});

  jit::LoadedGraph graph = jit::load(path);
  EXPECT_EQ(graph.input_names(), (std::vector<std::string>{"x", "shift"}));
  EXPECT_EQ(graph.output_names(), (std::vector<std::string>{"logits", "probs"}));
  std::vector<Tensor> out = graph({x, shift});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(sameBits(out[0], logits));
  EXPECT_TRUE(sameBits(out[1], probs));

  Tensor x2 = input({5, 4}, 12);
  auto [logits2, probs2] = traced(x2, shift);
  out = graph({x2, shift});
  EXPECT_TRUE(sameBits(out[0], logits2));
  EXPECT_TRUE(sameBits(out[1], probs2));
  EXPECT_THAT(graph.str(), HasSubstr("kiln.name = \"logits\""));
}

TEST_P(DumpFormats, DefaultNamesAreXAndY) {
  auto traced =
      jit::trace([](Tensor a, Tensor b) { return mul(a, b); }, {.capture_as_const = true});
  traced(ones({2}), ones({2}));
  fs::path path = scratch() / "mul";
  traced.dump(path, {.format = GetParam()});
  jit::LoadedGraph graph = jit::load(path);
  EXPECT_EQ(graph.input_names(), (std::vector<std::string>{"x0", "x1"}));
  EXPECT_EQ(graph.output_names(), (std::vector<std::string>{"y0"}));
}

INSTANTIATE_TEST_SUITE_P(BytecodeAndText, DumpFormats,
                         ::testing::Values(Format::Bytecode, Format::Text), [](const auto& info) {
                           return info.param == Format::Bytecode ? "Bytecode" : "Text";
                         });

TEST(DumpTest, TextHoldsLargeConstantsAsBlobsInTheResourceSection) {
  Classifier model;
  auto traced = traceClassifier(model);
  traced(input({5, 4}, 10), input({3}, 11));
  fs::path path = scratch() / "classifier.mlir";
  traced.dump(path, {.format = Format::Text});
  std::string text = readText(path);
  EXPECT_THAT(text, HasSubstr("dense_resource<constant_0> : tensor<8x3xf32>"));
  EXPECT_THAT(text, HasSubstr("dense_resource<constant_1> : tensor<4x8xf32>"));
  EXPECT_THAT(text, HasSubstr("kiln.constant dense<"));  // the bias, 8 elements
  EXPECT_THAT(text, HasSubstr("{-#"));
  EXPECT_THAT(text, HasSubstr("dialect_resources: {"));
  EXPECT_THAT(text, HasSubstr("constant_0: \"0x"));  // the blob itself, not elided
  EXPECT_THAT(text, HasSubstr("{kiln.input = 0 : i64, kiln.name = \"x0\"}"));
  EXPECT_THAT(text, HasSubstr("{kiln.name = \"y1\", kiln.output = 1 : i64}"));
  EXPECT_THAT(text, Not(HasSubstr("loc(")));
  EXPECT_THAT(text, Not(HasSubstr("DumpTest.cpp")));
}

TEST(DumpTest, LocationsOnDemand) {
  auto traced = jit::trace([](Tensor x) { return exp(x); }, {.capture_as_const = true});
  traced(ones({2}));
  fs::path dir = scratch();
  traced.dump(dir / "with.mlir", {.format = Format::Text, .locations = true});
  EXPECT_THAT(readText(dir / "with.mlir"), HasSubstr("DumpTest.cpp"));
  traced.dump(dir / "with.mlirbc", {.locations = true});
  EXPECT_THAT(readText(dir / "with.mlirbc"), HasSubstr("DumpTest.cpp"));
  traced.dump(dir / "without.mlirbc");
  EXPECT_THAT(readText(dir / "without.mlirbc"), Not(HasSubstr("DumpTest.cpp")));
}

TEST(DumpTest, DumpingTwiceWritesTheSameBytes) {
  Classifier model;
  auto traced = traceClassifier(model);
  traced(input({5, 4}, 10), input({3}, 11));
  fs::path dir = scratch();
  for (Format format : {Format::Bytecode, Format::Text}) {
    traced.dump(dir / "a", {.format = format});
    traced.dump(dir / "b", {.format = format});
    EXPECT_EQ(readText(dir / "a"), readText(dir / "b"));
  }
}

TEST(DumpTest, NeedsCaptureAsConst) {
  Tensor w = ones({2});
  auto traced = jit::trace([&](Tensor x) { return mul(x, w); });
  traced(ones({2}));
  fs::path dir = scratch();
  EXPECT_KILN_ERROR(traced.dump(dir / "m"), TraceError,
                    "kiln::dump: 'main' was traced without capture_as_const, so its state "
                    "(parameters, buffers) is bound by reference and cannot be written out; "
                    "trace it with {.capture_as_const = true} to dump it" +
                        testing::at());
  EXPECT_EQ(filesIn(dir), std::vector<std::string>{});
}

TEST(DumpTest, NeedsExactlyOneRecording) {
  auto traced = jit::trace([](Tensor x) { return neg(x); }, {.capture_as_const = true});
  EXPECT_KILN_ERROR(traced.dump(scratch() / "m"), TraceError,
                    "kiln::dump: 'main' has 0 recordings; dump needs exactly one (call it once, "
                    "with the input shapes to dump, before dump)" +
                        testing::at());
  traced(ones({1}));
  traced(ones({2}));
  EXPECT_KILN_ERROR(traced.dump(scratch() / "m"), TraceError,
                    "kiln::dump: 'main' has 2 recordings; dump needs exactly one (call it once, "
                    "with the input shapes to dump, before dump)" +
                        testing::at());
}

TEST(DumpTest, AGraphThatWritesGradientsCannotBeDumped) {
  Tensor w = ones({2});
  w.requires_grad_(true);
  auto traced = jit::trace(
      [&](Tensor x) {
        Tensor loss = sum(mul(x, w));
        loss.backward();
        return loss;
      },
      {.capture_as_const = true});
  traced(ones({2}));
  EXPECT_KILN_ERROR(traced.dump(scratch() / "m"), TraceError,
                    "kiln::dump: 'main' returns more than its outputs (result 1 is "
                    "kiln.grad_update); a dumped graph has no state to write back, so dump a "
                    "function that only returns values" +
                        testing::at());
}

TEST(DumpTest, NamesMustMatchTheInputsAndOutputs) {
  auto traced =
      jit::trace([](Tensor a, Tensor b) { return add(a, b); }, {.capture_as_const = true});
  traced(ones({2}), ones({2}));
  fs::path dir = scratch();
  EXPECT_KILN_ERROR(
      traced.dump(dir / "m", {.input_names = {"a"}}), TraceError,
      "kiln::dump: input_names has 1 names but the graph has 2 inputs" + testing::at());
  EXPECT_KILN_ERROR(
      traced.dump(dir / "m", {.output_names = {"s", "t"}}), TraceError,
      "kiln::dump: output_names has 2 names but the graph has 1 outputs" + testing::at());
  EXPECT_KILN_ERROR(traced.dump(dir / "m", {.input_names = {"a", "a"}}), TraceError,
                    "kiln::dump: input name 'a' is given twice" + testing::at());
  EXPECT_KILN_ERROR(traced.dump(dir / "m", {.output_names = {"out/s"}}), TraceError,
                    "kiln::dump: output name 'out/s' is not usable as a file name and flag "
                    "(empty, or has '/', '=' or NUL)" +
                        testing::at());
  EXPECT_EQ(filesIn(dir), std::vector<std::string>{});
}

TEST(DumpTest, FileSystemFailuresAreIOErrorsAndLeaveNoTemporary) {
  auto traced = jit::trace([](Tensor x) { return neg(x); }, {.capture_as_const = true});
  traced(ones({2}));
  fs::path dir = scratch();
  std::string missing = (dir / "no-such-dir" / "m.mlirbc").string();
  EXPECT_KILN_ERROR_HAS(
      traced.dump(missing), IOError,
      "kiln::dump: " + missing + ": cannot create the temporary file " + missing + ".tmp.");
  // A directory in the way: the temporary is written, the rename fails, and it is removed.
  fs::create_directory(dir / "taken");
  std::string taken = (dir / "taken").string();
  EXPECT_KILN_ERROR_HAS(traced.dump(taken), IOError,
                        "kiln::dump: " + taken + ": cannot rename " + taken + ".tmp.");
  EXPECT_EQ(filesIn(dir), std::vector<std::string>{"taken"});
  EXPECT_EQ(filesIn(dir / "taken"), std::vector<std::string>{});
}

TEST(DumpTest, AnExistingFileIsReplacedWhole) {
  auto traced = jit::trace([](Tensor x) { return neg(x); }, {.capture_as_const = true});
  traced(ones({2}));
  fs::path path = scratch() / "m.mlir";
  writeText(path, std::string(100000, 'x'));
  traced.dump(path, {.format = Format::Text});
  EXPECT_THAT(readText(path), Not(HasSubstr("xxx")));
  EXPECT_EQ(jit::load(path).input_names(), std::vector<std::string>{"x0"});
}

// ---- load ------------------------------------------------------------------------------

TEST(LoadTest, MissingTruncatedAndCorruptFilesAreIOErrors) {
  Classifier model;
  auto traced = traceClassifier(model);
  traced(input({5, 4}, 10), input({3}, 11));
  fs::path dir = scratch();
  std::string missing = (dir / "missing.mlirbc").string();
  EXPECT_KILN_ERROR(
      jit::load(missing), IOError,
      "kiln::load: " + missing + ": cannot open: No such file or directory" + testing::at());
  EXPECT_KILN_ERROR(jit::load(dir.string()), IOError,
                    "kiln::load: " + dir.string() + ": is a directory" + testing::at());

  traced.dump(dir / "whole.mlirbc");
  std::string bytes = readText(dir / "whole.mlirbc");
  // Bytecode is checked against the hash dump() wrote before MLIR's reader sees it.
  for (size_t keep : {bytes.size() / 2, bytes.size() - 1, size_t(10), size_t(5)}) {
    writeText(dir / "cut.mlirbc", bytes.substr(0, keep));
    EXPECT_KILN_ERROR_HAS(jit::load(dir / "cut.mlirbc"), IOError,
                          "kiln::load: " + (dir / "cut.mlirbc").string() + ": damaged bytecode: ");
  }
  for (size_t at : {bytes.size() / 3, bytes.size() - 1}) {
    std::string flipped = bytes;
    flipped[at] = char(flipped[at] ^ 0x10);
    writeText(dir / "flipped.mlirbc", flipped);
    EXPECT_KILN_ERROR_HAS(jit::load(dir / "flipped.mlirbc"), IOError,
                          "kiln::load: " + (dir / "flipped.mlirbc").string() + ": damaged bytecode: ");
  }
  // Another writer's bytecode (here: the producer renamed) has no hash: refused unless
  // KILN_TRUST_BYTECODE=1, then read as before.
  std::string other = bytes;
  const size_t producer = other.find("Kiln xxh3=");
  ASSERT_NE(producer, std::string::npos);
  other.replace(producer, 4, "MLIR");
  writeText(dir / "other.mlirbc", other);
  EXPECT_KILN_ERROR_HAS(jit::load(dir / "other.mlirbc"), IOError,
                        "kiln::load: " + (dir / "other.mlirbc").string() +
                            ": bytecode from another writer (producer 'MLIR xxh3=");
  ::setenv("KILN_TRUST_BYTECODE", "1", 1);
  EXPECT_EQ(jit::load(dir / "other.mlirbc").output_names(), jit::load(dir / "whole.mlirbc").output_names());
  ::unsetenv("KILN_TRUST_BYTECODE");
  traced.dump(dir / "whole.mlir", {.format = Format::Text});
  std::string text = readText(dir / "whole.mlir");
  writeText(dir / "cut.mlir", text.substr(0, text.size() - 40));  // inside the resource section
  EXPECT_KILN_ERROR_HAS(
      jit::load(dir / "cut.mlir"), IOError,
      "kiln::load: " + (dir / "cut.mlir").string() + ": not a valid kiln graph: ");
  writeText(dir / "garbage.mlir", "this is not MLIR\n");
  EXPECT_KILN_ERROR_HAS(
      jit::load(dir / "garbage.mlir"), IOError,
      "kiln::load: " + (dir / "garbage.mlir").string() + ": not a valid kiln graph: line 1:1: ");
}

TEST(LoadTest, AGraphMustBeOneFunctionOfInputsAndOutputs) {
  fs::path dir = scratch();
  auto expectLoadError = [&](const std::string& text, const std::string& what) {
    writeText(dir / "m.mlir", text);
    EXPECT_KILN_ERROR_HAS(jit::load(dir / "m.mlir"), IOError,
                          "kiln::load: " + (dir / "m.mlir").string() + ": " + what);
  };
  expectLoadError("",
                  "holds 0 functions and 0 other top-level ops; a dumped graph holds one "
                  "func.func");
  expectLoadError(R"(
    func.func @main(%x: tensor<2xf32> {kiln.input = 0 : i64}, %w: tensor<2xf32> {kiln.state = "w"})
        -> (tensor<2xf32> {kiln.output = 0 : i64}) {
      %y = kiln.mul %x, %w : tensor<2xf32>
      return %y : tensor<2xf32>
    })",
                  "argument 1 is state 'w' bound by reference; dump the trace with "
                  "capture_as_const");
  expectLoadError(R"(
    func.func @main(%x: tensor<2xf32>) -> (tensor<2xf32> {kiln.output = 0 : i64}) {
      return %x : tensor<2xf32>
    })",
                  "argument 0 is not marked kiln.input = 0 (not a graph written by jit::dump)");
  expectLoadError(R"(
    func.func @main(%x: tensor<2xf32> {kiln.input = 0 : i64}) -> (tensor<2xf32> {kiln.state_update = "w"}) {
      return %x : tensor<2xf32>
    })",
                  "result 0 is not marked kiln.output = 0 (not a graph written by jit::dump)");
  expectLoadError(R"(
    func.func @main(%x: tensor<2xf32> {kiln.input = 0 : i64}) -> (tensor<2xf32> {kiln.output = 0 : i64}) {
      %y = kiln.callback(%x) callee = 0 : (tensor<2xf32>) -> tensor<2xf32>
      return %y : tensor<2xf32>
    })",
                  "calls host code (kiln.callback at ");
  expectLoadError(R"(
    func.func @main(%a: tensor<2xf32> {kiln.input = 0 : i64, kiln.name = "x"},
                    %b: tensor<2xf32> {kiln.input = 1 : i64, kiln.name = "x"})
        -> (tensor<2xf32> {kiln.output = 0 : i64}) {
      return %a : tensor<2xf32>
    })",
                  "input name 'x' is used twice");
  // kiln-run writes DIR/<name>.npy: a file's names are held to dump()'s rule, so none
  // reaches outside DIR.
  expectLoadError(R"(
    func.func @main(%x: tensor<2xf32> {kiln.input = 0 : i64})
        -> (tensor<2xf32> {kiln.output = 0 : i64, kiln.name = "../../escape"}) {
      return %x : tensor<2xf32>
    })",
                  "result 0 is named '../../escape', which is not usable as a file name and "
                  "flag (empty, or has '/', '=' or NUL)");
  expectLoadError(R"(
    func.func @main(%x: tensor<2xf32> {kiln.input = 0 : i64, kiln.name = "a=b"})
        -> (tensor<2xf32> {kiln.output = 0 : i64}) {
      return %x : tensor<2xf32>
    })",
                  "argument 0 is named 'a=b', which is not usable as a file name and flag");
  expectLoadError(R"(
    func.func @main(%x: tensor<2xf32> {kiln.input = 0 : i64, kiln.name = ""})
        -> (tensor<2xf32> {kiln.output = 0 : i64}) {
      return %x : tensor<2xf32>
    })",
                  "argument 0 is named '', which is not usable as a file name and flag");
  expectLoadError("func.func private @main(tensor<2xf32>)", "function 'main' has no body");
  expectLoadError(R"(
    func.func @f() { return }
    func.func @g() { return })",
                  "holds 2 functions and 0 other top-level ops");
  expectLoadError(R"(
    func.func @main(%x: tensor<2xui8> {kiln.input = 0 : i64}) -> (tensor<2xui8> {kiln.output = 0 : i64}) {
      return %x : tensor<2xui8>
    })",
                  "input 'x0': element type ui8 has no kiln dtype");
}

// The CPU compiler takes static shapes: by default a graph with dynamic dims runs on the
// interpreter; KILN_JIT_BACKEND=MLIR asks for compiled code, so it is an error naming them.
// A dumped graph with ? dims runs on inputs of any size that fits, under each backend.
TEST(LoadTest, DynamicGraphsRunOnEverySizeThatFits) {
  fs::path path = scratch() / "dynamic.mlir";
  writeText(path, R"(
    func.func @main(%x: tensor<?x2xf32> {kiln.input = 0 : i64}) -> (tensor<?xf32> {kiln.output = 0 : i64}) {
      %c0 = arith.constant 0 : index
      %n = tensor.dim %x, %c0 : tensor<?x2xf32>
      %c2 = arith.constant 2 : index
      %n2 = arith.muli %n, %c2 : index
      %y = kiln.neg %x : tensor<?x2xf32>
      %f = kiln.reshape %y, shape = [%n2] : tensor<?x2xf32>
      return %f : tensor<?xf32>
    })");
  for (const char* backend : {"", "MLIR", "INTERP"}) {
    SCOPED_TRACE(backend);
    setenv("KILN_JIT_BACKEND", backend, 1);
    jit::LoadedGraph graph = jit::load(path);
    for (int64_t rows : {3, 1, 10}) {
      Tensor x = input({rows, 2}, 5);
      EXPECT_TRUE(sameBits(graph({x})[0], neg(x).reshape({rows * 2}))) << rows;
    }
  }
  unsetenv("KILN_JIT_BACKEND");
}

TEST(LoadTest, WrongInputsAreOneLineErrorsNamingTheInput) {
  Classifier model;
  auto traced = traceClassifier(model);
  traced(input({5, 4}, 10), input({3}, 11));
  fs::path path = scratch() / "classifier.mlirbc";
  traced.dump(path, {.input_names = {"x", "shift"}});
  const SourceLoc where = SourceLoc::current();
  jit::LoadedGraph graph = jit::load(path, where);
  const std::string at = testing::at(where);  // errors of calls point at the load
  EXPECT_KILN_ERROR(graph({input({2, 4}, 1), input({3}, 2)}), ShapeError,
                    "kiln::LoadedGraph: " + path.string() +
                        ": input 'x' has shape [2, 4] but the graph takes [5, 4]" + at);
  EXPECT_KILN_ERROR(graph({input({5, 4}, 1), ones({3}, kFloat64)}), TypeError,
                    "kiln::LoadedGraph: " + path.string() +
                        ": input 'shift' is float64 but the graph takes float32" + at);
  EXPECT_KILN_ERROR(graph({input({5, 4}, 1)}), Error,
                    "kiln::LoadedGraph: " + path.string() +
                        ": the graph takes 2 inputs (x, shift) but was given 1" + at);
}

TEST(LoadTest, OneLoadedGraphFromManyThreads) {
  Classifier model;
  auto traced = traceClassifier(model);
  Tensor shift = input({3}, 11);
  traced(input({5, 4}, 10), shift);
  fs::path path = scratch() / "classifier.mlirbc";
  traced.dump(path);
  jit::LoadedGraph graph = jit::load(path);
  std::vector<Tensor> xs, expected;
  for (uint64_t seed = 0; seed < 4; ++seed) {
    xs.push_back(input({5, 4}, 20 + seed));
    expected.push_back(std::get<0>(model(xs.back(), shift)));
  }
  std::vector<int> ok(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) ok[t] += sameBits(graph({xs[t], shift})[0], expected[t]);
    });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(ok, std::vector<int>(4, 20));
}

}  // namespace
}  // namespace kiln

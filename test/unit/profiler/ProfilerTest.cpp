// kiln::profiler: the Chrome trace of eager ops and a traced program compiled by the MLIR
// backend, checked against the trace event format (never against times); sessions, the
// summary table, KILN_PROFILE and the errors of each path.
#include "kiln/profiler/Profiler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "kiln/core/Cuda.h"
#include "kiln/core/Ops.h"
#include "kiln/jit/Trace.h"
#include "test/unit/frontend/core/ExpectError.h"

namespace kiln::profiler {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

std::string tempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

json readJson(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot open " << path;
  return json::parse(in);
}

// Checks `trace` against the Chrome trace event format as Perfetto reads it: an object
// whose "traceEvents" holds complete events (ph "X": name, cat, ts, dur >= 0, pid, tid,
// args) and metadata events (ph "M"); on each thread, complete events in order of ts and
// nested (each either inside the one before it or after its end). Returns the complete
// events.
std::vector<json> checkedCompleteEvents(const json& trace) {
  EXPECT_TRUE(trace.is_object());
  EXPECT_TRUE(trace.contains("traceEvents") && trace["traceEvents"].is_array());
  std::vector<json> complete;
  std::map<int64_t, std::vector<json>> open;  // per tid, the enclosing events
  for (const json& e : trace["traceEvents"]) {
    SCOPED_TRACE(e.dump());
    EXPECT_TRUE(e.at("name").is_string());
    EXPECT_TRUE(e.at("pid").is_number_integer());
    EXPECT_TRUE(e.at("tid").is_number_integer());
    const std::string ph = e.at("ph");
    EXPECT_TRUE(ph == "X" || ph == "M") << ph;
    if (ph == "M") {
      EXPECT_TRUE(e.at("args").at("name").is_string());
      continue;
    }
    EXPECT_TRUE(e.at("cat").is_string());
    EXPECT_TRUE(e.at("ts").is_number());
    EXPECT_TRUE(e.at("dur").is_number());
    EXPECT_GE(e["ts"].get<double>(), 0);
    EXPECT_GE(e["dur"].get<double>(), 0);
    EXPECT_TRUE(e.at("args").is_object());
    if (e["args"].contains("shapes"))
      for (const json& shape : e["args"]["shapes"]) {
        EXPECT_TRUE(shape.is_array());
        for (const json& dim : shape) EXPECT_TRUE(dim.is_number_integer());
      }
    for (const char* key : {"dtype", "device"})
      if (e["args"].contains(key)) EXPECT_TRUE(e["args"][key].is_string());
    // Nesting, with a nanosecond's slack for the microseconds' rounding.
    constexpr double kSlack = 1e-3;
    std::vector<json>& stack = open[e["tid"].get<int64_t>()];
    const double ts = e["ts"], end = ts + e["dur"].get<double>();
    while (!stack.empty() && stack.back()["ts"].get<double>() + stack.back()["dur"].get<double>() <= ts + kSlack)
      stack.pop_back();
    if (!stack.empty()) {
      EXPECT_GE(ts, stack.back()["ts"].get<double>()) << "out of order on its thread";
      EXPECT_LE(end, stack.back()["ts"].get<double>() + stack.back()["dur"].get<double>() + kSlack)
          << "overlaps " << stack.back().dump() << " without nesting in it";
    }
    stack.push_back(e);
    complete.push_back(e);
  }
  return complete;
}

std::vector<json> named(const std::vector<json>& events, const std::string& cat,
                        const std::string& name) {
  std::vector<json> found;
  for (const json& e : events)
    if (e["cat"] == cat && e["name"] == name) found.push_back(e);
  return found;
}

std::vector<json> inCategory(const std::vector<json>& events, const std::string& cat) {
  std::vector<json> found;
  for (const json& e : events)
    if (e["cat"] == cat) found.push_back(e);
  return found;
}

bool inside(const json& inner, const json& outer) {
  return inner["tid"] == outer["tid"] && inner["ts"].get<double>() >= outer["ts"].get<double>() &&
         inner["ts"].get<double>() + inner["dur"].get<double>() <=
             outer["ts"].get<double>() + outer["dur"].get<double>() + 1e-3;
}

TEST(ProfilerTest, ChromeTraceOfEagerOpsAndACompiledProgram) {
  const std::string path = tempPath("eager_and_compiled.json");
  Tensor w = ones({4, 3}), b = ones({3});
  auto traced = jit::trace([&](Tensor x) { return neg(exp(relu(add(matmul(x, w), b)))); },
                           {.compile = {.backend = "MLIR"}});
  {
    RecordProfile profile(path);
    Tensor x = ones({8, 4});
    Tensor eager = add(matmul(x, w), b);
    for (int call = 0; call < 3; ++call) traced(x);  // records, then runs compiled twice
  }
  std::vector<json> events = checkedCompleteEvents(readJson(path));

  // Eager ops, with their operands' shapes, dtype and device.
  std::vector<json> matmuls = named(events, "op", "matmul");
  ASSERT_FALSE(matmuls.empty());
  EXPECT_EQ(matmuls[0]["args"]["shapes"], json::parse("[[8, 4], [4, 3]]"));
  EXPECT_EQ(matmuls[0]["args"]["dtype"], "float32");
  EXPECT_EQ(matmuls[0]["args"]["device"], "cpu");
  EXPECT_FALSE(named(events, "op", "add").empty());

  // The compile, stage by stage.
  for (const char* stage : {"planning", "lowering", "LLVM", "link"})
    EXPECT_EQ(named(events, "compile", stage).size(), 1u) << stage;

  // Two compiled calls, each with its host op (the matmul) and its fusion kernels, named
  // after their outlined functions, inside it.
  std::vector<json> programs = named(events, "program", "@main");
  ASSERT_EQ(programs.size(), 2u);
  std::vector<json> kernels = inCategory(events, "kernel");
  ASSERT_FALSE(kernels.empty());
  EXPECT_EQ(kernels.size() % 2, 0u);
  for (const json& kernel : kernels) {
    EXPECT_TRUE(std::regex_match(kernel["name"].get<std::string>(), std::regex("main_kernel_[0-9]+")))
        << kernel["name"];
    EXPECT_TRUE(inside(kernel, programs[0]) || inside(kernel, programs[1])) << kernel.dump();
  }
  // The matmul (with the bias added: kiln.addmm as the compiler now has it) is a host op.
  std::vector<json> hostOps = inCategory(events, "host_op");
  ASSERT_EQ(hostOps.size(), 2u);
  for (size_t call = 0; call < 2; ++call) {
    EXPECT_THAT(hostOps[call]["name"].get<std::string>(), ::testing::StartsWith("kiln."));
    EXPECT_TRUE(inside(hostOps[call], programs[call]));
    EXPECT_EQ(hostOps[call]["args"]["shapes"][0], json::parse("[8, 4]"));
    EXPECT_EQ(hostOps[call]["args"]["shapes"][1], json::parse("[4, 3]"));
  }
}

// Operands made before a session, so that their factories are not in it.
const Tensor kTwo = ones({2});

// Host<->device copies (the CUDA driver's staging path) are "copy" events with their bytes;
// the op moving the tensor is an "op" event around its copy.
TEST(ProfilerTest, CopiesToAndFromACudaDeviceAreCopyEvents) {
  if (!cuda::is_available())
    GTEST_SKIP() << "SKIPPED: no CUDA device: " << cuda::unavailable_reason();
  Tensor x = ones({256});
  RecordProfile profile("");
  Tensor back = x.cuda().cpu();
  profile.stop();
  std::vector<std::string> copies;
  for (const Event& e : profile.events())
    if (std::string_view(e.category) == "copy") {
      copies.push_back(e.name);
      EXPECT_EQ(e.bytes, 1024);
      EXPECT_EQ(e.device, "cuda:0");
    }
  EXPECT_EQ(copies, (std::vector<std::string>{"HtoD", "DtoH"}));
}

TEST(ProfilerTest, NothingIsRecordedOutsideASession) {
  EXPECT_FALSE(enabled());
  add(kTwo, kTwo);
  RecordProfile profile("");
  EXPECT_TRUE(enabled());
  EXPECT_TRUE(profile.events().empty());
  mul(kTwo, kTwo);
  profile.stop();
  EXPECT_FALSE(enabled());
  ASSERT_EQ(profile.events().size(), 1u);
  EXPECT_EQ(profile.events()[0].name, "mul");
  profile.stop();  // a second stop does nothing
  EXPECT_EQ(profile.events().size(), 1u);
}

TEST(ProfilerTest, OverlappingSessionsSeeWhatBeganAfterThem) {
  RecordProfile outer("");
  add(kTwo, kTwo);
  {
    RecordProfile inner("");
    mul(kTwo, kTwo);
    inner.stop();
    ASSERT_EQ(inner.events().size(), 1u);
    EXPECT_EQ(inner.events()[0].name, "mul");
  }
  EXPECT_TRUE(enabled());
  outer.stop();
  ASSERT_EQ(outer.events().size(), 2u);
  EXPECT_EQ(outer.events()[0].name, "add");
}

TEST(ProfilerTest, RecordFunctionEnclosesTheOpsInIt) {
  RecordProfile profile("");
  {
    RecordFunction step("step");
    add(kTwo, kTwo);
  }
  profile.stop();
  std::vector<Event> events = profile.events();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].name, "step");
  EXPECT_STREQ(events[1].category, "user");
  EXPECT_LE(events[1].begin, events[0].begin);
  EXPECT_GE(events[1].end, events[0].end);
}

TEST(ProfilerTest, SummaryCountsCallsByCategoryAndName) {
  RecordProfile profile("");
  for (int i = 0; i < 3; ++i) add(kTwo, kTwo);
  sub(kTwo, kTwo);
  profile.stop();
  const std::string table = summary(profile.events());
  EXPECT_THAT(table, HasSubstr("kiln profile: 4 events\n"));
  EXPECT_TRUE(std::regex_search(table, std::regex("\nop +add +3 ")));
  EXPECT_TRUE(std::regex_search(table, std::regex("\nop +sub +1 ")));
}

TEST(ProfilerTest, StartAndStopTheProcessWideSession) {
  const std::string path = tempPath("start_stop.json");
  start(path);
  EXPECT_KILN_ERROR(start("other.json"), Error,
                    "kiln::profiler::start: a session is already recording to '" + path +
                        "'; stop() it first" + testing::at());
  add(ones({2}), ones({2}));
  stop();
  EXPECT_EQ(named(checkedCompleteEvents(readJson(path)), "op", "add").size(), 1u);
  EXPECT_KILN_ERROR(stop(), Error,
                    "kiln::profiler::stop: no session is recording; start() one first" + testing::at());
}

TEST(ProfilerTest, AnUnwritablePathIsAnIOErrorNamingIt) {
  RecordProfile profile("/nonexistent-dir/trace.json");
  EXPECT_KILN_ERROR_HAS(profile.stop(), IOError, "/nonexistent-dir/trace.json");
  ::testing::internal::CaptureStderr();
  { RecordProfile dropped("/nonexistent-dir/dropped.json"); }
  EXPECT_THAT(::testing::internal::GetCapturedStderr(), HasSubstr("/nonexistent-dir/dropped.json"));
}

// KILN_PROFILE and KILN_PROFILE_SUMMARY are read as a program starts: a fresh process (the
// threadsafe death test style runs this binary again) records and writes at exit.
TEST(ProfilerTest, KilnProfileWritesTheWholeRunAtExit) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string path = tempPath("kiln_profile.json");
  std::remove(path.c_str());
  setenv("KILN_PROFILE", path.c_str(), 1);
  setenv("KILN_PROFILE_SUMMARY", "1", 1);
  EXPECT_EXIT(
      {
        if (!enabled()) std::exit(2);
        add(ones({2}), ones({2}));
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "\nop +add +1 ");
  unsetenv("KILN_PROFILE");
  unsetenv("KILN_PROFILE_SUMMARY");
  EXPECT_EQ(named(checkedCompleteEvents(readJson(path)), "op", "add").size(), 1u);
}

}  // namespace
}  // namespace kiln::profiler

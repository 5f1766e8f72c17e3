// nn::Graph: OneFlow-style printing before and after the first call, debug levels,
// training against eager steps, gradient accumulation, state dicts through io, and the
// errors of its API.
#include "kiln/nn/Graph.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "kiln/core/Autograd.h"
#include "kiln/core/Functional.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"
#include "kiln/io/Safetensors.h"
#include "kiln/nn/Modules.h"
#include "kiln/optim/LRScheduler.h"
#include "kiln/optim/SGD.h"
#include "test/unit/frontend/core/ExpectError.h"
#include "test/unit/frontend/nn/NnTestSupport.h"

namespace kiln::nn {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::expectCloseWithin;

constexpr double kTolerance = 1e-5;

Sequential makeMlp(uint64_t seed = 0) {
  manual_seed(seed);
  return Sequential(Linear(4, 8), ReLU(), Linear(8, 3));
}

std::shared_ptr<optim::SGD> sgd(const Sequential& model, double momentum = 0) {
  return std::make_shared<optim::SGD>(model->parameters(),
                                      optim::SGDOptions(0.1).momentum(momentum));
}

struct Batch {
  Tensor x, y;
};

std::vector<Batch> batches(int n, int64_t size, uint64_t seed = 42) {
  manual_seed(seed);
  std::vector<Batch> out;
  for (int i = 0; i < n; ++i) out.push_back({randn({size, 4}), randint(0, 3, {size})});
  return out;
}

// One training step per call: forward, loss, backward; the graph steps the optimizer.
struct TrainGraph : Graph<TrainGraph> {
  TrainGraph(Sequential model, std::shared_ptr<optim::SGD> opt, int64_t steps = 1,
             std::shared_ptr<optim::LRScheduler> schedule = nullptr)
      : model(model) {
    register_module("model", model);
    add_optimizer(opt, schedule);
    config().set_gradient_accumulation_steps(steps);
  }
  Tensor build(Tensor x, Tensor y) {
    Tensor loss = cross_entropy(model->forward(x), y);
    loss.backward();
    return loss;
  }
  Sequential model;
};

struct EvalGraph : Graph<EvalGraph> {
  explicit EvalGraph(Sequential model) : model(model) { register_module("model", model); }
  Tensor build(Tensor x) { return model->forward(x); }
  Sequential model;
};

// The same step done eagerly, PyTorch style.
Tensor eagerStep(Sequential& model, optim::SGD& opt, const Batch& b) {
  Tensor loss = cross_entropy(model->forward(b.x), b.y);
  opt.zero_grad(/*set_to_none=*/true);
  loss.backward();
  opt.step();
  return loss;
}

void expectSameParameters(const Sequential& a, const Sequential& b) {
  OrderedDict<Tensor> pb = b->named_parameters();
  for (const auto& [name, p] : a->named_parameters()) {
    SCOPED_TRACE(name);
    expectCloseWithin(p, pb.at(name), kTolerance);
  }
}

// Each of `needles` occurs in `text`, each after the one before it.
void expectInOrder(const std::string& text, const std::vector<std::string>& needles) {
  size_t at = 0;
  for (const std::string& needle : needles) {
    size_t found = text.find(needle, at);
    ASSERT_NE(found, std::string::npos) << "'" << needle << "' not found (in order) in:\n" << text;
    at = found + needle.size();
  }
}

// ---- printing ----------------------------------------------------------------------------

// A class used by this test only, so its instance is PrintGraph_0.
struct PrintGraph : Graph<PrintGraph> {
  PrintGraph(Sequential model, std::shared_ptr<optim::SGD> opt) : model(model) {
    register_module("model", model);
    add_optimizer(opt);
  }
  Tensor build(Tensor x, Tensor y) {
    Tensor loss = cross_entropy(model->forward(x), y);
    loss.backward();
    return loss;
  }
  Sequential model;
};

// The BatchNorm's PARAMETER and BUFFER lines, the same before and after the first call.
const std::string kBatchNormState =
    "      (PARAMETER:model.1.weight:tensor(..., size=(2,), dtype=kiln.float32, "
    "requires_grad=True)): ()\n"
    "      (PARAMETER:model.1.bias:tensor(..., size=(2,), dtype=kiln.float32, "
    "requires_grad=True)): ()\n"
    "      (BUFFER:model.1.running_mean:tensor(..., size=(2,), dtype=kiln.float32)): ()\n"
    "      (BUFFER:model.1.running_var:tensor(..., size=(2,), dtype=kiln.float32)): ()\n"
    "      (BUFFER:model.1.num_batches_tracked:tensor(..., size=(), dtype=kiln.int64)): ()\n";

TEST(GraphTest, PrintsOneFlowsLinesBeforeAndAfterTheFirstCall) {
  manual_seed(0);
  Sequential model(Conv2d(1, 2, 3), BatchNorm2d(2), ReLU(), Flatten(), Linear(8, 3));
  PrintGraph graph(model, sgd(model));
  EXPECT_EQ(graph.str(),
            "(GRAPH:PrintGraph_0:PrintGraph): (\n"
            "  (CONFIG:config:GraphConfig(training=True, gradient_accumulation_steps=1, "
            "allow_fuse_add_to_output=False, enable_fusion=True))\n"
            "  (MODULE:model:Sequential()): (\n"
            "    (MODULE:model.0:Conv2d(1, 2, kernel_size=(3, 3), stride=(1, 1))): (\n"
            "      (PARAMETER:model.0.weight:tensor(..., size=(2, 1, 3, 3), dtype=kiln.float32, "
            "requires_grad=True)): ()\n"
            "      (PARAMETER:model.0.bias:tensor(..., size=(2,), dtype=kiln.float32, "
            "requires_grad=True)): ()\n"
            "    )\n"
            "    (MODULE:model.1:BatchNorm2d(2, eps=1e-05, momentum=0.1, affine=true, "
            "track_running_stats=true)): (\n"
            + kBatchNormState +
            "    )\n"
            "    (MODULE:model.2:ReLU()): ()\n"
            "    (MODULE:model.3:Flatten(start_dim=1, end_dim=-1)): ()\n"
            "    (MODULE:model.4:Linear(in_features=8, out_features=3, bias=true)): (\n"
            "      (PARAMETER:model.4.weight:tensor(..., size=(3, 8), dtype=kiln.float32, "
            "requires_grad=True)): ()\n"
            "      (PARAMETER:model.4.bias:tensor(..., size=(3,), dtype=kiln.float32, "
            "requires_grad=True)): ()\n"
            "    )\n"
            "  )\n"
            ")");
  manual_seed(1);
  graph(randn({2, 1, 4, 4}), randint(0, 3, {2}));
  std::ostringstream printed;
  printed << graph;
  EXPECT_EQ(printed.str(),
            "(GRAPH:PrintGraph_0:PrintGraph): (\n"
            "  (CONFIG:config:GraphConfig(training=True, gradient_accumulation_steps=1, "
            "allow_fuse_add_to_output=False, enable_fusion=True))\n"
            "  (INPUT:_PrintGraph_0_input.0.0_2:tensor(..., size=(2, 1, 4, 4), dtype=kiln.float32))\n"
            "  (INPUT:_PrintGraph_0_input.0.1_3:tensor(..., size=(2,), dtype=kiln.int64))\n"
            "  (MODULE:model:Sequential()): (\n"
            "    (INPUT:_model_input.0.0_2:tensor(..., size=(2, 1, 4, 4), dtype=kiln.float32))\n"
            "    (MODULE:model.0:Conv2d(1, 2, kernel_size=(3, 3), stride=(1, 1))): (\n"
            "      (INPUT:_model.0_input.0.0_2:tensor(..., size=(2, 1, 4, 4), dtype=kiln.float32))\n"
            "      (PARAMETER:model.0.weight:tensor(..., size=(2, 1, 3, 3), dtype=kiln.float32, "
            "requires_grad=True)): ()\n"
            "      (PARAMETER:model.0.bias:tensor(..., size=(2,), dtype=kiln.float32, "
            "requires_grad=True)): ()\n"
            "      (OUTPUT:_model.0_output.0.0_2:tensor(..., size=(2, 2, 2, 2), dtype=kiln.float32))\n"
            "    )\n"
            "    (MODULE:model.1:BatchNorm2d(2, eps=1e-05, momentum=0.1, affine=true, "
            "track_running_stats=true)): (\n"
            "      (INPUT:_model.1_input.0.0_2:tensor(..., size=(2, 2, 2, 2), dtype=kiln.float32))\n"
            + kBatchNormState +
            "      (OUTPUT:_model.1_output.0.0_2:tensor(..., size=(2, 2, 2, 2), dtype=kiln.float32))\n"
            "    )\n"
            "    (MODULE:model.2:ReLU()): (\n"
            "      (INPUT:_model.2_input.0.0_2:tensor(..., size=(2, 2, 2, 2), dtype=kiln.float32))\n"
            "      (OUTPUT:_model.2_output.0.0_2:tensor(..., size=(2, 2, 2, 2), dtype=kiln.float32))\n"
            "    )\n"
            "    (MODULE:model.3:Flatten(start_dim=1, end_dim=-1)): (\n"
            "      (INPUT:_model.3_input.0.0_2:tensor(..., size=(2, 2, 2, 2), dtype=kiln.float32))\n"
            "      (OUTPUT:_model.3_output.0.0_2:tensor(..., size=(2, 8), dtype=kiln.float32))\n"
            "    )\n"
            "    (MODULE:model.4:Linear(in_features=8, out_features=3, bias=true)): (\n"
            "      (INPUT:_model.4_input.0.0_2:tensor(..., size=(2, 8), dtype=kiln.float32))\n"
            "      (PARAMETER:model.4.weight:tensor(..., size=(3, 8), dtype=kiln.float32, "
            "requires_grad=True)): ()\n"
            "      (PARAMETER:model.4.bias:tensor(..., size=(3,), dtype=kiln.float32, "
            "requires_grad=True)): ()\n"
            "      (OUTPUT:_model.4_output.0.0_2:tensor(..., size=(2, 3), dtype=kiln.float32))\n"
            "    )\n"
            "    (OUTPUT:_model_output.0.0_2:tensor(..., size=(2, 3), dtype=kiln.float32))\n"
            "  )\n"
            "  (OUTPUT:_PrintGraph_0_output.0.0_2:tensor(..., size=(), dtype=kiln.float32))\n"
            ")");
}

// Used by this test only, for predictable instance names; returns two outputs.
struct CountedGraph : Graph<CountedGraph> {
  explicit CountedGraph(Sequential model) : model(model) { register_module("net", model); }
  std::tuple<Tensor, Tensor> build(Tensor x) {
    Tensor y = model->forward(x);
    return {y, sum(y)};
  }
  Sequential model;
};

TEST(GraphTest, NamesCountInstancesOfEachClassAndOutputsAreNumbered) {
  Sequential model = makeMlp();
  CountedGraph first(model), second(model);
  EXPECT_EQ(first.name(), "CountedGraph_0");
  EXPECT_EQ(second.name(), "CountedGraph_1");
  EXPECT_EQ(second.class_name(), "CountedGraph");
  EXPECT_FALSE(second.training());
  EXPECT_FALSE(second.is_built());
  auto [y, total] = second(ones({2, 4}));
  EXPECT_TRUE(second.is_built());
  EXPECT_EQ(y.sizes(), (Shape{2, 3}));
  EXPECT_THAT(second.str(),
              HasSubstr("  (CONFIG:config:GraphConfig(training=False, "
                        "gradient_accumulation_steps=1, allow_fuse_add_to_output=False, "
                        "enable_fusion=True))\n"));
  // Several outputs are the leaves of a tuple: OneFlow's _output.0.0.<i>_<i + 3>.
  EXPECT_THAT(second.str(),
              HasSubstr("  (OUTPUT:_CountedGraph_1_output.0.0.0_3:tensor(..., size=(2, 3), "
                        "dtype=kiln.float32))\n"
                        "  (OUTPUT:_CountedGraph_1_output.0.0.1_4:tensor(..., size=(), "
                        "dtype=kiln.float32))\n)"));
  EXPECT_THAT(first.str(), Not(HasSubstr("INPUT")));  // printed after its own first call
}

TEST(GraphTest, ConfigIsPrintedAsSet) {
  Sequential model = makeMlp();
  TrainGraph graph(model, sgd(model), /*steps=*/4);
  graph.config().allow_fuse_add_to_output();
  EXPECT_TRUE(graph.config().fuse_add_to_output_allowed());
  EXPECT_EQ(graph.config().gradient_accumulation_steps(), 4);
  graph.config().enable_fusion(false);
  EXPECT_FALSE(graph.config().fusion_enabled());
  EXPECT_EQ(graph.config().str(),
            "GraphConfig(training=True, gradient_accumulation_steps=4, "
            "allow_fuse_add_to_output=True, enable_fusion=False)");
}

// enable_fusion(false) reaches the compiler: the step compiles without fusion kernels
// (more host ops), and still trains as eager code does.
TEST(GraphTest, EnableFusionIsACompilerOption) {
  auto hostOps = [](bool fusion) {
    Sequential model = makeMlp();
    auto opt = std::make_shared<optim::SGD>(model->parameters(), optim::SGDOptions(0.1));
    TrainGraph graph(model, opt);
    graph.config().enable_fusion(fusion);
    setenv("KILN_LOG", "compile", 1);
    setenv("KILN_CACHE_DIR", "off", 0);
    ::testing::internal::CaptureStderr();
    manual_seed(3);
    Tensor x = randn({5, 4}), y = randint(0, 3, {5});
    float loss = graph(x, y).item<float>();
    std::string log = ::testing::internal::GetCapturedStderr();
    unsetenv("KILN_LOG");
    EXPECT_TRUE(std::isfinite(loss));
    std::smatch m;
    EXPECT_TRUE(std::regex_search(log, m, std::regex("([0-9]+) kernels, ([0-9]+) host ops"))) << log;
    return m.size() == 3 ? std::stoi(m[2]) : -1;
  };
  EXPECT_GT(hostOps(false), hostOps(true));
}

// set_backend reaches the compiler: INTERP compiles nothing (no "compiled @" line) and
// trains as MLIR does; an unknown name is a CompileError at the first call.
TEST(GraphTest, SetBackendChoosesWhoRunsTheGraph) {
  auto train = [](const std::string& backend, std::string* log) {
    Sequential model = makeMlp();
    auto opt = std::make_shared<optim::SGD>(model->parameters(), optim::SGDOptions(0.1));
    TrainGraph graph(model, opt);
    graph.config().set_backend(backend);
    EXPECT_EQ(graph.config().backend(), backend);
    setenv("KILN_LOG", "compile", 1);
    setenv("KILN_CACHE_DIR", "off", 0);
    ::testing::internal::CaptureStderr();
    manual_seed(3);
    Tensor x = randn({5, 4}), y = randint(0, 3, {5});
    std::vector<float> losses;
    for (int step = 0; step < 3; ++step) losses.push_back(graph(x, y).item<float>());
    *log = ::testing::internal::GetCapturedStderr();
    unsetenv("KILN_LOG");
    return losses;
  };
  std::string interpLog, mlirLog;
  std::vector<float> interpreted = train("INTERP", &interpLog);
  std::vector<float> compiled = train("MLIR", &mlirLog);
  EXPECT_EQ(interpLog.find("compiled @"), std::string::npos) << interpLog;
  EXPECT_NE(mlirLog.find("compiled @"), std::string::npos) << mlirLog;
  for (size_t k = 0; k < interpreted.size(); ++k)
    EXPECT_NEAR(interpreted[k], compiled[k], 1e-5) << "step " << k;

  Sequential model = makeMlp();
  TrainGraph graph(model, sgd(model));
  graph.config().set_backend("TPU");
  EXPECT_EQ(graph.config().str(),
            "GraphConfig(training=True, gradient_accumulation_steps=1, "
            "allow_fuse_add_to_output=False, enable_fusion=True, backend='TPU')");
  EXPECT_KILN_ERROR_HAS(graph(randn({5, 4}), randint(0, 3, {5})), CompileError,
                        "CompileOptions::backend=TPU names no backend; available: INTERP (");
}

// ---- debug -------------------------------------------------------------------------------

// Used by the debug tests; level 3 prints the line of build's forward call.
struct DebugGraph : Graph<DebugGraph> {
  DebugGraph(Sequential model, std::shared_ptr<optim::SGD> opt) : model(model) {
    register_module("model", model);
    add_optimizer(opt);
  }
  Tensor build(Tensor x, Tensor y) {
    Tensor logits = model->forward(x); forwardLine = __LINE__;  // one line: the same line
    Tensor loss = cross_entropy(logits, y);
    loss.backward();
    return loss;
  }
  Sequential model;
  static inline int forwardLine = 0;
};

// What debug(level) prints during a graph's first call.
std::string firstCallLog(int level) {
  Sequential model = makeMlp();
  DebugGraph graph(model, sgd(model));
  graph.debug(level);
  Batch b = batches(1, 2).front();
  ::testing::internal::CaptureStderr();
  graph(b.x, b.y);
  std::string log = ::testing::internal::GetCapturedStderr();
  ::testing::internal::CaptureStderr();
  graph(b.x, b.y);  // runs the program: nothing is built, nothing printed
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "") << "level " << level;
  return log;
}

const std::vector<std::string> kStageLines{"start building program 'step'.",
                                           "building program 'step' done in ",
                                           "compiling and running program 'step' done in "};

TEST(GraphDebugTest, OffByDefault) { EXPECT_EQ(firstCallLog(-1), ""); }

TEST(GraphDebugTest, LevelZeroPrintsTheStagesWithTheirTimes) {
  std::string log = firstCallLog(0);
  expectInOrder(log, kStageLines);
  EXPECT_THAT(log, ::testing::ContainsRegex(R"(\(GRAPH:DebugGraph_[0-9]+:DebugGraph\) building )"
                                            R"(program 'step' done in [0-9]+\.[0-9]{2} ms\.)"));
  EXPECT_THAT(log, Not(HasSubstr("(MODULE:")));
  EXPECT_THAT(log, Not(HasSubstr("(INPUT:")));
}

TEST(GraphDebugTest, LevelOneAddsModulesWithTheirInputsAndOutputs) {
  std::string log = firstCallLog(1);
  expectInOrder(log, {kStageLines[0], "(INPUT:_DebugGraph_",
                      "_input.0.1_3:tensor(..., size=(2,), dtype=kiln.int64))",
                      "(MODULE:model:Sequential())",
                      "(INPUT:_model_input.0.0_2:tensor(..., size=(2, 4), dtype=kiln.float32))",
                      "(MODULE:model.0:Linear(in_features=4, out_features=8, bias=true))",
                      "(INPUT:_model.0_input.0.0_2:",
                      "(PARAMETER:model.0.weight:tensor(..., size=(8, 4), dtype=kiln.float32, "
                      "requires_grad=True))",
                      "(OUTPUT:_model.0_output.0.0_2:tensor(..., size=(2, 8), dtype=kiln.float32))",
                      "(MODULE:model.1:ReLU())", "(MODULE:model.2:Linear(",
                      "(OUTPUT:_model_output.0.0_2:tensor(..., size=(2, 3), dtype=kiln.float32))",
                      "_output.0.0_2:tensor(..., size=(), dtype=kiln.float32))", kStageLines[1],
                      kStageLines[2]});
  EXPECT_THAT(log, Not(HasSubstr("(OPERATOR:")));
}

TEST(GraphDebugTest, LevelTwoAddsEachOpInItsModule) {
  std::string log = firstCallLog(2);
  expectInOrder(log, {kStageLines[0], "(MODULE:model.0:Linear(",
                      "(OPERATOR:model.0:matmul(float32(2, 4), float32(4, 8)) -> (float32(2, 8)), "
                      "device=cpu)",
                      "(OUTPUT:_model.0_output.0.0_2:", "(MODULE:model.1:ReLU())",
                      "(OPERATOR:model.1:relu(float32(2, 8)) -> (float32(2, 8)), device=cpu)",
                      "(OUTPUT:_model_output.0.0_2:",
                      // the loss, backward and the optimizer's in-place updates: outside modules
                      "(OPERATOR:DebugGraph_", ":add_(float32(8, 4), float32(8, 4))",
                      kStageLines[1], kStageLines[2]});
  EXPECT_THAT(log, Not(HasSubstr("location=")));
}

TEST(GraphDebugTest, LevelThreeAddsTheUsersSourceLine) {
  std::string log = firstCallLog(3);
  std::string at = "location=test/unit/frontend/nn/GraphTest.cpp:" +
                   std::to_string(DebugGraph::forwardLine) + ")";
  expectInOrder(log, {kStageLines[0], "(MODULE:model.0:Linear(",
                      "(OPERATOR:model.0:matmul(float32(2, 4), float32(4, 8)) -> (float32(2, 8)), "
                      "device=cpu, " + at,
                      "(OUTPUT:_model_output.0.0_2:", kStageLines[1], kStageLines[2]});
}

TEST(GraphDebugTest, AFailingBuildHasPrintedUpToWhereItFailed) {
  Sequential model(Linear(4, 8), ReLU(), Linear(6, 3));  // 8 features meet 6
  DebugGraph graph(model, sgd(model));
  graph.debug(2);
  Batch b = batches(1, 2).front();
  ::testing::internal::CaptureStderr();
  EXPECT_THROW(graph(b.x, b.y), ShapeError);
  std::string log = ::testing::internal::GetCapturedStderr();
  expectInOrder(log, {kStageLines[0], "(OPERATOR:model.1:relu(", "(MODULE:model.2:Linear("});
  EXPECT_THAT(log, Not(HasSubstr("(OPERATOR:model.2:")));
  EXPECT_THAT(log, Not(HasSubstr(kStageLines[1])));
}

// ---- training ----------------------------------------------------------------------------

TEST(GraphTrainingTest, LossDecreasesAndMatchesEagerSteps) {
  Batch b = batches(1, 16).front();
  Sequential eagerModel = makeMlp();
  auto eagerOpt = sgd(eagerModel, /*momentum=*/0.9);
  Sequential model = makeMlp();
  TrainGraph graph(model, sgd(model, /*momentum=*/0.9));
  std::vector<float> losses;
  for (int step = 0; step < 6; ++step) {
    float eager = eagerStep(eagerModel, *eagerOpt, b).item<float>();
    losses.push_back(graph(b.x, b.y).item<float>());
    EXPECT_NEAR(losses.back(), eager, kTolerance) << "step " << step;
  }
  EXPECT_LT(losses.back(), losses.front());
  expectSameParameters(model, eagerModel);
  for (const Tensor& p : model->parameters()) EXPECT_FALSE(p.grad().defined());  // zero_grad
}

// enable_dynamic_batch: the step program is compiled once, from the first call, for every
// batch size (a short last batch runs the same program), and matches eager steps.
TEST(GraphTrainingTest, DynamicBatchCompilesOnceForEveryBatchSize) {
  Sequential eagerModel = makeMlp();
  auto eagerOpt = sgd(eagerModel, /*momentum=*/0.9);
  Sequential model = makeMlp();
  TrainGraph graph(model, sgd(model, /*momentum=*/0.9));
  graph.config().enable_dynamic_batch();
  EXPECT_NE(graph.config().str().find("dynamic_batch=True"), std::string::npos);
  uint64_t seed = 7;
  for (int64_t size : {16, 16, 16, 5, 16, 3, 3, 9}) {
    Batch b = batches(1, size, seed++).front();
    float eager = eagerStep(eagerModel, *eagerOpt, b).item<float>();
    EXPECT_NEAR(graph(b.x, b.y).item<float>(), eager, kTolerance) << "batch " << size;
  }
  expectSameParameters(model, eagerModel);
  EXPECT_EQ(graph.num_compiles(), 1u);
}

TEST(GraphTrainingTest, SchedulerStepsAfterEachUpdate) {
  std::vector<Batch> data = batches(3, 8);
  Sequential eagerModel = makeMlp();
  auto eagerOpt = sgd(eagerModel);
  optim::StepLR eagerSchedule(*eagerOpt, /*step_size=*/1, /*gamma=*/0.5);
  Sequential model = makeMlp();
  auto opt = sgd(model);
  auto schedule = std::make_shared<optim::StepLR>(*opt, /*step_size=*/1, /*gamma=*/0.5);
  TrainGraph graph(model, opt, /*steps=*/1, schedule);
  for (const Batch& b : data) {
    eagerStep(eagerModel, *eagerOpt, b);
    eagerSchedule.step();
    graph(b.x, b.y);
  }
  EXPECT_DOUBLE_EQ(opt->param_groups()[0].options().get_lr(), 0.1 / 8);
  expectSameParameters(model, eagerModel);
  // The rate is state the step program reads: no recording per rate (issue 19).
  EXPECT_EQ(graph.num_traces(), 1u);
}

// n accumulated calls on micro-batches update as one call on their concatenation, for
// several updates (the programs run again after they are traced) and with momentum.
TEST(GraphTrainingTest, GradientAccumulationEqualsOneCallOnTheConcatenatedBatch) {
  const int64_t n = 4;
  Sequential accumulated = makeMlp(), whole = makeMlp(), reference = makeMlp();
  TrainGraph accumulating(accumulated, sgd(accumulated, 0.9), n);
  TrainGraph single(whole, sgd(whole, 0.9), 1);
  for (int update = 0; update < 3; ++update) {
    std::vector<Batch> micro = batches(int(n), 2, /*seed=*/100 + update);
    std::vector<Tensor> xs, ys;
    for (int64_t i = 0; i < n; ++i) {
      Tensor loss = accumulating(micro[i].x, micro[i].y);
      Tensor expected = cross_entropy(reference->forward(micro[i].x), micro[i].y);
      EXPECT_NEAR(loss.item<float>(), expected.item<float>(), kTolerance);  // not updated yet
      xs.push_back(micro[i].x);
      ys.push_back(micro[i].y);
    }
    single(cat(xs), cat(ys));
    expectSameParameters(accumulated, whole);
    reference->load_state_dict(whole->state_dict());
  }
  // Recorded once per program (the step's first recording is a warm-up that makes the
  // momentum buffers), not once per call: the accumulators that exist when a call starts
  // are gradients the graph clears itself.
  EXPECT_EQ(accumulating.num_traces(), 3u);
}

TEST(GraphTrainingTest, AccumulatedGradientsAreScaledAndKeptBetweenCalls) {
  Sequential model = makeMlp(), eager = makeMlp();
  TrainGraph graph(model, sgd(model), /*steps=*/2);
  std::vector<Batch> micro = batches(2, 3);
  // Eagerly: the gradients of both micro-batches, summed and halved, make one SGD update.
  for (const Batch& b : micro) cross_entropy(eager->forward(b.x), b.y).backward();
  graph(micro[0].x, micro[0].y);
  graph(micro[1].x, micro[1].y);  // the update: parameters move, gradients are zeroed
  OrderedDict<Tensor> eagerParams = eager->named_parameters();
  for (const auto& [name, p] : model->named_parameters()) {
    SCOPED_TRACE(name);
    Tensor expected = sub(eagerParams[name], mul(eagerParams[name].grad(), 0.1 / 2));
    expectCloseWithin(p, expected, kTolerance);
    ASSERT_TRUE(p.grad().defined());
    expectCloseWithin(p.grad(), zeros_like(p), 0);
  }
  // The next call only accumulates: .grad holds half its gradient at the updated weights.
  eager->load_state_dict(model->state_dict());
  eager->zero_grad(/*set_to_none=*/true);
  cross_entropy(eager->forward(micro[0].x), micro[0].y).backward();
  graph(micro[0].x, micro[0].y);
  for (const auto& [name, p] : model->named_parameters()) {
    SCOPED_TRACE(name);
    expectCloseWithin(p.grad(), mul(eagerParams[name].grad(), 0.5), kTolerance);
  }
}

// ---- saving and loading ------------------------------------------------------------------

TEST(GraphStateTest, SaveTrainedWeightsAndReloadThemIntoAFreshModel) {
  Sequential model = makeMlp();
  TrainGraph train(model, sgd(model));
  for (const Batch& b : batches(3, 8)) train(b.x, b.y);
  OrderedDict<Tensor> state = train.state_dict();
  EXPECT_EQ(state.keys(), (std::vector<std::string>{"model.0.weight", "model.0.bias",
                                                    "model.2.weight", "model.2.bias"}));
  std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/graph.safetensors";
  io::save(state, path);

  Tensor x = batches(1, 5, /*seed=*/7).front().x;
  EvalGraph trained(model);
  Tensor expected = trained(x);
  Sequential fresh = makeMlp(/*seed=*/99);
  EvalGraph reloaded(fresh);
  Tensor before = reloaded(x);  // traced with the fresh weights, bound by reference
  IncompatibleKeys problems = reloaded.load_state_dict(io::load(path));
  EXPECT_TRUE(problems.missing_keys.empty());
  EXPECT_TRUE(problems.unexpected_keys.empty());
  Tensor after = reloaded(x);
  expectCloseWithin(after, expected, 0);
  EXPECT_NE(golden::valuesAsDouble(before), golden::valuesAsDouble(expected));
  expectSameParameters(fresh, model);
}

// ---- errors ------------------------------------------------------------------------------

static_assert(std::is_invocable_v<TrainGraph&, Tensor, Tensor>);
static_assert(!std::is_invocable_v<TrainGraph&, Tensor>, "build takes two tensors");
static_assert(!std::is_invocable_v<TrainGraph&, Tensor, int>, "graph arguments are tensors");

// build accepts one or two tensors; a graph is traced for the count of its first call.
struct OverloadedGraph : Graph<OverloadedGraph> {
  OverloadedGraph() : model(makeMlp()) { register_module("model", model); }
  Tensor build(Tensor x) { return model->forward(x); }
  Tensor build(Tensor x, Tensor bias) { return add(model->forward(x), bias); }
  Sequential model;
};

TEST(GraphErrorTest, CalledWithAnotherNumberOfTensorsThanTheFirstCall) {
  OverloadedGraph graph;
  graph(ones({2, 4}), zeros({2, 3}));
  EXPECT_KILN_ERROR_HAS(graph(ones({2, 4})), Error,
                        graph.name() + ": called with 1 tensor(s), but build was traced with 2 "
                        "on the first call");
}

TEST(GraphErrorTest, GradientAccumulationStepsMustBePositive) {
  GraphConfig config;
  EXPECT_KILN_ERROR_HAS(config.set_gradient_accumulation_steps(0), Error,
                        "kiln::set_gradient_accumulation_steps: the number of steps must be at "
                        "least 1, got 0");
}

TEST(GraphErrorTest, GradientAccumulationNeedsAnOptimizer) {
  EvalGraph graph(makeMlp());
  graph.config().set_gradient_accumulation_steps(2);
  EXPECT_KILN_ERROR_HAS(graph(ones({2, 4})), Error,
                        "gradient accumulation over 2 calls needs a training graph; add an "
                        "optimizer with add_optimizer");
}

TEST(GraphErrorTest, DataParallelNeedsAPositiveCapAnOptimizerAndMpi) {
  GraphConfig config;
  EXPECT_KILN_ERROR_HAS(config.enable_data_parallel(true, 0), Error,
                        "kiln::enable_data_parallel: bucket_cap_mb must be positive, got 0");
  EXPECT_FALSE(config.data_parallel_enabled());
  EvalGraph eval(makeMlp());
  eval.config().enable_data_parallel();
  EXPECT_KILN_ERROR_HAS(eval(ones({2, 4})), Error,
                        "data-parallel training needs a training graph; add an optimizer with "
                        "add_optimizer");
  // This binary does not link kiln::distributed: the first call's broadcast of rank 0's
  // parameters says so, compiled or interpreted (OpTableTest checks the kernels' message).
  for (const char* backend : {"MLIR", "INTERP"}) {
    Sequential model = makeMlp();
    TrainGraph train(model, sgd(model));
    train.config().enable_data_parallel().set_backend(backend);
    EXPECT_EQ(train.config().str(),
              "GraphConfig(training=True, gradient_accumulation_steps=1, "
              "allow_fuse_add_to_output=False, enable_fusion=True, backend='" +
                  std::string(backend) + "', data_parallel=True)");
    // The first call broadcasts rank 0's parameters first, and says so on every call.
    for (int call = 0; call < 2; ++call)
      EXPECT_KILN_ERROR_HAS(train(randn({5, 4}), randint(0, 3, {5})), Error,
                            "rank 0's parameters cannot be broadcast to the ranks of an MPI "
                            "job before kiln::distributed::init()");
  }
}

TEST(GraphErrorTest, ConfigIsFixedByTheFirstCall) {
  EvalGraph graph(makeMlp());
  graph(ones({2, 4}));
  EXPECT_KILN_ERROR_HAS(graph.config().allow_fuse_add_to_output(), Error,
                        "kiln::allow_fuse_add_to_output: the config of " + graph.name() +
                            " was fixed by its first call");
  EXPECT_KILN_ERROR_HAS(graph.config().set_gradient_accumulation_steps(2), Error,
                        "set it before calling the graph");
}

// A graph its tests fill in from outside.
struct EmptyGraph : Graph<EmptyGraph> {
  Tensor build(Tensor x) { return x; }
};

TEST(GraphErrorTest, AnOptimizerIsAddedOnce) {
  Sequential model = makeMlp();
  auto opt = sgd(model);
  EmptyGraph graph;
  graph.add_optimizer(opt);
  EXPECT_TRUE(graph.training());
  EXPECT_KILN_ERROR_HAS(graph.add_optimizer(opt), Error,
                        "kiln::add_optimizer: this optimizer was added to " + graph.name() +
                            " already");
  EXPECT_KILN_ERROR_HAS(graph.add_optimizer(nullptr), Error, "the optimizer is null");
}

TEST(GraphErrorTest, ModulesNeedDistinctNamesAndAModule) {
  EmptyGraph graph;
  graph.register_module("model", makeMlp());
  EXPECT_KILN_ERROR_HAS(graph.register_module("model", makeMlp()), Error,
                        "kiln::register_module: " + graph.name() +
                            " already has a module named 'model'");
  EXPECT_KILN_ERROR_HAS(graph.register_module("none", Sequential(nullptr)), Error,
                        "module 'none' of " + graph.name() + " is empty");
  EXPECT_KILN_ERROR_HAS(graph.register_module("a.b", makeMlp()), Error,
                        "the name must not contain a dot");
}

TEST(GraphErrorTest, NothingIsAddedAfterTheFirstCall) {
  Sequential model = makeMlp();
  EmptyGraph graph;
  graph(ones({1}));
  EXPECT_KILN_ERROR_HAS(graph.register_module("model", model), Error,
                        "kiln::register_module: " + graph.name() + " has been called already");
  EXPECT_KILN_ERROR_HAS(graph.add_optimizer(sgd(model)), Error,
                        "add_optimizer before its first call");
}

TEST(GraphErrorTest, DebugLevelsAreMinusOneToThree) {
  EmptyGraph graph;
  EXPECT_KILN_ERROR_HAS(graph.debug(4), Error,
                        "kiln::debug: v_level must be -1 (off) or 0 to 3, got 4");
  EXPECT_KILN_ERROR_HAS(graph.debug(-2), Error, "got -2");
}

}  // namespace
}  // namespace kiln::nn

// kiln::distributed's collectives, run by mpirun with 2 and 3 ranks (BUILD.bazel): every
// rank runs every test and checks its results against values computed by hand from the
// rank numbers. Built without MPI, it checks that each call says so.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kiln/core/Autograd.h"
#include "kiln/core/Collective.h"
#include "kiln/core/Dispatcher.h"
#include "kiln/core/Ops.h"
#include "kiln/distributed/Distributed.h"
#include "kiln/jit/Trace.h"
#include "test/unit/frontend/core/ExpectError.h"

namespace kiln {
namespace {

namespace dist = distributed;
using dist::ReduceOp;

std::string beforeInitError;  // what rank() said before init() (main)

std::vector<double> values(const Tensor& t) {
  Tensor d = t.detach().to(kFloat64).contiguous();
  const double* p = d.data_ptr<double>();
  return std::vector<double>(p, p + d.numel());
}

// A tensor of `dtype` holding `v`.
Tensor make(const std::vector<double>& v, DType dtype) { return tensor(v).to(dtype); }

class DistributedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!dist::is_available()) GTEST_SKIP() << "built without MPI (BuiltWithoutMpi checks that)";
    n = dist::world_size();
    r = dist::rank();
  }
  int n = 1, r = 0;
};

TEST(DistributedEnvironment, BuiltWithoutMpi) {
  if (dist::is_available()) GTEST_SKIP() << "built with MPI";
  EXPECT_FALSE(dist::is_initialized());
  EXPECT_KILN_ERROR(dist::init(), Error,
                    "kiln::distributed::init: Kiln was built without MPI (install Open MPI with "
                    "scripts/bootstrap.sh and rebuild; docs/DISTRIBUTED.md)" + testing::at());
}

TEST_F(DistributedTest, RefusesUseBeforeInitAndSecondInit) {
  EXPECT_NE(beforeInitError.find("kiln::distributed::rank: call distributed::init() first"),
            std::string::npos)
      << beforeInitError;
  EXPECT_KILN_ERROR(dist::init(), Error,
                    "kiln::distributed::init: already initialized" + testing::at());
}

TEST_F(DistributedTest, RanksAreDistinctAndCoverTheWorld) {
  Tensor mine = zeros({n}, kInt64);
  {
    NoGradGuard g;
    mine.select(0, r).fill_(1);
  }
  dist::all_reduce(mine);
  EXPECT_EQ(values(mine), std::vector<double>(size_t(n), 1.0));
}

TEST_F(DistributedTest, AllReduceSumInEveryDType) {
  // Rank q holds q + 1 + i at i: the sum is n(n+1)/2 + n*i.
  for (DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64}) {
    Tensor t = make({r + 1.0, r + 2.0, r + 3.0, r + 4.0}, dtype).reshape({2, 2});
    dist::all_reduce(t, ReduceOp::Sum);
    EXPECT_EQ(t.dtype(), dtype);
    EXPECT_EQ(t.shape(), Shape({2, 2}));
    std::vector<double> want;
    for (int i = 0; i < 4; ++i) want.push_back(n * (n + 1) / 2.0 + n * i);
    EXPECT_EQ(values(t), want) << dtype;
  }
}

TEST_F(DistributedTest, AllReduceOfBoolsIsAnOr) {
  std::vector<double> v(4, 0.0);
  v[size_t(r)] = 1;  // rank q sets element q
  Tensor t = make(v, kBool);
  dist::all_reduce(t, ReduceOp::Sum);
  std::vector<double> want(4, 0.0);
  for (int q = 0; q < n; ++q) want[size_t(q)] = 1;
  EXPECT_EQ(values(t), want);
  Tensor u = make(v, kBool);
  dist::all_reduce(u, ReduceOp::Max);
  EXPECT_EQ(values(u), want);
}

TEST_F(DistributedTest, AllReduceMeanAndMax) {
  for (DType dtype : {kFloat32, kFloat64, kBFloat16}) {
    // (q + 1)(i + 1) averages to (n + 1)/2 (i + 1).
    Tensor t = make({(r + 1) * 1.0, (r + 1) * 2.0, (r + 1) * 3.0}, dtype);
    dist::all_reduce(t, ReduceOp::Mean);
    EXPECT_EQ(values(t), std::vector<double>({(n + 1) / 2.0, (n + 1) * 1.0, (n + 1) * 1.5}))
        << dtype;
  }
  for (DType dtype : {kFloat32, kInt32, kInt64}) {
    // Element i is 10 + i on rank i % n and -i elsewhere.
    std::vector<double> v, want;
    for (int i = 0; i < 5; ++i) {
      v.push_back(i % n == r ? 10.0 + i : -i);
      want.push_back(10.0 + i);
    }
    Tensor t = make(v, dtype);
    dist::all_reduce(t, ReduceOp::Max);
    EXPECT_EQ(values(t), want) << dtype;
  }
}

TEST_F(DistributedTest, AllReduceWritesThroughAView) {
  Tensor base = make({r * 1.0, 10.0, r * 2.0, 20.0}, kFloat32);
  Tensor column = base.slice(0, 0, 4, 2);  // elements 0 and 2: strided
  ASSERT_FALSE(column.is_contiguous());
  dist::all_reduce(column);
  const double s = n * (n - 1) / 2.0;
  EXPECT_EQ(values(base), std::vector<double>({s, 10.0, 2 * s, 20.0}));
}

TEST_F(DistributedTest, AsyncWorkCompletesInAnyWaitOrder) {
  Tensor a = full({3}, r + 1.0), b = full({2}, 2.0 * (r + 1), kInt64);
  dist::Work wa = dist::all_reduce_async(a);
  dist::Work wb = dist::all_reduce_async(b, ReduceOp::Max);
  wb.wait();
  wa.wait();
  EXPECT_TRUE(wa.is_completed());
  EXPECT_TRUE(dist::Work().is_completed());
  EXPECT_EQ(values(a), std::vector<double>(3, n * (n + 1) / 2.0));
  EXPECT_EQ(values(b), std::vector<double>(2, 2.0 * n));
  dist::barrier();
  dist::barrier_async().wait();
}

TEST_F(DistributedTest, BroadcastFromEachRank) {
  for (int src = 0; src < n; ++src) {
    for (DType dtype : {kFloat32, kFloat16, kInt64, kBool}) {
      Tensor t = make({double(r == src), r * 3.0 + 1}, dtype);
      dist::broadcast(t, src);
      EXPECT_EQ(values(make({1.0, src * 3.0 + 1}, dtype)), values(t)) << dtype << " from " << src;
    }
  }
}

TEST_F(DistributedTest, AllGatherUnevenShards) {
  // Rank q contributes q + 1 elements 10q + j.
  std::vector<double> mine;
  for (int j = 0; j <= r; ++j) mine.push_back(10.0 * r + j);
  for (DType dtype : {kFloat32, kBFloat16, kInt32}) {
    std::vector<Tensor> outputs;
    for (int q = 0; q < n; ++q) outputs.push_back(zeros({q + 1}, dtype));
    dist::all_gather(outputs, make(mine, dtype));
    for (int q = 0; q < n; ++q) {
      std::vector<double> want;
      for (int j = 0; j <= q; ++j) want.push_back(10.0 * q + j);
      EXPECT_EQ(values(outputs[size_t(q)]), want) << dtype << " shard " << q;
    }
  }
}

TEST_F(DistributedTest, ReduceScatterUnevenShards) {
  // inputs[q] on rank p holds (p + 1)(10q + j), j < q + 1; rank q receives the sum over p.
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max}) {
    std::vector<Tensor> inputs;
    for (int q = 0; q < n; ++q) {
      std::vector<double> v;
      for (int j = 0; j <= q; ++j) v.push_back((r + 1) * (10.0 * q + j));
      inputs.push_back(make(v, kFloat64));
    }
    Tensor out = zeros({r + 1}, kFloat64);
    dist::reduce_scatter(out, inputs, op);
    const double factor = op == ReduceOp::Sum ? n * (n + 1) / 2.0
                          : op == ReduceOp::Mean ? (n + 1) / 2.0
                                                 : n;
    std::vector<double> want;
    for (int j = 0; j <= r; ++j) want.push_back(factor * (10.0 * r + j));
    EXPECT_EQ(values(out), want) << op;
  }
}

TEST_F(DistributedTest, ErrorsNameTheCollectiveAndTheTensors) {
  EXPECT_KILN_ERROR(dist::all_reduce(ones({2}, kInt32), ReduceOp::Mean), TypeError,
                    "kiln::distributed::all_reduce: a mean needs a floating-point tensor, got "
                    "int32 [2] (reduce with sum and divide)" + testing::at());
  EXPECT_KILN_ERROR(dist::all_reduce(Tensor()), Error,
                    "kiln::distributed::all_reduce: the tensor is an undefined tensor" +
                        testing::at());
  EXPECT_KILN_ERROR(dist::broadcast(ones({2}), n), Error,
                    "kiln::distributed::broadcast: source rank " + std::to_string(n) +
                        " is not in [0, " + std::to_string(n) + ")" + testing::at());
  EXPECT_KILN_ERROR(dist::all_gather({ones({2})}, ones({2})), Error,
                    "kiln::distributed::all_gather: needs one output per rank (" +
                        std::to_string(n) + "), got 1" + testing::at());
  std::vector<Tensor> outputs(size_t(n), ones({2}));
  outputs.back() = ones({2}, kInt64);
  EXPECT_KILN_ERROR(dist::all_gather(outputs, ones({2})), TypeError,
                    "kiln::distributed::all_gather: outputs[" + std::to_string(n - 1) +
                        "] is int64 [2], expected float32 like float32 [2]" + testing::at());
  std::vector<Tensor> inputs(size_t(n), ones({3}));
  EXPECT_KILN_ERROR(dist::reduce_scatter(ones({2, 1}), inputs), ShapeError,
                    "kiln::distributed::reduce_scatter: inputs[" + std::to_string(r) +
                        "] (this rank's) is float32 [3] but float32 [2, 1] has 2 elements, "
                        "not 3" + testing::at());
}

class RecordingHook : public DispatchHook {
 public:
  bool symbolic() const override { return false; }
  void onOp(const OpCall&) override {}
  void onValueRead(const Tensor&, std::string_view, const SourceLoc&) override {}
};

// The table's non-blocking pair, eagerly: the wait returns the sum; a wait on a tensor no
// start is writing says so.
TEST_F(DistributedTest, AllReduceStartAndWaitOps) {
  Tensor started = all_reduce_start_op(full({3}, double(r + 1)), "sum");
  EXPECT_EQ(values(wait_op(started)), std::vector<double>(3, n * (n + 1) / 2.0));
  EXPECT_KILN_ERROR_HAS(wait_op(ones({2})), Error,
                        "kiln::wait: no all_reduce_start is in flight on this float32 [2] tensor");
}

// With the progress thread off and on (it tests the requests in flight on its own thread
// while this one computes), the results are the same, and every wait is counted.
TEST_F(DistributedTest, AsyncProgressOffAndOn) {
  const bool initially = dist::async_progress();
  EXPECT_TRUE(initially);  // the default (KILN_DIST_PROGRESS unset)
  for (const bool on : {false, true, false, true}) {
    SCOPED_TRACE(on ? "progress on" : "progress off");
    dist::set_async_progress(on);
    EXPECT_EQ(dist::async_progress(), on);
    dist::reset_comm_stats();
    std::vector<Tensor> tensors;
    std::vector<dist::Work> works;
    for (int k = 0; k < 4; ++k) {
      tensors.push_back(full({1000 * (k + 1)}, double(r + k)));
      works.push_back(dist::all_reduce_async(tensors.back(), k % 2 ? ReduceOp::Mean : ReduceOp::Sum));
    }
    for (dist::Work& w : works) w.wait();
    for (int k = 0; k < 4; ++k) {
      const double sum = n * (n - 1) / 2.0 + double(n) * k;
      EXPECT_EQ(values(tensors[size_t(k)]),
                std::vector<double>(size_t(1000 * (k + 1)), k % 2 ? sum / n : sum));
    }
    const dist::CommStats stats = dist::comm_stats();
    EXPECT_EQ(stats.waits, 4);
    EXPECT_LE(stats.completed_before_wait, 4);
    EXPECT_GE(stats.blocked_seconds, 0);
    EXPECT_GE(stats.issue_to_wait_seconds, 0);
  }
  dist::set_async_progress(initially);
}

TEST_F(DistributedTest, OtherCollectivesRefuseToRunInsideATrace) {
  RecordingHook hook;
  DispatchHookGuard guard(&hook);
  EXPECT_KILN_ERROR(dist::broadcast(ones({2}), 0), TraceError,
                    "kiln::distributed::broadcast: of the collectives only all_reduce is recorded "
                    "by traces; call this one outside jit::trace and nn::Graph "
                    "(docs/DISTRIBUTED.md)" + testing::at());
}

// all_reduce inside jit::trace is recorded as kiln.all_reduce (all_reduce_async as
// kiln.all_reduce_start and kiln.wait) and runs on every call of the program, by value and
// symbolically, on the interpreter and compiled.
TEST_F(DistributedTest, AllReduceIsRecordedByTraces) {
  for (const bool symbolic : {false, true})
    for (const char* backend : {"INTERP", "MLIR"}) {
      SCOPED_TRACE(std::string(backend) + (symbolic ? " symbolic" : " by value"));
      jit::TraceOptions options{.symbolic = symbolic};
      options.compile.backend = backend;
      auto reduce = jit::trace(
          [](Tensor x) {
            Tensor sum = x * 2;
            dist::all_reduce(sum);
            Tensor mean = x + 0;
            Tensor max = -x;
            dist::all_reduce_async(mean, ReduceOp::Mean).wait();
            dist::all_reduce(max, ReduceOp::Max);
            return cat({sum, mean, max}, 0);
          },
          options);
      for (int call = 0; call < 3; ++call) {
        const double c = call, ranks = n;
        const double sum = ranks * (ranks - 1) + 2 * ranks * c, mean = (ranks - 1) / 2 + c;
        EXPECT_EQ(values(reduce(full({2}, r + c))),
                  (std::vector<double>{sum, sum, mean, mean, -c, -c}))
            << "call " << call;
      }
      EXPECT_EQ(reduce.num_traces(), 1u);
      const std::string graph = reduce.graph_str();
      EXPECT_NE(graph.find("kiln.all_reduce sum"), std::string::npos) << graph;
      // all_reduce_async: started, then waited for where Work::wait is called.
      EXPECT_NE(graph.find("kiln.all_reduce_start mean"), std::string::npos) << graph;
      EXPECT_NE(graph.find("kiln.wait"), std::string::npos) << graph;
      EXPECT_NE(graph.find("kiln.all_reduce max"), std::string::npos) << graph;
    }
}

}  // namespace
}  // namespace kiln

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  using namespace kiln;
  if (!distributed::is_available()) return RUN_ALL_TESTS();
  try {
    (void)distributed::rank();
  } catch (const Error& e) {
    beforeInitError = e.what();
  }
  distributed::init();
  const int status = RUN_ALL_TESTS();
  distributed::finalize();
  return status;
}

#include "kiln/core/ThreadPool.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <omp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <latch>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "kiln/core/Error.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;

// Counts visits per index; every index must be seen exactly once.
void expectEachIndexOnce(ThreadPool& pool, int64_t begin, int64_t end, int64_t grain) {
  std::vector<std::atomic<int>> visits(end - begin);
  pool.parallelFor(begin, end, grain, [&](int64_t b, int64_t e) {
    ASSERT_LE(begin, b);
    ASSERT_LT(b, e);
    ASSERT_LE(e, end);
    for (int64_t i = b; i < e; ++i) visits[i - begin]++;
  });
  for (size_t i = 0; i < visits.size(); ++i)
    ASSERT_EQ(visits[i].load(), 1) << "index " << begin + int64_t(i) << " grain " << grain;
}

TEST(ThreadPoolTest, EveryIndexExactlyOnce) {
  ThreadPool pool(4);
  EXPECT_EQ(pool.numThreads(), 4);
  for (int64_t n : {1, 2, 3, 4, 5, 9, 10, 17, 100, 1001})
    for (int64_t grain : {-1, 0, 1, 2, 3, 7, 64, 5000}) expectEachIndexOnce(pool, 5, 5 + n, grain);
  expectEachIndexOnce(pool, -50, 50, 1);
}

TEST(ThreadPoolTest, EmptyRangeCallsNothing) {
  ThreadPool pool(2);
  int calls = 0;
  pool.parallelFor(3, 3, 1, [&](int64_t, int64_t) { ++calls; });
  pool.parallelFor(5, 3, 1, [&](int64_t, int64_t) { ++calls; });
  parallelFor(0, 0, 1, [&](int64_t, int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(ThreadPoolTest, SmallRangesRunInlineInOneCall) {
  ThreadPool pool(4);
  std::vector<std::pair<int64_t, int64_t>> calls;
  std::thread::id who;
  pool.parallelFor(0, 10, 10, [&](int64_t b, int64_t e) {
    calls.push_back({b, e});
    who = std::this_thread::get_id();
  });
  EXPECT_EQ(calls, (std::vector<std::pair<int64_t, int64_t>>{{0, 10}}));
  EXPECT_EQ(who, std::this_thread::get_id());
}

TEST(ThreadPoolTest, SingleThreadPoolRunsInline) {
  ThreadPool pool(1);
  EXPECT_EQ(pool.numThreads(), 1);
  int calls = 0;
  pool.parallelFor(0, 1000, 1, [&](int64_t b, int64_t e) {
    ++calls;
    EXPECT_EQ(b, 0);
    EXPECT_EQ(e, 1000);
  });
  EXPECT_EQ(calls, 1);
}

// Each chunk waits until two distinct threads have entered one: a thread waiting there
// claims no other chunk, so the call returns only when another thread took a chunk. A pool
// that ran every chunk on one thread never returns (bazel's timeout fails the test).
TEST(ThreadPoolTest, WorkersShareTheWork) {
  ThreadPool pool(4);
  std::mutex mutex;
  std::condition_variable entered;
  std::set<std::thread::id> threads;
  pool.parallelFor(0, 4, 1, [&](int64_t, int64_t) {
    std::unique_lock lock(mutex);
    threads.insert(std::this_thread::get_id());
    entered.notify_all();
    entered.wait(lock, [&] { return threads.size() >= 2; });
  });
  EXPECT_GE(threads.size(), 2u);
}

TEST(ThreadPoolTest, NestedCallsRunInlineWithoutDeadlock) {
  ThreadPool pool(3);
  EXPECT_FALSE(inParallelRegion());
  std::vector<std::atomic<int>> visits(40 * 50);
  pool.parallelFor(0, 40, 1, [&](int64_t b, int64_t e) {
    EXPECT_TRUE(inParallelRegion());
    for (int64_t i = b; i < e; ++i)
      pool.parallelFor(0, 50, 1, [&](int64_t ib, int64_t ie) {
        for (int64_t j = ib; j < ie; ++j) visits[i * 50 + j]++;
      });
  });
  EXPECT_FALSE(inParallelRegion());
  for (auto& v : visits) ASSERT_EQ(v.load(), 1);
}

// The chunks run on an OpenMP team, the caller being its thread 0: oneDNN's primitives use
// the same workers instead of competing with a second pool for the cores. Each chunk waits
// until all three are running, so three threads, the caller one of them, hold one each (a
// team of 3 for 3 chunks). A team of another size skips the wait and fails the size check
// instead of deadlocking; one that gave a thread two chunks would never return.
TEST(ThreadPoolTest, ChunksRunOnAnOpenMPTeamLedByTheCaller) {
  ThreadPool pool(3);
  std::mutex mutex;
  std::latch allIn(3);
  std::set<int> teamThreads;
  std::vector<std::thread::id> callerChunks;
  const std::thread::id caller = std::this_thread::get_id();
  pool.parallelFor(0, 3, 1, [&](int64_t, int64_t) {
    if (omp_get_num_threads() == 3) allIn.arrive_and_wait();
    std::lock_guard lock(mutex);
    EXPECT_TRUE(omp_in_parallel());
    EXPECT_EQ(omp_get_num_threads(), 3);
    teamThreads.insert(omp_get_thread_num());
    if (std::this_thread::get_id() == caller) callerChunks.push_back(caller);
    if (omp_get_thread_num() == 0) {
      EXPECT_EQ(std::this_thread::get_id(), caller);
    }
  });
  EXPECT_FALSE(omp_in_parallel());
  EXPECT_EQ(teamThreads.size(), 3u);
  EXPECT_EQ(callerChunks.size(), 1u);
}

// libgomp's workers are gone in a forked child, and a team started there would wait for
// them forever: the child's parallelFor runs on its calling thread. The child gives up
// after 60 s (SIGALRM), which fails the test instead of hanging it.
TEST(ThreadPoolTest, AForkedChildStillRunsParallelFor) {
  ThreadPool pool(2);
  std::atomic<int64_t> parent{0};
  pool.parallelFor(0, 1000, 10, [&](int64_t b, int64_t e) { parent += e - b; });
  ASSERT_EQ(parent.load(), 1000);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    alarm(60);
    std::atomic<int64_t> child{0};
    pool.parallelFor(0, 1000, 10, [&](int64_t b, int64_t e) { child += e - b; });
    _exit(child.load() == 1000 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status)) << "the child was killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(ThreadPoolTest, ConcurrentCallersEachGetTheirWholeRange) {
  ThreadPool pool(3);
  std::vector<std::thread> callers;
  std::atomic<int64_t> total{0};
  for (int c = 0; c < 4; ++c)
    callers.emplace_back([&] {
      for (int round = 0; round < 50; ++round)
        pool.parallelFor(0, 1000, 10, [&](int64_t b, int64_t e) { total += e - b; });
    });
  for (auto& t : callers) t.join();
  EXPECT_EQ(total.load(), 4 * 50 * 1000);
}

TEST(ThreadPoolTest, ExceptionsReachTheCallerAndThePoolRecovers) {
  ThreadPool pool(4);
  for (int attempt = 0; attempt < 20; ++attempt) {
    try {
      pool.parallelFor(0, 100, 1, [&](int64_t b, int64_t e) {
        if (b <= 57 && 57 < e)
          throw ShapeError::make(std::source_location::current(), "add", "index 57");
      });
      FAIL() << "no exception";
    } catch (const ShapeError& e) {
      EXPECT_THAT(e.what(), HasSubstr("kiln::add: index 57"));
    }
  }
  auto everyChunkThrows = [](int64_t, int64_t) { throw std::logic_error("every chunk"); };
  EXPECT_THROW(pool.parallelFor(0, 100, 1, everyChunkThrows), std::logic_error);
  expectEachIndexOnce(pool, 0, 100, 1);
}

TEST(ThreadPoolTest, InlineExceptionsPropagateToo) {
  EXPECT_THROW(parallelFor(0, 4, 100, [](int64_t, int64_t) { throw std::runtime_error("x"); }),
               std::runtime_error);
}

TEST(ThreadPoolTest, GlobalPool) {
  EXPECT_GE(get_num_threads(), 1);
  EXPECT_EQ(get_num_threads(), ThreadPool::global().numThreads());
  std::vector<std::atomic<int>> visits(10000);
  parallelFor(0, 10000, 16, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) visits[i]++;
  });
  for (auto& v : visits) ASSERT_EQ(v.load(), 1);
}

TEST(ThreadPoolTest, SetNumThreadsSizesTheGlobalPool) {
  const int before = get_num_threads();
  set_num_threads(3);
  EXPECT_EQ(get_num_threads(), 3);
  std::atomic<int> teamSize{0};
  parallelFor(0, 3, 1, [&](int64_t, int64_t) { teamSize = omp_get_num_threads(); });
  EXPECT_EQ(teamSize.load(), 3);
  set_num_threads(1);
  int calls = 0;
  parallelFor(0, 1000, 1, [&](int64_t, int64_t) { ++calls; });
  EXPECT_EQ(calls, 1) << "one thread: the whole range inline";
  set_num_threads(before);
  EXPECT_EQ(get_num_threads(), before);
}

TEST(ThreadPoolTest, SetNumThreadsRejectsCountsOutOfRange) {
  const int before = get_num_threads();
  for (int bad : {0, -2, 1025}) {
    try {
      set_num_threads(bad);
      FAIL() << "accepted " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.op(), "set_num_threads");
      EXPECT_EQ(e.message(), "the thread count must be from 1 to 1024, got " + std::to_string(bad));
    }
  }
  EXPECT_EQ(get_num_threads(), before);
}

TEST(ThreadPoolTest, ThreadCountFromEnvironment) {
  EXPECT_EQ(detail::threadCountFromEnv(nullptr, 8), 8);
  EXPECT_EQ(detail::threadCountFromEnv("", 8), 8);
  EXPECT_EQ(detail::threadCountFromEnv(nullptr, 0), 1);  // hardware_concurrency unknown
  EXPECT_EQ(detail::threadCountFromEnv("3", 8), 3);
  EXPECT_EQ(detail::threadCountFromEnv("1024", 8), 1024);
}

TEST(ThreadPoolTest, BadThreadCountsAreRejectedWithTheValue) {
  for (const char* bad : {"0", "-2", "abc", "4x", " 4", "1025", "99999999999"}) {
    try {
      detail::threadCountFromEnv(bad, 8);
      FAIL() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.op(), "num_threads");
      EXPECT_EQ(e.message(), "KILN_NUM_THREADS must be an integer from 1 to 1024, got '" +
                                 std::string(bad) + "'");
    }
  }
}

}  // namespace
}  // namespace kiln

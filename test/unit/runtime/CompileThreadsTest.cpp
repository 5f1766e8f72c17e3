// forEachOnThreads (runtime/CompileThreads.h): every task runs once, the lowest failing
// index's exception reaches the caller after all tasks ran, and one thread means the
// caller's thread, in order.
#include "runtime/CompileThreads.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace kiln::runtime {
namespace {

TEST(CompileThreadsTest, EveryTaskRunsOnceOnUpToTheThreadsGiven) {
  constexpr size_t kTasks = 200;
  std::vector<std::atomic<int>> runs(kTasks);
  std::mutex mutex;
  std::condition_variable callerRan;
  bool callerTookOne = false;
  std::set<std::thread::id> threads;
  const std::thread::id caller = std::this_thread::get_id();
  // A pool thread holds its first task until the caller has run one. With 3 pool threads
  // and 200 tasks the caller must reach a task whatever the scheduling, so the verdict
  // does not depend on which thread starts first; a forEachOnThreads that left the caller
  // idle would hang here (bazel's timeout reports it) rather than pass.
  forEachOnThreads(kTasks, 4, [&](size_t i) {
    ++runs[i];
    std::unique_lock lock(mutex);
    threads.insert(std::this_thread::get_id());
    if (std::this_thread::get_id() == caller) {
      callerTookOne = true;
      callerRan.notify_all();
    } else {
      callerRan.wait(lock, [&] { return callerTookOne; });
    }
  });
  for (size_t i = 0; i < kTasks; ++i) EXPECT_EQ(runs[i], 1) << "task " << i;
  EXPECT_LE(threads.size(), 4u);
  EXPECT_TRUE(threads.count(caller)) << "the caller's thread takes tasks too";
}

TEST(CompileThreadsTest, OneThreadRunsTheTasksInOrderOnTheCaller) {
  std::vector<size_t> order;
  const std::thread::id caller = std::this_thread::get_id();
  forEachOnThreads(5, 1, [&](size_t i) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    order.push_back(i);
  });
  EXPECT_EQ(order, (std::vector<size_t>{0, 1, 2, 3, 4}));
  forEachOnThreads(0, 8, [&](size_t) { ADD_FAILURE() << "no task to run"; });
}

TEST(CompileThreadsTest, TheLowestFailingTasksErrorIsRethrownAfterAllRan) {
  for (unsigned threads : {1u, 3u}) {
    std::atomic<int> ran{0};
    try {
      forEachOnThreads(50, threads, [&](size_t i) {
        ++ran;
        if (i == 31 || i == 7 || i == 40) throw std::runtime_error("task " + std::to_string(i));
      });
      ADD_FAILURE() << "no exception with " << threads << " threads";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "task 7") << threads << " threads";
    }
    EXPECT_EQ(ran, 50) << "a failure does not stop the other tasks (" << threads << " threads)";
  }
}

TEST(CompileThreadsTest, CompileThreadsAreAtLeastOneAndAtMostTheCap) {
  EXPECT_EQ(compileThreads(1), 1u);
  EXPECT_GE(compileThreads(4), 1u);
  EXPECT_LE(compileThreads(4), 4u);
  EXPECT_EQ(compileThreads(0), 1u);
  EXPECT_LE(kernelCompileThreads(), 16u);
}

}  // namespace
}  // namespace kiln::runtime

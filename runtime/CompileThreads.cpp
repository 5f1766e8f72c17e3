// Compile work spread over threads (see CompileThreads.h).
#include "runtime/CompileThreads.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>
#include <vector>

namespace kiln::runtime {

unsigned compileThreads(unsigned cap) {
  return std::max(1u, std::min(cap, std::thread::hardware_concurrency()));
}

void forEachOnThreads(size_t count, unsigned threads, const std::function<void(size_t)>& task) {
  std::vector<std::exception_ptr> errors(count);
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < count; i = next++) {
      try {
        task(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < std::min<size_t>(threads, count); ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& error : errors)
    if (error) std::rethrow_exception(error);
}

}  // namespace kiln::runtime

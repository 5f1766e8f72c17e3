// The profiler's event buffer (see kiln/core/ProfileEvents.h).
#include "kiln/core/ProfileEvents.h"

#include <algorithm>
#include <mutex>

#include "kiln/core/OpDef.h"
#include "kiln/core/Tensor.h"

namespace kiln::profiler {

namespace detail {
std::atomic<int> gSessions{0};
}  // namespace detail

namespace {

struct Buffer {
  std::mutex mutex;
  std::vector<Event> events;
};

// Never destroyed: KILN_PROFILE writes its file at exit, after static destructors may
// have run.
Buffer& buffer() {
  static Buffer* b = new Buffer();
  return *b;
}

uint32_t threadNumber() {
  static std::atomic<uint32_t> next{1};
  thread_local uint32_t number = next.fetch_add(1, std::memory_order_relaxed);
  return number;
}

template <class T>
void describeFrom(Event& event, std::span<const T> operands, std::span<const T> results,
                  auto meta) {
  std::span<const T> values = operands.empty() ? results : operands;
  for (const T& value : values) event.shapes.push_back(meta(value).shape);
  if (values.empty()) return;
  event.dtype = std::string(name(meta(values[0]).dtype));
  event.device = meta(values[0]).device.str();
}

std::vector<Event> copySince(const std::vector<Event>& events, Clock::time_point start) {
  std::vector<Event> since;
  std::copy_if(events.begin(), events.end(), std::back_inserter(since),
               [&](const Event& e) { return e.begin >= start; });
  return since;
}

}  // namespace

void record(Event event) {
  event.thread = threadNumber();
  Buffer& b = buffer();
  std::lock_guard lock(b.mutex);
  if (enabled()) b.events.push_back(std::move(event));
}

void describe(Event& event, std::span<const Tensor> operands, std::span<const Tensor> results) {
  describeFrom(event, operands, results,
               [](const Tensor& t) { return TensorMeta{t.sizes(), t.dtype(), t.device()}; });
}

void describe(Event& event, std::span<const TensorMeta> operands,
              std::span<const TensorMeta> results) {
  describeFrom(event, operands, results, [](const TensorMeta& m) -> const TensorMeta& { return m; });
}

Clock::time_point openSession() {
  Buffer& b = buffer();
  std::lock_guard lock(b.mutex);
  detail::gSessions.fetch_add(1, std::memory_order_relaxed);
  return Clock::now();
}

std::vector<Event> closeSession(Clock::time_point start) {
  Buffer& b = buffer();
  std::lock_guard lock(b.mutex);
  std::vector<Event> since = copySince(b.events, start);
  if (detail::gSessions.fetch_sub(1, std::memory_order_relaxed) == 1) b.events.clear();
  return since;
}

std::vector<Event> eventsSince(Clock::time_point start) {
  Buffer& b = buffer();
  std::lock_guard lock(b.mutex);
  return copySince(b.events, start);
}

}  // namespace kiln::profiler

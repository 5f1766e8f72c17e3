// The profiler's events (docs/ARCHITECTURE.md, "Profiler"): the hooks in the dispatcher,
// the runtime and the CUDA copies record timed intervals here while a recording session is
// open; kiln/profiler/Profiler.h opens sessions and writes them out as a Chrome trace.
// Closed, every hook costs one relaxed atomic load.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kiln/core/Shape.h"

namespace kiln {
class Tensor;
struct TensorMeta;
}  // namespace kiln

namespace kiln::profiler {

using Clock = std::chrono::steady_clock;

// One timed interval on one thread.
struct Event {
  Event(std::string name, const char* category, Clock::time_point begin, Clock::time_point end)
      : name(std::move(name)), category(category), begin(begin), end(end) {}

  std::string name;      // "add", "main_kernel_3", "lowering", "@main", ...
  const char* category;  // "op", "kernel", "host_op", "program", "compile", "copy", "user"
  Clock::time_point begin, end;
  uint32_t thread = 0;  // this process's threads numbered in the order they first record
  std::vector<Shape> shapes;  // operand shapes, where the interval computes on tensors
  std::string dtype;          // of the first operand (or result), "" if none
  std::string device;         // "cpu", "cuda:0"; "" if none
  int64_t bytes = -1;         // bytes copied, for copies; -1 otherwise
};

namespace detail {
extern std::atomic<int> gSessions;
}  // namespace detail

// Whether a session is open, i.e. whether hooks record.
inline bool enabled() { return detail::gSessions.load(std::memory_order_relaxed) > 0; }

// Appends `event` (thread-safe), numbering its thread; dropped when no session is open.
void record(Event event);
// Fills shapes, dtype and device from `operands`, or from `results` where there are no
// operands (a factory).
void describe(Event& event, std::span<const Tensor> operands, std::span<const Tensor> results);
void describe(Event& event, std::span<const TensorMeta> operands,
              std::span<const TensorMeta> results);

// Opens a session and returns its start. Sessions may overlap (KILN_PROFILE's around a
// RecordProfile's): each sees the events that began after it started.
Clock::time_point openSession();
// Closes the session opened at `start` and returns its events, in the order recorded.
// When the last session closes, the buffer is emptied.
std::vector<Event> closeSession(Clock::time_point start);
// The events recorded since `start` so far, without closing anything.
std::vector<Event> eventsSince(Clock::time_point start);

// What a hook holds while it times an interval: the start, if a session was open when
// the interval began (at most one relaxed load otherwise).
class Stopwatch {
 public:
  Stopwatch() : on_(enabled()) {
    if (on_) begin_ = Clock::now();
  }
  explicit operator bool() const { return on_; }
  // An event of `category` named `name` from the start until now.
  Event stop(std::string name, const char* category) const {
    return Event{std::move(name), category, begin_, Clock::now()};
  }

 private:
  bool on_;
  Clock::time_point begin_;
};

// A user's own interval (LibTorch's RECORD_FUNCTION): "user" events from construction
// to destruction, nesting the ops inside it.
class RecordFunction {
 public:
  explicit RecordFunction(std::string name) : name_(std::move(name)) {}
  ~RecordFunction() {
    if (watch_) record(watch_.stop(std::move(name_), "user"));
  }
  RecordFunction(const RecordFunction&) = delete;
  RecordFunction& operator=(const RecordFunction&) = delete;

 private:
  std::string name_;
  Stopwatch watch_;
};

}  // namespace kiln::profiler

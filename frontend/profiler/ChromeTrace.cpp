// Events as a Chrome trace event file (see kiln/profiler/Profiler.h). The format is Chrome's
// "Trace Event Format": complete events (ph "X") carry name, cat, ts and dur in
// microseconds, pid, tid and args; Perfetto and chrome://tracing open it.
#include <algorithm>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "kiln/profiler/Profiler.h"
#include "support/BinaryFile.h"

namespace kiln::profiler {

namespace {

double microseconds(Clock::duration d) {
  return double(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count()) / 1000.0;
}

nlohmann::json argsOf(const Event& e) {
  nlohmann::json args = nlohmann::json::object();
  if (!e.shapes.empty() || !e.dtype.empty()) args["shapes"] = e.shapes;
  if (!e.dtype.empty()) args["dtype"] = e.dtype;
  if (!e.device.empty()) args["device"] = e.device;
  if (e.bytes >= 0) args["bytes"] = e.bytes;
  return args;
}

}  // namespace

std::string chromeTrace(std::span<const Event> events) {
  // By start, and an enclosing event before the events it encloses, so that every
  // thread's events are in the order Perfetto nests them.
  std::vector<const Event*> order;
  for (const Event& e : events) order.push_back(&e);
  std::stable_sort(order.begin(), order.end(), [](const Event* a, const Event* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end > b->end;
  });
  const Clock::time_point origin = order.empty() ? Clock::time_point{} : order.front()->begin;
  const int pid = int(::getpid());
  nlohmann::json trace = nlohmann::json::array();
  trace.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"tid", 0},
                   {"args", {{"name", "kiln"}}}});
  for (const Event* e : order)
    trace.push_back({{"name", e->name},
                     {"cat", e->category},
                     {"ph", "X"},
                     {"ts", microseconds(e->begin - origin)},
                     {"dur", microseconds(e->end - e->begin)},
                     {"pid", pid},
                     {"tid", e->thread},
                     {"args", argsOf(*e)}});
  return nlohmann::json{{"traceEvents", std::move(trace)}, {"displayTimeUnit", "ms"}}.dump();
}

void writeChromeTrace(std::span<const Event> events, const std::string& path) {
  support::AtomicFileWriter file(path, "profiler", SourceLoc::current());
  file.write(chromeTrace(events));
  file.commit();
}

}  // namespace kiln::profiler

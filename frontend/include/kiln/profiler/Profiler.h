// kiln::profiler: record what eager ops, compiled programs, their kernels, compile stages and
// host<->device copies take, and write it as a Chrome trace that Perfetto opens
// (docs/USER_GUIDE.md, "Profiling"; docs/ARCHITECTURE.md, "Profiler").
//
//   KILN_PROFILE=trace.json          the whole run, written at exit
//   KILN_PROFILE_SUMMARY=1           a table by op printed to stderr at exit
//   kiln::profiler::RecordProfile p("trace.json");   from here to p.stop() or scope exit
#pragma once

#include <span>
#include <string>
#include <vector>

#include "kiln/core/Error.h"
#include "kiln/core/ProfileEvents.h"

namespace kiln::profiler {

// LibTorch's torch::autograd::profiler::RecordProfile: records every event from
// construction until stop() or destruction, then writes them to `path` as a Chrome trace
// (written to a temporary name and renamed). With an empty path nothing is written, and
// events() is the result.
class RecordProfile {
 public:
  explicit RecordProfile(std::string path);
  // stop(); a failure to write is reported on stderr (a destructor cannot throw).
  ~RecordProfile();
  RecordProfile(const RecordProfile&) = delete;
  RecordProfile& operator=(const RecordProfile&) = delete;

  // Stops recording and writes the trace (IOError naming the path if it cannot). Later
  // calls do nothing.
  void stop();
  // The events recorded so far; after stop(), all of them.
  std::vector<Event> events() const;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  Clock::time_point start_;
  bool stopped_ = false;
  std::vector<Event> events_;
};

// A process-wide RecordProfile: start() opens it (Error if one is open), stop() writes and
// closes it (Error if none is open). KILN_PROFILE is this session, opened at program start.
void start(std::string path, const SourceLoc& loc = SourceLoc::current());
void stop(const SourceLoc& loc = SourceLoc::current());

// `events` as a Chrome trace event file: {"traceEvents": [...]} with one complete event
// (ph "X"; ts and dur in microseconds) per event, sorted by start, and the process's name
// as a metadata event (ph "M").
std::string chromeTrace(std::span<const Event> events);
void writeChromeTrace(std::span<const Event> events, const std::string& path);

// A table with one row per category and name: calls, total and mean time, the longest
// total first. Nested events count in their own rows and in their parents'.
std::string summary(std::span<const Event> events);

}  // namespace kiln::profiler

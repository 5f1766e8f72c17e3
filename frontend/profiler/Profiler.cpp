// Recording sessions: RecordProfile, start()/stop() and KILN_PROFILE (see
// kiln/profiler/Profiler.h).
#include "kiln/profiler/Profiler.h"

#include <cstdlib>
#include <iostream>
#include <memory>
#include <mutex>
#include <string_view>

#include "kiln/core/Error.h"

namespace kiln::profiler {

RecordProfile::RecordProfile(std::string path) : path_(std::move(path)), start_(openSession()) {}

RecordProfile::~RecordProfile() {
  try {
    stop();
  } catch (const std::exception& e) {
    std::cerr << "kiln: " << e.what() << "\n";
  }
}

void RecordProfile::stop() {
  if (stopped_) return;
  stopped_ = true;
  events_ = closeSession(start_);
  if (!path_.empty()) writeChromeTrace(events_, path_);
}

std::vector<Event> RecordProfile::events() const { return stopped_ ? events_ : eventsSince(start_); }

namespace {

struct Global {
  std::mutex mutex;
  std::unique_ptr<RecordProfile> session;
};

// Never destroyed: KILN_PROFILE's session is written by an atexit handler.
Global& global() {
  static Global* g = new Global();
  return *g;
}

bool summaryAtExit() {
  const char* summary = std::getenv("KILN_PROFILE_SUMMARY");
  return summary && std::string_view(summary) == "1";
}

void finishAtExit() {
  std::unique_ptr<RecordProfile> session;
  {
    std::lock_guard lock(global().mutex);
    session = std::move(global().session);
  }
  if (!session) return;
  try {
    session->stop();
  } catch (const std::exception& e) {
    std::cerr << "kiln: KILN_PROFILE: " << e.what() << "\n";
  }
  if (summaryAtExit()) std::cerr << summary(session->events());
}

// KILN_PROFILE and KILN_PROFILE_SUMMARY, read once as the program starts: either opens the
// process-wide session, which closes at exit.
const bool kFromEnvironment = [] {
  const char* path = std::getenv("KILN_PROFILE");
  if (!(path && *path) && !summaryAtExit()) return false;
  start(path ? path : "");
  std::atexit(finishAtExit);
  return true;
}();

}  // namespace

void start(std::string path, const SourceLoc& loc) {
  std::lock_guard lock(global().mutex);
  if (global().session)
    throw Error::make(loc, "profiler::start", "a session is already recording",
                      global().session->path().empty() ? "" : " to '" + global().session->path() + "'",
                      "; stop() it first");
  global().session = std::make_unique<RecordProfile>(std::move(path));
}

void stop(const SourceLoc& loc) {
  std::unique_ptr<RecordProfile> session;
  {
    std::lock_guard lock(global().mutex);
    if (!global().session)
      throw Error::make(loc, "profiler::stop", "no session is recording; start() one first");
    session = std::move(global().session);
  }
  session->stop();
}

}  // namespace kiln::profiler

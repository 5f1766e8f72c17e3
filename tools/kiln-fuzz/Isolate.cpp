// fork/waitpid around a unit of work, its report passed back through a temporary file.
#include "tools/kiln-fuzz/Isolate.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <exception>
#include <stdexcept>

namespace kiln::fuzz {

namespace {

// A child that blocks without using the CPU (a deadlock) is ended after this many times its
// CPU limit in wall time by default: far enough that no load on the machine reaches it.
constexpr unsigned kWallFactor = 10;

[[noreturn]] void runChild(const std::function<std::string()>& work, std::FILE* report,
                           unsigned timeout, unsigned wall) {
  // The limit is the child's CPU time, not wall time, so that a program's verdict does not
  // depend on how loaded the machine is (a CI run of many tests at once): SIGXCPU's default
  // action ends the child at the soft limit (SIGKILL would at the hard one, were SIGXCPU
  // caught). 0: no limit, as alarm(0) is none.
  if (timeout > 0) {
    const rlimit cpu{rlim_t(timeout), rlim_t(timeout) + 10};
    setrlimit(RLIMIT_CPU, &cpu);
    alarm(wall);  // SIGALRM's default action ends the child
  }
  int code = 0;
  std::string text;
  try {
    text = work();
    code = text.empty() || text[0] == kPassNote ? 0 : 1;
  } catch (const std::exception& e) {
    text = std::string("the fuzzer itself threw: ") + e.what();
    code = 2;
  }
  std::fwrite(text.data(), 1, text.size(), report);
  std::fflush(report);
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(code);  // no static destructors: they belong to the parent
}

std::string readAll(std::FILE* f) {
  std::string text;
  std::rewind(f);
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
  std::fclose(f);
  return text;
}

}  // namespace

Child Child::start(const std::function<std::string()>& work, unsigned timeoutSeconds,
                   unsigned wallSeconds) {
  Child c;
  c.report_ = std::tmpfile();
  c.timeout_ = timeoutSeconds;
  c.wall_ = wallSeconds > 0 ? wallSeconds : timeoutSeconds * kWallFactor;
  if (!c.report_) throw std::runtime_error("kiln-fuzz: tmpfile failed");
  std::fflush(stdout);
  std::fflush(stderr);
  c.pid_ = fork();
  if (c.pid_ < 0) throw std::runtime_error(std::string("kiln-fuzz: fork failed: ") + std::strerror(errno));
  if (c.pid_ == 0) runChild(work, c.report_, c.timeout_, c.wall_);
  return c;
}

ChildOutcome Child::finish(int status) {
  ChildOutcome o;
  o.text = readAll(report_);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    if (!o.text.empty() && o.text[0] == kPassNote) o.text.erase(0, 1);
    return o;
  }
  // A mismatch always comes with its report. Exit status 1 without one is someone else's:
  // AddressSanitizer and UBSan end a process with 1 after printing their report.
  if (WIFEXITED(status) && WEXITSTATUS(status) == 1 && !o.text.empty()) {
    o.kind = ChildOutcome::Failed;
    return o;
  }
  o.kind = ChildOutcome::Crashed;
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU)
    o.text = "timed out: more than " + std::to_string(timeout_) + " s of CPU time";
  else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
    o.text = "hung: no result after " + std::to_string(wall_) + " s of wall time";
  else if (WIFSIGNALED(status))
    o.text = std::string("killed by signal ") + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  else
    o.text = "exited with status " + std::to_string(WEXITSTATUS(status)) + (o.text.empty() ? "" : ": " + o.text);
  return o;
}

ChildOutcome runInChild(const std::function<std::string()>& work, unsigned timeoutSeconds,
                        unsigned wallSeconds) {
  Child c = Child::start(work, timeoutSeconds, wallSeconds);
  int status = 0;
  while (waitpid(c.pid(), &status, 0) < 0 && errno == EINTR) {}
  return c.finish(status);
}

}  // namespace kiln::fuzz

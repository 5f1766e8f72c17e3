// Runs work in a forked child, so a segfault, an abort or a hang is reported instead of
// ending the fuzzer. The parent must not have started threads (OpenMP's included): it
// only generates, prints and minimizes programs, and every Kiln op runs in a child.
#pragma once

#include <sys/types.h>

#include <cstdio>
#include <functional>
#include <string>

namespace kiln::fuzz {

struct ChildOutcome {
  enum Kind { Passed, Failed, Crashed } kind = Passed;
  std::string text;  // the work's report, or how the child died; a passing work's note
};

// A report that begins with kPassNote passed: the rest is a note for the parent (what the
// work counted), which a passed outcome's text holds without the mark.
inline constexpr char kPassNote = '\x06';

// A started child; the parent waits for it (waitpid) and then calls finish().
class Child {
 public:
  // `work` returns "" (or a note after kPassNote) when it passed, else its report. A
  // child that uses more than `timeoutSeconds` of CPU time (all its threads together:
  // not wall time, which depends on the machine's load), or has no result after
  // `wallSeconds` of wall time (blocked; 0: ten times `timeoutSeconds`), is killed and
  // counts as crashed. With `timeoutSeconds` 0 there is neither limit.
  static Child start(const std::function<std::string()>& work, unsigned timeoutSeconds,
                     unsigned wallSeconds = 0);
  pid_t pid() const { return pid_; }
  // The outcome, given the status waitpid returned for this child.
  ChildOutcome finish(int status);

 private:
  pid_t pid_ = -1;
  std::FILE* report_ = nullptr;
  unsigned timeout_ = 0;
  unsigned wall_ = 0;
};

// Starts `work` in a child and waits for it; the limits are Child::start's.
ChildOutcome runInChild(const std::function<std::string()>& work, unsigned timeoutSeconds,
                        unsigned wallSeconds = 0);

}  // namespace kiln::fuzz

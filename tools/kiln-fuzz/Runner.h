// Runs a program eagerly (the reference) and traced under each backend and mode, calling
// each traced function several times with fresh inputs, and compares every call.
#pragma once

#include <string>
#include <vector>

#include "tools/kiln-fuzz/Program.h"

namespace kiln::fuzz {

// A traced run: KILN_JIT_BACKEND's value and the trace mode.
struct Config {
  std::string backend;  // "INTERP" (bitwise with eager), "MLIR" or "HALIDE" (within a tolerance)
  bool symbolic = false;
  // A batch program traced at two batch sizes, so that the recordings merge into a
  // dynamic program, then called at the other sizes of dynamicBatches().
  bool dynamic = false;
  std::string name() const { return backend + (symbolic ? " symbolic" : " value") + (dynamic ? " dynamic" : ""); }
};

struct RunOptions {
  std::vector<Config> configs;
  int calls = 3;  // the first records; later calls run the recording
};

// What went wrong in one config. Kinds: "invalid" (eager rejects the program: a generator
// bug), "threw" (the traced run threw where eager did not), "mismatch", "retraced" (a
// fixed-shape config recorded more than once, or a dynamic one recorded again after its
// recordings merged, although the program never looks at its sizes).
struct Problem {
  std::string config;
  std::string kind;
  std::string message;
};

// Of the dynamic configs run: how many merged their two recordings into one dynamic
// program (num_traces() 1 after the second size), and how many stayed static (a recording
// per size: jit::trace could not generalize the program, which it may refuse to do).
struct DynamicCounts {
  int merged = 0, stayedStatic = 0;
};

// Every config's first problem; empty when all calls of all configs matched eager.
std::vector<Problem> check(const Program& p, const RunOptions& options, DynamicCounts* counts = nullptr);

// `p` traced (by value or symbolically) and called once with its first inputs, recorded
// without compiling: the recording's text (for tests that compile programs elsewhere).
std::string recordedGraph(const Program& p, bool symbolic);

}  // namespace kiln::fuzz

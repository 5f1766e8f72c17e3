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
  std::string name() const { return backend + (symbolic ? " symbolic" : " value"); }
};

struct RunOptions {
  std::vector<Config> configs;
  int calls = 3;  // the first records; later calls run the recording
};

// What went wrong in one config. Kinds: "invalid" (eager rejects the program: a generator
// bug), "threw" (the traced run threw where eager did not), "mismatch", "retraced".
struct Problem {
  std::string config;
  std::string kind;
  std::string message;
};

// Every config's first problem; empty when all calls of all configs matched eager.
std::vector<Problem> check(const Program& p, const RunOptions& options);

}  // namespace kiln::fuzz

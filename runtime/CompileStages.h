// What every compiling backend shares around its pass pipelines: IR dumps (KILN_DUMP_IR),
// per-stage times (KILN_LOG=compile) and running a stage so that a failure is a
// CompileError naming the pass, its first diagnostic and the file holding the IR.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <unistd.h>

#include "kiln/core/Error.h"
#include "kiln/core/ProfileEvents.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Operation.h"
#include "mlir/Pass/PassManager.h"
#include "support/BinaryFile.h"

namespace kiln::runtime {

// `op` printed with its locations.
std::string printed(mlir::Operation* op);

// `op` as MLIR bytecode ("" if it cannot be written): disk cache keys and entries.
std::string bytecodeOf(mlir::Operation* op);

// Writes IR files "<dir>/<function>.<pid>.<program>.<n>-<stage>.mlir": after every stage when
// KILN_DUMP_IR=<dir> is set, and the IR a failing pass left behind in any case (to the
// temporary directory without KILN_DUMP_IR). Files are written atomically.
class IrDumps {
 public:
  explicit IrDumps(std::string name) : name_(std::move(name)) {
    if (const char* dir = std::getenv("KILN_DUMP_IR"); dir && *dir) dir_ = dir;
  }
  bool enabled() const { return !dir_.empty(); }

  void write(std::string_view stage, mlir::Operation* op) {
    if (enabled()) write(stage, printed(op), ".mlir");
  }
  void write(std::string_view stage, const std::string& text, std::string_view suffix) {
    if (enabled()) writeTo(dir_, stage, text, suffix);
  }
  // The IR at a failure, wherever dumps go; returns the file's path.
  std::string writeFailure(std::string_view stage, mlir::Operation* op) {
    std::string dir = enabled() ? dir_ : std::filesystem::temp_directory_path().string();
    return writeTo(dir, std::string(stage) + "-failed", printed(op), ".mlir");
  }

 private:
  std::string writeTo(const std::string& dir, std::string_view stage, const std::string& text,
                      std::string_view suffix) {
    std::error_code ignored;
    std::filesystem::create_directories(dir, ignored);
    std::string path = dir + "/" + name_ + "." + std::to_string(::getpid()) + "." +
                       std::to_string(program_) + "." + std::to_string(count_++) + "-" +
                       std::string(stage) + std::string(suffix);
    support::AtomicFileWriter file(path, "KILN_DUMP_IR", SourceLoc::current());
    file.write(text);
    file.commit();
    return path;
  }

  std::string name_;
  std::string dir_;
  // Programs compiled in one process often share a function name ("main"): each gets
  // its own number so their dumps never overwrite each other.
  uint64_t program_ = nextProgram();
  int count_ = 0;

  static uint64_t nextProgram() {
    static std::atomic<uint64_t> next{0};
    return next++;
  }
};


// Runs `pm` on `module`; a failure is a CompileError naming `pipeline` ("CPU", "GPU"), the
// pass, its first error diagnostic and the file holding the IR it failed on.
void runStage(mlir::PassManager& pm, mlir::ModuleOp module, std::string_view pipeline,
              std::string_view stage, IrDumps& dumps, std::string_view op, const SourceLoc& loc);

// Per-stage wall times for KILN_LOG=compile: "12.3 ms (planning 1.0, lowering 4.1, ...)";
// while the profiler records, each lap is also a "compile" event named after its stage.
class StageClock {
 public:
  void lap(const char* stage) {
    auto now = std::chrono::steady_clock::now();
    laps_.emplace_back(stage, std::chrono::duration<double, std::milli>(now - last_).count());
    if (profiler::enabled()) profiler::record({stage, "compile", last_, now});
    last_ = now;
  }
  std::string report() const {
    double total = 0;
    std::ostringstream parts;
    for (const auto& [stage, ms] : laps_) {
      total += ms;
      parts << (parts.tellp() > 0 ? ", " : "") << stage << " " << std::fixed << std::setprecision(1) << ms;
    }
    std::ostringstream out;
    out << std::fixed << std::setprecision(1) << total << " ms (" << parts.str() << ")";
    return out.str();
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
  std::vector<std::pair<const char*, double>> laps_;
};


}  // namespace kiln::runtime

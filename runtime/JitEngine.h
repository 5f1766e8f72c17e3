// JitEngine: LLVM-dialect MLIR to host machine code (host CPU features), linked by ORC.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/core/Error.h"

namespace llvm::orc {
class LLJIT;
}  // namespace llvm::orc
namespace mlir {
class ModuleOp;
}  // namespace mlir

namespace kiln::runtime {

// The CPU compiled code targets: this machine's, with every feature it has.
struct HostTarget {
  std::string triple;
  std::string cpu;
  std::string features;  // "+avx2,+fma,..." as LLVM spells them

  // One string naming all three, for cache keys.
  std::string key() const;
  static const HostTarget& get();
};

// Functions of the process compiled code may call, by symbol name.
using RuntimeSymbols = std::vector<std::pair<std::string, void*>>;

// LLVM's optimization level for compiled kernels and host code: O2, or KILN_LLVM_OPT=0..3
// (read at each compile; any other value is a CompileError naming `op`).
unsigned llvmOptLevel(std::string_view op, const SourceLoc& loc);

// Kernels over at most this many elements (every tensor of the kernel, as
// kiln-outline-kernels records it in kiln_codegen.max_elements) compile without LLVM's
// optimizations (`optnone`, FastISel): they cost about as much LLVM time as large ones
// and little run time (docs/ARCHITECTURE.md, "Small kernels are compiled without
// optimization"). KILN_O0_ELEMENTS=<n> (read at each compile, part of
// the key; 0 turns this off) overrides the default; any other value is a CompileError.
int64_t quickKernelElements(std::string_view op, const SourceLoc& loc);

class JitEngine {
 public:
  // The function attribute (i64) quickKernelElements compares: spelled here and in
  // passes/OutlineKernels.cpp, which sets it, as neither library depends on the other.
  static constexpr std::string_view kMaxElementsAttr = "kiln_codegen.max_elements";

  // Translates `module` (LLVM dialect only) to LLVM IR, optimizes it at O3 for the host
  // and returns the object file's bytes; the same module always gives the same bytes. A
  // module of many functions is split and compiled on several threads, and the bytes are
  // then several objects in one blob, which link() takes apart.
  // Failures are CompileErrors naming `op` and `loc` (the trace that asked). With
  // `optimizedIR`, the LLVM IR after optimization is printed into it (for KILN_DUMP_IR).
  // `optLevel` (0-3) is LLVM's optimization level, of both its IR pipeline and code
  // generation. Functions with kMaxElementsAttr at most `quickElements` (by default
  // quickKernelElements()), and the private functions only they use (kiln-parallelize's
  // chunks), are compiled `optnone`.
  static std::string compileObject(mlir::ModuleOp module, std::string_view op,
                                   const SourceLoc& loc, std::string* optimizedIR = nullptr,
                                   unsigned optLevel = 3, int64_t quickElements = -1);

  // Links an object file from compileObject (or a cache) into a new JIT session. Its
  // undefined symbols resolve to `symbols` first, then to the process (libc, libm).
  static std::unique_ptr<JitEngine> link(std::string_view object, const RuntimeSymbols& symbols,
                                         std::string_view op, const SourceLoc& loc);

  // The symbols `object` (one object file) uses and does not define: what link() must
  // resolve. A CompileError if the bytes are not an object file.
  static std::vector<std::string> undefinedSymbols(std::string_view object, std::string_view op,
                                                   const SourceLoc& loc);

  // With KILN_PERF_MAP set (to anything but "" or "0"), link appends each compiled
  // function's address, size and name to /tmp/perf-<pid>.map, the file `perf report` reads
  // to name JIT code (otherwise shown as [JIT] addresses).
  static bool perfMapEnabled();

  ~JitEngine();
  JitEngine(const JitEngine&) = delete;
  JitEngine& operator=(const JitEngine&) = delete;

  // The address of a function the object defines; a CompileError if it defines none such.
  void* lookup(std::string_view name) const;
  // The same, or null where the object defines no exported symbol `name`.
  void* find(std::string_view name) const;

 private:
  JitEngine(std::unique_ptr<llvm::orc::LLJIT> jit, std::string op, SourceLoc loc);

  // KILN_PERF_MAP: the functions `object` (linked into this engine) defines.
  void appendToPerfMap(std::string_view object) const;

  std::unique_ptr<llvm::orc::LLJIT> jit_;
  std::string op_;
  SourceLoc loc_;
};

}  // namespace kiln::runtime

// Check mode (KILN_CHECK=1, TraceOptions::check): every compiled call runs beside the
// reference interpreter, and the first difference beyond tolerance is an error naming the
// first kiln op whose result differs, its source line and both values (ARCHITECTURE.md,
// "Check mode").
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/Error.h"
#include "kiln/core/Tensor.h"
#include "kiln/jit/Trace.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace kiln::runtime {
class CallbackTable;
class Program;
}  // namespace kiln::runtime

namespace kiln::jit {

// Whether calls are checked: `options.enabled`, or KILN_CHECK set to 1 (0 or unset: off;
// anything else is an Error naming `op`).
bool checkEnabled(const CheckOptions& options, std::string_view op, const SourceLoc& loc);

// The tolerance a result is held to, by the loosest floating dtype among it and the values
// it is computed from (a float64 result of float32 data is held to float32's): |compiled - interpreted| <= atol * max(1,
// largest |interpreted| of the tensor) + rtol * |interpreted|. Negative fields of `options`
// take the dtype's default (float32: rtol 1e-4, atol 1e-5; float64: rtol 1e-9, atol 1e-12;
// integers and bool: exact).
struct Tolerance {
  double rtol = 0, atol = 0;
};
Tolerance toleranceFor(DType dtype, const CheckOptions& options);

// Compiles a program for the check's probe: the function with every op's results added to
// its results. Null, or an interpreted Program, where it cannot be compiled (then the op
// is not localized).
using ProbeCompiler =
    std::function<std::shared_ptr<const runtime::Program>(mlir::func::FuncOp probe)>;

struct CheckedProgram {
  mlir::func::FuncOp main;                     // the program as recorded (not changed)
  const runtime::CallbackTable* callbacks;      // its host callbacks, or null
  std::string what;                            // "trace 'step'", for the message
  CheckOptions options;
  ProbeCompiler compileProbe;
};

// Runs `runCompiled(arguments)` and the interpreter on a copy of `arguments` (so state the
// compiled run updates in place is read as it was), compares every result, and returns the
// compiled results when all agree. Otherwise localizes: the probe (every op's result also
// returned) runs compiled and interpreted on fresh copies of the arguments, and a
// CheckError names the first op, in program order, whose result differs; when the probe
// agrees everywhere (keeping the intermediates changed what the compiler did), the result
// that differed and the op that produced it. Host callbacks run once per run, so two or
// three times per checked call.
std::vector<Tensor> runChecked(
    const CheckedProgram& program, std::span<const Tensor> arguments,
    const std::function<std::vector<Tensor>(std::span<const Tensor>)>& runCompiled,
    const SourceLoc& loc);

}  // namespace kiln::jit

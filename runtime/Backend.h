// The one seam code generators plug into (docs/ARCHITECTURE.md §10): a Backend turns a
// verified kiln function into a Program; one registry lists the backends this build has;
// KILN_JIT_BACKEND is read in one function here. The frontend (trace, load, nn::Graph,
// kiln-run) asks compileProgram for a Program and never branches on the backend.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/Device.h"
#include "kiln/core/Error.h"
#include "kiln/core/Tensor.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "runtime/HostCallbacks.h"

namespace kiln::runtime {

// A kiln function made runnable by one backend.
class Program {
 public:
  virtual ~Program() = default;

  // Runs the program on `arguments` (inputs then state, typed as the function takes them)
  // and returns its results in order. A state update written in place is returned as that
  // state argument itself. Calls from several threads at once are safe. `reuse[k]`, where
  // defined, is memory the caller gives up for result k; a backend may write result k
  // into it (Executable::run says when) or ignore it.
  virtual std::vector<Tensor> run(std::span<const Tensor> arguments,
                                  const SourceLoc& loc = SourceLoc::current(),
                                  std::span<const Tensor> reuse = {}) const = 0;

  // The name of the backend that made it ("MLIR", "INTERP").
  virtual std::string_view backend() const = 0;

  // Whether it runs generated code: check mode compares such programs with the reference
  // interpreter. The interpreter's own programs say false.
  virtual bool compiled() const = 0;
};

// A program with `?` dims compiled once for all sizes (docs/ARCHITECTURE.md, "Dynamic
// shapes"): each call's shapes only bind sizes (the kernels take them at run time) and
// plan memory; nothing is compiled again.
class ShapeGenericProgram {
 public:
  virtual ~ShapeGenericProgram() = default;
  // The program for arguments of `shapes`: a ShapeError naming `op`, `what` and the first op
  // the sizes do not fit; null where the one compile cannot serve these sizes (the caller
  // then compiles the program specialized to them).
  virtual std::shared_ptr<const Program> instantiate(const std::vector<Shape>& shapes,
                                                     std::string_view op, std::string_view what,
                                                     const SourceLoc& loc) const = 0;
};

// What the frontend's CompileOptions say, in the runtime's terms (validated).
struct CompileRequest {
  bool fuse = true;             // kiln-fuse groups ops into kernels
  unsigned fuseMaxInputs = 16;  // the most tensors one fused kernel reads (>= 2)
  Device device;                // where the inputs and state live
};

class Backend {
 public:
  virtual ~Backend() = default;

  // "MLIR": what KILN_JIT_BACKEND names it by.
  virtual std::string_view name() const = 0;
  // One line for listings: "CPU code generator (kiln-cpu-pipeline, LLVM ORC JIT)".
  virtual std::string_view summary() const = 0;
  // Whether it runs programs whose tensors live on `device`.
  virtual bool serves(DeviceType device) const = 0;
  // Why it cannot compile `main` ("" if it can): a limitation, such as dynamic dims, that
  // is no compiler bug. The default backend then hands the program to the interpreter.
  virtual std::string unsupported(mlir::func::FuncOp main) const = 0;

  // `main` made runnable. `main` and `callbacks` must outlive the Program (a backend may
  // run `main` itself, as the interpreter does). Failures are CompileErrors naming `op`.
  virtual std::shared_ptr<const Program> compile(mlir::func::FuncOp main,
                                                 const CallbackTable* callbacks,
                                                 const CompileRequest& request,
                                                 std::string_view op,
                                                 const SourceLoc& loc) const = 0;
  // `main` (with `?` dims) compiled once for every size, or null with `why` set where this
  // backend cannot (runtime::DynamicProgram then compiles one static program per shape).
  virtual std::shared_ptr<const ShapeGenericProgram> compileGeneric(
      mlir::func::FuncOp main, const CallbackTable* callbacks, const CompileRequest& request,
      std::string_view op, const SourceLoc& loc, std::string& why) const {
    why = std::string(name()) + " compiles one program per shape";
    return nullptr;
  }
};

// The backends of this build, in the order they are listed (runtime/Backends.cpp).
std::span<const Backend* const> backends();

// Adds `backend` to the registry for the rest of the process: a test's own backend (one
// that runs the GPU host schedule on the CPU, say), found by name and listed after the
// built-in ones. Call it before anything compiles, from one thread (a static initializer).
void addBackendForTesting(const Backend& backend);

// The backend called `name`, or null.
const Backend* findBackend(std::string_view name);

// Backends the project knows of and this build does not have (named in errors, so that
// HALIDE reads as "not built" rather than as a typo).
std::span<const std::string_view> unbuiltBackends();

struct BackendSelection {
  const Backend* backend = nullptr;
  bool requested = false;  // named (by `name` or KILN_JIT_BACKEND) rather than the default
};

// The one function that reads KILN_JIT_BACKEND: `name` if not empty
// (CompileOptions::backend, kiln-run --backend), else KILN_JIT_BACKEND if set and not
// empty, else the default, MLIR. An unknown or unbuilt name is a CompileError naming `op`
// and listing the available backends.
BackendSelection selectBackend(std::string_view name, std::string_view op, const SourceLoc& loc);

// The reference interpreter, requested: what runs a recording that is not compiled (a
// warm-up), and the oracle check mode compares compiled programs with.
BackendSelection referenceInterpreter();

// The one entry the frontend compiles through. `main` compiled by the selected backend for
// `request.device`; a backend that does not serve that device is a CompileError listing
// those that do. Where the default (not requested) MLIR backend cannot take `main` (a
// limitation, or a CompileError, whose reason then goes to stderr once per program), the
// reference interpreter runs it instead; a requested backend propagates the error. `what`
// names the program in messages ("trace 'step'").
std::shared_ptr<const Program> compileProgram(const BackendSelection& selection,
                                              mlir::func::FuncOp main,
                                              const CallbackTable* callbacks,
                                              const CompileRequest& request, std::string_view op,
                                              std::string_view what, const SourceLoc& loc);

}  // namespace kiln::runtime

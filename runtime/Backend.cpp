// Backend selection and the one compile entry (see Backend.h).
#include "runtime/Backend.h"

#include <cstdlib>
#include <iostream>

#include "passes/SpecializeShapes.h"
#include "runtime/DynamicProgram.h"

namespace kiln::runtime {

namespace {

// "INTERP (reference interpreter: eager kernels, the oracle; cpu), MLIR (...)" for the
// backends of this build that serve `device`, or all of them.
std::string listing(const DeviceType* device = nullptr) {
  std::string text;
  for (const Backend* backend : backends()) {
    if (device && !backend->serves(*device)) continue;
    text += (text.empty() ? "" : ", ") + std::string(backend->name()) + " (" +
            std::string(backend->summary()) + ")";
  }
  if (text.empty()) text = "none";
  if (!device && !unbuiltBackends().empty()) {
    text += "; not built into this Kiln: ";
    bool first = true;
    for (std::string_view name : unbuiltBackends()) {
      text += (first ? "" : ", ") + std::string(name);
      first = false;
    }
  }
  return text;
}

}  // namespace

const Backend* findBackend(std::string_view name) {
  for (const Backend* backend : backends())
    if (backend->name() == name) return backend;
  return nullptr;
}

BackendSelection selectBackend(std::string_view name, std::string_view op, const SourceLoc& loc) {
  std::string_view source = "CompileOptions::backend";
  bool requested = !name.empty();
  if (!requested) {
    const char* env = std::getenv("KILN_JIT_BACKEND");
    name = env ? env : "";
    source = "KILN_JIT_BACKEND";
    requested = !name.empty();
  }
  if (!requested) name = "MLIR";
  if (const Backend* backend = findBackend(name)) return {backend, requested};
  for (std::string_view unbuilt : unbuiltBackends())
    if (unbuilt == name)
      throw CompileError::make(loc, op, source, "=", name,
                               " is not built into this Kiln; available: ", listing());
  throw CompileError::make(loc, op, source, "=", name, " names no backend; available: ",
                           listing());
}

BackendSelection referenceInterpreter() {
  const Backend* interpreter = findBackend("INTERP");
  if (!interpreter) throw CompileError::make(SourceLoc::current(), "jit", "INTERP is not built");
  return {interpreter, true};
}

std::shared_ptr<const Program> compileProgram(const BackendSelection& selection,
                                              mlir::func::FuncOp main,
                                              const CallbackTable* callbacks,
                                              const CompileRequest& request, std::string_view op,
                                              std::string_view what, const SourceLoc& loc) {
  const Backend& backend = *selection.backend;
  const DeviceType device = request.device.type;
  if (!backend.serves(device))
    throw CompileError::make(loc, op, what, ": backend ", backend.name(), " does not run ",
                             "programs on ", request.device.str(), "; backends for ",
                             name(device), ": ", listing(&device));
  // `?` dims: one program that specializes the function to each call's shapes and
  // compiles the static program (back through here) with the same backend.
  if (mlir::kiln::hasDynamicShapes(main))
    return std::make_shared<DynamicProgram>(selection, main, callbacks, request, std::string(op),
                                            std::string(what));
  std::string reason = backend.unsupported(main);
  if (!reason.empty() && selection.requested)
    throw CompileError::make(loc, op, what, ": ", reason, "; unset KILN_JIT_BACKEND (and "
                             "CompileOptions::backend) to run it on the reference interpreter");
  if (reason.empty()) {
    try {
      return backend.compile(main, callbacks, request, op, loc);
    } catch (const CompileError& error) {
      if (selection.requested) throw;
      std::cerr << "kiln: " << what << " runs in the reference interpreter because it did not "
                << "compile: " << error.what() << "\nkiln: set KILN_JIT_BACKEND="
                << backend.name() << " to make this an error, or INTERP to interpret without "
                << "trying\n";
    }
  }
  const Backend* interpreter = findBackend("INTERP");
  if (!interpreter || !interpreter->serves(device))
    throw CompileError::make(loc, op, what, ": ", reason.empty() ? "it did not compile" : reason,
                             ", and no reference interpreter runs programs on ",
                             request.device.str());
  return interpreter->compile(main, callbacks, request, op, loc);
}

}  // namespace kiln::runtime

// Programs with dynamic dims (docs/ARCHITECTURE.md, "Dynamic shapes"): one Program that
// serves every call whose shapes fit the function's `?` dims, by specializing the function
// to each new set of argument shapes (mlir::kiln::specializeShapes) and compiling that
// static program with the selected backend. compileProgram makes one for any function
// with `?` dims, so trace, load, nn::Graph and kiln-run all run dynamic programs.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "runtime/Backend.h"

namespace kiln::runtime {

// A copy of `main` specialized to argument `shapes` (mlir::kiln::specializeShapes), in a
// module of its own; a ShapeError naming `what` and the first op that does not fit.
mlir::OwningOpRef<mlir::ModuleOp> specializedCopy(mlir::func::FuncOp main,
                                                  const std::vector<Shape>& shapes,
                                                  std::string_view op, std::string_view what,
                                                  const SourceLoc& loc);

class DynamicProgram final : public Program {
 public:
  // The most specializations kept; the least recently used is dropped beyond it (and
  // compiled again if its shapes come back).
  static constexpr size_t kMaxSpecializations = 32;

  // `main` (with `?` dims) must outlive the program, as Backend::compile asks.
  DynamicProgram(BackendSelection selection, mlir::func::FuncOp main,
                 const CallbackTable* callbacks, CompileRequest request, std::string op,
                 std::string what);

  std::vector<Tensor> run(std::span<const Tensor> arguments, const SourceLoc& loc,
                          std::span<const Tensor> reuse) const override;
  std::string_view backend() const override { return selection_.backend->name(); }
  bool compiled() const override;

  // Adds a program already made for `shapes` (a static recording the dynamic one was
  // generalized from): `module` holds its function and is kept alive with it, and so is
  // `keepAlive` (what else the program refers to, such as its callback table).
  void addSpecialization(std::vector<Shape> shapes, mlir::OwningOpRef<mlir::ModuleOp> module,
                         std::shared_ptr<const Program> program,
                         std::shared_ptr<const void> keepAlive = nullptr) const;

  // How many programs were compiled (not added): the one for all sizes where the backend
  // makes one (shapes then only plan), else one per shape. For tests and KILN_LOG.
  size_t numCompiled() const;

 private:
  struct Specialization {
    std::vector<Shape> shapes;
    mlir::OwningOpRef<mlir::ModuleOp> module;
    std::shared_ptr<const Program> program;
    std::shared_ptr<const void> keepAlive;
  };
  std::shared_ptr<const Program> programFor(std::span<const Tensor> arguments,
                                            const SourceLoc& loc) const;

  BackendSelection selection_;
  mutable mlir::func::FuncOp main_;  // MLIR handles are not const-correct
  const CallbackTable* callbacks_;
  CompileRequest request_;
  std::string op_;
  std::string what_;
  mutable std::mutex mutex_;
  mutable std::list<Specialization> cache_;  // most recently used first
  mutable size_t numCompiled_ = 0;
  // The backend's one compile for all sizes (Backend::compileGeneric), tried at the first
  // shape no specialization serves; null where the backend cannot.
  mutable bool triedGeneric_ = false;
  mutable std::shared_ptr<const ShapeGenericProgram> generic_;
};

}  // namespace kiln::runtime

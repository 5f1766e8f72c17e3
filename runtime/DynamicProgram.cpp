// DynamicProgram (see DynamicProgram.h).
#include "runtime/DynamicProgram.h"

#include <chrono>
#include <iostream>

#include "kiln/core/Log.h"
#include "runtime/HostPlan.h"

namespace kiln::runtime {

mlir::OwningOpRef<mlir::ModuleOp> specializedCopy(mlir::func::FuncOp main,
                                                  const std::vector<Shape>& shapes,
                                                  std::string_view op, std::string_view what,
                                                  const SourceLoc& loc) {
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(main.getLoc());
  auto func = main.clone();
  module->push_back(func);
  specializeOrThrow(func, shapes, nullptr, op, what, loc);
  return module;
}

DynamicProgram::DynamicProgram(BackendSelection selection, mlir::func::FuncOp main,
                               const CallbackTable* callbacks, CompileRequest request,
                               std::string op, std::string what)
    : selection_(selection), main_(main), callbacks_(callbacks), request_(request),
      op_(std::move(op)), what_(std::move(what)) {}

bool DynamicProgram::compiled() const {
  return selection_.backend->name() != "INTERP";
}

size_t DynamicProgram::numCompiled() const {
  std::lock_guard lock(mutex_);
  return numCompiled_;
}

void DynamicProgram::addSpecialization(std::vector<Shape> shapes,
                                       mlir::OwningOpRef<mlir::ModuleOp> module,
                                       std::shared_ptr<const Program> program,
                                       std::shared_ptr<const void> keepAlive) const {
  std::lock_guard lock(mutex_);
  cache_.push_front({std::move(shapes), std::move(module), std::move(program), std::move(keepAlive)});
  if (cache_.size() > kMaxSpecializations) cache_.pop_back();
}

std::shared_ptr<const Program> DynamicProgram::programFor(std::span<const Tensor> arguments,
                                                          const SourceLoc& loc) const {
  auto sameShapes = [&](const std::vector<Shape>& shapes) {
    if (shapes.size() != arguments.size()) return false;
    for (size_t i = 0; i < shapes.size(); ++i)
      if (shapes[i] != arguments[i].sizes()) return false;
    return true;
  };
  std::lock_guard lock(mutex_);
  for (auto it = cache_.begin(); it != cache_.end(); ++it)
    if (sameShapes(it->shapes)) {
      if (it != cache_.begin()) cache_.splice(cache_.begin(), cache_, it);
      return it->program;
    }
  std::vector<Shape> shapes;
  for (const Tensor& argument : arguments) shapes.push_back(argument.sizes());
  if (!triedGeneric_) {
    triedGeneric_ = true;
    std::string why;
    try {
      generic_ = selection_.backend->compileGeneric(main_, callbacks_, request_, op_, loc, why);
    } catch (const CompileError& error) {
      if (selection_.requested) throw;
      why = error.what();
    }
    if (generic_)
      ++numCompiled_;
    else if (logEnabled("compile"))
      std::cerr << "kiln: " << what_ << " is compiled once per shape: " << why << "\n";
  }
  const auto start = std::chrono::steady_clock::now();
  std::shared_ptr<const Program> instance =
      generic_ ? generic_->instantiate(shapes, op_, what_, loc) : nullptr;
  if (instance) {
    std::shared_ptr<const Program> program = std::move(instance);
    if (logEnabled("compile"))
      std::cerr << "kiln: " << what_ << " planned for shapes (" << shapesText(shapes)
                << ") without compiling in "
                << std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count()
                << " ms\n";
    cache_.push_front({std::move(shapes), nullptr, program, nullptr});
    if (cache_.size() > kMaxSpecializations) cache_.pop_back();
    return program;
  }
  mlir::OwningOpRef<mlir::ModuleOp> module = specializedCopy(main_, shapes, op_, what_, loc);
  auto func = *module->getOps<mlir::func::FuncOp>().begin();
  std::shared_ptr<const Program> program =
      compileProgram(selection_, func, callbacks_, request_, op_, what_, loc);
  if (logEnabled("compile"))
    std::cerr << "kiln: " << what_ << " specialized to shapes (" << shapesText(shapes) << ")\n";
  ++numCompiled_;
  cache_.push_front({std::move(shapes), std::move(module), program, nullptr});
  if (cache_.size() > kMaxSpecializations) cache_.pop_back();
  return program;
}

std::vector<Tensor> DynamicProgram::run(std::span<const Tensor> arguments, const SourceLoc& loc,
                                        std::span<const Tensor> reuse) const {
  return programFor(arguments, loc)->run(arguments, loc, reuse);
}

}  // namespace kiln::runtime
